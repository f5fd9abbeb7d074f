//! Turning summed grids into report values: counts, sums in their unit,
//! averages and hit rates, each as the string 2.17 asks for.

use std::{
    borrow::Borrow,
    collections::{HashMap, HashSet},
};

use super::{
    catalogue::{Measure, MetricDef, Unit},
    window::Labels,
};

/// `(bucket, group key) → (total, samples)`. Hashed with FxHash: a year split
/// by 50 agents hashes some 100,000 keys per report, and SipHash's protection
/// against chosen keys buys nothing for keys the server made itself.
pub(crate) type Grid = HashMap<(i64, String), (i64, i64), rustc_hash::FxBuildHasher>;

/// Decimal with up to two places, trailing zeros dropped.
fn decimal(value: f64) -> String {
    let s = format!("{value:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// The value of one cell, or `None` when it is undefined (an average or rate with
/// no samples).
pub(crate) fn cell<G: Borrow<Grid>>(def: &MetricDef, parts: &[G], key: &(i64, String)) -> Option<String> {
    let sum = |grids: &[G]| {
        grids.iter().fold((0i64, 0i64), |(t, s), g| {
            let (gt, gs) = g.borrow().get(key).copied().unwrap_or_default();
            (t + gt, s + gs)
        })
    };
    match def.measure {
        Measure::Sum(_) => {
            let (total, _) = sum(parts);
            Some(match def.unit {
                Unit::Seconds => ((total + 500).div_euclid(1000)).to_string(),
                Unit::Minutes => decimal(total as f64 / 60_000.0),
                _ => total.to_string(),
            })
        }
        Measure::Count(_) | Measure::DistinctVisitors => Some(sum(parts).1.to_string()),
        Measure::Average(_) => {
            let (total, samples) = sum(parts);
            // Durations are stored in milliseconds and averaged in seconds;
            // ratings are averaged as they are.
            let scale = match def.unit {
                Unit::Rating | Unit::Count | Unit::Percent => 1.0,
                Unit::Seconds => 1000.0,
                Unit::Minutes => 60_000.0,
            };
            (samples > 0).then(|| decimal(total as f64 / samples as f64 / scale))
        }
        Measure::HitRate { matched, .. } => {
            let (_, hits) = sum(&parts[..matched.len()]);
            let (_, misses) = sum(&parts[matched.len()..]);
            (hits > 0).then(|| decimal(100.0 * (hits - misses).max(0) as f64 / hits as f64))
        }
    }
}

/// The defined cells of one query's grids, `(bucket, group key, value)`, for
/// the buckets in `labels`: every bucket when the query is not grouped, else
/// only the groups that have facts.
pub(crate) fn cells<G: Borrow<Grid>>(
    def: &MetricDef,
    grids: &[G],
    group_kind: &str,
    labels: &Labels,
) -> Vec<(i64, String, String)> {
    let keys: Vec<(i64, String)> = if group_kind.is_empty() {
        labels.buckets().iter().map(|b| (*b, String::new())).collect()
    } else if let [grid] = grids {
        // One source (most metrics): its keys are already distinct.
        grid.borrow()
            .keys()
            .filter(|(b, _)| labels.contains(*b))
            .cloned()
            .collect()
    } else {
        let mut keys: HashSet<(i64, String)> = HashSet::new();
        for grid in grids {
            keys.extend(grid.borrow().keys().filter(|(b, _)| labels.contains(*b)).cloned());
        }
        keys.into_iter().collect()
    };
    keys.into_iter()
        .filter_map(|key| cell(def, grids, &key).map(|value| (key.0, key.1, value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_trimmed() {
        assert_eq!(decimal(12.0), "12");
        assert_eq!(decimal(12.5), "12.5");
        assert_eq!(decimal(1.0 / 3.0), "0.33");
        assert_eq!(decimal(0.0), "0");
    }
}
