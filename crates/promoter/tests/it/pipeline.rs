//! Every step of the pipeline: resolve, reinforce, provenance, recurring elements,
//! relationships, cross-layer edges.

use std::collections::HashMap;
use std::sync::Arc;

use maxim_core::{ConceptProvenance, CrossEdgeKind, LayerKind, LayerRecord, MetaValue, Source, Value};
use promoter::{Matched, PromoterConfig};

use crate::common::{
    Concepts, Links, causal, cid, elements, ep, eps, promoter, promoter_with, reader, statistical,
};

#[test]
fn a_causal_pattern_becomes_a_concept_with_its_episodes_relationship_and_edges() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let c = causal("tool:grasp", eps(0..4), 0.7);
    let report = p.promote_candidates("nac", &[c], &mut concepts, &mut links);

    assert_eq!(report.promoted.len(), 1);
    let promoted = &report.promoted[0];
    assert_eq!(
        (promoted.matched, promoted.provenance),
        (Matched::Created, ConceptProvenance::EpisodicConsolidation)
    );
    assert_eq!((promoted.reinforcements, promoted.relationships, promoted.edges_added), (3, 1, 4));
    let concept = concepts.concept(promoted.concept);
    assert_eq!(concept.name, "tool:grasp → tool:grasp:positive");
    assert_eq!(concept.category, "causal_pattern");
    assert_eq!(
        concept.definition,
        "Pattern: tool:grasp → tool:grasp:positive. Causal: tool:grasp leads to tool:grasp:positive"
    );
    assert_eq!(concept.provenance, ConceptProvenance::EpisodicConsolidation);
    // Created with the first episode, reinforced once by each of the others.
    assert_eq!(concept.source_episodes, eps(0..4));
    assert_eq!(concept.reinforcements, 4);

    // CAUSES from the event concept to the outcome concept.
    let (event, e) = concepts.by_name("tool:grasp").expect("the event concept");
    let (outcome, o) = concepts.by_name("tool:grasp:positive").expect("the outcome concept");
    assert_eq!((e.category.as_str(), o.category.as_str()), ("event", "outcome"));
    assert_eq!(concepts.relations.get(&(event, outcome, "CAUSES".into())), Some(&(0.7, 0.7, 1)));

    // DERIVED_FROM concept → each episode, weighted by the confidence.
    let derived = links.of_kind(CrossEdgeKind::DerivedFrom);
    assert_eq!(derived.len(), 4);
    for (n, edge) in derived.iter().enumerate() {
        assert_eq!(edge.0, LayerRecord::new(LayerKind::Atl, promoted.concept));
        assert_eq!(edge.1, LayerRecord::new(LayerKind::Hippocampus, ep(n as u128)));
        assert_eq!(edge.3, 0.7);
    }
    assert_eq!(links.edges.len(), 4);
    assert_eq!(p.concept_of("causal_pattern", "tool:grasp → tool:grasp:positive"), Some(promoted.concept));
}

#[test]
fn a_statistical_pattern_is_agent_inference_confirmed_by_its_ag_record() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let ag = maxim_core::RecordId::from_u128(77);
    let report = p.promote_candidates(
        "statistician",
        &[statistical("tool:navigate:success", ag, 0.73, 20)],
        &mut concepts,
        &mut links,
    );
    let promoted = &report.promoted[0];
    assert_eq!(promoted.provenance, ConceptProvenance::AgentInference);
    let concept = concepts.concept(promoted.concept);
    assert_eq!(concept.definition, "Pattern: stat:tool:navigate:success. Type: TRENDING");
    assert_eq!((concept.provenance, concept.reinforcements), (ConceptProvenance::AgentInference, 1));
    assert_eq!(
        links.edges,
        [(
            LayerRecord::new(LayerKind::AngularGyrus, ag),
            LayerRecord::new(LayerKind::Atl, promoted.concept),
            CrossEdgeKind::StatisticallyConfirms,
            0.73
        )]
    );
    assert!(concepts.relations.is_empty(), "only causal patterns relate an event to an outcome");
    assert_eq!(concepts.concepts.len(), 1);
}

#[test]
fn an_ag_id_given_as_text_is_read_too() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let ag = maxim_core::RecordId::from_u128(78);
    let mut c = statistical("tool:x:success", ag, 0.8, 20);
    c.metadata.insert("ag_memory_id".into(), MetaValue::Text(ag.to_string()));
    p.promote_candidates("statistician", &[c], &mut concepts, &mut links);
    assert_eq!(
        links.of_kind(CrossEdgeKind::StatisticallyConfirms)[0].0,
        LayerRecord::new(LayerKind::AngularGyrus, ag)
    );
}

#[test]
fn a_phase_locked_pattern_correlates_with_itself_above_the_threshold_only() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let ag = maxim_core::RecordId::from_u128(5);
    let mut locked = statistical("locked", ag, 0.8, 20);
    locked.metadata.insert("phase_coherence".into(), MetaValue::Number(0.85));
    let mut at_threshold = statistical("edge", ag, 0.8, 20);
    at_threshold.metadata.insert("phase_coherence".into(), MetaValue::Number(0.7));
    let report = p.promote_candidates("statistician", &[locked, at_threshold], &mut concepts, &mut links);
    let locked_id = report.promoted[0].concept;
    let self_loops = links.of_kind(CrossEdgeKind::TemporallyCorrelates);
    let atl = LayerRecord::new(LayerKind::Atl, locked_id);
    assert_eq!(self_loops, [&(atl, atl, CrossEdgeKind::TemporallyCorrelates, 0.85)]);
}

#[test]
fn a_similar_known_concept_is_reinforced_not_duplicated() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    // A concept some other part of the system made, worded like the pattern.
    let c = causal("tool:grasp", eps(0..3), 0.7);
    let spec = maxim_core::ConceptSpec {
        name: "Tool Grasp → Tool Grasp Positive".into(),
        category: "skill".into(),
        definition: promoter::pattern::definition(&c),
        provenance: ConceptProvenance::DirectIngestion,
        source_episode: None,
        source: Source::UserStated,
        trust: 1.0,
    };
    let (existing, _) = maxim_core::ConceptStore::find_or_create_concept(&mut concepts, &spec).unwrap();

    let report = p.promote_candidates("nac", &[c], &mut concepts, &mut links);
    assert!(report.promoted.is_empty());
    let hit = &report.reinforced[0];
    assert_eq!(hit.concept, existing);
    assert!(matches!(hit.matched, Matched::Similar { score } if score >= 0.95));
    // Every episode is new evidence for it.
    assert_eq!((hit.reinforcements, concepts.concept(existing).reinforcements), (3, 4));
    assert_eq!(concepts.similar_calls.get(), 1);
    assert!(concepts.by_name("tool:grasp → tool:grasp:positive").is_none(), "no duplicate");
    assert_eq!(links.of_kind(CrossEdgeKind::DerivedFrom).len(), 3);
    // Known from now on, without asking for similar concepts again.
    let again =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.7)], &mut concepts, &mut links);
    assert_eq!(again.unchanged[0].matched, Matched::Known);
    assert_eq!(concepts.similar_calls.get(), 1);
}

#[test]
fn a_concept_below_the_dedup_threshold_is_not_merged() {
    let mut config = PromoterConfig::default();
    config.dedup_threshold = 0.95;
    let mut p = promoter_with(config);
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:grasp", eps(0..3), 0.7)], &mut concepts, &mut links);
    let report =
        p.promote_candidates("nac", &[causal("tool:drop", eps(10..13), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.promoted.len(), 1, "a different pattern is a new concept");
    assert_ne!(report.promoted[0].concept, cid(0));
}

#[test]
fn the_store_finding_the_name_counts_as_the_first_reinforcement() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let c = causal("tool:grasp", eps(0..3), 0.7);
    concepts.similar_override = Some(Vec::new());
    // The store already holds the pattern's name (say, from a lost ledger).
    let pre = maxim_core::ConceptSpec {
        name: c.pattern_name.clone(),
        category: c.category.clone(),
        definition: String::new(),
        provenance: ConceptProvenance::EpisodicConsolidation,
        source_episode: None,
        source: Source::Episodic,
        trust: 0.6,
    };
    let (id, _) = maxim_core::ConceptStore::find_or_create_concept(&mut concepts, &pre).unwrap();
    let report = p.promote_candidates("nac", &[c], &mut concepts, &mut links);
    let hit = &report.reinforced[0];
    assert_eq!((hit.concept, hit.matched, hit.reinforcements), (id, Matched::Found, 3));
    assert_eq!(concepts.concept(id).reinforcements, 4);
}

#[test]
fn new_evidence_reinforces_once_per_new_episode() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let first =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    let id = first.promoted[0].concept;
    let report =
        p.promote_candidates("nac", &[causal("tool:grasp", eps(0..6), 0.75)], &mut concepts, &mut links);
    let hit = &report.reinforced[0];
    assert_eq!((hit.matched, hit.reinforcements, hit.relationships), (Matched::Known, 2, 1));
    // Two new DERIVED_FROM edges, four strengthened to the new confidence.
    assert_eq!(hit.edges_added, 6);
    assert_eq!(concepts.concept(id).reinforcements, 6);
    assert_eq!(concepts.concept(id).source_episodes, eps(0..6));
    let (event, _) = concepts.by_name("tool:grasp").unwrap();
    let (outcome, _) = concepts.by_name("tool:grasp:positive").unwrap();
    assert_eq!(concepts.relations[&(event, outcome, "CAUSES".into())], (0.75, 0.75, 2));
    assert!(links.of_kind(CrossEdgeKind::DerivedFrom).iter().all(|e| e.3 == 0.75));
    assert_eq!(
        p.ledger()
            .pattern(&format!("causal_pattern\u{1f}{}", "tool:grasp → tool:grasp:positive"))
            .unwrap()
            .observations,
        6
    );
}

#[test]
fn more_observations_without_new_episodes_reinforce_once() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let ag = maxim_core::RecordId::from_u128(9);
    let first = p.promote_candidates("s", &[statistical("m", ag, 0.7, 20)], &mut concepts, &mut links);
    let id = first.promoted[0].concept;
    let report = p.promote_candidates("s", &[statistical("m", ag, 0.7, 25)], &mut concepts, &mut links);
    assert_eq!(report.reinforced[0].reinforcements, 1);
    assert_eq!(concepts.concept(id).reinforcements, 2);
    let quiet = p.promote_candidates("s", &[statistical("m", ag, 0.7, 25)], &mut concepts, &mut links);
    assert!(quiet.is_quiet());
    assert_eq!(concepts.concept(id).reinforcements, 2);
}

#[test]
fn causal_then_statistical_agreement_makes_the_concept_hybrid() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let first =
        p.promote_candidates("nac", &[causal("tool:navigate", eps(0..4), 0.8)], &mut concepts, &mut links);
    let id = first.promoted[0].concept;
    // The statistician's pattern turns out to be the same concept.
    concepts.similar_override = Some(vec![(id, 0.97)]);
    let ag = maxim_core::RecordId::from_u128(42);
    let report = p.promote_candidates(
        "statistician",
        &[statistical("tool:navigate:success", ag, 0.9, 30)],
        &mut concepts,
        &mut links,
    );
    let hit = &report.reinforced[0];
    assert_eq!((hit.concept, hit.provenance, hit.reinforcements), (id, ConceptProvenance::Hybrid, 1));
    assert_eq!(concepts.concept(id).provenance, ConceptProvenance::Hybrid);
    assert_eq!(concepts.concept(id).reinforcements, 5);
    assert_eq!(concepts.concept(id).source_episodes, eps(0..4), "no episode is added by the merge");
    assert_eq!(p.provenance_of(id), Some(ConceptProvenance::Hybrid));
    assert_eq!(links.of_kind(CrossEdgeKind::StatisticallyConfirms).len(), 1);
    assert_eq!(concepts.concepts.len(), 3, "the pattern, its event and its outcome");
}

#[test]
fn statistical_then_causal_agreement_makes_the_concept_hybrid() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let ag = maxim_core::RecordId::from_u128(42);
    let first = p.promote_candidates(
        "statistician",
        &[statistical("tool:navigate:success", ag, 0.9, 30)],
        &mut concepts,
        &mut links,
    );
    let id = first.promoted[0].concept;
    concepts.similar_override = Some(vec![(id, 0.99)]);
    let report =
        p.promote_candidates("nac", &[causal("tool:navigate", eps(0..3), 0.8)], &mut concepts, &mut links);
    let hit = &report.reinforced[0];
    assert_eq!((hit.provenance, hit.reinforcements), (ConceptProvenance::Hybrid, 3));
    let concept = concepts.concept(id);
    assert_eq!((concept.provenance, concept.reinforcements), (ConceptProvenance::Hybrid, 4));
    assert_eq!(concept.source_episodes, eps(0..3));
    // The merge went through one reinforcing lookup by the concept's name, the rest directly.
    assert_eq!(concepts.calls.reinforce, 2);
}

#[test]
fn recurring_elements_of_the_episodes_become_properties() {
    let mut episodes = HashMap::new();
    episodes.insert(ep(0), elements(&["mug", "kettle"], "grasp", "make coffee", "success"));
    episodes.insert(ep(1), elements(&["mug"], "grasp", "make coffee", "success"));
    episodes.insert(ep(2), elements(&["mug", "spoon"], "grasp", "make tea", "success"));
    episodes.insert(ep(3), elements(&["spoon"], "grasp", "make coffee", "failure"));
    episodes.insert(ep(4), elements(&["spoon"], "grasp", "stir", "failure"));
    episodes.insert(ep(5), elements(&["spoon"], "grasp", "stir", "failure"));
    let clock = maxim_core::ManualClock::new(crate::common::T0);
    let mut p = promoter::SemanticPromoter::builder()
        .clock(clock.shared())
        .gate(Arc::new(crate::common::NameGate::default()))
        .episode_reader(Arc::new(reader(episodes)))
        .build()
        .unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    // Episode 9 cannot be read (deleted): it is skipped.
    let mut ids = eps(0..4);
    ids.push(ep(9));
    let report =
        p.promote_candidates("nac", &[causal("tool:grasp", ids.clone(), 0.7)], &mut concepts, &mut links);
    let id = report.promoted[0].concept;
    assert_eq!(report.promoted[0].properties_written, 4);
    let props = &concepts.concept(id).properties;
    let texts = |v: &[&str]| Value::List(v.iter().map(|s| Value::Text((*s).to_owned())).collect());
    assert_eq!(props["recurring_objects"][0].0, texts(&["mug", "spoon"]), "most frequent first");
    assert_eq!(props["recurring_tools"][0].0, texts(&["grasp"]));
    assert_eq!(props["recurring_goals"][0].0, texts(&["make coffee"]));
    assert_eq!(props["typical_outcome"][0].0, Value::Text("success".into()));
    assert_eq!(props["typical_outcome"][0].1, Source::Episodic);
    assert_eq!(concepts.calls.set_property, 4);

    // The same evidence: nothing is written again.
    p.promote_candidates("nac", &[causal("tool:grasp", ids.clone(), 0.7)], &mut concepts, &mut links);
    assert_eq!(concepts.calls.set_property, 4);

    // Two more episodes: only the values that changed are written.
    ids.extend([ep(4), ep(5)]);
    let report = p.promote_candidates("nac", &[causal("tool:grasp", ids, 0.7)], &mut concepts, &mut links);
    assert_eq!(report.reinforced[0].properties_written, 2);
    let props = &concepts.concept(id).properties;
    assert_eq!(props["recurring_objects"][0].0, texts(&["spoon", "mug"]));
    assert_eq!(props["typical_outcome"][0].0, Value::Text("failure".into()), "a 3-3 tie goes by name");
    assert_eq!(props["recurring_goals"][0].0, texts(&["make coffee"]), "3 of 6 still recur");
    assert_eq!(concepts.calls.set_property, 6);
}

#[test]
fn without_a_reader_no_properties_are_written() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert_eq!(concepts.calls.set_property, 0);
}

#[test]
fn relationships_can_be_turned_off() {
    let mut config = PromoterConfig::default();
    config.form_relationships = false;
    let mut p = promoter_with(config);
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert!(concepts.relations.is_empty());
    assert_eq!(concepts.concepts.len(), 1);
}

#[test]
fn the_event_and_outcome_come_from_the_name_when_the_metadata_lacks_them() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let mut c = causal("user_input:hello", eps(0..3), 0.7);
    c.metadata.clear();
    p.promote_candidates("bridge", &[c], &mut concepts, &mut links);
    let (event, _) = concepts.by_name("user_input:hello").unwrap();
    let (outcome, _) = concepts.by_name("user_input:hello:positive").unwrap();
    assert!(concepts.relations.contains_key(&(event, outcome, "CAUSES".into())));
}

#[test]
fn a_pattern_of_another_category_takes_its_provenance_from_its_evidence() {
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let mut with_episodes = causal("bridge:a", eps(0..3), 0.7);
    with_episodes.category = "shared_pattern".into();
    let mut without = with_episodes.clone();
    without.pattern_name = "bridge:b".into();
    without.source_memory_ids.clear();
    let report = p.promote_candidates("bridge", &[with_episodes, without], &mut concepts, &mut links);
    assert_eq!(report.promoted[0].provenance, ConceptProvenance::EpisodicConsolidation);
    assert_eq!(report.promoted[1].provenance, ConceptProvenance::AgentInference);
    assert!(concepts.relations.is_empty(), "only causal patterns relate");
}
