//! The workload's figures as a Markdown table, alone or set beside another implementation's
//! output (the Python original's `pymaxim-results.json`) with the speed-up per figure and the
//! worst one.
//!
//! ```
//! use maxim_benches::workload::report::{compare, table};
//! let ours = serde_json::json!({"sizes": {"1000": {"capture": {"us_per_capture_median": 2.0}}}});
//! let theirs = serde_json::json!({"sizes": {"1000": {"capture": {"us_per_capture_median": 300.0}}}});
//! assert!(table(&ours).contains("| capture loop, per capture | µs | 2.00 |"));
//! let c = compare(&ours, &theirs);
//! assert!(c.markdown.contains("| 150x |"));
//! assert_eq!(c.worst.unwrap().speedup, 150.0);
//! ```

use std::fmt::Write as _;

use serde_json::Value;

use super::lookup;

/// Where a figure comes from in one implementation's output.
#[derive(Debug, Clone, Copy)]
enum Get {
    /// A dotted path in the size object (or in `ips` for the randomness part).
    Path(&'static str),
    /// The ATL build, C creates + 5C relationships, in seconds: from the two block rates.
    AtlBuild,
}

/// One figure of the table.
#[derive(Debug, Clone, Copy)]
struct Figure {
    label: &'static str,
    unit: &'static str,
    /// Whether a smaller value is better (times, sizes) or a larger one (rates).
    lower_is_better: bool,
    ours: Get,
    theirs: Get,
    /// Part i, reported once, not per size.
    ips: bool,
    /// Set when the two implementations do different work, so no ratio is quoted.
    different: Option<&'static str>,
    /// A note on the comparison (quoted with the ratio).
    note: Option<&'static str>,
}

const fn fig(label: &'static str, unit: &'static str, lower_is_better: bool, path: &'static str) -> Figure {
    Figure {
        label,
        unit,
        lower_is_better,
        ours: Get::Path(path),
        theirs: Get::Path(path),
        ips: false,
        different: None,
        note: None,
    }
}

const FIGURES: &[Figure] = &[
    fig("capture loop, per capture", "µs", true, "capture.us_per_capture_median"),
    fig("recall by goal", "µs", true, "recall.by_goal.median_us"),
    fig("recall by tool + success", "µs", true, "recall.by_tool_success.median_us"),
    fig("recall by object", "µs", true, "recall.by_object.median_us"),
    fig("recall_associated", "µs", true, "recall_associated.median_us"),
    fig("graph spread", "µs", true, "graph_spread.median_us"),
    fig("sleep (5 days on)", "s", true, "sleep.seconds_median"),
    fig("save before sleep", "s", true, "persistence_before_sleep.save_s_median"),
    Figure {
        ours: Get::Path("persistence_before_sleep.save_without_fsync_and_backup_s_median"),
        theirs: Get::Path("persistence_before_sleep.save_s_median"),
        note: Some("maxim without its fsyncs and backup"),
        ..fig("save before sleep, no fsync/backup", "s", true, "")
    },
    fig("load before sleep", "s", true, "persistence_before_sleep.load_s_median"),
    fig("save after sleep", "s", true, "persistence_after_sleep.save_s_median"),
    Figure {
        ours: Get::Path("persistence_after_sleep.save_without_fsync_and_backup_s_median"),
        theirs: Get::Path("persistence_after_sleep.save_s_median"),
        note: Some("maxim without its fsyncs and backup"),
        ..fig("save after sleep, no fsync/backup", "s", true, "")
    },
    fig("load after sleep", "s", true, "persistence_after_sleep.load_s_median"),
    fig("snapshot file", "bytes", true, "persistence_before_sleep.file_bytes"),
    fig("RSS growth per 1,000 episodes", "KiB", true, "rss.rss_growth_per_1000_episodes_kib"),
    Figure {
        different: Some("maxim also checks name similarity"),
        ..fig("ATL find_or_create, new name", "ops/s", false, "atl.find_or_create_new_ops_per_s")
    },
    Figure {
        ours: Get::Path("atl.create_without_name_lookup_ops_per_s"),
        theirs: Get::Path("atl.find_or_create_new_ops_per_s"),
        note: Some("maxim: create without any name lookup"),
        ..fig("ATL create, no similarity check", "ops/s", false, "")
    },
    fig("ATL find_or_create, known name", "ops/s", false, "atl.find_or_create_existing_ops_per_s"),
    fig("ATL define_relationship", "ops/s", false, "atl.define_relationship_ops_per_s"),
    Figure {
        ours: Get::AtlBuild,
        theirs: Get::AtlBuild,
        note: Some("maxim's creates check name similarity"),
        ..fig("ATL build (C creates + 5C relationships)", "s", true, "")
    },
    fig("ATL recall_associated", "µs", true, "atl.recall_associated.median_us"),
    fig("ATL consolidate", "ms", true, "atl.consolidate_ms_median"),
    fig("cross-layer add_edge", "ops/s", false, "cross_layer.add_edge_ops_per_s"),
    Figure {
        different: Some("the original returns one hop, outgoing only; maxim 3 hops both ways"),
        ..fig(
            "cross-layer activation, depth 3",
            "µs",
            true,
            "cross_layer.cross_layer_activation_depth3.median_us",
        )
    },
    Figure {
        ours: Get::Path("cross_layer.cross_layer_activation_as_original.median_us"),
        theirs: Get::Path("cross_layer.cross_layer_activation_depth3.median_us"),
        note: Some("maxim doing the original's work (one hop, outgoing)"),
        ..fig("cross-layer activation, original's work", "µs", true, "")
    },
    fig("cross-layer remove_record", "µs", true, "cross_layer.remove_record.median_us"),
    fig("NAc observe", "µs", true, "nac.us_per_observe_median"),
    fig("NAc get_promotion_candidates", "ms", true, "nac.get_promotion_candidates_ms_median"),
    Figure { ips: true, ..fig("IPS assess_randomness (100 values)", "µs", true, "median_us") },
    Figure {
        ips: true,
        ..fig("IPS pass over 10^4 series, per series", "µs", true, "us_per_series_pass_median")
    },
];

fn get(output: &Value, size: &str, figure: &Figure, which: Get) -> Option<f64> {
    let scope = if figure.ips { output.get("ips")? } else { output.get("sizes")?.get(size)? };
    match which {
        Get::Path(p) => lookup(scope, p)?.as_f64(),
        Get::AtlBuild => {
            let atl = scope.get("atl")?;
            let c = atl.get("concepts")?.as_f64()?;
            let new = atl.get("find_or_create_new_ops_per_s")?.as_f64()?;
            let define = atl.get("define_relationship_ops_per_s")?.as_f64()?;
            Some(c / new + 5.0 * c / define)
        }
    }
}

/// The sizes of an output, smallest first.
fn sizes(output: &Value) -> Vec<String> {
    let mut sizes: Vec<String> = output
        .get("sizes")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    sizes.sort_by_key(|s| s.parse::<u64>().unwrap_or(u64::MAX));
    sizes
}

/// A figure with three significant digits (whole numbers from 1,000 up).
fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{x:.digits$}")
    }
}

/// A speed-up: whole from 10 up, one decimal below.
fn times(x: f64) -> String {
    if x >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// One row per figure, one column per size, of `output` (the runner's JSON).
pub fn table(output: &Value) -> String {
    let sizes = sizes(output);
    let mut s = String::from("| figure | unit |");
    for n in &sizes {
        let _ = write!(s, " N = {n} |");
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---|".repeat(sizes.len()));
    s.push('\n');
    for f in FIGURES {
        let _ = write!(s, "| {} | {} |", f.label, f.unit);
        if f.ips {
            let v = get(output, "", f, f.ours).map_or_else(|| "—".into(), num);
            let _ = write!(s, " {v} (once) |");
            s.push_str(&" |".repeat(sizes.len().saturating_sub(1)));
        } else {
            for n in &sizes {
                let v = get(output, n, f, f.ours).map_or_else(|| "—".into(), num);
                let _ = write!(s, " {v} |");
            }
        }
        s.push('\n');
    }
    s
}

/// The lowest speed-up of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Worst {
    /// The figure's label.
    pub figure: String,
    /// The size (`"—"` for part i).
    pub size: String,
    /// How many times faster (or smaller) maxim's figure is.
    pub speedup: f64,
}

/// A comparison of two outputs.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The Markdown table: figure, N, original, maxim, speed-up (or why there is none).
    pub markdown: String,
    /// The lowest speed-up quoted, if any.
    pub worst: Option<Worst>,
}

/// `ours` beside `theirs`, figure by figure, with the speed-up (`theirs / ours` for times
/// and sizes, `ours / theirs` for rates), "different work" where the two do not do the same
/// work, and the worst speed-up at the end.
pub fn compare(ours: &Value, theirs: &Value) -> Comparison {
    let mut sizes = sizes(ours);
    sizes.retain(|n| theirs.get("sizes").and_then(|s| s.get(n)).is_some());
    let mut s = String::from("| figure | N | original | maxim | speed-up |\n|---|---|---|---|---|\n");
    let mut worst: Option<Worst> = None;
    for f in FIGURES {
        let rows: Vec<&str> = if f.ips { vec!["—"] } else { sizes.iter().map(String::as_str).collect() };
        for n in rows {
            let (Some(o), Some(t)) = (get(ours, n, f, f.ours), get(theirs, n, f, f.theirs)) else {
                continue;
            };
            let label = match f.note {
                Some(note) => format!("{} ({note})", f.label),
                None => f.label.to_owned(),
            };
            let ratio = if f.lower_is_better { t / o } else { o / t };
            let speedup = match f.different {
                Some(why) => format!("different work: {why}"),
                None if ratio.is_finite() => {
                    if worst.as_ref().is_none_or(|w| ratio < w.speedup) {
                        worst = Some(Worst { figure: label.clone(), size: n.to_owned(), speedup: ratio });
                    }
                    format!("{}x", times(ratio))
                }
                None => "—".into(),
            };
            let _ =
                writeln!(s, "| {label} | {n} | {} {u} | {} {u} | {speedup} |", num(t), num(o), u = f.unit);
        }
    }
    if let Some(w) = &worst {
        let _ = writeln!(s, "\nWorst speed-up: {}x, {} at N = {}.", times(w.speedup), w.figure, w.size);
    }
    Comparison { markdown: s, worst }
}
