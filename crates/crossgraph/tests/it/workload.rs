//! The cross-layer part (g) of the shared benchmark workload (`shared/bench/WORKLOAD.md`):
//! the generator, checked against the workload's vectors, and the counts that follow from the
//! graph alone.

use crossgraph::{CrossLayerGraph, KindSet, LayerGraphs};
use maxim_core::{CrossEdgeKind, IdGenerator, LayerKind, LayerRecord, RecordId, Timestamp};

use maxim_testkit::{CrossLayerDraws, T0_SECS, cross_layer_draws, episode_ids, seeds};

use crate::common::{graph, params};

/// Part g's inputs for `n` episodes: the workload's draws from `maxim-testkit` (as
/// `benches/benches/crossgraph.rs` and the workload runner use them).
struct PartG {
    episodes: Vec<RecordId>,
    concepts: Vec<RecordId>,
    /// `inst[i]`: the concept episode `i` is an instance of.
    inst: Vec<usize>,
    /// For concept `j`: the episode it derives from and the weight.
    derived: Vec<(usize, f64)>,
    seeds: Vec<usize>,
    removals: Vec<usize>,
}

fn part_g(n: usize) -> PartG {
    let c = n / 10;
    let episodes = episode_ids(n);
    // The workload takes the concept ids of part f's store; any distinct ids will do.
    let mut id_gen = IdGenerator::seeded(seeds::SEMANTIC);
    let concepts = (0..c).map(|_| id_gen.next_id(Timestamp::from_secs(T0_SECS))).collect();
    let CrossLayerDraws { inst, derived, seeds, removals } = cross_layer_draws(n);
    PartG { episodes, concepts, inst, derived, seeds, removals }
}

impl PartG {
    fn episode(&self, i: usize) -> LayerRecord {
        LayerRecord::new(LayerKind::Hippocampus, self.episodes[i])
    }

    fn concept(&self, j: usize) -> LayerRecord {
        LayerRecord::new(LayerKind::Atl, self.concepts[j])
    }

    fn build(&self) -> CrossLayerGraph {
        let mut g = graph();
        for (i, &j) in self.inst.iter().enumerate() {
            g.add_edge(self.episode(i), self.concept(j), CrossEdgeKind::InstanceOf, 1.0).unwrap();
        }
        for (j, &(e, w)) in self.derived.iter().enumerate() {
            g.add_edge(self.concept(j), self.episode(e), CrossEdgeKind::DerivedFrom, w).unwrap();
        }
        g
    }
}

#[test]
fn the_generator_matches_the_workload_vectors() {
    let w = part_g(1000);
    assert_eq!(w.episodes[0].to_string(), "088712be-8a58-4fca-bbff-7c596e26ce46");
    assert_eq!(w.episodes[1].to_string(), "21876e7a-2aec-4a3d-977e-91a249eb9308");
    assert_eq!((w.inst.len(), w.derived.len(), w.seeds.len(), w.removals.len()), (1000, 100, 1000, 1000));
    let mut distinct = w.removals.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 1000);
}

/// Mean result size of the workload's activation (3 passes over the seeds give the same) and
/// mean edges per removal, for `n` episodes, with `p`.
fn counts(n: usize, p: &crossgraph::CrossParams) -> (f64, f64) {
    let w = part_g(n);
    let mut g = w.build();
    assert_eq!(g.edge_count(), n + n / 10, "no edge of part g repeats another");
    let none = LayerGraphs::new();
    let sizes: usize = w.seeds.iter().map(|&s| g.activate_with(&[w.episode(s)], &none, p).len()).sum();
    let removed: usize = w.removals.iter().map(|&i| g.remove_record(w.episode(i)).unwrap()).sum();
    (sizes as f64 / 1000.0, removed as f64 / 1000.0)
}

#[test]
fn the_workload_counts_of_the_original_are_reproduced() {
    // The original walks outgoing edges only and returns max_depth - 1 hops: its depth 3 is
    // depth 2 here.
    let mut original = params(0.5, 0.01, 2);
    original.backward = KindSet::NONE;
    let (size, removed) = counts(1000, &original);
    assert_eq!((size, removed), (1.998, 1.1));
    let (size, removed) = counts(10_000, &original);
    assert_eq!((size, removed), (2.0, 1.089));
}

#[test]
fn the_workload_with_the_depth_fixed_and_both_directions_reaches_further() {
    let w = part_g(1000);
    let g = w.build();
    let none = LayerGraphs::new();
    let mut original = params(0.5, 0.01, 2);
    original.backward = KindSet::NONE;
    for &s in &w.seeds[..50] {
        let seed = w.episode(s);
        let ours = g.activate(&[seed], &none);
        let theirs = g.activate_with(&[seed], &none, &original);
        // Everything the original finds is found, at least as strongly (a derived episode may
        // also be an instance of the seed's concept, reached backwards at 0.25).
        for (r, a) in theirs.iter() {
            assert!(ours.get(r).is_some_and(|x| x >= a), "{r}: {a} vs {:?}", ours.get(r));
        }
        // The seed's concept, at 0.5, and the other instances of that concept, at 0.25.
        let concept = w.concept(w.inst[s]);
        assert_eq!(ours.get(concept), Some(0.5));
        let siblings = w.inst.iter().enumerate().filter(|&(i, &j)| j == w.inst[s] && i != s).count();
        assert!(ours.layer(LayerKind::Hippocampus).len() >= siblings);
    }
}
