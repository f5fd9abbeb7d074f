//! Co-browsing links: validation, distinct host and guest links, and the
//! pages they open (a forged token opens nothing).

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, TestApp};

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

backend_tests!(cobrowsing_links);
