//! `cargo xtask bench`: the criterion suite of the `maxim-benches` crate, and the shared
//! memory workload (`shared/bench/WORKLOAD.md`).
//!
//! ```text
//! cargo xtask bench [--quick] [CRATE] [--save NAME | --baseline NAME]
//! cargo xtask bench --check
//! cargo xtask bench workload [--sizes 1000,10000,100000] [--out FILE] [--compare FILE] [--light]
//! ```
//!
//! - `CRATE` narrows the suite to one benchmark (a crate name such as `ips-gate` or a bench
//!   name such as `ips_gate`); `--quick` is criterion's short pass; `--save NAME` saves a
//!   criterion baseline and `--baseline NAME` compares against one.
//! - `--check` compiles every benchmark without running it (what CI does).
//! - `workload` runs the workload runner in release mode, one fresh process per size, and
//!   writes the JSON and a Markdown table to `target/bench/` (`workload.json`,
//!   `workload.md`; `workload-compare.md` with `--compare`) unless `--out` says otherwise.

use xshell::{Shell, cmd};

use crate::{Result, root};

/// What `cargo xtask bench` was asked to do.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    /// `cargo bench -p maxim-benches` with these arguments.
    Criterion(Vec<String>),
    /// `cargo run --release -p maxim-benches --bin workload --` with these arguments.
    Workload(Vec<String>),
}

/// Runs `cargo xtask bench ARGS`.
pub(crate) fn run(args: &[String]) -> Result {
    let sh = Shell::new()?;
    sh.change_dir(root());
    match plan(args)? {
        Plan::Criterion(cargo_args) => cmd!(sh, "cargo {cargo_args...}").run()?,
        Plan::Workload(args) => {
            cmd!(sh, "cargo run --release -p maxim-benches --bin workload -- {args...}").run()?;
        }
    }
    Ok(())
}

/// The benchmark target of a crate or bench name (`ips-gate` → `ips_gate`).
fn bench_name(name: &str) -> String {
    name.replace('-', "_")
}

fn plan(args: &[String]) -> Result<Plan> {
    if args.first().is_some_and(|a| a == "workload") {
        let mut rest: Vec<String> = args[1..].to_vec();
        if !rest.iter().any(|a| a == "--out") {
            rest.extend(["--out".to_owned(), "target/bench/workload.json".to_owned()]);
        }
        return Ok(Plan::Workload(rest));
    }
    let mut cargo_args: Vec<String> = vec!["bench".into(), "-p".into(), "maxim-benches".into()];
    let mut criterion_args: Vec<String> = Vec::new();
    let mut check = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--save" | "--baseline" => {
                let name = it.next().ok_or_else(|| format!("{arg} needs a NAME"))?;
                let flag = if arg == "--save" { "--save-baseline" } else { "--baseline" };
                criterion_args.extend([flag.to_owned(), name.clone()]);
            }
            "--quick" => criterion_args.push("--quick".into()),
            "--check" => check = true,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}").into()),
            bench => cargo_args.extend(["--bench".to_owned(), bench_name(bench)]),
        }
    }
    if check {
        cargo_args.push("--no-run".into());
        return Ok(Plan::Criterion(cargo_args));
    }
    if !cargo_args.iter().any(|a| a == "--bench") {
        // Every criterion benchmark, and no other target: the library and the workload
        // runner have no criterion harness to take the arguments.
        cargo_args.push("--benches".into());
    }
    if !criterion_args.is_empty() {
        cargo_args.push("--".into());
        cargo_args.extend(criterion_args);
    }
    Ok(Plan::Criterion(cargo_args))
}

#[cfg(test)]
mod tests {
    use super::{Plan, plan};

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn criterion_runs_are_narrowed_and_forwarded() {
        let Plan::Criterion(a) = plan(&args("--quick ips-gate --baseline main")).unwrap() else { panic!() };
        assert_eq!(a, args("bench -p maxim-benches --bench ips_gate -- --quick --baseline main"));
        let Plan::Criterion(a) = plan(&args("--save before")).unwrap() else { panic!() };
        assert_eq!(a, args("bench -p maxim-benches --benches -- --save-baseline before"));
        let Plan::Criterion(a) = plan(&args("--check")).unwrap() else { panic!() };
        assert_eq!(a, args("bench -p maxim-benches --no-run"));
        assert!(plan(&args("--baseline")).is_err());
        assert!(plan(&args("--bogus")).is_err());
    }

    #[test]
    fn the_workload_writes_to_target_bench_by_default() {
        assert_eq!(
            plan(&args("workload --sizes 1000")).unwrap(),
            Plan::Workload(args("--sizes 1000 --out target/bench/workload.json"))
        );
        assert_eq!(
            plan(&args("workload --out x.json --compare p.json")).unwrap(),
            Plan::Workload(args("--out x.json --compare p.json"))
        );
    }
}
