//! The house's arrows, checked on the source (see `ARCHITECTURE.md`):
//! - no file imports a file that imports it back, in any crate (a module and
//!   the modules inside it aside);
//! - in `core/`, the ground floor names nothing above it, no domain module
//!   names an engine or a use case, and no engine names a use case.
//!
//! Imports are read from the text: every path that starts with `crate::`,
//! `super::` or `self::`, `use` groups included, resolved to the file that
//! declares the longest module prefix. Comments and string literals are
//! skipped.
//!
//! Calls through the hub are arrows too: a `self.method()` inside an
//! `impl Services` block points at the module whose `impl Services` block
//! declares `method`. They are held to the same floors (they would make too
//! many circles to forbid those: a domain module asks another for its rows
//! through the hub, and may be asked back).

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// A module's path inside its crate: `["usecases", "messages"]`; the crate
/// root is empty.
type ModPath = Vec<String>;

/// Every module of a crate, by path, with its source.
type Sources = BTreeMap<ModPath, String>;

/// Which modules each module names (itself, its ancestors and its
/// descendants left out).
type Graph = BTreeMap<ModPath, BTreeSet<ModPath>>;

/// The modules of `core/` on the ground floor: storage, time and the
/// plumbing every floor above uses.
const GROUND: &[&str] = &[
    "actor",
    "crypto",
    "db",
    "error",
    "events",
    "ids",
    "jobs",
    "live",
    "media_store",
    "model",
    "open_streams",
    "rate_windows",
    "sealing",
    "time",
    "validate",
];

/// The modules of `core/` above the domain: the engines, the use cases and
/// the hub that wires them.
const ABOVE_DOMAIN: &[&str] = &["engine", "usecases", "services"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Reads every `.rs` file under `src`, keyed by module path.
fn read_crate(src: &Path) -> Sources {
    fn walk(dir: &Path, src: &Path, out: &mut Sources) {
        for entry in fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).expect("under src").with_extension("");
                let mut module: ModPath = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
                if module.last().is_some_and(|last| last == "mod") {
                    module.pop();
                }
                if module == ["lib"] || module == ["main"] {
                    module.clear();
                }
                out.insert(module, fs::read_to_string(&path).expect("a source file"));
            }
        }
    }
    let mut out = Sources::new();
    walk(src, src, &mut out);
    out
}

/// The source with comments and string literals blanked, so that a path in
/// a doc comment or a message is not taken for an import.
fn code_only(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                // A raw string (`r"…"`, `r#"…"#`) ends at its own delimiter.
                let hashes = out.bytes().rev().take_while(|&b| b == b'#').count();
                let raw = out.len() > hashes && out.as_bytes()[out.len() - hashes - 1] == b'r';
                i += 1;
                while i < bytes.len() {
                    if raw {
                        if bytes[i] == b'"'
                            && bytes[i + 1..].iter().take(hashes).filter(|&&b| b == b'#').count() == hashes
                        {
                            i += 1 + hashes;
                            break;
                        }
                    } else if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'"' {
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                out.push_str("\"\"");
            }
            // A char literal, not a lifetime: `'"'` must not open a string.
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => {
                out.push_str("' '");
                i += 3;
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                // An escape: `'\''`, `'\n'`, `'\u{…}'`.
                let end = bytes[i + 3..]
                    .iter()
                    .position(|&b| b == b'\'')
                    .map_or(bytes.len(), |p| i + 4 + p);
                out.push_str("' '");
                i = end;
            }
            _ => {
                let ch = source[i..].chars().next().expect("a char");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// The code without its `#[cfg(test)]` modules: a test may reach anything it
/// checks, and is not part of the house.
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        // Only an inline module is skipped here; `mod tests;` names a file,
        // which `is_test_module` leaves out.
        let open = item
            .find(['{', ';'])
            .filter(|&i| item.starts_with("mod ") && item.as_bytes()[i] == b'{');
        let Some(open) = open else {
            rest = after;
            continue;
        };
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, b) in item.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// A module that only tests compile: `tests.rs`, `foo/tests.rs`, and the
/// test helpers of `core/` (`testing`).
fn is_test_module(module: &ModPath) -> bool {
    module.iter().any(|segment| segment == "tests" || segment == "testing")
}

/// A cursor over code for reading paths and `use` trees.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        self.at += self.text[self.at..].len() - self.text[self.at..].trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_space();
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '*'))
            .unwrap_or(rest.len());
        (len > 0).then(|| {
            self.at += len;
            rest[..len].to_string()
        })
    }

    /// A path or a `use` tree: `a::b::C`, `a::{b, c::{d, e}}`; each leaf path.
    fn tree(&mut self, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        loop {
            if self.eat("{") {
                while !self.eat("}") {
                    let before = self.at;
                    self.tree(&path, out);
                    self.eat(",");
                    if self.at == before {
                        return; // not a use tree after all
                    }
                }
                return;
            }
            match self.ident() {
                Some(segment) => path.push(segment),
                None => break,
            }
            if !self.eat("::") {
                break;
            }
        }
        out.push(path);
    }
}

/// Every path in `code` that starts at the crate root or relative to `module`
/// (the module the file is), made absolute.
fn named_paths(code: &str, module: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let mut trees = Vec::new();
            Cursor { text: code, at: from }.tree(&[], &mut trees);
            let base: Vec<String> = match start {
                "crate::" => Vec::new(),
                "super::" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.to_vec(),
            };
            for tree in trees {
                let mut path = base.clone();
                let mut segments = tree.into_iter().peekable();
                while segments.next_if(|s| s == "super").is_some() {
                    path.pop();
                }
                path.extend(segments);
                out.push(path);
            }
        }
    }
    out
}

/// Which module each module names: the file that declares the longest prefix
/// of each path it names.
fn graph(sources: &Sources) -> Graph {
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

/// The end of the block that the `{` at `open` opens.
fn block_end(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The bodies of the `impl Services` blocks in `code` (`impl Services`,
/// `impl crate::Services`, …): where `self` is the hub.
fn hub_blocks(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("impl ") {
        let at = from + found;
        from = at + "impl ".len();
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let Some(open) = code[from..].find(['{', ';']).map(|i| from + i) else {
            break;
        };
        let header = code[from..open].trim();
        if code.as_bytes()[open] == b'{' && header.rsplit("::").next() == Some("Services") {
            let end = block_end(code, open);
            out.push(&code[open + 1..end]);
            from = end;
        }
    }
    out
}

/// The identifiers in `code` that follow `marker` (`fn `, `self.`), and what
/// comes right after each.
fn idents_after<'a>(code: &'a str, marker: &str) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(marker) {
        let at = from + found;
        from = at + marker.len();
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            continue;
        }
        let rest = &code[from..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len > 0 {
            out.push((&rest[..len], &rest[len..]));
        }
    }
    out
}

/// The methods each module adds to the hub: the `fn`s at the top level of
/// its `impl Services` blocks.
fn hub_methods(sources: &Sources) -> BTreeMap<String, ModPath> {
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
fn hub_calls(sources: &Sources) -> Graph {
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
fn circles(graph: &Graph) -> Vec<Vec<String>> {
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
fn arrows_between(graph: &Graph, is_from: impl Fn(&str) -> bool, is_to: impl Fn(&str) -> bool) -> Vec<String> {
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

fn sources(src: &[(&str, &str)]) -> Sources {
    src.iter()
        .map(|(path, text)| {
            let module = if path.is_empty() {
                Vec::new()
            } else {
                path.split("::").map(String::from).collect()
            };
            (module, text.to_string())
        })
        .collect()
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    for krate in ["core", "app", "server", "xtask", "frontend"] {
        let found = circles(&graph(&read_crate(&root().join(krate).join("src"))));
        assert!(found.is_empty(), "import circles in {krate}/: {found:?}");
    }
}

#[test]
fn core_arrows_point_down() {
    let sources = read_crate(&root().join("core/src"));
    let imports = graph(&sources);
    assert_floors(&imports, "names");
    assert_floors(&hub_calls(&sources), "calls through the hub");
}

/// Fails on an arrow of `core` that points up a floor; `how` says which
/// kind of arrow the graph holds.
fn assert_floors(core: &Graph, how: &str) {
    let ground = |m: &str| GROUND.contains(&m);
    let up_from_ground = arrows_between(core, ground, |m| !ground(m));
    assert!(
        up_from_ground.is_empty(),
        "the ground floor {how} a floor above it: {up_from_ground:?}"
    );
    let domain = |m: &str| !ground(m) && !ABOVE_DOMAIN.contains(&m);
    let domain_up = arrows_between(core, domain, |m| m == "engine" || m == "usecases");
    assert!(
        domain_up.is_empty(),
        "the domain {how} an engine or a use case: {domain_up:?}"
    );
    let engines_up = arrows_between(core, |m| m == "engine", |m| m == "usecases");
    assert!(engines_up.is_empty(), "an engine {how} a use case: {engines_up:?}");
}

#[test]
fn the_check_sees_circles_through_use_groups_and_super() {
    let files = sources(&[
        ("", "mod a; mod b; mod c;"),
        ("a", "use crate::{b::{self, Thing}, x};"),
        ("b", "fn f() { super::c::g() }"),
        // A string, a comment and tests name `a`, which is not an import.
        (
            "c",
            "// crate::a::A\nconst S: &str = \"crate::a\"; fn g() {}\n#[cfg(test)]\nmod tests { use crate::a::A; }",
        ),
        ("c::tests", "use crate::a::A;"),
    ]);
    assert!(circles(&graph(&files)).is_empty());
    let files = sources(&[
        ("", "mod a; mod b; mod c;"),
        ("a", "use crate::{b::{self, Thing}, x};"),
        ("b", "fn f() { super::c::g() }"),
        ("c", "fn g() -> crate::a::A { todo!() }"),
    ]);
    assert_eq!(
        circles(&graph(&files)),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
}

#[test]
fn a_module_and_the_modules_inside_it_are_not_a_circle() {
    let files = sources(&[
        ("", "mod a;"),
        ("a", "mod inner; use inner::X; pub struct Y;"),
        ("a::inner", "use super::Y; use crate::a::Y as Z; pub struct X;"),
    ]);
    assert!(circles(&graph(&files)).is_empty());
}

#[test]
fn the_check_sees_a_domain_module_naming_an_engine() {
    let files = sources(&[
        ("", "mod customers; mod engine;"),
        ("customers", "fn f() { crate::engine::dispatch::run() }"),
        ("engine", "pub mod dispatch;"),
        ("engine::dispatch", "pub fn run() {}"),
    ]);
    let up = arrows_between(&graph(&files), |m| m == "customers", |m| m == "engine");
    assert_eq!(up, vec!["customers -> engine::dispatch".to_string()]);
}

#[test]
fn the_check_sees_a_domain_module_calling_an_engine_through_the_hub() {
    let files = sources(&[
        ("", "mod customers; mod engine; pub struct Services;"),
        (
            "customers",
            "impl Services { pub fn save(&self) { self.dispatch(); self.helper(); let _ = self.db; } fn helper(&self) {} }",
        ),
        ("engine", "pub mod dispatch;"),
        // A method's own inner `fn` is not a hub method; a string is not a call.
        (
            "engine::dispatch",
            "impl crate::Services { pub fn dispatch(&self) { fn inner() {} let _ = \"self.save()\"; } }",
        ),
    ]);
    let methods = hub_methods(&files);
    assert_eq!(
        methods.keys().map(String::as_str).collect::<Vec<_>>(),
        ["dispatch", "helper", "save"]
    );
    let calls = hub_calls(&files);
    let up = arrows_between(&calls, |m| m == "customers", |m| m == "engine");
    assert_eq!(up, vec!["customers -> engine::dispatch".to_string()]);
    let down = arrows_between(&calls, |m| m == "engine", |m| m == "customers");
    assert!(down.is_empty(), "a string is not a call: {down:?}");
}
