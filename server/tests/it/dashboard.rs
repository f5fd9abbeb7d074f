//! The dashboard over HTTP: sign-in and sign-out, cookies, role checks on pages and
//! server functions, and cross-site protection. (Clicking through it in Chromium is
//! in end2end/.)

use rapport_core::{
    backend_tests,
    ids::TenantId,
    model::Role,
    reports::{api::DateFilter, times::TimesKind},
    testing::TestDb,
};
use reqwest::{header, Method, Response, StatusCode};

use crate::utils::TestApp;

pub(crate) async fn login(app: &TestApp, email: &str, password: &str) -> Response {
    app.request(Method::POST, "/auth/login")
        .form(&[
            ("email", email),
            ("password", password),
            ("workspace", ""),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap()
}

/// Signs in and returns the `name=value` session cookie.
pub(crate) async fn session(app: &TestApp, email: &str) -> String {
    let response = login(app, email, "password-123").await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    set_cookie.split(';').next().unwrap().to_string()
}

/// Who a settings test signs in as: in tenant Alpha (with an API key) an
/// admin and a supervisor, and Beta's admin, the stranger for whom every one
/// of Alpha's ids must be unknown. Tests add the agents they need.
pub(crate) struct Cast {
    pub alpha: TenantId,
    pub key: String,
    pub beta: TenantId,
    pub admin_id: rapport_core::ids::UserId,
    pub stranger_id: rapport_core::ids::UserId,
    pub admin: String,
    pub supervisor: String,
    pub stranger: String,
}

impl Cast {
    /// Creates the two tenants and signs the three in.
    pub(crate) async fn new(app: &TestApp) -> Cast {
        let (alpha, key) = app.tenant_with_key("Alpha").await;
        let (beta, _) = app.tenant_with_key("Beta").await;
        let admin_id = app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
        app.user(&alpha, "super@alpha.example", Role::Supervisor, false).await;
        let stranger_id = app.user(&beta, "admin@beta.example", Role::Admin, false).await;
        Cast {
            admin: session(app, "admin@alpha.example").await,
            supervisor: session(app, "super@alpha.example").await,
            stranger: session(app, "admin@beta.example").await,
            alpha,
            key,
            beta,
            admin_id,
            stranger_id,
        }
    }
}

/// A page load as a browser makes it (browsers accept `text/html`).
pub(crate) async fn page(app: &TestApp, path: &str, cookie: &str) -> Response {
    app.request(Method::GET, path)
        .header(header::COOKIE, cookie)
        .header(header::ACCEPT, "text/html,application/xhtml+xml")
        .send()
        .await
        .unwrap()
}

pub(crate) async fn server_fn(app: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> Response {
    app.request(Method::POST, &format!("/api/{name}"))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

/// Calls server function `name` as `cookie` with `form`, asserts 200, and
/// returns its JSON answer (`Null` when it answers nothing).
pub(crate) async fn server_fn_ok(app: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> serde_json::Value {
    let response = server_fn(app, name, cookie, form).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{name}: {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

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

async fn admins_manage_webhooks_through_server_functions(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@example.com", Role::Admin, false).await;
    app.user(&tenant, "super@example.com", Role::Supervisor, false).await;
    let admin = session(&app, "admin@example.com").await;
    let supervisor = session(&app, "super@example.com").await;
    let receiver = crate::receiver::Receiver::start().await;

    let created = server_fn(
        &app,
        "create_webhook",
        &admin,
        &[("url", receiver.url.as_str()), ("event_types[0]", "message.received")],
    )
    .await;
    assert_eq!(created.status(), StatusCode::OK);
    let created: serde_json::Value = created.json().await.unwrap();
    let secret = created["secret"].as_str().unwrap().to_string();
    let id = created["webhook"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        created["webhook"]["event_types"],
        serde_json::json!(["message.received"])
    );

    let listed: serde_json::Value = server_fn(&app, "list_webhooks", &admin, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    assert!(listed[0].get("secret").is_none());

    let test = server_fn(&app, "send_test_webhook", &admin, &[("id", id.as_str())]).await;
    assert_eq!(test.status(), StatusCode::OK);
    let got = receiver.wait_for(1, std::time::Duration::from_secs(20)).await;
    got[0].verify(&secret);
    let mut log = serde_json::Value::Null;
    for _ in 0..50 {
        log = server_fn(&app, "webhook_attempts", &admin, &[("id", id.as_str())])
            .await
            .json()
            .await
            .unwrap();
        if log.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(log[0]["status_code"], 200);
    assert_eq!(log[0]["event_type"], "webhook.test");

    for name in ["list_webhooks", "create_webhook", "delete_webhook"] {
        let call = server_fn(
            &app,
            name,
            &supervisor,
            &[("id", id.as_str()), ("url", "https://x.example.com")],
        )
        .await;
        assert_eq!(call.status(), StatusCode::FORBIDDEN, "{name}");
    }
    let bad = server_fn(&app, "create_webhook", &admin, &[("url", "not a url")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let deleted = server_fn(&app, "delete_webhook", &admin, &[("id", id.as_str())]).await;
    // The hydrated page is sent on to the list.
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(deleted.headers()[header::LOCATION], "/settings/webhooks");
    let listed: serde_json::Value = server_fn(&app, "list_webhooks", &admin, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed, serde_json::json!([]));
}

async fn agents_set_their_presence_from_the_top_bar(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    let kim = app.user(&tenant, "kim@example.com", Role::Agent, false).await;
    let cookie = session(&app, "kim@example.com").await;
    let status = |response: Response| async move {
        assert_eq!(response.status(), StatusCode::OK);
        response.json::<Option<String>>().await.unwrap().unwrap_or_default()
    };
    assert_eq!(
        status(server_fn(&app, "my_presence", &cookie, &[]).await).await,
        "OFFLINE"
    );
    let html = page(&app, "/", &cookie).await.text().await.unwrap();
    assert!(html.contains(r#"aria-label="Your status""#), "{html}");

    let set = server_fn(&app, "set_my_presence", &cookie, &[("status", "ONLINE")]).await;
    assert_eq!(status(set).await, "ONLINE");
    assert_eq!(
        status(server_fn(&app, "my_presence", &cookie, &[]).await).await,
        "ONLINE"
    );
    assert_eq!(
        status(server_fn(&app, "presence_heartbeat", &cookie, &[]).await).await,
        "ONLINE"
    );
    // The page shows it pressed, also without JavaScript.
    let html = page(&app, "/", &cookie).await.text().await.unwrap();
    let online = html.find(">Online<").expect("an Online button");
    let button = &html[html[..online].rfind("<button").unwrap()..online];
    assert!(button.contains(r#"aria-pressed="true""#), "{button}");

    // It feeds the agent reports: an online interval, open until now.
    let week = DateFilter::default();
    let times = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    assert_eq!(times.len(), 1);
    assert_eq!(times[0].user_id, kim);
    let set = server_fn(&app, "set_my_presence", &cookie, &[("status", "AWAY")]).await;
    assert_eq!(status(set).await, "AWAY");
    // The online interval is closed: its end no longer follows the clock.
    let closed = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let later = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    assert_eq!(closed, later);

    // Nonsense and strangers change nothing.
    let bad = server_fn(&app, "set_my_presence", &cookie, &[("status", "SLEEPING")]).await;
    assert!(!bad.status().is_success());
    let stranger = server_fn(&app, "set_my_presence", "rapport_session=nope", &[("status", "ONLINE")]).await;
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(status(server_fn(&app, "my_presence", &cookie, &[]).await).await, "AWAY");
    let signed_out = server_fn(&app, "my_presence", "rapport_session=nope", &[]).await;
    assert_eq!(signed_out.status(), StatusCode::OK);
    assert_eq!(signed_out.json::<Option<String>>().await.unwrap(), None);
    app.stop().await;
}

async fn the_bundle_is_revalidated_on_every_use(db: TestDb) {
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(site.path().join("pkg")).unwrap();
    std::fs::write(site.path().join("pkg/split_page.wasm"), b"\0asm").unwrap();
    let site_dir = site.path().to_path_buf();
    let app = TestApp::start_with(db, move |c| c.site_dir = site_dir).await;
    let chunk = app.request(Method::GET, "/pkg/split_page.wasm").send().await.unwrap();
    assert_eq!(chunk.status(), StatusCode::OK);
    assert_eq!(
        chunk.headers()[header::CONTENT_TYPE],
        "application/wasm",
        "chunks load by streaming"
    );
    assert_eq!(
        chunk.headers()[header::CACHE_CONTROL],
        "no-cache",
        "a chunk must never outlive its build's main module"
    );

    // A release build leaves Brotli and gzip copies next to each file; a browser
    // that accepts them gets those, as they are, and the rest gets the original.
    std::fs::write(site.path().join("pkg/split_page.wasm.br"), b"brotli bytes").unwrap();
    std::fs::write(site.path().join("pkg/split_page.wasm.gz"), b"gzip bytes").unwrap();
    for (accepts, encoding, body) in [
        ("br, gzip", Some("br"), &b"brotli bytes"[..]),
        ("gzip", Some("gzip"), &b"gzip bytes"[..]),
        ("identity", None, &b"\0asm"[..]),
    ] {
        let chunk = app
            .request(Method::GET, "/pkg/split_page.wasm")
            .header(header::ACCEPT_ENCODING, accepts)
            .send()
            .await
            .unwrap();
        assert_eq!(chunk.status(), StatusCode::OK);
        assert_eq!(
            chunk
                .headers()
                .get(header::CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap()),
            encoding,
            "{accepts}"
        );
        assert_eq!(chunk.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(chunk.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(&chunk.bytes().await.unwrap()[..], body, "{accepts}");
    }

    // An area's pack (its modules in one file) is served the same way.
    std::fs::write(site.path().join("pkg/pack_page_area_1.bin"), b"pack").unwrap();
    std::fs::write(site.path().join("pkg/pack_page_area_1.bin.br"), b"brotli pack").unwrap();
    let pack = app
        .request(Method::GET, "/pkg/pack_page_area_1.bin")
        .header(header::ACCEPT_ENCODING, "br, gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(pack.status(), StatusCode::OK);
    assert_eq!(pack.headers()[header::CONTENT_ENCODING], "br");
    assert_eq!(pack.headers()[header::CACHE_CONTROL], "no-cache");
    assert_eq!(&pack.bytes().await.unwrap()[..], b"brotli pack");
    app.stop().await;
}

/// The resources a rendered page hands to the browser: `__PENDING_RESOURCES`,
/// which lists their ids in the order the browser registers them.
fn registered_resources(html: &str) -> &str {
    let start = html
        .find("__PENDING_RESOURCES=")
        .expect("the page carries its resources");
    let rest = &html[start..];
    &rest[..rest.find(';').unwrap_or(rest.len())]
}

/// Every page registers each of its resources once, the same way each time it
/// is rendered, so the browser (which registers them once) hydrates each with
/// its own data. A resource created inside a `Suspense` was registered twice
/// whenever the server already knew the user at its first pass, which made the
/// pages of a whole area fail to hydrate now and then.
async fn pages_register_their_resources_once(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@example.com", Role::Admin, true).await;
    let admin = session(&app, "admin@example.com").await;
    for path in [
        "/",
        "/account",
        "/inbox",
        "/appointments",
        "/links",
        "/reports/messages?grouping=LAST_MONTH",
        "/settings/workspace",
        "/settings/users",
        "/settings/webhooks",
        "/settings/api-keys",
        "/settings/audit",
        "/settings/opening-hours/new",
        "/settings/teams",
        "/settings/routing-rules",
        "/platform/api",
        "/platform/tenants",
    ] {
        let mut seen = Vec::new();
        for _ in 0..5 {
            let response = page(&app, path, &admin).await;
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            let html = response.text().await.unwrap();
            assert!(!html.contains("dashboard context missing"), "{path}");
            seen.push(registered_resources(&html).to_string());
        }
        assert!(seen.iter().all(|s| *s == seen[0]), "{path}: {seen:?}");
    }
    app.stop().await;
}

async fn pages_run_only_their_own_scripts(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.public_url = Some("https://chat.example".into())).await;
    let login = page(&app, "/login", "").await;
    assert_eq!(login.status(), StatusCode::OK);
    assert_eq!(
        login.headers()[header::STRICT_TRANSPORT_SECURITY],
        "max-age=31536000",
        "an https site says so"
    );
    let policy = login.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_string();
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("a nonce in the policy")
        .to_string();
    for directive in [
        "default-src 'self'",
        "'strict-dynamic'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{directive}: {policy}");
    }
    let scripts = policy.split("script-src").nth(1).unwrap().split(';').next().unwrap();
    assert!(
        scripts
            .split_whitespace()
            .all(|source| source != "'unsafe-inline'" && source != "'unsafe-eval'"),
        "{scripts}"
    );
    let html = login.text().await.unwrap();
    let tags: Vec<&str> = html
        .split("<script")
        .skip(1)
        .map(|t| t.split('>').next().unwrap())
        .collect();
    assert!(tags.len() >= 2, "the early-click script and hydration: {html}");
    for tag in tags {
        assert!(
            tag.contains(&format!("nonce=\"{nonce}\"")),
            "every script carries the nonce: <script{tag}>"
        );
    }
    let again = page(&app, "/login", "").await;
    let other = again.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(!other.contains(&nonce), "a nonce per response");
    app.stop().await;
}

backend_tests!(
    pages_register_their_resources_once,
    pages_run_only_their_own_scripts,
    the_bundle_is_revalidated_on_every_use,
    agents_set_their_presence_from_the_top_bar,
    admins_manage_webhooks_through_server_functions,
    sign_in_and_out,
    roles_are_checked_on_pages_and_server_functions,
    cross_site_posts_are_refused,
);
