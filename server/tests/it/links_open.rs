//! Every link Rapport hands out opens the page it names: the Conversation `url` of
//! webhooks, the join link in invitation mails and appointments, the co-browsing
//! host and join links, and the live-view link. Each is followed as a browser
//! would (redirects, cookies) through the real router, from the absolute URL it was
//! handed out as.

use std::{collections::BTreeMap, time::Duration};

use rapport_core::{backend_tests, model::PageRequest, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    receiver::Receiver,
    utils::{ok_json, TestApp},
    webhooks::subscribe,
};

/// What `ServeConfig::for_tests` sets as `RAPPORT_PUBLIC_URL`: every link starts so.
const PUBLIC: &str = "http://rapport.test";

/// A browser: it keeps cookies and follows redirects.
struct Browser<'a> {
    app: &'a TestApp,
    cookies: BTreeMap<String, String>,
}

/// Where following a link ended.
struct Landing {
    /// Every path visited, the link's first.
    path: Vec<String>,
    status: StatusCode,
    html: String,
}

impl Landing {
    fn last(&self) -> &str {
        self.path.last().map(String::as_str).unwrap_or_default()
    }
}

impl<'a> Browser<'a> {
    fn new(app: &'a TestApp) -> Self {
        Browser {
            app,
            cookies: BTreeMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep_cookies(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all(header::SET_COOKIE) {
            let pair = value.to_str().unwrap().split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_string(), value.to_string());
                }
            }
        }
    }

    /// Sends `request` and follows its redirects (at most 5) with GETs.
    async fn follow(&mut self, method: Method, path: &str, form: Option<&[(&str, &str)]>) -> Landing {
        let mut visited = vec![path.to_string()];
        let mut request = self
            .app
            .request(method, path)
            .header(header::ACCEPT, "text/html,application/xhtml+xml")
            .header(header::COOKIE, self.cookie_header());
        if let Some(form) = form {
            request = request.form(form);
        }
        let mut response = request.send().await.unwrap();
        for _ in 0..5 {
            self.keep_cookies(&response);
            if !response.status().is_redirection() {
                break;
            }
            let location = response.headers()[header::LOCATION].to_str().unwrap().to_string();
            let next = location.strip_prefix(PUBLIC).unwrap_or(&location).to_string();
            assert!(next.starts_with('/'), "a redirect within Rapport: {location}");
            visited.push(next.clone());
            response = self
                .app
                .request(Method::GET, &next)
                .header(header::ACCEPT, "text/html,application/xhtml+xml")
                .header(header::COOKIE, self.cookie_header())
                .send()
                .await
                .unwrap();
        }
        let status = response.status();
        let html = response.text().await.unwrap();
        Landing {
            path: visited,
            status,
            html,
        }
    }

    /// Opens a link as handed out (absolute, under the public URL).
    async fn open(&mut self, link: &str) -> Landing {
        let path = link
            .strip_prefix(PUBLIC)
            .unwrap_or_else(|| panic!("{link} is under RAPPORT_PUBLIC_URL ({PUBLIC})"));
        self.follow(Method::GET, path, None).await
    }
}

/// Asserts that a landing is a page that shows `expected`.
#[track_caller]
fn assert_page(landing: &Landing, expected: &[&str]) {
    assert_eq!(
        landing.status,
        StatusCode::OK,
        "{:?} ended in {}: {}",
        landing.path,
        landing.status,
        landing.html
    );
    for text in expected {
        assert!(
            landing.html.contains(text),
            "{:?} shows {text:?}: {}",
            landing.path,
            landing.html
        );
    }
}

/// The `value` of the login form's hidden `next` field.
fn next_field(html: &str) -> String {
    let at = html.find("name=\"next\"").expect("the login form has a next field");
    let rest = &html[at..];
    let value = rest
        .split("value=\"")
        .nth(1)
        .expect("a value")
        .split('"')
        .next()
        .unwrap();
    value.replace("&amp;", "&")
}

/// Every string in `value` that is a link under the public URL.
fn links_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s.starts_with(PUBLIC) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| links_in(v, out)),
        Value::Object(map) => map.values().for_each(|v| links_in(v, out)),
        _ => {}
    }
}

/// Every link under the public URL in a plain-text mail.
fn links_in_text(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| w.starts_with(PUBLIC))
        .map(|w| w.trim_end_matches(['.', ',', ')']).to_string())
        .collect()
}

async fn conversation_links_open_the_conversation(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "agent@alpha.test", Role::Agent, false).await;
    let receiver = Receiver::start().await;
    subscribe(
        &app,
        &t,
        &receiver.url,
        &["conversation.created", "conversation.status_changed"],
    )
    .await;
    let eve = ok_json(
        app.post("/rest/v1/customer", &t, json!({"firstName": "Eve", "lastName": "Ng"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let eve = eve["id"].as_str().unwrap().to_string();
    let status = json!({"status": "UNRESOLVED"});
    let changed = app
        .request(Method::PUT, &format!("/rest/v1/conversation/{eve}/status"))
        .bearer_auth(&t)
        .json(&status)
        .send()
        .await
        .unwrap();
    ok_json(changed, StatusCode::OK).await;

    let mut links = Vec::new();
    for delivery in receiver.wait_for(2, Duration::from_secs(10)).await {
        links_in(&delivery.json(), &mut links);
    }
    let expected = format!("{PUBLIC}/inbox/{eve}");
    assert!(
        !links.is_empty() && links.iter().all(|l| *l == expected),
        "the Conversation objects link to {expected}: {links:?}"
    );

    for link in links {
        // Signed out: the login page, which leads back to the conversation.
        let mut browser = Browser::new(&app);
        let login = browser.open(&link).await;
        assert!(
            login.last().starts_with("/login?next="),
            "{link} sends a stranger to the login page: {:?}",
            login.path
        );
        assert_page(&login, &["Sign in to Rapport"]);
        let next = next_field(&login.html);
        assert_eq!(next, format!("/inbox/{eve}"), "the login page leads back");
        let form = [
            ("email", "agent@alpha.test"),
            ("password", "password-123"),
            ("workspace", ""),
            ("next", next.as_str()),
        ];
        let signed_in = browser.follow(Method::POST, "/auth/login", Some(&form)).await;
        assert_eq!(signed_in.last(), format!("/inbox/{eve}"), "{:?}", signed_in.path);
        assert_page(&signed_in, &["<h2 id=\"thread-title\">Eve Ng</h2>"]);

        // Signed in already: the conversation at once.
        let again = browser.open(&link).await;
        assert_eq!(again.path, [format!("/inbox/{eve}")]);
        assert_page(&again, &["<h2 id=\"thread-title\">Eve Ng</h2>"]);
    }
}

async fn handed_out_links_open_their_pages(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "agent@alpha.test", Role::Agent, false).await;

    // An appointment: its join link, in the answer and in every invitation mail.
    let starts = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    let appointment = ok_json(
        app.post(
            "/rest/v1/appointment",
            &t,
            json!({"title": "Contract review", "date": starts, "attendees": ["client@example.org"], "sendInviteEmail": true}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let mut links = Vec::new();
    links_in(&appointment, &mut links);
    let mails = app.services.list_mail(&tenant, &PageRequest::default()).await.unwrap();
    assert_eq!(mails.results.len(), 1, "one invitation");
    let in_mail = links_in_text(&mails.results[0].body);
    assert_eq!(in_mail, links, "the invitation carries the join link");
    links.extend(in_mail);
    assert!(
        links.iter().all(|l| l.starts_with(&format!("{PUBLIC}/join/"))),
        "{links:?}"
    );
    for link in &links {
        let page = Browser::new(&app).open(link).await;
        assert_eq!(page.path.len(), 1, "no redirect: {:?}", page.path);
        assert_page(&page, &["Contract review", "The conference has not opened yet."]);
    }

    // Co-browsing: the host's link and the joiners'.
    let cobrowse = ok_json(
        app.post(
            "/rest/v1/cobrowsing/link",
            &t,
            json!({"url": "https://shop.example.com/checkout", "userEmail": "agent@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let host = Browser::new(&app).open(cobrowse["hostLink"].as_str().unwrap()).await;
    assert_page(
        &host,
        &["You are hosting this session", "https://shop.example.com/checkout"],
    );
    let join = Browser::new(&app).open(cobrowse["joinLink"].as_str().unwrap()).await;
    assert_page(
        &join,
        &["You are joining a session", "https://shop.example.com/checkout"],
    );

    // Live view: the link redirects to the live view of its session, which opens.
    ok_json(
        app.post(
            "/rest/v1/session",
            &t,
            json!({"id": "s1", "visitorId": "visitor-7", "startedAt": chrono::Utc::now().to_rfc3339()}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let live = ok_json(
        app.post(
            "/rest/v1/liveview/link",
            &t,
            json!({"sessionId": "s1", "email": "agent@alpha.test"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let mut browser = Browser::new(&app);
    let link = live["link"].as_str().unwrap();
    let shown = browser.open(link).await;
    assert_page(&shown, &["Open the live view"]);
    let token = link.split("token=").nth(1).unwrap();
    let view = browser
        .follow(Method::POST, "/liveview/open", Some(&[("token", token)]))
        .await;
    assert!(
        view.path.len() == 2 && view.last().starts_with("/liveview/s1"),
        "the live-view link redirects to its session's live view: {:?}",
        view.path
    );
    assert_page(&view, &["visitor-7"]);
}

backend_tests!(
    conversation_links_open_the_conversation,
    handed_out_links_open_their_pages
);
