//! Links agents generate: cobrowse links, recent sessions by tag, and
//! live-view links opened (and audited) as the signed-in agent.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use super::json_of;
use crate::{
    dashboard::{server_fn, session},
    utils::TestApp,
};

async fn agents_generate_links(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let kim_id = app.user(&alpha, "kim@alpha.example", Role::Agent, false).await;
    app.user(&beta, "bo@beta.example", Role::Agent, false).await;
    let kim = session(&app, "kim@alpha.example").await;

    let links = json_of(
        server_fn(
            &app,
            "generate_cobrowse_links",
            &kim,
            &[("url", " https://shop.example.com/cart ")],
        )
        .await,
    )
    .await;
    assert_eq!(links["url"], "https://shop.example.com/cart");
    let join = links["join_link"].as_str().unwrap();
    assert!(join.contains("/cobrowse/") && join.contains("token="), "{join}");
    assert_ne!(links["host_link"], links["join_link"]);
    let bad = server_fn(&app, "generate_cobrowse_links", &kim, &[("url", "javascript:alert(1)")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("url"));

    for (token, id, tag) in [(&key, "s-alpha", "vip"), (&beta_key, "s-beta", "vip")] {
        let recorded = app
            .post(
                "/rest/v1/session",
                token,
                json!({"id": id, "visitorId": format!("visitor-{id}"), "startedAt": "2026-11-20T10:00:00Z", "tags": [tag]}),
            )
            .await;
        assert_eq!(recorded.status(), StatusCode::OK);
    }
    let sessions = json_of(server_fn(&app, "recent_sessions", &kim, &[("tag", "vip")]).await).await;
    let ids: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s-alpha"], "only the agent's tenant's sessions");
    let none = json_of(server_fn(&app, "recent_sessions", &kim, &[("tag", "other")]).await).await;
    assert_eq!(none, json!([]));

    let live = json_of(
        server_fn(
            &app,
            "generate_liveview_link",
            &kim,
            &[("session_id", "s-alpha"), ("language", "de")],
        )
        .await,
    )
    .await;
    let link = live["link"].as_str().unwrap();
    let path = &link[link.find("/liveview/open?token=").expect(link)..];
    let shown = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(shown.status(), StatusCode::OK, "the link's page only shows a button");
    let token = path.trim_start_matches("/liveview/open?token=");
    let opened = app
        .request(Method::POST, "/liveview/open")
        .header(header::COOKIE, &kim)
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    assert!(opened.status().is_redirection());
    assert_eq!(opened.headers()[header::LOCATION], "/liveview/s-alpha?lang=de");
    // Opened by a signed-in agent: the audit log names them, not the addressee.
    let log = app
        .services
        .list_audit(&alpha, &Default::default(), &Default::default())
        .await
        .unwrap()
        .results;
    let open = log
        .iter()
        .find(|e| e.action == "liveview.open")
        .expect("the opening is audited");
    assert_eq!(open.actor_id, kim_id);

    let foreign = server_fn(&app, "generate_liveview_link", &kim, &[("session_id", "s-beta")]).await;
    assert!(foreign.status().is_client_error(), "{}", foreign.status());
    let language = server_fn(
        &app,
        "generate_liveview_link",
        &kim,
        &[("session_id", "s-alpha"), ("language", "xx")],
    )
    .await;
    assert_eq!(language.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(language.text().await.unwrap().contains("language"));
    let signed_out = server_fn(
        &app,
        "generate_cobrowse_links",
        "rapport_session=nope",
        &[("url", "https://a.example")],
    )
    .await;
    assert_eq!(signed_out.status(), StatusCode::UNAUTHORIZED);
}

backend_tests!(agents_generate_links,);
