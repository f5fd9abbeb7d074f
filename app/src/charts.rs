//! Report charts drawn with plotters as SVG on the server, so a report page is
//! readable without JavaScript. Each chart repeats numbers the page also shows in
//! a table, so the SVG is hidden from assistive technology and the table is the
//! accessible form.

use plotters::{
    coord::Shift,
    prelude::*,
    style::{FontFamily, RGBColor},
};

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
const WIDTH: u32 = 760;

/// A named series of values, one per bucket; `None` where the value is
/// undefined (an average without samples), drawn as a gap.
pub type Series = (String, Vec<Option<f64>>);

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of series `i` as CSS, for legends drawn in HTML.
pub fn css_colour(i: usize) -> String {
    let RGBColor(r, g, b) = colour(i);
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn font(size: u32) -> TextStyle<'static> {
    (FontFamily::SansSerif, size).into_font().color(&INK)
}

/// Runs `draw` on an SVG drawing area and returns the document, made to scale
/// with its container and hidden from screen readers (see the module docs).
fn svg(height: u32, draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>) -> String {
    let mut out = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|_| draw(&root))
            .and_then(|_| root.present().map_err(|e| e.to_string()))
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

/// An axis value without needless decimals: `12`, `2.5`, `90000`.
fn axis_number(value: f64) -> String {
    if value.fract().abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
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

/// Lines over time, one per series.
pub fn lines(labels: &[String], series: &[Series], y_desc: &str) -> String {
    let n = labels.len().max(1);
    svg(240, |root| {
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
    })
}

/// Bars per bucket, one stacked segment per series (agents).
pub fn stacked_bars(labels: &[String], series: &[Series], y_desc: &str) -> String {
    let n = labels.len().max(1);
    svg(260, |root| {
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
    })
}

/// One row per agent, with a bar for each interval; `x` in hours from the start
/// of the period (`span` hours long).
pub fn timeline(rows: &[(String, Vec<(f64, f64)>)], span: f64, tick_label: impl Fn(f64) -> String) -> String {
    let height = (60 + 28 * rows.len().max(1)) as u32;
    svg(height, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(140)
            .build_cartesian_2d(0f64..span.max(1.0), 0f64..rows.len().max(1) as f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(GRID)
            .bold_line_style(GRID)
            .axis_style(INK)
            .label_style(font(12))
            .x_labels(8)
            .x_label_formatter(&|x| tick_label(*x))
            .y_labels(rows.len().max(1))
            .y_label_formatter(&|y| {
                // Rows are drawn top to bottom; each label sits in its row's middle.
                let i = rows.len().saturating_sub(1 + y.floor() as usize);
                if (y.fract() - 0.5).abs() < 1e-9 {
                    rows.get(i).map(|r| r.0.clone()).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(|e| e.to_string())?;
        let count = rows.len();
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_documents_hidden_from_screen_readers() {
        let labels: Vec<String> = (1..=7).map(|d| format!("2026/11/{d:02}")).collect();
        let series = vec![(
            "Chats".to_string(),
            vec![Some(1.0), Some(4.0), None, Some(0.0), None, Some(5.0), Some(1.0)],
        )];
        for svg in [
            lines(&labels, &series, "count"),
            stacked_bars(&labels, &series, "count"),
            timeline(&[("Ann".into(), vec![(1.0, 5.5)])], 24.0, |h| format!("{h}")),
        ] {
            assert!(svg.starts_with("<svg aria-hidden=\"true\""), "{svg}");
            assert!(svg.contains("</svg>"));
        }
        assert!(lines(&labels, &series, "count").contains("11/02"));
        assert_eq!(short_label("2026/11/02 13"), "02 13h");
        assert_eq!(axis_number(90000.0), "90000");
        assert_eq!(axis_number(2.5), "2.5");
    }
}
