//! Watchdogs on live traffic: each of the five types fires on its real event
//! (a script error reported by the visitor script, a customer message, an
//! assignment, a visitor's form, a settings write), and each kind of receiver
//! gets the alert: a mail in the outbox, a notification for the user (live on
//! the user's event stream, and nobody else's), a signed `watchdog.alert`
//! delivery at a real HTTP receiver. A storm of 1,000 script errors brings one
//! alert at once and one summary with the count when the window ends.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use rapport_core::{
    backend_tests,
    ids::TenantId,
    mail::Mail,
    model::{PageRequest, Role},
    testing::TestDb,
    with_db,
};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn, server_fn_ok, session},
    receiver::Receiver,
    utils::{actor, expect_problem, fields, ok_json, read_until, TestApp},
};

const WAIT: Duration = Duration::from_secs(30);

const TYPES: [&str; 5] = [
    "JAVASCRIPT_ERROR",
    "MESSAGE_RECEIVED",
    "CUSTOMER_ASSIGNED",
    "FORM_SUBMISSION",
    "SETTING_CHANGED",
];

/// Creates a watchdog; returns its id.
async fn watchdog(app: &TestApp, key: &str, name: &str, kind: &str, receivers: Value) -> String {
    let made = ok_json(
        app.post(
            "/rest/v1/watchdog",
            key,
            json!({"name": name, "watchdogType": kind, "receivers": receivers}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    made["id"].as_str().unwrap().to_string()
}

/// A visitor of the tenant: `(widget key, customer id, visitor token)`.
async fn visitor(app: &TestApp, key: &str) -> (String, String, String) {
    let widget_key = ok_json(app.get("/rest/v1/widget/key", key).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let started = ok_json(
        app.request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", &widget_key)
            .json(&json!({"firstName": "Vera"}))
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    (
        widget_key,
        started["customerId"].as_str().unwrap().to_string(),
        started["visitorToken"].as_str().unwrap().to_string(),
    )
}

/// Reports `n` script errors in one batch, ids `prefix-0…`.
async fn script_errors(app: &TestApp, widget_key: &str, prefix: &str, n: usize) {
    let now = chrono::Utc::now().timestamp_millis();
    let events: Vec<Value> = (0..n)
        .map(|i| {
            json!({"type": "SCRIPT_ERROR", "id": format!("{prefix}-{i}"), "at": now, "visitorId": "v1",
                   "url": "https://shop.example.com/checkout", "message": format!("TypeError: x is undefined ({prefix}-{i})")})
        })
        .collect();
    // Each batch from its own page, at its own address (read where the test
    // trusts a proxy): one address may report a tenth of the tenant's minute.
    let page = prefix.bytes().map(u32::from).sum::<u32>() % 250;
    let answer = ok_json(
        app.request(Method::POST, "/rest/v1/widget/track")
            .header("rapport-widget-key", widget_key)
            .header("x-forwarded-for", format!("198.51.100.{page}"))
            .json(&json!({"events": events}))
            .send()
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(answer["accepted"], n, "{answer}");
}

/// The tenant's alert mails, oldest first.
async fn alert_mails(app: &TestApp, tenant: &TenantId) -> Vec<Mail> {
    let page = PageRequest {
        page_size: Some(200),
        ..PageRequest::default()
    };
    let mut mails: Vec<Mail> = app
        .services
        .list_mail(tenant, &page)
        .await
        .unwrap()
        .results
        .into_iter()
        .filter(|m| m.about.as_deref().is_some_and(|a| a.starts_with("alert:")))
        .collect();
    mails.reverse();
    mails
}

/// Waits until the tenant has `n` alert mails; returns them.
async fn wait_for_mails(app: &TestApp, tenant: &TenantId, n: usize) -> Vec<Mail> {
    let deadline = Instant::now() + WAIT;
    loop {
        let mails = alert_mails(app, tenant).await;
        if mails.len() >= n || Instant::now() > deadline {
            assert_eq!(
                mails.len(),
                n,
                "{:?}",
                mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
            );
            return mails;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The notifications-only event stream of a signed-in user.
async fn bell_stream(app: &TestApp, cookie: &str) -> reqwest::Response {
    let stream = app
        .request(Method::GET, "/inbox/events?only=notifications")
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    stream
}

async fn each_type_fires_on_its_real_event(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    let agent = app.user(&tenant, "agent@alpha.example", Role::Agent, false).await;
    let hook = Receiver::start().await;
    // A day's window: every watchdog alerts its first event at once, and the
    // rest of this test's events are only counted.
    app.services
        .set_watchdog_window(&tenant, 86_400, &actor())
        .await
        .unwrap();
    let receivers = json!([
        {"type": "EMAIL", "value": "ops@alpha.example"},
        {"type": "USER", "value": agent},
        {"type": "WEBHOOK", "value": hook.url},
    ]);
    // SETTING_CHANGED first: creating it is a settings write, so it alerts at
    // once; the next four creations are counted.
    let mut ids = Vec::new();
    for kind in TYPES.iter().rev() {
        ids.push(watchdog(&app, &key, &format!("Watch {kind}"), kind, receivers.clone()).await);
    }
    let settings_watchdog = ids[0].clone();
    ok_json(
        app.post("/rest/v1/team", &key, json!({"name": "Support"})).await,
        StatusCode::CREATED,
    )
    .await;

    // A customer message, then an assignment.
    let customer = ok_json(
        app.post("/rest/v1/customer", &key, json!({"firstName": "Eve"})).await,
        StatusCode::CREATED,
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &key,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "Where is my order?"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            &format!("/rest/v1/customer/{customer}/assign"),
            &key,
            json!({"userId": agent}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    // A script error, and a visitor's contact form.
    let (widget_key, visitor_id, token) = visitor(&app, &key).await;
    script_errors(&app, &widget_key, "e", 1).await;
    let refused = app
        .request(Method::POST, "/rest/v1/widget/form")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&token)
        .json(&json!({"name": "Vera", "email": "not an address"}))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["email", "message"]);
    let form = ok_json(
        app.request(Method::POST, "/rest/v1/widget/form")
            .header("rapport-widget-key", &widget_key)
            .bearer_auth(&token)
            .json(
                &json!({"name": "Vera", "email": "vera@example.com", "message": "Please call me back.",
                          "fields": {"Phone": "+41 44 000 00 00"}, "url": "https://shop.example.com/contact"}),
            )
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    // The form is the visitor's message in its conversation.
    assert_eq!(form["customerId"], visitor_id.as_str());
    assert_eq!(form["direction"], "INBOUND");
    let text = form["message"].as_str().unwrap();
    assert!(
        text.starts_with("Contact form\nName: Vera\nE-mail: vera@example.com\n"),
        "{text}"
    );
    assert!(
        text.contains("Please call me back.") && text.contains("Phone: +41 44 000 00 00"),
        "{text}"
    );
    let thread = ok_json(
        app.get(&format!("/rest/v1/customer/{visitor_id}/message"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(thread["results"][0]["id"], form["id"], "{thread}");

    // Webhook: one signed delivery per type, with the tenant's alert secret.
    let secret = app.services.alert_secret(&tenant).await.unwrap();
    let got = hook.wait_for(5, WAIT).await;
    let mut kinds: Vec<String> = Vec::new();
    for delivery in &got {
        delivery.verify(&secret);
        assert_eq!(delivery.event_type(), "watchdog.alert");
        let alert = delivery.json();
        assert_eq!(alert["type"], "watchdog.alert", "{alert}");
        assert_eq!(alert["count"], 1, "{alert}");
        assert_eq!(alert["timezone"], "UTC", "{alert}");
        assert!(alert["localTime"].as_str().unwrap().ends_with("(UTC)"), "{alert}");
        assert!(
            alert["link"].as_str().unwrap().starts_with("http://rapport.test/"),
            "{alert}"
        );
        let kind = alert["kind"].as_str().unwrap().to_string();
        assert!(
            alert["title"].as_str().unwrap().starts_with(&format!("Watch {kind}: ")),
            "{alert}"
        );
        kinds.push(kind);
    }
    // The receiver URL is no subscription.
    let subscriptions = ok_json(app.get("/rest/v1/webhook", &key).await, StatusCode::OK).await;
    assert_eq!(subscriptions["page"]["totalElements"], 0, "{subscriptions}");
    kinds.sort();
    let mut expected: Vec<String> = TYPES.iter().map(|t| t.to_string()).collect();
    expected.sort();
    assert_eq!(kinds, expected);
    let by_kind = |k: &str| got.iter().map(|d| d.json()).find(|a| a["kind"] == k).unwrap();
    assert_eq!(
        by_kind("MESSAGE_RECEIVED")["link"],
        format!("http://rapport.test/inbox/{customer}")
    );
    assert!(
        by_kind("CUSTOMER_ASSIGNED")["body"]
            .as_str()
            .unwrap()
            .contains("Eve was assigned to agent@alpha.example"),
        "{}",
        by_kind("CUSTOMER_ASSIGNED")
    );
    assert!(by_kind("JAVASCRIPT_ERROR")["body"]
        .as_str()
        .unwrap()
        .starts_with("TypeError: x is undefined (e-0)"));
    assert_eq!(
        by_kind("FORM_SUBMISSION")["link"],
        format!("http://rapport.test/inbox/{visitor_id}")
    );
    assert!(by_kind("SETTING_CHANGED")["body"]
        .as_str()
        .unwrap()
        .starts_with("watchdog.create on watchdog"));

    // E-mail: one mail per type in the outbox.
    let mails = wait_for_mails(&app, &tenant, 5).await;
    for mail in &mails {
        assert_eq!(mail.to, "ops@alpha.example");
        assert!(mail.subject.starts_with("Watch "), "{}", mail.subject);
        assert!(mail.body.contains("Open: http://rapport.test/"), "{}", mail.body);
    }

    // The dashboard: five unread notifications for the agent.
    assert_eq!(app.services.unread_notifications(&tenant, &agent).await.unwrap(), 5);

    // SETTING_CHANGED counted the settings writes (the five watchdogs and the
    // team) and none of the customer, message, assignment or form actions.
    let counted: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select cast(coalesce(sum(events), 0) as bigint) from watchdog_windows where tenant_id = $1 and watchdog_id = $2"
    )
    .bind(&tenant)
    .bind(&settings_watchdog)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(counted, 6);
    app.stop().await;
}

async fn a_storm_of_script_errors_is_grouped(db: TestDb) {
    // Ten pages report at once, each from its visitor's address, which the
    // proxy in front of the server forwards.
    let app = TestApp::start_with(db, |c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    let hook = Receiver::start().await;
    let window_ms: i64 = 10_000;
    app.services
        .set_watchdog_window(&tenant, window_ms / 1000, &actor())
        .await
        .unwrap();
    watchdog(
        &app,
        &key,
        "Script errors",
        "JAVASCRIPT_ERROR",
        json!([{"type": "EMAIL", "value": "ops@alpha.example"}, {"type": "WEBHOOK", "value": hook.url}]),
    )
    .await;
    let (widget_key, _, _) = visitor(&app, &key).await;

    // Windows are aligned to the clock: start the storm early in one, so that
    // it ends in the same window.
    let now = chrono::Utc::now().timestamp_millis();
    let left = window_ms - now.rem_euclid(window_ms);
    if left < 8_000 {
        tokio::time::sleep(Duration::from_millis(u64::try_from(left).unwrap() + 50)).await;
    }
    let window = |t: i64| t - t.rem_euclid(window_ms);
    let started = chrono::Utc::now().timestamp_millis();
    // One error, then 999 more as ten pages report theirs at once (a batch
    // holds at most 100).
    script_errors(&app, &widget_key, "first", 1).await;
    join_all((0..10).map(|b| {
        let (app, widget_key) = (&app, &widget_key);
        async move { script_errors(app, widget_key, &format!("b{b}"), if b == 9 { 99 } else { 100 }).await }
    }))
    .await;
    let ended = chrono::Utc::now().timestamp_millis();
    let windows = window(ended) / window_ms - window(started) / window_ms + 1;

    // One alert at once.
    let first = hook.wait_for(1, WAIT).await;
    assert_eq!(first[0].json()["count"], 1, "{}", first[0].json());
    if windows == 1 {
        // And one summary once the window ends, with the count.
        let got = hook.wait_for(2, WAIT).await;
        let summary = got[1].json();
        assert_eq!(summary["count"], 999, "{summary}");
        assert!(
            summary["body"].as_str().unwrap().starts_with("And 999 more"),
            "{summary}"
        );
        let mails = wait_for_mails(&app, &tenant, 2).await;
        assert!(
            mails[0].subject.starts_with("Script errors: script error"),
            "{}",
            mails[0].subject
        );
        assert!(mails[1].body.contains("Events: 999"), "{}", mails[1].body);
    } else {
        // A slow machine let the storm run into the next window: each window
        // still sends at most its first alert and one summary, and together
        // they report every error.
        let deadline = Instant::now() + WAIT;
        let mut got = hook.received();
        while got.iter().map(|d| d.json()["count"].as_i64().unwrap()).sum::<i64>() < 1000 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
            got = hook.received();
        }
        assert_eq!(
            got.iter().map(|d| d.json()["count"].as_i64().unwrap()).sum::<i64>(),
            1000
        );
        assert!(
            got.len() <= 2 * usize::try_from(windows).unwrap(),
            "{} alerts",
            got.len()
        );
    }
    // Nothing more is on its way: no alert or window job is left.
    let deadline = Instant::now() + WAIT;
    loop {
        let pending: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
            "select count(*) from jobs where tenant_id = $1 and kind in ('alert.deliver', 'watchdog.summary')"
        )
        .bind(&tenant)
        .fetch_one(pool)
        .await)
        .unwrap();
        if pending == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{pending} alert jobs left");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sent = hook.received().len();
    assert!(sent <= 2 * usize::try_from(windows).unwrap(), "{sent} alerts");
    app.stop().await;
}

async fn notifications_are_per_user_and_tenant(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let ann = app.user(&alpha, "ann@alpha.example", Role::Agent, false).await;
    let bob = app.user(&alpha, "bob@alpha.example", Role::Agent, false).await;
    let eve = app.user(&beta, "eve@beta.example", Role::Admin, false).await;
    let (ann_s, bob_s, eve_s) = (
        session(&app, "ann@alpha.example").await,
        session(&app, "bob@alpha.example").await,
        session(&app, "eve@beta.example").await,
    );
    let mut ann_stream = bell_stream(&app, &ann_s).await;
    let mut bob_stream = bell_stream(&app, &bob_s).await;
    let mut eve_stream = bell_stream(&app, &eve_s).await;

    // Another tenant cannot name Alpha's user as a receiver.
    let refused = app
        .post(
            "/rest/v1/watchdog",
            &beta_key,
            json!({"name": "Sneaky", "watchdogType": "SETTING_CHANGED", "receivers": [{"type": "USER", "value": ann}]}),
        )
        .await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["receivers[0].value"]);

    // Creating Ann's watchdog is a settings write: Ann is told, live.
    watchdog(
        &app,
        &key,
        "Settings for Ann",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": ann}]),
    )
    .await;
    read_until(&mut ann_stream, "event: notification", WAIT).await;
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 0);
    assert_eq!(server_fn_ok(&app, "notification_count", &eve_s, &[]).await, 0);
    let listed = server_fn_ok(&app, "list_notifications", &ann_s, &[]).await;
    assert_eq!(listed["unread"], 1, "{listed}");
    let item = &listed["items"][0];
    assert_eq!(item["title"], "Settings for Ann: setting changed", "{listed}");
    assert_eq!(item["link"], "/settings/audit?action=watchdog.create", "{listed}");
    assert_eq!(item["read"], false);
    let strangers = server_fn_ok(&app, "list_notifications", &eve_s, &[]).await;
    assert_eq!(strangers["items"], json!([]), "{strangers}");

    // Bob's own notification is the first his stream hears: Ann's never
    // reached it (it was published before, and the stream keeps order). The
    // same for Beta's admin, whose first is from Beta's watchdog.
    watchdog(
        &app,
        &key,
        "Settings for Bob",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": bob}]),
    )
    .await;
    let seen = read_until(&mut bob_stream, "event: notification", WAIT).await;
    assert_eq!(seen.matches("event: notification").count(), 1, "{seen}");
    watchdog(
        &app,
        &beta_key,
        "Beta settings",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": eve}]),
    )
    .await;
    let seen = read_until(&mut eve_stream, "event: notification", WAIT).await;
    assert_eq!(seen.matches("event: notification").count(), 1, "{seen}");
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);

    // Marking read is each user's own.
    assert_eq!(server_fn_ok(&app, "mark_notifications_read", &eve_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "mark_notifications_read", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 0);
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 1);
    let listed = server_fn_ok(&app, "list_notifications", &ann_s, &[]).await;
    assert_eq!(listed["items"][0]["read"], true, "{listed}");
    // Open streams would hold the graceful shutdown.
    drop((ann_stream, bob_stream, eve_stream));
    app.stop().await;
}

async fn admins_set_how_alerts_are_sent(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@alpha.example", Role::Admin, false).await;
    app.user(&tenant, "agent@alpha.example", Role::Agent, false).await;
    let admin = session(&app, "admin@alpha.example").await;
    let agent = session(&app, "agent@alpha.example").await;
    for name in ["alert_settings", "alert_secret", "rotate_alert_secret"] {
        assert_eq!(
            server_fn(&app, name, &agent, &[]).await.status(),
            StatusCode::FORBIDDEN,
            "{name}"
        );
    }

    // The grouping period, in minutes.
    let settings = server_fn_ok(&app, "alert_settings", &admin, &[]).await;
    assert_eq!(settings["window_seconds"], 300, "{settings}");
    assert_eq!(
        server_fn_ok(&app, "set_alert_window", &admin, &[("minutes", "15")]).await,
        15
    );
    assert_eq!(app.services.watchdog_window(&tenant).await.unwrap(), 900);
    let refused = server_fn(&app, "set_alert_window", &admin, &[("minutes", "0")]).await;
    assert_ne!(refused.status(), StatusCode::OK);
    assert_eq!(app.services.watchdog_window(&tenant).await.unwrap(), 900);

    // The alert secret signs alerts to webhook URLs; after a rotation both
    // sign during the overlap, and the new one verifies.
    let hook = Receiver::start().await;
    let secret = server_fn_ok(&app, "alert_secret", &admin, &[]).await;
    let secret = secret.as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    watchdog(
        &app,
        &key,
        "Changes",
        "SETTING_CHANGED",
        json!([{"type": "WEBHOOK", "value": hook.url}]),
    )
    .await;
    hook.wait_for(1, WAIT).await[0].verify(&secret);
    let rotated = server_fn_ok(&app, "rotate_alert_secret", &admin, &[]).await;
    let rotated = rotated.as_str().unwrap().to_string();
    assert_ne!(rotated, secret);
    assert_eq!(server_fn_ok(&app, "alert_secret", &admin, &[]).await, rotated.as_str());
    // Shortening the period is a settings write too, counted in a window of
    // the new length: a new window, so it alerts at once.
    app.services.set_watchdog_window(&tenant, 1, &actor()).await.unwrap();
    let got = hook.wait_for(2, WAIT).await;
    let last = got.last().unwrap();
    last.verify(&rotated);
    last.verify(&secret);
    assert_eq!(last.header("webhook-signature").split(' ').count(), 2);

    // The receiver URL is listed with its state, and the page says so.
    let settings = server_fn_ok(&app, "alert_settings", &admin, &[]).await;
    assert_eq!(settings["receivers"][0]["url"], hook.url.as_str(), "{settings}");
    assert_eq!(settings["receivers"][0]["enabled"], true, "{settings}");
    let html = page(&app, "/settings/watchdogs?secret=show", &admin)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains(&rotated), "the page shows the secret on request");
    assert!(html.contains(&hook.url));
    app.stop().await;
}

/// Two instances on one PostgreSQL database: a notification written through
/// one reaches the user's bell on the other. SQLite runs one instance per
/// file, so this is PostgreSQL's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_reach_the_bell_on_another_instance() {
    let Some(db) = TestDb::postgres().await.expect("postgres test database") else {
        eprintln!("skipped: {} is not set", rapport_core::testing::POSTGRES_URL_VAR);
        return;
    };
    let a = TestApp::start(db).await;
    let b = a.another_instance().await;
    let (tenant, key) = a.tenant_with_key("Alpha").await;
    let ann = a.user(&tenant, "ann@alpha.example", Role::Agent, false).await;
    a.services.set_watchdog_window(&tenant, 1, &actor()).await.unwrap();
    let cookie = session(&a, "ann@alpha.example").await;
    let mut stream = bell_stream(&a, &cookie).await;
    watchdog(
        &b,
        &key,
        "Settings",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": ann}]),
    )
    .await;
    // A starts listening as it starts serving; until it does, what B
    // announces is not heard: change settings through B (a new window each
    // second) until A's stream hears one.
    let deadline = Instant::now() + WAIT;
    let mut seen = String::new();
    let mut n = 0;
    while !seen.contains("event: notification") {
        assert!(Instant::now() < deadline, "no notification reached instance A");
        n += 1;
        ok_json(
            b.post("/rest/v1/team", &key, json!({"name": format!("Team {n}")}))
                .await,
            StatusCode::CREATED,
        )
        .await;
        if let Ok(Some(chunk)) = tokio::time::timeout(Duration::from_millis(1500), stream.chunk())
            .await
            .map(Result::unwrap)
        {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    assert!(a.services.unread_notifications(&tenant, &ann).await.unwrap() >= 1);
    drop(stream);
    b.stop().await;
    a.stop().await;
}

backend_tests!(
    each_type_fires_on_its_real_event,
    admins_set_how_alerts_are_sent,
    a_storm_of_script_errors_is_grouped,
    notifications_are_per_user_and_tenant,
);
