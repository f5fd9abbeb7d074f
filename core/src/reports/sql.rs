//! Building SQL conditions whose placeholders work on both backends: filters are
//! appended as ` and …` with `$n` numbered after a query's fixed parameters, and
//! their values bound in order by [`bind_cond!`].

use super::{api::TagsFilter, plan::Filter};
use crate::db::placeholders;

/// Separates the rows packed into one SQLite answer row (ASCII record separator).
const ROW_SEP: char = '\u{1e}';
/// Separates the fields of a packed row (ASCII unit separator).
const FIELD_SEP: char = '\u{1f}';

/// Packs rows of three text-castable columns into one string on SQLite:
/// `group_concat(a || char(31) || b || char(31) || c, char(30))`, read back by
/// [`unpack`].
///
/// sqlx hands SQLite rows over from its worker thread one at a time, at about
/// 5 µs a row; a report reading thousands of small rows spent most of its time
/// there, not in the read.
pub(crate) fn packed(a: &str, b: &str, c: &str) -> String {
    format!("group_concat({a} || char(31) || {b} || char(31) || {c}, char(30))")
}

/// The rows of a string [`packed`] by SQLite; a malformed row is skipped.
pub(crate) fn unpack(packed: &str) -> impl Iterator<Item = [&str; 3]> {
    packed.split(ROW_SEP).filter_map(|row| {
        let mut fields = row.split(FIELD_SEP);
        Some([fields.next()?, fields.next()?, fields.next()?])
    })
}

/// A value bound to a [`Cond`] placeholder.
#[derive(Debug, Clone)]
pub(crate) enum Bind {
    Text(String),
    Int(i64),
}

/// A SQL condition with its bound values, numbered from a given placeholder.
pub(crate) struct Cond {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// Binds a [`Cond`]'s values to a query, on either backend.
macro_rules! bind_cond {
    ($q:expr, $cond:expr) => {{
        let mut q = $q;
        for v in &$cond.binds {
            q = match v {
                $crate::reports::sql::Bind::Text(s) => q.bind(s.clone()),
                $crate::reports::sql::Bind::Int(i) => q.bind(*i),
            };
        }
        q
    }};
}
pub(crate) use bind_cond;

impl Cond {
    pub fn new() -> Self {
        Cond {
            sql: String::new(),
            binds: Vec::new(),
        }
    }

    /// Adds `column in (…)`; nothing for an empty list.
    pub fn any_of(&mut self, next: usize, column: &str, values: &[String]) {
        if values.is_empty() {
            return;
        }
        let first = next + self.binds.len();
        self.sql += &format!(" and {column} in ({})", placeholders(first, values.len()));
        self.binds.extend(values.iter().cloned().map(Bind::Text));
    }

    /// Adds `column = $n`.
    pub fn equals(&mut self, next: usize, column: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.sql += &format!(" and {column} = ${}", next + self.binds.len());
            self.binds.push(Bind::Text(value.to_string()));
        }
    }

    /// Adds "column starts with value".
    pub fn prefix(&mut self, next: usize, column: &str, value: Option<&str>) {
        if let Some(value) = value {
            let p = next + self.binds.len();
            self.sql += &format!(" and substr({column}, 1, length(${p})) = ${p}");
            self.binds.push(Bind::Text(value.to_string()));
        }
    }

    /// Adds a request's visitor, external id, base URL and tag filters, on the
    /// columns that visits and report facts share.
    pub fn visit_filters(&mut self, next: usize, filter: &Filter) {
        self.any_of(next, "visitor_id", &filter.visitor_ids);
        self.any_of(next, "external_id", &filter.external_ids);
        self.prefix(next, "url", filter.base_url.as_deref());
        self.tags(next, "tags", &filter.tags);
    }

    /// Adds the tags filter on a `|a|b|` column.
    pub fn tags(&mut self, next: usize, column: &str, tags: &TagsFilter) {
        let like = |t: &str| {
            let escaped = t.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
            format!("%|{escaped}|%")
        };
        for tag in &tags.all {
            self.sql += &format!(" and {column} like ${} escape '\\'", next + self.binds.len());
            self.binds.push(Bind::Text(like(tag)));
        }
        for tag in &tags.none {
            self.sql += &format!(
                " and ({column} is null or {column} not like ${} escape '\\')",
                next + self.binds.len()
            );
            self.binds.push(Bind::Text(like(tag)));
        }
        if !tags.any.is_empty() {
            let parts: Vec<String> = tags
                .any
                .iter()
                .map(|tag| {
                    let p = next + self.binds.len();
                    self.binds.push(Bind::Text(like(tag)));
                    format!("{column} like ${p} escape '\\'")
                })
                .collect();
            self.sql += &format!(" and ({})", parts.join(" or "));
        }
    }
}
