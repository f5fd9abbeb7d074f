//! The cluster test: two `rapport serve` processes on one PostgreSQL, used as
//! an operator who scales out would use them, and PostgreSQL restarted under
//! their writes. It restarts the machine's PostgreSQL, so it runs alone
//! (`.config/nextest.toml`). SQLite runs one instance per file: this is
//! PostgreSQL's.

use std::{
    collections::{HashMap, HashSet},
    process::Command,
    time::{Duration, Instant},
};

use rapport_core::{
    audit::Actor, ids::TenantId, testing::TestDb, time::now_ms, webhooks::WebhookIn, with_db, Services,
};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{instance::Instance, receiver::Receiver, smtp::SmtpReceiver};

/// The per-token limit both instances enforce, per minute.
const LIMIT: usize = 300;

async fn tenant(services: &Services) -> TenantId {
    let actor = Actor::system("tests");
    let tenant = services
        .create_tenant(
            rapport_core::tenants::NewTenant {
                name: Some("Cluster".into()),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    tenant.id
}

async fn key(services: &Services, tenant: &TenantId, name: &str) -> String {
    services
        .create_api_key(tenant, name, &Actor::system("tests"))
        .await
        .unwrap()
        .token
}

/// Creates customer `external_id` through `base`, as a client that retries
/// until it has an answer would: `true` once acknowledged (201), `false` when
/// it already existed (an earlier try was written, its answer lost).
async fn create(client: &reqwest::Client, base: &str, token: &str, external_id: &str) -> Option<bool> {
    let response = client
        .post(format!("{base}/rest/v1/customer"))
        .bearer_auth(token)
        .json(&json!({ "externalId": external_id }))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    match response.status() {
        StatusCode::CREATED => Some(true),
        StatusCode::CONFLICT => Some(false),
        _ => None,
    }
}

/// The `customer.created` events the receiver got: webhook-id → external id.
fn created_events(receiver: &Receiver) -> Vec<(String, String)> {
    receiver
        .received()
        .iter()
        .filter(|r| r.event_type() == "customer.created")
        .map(|r| {
            let body: Value = r.json();
            (
                r.header("webhook-id").to_string(),
                body["externalId"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Waits until the receiver has `customer.created` for every one of `ids`.
async fn wait_for_created(receiver: &Receiver, ids: &HashSet<String>, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let got: HashSet<String> = created_events(receiver).into_iter().map(|(_, id)| id).collect();
        let missing = ids.difference(&got).count();
        if missing == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{missing} of {} events never arrived",
            ids.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_act_as_one() {
    let Some(db) = TestDb::postgres().await.expect("postgres test database") else {
        eprintln!("skipped: {} is not set", rapport_core::testing::POSTGRES_URL_VAR);
        return;
    };
    let receiver = Receiver::start().await;
    let smtp = SmtpReceiver::start().await;
    let mut env = vec![
        ("RAPPORT_RATE_LIMIT_PER_TOKEN", LIMIT.to_string()),
        ("RAPPORT_SMTP_URL", smtp.url.clone()),
        // Short, so that claims an instance held when PostgreSQL went away
        // come back quickly.
        ("RAPPORT_WEBHOOK_LEASE", "3s".to_string()),
    ];
    // Media in the S3 server of the test run when there is one (as an
    // operator who scales out configures it), else in the test's folder.
    let s3 = |name: &str| std::env::var(format!("RAPPORT_TEST_S3_{name}")).ok();
    if let (Some(url), Some(endpoint), Some(region), Some(key_id), Some(secret)) =
        (s3("URL"), s3("ENDPOINT"), s3("REGION"), s3("KEY_ID"), s3("SECRET"))
    {
        let prefix = uuid::Uuid::new_v4().simple().to_string();
        env.extend([
            ("RAPPORT_MEDIA_STORE", format!("{url}/{prefix}")),
            ("AWS_ENDPOINT", endpoint),
            ("AWS_REGION", region),
            ("AWS_ACCESS_KEY_ID", key_id),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_ALLOW_HTTP", "true".to_string()),
        ]);
    }
    let one = Instance::start(&db, &env);
    let two = Instance::start(&db, &env);
    let bases = [one.base.clone(), two.base.clone()];
    let services = db.services();
    let tenant_id = tenant(&services).await;
    services
        .create_webhook(
            &tenant_id,
            WebhookIn {
                url: Some(receiver.url.clone()),
                event_types: Some(vec!["customer.created".into()]),
                ..Default::default()
            },
            &Actor::system("tests"),
        )
        .await
        .unwrap();
    let client = reqwest::Client::new();

    // 1. Writes spread over both instances: each event is delivered once.
    let writes = key(&services, &tenant_id, "writes").await;
    let mut created = HashSet::new();
    for n in 0..200 {
        let id = format!("spread-{n}");
        assert_eq!(create(&client, &bases[n % 2], &writes, &id).await, Some(true));
        created.insert(id);
    }
    wait_for_created(&receiver, &created, Duration::from_secs(60)).await;
    // Late duplicates would come within a lease.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let events = created_events(&receiver);
    let ids: HashSet<&String> = events.iter().map(|(id, _)| id).collect();
    assert_eq!(events.len(), 200, "each event delivered once");
    assert_eq!(ids.len(), 200);

    // 2. A visitor streams from one instance; the agent answers through the other.
    let widget_key = services.widget_key(&tenant_id).await.unwrap();
    let visitor: Value = client
        .post(format!("{}/rest/v1/widget/visitor", bases[1]))
        .header("rapport-widget-key", &widget_key)
        .json(&json!({"firstName": "Vera"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let customer = visitor["customerId"].as_str().unwrap().to_string();
    let mut stream = client
        .get(format!("{}/rest/v1/widget/stream", bases[0]))
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(visitor["visitorToken"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut heard = String::new();
    let mut delay = None;
    for attempt in 0..20 {
        let text = format!("answer {attempt} from the other instance");
        let sent = client
            .post(format!("{}/rest/v1/message", bases[1]))
            .bearer_auth(&writes)
            .json(&json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": text}))
            .send()
            .await
            .unwrap();
        assert_eq!(sent.status(), StatusCode::CREATED);
        let acknowledged = Instant::now();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
        while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, stream.chunk()).await {
            heard.push_str(&String::from_utf8_lossy(&chunk));
            if heard.contains(&text) {
                delay = Some(acknowledged.elapsed());
                break;
            }
        }
        if delay.is_some() {
            break;
        }
    }
    let delay = delay.unwrap_or_else(|| panic!("the stream never heard the other instance: {heard}"));
    eprintln!("the stream heard the other instance {delay:?} after the answer was acknowledged");

    // A file the visitor sends through one instance downloads from the
    // other: both keep media in the one store.
    let text = "the photo of the parcel, as it came";
    let sent: Value = client
        .post(format!("{}/rest/v1/widget/file?name=parcel.txt", bases[1]))
        .header("rapport-widget-key", &widget_key)
        .header("content-type", "text/plain")
        .bearer_auth(visitor["visitorToken"].as_str().unwrap())
        .body(text)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let link = sent["url"].as_str().unwrap();
    let path = &link[link.find("/files/").expect("a download link")..];
    let got = client.get(format!("{}{path}", bases[0])).send().await.unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    assert_eq!(got.text().await.unwrap(), text);

    // 3. A job falls due on both instances' runners and fires once: an
    // appointment's invitations, one mail per attendee.
    let attendees: Vec<String> = (0..20).map(|n| format!("guest{n}@example.com")).collect();
    let appointment = client
        .post(format!("{}/rest/v1/appointment", bases[0]))
        .bearer_auth(&writes)
        .json(&json!({
            "title": "Cluster",
            "date": "2030-03-04T09:30:00Z",
            "attendees": attendees,
            "sendInviteEmail": true,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        appointment.status(),
        StatusCode::CREATED,
        "{:?}",
        appointment.text().await
    );
    let mails = smtp.wait_for(20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut per_recipient: HashMap<String, usize> = HashMap::new();
    for mail in smtp.wait_for(mails.len()).await {
        for to in mail.to {
            *per_recipient.entry(to).or_default() += 1;
        }
    }
    assert_eq!(per_recipient.len(), 20, "{per_recipient:?}");
    assert!(
        per_recipient.values().all(|n| *n == 1),
        "each mail once: {per_recipient:?}"
    );

    // 4. PostgreSQL restarts in the middle of writes through both instances.
    let restart_writes = key(&services, &tenant_id, "restart").await;
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let (client, bases, token) = (client.clone(), bases.clone(), restart_writes.clone());
        let written = written.clone();
        tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            for n in 0..120 {
                let id = format!("restart-{n}");
                // A client retries until it has an answer.
                loop {
                    match create(&client, &bases[n % 2], &token, &id).await {
                        Some(true) => {
                            acknowledged.push(id);
                            written.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            break;
                        }
                        Some(false) => break,
                        None => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
            }
            acknowledged
        })
    };
    // Let writes flow, then restart.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let before_restart = written.load(std::sync::atomic::Ordering::SeqCst);
    assert!(before_restart > 0, "writes flow before the restart");
    let started_at = || async {
        with_db!(&db.db, |pool| sqlx::query_scalar::<_, String>(
            "select pg_postmaster_start_time()::text"
        )
        .fetch_one(pool)
        .await)
    };
    let first_start = started_at().await.unwrap();
    let restart = Command::new("pg_ctlcluster")
        .args(["15", "main", "restart"])
        .status()
        .expect("pg_ctlcluster runs");
    assert!(restart.success(), "PostgreSQL restarts");
    let back = Instant::now();
    // Both instances serve again within 15 s of PostgreSQL being back.
    for base in &bases {
        loop {
            let id = format!("after-restart-{}", base.rsplit(':').next().unwrap());
            if create(&client, base, &restart_writes, &id).await.is_some() {
                break;
            }
            assert!(
                back.elapsed() < Duration::from_secs(15),
                "{base} is not serving 15 s after the restart"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    eprintln!("both instances served again {:?} after the restart", back.elapsed());
    // The server the test database is on is the one that restarted.
    let mut second_start = started_at().await;
    while second_start.is_err() && back.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        second_start = started_at().await;
    }
    assert_ne!(
        first_start,
        second_start.unwrap(),
        "the test database's server restarted"
    );
    let acknowledged = writer.await.unwrap();
    assert!(
        before_restart < 120,
        "the restart came in the middle of the writes ({before_restart} of 120 were done before it)"
    );
    eprintln!(
        "{} creates acknowledged, {before_restart} of them before the restart",
        acknowledged.len()
    );
    assert!(acknowledged.len() >= 100, "{} acknowledged", acknowledged.len());
    // Nothing acknowledged is lost: each customer is stored, and its event
    // arrives.
    let stored: Vec<String> = with_db!(&db.db, |pool| sqlx::query_scalar(
        "select external_id from customers where tenant_id = $1 and external_id like 'restart-%'"
    )
    .bind(&tenant_id)
    .fetch_all(pool)
    .await)
    .unwrap();
    let stored: HashSet<String> = stored.into_iter().collect();
    let acknowledged: HashSet<String> = acknowledged.into_iter().collect();
    assert!(acknowledged.is_subset(&stored), "an acknowledged write was lost");
    wait_for_created(&receiver, &stored, Duration::from_secs(60)).await;

    // 5. The per-token limit holds across both instances: requests alternate
    // between them within one window.
    let limited = key(&services, &tenant_id, "limited").await;
    let into_window = now_ms() % 60_000;
    if into_window > 40_000 {
        tokio::time::sleep(Duration::from_millis(u64::try_from(60_100 - into_window).unwrap())).await;
    }
    let mut allowed = 0;
    let mut refused = 0;
    for n in 0..(2 * LIMIT) {
        let status = client
            .get(format!("{}/rest/v1/customer?pageSize=1", bases[n % 2]))
            .bearer_auth(&limited)
            .send()
            .await
            .unwrap()
            .status();
        match status {
            StatusCode::OK => allowed += 1,
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("unexpected {other}"),
        }
    }
    eprintln!(
        "limit {LIMIT}: {allowed} allowed, {refused} refused over two instances ({:.2}× the limit)",
        allowed as f64 / LIMIT as f64
    );
    assert!(allowed <= LIMIT, "{allowed} allowed over a limit of {LIMIT}");
    assert!(
        allowed * 10 >= LIMIT * 9,
        "{allowed} allowed: the limit held back more than 10 %"
    );
    drop((one, two));
}
