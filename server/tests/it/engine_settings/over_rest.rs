//! The engine settings over the REST API: the workspace (with a tenant key and
//! a platform key), a user's `maxConcurrentChats`, and `/openinghours/{id}/state`.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::{codes, office_hours};
use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

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

backend_tests!(
    workspace_settings_over_rest,
    user_capacity_over_rest,
    opening_hours_state_over_rest
);
