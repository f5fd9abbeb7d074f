//! Counting a test run's results: every runner's output is echoed and read
//! for its totals and the names of the tests that failed.

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Stdio},
};

use anyhow::{Context, Result};

use crate::tools::root;

/// Totals over every runner, and the names of the tests that failed: CI shows
/// only the end of a run's output, so the end must say what broke.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
    pub(crate) failures: Vec<String>,
}

/// Which of a test runner's streams carries its results.
#[derive(Clone, Copy)]
pub(crate) enum Output {
    Stdout,
    Stderr,
}

/// Runs a command, echoing its output and counting results with `parse` from the
/// stream `results`.
pub(crate) fn run_counting(
    cmd: &mut Command,
    results: Output,
    tally: &mut Tally,
    parse: fn(&str, &mut Tally),
) -> Result<bool> {
    eprintln!("xtask: {}", crate::tools::shown(cmd));
    cmd.current_dir(cmd.get_current_dir().map(Path::to_path_buf).unwrap_or_else(root));
    match results {
        Output::Stdout => cmd.stdout(Stdio::piped()),
        Output::Stderr => cmd.stderr(Stdio::piped()),
    };
    let mut child = cmd.spawn().context("cannot start test runner")?;
    let stream: Box<dyn std::io::Read> = match results {
        Output::Stdout => Box::new(child.stdout.take().expect("piped stdout")),
        Output::Stderr => Box::new(child.stderr.take().expect("piped stderr")),
    };
    for line in BufReader::new(stream).lines() {
        let line = line?;
        match results {
            Output::Stdout => println!("{line}"),
            Output::Stderr => eprintln!("{line}"),
        }
        parse(&line, tally);
    }
    Ok(child.wait()?.success())
}

/// `test result: ok. 12 passed; 0 failed; ...`, and `test name ... FAILED`.
pub(crate) fn parse_cargo_line(line: &str, tally: &mut Tally) {
    if let Some(name) = line.strip_prefix("test ").and_then(|l| l.strip_suffix(" ... FAILED")) {
        tally.failures.push(name.to_string());
        return;
    }
    let Some(rest) = line.strip_prefix("test result: ") else {
        return;
    };
    for part in rest.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        if let Some(pos) = words.iter().position(|w| *w == "passed") {
            tally.passed += words.get(pos.wrapping_sub(1)).and_then(|n| n.parse().ok()).unwrap_or(0);
        }
        if let Some(pos) = words.iter().position(|w| *w == "failed") {
            tally.failed += words.get(pos.wrapping_sub(1)).and_then(|n| n.parse().ok()).unwrap_or(0);
        }
    }
}

/// nextest's summary, `Summary [ 368.1s] 500 tests run: 498 passed (3 slow), 2
/// failed, 4 skipped`, and a failed test's line, `FAIL [ 1.2s] rapport-server::it
/// cobrowsing::idle` (each attempt's, and again in the final list).
pub(crate) fn parse_nextest_line(line: &str, tally: &mut Tally) {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("FAIL [") {
        if let Some((_, name)) = rest.split_once(']') {
            let name = name.trim().to_string();
            if !tally.failures.contains(&name) {
                tally.failures.push(name);
            }
        }
        return;
    }
    let Some(rest) = line.strip_prefix("Summary [") else {
        return;
    };
    let Some((_, counts)) = rest.split_once(" run: ") else {
        return;
    };
    for part in counts.split(',') {
        let words: Vec<&str> = part.split_whitespace().collect();
        match (words.first().and_then(|n| n.parse::<u64>().ok()), words.get(1)) {
            (Some(n), Some(&"passed")) => tally.passed += n,
            (Some(n), Some(&"failed")) | (Some(n), Some(&"timed")) => tally.failed += n,
            _ => {}
        }
    }
}

/// Playwright's list reporter ends with `  12 passed (30.1s)` and `  1 failed`;
/// a failed test's own line starts with `✘`.
pub(crate) fn parse_playwright_line(line: &str, tally: &mut Tally) {
    if let Some(rest) = line.trim_start().strip_prefix('✘') {
        tally.failures.push(rest.trim().to_string());
        return;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() >= 2 {
        let n: Option<u64> = words[0].parse().ok();
        match (n, words[1]) {
            (Some(n), "passed") => tally.passed += n,
            (Some(n), "failed") | (Some(n), "flaky") => tally.failed += n,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cargo_and_playwright_results() {
        let mut t = Tally::default();
        parse_cargo_line(
            "test result: ok. 12 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
            &mut t,
        );
        parse_playwright_line("  4 passed (12.3s)", &mut t);
        parse_playwright_line("  2 failed", &mut t);
        parse_playwright_line("  ✓  1 [chromium] › login.spec.ts:3:1 › signs in (2.1s)", &mut t);
        parse_playwright_line("  ✘  2 [chromium] › calls.spec.ts:9:1 › rings (30.0s)", &mut t);
        parse_cargo_line("test it::cobrowsing::idle ... FAILED", &mut t);
        parse_cargo_line("test it::cobrowsing::ends ... ok", &mut t);
        parse_nextest_line("        FAIL [   1.204s] rapport-server::it cobrowsing::ends", &mut t);
        parse_nextest_line("        FAIL [   1.204s] rapport-server::it cobrowsing::ends", &mut t);
        parse_nextest_line(
            "     Summary [ 368.100s] 503 tests run: 500 passed (3 slow), 2 failed, 1 timed out, 4 skipped",
            &mut t,
        );
        assert_eq!((t.passed, t.failed), (516, 6));
        assert_eq!(
            t.failures,
            [
                "2 [chromium] › calls.spec.ts:9:1 › rings (30.0s)",
                "it::cobrowsing::idle",
                "rapport-server::it cobrowsing::ends"
            ]
        );
    }
}
