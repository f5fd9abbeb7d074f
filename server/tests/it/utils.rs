//! Test helpers: start the app on port 0, talk to it with reqwest.

use rapport_core::{
    audit::Actor,
    db::Db,
    ids::{TenantId, UserId},
    model::Role,
    tenants::NewTenant,
    testing::TestDb,
    users::NewUser,
    Services,
};
use rapport_server::{config::ServeConfig, serve};
use reqwest::{Method, Response, StatusCode};
use serde_json::Value;
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

/// The actor of test set-up writes.
pub fn actor() -> Actor {
    Actor::system("tests")
}

/// A running app.
pub struct TestApp {
    pub base: String,
    /// The public URL's origin, as the dashboard's pages send it in `Origin`
    /// (the client sends it by default, as a browser on Rapport's pages would).
    pub origin: String,
    pub services: Services,
    pub client: reqwest::Client,
    /// The workspaces' shares of this instance for public requests.
    pub shares: std::sync::Arc<rapport_server::http::fair_share::PublicShares>,
    /// The database's URL, for another instance on it.
    url: String,
    /// The test database, dropped with the app that created it.
    _db: Option<TestDb>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<anyhow::Result<()>>>,
}

impl TestApp {
    /// Starts the app with test settings.
    pub async fn start(db: TestDb) -> TestApp {
        Self::start_with(db, |_| {}).await
    }

    /// Starts the app after `configure` adjusts the settings.
    pub async fn start_with(db: TestDb, configure: impl FnOnce(&mut ServeConfig)) -> TestApp {
        let services = db.services();
        let url = db.url.clone();
        Self::launch(url, services, Some(db), configure).await
    }

    /// Starts the app on `services` (opened on `db` with settings of their own).
    pub async fn start_on(db: TestDb, services: Services) -> TestApp {
        let url = db.url.clone();
        Self::launch(url, services, Some(db), |_| {}).await
    }

    /// A second instance of the app on the same database, with its own pool
    /// and in-process state, as a scaled-out installation runs them (sharing
    /// the media store, as they must).
    pub async fn another_instance(&self) -> TestApp {
        let db = Db::connect(&self.url).await.unwrap();
        let services = Services::new(db).with_media_store(self.services.media().clone());
        Self::launch(self.url.clone(), services, None, |_| {}).await
    }

    async fn launch(
        url: String,
        services: Services,
        db: Option<TestDb>,
        configure: impl FnOnce(&mut ServeConfig),
    ) -> TestApp {
        let mut config = ServeConfig::for_tests(&url);
        configure(&mut config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        // Other instances relay co-browsing participants to this address.
        config.instance_url.get_or_insert_with(|| base.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let origin = config.public_url();
        let state = serve::state(config, services.clone());
        let shares = state.shares.clone();
        let handle = tokio::spawn(serve::serve(listener, state, async {
            let _ = rx.await;
        }));
        let mut same_origin = reqwest::header::HeaderMap::new();
        same_origin.insert(reqwest::header::ORIGIN, origin.parse().unwrap());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(same_origin)
            .build()
            .unwrap();
        TestApp {
            base,
            origin,
            services,
            client,
            shares,
            url,
            _db: db,
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// A request to `path` (relative to the base URL).
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{}", self.base, path))
    }

    /// GET with a bearer token.
    pub async fn get(&self, path: &str, token: &str) -> Response {
        self.request(Method::GET, path).bearer_auth(token).send().await.unwrap()
    }

    /// POST JSON with a bearer token.
    pub async fn post(&self, path: &str, token: &str, body: Value) -> Response {
        self.request(Method::POST, path)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// A tenant with an API key; returns `(tenant id, token)`.
    pub async fn tenant_with_key(&self, name: &str) -> (TenantId, String) {
        let tenant = self
            .services
            .create_tenant(
                NewTenant {
                    name: Some(name.into()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        let key = self
            .services
            .create_api_key(&tenant.id, "tests", &actor())
            .await
            .unwrap();
        (tenant.id, key.token)
    }

    /// The widget key of the tenant of API key `token`.
    pub async fn widget_key(&self, token: &str) -> String {
        ok_json(self.get("/rest/v1/widget/key", token).await, StatusCode::OK).await["widgetKey"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Starts a widget visitor named `first_name`: `(customer id, visitor token)`.
    pub async fn widget_visitor(&self, widget_key: &str, first_name: &str) -> (String, String) {
        let started = self
            .request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", widget_key)
            .json(&serde_json::json!({"firstName": first_name}))
            .send()
            .await
            .unwrap();
        let identity = ok_json(started, StatusCode::CREATED).await;
        (
            identity["customerId"].as_str().unwrap().to_string(),
            identity["visitorToken"].as_str().unwrap().to_string(),
        )
    }

    /// A user in `tenant_id` with password `password-123`.
    pub async fn user(&self, tenant_id: &TenantId, email: &str, role: Role, platform_admin: bool) -> UserId {
        self.create_user(tenant_id, email, role, platform_admin, None).await
    }

    /// An agent in `tenant_id` shown as `name` (visitors see display names),
    /// with password `password-123`.
    pub async fn named_agent(&self, tenant_id: &TenantId, email: &str, name: &str) -> UserId {
        self.create_user(tenant_id, email, Role::Agent, false, Some(name.into()))
            .await
    }

    async fn create_user(
        &self,
        tenant_id: &TenantId,
        email: &str,
        role: Role,
        platform_admin: bool,
        display_name: Option<String>,
    ) -> UserId {
        self.services
            .create_user(
                NewUser {
                    tenant_id: tenant_id.clone(),
                    email: email.into(),
                    password: Some("password-123".into()),
                    role,
                    display_name,
                    platform_admin,
                },
                &actor(),
            )
            .await
            .unwrap()
            .id
    }

    /// A platform key of a new platform admin.
    pub async fn platform_key(&self) -> String {
        let (tenant, _) = self.tenant_with_key("Operators").await;
        let user = self.user(&tenant, "ops@example.com", Role::Admin, true).await;
        self.services
            .create_platform_key(&user, "ops", &actor())
            .await
            .unwrap()
            .token
    }

    /// Stops the app, waiting for in-flight requests.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.unwrap().unwrap();
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Asserts the status and that the body is problem+json with `code`; returns the body.
#[track_caller]
pub fn assert_problem(status: StatusCode, content_type: Option<&str>, body: &Value, expected: StatusCode, code: &str) {
    assert_eq!(status, expected, "body: {body}");
    assert_eq!(content_type, Some("application/problem+json"), "body: {body}");
    assert_eq!(body["code"], code, "body: {body}");
    assert_eq!(body["status"], expected.as_u16(), "body: {body}");
    assert!(
        body["type"]
            .as_str()
            .unwrap_or_default()
            .starts_with("urn:rapport:problem:"),
        "body: {body}"
    );
}

/// Reads status, content type and JSON body of a problem answer and checks them.
pub async fn expect_problem(response: Response, expected: StatusCode, code: &str) -> Value {
    let status = response.status();
    let ct = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_problem(status, ct.as_deref(), &body, expected, code);
    body
}

/// Sends a request with a bearer token and an optional JSON body.
pub async fn send(app: &TestApp, method: Method, path: &str, token: &str, body: Option<Value>) -> reqwest::Response {
    let mut req = app.request(method, path).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap()
}

/// Asserts the status and returns the JSON body.
pub async fn ok_json(response: reqwest::Response, expected: StatusCode) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(status, expected, "{body}");
    body
}

/// GETs `path` until `ready` holds for its JSON, for at most 10 s (work the
/// server does in the background); returns the last answer either way.
pub async fn poll_json(app: &TestApp, path: &str, token: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let body = ok_json(app.get(path, token).await, StatusCode::OK).await;
        if ready(&body) || std::time::Instant::now() > deadline {
            return body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The `field` of each error of a problem body.
pub fn fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_string())
        .collect()
}

/// Reads a streamed response (server-sent events) until `needle` shows, within
/// `within` in all: keep-alive comments do not extend the wait. Returns what
/// was read.
pub async fn read_until(stream: &mut Response, needle: &str, within: std::time::Duration) -> String {
    let deadline = tokio::time::Instant::now() + within;
    let mut seen = String::new();
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("{needle:?} within {within:?}; got {seen:?}"))
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    seen
}

/// Follows a live-view link as its addressee does: the link's page (a GET,
/// which spends nothing), then its button. Returns the button's answer.
pub async fn open_liveview_link(app: &TestApp, link: &str) -> Response {
    let path = link.trim_start_matches("http://rapport.test");
    let shown = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(shown.status(), StatusCode::OK, "the link's page");
    let token = path.trim_start_matches("/liveview/open?token=");
    app.request(Method::POST, "/liveview/open")
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
}
