//! Builds the site: the hydration bundle (`pkg/rapport.js` + `pkg/rapport_bg.wasm`),
//! the stylesheet (`pkg/rapport.css`) and the public assets.

use std::{fs, io::Write, path::Path, process::Command};

use anyhow::{Context, Result};

use crate::tools::{self, cargo, ensure_npm_packages, ensure_wasm_target, root, run, site_dir, target_dir};

/// Sizes of the built bundle, raw and gzip-compressed, in bytes.
#[derive(Debug, Default)]
pub struct BundleSize {
    pub wasm: (u64, u64),
    pub js: (u64, u64),
    pub css: (u64, u64),
}

/// Builds the site; `release` makes a size-optimised bundle.
pub fn build_site(release: bool) -> Result<BundleSize> {
    ensure_wasm_target()?;
    let profile = if release { "wasm-release" } else { "dev" };
    run(cargo().args([
        "build",
        "--package",
        "rapport-frontend",
        "--lib",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        profile,
    ]))?;
    let profile_dir = if release { "wasm-release" } else { "debug" };
    let wasm = target_dir()
        .join("wasm32-unknown-unknown")
        .join(profile_dir)
        .join("rapport_frontend.wasm");

    let site = site_dir();
    let pkg = site.join("pkg");
    fs::create_dir_all(&pkg)?;
    eprintln!("xtask: generating the JS glue (wasm-bindgen-cli-support, same version as wasm-bindgen)");
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&wasm)
        .web(true)?
        .out_name("rapport")
        .typescript(false)
        .debug(!release)
        .generate(&pkg)
        .context("wasm-bindgen failed")?;

    let bundle = pkg.join("rapport_bg.wasm");
    if release {
        optimise(&bundle)?;
    }

    let mut css = String::new();
    let mut sheets: Vec<_> = fs::read_dir(root().join("style"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    sheets.sort();
    for sheet in sheets.iter().filter(|p| p.extension().is_some_and(|e| e == "css")) {
        css.push_str(&fs::read_to_string(sheet)?);
        css.push('\n');
    }
    fs::write(pkg.join("rapport.css"), css)?;
    copy_dir(&root().join("public"), &site)?;

    let size = BundleSize {
        wasm: sizes(&bundle)?,
        js: sizes(&pkg.join("rapport.js"))?,
        css: sizes(&pkg.join("rapport.css"))?,
    };
    eprintln!(
        "xtask: site built in {} — wasm {} B (gzip {} B), js {} B (gzip {} B), css {} B (gzip {} B)",
        site.display(),
        size.wasm.0,
        size.wasm.1,
        size.js.0,
        size.js.1,
        size.css.0,
        size.css.1
    );
    Ok(size)
}

/// Shrinks the wasm with binaryen's `wasm-opt -Oz` (npm package `binaryen`,
/// pinned in `xtask/package.json`). Skipped with a warning when npm is missing.
fn optimise(wasm: &Path) -> Result<()> {
    let tools_dir = root().join("xtask");
    if !tools::has_program("npm") {
        eprintln!("xtask: warning: npm not found; the wasm bundle is not run through wasm-opt");
        return Ok(());
    }
    ensure_npm_packages(&tools_dir)?;
    let wasm_opt = tools_dir.join("node_modules/.bin/wasm-opt");
    let out = wasm.with_extension("opt.wasm");
    run(Command::new(&wasm_opt)
        .arg("-Oz")
        .args([
            "--enable-bulk-memory",
            "--enable-nontrapping-float-to-int",
            "--enable-sign-ext",
        ])
        .args([
            "--enable-mutable-globals",
            "--enable-reference-types",
            "--enable-multivalue",
        ])
        .arg(wasm)
        .arg("-o")
        .arg(&out))?;
    fs::rename(&out, wasm)?;
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    if !from.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else {
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

fn sizes(path: &Path) -> Result<(u64, u64)> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&bytes)?;
    Ok((bytes.len() as u64, gz.finish()?.len() as u64))
}
