//! Opening hours edited week by week: intervals and holidays saved, API
//! conditions shown per day, errors on the editor's rows, roles and tenant
//! isolation.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, StatusCode};
use serde_json::{json, Value};

use super::{assert_refused, json_of};
use crate::{
    dashboard::{server_fn, Cast},
    utils::TestApp,
};

async fn admins_edit_opening_hours_week_by_week(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;

    // Two intervals on Monday, one on Saturday; blank slots are ignored.
    let week = [
        ("form[name]", "Support desk"),
        ("form[timezone]", "Europe/Berlin"),
        ("form[intervals][0][day]", "MONDAY"),
        ("form[intervals][0][start]", "09:00"),
        ("form[intervals][0][end]", "12:30"),
        ("form[intervals][1][day]", "MONDAY"),
        ("form[intervals][1][start]", "13:30:00"),
        ("form[intervals][1][end]", "18:00"),
        ("form[intervals][2][day]", "TUESDAY"),
        ("form[intervals][2][start]", ""),
        ("form[intervals][2][end]", ""),
        ("form[intervals][7][day]", "SATURDAY"),
        ("form[intervals][7][start]", "10:00"),
        ("form[intervals][7][end]", "14:00"),
        ("form[holidays][0][name]", "Christmas"),
        ("form[holidays][0][from]", "2026-12-24"),
        ("form[holidays][0][to]", "2026-12-26"),
        ("form[holidays][1][from]", ""),
    ];
    let saved = json_of(server_fn(&app, "save_opening_hours_form", &admin, &week).await).await;
    let id = saved["id"].as_str().unwrap().to_string();
    let stored = app.get(&format!("/rest/v1/openinghours/{id}"), &key).await;
    let stored: Value = stored.json().await.unwrap();
    assert_eq!(stored["timezone"], "Europe/Berlin");
    assert_eq!(
        stored["conditions"],
        json!([
            {"type": "WEEKDAY", "weekday": "MONDAY", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 12, "minute": 30}},
            {"type": "WEEKDAY", "weekday": "MONDAY", "startHours": {"hour": 13, "minute": 30}, "endHours": {"hour": 18, "minute": 0}},
            {"type": "WEEKDAY", "weekday": "SATURDAY", "startHours": {"hour": 10, "minute": 0}, "endHours": {"hour": 14, "minute": 0}}
        ])
    );
    assert_eq!(
        stored["holidays"][0]["to"],
        json!({"year": 2026, "month": 12, "day": 26})
    );

    // A WORKDAYS condition written through the API shows on each of its days.
    let mut object = stored.clone();
    object["conditions"] = json!([{"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 8, "minute": 0}, "endHours": {"hour": 16, "minute": 0}}]);
    assert_eq!(
        app.post("/rest/v1/openinghours", &key, object).await.status(),
        StatusCode::OK
    );
    let form = json_of(server_fn(&app, "get_opening_hours", &admin, &[("id", id.as_str())]).await).await;
    let days: Vec<&str> = form["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["day"].as_str().unwrap())
        .collect();
    assert_eq!(days, ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"]);

    // Errors land on the editor's rows: an end before its start (from the
    // service), a half-filled row (from the form), and an unknown zone.
    let bad = server_fn(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[id]", id.as_str()),
            ("form[timezone]", "Mars/Olympus"),
            ("form[intervals][0][day]", "MONDAY"),
            ("form[intervals][0][start]", ""),
            ("form[intervals][0][end]", ""),
            ("form[intervals][1][day]", "MONDAY"),
            ("form[intervals][1][start]", "17:00"),
            ("form[intervals][1][end]", "09:00"),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("intervals[1]") && text.contains("timezone"), "{text}");
    let half = server_fn(
        &app,
        "save_opening_hours_form",
        &admin,
        &[
            ("form[timezone]", "UTC"),
            ("form[intervals][0][day]", "FRIDAY"),
            ("form[intervals][0][start]", ""),
            ("form[intervals][1][day]", "FRIDAY"),
            ("form[intervals][1][start]", "09:00"),
        ],
    )
    .await;
    assert_eq!(half.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(half.text().await.unwrap().contains("intervals[1]"));
    let unchanged: Value = app
        .get(&format!("/rest/v1/openinghours/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(unchanged["timezone"], "Europe/Berlin", "a refused save changes nothing");

    let form = [
        ("id", id.as_str()),
        ("form[id]", id.as_str()),
        ("form[timezone]", "UTC"),
    ];
    let by_id = ["get_opening_hours", "delete_opening_hours_entry"];
    let all = ["list_opening_hours", "save_opening_hours_form", by_id[0], by_id[1]];
    assert_refused(&app, &all, &supervisor, &form, StatusCode::FORBIDDEN).await;
    assert_refused(&app, &by_id, &stranger, &[("id", id.as_str())], StatusCode::NOT_FOUND).await;
    let theirs = json_of(server_fn(&app, "list_opening_hours", &stranger, &[]).await).await;
    assert_eq!(theirs, json!([]));
    let deleted = server_fn(&app, "delete_opening_hours_entry", &admin, &[("id", id.as_str())]).await;
    assert_eq!(deleted.headers()[header::LOCATION], "/settings/opening-hours");
}

backend_tests!(admins_edit_opening_hours_week_by_week,);
