//! Secrets Rapport must read back are sealed with the operator's key: a backup
//! of the database alone forges no webhook and joins no call, and rotating the
//! key (`RAPPORT_PREVIOUS_SECRET_KEYS`) loses no secret.

use std::path::PathBuf;

use rapport_core::{
    appointments::AppointmentIn,
    backend_tests,
    customers::IdentitySettingsIn,
    sealing::{Purpose, Sealer},
    testing::TestDb,
    webhooks::WebhookIn,
    with_db, Services,
};
use rapport_server::{
    config::{DatabaseArgs, SecretKeyArgs},
    serve,
};
use reqwest::StatusCode;
use serde_json::json;

use crate::{
    receiver::Receiver,
    utils::{actor, ok_json, TestApp},
};

const KEY_A: &str = "9b1f0c3e5a7d2b4f6e8a0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f";
const KEY_B: &str = "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=";

/// The database settings with these keys.
fn args(url: &str, current: Option<&str>, key_file: Option<PathBuf>, previous: &[&str]) -> DatabaseArgs {
    DatabaseArgs {
        data_dir: PathBuf::from("unused"),
        database_url: Some(url.to_string()),
        media_store: Some("memory:".into()),
        secret_keys: SecretKeyArgs {
            secret_key: current.map(str::to_string),
            secret_key_file: key_file,
            previous: previous.iter().map(|k| k.to_string()).collect(),
        },
    }
}

/// Opens the database as `rapport serve` does at start, with these keys.
async fn open(
    url: &str,
    current: Option<&str>,
    key_file: Option<PathBuf>,
    previous: &[&str],
) -> anyhow::Result<Services> {
    serve::open_and_reseal(&args(url, current, key_file, previous)).await
}

/// Every stored secret of the tenant, as a backup holds them.
async fn stored(services: &Services, tenant: &str) -> Vec<String> {
    let mut values: Vec<Option<String>> = Vec::new();
    for sql in [
        "select secret from webhook_endpoints where tenant_id = $1",
        "select previous_secret from webhook_endpoints where tenant_id = $1",
        "select secret from alert_secrets where tenant_id = $1",
        "select identity_secret from tenants where id = $1",
        "select join_token from appointments where tenant_id = $1",
        "select body from mail_outbox where tenant_id = $1",
    ] {
        let column: Vec<Option<String>> = with_db!(services.writer(), |pool| sqlx::query_scalar(sql)
            .bind(tenant)
            .fetch_all(pool)
            .await)
        .unwrap();
        values.extend(column);
    }
    values.into_iter().flatten().collect()
}

async fn stored_secrets_are_sealed_and_a_key_rotation_loses_none(db: TestDb) {
    let url = db.url.clone();
    // Before the operator sets a key: secrets are stored as given.
    let plain = db.services();
    let tenant = plain
        .create_tenant(
            rapport_core::tenants::NewTenant {
                name: Some("Sealed".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let receiver = Receiver::start().await;
    let hook = plain
        .create_webhook(
            &tenant.id,
            WebhookIn {
                url: Some(receiver.url.clone()),
                event_types: Some(vec!["customer.created".into()]),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let identity = plain
        .set_identity_settings(&tenant.id, IdentitySettingsIn { required: true }, &actor())
        .await
        .unwrap()
        .secret
        .unwrap();
    let alert = plain.alert_secret(&tenant.id).await.unwrap();
    let appointment = plain
        .create_appointment(
            &tenant.id,
            AppointmentIn {
                title: Some("Sealed call".into()),
                date: Some(chrono::Utc::now()),
                attendees: Some(vec!["guest@sealed.example".into()]),
                send_invite_email: Some(true),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let join_token = appointment.join_link.rsplit('/').next().unwrap().to_string();
    let secrets = [hook.secret.clone(), identity.clone(), alert.clone(), join_token.clone()];
    let before = stored(&plain, &tenant.id).await;
    assert!(
        secrets.iter().all(|s| before.contains(s)),
        "without a key, a backup holds the secrets: {before:?}"
    );

    assert!(
        before.iter().any(|v| v.contains(&appointment.join_link)),
        "the invitation carries the join link: {before:?}"
    );

    // The first start with a key seals every one of them, and the invitation.
    let a = open(&url, Some(KEY_A), None, &[]).await.unwrap();
    let a_id = a.sealer().key_id().unwrap().to_string();
    let sealed = stored(&a, &tenant.id).await;
    assert_eq!(sealed.len(), 5, "{sealed:?}");
    for value in &sealed {
        assert!(value.starts_with(&format!("sealed1.{a_id}.")), "{value}");
        assert!(secrets.iter().all(|s| !value.contains(s.as_str())), "{value}");
    }
    // Everything still works with the same secrets.
    assert_eq!(
        a.identity_settings(&tenant.id).await.unwrap().secret.as_deref(),
        Some(identity.as_str())
    );
    assert_eq!(a.alert_secret(&tenant.id).await.unwrap(), alert);
    let outbox = a
        .list_mail(&tenant.id, &rapport_core::model::PageRequest::default())
        .await
        .unwrap();
    assert!(
        outbox.results[0].body.contains(&appointment.join_link),
        "admins read the mail"
    );
    let (found_tenant, found) = a.appointment_by_join_token(&join_token).await.unwrap();
    assert_eq!(
        (found_tenant.as_str(), found.join_link.as_str()),
        (tenant.id.as_str(), appointment.join_link.as_str())
    );
    assert!(
        a.appointment_by_join_token(&a_id).await.is_err(),
        "only the token opens the link"
    );
    let key = a.create_api_key(&tenant.id, "tests", &actor()).await.unwrap().token;
    let app = TestApp::start_on(db, a).await;
    ok_json(
        app.post("/rest/v1/customer", &key, json!({})).await,
        StatusCode::CREATED,
    )
    .await;
    receiver.wait_for(1, std::time::Duration::from_secs(20)).await[0].verify(&hook.secret);
    // A secret issued under the key is stored sealed, and shown once in plain.
    let rotated = ok_json(
        app.post(
            &format!("/rest/v1/webhook/{}/secret/rotate", hook.endpoint.id),
            &key,
            json!({"overlapSeconds": 0}),
        )
        .await,
        StatusCode::OK,
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let now = stored(&app.services, &tenant.id).await;
    assert!(
        now.iter()
            .all(|v| v.starts_with(&format!("sealed1.{a_id}.")) && !v.contains(&rotated)),
        "{now:?}"
    );
    ok_json(
        app.post("/rest/v1/customer", &key, json!({})).await,
        StatusCode::CREATED,
    )
    .await;
    receiver.wait_for(2, std::time::Duration::from_secs(20)).await[1].verify(&rotated);

    // A new key, read from a file, with the old one among the previous keys:
    // every value moves to the new key.
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("secret.key");
    std::fs::write(&key_file, format!("{KEY_B}\n")).unwrap();
    // An admin command run with those keys leaves what running instances read
    // as it is: only `serve` and `migrate` reseal.
    let before_admin = stored(&app.services, &tenant.id).await;
    serve::open_services(&args(&url, None, Some(key_file.clone()), &[KEY_A]))
        .await
        .unwrap();
    assert_eq!(stored(&app.services, &tenant.id).await, before_admin);
    let b = open(&url, None, Some(key_file.clone()), &[KEY_A]).await.unwrap();
    let b_id = b.sealer().key_id().unwrap().to_string();
    assert_ne!(a_id, b_id);
    let moved = stored(&b, &tenant.id).await;
    assert!(
        moved.iter().all(|v| v.starts_with(&format!("sealed1.{b_id}."))),
        "{moved:?}"
    );
    assert_eq!(b.alert_secret(&tenant.id).await.unwrap(), alert);

    // A start that lacks the key of a stored value stops, naming the key,
    // rather than lose the secret.
    for (current, previous) in [(None, vec![]), (Some(KEY_A), vec![])] {
        let refused = open(&url, current, None, &previous)
            .await
            .expect_err("a start without the key");
        assert!(format!("{refused:#}").contains(&b_id), "{refused:#}");
    }
    assert_eq!(stored(&b, &tenant.id).await, moved, "a refused start changes nothing");

    // Without a key, but with the last one as previous: the secrets are stored
    // as given again, exactly as they were.
    let unsealed = open(&url, None, None, &[KEY_B]).await.unwrap();
    let back = stored(&unsealed, &tenant.id).await;
    for secret in [&rotated, &identity, &alert, &join_token] {
        assert!(back.contains(secret), "{secret} in {back:?}");
    }
    assert!(back.iter().any(|v| v.contains(&appointment.join_link)));
    drop(app);
}

/// A webhook secret this instance cannot open (sealed under a key it was not
/// given, say by an instance already rotated) holds up its own endpoint's
/// deliveries only: they stay pending, unclaimed, and every other endpoint of
/// the workspace gets its events.
async fn a_secret_that_cannot_be_opened_holds_up_only_its_endpoint(db: TestDb) {
    let services = open(&db.url.clone(), Some(KEY_A), None, &[]).await.unwrap();
    let tenant = services
        .create_tenant(
            rapport_core::tenants::NewTenant {
                name: Some("Half rotated".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let (stuck, working) = (Receiver::start().await, Receiver::start().await);
    let mut hooks = Vec::new();
    for receiver in [&stuck, &working] {
        let hook = services
            .create_webhook(
                &tenant.id,
                WebhookIn {
                    url: Some(receiver.url.clone()),
                    event_types: Some(vec!["customer.created".into()]),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        hooks.push(hook);
    }
    let foreign = Sealer::new(Some(KEY_B), &[])
        .unwrap()
        .seal(Purpose::SigningSecret, "whsec_foreign");
    with_db!(services.writer(), |pool| sqlx::query(
        "update webhook_endpoints set secret = $1 where id = $2"
    )
    .bind(&foreign)
    .bind(&hooks[0].endpoint.id)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    let key = services
        .create_api_key(&tenant.id, "tests", &actor())
        .await
        .unwrap()
        .token;
    let app = TestApp::start_on(db, services).await;
    for _ in 0..3 {
        ok_json(
            app.post("/rest/v1/customer", &key, json!({})).await,
            StatusCode::CREATED,
        )
        .await;
    }
    for delivered in working.wait_for(3, std::time::Duration::from_secs(20)).await {
        delivered.verify(&hooks[1].secret);
    }
    let waiting: Vec<(String, i64)> = with_db!(app.services.writer(), |pool| sqlx::query_as(
        "select state, attempts from webhook_deliveries where endpoint_id = $1"
    )
    .bind(&hooks[0].endpoint.id)
    .fetch_all(pool)
    .await)
    .unwrap();
    assert_eq!(waiting, vec![("pending".to_string(), 0); 3]);
    assert!(stuck.received().is_empty());
}

backend_tests!(
    stored_secrets_are_sealed_and_a_key_rotation_loses_none,
    a_secret_that_cannot_be_opened_holds_up_only_its_endpoint
);
