//! Part f of the shared benchmark workload (`shared/bench/WORKLOAD.md`): the semantic store.
//!
//! The workload's expected counts come from the original, which stacked a parallel edge each
//! time a relationship was defined again. maxim merges them (an edge is identified by its
//! source, target and type; a symmetric type's reverse draw merges into its pair), so the
//! directed-edge count is computed here independently from the draws and compared with the
//! reference: at C = 100 / 1,000 / 10,000 concepts the original has 625 / 6235 / 62693 directed
//! edges, maxim 621 / 6234 / 62689 (4 / 1 / 4 fewer: the repeated draws).
//!
//! Merging keeps the larger weight, and spreading activation combines parallel paths by max,
//! so `recall_associated` returns exactly what the original's did: the mean result size over
//! the 1,000 seeds is the reference's 9.319 / 9.498 / 9.563.

use std::collections::HashSet;

use atl::{Atl, AtlConfig, DefineOutcome, spec};
use maxim_core::{MemoryLayer, RecordId};
use maxim_testkit::{RELATIONSHIP_TYPES, concept, semantic_draws};

use crate::common::layer_with;

struct Run {
    /// Directed edges of the graph after the 5·C definitions.
    edges: usize,
    /// Directed edges computed from the draws for merging edges.
    expected_merged: usize,
    /// Directed edges the original's stacking gives for the same draws.
    stacked: usize,
    /// Mean size of `recall_associated` (limit 10) over the 1,000 seeds.
    mean_result: f64,
}

fn run(c: usize) -> Run {
    let (rels, seeds) = semantic_draws(c);
    let mut config = AtlConfig::default();
    config.max_concepts = c.max(10_000);
    let (_clock, mut atl) = layer_with(config);
    let ids: Vec<RecordId> = (0..c)
        .map(|j| {
            let (name, category) = concept(j);
            let made = atl.find_or_create(&spec(&name, category)).unwrap();
            assert!(made.created, "{name}");
            made.id
        })
        .collect();
    for (j, &id) in ids.iter().enumerate() {
        let (name, category) = concept(j);
        let found = atl.find_or_create(&spec(&name, category)).unwrap();
        assert_eq!((found.id, found.created, found.reinforced), (id, false, false));
    }
    let (mut created, mut reinforced) = (0, 0);
    for r in &rels {
        let outcome = atl
            .define_relationship(ids[r.source], ids[r.target], RELATIONSHIP_TYPES[r.kind], r.weight, 0.5)
            .unwrap();
        match outcome {
            DefineOutcome::Created => created += 1,
            DefineOutcome::Reinforced { .. } => reinforced += 1,
        }
    }
    assert_eq!(created + reinforced, 5 * c);

    let registry = atl.registry();
    let mut identities: HashSet<(usize, usize, &str)> = HashSet::new();
    let mut stacked = 0;
    for r in &rels {
        let name = RELATIONSHIP_TYPES[r.kind];
        let symmetric = registry.is_symmetric(name);
        identities.insert((r.source, r.target, name));
        stacked += 1;
        if symmetric {
            identities.insert((r.target, r.source, name));
            stacked += 1;
        }
    }
    let total: usize = seeds.iter().map(|&s| atl.recall_associated(&[ids[s]], 10).len()).sum();
    assert_eq!(atl.len(), c);
    Run {
        edges: atl.concept_graph().edge_count(),
        expected_merged: identities.len(),
        stacked,
        mean_result: total as f64 / seeds.len() as f64,
    }
}

fn check(c: usize, reference_edges: usize, reference_mean: f64, merged: usize) {
    let r = run(c);
    eprintln!(
        "part f, C = {c}: directed edges {} (reference {reference_edges}), mean result size {:.4} (reference {reference_mean})",
        r.edges, r.mean_result
    );
    assert_eq!(r.stacked, reference_edges, "the draws are the workload's");
    assert_eq!(r.edges, r.expected_merged, "one edge per (source, target, type) identity");
    assert_eq!(r.edges, merged);
    assert!(r.edges < reference_edges);
    assert!(
        (r.mean_result - reference_mean).abs() < 5e-4,
        "mean result size {} vs {reference_mean}",
        r.mean_result
    );
}

#[test]
fn part_f_with_100_concepts() {
    check(100, 625, 9.319, 621);
}

#[test]
fn part_f_with_1000_concepts() {
    check(1000, 6235, 9.498, 6234);
}

#[test]
fn part_f_with_10000_concepts() {
    check(10_000, 62_693, 9.563, 62_689);
}

#[test]
fn consolidation_of_fresh_concepts_changes_nothing() {
    let (_clock, mut atl): (_, Atl) = layer_with(AtlConfig::default());
    for j in 0..100 {
        let (name, category) = concept(j);
        atl.find_or_create(&spec(&name, category)).unwrap();
    }
    let report = atl.consolidate().unwrap();
    assert_eq!((report.removed, report.compressed, report.preserved), (0, 0, 100));
}
