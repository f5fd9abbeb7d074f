//! The arrows between a crate's modules, from what they name and what they
//! call through the hub, and the circles they make.

use std::collections::{BTreeMap, BTreeSet};

use crate::reading::{
    code_only, hub_blocks, idents_after, is_test_module, named_paths, without_tests, ModPath, Sources,
};

/// Which modules each module names (itself, its ancestors and its
/// descendants left out).
pub type Graph = BTreeMap<ModPath, BTreeSet<ModPath>>;

/// Which module each module names: the file that declares the longest prefix
/// of each path it names.
pub fn graph(sources: &Sources) -> Graph {
    let mut graph = Graph::new();
    for (module, source) in sources.iter().filter(|(module, _)| !is_test_module(module)) {
        let names = graph.entry(module.clone()).or_default();
        for path in named_paths(&without_tests(&code_only(source)), module) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|n| &path[..n])
                .find(|p| sources.contains_key(*p))
            else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(target);
            if !related {
                names.insert(target.to_vec());
            }
        }
    }
    graph
}

/// The methods each module adds to the hub: the `fn`s at the top level of
/// its `impl Services` blocks.
pub fn hub_methods(sources: &Sources) -> BTreeMap<String, ModPath> {
    let mut out = BTreeMap::new();
    for (module, source) in sources.iter().filter(|(module, _)| !is_test_module(module)) {
        let code = without_tests(&code_only(source));
        for block in hub_blocks(&code) {
            // Only the block's own items: a `fn` inside a method is not one.
            let mut top = String::with_capacity(block.len());
            let mut depth = 0usize;
            for ch in block.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    _ if depth == 0 => top.push(ch),
                    _ => {}
                }
            }
            for (name, _) in idents_after(&top, "fn ") {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

/// Which modules each module calls through the hub: for each
/// `self.method(` inside its `impl Services` blocks, the module that
/// declares `method` (itself, its ancestors, its descendants and the hub's
/// own module, `services`, left out).
pub fn hub_calls(sources: &Sources) -> Graph {
    let methods = hub_methods(sources);
    let mut graph = Graph::new();
    for (module, source) in sources.iter().filter(|(module, _)| !is_test_module(module)) {
        let code = without_tests(&code_only(source));
        let calls = graph.entry(module.clone()).or_default();
        for block in hub_blocks(&code) {
            for (name, after) in idents_after(block, "self.") {
                let is_call = after.starts_with('(') || after.starts_with("::<");
                let Some(target) = methods.get(name).filter(|_| is_call) else {
                    continue;
                };
                // The hub's own accessors (`db()`, `live()`, …) are the hub,
                // not a floor.
                let hub_itself = target.len() == 1 && target[0] == "services";
                if !(hub_itself || target.starts_with(module) || module.starts_with(target)) {
                    calls.insert(target.clone());
                }
            }
        }
    }
    graph
}

/// The import circles: strongly connected sets of more than one module
/// (Tarjan's algorithm).
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.push(if w.is_empty() {
                    "(root)".to_string()
                } else {
                    w.join("::")
                });
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.found.push(set);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// Each `from -> to` edge where a module whose top-level name `is_from`
/// accepts names one whose top-level name `is_to` accepts.
pub fn arrows_between(graph: &Graph, is_from: impl Fn(&str) -> bool, is_to: impl Fn(&str) -> bool) -> Vec<String> {
    let top = |m: &ModPath| m.first().cloned().unwrap_or_default();
    graph
        .iter()
        .filter(|(from, _)| !from.is_empty() && is_from(&top(from)))
        .flat_map(|(from, names)| {
            names
                .iter()
                .filter(|to| !to.is_empty() && is_to(&top(to)))
                .map(move |to| format!("{} -> {}", from.join("::"), to.join("::")))
        })
        .collect()
}
