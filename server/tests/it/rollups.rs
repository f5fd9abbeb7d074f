//! Rollups agree with raw facts: every metric and grouping, the resource report,
//! script errors, unique visitors, on demo histories, through hourly and daily rollups, in
//! whole-hour and half-hour zones, and across a zone change.

use rapport_core::{
    audit::Actor,
    backend_tests,
    ids::TenantId,
    reports::{
        api::{DateFilter, Grouping, MetricEntry, ReportRequest, ResourceFilter, ResourceGroupBy, ScriptErrorFilter},
        catalogue::{Report, METRICS},
        demo::DemoOptions,
        query::Strategy,
    },
    tenants::{NewTenant, TenantUpdate},
    testing::TestDb,
    Services,
};

use crate::utils::TestApp;

/// The rollup answer and the raw one, which must agree. A relative grouping
/// (`TODAY`, …) ends its window, and starts its previous one, at the moment of
/// asking, and presence time grows by the millisecond: two reads a few
/// milliseconds apart may differ by a second at an edge. So the raw answer must
/// equal a rollup answer read just before or just after it; a few tries keep a
/// read that straddles a second from failing the test, while a real
/// disagreement fails every one. Evaluates to the rollup answer.
macro_rules! agree {
    ($fast:expr, $raw:expr, $($what:tt)+) => {{
        let mut tries = 0;
        loop {
            let before = $fast;
            let raw = $raw;
            if before == raw {
                break before;
            }
            let after = $fast;
            if after == raw {
                break after;
            }
            tries += 1;
            if tries == 5 {
                assert_eq!(before, raw, $($what)+);
            }
        }
    }};
}

/// Every metric with each of its groupings, and the resource report with the
/// groupings its rollups keep: the rollup path equals the raw path for `filter`.
async fn assert_rollups_agree(s: &Services, tenant: &TenantId, filter: &DateFilter) {
    for def in METRICS {
        let mut groups: Vec<Option<String>> = def.group_by.iter().map(|g| Some(g.name.to_string())).collect();
        if def.report.default_group_by().is_none() {
            groups.push(None);
        }
        for group_by in groups {
            let request = ReportRequest {
                metrics: vec![MetricEntry {
                    metric_name: def.name.to_string(),
                    group_by,
                    ..Default::default()
                }],
                date_filter: filter.clone(),
            };
            agree!(
                s.aggregate_report(tenant, def.report, &request, Strategy::Rollups)
                    .await
                    .unwrap(),
                s.aggregate_report(tenant, def.report, &request, Strategy::Raw)
                    .await
                    .unwrap(),
                "{:?} {} {:?}",
                def.report,
                def.name,
                filter
            );
        }
    }
    // Whole reports at once, as the dashboards ask: the metrics that share their
    // sources are read together, and the period totals (unique visitors counted
    // by the database) equal those gathered from raw facts.
    for report in &Report::ALL {
        if report.default_group_by().is_some() {
            continue;
        }
        let request = ReportRequest {
            metrics: METRICS
                .iter()
                .filter(|d| d.report == *report)
                .map(|d| MetricEntry {
                    metric_name: d.name.to_string(),
                    ..Default::default()
                })
                .collect(),
            date_filter: filter.clone(),
        };
        agree!(
            s.aggregate_report(tenant, *report, &request, Strategy::Rollups)
                .await
                .unwrap(),
            s.aggregate_report(tenant, *report, &request, Strategy::Raw)
                .await
                .unwrap(),
            "{report:?} {filter:?}"
        );
        let fast = agree!(
            s.report_totals(tenant, *report, &request, Strategy::Rollups)
                .await
                .unwrap(),
            s.report_totals(tenant, *report, &request, Strategy::Raw).await.unwrap(),
            "totals {report:?} {filter:?}"
        );
        assert_eq!(fast.len(), request.metrics.len());
    }
    for group_by in [
        None,
        Some(ResourceGroupBy::ResourceName),
        Some(ResourceGroupBy::StatusCode),
    ] {
        for resource_name in [None, Some("app.js".to_string())] {
            let request = ResourceFilter {
                date_filter: filter.clone(),
                group_by,
                resource_name,
                ..Default::default()
            };
            let fast = agree!(
                s.resource_report(tenant, &request, Strategy::Rollups).await.unwrap(),
                s.resource_report(tenant, &request, Strategy::Raw).await.unwrap(),
                "resources {request:?}"
            );
            if filter.grouping == Grouping::LastMonth {
                assert!(!fast.rows.is_empty(), "resources {request:?}");
            }
        }
    }
    // The per-agent conversation split reads all of its sources at once.
    agree!(
        s.agent_conversation_split(tenant, filter, Strategy::Rollups)
            .await
            .unwrap(),
        s.agent_conversation_split(tenant, filter, Strategy::Raw).await.unwrap(),
        "agent conversation split {filter:?}"
    );
    // Script errors: per-day counts and distinct visitors from the day rows.
    for file_name in [None, Some("https://www.example.com/static/app.js".to_string())] {
        let request = ScriptErrorFilter {
            date_filter: filter.clone(),
            file_name,
            ..Default::default()
        };
        let fast = agree!(
            s.script_error_report(tenant, &request, Strategy::Rollups)
                .await
                .unwrap(),
            s.script_error_report(tenant, &request, Strategy::Raw).await.unwrap(),
            "script errors {request:?}"
        );
        if filter.grouping == Grouping::LastMonth {
            assert!(
                fast.results.values().any(|b| b["AFFECTED_VISITORS"] != "0"),
                "{request:?}"
            );
        }
    }
}

async fn rollups_agree_with_raw_facts(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    let s = &app.services;
    let options = DemoOptions {
        days: 12,
        agents: 3,
        scale: 0.3,
        seed: 7,
    };
    let summary = s.generate_demo_data(&tenant, &options).await.unwrap();
    assert!(summary.facts > 500, "{summary:?}");
    let filters = [
        DateFilter {
            grouping: Grouping::LastMonth,
            ..Default::default()
        },
        DateFilter {
            grouping: Grouping::Last7Days,
            time_zone: Some("America/New_York".into()),
            ..Default::default()
        },
        DateFilter {
            grouping: Grouping::Today,
            ..Default::default()
        },
        DateFilter {
            grouping: Grouping::All,
            time_zone: Some("Asia/Kolkata".into()),
            ..Default::default()
        },
    ];
    for filter in &filters {
        assert_rollups_agree(s, &tenant, filter).await;
    }
    // Unique visitors per day are counted as visits arrive, in the tenant's zone:
    // they agree with the raw visits, and still do once the zone changes (the
    // counts start afresh at the next midnight; earlier days use hourly rows).
    let unique = |zone: Option<&str>| ReportRequest {
        metrics: vec![MetricEntry {
            metric_name: "UNIQUE_VISITORS".into(),
            ..Default::default()
        }],
        date_filter: DateFilter {
            grouping: Grouping::LastMonth,
            time_zone: zone.map(str::to_string),
            ..Default::default()
        },
    };
    let raw_berlin = s
        .aggregate_report(&tenant, Report::Visit, &unique(Some("Europe/Berlin")), Strategy::Raw)
        .await
        .unwrap();
    let before = s
        .aggregate_report(&tenant, Report::Visit, &unique(None), Strategy::Raw)
        .await
        .unwrap();
    assert!(before.results.values().any(|b| b["UNIQUE_VISITORS"] != "0"));
    let update = TenantUpdate {
        timezone: Some("Europe/Berlin".into()),
        ..Default::default()
    };
    s.update_tenant(&tenant, update, &Actor::system("test")).await.unwrap();
    for strategy in [Strategy::Rollups, Strategy::Raw] {
        let after = s
            .aggregate_report(&tenant, Report::Visit, &unique(None), strategy)
            .await
            .unwrap();
        assert_eq!(after, raw_berlin, "{strategy:?} after the zone change");
    }
    assert_rollups_agree(s, &tenant, &filters[0]).await;
    // Sanity: the demo history is not empty where it matters.
    let request = ReportRequest {
        metrics: vec![MetricEntry {
            metric_name: "ONLINE_TIME".into(),
            ..Default::default()
        }],
        date_filter: DateFilter {
            grouping: Grouping::LastMonth,
            ..Default::default()
        },
    };
    let online = s
        .aggregate_report(&tenant, Report::Agent, &request, Strategy::Rollups)
        .await
        .unwrap();
    let total: i64 = online
        .results
        .values()
        .map(|b| b["ONLINE_TIME"].parse::<i64>().unwrap())
        .sum();
    assert!(total > 3 * 3600, "{total}");
    app.stop().await;
}

/// Day rollups in a half-hour zone, where hourly rollups cannot answer: the whole
/// days come from day rows, the days before they were complete (a later
/// `complete_from`, not on a midnight) from raw facts, and both agree with raw.
async fn day_rollups_answer_whole_days_in_a_half_hour_zone(db: TestDb) {
    let app = TestApp::start(db).await;
    let s = &app.services;
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some("Kolkata".into()),
                timezone: Some("Asia/Kolkata".into()),
                ..Default::default()
            },
            &Actor::system("test"),
        )
        .await
        .unwrap()
        .id;
    let options = DemoOptions {
        days: 10,
        agents: 2,
        scale: 0.2,
        seed: 11,
    };
    s.generate_demo_data(&tenant, &options).await.unwrap();
    let day_rows: i64 = rapport_core::with_db!(s.db(), |pool| sqlx::query_scalar(
        "select count(*) from report_day_rollups where tenant_id = $1 and zone = 'Asia/Kolkata'"
    )
    .bind(&tenant)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert!(day_rows > 100, "{day_rows}");
    let month = DateFilter {
        grouping: Grouping::LastMonth,
        ..Default::default()
    };
    assert_rollups_agree(s, &tenant, &month).await;
    // As after a zone change four and a half days ago.
    let complete_from = chrono::Utc::now().timestamp_millis() - 108 * 3_600_000;
    rapport_core::with_db!(s.writer(), |pool| sqlx::query(
        "update day_rollup_zones set complete_from = $2 where tenant_id = $1"
    )
    .bind(&tenant)
    .bind(complete_from)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))
    .unwrap();
    assert_rollups_agree(s, &tenant, &month).await;
    let week = DateFilter {
        grouping: Grouping::Last7Days,
        ..Default::default()
    };
    assert_rollups_agree(s, &tenant, &week).await;
    app.stop().await;
}

backend_tests!(
    rollups_agree_with_raw_facts,
    day_rollups_answer_whole_days_in_a_half_hour_zone
);
