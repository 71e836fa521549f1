//! The retrieval evaluation's program: `eval_retrieval [--quick] [--out FILE] [--only KEY]...`.
//!
//! Generates the seeded dialogues (`--quick`: the CI-sized corpus), runs every strategy of
//! `maxim_benches::eval::strategies` (or those named with `--only`), prints the Markdown
//! tables and writes the report as JSON to `FILE` (default `target/eval/retrieval.json`)
//! and as Markdown beside it (same name, `.md`). `cargo xtask eval retrieval` builds it in
//! release mode and runs it.

use std::path::PathBuf;
use std::process::ExitCode;

use maxim_benches::dialogue::DialogueConfig;
use maxim_benches::eval::{self, retrievers::BoxError};

const USAGE: &str = "usage: eval_retrieval [--quick] [--out FILE] [--only KEY]...";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("eval_retrieval: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), BoxError> {
    let mut config = DialogueConfig::full();
    let mut out = PathBuf::from("target/eval/retrieval.json");
    let mut only: Vec<String> = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => config = DialogueConfig::quick(),
            "--out" => out = it.next().ok_or(USAGE)?.into(),
            "--only" => only.push(it.next().ok_or(USAGE)?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
        }
    }
    if out.extension().is_some_and(|e| e == "md") {
        return Err("--out names the JSON file; the Markdown goes beside it".into());
    }
    let mut strategies = eval::strategies();
    if !only.is_empty() {
        let keys: Vec<&str> = strategies.iter().map(|s| s.key).collect();
        if let Some(bad) = only.iter().find(|k| !keys.contains(&k.as_str())) {
            return Err(format!("no strategy {bad:?}; known: {}", keys.join(", ")).into());
        }
        strategies.retain(|s| only.iter().any(|k| k == s.key));
    }
    let report = eval::run(&config, &strategies)?;
    let md = report.to_markdown();
    println!("{md}");
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&report.to_json())? + "\n")?;
    let md_path = out.with_extension("md");
    std::fs::write(&md_path, md)?;
    eprintln!("wrote {} and {}", out.display(), md_path.display());
    Ok(())
}
