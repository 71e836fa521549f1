//! Agreement with naive models: the store against a map of edges, and the spreading
//! activation (sequential and parallel) against a model that enumerates every walk.

use std::collections::BTreeMap;

use crossgraph::{ALL_KINDS, Applied, CrossLayerGraph, CrossParams, EdgeInsert, KindSet, LayerGraphs, Op};
use maxim_core::graph::{ActivationParams, EdgeKind, Graph};
use maxim_core::{CrossEdgeKind, GraphView, LayerKind, LayerRecord, RecordId};
use proptest::prelude::*;

use crate::common::{fingerprint, graph};

const LAYERS: [LayerKind; 3] = [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus];

fn record(layer: usize, i: u8) -> LayerRecord {
    LayerRecord::new(LAYERS[layer], RecordId::from_u128(100 * layer as u128 + u128::from(i)))
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => prop::sample::select(vec![0.0, 0.25, 0.5, 0.8, 1.0]),
        2 => 0.0..=1.0f64,
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Add(LayerRecord, LayerRecord, CrossEdgeKind, f64),
    Unlink(LayerRecord, LayerRecord, CrossEdgeKind),
    Remove(LayerRecord),
}

fn any_record(n: u8) -> impl Strategy<Value = LayerRecord> {
    (0..3usize, 0..n).prop_map(|(l, i)| record(l, i))
}

fn step() -> impl Strategy<Value = Step> {
    let kind = prop::sample::select(ALL_KINDS.to_vec());
    let w = prop_oneof![8 => weight(), 1 => prop::sample::select(vec![f64::NAN, -0.5, 1.5, f64::INFINITY])];
    prop_oneof![
        8 => (any_record(6), any_record(6), kind.clone(), w).prop_map(|(a, b, k, w)| Step::Add(a, b, k, w)),
        2 => (any_record(6), any_record(6), kind).prop_map(|(a, b, k)| Step::Unlink(a, b, k)),
        1 => any_record(6).prop_map(Step::Remove),
    ]
}

type Model = BTreeMap<(LayerRecord, LayerRecord, CrossEdgeKind), f64>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_store_agrees_with_a_map_of_edges(steps in prop::collection::vec(step(), 0..120)) {
        let mut g = graph();
        let mut model = Model::new();
        for s in steps {
            match s {
                Step::Add(a, b, k, w) => {
                    let valid = w.is_finite() && (0.0..=1.0).contains(&w) && (a != b || k == CrossEdgeKind::TemporallyCorrelates);
                    let got = g.add_edge(a, b, k, w);
                    prop_assert_eq!(got.is_ok(), valid);
                    if valid {
                        let expected = match model.insert((a, b, k), w) {
                            None => EdgeInsert::Added,
                            Some(previous_weight) => EdgeInsert::Updated { previous_weight },
                        };
                        prop_assert_eq!(got.unwrap(), expected);
                    }
                }
                Step::Unlink(a, b, k) => {
                    let got = g.apply(Op::Unlink { from: a, to: b, kind: k }).unwrap();
                    let expected = model.remove(&(a, b, k));
                    prop_assert_eq!(got, Applied::Unlinked(expected.map(|weight| crossgraph::CrossEdge { from: a, to: b, kind: k, weight })));
                }
                Step::Remove(r) => {
                    let before = model.len();
                    model.retain(|&(a, b, _), _| a != r && b != r);
                    prop_assert_eq!(g.remove_record(r).unwrap(), before - model.len());
                }
            }
        }
        let mut edges: Vec<_> = g.edges().map(|e| ((e.from, e.to, e.kind), e.weight)).collect();
        edges.sort_by_key(|x| x.0);
        let expected: Vec<_> = model.iter().map(|(k, v)| (*k, *v)).collect();
        prop_assert_eq!(&edges, &expected);
        let mut records: Vec<LayerRecord> = model.keys().flat_map(|&(a, b, _)| [a, b]).collect();
        records.sort_unstable();
        records.dedup();
        prop_assert_eq!(g.record_count(), records.len());
        let stats = g.stats();
        prop_assert_eq!(stats.source_records, model.keys().map(|k| k.0).collect::<std::collections::BTreeSet<_>>().len());
        prop_assert_eq!(stats.target_records, model.keys().map(|k| k.1).collect::<std::collections::BTreeSet<_>>().len());
        for &r in &records {
            for layer in [None, Some(LayerKind::Atl)] {
                for kind in [None, Some(CrossEdgeKind::InstanceOf)] {
                    let keep = |other: LayerRecord, k: CrossEdgeKind| layer.is_none_or(|l| l == other.layer) && kind.is_none_or(|x| x == k);
                    let out: Vec<_> = model.iter().filter(|((a, b, k), _)| *a == r && keep(*b, *k)).map(|((_, b, k), w)| (*b, *k, *w)).collect();
                    let got: Vec<_> = g.linked(r, layer, kind).into_iter().map(|e| (e.to, e.kind, e.weight)).collect();
                    prop_assert_eq!(got, out);
                    let mut inc: Vec<_> = model.iter().filter(|((a, b, k), _)| *b == r && keep(*a, *k)).map(|((a, _, k), w)| (*a, *k, *w)).collect();
                    inc.sort_by_key(|x| (x.0, x.1));
                    let got: Vec<_> = g.incoming(r, layer, kind).into_iter().map(|e| (e.from, e.kind, e.weight)).collect();
                    prop_assert_eq!(got, inc);
                }
            }
        }
        // What was saved loads back the same.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crossgraph.snap");
        g.save(&path).unwrap();
        let mut back = graph();
        back.load(&path).unwrap();
        prop_assert_eq!(fingerprint(&back), fingerprint(&g));
    }
}

/// A small world: three layer graphs and the cross edges.
#[derive(Debug, Clone)]
struct World {
    intra: Vec<(usize, u8, u8, EdgeKind, f64)>,
    cross: Vec<(LayerRecord, LayerRecord, CrossEdgeKind, f64)>,
}

fn world() -> impl Strategy<Value = World> {
    let intra_kind = prop::sample::select(vec![EdgeKind::Associates, EdgeKind::Causes, EdgeKind::Inhibits]);
    // Intra-layer weights above 1 make an improved record spread again.
    let intra_w = prop_oneof![3 => weight(), 1 => 1.0..=1.6f64];
    let intra = prop::collection::vec((0..3usize, 0..5u8, 0..5u8, intra_kind, intra_w), 0..16);
    let cross = prop::collection::vec(
        (any_record(5), any_record(5), prop::sample::select(ALL_KINDS.to_vec()), weight()),
        0..22,
    );
    (intra, cross).prop_map(|(intra, cross)| World { intra, cross })
}

impl World {
    fn build(&self) -> ([Graph; 3], CrossLayerGraph) {
        let mut graphs = [Graph::new(), Graph::new(), Graph::new()];
        for &(l, s, t, kind, w) in &self.intra {
            graphs[l].add_edge(record(l, s).id, record(l, t).id, kind, w, None).unwrap();
        }
        let mut cross = graph();
        for &(a, b, k, w) in &self.cross {
            let _ = cross.add_edge(a, b, k, w); // self-loops are refused; the model skips them
        }
        (graphs, cross)
    }

    /// Every neighbour of `r` with the edge weight, as the walk rules allow.
    fn neighbours(
        graphs: &[Graph; 3],
        cross: &Model,
        r: LayerRecord,
        p: &CrossParams,
    ) -> Vec<(LayerRecord, f64)> {
        let l = LAYERS.iter().position(|&x| x == r.layer).unwrap();
        let mut out: Vec<(LayerRecord, f64)> = graphs[l]
            .edges()
            .filter(|e| e.source == r.id && e.kind.carries_activation())
            .map(|e| (LayerRecord::new(r.layer, e.target), e.weight))
            .collect();
        for (&(a, b, k), &w) in cross {
            if a == r && p.forward.contains(k) {
                out.push((b, w));
            }
            if b == r && p.backward.contains(k) {
                out.push((a, w));
            }
        }
        out
    }

    /// The max over every walk of at most `max_depth` hops whose every prefix clears the
    /// threshold, seeds excluded.
    fn naive(&self, seeds: &[LayerRecord], p: &CrossParams) -> BTreeMap<LayerRecord, u64> {
        let (graphs, _) = self.build();
        let mut cross = Model::new();
        for &(a, b, k, w) in &self.cross {
            if a != b || k == CrossEdgeKind::TemporallyCorrelates {
                cross.insert((a, b, k), w);
            }
        }
        let act = p.activation;
        let mut best: BTreeMap<LayerRecord, f64> = BTreeMap::new();
        let mut stack: Vec<(LayerRecord, f64, u32)> = seeds.iter().map(|&s| (s, act.initial(), 0)).collect();
        while let Some((r, a, d)) = stack.pop() {
            if d >= act.max_depth() {
                continue;
            }
            for (t, w) in Self::neighbours(&graphs, &cross, r, p) {
                let na = a * act.decay() * w;
                if na < act.threshold() || na.is_nan() {
                    continue;
                }
                let slot = best.entry(t).or_insert(na);
                if na > *slot {
                    *slot = na;
                }
                stack.push((t, na, d + 1));
            }
        }
        for s in seeds {
            best.remove(s);
        }
        best.into_iter().map(|(r, a)| (r, a.to_bits())).collect()
    }
}

fn bits(act: &crossgraph::CrossActivation) -> BTreeMap<LayerRecord, u64> {
    act.iter().map(|(r, a)| (r, a.to_bits())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn activation_agrees_with_walk_enumeration_sequentially_and_in_parallel(
        w in world(),
        seeds in prop::collection::vec(any_record(5), 1..4),
        decay in prop::sample::select(vec![0.5, 0.8, 1.0]),
        threshold in prop::sample::select(vec![0.0, 0.01, 0.05, 0.2]),
        max_depth in 0..5u32,
        forward in 0..128u8,
        backward in 0..128u8,
    ) {
        let (graphs, cross) = w.build();
        let layers = LayerGraphs::new()
            .with(LAYERS[0], &graphs[0])
            .with(LAYERS[1], &graphs[1])
            .with(LAYERS[2], &graphs[2]);
        let to_set = |bits: u8| -> KindSet { ALL_KINDS.into_iter().enumerate().filter(|(i, _)| bits >> i & 1 == 1).map(|(_, k)| k).collect() };
        let mut p = CrossParams::new(ActivationParams::new(decay, threshold, max_depth).unwrap());
        p.forward = to_set(forward);
        p.backward = to_set(backward);
        p.parallel_min_frontier = usize::MAX;
        let sequential = cross.activate_with(&seeds, &layers, &p);
        p.parallel_min_frontier = 1;
        let parallel = cross.activate_with(&seeds, &layers, &p);
        let expected = w.naive(&seeds, &p);
        // The layers' graphs read through the GraphView trait instead of their dense runs.
        let views = LayerGraphs::new()
            .with(LAYERS[0], &graphs[0] as &dyn GraphView)
            .with(LAYERS[1], &graphs[1] as &dyn GraphView)
            .with(LAYERS[2], &graphs[2] as &dyn GraphView);
        prop_assert_eq!(bits(&cross.activate_with(&seeds, &views, &p)), expected.clone());
        prop_assert_eq!(bits(&sequential), expected.clone());
        prop_assert_eq!(bits(&parallel), expected);
        prop_assert_eq!(&sequential, &parallel);
        prop_assert_eq!(sequential.len(), sequential.iter().count());
    }
}

/// A change to the graphs between two spreads.
#[derive(Debug, Clone)]
enum Change {
    /// A layer graph loses a node (its index is reused by the next new node).
    RemoveNode(usize, u8),
    /// A layer graph gains an edge (and maybe nodes).
    AddIntra(usize, u8, u8, f64),
    /// The cross-layer graph loses a record (its node is reused by the next new record).
    RemoveCross(LayerRecord),
    /// The cross-layer graph gains an edge (and maybe records).
    AddCross(LayerRecord, LayerRecord, CrossEdgeKind, f64),
    /// A layer graph is replaced by its clone (same records, another numbering).
    Clone(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        2 => (0..3usize, 0..5u8).prop_map(|(l, i)| Change::RemoveNode(l, i)),
        3 => (0..3usize, 0..5u8, 0..5u8, weight()).prop_map(|(l, s, t, w)| Change::AddIntra(l, s, t, w)),
        2 => any_record(5).prop_map(Change::RemoveCross),
        3 => (any_record(5), any_record(5), prop::sample::select(ALL_KINDS.to_vec()), weight())
            .prop_map(|(a, b, k, w)| Change::AddCross(a, b, k, w)),
        1 => (0..3usize).prop_map(Change::Clone),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Removals on either side free dense numbers that later records reuse (a layer graph's
    /// node index, a cross-layer node), and a layer graph may be swapped for its clone: every
    /// spread after every change still agrees with the model, sequentially and in parallel.
    #[test]
    fn activation_stays_right_while_both_sides_change(
        w in world(),
        changes in prop::collection::vec(change(), 1..24),
        seeds in prop::collection::vec(any_record(5), 1..3),
    ) {
        let mut w = w;
        let (mut graphs, mut cross) = w.build();
        let p = *cross.params();
        let mut parallel = p;
        parallel.parallel_min_frontier = 1;
        for c in changes {
            let layers = LayerGraphs::new()
                .with(LAYERS[0], &graphs[0])
                .with(LAYERS[1], &graphs[1])
                .with(LAYERS[2], &graphs[2]);
            let expected = w.naive(&seeds, &p);
            prop_assert_eq!(bits(&cross.activate_with(&seeds, &layers, &p)), expected.clone());
            prop_assert_eq!(bits(&cross.activate_with(&seeds, &layers, &parallel)), expected);
            match c {
                Change::RemoveNode(l, i) => {
                    let id = record(l, i).id;
                    graphs[l].remove_node(id);
                    w.intra.retain(|&(m, s, t, _, _)| m != l || (s != i && t != i));
                }
                Change::AddIntra(l, s, t, weight) => {
                    graphs[l].add_edge(record(l, s).id, record(l, t).id, EdgeKind::Associates, weight, None).unwrap();
                    w.intra.push((l, s, t, EdgeKind::Associates, weight));
                }
                Change::RemoveCross(r) => {
                    cross.remove_record(r).unwrap();
                    w.cross.retain(|&(a, b, _, _)| a != r && b != r);
                }
                Change::AddCross(a, b, k, weight) => {
                    let _ = cross.add_edge(a, b, k, weight);
                    w.cross.push((a, b, k, weight));
                }
                Change::Clone(l) => graphs[l] = graphs[l].clone(),
            }
        }
    }
}

/// Spreads on three threads at once over the same graphs return what a lone spread returns,
/// and what a copy of the cross-layer graph that never spread before returns.
#[test]
fn concurrent_spreads_agree_with_a_lone_one() {
    let mut rng = maxim_core::SplitMix64::new(11);
    let n = 300u64;
    let mut graphs = [Graph::new(), Graph::new(), Graph::new()];
    let mut cross = graph();
    let id = |l: usize, i: u64| RecordId::from_u128(1000 * l as u128 + u128::from(i));
    for (l, g) in graphs.iter_mut().enumerate() {
        for i in 0..n {
            for _ in 0..3 {
                let t = rng.below(n);
                if t != i {
                    g.add_edge(id(l, i), id(l, t), EdgeKind::Associates, 0.3 + 0.7 * rng.uniform(), None)
                        .unwrap();
                }
            }
        }
    }
    for _ in 0..2000 {
        let a = rng.below(3) as usize;
        let b = (a + 1 + rng.below(2) as usize) % 3;
        let from = LayerRecord::new(LAYERS[a], id(a, rng.below(n)));
        let to = LayerRecord::new(LAYERS[b], id(b, rng.below(n)));
        cross.add_edge(from, to, ALL_KINDS[rng.below(7) as usize], 0.3 + 0.7 * rng.uniform()).unwrap();
    }
    let layers = LayerGraphs::new()
        .with(LAYERS[0], &graphs[0])
        .with(LAYERS[1], &graphs[1])
        .with(LAYERS[2], &graphs[2]);
    let seed_sets: Vec<Vec<LayerRecord>> =
        (0..40u64).map(|i| vec![LayerRecord::new(LAYERS[0], id(0, (i * 7) % n))]).collect();
    let expected: Vec<_> = seed_sets.iter().map(|s| cross.activate(s, &layers)).collect();
    let fresh = {
        // The same edges in a graph that has never spread.
        let mut copy = graph();
        for e in cross.edges() {
            copy.add_edge(e.from, e.to, e.kind, e.weight).unwrap();
        }
        copy
    };
    for (s, e) in seed_sets.iter().zip(&expected) {
        assert_eq!(&fresh.activate(s, &layers), e);
    }
    let (cross, layers, seed_sets, expected) = (&cross, &layers, &seed_sets, &expected);
    // Scoped threads are all joined before a panic in any of them is passed on.
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..3)
            .map(|t| {
                scope.spawn(move || {
                    for round in 0..20 {
                        let i = (round * 3 + t) % seed_sets.len();
                        assert_eq!(&cross.activate(&seed_sets[i], layers), &expected[i]);
                    }
                })
            })
            .collect();
        let results: Vec<_> = workers.into_iter().map(std::thread::ScopedJoinHandle::join).collect();
        for r in results {
            r.unwrap();
        }
    });
}
