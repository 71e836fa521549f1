//! The expected counts of the shared benchmark workload (`shared/bench/WORKLOAD.md` §6),
//! driven exactly as the workload says: parts a (capture), b (filtered recall, touching),
//! c (associative recall and raw spreading) and d (sleep), on the virtual clock.

use hippocampus::{Hippocampus, HippocampusConfig, RecallFilter};
use maxim_core::graph::ActivationParams;
use maxim_core::{ManualClock, RecordId};
use maxim_testkit::{
    EpisodeDraw, GOALS, associative_seeds, capture_time, episode_stream, object, recall_queries, tool,
};

/// What the workload's capture counts and the later parts report.
#[derive(Debug, PartialEq)]
struct CaptureCounts {
    associations: u64,
    directed_edges: usize,
    nodes: usize,
    long_term: u64,
    index_keys: usize,
}

/// A fresh store of capacity 2N that captured the first `n` episodes.
fn captured(n: usize) -> (ManualClock, Hippocampus, Vec<RecordId>) {
    let clock = ManualClock::new(capture_time(0));
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_nodes = 2 * n;
        c
    };
    let mut hippo =
        Hippocampus::builder().config(config).clock(clock.shared()).id_seed(1).build().expect("config");
    let ids = episode_stream(n)
        .iter()
        .enumerate()
        .map(|(i, e)| {
            clock.set(capture_time(i));
            hippo.capture(episode_input(e)).expect("a workload episode is valid")
        })
        .collect();
    (clock, hippo, ids)
}

fn capture_counts(h: &Hippocampus) -> CaptureCounts {
    CaptureCounts {
        associations: h.counters().edges_formed,
        directed_edges: h.associative_graph().edge_count(),
        nodes: h.associative_graph().node_count(),
        long_term: h.counters().long_term_count,
        index_keys: h.index_keys().len(),
    }
}

/// Mean result sizes of part b's three kinds, three passes each, touching as the workload does.
fn recall_means(h: &mut Hippocampus) -> [f64; 3] {
    let queries = recall_queries();
    let mut totals = [0usize; 3];
    for _pass in 0..3 {
        for q in &queries {
            totals[0] += h.recall_touching(&RecallFilter::new().goal(GOALS[q.goal].as_str()), 10).len();
        }
        for q in &queries {
            totals[1] +=
                h.recall_touching(&RecallFilter::new().tool(tool(q.tool)).success(q.success), 10).len();
        }
        for q in &queries {
            totals[2] += h.recall_touching(&RecallFilter::new().object(object(q.object)), 10).len();
        }
    }
    totals.map(|t| t as f64 / 3000.0)
}

/// Mean result sizes of part c: `recall_associated` and the raw spread (seed included).
fn associative_means(h: &Hippocampus, ids: &[RecordId]) -> (f64, f64) {
    let seeds = associative_seeds(ids.len());
    let params = ActivationParams::new(0.5, 0.05, 3).expect("params");
    let (mut recalled, mut spread) = (0usize, 0usize);
    for _pass in 0..3 {
        for &x in &seeds {
            recalled += h.recall_associated(&[ids[x]], 10).len();
            spread += h.associative_graph().spread(&[ids[x]], &params).len();
        }
    }
    (recalled as f64 / 3000.0, spread as f64 / 3000.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 5e-4
}

fn check_size(n: usize, capture: &CaptureCounts, recall: [f64; 3], assoc: (f64, f64), sleep: [usize; 4]) {
    let (clock, mut store1, ids) = captured(n);
    assert_eq!(&capture_counts(&store1), capture, "part a at N = {n}");
    clock.set(capture_time(n - 1));
    let got = recall_means(&mut store1);
    assert!(
        got.iter().zip(recall).all(|(g, e)| close(*g, e)),
        "part b at N = {n}: {got:?}, expected {recall:?}"
    );
    let got = associative_means(&store1, &ids);
    assert!(close(got.0, assoc.0) && close(got.1, assoc.1), "part c at N = {n}: {got:?}, expected {assoc:?}");
    assert!(store1.check_consistency().is_consistent());

    let (clock, mut store2, _) = captured(n);
    clock.set(capture_time(n - 1) + std::time::Duration::from_secs(432_000));
    let r = store2.sleep();
    assert_eq!([r.promoted, r.compressed, r.removed, r.preserved], sleep, "part d at N = {n}");
    let compressed = store2.iter().filter(|e| e.is_compressed()).count();
    assert_eq!((store2.len(), compressed), (sleep[1] + sleep[3], sleep[1]));
    assert!(store2.check_consistency().is_consistent());
    reloads_the_same(&store2, &clock);
}

/// A snapshot of `h` loads into a store that encodes to the same bytes, is consistent and
/// ranks keyword recall as `h` does (at N = 10^4 the load builds its two indexes side by
/// side).
fn reloads_the_same(h: &Hippocampus, clock: &ManualClock) {
    let bytes = h.to_snapshot_bytes().expect("encode");
    let mut loaded =
        Hippocampus::builder().config(h.config().clone()).clock(clock.shared()).build().expect("config");
    loaded.load_from_bytes("workload.snap", &bytes).expect("its own snapshot");
    assert_eq!(loaded.to_snapshot_bytes().expect("encode"), bytes);
    assert!(loaded.check_consistency().is_consistent());
    for q in ["grab mug tool_03 succeeded", "obj_017 failed", "open door"] {
        let filter = RecallFilter::new().query(q);
        let ranked = |h: &Hippocampus| h.recall(&filter, 20).iter().map(|e| e.id()).collect::<Vec<_>>();
        assert_eq!(ranked(&loaded), ranked(h), "query {q}");
        assert!(!ranked(h).is_empty(), "query {q}");
    }
}

#[test]
fn workload_counts_at_1000() {
    check_size(
        1000,
        &CaptureCounts {
            associations: 4009,
            directed_edges: 8018,
            nodes: 1000,
            long_term: 112,
            index_keys: 273,
        },
        [10.0, 9.967, 8.632],
        (9.946, 58.842),
        [100, 307, 114, 579],
    );
}

#[test]
fn workload_counts_at_10000() {
    check_size(
        10_000,
        &CaptureCounts {
            associations: 49_007,
            directed_edges: 98_014,
            nodes: 10_000,
            long_term: 1025,
            index_keys: 273,
        },
        [10.0, 10.0, 10.0],
        (9.996, 79.585),
        [100, 1048, 2693, 6259],
    );
}

/// Part a's capture input for one drawn episode (as the benchmarks' `episode_input`): its
/// objects, salience and novelty; the goal as active goal and as the intent's `goal`; the
/// tool; the outcome.
fn episode_input(e: &EpisodeDraw) -> hippocampus::NewEpisode {
    let mut n = hippocampus::NewEpisode::default();
    n.perception.detected_objects = e.objects.iter().map(|o| o.as_str().into()).collect();
    n.perception.salience = e.salience;
    n.perception.novelty = e.novelty;
    n.context.active_goal = Some(e.goal_text().into());
    n.decision.intent.insert("goal", maxim_core::Value::from(e.goal_text()));
    n.action.tool_name = e.tool.as_str().into();
    n.outcome.success = Some(e.success);
    n
}
