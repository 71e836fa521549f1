//! The `maxim` program's parts that only the binary needs: the failure type with its exit
//! codes, the commands that need no memory (`inspect`, `lab`, `crates`) and the picture.

#[cfg(feature = "mcp")]
pub(crate) mod mcp;
pub(crate) mod memory;
pub(crate) mod plot;

use std::fmt;
use std::path::{Path, PathBuf};

use maxim::cerebellum::lab::{LabConfig, chart, run_lab};
use maxim::maxim_core::codec;

/// Why the program stopped, and so its exit code: 1 when the data is damaged or not found
/// (or cannot be written), 2 when it was used wrongly.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The data is damaged, missing, or cannot be read or written (exit 1).
    Data(String),
    /// The command line asks for something impossible (exit 2).
    Usage(String),
}

impl Failure {
    /// The exit code: 1 for data, 2 for usage.
    pub(crate) fn code(&self) -> u8 {
        match self {
            Self::Data(_) => 1,
            Self::Usage(_) => 2,
        }
    }

    /// A data failure from any error (whose message names its path or id).
    pub(crate) fn data(err: impl fmt::Display) -> Self {
        Self::Data(err.to_string())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Data(msg) | Self::Usage(msg) => f.write_str(msg),
        }
    }
}

/// What a command returns.
pub(crate) type Outcome = Result<(), Failure>;

/// The crates of the workspace, one line each.
pub(crate) const CRATES: &[(&str, &str)] = &[
    (
        "maxim-core",
        "contracts: ids, time, records, MemoryLayer, graph, traces, ranking, text, embeddings, codec",
    ),
    ("hippocampus", "episodic layer: what happened"),
    ("atl", "semantic layer: what things mean"),
    ("angular-gyrus", "mathematical layer: what the numbers say"),
    ("crossgraph", "edges between layers, cross-layer activation"),
    ("nac", "reward learning (Rescorla-Wagner)"),
    ("ips-gate", "randomness gate for promotion"),
    ("promoter", "patterns into concepts"),
    ("cerebellum", "procedural memory: skills"),
    ("maxim", "the facade and this program"),
];

/// `maxim crates`.
pub(crate) fn print_crates() {
    println!("maxim {}\n", env!("CARGO_PKG_VERSION"));
    for (name, what) in CRATES {
        println!("  {name:<14} {what}");
    }
}

/// `maxim inspect FILE...`: describes every file (an unreadable or damaged one does not
/// stop the others): intact snapshots on standard output, problems on standard error, each
/// naming its file. Fails (exit 1) when any file is not an intact snapshot.
pub(crate) fn inspect(files: &[PathBuf]) -> Outcome {
    let mut bad = 0usize;
    for path in files {
        match codec::inspect(path) {
            Ok(info) if info.is_intact() => println!("{info}"),
            Ok(info) => {
                bad += 1;
                eprintln!("{info}");
            }
            Err(err) => {
                bad += 1;
                // The codec's errors name the file already.
                eprintln!("{err}");
            }
        }
    }
    match bad {
        0 => Ok(()),
        n => Err(Failure::Data(format!("{n} of {} file(s) are not intact snapshots", files.len()))),
    }
}

/// `maxim lab`: the cerebellum's skill lab, gate on and gate off, and its chart.
pub(crate) fn lab(out: &Path, runs: usize, seed: u64) -> Outcome {
    if runs == 0 {
        return Err(Failure::Usage("--runs must be at least 1".into()));
    }
    let cfg = LabConfig { runs, seed, ..LabConfig::default() };
    let on = run_lab(&cfg).map_err(Failure::data)?;
    let off = run_lab(&LabConfig { gate: false, ..cfg }).map_err(Failure::data)?;
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
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Data(format!("cannot create {}: {e}", dir.display())))?;
    }
    chart::write_svg(out, &[&on, &off]).map_err(Failure::data)?;
    println!("chart written to {}", out.display());
    Ok(())
}
