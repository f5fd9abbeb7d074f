//! Rapport's build and test driver, so the README needs only two commands:
//!
//! - `cargo xtask run`: installs what is missing, builds the release server and the
//!   hydrated wasm bundle, and serves Rapport on SQLite in `./data`;
//! - `cargo xtask test`: formatting and lints, unit and HTTP tests on SQLite and
//!   PostgreSQL (when `RAPPORT_TEST_POSTGRES_URL` is set), then the browser tests in
//!   Chromium against a real server.
//!
//! The wasm bundle is built without cargo-leptos: `cargo build` for
//! `wasm32-unknown-unknown`, then wasm-bindgen's own library
//! (`wasm-bindgen-cli-support`, pinned in the workspace to the exact `wasm-bindgen`
//! version, so the JS glue always matches), then binaryen's `wasm-opt` from npm.

mod bench;
mod s3;
mod site;
mod tally;
mod tasks;
mod tools;
mod visitor;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => tasks::run(&args[1..]),
        Some("test") => tasks::test(&args[1..]),
        Some("build") => tasks::build(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("budget") => bench::budget(&args[1..]),
        Some("site") => {
            let profile = if args.iter().any(|a| a == "--release") {
                site::SiteProfile::Release
            } else if args.iter().any(|a| a == "--test") {
                site::SiteProfile::Test
            } else {
                site::SiteProfile::Dev
            };
            site::build_site(profile).map(|_| ())
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\n  run     build everything (release) and serve Rapport\n  \
                 test    run the whole test suite\n  build   build the server and the site [--release]\n  \
                 site    build only the site (wasm bundle, CSS, assets) [--release | --test]\n  \
                 bench   run the benchmarks (release build; optionally: webhooks, writes, routing, recording, timers, reports, search, conference, cobrowse, abuse, soak)\n  \
                 budget  measure the dashboard's first-load size and time to first byte"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}
