//! The cross-layer graph (`crossgraph`): spreading activation over three large layers, and
//! the shared workload's part g (`shared/bench/WORKLOAD.md`).
//!
//! **Three layers.** Hippocampus, ATL and angular gyrus hold 10^5 records each; each layer's
//! associative graph (`maxim_core::Graph`) gives every record 4 outgoing ASSOCIATES edges to
//! random records of its layer, and the cross-layer graph holds 10^6 edges between random
//! records of two different layers, of random types, weights uniform in `[0.2, 1)` (seed 42).
//! `activation/{1,10,100}` spreads from that many random episodes with the graph's defaults
//! (decay 0.5, threshold 0.01, depth 3, every type both ways, levels of 4,096 records on
//! rayon); `activation_sequential/100` does the same without rayon. The time covers the
//! spread and the grouping by layer, not a sort of the results (`CrossActivation::ranked`
//! sorts on demand).
//!
//! **Part g.** For N = 10^4 and 10^5 episodes and C = N/10 concepts, the workload's edges:
//! episode `i` INSTANCE_OF concept `inst[i]` (1.0), concept `j` DERIVED_FROM episode `e_j`
//! (`w_j`), drawn with seed 7; episode ids are the workload's UUIDs (seed 10), concept ids
//! distinct ids of an `IdGenerator` (the workload takes part f's; the graph does not care).
//! `workload_g/activation_depth3/N`: the 1,000 workload seeds, depth 3 (the graph's defaults,
//! no layer graph: part g has none); `workload_g/add_edge/N`: a fresh graph filled with the
//! N + C edges, throughput in edges, **growth included** (the graph starts empty and grows
//! its record index and arenas as the edges come); `workload_g/add_edge_reserved/N`: the
//! same after `CrossLayerGraph::reserve(N + C, N + C)`, which is inside the timing (so the
//! figure excludes table growth, not the allocation); `workload_g/remove_record/N`:
//! `remove_record` of the workload's removal set, a fresh graph every 1,000 removals (built
//! outside the timing).
//!
//! Run with `cargo bench -p maxim-benches --bench crossgraph -- --warm-up-time 1
//! --measurement-time 3` (`docs/performance.md`, "crossgraph").

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use crossgraph::{ALL_KINDS, CrossLayerGraph, LayerGraphs};
use maxim_core::graph::{EdgeKind, Graph};
use maxim_core::{CrossEdgeKind, IdGenerator, LayerKind, LayerRecord, RecordId, SplitMix64, Timestamp};

const LAYERS: [LayerKind; 3] = [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus];
const LAYER_RECORDS: usize = 100_000;
const INTRA_OUT: usize = 4;
const CROSS_EDGES: usize = 1_000_000;

/// Three layers with their graphs, and the cross-layer graph between them.
struct Big {
    ids: [Vec<RecordId>; 3],
    graphs: [Graph; 3],
    cross: CrossLayerGraph,
}

fn big() -> Big {
    let start = Instant::now();
    let mut rng = SplitMix64::new(42);
    let ids: [Vec<RecordId>; 3] = std::array::from_fn(|l| {
        let mut id_gen = IdGenerator::seeded(l as u64);
        (0..LAYER_RECORDS).map(|i| id_gen.next_id(Timestamp::from_secs(1_700_000_000 + i as i64))).collect()
    });
    let n = LAYER_RECORDS as u64;
    let graphs: [Graph; 3] = std::array::from_fn(|l| {
        let mut g = Graph::with_capacity(LAYER_RECORDS, LAYER_RECORDS * INTRA_OUT);
        for &s in &ids[l] {
            for _ in 0..INTRA_OUT {
                let t = ids[l][rng.below(n) as usize];
                if t != s {
                    let w = 0.2 + 0.8 * rng.uniform();
                    g.add_edge(s, t, EdgeKind::Associates, w, None).expect("a valid weight");
                }
            }
        }
        g
    });
    let mut cross = CrossLayerGraph::builder().build().expect("the default settings are valid");
    cross.reserve(3 * LAYER_RECORDS, CROSS_EDGES);
    for _ in 0..CROSS_EDGES {
        let a = rng.below(3) as usize;
        let b = (a + 1 + rng.below(2) as usize) % 3;
        let from = LayerRecord::new(LAYERS[a], ids[a][rng.below(n) as usize]);
        let to = LayerRecord::new(LAYERS[b], ids[b][rng.below(n) as usize]);
        let kind = ALL_KINDS[rng.below(7) as usize];
        cross.add_edge(from, to, kind, 0.2 + 0.8 * rng.uniform()).expect("a valid edge");
    }
    println!(
        "crossgraph: 3 layers of {LAYER_RECORDS} records ({} intra-layer edges), {} cross-layer edges over {} records, built in {:?}",
        graphs.iter().map(Graph::edge_count).sum::<usize>(),
        cross.edge_count(),
        cross.record_count(),
        start.elapsed()
    );
    Big { ids, graphs, cross }
}

fn bench_three_layers(crit: &mut Criterion) {
    let big = big();
    let layers = LayerGraphs::new()
        .with(LayerKind::Hippocampus, &big.graphs[0])
        .with(LayerKind::Atl, &big.graphs[1])
        .with(LayerKind::AngularGyrus, &big.graphs[2]);
    let mut rng = SplitMix64::new(43);
    let mut group = crit.benchmark_group("crossgraph/activation");
    let mut sequential = *big.cross.params();
    sequential.parallel_min_frontier = usize::MAX;
    for k in [1, 10, 100] {
        let sets: Vec<Vec<LayerRecord>> = (0..64)
            .map(|_| {
                (0..k)
                    .map(|_| {
                        LayerRecord::new(
                            LayerKind::Hippocampus,
                            big.ids[0][rng.below(LAYER_RECORDS as u64) as usize],
                        )
                    })
                    .collect()
            })
            .collect();
        let mean = sets.iter().map(|s| big.cross.activate(s, &layers).len()).sum::<usize>() as f64 / 64.0;
        println!("crossgraph: activation from {k} seeds reaches {mean:.0} records on average");
        for set in &sets[..4] {
            assert_eq!(big.cross.activate(set, &layers), big.cross.activate_with(set, &layers, &sequential));
        }
        let mut i = 0;
        group.bench_function(BenchmarkId::from_parameter(k), |b| {
            b.iter(|| {
                i = (i + 1) % sets.len();
                big.cross.activate(black_box(&sets[i]), &layers).len()
            });
        });
        if k == 100 {
            let mut i = 0;
            group.bench_function(BenchmarkId::new("sequential", k), |b| {
                b.iter(|| {
                    i = (i + 1) % sets.len();
                    big.cross.activate_with(black_box(&sets[i]), &layers, &sequential).len()
                });
            });
        }
    }
    group.finish();
}

/// Part g's inputs for `n` episodes.
struct PartG {
    episodes: Vec<LayerRecord>,
    concepts: Vec<LayerRecord>,
    inst: Vec<usize>,
    derived: Vec<(usize, f64)>,
    seeds: Vec<usize>,
    removals: Vec<usize>,
}

fn part_g(n: usize) -> PartG {
    let c = n / 10;
    let episodes = maxim_benches::episode_ids(n)
        .into_iter()
        .map(|id| LayerRecord::new(LayerKind::Hippocampus, id))
        .collect::<Vec<_>>();
    assert_eq!(episodes[0].id.to_string(), "088712be-8a58-4fca-bbff-7c596e26ce46");
    let mut id_gen = IdGenerator::seeded(maxim_benches::seeds::SEMANTIC);
    let concepts = (0..c)
        .map(|_| {
            LayerRecord::new(LayerKind::Atl, id_gen.next_id(Timestamp::from_secs(maxim_benches::T0_SECS)))
        })
        .collect();
    let maxim_benches::CrossLayerDraws { inst, derived, seeds, removals } =
        maxim_benches::cross_layer_draws(n);
    PartG { episodes, concepts, inst, derived, seeds, removals }
}

impl PartG {
    fn fill(&self, g: &mut CrossLayerGraph) {
        for (i, &j) in self.inst.iter().enumerate() {
            g.add_edge(self.episodes[i], self.concepts[j], CrossEdgeKind::InstanceOf, 1.0)
                .expect("a valid edge");
        }
        for (j, &(e, w)) in self.derived.iter().enumerate() {
            g.add_edge(self.concepts[j], self.episodes[e], CrossEdgeKind::DerivedFrom, w)
                .expect("a valid edge");
        }
    }

    fn build(&self) -> CrossLayerGraph {
        let mut g = CrossLayerGraph::builder().build().expect("the default settings are valid");
        self.fill(&mut g);
        g
    }
}

fn bench_workload_g(crit: &mut Criterion) {
    for n in [10_000, 100_000] {
        let w = part_g(n);
        let mut group = crit.benchmark_group("crossgraph/workload_g");
        let g = w.build();
        let none = LayerGraphs::new();
        let mean =
            w.seeds.iter().map(|&s| g.activate(&[w.episodes[s]], &none).len()).sum::<usize>() as f64 / 1000.0;
        println!("crossgraph: part g at N = {n}: activation depth 3 returns {mean:.3} records on average");
        let mut i = 0;
        group.bench_function(BenchmarkId::new("activation_depth3", n), |b| {
            b.iter(|| {
                i = (i + 1) % w.seeds.len();
                g.activate(black_box(&[w.episodes[w.seeds[i]]]), &none).len()
            });
        });

        let n_edges = n + n / 10;
        group.throughput(Throughput::Elements(n_edges as u64));
        group.sample_size(20);
        // The same fill into a fresh graph, growing from empty or reserved first (inside the
        // timing).
        for (name, reserve) in [("add_edge", false), ("add_edge_reserved", true)] {
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        let mut fresh =
                            CrossLayerGraph::builder().build().expect("the default settings are valid");
                        let start = Instant::now();
                        if reserve {
                            fresh.reserve(n + n / 10, n_edges);
                        }
                        w.fill(&mut fresh);
                        timed += start.elapsed();
                        assert_eq!(fresh.edge_count(), n_edges);
                    }
                    timed
                });
            });
        }

        group.throughput(Throughput::Elements(1));
        group.sample_size(100);
        let mut graph = w.build();
        let removed: usize = w.removals.iter().map(|&i| graph.remove_record(w.episodes[i]).unwrap()).sum();
        println!(
            "crossgraph: part g at N = {n}: remove_record removes {:.3} edges on average",
            removed as f64 / 1000.0
        );
        let mut graph = w.build();
        let mut next = 0;
        group.bench_function(BenchmarkId::new("remove_record", n), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    if next == w.removals.len() {
                        graph = w.build();
                        next = 0;
                    }
                    let batch = (left as usize).min(w.removals.len() - next);
                    let start = Instant::now();
                    for &i in &w.removals[next..next + batch] {
                        black_box(graph.remove_record(black_box(w.episodes[i])).unwrap());
                    }
                    timed += start.elapsed();
                    next += batch;
                    left -= batch as u64;
                }
                timed
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench_three_layers, bench_workload_g);
criterion_main!(benches);
