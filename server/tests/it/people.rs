//! Customers, users and teams over REST.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

async fn customers(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;

    let c = ok_json(
        app.post(
            "/rest/v1/customer",
            &t,
            json!({"email": "Eve@Example.com", "firstName": "Eve", "gender": "female", "externalId": "crm-1"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let id = c["id"].as_str().unwrap().to_string();
    assert_eq!(c["email"], "eve@example.com");
    assert_eq!(c["gender"], "female");

    let bad = app.post("/rest/v1/customer", &t, json!({"gender": "robot"})).await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["field"], "gender");
    assert_eq!(p["errors"][0]["code"], "invalid_enum");
    assert!(
        p["errors"][0]["message"].as_str().unwrap().contains("female"),
        "lists the allowed values: {p}"
    );

    let dup = app.post("/rest/v1/customer", &t, json!({"externalId": "crm-1"})).await;
    let p = expect_problem(dup, StatusCode::CONFLICT, "external_id_taken").await;
    assert_eq!(fields(&p), ["externalId"]);
    // The same external id in another tenant is fine.
    ok_json(
        app.post("/rest/v1/customer", &other, json!({"externalId": "crm-1"}))
            .await,
        StatusCode::CREATED,
    )
    .await;

    let found = ok_json(app.get("/rest/v1/customer?externalId=crm-1", &t).await, StatusCode::OK).await;
    assert_eq!(found["page"]["totalElements"], 1);
    assert_eq!(found["results"][0]["id"], id.as_str());

    // Override by id; unknown ids are 404.
    let over = ok_json(
        app.post(
            "/rest/v1/customer",
            &t,
            json!({"id": id, "firstName": "Evelyn", "externalId": "crm-1"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(over["firstName"], "Evelyn");
    assert!(over["email"].is_null(), "override replaces the whole object");
    expect_problem(
        app.post("/rest/v1/customer", &t, json!({"id": "nope"})).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // Assignment: a user (by e-mail), a team, never both.
    let user = ok_json(
        app.post(
            "/rest/v1/user",
            &t,
            json!({"email": "agent@alpha.test", "roleId": "AGENT"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let team = ok_json(
        app.post("/rest/v1/team", &t, json!({"name": "Support", "members": [user["id"]]}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let assigned = ok_json(
        app.post(
            &format!("/rest/v1/customer/{id}/assign"),
            &t,
            json!({"userId": "agent@alpha.test"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(assigned["assignedUser"], user["id"]);
    let to_team = ok_json(
        app.post(
            &format!("/rest/v1/customer/{id}/assign"),
            &t,
            json!({"teamId": team["id"]}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(to_team["assignedTeam"], team["id"]);
    assert!(to_team["assignedUser"].is_null());
    let both = app
        .post(
            &format!("/rest/v1/customer/{id}/assign"),
            &t,
            json!({"userId": user["id"], "teamId": team["id"]}),
        )
        .await;
    let p = expect_problem(both, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["code"], "mutually_exclusive");
    let stranger = app
        .post(
            &format!("/rest/v1/customer/{id}/assign"),
            &t,
            json!({"userId": "nobody@alpha.test"}),
        )
        .await;
    let p = expect_problem(stranger, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["code"], "unknown_reference");

    // Another tenant sees nothing.
    expect_problem(
        app.get(&format!("/rest/v1/customer/{id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let del = send(&app, Method::DELETE, &format!("/rest/v1/customer/{id}"), &other, None).await;
    expect_problem(del, StatusCode::NOT_FOUND, "not_found").await;

    let del = send(&app, Method::DELETE, &format!("/rest/v1/customer/{id}"), &t, None).await;
    assert_eq!(del.status(), StatusCode::NO_CONTENT);
    expect_problem(
        app.get(&format!("/rest/v1/customer/{id}"), &t).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

async fn users_and_teams(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;

    let missing = app.post("/rest/v1/user", &t, json!({"displayName": "No mail"})).await;
    assert_eq!(
        fields(&expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["email"]
    );
    let bad = app
        .post(
            "/rest/v1/user",
            &t,
            json!({"email": "x@alpha.test", "roleId": "BOSS", "tags": ["a", "b", "a"], "password": "short"}),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["roleId", "password", "tags[2]"]);
    assert!(p["errors"][0]["message"].as_str().unwrap().contains("SUPERVISOR"));
    let conflicting = app
        .post(
            "/rest/v1/user",
            &t,
            json!({"email": "x@alpha.test", "roleId": "AGENT", "admin": true}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(conflicting, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["admin"]
    );

    let admin = ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "Boss@Alpha.test", "admin": true, "password": "password-123", "tags": ["de", "billing"], "externalId": "hr-7", "mcoEnabled": true})).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(admin["roleId"], "ADMIN");
    assert_eq!(admin["admin"], true);
    assert_eq!(admin["email"], "boss@alpha.test");
    assert_eq!(admin["hasPassword"], true);
    assert!(
        admin.get("password").is_none() && admin.get("passwordHash").is_none(),
        "never returned: {admin}"
    );
    let admin_id = admin["id"].as_str().unwrap().to_string();

    let dup = app.post("/rest/v1/user", &t, json!({"email": "boss@alpha.test"})).await;
    assert_eq!(
        fields(&expect_problem(dup, StatusCode::CONFLICT, "email_taken").await),
        ["email"]
    );
    let dup_ext = app
        .post(
            "/rest/v1/user",
            &t,
            json!({"email": "b2@alpha.test", "externalId": "hr-7"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(dup_ext, StatusCode::CONFLICT, "external_id_taken").await),
        ["externalId"]
    );

    // An update without password keeps it (the user can still sign in).
    let updated = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/user/{admin_id}"),
            &t,
            Some(json!({"email": "boss@alpha.test", "roleId": "ADMIN", "displayName": "The Boss"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(updated["displayName"], "The Boss");
    assert_eq!(updated["tags"], json!([]), "PUT replaces the whole object");
    assert!(app
        .services
        .login(&rapport_core::auth::LoginInput {
            workspace: None,
            email: "boss@alpha.test".into(),
            password: "password-123".into()
        })
        .await
        .is_ok());

    // The last admin cannot be demoted or deleted.
    let demote = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/user/{admin_id}"),
        &t,
        Some(json!({"email": "boss@alpha.test", "roleId": "AGENT"})),
    )
    .await;
    expect_problem(demote, StatusCode::CONFLICT, "last_admin").await;
    expect_problem(
        send(&app, Method::DELETE, &format!("/rest/v1/user/{admin_id}"), &t, None).await,
        StatusCode::CONFLICT,
        "last_admin",
    )
    .await;

    let agent = ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "agent@alpha.test"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(agent["roleId"], "AGENT");
    let listed = ok_json(app.get("/rest/v1/user?search=agent", &t).await, StatusCode::OK).await;
    assert_eq!(listed["page"]["totalElements"], 1);

    // Teams: members must be users of this tenant.
    let outsider = ok_json(
        app.post("/rest/v1/user", &other, json!({"email": "out@beta.test"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let bad_team = app
        .post(
            "/rest/v1/team",
            &t,
            json!({"name": "Mixed", "members": [agent["id"], outsider["id"]], "tags": ["x", "x"]}),
        )
        .await;
    let p = expect_problem(bad_team, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["tags[1]", "members[1]"]);
    let team = ok_json(
        app.post(
            "/rest/v1/team",
            &t,
            json!({"name": "Support", "members": [agent["id"], admin_id], "tags": ["de"]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(team["members"], json!([agent["id"], admin_id]));
    let team_id = team["id"].as_str().unwrap().to_string();
    expect_problem(
        app.get(&format!("/rest/v1/team/{team_id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // Deleting a user removes them from their teams.
    let agent_id = agent["id"].as_str().unwrap();
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/user/{agent_id}"), &t, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
    let team = ok_json(app.get(&format!("/rest/v1/team/{team_id}"), &t).await, StatusCode::OK).await;
    assert_eq!(team["members"], json!([admin_id]));
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/team/{team_id}"), &t, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
}

/// The total of an unfiltered customer list is the tenant's kept count: it follows
/// creates and deletes, per tenant, and agrees with a filtered count.
async fn customer_list_totals_follow_creates_and_deletes(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let total = |token: String, query: &'static str| {
        let app = &app;
        async move {
            ok_json(
                app.get(&format!("/rest/v1/customer?pageSize=2{query}"), &token).await,
                StatusCode::OK,
            )
            .await["page"]["totalElements"]
                .as_i64()
                .unwrap()
        }
    };
    assert_eq!(total(t.clone(), "").await, 0);
    let mut ids = Vec::new();
    for n in 0..5 {
        let c = ok_json(
            app.post("/rest/v1/customer", &t, json!({"firstName": format!("Zed{n}")}))
                .await,
            StatusCode::CREATED,
        )
        .await;
        ids.push(c["id"].as_str().unwrap().to_string());
    }
    ok_json(
        app.post("/rest/v1/customer", &other, json!({})).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(total(t.clone(), "").await, 5);
    assert_eq!(total(t.clone(), "&search=zed").await, 5);
    assert_eq!(total(other.clone(), "").await, 1);
    // An override is no new customer; a delete is one fewer, and only here.
    ok_json(
        app.post("/rest/v1/customer", &t, json!({"id": ids[0], "firstName": "Zed"}))
            .await,
        StatusCode::OK,
    )
    .await;
    let gone = send(&app, Method::DELETE, &format!("/rest/v1/customer/{}", ids[1]), &t, None).await;
    assert!(gone.status().is_success(), "{}", gone.status());
    assert_eq!(total(t.clone(), "").await, 4);
    assert_eq!(total(t.clone(), "&search=zed").await, 4);
    // A page past the end has no row to carry the total: it is counted.
    assert_eq!(total(t.clone(), "&pageNumber=9").await, 4);
    assert_eq!(total(other.clone(), "").await, 1);
}

backend_tests!(
    customer_list_totals_follow_creates_and_deletes,
    customers,
    users_and_teams
);
