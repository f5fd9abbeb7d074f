//! Nobody speaks as someone else: a visitor's `externalId` and `email` count
//! only when the workspace's site signed them (`GET /widget/identity`), and the
//! tags a page sets are kept apart from those agents and integrations set.

use rapport_core::{backend_tests, customers::identity_signature, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn_ok, session},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

struct Widget<'a> {
    app: &'a TestApp,
    key: String,
}

impl Widget<'_> {
    async fn start(&self, body: Value) -> reqwest::Response {
        self.app
            .request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", &self.key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// Starts a visitor: `(customer id, visitor token)`.
    async fn started(&self, body: Value) -> (String, String) {
        let identity = ok_json(self.start(body).await, StatusCode::CREATED).await;
        (
            identity["customerId"].as_str().unwrap().to_string(),
            identity["visitorToken"].as_str().unwrap().to_string(),
        )
    }

    async fn identify(&self, token: &str, body: Value) -> reqwest::Response {
        self.app
            .request(Method::POST, "/rest/v1/widget/profile")
            .header("rapport-widget-key", &self.key)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// The texts of the visitor's conversation, oldest first.
    async fn messages(&self, token: &str) -> Vec<String> {
        let response = self
            .app
            .request(Method::GET, "/rest/v1/widget/message")
            .header("rapport-widget-key", &self.key)
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let page = ok_json(response, StatusCode::OK).await;
        let mut texts: Vec<String> = page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["message"].as_str().unwrap_or_default().to_string())
            .collect();
        texts.reverse();
        texts
    }
}

async fn customer(app: &TestApp, key: &str, id: &str) -> reqwest::Response {
    app.get(&format!("/rest/v1/customer/{id}"), key).await
}

async fn a_visitor_is_who_the_site_signed_and_otherwise_only_claims_it(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Signed").await;
    let w = Widget {
        app: &app,
        key: app.widget_key(&t).await,
    };
    let settings = ok_json(app.get("/rest/v1/widget/identity", &t).await, StatusCode::OK).await;
    assert_eq!(settings, json!({"required": false, "secret": null}));

    // Mallory claims to be the shop's customer CRM-1042 and its CEO before the
    // real one ever shows up. It stays a claim: no customer gets that id.
    let (mallory, mallory_token) = w
        .started(json!({"firstName": "Mallory", "externalId": "CRM-1042", "email": "ceo@customer.com"}))
        .await;
    let claimed = ok_json(customer(&app, &t, &mallory).await, StatusCode::OK).await;
    assert_eq!(claimed["externalId"], Value::Null);
    assert_eq!(claimed["email"], Value::Null);
    assert_eq!(claimed["claimedExternalId"], "CRM-1042");
    assert_eq!(claimed["claimedEmail"], "ceo@customer.com");
    assert_eq!(claimed["identityVerified"], false);
    assert_eq!(claimed["firstName"], "Mallory", "names are the visitor's to give");

    // The shop's integration knows CRM-1042 and writes to them: Mallory does not
    // hear it.
    let real = ok_json(
        app.post(
            "/rest/v1/customer",
            &t,
            json!({"externalId": "CRM-1042", "firstName": "Rita"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let real_id = real["id"].as_str().unwrap().to_string();
    ok_json(
        app.post(
            "/rest/v1/message",
            &t,
            json!({"customerId": "CRM-1042", "isExternalId": true, "type": "MESSAGE", "message": "Your invoice is ready"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert!(
        w.messages(&mallory_token).await.is_empty(),
        "a claim reaches nobody's messages"
    );

    // Signatures need the workspace's secret; a wrong one is refused on its field.
    let secret = ok_json(
        app.post("/rest/v1/widget/identity/rotate", &t, json!({})).await,
        StatusCode::OK,
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(secret.starts_with("is_"));
    let forged = identity_signature("is_guessed", Some("CRM-1042"), Some("rita@customer.com"));
    let refused = w
        .start(json!({"externalId": "CRM-1042", "email": "rita@customer.com", "identitySignature": forged}))
        .await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["identitySignature"]);
    assert_eq!(problem["errors"][0]["code"], "signature_mismatch");
    // A signature of other values does not carry over to these.
    let other = identity_signature(&secret, Some("CRM-1042"), None);
    let refused = w
        .start(json!({"externalId": "CRM-1042", "email": "ceo@customer.com", "identitySignature": other}))
        .await;
    expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;

    // Rita signs in on the shop, which signs her identity: she is the customer
    // the integration wrote to, and reads its message.
    let signature = identity_signature(&secret, Some("CRM-1042"), Some("rita@customer.com"));
    let (rita, laptop) = w
        .started(json!({"externalId": "CRM-1042", "email": "rita@customer.com", "identitySignature": signature}))
        .await;
    assert_eq!(rita, real_id, "the same customer, not a new one");
    assert_eq!(w.messages(&laptop).await, ["Your invoice is ready"]);
    let verified = ok_json(customer(&app, &t, &rita).await, StatusCode::OK).await;
    assert_eq!(verified["identityVerified"], true);
    assert_eq!(verified["email"], "rita@customer.com");
    assert_eq!(verified["firstName"], "Rita", "fields left out are kept");

    // On her phone she starts anonymously, then the page names her: the
    // visitor becomes Rita, and the empty customer it started as is gone.
    let (phone_customer, phone) = w.started(json!({})).await;
    // A profile refused for a field moves nothing.
    let refused = w
        .identify(
            &phone,
            json!({"externalId": "CRM-1042", "email": "rita@customer.com", "identitySignature": signature, "lastName": "x".repeat(201)}),
        )
        .await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["lastName"]);
    assert!(w.messages(&phone).await.is_empty(), "still the phone's own customer");
    let named = ok_json(
        w.identify(
            &phone,
            json!({"externalId": "CRM-1042", "email": "rita@customer.com", "identitySignature": signature}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(named, json!({"customerId": rita, "identityVerified": true}));
    assert_eq!(w.messages(&phone).await, ["Your invoice is ready"]);
    assert_eq!(w.messages(&laptop).await, ["Your invoice is ready"], "both devices");
    assert_eq!(
        customer(&app, &t, &phone_customer).await.status(),
        StatusCode::NOT_FOUND
    );

    // Someone else signs in on the shop on Rita's laptop: a customer of their
    // own, and Rita keeps hers.
    let sam = identity_signature(&secret, Some("CRM-2000"), None);
    let switched = ok_json(
        w.identify(&laptop, json!({"externalId": "CRM-2000", "identitySignature": sam}))
            .await,
        StatusCode::OK,
    )
    .await;
    let sam_id = switched["customerId"].as_str().unwrap().to_string();
    assert_ne!(sam_id, rita);
    assert!(w.messages(&laptop).await.is_empty(), "not Rita's conversation");
    let sam = ok_json(customer(&app, &t, &sam_id).await, StatusCode::OK).await;
    assert_eq!(
        (&sam["externalId"], &sam["identityVerified"]),
        (&json!("CRM-2000"), &json!(true))
    );
    let rita_now = ok_json(customer(&app, &t, &rita).await, StatusCode::OK).await;
    assert_eq!(rita_now["externalId"], "CRM-1042");
    assert_eq!(w.messages(&phone).await, ["Your invoice is ready"]);

    // Mallory's later claim stays one too, even of an id that exists now.
    let claimed = ok_json(
        w.identify(&mallory_token, json!({"externalId": "CRM-1042"})).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(claimed, json!({"customerId": mallory, "identityVerified": false}));

    // The agent sees the difference in the inbox.
    app.user(&tenant, "agent@example.com", Role::Agent, false).await;
    let agent = session(&app, "agent@example.com").await;
    let thread = server_fn_ok(&app, "inbox_thread", &agent, &[("customer_id", &mallory)]).await;
    assert_eq!(thread["identity_verified"], false);
    assert_eq!(
        thread["claims"],
        json!([["e-mail", "ceo@customer.com"], ["customer id", "CRM-1042"]])
    );
    let html = page(&app, &format!("/inbox/{mallory}"), &agent)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("Unverified: "), "claims are marked");
    let html = page(&app, &format!("/inbox/{rita}"), &agent)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("Identity verified by your website"));

    // Required: unsigned identities are refused, anonymous visitors still chat.
    let required = ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/widget/identity",
            &t,
            Some(json!({"required": true})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        required,
        json!({"required": true, "secret": secret}),
        "the secret is kept"
    );
    let refused = w.start(json!({"email": "someone@example.com"})).await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(problem["errors"][0]["code"], "signature_required");
    assert_eq!(fields(&problem), ["identitySignature"]);
    let refused = w.identify(&mallory_token, json!({"email": "ceo@customer.com"})).await;
    expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    w.started(json!({"firstName": "Anna"})).await;

    // A new secret: the old signatures stop working.
    let rotated = ok_json(
        app.post("/rest/v1/widget/identity/rotate", &t, json!({})).await,
        StatusCode::OK,
    )
    .await;
    assert_ne!(rotated["secret"], secret.as_str());
    let stale = w
        .start(json!({"externalId": "CRM-1042", "email": "rita@customer.com", "identitySignature": signature}))
        .await;
    expect_problem(stale, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let audit = ok_json(
        app.get("/rest/v1/audit?action=identity.rotate_secret", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["page"]["totalElements"], 2);
    assert!(
        !audit.to_string().contains(rotated["secret"].as_str().unwrap()),
        "never the secret"
    );

    // Another workspace's secret is its own, and agents cannot read it.
    let (_, other_key) = app.tenant_with_key("Other").await;
    let theirs = ok_json(app.get("/rest/v1/widget/identity", &other_key).await, StatusCode::OK).await;
    assert_eq!(theirs["secret"], Value::Null);
    let refused = crate::dashboard::server_fn(&app, "update_identity", &agent, &[("required", "on")]).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}

/// Any page can tag its visitor "vip": a rule that trusts only agents' and
/// integrations' tags is not fooled, one that reads the page's tags matches.
async fn routing_rules_say_whose_tags_they_trust(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Tags").await;
    let agent = app.user(&tenant, "vip-desk@example.com", Role::Agent, false).await;
    let w = Widget {
        app: &app,
        key: app.widget_key(&t).await,
    };
    let rule = |name: &str, source: &str, tag: &str| {
        json!({
            "name": name,
            "types": ["CHAT"],
            "conditions": [{"type": "HAS_TAG", "tags": [tag], "source": source}],
            "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": agent}}]
        })
    };
    let trusted = ok_json(
        app.post("/rest/v1/rule/routing", &t, rule("VIP desk", "TRUSTED", "vip"))
            .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(trusted["conditions"][0]["source"], "TRUSTED");
    ok_json(
        app.post("/rest/v1/rule/routing", &t, rule("Checkout help", "PAGE", "checkout"))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let bad = app
        .post("/rest/v1/rule/routing", &t, rule("Bad", "SOMEONE", "vip"))
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // The first rule that matches is the one that routed.
    let routed_by = |customer: String| {
        let app = &app;
        let t = &t;
        async move {
            let decisions = ok_json(
                app.get(&format!("/rest/v1/conversation/{customer}/routing"), t).await,
                StatusCode::OK,
            )
            .await;
            decisions[0]["ruleNames"].clone()
        }
    };
    let write = |token: String| {
        let w = &w;
        async move {
            let sent = w
                .app
                .request(Method::POST, "/rest/v1/widget/message")
                .header("rapport-widget-key", &w.key)
                .bearer_auth(&token)
                .json(&json!({"message": "Hello"}))
                .send()
                .await
                .unwrap();
            ok_json(sent, StatusCode::CREATED).await;
        }
    };
    let tag = |token: String, tags: Value| {
        let w = &w;
        async move {
            let tagged = w
                .app
                .request(Method::POST, "/rest/v1/widget/tags")
                .header("rapport-widget-key", &w.key)
                .bearer_auth(&token)
                .json(&json!({"tags": tags}))
                .send()
                .await
                .unwrap();
            ok_json(tagged, StatusCode::OK).await
        }
    };

    // The page says "vip" and "checkout": only the page's rule believes it.
    let (pretender, token) = w.started(json!({"firstName": "Pat"})).await;
    assert_eq!(
        tag(token.clone(), json!(["vip", "checkout"])).await["tags"],
        json!(["vip", "checkout"])
    );
    write(token).await;
    assert_eq!(routed_by(pretender).await, json!(["Checkout help"]));

    // An integration tags its real VIP: the trusted rule routes them.
    let (vip, token) = w.started(json!({"firstName": "Vic"})).await;
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/customer/{vip}"),
            &t,
            Some(json!({"firstName": "Vic", "tags": ["vip"]})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    write(token).await;
    assert_eq!(routed_by(vip).await, json!(["VIP desk"]));
}

backend_tests!(
    a_visitor_is_who_the_site_signed_and_otherwise_only_claims_it,
    routing_rules_say_whose_tags_they_trust,
);
