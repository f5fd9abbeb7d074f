//! Report charts, drawn with plotters from a [`ChartSpec`]: as SVG on the
//! server, so a report page is readable without JavaScript, and again on a
//! canvas in the browser once the page is live. Both go through [`draw`], so
//! they show the same thing. Each chart repeats numbers the page also shows in
//! a table, so the chart is hidden from assistive technology and the table is
//! the accessible form.

use plotters::{
    coord::Shift,
    prelude::*,
    style::{FontFamily, RGBColor},
};

#[cfg(feature = "ssr")]
use crate::api::reports::view::CHART_WIDTH as WIDTH;
use crate::api::reports::view::{ChartSpec, Series};

/// Colours for series, distinguishable for the common colour-vision deficiencies
/// (the Okabe–Ito palette).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];
const INK: RGBColor = RGBColor(55, 65, 81);
const GRID: RGBColor = RGBColor(229, 231, 235);

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of series `i` as CSS, for legends drawn in HTML.
#[cfg(feature = "ssr")]
pub fn css_colour(i: usize) -> String {
    let RGBColor(r, g, b) = colour(i);
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn font(size: u32) -> TextStyle<'static> {
    (FontFamily::SansSerif, size).into_font().color(&INK)
}

/// The chart's height in pixels (its width is always the same).
#[cfg(feature = "ssr")]
pub fn height(spec: &ChartSpec) -> u32 {
    match spec {
        ChartSpec::Lines { .. } => 240,
        ChartSpec::StackedBars { .. } => 260,
        ChartSpec::Timeline { rows, .. } => (60 + 28 * rows.len().max(1)) as u32,
    }
}

/// Draws the chart on any plotters backend.
pub fn draw<DB: DrawingBackend>(spec: &ChartSpec, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    match spec {
        ChartSpec::Lines { labels, series, y_desc } => lines(root, labels, series, y_desc),
        ChartSpec::StackedBars { labels, series, y_desc } => stacked_bars(root, labels, series, y_desc),
        ChartSpec::Timeline { rows, span, ticks } => timeline(root, rows, *span, ticks),
    }?;
    root.present().map_err(|e| e.to_string())
}

/// The chart as an SVG document, made to scale with its container and hidden
/// from screen readers (see the module docs); empty if it cannot be drawn.
#[cfg(feature = "ssr")]
pub fn svg(spec: &ChartSpec) -> String {
    let mut out = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height(spec))).into_drawing_area();
        draw(spec, &root)
    };
    match drawn {
        Ok(()) => out.replacen(
            "<svg ",
            "<svg aria-hidden=\"true\" focusable=\"false\" preserveAspectRatio=\"xMinYMin meet\" ",
            1,
        ),
        Err(e) => {
            tracing::warn!(error = %e, "chart could not be drawn");
            String::new()
        }
    }
}

/// A readable subset of bucket labels for an axis: about `n` of them.
fn label_every(count: usize, n: usize) -> usize {
    count.div_ceil(n.max(1)).max(1)
}

/// Short axis label: `MM/DD` for days, `DD HH` for hours.
fn short_label(label: &str) -> String {
    match label.len() {
        10 => label[5..].to_string(),
        13 => format!("{}h", &label[8..]),
        _ => label.to_string(),
    }
}

/// An axis value, short enough for the axis: `12`, `2.5`, `9500`, `90k`,
/// `1.2M`.
fn axis_number(value: f64) -> String {
    let plain = |v: f64| {
        if v.fract().abs() < 1e-9 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}").trim_end_matches(".0").to_string()
        }
    };
    match value.abs() {
        v if v >= 1e6 => format!("{}M", plain((value / 1e5).round() / 10.0)),
        v if v >= 1e4 => format!("{}k", plain((value / 1e2).round() / 10.0)),
        _ => plain(value),
    }
}

fn y_max(series: &[Series], stacked: bool) -> f64 {
    let max = if stacked {
        let buckets = series.first().map_or(0, |s| s.1.len());
        (0..buckets)
            .map(|i| series.iter().filter_map(|s| s.1.get(i).copied().flatten()).sum::<f64>())
            .fold(0.0, f64::max)
    } else {
        series
            .iter()
            .flat_map(|s| s.1.iter().flatten().copied())
            .fold(0.0, f64::max)
    };
    if max <= 0.0 {
        1.0
    } else {
        max * 1.1
    }
}

/// Draws the chart on a `<canvas>` (of `CHART_WIDTH` × [`height`] pixels).
#[cfg(feature = "hydrate")]
pub fn draw_on_canvas(spec: &ChartSpec, canvas: web_sys::HtmlCanvasElement) -> Result<(), String> {
    let backend = plotters_canvas::CanvasBackend::with_canvas_object(canvas).ok_or("no 2D context")?;
    draw(spec, &backend.into_drawing_area())
}

/// The presence timeline's time axis, from `origin` (a local midnight) to
/// `end`, in hours from `origin`: at most about eight local midnights (every
/// day, or every few days) for two days or more, else every few hours. Cut in
/// the tenant's zone, so a tick is a real midnight on a DST day too.
#[cfg(feature = "ssr")]
pub fn timeline_ticks(tz: chrono_tz::Tz, origin: i64, end: i64) -> Vec<(f64, String)> {
    use chrono::TimeZone;
    const MOST: i64 = 8;
    let hours = |ms: i64| (ms - origin) as f64 / 3_600_000.0;
    let span_hours = (end - origin).max(1) / 3_600_000 + 1;
    let mut ticks = Vec::new();
    if span_hours >= 48 {
        let Some(first) = tz.timestamp_millis_opt(origin).single().map(|t| t.date_naive()) else {
            return ticks;
        };
        let days = span_hours / 24 + 1;
        let step = ((days + MOST - 1) / MOST).max(1) as usize;
        for day in (0..=days).step_by(step) {
            let date = first + chrono::Days::new(day as u64);
            let Some(at) = date
                .and_hms_opt(0, 0, 0)
                .and_then(|t| tz.from_local_datetime(&t).earliest())
                .map(|t| t.timestamp_millis())
            else {
                continue;
            };
            if at > end {
                break;
            }
            ticks.push((hours(at), date.format("%m/%d").to_string()));
        }
    } else {
        let step = [1, 2, 3, 6, 12]
            .into_iter()
            .find(|step| span_hours / step <= MOST)
            .unwrap_or(24);
        for hour in (0..=span_hours).step_by(step as usize) {
            let at = origin + hour * 3_600_000;
            if let Some(local) = tz.timestamp_millis_opt(at).single() {
                ticks.push((hour as f64, local.format("%m/%d %H:%M").to_string()));
            }
        }
    }
    ticks
}

/// Lines over time, one per series.
fn lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[String],
    series: &[Series],
    y_desc: &str,
) -> Result<(), String> {
    let n = labels.len().max(1);
    {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(0..n.max(2) - 1, 0f64..y_max(series, false))
            .map_err(|e| e.to_string())?;
        let every = label_every(n, 8);
        chart
            .configure_mesh()
            .light_line_style(GRID)
            .bold_line_style(GRID)
            .axis_style(INK)
            .label_style(font(12))
            .x_labels(n.min(8))
            .x_label_formatter(&|i| {
                if i.is_multiple_of(every) {
                    labels.get(*i).map(|l| short_label(l)).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| axis_number(*v))
            .y_desc(y_desc)
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (_, values)) in series.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            // One line per run of defined values, so an undefined bucket is a gap.
            let mut run: Vec<(usize, f64)> = Vec::new();
            for (x, value) in values.iter().enumerate() {
                if let Some(y) = value {
                    run.push((x, *y));
                }
                if value.is_none() || x + 1 == values.len() {
                    let points = std::mem::take(&mut run);
                    match points.len() {
                        0 => {}
                        1 => {
                            chart
                                .draw_series(std::iter::once(Circle::new(points[0], 3, style.filled())))
                                .map_err(|e| e.to_string())?;
                        }
                        _ => {
                            chart
                                .draw_series(LineSeries::new(points, style))
                                .map_err(|e| e.to_string())?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Bars per bucket, one stacked segment per series (agents).
fn stacked_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[String],
    series: &[Series],
    y_desc: &str,
) -> Result<(), String> {
    let n = labels.len().max(1);
    {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..n as f64, 0f64..y_max(series, true))
            .map_err(|e| e.to_string())?;
        let every = label_every(n, 8);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(GRID)
            .bold_line_style(GRID)
            .axis_style(INK)
            .label_style(font(12))
            .x_labels(n.min(8))
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if i.is_multiple_of(every) {
                    labels.get(i).map(|l| short_label(l)).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| axis_number(*v))
            .y_desc(y_desc)
            .draw()
            .map_err(|e| e.to_string())?;
        let mut base = vec![0f64; n];
        for (s, (_, values)) in series.iter().enumerate() {
            let bars = values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.filter(|v| *v > 0.0).map(|v| (i, v)))
                .map(|(i, v)| {
                    let bottom = base[i];
                    base[i] += v;
                    Rectangle::new(
                        [(i as f64 + 0.15, bottom), (i as f64 + 0.85, bottom + v)],
                        colour(s).filled(),
                    )
                });
            chart.draw_series(bars).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// One row per agent, with a bar for each interval; `x` in hours from the start
/// of the period (`span` hours long), labelled with `ticks`. Both axes get
/// their labels exactly where given (the ticks, and each row's middle), not
/// where plotters' own spacing would put them.
fn timeline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[(String, Vec<(f64, f64)>)],
    span: f64,
    ticks: &[(f64, String)],
) -> Result<(), String> {
    let count = rows.len().max(1);
    let x_axis = LabelledAxis::new(0.0..span.max(1.0), ticks.iter().map(|(at, _)| *at).collect());
    // Row `r` is drawn from the top, between `count - 1 - r` and `count - r`.
    let y_axis = LabelledAxis::new(0.0..count as f64, (0..rows.len()).map(|r| r as f64 + 0.5).collect());
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(140)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .axis_style(INK)
        .label_style(font(12))
        .x_labels(ticks.len().max(1))
        .x_label_formatter(&|x| {
            ticks
                .iter()
                .find(|(at, _)| (at - x).abs() < 1e-9)
                .map(|(_, label)| label.clone())
                .unwrap_or_default()
        })
        .y_labels(count)
        .y_label_formatter(&|y| {
            let row = count.saturating_sub(1 + y.floor() as usize);
            rows.get(row).map(|r| r.0.clone()).unwrap_or_default()
        })
        .draw()
        .map_err(|e| e.to_string())?;
    for (r, (_, ranges)) in rows.iter().enumerate() {
        let y = (count - 1 - r) as f64;
        chart
            .draw_series(
                ranges
                    .iter()
                    .map(|(s, e)| Rectangle::new([(*s, y + 0.2), (*e, y + 0.8)], colour(2).filled())),
            )
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A linear axis labelled at given values only. (plotters' own
/// `with_key_points` cannot take a label formatter on an `f64` axis.)
struct LabelledAxis {
    range: std::ops::Range<f64>,
    labels_at: Vec<f64>,
}

impl LabelledAxis {
    fn new(range: std::ops::Range<f64>, labels_at: Vec<f64>) -> Self {
        LabelledAxis { range, labels_at }
    }
}

impl Ranged for LabelledAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let size = self.range.end - self.range.start;
        if size <= 0.0 {
            return (limit.0 + limit.1) / 2;
        }
        let share = (value - self.range.start) / size;
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Labels and their grid lines at the given values; no light lines.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.labels_at.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn charts_are_svg_documents_hidden_from_screen_readers() {
        let labels: Vec<String> = (1..=7).map(|d| format!("2026/11/{d:02}")).collect();
        let series = vec![(
            "Chats".to_string(),
            vec![Some(1.0), Some(4.0), None, Some(0.0), None, Some(5.0), Some(1.0)],
        )];
        let lines = ChartSpec::Lines {
            labels: labels.clone(),
            series: series.clone(),
            y_desc: "count".into(),
        };
        let ticks = vec![(0.0, "at 0h".to_string()), (12.0, "at 12h".to_string())];
        let timeline = ChartSpec::Timeline {
            rows: vec![("Ann".into(), vec![(1.0, 5.5)])],
            span: 24.0,
            ticks: ticks.clone(),
        };
        for spec in [
            &lines,
            &ChartSpec::StackedBars {
                labels,
                series,
                y_desc: "count".into(),
            },
            &timeline,
        ] {
            let document = svg(spec);
            assert!(document.starts_with("<svg aria-hidden=\"true\""), "{document}");
            assert!(document.contains("</svg>"));
        }
        assert!(svg(&lines).contains("11/02"));
        for (_, label) in &ticks {
            assert!(svg(&timeline).contains(label.as_str()), "the axis shows {label}");
        }
        assert_eq!(short_label("2026/11/02 13"), "02 13h");
        assert_eq!(axis_number(9500.0), "9500");
        assert_eq!(axis_number(90000.0), "90k");
        assert_eq!(axis_number(12500.0), "12.5k");
        assert_eq!(axis_number(1_250_000.0), "1.3M");
        assert_eq!(axis_number(2.5), "2.5");
        let rows = ChartSpec::Timeline {
            rows: vec![("Ann".into(), vec![(1.0, 5.5)]), ("Bo".into(), vec![(2.0, 3.0)])],
            span: 24.0,
            ticks: vec![(0.0, "first tick".into()), (12.0, "second tick".into())],
        };
        let document = svg(&rows);
        for label in ["Ann", "Bo", "first tick", "second tick"] {
            assert!(document.contains(label), "{label} is on an axis");
        }
    }

    fn midnight(tz: chrono_tz::Tz, y: i32, m: u32, d: u32) -> i64 {
        tz.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap().timestamp_millis()
    }

    #[test]
    fn timeline_ticks_are_local_midnights_across_a_dst_change() {
        let tz: chrono_tz::Tz = "Europe/Berlin".parse().unwrap();
        // The week in which clocks go back (Sunday 25 October 2026 has 25 hours).
        let origin = midnight(tz, 2026, 10, 22);
        let end = midnight(tz, 2026, 10, 29) - 1;
        let ticks = timeline_ticks(tz, origin, end);
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["10/22", "10/23", "10/24", "10/25", "10/26", "10/27", "10/28"]);
        assert_eq!(ticks[3].0, 72.0);
        assert_eq!(ticks[4].0, 97.0, "the 25-hour day");
    }

    #[test]
    fn long_periods_get_about_eight_ticks_and_short_ones_hours() {
        let tz = chrono_tz::UTC;
        let origin = midnight(tz, 2026, 1, 1);
        let year = timeline_ticks(tz, origin, midnight(tz, 2026, 12, 31));
        assert!((7..=9).contains(&year.len()), "{year:?}");
        let day = timeline_ticks(tz, origin, origin + 20 * 3_600_000);
        let labels: Vec<&str> = day.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels[..3], ["01/01 00:00", "01/01 03:00", "01/01 06:00"]);
    }
}
