//! Reports (spec 2.15–2.17, 4.1, 4.2): facts recorded as the system runs, hourly
//! and daily rollups kept in step with them, and the report operations over both.
//!
//! - [`api`]: requests and responses on the wire (shared with the dashboard);
//! - [`catalogue`]: every metric, its source, unit and `groupBy` values;
//! - [`window`]: periods and buckets in an IANA zone, DST included;
//! - [`facts`] and [`presence`]: recording facts and rolling them up;
//! - [`ingest`]: what the visitor script sends (visits, sessions, resources, errors);
//! - [`days`]: daily rollups in the tenant's zone, and from when they are complete;
//! - [`visitors`]: distinct visitors per local day, counted as visits arrive;
//! - [`plan`]: validating a report request against the catalogue;
//! - [`query`]: aggregation reports, from rollups or raw facts;
//! - [`reads`]: a report's day, hourly and raw reads, batched into one statement;
//! - [`zones`]: the tenant's zone state a report plans with, cached and checked;
//! - [`cells`]: summed grids turned into the values a report shows;
//! - [`sql`]: filter conditions with placeholders for both backends;
//! - [`times`]: agent time lists and the per-agent conversation split;
//! - [`totals`]: each metric over a period and the one before (dashboards);
//! - [`resources`]: the resource report and the search filters of spec 2.16;
//! - [`errors`]: the script-error report, and its errors counted per local day;
//! - [`csv`]: every report as CSV;
//! - [`demo`]: a realistic history for a tenant.

pub mod api;
#[cfg(feature = "server")]
pub mod catalogue;
#[cfg(feature = "server")]
pub mod cells;
#[cfg(feature = "server")]
pub mod csv;
#[cfg(feature = "server")]
pub mod days;
#[cfg(feature = "server")]
pub mod demo;
#[cfg(feature = "server")]
pub mod errors;
#[cfg(feature = "server")]
pub mod facts;
#[cfg(feature = "server")]
pub mod ingest;
#[cfg(feature = "server")]
pub mod plan;
#[cfg(feature = "server")]
pub mod presence;
#[cfg(feature = "server")]
pub mod query;
#[cfg(feature = "server")]
pub mod reads;
#[cfg(feature = "server")]
pub mod resources;
#[cfg(feature = "server")]
pub mod sql;
#[cfg(feature = "server")]
pub mod times;
#[cfg(feature = "server")]
pub mod totals;
#[cfg(feature = "server")]
pub mod visitors;
#[cfg(feature = "server")]
pub mod window;
#[cfg(feature = "server")]
pub mod zones;
