//! No two types documented in the OpenAPI document share a schema name: each
//! source file's `ToSchema` types, read from the source.

use std::collections::BTreeMap;

/// utoipa files schemas by name and silently keeps one of two types that share a
/// name (the messages' `Channel` once documented the rules' `CHAT`/`CALL`). So no
/// two types that derive or implement `ToSchema` may share a schema name: a type
/// that must keep its Rust name takes another with `#[schema(as = …)]`.
#[test]
fn schema_names_are_unique() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut dirs = vec![root.join("core/src"), root.join("server/src"), root.join("app/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            for name in schema_names(&source) {
                names.entry(name).or_default().push(path.display().to_string());
            }
        }
    }
    assert!(names.len() > 100, "the schemas were found: {}", names.len());
    for renamed in ["MessageChannel", "DeliveredEventType", "EventType", "Channel"] {
        assert!(names.contains_key(renamed), "{renamed} was found");
    }
    let shared: Vec<_> = names.iter().filter(|(_, files)| files.len() > 1).collect();
    assert!(shared.is_empty(), "schema names used twice: {shared:?}");
}

/// The schema names a source file declares: each type deriving `ToSchema` (its
/// `#[schema(as = …)]` if it has one), and each hand-written `ToSchema` whose
/// `name()` returns a literal.
fn schema_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("ToSchema") {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &rest[line_start..rest[at..].find('\n').map_or(rest.len(), |i| at + i)];
        let after = &rest[at + "ToSchema".len()..];
        rest = after;
        if line.contains("derive(") {
            let item = after
                .split_once("struct ")
                .into_iter()
                .chain(after.split_once("enum "))
                .min_by_key(|(before, _)| before.len());
            let Some((attributes, tail)) = item else { continue };
            let ident: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let renamed = attributes
                .split("schema(as = ")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .map(|r| r.rsplit("::").next().unwrap_or(r).trim().to_string());
            names.push(renamed.unwrap_or(ident));
        } else if line.trim_start().starts_with("impl") && line.contains(" for ") {
            let body = after.split("\nimpl").next().unwrap_or(after);
            if let Some(literal) = body.split("fn name()").nth(1).and_then(|b| b.split('"').nth(1)) {
                names.push(literal.to_string());
            }
        }
    }
    names
}
