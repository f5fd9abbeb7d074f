//! Requests an outside fuzzer of the published document found the document and
//! the server disagreeing on. Each case states what the document says of it, checks
//! that the document still says so, and that the server agrees: what the document
//! calls valid is served, what it calls invalid is refused with 422.

use super::*;

/// One request, and whether the document calls it valid.
struct Finding {
    method: Method,
    /// The document's path (`/customer/{id}`): the operation whose schemas judge it.
    operation: &'static str,
    /// The path sent.
    path: String,
    query: Vec<(&'static str, String)>,
    body: Option<Value>,
    valid: bool,
}

impl Finding {
    fn new(method: Method, operation: &'static str, valid: bool) -> Finding {
        Finding {
            method,
            operation,
            path: format!("/rest/v1{operation}"),
            query: Vec::new(),
            body: None,
            valid,
        }
    }

    fn at(mut self, path: String) -> Finding {
        self.path = path;
        self
    }

    fn query(mut self, name: &'static str, value: impl ToString) -> Finding {
        self.query.push((name, value.to_string()));
        self
    }

    fn body(mut self, body: Value) -> Finding {
        self.body = Some(body);
        self
    }

    /// Whether the document's schemas accept the request's query and body.
    fn documented_valid(&self, doc: &mut Doc) -> bool {
        let path = format!("/rest/v1{}", self.operation);
        let op = doc.doc["paths"][path.as_str()][self.method.as_str().to_lowercase()].clone();
        assert!(op.is_object(), "{} {} is documented", self.method, self.operation);
        let parameters = op["parameters"].as_array().cloned().unwrap_or_default();
        let query_valid = self.query.iter().all(|(name, text)| {
            let parameter = parameters
                .iter()
                .find(|p| p["in"] == "query" && p["name"] == *name)
                .unwrap_or_else(|| panic!("{} takes ?{name}", self.operation));
            // A query value is text; the schema judges what it spells.
            let value = serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_number() || v.is_boolean())
                .unwrap_or_else(|| Value::String(text.clone()));
            doc.is_valid(&parameter["schema"], &value)
        });
        let body_valid = match (&self.body, op.pointer("/requestBody/content/application~1json/schema")) {
            (Some(body), Some(schema)) => doc.is_valid(&schema.clone(), body),
            (Some(_), None) => panic!("{} takes no JSON body", self.operation),
            (None, _) => true,
        };
        query_valid && body_valid
    }
}

async fn the_fuzzers_findings_agree(db: TestDb) {
    let app = TestApp::start(db).await;
    let document: Value = ok_json(
        app.request(Method::GET, "/rest/v1/openapi.json").send().await.unwrap(),
        StatusCode::OK,
    )
    .await;
    let mut doc = Doc {
        doc: document,
        validators: HashMap::new(),
    };
    // The schemas state the server's own rules, written out as literals.
    let schemas = doc.doc["components"]["schemas"].clone();
    assert_eq!(
        schemas["TextBlockIn"]["properties"]["text"]["pattern"],
        rapport_core::text_blocks::TEXT_PATTERN
    );
    assert_eq!(
        schemas["TextBlockIn"]["properties"]["shortcut"]["pattern"],
        rapport_core::text_blocks::SHORTCUT_PATTERN
    );
    let text = doc.doc.to_string();
    for pattern in [
        rapport_core::validate::LANGUAGE_PATTERN,
        rapport_core::validate::LANGUAGE_OR_BLANK_PATTERN,
    ] {
        let quoted = Value::String(pattern.into()).to_string();
        assert!(text.contains(&format!("\"pattern\":{quoted}")), "{pattern} is stated");
    }
    let (_, token) = app.tenant_with_key("Findings").await;
    let webhook: Value = ok_json(
        app.post("/rest/v1/webhook", &token, json!({"url": "https://example.com/hook"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let webhook = webhook["id"].as_str().unwrap().to_string();
    let day = |year: i32, month: u32, day: u32| json!({"year": year, "month": month, "day": day});

    let findings = [
        // Paging bounds are stated on every list.
        Finding::new(Method::GET, "/conversation", false).query("pageSize", 9122),
        Finding::new(Method::GET, "/conversation", true).query("pageSize", 200),
        Finding::new(Method::GET, "/appointment", false).query("offset", -781),
        Finding::new(Method::GET, "/customer", false).query("pageNumber", -1),
        Finding::new(Method::GET, "/user", false).query("pageSize", 0),
        Finding::new(Method::GET, "/audit", false).query("offset", -1),
        // `950.0` is an integer to JSON Schema, and so to the server.
        Finding::new(Method::POST, "/user", true)
            .body(json!({"email": "float@example.com", "maxConcurrentChats": 5.0})),
        Finding::new(Method::POST, "/user", false)
            .body(json!({"email": "half@example.com", "maxConcurrentChats": 5.5})),
        Finding::new(Method::POST, "/webhook/{id}/secret/rotate", true)
            .at(format!("/rest/v1/webhook/{webhook}/secret/rotate"))
            .body(json!({"overlapSeconds": 950.0})),
        // An empty body means the default period.
        Finding::new(Method::POST, "/report/agent/times/loggedin", true).body(json!({})),
        Finding::new(Method::POST, "/report/agent/times/online", true).body(json!({})),
        // One edge of a range alone is completed.
        Finding::new(Method::GET, "/report/agent/times/online/range", true).query("to", 300),
        Finding::new(Method::GET, "/report/agent/times/loggedin/range", true).query("from", 300),
        Finding::new(Method::GET, "/report/agent/times/online/range", false).query("to", 0),
        // Both forms of a holiday's day: the calendar date names it.
        Finding::new(Method::POST, "/openinghours", true).body(json!({"name": "Two forms", "holidays": [{
            "from": day(2026, 12, 25), "fromDate": "2026-12-26T00:00:00Z",
            "to": day(2026, 12, 26), "toDate": "2026-12-28T00:00:00Z",
        }]})),
        // A system message's language has a stated form.
        Finding::new(Method::POST, "/systemmessage", true).body(json!({"message": "Hi", "language": "qq"})),
        Finding::new(Method::POST, "/systemmessage", true).body(json!({"message": "Hi", "language": "de-CH-1996"})),
        Finding::new(Method::POST, "/systemmessage", false).body(json!({"message": "Hi", "language": "en_US"})),
        Finding::new(Method::POST, "/systemmessage", false).body(json!({"message": "Hi", "language": "x-private"})),
        Finding::new(Method::POST, "/systemmessage", true)
            .body(json!({"message": "Hi", "language": "de-DE-u-co-phonebk"})),
        // A text block's braces name its variables.
        Finding::new(Method::POST, "/textblock", true)
            .body(json!({"shortcut": "hi", "text": "Hi {customer.firstName|there}"})),
        Finding::new(Method::POST, "/textblock", true).body(json!({"shortcut": "brace", "text": "a { b\n} c"})),
        Finding::new(Method::POST, "/textblock", false)
            .body(json!({"shortcut": "nick", "text": "Hi {customer.nickname}"})),
        Finding::new(Method::POST, "/textblock", false).body(json!({"shortcut": "blank", "text": " \n "})),
        Finding::new(Method::POST, "/textblock", false).body(json!({"shortcut": "Capital", "text": "x"})),
    ];
    let mut problems = Vec::new();
    for finding in &findings {
        let what = format!(
            "{} {} ?{:?} {:?}",
            finding.method, finding.path, finding.query, finding.body
        );
        if finding.documented_valid(&mut doc) != finding.valid {
            problems.push(format!(
                "{what}: the document no longer calls it {}",
                if finding.valid { "valid" } else { "invalid" }
            ));
        }
        let mut request = app
            .request(finding.method.clone(), &finding.path)
            .query(&finding.query)
            .bearer_auth(&token);
        if let Some(body) = &finding.body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let agrees = if finding.valid {
            status.is_success()
        } else {
            status == StatusCode::UNPROCESSABLE_ENTITY
        };
        if !agrees {
            problems.push(format!(
                "{what}: {status} {}",
                response.text().await.unwrap_or_default()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

backend_tests!(the_fuzzers_findings_agree);
