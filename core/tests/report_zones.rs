//! Reports are planned with each instance's cached view of the tenant's zone
//! and checked by their own statement: a zone changed by another instance (or
//! another process on the same SQLite file) shows in the very next report.

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use rapport_core::{
    audit::Actor,
    backend_tests,
    ids::TenantId,
    reports::{
        api::{DateFilter, Grouping, MetricEntry, ReportRequest},
        catalogue::Report,
        facts::{MeetingFact, MeetingKind},
        query::Strategy,
        times::TimesKind,
    },
    tenants::{NewTenant, TenantUpdate},
    testing::TestDb,
    CoreError, Services,
};

fn actor() -> Actor {
    Actor::system("tests")
}

fn conferences_today() -> ReportRequest {
    ReportRequest {
        metrics: vec![MetricEntry {
            metric_name: "CONFERENCES".into(),
            ..Default::default()
        }],
        date_filter: DateFilter {
            grouping: Grouping::Today,
            ..Default::default()
        },
    }
}

/// The hourly bucket label of instant `ms` in `zone`.
fn hour_label(zone: &str, ms: i64) -> String {
    let tz: Tz = zone.parse().unwrap();
    tz.from_utc_datetime(&Utc.timestamp_millis_opt(ms).unwrap().naive_utc())
        .format("%Y/%m/%d %H")
        .to_string()
}

async fn labels(s: &Services, tenant: &TenantId) -> Vec<String> {
    let answer = s
        .aggregate_report(tenant, Report::Conference, &conferences_today(), Strategy::Rollups)
        .await
        .unwrap();
    answer.results.into_keys().collect()
}

async fn a_zone_changed_elsewhere_shows_at_once(t: TestDb) {
    // Two instances over one database, each with its own cache.
    let (a, b) = (t.services(), t.services());
    let tenant = a
        .create_tenant(
            NewTenant {
                name: Some("Zones".into()),
                timezone: Some("Pacific/Kiritimati".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .id;
    let now = Utc::now().timestamp_millis();
    a.record_meeting(
        &tenant,
        MeetingKind::Conference,
        &MeetingFact {
            id: "m1".into(),
            started_at: now - 1_000,
            ended_at: now,
            participants: 1,
            ..Default::default()
        },
    )
    .await
    .unwrap();

    // A reads (and caches) the zone at +14:00: today's last hour is now's.
    let before = labels(&a, &tenant).await;
    assert_eq!(before.last(), Some(&hour_label("Pacific/Kiritimati", now)));

    // B moves the tenant to -11:00; A's next report is cut in the new zone,
    // both for its buckets and for the day rows it may use.
    b.update_tenant(
        &tenant,
        TenantUpdate {
            timezone: Some("Pacific/Pago_Pago".into()),
            ..Default::default()
        },
        &actor(),
    )
    .await
    .unwrap();
    let after = labels(&a, &tenant).await;
    assert_eq!(after, labels(&b, &tenant).await);
    assert_eq!(after.last(), Some(&hour_label("Pacific/Pago_Pago", now)));
    let request = conferences_today();
    let answer = a
        .aggregate_report(&tenant, Report::Conference, &request, Strategy::Rollups)
        .await
        .unwrap();
    let counted: u32 = answer
        .results
        .values()
        .filter_map(|bucket| bucket.get("CONFERENCES"))
        .map(|v| v.parse::<u32>().unwrap())
        .sum();
    assert_eq!(
        counted, 1,
        "the conference is counted once, in the new zone: {answer:?}"
    );

    // The agent time lists plan the same way.
    let filter = DateFilter {
        grouping: Grouping::LastYear,
        ..Default::default()
    };
    assert!(a
        .agent_times(&tenant, TimesKind::Online, &filter)
        .await
        .unwrap()
        .is_empty());

    // Gone from under A: no stale answer, but the tenant's 404.
    b.delete_tenant(&tenant, &actor()).await.unwrap();
    let gone = a
        .aggregate_report(&tenant, Report::Conference, &request, Strategy::Rollups)
        .await;
    assert!(matches!(gone, Err(CoreError::NotFound(_))), "{gone:?}");
}

backend_tests!(a_zone_changed_elsewhere_shows_at_once);
