//! The `maxim` program: look into and manage a maxim memory directory.

use std::process::ExitCode;

const CRATES: &[(&str, &str)] = &[
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("demo" | "crates") => {
            println!("maxim {}", env!("CARGO_PKG_VERSION"));
            println!();
            for (name, what) in CRATES {
                println!("  {name:<14} {what}");
            }
            ExitCode::SUCCESS
        }
        Some("--version" | "-V") => {
            println!("maxim {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("maxim: unknown command {other:?}; try `maxim demo`");
            ExitCode::from(2)
        }
    }
}
