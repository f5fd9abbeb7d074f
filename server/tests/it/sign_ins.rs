//! A user sees every browser signed in as them, and ends the ones they no
//! longer use, on both backends. Nobody ends another user's session.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::Value;

use crate::{
    dashboard::{page, server_fn, server_fn_ok, session},
    utils::TestApp,
};

const CHROME: &str =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.8078.73 Safari/537.36";
const FIREFOX: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

/// Signs in from a browser that says `user_agent`; returns the session cookie.
async fn sign_in_with(app: &TestApp, email: &str, user_agent: &str) -> String {
    let response = app
        .request(Method::POST, "/auth/login")
        .header(header::USER_AGENT, user_agent)
        .form(&[
            ("email", email),
            ("password", "password-123"),
            ("workspace", ""),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    set_cookie.split(';').next().unwrap().to_string()
}

fn sessions(list: &Value) -> &Vec<Value> {
    list.as_array().unwrap()
}

async fn users_see_and_end_their_other_sessions(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    let ada = app.user(&tenant, "ada@alpha.example", Role::Agent, false).await;
    app.user(&tenant, "bob@alpha.example", Role::Admin, false).await;
    let laptop = sign_in_with(&app, "ada@alpha.example", CHROME).await;
    let phone = sign_in_with(&app, "ada@alpha.example", FIREFOX).await;
    let shared = session(&app, "ada@alpha.example").await;
    let bob = session(&app, "bob@alpha.example").await;

    // Ada sees her three sessions, her laptop's marked as this browser.
    let list = server_fn_ok(&app, "my_sessions", &laptop, &[]).await;
    assert_eq!(sessions(&list).len(), 3, "{list}");
    let current: Vec<&Value> = sessions(&list).iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1, "{list}");
    assert_eq!(current[0]["device"], "Chrome 156 on Linux");
    assert!(
        sessions(&list)
            .iter()
            .any(|s| s["device"] == "Firefox 133 on Windows 10"),
        "{list}"
    );
    assert!(sessions(&list).iter().all(|s| s["ip"] == "127.0.0.1"), "{list}");
    let page_html = page(&app, "/account", &laptop).await.text().await.unwrap();
    assert!(
        page_html.contains("Where you are signed in") && page_html.contains("This browser"),
        "{page_html}"
    );

    // She signs her phone out: it must sign in again.
    let phone_id = sessions(&list)
        .iter()
        .find(|s| s["device"] == "Firefox 133 on Windows 10")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!phone.contains(&phone_id), "the handle is not the token");
    server_fn_ok(&app, "end_my_session", &laptop, &[("id", &phone_id)]).await;
    assert_eq!(
        server_fn(&app, "my_sessions", &phone, &[]).await.status(),
        StatusCode::UNAUTHORIZED
    );

    // Nobody ends another user's session: Bob's handle is unknown to Ada.
    let bobs = server_fn_ok(&app, "my_sessions", &bob, &[]).await;
    let bob_id = sessions(&bobs)[0]["id"].as_str().unwrap().to_string();
    let refused = server_fn(&app, "end_my_session", &laptop, &[("id", &bob_id)]).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    server_fn_ok(&app, "my_sessions", &bob, &[]).await;

    // Everywhere else: the shared computer is signed out, the laptop stays.
    let ended = server_fn_ok(&app, "end_my_other_sessions", &laptop, &[]).await;
    assert_eq!(ended, 1);
    assert_eq!(
        server_fn(&app, "my_sessions", &shared, &[]).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let left = server_fn_ok(&app, "my_sessions", &laptop, &[]).await;
    assert_eq!(sessions(&left).len(), 1, "{left}");
    assert_eq!(sessions(&left)[0]["current"], true);

    // Both are in the audit log, as Ada's doing.
    let audit = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap();
    let mine: Vec<&str> = audit
        .results
        .iter()
        .filter(|e| e.actor_id == ada)
        .map(|e| e.action.as_str())
        .collect();
    assert!(
        mine.contains(&"session.end") && mine.contains(&"session.end_others"),
        "{mine:?}"
    );
    // Signed out, there is nothing to list.
    assert_eq!(
        server_fn(&app, "my_sessions", "rapport_session=nope", &[])
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
}

backend_tests!(users_see_and_end_their_other_sessions);
