//! Supervisors' report pages over HTTP: every family renders with its charts, the
//! numbers downloaded from a page equal the REST report's for the same query, and
//! other roles are kept out.

use rapport_core::{
    backend_tests,
    model::Role,
    reports::{
        catalogue::{Report, METRICS},
        demo::DemoOptions,
    },
    testing::TestDb,
};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use crate::{
    dashboard::{page, server_fn, session},
    utils::TestApp,
};

const FAMILIES: [&str; 10] = [
    "agents",
    "chats",
    "messages",
    "sessions",
    "visits",
    "cobrowse",
    "conferences",
    "rules",
    "resources",
    "script-errors",
];

async fn download(app: &TestApp, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut request = app.request(Method::GET, path);
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    request.send().await.unwrap()
}

/// The REST report's CSV for `report` with `metrics` (and `group_by`).
async fn rest_csv(app: &TestApp, token: &str, report: Report, metrics: &[&str], group_by: Option<&str>) -> String {
    let metrics: Vec<_> = metrics
        .iter()
        .map(|m| json!({"metricName": m, "groupBy": group_by}))
        .collect();
    let body = json!({"metrics": metrics, "dateFilter": {"grouping": "LAST_MONTH"}});
    let response = app
        .post(&format!("/rest/v1/report/{}?format=csv", report.path()), token, body)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.text().await.unwrap()
}

async fn report_pages_show_what_the_rest_reports_return(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, token) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "sue@alpha.test", Role::Supervisor, false).await;
    app.user(&tenant, "ann@alpha.test", Role::Agent, false).await;
    let options = DemoOptions {
        days: 5,
        agents: 2,
        scale: 0.2,
        seed: 3,
    };
    app.services.generate_demo_data(&tenant, &options).await.unwrap();
    let sue = session(&app, "sue@alpha.test").await;

    let index = page(&app, "/reports", &sue).await;
    assert_eq!(index.status(), StatusCode::OK);
    let html = index.text().await.unwrap();
    for family in FAMILIES {
        assert!(html.contains(&format!("href=\"/reports/{family}\"")), "{family}");
    }
    for family in FAMILIES {
        let response = page(&app, &format!("/reports/{family}?grouping=LAST_MONTH"), &sue).await;
        assert_eq!(response.status(), StatusCode::OK, "{family}");
        let html = response.text().await.unwrap();
        assert!(html.contains("<svg aria-hidden=\"true\""), "{family} has a chart");
        assert!(html.contains("Download CSV"), "{family}");
        assert!(
            html.contains(&format!("/reports/{family}/csv?grouping=LAST_MONTH")),
            "{family}"
        );
        if ["agents", "chats", "messages", "visits", "resources"].contains(&family) {
            // Rarer events (co-browsing, conferences) may be absent from a short history.
            assert!(!html.contains("Nothing was recorded"), "{family} has demo data");
        }
    }

    // The page's numbers are the REST report's: its CSV is byte for byte the same.
    let chat: Vec<&str> = METRICS
        .iter()
        .filter(|d| d.report == Report::Chat)
        .map(|d| d.name)
        .collect();
    let from_page = download(&app, "/reports/chats/csv?grouping=LAST_MONTH", Some(&sue)).await;
    assert_eq!(from_page.status(), StatusCode::OK);
    assert!(from_page.headers()[header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap()
        .contains("rapport-chats-last_month.csv"));
    let from_page = from_page.text().await.unwrap();
    assert_eq!(from_page, rest_csv(&app, &token, Report::Chat, &chat, None).await);
    assert!(from_page.lines().count() > 25, "{from_page}");

    // Per agent: a column per agent, stacked bars, the same numbers as groupBy AGENT.
    let per_agent = page(&app, "/reports/agents?grouping=LAST_MONTH&by_agent=ONLINE_TIME", &sue).await;
    assert_eq!(per_agent.status(), StatusCode::OK);
    let html = per_agent.text().await.unwrap();
    assert!(html.contains("Online time per agent"), "{html}");
    let from_page = download(
        &app,
        "/reports/agents/csv?grouping=LAST_MONTH&by_agent=ONLINE_TIME",
        Some(&sue),
    )
    .await
    .text()
    .await
    .unwrap();
    assert_eq!(
        from_page,
        rest_csv(&app, &token, Report::Agent, &["ONLINE_TIME"], Some("AGENT")).await
    );

    // The presence timeline and the summary versus the previous period.
    let agents = page(&app, "/reports/agents?grouping=LAST_MONTH", &sue)
        .await
        .text()
        .await
        .unwrap();
    assert!(agents.contains("Online time per agent"));
    assert!(agents.contains("previous: "));

    // A custom range needs dates; a bad one is explained, on the page and the download.
    let bad = page(&app, "/reports/chats?grouping=CUSTOM&from=yesterday&to=", &sue).await;
    let html = bad.text().await.unwrap();
    assert!(html.contains("enter a date"), "{html}");
    let bad = download(&app, "/reports/chats/csv?grouping=CUSTOM&from=x", Some(&sue)).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let unknown = download(&app, "/reports/nothing/csv", Some(&sue)).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    // Agents may not read reports; signed-out visitors are asked to sign in.
    let ann = session(&app, "ann@alpha.test").await;
    assert_eq!(page(&app, "/reports/chats", &ann).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        download(&app, "/reports/chats/csv", Some(&ann)).await.status(),
        StatusCode::FORBIDDEN
    );
    let call = server_fn(&app, "load_report", &ann, &[("query[family]", "chats")]).await;
    assert_eq!(call.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        download(&app, "/reports/chats/csv", None).await.status(),
        StatusCode::UNAUTHORIZED
    );
    app.stop().await;
}

backend_tests!(report_pages_show_what_the_rest_reports_return);
