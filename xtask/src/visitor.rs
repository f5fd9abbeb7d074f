//! The visitor script (`frontend/visitor/`, TypeScript built by esbuild from
//! pinned npm packages) and the demo shop pages, into the site directory: the
//! server serves the script at `/visitor/…` and, with `RAPPORT_DEMO_ADDR`, the
//! pages of `site/demo/` on the demo shop's own origin.

use std::{path::Path, process::Command};

use anyhow::Result;

use crate::tools::{ensure_npm_packages, root, run};

/// Type-checks the visitor script (`tsc --noEmit`, strict) and lints it
/// (ESLint with typescript-eslint's recommended rules): `npm run check` and
/// `npm run lint` in `frontend/visitor/`.
pub fn check_visitor() -> Result<()> {
    let source = root().join("frontend").join("visitor");
    ensure_npm_packages(&source)?;
    for script in ["check", "lint"] {
        run(Command::new("npm")
            .args(["run", "--silent", script])
            .current_dir(&source))?;
    }
    Ok(())
}

/// Builds the visitor script into `<site>/visitor/` (minified unless `dev`) and
/// copies the demo shop into `<site>/demo/`.
pub fn build_visitor(site: &Path, dev: bool) -> Result<()> {
    let source = root().join("frontend").join("visitor");
    ensure_npm_packages(&source)?;
    let mut build = Command::new("node");
    build.arg("build.mjs").arg(site.join("visitor")).current_dir(&source);
    if dev {
        build.arg("--dev");
    }
    run(&mut build)?;
    let demo = site.join("demo");
    if demo.exists() {
        std::fs::remove_dir_all(&demo)?;
    }
    crate::tools::copy_dir(&source.join("demo"), &demo)
}
