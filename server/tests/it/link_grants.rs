//! Links grant exactly what they name. A live-view link opens the live view of its
//! one session and nothing else: every dashboard page, the server functions and
//! REST refuse what opening it gave the browser. And no link a tenant key can mint
//! (live view, co-browsing, appointment) reaches a dashboard session, let alone
//! platform rights, even when it names a platform admin.

use rapport_core::{backend_tests, ids::TenantId, model::Role, testing::TestDb};
use reqwest::{header, Method, Response, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn, session},
    utils::{ok_json, open_liveview_link, TestApp},
};

/// Every dashboard path the app routes, read from the router itself, with its
/// parameters filled in, so a page added later is covered without editing this test.
fn dashboard_paths() -> Vec<String> {
    let routes = include_str!("../../../app/src/lib.rs");
    let public = ["/login", "/cobrowse/:id", "/join/:token", "/liveview/:id"];
    let paths: Vec<String> = routes
        .split("path!(\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|p| !p.is_empty() && !public.contains(p))
        .map(|p| p.replace(":family", "agents").replace(":id", "some-id"))
        .collect();
    assert!(paths.len() > 30, "the router's paths were found: {paths:?}");
    paths
}

/// `name=value` of the cookie a response sets, if it sets `name`.
fn set_cookie(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
        .find(|c| c.starts_with(&format!("{name}=")))
}

/// Every cookie a response sets, as one `Cookie` header value.
fn all_cookies(response: &Response) -> String {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Asserts that a browser holding only `cookie` is a stranger to the dashboard:
/// every page sends it to the login page, server functions answer 401, and REST
/// answers 401 whether the cookie rides along or its value is tried as a token.
async fn assert_stranger(app: &TestApp, cookie: &str) {
    for path in dashboard_paths() {
        let response = page(app, &path, cookie).await;
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(
            response.status().is_redirection() && location.starts_with("/login"),
            "{path} with {cookie}: {} {location}",
            response.status()
        );
    }
    let calls: [(&str, &[(&str, &str)]); 10] = [
        ("current_user", &[]),
        ("list_tenants", &[]),
        ("list_keys", &[("kind", "tenant")]),
        ("create_key", &[("kind", "platform"), ("name", "mine now")]),
        ("list_users", &[]),
        ("inbox_list", &[("status", "UNREAD"), ("mine", "false")]),
        ("recent_sessions", &[]),
        (
            "generate_liveview_link",
            &[("session_id", "s1"), ("email", "root@alpha.test")],
        ),
        ("list_webhooks", &[]),
        ("get_workspace", &[]),
    ];
    for (name, form) in calls {
        let response = server_fn(app, name, cookie, form).await;
        let status = response.status();
        let body = response.text().await.unwrap();
        // `current_user` answers "nobody" rather than refusing.
        if name == "current_user" {
            assert_eq!(status, StatusCode::OK, "{name}: {body}");
            assert_eq!(body.trim(), "null", "{name} with {cookie}: {body}");
        } else {
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{name} with {cookie}: {body}");
        }
    }
    let inbox_events = app
        .request(Method::GET, "/inbox/events")
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(inbox_events.status(), StatusCode::UNAUTHORIZED, "/inbox/events");
    for path in ["/rest/v1/customer", "/rest/v1/tenant", "/rest/v1/user"] {
        let with_cookie = app
            .request(Method::GET, path)
            .header(header::COOKIE, cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(with_cookie.status(), StatusCode::UNAUTHORIZED, "{path} with {cookie}");
        let value = cookie.split_once('=').map(|(_, v)| v).unwrap_or(cookie);
        let as_token = app.request(Method::GET, path).bearer_auth(value).send().await.unwrap();
        assert_eq!(
            as_token.status(),
            StatusCode::UNAUTHORIZED,
            "{path} with the value as a token"
        );
    }
}

/// Tenant Alpha with a platform admin among its users (as the bootstrap admin is
/// in the default tenant), an agent, two recorded sessions, and Alpha's key.
async fn alpha_with_platform_admin(app: &TestApp) -> (TenantId, String) {
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "root@alpha.test", Role::Admin, true).await;
    app.user(&tenant, "agent@alpha.test", Role::Agent, false).await;
    for id in ["s1", "s2"] {
        ok_json(
            app.post(
                "/rest/v1/session",
                &key,
                json!({"id": id, "visitorId": format!("v-{id}"), "startedAt": "2030-01-01T10:00:00Z", "pageCount": 2}),
            )
            .await,
            StatusCode::OK,
        )
        .await;
    }
    (tenant, key)
}

async fn liveview_link_opens_its_view_and_nothing_else(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = alpha_with_platform_admin(&app).await;
    // The link names the platform admin: the worst case.
    let link = ok_json(
        app.post(
            "/rest/v1/liveview/link",
            &key,
            json!({"sessionId": "s1", "email": "root@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let opened = open_liveview_link(&app, link["link"].as_str().unwrap()).await;
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    assert_eq!(opened.headers()[header::LOCATION], "/liveview/s1?lang=en");
    assert!(set_cookie(&opened, "rapport_session").is_none(), "no dashboard session");
    let grant = set_cookie(&opened, "rapport_liveview").expect("a live-view grant");
    let attributes = opened.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="] {
        assert!(attributes.contains(attribute), "{attributes}");
    }

    // The view it names opens, page and server function alike.
    let view = page(&app, "/liveview/s1", &grant).await;
    assert_eq!(view.status(), StatusCode::OK);
    assert!(view.text().await.unwrap().contains("v-s1"));
    let data = server_fn(&app, "liveview_session", &grant, &[("session_id", "s1")]).await;
    assert_eq!(data.status(), StatusCode::OK);
    // Another session of the same tenant does not.
    let other = server_fn(&app, "liveview_session", &grant, &[("session_id", "s2")]).await;
    assert_eq!(other.status(), StatusCode::UNAUTHORIZED);
    let other_page = page(&app, "/liveview/s2", &grant).await.text().await.unwrap();
    assert!(!other_page.contains("v-s2") && other_page.contains("not open to you"));

    // Nothing else of the dashboard, REST or the platform.
    assert_stranger(&app, &grant).await;

    // A signed-in agent of the tenant still watches any of its sessions; a stranger
    // signed in elsewhere, none.
    let agent = session(&app, "agent@alpha.test").await;
    assert_eq!(
        server_fn(&app, "liveview_session", &agent, &[("session_id", "s2")])
            .await
            .status(),
        StatusCode::OK
    );
    let (beta, _) = app.tenant_with_key("Beta").await;
    app.user(&beta, "spy@beta.test", Role::Admin, false).await;
    let spy = session(&app, "spy@beta.test").await;
    assert_ne!(
        server_fn(&app, "liveview_session", &spy, &[("session_id", "s1")])
            .await
            .status(),
        StatusCode::OK
    );

    // The audit log says who minted the link and who opened it.
    let log = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap()
        .results;
    let minted = log
        .iter()
        .find(|e| e.action == "liveview.link")
        .expect("minting is audited");
    assert_eq!(minted.actor_type, rapport_core::audit::ActorKind::Apikey);
    let opened = log
        .iter()
        .find(|e| e.action == "liveview.open")
        .expect("opening is audited");
    assert_eq!(opened.actor_type, rapport_core::audit::ActorKind::User);
    assert_eq!(opened.ip.as_deref(), Some("127.0.0.1"));
    assert_eq!(opened.resource_id.as_deref(), Some("s1"));
}

async fn liveview_grants_lapse(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, key) = alpha_with_platform_admin(&app).await;
    let link: Value = ok_json(
        app.post(
            "/rest/v1/liveview/link",
            &key,
            json!({"sessionId": "s1", "email": "agent@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let opened = open_liveview_link(&app, link["link"].as_str().unwrap()).await;
    let grant = set_cookie(&opened, "rapport_liveview").unwrap();
    let value = grant.split_once('=').unwrap().1.to_string();
    assert!(app.services.liveview_grant(&value, "s1").await.is_ok());
    // Idle past its deadline (as if 15 minutes had passed unused): refused.
    rapport_core::with_db!(app.services.writer(), |pool| sqlx::query(
        "update liveview_tokens set grant_idle_until = $1 where grant_hash is not null"
    )
    .bind(chrono::Utc::now().timestamp_millis() - 1)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    assert!(app.services.liveview_grant(&value, "s1").await.is_err());
    assert_eq!(
        server_fn(&app, "liveview_session", &grant, &[("session_id", "s1")])
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    // Past its hard limit, whatever its idle deadline says: refused too.
    rapport_core::with_db!(app.services.writer(), |pool| sqlx::query(
        "update liveview_tokens set grant_idle_until = $1, grant_until = $2 where grant_hash is not null"
    )
    .bind(chrono::Utc::now().timestamp_millis() + 600_000)
    .bind(chrono::Utc::now().timestamp_millis() - 1)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    assert!(app.services.liveview_grant(&value, "s1").await.is_err());
}

async fn no_link_a_tenant_key_mints_reaches_platform_rights(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, key) = alpha_with_platform_admin(&app).await;

    // Co-browsing: host and join links naming the platform admin as host.
    let links = ok_json(
        app.post(
            "/rest/v1/cobrowsing/link",
            &key,
            json!({"url": "https://shop.alpha.test/", "userEmail": "root@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    // Appointments: the join link.
    let appointment = ok_json(
        app.post(
            "/rest/v1/appointment",
            &key,
            json!({"title": "Demo", "date": "2030-01-01T10:00:00Z"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    // Live view, naming the platform admin.
    let liveview = ok_json(
        app.post(
            "/rest/v1/liveview/link",
            &key,
            json!({"sessionId": "s2", "email": "root@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let minted = [
        links["hostLink"].as_str().unwrap(),
        links["joinLink"].as_str().unwrap(),
        appointment["joinLink"].as_str().unwrap(),
        liveview["link"].as_str().unwrap(),
    ];
    for link in minted {
        let path = link.trim_start_matches("http://rapport.test");
        let response = app
            .request(Method::GET, path)
            .header(header::ACCEPT, "text/html")
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success() || response.status().is_redirection(),
            "{path}: {}",
            response.status()
        );
        assert!(
            set_cookie(&response, "rapport_session").is_none(),
            "{path} signs nobody in"
        );
        // Whatever the browser was given, it is a stranger to the dashboard and to
        // the platform.
        let cookies = all_cookies(&response);
        let cookies = if cookies.is_empty() {
            "none=1".to_string()
        } else {
            cookies
        };
        assert_stranger(&app, &cookies).await;
    }
    // The platform API still answers only the platform key.
    assert_eq!(app.get("/rest/v1/tenant", &key).await.status(), StatusCode::FORBIDDEN);
}

backend_tests!(
    liveview_link_opens_its_view_and_nothing_else,
    liveview_grants_lapse,
    no_link_a_tenant_key_mints_reaches_platform_rights
);
