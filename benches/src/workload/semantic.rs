//! Part f: the semantic store (the ATL) with `C = N / 10` concepts and `5·C` relationships,
//! on the real clock.

use atl::{Atl, AtlConfig, spec};
use maxim_core::{MemoryLayer, RecordId};
use serde_json::{Value, json};

use super::stats::{Calls, block, median};
use super::{Options, round};
use crate::{RELATIONSHIP_TYPES, concept, semantic_draws};

fn store(c: usize) -> Atl {
    let mut config = AtlConfig::default();
    config.max_concepts = c.max(10_000).max(2 * c);
    Atl::builder().config(config).build().expect("valid settings")
}

/// Runs part f for `n` episodes; returns its JSON and the concept ids of the last store, in
/// creation order (part g uses them).
pub(super) fn run(n: usize, opts: &Options) -> (Value, Vec<RecordId>) {
    let c = n / 10;
    eprintln!("workload n={n}: part f, C = {c}");
    let names: Vec<(String, &str)> = (0..c).map(concept).collect();
    let (rels, seeds) = semantic_draws(c);
    let (mut new_s, mut existing_s, mut define_s, mut plain_s) = (vec![], vec![], vec![], vec![]);
    let mut last = None;
    for _ in 0..opts.reps.max(1) {
        let mut atl = store(c);
        let mut ids = Vec::with_capacity(c);
        new_s.push(block(|| {
            for (name, category) in &names {
                ids.push(atl.find_or_create(&spec(name, category)).expect("a valid name").id);
            }
        }));
        existing_s.push(block(|| {
            for (name, category) in &names {
                std::hint::black_box(atl.find_or_create(&spec(name, category)).expect("a valid name"));
            }
        }));
        define_s.push(block(|| {
            for r in &rels {
                atl.define_relationship(
                    ids[r.source],
                    ids[r.target],
                    RELATIONSHIP_TYPES[r.kind],
                    r.weight,
                    0.5,
                )
                .expect("both ends are held");
            }
        }));
        // The same creates without the name lookup and its similarity check: what the
        // original's exact-name `find_or_create` does on a miss, but no lookup at all.
        let mut plain = store(c);
        plain_s.push(block(|| {
            for (name, category) in &names {
                let concept = plain.new_concept(name, category).expect("a valid name");
                plain.insert(concept.into()).expect("a new concept");
            }
        }));
        last = Some((atl, ids));
    }
    let (mut atl, ids) = last.expect("at least one store");
    let mut recall = Calls::new();
    for _ in 0..opts.passes {
        recall.pass();
        for &s in &seeds {
            recall.time(|| atl.recall_associated_touching(&[ids[s]], 10).len());
        }
    }
    let mut report = None;
    let consolidations: Vec<f64> = (0..opts.small_reps)
        .map(|_| block(|| report = Some(atl.consolidate_now().expect("consolidation of a store in memory"))))
        .collect();
    let report = report.expect("at least one consolidation");
    let rate = |xs: &[f64], count: usize| round(count as f64 / median(xs), 1);
    let json = json!({
        "concepts": atl.len(),
        "relationships_defined": rels.len(),
        "graph_directed_edges": atl.concept_graph().edge_count(),
        "reps": new_s.len(),
        "find_or_create_new_ops_per_s": rate(&new_s, c),
        "find_or_create_existing_ops_per_s": rate(&existing_s, c),
        "define_relationship_ops_per_s": rate(&define_s, rels.len()),
        "create_without_name_lookup_ops_per_s": rate(&plain_s, c),
        "build_s_median": round(median(&new_s) + median(&define_s), 5),
        "recall_associated": recall.to_json(true),
        "consolidate_ms_median": round(median(&consolidations) * 1e3, 3),
        "consolidate_result": {"removed": report.removed, "compressed": report.compressed},
    });
    (json, ids)
}
