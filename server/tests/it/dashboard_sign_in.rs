//! Signing in to the dashboard, as an attacker would try it: guessing is
//! limited and slows only the guesser, a forwarded address counts only from a
//! trusted proxy, `next` never leaves the site, and a session ends thirty days
//! after sign-in.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, Response, StatusCode};

use crate::{
    dashboard::{login, page, session},
    utils::TestApp,
};

async fn login_attempts_are_rate_limited(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;
    let mut limited = false;
    for _ in 0..12 {
        let r = login(&app, "ada@example.com", "guess-guess").await;
        if r.headers()[header::LOCATION]
            .to_str()
            .unwrap()
            .contains("error=rate_limited")
        {
            limited = true;
            break;
        }
    }
    assert!(limited, "guessing is slowed down");
    // Even the right password waits now.
    let r = login(&app, "ada@example.com", "password-123").await;
    assert!(r.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .contains("error=rate_limited"));
}

/// Signs in from `client` (as a trusted proxy forwards it) with `next`: the answer.
async fn login_from(app: &TestApp, client: &str, password: &str, next: &str) -> Response {
    app.request(Method::POST, "/auth/login")
        .header("x-forwarded-for", client)
        .form(&[
            ("email", "ada@example.com"),
            ("password", password),
            ("workspace", ""),
            ("next", next),
        ])
        .send()
        .await
        .unwrap()
}

fn location(response: &Response) -> &str {
    response.headers()[header::LOCATION].to_str().unwrap()
}

async fn sign_in_stays_on_the_site_and_slows_only_the_guesser(db: TestDb) {
    // Rapport behind a proxy on 127.0.0.1, which forwards each client's address.
    let app = TestApp::start_with(db, |c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;
    let owner = "198.51.100.7";

    // `next` is kept only as a path of this site: browsers read `\` as `/`
    // and drop tabs, so each of these would leave it.
    for (next, lands) in [
        ("/inbox?status=OPEN", "/inbox?status=OPEN"),
        ("/\\evil.example", "/"),
        ("/\t/evil.example", "/"),
        ("//evil.example", "/"),
        ("https://evil.example/", "/"),
    ] {
        let signed_in = login_from(&app, owner, "password-123", next).await;
        assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
        assert_eq!(location(&signed_in), lands, "next={next:?}");
    }
    let html = app
        .request(Method::GET, "/login?next=/%09/evil.example")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains(r#"name="next" value="/""#),
        "the form carries a safe next: {html}"
    );

    // Someone guesses Ada's password from elsewhere until they are slowed…
    let guesser = "203.0.113.9";
    let mut slowed = false;
    for _ in 0..12 {
        let guess = login_from(&app, guesser, "guess-guess", "/").await;
        if location(&guess).contains("error=rate_limited") {
            slowed = true;
            break;
        }
    }
    assert!(slowed, "guessing is slowed down");
    let again = login_from(&app, guesser, "password-123", "/").await;
    assert!(
        location(&again).contains("error=rate_limited"),
        "even with the right password"
    );
    // …while Ada, at her own address, signs in as always.
    let ada = login_from(&app, owner, "password-123", "/").await;
    assert_eq!(location(&ada), "/", "the owner is not locked out");
    let log = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap()
        .results;
    let login = log.iter().find(|e| e.action == "session.login").unwrap();
    assert_eq!(
        login.ip.as_deref(),
        Some(owner),
        "the audit names the client, not the proxy"
    );
    app.stop().await;
}

async fn forwarded_headers_count_only_from_trusted_proxies(db: TestDb) {
    // No proxy configured: a client cannot choose its address by a header.
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;
    let mut slowed = false;
    for n in 0..12 {
        let guess = login_from(&app, &format!("203.0.113.{n}"), "guess-guess", "/").await;
        if location(&guess).contains("error=rate_limited") {
            slowed = true;
            break;
        }
    }
    assert!(slowed, "a new X-Forwarded-For per guess does not escape the limit");
    app.stop().await;
}

async fn a_session_ends_thirty_days_after_sign_in(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "ada@example.com", Role::Admin, false).await;
    let cookie = session(&app, "ada@example.com").await;
    assert_eq!(page(&app, "/", &cookie).await.status(), StatusCode::OK);
    // Used every day, it would slide on for ever: the sign-in is 30 days old.
    let aged = rapport_core::with_db!(app.services.writer(), |pool| sqlx::query(
        "update sessions set created_at = created_at - $1, last_seen_at = $2"
    )
    .bind(rapport_core::sign_ins::SESSION_MAX_MS)
    .bind(rapport_core::time::now_ms())
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    assert_eq!(aged, 1);
    let lapsed = page(&app, "/", &cookie).await;
    let location = lapsed
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .unwrap_or_default();
    assert!(
        lapsed.status().is_redirection() && location.starts_with("/login"),
        "{} {location}",
        lapsed.status()
    );
    app.stop().await;
}

backend_tests!(
    a_session_ends_thirty_days_after_sign_in,
    sign_in_stays_on_the_site_and_slows_only_the_guesser,
    forwarded_headers_count_only_from_trusted_proxies,
    login_attempts_are_rate_limited,
);
