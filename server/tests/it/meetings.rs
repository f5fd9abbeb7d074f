//! Appointments, co-browsing and live-view links, and recorded sessions.

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

async fn cobrowsing_links(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "host@alpha.test"})).await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post("/rest/v1/user", &other, json!({"email": "spy@beta.test"}))
            .await,
        StatusCode::CREATED,
    )
    .await;

    let bad = app
        .post(
            "/rest/v1/cobrowsing/link",
            &t,
            json!({"url": "javascript:alert(1)", "userEmail": "spy@beta.test"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["url", "userEmail"]
    );
    let missing = app.post("/rest/v1/cobrowsing/link", &t, json!({})).await;
    assert_eq!(
        fields(&expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["url"]
    );

    let links = ok_json(
        app.post(
            "/rest/v1/cobrowsing/link",
            &t,
            json!({"url": "https://shop.alpha.test/cart", "userEmail": "host@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let host = links["hostLink"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://rapport.test")
        .to_string();
    let join = links["joinLink"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://rapport.test")
        .to_string();
    assert_ne!(host, join);
    assert!(host.starts_with(&format!("/cobrowse/{}?token=", links["sessionId"].as_str().unwrap())));
    let another = ok_json(
        app.post(
            "/rest/v1/cobrowsing/link",
            &t,
            json!({"url": "https://shop.alpha.test/"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_ne!(
        another["sessionId"], links["sessionId"],
        "a random session id each time"
    );

    let as_host = app
        .request(Method::GET, &host)
        .header(header::ACCEPT, "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        as_host.contains("You are hosting this session") && as_host.contains("https://shop.alpha.test/cart"),
        "{as_host}"
    );
    let guest = app
        .request(Method::GET, &join)
        .header(header::ACCEPT, "text/html")
        .send()
        .await
        .unwrap();
    let (status, headers) = (guest.status(), guest.headers().clone());
    let as_guest = guest.text().await.unwrap();
    assert!(
        as_guest.contains("You are joining a session"),
        "{status} {headers:?}: {as_guest}"
    );
    let forged = join.rsplit_once('=').unwrap().0.to_string() + "=guessed";
    let bad_page = app
        .request(Method::GET, &forged)
        .header(header::ACCEPT, "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(bad_page.contains("does not work"), "{bad_page}");
}

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

backend_tests!(
    appointments,
    cobrowsing_links,
    liveview_links_and_recorded_sessions,
    liveview_pages_say_their_language
);
