//! Call recordings over HTTP, on both backends: a stored recording is listed
//! with its appointment, downloaded whole or by range by who may see it, and
//! deleted when its retention runs out. (The recorder itself is tested in
//! `server/src/media/recorder`, and in Chromium.)

use rapport_core::{backend_tests, ids::TenantId, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    conference::{appointment, appointment_id},
    dashboard::session,
    utils::{ok_json, TestApp},
};

/// Stores a recording of `bytes` for `appointment`, as the recorder does
/// when a participant leaves, that ended `ago` before now.
async fn stored(app: &TestApp, tenant: &TenantId, appointment: &str, bytes: &[u8], ago: chrono::Duration) -> Value {
    use rapport_core::appointments::recordings::{NewConferenceRecording, RecordingSource};
    let ended = (chrono::Utc::now() - ago).timestamp_millis();
    let recording = NewConferenceRecording {
        appointment_id: appointment.into(),
        participant: "Ann Example".into(),
        source: RecordingSource::Camera,
        started_at: ended - 95_000,
        ended_at: ended,
        host: None,
    };
    let stored = app
        .services
        .store_conference_recording(tenant, &recording, bytes)
        .await
        .unwrap();
    serde_json::to_value(stored).unwrap()
}

async fn recordings_are_listed_downloaded_and_expire(db: TestDb) {
    use rapport_core::appointments::recordings::CHUNK_BYTES;
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Recorded").await;
    let (_, other) = app.tenant_with_key("Elsewhere").await;
    app.user(&tenant, "agent@recorded.example", Role::Agent, false).await;
    let cookie = session(&app, "agent@recorded.example").await;
    let join = appointment(&app, &t, json!({"record": true})).await;
    let id = appointment_id(&app, &join).await;

    // Two and a half chunks of a pattern, so that every byte's place shows.
    let bytes: Vec<u8> = (0..CHUNK_BYTES * 5 / 2).map(|i| (i % 251) as u8).collect();
    let recording = stored(&app, &tenant, &id, &bytes, chrono::Duration::minutes(1)).await;
    let rid = recording["id"].as_str().unwrap().to_string();
    let listed = ok_json(
        app.get(&format!("/rest/v1/appointment/{id}/recording"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let first = &listed[0];
    assert_eq!(
        (
            &first["participant"],
            &first["source"],
            &first["durationSeconds"],
            &first["size"]
        ),
        (&json!("Ann Example"), &json!("CAMERA"), &json!(95), &json!(bytes.len()))
    );
    assert_eq!(first["appointmentId"], json!(id));

    // The whole file, and a range across a chunk's end.
    let url = format!("/rest/v1/appointment/{id}/recording/{rid}");
    // Sent as stored, even to a client that takes compressed bodies.
    let whole = app
        .request(reqwest::Method::GET, &url)
        .bearer_auth(&t)
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(whole.status(), StatusCode::OK);
    assert!(whole.headers().get("content-encoding").is_none());
    assert_eq!(whole.headers()["content-length"], bytes.len().to_string().as_str());
    assert_eq!(whole.headers()["content-type"], "video/webm");
    assert_eq!(whole.headers()["accept-ranges"], "bytes");
    assert!(whole.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("-Ann-Example-camera.webm\"; filename*=UTF-8''"));
    assert_eq!(
        whole.bytes().await.unwrap().as_ref(),
        &bytes[..],
        "every byte, in order"
    );
    let (from, to) = (CHUNK_BYTES - 10, CHUNK_BYTES + 9);
    let part = app
        .request(reqwest::Method::GET, &url)
        .bearer_auth(&t)
        .header("range", format!("bytes={from}-{to}"))
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(
        part.headers()["content-range"].to_str().unwrap(),
        format!("bytes {from}-{to}/{}", bytes.len())
    );
    assert_eq!(part.bytes().await.unwrap().as_ref(), &bytes[from..=to]);
    let past = app
        .request(reqwest::Method::GET, &url)
        .bearer_auth(&t)
        .header("range", format!("bytes={}-", bytes.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        past.headers()["content-range"].to_str().unwrap(),
        format!("bytes */{}", bytes.len())
    );
    assert_eq!(
        ok_json(past, StatusCode::RANGE_NOT_SATISFIABLE).await["code"],
        "range_not_satisfiable"
    );

    // Another tenant reaches neither the list nor the file; nobody reaches a
    // recording under another appointment.
    assert_eq!(app.get(&url, &other).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        app.get(&format!("/rest/v1/appointment/{id}/recording"), &other)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    let second = appointment(&app, &t, json!({})).await;
    let second = appointment_id(&app, &second).await;
    assert_eq!(
        app.get(&format!("/rest/v1/appointment/{second}/recording/{rid}"), &t)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );

    // The dashboard's link, for the tenant's signed-in users only.
    let page_link = format!("/appointments/{id}/recordings/{rid}");
    let signed_in = app
        .request(reqwest::Method::GET, &page_link)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), StatusCode::OK);
    assert_eq!(signed_in.bytes().await.unwrap().len(), bytes.len());
    let anonymous = app.request(reqwest::Method::GET, &page_link).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    // Counted in the conference report (the recording's minutes included).
    let body = json!({"metrics": [{"metricName": "CONFERENCE_RECORDINGS"}, {"metricName": "CONFERENCE_RECORDED_MINUTES"}],
        "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(app.post("/rest/v1/report/conference", &t, body).await, StatusCode::OK).await;
    let sum = |name: &str| -> f64 {
        report["results"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|bucket| bucket[name].as_str())
            .map(|n| n.parse::<f64>().unwrap())
            .sum()
    };
    assert_eq!(sum("CONFERENCE_RECORDINGS"), 1.0, "{report}");
    assert!(sum("CONFERENCE_RECORDED_MINUTES") > 1.5, "95 s recorded: {report}");

    // Audited.
    let audit = ok_json(app.get("/rest/v1/audit?pageSize=100", &t).await, StatusCode::OK).await;
    assert!(
        audit.to_string().contains("conference.recording"),
        "the recording is audited: {audit}"
    );

    // Retention: the workspace keeps conference recordings 2 days; one that
    // ended 3 days ago goes, the recent one stays.
    let settings = app
        .request(reqwest::Method::PUT, "/rest/v1/workspace/recording")
        .bearer_auth(&t)
        .json(&json!({"conferenceRetentionDays": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(settings, StatusCode::OK).await["conferenceRetentionDays"], 2);
    let bad = app
        .request(reqwest::Method::PUT, "/rest/v1/workspace/recording")
        .bearer_auth(&t)
        .json(&json!({"conferenceRetentionDays": 0}))
        .send()
        .await
        .unwrap();
    let problem = ok_json(bad, StatusCode::UNPROCESSABLE_ENTITY).await;
    assert_eq!(problem["errors"][0]["field"], "conferenceRetentionDays");
    let old = stored(&app, &tenant, &id, b"old", chrono::Duration::days(3)).await;
    let now = chrono::Utc::now().timestamp_millis();
    assert_eq!(app.services.prune_conference_recordings(now, 10).await.unwrap(), 1);
    let left = ok_json(
        app.get(&format!("/rest/v1/appointment/{id}/recording"), &t).await,
        StatusCode::OK,
    )
    .await;
    let ids: Vec<&str> = left
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![rid.as_str()], "{} expired", old["id"]);

    // Deleting the appointment deletes its recordings.
    let deleted = app
        .request(reqwest::Method::DELETE, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success());
    assert!(app
        .services
        .conference_recording_chunk(&rid, 0)
        .await
        .unwrap()
        .is_none());
    app.stop().await;
}

backend_tests!(recordings_are_listed_downloaded_and_expire);
