//! Malformed candidates, bad settings and stores that refuse: typed failures, nothing
//! half-credited, and the next scan completes what was left.

use maxim_core::{MetaValue, RecordId};
use promoter::{PromoterConfig, SemanticPromoter, Stage};

use crate::common::{Concepts, Links, causal, eps, promoter, statistical};

#[test]
fn malformed_candidates_fail_validation_and_write_nothing() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let mut nan = causal("tool:a", eps(0..4), 0.7);
    nan.confidence = f64::NAN;
    let mut above = causal("tool:b", eps(0..4), 0.7);
    above.confidence = 1.5;
    let mut blank = causal("tool:c", eps(0..4), 0.7);
    blank.pattern_name = "  ".into();
    let mut no_category = causal("tool:d", eps(0..4), 0.7);
    no_category.category = String::new();
    let mut bad_phase = statistical("m", RecordId::from_u128(1), 0.8, 20);
    bad_phase.metadata.insert("phase_coherence".into(), MetaValue::Number(f64::INFINITY));
    let mut phase_text = statistical("m2", RecordId::from_u128(1), 0.8, 20);
    phase_text.metadata.insert("phase_coherence".into(), MetaValue::Text("high".into()));
    let mut bad_ag = statistical("m3", RecordId::from_u128(1), 0.8, 20);
    bad_ag.metadata.insert("ag_memory_id".into(), MetaValue::Text("not-an-id".into()));
    let mut ag_flag = statistical("m4", RecordId::from_u128(1), 0.8, 20);
    ag_flag.metadata.insert("ag_memory_id".into(), MetaValue::Flag(true));
    let candidates = [nan, above, blank, no_category, bad_phase, phase_text, bad_ag, ag_flag];
    let report = p.promote_candidates("nac", &candidates, &mut concepts, &mut links);
    assert_eq!(report.failed.len(), candidates.len());
    assert!(report.failed.iter().all(|f| f.stage == Stage::Validate));
    let errors: Vec<&str> = report.failed.iter().map(|f| f.error.as_str()).collect();
    assert!(errors[0].starts_with("confidence must be a finite number in [0, 1]"), "{}", errors[0]);
    assert!(errors[2].contains("pattern_name"));
    assert!(errors[6].contains("ag_memory_id"));
    assert!(concepts.concepts.is_empty() && links.edges.is_empty() && p.ledger().is_empty());
    assert_eq!(concepts.similar_calls.get(), 0);
}

/// A setting's name and a way to spoil it.
type Case = (&'static str, fn(&mut PromoterConfig));

#[test]
fn bad_settings_are_refused() {
    let cases: [Case; 9] = [
        ("min_confidence", |c| c.min_confidence = f64::NAN),
        ("min_confidence", |c| c.min_confidence = 1.1),
        ("dedup_threshold", |c| c.dedup_threshold = -0.1),
        ("recurrence_share", |c| c.recurrence_share = 2.0),
        ("phase_coherence_threshold", |c| c.phase_coherence_threshold = f64::INFINITY),
        ("dedup_candidates", |c| c.dedup_candidates = 0),
        ("min_recurrence", |c| c.min_recurrence = 0),
        ("max_episodes_read", |c| c.max_episodes_read = 0),
        ("max_elements", |c| c.max_elements = 0),
    ];
    for (field, set) in cases {
        let mut config = PromoterConfig::default();
        config.gate_enabled = false;
        set(&mut config);
        let err = SemanticPromoter::builder().config(config).build().unwrap_err();
        assert!(err.to_string().contains(field), "{field}: {err}");
    }
}

#[test]
fn a_store_refusing_the_concept_leaves_no_binding() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    concepts.failing.insert("find_or_create");
    let report = p.promote_candidates("nac", &[causal("tool:a", eps(0..3), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.failed[0].stage, Stage::Resolve);
    assert!(report.failed[0].error.contains("injected"));
    assert!(p.ledger().is_empty() && links.edges.is_empty());
    concepts.failing.clear();
    let report = p.promote_candidates("nac", &[causal("tool:a", eps(0..3), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.promoted.len(), 1);
}

#[test]
fn a_reinforcement_failing_midway_is_completed_by_the_next_scan_without_double_credit() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    concepts.reinforce_budget = Some(2);
    let c = causal("tool:a", eps(0..6), 0.7);
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.failed[0].stage, Stage::Reinforce);
    let id = concepts.by_name("tool:a → tool:a:positive").unwrap().0;
    assert_eq!(concepts.concept(id).reinforcements, 3, "creation and two reinforcements took effect");
    assert!(links.edges.is_empty(), "the steps after the failure did not run");
    concepts.reinforce_budget = None;
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.reinforced[0].reinforcements, 3);
    assert_eq!(concepts.concept(id).reinforcements, 6, "each episode credited exactly once");
    assert_eq!(links.edges.len(), 6);
    assert_eq!(concepts.relations.len(), 1);
    assert!(p.promote_candidates("nac", &[c], &mut concepts, &mut links).is_quiet());
}

#[test]
fn failed_relationships_and_edges_are_retried_by_the_next_scan() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    concepts.failing.insert("relate");
    let c = causal("tool:a", eps(0..3), 0.7);
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.failed[0].stage, Stage::Relationships);
    concepts.failing.clear();
    links.failing = true;
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.failed[0].stage, Stage::Edges);
    assert_eq!(concepts.relations.len(), 1, "the relationship was formed this time");
    links.failing = false;
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.unchanged[0].edges_added, 3);
    assert_eq!(concepts.relations.values().next().unwrap().2, 1, "formed once");
    let id = concepts.by_name("tool:a → tool:a:positive").unwrap().0;
    assert_eq!(concepts.concept(id).reinforcements, 3);
}

#[test]
fn failed_property_writes_are_retried_by_the_next_scan() {
    use std::collections::HashMap;
    use std::sync::Arc;
    let mut episodes = HashMap::new();
    for n in 0..3 {
        episodes
            .insert(crate::common::ep(n), crate::common::elements(&["mug"], "grasp", "coffee", "success"));
    }
    let mut p = SemanticPromoter::builder()
        .gate(Arc::new(crate::common::NameGate::default()))
        .episode_reader(Arc::new(crate::common::reader(episodes)))
        .build()
        .unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    concepts.failing.insert("set_property");
    let c = causal("tool:a", eps(0..3), 0.7);
    assert_eq!(
        p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links).failed[0].stage,
        Stage::Properties
    );
    concepts.failing.clear();
    let report = p.promote_candidates("nac", std::slice::from_ref(&c), &mut concepts, &mut links);
    assert_eq!(report.unchanged[0].properties_written, 4);
    assert!(p.promote_candidates("nac", &[c], &mut concepts, &mut links).is_quiet());
}
