//! Additions to rows that many transactions share, held back to the commit.
//!
//! Some rows are written by nearly every transaction of a tenant: its customer
//! count, and the hour and day rows of its report rollups. On PostgreSQL the
//! first `insert … on conflict do update` of such a row takes the row's lock and
//! holds it until the transaction ends, so a tenant's writes queue on that row for
//! as long as each of them runs, and under load one tenant's p99 becomes the
//! length of that queue. A [`Tx`](super::Tx) therefore only notes such additions
//! ([`Tx::add`](super::Tx::add)) and applies them in
//! [`Tx::commit`](super::Tx::commit), just before the commit, so the lock is held
//! for the commit alone.
//!
//! The additions are summed per row first, and applied in one order (table, then
//! key) by every transaction, so two transactions that add to the same rows take
//! their locks in the same order and cannot deadlock. On SQLite (one writer)
//! nothing waits either way, and summing first saves a statement per repeated row.
//!
//! Whatever is read back inside the same transaction does not see the additions
//! yet: a transaction that must read such a row after adding to it calls
//! [`Tx::apply_sums`](super::Tx::apply_sums) first.

use std::collections::BTreeMap;

/// A table whose rows only ever grow by additions: which columns make the key,
/// which hold the sums.
#[derive(Debug)]
pub struct SumTable {
    /// The table.
    pub table: &'static str,
    /// The key columns, in order: the table's primary key or a unique constraint.
    pub keys: &'static [&'static str],
    /// The columns that are added to.
    pub values: &'static [&'static str],
}

/// One part of a row's key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyPart {
    /// A text column.
    Text(String),
    /// An integer column.
    Int(i64),
}

impl From<&str> for KeyPart {
    fn from(text: &str) -> Self {
        KeyPart::Text(text.to_string())
    }
}

impl From<i64> for KeyPart {
    fn from(n: i64) -> Self {
        KeyPart::Int(n)
    }
}

/// One row's key, and the sums to add to it.
pub(super) type Row = (Vec<KeyPart>, Vec<i64>);

/// A statement to run and the rows it binds, in order.
pub(super) type Statement = (String, Vec<Row>);

/// One table's noted rows: the sums to add, by key.
type TableSums = (&'static SumTable, BTreeMap<Vec<KeyPart>, Vec<i64>>);

/// The additions a transaction has noted, summed per row.
#[derive(Debug, Default)]
pub(super) struct Sums {
    /// By table name, so tables are applied in one order; in each, by key.
    tables: BTreeMap<&'static str, TableSums>,
}

/// Rows per statement: well inside both backends' limits on bound parameters.
const ROWS_PER_STATEMENT: usize = 200;

impl Sums {
    /// Notes `deltas` (one per value column) for the row `key`.
    pub(super) fn add(&mut self, table: &'static SumTable, key: Vec<KeyPart>, deltas: &[i64]) {
        debug_assert_eq!(key.len(), table.keys.len(), "{}: one part per key column", table.table);
        debug_assert_eq!(deltas.len(), table.values.len(), "{}: one delta per value", table.table);
        let (_, rows) = self
            .tables
            .entry(table.table)
            .or_insert_with(|| (table, BTreeMap::new()));
        let sums = rows.entry(key).or_insert_with(|| vec![0; deltas.len()]);
        for (sum, delta) in sums.iter_mut().zip(deltas) {
            *sum += delta;
        }
    }

    /// Takes the noted additions as statements to run in order: each with its
    /// SQL and its rows (key parts, then sums).
    pub(super) fn take(&mut self) -> Vec<Statement> {
        let mut statements = Vec::new();
        for (_, (table, rows)) in std::mem::take(&mut self.tables) {
            let rows: Vec<Row> = rows.into_iter().collect();
            for chunk in rows.chunks(ROWS_PER_STATEMENT) {
                statements.push((upsert_sql(table, chunk.len()), chunk.to_vec()));
            }
        }
        statements
    }
}

/// `insert … values (…), … on conflict (keys) do update set v = t.v + excluded.v`
/// for `rows` rows, with `$n` placeholders in the order [`Sums::take`] binds them.
fn upsert_sql(table: &SumTable, rows: usize) -> String {
    let width = table.keys.len() + table.values.len();
    let values = (0..rows)
        .map(|row| {
            let params: Vec<String> = (1..=width).map(|i| format!("${}", row * width + i)).collect();
            format!("({})", params.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let name = table.table;
    let set = table
        .values
        .iter()
        .map(|v| format!("{v} = {name}.{v} + excluded.{v}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "insert into {name} ({}, {}) values {values} on conflict ({}) do update set {set}",
        table.keys.join(", "),
        table.values.join(", "),
        table.keys.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    static COUNTS: SumTable = SumTable {
        table: "counts",
        keys: &["tenant_id", "hour"],
        values: &["total", "samples"],
    };
    static OTHER: SumTable = SumTable {
        table: "a_counts",
        keys: &["tenant_id"],
        values: &["n"],
    };

    #[test]
    fn additions_to_one_row_are_summed_and_rows_come_in_one_order() {
        let mut sums = Sums::default();
        sums.add(&COUNTS, vec!["t2".into(), 7.into()], &[1, 1]);
        sums.add(&COUNTS, vec!["t1".into(), 9.into()], &[5, 1]);
        sums.add(&COUNTS, vec!["t2".into(), 7.into()], &[3, 1]);
        sums.add(&OTHER, vec!["t1".into()], &[-1]);
        let statements = sums.take();
        assert_eq!(statements.len(), 2);
        // Tables by name, rows by key: the same order in every transaction.
        assert_eq!(
            statements[0].0,
            "insert into a_counts (tenant_id, n) values ($1, $2) on conflict (tenant_id) do update set n = a_counts.n + excluded.n"
        );
        assert_eq!(statements[0].1, vec![(vec![KeyPart::from("t1")], vec![-1])]);
        assert!(statements[1].0.starts_with(
            "insert into counts (tenant_id, hour, total, samples) values ($1, $2, $3, $4), ($5, $6, $7, $8) on conflict (tenant_id, hour)"
        ));
        assert!(statements[1]
            .0
            .ends_with("set total = counts.total + excluded.total, samples = counts.samples + excluded.samples"));
        assert_eq!(
            statements[1].1,
            vec![
                (vec![KeyPart::from("t1"), KeyPart::Int(9)], vec![5, 1]),
                (vec![KeyPart::from("t2"), KeyPart::Int(7)], vec![4, 2]),
            ]
        );
        assert!(sums.take().is_empty(), "taken once");
    }

    #[test]
    fn many_rows_are_cut_into_statements() {
        let mut sums = Sums::default();
        for hour in 0..(ROWS_PER_STATEMENT as i64 + 1) {
            sums.add(&OTHER, vec![KeyPart::Text(format!("t{hour:04}"))], &[1]);
        }
        let statements = sums.take();
        assert_eq!(statements.len(), 2);
        assert_eq!(statements[0].1.len(), ROWS_PER_STATEMENT);
        assert_eq!(statements[1].1.len(), 1);
        assert!(statements[1].0.contains("values ($1, $2) on"));
    }
}
