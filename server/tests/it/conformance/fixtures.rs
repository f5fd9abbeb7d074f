//! The objects the cases name, created through the API before any case runs.

use super::*;

/// The objects the cases name: path targets, and anchors that bodies refer to (so
/// that deleting or changing a target never breaks a reference).
#[derive(Debug, Default, Clone)]
pub(super) struct Fixtures {
    pub(super) tenant_token: String,
    pub(super) platform_token: String,
    pub(super) widget_key: String,
    pub(super) visitor_token: String,
    /// A recording's write token (`/widget/recording/{id}/…`).
    pub(super) write_token: String,
    /// The id a path's `{id}` takes, by the path segment before it.
    pub(super) targets: HashMap<&'static str, String>,
    pub(super) customer_target: String,
    pub(super) appointment: String,
    /// A recording of the appointment's call.
    pub(super) recording: String,
    pub(super) delivery: String,
    pub(super) user: String,
    pub(super) user_email: String,
    pub(super) team: String,
    pub(super) customer: String,
    pub(super) customer_external_id: String,
    pub(super) opening_hours: String,
    pub(super) system_message: String,
    pub(super) flow: String,
    pub(super) rule: String,
    pub(super) session: String,
    /// A message of the path's customer (`customer_target`).
    pub(super) message: String,
    /// A message of the widget's visitor.
    pub(super) visitor_message: String,
}

/// Creates the objects the cases name, through the API itself.
pub(super) async fn fixtures(app: &TestApp) -> Fixtures {
    let (tenant_id, tenant_token) = app.tenant_with_key("Fuzzed").await;
    let platform_token = app.platform_key().await;
    let t = tenant_token.as_str();
    let create = |path: &'static str, body: Value| {
        let path = path.to_string();
        async move { ok_json(app.post(&path, t, body).await, StatusCode::CREATED).await }
    };
    let id = |v: &Value| v["id"].as_str().unwrap().to_string();
    let mut f = Fixtures {
        tenant_token: tenant_token.clone(),
        platform_token: platform_token.clone(),
        ..Default::default()
    };
    let now = chrono::Utc::now();

    let anchor_user = create("/rest/v1/user", json!({"email": "anchor@example.com"})).await;
    f.user = id(&anchor_user);
    f.user_email = "anchor@example.com".into();
    let target_user = create("/rest/v1/user", json!({"email": "target@example.com"})).await;
    f.targets.insert("user", id(&target_user));

    f.team = id(&create("/rest/v1/team", json!({"name": "Anchor", "members": [f.user]})).await);
    f.targets
        .insert("team", id(&create("/rest/v1/team", json!({"name": "Target"})).await));

    f.customer_external_id = "anchor-external".into();
    f.customer = id(&create("/rest/v1/customer", json!({"externalId": "anchor-external"})).await);
    f.customer_target = id(&create("/rest/v1/customer", json!({"firstName": "Target"})).await);
    f.targets.insert("customer", f.customer_target.clone());

    f.opening_hours = id(&create("/rest/v1/openinghours", json!({"name": "Anchor"})).await);
    f.targets.insert(
        "openinghours",
        id(&create("/rest/v1/openinghours", json!({"name": "Target"})).await),
    );
    let message = |text: &str| json!({"message": text, "language": "en"});
    f.system_message = id(&create("/rest/v1/systemmessage", message("Anchor")).await);
    f.targets.insert(
        "systemmessage",
        id(&create("/rest/v1/systemmessage", message("Target")).await),
    );
    let flow = |name: &str| json!({"name": name, "messages": [{"type": "MESSAGE", "message": "Hello"}]});
    f.flow = id(&create("/rest/v1/flow", flow("Anchor")).await);
    f.targets
        .insert("flow", id(&create("/rest/v1/flow", flow("Target")).await));
    let rule = |name: &str| json!({"name": name, "types": ["CHAT"], "actions": [{"type": "QUEUE", "target": {"type": "TAG", "value": "support"}}]});
    f.rule = id(&create("/rest/v1/rule/routing", rule("Anchor")).await);
    f.targets
        .insert("routing", id(&create("/rest/v1/rule/routing", rule("Target")).await));
    let sla = json!({"name": "Target", "trigger": {"firstResponseSeconds": 60, "secondResponseSeconds": 300}});
    f.targets.insert("sla", id(&create("/rest/v1/rule/sla", sla).await));
    let action = json!({"name": "Target", "trigger": "PAGE", "action": {"type": "HIDE_BUTTON"}});
    f.targets
        .insert("action", id(&create("/rest/v1/rule/action", action).await));
    let block = json!({"shortcut": "target", "text": "Hello {customer.firstName|there}"});
    f.targets
        .insert("textblock", id(&create("/rest/v1/textblock", block).await));
    let watchdog = json!({"name": "Target", "watchdogType": "JAVASCRIPT_ERROR"});
    f.targets
        .insert("watchdog", id(&create("/rest/v1/watchdog", watchdog).await));
    let date = (now + chrono::Duration::days(2)).to_rfc3339();
    f.appointment = id(&create("/rest/v1/appointment", json!({"title": "Target", "date": date})).await);
    // A recording is made by a call, not by a request: stored as the recorder does.
    let recording = rapport_core::appointments::recordings::NewConferenceRecording {
        appointment_id: f.appointment.clone().into(),
        participant: "Anchor".into(),
        source: rapport_core::appointments::recordings::RecordingSource::Camera,
        started_at: now.timestamp_millis() - 60_000,
        ended_at: now.timestamp_millis(),
        host: None,
    };
    f.recording = app
        .services
        .store_conference_recording(&tenant_id, &recording, &b"not really a webm file"[..])
        .await
        .unwrap()
        .id;
    let session = |name: &str| json!({"id": name, "visitorId": "visitor-1", "startedAt": now.to_rfc3339()});
    let recorded = app.post("/rest/v1/session", t, session("anchor-session")).await;
    f.session = ok_json(recorded, StatusCode::OK).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let recorded = app.post("/rest/v1/session", t, session("target-session")).await;
    let target_session = ok_json(recorded, StatusCode::OK).await;
    f.targets.insert("session", id(&target_session));
    let key = create("/rest/v1/apikey", json!({"name": "Target"})).await;
    f.targets.insert("apikey", id(&key["key"]));
    let webhook = id(&create("/rest/v1/webhook", json!({"url": "https://example.com/hook"})).await);
    let queued = app
        .post(&format!("/rest/v1/webhook/{webhook}/test"), t, json!({}))
        .await;
    ok_json(queued, StatusCode::ACCEPTED).await;
    let deliveries = ok_json(
        app.get(&format!("/rest/v1/webhook/{webhook}/delivery"), t).await,
        StatusCode::OK,
    )
    .await;
    f.delivery = deliveries["results"][0]["id"].as_str().unwrap().to_string();
    f.targets.insert("webhook", webhook);
    let tenant = app
        .post("/rest/v1/tenant", &platform_token, json!({"name": "Target"}))
        .await;
    f.targets
        .insert("tenant", id(&ok_json(tenant, StatusCode::CREATED).await));

    f.widget_key = ok_json(app.get("/rest/v1/widget/key", t).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let visitor = app
        .request(Method::POST, "/rest/v1/widget/visitor")
        .header("rapport-widget-key", &f.widget_key)
        .json(&json!({"firstName": "Visitor"}))
        .send()
        .await
        .unwrap();
    f.visitor_token = ok_json(visitor, StatusCode::CREATED).await["visitorToken"]
        .as_str()
        .unwrap()
        .to_string();
    let recording = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", &f.widget_key)
        .json(&json!({"visitorId": "visitor-1", "url": "https://shop.example/"}))
        .send()
        .await
        .unwrap();
    let recording = ok_json(recording, StatusCode::CREATED).await;
    f.write_token = recording["writeToken"].as_str().unwrap().to_string();
    f.targets
        .insert("recording", recording["sessionId"].as_str().unwrap().to_string());
    let sent = json!({"customerId": f.customer_target, "isExternalId": false, "type": "MESSAGE", "message": "Hello"});
    f.message = id(&ok_json(app.post("/rest/v1/message", t, sent).await, StatusCode::CREATED).await);
    let written = app
        .request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", &f.widget_key)
        .bearer_auth(&f.visitor_token)
        .json(&json!({"message": "Hello"}))
        .send()
        .await
        .unwrap();
    f.visitor_message = id(&ok_json(written, StatusCode::CREATED).await);
    f
}
