//! The shared memory workload of `shared/bench/WORKLOAD.md` (`maxim-memory-workload/1`),
//! run exactly as written: the same seeded streams, the same calls in the same order, the
//! virtual clock, the repetitions and the per-call, block and pass medians.
//!
//! [`run_size`] runs every part of one size (a, b, c, e, d, j, f, g, h, in the workload's
//! order) and returns the size's JSON object; [`run_ips`] runs part i. The `workload` binary
//! runs each of them in a fresh process of its own (so the peak resident set belongs to that
//! size) and assembles the one JSON object the workload names; [`report`] renders it as a
//! Markdown table and sets it beside another implementation's output.
//!
//! [`Options::light`] runs every part once, with one pass of each per-call loop: the counts
//! that depend only on behaviour ([`counts`]) are the same as in a full run, which is what the
//! deterministic-counts test checks in a few seconds of a debug build.
//!
//! ```
//! use maxim_benches::workload::{Options, counts, lookup};
//! let size = serde_json::json!({"capture": {"associations_formed": 4009, "seconds_median": 0.01}});
//! let ips = serde_json::json!({"pattern_types": {"TRENDING": 6019}});
//! let c = counts(&size, &ips);
//! assert_eq!(c["capture.associations_formed"], 4009);
//! assert_eq!(c["ips.pattern_types.TRENDING"], 6019);
//! assert!(!c.contains_key("capture.seconds_median"), "timings are not counts");
//! assert_eq!(lookup(&size, "capture.seconds_median").unwrap(), 0.01);
//! assert_eq!(Options::light().passes, 1);
//! ```

mod episodic;
mod others;
pub mod report;
mod semantic;
mod stats;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

pub use others::run_ips;
pub use stats::{Calls, median};

/// How much of the workload to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Repetitions of the block figures: capture stores (besides the query store), semantic
    /// stores, cross-layer graphs, causal learners (the workload: 3).
    pub reps: usize,
    /// Passes of the per-call loops (the workload: 3).
    pub passes: usize,
    /// Saves and loads of each persistence part (the workload: 3).
    pub persistence_reps: usize,
    /// Calls of the semantic store's `consolidate` (the workload: 3).
    pub small_reps: usize,
    /// Calls of the causal learner's `get_promotion_candidates` (the workload: 5).
    pub candidate_reps: usize,
    /// Budget of the first capture loop (the workload: 180 s).
    pub capture_budget: Duration,
    /// A causal block longer than this is not repeated (the workload: 20 s).
    pub causal_budget: Duration,
}

impl Options {
    /// The workload as written.
    pub fn full() -> Self {
        Self {
            reps: 3,
            passes: 3,
            persistence_reps: 3,
            small_reps: 3,
            candidate_reps: 5,
            capture_budget: Duration::from_secs(180),
            causal_budget: Duration::from_secs(20),
        }
    }

    /// Every part once, one pass per loop: the same counts, a fraction of the time.
    pub fn light() -> Self {
        Self { reps: 1, passes: 1, persistence_reps: 1, small_reps: 1, candidate_reps: 1, ..Self::full() }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::full()
    }
}

/// Runs every part of size `n` but the randomness part, in the workload's order, and returns
/// the size's JSON object (`n`, `capture`, `recall`, `recall_associated`, `graph_spread`,
/// `sleep`, `persistence_before_sleep`, `persistence_after_sleep`, `rss`, `atl`,
/// `cross_layer`, `nac`, and `skipped` when the capture budget stopped the episodic parts).
/// Progress goes to standard error.
pub fn run_size(n: usize, opts: &Options) -> Value {
    assert!(n >= 10, "the workload needs at least 10 episodes (one concept)");
    let mut out = serde_json::Map::new();
    out.insert("n".into(), n.into());
    episodic::run(n, opts, &mut out);
    let (atl_json, concept_ids) = semantic::run(n, opts);
    out.insert("atl".into(), atl_json);
    out.insert("cross_layer".into(), others::cross_layer(n, &concept_ids, opts));
    out.insert("nac".into(), others::causal(n, opts));
    Value::Object(out)
}

/// The counts of one size's object (and of part i) that follow from behaviour alone, by
/// dotted key (`capture.associations_formed`, `ips.pattern_types.CYCLIC`, …). Keys whose
/// part did not run are left out.
pub fn counts(size: &Value, ips: &Value) -> BTreeMap<String, Value> {
    const SIZE_KEYS: &[&str] = &[
        "capture.associations_formed",
        "capture.graph_directed_edges",
        "capture.graph_nodes",
        "capture.long_term_at_capture",
        "capture.index_keys",
        "recall.by_goal.mean_result_size",
        "recall.by_tool_success.mean_result_size",
        "recall.by_object.mean_result_size",
        "recall_associated.mean_result_size",
        "graph_spread.mean_result_size",
        "sleep.promoted",
        "sleep.compressed",
        "sleep.removed",
        "sleep.preserved",
        "sleep.identical_counts_across_reps",
        "persistence_before_sleep.records_loaded",
        "persistence_after_sleep.records",
        "persistence_after_sleep.full_records",
        "persistence_after_sleep.compressed_records",
        "atl.concepts",
        "atl.relationships_defined",
        "atl.graph_directed_edges",
        "atl.recall_associated.mean_result_size",
        "atl.consolidate_result.removed",
        "atl.consolidate_result.compressed",
        "cross_layer.edges",
        "cross_layer.cross_layer_activation_depth3.mean_result_size",
        "cross_layer.cross_layer_activation_as_original.mean_result_size",
        "cross_layer.remove_record_mean_edges_removed",
        "nac.observations",
        "nac.links",
        "nac.promotion_candidates",
    ];
    const IPS_KEYS: &[&str] = &[
        "is_random_count",
        "pattern_types.RANDOM",
        "pattern_types.TRENDING",
        "pattern_types.CYCLIC",
        "pattern_types.CLUSTERING",
    ];
    let mut out = BTreeMap::new();
    for key in SIZE_KEYS {
        if let Some(v) = lookup(size, key) {
            out.insert((*key).to_owned(), v.clone());
        }
    }
    for key in IPS_KEYS {
        if let Some(v) = lookup(ips, key) {
            out.insert(format!("ips.{key}"), v.clone());
        }
    }
    out
}

/// The value at a dotted `path` in `v` (`"atl.recall_associated.median_us"`).
pub fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Mean of `total` over `count`, rounded to three decimals as the workload's counts are.
fn mean3(total: usize, count: usize) -> f64 {
    round(total as f64 / count.max(1) as f64, 3)
}

/// `x` rounded to `digits` decimals.
fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// Peak resident set of this process in MiB (0 where it cannot be read).
fn peak_rss_mib() -> f64 {
    crate::peak_rss_kib().map_or(0.0, |k| k as f64 / 1024.0)
}
