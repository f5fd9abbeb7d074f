//! Who gets in: sign-in and sign-out with their cookies, role checks on pages
//! and server functions, and cross-site posts refused.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};

use super::{login, page, server_fn, session};
use crate::utils::TestApp;

async fn sign_in_and_out(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;

    let wrong = login(&app, "ada@example.com", "wrong-password").await;
    assert_eq!(wrong.status(), StatusCode::SEE_OTHER);
    let location = wrong.headers()[header::LOCATION].to_str().unwrap();
    assert!(location.starts_with("/login?error=invalid"), "{location}");
    assert!(!location.contains("wrong-password"));

    let ok = login(&app, "ada@example.com", "password-123").await;
    assert_eq!(ok.status(), StatusCode::SEE_OTHER);
    assert_eq!(ok.headers()[header::LOCATION], "/");
    let set_cookie = ok.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    for attribute in ["rapport_session=", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    let cookie = set_cookie.split(';').next().unwrap().to_string();

    let home = page(&app, "/", &cookie).await;
    assert_eq!(home.status(), StatusCode::OK);
    let html = home.text().await.unwrap();
    assert!(html.contains("Welcome, ada@example.com"), "{html}");
    assert!(html.contains("/pkg/rapport.js"), "hydration script is linked");

    // A second sign-in from the same browser rotates the session.
    let again = app
        .request(Method::POST, "/auth/login")
        .header(header::COOKIE, &cookie)
        .form(&[("email", "ada@example.com"), ("password", "password-123")])
        .send()
        .await
        .unwrap();
    let rotated = again.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert_ne!(rotated, cookie);
    let stale = page(&app, "/", &cookie).await;
    assert!(stale.status().is_redirection(), "the old session is gone");

    let out = app
        .request(Method::POST, "/auth/logout")
        .header(header::COOKIE, &rotated)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(out.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let after = page(&app, "/settings/api-keys", &rotated).await;
    assert!(after.status().is_redirection());
    assert!(after.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .starts_with("/login"));
}

async fn roles_are_checked_on_pages_and_server_functions(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@example.com", Role::Admin, false).await;
    app.user(&tenant, "super@example.com", Role::Supervisor, false).await;
    app.user(&tenant, "agent@example.com", Role::Agent, false).await;
    let admin = session(&app, "admin@example.com").await;
    let supervisor = session(&app, "super@example.com").await;
    let agent = session(&app, "agent@example.com").await;

    assert_eq!(page(&app, "/settings/api-keys", &admin).await.status(), StatusCode::OK);
    for cookie in [&supervisor, &agent] {
        assert_eq!(
            page(&app, "/settings/api-keys", cookie).await.status(),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            page(&app, "/platform/tenants", cookie).await.status(),
            StatusCode::FORBIDDEN
        );
        let call = server_fn(&app, "list_keys", cookie, &[("kind", "tenant")]).await;
        assert_eq!(call.status(), StatusCode::FORBIDDEN);
        let create = server_fn(&app, "create_key", cookie, &[("kind", "tenant"), ("name", "sneaky")]).await;
        assert_eq!(create.status(), StatusCode::FORBIDDEN);
    }
    // Admins are not platform admins.
    assert_eq!(
        page(&app, "/platform/tenants", &admin).await.status(),
        StatusCode::FORBIDDEN
    );
    let tenants = server_fn(&app, "list_tenants", &admin, &[]).await;
    assert_eq!(tenants.status(), StatusCode::FORBIDDEN);
    // Signed out: 401.
    assert_eq!(
        server_fn(&app, "list_keys", "rapport_session=nope", &[("kind", "tenant")])
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    // Nothing was created by the refused calls.
    assert_eq!(
        app.services
            .list_api_keys(&tenant, &Default::default())
            .await
            .unwrap()
            .page
            .total_elements,
        1
    );

    let created = server_fn(
        &app,
        "create_key",
        &admin,
        &[("kind", "tenant"), ("name", "from the dashboard")],
    )
    .await;
    assert_eq!(created.status(), StatusCode::OK);
    let body: serde_json::Value = created.json().await.unwrap();
    assert!(body["token"].as_str().unwrap().starts_with("rpt_"));

    // Dashboard writes and sign-ins land in the audit log with the user as actor.
    let log = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap()
        .results;
    let created = log
        .iter()
        .find(|e| e.action == "apikey.create")
        .expect("the key creation is audited");
    assert_eq!(created.actor_type, rapport_core::audit::ActorKind::User);
    assert_eq!(created.ip.as_deref(), Some("127.0.0.1"));
    assert!(created.request_id.is_some());
    assert_eq!(
        log.iter().filter(|e| e.action == "session.login").count(),
        3,
        "three sign-ins"
    );
}

async fn cross_site_posts_are_refused(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;
    let cookie = session(&app, "ada@example.com").await;
    let forged = app
        .request(Method::POST, "/api/create_key")
        .header(header::COOKIE, &cookie)
        .header(header::ORIGIN, "https://evil.example")
        .form(&[("kind", "tenant"), ("name", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    // A client that sends neither `Origin` nor `Sec-Fetch-Site` (the test
    // client sends the public URL's `Origin` unless told otherwise).
    let bare = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let forged_logout = bare
        .post(format!("{}/auth/logout", app.base))
        .header(header::COOKIE, &cookie)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(forged_logout.status(), StatusCode::FORBIDDEN);
    let no_headers = bare
        .post(format!("{}/api/create_key", app.base))
        .header(header::COOKIE, &cookie)
        .form(&[("kind", "tenant"), ("name", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(no_headers.status(), StatusCode::FORBIDDEN, "neither header: refused");
    // The address the server was reached by is not its origin: the public URL is
    // (a name that points at the server, as in DNS rebinding, is not this site).
    let by_address = app
        .request(Method::POST, "/api/create_key")
        .header(header::COOKIE, &cookie)
        .header(header::ORIGIN, &app.base)
        .form(&[("kind", "tenant"), ("name", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(by_address.status(), StatusCode::FORBIDDEN);
    let forged_login = bare
        .post(format!("{}/auth/login", app.base))
        .header(header::ORIGIN, "https://evil.example")
        .form(&[("email", "ada@example.com"), ("password", "password-123")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        forged_login.status(),
        StatusCode::FORBIDDEN,
        "no sign-in forged from elsewhere"
    );
    assert_eq!(
        page(&app, "/", &cookie).await.status(),
        StatusCode::OK,
        "still signed in"
    );
    assert_eq!(
        app.services
            .list_api_keys(&tenant, &Default::default())
            .await
            .unwrap()
            .page
            .total_elements,
        1
    );
}

backend_tests!(
    sign_in_and_out,
    roles_are_checked_on_pages_and_server_functions,
    cross_site_posts_are_refused,
);
