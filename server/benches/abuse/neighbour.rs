//! What the neighbour (B) sees: its REST creates and chat round trips, measured,
//! and reported as ratios to the baseline.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::json;

use super::{
    clients::Workspace,
    stats::{ms, percentile},
};

/// What the neighbour sees in one condition.
pub(crate) struct Figures {
    pub(crate) creates_per_s: f64,
    pub(crate) create_p50: Duration,
    pub(crate) create_p99: Duration,
    pub(crate) chat_p50: Duration,
    pub(crate) chat_p99: Duration,
}

/// B's REST creates and chat round trips, measured now.
pub(crate) async fn measure(b: &Workspace, seconds: Duration) -> Figures {
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let until = Instant::now() + seconds;
    let started = Instant::now();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let b = b.clone();
            let latencies = latencies.clone();
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                while Instant::now() < until {
                    let t = Instant::now();
                    let response = client
                        .post(format!("{}/rest/v1/customer", b.base))
                        .bearer_auth(&b.api_key)
                        .json(&json!({}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(
                        response.status(),
                        reqwest::StatusCode::CREATED,
                        "the neighbour's creates succeed"
                    );
                    latencies.lock().unwrap().push(t.elapsed());
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    let elapsed = started.elapsed();
    let mut creates = latencies.lock().unwrap().clone();
    creates.sort();

    // The chat round trip, on one visitor's open stream.
    let client = reqwest::Client::new();
    let (customer, token) = b.visitor(&client).await.expect("the neighbour's visitor starts");
    let mut stream = b.stream(&client, &token).await;
    assert_eq!(stream.status(), reqwest::StatusCode::OK);
    let mut trips = Vec::new();
    for i in 0..100 {
        let marker = format!("round-trip-{i}-{}", uuid::Uuid::new_v4().simple());
        let t = Instant::now();
        let sent = client
            .post(format!("{}/rest/v1/message", b.base))
            .bearer_auth(&b.api_key)
            .json(&json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": marker}))
            .send()
            .await
            .unwrap();
        assert_eq!(sent.status(), reqwest::StatusCode::CREATED);
        let mut seen = String::new();
        while !seen.contains(&marker) {
            let chunk = tokio::time::timeout(Duration::from_secs(30), stream.chunk())
                .await
                .expect("the message reaches the stream within 30 s")
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        trips.push(t.elapsed());
    }
    trips.sort();
    Figures {
        creates_per_s: creates.len() as f64 / elapsed.as_secs_f64(),
        create_p50: percentile(&creates, 50.0),
        create_p99: percentile(&creates, 99.0),
        chat_p50: percentile(&trips, 50.0),
        chat_p99: percentile(&trips, 99.0),
    }
}

pub(crate) fn ratio(value: f64, baseline: f64) -> String {
    if baseline > 0.0 {
        format!("{:.2}×", value / baseline)
    } else {
        "n/a".into()
    }
}

pub(crate) fn report(name: &str, figures: &Figures, baseline: &Figures) {
    println!(
        "  {name:<13} creates {:>7.0}/s ({})  create p50 {:>6.2} ms p99 {:>6.2} ms ({})  chat p50 {:>6.2} ms p99 {:>6.2} ms ({})",
        figures.creates_per_s,
        ratio(figures.creates_per_s, baseline.creates_per_s),
        ms(figures.create_p50),
        ms(figures.create_p99),
        ratio(ms(figures.create_p99), ms(baseline.create_p99)),
        ms(figures.chat_p50),
        ms(figures.chat_p99),
        ratio(ms(figures.chat_p99), ms(baseline.chat_p99)),
    );
}
