//! A second scan over the same evidence changes nothing; new evidence is credited once.

use std::sync::Arc;

use maxim_core::{CrossEdgeKind, CrossLinks, LayerKind, LayerRecord, RecordId};
use proptest::prelude::*;

use crate::common::{Concepts, Fixed, Links, causal, eps, promoter, statistical};

fn sources() -> Arc<Fixed> {
    let ag = RecordId::from_u128(500);
    Arc::new(Fixed::new(
        "mixed",
        vec![
            causal("tool:grasp", eps(0..5), 0.7),
            causal("tool:drop", eps(10..14), 0.65),
            statistical("tool:navigate:success", ag, 0.8, 30),
        ],
    ))
}

#[test]
fn a_second_scan_over_the_same_evidence_changes_nothing() {
    let mut p = promoter();
    p.add_source(sources());
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let first = p.scan(&mut concepts, &mut links);
    assert_eq!((first.promoted.len(), first.candidates), (3, 3));

    let (before, edges, ledger, calls, similar) = (
        concepts.fingerprint(),
        links.edges.clone(),
        p.ledger().clone(),
        concepts.calls,
        concepts.similar_calls.get(),
    );
    assert_eq!(similar, 3);
    let second = p.scan(&mut concepts, &mut links);
    assert!(second.is_quiet(), "{second:?}");
    assert_eq!(second.unchanged.len(), 3);
    assert_eq!(concepts.fingerprint(), before);
    assert_eq!(links.edges, edges);
    assert_eq!(p.ledger(), &ledger);
    // Not one write was sent to the concept store.
    assert_eq!(
        (
            concepts.calls.find_or_create,
            concepts.calls.reinforce,
            concepts.calls.relate,
            concepts.calls.set_property
        ),
        (calls.find_or_create, calls.reinforce, calls.relate, calls.set_property)
    );
    assert_eq!(concepts.similar_calls.get(), similar, "known patterns are not looked up again");
    let stats = p.stats();
    assert_eq!((stats.counters["scans"], stats.counters["promoted"], stats.counters["unchanged"]), (2, 3, 3));
    assert_eq!((stats.patterns, stats.concepts), (3, 3));
}

#[test]
fn the_same_pattern_twice_in_one_scan_is_promoted_once() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let c = causal("tool:grasp", eps(0..4), 0.7);
    let report = p.promote_candidates("nac", &[c.clone(), c], &mut concepts, &mut links);
    assert_eq!((report.promoted.len(), report.unchanged.len()), (1, 1));
    assert_eq!(concepts.concept(report.promoted[0].concept).reinforcements, 4);
    assert_eq!(links.edges.len(), 4);
}

#[test]
fn an_edge_removed_since_is_added_back_once() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let first =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    let id = first.promoted[0].concept;
    assert_eq!(links.remove_cross_edges(LayerRecord::new(LayerKind::Hippocampus, crate::common::ep(2))), 1);
    let report =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.unchanged[0].edges_added, 1);
    assert_eq!(concepts.concept(id).reinforcements, 4, "a repaired edge is not new evidence");
    let quiet =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert!(quiet.is_quiet());
}

#[test]
fn edge_weights_rise_with_the_confidence_and_never_fall() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.7)], &mut concepts, &mut links);
    let up = p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.9)], &mut concepts, &mut links);
    assert_eq!(up.unchanged[0].edges_added, 3);
    let down =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.65)], &mut concepts, &mut links);
    assert_eq!(down.unchanged[0].edges_added, 0);
    assert!(links.of_kind(CrossEdgeKind::DerivedFrom).iter().all(|e| e.3 == 0.9));
    assert_eq!(links.edges.len(), 3);
}

#[test]
fn a_forgotten_concept_is_promoted_afresh() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let first =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.7)], &mut concepts, &mut links);
    let id = first.promoted[0].concept;
    assert!(p.forget_concept(id).unwrap());
    assert!(!p.forget_concept(id).unwrap());
    assert_eq!(p.concept_of("causal_pattern", "tool:grasp → tool:grasp:positive"), None);
    // The store still has it; the promoter finds it again by similarity and credits the
    // episodes to it as new evidence.
    let again =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.7)], &mut concepts, &mut links);
    assert_eq!(again.reinforced[0].concept, id);
    assert_eq!(p.concept_of("causal_pattern", "tool:grasp → tool:grasp:positive"), Some(id));
}

/// What a run of scans may offer: for each of three patterns, how many of its episodes the
/// source names in each scan (growing or shrinking).
fn scans() -> impl Strategy<Value = Vec<[u8; 3]>> {
    prop::collection::vec([0u8..8, 0u8..8, 0u8..8], 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Model: a concept is reinforced once per distinct episode ever offered (its creation
    /// counting for the first), has one DERIVED_FROM edge per such episode, and a scan
    /// repeated at once changes nothing.
    #[test]
    fn credits_match_a_model_of_distinct_episodes(runs in scans()) {
        let events = ["tool:a", "tool:b", "tool:c"];
        let mut p = promoter();
        let (mut concepts, mut links) = (Concepts::default(), Links::default());
        let mut seen: [std::collections::BTreeSet<RecordId>; 3] = Default::default();
        for run in runs {
            let candidates: Vec<_> = (0..3)
                .filter(|&i| run[i] >= 3)
                .map(|i| {
                    let base = 100 * i as u128;
                    let ids = eps(base..base + u128::from(run[i]));
                    seen[i].extend(ids.iter().copied());
                    causal(events[i], ids, 0.7)
                })
                .collect();
            p.promote_candidates("nac", &candidates, &mut concepts, &mut links);
            for (i, event) in events.iter().enumerate() {
                let name = format!("{event} → {event}:positive");
                let Some((id, concept)) = concepts.by_name(&name) else {
                    prop_assert!(seen[i].is_empty());
                    continue;
                };
                prop_assert_eq!(concept.reinforcements as usize, seen[i].len());
                let derived = links
                    .cross_edges_from(LayerRecord::new(LayerKind::Atl, id))
                    .into_iter()
                    .filter(|e| e.1 == CrossEdgeKind::DerivedFrom)
                    .count();
                prop_assert_eq!(derived, seen[i].len());
            }
            let (before, n_edges) = (concepts.fingerprint(), links.edges.len());
            let again = p.promote_candidates("nac", &candidates, &mut concepts, &mut links);
            prop_assert!(again.is_quiet());
            prop_assert_eq!(concepts.fingerprint(), before);
            prop_assert_eq!(links.edges.len(), n_edges);
        }
    }
}

#[test]
fn evidence_counts_only_past_the_most_observations_credited() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let mut times_defined = Vec::new();
    for n in [5, 3, 4, 5, 6] {
        // The source forgets and relearns: episodes 0..n of the same pattern.
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..n), 0.7)], &mut concepts, &mut links);
        times_defined.push(concepts.relations.values().next().unwrap().2);
    }
    assert_eq!(times_defined, [1, 1, 1, 1, 2], "CAUSES is formed again only past 5 observations");
    let id = concepts.by_name("tool:grasp → tool:grasp:positive").unwrap().0;
    assert_eq!(concepts.concept(id).reinforcements, 6);
}
