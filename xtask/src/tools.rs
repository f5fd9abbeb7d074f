//! Paths and prerequisites: the workspace, the target directory, the tools a
//! fresh machine may lack (the wasm target, npm packages), and copying a
//! directory.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{bail, Context, Result};

/// The workspace root.
pub fn root() -> PathBuf {
    // `cargo run` sets the variable for the running task too. Prefer that: with a
    // shared `CARGO_TARGET_DIR`, cargo may reuse an xtask binary that another
    // checkout of the same sources compiled, whose compile-time path is that
    // checkout's.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Cargo's target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// The built site: `pkg/` (wasm, JS, CSS) and the public assets.
pub fn site_dir() -> PathBuf {
    target_dir().join("site")
}

/// `cmd` as a shell would read it: the variables it sets, the program and its
/// arguments (not the variables it removes, which [`cargo`] does by the dozen).
/// The value of a variable that holds a credential (its name says `SECRET`,
/// `PASSWORD` or `TOKEN`) is left out: the line goes to CI logs.
pub fn shown(cmd: &Command) -> String {
    let mut words: Vec<String> = cmd
        .get_envs()
        .filter_map(|(name, value)| {
            let name = name.to_string_lossy();
            let secret = ["SECRET", "PASSWORD", "TOKEN"].iter().any(|s| name.contains(s));
            Some(match value? {
                _ if secret => format!("{name}=…"),
                value => format!("{name}={value:?}"),
            })
        })
        .collect();
    words.push(format!("{:?}", cmd.get_program()));
    words.extend(cmd.get_args().map(|a| format!("{a:?}")));
    words.join(" ")
}

/// Runs a command in the workspace root, failing on a non-zero exit.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = shown(cmd);
    eprintln!("xtask: {shown}");
    let status = cmd
        .current_dir(cmd.get_current_dir().map(Path::to_path_buf).unwrap_or_else(root))
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// A `cargo` command, without the variables `cargo run` set for this task.
///
/// Build scripts that track one of them (ring's tracks `CARGO_MANIFEST_DIR`)
/// would otherwise see it change between a build run by xtask and one run
/// from a shell, or from a clone in another folder, and rebuild with everything
/// above them (rustls, sqlx, Rapport's crates).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_RUSTC_CURRENT_DIR",
            ]
            .contains(&name)
        {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Makes `cmd` (a cargo build) lint the workspace's crates with clippy, denying
/// every warning, as `cargo clippy -- -D warnings` would, while it compiles them.
///
/// `cargo clippy` only type-checks, so its artifacts serve no later build, and a
/// separate clippy run costs a second pass over every dependency. clippy's
/// driver is an ordinary rustc wrapper though: set as cargo's
/// `RUSTC_WORKSPACE_WRAPPER`, it runs clippy's lints inside the real
/// compilation of the workspace's own crates, while dependencies are compiled
/// (and fingerprinted) exactly as without it. Every later cargo command of the
/// same run must use the same setting, or cargo rebuilds the workspace's crates.
pub fn lint_while_compiling(cmd: &mut Command) {
    let driver = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| {
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
                .join("bin")
                .join("clippy-driver")
        })
        .filter(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from("clippy-driver"));
    // `cargo clippy` hands its arguments to the driver the same way.
    cmd.env("RUSTC_WORKSPACE_WRAPPER", driver)
        .env("CLIPPY_ARGS", "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__");
}

/// Adds the wasm target through rustup when it is missing.
pub fn ensure_wasm_target() -> Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown"))
        .unwrap_or(false);
    if !installed {
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
    }
    Ok(())
}

/// Installs the npm packages of `dir` (from its lockfile when there is one) unless
/// they are already there.
///
/// An install counts as done only once `npm` has finished: it then leaves a
/// stamp in `node_modules`. A `node_modules` without one (an install cut
/// short) or older than the manifests is installed again, and `npm ci` starts
/// it afresh.
pub fn ensure_npm_packages(dir: &Path) -> Result<()> {
    let stamp = dir.join("node_modules").join(".rapport-installed");
    let current = ["package.json", "package-lock.json"]
        .iter()
        .all(|manifest| !newer(&dir.join(manifest), &stamp));
    if stamp.is_file() && current {
        return Ok(());
    }
    let subcommand = if dir.join("package-lock.json").exists() {
        "ci"
    } else {
        "install"
    };
    run(Command::new("npm")
        .args([subcommand, "--no-audit", "--no-fund"])
        .current_dir(dir))?;
    std::fs::write(&stamp, "installed by cargo xtask\n").with_context(|| format!("cannot write {}", stamp.display()))
}

fn newer(a: &Path, b: &Path) -> bool {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    matches!((modified(a), modified(b)), (Some(a), Some(b)) if a > b)
}

/// Whether a program can be started.
pub fn has_program(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Copies the directory `from` into `to`, recursively; a missing `from` copies
/// nothing.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn shown_commands_leave_credentials_out() {
        let mut cmd = std::process::Command::new("cargo");
        cmd.env("RAPPORT_TEST_S3_SECRET", "s3cr3t")
            .env("RAPPORT_TEST_S3_URL", "s3://bucket")
            .arg("test");
        let line = super::shown(&cmd);
        assert!(!line.contains("s3cr3t"), "{line}");
        assert!(line.contains("RAPPORT_TEST_S3_SECRET=…"), "{line}");
        assert!(line.contains("RAPPORT_TEST_S3_URL=\"s3://bucket\""), "{line}");
    }
}
