//! The episodic parts: a (capture), b (filtered recall), c (associative recall and the raw
//! spread), d (sleep), e (persistence before and after sleep) and j (memory), on the
//! virtual clock.

use std::path::Path;
use std::time::{Duration, Instant};

use hippocampus::{Hippocampus, HippocampusConfig, RecallFilter};
use maxim_core::graph::ActivationParams;
use maxim_core::{ManualClock, RecordId};
use serde_json::{Map, Value, json};

use super::stats::{Calls, block, median};
use super::{Options, mean3, peak_rss_mib, round};
use crate::{
    EpisodeDraw, EpisodeNames, GOALS, associative_seeds, capture_time, episode_input_named, episode_names,
    episode_stream, object, recall_queries, tool,
};

/// Five days, the clock's advance before sleep.
const SLEEP_ADVANCE: Duration = Duration::from_secs(432_000);

/// A fresh store of capacity `2n` on `clock`, defaults otherwise.
fn store(n: usize, clock: &ManualClock) -> Hippocampus {
    let mut config = HippocampusConfig::default();
    config.max_nodes = 2 * n;
    Hippocampus::builder().config(config).clock(clock.shared()).id_seed(1).build().expect("a valid config")
}

/// How a capture loop ended.
struct Captured {
    hippo: Hippocampus,
    ids: Vec<RecordId>,
    seconds: f64,
    /// Seconds at each 5,000th capture, for the rate near the end of an unfinished loop.
    marks: Vec<(usize, f64)>,
}

impl Captured {
    fn finished(&self, n: usize) -> bool {
        self.ids.len() == n
    }
}

/// Part a's capture loop into a fresh store, timed as one block (building each episode's
/// input included, its names shared from `names`), stopping once `budget` has passed.
fn capture(
    n: usize,
    draws: &[EpisodeDraw],
    names: &[EpisodeNames],
    clock: &ManualClock,
    budget: Duration,
) -> Captured {
    let mut hippo = store(n, clock);
    let mut ids = Vec::with_capacity(n);
    let mut marks = Vec::new();
    let start = Instant::now();
    for (i, (e, names)) in draws.iter().zip(names).enumerate() {
        clock.set(capture_time(i));
        ids.push(hippo.capture(episode_input_named(e, names)).expect("a workload episode is valid"));
        if i % 5000 == 4999 {
            let t = start.elapsed();
            marks.push((i + 1, t.as_secs_f64()));
            if t > budget {
                break;
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    Captured { hippo, ids, seconds, marks }
}

/// Runs a, j, b, c, e1, then the sleep stores (a, d, e2), into `out`.
pub(super) fn run(n: usize, opts: &Options, out: &mut Map<String, Value>) {
    let draws = episode_stream(n);
    let names = episode_names(&draws);
    let rss_before = peak_rss_mib();
    let clock = ManualClock::new(capture_time(0));
    eprintln!("workload n={n}: part a, query store");
    let first = capture(n, &draws, &names, &clock, opts.capture_budget);
    let rss_after = peak_rss_mib();
    let mut seconds = vec![first.seconds];

    if !first.finished(n) {
        let captured = first.ids.len();
        let tail = match first.marks.as_slice() {
            [.., (a, ta), (b, tb)] => (b - a) as f64 / (tb - ta),
            _ => captured as f64 / first.seconds,
        };
        out.insert(
            "capture".into(),
            json!({
                "status": "not finished",
                "captured": captured,
                "seconds": round(first.seconds, 4),
                "ops_per_s": round(captured as f64 / first.seconds, 1),
                "ops_per_s_last_5000": round(tail, 1),
            }),
        );
        out.insert(
            "skipped".into(),
            json!([
                "recall",
                "recall_associated",
                "graph_spread",
                "sleep",
                "persistence_before_sleep",
                "persistence_after_sleep",
                "rss"
            ]),
        );
        return;
    }
    let Captured { hippo: mut query, ids, .. } = first;
    let capture_counts = json!({
        "associations_formed": query.counters().edges_formed,
        "graph_directed_edges": query.associative_graph().edge_count(),
        "graph_nodes": query.associative_graph().node_count(),
        "long_term_at_capture": query.counters().long_term_count,
        "index_keys": query.index_keys().len(),
    });
    out.insert(
        "rss".into(),
        json!({
            "peak_rss_before_capture_mib": round(rss_before, 1),
            "peak_rss_after_capture_mib": round(rss_after, 1),
            "rss_growth_per_1000_episodes_kib": round((rss_after - rss_before) * 1024.0 / (n as f64 / 1000.0), 1),
        }),
    );

    eprintln!("workload n={n}: parts b, c");
    clock.set(capture_time(n - 1));
    out.insert("recall".into(), filtered_recall(&mut query, opts));
    let (assoc, spread) = associative(&query, &ids, opts);
    out.insert("recall_associated".into(), assoc);
    out.insert("graph_spread".into(), spread);

    eprintln!("workload n={n}: part e1");
    let dir = tempfile::tempdir().expect("a temporary directory");
    out.insert("persistence_before_sleep".into(), persistence(&query, n, &clock, dir.path(), opts, true));
    drop(query);

    let mut sleeps = Vec::new();
    let mut reports = Vec::new();
    for rep in 0..opts.reps {
        eprintln!("workload n={n}: parts a and d, sleep store {}", rep + 2);
        let Captured { hippo: mut sleeper, seconds: s, .. } =
            capture(n, &draws, &names, &clock, Duration::MAX);
        seconds.push(s);
        clock.set(capture_time(n - 1) + SLEEP_ADVANCE);
        let mut report = None;
        sleeps.push(block(|| report = Some(sleeper.sleep())));
        reports.push(report.expect("sleep ran"));
        if rep == 0 {
            eprintln!("workload n={n}: part e2");
            out.insert(
                "persistence_after_sleep".into(),
                persistence(&sleeper, n, &clock, dir.path(), opts, false),
            );
        }
    }
    let median_s = median(&seconds);
    let mut capture = json!({
        "status": "ok",
        "reps": seconds.len(),
        "seconds": seconds.iter().map(|s| round(*s, 4)).collect::<Vec<_>>(),
        "seconds_median": round(median_s, 4),
        "ops_per_s_median": round(n as f64 / median_s, 1),
        "us_per_capture_median": round(median_s * 1e6 / n as f64, 3),
    });
    for (k, v) in capture_counts.as_object().expect("an object") {
        capture[k] = v.clone();
    }
    out.insert("capture".into(), capture);
    let r = reports[0];
    out.insert(
        "sleep".into(),
        json!({
            "clock_advance_s": SLEEP_ADVANCE.as_secs_f64(),
            "reps": sleeps.len(),
            "seconds": sleeps.iter().map(|s| round(*s, 5)).collect::<Vec<_>>(),
            "seconds_median": round(median(&sleeps), 5),
            "compressed": r.compressed,
            "removed": r.removed,
            "preserved": r.preserved,
            "promoted": r.promoted,
            "identical_counts_across_reps": reports.iter().all(|x| *x == r),
        }),
    );
}

/// Part b: the three kinds of filtered recall, touching, limit 10, in passes.
fn filtered_recall(hippo: &mut Hippocampus, opts: &Options) -> Value {
    let queries = recall_queries();
    let by_goal: Vec<RecallFilter> =
        queries.iter().map(|q| RecallFilter::new().goal(GOALS[q.goal].as_str())).collect();
    let by_tool: Vec<RecallFilter> =
        queries.iter().map(|q| RecallFilter::new().tool(tool(q.tool)).success(q.success)).collect();
    let by_object: Vec<RecallFilter> =
        queries.iter().map(|q| RecallFilter::new().object(object(q.object))).collect();
    let mut calls = [Calls::new(), Calls::new(), Calls::new()];
    for _ in 0..opts.passes {
        for (filters, calls) in [&by_goal, &by_tool, &by_object].into_iter().zip(calls.iter_mut()) {
            calls.pass();
            for f in filters {
                calls.time(|| hippo.recall_touching(f, 10).len());
            }
        }
    }
    json!({
        "by_goal": calls[0].to_json(true),
        "by_tool_success": calls[1].to_json(true),
        "by_object": calls[2].to_json(true),
    })
}

/// Part c: `recall_associated` from each seed, then the raw spread over the episodic graph.
fn associative(hippo: &Hippocampus, ids: &[RecordId], opts: &Options) -> (Value, Value) {
    let seeds: Vec<RecordId> = associative_seeds(ids.len()).into_iter().map(|x| ids[x]).collect();
    let mut recalled = Calls::new();
    for _ in 0..opts.passes {
        recalled.pass();
        for s in &seeds {
            recalled.time(|| hippo.recall_associated(std::slice::from_ref(s), 10).len());
        }
    }
    let params = ActivationParams::new(0.5, 0.05, 3).expect("valid parameters");
    let graph = hippo.associative_graph();
    let mut spread = Calls::new();
    for _ in 0..opts.passes {
        spread.pass();
        for s in &seeds {
            spread.time(|| graph.spread(std::slice::from_ref(s), &params).len());
        }
    }
    let mut spread = spread.to_json(true);
    spread["note"] = "maxim_core Graph::spread on the episodic graph, seeds of (c), threshold 0.05, size includes the seed".into();
    (recalled.to_json(true), spread)
}

/// Part e: saves of `hippo` and loads into fresh stores, timed one by one; also the save
/// without the snapshot's fsyncs and backup (encode + plain write).
fn persistence(
    hippo: &Hippocampus,
    n: usize,
    clock: &ManualClock,
    dir: &Path,
    opts: &Options,
    before_sleep: bool,
) -> Value {
    let name = if before_sleep { "before" } else { "after" };
    let path = dir.join(format!("hippocampus-{name}.snap"));
    let plain = dir.join(format!("hippocampus-{name}-plain.snap"));
    let saves: Vec<f64> = (0..opts.persistence_reps)
        .map(|_| block(|| hippo.save(&path).expect("a writable directory")))
        .collect();
    let plain_saves: Vec<f64> = (0..opts.persistence_reps)
        .map(|_| {
            block(|| {
                let bytes = hippo.to_snapshot_bytes().expect("encode");
                std::fs::write(&plain, bytes).expect("a writable directory");
            })
        })
        .collect();
    let mut loaded = 0;
    let loads: Vec<f64> = (0..opts.persistence_reps)
        .map(|_| {
            let mut fresh = store(n, clock);
            let s = block(|| fresh.load(&path).expect("the file just saved"));
            loaded = fresh.len();
            s
        })
        .collect();
    let file_bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let (mut full, mut full_bytes, mut compressed, mut compressed_bytes) = (0usize, 0usize, 0usize, 0usize);
    for e in hippo.iter() {
        let len = serde_json::to_string(e).map_or(0, |s| s.len());
        if e.is_compressed() {
            compressed += 1;
            compressed_bytes += len;
        } else {
            full += 1;
            full_bytes += len;
        }
    }
    let mut v = json!({
        "records": hippo.len(),
        "save_s_median": round(median(&saves), 5),
        "load_s_median": round(median(&loads), 5),
        "save_s": saves.iter().map(|s| round(*s, 5)).collect::<Vec<_>>(),
        "load_s": loads.iter().map(|s| round(*s, 5)).collect::<Vec<_>>(),
        "save_without_fsync_and_backup_s_median": round(median(&plain_saves), 5),
        "file_bytes": file_bytes,
        "file_bytes_per_episode": round(file_bytes as f64 / hippo.len().max(1) as f64, 1),
        "records_loaded": loaded,
        "bytes_per_full_episode_compact_json": mean3(full_bytes, full),
        "format": "maxim snapshot (40-byte header + postcard payload: records, index, graph)",
    });
    if !before_sleep {
        v["full_records"] = full.into();
        v["compressed_records"] = compressed.into();
        v["bytes_per_compressed_episode_compact_json"] = mean3(compressed_bytes, compressed).into();
    }
    let _ = std::fs::remove_file(&plain);
    v
}
