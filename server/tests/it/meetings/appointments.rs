//! Appointments over the REST API: validation, PUT and PATCH, the public join
//! page, listing by date, and tenant isolation.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, TestApp};

async fn appointments(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let owner = ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "host@alpha.test"})).await,
        StatusCode::CREATED,
    )
    .await;
    let customer = ok_json(
        app.post("/rest/v1/customer", &t, json!({"firstName": "Cleo"})).await,
        StatusCode::CREATED,
    )
    .await;

    let bad = app
        .post(
            "/rest/v1/appointment",
            &t,
            json!({"durationInMinutes": 0, "timezoneId": "Nowhere", "attendees": ["a@x.test", "A@x.test", "nope"],
                   "validAfter": 2, "password": "abc", "owner": "ghost@alpha.test", "customerId": "missing"}),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&p),
        [
            "title",
            "durationInMinutes",
            "date",
            "timezoneId",
            "password",
            "attendees[1]",
            "attendees[2]",
            "validAfter",
            "owner",
            "customerId"
        ]
    );
    let bad_enum = app
        .post(
            "/rest/v1/appointment",
            &t,
            json!({"title": "x", "validType": "FOREVER"}),
        )
        .await;
    let p = expect_problem(bad_enum, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert!(p["errors"][0]["message"].as_str().unwrap().contains("APPOINTMENT"));

    let created = ok_json(
        app.post(
            "/rest/v1/appointment",
            &t,
            json!({"title": "Kick-off", "description": "Agenda", "date": "2030-05-04T09:00:00Z", "durationInMinutes": 45,
                   "timezoneId": "Europe/Berlin", "owner": "host@alpha.test", "password": "s3cret!", "attendees": ["Ann@x.test", "bob@x.test"],
                   "customerId": customer["id"], "validType": "HOURS", "validBefore": 1, "validAfter": 2,
                   "customProperties": {"crmId": "42", "priority": 1}, "permissions": {"enableWaitingRoom": true}}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["owner"], owner["id"]);
    assert_eq!(created["valid"], true, "valid defaults to true");
    assert_eq!(created["hasPassword"], true);
    assert!(created.get("password").is_none());
    assert_eq!(created["attendees"], json!(["ann@x.test", "bob@x.test"]));
    assert_eq!(created["permissions"]["enableWaitingRoom"], true);
    assert_eq!(created["validFrom"], "2030-05-04T08:00:00Z");
    assert_eq!(created["validUntil"], "2030-05-04T11:45:00Z");
    let join_link = created["joinLink"].as_str().unwrap().to_string();
    assert!(join_link.starts_with("http://rapport.test/join/"), "{join_link}");
    let (tenant_of_link, _) = app
        .services
        .appointment_by_join_token(join_link.rsplit('/').next().unwrap())
        .await
        .unwrap();
    assert!(!tenant_of_link.is_empty(), "the link's token finds its appointment");

    // PUT replaces the whole appointment: title required, password kept, link kept.
    let no_title = app
        .request(Method::PUT, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .json(&json!({"date": "2030-05-04T09:00:00Z"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        fields(&expect_problem(no_title, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["title"]
    );
    let replaced = ok_json(
        app.request(Method::PUT, &format!("/rest/v1/appointment/{id}"))
            .bearer_auth(&t)
            .json(&json!({"title": "Kick-off v2", "date": "2030-05-05T09:00:00Z"}))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(replaced["title"], "Kick-off v2");
    assert_eq!(replaced["durationInMinutes"], 30);
    assert_eq!(replaced["validType"], "APPOINTMENT");
    assert_eq!(replaced["hasPassword"], true, "an omitted password is kept");
    assert_eq!(replaced["joinLink"], join_link.as_str());
    assert_eq!(replaced["timezoneId"], "UTC", "the tenant's time zone by default");

    // PATCH changes only `record`.
    let patched = ok_json(
        app.request(Method::PATCH, &format!("/rest/v1/appointment/{id}"))
            .bearer_auth(&t)
            .json(&json!({"record": true}))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(patched["record"], true);
    assert_eq!(patched["title"], "Kick-off v2");
    let bad_patch = app
        .request(Method::PATCH, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .json(&json!({"record": "yes"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        fields(&expect_problem(bad_patch, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["record"]
    );

    // The join link opens a public page.
    let page = app
        .request(Method::GET, join_link.trim_start_matches("http://rapport.test"))
        .header(header::ACCEPT, "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("Kick-off v2") && html.contains("not opened yet"),
        "{html}"
    );

    let listed = ok_json(
        app.get("/rest/v1/appointment?from=2030-05-05T00:00:00Z", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(listed["page"]["totalElements"], 1);
    let none = ok_json(
        app.get("/rest/v1/appointment?to=2030-01-01T00:00:00Z", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(none["page"]["totalElements"], 0);

    expect_problem(
        app.get(&format!("/rest/v1/appointment/{id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let foreign_patch = app
        .request(Method::PATCH, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&other)
        .json(&json!({"record": false}))
        .send()
        .await
        .unwrap();
    expect_problem(foreign_patch, StatusCode::NOT_FOUND, "not_found").await;
    let deleted = app
        .request(Method::DELETE, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
}

backend_tests!(appointments);
