//! Admins manage users: a generated password shown once, field errors,
//! search, edit and reset, roles and tenant isolation, and the last admin
//! kept.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, StatusCode};
use serde_json::json;

use super::{assert_refused, json_of};
use crate::{
    dashboard::{server_fn, Cast},
    utils::TestApp,
};

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

backend_tests!(admins_manage_users,);
