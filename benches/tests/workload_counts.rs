//! The workload's deterministic counts at N = 1,000 (`shared/bench/WORKLOAD.md` §6), checked
//! against `benches/expected/workload-counts-1000.json`.
//!
//! The counts follow from behaviour alone (associations formed, graph edges, index keys, sleep
//! counts, concepts, links, candidates, …), so a change of behaviour shows up here as a diff,
//! not as a silent speed-up. The workload runs in-process, once (one repetition, one pass of
//! each loop: the counts do not depend on them). After a deliberate change of behaviour,
//! record the new counts with `MAXIM_BLESS=1 cargo test -p maxim-benches --test
//! workload_counts` and say why in the commit.

use std::collections::BTreeMap;
use std::path::PathBuf;

use maxim_benches::workload::{Options, counts, run_ips, run_size};
use serde_json::{Value, json};

const N: usize = 1000;

fn expected_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expected").join(format!("workload-counts-{N}.json"))
}

#[test]
fn workload_counts_at_1000_match_the_recorded_ones() {
    let opts = Options::light();
    let got = counts(&run_size(N, &opts), &run_ips(&opts));
    let path = expected_path();
    if std::env::var_os("MAXIM_BLESS").is_some() {
        let file = json!({
            "workload": maxim_benches::WORKLOAD,
            "n": N,
            "note": "counts that follow from behaviour alone; see benches/tests/workload_counts.rs",
            "counts": got,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: Value = serde_json::from_str(&text).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_value(file["counts"].clone()).unwrap();
    let mut diffs = Vec::new();
    for key in expected.keys().chain(got.keys().filter(|k| !expected.contains_key(*k))) {
        let (e, g) = (expected.get(key), got.get(key));
        if e != g {
            diffs.push(format!("{key}: expected {e:?}, got {g:?}"));
        }
    }
    assert!(diffs.is_empty(), "the workload's counts changed:\n{}", diffs.join("\n"));
    // The counts the reference records in WORKLOAD.md §6 and maxim reproduces exactly.
    for (key, reference) in [
        ("capture.associations_formed", json!(4009)),
        ("capture.index_keys", json!(273)),
        ("sleep.removed", json!(114)),
        ("nac.links", json!(2553)),
        ("ips.is_random_count", json!(3614)),
    ] {
        assert_eq!(got[key], reference, "{key}");
    }
}
