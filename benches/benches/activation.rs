//! Spreading activation (`maxim_core::graph`), sequential and parallel, on `Graph` and
//! `CsrGraph`.
//!
//! Synthetic graphs of 10^4, 10^5 and 10^6 nodes, each node with 10 outgoing ASSOCIATES edges
//! to uniform random targets (SplitMix64 seed 42; duplicates merge) of weight uniform in
//! `[0.5, 1.0)`; depth 3, decay 0.5, threshold 0.05 (the workload's episodic defaults).
//!
//! - `activation/one_seed/{graph,csr}_{sequential,parallel}/N`: one call from one seed, the
//!   seeds cycling through 256 random nodes (target at 10^6 nodes: < 1 ms, with fewer than
//!   10^4 nodes touched);
//! - `activation/one_seed_threshold_0.1/...`: the same with threshold 0.1 (the ATL's), which
//!   touches about 100 nodes, the size of a layer's `recall_associated`;
//! - `activation/large_frontier/{graph,csr}_{sequential,parallel}/1000000`: one call from
//!   20,000 seeds on the 10^6 graph, whose first level alone exceeds 10^5 nodes (target:
//!   parallel >= 1.5x faster on 2 cores).
//!
//! - `graph_upkeep/{remove_nodes,remove_node_each,decay_edges,encode,decode}/N`: on an
//!   episodic-shaped graph (node `i` linked both ways to five random earlier nodes), removing
//!   27% of the nodes in one call and one by one (newest first), decaying every edge, and the
//!   snapshot codec both ways; removal and decay run on a fresh clone each time (not timed).
//!
//! Graph construction is not timed. The mean number of nodes activated per call and the
//! size of the first frontier are printed to stderr once.
//!
//! Run with `cargo bench -p maxim-benches --bench activation`.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_core::graph::{ActivationParams, CsrGraph, EdgeKind, Graph};
use maxim_core::{RecordId, SplitMix64, codec};

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
const OUT_DEGREE: usize = 10;
const N_SEEDS: usize = 256;
const FRONTIER_SEEDS: usize = 20_000;

fn id(i: usize) -> RecordId {
    RecordId::from_u128(i as u128 + 1)
}

fn params(threshold: f64) -> ActivationParams {
    ActivationParams::new(0.5, threshold, 3).expect("valid parameters")
}

/// `n` nodes, each with `OUT_DEGREE` ASSOCIATES edges of weight in `[0.5, 1.0)`.
fn build(n: usize) -> Graph {
    let mut rng = SplitMix64::new(42);
    let mut g = Graph::with_capacity(n, n * OUT_DEGREE);
    for s in 0..n {
        g.add_node(id(s)).expect("room for the node");
    }
    for s in 0..n {
        for _ in 0..OUT_DEGREE {
            let t = rng.below(n as u64) as usize;
            let w = 0.5 + 0.5 * rng.uniform();
            g.add_edge(id(s), id(t), EdgeKind::Associates, w, None).expect("a valid edge");
        }
    }
    g
}

fn seeds(n: usize, count: usize, stream: u64) -> Vec<RecordId> {
    let mut rng = SplitMix64::new(stream);
    (0..count).map(|_| id(rng.below(n as u64) as usize)).collect()
}

fn one_seed(c: &mut Criterion) {
    for n in SIZES {
        let g = build(n);
        let csr = CsrGraph::from_graph(&g);
        let starts = seeds(n, N_SEEDS, 7);
        for (group, threshold) in [("activation/one_seed", 0.05), ("activation/one_seed_threshold_0.1", 0.1)]
        {
            let p = params(threshold);
            let touched: usize = starts.iter().map(|&s| g.spread(&[s], &p).len()).sum();
            eprintln!(
                "n = {n}, threshold {threshold}: {} edges, {:.1} nodes activated per call",
                g.edge_count(),
                touched as f64 / N_SEEDS as f64
            );
            let mut group = c.benchmark_group(group);
            group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
            macro_rules! bench {
                ($name:literal, $call:expr) => {
                    group.bench_function(BenchmarkId::new($name, n), |b| {
                        let mut i = 0;
                        b.iter(|| {
                            let s = starts[i % N_SEEDS];
                            i += 1;
                            black_box($call(s))
                        })
                    });
                };
            }
            bench!("graph_sequential", |s| g.spread(&[s], &p));
            bench!("graph_parallel", |s| g.spread_parallel(&[s], &p));
            bench!("csr_sequential", |s| csr.spread(&[s], &p));
            bench!("csr_parallel", |s| csr.spread_parallel(&[s], &p));
            group.finish();
        }
    }
}

fn large_frontier(c: &mut Criterion) {
    let p = params(0.05);
    let n = 1_000_000;
    let g = build(n);
    let csr = CsrGraph::from_graph(&g);
    let starts = seeds(n, FRONTIER_SEEDS, 9);
    let first_level: HashSet<RecordId> =
        starts.iter().flat_map(|&s| g.associated(s, &[EdgeKind::Associates])).map(|(t, _)| t).collect();
    eprintln!(
        "large frontier: {} seeds, first frontier {} nodes, {} nodes activated",
        starts.len(),
        first_level.len(),
        g.spread(&starts, &p).len()
    );
    let mut group = c.benchmark_group("activation/large_frontier");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(8));
    group.bench_function(BenchmarkId::new("graph_sequential", n), |b| {
        b.iter(|| black_box(g.spread(&starts, &p)));
    });
    group.bench_function(BenchmarkId::new("graph_parallel", n), |b| {
        b.iter(|| black_box(g.spread_parallel(&starts, &p)));
    });
    group.bench_function(BenchmarkId::new("csr_sequential", n), |b| {
        b.iter(|| black_box(csr.spread(&starts, &p)));
    });
    group.bench_function(BenchmarkId::new("csr_parallel", n), |b| {
        b.iter(|| black_box(csr.spread_parallel(&starts, &p)));
    });
    group.finish();
}

/// A graph grown as the episodic layer grows its associations: node `i` links both ways to
/// `ASSOCIATIONS` random earlier nodes (weights in `[0.5, 1.0)`), about ten directed edges a
/// node.
fn build_episodic(n: usize) -> Graph {
    let mut rng = SplitMix64::new(43);
    let mut g = Graph::with_capacity(n, n * 2 * ASSOCIATIONS);
    for i in 0..n {
        g.add_node(id(i)).expect("room for the node");
        for _ in 0..ASSOCIATIONS.min(i) {
            let j = rng.below(i as u64) as usize;
            let w = 0.5 + 0.5 * rng.uniform();
            g.add_bidirectional(id(i), id(j), EdgeKind::Associates, w).expect("a valid edge");
        }
    }
    g
}

const ASSOCIATIONS: usize = 5;

/// Removing 27% of the nodes of an episodic graph (what a sleep over the workload removes),
/// in one call and node by node, and decaying every edge; on a fresh clone each time (the
/// clone is not timed).
fn upkeep(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph_upkeep");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    for n in [10_000, 100_000] {
        let g = build_episodic(n);
        let mut rng = SplitMix64::new(44);
        let doomed: Vec<RecordId> = (0..n).filter(|_| rng.below(100) < 27).map(id).collect();
        eprintln!("episodic n = {n}: {} edges, removing {} nodes", g.edge_count(), doomed.len());
        group.bench_function(BenchmarkId::new("remove_nodes", n), |b| {
            b.iter_batched(
                || g.clone(),
                |mut h| {
                    h.remove_nodes(&doomed);
                    h
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_function(BenchmarkId::new("remove_node_each", n), |b| {
            b.iter_batched(
                || g.clone(),
                |mut h| {
                    for &d in doomed.iter().rev() {
                        h.remove_node(d);
                    }
                    h
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_function(BenchmarkId::new("decay_edges", n), |b| {
            b.iter_batched(
                || g.clone(),
                |mut h| {
                    h.decay_edges(0.9, &[EdgeKind::Associates], 0.0, false).expect("valid decay");
                    h
                },
                BatchSize::LargeInput,
            );
        });
        let bytes = codec::encode("graph", &g).expect("encode");
        group.bench_function(BenchmarkId::new("encode", n), |b| {
            b.iter(|| codec::encode("graph", &g).expect("encode").len());
        });
        group.bench_function(BenchmarkId::new("decode", n), |b| {
            b.iter(|| codec::decode::<Graph>("graph.snap", "graph", &bytes).expect("decode"));
        });
    }
    group.finish();
}

criterion_group!(benches, one_seed, large_frontier, upkeep);
criterion_main!(benches);
