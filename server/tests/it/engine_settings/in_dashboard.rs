//! The engine settings in the dashboard: the workspace form, a user's
//! capacity, whether opening hours are open now, and the holiday editor.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::office_hours;
use crate::{
    dashboard::{server_fn, server_fn_ok, Cast},
    utils::{ok_json, TestApp},
};

async fn engine_settings_in_the_dashboard(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let hours = ok_json(
        app.post("/rest/v1/openinghours", &key, office_hours()).await,
        StatusCode::CREATED,
    )
    .await;
    let hours_id = hours["id"].as_str().unwrap().to_string();

    // The workspace page offers the tenant's opening hours.
    let ws = server_fn_ok(&app, "get_workspace", &admin, &[]).await;
    assert_eq!(ws["language"], "en");
    assert_eq!(ws["max_chats"], 5);
    assert_eq!(ws["opening_hours"], json!([[hours_id, "Office"]]));

    // Field problems name the API's fields.
    let bad = server_fn(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "??"), ("max_chats", "0"), ("business_hours_id", "nope")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    for field in ["language", "maxChats", "businessHoursId"] {
        assert!(text.contains(field), "{field}: {text}");
    }
    let not_a_number = server_fn(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "en"), ("max_chats", "lots"), ("business_hours_id", "")],
    )
    .await;
    assert_eq!(not_a_number.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(not_a_number.text().await.unwrap().contains("maxChats"));

    let saved = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", hours_id.as_str()),
        ],
    )
    .await;
    assert_eq!(saved["language"], "fr");
    assert_eq!(saved["max_chats"], 7);
    assert_eq!(saved["business_hours_id"], hours_id);
    let settings = app.services.engine_settings(&alpha).await.unwrap();
    assert_eq!(settings.business_hours_id.as_deref(), Some(hours_id.as_str()));
    // An empty choice means around the clock.
    let cleared = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[("language", "fr"), ("max_chats", "7"), ("business_hours_id", "")],
    )
    .await;
    assert_eq!(cleared["business_hours_id"], Value::Null);
    // The rating question is a checkbox: unchecked (absent) turns it off.
    assert_eq!(ws["csat_enabled"], true, "asked by default");
    assert_eq!(cleared["csat_enabled"], false);
    assert!(!app.services.get_tenant(&alpha).await.unwrap().csat_enabled);
    let asked = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", ""),
            ("csat", "on"),
        ],
    )
    .await;
    assert_eq!(asked["csat_enabled"], true);
    // So are drafts shown to agents (on by default) and transcripts on close
    // (off by default).
    assert_eq!(
        (&ws["typing_preview"], &ws["transcript_on_close"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(asked["typing_preview"], false, "unchecked");
    let both = server_fn_ok(
        &app,
        "update_engine_settings",
        &admin,
        &[
            ("language", "fr"),
            ("max_chats", "7"),
            ("business_hours_id", ""),
            ("csat", "on"),
            ("typing_preview", "on"),
            ("transcript", "on"),
        ],
    )
    .await;
    assert_eq!(
        (&both["typing_preview"], &both["transcript_on_close"]),
        (&json!(true), &json!(true))
    );
    let stored = app.services.get_tenant(&alpha).await.unwrap();
    assert!(stored.typing_preview && stored.transcript_on_close);
    let form = [("language", "en"), ("max_chats", "5"), ("business_hours_id", "")];
    assert_eq!(
        server_fn(&app, "update_engine_settings", &supervisor, &form)
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    // Another workspace's admin changes their own workspace only.
    server_fn_ok(&app, "update_engine_settings", &stranger, &form).await;
    assert_eq!(app.services.engine_settings(&alpha).await.unwrap().language, "fr");

    // A user's capacity: empty is the workspace default.
    let added = server_fn_ok(
        &app,
        "add_user",
        &admin,
        &[
            ("form[email]", "kim@alpha.example"),
            ("form[role]", "AGENT"),
            ("form[max_concurrent_chats]", "2"),
        ],
    )
    .await;
    assert_eq!(added["user"]["max_concurrent_chats"], 2);
    let id = added["user"]["id"].as_str().unwrap().to_string();
    let bad = server_fn(
        &app,
        "edit_user",
        &admin,
        &[
            ("id", id.as_str()),
            ("form[email]", "kim@alpha.example"),
            ("form[max_concurrent_chats]", "500"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("maxConcurrentChats"));
    let edited = server_fn_ok(
        &app,
        "edit_user",
        &admin,
        &[
            ("id", id.as_str()),
            ("form[email]", "kim@alpha.example"),
            ("form[max_concurrent_chats]", ""),
        ],
    )
    .await;
    assert_eq!(edited["max_concurrent_chats"], Value::Null);

    // The opening hours pages say whether they are open now, in their zone.
    let states = server_fn_ok(&app, "opening_hours_now", &admin, &[]).await;
    let state = &states[0];
    assert_eq!(state["id"], hours_id);
    let text = state["text"].as_str().unwrap();
    let expected = if state["open"].as_bool().unwrap() {
        "Open now — closes at "
    } else {
        "Closed — opens at "
    };
    assert!(
        text.starts_with(expected) && text.ends_with("(Europe/Berlin)"),
        "{text}"
    );
    let one = server_fn_ok(&app, "opening_hours_now", &admin, &[("id", hours_id.as_str())]).await;
    assert_eq!(one, states);
    assert_eq!(
        server_fn_ok(&app, "opening_hours_now", &admin, &[("id", "new")]).await,
        json!([])
    );
    assert_eq!(
        server_fn(&app, "opening_hours_now", &stranger, &[("id", hours_id.as_str())])
            .await
            .status(),
        StatusCode::NOT_FOUND
    );

    // A yearly holiday survives a save from the editor.
    let saved = server_fn_ok(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[id]", hours_id.as_str()),
            ("form[timezone]", "Europe/Berlin"),
            ("form[holidays][0][name]", "Christmas"),
            ("form[holidays][0][from]", "2026-12-24"),
            ("form[holidays][0][to]", "2026-12-26"),
            ("form[holidays][0][every_year]", "on"),
            ("form[holidays][1][name]", "Bridge day"),
            ("form[holidays][1][from]", "2026-10-02"),
        ],
    )
    .await;
    assert_eq!(saved["holidays"][0]["every_year"], "on");
    assert_eq!(saved["holidays"][1]["every_year"], Value::Null);
    let stored = ok_json(
        app.get(&format!("/rest/v1/openinghours/{hours_id}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stored["holidays"][0]["fixedDate"], true);
    assert_eq!(stored["holidays"][1]["fixedDate"], Value::Null);
}

backend_tests!(engine_settings_in_the_dashboard);
