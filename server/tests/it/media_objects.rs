//! Media in object storage, on both backends, in a directory (the default)
//! and in a real S3 server (Garage, which `cargo xtask test` starts): chat
//! files, session-recording batches and call-recording chunks are objects
//! that their rows name; downloads stream them; deleting a customer, an
//! appointment or a tenant deletes their objects; the hourly sweep deletes
//! what a dead write left; and `migrate-media` moves rows written before,
//! resumably. Each scene ends by listing the store: it holds exactly the
//! objects that rows name.

use std::collections::BTreeSet;

use rapport_core::{
    backend_tests,
    db::Db,
    ids::TenantId,
    media_store::{MediaKind, MediaStore},
    recordings::gzip,
    testing::TestDb,
    time::now_ms,
    with_db, Services,
};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    conference::{appointment, appointment_id},
    utils::{ok_json, send, TestApp},
};

/// Every key that a row names, in the three tables that hold media.
async fn named_keys(db: &Db) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for table in ["chat_files", "recording_chunks", "conference_recording_chunks"] {
        let sql = format!("select blob_key from {table} where blob_key is not null");
        let found: Vec<String> = with_db!(db, |pool| sqlx::query_scalar(&sql).fetch_all(pool).await).unwrap();
        keys.extend(found);
    }
    keys
}

/// Deletes the queued garbage, then checks that the store holds exactly the
/// objects rows name; returns their keys.
async fn store_matches_rows(services: &Services) -> BTreeSet<String> {
    while services.collect_media_garbage(500).await.unwrap() > 0 {}
    let listed: BTreeSet<String> = services
        .media()
        .list(None)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    let named = named_keys(services.db()).await;
    assert_eq!(listed, named, "the store holds exactly what rows name");
    listed
}

/// Makes the media cleanup job due now, and waits until the app's job runner
/// has emptied the garbage queue with it.
async fn cleanup_job_runs(app: &TestApp) {
    use rapport_core::{jobs::JobKind, media_store::cleanup::CLEANUP_KEY};
    app.services
        .schedule_job(None, JobKind::MediaCleanup, CLEANUP_KEY, now_ms(), &json!({}))
        .await
        .unwrap();
    for _ in 0..100 {
        let queued: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
            "select count(*) from media_garbage"
        )
        .fetch_one(pool)
        .await)
        .unwrap();
        if queued == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the media cleanup job did not run within 10 s");
}

/// The path of a download link (the test server's public URL is not its address).
fn link_path(url: &str) -> String {
    url.strip_prefix("http://rapport.test")
        .expect("a link under the public URL")
        .to_string()
}

async fn upload(app: &TestApp, key: &str, token: &str, name: &str, bytes: Vec<u8>) -> String {
    let sent = app
        .request(Method::POST, "/rest/v1/widget/file")
        .query(&[("name", name)])
        .header("rapport-widget-key", key)
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .bearer_auth(token)
        .body(bytes)
        .send()
        .await
        .unwrap();
    link_path(ok_json(sent, StatusCode::CREATED).await["url"].as_str().unwrap())
}

async fn download(app: &TestApp, path: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let got = app.request(Method::GET, path).send().await.unwrap();
    let length = got
        .headers()
        .get(header::CONTENT_LENGTH)
        .map(|v| v.to_str().unwrap().to_string());
    (got.status(), length, got.bytes().await.unwrap().to_vec())
}

/// A recorded session of the visitor with `visitor_token`, with `batches`
/// batches; its id.
async fn record(app: &TestApp, key: &str, visitor_token: &str, batches: i64) -> String {
    let started = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", key)
        .json(&json!({"visitorId": format!("v-{visitor_token}"), "url": "https://shop.example/"}))
        .send()
        .await
        .unwrap();
    let started = ok_json(started, StatusCode::CREATED).await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let write = started["writeToken"].as_str().unwrap().to_string();
    let t0 = now_ms();
    for seq in 0..batches {
        let batch = json!({"seq": seq, "visitorToken": visitor_token, "events": [
            {"type": 4, "timestamp": t0 + seq, "data": {"href": "https://shop.example/", "width": 1280, "height": 800}},
            {"type": 3, "timestamp": t0 + seq, "data": {"source": 5, "text": format!("batch {seq}")}}]});
        let body = serde_json::to_vec(&batch).unwrap();
        let appended = app
            .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
            .header("rapport-widget-key", key)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::CONTENT_ENCODING, "gzip")
            .bearer_auth(&write)
            .body(gzip(&body).unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(appended.status(), StatusCode::OK);
    }
    id
}

/// The texts of a session's replay, in order.
async fn replayed(app: &TestApp, token: &str, id: &str) -> Vec<String> {
    let events = ok_json(
        app.get(&format!("/rest/v1/session/{id}/events"), token).await,
        StatusCode::OK,
    )
    .await;
    events
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["data"]["text"].as_str().map(str::to_string))
        .collect()
}

/// Stores a call recording of `bytes` for the appointment, as the recorder
/// does when a participant leaves; its id.
async fn call_recording(app: &TestApp, tenant: &TenantId, appointment: &str, bytes: &[u8]) -> String {
    use rapport_core::appointments::recordings::{NewConferenceRecording, RecordingSource};
    let ended = now_ms();
    let recording = NewConferenceRecording {
        appointment_id: appointment.into(),
        participant: "Ann Example".into(),
        source: RecordingSource::Camera,
        started_at: ended - 60_000,
        ended_at: ended,
        host: None,
    };
    app.services
        .store_conference_recording(tenant, &recording, bytes)
        .await
        .unwrap()
        .id
}

async fn call_download(app: &TestApp, token: &str, appointment: &str, recording: &str) -> Vec<u8> {
    let got = app
        .get(
            &format!("/rest/v1/appointment/{appointment}/recording/{recording}"),
            token,
        )
        .await;
    assert_eq!(got.status(), StatusCode::OK);
    got.bytes().await.unwrap().to_vec()
}

/// The scene: every kind of media stored, read back and deleted, on the app's
/// media store.
async fn media_round_trip(app: &TestApp) {
    use rapport_core::appointments::recordings::CHUNK_BYTES;
    let (tenant, t) = app.tenant_with_key("Media").await;
    let key = app.widget_key(&t).await;
    let (fay, fay_token) = app.widget_visitor(&key, "Fay").await;
    let (_, gus_token) = app.widget_visitor(&key, "Gus").await;

    // Files: stored as objects, streamed back whole with their length.
    let text = b"Order 1042: the blue one, please.\n".to_vec();
    let fay_file = upload(app, &key, &fay_token, "order.txt", text.clone()).await;
    let big: Vec<u8> = (0..200_000).map(|i| (i % 253) as u8).collect();
    let gus_file = upload(app, &key, &gus_token, "scan.bin", big.clone()).await;
    assert_eq!(
        download(app, &fay_file).await,
        (StatusCode::OK, Some(text.len().to_string()), text.clone())
    );
    assert_eq!(download(app, &gus_file).await.2, big);
    let rows: Vec<(Option<Vec<u8>>, String)> = with_db!(app.services.db(), |pool| sqlx::query_as(
        "select data, blob_key from chat_files order by size"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    assert!(rows.iter().all(|(data, _)| data.is_none()), "no bytes in the rows");
    assert!(rows[0].1.starts_with("files/"), "{}", rows[0].1);
    assert_eq!(app.services.media().get(&rows[0].1).await.unwrap(), text);

    // Session recordings: one object per batch; a retried batch stores none.
    let fay_session = record(app, &key, &fay_token, 3).await;
    let gus_session = record(app, &key, &gus_token, 2).await;
    assert_eq!(replayed(app, &t, &fay_session).await, ["batch 0", "batch 1", "batch 2"]);
    let objects = store_matches_rows(&app.services).await;
    assert_eq!(objects.iter().filter(|k| k.starts_with("recordings/")).count(), 5);

    // Call recordings: one object per chunk, downloaded whole.
    let join = appointment(app, &t, json!({"record": true})).await;
    let meeting = appointment_id(app, &join).await;
    let video: Vec<u8> = (0..CHUNK_BYTES * 3 / 2).map(|i| (i % 251) as u8).collect();
    let recording = call_recording(app, &tenant, &meeting, &video).await;
    assert_eq!(call_download(app, &t, &meeting, &recording).await, video);
    let objects = store_matches_rows(&app.services).await;
    assert_eq!(objects.iter().filter(|k| k.starts_with("calls/")).count(), 2);
    assert_eq!(objects.len(), 2 + 5 + 2);

    // A customer erased: her file and recording go, Gus's stay.
    let erased = send(app, Method::DELETE, &format!("/rest/v1/customer/{fay}"), &t, None).await;
    assert_eq!(erased.status(), StatusCode::NO_CONTENT);
    let queued: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select count(*) from media_garbage"
    )
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(queued, 1 + 3, "her file and batches are queued with the erasure");
    cleanup_job_runs(app).await;
    let objects = store_matches_rows(&app.services).await;
    assert_eq!(objects.len(), 1 + 2 + 2);
    assert_eq!(download(app, &fay_file).await.0, StatusCode::NOT_FOUND);
    assert_eq!(download(app, &gus_file).await.2, big);
    assert_eq!(replayed(app, &t, &gus_session).await, ["batch 0", "batch 1"]);

    // An appointment deleted: its recording's chunks go.
    let deleted = send(
        app,
        Method::DELETE,
        &format!("/rest/v1/appointment/{meeting}"),
        &t,
        None,
    )
    .await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(store_matches_rows(&app.services).await.len(), 1 + 2);

    // A write that died after storing its object: the sweep of its hour
    // deletes it, and nothing a row names.
    let orphan = MediaStore::new_key(MediaKind::File, &tenant, now_ms());
    app.services.media().put(&orphan, "left behind".into()).await.unwrap();
    let hour = now_ms() / 3_600_000 * 3_600_000;
    let swept = app.services.sweep_media_hour(hour).await.unwrap()
        + app.services.sweep_media_hour(hour - 3_600_000).await.unwrap();
    assert_eq!(swept, 1);
    assert_eq!(store_matches_rows(&app.services).await.len(), 1 + 2);

    // A tenant deleted: all of its media goes.
    let platform = app.platform_key().await;
    let gone = send(
        app,
        Method::DELETE,
        &format!("/rest/v1/tenant/{tenant}"),
        &platform,
        None,
    )
    .await;
    assert_eq!(gone.status(), StatusCode::NO_CONTENT);
    assert!(store_matches_rows(&app.services).await.is_empty());
}

async fn media_lives_in_objects_and_goes_with_its_rows(db: TestDb) {
    let app = TestApp::start(db).await;
    media_round_trip(&app).await;
}

/// The S3 server's settings from `cargo xtask test`, under a prefix of this
/// test's own; `None` without them.
fn s3_store() -> Option<MediaStore> {
    let var = |name: &str| std::env::var(format!("RAPPORT_TEST_S3_{name}")).ok();
    let Some(url) = var("URL") else {
        eprintln!("RAPPORT_TEST_S3_URL is unset (cargo xtask test sets it): skipped");
        return None;
    };
    let prefix = uuid::Uuid::new_v4().simple().to_string();
    let options = [
        ("AWS_ENDPOINT", var("ENDPOINT")?),
        ("AWS_REGION", var("REGION")?),
        ("AWS_ACCESS_KEY_ID", var("KEY_ID")?),
        ("AWS_SECRET_ACCESS_KEY", var("SECRET")?),
        ("AWS_ALLOW_HTTP", "true".to_string()),
    ];
    Some(MediaStore::open(&format!("{url}/{prefix}"), options).unwrap())
}

async fn media_lives_in_s3_and_goes_with_its_rows(db: TestDb) {
    let Some(store) = s3_store() else { return };
    let services = db.services().with_media_store(store);
    let app = TestApp::start_on(db, services).await;
    media_round_trip(&app).await;
}

/// Makes each media row hold its bytes again, as rows written before media
/// moved to objects did, and deletes the objects.
async fn as_before_objects(services: &Services) {
    for (table, key_columns) in [
        ("chat_files", "id"),
        ("recording_chunks", "tenant_id, session_id, seq"),
        ("conference_recording_chunks", "recording_id, seq"),
    ] {
        let select = format!("select blob_key from {table} where blob_key is not null order by {key_columns}");
        let keys: Vec<String> =
            with_db!(services.db(), |pool| sqlx::query_scalar(&select).fetch_all(pool).await).unwrap();
        for key in keys {
            let bytes = services.media().get(&key).await.unwrap().to_vec();
            let update = format!("update {table} set data = $1, blob_key = null where blob_key = $2");
            with_db!(services.writer(), |pool| sqlx::query(&update)
                .bind(&bytes)
                .bind(&key)
                .execute(pool)
                .await
                .map(|r| r.rows_affected()))
            .unwrap();
            services.media().delete(&key).await.unwrap();
        }
    }
}

async fn migrate_media_moves_rows_written_before(db: TestDb) {
    use rapport_core::{appointments::recordings::CHUNK_BYTES, media_store::migrate::MigratedMedia};
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Before").await;
    let key = app.widget_key(&t).await;
    let (_, token) = app.widget_visitor(&key, "Fay").await;
    let text = b"from the days of SQL rows".to_vec();
    let file = upload(&app, &key, &token, "old.txt", text.clone()).await;
    let session = record(&app, &key, &token, 2).await;
    let join = appointment(&app, &t, json!({"record": true})).await;
    let meeting = appointment_id(&app, &join).await;
    let video: Vec<u8> = (0..CHUNK_BYTES + 10).map(|i| (i % 249) as u8).collect();
    let recording = call_recording(&app, &tenant, &meeting, &video).await;
    as_before_objects(&app.services).await;
    assert!(app.services.media().list(None).await.unwrap().is_empty());

    // Rows that hold their bytes are served as they are.
    assert_eq!(download(&app, &file).await.2, text);
    assert_eq!(replayed(&app, &t, &session).await, ["batch 0", "batch 1"]);
    assert_eq!(call_download(&app, &t, &meeting, &recording).await, video);

    // The command moves them; everything reads the same from the objects.
    let moved = app.services.migrate_media().await.unwrap();
    assert_eq!(
        (moved.files, moved.recording_batches, moved.call_recording_chunks),
        (1, 2, 2)
    );
    assert_eq!(
        moved.bytes as usize,
        text.len() + video.len() + {
            let sizes: Vec<i64> = with_db!(app.services.db(), |pool| sqlx::query_scalar(
                "select recorded_bytes from recorded_sessions"
            )
            .fetch_all(pool)
            .await)
            .unwrap();
            sizes.iter().sum::<i64>() as usize
        }
    );
    let inline: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select (select count(*) from chat_files where data is not null) \
         + (select count(*) from recording_chunks where data is not null) \
         + (select count(*) from conference_recording_chunks where data is not null)"
    )
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(inline, 0);
    assert_eq!(store_matches_rows(&app.services).await.len(), 1 + 2 + 2);
    assert_eq!(download(&app, &file).await.2, text);
    assert_eq!(replayed(&app, &t, &session).await, ["batch 0", "batch 1"]);
    assert_eq!(call_download(&app, &t, &meeting, &recording).await, video);

    // Run again (as after an interruption): nothing is left to move.
    assert_eq!(app.services.migrate_media().await.unwrap(), MigratedMedia::default());
    assert_eq!(store_matches_rows(&app.services).await.len(), 5);

    // The export still carries the file's bytes, and no object key.
    let export = ok_json(
        app.get(&format!("/rest/v1/customer/{}/export", customer_of(&app).await), &t)
            .await,
        StatusCode::OK,
    )
    .await;
    let exported: &Value = &export["records"]["chat_files"][0];
    assert!(exported.get("blob_key").is_none(), "{exported}");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(exported["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, text);
}

/// The one customer of the test's tenant that has a file.
async fn customer_of(app: &TestApp) -> String {
    with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select customer_id from chat_files"
    )
    .fetch_one(pool)
    .await)
    .unwrap()
}

backend_tests!(
    media_lives_in_objects_and_goes_with_its_rows,
    media_lives_in_s3_and_goes_with_its_rows,
    migrate_media_moves_rows_written_before
);
