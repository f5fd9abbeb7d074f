//! Where the dashboard may send a browser next (after signing in, or back from
//! a form): only to a page of its own.

/// `next` when it is a path on this site, else `None`.
///
/// Browsers read a URL leniently: they drop tabs and line breaks, take `\`
/// for `/`, and read `//host/…` as another site. So `/\evil.example` and
/// `/%09/evil.example` (a tab, once the query is decoded) both leave the site.
/// A path is kept only when it starts with one `/` and holds none of those.
pub fn local_path(next: &str) -> Option<&str> {
    let rest = next.strip_prefix('/')?;
    let leaves = rest.starts_with('/') || next.chars().any(|c| c == '\\' || c.is_control() || c.is_whitespace());
    (!leaves).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn only_paths_of_this_site_are_kept() {
        for kept in ["/", "/inbox/abc?status=DONE#m1", "/reports/sla", "/%2F/evil.example"] {
            assert_eq!(local_path(kept), Some(kept));
        }
        for refused in [
            "",
            "inbox",
            "https://evil.example/",
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/ /evil.example",
            "\\/evil.example",
            "/inbox\\..\\\\evil.example",
        ] {
            assert_eq!(local_path(refused), None, "{refused:?}");
        }
    }
}
