//! Unit tests of report windows: buckets across midnight, DST days, half-hour zones and custom ranges.

use super::*;

fn ms(tz: Tz, y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    tz.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .earliest()
        .unwrap()
        .timestamp_millis()
}

fn custom(tz: Tz, from: i64, to: i64) -> Window {
    Window::new(WindowSpec {
        grouping: Grouping::Custom,
        from: Some(from),
        to: Some(to),
        tz,
        now: to,
        first_fact: None,
        field: "dateFilter.",
    })
    .unwrap()
}

#[test]
fn an_interval_across_midnight_splits_between_the_days() {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    let w = custom(tz, ms(tz, 2026, 11, 1, 0, 0), ms(tz, 2026, 11, 10, 0, 0));
    let parts = w.split(ms(tz, 2026, 11, 3, 23, 50), ms(tz, 2026, 11, 4, 0, 10));
    let labelled: Vec<(String, i64)> = parts.iter().map(|(b, v)| (w.label(*b), *v)).collect();
    assert_eq!(
        labelled,
        vec![("2026/11/03".to_string(), 600_000), ("2026/11/04".to_string(), 600_000)]
    );
}

#[test]
fn dst_days_have_their_real_length() {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    // 2026-03-29: clocks go forward (23 h); 2026-10-25: back (25 h).
    let w = custom(tz, ms(tz, 2026, 3, 28, 0, 0), ms(tz, 2026, 10, 27, 0, 0));
    assert_eq!(w.segments().len(), 3);
    let whole = |d: u32, m: u32| {
        let from = ms(tz, 2026, m, d, 0, 0);
        let to = ms(tz, 2026, m, d + 1, 0, 0);
        w.split(from, to)
    };
    let spring = whole(29, 3);
    assert_eq!(spring.len(), 1);
    assert_eq!(w.label(spring[0].0), "2026/03/29");
    assert_eq!(spring[0].1, 23 * HOUR);
    let autumn = whole(25, 10);
    assert_eq!(autumn.len(), 1);
    assert_eq!(autumn[0].1, 25 * HOUR);
    let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
    assert_eq!(labels.first().unwrap(), "2026/03/28");
    assert_eq!(labels.last().unwrap(), "2026/10/26");
    assert_eq!(labels.len(), 213);
}

#[test]
fn hourly_buckets_merge_the_repeated_hour_and_skip_the_missing_one() {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    let w = custom(tz, ms(tz, 2026, 10, 25, 0, 0), ms(tz, 2026, 10, 26, 0, 0));
    let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
    assert_eq!(labels.len(), 24);
    let two = w
        .buckets()
        .into_iter()
        .find(|b| w.label(*b) == "2026/10/25 02")
        .unwrap();
    let parts = w.split(w.start, w.end);
    assert_eq!(parts.iter().find(|(b, _)| *b == two).unwrap().1, 2 * HOUR);
    let w = custom(tz, ms(tz, 2026, 3, 29, 0, 0), ms(tz, 2026, 3, 30, 0, 0));
    let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
    assert_eq!(labels.len(), 23);
    assert!(!labels.contains(&"2026/03/29 02".to_string()));
}

#[test]
fn relative_groupings() {
    let tz: Tz = "America/New_York".parse().unwrap();
    let now = ms(tz, 2026, 11, 21, 15, 30);
    let window = |grouping| {
        Window::new(WindowSpec {
            grouping,
            from: None,
            to: None,
            tz,
            now,
            first_fact: Some(ms(tz, 2026, 11, 1, 12, 0)),
            field: "",
        })
        .unwrap()
    };
    let labels = |w: &Window| w.buckets().iter().map(|b| w.label(*b)).collect::<Vec<_>>();
    let today = window(Grouping::Today);
    assert_eq!(labels(&today).len(), 16);
    assert_eq!(labels(&today)[15], "2026/11/21 15");
    assert_eq!(labels(&window(Grouping::TodayByMinute)).len(), 15 * 60 + 30);
    assert_eq!(labels(&window(Grouping::TodayByMinute))[0], "2026/11/21 00:00");
    let week = labels(&window(Grouping::Last7Days));
    assert_eq!(week, (15..=21).map(|d| format!("2026/11/{d}")).collect::<Vec<_>>());
    let month = labels(&window(Grouping::LastMonth));
    assert_eq!(month.first().unwrap(), "2026/10/22");
    assert_eq!(month.len(), 31);
    let year = labels(&window(Grouping::LastYear));
    assert_eq!(year.first().unwrap(), "2025/11/22");
    assert_eq!(year.len(), 365);
    let all = labels(&window(Grouping::All));
    assert_eq!(all.first().unwrap(), "2026/11/01");
    assert_eq!(all.len(), 21);
}

#[test]
fn bucket_sql_picks_each_segment_offset() {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    let w = custom(tz, ms(tz, 2026, 10, 20, 0, 0), ms(tz, 2026, 10, 30, 0, 0));
    let change = w.segments()[0].end;
    assert_eq!(
        w.bucket_sql("at"),
        format!("case when at < {change} then (at + 7200000) / 86400000 else (at + 3600000) / 86400000 end")
    );
    let summer = custom(tz, ms(tz, 2026, 7, 1, 0, 0), ms(tz, 2026, 7, 5, 0, 0));
    assert_eq!(summer.bucket_sql("at"), "(at + 7200000) / 86400000");
}

#[test]
fn clipping_keeps_the_buckets() {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    // Across the autumn change: two segments.
    let w = custom(tz, ms(tz, 2026, 10, 20, 0, 0), ms(tz, 2026, 10, 30, 0, 0));
    let last_day = ms(tz, 2026, 10, 29, 0, 0);
    let clipped = w.clip(ms(tz, 2026, 10, 24, 12, 0), last_day).unwrap();
    assert_eq!(clipped.segments().len(), 2);
    assert_eq!(clipped.label(clipped.bucket_of(clipped.start)), "2026/10/24");
    let labels: Vec<String> = clipped.buckets().iter().map(|b| w.label(*b)).collect();
    assert_eq!(labels.first().unwrap(), "2026/10/24");
    assert_eq!(labels.last().unwrap(), "2026/10/28");
    assert!(w.clip(w.end, w.end + 1).is_none());
}

#[test]
fn half_hour_zones_are_not_hour_aligned() {
    let tz: Tz = "Asia/Kolkata".parse().unwrap();
    let w = custom(tz, ms(tz, 2026, 11, 1, 0, 0), ms(tz, 2026, 11, 5, 0, 0));
    assert!(!w.hour_aligned());
    let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
    assert_eq!(labels, vec!["2026/11/01", "2026/11/02", "2026/11/03", "2026/11/04"]);
    let berlin: Tz = "Europe/Berlin".parse().unwrap();
    assert!(custom(berlin, 0, DAY * 3).hour_aligned());
}

#[test]
fn custom_ranges_are_checked() {
    let tz: Tz = "UTC".parse().unwrap();
    let spec = |from, to| WindowSpec {
        grouping: Grouping::Custom,
        from,
        to,
        tz,
        now: 0,
        first_fact: None,
        field: "dateFilter.",
    };
    let field = |r: CoreResult<Window>| match r.unwrap_err() {
        CoreError::Validation(errors) => errors[0].field.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(field(Window::new(spec(None, Some(1)))), "dateFilter.from");
    assert_eq!(field(Window::new(spec(Some(5), Some(1)))), "dateFilter.to");
    assert_eq!(
        field(Window::new(spec(Some(0), Some(MAX_CUSTOM_SPAN + 1)))),
        "dateFilter.to"
    );
    assert_eq!(custom(tz, 0, 48 * HOUR).unit, BucketUnit::Hour);
    assert_eq!(custom(tz, 0, 48 * HOUR + 1).unit, BucketUnit::Day);
}
