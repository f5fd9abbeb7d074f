//! Files in conversations, on both backends: a visitor sends one from the
//! widget (`POST /rest/v1/widget/file`), an agent from the inbox's form
//! (`POST /inbox/{customerId}/file`); each becomes a `FILE` message whose link
//! serves exactly that file, safely, and goes with its customer.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::Value;

use crate::{
    dashboard::session,
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

/// The test configuration's file limit (`ServeConfig::for_tests`).
const LIMIT: usize = 256 * 1024;

async fn upload(
    app: &TestApp,
    key: &str,
    token: Option<&str>,
    name: &str,
    kind: &str,
    bytes: Vec<u8>,
) -> reqwest::Response {
    let mut request = app
        .request(Method::POST, "/rest/v1/widget/file")
        .query(&[("name", name)])
        .header("rapport-widget-key", key)
        .header(header::CONTENT_TYPE, kind)
        .body(bytes);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// The path of a download link (the test server's public URL is not its address).
fn link_path(url: &str) -> String {
    let path = url
        .strip_prefix("http://rapport.test")
        .expect("a link under the public URL");
    assert!(path.starts_with("/files/"), "{url}");
    path.to_string()
}

/// Posts the inbox's file form for `customer`, signed in with `cookie`.
async fn post_form(
    app: &TestApp,
    cookie: Option<&str>,
    customer: &str,
    (kind, body): (String, Vec<u8>),
) -> reqwest::Response {
    let mut request = app
        .request(Method::POST, &format!("/inbox/{customer}/file"))
        .header(header::CONTENT_TYPE, kind)
        .body(body);
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    request.send().await.unwrap()
}

/// The inbox's form: `back`, then the file, as a browser sends it.
fn inbox_form(back: &str, name: &str, kind: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "----rapport-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"back\"\r\n\r\n{back}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: {kind}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn visitors_and_agents_send_files(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Files").await;
    let (other_tenant, _) = app.tenant_with_key("Elsewhere").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "agent@files.example", Role::Agent, false).await;
    app.user(&other_tenant, "agent@elsewhere.example", Role::Agent, false)
        .await;
    let agent = session(&app, "agent@files.example").await;
    let stranger = session(&app, "agent@elsewhere.example").await;
    let config = app
        .request(Method::GET, "/rest/v1/widget/config")
        .header("rapport-widget-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(config, StatusCode::OK).await["maxFileBytes"], LIMIT);
    let (customer, token) = app.widget_visitor(&key, "Fay").await;

    // The visitor sends a file: it is the visitor's FILE message, named after it.
    let text = b"Order 1042: the blue one, please.\n".to_vec();
    let sent = upload(
        &app,
        &key,
        Some(&token),
        "C:\\Users\\fay\\Bestellung März.txt",
        "text/plain",
        text.clone(),
    )
    .await;
    let message = ok_json(sent, StatusCode::CREATED).await;
    assert_eq!(message["type"], "FILE");
    assert_eq!(message["direction"], "INBOUND");
    assert_eq!(message["message"], "Bestellung März.txt");
    let url = message["url"].as_str().unwrap().to_string();
    assert!(url.ends_with("/Bestellung_M_rz.txt"), "{url}");
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        history["results"][0]["url"],
        url.as_str(),
        "agents and integrators see it"
    );

    // The link alone serves that file, as a download.
    let got = app.request(Method::GET, &link_path(&url)).send().await.unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    assert_eq!(got.headers()[header::CONTENT_TYPE], "text/plain");
    let disposition = got.headers()[header::CONTENT_DISPOSITION].to_str().unwrap().to_string();
    assert!(disposition.starts_with("attachment;"), "{disposition}");
    assert!(
        disposition.contains("UTF-8''Bestellung%20M%C3%A4rz.txt"),
        "{disposition}"
    );
    assert!(got.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .starts_with("sandbox"));
    assert_eq!(got.bytes().await.unwrap().to_vec(), text);

    // Markup is never shown from Rapport's origin: it downloads.
    let page = upload(
        &app,
        &key,
        Some(&token),
        "x.html",
        "text/html",
        b"<script>alert(1)</script>".to_vec(),
    )
    .await;
    let page = ok_json(page, StatusCode::CREATED).await;
    let got = app
        .request(Method::GET, &link_path(page["url"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert!(got.headers()[header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap()
        .starts_with("attachment;"));

    // A guessed or altered link finds nothing.
    let guessed = app
        .request(Method::GET, "/files/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/x.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(guessed.status(), StatusCode::NOT_FOUND);

    // Refused: too large (before it is read), empty, nameless, no visitor.
    let big = upload(
        &app,
        &key,
        Some(&token),
        "big.bin",
        "application/octet-stream",
        vec![7; LIMIT + 1],
    )
    .await;
    // The refused body was not read whole: the answer closes the connection, and
    // says so, so the next request does not race the close on it.
    assert_eq!(big.headers()[header::CONNECTION], "close");
    let problem = expect_problem(big, StatusCode::PAYLOAD_TOO_LARGE, "file_too_large").await;
    assert!(problem["detail"].as_str().unwrap().contains(&LIMIT.to_string()));
    let just_fits = upload(&app, &key, Some(&token), "fits.bin", "", vec![7; LIMIT]).await;
    let fits = ok_json(just_fits, StatusCode::CREATED).await;
    let got = app
        .request(Method::GET, &link_path(fits["url"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(got.headers()[header::CONTENT_TYPE], "application/octet-stream");
    assert_eq!(got.bytes().await.unwrap().len(), LIMIT);
    let empty = upload(&app, &key, Some(&token), "empty.txt", "text/plain", Vec::new()).await;
    let problem = expect_problem(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["file"]);
    let nameless = upload(&app, &key, Some(&token), " ", "text/plain", b"x".to_vec()).await;
    let problem = expect_problem(nameless, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["name"]);
    let anonymous = upload(&app, &key, None, "a.txt", "text/plain", b"x".to_vec()).await;
    expect_problem(anonymous, StatusCode::UNAUTHORIZED, "missing_visitor_token").await;
    let wrong = upload(&app, &key, Some("vt_nope"), "a.txt", "text/plain", b"x".to_vec()).await;
    expect_problem(wrong, StatusCode::UNAUTHORIZED, "invalid_visitor").await;

    // An agent sends a file from the inbox's form and returns to the view.
    let back = format!("/inbox?status=UNREAD&c={customer}");
    let form = post_form(
        &app,
        Some(&agent),
        &customer,
        inbox_form(&back, "label.pdf", "application/pdf", b"%PDF-1.4 label"),
    )
    .await;
    assert_eq!(form.status(), StatusCode::SEE_OTHER);
    assert_eq!(form.headers()[header::LOCATION], back.as_str());
    let seen = app
        .request(Method::GET, "/rest/v1/widget/message")
        .header("rapport-widget-key", &key)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let seen = ok_json(seen, StatusCode::OK).await;
    let newest = &seen["results"][0];
    assert_eq!(
        (newest["type"].as_str(), newest["direction"].as_str()),
        (Some("FILE"), Some("OUTBOUND"))
    );
    assert_eq!(newest["message"], "label.pdf");
    let got = app
        .request(Method::GET, &link_path(newest["url"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(got.bytes().await.unwrap().as_ref(), b"%PDF-1.4 label");

    // A file at the limit goes through the form, whose own fields come on top.
    let form = post_form(
        &app,
        Some(&agent),
        &customer,
        inbox_form(&back, "full.bin", "application/octet-stream", &vec![2; LIMIT]),
    )
    .await;
    assert_eq!(form.headers()[header::LOCATION], back.as_str());

    // The form's refusals come back to the conversation, with a reason.
    let form = post_form(
        &app,
        Some(&agent),
        &customer,
        inbox_form(&back, "big.bin", "application/octet-stream", &vec![1; LIMIT + 1]),
    )
    .await;
    assert_eq!(form.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        form.headers()[header::LOCATION].to_str().unwrap(),
        format!("{back}&file_error=file_too_large")
    );
    // Nowhere but the inbox, whatever `back` says.
    let form = post_form(
        &app,
        Some(&agent),
        &customer,
        inbox_form("https://evil.example/", "a.txt", "text/plain", b"a"),
    )
    .await;
    assert_eq!(form.headers()[header::LOCATION], "/inbox");
    // Another tenant's agent, and nobody signed in, send nothing.
    let theirs = post_form(
        &app,
        Some(&stranger),
        &customer,
        inbox_form(&back, "a.txt", "text/plain", b"a"),
    )
    .await;
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    let anonymous = post_form(&app, None, &customer, inbox_form(&back, "a.txt", "text/plain", b"a")).await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers()[header::LOCATION], "/login");

    // Files go with their customer.
    let deleted = send(&app, Method::DELETE, &format!("/rest/v1/customer/{customer}"), &t, None).await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let gone = app.request(Method::GET, &link_path(&url)).send().await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

async fn a_server_without_files_says_so(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.max_file_bytes = 0).await;
    let (_, t) = app.tenant_with_key("NoFiles").await;
    let key = app.widget_key(&t).await;
    let config = app
        .request(Method::GET, "/rest/v1/widget/config")
        .header("rapport-widget-key", &key)
        .send()
        .await
        .unwrap();
    let config: Value = ok_json(config, StatusCode::OK).await;
    assert_eq!(config["maxFileBytes"], 0, "the widget hides its attach button");
    let (_, token) = app.widget_visitor(&key, "Fay").await;
    let refused = upload(&app, &key, Some(&token), "a.txt", "text/plain", b"a".to_vec()).await;
    expect_problem(refused, StatusCode::PAYLOAD_TOO_LARGE, "file_too_large").await;
    app.stop().await;
}

/// A visitor's widget message of `kind` with `url`.
async fn visitor_attachment(app: &TestApp, key: &str, token: &str, kind: &str, url: &str) -> reqwest::Response {
    app.request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", key)
        .bearer_auth(token)
        .json(&serde_json::json!({"type": kind, "url": url, "message": "invoice.pdf"}))
        .send()
        .await
        .unwrap()
}

async fn a_visitor_attaches_only_files_they_uploaded(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Files").await;
    let key = app.widget_key(&t).await;
    let (customer, token) = app.widget_visitor(&key, "Fay").await;
    let (_, other_token) = app.widget_visitor(&key, "Mallory").await;

    // A link to anywhere is no attachment: the inbox would show it as one.
    for kind in ["FILE", "AUDIO", "VIDEO"] {
        let forged = visitor_attachment(&app, &key, &token, kind, "https://evil.example/invoice.pdf").await;
        let problem = expect_problem(forged, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert_eq!(fields(&problem), ["url"]);
        assert_eq!(problem["errors"][0]["code"], "not_uploaded");
    }
    let uploaded = upload(
        &app,
        &key,
        Some(&token),
        "invoice.pdf",
        "application/pdf",
        b"%PDF-1.4".to_vec(),
    )
    .await;
    let url = ok_json(uploaded, StatusCode::CREATED).await["url"]
        .as_str()
        .unwrap()
        .to_string();
    // Nor is another visitor's file, even with its link.
    let borrowed = visitor_attachment(&app, &key, &other_token, "FILE", &url).await;
    expect_problem(borrowed, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    // The visitor's own file may be sent again.
    let again = visitor_attachment(&app, &key, &token, "FILE", &url).await;
    assert_eq!(ok_json(again, StatusCode::CREATED).await["url"], url.as_str());
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        history["results"].as_array().unwrap().len(),
        2,
        "the upload and the resend, nothing forged: {history}"
    );
    app.stop().await;
}

backend_tests!(
    visitors_and_agents_send_files,
    a_server_without_files_says_so,
    a_visitor_attaches_only_files_they_uploaded,
);
