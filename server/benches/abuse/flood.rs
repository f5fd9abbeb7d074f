//! The flood: connections hammering the shop's (A's) public endpoints without
//! pause, their answers counted by status.

use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc, Mutex,
};

use serde_json::{json, Value};

use super::clients::Workspace;

/// Hammers A's public endpoints until `stop`; counts answers by status.
pub(crate) async fn flood(
    a: Workspace,
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<std::collections::BTreeMap<(String, u16), u64>>>,
) {
    let client = reqwest::Client::new();
    let count = |what: &str, status: u16| {
        *answers.lock().unwrap().entry((what.to_string(), status)).or_default() += 1;
    };
    // A 64 KiB batch of recorded events, the script's largest usual size.
    let padding = "x".repeat(64 * 1024);
    let mut seq = 0;
    let mut recording: Option<(String, String)> = None;
    while !stop.load(Ordering::Relaxed) {
        match a.visitor(&client).await {
            Ok(_) => count("visitor", 201),
            Err(status) => count("visitor", status),
        }
        let now = chrono::Utc::now().timestamp_millis();
        let events: Vec<Value> = (0..50)
            .map(|i| {
                json!({"type": "VISIT", "id": uuid::Uuid::new_v4().to_string(), "visitorId": format!("flood-{i}"),
                "url": "https://shop.example/", "startedAt": now, "durationMs": 1000, "pageViews": 1})
            })
            .collect();
        let tracked = client
            .post(format!("{}/rest/v1/widget/track", a.base))
            .header("rapport-widget-key", &a.widget_key)
            .json(&json!({ "events": events }))
            .send()
            .await;
        count("track", tracked.map(|r| r.status().as_u16()).unwrap_or(0));
        if recording.is_none() {
            let started = client
                .post(format!("{}/rest/v1/widget/recording", a.base))
                .header("rapport-widget-key", &a.widget_key)
                .json(&json!({"visitorId": "flood", "url": "https://shop.example/"}))
                .send()
                .await;
            if let Ok(started) = started {
                count("recording start", started.status().as_u16());
                if let Ok(body) = started.json::<Value>().await {
                    if let (Some(id), Some(token)) = (body["sessionId"].as_str(), body["writeToken"].as_str()) {
                        recording = Some((id.to_string(), token.to_string()));
                        seq = 0;
                    }
                }
            }
        }
        if let Some((id, token)) = &recording {
            let batch = json!({"seq": seq, "events": [{"type": 3, "timestamp": now, "data": {"text": padding}}]});
            seq += 1;
            let appended = client
                .post(format!("{}/rest/v1/widget/recording/{id}/events", a.base))
                .header("rapport-widget-key", &a.widget_key)
                .bearer_auth(token)
                .json(&batch)
                .send()
                .await;
            let status = appended.map(|r| r.status().as_u16()).unwrap_or(0);
            count("recording batch", status);
            // A full session: the script would stop; a flooder starts another.
            if status == 413 {
                recording = None;
            }
        }
    }
}
