//! Reading a crate's sources: its modules, their code without comments,
//! strings and tests, the paths they name, and their `impl Services` blocks.

use std::{collections::BTreeMap, fs, path::Path};

/// A module's path inside its crate: `["usecases", "messages"]`; the crate
/// root is empty.
pub type ModPath = Vec<String>;

/// Every module of a crate, by path, with its source.
pub type Sources = BTreeMap<ModPath, String>;

/// Reads every `.rs` file under `src`, keyed by module path.
pub fn read_crate(src: &Path) -> Sources {
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
pub fn code_only(source: &str) -> String {
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
pub fn without_tests(code: &str) -> String {
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
        // Past the module's closing brace; an unclosed one runs to the end.
        rest = item.get(block_end(item, open) + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// A module that only tests compile: `tests.rs`, `foo/tests.rs`, and the
/// test helpers of `core/` (`testing`).
pub fn is_test_module(module: &ModPath) -> bool {
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
pub fn named_paths(code: &str, module: &[String]) -> Vec<ModPath> {
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
pub fn hub_blocks(code: &str) -> Vec<&str> {
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
pub fn idents_after<'a>(code: &'a str, marker: &str) -> Vec<(&'a str, &'a str)> {
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
