//! The skill lab from one command: ten tasks of "reset a stuck deploy" with the gate on and
//! with the gate off, a table of steps per run, and an SVG chart.
//!
//! ```text
//! cargo run --release -p cerebellum --features plotters --example lab -- --out target/lab.svg
//! ```
//!
//! Options: `--out PATH` (default `target/lab.svg`), `--runs N` (default 10), `--seed N`
//! (default 29).

use std::path::PathBuf;
use std::process::ExitCode;

use cerebellum::lab::{LabConfig, chart, run_lab};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("lab: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut out = PathBuf::from("target/lab.svg");
    let mut cfg = LabConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--out" => out = PathBuf::from(value("--out")?),
            "--runs" => cfg.runs = value("--runs")?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--seed" => cfg.seed = value("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            "-h" | "--help" => {
                println!("usage: lab [--out PATH] [--runs N] [--seed N]");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if cfg.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let on = run_lab(&cfg).map_err(|e| e.to_string())?;
    let off = run_lab(&LabConfig { gate: false, ..cfg }).map_err(|e| e.to_string())?;
    for report in [&on, &off] {
        println!("{}", report.table());
    }
    println!(
        "poisoned skill executed: {} time(s) with the gate on, {} with it off; revoked with the gate off: {}",
        on.poison_executions(),
        off.poison_executions(),
        off.revoked().len()
    );
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    chart::write_svg(&out, &[&on, &off]).map_err(|e| e.to_string())?;
    println!("chart written to {}", out.display());
    Ok(())
}
