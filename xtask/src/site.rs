//! Builds the site: the hydration bundle, the stylesheet (`pkg/rapport.css`) and
//! the public assets.
//!
//! The bundle is split per area (`app/src/routes.rs`): every page loads
//! `pkg/rapport.js`, `pkg/rapport_bg.wasm` (the shell, the router and what
//! every page shares) and the small loader `pkg/__wasm_split.…js`; each area's
//! code sits in `pkg/split_<area>.wasm` (plus `chunk_<n>.wasm` for code several
//! areas share). The first area a page shows arrives as one pack,
//! `pkg/pack_<area>.bin` (see [`write_packs`]), which the server preloads from
//! `pkg/__wasm_split_manifest.json`; areas reached later fetch the chunks they
//! still miss.
//!
//! The order matters: link with relocations kept, split the raw module
//! (`wasm_split_cli_support`), run wasm-bindgen on the split main module keeping
//! the linker's exports (the loader needs the function table), only then run
//! `wasm-opt` on every file, and pack the optimised modules last.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result};

use crate::tools::{self, cargo, copy_dir, ensure_npm_packages, ensure_wasm_target, root, run, site_dir, target_dir};

/// The loader that fetches a page's chunks. The name must equal the one Leptos'
/// `HydrationScripts` looks for.
pub const SPLIT_LOADER: &str = "__wasm_split.______________________.js";

/// At most this many chunks hold the code several areas share (upstream
/// writes one per distinct set of areas: over four hundred). A page's first
/// area arrives as one pack (see [`write_packs`]), so the number of files no
/// longer costs requests or compression there; what a merge costs is code a
/// page loads without needing it. Later areas fetch their missing chunks one
/// by one, so the count still bounds those requests. Measured with packs: 24
/// left the heaviest settings page 10 KB heavier than 48; unmerged (426
/// chunks) was 5 KB lighter but its loader script, loaded on every page, grew
/// eightfold. With 18 areas, 64 made 14 of their packs 1 to 14 % lighter than
/// 48 (Brotli) and none over 0.2 % heavier, for a loader of 3.3 KB.
const MAX_SHARED_CHUNKS: usize = 64;

/// The areas of the pages most often loaded first: agents start their day in
/// the inbox, supervisors in the reports; admins open settings now and then.
const FIRST_PAGES: [&str; 2] = ["inbox_area_", "reports_area_"];

/// How much a byte more in a [`FIRST_PAGES`] area counts, against 1 for any
/// other, when shared chunks are merged. At 10 their first loads are as light
/// as when they had no settings areas to share chunks with.
const FIRST_PAGE_WEIGHT: u64 = 10;

/// Sizes of the built bundle, raw and gzip-compressed, in bytes.
#[derive(Debug, Default)]
pub struct BundleSize {
    /// The main module, loaded on every page.
    pub wasm: (u64, u64),
    /// The JS glue and the chunk loader.
    pub js: (u64, u64),
    pub css: (u64, u64),
    /// All pages' chunks together (each page loads only its own).
    pub chunks: (u64, u64),
}

/// Which site to build: how the wasm bundle is compiled and finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteProfile {
    /// Unoptimised, with debug names in the JS glue (`cargo xtask site`).
    Dev,
    /// What the browser tests load: optimised lightly and quickly (cargo profile
    /// `wasm-test`), linted by clippy while it compiles, and neither shrunk by
    /// `wasm-opt` nor precompressed. Those two steps serve download size only,
    /// which no test measures (`cargo xtask budget` measures the release site),
    /// and cost most of the site's build time.
    Test,
    /// What `cargo xtask run` serves on a first start: built as the tests'
    /// (cargo profile `wasm-test`, which compiles in a fraction of the
    /// size-optimised profile's time), not run through `wasm-opt`, and
    /// precompressed at a quality that costs seconds. It is larger on the wire
    /// than `Release`, which a server on one's own machine does not feel.
    Run,
    /// As shipped: size-optimised, `wasm-opt -Oz`, precompressed at the
    /// highest quality (`cargo xtask build --release`).
    Release,
}

impl SiteProfile {
    /// The cargo profile and the directory cargo builds it into.
    fn cargo_profile(self) -> (&'static str, &'static str) {
        match self {
            SiteProfile::Dev => ("dev", "debug"),
            SiteProfile::Test | SiteProfile::Run => ("wasm-test", "wasm-test"),
            SiteProfile::Release => ("wasm-release", "wasm-release"),
        }
    }

    /// Brotli quality and gzip level of the precompressed copies, if any.
    ///
    /// Measured on the first-start site (84 files, 47 MB, on 2 cores):
    /// Brotli 9 with gzip 6 took 11 s in all. On its main module (2.9 MB)
    /// Brotli 9 took 0.18 s for 442 KB and Brotli 11 3.8 s for 395 KB: a
    /// tenth smaller for 21 times the time, which over the whole site is the
    /// 4 minutes a first start used to spend. gzip 9 is 1.3 % smaller than 6.
    fn precompression(self) -> Option<(u32, u32)> {
        match self {
            SiteProfile::Dev | SiteProfile::Test => None,
            SiteProfile::Run => Some((9, 6)),
            SiteProfile::Release => Some((11, 9)),
        }
    }
}

/// Builds the site with the given profile.
///
/// The site is built in `site.partial` next to the site and takes its place
/// only once complete, so that a build cut short (Ctrl-C on a first start)
/// leaves the last complete site, or none, and the next build starts clean.
pub fn build_site(profile: SiteProfile) -> Result<BundleSize> {
    ensure_wasm_target()?;
    let release = profile == SiteProfile::Release;
    let step = Step::start("compile the wasm bundle");
    let (cargo_profile, profile_dir) = profile.cargo_profile();
    // `cargo rustc` hands the flag to the final link only, so dependencies keep
    // their builds. The splitter needs the relocations to find function pointers.
    let mut compile = cargo();
    compile.args([
        "rustc",
        "--package",
        "rapport-frontend",
        "--lib",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        cargo_profile,
        "--",
        "-Clink-arg=--emit-relocs",
    ]);
    if profile == SiteProfile::Test {
        // The browser crates are linted for their real target in this very build.
        tools::lint_while_compiling(&mut compile);
    }
    run(&mut compile)?;
    let wasm = target_dir()
        .join("wasm32-unknown-unknown")
        .join(profile_dir)
        .join("rapport_frontend.wasm");

    step.done();

    let done_site = site_dir();
    let site = done_site.with_file_name("site.partial");
    if site.exists() {
        fs::remove_dir_all(&site).with_context(|| format!("cannot remove {}", site.display()))?;
    }
    let pkg = site.join("pkg");
    fs::create_dir_all(&pkg)?;
    let step = Step::start("split the bundle and write its JS glue");
    let chunks = split(&wasm, &pkg)?;
    eprintln!("xtask: generating the JS glue (wasm-bindgen-cli-support, same version as wasm-bindgen)");
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(wasm.with_file_name("rapport_frontend_split.wasm"))
        .web(true)?
        .out_name("rapport")
        .typescript(false)
        .debug(profile == SiteProfile::Dev)
        .keep_lld_exports(true)
        .demangle(false)
        .generate(&pkg)
        .context("wasm-bindgen failed")?;

    step.done();

    let bundle = pkg.join("rapport_bg.wasm");
    if release {
        let step = Step::start("wasm-opt -Oz");
        let mut files = vec![bundle.clone()];
        files.extend(chunks.iter().cloned());
        optimise_all(&files)?;
        step.done();
    }
    write_packs(&pkg)?;

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
    let step = Step::start("build the visitor script");
    crate::visitor::build_visitor(&site, profile == SiteProfile::Dev)?;
    step.done();
    let step = Step::start("precompress");
    precompress(&pkg, profile.precompression())?;
    step.done();

    let add = |(a, b): (u64, u64), (c, d): (u64, u64)| (a + c, b + d);
    let mut size = BundleSize {
        wasm: sizes(&bundle)?,
        js: add(sizes(&pkg.join("rapport.js"))?, sizes(&pkg.join(SPLIT_LOADER))?),
        css: sizes(&pkg.join("rapport.css"))?,
        chunks: (0, 0),
    };
    for chunk in &chunks {
        size.chunks = add(size.chunks, sizes(chunk)?);
    }
    if done_site.exists() {
        fs::remove_dir_all(&done_site).with_context(|| format!("cannot remove {}", done_site.display()))?;
    }
    fs::rename(&site, &done_site).with_context(|| format!("cannot move the site to {}", done_site.display()))?;
    eprintln!(
        "xtask: site built in {} — wasm {} B (gzip {} B), js {} B (gzip {} B), css {} B (gzip {} B); \
         {} page chunks {} B (gzip {} B)",
        done_site.display(),
        size.wasm.0,
        size.wasm.1,
        size.js.0,
        size.js.1,
        size.css.0,
        size.css.1,
        chunks.len(),
        size.chunks.0,
        size.chunks.1
    );
    Ok(size)
}

/// Splits the linked module into the main module (written next to it as
/// `rapport_frontend_split.wasm`, for wasm-bindgen) and the lazy pages' chunks
/// (written to `pkg`), with the loader and the manifest. Returns the chunks.
fn split(wasm: &Path, pkg: &Path) -> Result<Vec<PathBuf>> {
    // Chunk and pack names change between builds; never leave one build's
    // chunks or packs next to another's main module.
    for entry in fs::read_dir(pkg)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if ["split_", "chunk_", "pack_", "__wasm_split"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            fs::remove_file(&path)?;
        }
    }
    let input = fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let main_out = wasm.with_file_name("rapport_frontend_split.wasm");
    let link_name = format!("./{SPLIT_LOADER}");
    let mut options = wasm_split_cli_support::Options::new(&input);
    options.output_dir = pkg;
    options.main_out_path = &main_out;
    // The loader imports the main module's JS glue, relative to itself.
    options.main_module = "./rapport.js";
    options.link_name = &link_name;
    // Code shared by several areas goes into at most `MAX_SHARED_CHUNKS`
    // chunks rather than one per distinct set of areas (hundreds).
    options.max_shared_chunks = Some(MAX_SHARED_CHUNKS);
    // A page's first area comes as one pack (see `write_packs`).
    options.area_packs = true;
    let weight = |split: &str| {
        if FIRST_PAGES.iter().any(|area| split.starts_with(area)) {
            FIRST_PAGE_WEIGHT
        } else {
            1
        }
    };
    options.split_weight = Some(&weight);
    let split = wasm_split_cli_support::transform(options).map_err(|e| anyhow::anyhow!("wasm-split failed: {e:?}"))?;
    let mut manifest: Vec<_> = split.prefetch_map.into_iter().collect();
    manifest.sort();
    let manifest: serde_json::Map<String, serde_json::Value> =
        manifest.into_iter().map(|(k, v)| (k, v.into())).collect();
    fs::write(
        pkg.join("__wasm_split_manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(split.split_modules)
}

/// Writes `pack_<area>.bin` for every area in the manifest: the modules the
/// area needs (its shared chunks, then its own), each after its length as a
/// little-endian `u32`, in the manifest's order, which is the order the loader
/// expects (`Options::area_packs` of the vendored splitter).
///
/// The first area a page loads comes as its pack, one response: compressed
/// together, a settings area's modules are about a sixth smaller than one by
/// one, because they share most of their patterns. Later areas fetch only the
/// modules still missing, one by one, so moving between pages fetches nothing
/// twice.
fn write_packs(pkg: &Path) -> Result<()> {
    // `split` has removed the previous build's packs.
    let manifest: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_slice(&fs::read(pkg.join("__wasm_split_manifest.json"))?)?;
    for (area, modules) in manifest {
        let mut pack = Vec::new();
        for module in modules {
            let bytes = fs::read(pkg.join(format!("{module}.wasm")))?;
            let length = u32::try_from(bytes.len()).context("a wasm module over 4 GiB")?;
            pack.extend_from_slice(&length.to_le_bytes());
            pack.extend_from_slice(&bytes);
        }
        fs::write(pkg.join(format!("pack_{area}.bin")), pack)?;
    }
    Ok(())
}

/// Shrinks every wasm file with binaryen's `wasm-opt -Oz` (npm package
/// `binaryen`, pinned in `xtask/package.json`), as many at once as there are
/// cores. Skipped with a warning when npm is missing.
fn optimise_all(files: &[PathBuf]) -> Result<()> {
    let tools_dir = root().join("xtask");
    if !tools::has_program("npm") {
        eprintln!("xtask: warning: npm not found; the wasm bundle is not run through wasm-opt");
        return Ok(());
    }
    ensure_npm_packages(&tools_dir)?;
    let wasm_opt = tools_dir.join("node_modules/.bin/wasm-opt");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    match files.get(i) {
                        Some(file) => optimise(&wasm_opt, file)?,
                        None => return Ok::<_, anyhow::Error>(()),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| anyhow::anyhow!("wasm-opt worker panicked"))?)
    })
}

/// Shrinks one wasm file in place with `wasm_opt -Oz`.
fn optimise(wasm_opt: &Path, wasm: &Path) -> Result<()> {
    let out = wasm.with_extension("opt.wasm");
    run(Command::new(wasm_opt)
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

/// Writes `<file>.br` and `<file>.gz`, at the given Brotli quality and gzip
/// level, next to every wasm, pack, JS and CSS file; with `None` (a dev or
/// test build) it removes them instead.
///
/// The server (`leptos_axum`'s static files, tower-http `ServeDir`) sends such a
/// file to a browser that accepts its encoding, and compresses nothing else on
/// the fly: its on-the-fly Brotli runs at a fast quality that leaves the bundle
/// about a fifth larger. A dev build must not leave an older build's compressed
/// copies behind, or the browser would get those instead of the new files.
fn precompress(pkg: &Path, quality: Option<(u32, u32)>) -> Result<()> {
    let mut originals = Vec::new();
    for entry in fs::read_dir(pkg)? {
        let path = entry?.path();
        match path.extension().and_then(|e| e.to_str()) {
            Some("br" | "gz") => fs::remove_file(&path)?,
            Some("wasm" | "js" | "css" | "bin") => originals.push(path),
            _ => {}
        }
    }
    let Some((brotli, gzip)) = quality else {
        return Ok(());
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(file) = originals.get(i) else {
                        return Ok::<_, anyhow::Error>(());
                    };
                    let bytes = fs::read(file)?;
                    let (br, gz) = (compressed_br(&bytes, brotli)?, compressed_gz(&bytes, gzip)?);
                    fs::write(with_suffix(file, "br"), br)?;
                    fs::write(with_suffix(file, "gz"), gz)?;
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| anyhow::anyhow!("compression worker panicked"))?)
    })
}

/// `file` with `.suffix` appended to its whole name (`a.wasm` → `a.wasm.br`).
fn with_suffix(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// `bytes` as the browser receives them with `Content-Encoding: br`.
fn compressed_br(bytes: &[u8], quality: u32) -> Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: i32::try_from(quality)?,
        lgwin: 24,
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &bytes[..], &mut out, &params)?;
    Ok(out)
}

/// `bytes` as the browser receives them with `Content-Encoding: gzip`.
fn compressed_gz(bytes: &[u8], level: u32) -> Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    gz.write_all(bytes)?;
    Ok(gz.finish()?)
}

fn sizes(path: &Path) -> Result<(u64, u64)> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok((bytes.len() as u64, compressed_gz(&bytes, 9)?.len() as u64))
}

/// A step of the site's build, timed: the first start's time is the sum of
/// these and the server's compile, and each is printed so it can be weighed.
struct Step {
    name: &'static str,
    started: std::time::Instant,
}

impl Step {
    fn start(name: &'static str) -> Step {
        Step {
            name,
            started: std::time::Instant::now(),
        }
    }

    fn done(self) {
        eprintln!(
            "xtask: {} took {:.1} s",
            self.name,
            self.started.elapsed().as_secs_f64()
        );
    }
}
