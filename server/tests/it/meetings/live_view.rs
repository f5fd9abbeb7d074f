//! Recorded sessions and live-view links: storing and filtering sessions,
//! single-use links, and the pages' language.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, TestApp};

async fn liveview_links_and_recorded_sessions(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    ok_json(
        app.post(
            "/rest/v1/user",
            &t,
            json!({"email": "agent@alpha.test", "password": "password-123"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;

    for (id, tags, started) in [
        ("s1", json!(["vip", "de"]), "2030-01-01T10:00:00Z"),
        ("s2", json!(["vip"]), "2030-01-01T11:00:00Z"),
        ("s3", json!([]), "2030-01-01T12:00:00Z"),
    ] {
        ok_json(
            app.post("/rest/v1/session", &t, json!({"id": id, "visitorId": format!("v-{id}"), "startedAt": started,
                "endedAt": "2030-01-01T13:00:00Z", "pageCount": 3, "entryUrl": "https://shop.alpha.test/", "tags": tags}))
            .await,
            StatusCode::OK,
        )
        .await;
    }
    let bad = app.post("/rest/v1/session", &t, json!({"id": "x", "startedAt": "2030-01-01T10:00:00Z", "endedAt": "2029-01-01T10:00:00Z", "tags": ["a", "a"]})).await;
    assert_eq!(
        fields(&expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["visitorId", "endedAt", "tags[1]"]
    );
    // The same session id in another tenant is another session.
    ok_json(
        app.post(
            "/rest/v1/session",
            &other,
            json!({"id": "s1", "visitorId": "theirs", "startedAt": "2030-01-01T10:00:00Z"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;

    let all = ok_json(
        app.post("/rest/v1/session/recorded", &t, json!({})).await,
        StatusCode::OK,
    )
    .await;
    let ids: Vec<&str> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s3", "s2", "s1"], "newest first");
    assert_eq!(all["results"][2]["tags"], json!(["de", "vip"]));
    assert_eq!(all["results"][2]["durationSeconds"], 10_800);
    let vip = ok_json(
        app.post(
            "/rest/v1/session/recorded",
            &t,
            json!({"tagFilter": {"tagsFilter": ["vip"]}}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(vip["page"]["totalElements"], 2);
    let both = ok_json(
        app.post(
            "/rest/v1/session/recorded",
            &t,
            json!({"pageable": {"pageNumber": 0, "pageSize": 10, "paged": true, "sort": {"sorted": false}},
            "tagFilter": {"tagsFilter": ["vip", "de"]}}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(both["page"]["totalElements"], 1, "all-of: only s1 has both");
    assert_eq!(both["results"][0]["id"], "s1");
    let paged = ok_json(
        app.post(
            "/rest/v1/session/recorded",
            &t,
            json!({"pageable": {"pageSize": 2, "pageNumber": 1}}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(paged["results"].as_array().unwrap().len(), 1);
    assert_eq!(paged["page"]["totalPages"], 2);
    let too_big = app
        .post("/rest/v1/session/recorded", &t, json!({"pageable": {"pageSize": 500}}))
        .await;
    assert_eq!(
        fields(&expect_problem(too_big, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["pageable.pageSize"]
    );
    let unpaged = app
        .post("/rest/v1/session/recorded", &t, json!({"pageable": {"unpaged": true}}))
        .await;
    assert_eq!(
        fields(&expect_problem(unpaged, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["pageable.unpaged"]
    );

    // Live view: the user and the session must exist in the tenant.
    let bad = app
        .post(
            "/rest/v1/liveview/link",
            &t,
            json!({"sessionId": "s9", "email": "spy@beta.test", "language": "fr"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["language", "email", "sessionId"]
    );
    let link = ok_json(
        app.post(
            "/rest/v1/liveview/link",
            &t,
            json!({"sessionId": "s1", "email": "agent@alpha.test", "language": "de"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let path = link["link"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://rapport.test")
        .to_string();
    assert!(path.starts_with("/liveview/open?token="));

    // Opening the link only shows a button, in the link's language: a link
    // scanner's GETs spend nothing.
    for _ in 0..2 {
        let shown = app.request(Method::GET, &path).send().await.unwrap();
        assert_eq!(shown.status(), StatusCode::OK);
        assert_eq!(shown.headers()[header::REFERRER_POLICY], "same-origin");
        let html = shown.text().await.unwrap();
        assert!(
            html.contains("Live-Ansicht öffnen") && html.contains(r#"action="/liveview/open""#),
            "{html}"
        );
    }
    let token = path.trim_start_matches("/liveview/open?token=").to_string();
    let open = || {
        app.request(Method::POST, "/liveview/open")
            .form(&[("token", token.as_str())])
    };
    let opened = open().send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    assert_eq!(opened.headers()[header::LOCATION], "/liveview/s1?lang=de");
    let cookie = opened.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let view = app
        .request(Method::GET, "/liveview/s1?lang=de")
        .header(header::COOKIE, &cookie)
        .header(header::ACCEPT, "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(view.status(), StatusCode::OK);
    let html = view.text().await.unwrap();
    assert!(html.contains("Live-Ansicht") && html.contains("v-s1"), "{html}");

    // Single use.
    let again = app.request(Method::GET, &path).send().await.unwrap();
    assert_eq!(again.headers()[header::LOCATION], "/login?error=link_invalid");
    assert!(again.headers().get(header::SET_COOKIE).is_none());
    let reused = open().send().await.unwrap();
    assert_eq!(reused.headers()[header::LOCATION], "/login?error=link_invalid");
    assert!(reused.headers().get(header::SET_COOKIE).is_none());
}

/// The live view and its link's page tell the browser their language
/// (`<html lang>`, a BCP 47 tag: Japanese is `ja`, though the spec's code is
/// `jp`), in each of the five, so a screen reader reads them in the right voice.
async fn liveview_pages_say_their_language(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "agent@alpha.test"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            "/rest/v1/session",
            &t,
            json!({"id": "s1", "visitorId": "v-s1", "startedAt": "2030-01-01T10:00:00Z"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let html_tag = |html: &str| {
        let start = html.find("<html").expect("an <html> element");
        html[start..start + html[start..].find('>').unwrap() + 1].to_string()
    };
    for (code, tag, title) in [
        ("en", "en", "Live view"),
        ("de", "de", "Live-Ansicht"),
        ("jp", "ja", "ライブビュー"),
        ("uk", "uk", "Перегляд наживо"),
        ("ru", "ru", "Просмотр в реальном времени"),
    ] {
        let link = ok_json(
            app.post(
                "/rest/v1/liveview/link",
                &t,
                json!({"sessionId": "s1", "email": "agent@alpha.test", "language": code}),
            )
            .await,
            StatusCode::CREATED,
        )
        .await;
        let path = link["link"]
            .as_str()
            .unwrap()
            .trim_start_matches("http://rapport.test")
            .to_string();
        let confirm = app
            .request(Method::GET, &path)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(
            html_tag(&confirm),
            format!(r#"<html lang="{tag}">"#),
            "{code}: {confirm}"
        );
        assert!(
            confirm.contains(&format!("<title>{title} · Rapport</title>")),
            "{code}: {confirm}"
        );

        let token = path.trim_start_matches("/liveview/open?token=").to_string();
        let opened = app
            .request(Method::POST, "/liveview/open")
            .form(&[("token", token.as_str())])
            .send()
            .await
            .unwrap();
        let location = opened.headers()[header::LOCATION].to_str().unwrap().to_string();
        assert_eq!(location, format!("/liveview/s1?lang={code}"));
        let cookie = opened.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_string();
        let view = app
            .request(Method::GET, &location)
            .header(header::COOKIE, &cookie)
            .header(header::ACCEPT, "text/html")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(html_tag(&view), format!(r#"<html lang="{tag}">"#), "{code}: {view}");
        assert!(
            view.contains(&format!("<title>{title} · Rapport</title>")),
            "{code}: {view}"
        );
    }
    // The dashboard itself is English.
    let login = app
        .request(Method::GET, "/login")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(html_tag(&login), r#"<html lang="en">"#);
}

backend_tests!(liveview_links_and_recorded_sessions, liveview_pages_say_their_language);
