//! Report dashboards for supervisors: `/reports` lists the families, and
//! `/reports/{family}` shows one with a period picker, totals versus the previous
//! period, charts, the numbers as a table, and a CSV download. The picker is a
//! plain GET form, so every view has its own link and works without JavaScript.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::reports::{
        load_report,
        view::{ChartSpec, Family, ReportQuery, ReportView, Summary, CHART_WIDTH, PERIODS},
    },
    components::{
        feedback::ErrorNote,
        layout::{supervisors, Guard},
    },
};

/// `/reports`: every report family.
#[component]
pub fn ReportsIndexPage() -> impl IntoView {
    view! {
        <Title text="Reports" />
        <Guard allowed=supervisors>
            <h1>"Reports"</h1>
            <p class="lead">"Every number here is what the REST report operations return for the same period."</p>
            <ul class="tiles">
                {Family::ALL
                    .into_iter()
                    .map(|f| view! { <li><a class="tile" href=format!("/reports/{}", f.slug())>{f.title()}</a></li> })
                    .collect_view()}
            </ul>
        </Guard>
    }
}

/// `/reports/{family}`.
#[component]
pub fn ReportPage() -> impl IntoView {
    view! { <ReportBody /> }
}

#[component]
fn ReportBody() -> impl IntoView {
    let family = use_path_param("family");
    let query = use_query_map();
    let request = move || {
        let q = |k: &str| query.with(|m| m.get(k).unwrap_or_default());
        ReportQuery {
            family: family(),
            grouping: q("grouping"),
            from: q("from"),
            to: q("to"),
            by_agent: q("by_agent"),
        }
    };
    let report = Resource::new(request, load_report);
    let title = move || {
        Family::from_slug(&family())
            .map_or("Reports", Family::title)
            .to_string()
    };
    // The report is created here, outside the guard's `Suspense` (see `Guard`).
    view! {
        <Title text=title />
        <Guard allowed=supervisors>
            <p class="breadcrumb"><a href="/reports">"Reports"</a></p>
            <h1>{title}</h1>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Computing the report…"</p> }>
                {move || Suspend::new(async move {
                    let asked = request();
                    match report.await {
                        Ok(v) => view! { <Report view=v asked=asked /> }.erase(),
                        Err(e) => view! {
                            <Picker asked=asked agent_metrics=Vec::new() />
                            <ErrorNote error=e.to_string() />
                        }
                        .erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

/// The period and per-agent picker: a GET form back to this page.
#[component]
fn Picker(asked: ReportQuery, agent_metrics: Vec<(String, String)>) -> impl IntoView {
    let grouping = if asked.grouping.is_empty() {
        "LAST_7_DAYS".to_string()
    } else {
        asked.grouping.clone()
    };
    let has_agents = !agent_metrics.is_empty();
    view! {
        <form method="get" class="card picker" aria-label="Report period">
            <div class="field-row">
                <div class="field">
                    <label for="grouping">"Period"</label>
                    <select id="grouping" name="grouping">
                        {PERIODS
                            .into_iter()
                            .map(|(g, label)| {
                                view! { <option value=g.as_str() selected={g.as_str() == grouping}>{label}</option> }
                            })
                            .collect_view()}
                    </select>
                </div>
                <div class="field">
                    <label for="from">"From (custom)"</label>
                    <input id="from" name="from" type="date" value=asked.from.clone() />
                </div>
                <div class="field">
                    <label for="to">"To (custom)"</label>
                    <input id="to" name="to" type="date" value=asked.to.clone() />
                </div>
                {has_agents.then(|| view! {
                    <div class="field">
                        <label for="by_agent">"Per agent"</label>
                        <select id="by_agent" name="by_agent">
                            <option value="" selected={asked.by_agent.is_empty()}>"All metrics, in total"</option>
                            {agent_metrics
                                .into_iter()
                                .map(|(key, label)| {
                                    let selected = key == asked.by_agent;
                                    view! { <option value=key selected=selected>{label}</option> }
                                })
                                .collect_view()}
                        </select>
                    </div>
                })}
                <button type="submit" class="button primary">"Show"</button>
            </div>
        </form>
    }
}

#[component]
fn Report(view: ReportView, asked: ReportQuery) -> impl IntoView {
    let csv_href = format!(
        "/reports/{}/csv?{}",
        view.family.slug(),
        ReportQuery {
            grouping: view.grouping.clone(),
            ..asked.clone()
        }
        .to_query_string()
    );
    let empty = view
        .cells
        .iter()
        .all(|row| row.iter().all(|c| c.is_empty() || c == "0"));
    let ReportView {
        period,
        labels,
        columns,
        cells,
        summary,
        charts,
        agent_metrics,
        details,
        ..
    } = view;
    view! {
        <Picker asked=asked agent_metrics=agent_metrics />
        <div class="report-head">
            <p class="period">{period}</p>
            <a class="button secondary" href=csv_href download="">"Download CSV"</a>
        </div>
        {(!summary.is_empty()).then(|| view! { <SummaryRow summary=summary /> })}
        {empty.then(|| view! {
            <p class="note empty-state">"Nothing was recorded in this period. Pick a longer period, or load demo data with "<code>"rapport admin demo-data"</code>"."</p>
        })}
        {charts
            .into_iter()
            .map(|c| view! {
                <figure class="card chart">
                    <figcaption>
                        <span class="chart-title">{c.title}</span>
                        <ul class="legend">
                            {c.legend
                                .into_iter()
                                .map(|(label, colour)| view! {
                                    <li><span class="swatch" style=format!("background:{colour}") aria-hidden="true"></span>{label}</li>
                                })
                                .collect_view()}
                        </ul>
                    </figcaption>
                    <ChartPicture svg=c.svg spec=c.spec height=c.height />
                </figure>
            })
            .collect_view()}
        {details.map(|d| { let label = d.caption.clone(); view! {
            <section class="card">
                // Wide tables scroll sideways: the region takes focus, so the
                // keyboard can scroll it too.
                <div class="table-wrap" tabindex="0" role="region" aria-label=label>
                    <table>
                        <caption>{d.caption}</caption>
                        <thead><tr>{d.headers.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}</tr></thead>
                        <tbody>
                            {d.rows
                                .into_iter()
                                .map(|r| view! { <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr> })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            </section>
        }})}
        <section class="card">
            <div class="table-wrap" tabindex="0" role="region" aria-label="By period">
                <table class="numbers">
                    <caption>"By period"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Period"</th>
                            {columns
                                .into_iter()
                                .map(|c| view! { <th scope="col" data-key=c.key>{c.label}<span class="unit">{format!(" ({})", c.unit)}</span></th> })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {labels
                            .into_iter()
                            .zip(cells)
                            .map(|(label, row)| view! {
                                <tr>
                                    <th scope="row">{label}</th>
                                    {row.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}
                                </tr>
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </section>
    }
}

#[component]
fn SummaryRow(summary: Vec<Summary>) -> impl IntoView {
    view! {
        <ul class="summary" aria-label="This period versus the previous one">
            {summary
                .into_iter()
                .map(|s| {
                    let change = s.change.map(|c| {
                        let class = if c > 0.0 { "change up" } else if c < 0.0 { "change down" } else { "change" };
                        view! { <span class=class>{format!("{c:+}%")}</span> }
                    });
                    view! {
                        <li class="card stat">
                            <span class="stat-label">{s.label}</span>
                            <span class="stat-value">{s.current.unwrap_or_else(|| "–".into())}<span class="unit">{format!(" {}", s.unit)}</span></span>
                            <span class="stat-previous">
                                {format!("previous: {}", s.previous.unwrap_or_else(|| "–".into()))}
                                " "
                                {change}
                            </span>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

/// A chart: the server's SVG, which readers without JavaScript keep, replaced
/// by the same chart drawn on a canvas once the page is live.
#[component]
fn ChartPicture(svg: String, spec: ChartSpec, height: u32) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let drawn = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(element) = canvas.get() {
            match crate::charts::draw_on_canvas(&spec, element) {
                Ok(()) => drawn.set(true),
                // The SVG stays in place.
                Err(e) => leptos::logging::warn!("chart not drawn on the canvas: {e}"),
            }
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = spec;
    view! {
        <div class="chart-svg" inner_html=svg hidden=move || drawn.get()></div>
        <canvas
            node_ref=canvas
            class="chart-canvas"
            width=CHART_WIDTH
            height=height
            aria-hidden="true"
            hidden=move || !drawn.get()
        ></canvas>
    }
}
