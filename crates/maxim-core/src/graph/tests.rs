//! Tests of the graph module as a whole: the reference vectors, agreement of every
//! activation path with a naive path-enumerating model, and store invariants under random
//! operation sequences (proptest).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::activation::{Tuning, spread_levels};
use super::*;
use crate::error::Error;
use crate::id::{RecordId, SplitMix64};

fn id(i: u64) -> RecordId {
    RecordId::from_u128(u128::from(i) + 1)
}

/// Forces the dense store and rayon from the seeds on, one frontier node per task.
const FORCED: Tuning = Tuning { dense_min: 0, dense_ratio: usize::MAX, parallel_min: 0, chunk: 1 };
/// Moves to the dense store at the first level of three nodes or more, expanding on rayon.
const LATE: Tuning = Tuning { dense_min: 3, dense_ratio: usize::MAX, parallel_min: 0, chunk: 2 };
/// Moves to the dense store from the seeds on, expanding on the calling thread.
const DENSE_ONLY: Tuning =
    Tuning { dense_min: 0, dense_ratio: usize::MAX, parallel_min: usize::MAX, chunk: 1 };

fn bits(act: &Activation) -> BTreeMap<RecordId, u64> {
    act.iter().map(|(n, a)| (n, a.to_bits())).collect()
}

/// Every way to spread over a graph, checked to agree with each other and returned once.
fn all_paths_agree(g: &Graph, seeds: &[RecordId], p: &ActivationParams) -> Activation {
    let csr = CsrGraph::from_graph(g);
    let seq = g.spread(seeds, p);
    let others = [
        ("parallel", g.spread_parallel(seeds, p)),
        ("forced", spread_levels(g, seeds, p, FORCED)),
        ("late", spread_levels(g, seeds, p, LATE)),
        ("dense only", spread_levels(g, seeds, p, DENSE_ONLY)),
        ("valence", g.spread_with_valence(seeds, p)),
        ("csr", csr.spread(seeds, p)),
        ("csr parallel", csr.spread_parallel(seeds, p)),
        ("csr forced", spread_levels(&csr, seeds, p, FORCED)),
        ("csr late", spread_levels(&csr, seeds, p, LATE)),
    ];
    for (name, other) in &others {
        assert_eq!(bits(other), bits(&seq), "{name} differs from the sequential path");
        assert_eq!(other, &seq, "{name} differs in its seeds");
    }
    seq
}

/// The model: every path of at most `max_depth` hops from a seed whose every prefix is at or
/// above the threshold, enumerated by DFS; a node keeps the max over its paths.
fn naive(
    edges: &[(RecordId, RecordId, EdgeKind, f64)],
    nodes: &BTreeSet<RecordId>,
    seeds: &[RecordId],
    p: &ActivationParams,
) -> BTreeMap<RecordId, u64> {
    fn walk(
        edges: &[(RecordId, RecordId, EdgeKind, f64)],
        p: &ActivationParams,
        node: RecordId,
        value: f64,
        depth: u32,
        best: &mut BTreeMap<RecordId, f64>,
    ) {
        let slot = best.entry(node).or_insert(value);
        if value > *slot {
            *slot = value;
        }
        if depth == p.max_depth() {
            return;
        }
        for &(s, t, kind, w) in edges {
            if s == node && kind.carries_activation() {
                let next = value * p.decay() * w;
                if next >= p.threshold() {
                    walk(edges, p, t, next, depth + 1, best);
                }
            }
        }
    }
    let mut best = BTreeMap::new();
    for &s in seeds {
        if nodes.contains(&s) {
            walk(edges, p, s, p.initial(), 0, &mut best);
        }
    }
    best.into_iter().map(|(n, a)| (n, a.to_bits())).collect()
}

#[test]
fn reference_run_vector() {
    let [a, b, c, d] = [0, 1, 2, 3].map(id);
    let mut g = Graph::new();
    g.add_edge(a, b, EdgeKind::Associates, 1.0, None).unwrap();
    g.add_edge(b, c, EdgeKind::Associates, 1.0, None).unwrap();
    g.add_edge(a, c, EdgeKind::Associates, 0.1, None).unwrap();
    g.add_edge(c, d, EdgeKind::Causes, 1.0, None).unwrap();
    let p = ActivationParams::new(0.5, 0.05, 3).unwrap();
    let act = all_paths_agree(&g, &[a], &p);
    let expected: BTreeMap<RecordId, f64> = [(a, 1.0), (b, 0.5), (c, 0.25), (d, 0.125)].into();
    assert_eq!(act.iter().collect::<BTreeMap<_, _>>(), expected);
    assert_eq!(act.seeds(), &[(a, 1.0)]);
    assert_eq!(act.ranked(None), vec![(b, 0.5), (c, 0.25), (d, 0.125)]);
    assert_eq!(act.ranked(Some(2)), vec![(b, 0.5), (c, 0.25)]);
    assert_eq!(act.ranked(Some(0)), vec![]);
}

#[test]
fn atl_run_vector_and_default_params() {
    // spec §4.5: a relation of weight 0.3 from the seed scores 0.15 with the defaults.
    let [seed, neighbour] = [0, 1].map(id);
    let mut g = Graph::new();
    g.add_edge(seed, neighbour, EdgeKind::Associates, 0.3, Some(EdgeMeta::relation("IS_A"))).unwrap();
    let act = all_paths_agree(&g, &[seed], &ActivationParams::default());
    assert_eq!(act.ranked(Some(10)), vec![(neighbour, 0.15)]);
}

#[test]
fn threshold_is_strict_and_depth_is_a_limit() {
    let [a, b, c, d] = [0, 1, 2, 3].map(id);
    let mut g = Graph::new();
    g.add_edge(a, b, EdgeKind::Associates, 0.2, None).unwrap(); // 0.1: equal to the threshold, kept
    g.add_edge(b, c, EdgeKind::Associates, 2.0, None).unwrap(); // 0.1 again
    g.add_edge(c, d, EdgeKind::Associates, 1.9, None).unwrap(); // 0.095: below, dropped
    let p = ActivationParams::default();
    let act = all_paths_agree(&g, &[a], &p);
    assert_eq!(act.ranked(None), vec![(b, 0.1), (c, 0.1)]);
    let shallow = ActivationParams::new(0.5, 0.1, 1).unwrap();
    assert_eq!(all_paths_agree(&g, &[a], &shallow).ranked(None), vec![(b, 0.1)]);
    let none = ActivationParams::new(0.5, 0.1, 0).unwrap();
    let act = all_paths_agree(&g, &[a, a, id(99)], &none);
    assert_eq!((act.len(), act.seeds()), (1, &[(a, 1.0)][..]));
}

#[test]
fn max_combination_not_sum_and_only_carriers() {
    let [a, b, c, x] = [0, 1, 2, 3].map(id);
    let mut g = Graph::new();
    g.add_edge(a, b, EdgeKind::Associates, 0.8, None).unwrap();
    g.add_edge(a, c, EdgeKind::Associates, 0.6, None).unwrap();
    g.add_edge(c, b, EdgeKind::Causes, 1.0, None).unwrap();
    for kind in [EdgeKind::Requires, EdgeKind::Enables, EdgeKind::Inhibits] {
        g.add_edge(a, x, kind, 1.0, None).unwrap();
    }
    g.add_edge(b, a, EdgeKind::Associates, 1.0, None).unwrap(); // back to the seed: 0.2 < 1.0
    let act = all_paths_agree(&g, &[a], &ActivationParams::default());
    assert_eq!(act.ranked(None), vec![(b, 0.4), (c, 0.3)]);
    assert_eq!(act.get(a), Some(1.0));
    assert_eq!(act.get(x), None);
}

#[test]
fn seeds_are_excluded_even_when_reached_and_can_improve() {
    let [a, b] = [0, 1].map(id);
    let mut g = Graph::new();
    g.add_bidirectional(a, b, EdgeKind::Associates, 4.0).unwrap();
    let act = all_paths_agree(&g, &[a, b], &ActivationParams::default());
    assert!(act.ranked(None).is_empty());
    // a -> b -> a gives 1 * 2 * 2 = 4 > initial: the seed's value rises, as in the reference.
    assert_eq!(act.get(a), Some(8.0));
}

#[test]
fn valence_follows_the_path_that_set_the_max() {
    let [a, b, c] = [0, 1, 2].map(id);
    let mut g = Graph::new();
    let v = |x: f64| Some(EdgeMeta::default().with_valence(x));
    g.add_edge(a, b, EdgeKind::Associates, 0.5, v(0.2)).unwrap(); // b: 0.25, valence 0.2
    g.add_edge(a, c, EdgeKind::Associates, 1.0, v(-0.4)).unwrap(); // c: 0.5, valence -0.4
    g.add_edge(c, b, EdgeKind::Causes, 1.2, v(0.1)).unwrap(); // b: 0.3, valence -0.2 + 0.1
    let act = g.spread_with_valence(&[a], &ActivationParams::default());
    assert_eq!(act.ranked(None), vec![(c, 0.5), (b, 0.3)]);
    assert_eq!(act.valence(a), Some(0.0));
    assert_eq!(act.valence(c), Some(-0.4));
    assert_eq!(act.valence(b), Some(-0.4 * 0.5 + 0.1));
    assert_eq!(g.spread(&[a], &ActivationParams::default()).valence(b), None);
}

#[test]
fn params_reject_bad_values() {
    for d in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(ActivationParams::new(d, 0.1, 3), Err(Error::OutOfRange { field: "decay", .. })));
    }
    for t in [-0.1, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            ActivationParams::new(0.5, t, 3),
            Err(Error::OutOfRange { field: "threshold", .. })
        ));
    }
    for i in [-1.0, f64::NAN, f64::NEG_INFINITY] {
        assert!(ActivationParams::DEFAULT.with_initial(i).is_err());
    }
    let json = serde_json::json!({"initial": 1.0, "decay": 2.0, "threshold": 0.1, "max_depth": 3});
    assert!(serde_json::from_value::<ActivationParams>(json).is_err());
    let p = ActivationParams::new(0.25, 0.0, 5).unwrap().with_initial(2.0).unwrap();
    let back: ActivationParams = serde_json::from_value(serde_json::to_value(p).unwrap()).unwrap();
    assert_eq!(back, p);
}

#[test]
fn parallel_agrees_on_a_large_random_graph() {
    let n = 3000u64;
    let mut rng = SplitMix64::new(11);
    let mut g = Graph::with_capacity(n as usize, 8 * n as usize);
    for s in 0..n {
        for _ in 0..8 {
            let kind = if rng.below(10) == 0 { EdgeKind::Causes } else { EdgeKind::Associates };
            g.add_edge(id(s), id(rng.below(n)), kind, 0.5 + rng.uniform(), None).unwrap();
        }
    }
    // Holes in the node indices, so dense indices are not all nodes.
    for s in (0..n).step_by(97) {
        g.remove_node(id(s));
    }
    let seeds: Vec<RecordId> = (0..300).map(|_| id(rng.below(n))).collect();
    let csr = CsrGraph::from_graph(&g);
    let some_threads = Tuning { dense_min: 64, dense_ratio: 64, parallel_min: 64, chunk: 16 };
    for p in [ActivationParams::new(0.5, 0.05, 3).unwrap(), ActivationParams::new(0.9, 0.0, 4).unwrap()] {
        let seq = g.spread(&seeds, &p);
        assert!(seq.len() > 1000);
        assert_eq!(bits(&g.spread_parallel(&seeds, &p)), bits(&seq));
        assert_eq!(bits(&spread_levels(&g, &seeds, &p, some_threads)), bits(&seq));
        assert_eq!(bits(&spread_levels(&csr, &seeds, &p, some_threads)), bits(&seq));
        assert_eq!(spread_levels(&csr, &seeds, &p, FORCED), seq);
    }
}

// ---------------------------------------------------------------------------------------
// Property tests.

type ModelEdge = (RecordId, RecordId, EdgeKind, f64);

fn arb_kind() -> impl Strategy<Value = EdgeKind> {
    prop::sample::select(EdgeKind::ALL.to_vec())
}

fn arb_weight() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(0.5), Just(1.0), 0.0..2.0f64]
}

fn arb_params() -> impl Strategy<Value = ActivationParams> {
    let decay = prop_oneof![Just(0.5), Just(1.0), 0.05..1.0f64];
    let threshold = prop_oneof![Just(0.0), Just(0.05), Just(0.1), 0.0..0.5f64];
    let initial = prop_oneof![Just(1.0), 0.0..3.0f64];
    (decay, threshold, 0u32..=4, initial)
        .prop_map(|(d, t, depth, i)| ActivationParams::new(d, t, depth).unwrap().with_initial(i).unwrap())
}

/// A random graph over `n` nodes (some edges refused as dependency cycles) and its edges.
fn arb_graph() -> impl Strategy<Value = (Graph, BTreeSet<RecordId>, Vec<ModelEdge>)> {
    (1u64..9).prop_flat_map(|n| {
        prop::collection::vec((0..n, 0..n, arb_kind(), arb_weight()), 0..40).prop_map(move |raw| {
            let mut g = Graph::new();
            for i in 0..n {
                g.add_node(id(i)).unwrap();
            }
            for (s, t, kind, w) in raw {
                let _ = g.add_edge(id(s), id(t), kind, w, None);
            }
            let nodes = g.nodes().collect();
            let edges = g.edges().map(|e| (e.source, e.target, e.kind, e.weight)).collect();
            (g, nodes, edges)
        })
    })
}

/// One mutation of a graph, over a small id space so that ids collide often.
#[derive(Debug, Clone)]
enum Op {
    AddNode(u64),
    RemoveNode(u64),
    AddEdge(u64, u64, EdgeKind, f64, Option<u8>),
    Bidirectional(u64, u64, EdgeKind, f64),
    RemoveEdge(u64, u64, EdgeKind, Option<u8>),
    Decay(f64, Vec<EdgeKind>, f64, bool),
    RemoveNodes(Vec<u64>),
}

const RELATIONS: [&str; 3] = ["IS_A", "HAS_PART", "RELATED_TO"];

/// Dyadic values only, so the JSON round trip is exact as well.
fn arb_op() -> impl Strategy<Value = Op> {
    let node = 0u64..8;
    let weight = (0u32..=32).prop_map(|k| f64::from(k) / 16.0);
    prop_oneof![
        1 => node.clone().prop_map(Op::AddNode),
        1 => node.clone().prop_map(Op::RemoveNode),
        6 => (node.clone(), node.clone(), arb_kind(), weight.clone(), prop::option::of(0u8..3))
            .prop_map(|(s, t, k, w, r)| Op::AddEdge(s, t, k, w, r)),
        1 => (node.clone(), node.clone(), arb_kind(), weight).prop_map(|(s, t, k, w)| Op::Bidirectional(s, t, k, w)),
        2 => (node.clone(), node, arb_kind(), prop::option::of(0u8..3))
            .prop_map(|(s, t, k, r)| Op::RemoveEdge(s, t, k, r)),
        1 => (prop::sample::select(vec![0.5, 0.25, 0.75]), prop::collection::vec(arb_kind(), 0..3),
              prop::sample::select(vec![0.0, 0.0625, 0.25]), any::<bool>())
            .prop_map(|(f, k, fl, p)| Op::Decay(f, k, fl, p)),
        1 => prop::collection::vec(0u64..10, 0..5).prop_map(Op::RemoveNodes),
    ]
}

/// What the graph should hold: nodes, and edges by identity.
#[derive(Debug, Default, Clone, PartialEq)]
struct Model {
    nodes: BTreeSet<RecordId>,
    edges: BTreeMap<(RecordId, RecordId, EdgeKind, Option<&'static str>), f64>,
}

impl Model {
    fn reaches_by_dependency(&self, from: RecordId, to: RecordId) -> bool {
        let mut stack = vec![from];
        let mut seen = BTreeSet::from([from]);
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            for &(s, t, k, _) in self.edges.keys() {
                if s == n && k.is_dependency() && seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        false
    }

    fn closes_cycle(&self, s: RecordId, t: RecordId, kind: EdgeKind) -> bool {
        kind.is_dependency() && (s == t || self.reaches_by_dependency(t, s))
    }

    fn add(&mut self, s: RecordId, t: RecordId, kind: EdgeKind, w: f64, rel: Option<&'static str>) {
        self.nodes.insert(s);
        self.nodes.insert(t);
        self.edges.insert((s, t, kind, rel), w);
    }
}

fn apply(g: &mut Graph, model: &mut Model, op: &Op) {
    match *op {
        Op::AddNode(n) => {
            assert_eq!(g.add_node(id(n)).unwrap(), model.nodes.insert(id(n)));
        }
        Op::RemoveNode(n) => {
            let n = id(n);
            let expected = model.nodes.remove(&n).then(|| {
                let before = model.edges.len();
                model.edges.retain(|&(s, t, _, _), _| s != n && t != n);
                before - model.edges.len()
            });
            assert_eq!(g.remove_node(n), expected);
        }
        Op::AddEdge(s, t, kind, w, r) => {
            let (s, t, rel) = (id(s), id(t), r.map(|r| RELATIONS[r as usize]));
            let before = g.clone();
            let meta = rel.map(EdgeMeta::relation);
            let result = g.add_edge(s, t, kind, w, meta);
            if model.closes_cycle(s, t, kind) {
                assert!(matches!(result, Err(Error::DependencyCycle { .. })), "{result:?}");
                assert_eq!(g, &before, "a refused edge changed the graph");
            } else {
                let previous = model.edges.get(&(s, t, kind, rel)).copied();
                let expected =
                    previous.map_or(EdgeInsert::Added, |p| EdgeInsert::Merged { previous_weight: p });
                assert_eq!(result.unwrap(), expected);
                model.add(s, t, kind, w, rel);
            }
        }
        Op::Bidirectional(a, b, kind, w) => {
            let (a, b) = (id(a), id(b));
            let before = g.clone();
            let result = g.add_bidirectional(a, b, kind, w);
            if kind.is_dependency() {
                assert!(result.is_err());
                assert_eq!(g, &before);
            } else {
                result.unwrap();
                model.add(a, b, kind, w, None);
                model.add(b, a, kind, w, None);
            }
        }
        Op::RemoveEdge(s, t, kind, r) => {
            let (s, t, rel) = (id(s), id(t), r.map(|r| RELATIONS[r as usize]));
            let expected = model.edges.remove(&(s, t, kind, rel)).is_some();
            assert_eq!(g.remove_edge(s, t, kind, rel), expected);
        }
        Op::Decay(factor, ref kinds, floor, prune) => {
            let mut pruned = 0;
            model.edges.retain(|&(_, _, k, _), w| {
                if kinds.contains(&k) {
                    *w *= factor;
                    if prune && *w <= floor {
                        pruned += 1;
                        return false;
                    }
                }
                true
            });
            assert_eq!(g.decay_edges(factor, kinds, floor, prune).unwrap(), pruned);
        }
        Op::RemoveNodes(ref nodes) => {
            let ids: Vec<RecordId> = nodes.iter().map(|&n| id(n)).collect();
            let doomed: BTreeSet<RecordId> =
                ids.iter().copied().filter(|n| model.nodes.contains(n)).collect();
            model.nodes.retain(|n| !doomed.contains(n));
            model.edges.retain(|&(s, t, _, _), _| !doomed.contains(&s) && !doomed.contains(&t));
            assert_eq!(g.remove_nodes(&ids), doomed.len());
        }
    }
}

fn check_against(g: &Graph, model: &Model) {
    g.check_invariants();
    assert_eq!(g.node_count(), model.nodes.len());
    assert_eq!(g.edge_count(), model.edges.len());
    assert_eq!(g.nodes().collect::<BTreeSet<_>>(), model.nodes);
    for (&(s, t, kind, rel), &w) in &model.edges {
        let e = g.find_edge(s, t, Some(kind), rel).expect("an edge of the model is missing");
        assert_eq!((e.weight, e.relation(), e.source, e.target, e.kind), (w, rel, s, t, kind));
        // The other identities between the same ends, found or not as the model says.
        for other_kind in EdgeKind::ALL {
            for other in RELATIONS.iter().map(|&r| Some(r)).chain([None]) {
                let held = model.edges.contains_key(&(s, t, other_kind, other));
                let found = g.find_edge(s, t, Some(other_kind), other);
                if other.is_some() {
                    assert_eq!(found.is_some(), held, "{other_kind:?} {other:?}");
                } else if held {
                    assert!(found.is_some());
                }
            }
        }
    }
    let (mut out, mut inc) = (0, 0);
    for &n in &model.nodes {
        out += g.out_degree(n, None);
        inc += g.in_degree(n);
        for kind in EdgeKind::ALL {
            let expected = model.edges.keys().filter(|&&(s, _, k, _)| s == n && k == kind).count();
            assert_eq!(g.out_degree(n, Some(kind)), expected);
        }
        assert_eq!(g.outgoing(n).count(), g.out_degree(n, None));
        assert_eq!(g.incoming(n).count(), g.in_degree(n));
        let deps: BTreeSet<RecordId> = model
            .edges
            .keys()
            .filter(|&&(_, t, k, _)| t == n && k == EdgeKind::Requires)
            .map(|e| e.0)
            .collect();
        assert_eq!(g.dependencies(n), deps.into_iter().collect::<Vec<_>>());
    }
    assert_eq!((out, inc), (model.edges.len(), model.edges.len()));
    // The carrier lists a spread reads follow every mutation.
    let edges: Vec<ModelEdge> = model.edges.iter().map(|(&(s, t, k, _), &w)| (s, t, k, w)).collect();
    let p = ActivationParams::new(1.0, 0.0, 3).unwrap();
    for &seed in model.nodes.iter().take(3) {
        let act = all_paths_agree(g, &[seed], &p);
        assert_eq!(bits(&act), naive(&edges, &model.nodes, &[seed], &p));
    }
    assert!(g.cycles().is_empty());
    let order = g.topological_order().expect("the graph holds no dependency cycle");
    assert_eq!(order.len(), model.nodes.len());
    let position: BTreeMap<RecordId, usize> = order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    for &(s, t, k, _) in model.edges.keys() {
        if k.is_dependency() {
            assert!(position[&s] < position[&t], "{s} must come before {t}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_activation_path_matches_the_naive_model(
        (g, nodes, edges) in arb_graph(),
        seeds in prop::collection::vec(0u64..10, 0..4),
        p in arb_params(),
    ) {
        let seeds: Vec<RecordId> = seeds.into_iter().map(id).collect();
        let act = all_paths_agree(&g, &seeds, &p);
        prop_assert_eq!(bits(&act), naive(&edges, &nodes, &seeds, &p));
        let expected_seeds: BTreeSet<RecordId> = seeds.iter().copied().filter(|s| nodes.contains(s)).collect();
        prop_assert_eq!(act.seeds().iter().map(|s| s.0).collect::<BTreeSet<_>>(), expected_seeds);
        let ranked = act.ranked(None);
        prop_assert!(ranked.windows(2).all(|w| w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0)));
        prop_assert!(ranked.iter().all(|r| !act.seeds().iter().any(|s| s.0 == r.0)));
        prop_assert_eq!(act.ranked(Some(2)), ranked.iter().copied().take(2).collect::<Vec<_>>());
    }

    #[test]
    fn operations_keep_the_graph_consistent_with_the_model(
        ops in prop::collection::vec(arb_op(), 1..60),
        force_rebuild in prop::option::of(any::<bool>()),
    ) {
        let mut g = Graph::new();
        g.force_rebuild = force_rebuild;
        let mut model = Model::default();
        for op in &ops {
            apply(&mut g, &mut model, op);
            check_against(&g, &model);
        }
        let back: Graph = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
        prop_assert_eq!(&back, &g);
        check_against(&back, &model);
        let back: Graph = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        prop_assert_eq!(&back, &g);
        // The form is canonical: equal graphs give equal bytes whatever their history.
        prop_assert_eq!(postcard::to_stdvec(&back).unwrap(), postcard::to_stdvec(&g).unwrap());
    }

    #[test]
    fn metadata_survives_a_round_trip(
        edges in prop::collection::vec(
            (0u64..6, 0u64..6, arb_kind(), 0.0..10.0f64,
             prop::option::of(0u8..3), prop::option::of(0.0..=1.0f64), prop::option::of(-1.0..=1.0f64)),
            0..20),
    ) {
        let mut g = Graph::new();
        for (s, t, kind, w, r, c, v) in edges {
            let meta = EdgeMeta { relation: r.map(|r| RELATIONS[r as usize].to_owned()), confidence: c, valence: v };
            let _ = g.add_edge(id(s), id(t), kind, w, Some(meta));
        }
        let back: Graph = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
        prop_assert_eq!(&back, &g);
        let kinds = |g: &Graph| g.edges().map(|e| e.kind).collect::<Vec<_>>().len();
        prop_assert_eq!(kinds(&back), kinds(&g));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(g) = postcard::from_bytes::<Graph>(&bytes) {
            prop_assert!(g.cycles().is_empty());
        }
    }
}
