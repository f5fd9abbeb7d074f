//! Rapport's addition to the splitter: bounding the number of shared chunks.
//!
//! Upstream gives every distinct set of split modules that share code a chunk
//! of its own. With fifteen split points that is over four hundred files, and a
//! page needs a hundred or more requests. This pass merges shared chunks until
//! at most a given number remain, each time merging the pair that adds the
//! fewest bytes to the pages that did not need one of them, each page's bytes
//! weighted by how often it is the first page loaded.
//!
//! Merging is always safe: a chunk is loaded by every split module in its set,
//! a merged chunk's set is the union of its parts' sets, and code shared by a
//! set of modules only depends on code whose set contains that set.

use std::collections::{BTreeSet, HashMap};

/// The sets of split modules whose chunks are merged, with their sizes in
/// bytes, mapped to the set of the chunk each ends up in. Sets not in the
/// result keep their own chunk. `weight` says how much a byte more for a split
/// module counts. Nothing is merged when there are more than 128 split
/// modules (the sets are bit masks).
pub(crate) fn coalesce(
    chunks: &HashMap<BTreeSet<String>, u64>,
    max_chunks: usize,
    weight: &dyn Fn(&str) -> u64,
) -> HashMap<BTreeSet<String>, BTreeSet<String>> {
    let names: BTreeSet<&String> = chunks.keys().flatten().collect();
    if names.len() > 128 || chunks.len() <= max_chunks {
        return HashMap::new();
    }
    let names: Vec<&String> = names.into_iter().collect();
    let weights: Vec<u64> = names.iter().map(|name| weight(name)).collect();
    let weigh = |m: u128| -> u64 {
        weights
            .iter()
            .enumerate()
            .filter(|(i, _)| m & (1u128 << i) != 0)
            .map(|(_, w)| w)
            .sum()
    };
    let mask = |set: &BTreeSet<String>| -> u128 {
        set.iter()
            .map(|name| 1u128 << names.binary_search(&name).expect("every name is listed"))
            .fold(0, |a, b| a | b)
    };
    // Current chunks: mask → size; and where each original set went.
    let mut current: HashMap<u128, u64> = HashMap::new();
    for (set, size) in chunks {
        *current.entry(mask(set)).or_default() += size;
    }
    let mut home: HashMap<u128, u128> = current.keys().map(|&m| (m, m)).collect();
    while current.len() > max_chunks {
        let mut keys: Vec<u128> = current.keys().copied().collect();
        keys.sort_unstable();
        // Bytes the pages of one chunk would download of the other, both ways.
        let extra = |a: u128, b: u128| current[&a] * weigh(b & !a) + current[&b] * weigh(a & !b);
        let mut best: Option<(u64, u128, u128)> = None;
        for (i, &a) in keys.iter().enumerate() {
            for &b in &keys[i + 1..] {
                let cost = extra(a, b);
                if best.is_none_or(|(c, _, _)| cost < c) {
                    best = Some((cost, a, b));
                }
            }
        }
        let Some((_, a, b)) = best else { break };
        let merged = a | b;
        let size = current.remove(&a).unwrap_or_default() + current.remove(&b).unwrap_or_default();
        *current.entry(merged).or_default() += size;
        for target in home.values_mut() {
            if *target == a || *target == b {
                *target = merged;
            }
        }
    }
    let unmask = |m: u128| -> BTreeSet<String> {
        names
            .iter()
            .enumerate()
            .filter(|(i, _)| m & (1u128 << i) != 0)
            .map(|(_, name)| (*name).clone())
            .collect()
    };
    chunks
        .keys()
        .filter_map(|set| {
            let to = home[&mask(set)];
            (to != mask(set)).then(|| (set.clone(), unmask(to)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn merges_the_cheapest_pair_until_few_enough() {
        let chunks = HashMap::from([
            (set(&["a", "b"]), 1000),
            (set(&["a", "b", "c"]), 10),
            (set(&["c", "d"]), 500),
        ]);
        let merged = coalesce(&chunks, 2, &|_| 1);
        // Merging {a,b} into {a,b,c} costs 1000 bytes (for c); {a,b,c} into
        // {c,d} 1010 (10 for d, 500 each for a and b); {a,b} with {c,d} 3000.
        // The merged chunk keeps the set {a,b,c}, so only {a,b} moves.
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[&set(&["a", "b"])], set(&["a", "b", "c"]));
    }

    #[test]
    fn leaves_few_chunks_alone() {
        let chunks = HashMap::from([(set(&["a", "b"]), 1), (set(&["b", "c"]), 1)]);
        assert!(coalesce(&chunks, 2, &|_| 1).is_empty());
    }

    #[test]
    fn heavier_pages_are_spared() {
        let chunks = HashMap::from([
            (set(&["a", "b"]), 100),
            (set(&["a", "c"]), 300),
            (set(&["b", "c"]), 100),
        ]);
        // Alike, merging {a,b} and {b,c} costs least: 100 bytes more for c
        // and 100 for a.
        let alike = coalesce(&chunks, 2, &|_| 1);
        assert_eq!(alike[&set(&["b", "c"])], set(&["a", "b", "c"]));
        assert!(!alike.contains_key(&set(&["a", "c"])));
        // With a's bytes counting ten times, {a,b} joins {a,c} instead, which
        // adds nothing to a.
        let spared = coalesce(&chunks, 2, &|name| if name == "a" { 10 } else { 1 });
        assert_eq!(spared[&set(&["a", "b"])], set(&["a", "b", "c"]));
        assert!(!spared.contains_key(&set(&["b", "c"])));
    }
}
