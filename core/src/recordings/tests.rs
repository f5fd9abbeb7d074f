//! Unit tests of recording batches: their checks and their gzip.

use super::*;

#[test]
fn gzip_round_trips_and_bounds_what_it_inflates() {
    let json = br#"[{"type":4,"timestamp":1}]"#.repeat(100);
    let packed = gzip(&json).unwrap();
    assert!(packed.len() < json.len());
    assert_eq!(gunzip(&packed, json.len()).unwrap(), json);
    assert!(gunzip(&packed, json.len() - 1).is_err(), "a bomb stops at the limit");
}

#[test]
fn a_batch_counts_its_pages_and_names_a_bad_event() {
    let mut checks = Checks::new();
    let batch = RecordingBatch {
        seq: 3,
        events: vec![
            serde_json::json!({"type": 4, "timestamp": 20, "data": {"href": "https://shop.example/"}}),
            serde_json::json!({"type": 2, "timestamp": 21}),
            serde_json::json!({"type": 3, "timestamp": 10}),
        ],
        tags: None,
        visitor_token: None,
    };
    let facts = check_batch(&mut checks, &batch);
    assert!(checks.finish().is_ok());
    assert_eq!((facts.first_at, facts.last_at, facts.pages), (10, 21, 1));

    let mut checks = Checks::new();
    let bad = RecordingBatch {
        seq: -1,
        events: vec![
            serde_json::json!({"type": 2, "timestamp": 1}),
            serde_json::json!({"type": "x"}),
        ],
        tags: None,
        visitor_token: None,
    };
    check_batch(&mut checks, &bad);
    let CoreError::Validation(fields) = checks.finish().unwrap_err() else {
        panic!("a validation error");
    };
    let named: Vec<_> = fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(named, ["seq", "events[1]"]);
}
