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

mod arrows;
mod reading;

use std::path::{Path, PathBuf};

use arrows::{arrows_between, circles, graph, hub_calls, hub_methods, Graph};
use reading::{read_crate, Sources};

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
