//! Appointment invitations through the mail outbox: kept for admins without an
//! SMTP server, delivered to a real SMTP server when one is configured (with a
//! retry after a temporary refusal), and each tenant's outbox its own.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, session},
    smtp::SmtpReceiver,
    utils::TestApp,
};

fn appointment(invite: bool) -> Value {
    json!({
        "title": "Contract review",
        "date": "2030-03-04T09:30:00Z",
        "durationInMinutes": 45,
        "timezoneId": "Europe/Berlin",
        "attendees": ["ada@example.com", "Bob@Example.com"],
        "sendInviteEmail": invite,
        "description": "Bring the draft."
    })
}

async fn invitations_wait_in_the_outbox_without_smtp(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, _) = app.tenant_with_key("Beta").await;
    app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
    app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    app.user(&beta, "admin@beta.example", Role::Admin, false).await;

    // Without sendInviteEmail nothing is written.
    let quiet = app.post("/rest/v1/appointment", &key, appointment(false)).await;
    assert_eq!(quiet.status(), StatusCode::CREATED);
    let created = app.post("/rest/v1/appointment", &key, appointment(true)).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();

    let admin = session(&app, "admin@alpha.example").await;
    let outbox = server_fn(&app, "list_outbox", &admin, &[]).await;
    assert_eq!(outbox.status(), StatusCode::OK);
    let outbox: Value = outbox.json().await.unwrap();
    assert_eq!(outbox["delivery"], "KEPT");
    let mails = outbox["mails"].as_array().unwrap();
    assert_eq!(mails.len(), 2, "{outbox}");
    let to: Vec<&str> = mails.iter().map(|m| m["to"].as_str().unwrap()).collect();
    assert!(to.contains(&"ada@example.com") && to.contains(&"bob@example.com"));
    let mail = &mails[0];
    assert_eq!(mail["status"], "PENDING");
    assert_eq!(
        mail["subject"],
        "Contract review — Mon 4 Mar 2030, 10:30 (Europe/Berlin)"
    );
    let body = mail["body"].as_str().unwrap();
    assert!(body.contains(created["joinLink"].as_str().unwrap()), "{body}");
    assert!(body.contains("Bring the draft."));

    // Agents and other tenants' admins do not read this outbox.
    let agent = session(&app, "agent@alpha.example").await;
    assert_eq!(
        server_fn(&app, "list_outbox", &agent, &[]).await.status(),
        StatusCode::FORBIDDEN
    );
    let stranger = session(&app, "admin@beta.example").await;
    let theirs: Value = server_fn(&app, "list_outbox", &stranger, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["mails"], json!([]));
}

backend_tests!(invitations_wait_in_the_outbox_without_smtp);

async fn invitations_reach_a_real_smtp_server_and_are_retried(db: TestDb) {
    let smtp = SmtpReceiver::start().await;
    let url = smtp.url.clone();
    // The first attempt is refused for a while (a temporary 451).
    smtp.refuse_next(1);
    let app = TestApp::start_with(db, |config| config.mail.smtp_url = Some(url)).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
    let mut body = appointment(true);
    body["attendees"] = json!(["ada@example.com"]);
    let created = app.post("/rest/v1/appointment", &key, body).await;
    assert_eq!(created.status(), StatusCode::CREATED);

    // The refused attempt is recorded and retried later; force the retry now
    // rather than waiting out the schedule.
    let admin = session(&app, "admin@alpha.example").await;
    let mut retried = false;
    let mut outbox = Value::Null;
    for _ in 0..100 {
        outbox = server_fn(&app, "list_outbox", &admin, &[]).await.json().await.unwrap();
        let mail = &outbox["mails"][0];
        if mail["attempts"] == 1 && mail["status"] == "PENDING" && mail["last_error"].is_string() {
            assert_eq!(outbox["delivery"], "SMTP");
            app.services
                .retry_mail_now(&alpha, mail["id"].as_str().unwrap())
                .await
                .unwrap();
            retried = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(retried, "the refusal was not recorded: {outbox}");
    let delivered = smtp.wait_for(1).await;
    assert_eq!(delivered[0].to, ["ada@example.com"]);
    assert_eq!(delivered[0].from, "rapport@rapport.test");
    assert!(delivered[0].data.contains("Contract review"), "{}", delivered[0].data);
    assert!(delivered[0].data.contains("/join/"));

    let mut sent = false;
    for _ in 0..100 {
        let outbox: Value = server_fn(&app, "list_outbox", &admin, &[]).await.json().await.unwrap();
        if outbox["mails"][0]["status"] == "SENT" {
            assert_eq!(outbox["mails"][0]["attempts"], 2);
            sent = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(sent, "the mail was not marked sent");
}

backend_tests!(invitations_reach_a_real_smtp_server_and_are_retried);
