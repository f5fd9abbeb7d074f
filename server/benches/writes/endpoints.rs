//! The write benchmark's webhook endpoints: receivers that answer 500 or note
//! when each event arrived, and their subscriptions through the REST API.

use super::*;

/// How long after its event was stored each event the receiver noted arrived:
/// `(stored at, delay)`, unix ms.
pub(crate) async fn first_attempt_delays(
    observer: &Db,
    tenant_id: &str,
    arrivals: &std::sync::Mutex<HashMap<String, i64>>,
) -> Result<Vec<(i64, Duration)>, String> {
    let stored: Vec<(String, i64)> = with_db!(observer, |pool| sqlx::query_as(
        "select id, created_at from events where tenant_id = $1"
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await)
    .map_err(|e| e.to_string())?;
    let arrivals = arrivals.lock().unwrap();
    let mut delays: Vec<(i64, Duration)> = stored
        .into_iter()
        .filter_map(|(id, at)| {
            let arrived = *arrivals.get(&id)?;
            Some((at, Duration::from_millis(u64::try_from(arrived - at).unwrap_or(0))))
        })
        .collect();
    delays.sort_by_key(|(_, d)| *d);
    Ok(delays)
}

/// A local receiver that answers 500 to everything; its base URL.
pub(crate) async fn failing_receiver() -> String {
    let app = Router::new().fallback(any(|| async {
        (StatusCode::INTERNAL_SERVER_ERROR, "failing on purpose")
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// A local receiver that notes, per `webhook-id`, when the event first arrived
/// (unix ms), and answers 200 50 ms later (as the receiver did); its
/// base URL.
pub(crate) async fn recording_receiver() -> (String, Arc<std::sync::Mutex<HashMap<String, i64>>>) {
    let arrivals: Arc<std::sync::Mutex<HashMap<String, i64>>> = Arc::default();
    let noted = arrivals.clone();
    let app = Router::new().fallback(any(move |headers: axum::http::HeaderMap| {
        let noted = noted.clone();
        async move {
            let at = chrono::Utc::now().timestamp_millis();
            if let Some(id) = headers.get("webhook-id").and_then(|v| v.to_str().ok()) {
                noted.lock().unwrap().entry(id.to_string()).or_insert(at);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            "ok"
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, arrivals)
}

/// The URLs of `unresolvable` endpoints whose host does not resolve and of
/// `failing` ones answering 500.
pub(crate) async fn failing_urls(unresolvable: usize, failing: usize) -> Vec<String> {
    let receiver = failing_receiver().await;
    (0..unresolvable)
        .map(|n| format!("http://hook-{n}.invalid/"))
        .chain((0..failing).map(|n| format!("{receiver}/fail/{n}")))
        .collect()
}

/// Subscribes 10 endpoints whose host does not resolve and 10 answering 500 to
/// `customer.created`, through the REST API.
pub(crate) async fn subscribe_failing_endpoints(target: &Target) {
    subscribe(target, &failing_urls(10, 10).await).await;
}

/// Subscribes `urls` to `customer.created`, through the REST API.
pub(crate) async fn subscribe(target: &Target, urls: &[String]) {
    let client = reqwest::Client::new();
    for url in urls {
        let r = client
            .post(format!("{}/rest/v1/webhook", target.base))
            .bearer_auth(&target.token)
            .json(&serde_json::json!({"url": url, "eventTypes": ["customer.created"], "description": "bench: failing"}))
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert!(
            status.is_success(),
            "subscribing {url}: {status} {}",
            r.text().await.unwrap_or_default()
        );
    }
}

/// Waits (up to 30 s) until the endpoints at `url_prefix` have sent every
/// event: none waits for its fan-out, none of theirs is queued or behind. A
/// phase that measures them then starts from an empty queue, not from what
/// the phase before left.
pub(crate) async fn settle(observer: &Db, url_prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let pattern = format!("{url_prefix}%");
    loop {
        let left: i64 = with_db!(observer, |pool| sqlx::query_scalar(
            "select (select count(*) from events where fanout_pending) \
             + (select count(*) from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id \
                where w.url like $1 and d.state in ('pending', 'delivering')) \
             + (select count(*) from webhook_endpoints where url like $1 and fanout_mark is not null)"
        )
        .bind(&pattern)
        .fetch_one(pool)
        .await)
        .unwrap_or(0);
        if left == 0 || Instant::now() >= deadline {
            if left > 0 {
                println!("settle: {left} still unsent after 30 s");
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
