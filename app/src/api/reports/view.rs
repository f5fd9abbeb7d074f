//! What a report page asks (a family, a period, a zone) and what it is
//! answered (columns, totals, charts, detail rows): the types both the page and
//! the server side of reports (`crate::reports`, `crate::charts`) speak.

use rapport_core::reports::api::Grouping;
use serde::{Deserialize, Serialize};

/// A report page: one family of the spec's report operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    /// Presence: logged-in, online and away times.
    Agents,
    /// Conversations and response times.
    Chats,
    /// Messages by direction and type.
    Messages,
    /// Recorded visitor sessions.
    Sessions,
    /// Website visits.
    Visits,
    /// Co-browsing, from the visitor script and from generated links.
    Cobrowse,
    /// Video conferences.
    Conferences,
    /// Routing-rule matches and SLA outcomes.
    Rules,
    /// Page resources loaded by visitors.
    Resources,
    /// Script errors visitors hit.
    ScriptErrors,
}

impl Family {
    /// Every family, in navigation order.
    pub const ALL: [Family; 10] = [
        Family::Agents,
        Family::Chats,
        Family::Messages,
        Family::Sessions,
        Family::Visits,
        Family::Cobrowse,
        Family::Conferences,
        Family::Rules,
        Family::Resources,
        Family::ScriptErrors,
    ];

    /// The page's path segment: `/reports/{slug}`.
    pub fn slug(self) -> &'static str {
        match self {
            Family::Agents => "agents",
            Family::Chats => "chats",
            Family::Messages => "messages",
            Family::Sessions => "sessions",
            Family::Visits => "visits",
            Family::Cobrowse => "cobrowse",
            Family::Conferences => "conferences",
            Family::Rules => "rules",
            Family::Resources => "resources",
            Family::ScriptErrors => "script-errors",
        }
    }

    /// The family of a path segment.
    pub fn from_slug(slug: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.slug() == slug)
    }

    /// The page title.
    pub fn title(self) -> &'static str {
        match self {
            Family::Agents => "Agents",
            Family::Chats => "Chats",
            Family::Messages => "Messages",
            Family::Sessions => "Sessions",
            Family::Visits => "Visits",
            Family::Cobrowse => "Co-browsing",
            Family::Conferences => "Conferences",
            Family::Rules => "Rules and SLA",
            Family::Resources => "Resources",
            Family::ScriptErrors => "Script errors",
        }
    }
}

/// The periods a page offers, with their labels.
pub const PERIODS: [(Grouping, &str); 6] = [
    (Grouping::Today, "Today, by hour"),
    (Grouping::Last7Days, "Last 7 days"),
    (Grouping::LastMonth, "Last month"),
    (Grouping::LastYear, "Last year"),
    (Grouping::All, "Everything"),
    (Grouping::Custom, "Custom range"),
];

/// What a report page asks for; the page's URL query, so every view has a link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportQuery {
    /// The family's slug.
    pub family: String,
    /// A `grouping` wire value; empty means `LAST_7_DAYS`.
    pub grouping: String,
    /// For `CUSTOM`: the first day, `YYYY-MM-DD`, in the tenant's zone.
    pub from: String,
    /// For `CUSTOM`: the last day (included).
    pub to: String,
    /// A metric to show per agent; empty shows every metric in total.
    pub by_agent: String,
}

impl ReportQuery {
    /// The URL query string of this view, without the family.
    pub fn to_query_string(&self) -> String {
        let mut parts = vec![format!("grouping={}", self.grouping)];
        for (key, value) in [("from", &self.from), ("to", &self.to), ("by_agent", &self.by_agent)] {
            if !value.is_empty() {
                parts.push(format!("{key}={value}"));
            }
        }
        parts.join("&")
    }
}

/// A column of a report table: a metric, or an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The key in the REST response (`metricName` or agent id).
    pub key: String,
    /// What the page calls it.
    pub label: String,
    /// Its unit (`seconds`, `minutes`, `count`, `percent`, `rating`).
    pub unit: String,
}

/// A metric over the period, and over the period of the same length before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The metric's label.
    pub label: String,
    /// Its unit.
    pub unit: String,
    /// Over the period.
    pub current: Option<String>,
    /// Over the previous period.
    pub previous: Option<String>,
    /// Relative change in percent, when both are numbers and the previous is not 0.
    pub change: Option<f64>,
}

/// A named series of values, one per bucket; `None` where the value is
/// undefined (an average without samples), drawn as a gap.
pub type Series = (String, Vec<Option<f64>>);

/// What a chart shows: enough to draw it, on the server or in the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ChartSpec {
    /// Lines over time, one per series.
    Lines {
        /// Bucket labels, oldest first.
        labels: Vec<String>,
        /// One value per bucket each.
        series: Vec<Series>,
        /// The y axis' unit.
        y_desc: String,
    },
    /// Bars per bucket, one stacked segment per series (agents).
    StackedBars {
        /// Bucket labels, oldest first.
        labels: Vec<String>,
        /// One value per bucket each.
        series: Vec<Series>,
        /// The y axis' unit.
        y_desc: String,
    },
    /// One row per agent with a bar per interval, in hours from the period's start.
    Timeline {
        /// Agent name and `(from, to)` hours.
        rows: Vec<(String, Vec<(f64, f64)>)>,
        /// The period's length in hours.
        span: f64,
        /// Time-axis labels in the tenant's zone, at the hours they belong to.
        ticks: Vec<(f64, String)>,
    },
}

/// Every chart's width in pixels; it scales with the page.
pub const CHART_WIDTH: u32 = 760;

/// A chart: drawn as SVG on the server, then on a canvas once the page is live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Caption.
    pub title: String,
    /// Its height in pixels (see [`CHART_WIDTH`]).
    pub height: u32,
    /// The server's SVG document, for readers without JavaScript.
    pub svg: String,
    /// What the chart shows, for drawing it on a canvas.
    pub spec: ChartSpec,
    /// Legend entries: label and CSS colour.
    pub legend: Vec<(String, String)>,
}

/// A table of rows (resources, script errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DetailTable {
    /// Caption.
    pub caption: String,
    /// Column headings.
    pub headers: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
}

/// Everything a report page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportView {
    /// The family.
    pub family: Family,
    /// The period picked, as a wire value.
    pub grouping: String,
    /// The period in words, in the tenant's zone.
    pub period: String,
    /// Bucket labels, oldest first.
    pub labels: Vec<String>,
    /// The table's columns.
    pub columns: Vec<Column>,
    /// One row per bucket label: one cell per column (empty when undefined).
    pub cells: Vec<Vec<String>>,
    /// Totals versus the previous period.
    pub summary: Vec<Summary>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// Metrics that can be shown per agent: key and label.
    pub agent_metrics: Vec<(String, String)>,
    /// The metric shown per agent, if any.
    pub by_agent: Option<String>,
    /// Rows of the family's searches (resources, script errors).
    pub details: Option<DetailTable>,
}
