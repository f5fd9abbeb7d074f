//! The dashboard's settings and agent tools over HTTP: webhook editing and replay,
//! link generation, field-level validation messages, the no-JavaScript flash of
//! generated secrets, roles and tenant isolation. (Clicking through them in
//! Chromium is in end2end/.)

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, session, Cast},
    utils::TestApp,
};

async fn json_of(response: reqwest::Response) -> Value {
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// A server function called as a plain HTML form post (no JavaScript).
async fn plain_form_post(
    app: &TestApp,
    name: &str,
    cookie: &str,
    referer: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    app.request(Method::POST, &format!("/api/{name}"))
        .header(header::COOKIE, cookie)
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{referer}", app.base))
        .form(form)
        .send()
        .await
        .unwrap()
}

/// Asserts that every server function in `names`, called by `cookie` with
/// `form`, is refused with `status` (403 for a role too low, 404 for another
/// tenant's ids).
async fn assert_refused(app: &TestApp, names: &[&str], cookie: &str, form: &[(&str, &str)], status: StatusCode) {
    for name in names {
        assert_eq!(server_fn(app, name, cookie, form).await.status(), status, "{name}");
    }
}

async fn webhooks_are_edited_replayed_and_kept_per_tenant(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let receiver = crate::receiver::Receiver::start().await;

    // A bad URL and an unknown event type are reported at their fields.
    let bad = server_fn(
        &app,
        "create_webhook",
        &admin,
        &[("url", "ftp://files.example.com"), ("event_types[]", "no.such.event")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains(r#"\"field\":\"url\""#) || text.contains(r#""field":"url""#),
        "{text}"
    );
    assert!(text.contains("eventTypes[0]"), "{text}");

    // Without JavaScript, the secret reaches the page once, through the flash cookie.
    let created = plain_form_post(
        &app,
        "create_webhook",
        &admin,
        "/settings/webhooks",
        &[("url", receiver.url.as_str()), ("description", "  ")],
    )
    .await;
    assert!(created.status().is_redirection(), "{}", created.status());
    let flash = created.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        flash.contains("Path=/settings/webhooks") && flash.contains("HttpOnly"),
        "{flash}"
    );
    let flash_cookie = flash.split(';').next().unwrap();
    let taken = json_of(server_fn(&app, "take_webhook_secret", &format!("{admin}; {flash_cookie}"), &[]).await).await;
    let secret = taken["secret"].as_str().unwrap().to_string();
    let id = taken["webhook"]["id"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(
        taken["webhook"]["description"],
        Value::Null,
        "a blank description is none"
    );

    // Editing: unticking every event means all events; an unticked box disables.
    let edited = json_of(
        server_fn(
            &app,
            "update_webhook",
            &admin,
            &[
                ("id", id.as_str()),
                ("url", receiver.url.as_str()),
                ("description", "CRM"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(edited["enabled"], false);
    assert_eq!(edited["event_types"], json!([]));
    assert_eq!(edited["description"], "CRM");
    let enabled = json_of(
        server_fn(
            &app,
            "update_webhook",
            &admin,
            &[
                ("id", id.as_str()),
                ("url", receiver.url.as_str()),
                ("event_types[]", "message.received"),
                ("enabled", "on"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(enabled["enabled"], true);
    assert_eq!(
        json_of(server_fn(&app, "get_webhook", &admin, &[("id", id.as_str())]).await).await,
        enabled
    );

    // A test event, then a replay of it with the same webhook-id.
    json_of(server_fn(&app, "send_test_webhook", &admin, &[("id", id.as_str())]).await).await;
    let first = receiver.wait_for(1, std::time::Duration::from_secs(20)).await;
    first[0].verify(&secret);
    let mut log = Value::Null;
    for _ in 0..100 {
        log = json_of(server_fn(&app, "webhook_attempts", &admin, &[("id", id.as_str())]).await).await;
        if log.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(log[0]["attempt"], 1);
    let delivery = log[0]["delivery_id"].as_str().unwrap().to_string();
    json_of(
        server_fn(
            &app,
            "replay_webhook_delivery",
            &admin,
            &[("id", id.as_str()), ("delivery_id", delivery.as_str())],
        )
        .await,
    )
    .await;
    let both = receiver.wait_for(2, std::time::Duration::from_secs(20)).await;
    assert_eq!(both[1].header("webhook-id"), first[0].header("webhook-id"));
    both[1].verify(&secret);

    // Supervisors cannot change settings; another tenant's admin cannot see them.
    let names = [
        "get_webhook",
        "update_webhook",
        "rotate_webhook_secret",
        "replay_webhook_delivery",
    ];
    let form = [
        ("id", id.as_str()),
        ("url", "https://x.example.com"),
        ("delivery_id", delivery.as_str()),
    ];
    assert_refused(&app, &names, &supervisor, &form, StatusCode::FORBIDDEN).await;
    assert_refused(&app, &names, &stranger, &form, StatusCode::NOT_FOUND).await;
    assert_eq!(
        server_fn(&app, "webhook_attempts", &stranger, &[("id", id.as_str())])
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

async fn agents_generate_links(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let kim_id = app.user(&alpha, "kim@alpha.example", Role::Agent, false).await;
    app.user(&beta, "bo@beta.example", Role::Agent, false).await;
    let kim = session(&app, "kim@alpha.example").await;

    let links = json_of(
        server_fn(
            &app,
            "generate_cobrowse_links",
            &kim,
            &[("url", " https://shop.example.com/cart ")],
        )
        .await,
    )
    .await;
    assert_eq!(links["url"], "https://shop.example.com/cart");
    let join = links["join_link"].as_str().unwrap();
    assert!(join.contains("/cobrowse/") && join.contains("token="), "{join}");
    assert_ne!(links["host_link"], links["join_link"]);
    let bad = server_fn(&app, "generate_cobrowse_links", &kim, &[("url", "javascript:alert(1)")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("url"));

    for (token, id, tag) in [(&key, "s-alpha", "vip"), (&beta_key, "s-beta", "vip")] {
        let recorded = app
            .post(
                "/rest/v1/session",
                token,
                json!({"id": id, "visitorId": format!("visitor-{id}"), "startedAt": "2026-11-20T10:00:00Z", "tags": [tag]}),
            )
            .await;
        assert_eq!(recorded.status(), StatusCode::OK);
    }
    let sessions = json_of(server_fn(&app, "recent_sessions", &kim, &[("tag", "vip")]).await).await;
    let ids: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s-alpha"], "only the agent's tenant's sessions");
    let none = json_of(server_fn(&app, "recent_sessions", &kim, &[("tag", "other")]).await).await;
    assert_eq!(none, json!([]));

    let live = json_of(
        server_fn(
            &app,
            "generate_liveview_link",
            &kim,
            &[("session_id", "s-alpha"), ("language", "de")],
        )
        .await,
    )
    .await;
    let link = live["link"].as_str().unwrap();
    let path = &link[link.find("/liveview/open?token=").expect(link)..];
    let shown = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(shown.status(), StatusCode::OK, "the link's page only shows a button");
    let token = path.trim_start_matches("/liveview/open?token=");
    let opened = app
        .request(Method::POST, "/liveview/open")
        .header(header::COOKIE, &kim)
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    assert!(opened.status().is_redirection());
    assert_eq!(opened.headers()[header::LOCATION], "/liveview/s-alpha?lang=de");
    // Opened by a signed-in agent: the audit log names them, not the addressee.
    let log = app
        .services
        .list_audit(&alpha, &Default::default(), &Default::default())
        .await
        .unwrap()
        .results;
    let open = log
        .iter()
        .find(|e| e.action == "liveview.open")
        .expect("the opening is audited");
    assert_eq!(open.actor_id, kim_id);

    let foreign = server_fn(&app, "generate_liveview_link", &kim, &[("session_id", "s-beta")]).await;
    assert!(foreign.status().is_client_error(), "{}", foreign.status());
    let language = server_fn(
        &app,
        "generate_liveview_link",
        &kim,
        &[("session_id", "s-alpha"), ("language", "xx")],
    )
    .await;
    assert_eq!(language.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(language.text().await.unwrap().contains("language"));
    let signed_out = server_fn(
        &app,
        "generate_cobrowse_links",
        "rapport_session=nope",
        &[("url", "https://a.example")],
    )
    .await;
    assert_eq!(signed_out.status(), StatusCode::UNAUTHORIZED);
}

async fn admins_manage_users(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        admin_id,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;

    // Without a password, one is generated and shown once; it signs in.
    let added = json_of(
        server_fn(
            &app,
            "add_user",
            &admin,
            &[
                ("form[email]", "Sam@Alpha.example"),
                ("form[display_name]", "Sam"),
                ("form[role]", "AGENT"),
                ("form[tags]", " billing, de ,"),
            ],
        )
        .await,
    )
    .await;
    let password = added["password"].as_str().unwrap().to_string();
    let id = added["user"]["id"].as_str().unwrap().to_string();
    assert_eq!(added["user"]["email"], "sam@alpha.example");
    assert_eq!(added["user"]["tags"], json!(["billing", "de"]));
    assert_eq!(added["user"]["mco_enabled"], false);
    let signed_in = crate::dashboard::login(&app, "sam@alpha.example", &password).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    assert!(signed_in.headers()[header::LOCATION].to_str().unwrap().ends_with('/'));

    // Bad input is reported at the field.
    let long_tag = "x".repeat(65);
    let bad = server_fn(
        &app,
        "add_user",
        &admin,
        &[
            ("form[email]", "kai@alpha.example"),
            ("form[tags]", long_tag.as_str()),
            ("form[role]", "BOSS"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("tags[0]") && text.contains("roleId"), "{text}");

    // Search, edit, reset.
    let found = json_of(server_fn(&app, "list_users", &admin, &[("search", "SAM")]).await).await;
    assert_eq!(found["users"].as_array().unwrap().len(), 1);
    assert_eq!(found["page"]["totalElements"], 1);
    let edited = json_of(
        server_fn(
            &app,
            "edit_user",
            &admin,
            &[
                ("id", id.as_str()),
                ("form[email]", "sam@alpha.example"),
                ("form[role]", "SUPERVISOR"),
                ("form[mco_enabled]", "on"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(edited["role"], "SUPERVISOR");
    assert_eq!(edited["tags"], json!([]));
    assert_eq!(edited["mco_enabled"], true);
    let reset = json_of(server_fn(&app, "reset_user_password", &admin, &[("id", id.as_str())]).await).await;
    let new_password = reset["password"].as_str().unwrap();
    assert_ne!(new_password, password);
    let old = crate::dashboard::login(&app, "sam@alpha.example", &password).await;
    assert!(old.headers()[header::LOCATION].to_str().unwrap().contains("error="));

    // Supervisors cannot manage users; another tenant's admin cannot see them.
    let form = [("id", id.as_str()), ("form[email]", "x@alpha.example")];
    let by_id = ["get_user", "edit_user", "reset_user_password", "remove_user"];
    let all = ["list_users", "add_user", by_id[0], by_id[1], by_id[2], by_id[3]];
    assert_refused(&app, &all, &supervisor, &form, StatusCode::FORBIDDEN).await;
    assert_refused(&app, &by_id, &stranger, &form, StatusCode::NOT_FOUND).await;
    let theirs = json_of(server_fn(&app, "list_users", &stranger, &[("search", "sam")]).await).await;
    assert_eq!(theirs["users"], json!([]));

    // The last admin stays; others can go.
    let last = server_fn(&app, "remove_user", &admin, &[("id", admin_id.as_str())]).await;
    assert!(last.status().is_client_error(), "{}", last.status());
    let removed = server_fn(&app, "remove_user", &admin, &[("id", id.as_str())]).await;
    // The hydrated page is sent on to the list.
    assert_eq!(removed.status(), StatusCode::OK);
    assert_eq!(removed.headers()[header::LOCATION], "/settings/users");
    assert_eq!(
        server_fn(&app, "get_user", &admin, &[("id", id.as_str())])
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

async fn admins_edit_opening_hours_week_by_week(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;

    // Two intervals on Monday, one on Saturday; blank slots are ignored.
    let week = [
        ("form[name]", "Support desk"),
        ("form[timezone]", "Europe/Berlin"),
        ("form[intervals][0][day]", "MONDAY"),
        ("form[intervals][0][start]", "09:00"),
        ("form[intervals][0][end]", "12:30"),
        ("form[intervals][1][day]", "MONDAY"),
        ("form[intervals][1][start]", "13:30:00"),
        ("form[intervals][1][end]", "18:00"),
        ("form[intervals][2][day]", "TUESDAY"),
        ("form[intervals][2][start]", ""),
        ("form[intervals][2][end]", ""),
        ("form[intervals][7][day]", "SATURDAY"),
        ("form[intervals][7][start]", "10:00"),
        ("form[intervals][7][end]", "14:00"),
        ("form[holidays][0][name]", "Christmas"),
        ("form[holidays][0][from]", "2026-12-24"),
        ("form[holidays][0][to]", "2026-12-26"),
        ("form[holidays][1][from]", ""),
    ];
    let saved = json_of(server_fn(&app, "save_opening_hours_form", &admin, &week).await).await;
    let id = saved["id"].as_str().unwrap().to_string();
    let stored = app.get(&format!("/rest/v1/openinghours/{id}"), &key).await;
    let stored: Value = stored.json().await.unwrap();
    assert_eq!(stored["timezone"], "Europe/Berlin");
    assert_eq!(
        stored["conditions"],
        json!([
            {"type": "WEEKDAY", "weekday": "MONDAY", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 12, "minute": 30}},
            {"type": "WEEKDAY", "weekday": "MONDAY", "startHours": {"hour": 13, "minute": 30}, "endHours": {"hour": 18, "minute": 0}},
            {"type": "WEEKDAY", "weekday": "SATURDAY", "startHours": {"hour": 10, "minute": 0}, "endHours": {"hour": 14, "minute": 0}}
        ])
    );
    assert_eq!(
        stored["holidays"][0]["to"],
        json!({"year": 2026, "month": 12, "day": 26})
    );

    // A WORKDAYS condition written through the API shows on each of its days.
    let mut object = stored.clone();
    object["conditions"] = json!([{"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 8, "minute": 0}, "endHours": {"hour": 16, "minute": 0}}]);
    assert_eq!(
        app.post("/rest/v1/openinghours", &key, object).await.status(),
        StatusCode::OK
    );
    let form = json_of(server_fn(&app, "get_opening_hours", &admin, &[("id", id.as_str())]).await).await;
    let days: Vec<&str> = form["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["day"].as_str().unwrap())
        .collect();
    assert_eq!(days, ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"]);

    // Errors land on the editor's rows: an end before its start (from the
    // service), a half-filled row (from the form), and an unknown zone.
    let bad = server_fn(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[id]", id.as_str()),
            ("form[timezone]", "Mars/Olympus"),
            ("form[intervals][0][day]", "MONDAY"),
            ("form[intervals][0][start]", ""),
            ("form[intervals][0][end]", ""),
            ("form[intervals][1][day]", "MONDAY"),
            ("form[intervals][1][start]", "17:00"),
            ("form[intervals][1][end]", "09:00"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("intervals[1]") && text.contains("timezone"), "{text}");
    let half = server_fn(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[timezone]", "UTC"),
            ("form[intervals][0][day]", "FRIDAY"),
            ("form[intervals][0][start]", ""),
            ("form[intervals][1][day]", "FRIDAY"),
            ("form[intervals][1][start]", "09:00"),
        ],
    )
    .await;
    assert_eq!(half.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(half.text().await.unwrap().contains("intervals[1]"));
    let unchanged: Value = app
        .get(&format!("/rest/v1/openinghours/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(unchanged["timezone"], "Europe/Berlin", "a refused save changes nothing");

    let form = [
        ("id", id.as_str()),
        ("form[id]", id.as_str()),
        ("form[timezone]", "UTC"),
    ];
    let by_id = ["get_opening_hours", "delete_opening_hours_entry"];
    let all = ["list_opening_hours", "save_opening_hours_form", by_id[0], by_id[1]];
    assert_refused(&app, &all, &supervisor, &form, StatusCode::FORBIDDEN).await;
    assert_refused(&app, &by_id, &stranger, &[("id", id.as_str())], StatusCode::NOT_FOUND).await;
    let theirs = json_of(server_fn(&app, "list_opening_hours", &stranger, &[]).await).await;
    assert_eq!(theirs, json!([]));
    let deleted = server_fn(&app, "delete_opening_hours_entry", &admin, &[("id", id.as_str())]).await;
    assert_eq!(deleted.headers()[header::LOCATION], "/settings/opening-hours");
}

async fn workspace_settings_and_the_audit_log(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        beta,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    app.user(&alpha, "kim@alpha.example", Role::Agent, false).await;
    let agent = session(&app, "kim@alpha.example").await;

    let before = json_of(server_fn(&app, "get_workspace", &admin, &[]).await).await;
    let bad = server_fn(
        &app,
        "update_workspace",
        &admin,
        &[("name", " "), ("timezone", "Mars/Olympus")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains("field") && text.contains("name") && text.contains("timezone"),
        "{text}"
    );
    let updated = json_of(
        server_fn(
            &app,
            "update_workspace",
            &admin,
            &[("name", "Alpha Support"), ("timezone", "Asia/Kolkata")],
        )
        .await,
    )
    .await;
    assert_eq!(updated["name"], "Alpha Support");
    assert_eq!(updated["timezone"], "Asia/Kolkata");
    assert_eq!(app.services.get_tenant(&alpha).await.unwrap().timezone, "Asia/Kolkata");
    let rotated = json_of(server_fn(&app, "rotate_widget_key", &admin, &[]).await).await;
    assert_ne!(rotated["widget_key"], before["widget_key"]);
    let names = ["get_workspace", "update_workspace", "rotate_widget_key"];
    let form = [("name", "x"), ("timezone", "UTC")];
    assert_refused(&app, &names, &supervisor, &form, StatusCode::FORBIDDEN).await;

    // The log shows those writes with the admin's e-mail, filtered and paged;
    // supervisors read it, agents do not, and another workspace sees its own.
    let all = json_of(server_fn(&app, "read_audit_log", &supervisor, &[]).await).await;
    let actions: Vec<&str> = all["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.contains(&"tenant.update") && actions.contains(&"widget.rotate_key"),
        "{actions:?}"
    );
    let tenant_only = json_of(
        server_fn(
            &app,
            "read_audit_log",
            &supervisor,
            &[("query[action]", "tenant.*"), ("query[actor]", "admin@alpha.example")],
        )
        .await,
    )
    .await;
    let entries = tenant_only["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{tenant_only}");
    assert_eq!(entries[0]["actor_email"], "admin@alpha.example");
    assert_eq!(entries[0]["action"], "tenant.update");
    let future = json_of(server_fn(&app, "read_audit_log", &supervisor, &[("query[from]", "2999-01-01")]).await).await;
    assert_eq!(future["entries"], json!([]));
    let bad_date = server_fn(&app, "read_audit_log", &supervisor, &[("query[to]", "yesterday")]).await;
    assert_eq!(bad_date.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        server_fn(&app, "read_audit_log", &agent, &[]).await.status(),
        StatusCode::FORBIDDEN
    );
    let theirs = json_of(server_fn(&app, "read_audit_log", &stranger, &[("query[action]", "tenant.*")]).await).await;
    let theirs: Vec<&str> = theirs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource_id"].as_str().unwrap())
        .collect();
    assert_eq!(theirs, [beta.as_str()], "only its own workspace's entries");
}

backend_tests!(
    workspace_settings_and_the_audit_log,
    admins_edit_opening_hours_week_by_week,
    webhooks_are_edited_replayed_and_kept_per_tenant,
    agents_generate_links,
    admins_manage_users
);
