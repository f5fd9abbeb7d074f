//! The settings the engines read, and opening hours that say whether they are
//! open: the workspace's language, default capacity and business hours (over
//! `/workspace` with a tenant key, `/tenant/{id}` with a platform key, and the
//! dashboard), a user's capacity (`maxConcurrentChats`), and
//! `/openinghours/{id}/state`.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, server_fn_ok, Cast},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

/// Berlin, workdays 09:00–18:00, Easter Monday 2026 off.
fn office_hours() -> Value {
    json!({
        "name": "Office",
        "timezone": "Europe/Berlin",
        "conditions": [{"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 18, "minute": 0}}],
        "holidays": [{"name": "Easter Monday", "from": {"year": 2026, "month": 4, "day": 6}}]
    })
}

/// The codes of a problem's errors, in order.
fn codes(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap().to_string())
        .collect()
}

async fn workspace_settings_over_rest(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let platform = app.platform_key().await;

    // Defaults: English, five at once, clocks around the clock.
    let ws = ok_json(app.get("/rest/v1/workspace", &t).await, StatusCode::OK).await;
    assert_eq!(ws["id"], alpha.as_str());
    assert_eq!(ws["language"], "en");
    assert_eq!(ws["maxChats"], 5);
    assert_eq!(ws["businessHoursId"], Value::Null);

    let hours = ok_json(
        app.post("/rest/v1/openinghours", &t, office_hours()).await,
        StatusCode::CREATED,
    )
    .await;
    let hours_id = hours["id"].as_str().unwrap().to_string();
    let theirs = ok_json(
        app.post("/rest/v1/openinghours", &other, office_hours()).await,
        StatusCode::CREATED,
    )
    .await;
    let theirs_id = theirs["id"].as_str().unwrap();

    // Every bad field at once, each at its field; nothing changes.
    let bad = send(
        &app,
        Method::PUT,
        "/rest/v1/workspace",
        &t,
        Some(json!({"language": "not a tag!", "maxChats": 0, "businessHoursId": theirs_id})),
    )
    .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["language", "maxChats", "businessHoursId"]);
    assert_eq!(codes(&p), ["invalid_language", "out_of_range", "unknown_reference"]);
    let over = send(
        &app,
        Method::PUT,
        "/rest/v1/workspace",
        &t,
        Some(json!({"maxChats": 101})),
    )
    .await;
    let p = expect_problem(over, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["maxChats"]);
    let wrong_type = send(
        &app,
        Method::PUT,
        "/rest/v1/workspace",
        &t,
        Some(json!({"maxChats": "five"})),
    )
    .await;
    let p = expect_problem(wrong_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["maxChats"]);
    assert_eq!(codes(&p), ["invalid_type"]);
    let unchanged = ok_json(app.get("/rest/v1/workspace", &t).await, StatusCode::OK).await;
    assert_eq!(unchanged, ws, "a refused write changes nothing");

    // A good write; the tag is normalised; omitted fields keep their value.
    let set = ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &t,
            Some(json!({"language": "de-ch", "maxChats": 3, "businessHoursId": hours_id})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(set["language"], "de-CH");
    assert_eq!(set["maxChats"], 3);
    assert_eq!(set["businessHoursId"], hours_id);
    assert_eq!(set["name"], "Alpha");
    let renamed = ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &t,
            Some(json!({"name": "Alpha Support"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(renamed["businessHoursId"], hours_id, "omitted keeps");
    assert_eq!(renamed["maxChats"], 3);

    // The engines read the same.
    let settings = app.services.engine_settings(&alpha).await.unwrap();
    assert_eq!(
        (
            settings.language.as_str(),
            settings.max_chats,
            settings.business_hours_id.as_deref()
        ),
        ("de-CH", 3, Some(hours_id.as_str()))
    );
    assert_eq!(settings.timezone, "UTC");

    // Business hours in use cannot be deleted; once cleared (null) they can.
    let refused = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/openinghours/{hours_id}"),
        &t,
        None,
    )
    .await;
    let p = expect_problem(refused, StatusCode::CONFLICT, "in_use").await;
    assert!(p["detail"].as_str().unwrap().contains("business hours"), "{p}");

    // With a platform key, the tenant object carries the same settings.
    let tenant = ok_json(
        app.get(&format!("/rest/v1/tenant/{alpha}"), &platform).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(tenant["businessHoursId"], hours_id);
    let bad = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/tenant/{alpha}"),
        &platform,
        Some(json!({"maxChats": -1, "language": ""})),
    )
    .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["language", "maxChats"]);
    let cleared = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/tenant/{alpha}"),
            &platform,
            Some(json!({"businessHoursId": null, "maxChats": 100})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(cleared["businessHoursId"], Value::Null);
    assert_eq!(cleared["maxChats"], 100);
    assert_eq!(cleared["language"], "de-CH");
    let deleted = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/openinghours/{hours_id}"),
        &t,
        None,
    )
    .await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);

    // Each write is audited.
    let log = ok_json(app.get("/rest/v1/audit?action=tenant.update", &t).await, StatusCode::OK).await;
    assert!(log["page"]["totalElements"].as_i64().unwrap() >= 3, "{log}");
    // Another tenant's key sees its own workspace.
    let beta = ok_json(app.get("/rest/v1/workspace", &other).await, StatusCode::OK).await;
    assert_eq!(beta["name"], "Beta");
    assert_eq!(beta["maxChats"], 5);
}

async fn user_capacity_over_rest(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;

    for (value, code) in [
        (json!(0), "out_of_range"),
        (json!(101), "out_of_range"),
        (json!("3"), "invalid_type"),
    ] {
        let bad = app
            .post(
                "/rest/v1/user",
                &t,
                json!({"email": "sam@example.com", "maxConcurrentChats": value}),
            )
            .await;
        let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert_eq!(fields(&p), ["maxConcurrentChats"], "{value}");
        assert_eq!(codes(&p), [code], "{value}");
    }
    let user = ok_json(
        app.post(
            "/rest/v1/user",
            &t,
            json!({"email": "sam@example.com", "maxConcurrentChats": 2}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(user["maxConcurrentChats"], 2);
    let id = user["id"].as_str().unwrap().to_string();
    let read = ok_json(app.get(&format!("/rest/v1/user/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(read["maxConcurrentChats"], 2);
    let listed = ok_json(app.get("/rest/v1/user?search=sam", &t).await, StatusCode::OK).await;
    assert_eq!(listed["results"][0]["maxConcurrentChats"], 2);

    // PUT replaces: without the field the user goes back to the tenant default.
    let put = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/user/{id}"),
            &t,
            Some(json!({"email": "sam@example.com", "maxConcurrentChats": 100})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(put["maxConcurrentChats"], 100);
    let put = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/user/{id}"),
            &t,
            Some(json!({"email": "sam@example.com"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(put["maxConcurrentChats"], Value::Null);
    let bad = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/user/{id}"),
        &t,
        Some(json!({"email": "sam@example.com", "maxConcurrentChats": -5})),
    )
    .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["maxConcurrentChats"]);
}

async fn opening_hours_state_over_rest(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let hours = ok_json(
        app.post("/rest/v1/openinghours", &t, office_hours()).await,
        StatusCode::CREATED,
    )
    .await;
    let id = hours["id"].as_str().unwrap().to_string();
    let state = |at: &str| format!("/rest/v1/openinghours/{id}/state?at={at}");

    // Friday 27 March 2026, 17:55 CET: open until 18:00; then closed over the
    // weekend (and the DST change) until Monday 09:00 CEST.
    for (at, open, next) in [
        ("2026-03-27T16:55:00Z", true, json!("2026-03-27T17:00:00Z")),
        ("2026-03-27T17:00:00Z", false, json!("2026-03-30T07:00:00Z")),
        // The same instant with an offset, its `+` sent unencoded or encoded.
        ("2026-03-27T18:00:00+01:00", false, json!("2026-03-30T07:00:00Z")),
        ("2026-03-27T18:00:00%2B01:00", false, json!("2026-03-30T07:00:00Z")),
        // Friday before Easter Monday: Tuesday 09:00 CEST.
        ("2026-04-03T18:00:00Z", false, json!("2026-04-07T07:00:00Z")),
    ] {
        let body = ok_json(app.get(&state(at), &t).await, StatusCode::OK).await;
        assert_eq!(body, json!({"open": open, "nextChangeAt": next}), "at {at}");
    }
    let now = ok_json(
        app.get(&format!("/rest/v1/openinghours/{id}/state"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert!(now["open"].is_boolean() && now["nextChangeAt"].is_string(), "{now}");

    // Hours that never open: closed, with no change to come.
    let never = ok_json(
        app.post(
            "/rest/v1/openinghours",
            &t,
            json!({"name": "Closed", "timezone": "Europe/Berlin"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let never = ok_json(
        app.get(
            &format!("/rest/v1/openinghours/{}/state", never["id"].as_str().unwrap()),
            &t,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(never, json!({"open": false, "nextChangeAt": null}));

    let bad = app.get(&state("yesterday"), &t).await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["at"]);
    expect_problem(
        app.get(&state("2026-03-27T16:55:00Z"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_problem(
        app.get("/rest/v1/openinghours/no-such-id/state", &t).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

async fn engine_settings_in_the_dashboard(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let hours = ok_json(
        app.post("/rest/v1/openinghours", &key, office_hours()).await,
        StatusCode::CREATED,
    )
    .await;
    let hours_id = hours["id"].as_str().unwrap().to_string();

    // The workspace page offers the tenant's opening hours.
    let ws = server_fn_ok(&app, "get_workspace", &admin, &[]).await;
    assert_eq!(ws["language"], "en");
    assert_eq!(ws["max_chats"], 5);
    assert_eq!(ws["opening_hours"], json!([[hours_id, "Office"]]));

    // Field problems name the API's fields.
    let bad = server_fn(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "??"), ("max_chats", "0"), ("business_hours_id", "nope")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    for field in ["language", "maxChats", "businessHoursId"] {
        assert!(text.contains(field), "{field}: {text}");
    }
    let not_a_number = server_fn(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "en"), ("max_chats", "lots"), ("business_hours_id", "")],
    )
    .await;
    assert_eq!(not_a_number.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(not_a_number.text().await.unwrap().contains("maxChats"));

    let saved = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", hours_id.as_str()),
        ],
    )
    .await;
    assert_eq!(saved["language"], "fr");
    assert_eq!(saved["max_chats"], 7);
    assert_eq!(saved["business_hours_id"], hours_id);
    let settings = app.services.engine_settings(&alpha).await.unwrap();
    assert_eq!(settings.business_hours_id.as_deref(), Some(hours_id.as_str()));
    // An empty choice means around the clock.
    let cleared = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "fr"), ("max_chats", "7"), ("business_hours_id", "")],
    )
    .await;
    assert_eq!(cleared["business_hours_id"], Value::Null);
    // The rating question is a checkbox: unchecked (absent) turns it off.
    assert_eq!(ws["csat_enabled"], true, "asked by default");
    assert_eq!(cleared["csat_enabled"], false);
    assert!(!app.services.get_tenant(&alpha).await.unwrap().csat_enabled);
    let asked = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", ""),
            ("csat", "on"),
        ],
    )
    .await;
    assert_eq!(asked["csat_enabled"], true);
    // So are drafts shown to agents (on by default) and transcripts on close
    // (off by default).
    assert_eq!(
        (&ws["typing_preview"], &ws["transcript_on_close"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(asked["typing_preview"], false, "unchecked");
    let both = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", ""),
            ("csat", "on"),
            ("typing_preview", "on"),
            ("transcript", "on"),
        ],
    )
    .await;
    assert_eq!(
        (&both["typing_preview"], &both["transcript_on_close"]),
        (&json!(true), &json!(true))
    );
    let stored = app.services.get_tenant(&alpha).await.unwrap();
    assert!(stored.typing_preview && stored.transcript_on_close);
    let form = [("language", "en"), ("max_chats", "5"), ("business_hours_id", "")];
    assert_eq!(
        server_fn(&app, "update_engine_settings", &supervisor, &form)
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    // Another workspace's admin changes their own workspace only.
    server_fn_ok(&app, "update_engine_settings", &stranger, &form).await;
    assert_eq!(app.services.engine_settings(&alpha).await.unwrap().language, "fr");

    // A user's capacity: empty is the workspace default.
    let added = server_fn_ok(
        &app,
        "add_user",
        &admin,
        &[
            ("form[email]", "kim@alpha.example"),
            ("form[role]", "AGENT"),
            ("form[max_concurrent_chats]", "2"),
        ],
    )
    .await;
    assert_eq!(added["user"]["max_concurrent_chats"], 2);
    let id = added["user"]["id"].as_str().unwrap().to_string();
    let bad = server_fn(
        &app,
        "edit_user",
        &admin,
        &[
            ("id", id.as_str()),
            ("form[email]", "kim@alpha.example"),
            ("form[max_concurrent_chats]", "500"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("maxConcurrentChats"));
    let edited = server_fn_ok(
        &app,
        "edit_user",
        &admin,
        &[
            ("id", id.as_str()),
            ("form[email]", "kim@alpha.example"),
            ("form[max_concurrent_chats]", ""),
        ],
    )
    .await;
    assert_eq!(edited["max_concurrent_chats"], Value::Null);

    // The opening hours pages say whether they are open now, in their zone.
    let states = server_fn_ok(&app, "opening_hours_now", &admin, &[]).await;
    let state = &states[0];
    assert_eq!(state["id"], hours_id);
    let text = state["text"].as_str().unwrap();
    let expected = if state["open"].as_bool().unwrap() {
        "Open now — closes at "
    } else {
        "Closed — opens at "
    };
    assert!(
        text.starts_with(expected) && text.ends_with("(Europe/Berlin)"),
        "{text}"
    );
    let one = server_fn_ok(&app, "opening_hours_now", &admin, &[("id", hours_id.as_str())]).await;
    assert_eq!(one, states);
    assert_eq!(
        server_fn_ok(&app, "opening_hours_now", &admin, &[("id", "new")]).await,
        json!([])
    );
    assert_eq!(
        server_fn(&app, "opening_hours_now", &stranger, &[("id", hours_id.as_str())])
            .await
            .status(),
        StatusCode::NOT_FOUND
    );

    // A yearly holiday survives a save from the editor.
    let saved = server_fn_ok(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[id]", hours_id.as_str()),
            ("form[timezone]", "Europe/Berlin"),
            ("form[holidays][0][name]", "Christmas"),
            ("form[holidays][0][from]", "2026-12-24"),
            ("form[holidays][0][to]", "2026-12-26"),
            ("form[holidays][0][every_year]", "on"),
            ("form[holidays][1][name]", "Bridge day"),
            ("form[holidays][1][from]", "2026-10-02"),
        ],
    )
    .await;
    assert_eq!(saved["holidays"][0]["every_year"], "on");
    assert_eq!(saved["holidays"][1]["every_year"], Value::Null);
    let stored = ok_json(
        app.get(&format!("/rest/v1/openinghours/{hours_id}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stored["holidays"][0]["fixedDate"], true);
    assert_eq!(stored["holidays"][1]["fixedDate"], Value::Null);
}

backend_tests!(
    workspace_settings_over_rest,
    user_capacity_over_rest,
    opening_hours_state_over_rest,
    engine_settings_in_the_dashboard
);
