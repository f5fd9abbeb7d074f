//! Settings → Teams, System messages and Watchdogs over HTTP: add (teams with
//! picked members, watchdogs with receiver rows), search or filter, edit
//! (including "no box ticked" and "no row filled"), field problems, delete, roles
//! and tenant isolation.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, server_fn_ok, session, Cast},
    utils::TestApp,
};

async fn admins_manage_teams(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        stranger_id: outsider,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let ada = app.user(&alpha, "ada@alpha.example", Role::Agent, false).await;
    let bob = app.user(&alpha, "bob@alpha.example", Role::Agent, false).await;

    // The picker offers the tenant's users only.
    let candidates = server_fn_ok(&app, "team_candidates", &admin, &[]).await;
    let ids: Vec<&str> = candidates
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[0].as_str().unwrap())
        .collect();
    assert!(ids.contains(&ada.as_str()) && ids.contains(&bob.as_str()));
    assert!(!ids.contains(&outsider.as_str()));

    // A blank name and another tenant's user are refused at their fields.
    let bad = server_fn(
        &app,
        "add_team",
        &admin,
        &[("name", " "), ("tags", ""), ("members[]", outsider.as_str())],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("members[0]") && text.contains("name"), "{text}");

    let team = server_fn_ok(
        &app,
        "add_team",
        &admin,
        &[
            ("name", "Billing"),
            ("tags", "billing, de"),
            ("members[]", ada.as_str()),
            ("members[]", bob.as_str()),
        ],
    )
    .await;
    let id = team["id"].as_str().unwrap().to_string();
    assert_eq!(team["members"], json!([ada, bob]));
    assert_eq!(team["tags"], json!(["billing", "de"]));
    server_fn_ok(&app, "add_team", &admin, &[("name", "Sales"), ("tags", "")]).await;

    let found = server_fn_ok(&app, "list_teams", &admin, &[("search", "bill")]).await;
    assert_eq!(found["teams"].as_array().unwrap().len(), 1);
    assert_eq!(found["teams"][0]["name"], "Billing");
    let all = server_fn_ok(&app, "list_teams", &admin, &[]).await;
    assert_eq!(all["page"]["totalElements"], 2);

    // No box ticked: the team keeps no members.
    let edited = server_fn_ok(
        &app,
        "edit_team",
        &admin,
        &[("id", id.as_str()), ("name", "Billing EU"), ("tags", "")],
    )
    .await;
    assert_eq!(edited["members"], json!([]));
    assert_eq!(
        server_fn_ok(&app, "get_team", &admin, &[("id", id.as_str())]).await["name"],
        "Billing EU"
    );

    // Supervisors cannot change teams; another tenant's admin cannot see them.
    for name in ["list_teams", "add_team", "edit_team", "remove_team", "team_candidates"] {
        let form = [("id", id.as_str()), ("name", "X"), ("tags", "")];
        let refused = server_fn(&app, name, &supervisor, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    for name in ["get_team", "edit_team", "remove_team"] {
        let form = [("id", id.as_str()), ("name", "X"), ("tags", "")];
        let refused = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{name}");
    }

    server_fn_ok(&app, "remove_team", &admin, &[("id", id.as_str())]).await;
    let gone = server_fn(&app, "get_team", &admin, &[("id", id.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(admins_manage_teams);

async fn admins_write_system_messages_per_language(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        stranger,
        ..
    } = Cast::new(&app).await;
    app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let agent = session(&app, "agent@alpha.example").await;

    let bad = server_fn(
        &app,
        "add_system_message",
        &admin,
        &[("language", "not a tag"), ("message", "")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("language") && text.contains("message"), "{text}");

    let de = server_fn_ok(
        &app,
        "add_system_message",
        &admin,
        &[("language", "de-ch"), ("message", "Alle sind beschäftigt.")],
    )
    .await;
    assert_eq!(de["language"], "de-CH", "the tag is normalised");
    server_fn_ok(
        &app,
        "add_system_message",
        &admin,
        &[("language", "en"), ("message", "All busy.")],
    )
    .await;
    let id = de["id"].as_str().unwrap().to_string();

    let german = server_fn_ok(&app, "list_system_messages", &admin, &[("language", "DE-CH")]).await;
    assert_eq!(german.as_array().unwrap().len(), 1);
    let all = server_fn_ok(&app, "list_system_messages", &admin, &[]).await;
    assert_eq!(all[0]["language"], "de-CH", "sorted by language");
    // The same object the REST API serves.
    let rest = app.get(&format!("/rest/v1/systemmessage/{id}"), &key).await;
    assert_eq!(rest.status(), StatusCode::OK);

    let edited = server_fn_ok(
        &app,
        "edit_system_message",
        &admin,
        &[("id", id.as_str()), ("language", "de"), ("message", "Bitte warten.")],
    )
    .await;
    assert_eq!(edited["message"], "Bitte warten.");

    for name in [
        "list_system_messages",
        "add_system_message",
        "edit_system_message",
        "remove_system_message",
    ] {
        let form = [("id", id.as_str()), ("language", "en"), ("message", "x")];
        let refused = server_fn(&app, name, &agent, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    for name in ["get_system_message", "edit_system_message", "remove_system_message"] {
        let form = [("id", id.as_str()), ("language", "en"), ("message", "x")];
        let refused = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{name}");
    }
    server_fn_ok(&app, "remove_system_message", &admin, &[("id", id.as_str())]).await;
    let gone = server_fn(&app, "get_system_message", &admin, &[("id", id.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(admins_write_system_messages_per_language);

async fn admins_manage_watchdogs_and_their_receivers(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        stranger_id: outsider,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let ada = app.user(&alpha, "ada@alpha.example", Role::Agent, false).await;

    // Problems name the row the admin typed in, even with an empty row before it:
    // row 2 holds another tenant's user, row 3 a malformed address.
    let bad = server_fn(
        &app,
        "add_watchdog",
        &admin,
        &[
            ("name", "Errors"),
            ("watchdog_type", ""),
            ("receiver_type[]", "EMAIL"),
            ("receiver_value[]", "ops@alpha.example"),
            ("receiver_type[]", "EMAIL"),
            ("receiver_value[]", ""),
            ("receiver_type[]", "USER"),
            ("receiver_value[]", outsider.as_str()),
            ("receiver_type[]", "EMAIL"),
            ("receiver_value[]", "not-an-address"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains("watchdogType") && text.contains("receivers[2].value") && text.contains("receivers[3].value"),
        "{text}"
    );
    assert!(!text.contains("receivers[1]"), "the empty row is skipped: {text}");

    let made = server_fn_ok(
        &app,
        "add_watchdog",
        &admin,
        &[
            ("name", "Script errors"),
            ("watchdog_type", "JAVASCRIPT_ERROR"),
            ("receiver_type[]", "USER"),
            ("receiver_value[]", ada.as_str()),
            ("receiver_type[]", "EMAIL"),
            ("receiver_value[]", ""),
            ("receiver_type[]", "WEBHOOK"),
            ("receiver_value[]", "https://hooks.alpha.example/alerts"),
        ],
    )
    .await;
    assert_eq!(made["watchdog_type"], "JAVASCRIPT_ERROR");
    assert_eq!(made["receivers"].as_array().unwrap().len(), 2);
    let id = made["id"].as_str().unwrap().to_string();

    // The same object the REST API serves.
    let rest: Value = app
        .get(&format!("/rest/v1/watchdog/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        rest["receivers"],
        json!([
            {"type": "USER", "value": ada},
            {"type": "WEBHOOK", "value": "https://hooks.alpha.example/alerts"}
        ])
    );

    // No row filled: no receivers.
    let edited = server_fn_ok(
        &app,
        "edit_watchdog",
        &admin,
        &[
            ("id", id.as_str()),
            ("name", "Quiet"),
            ("watchdog_type", "SETTING_CHANGED"),
        ],
    )
    .await;
    assert_eq!(edited["receivers"], json!([]));
    let list = server_fn_ok(&app, "list_watchdogs", &admin, &[]).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["name"], "Quiet");

    let form = [("id", id.as_str()), ("name", "x"), ("watchdog_type", "FORM_SUBMISSION")];
    for name in [
        "list_watchdogs",
        "get_watchdog",
        "add_watchdog",
        "edit_watchdog",
        "remove_watchdog",
    ] {
        let refused = server_fn(&app, name, &supervisor, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    for name in ["get_watchdog", "edit_watchdog", "remove_watchdog"] {
        let refused = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{name}");
    }
    let theirs = server_fn_ok(&app, "list_watchdogs", &stranger, &[]).await;
    assert_eq!(theirs, json!([]));

    server_fn_ok(&app, "remove_watchdog", &admin, &[("id", id.as_str())]).await;
    let gone = server_fn(&app, "get_watchdog", &admin, &[("id", id.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(admins_manage_watchdogs_and_their_receivers);

async fn platform_admins_edit_and_delete_tenants(db: TestDb) {
    let app = TestApp::start(db).await;
    let (home, _) = app.tenant_with_key("Home").await;
    let (other, _) = app.tenant_with_key("Other").await;
    app.user(&home, "root@home.example", Role::Admin, true).await;
    app.user(&other, "admin@other.example", Role::Admin, false).await;
    let root = session(&app, "root@home.example").await;
    let admin = session(&app, "admin@other.example").await;

    let bad = server_fn(
        &app,
        "edit_tenant",
        &root,
        &[
            ("id", other.as_str()),
            ("name", " "),
            ("slug", "Bad Slug"),
            ("timezone", "Mars/Olympus"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("slug") && text.contains("timezone"), "{text}");
    let edited = server_fn_ok(
        &app,
        "edit_tenant",
        &root,
        &[
            ("id", other.as_str()),
            ("name", "Renamed"),
            ("slug", "renamed"),
            ("timezone", "Asia/Tokyo"),
        ],
    )
    .await;
    assert_eq!(edited["timezone"], "Asia/Tokyo");
    let fetched = server_fn_ok(&app, "get_tenant", &root, &[("id", other.as_str())]).await;
    assert_eq!(fetched["slug"], "renamed");

    // A tenant admin is no platform admin, not even for their own tenant.
    for name in ["get_tenant", "edit_tenant", "delete_tenant"] {
        let form = [
            ("id", other.as_str()),
            ("name", "Mine"),
            ("slug", "mine"),
            ("timezone", "UTC"),
        ];
        let refused = server_fn(&app, name, &admin, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    // The installation's last platform admin cannot delete their own tenant.
    let locked = server_fn(&app, "delete_tenant", &root, &[("id", home.as_str())]).await;
    assert_eq!(locked.status(), StatusCode::CONFLICT);

    server_fn_ok(&app, "delete_tenant", &root, &[("id", other.as_str())]).await;
    let gone = server_fn(&app, "get_tenant", &root, &[("id", other.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(platform_admins_edit_and_delete_tenants);
