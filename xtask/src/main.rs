//! Project automation for maxim: `cargo xtask bench | eval | tidy | ci`.
//!
//! - `cargo xtask tidy` checks the layering (a leaf crate depends on `maxim-core` and on no
//!   other workspace crate, through any kind of dependency, except the test helpers of
//!   `maxim-testkit` as dev-dependencies; the comparison engines, tantivy, only in `benches`
//!   and `xtask`), that every source file opens with `//!` docs, and that the
//!   repository's top level holds only what the design card lists.
//! - `cargo xtask eval retrieval [--quick] [--out FILE]` builds the retrieval evaluation of
//!   `benches` in release mode and runs it: seeded multi-session dialogues, every retriever
//!   (maxim's and tantivy's), a table of scores and latencies printed and written to
//!   `target/eval/retrieval.{json,md}` (or `FILE` and the `.md` beside it).
//! - `cargo xtask ci` runs `.ci/run`, the same script CI runs.
//! - `cargo xtask bench [--quick] [CRATE] [--save NAME | --baseline NAME]` runs the criterion
//!   benchmarks of the `maxim-benches` crate (all of them, or one), optionally saving or
//!   comparing against a named baseline; `cargo xtask bench --check` only compiles them;
//!   `cargo xtask bench workload [--sizes …] [--out FILE] [--compare FILE]` runs the shared
//!   memory workload in release mode (see the `bench` module).

mod bench;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use xshell::{Shell, cmd};

/// Crates that may depend on `maxim-core` and on no other workspace crate.
const LEAVES: &[&str] =
    &["hippocampus", "atl", "angular-gyrus", "crossgraph", "nac", "ips-gate", "promoter", "cerebellum"];

/// Test helpers: they depend on `maxim-core` alone, and a leaf may take them as
/// dev-dependencies.
const HELPERS: &[&str] = &["maxim-testkit"];

/// External crates that only the tooling may use: engines the benchmarks and the evaluation
/// compare maxim with, never a dependency of a library crate.
const TOOLING_ONLY: &[&str] = &["tantivy"];

/// The crates that may depend on [`TOOLING_ONLY`] crates.
const TOOLING: &[&str] = &["maxim-benches", "xtask"];

/// What may sit at the repository's top level.
const TOP_LEVEL: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "crates",
    "xtask",
    "benches",
    "docs",
    "README.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    ".ci",
    ".cargo",
    ".git",
    ".gitignore",
    ".rustfmt.toml",
    "target",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("tidy") => tidy(),
        Some("ci") => ci(),
        Some("bench") => bench::run(&args[1..]),
        Some("eval") => eval(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <tidy | ci | bench [--quick] [CRATE] [--save NAME | --baseline NAME] | bench --check | bench workload [--sizes N,..] [--out FILE] [--compare FILE] | eval retrieval [--quick] [--out FILE]>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the root")
        .to_path_buf()
}

fn ci() -> Result {
    let sh = Shell::new()?;
    sh.change_dir(root());
    cmd!(sh, "bash .ci/run").run()?;
    Ok(())
}

fn eval(args: &[String]) -> Result {
    let usage = "usage: cargo xtask eval retrieval [--quick] [--out FILE]";
    if args.first().map(String::as_str) != Some("retrieval") {
        return Err(usage.into());
    }
    let mut pass: Vec<String> = Vec::new();
    let mut it = args[1..].iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => pass.push(arg.clone()),
            "--out" | "--only" => {
                let value = it.next().ok_or_else(|| format!("{arg} needs a value\n{usage}"))?;
                pass.extend([arg.clone(), value.clone()]);
            }
            other => return Err(format!("unknown argument {other:?}\n{usage}").into()),
        }
    }
    let sh = Shell::new()?;
    sh.change_dir(root());
    cmd!(sh, "cargo run --release --quiet -p maxim-benches --bin eval_retrieval -- {pass...}").run()?;
    Ok(())
}

fn tidy() -> Result {
    let mut problems = Vec::new();
    check_layering(&mut problems)?;
    check_docs(&mut problems)?;
    check_top_level(&mut problems)?;
    if problems.is_empty() {
        println!("tidy: ok");
        Ok(())
    } else {
        for p in &problems {
            eprintln!("tidy: {p}");
        }
        Err(format!("{} problem(s)", problems.len()).into())
    }
}

fn check_layering(problems: &mut Vec<String>) -> Result {
    let sh = Shell::new()?;
    sh.change_dir(root());
    let metadata = cmd!(sh, "cargo metadata --format-version 1 --no-deps").read()?;
    let metadata: serde_json::Value = serde_json::from_str(&metadata)?;
    let packages = metadata["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let members: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if let Some(rule) = tooling_violation(name, dep_name) {
                problems.push(format!("{name} has a {kind} dependency on {dep_name}: {rule}"));
            }
            if !members.contains(&dep_name) {
                continue;
            }
            if let Some(rule) = layering_violation(name, dep_name, kind) {
                problems.push(format!("{name} has a {kind} dependency on {dep_name}: {rule}"));
            }
        }
    }
    Ok(())
}

/// Why `crate_name` may not depend on the workspace crate `dep` through a dependency of
/// `kind` (`normal`, `dev` or `build`), or `None` when it may. Every kind counts: a test
/// that builds against a sibling breaks the layering as much as the library would.
fn layering_violation(crate_name: &str, dep: &str, kind: &str) -> Option<&'static str> {
    if crate_name == "maxim-core" {
        return Some("maxim-core depends on no workspace crate");
    }
    if HELPERS.contains(&crate_name) {
        return (dep != "maxim-core").then_some("test helpers depend on maxim-core only");
    }
    if LEAVES.contains(&crate_name) {
        let allowed = dep == "maxim-core" || (kind == "dev" && HELPERS.contains(&dep));
        return (!allowed)
            .then_some("leaf crates depend on maxim-core only (and on test helpers as dev-dependencies)");
    }
    None
}

/// Why `crate_name` may not depend on the external crate `dep` (through any kind of
/// dependency), or `None` when it may.
fn tooling_violation(crate_name: &str, dep: &str) -> Option<&'static str> {
    (TOOLING_ONLY.contains(&dep) && !TOOLING.contains(&crate_name))
        .then_some("comparison engines are dependencies of benches and xtask only, never of a library crate")
}

fn check_docs(problems: &mut Vec<String>) -> Result {
    let root = root();
    for dir in ["crates", "xtask", "benches"] {
        let mut stack = vec![root.join(dir)];
        while let Some(path) = stack.pop() {
            for entry in std::fs::read_dir(&path)? {
                let path = entry?.path();
                if path.is_dir() {
                    if path.file_name().is_some_and(|n| n != "target") {
                        stack.push(path);
                    }
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path)?;
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
                    if !first.starts_with("//!") {
                        let rel = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
                        problems.push(format!("{rel} does not open with //! docs"));
                    }
                }
            }
        }
    }
    Ok(())
}

fn check_top_level(problems: &mut Vec<String>) -> Result {
    for entry in std::fs::read_dir(root())? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if !TOP_LEVEL.contains(&name.as_str()) && !name.starts_with("target-") {
            problems.push(format!("{name} does not belong at the repository's top level"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{layering_violation, tooling_violation};

    #[test]
    fn comparison_engines_stay_in_the_tooling() {
        assert_eq!(tooling_violation("maxim-benches", "tantivy"), None);
        assert_eq!(tooling_violation("xtask", "tantivy"), None);
        for lib in ["maxim", "maxim-core", "hippocampus", "maxim-testkit", "atl"] {
            assert!(tooling_violation(lib, "tantivy").is_some(), "{lib}");
            assert_eq!(tooling_violation(lib, "serde"), None, "{lib}");
        }
    }

    #[test]
    fn leaves_reach_the_core_and_test_helpers_only() {
        assert_eq!(layering_violation("atl", "maxim-core", "normal"), None);
        assert_eq!(layering_violation("atl", "maxim-core", "dev"), None);
        assert_eq!(layering_violation("atl", "maxim-testkit", "dev"), None);
        assert!(layering_violation("atl", "maxim-testkit", "normal").is_some());
        for kind in ["normal", "dev", "build"] {
            assert!(layering_violation("atl", "hippocampus", kind).is_some(), "{kind}");
            assert!(layering_violation("promoter", "maxim-benches", kind).is_some(), "{kind}");
            assert!(layering_violation("maxim-core", "maxim-testkit", kind).is_some(), "{kind}");
        }
        assert!(layering_violation("maxim-testkit", "atl", "normal").is_some());
        assert_eq!(layering_violation("maxim", "atl", "normal"), None);
        assert_eq!(layering_violation("maxim-benches", "hippocampus", "normal"), None);
    }
}
