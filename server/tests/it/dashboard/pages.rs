//! What a page load delivers: the bundle's chunks revalidated (and served
//! precompressed), each resource registered once, and only the page's own
//! scripts run.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};

use super::{page, session};
use crate::utils::TestApp;

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
);
