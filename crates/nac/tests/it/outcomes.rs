//! `record_event` / `record_outcome` within the temporal window (§8.3).

use std::time::Duration;

use maxim_core::RecordId;
use nac::{Attribution, Outcome, Valence};

use crate::common::{ctx, default_store, store};

#[test]
fn an_outcome_links_its_event_with_the_delay_between_them() {
    let (mut nac, clock) = default_store();
    let mug = ctx(&[("object", "mug")]);
    let episode = RecordId::from_u128(9);
    let e = nac.record_event("tool", "tool:grasp", &mug, Some(episode)).unwrap();
    clock.advance(Duration::from_secs(2));
    let report =
        nac.record_outcome(&Outcome::of_signature("tool_result", "tool:grasp", Valence::Positive)).unwrap();
    assert_eq!(report.linked.len(), 1);
    assert_eq!(report.linked[0].0, e);
    assert!(report.linked[0].1.created);
    let link = nac.link(report.linked[0].1.link).unwrap();
    assert_eq!(link.outcome_signature(), "tool:grasp:positive");
    assert_eq!(link.context(), &mug);
    assert_eq!(link.mean_delay(), Some(2.0));
    assert_eq!(link.memory_ids().to_vec(), vec![episode]);
    // The event was consumed.
    assert_eq!(nac.pending_events().len(), 0);
    let again =
        nac.record_outcome(&Outcome::of_signature("tool_result", "tool:grasp", Valence::Positive)).unwrap();
    assert!(again.linked.is_empty());
    let s = nac.stats();
    assert_eq!((s.events_recorded, s.outcomes_recorded, s.events_linked), (1, 2, 1));
}

#[test]
fn repeated_event_outcome_pairs_learn_one_link() {
    let (mut nac, clock) = default_store();
    for _ in 0..4 {
        nac.record_event("tool", "tool:grasp", &ctx(&[("object", "mug")]), None).unwrap();
        clock.advance(Duration::from_secs(1));
        nac.record_outcome(&Outcome::of_signature("tool_result", "tool:grasp", Valence::Positive)).unwrap();
        clock.advance(Duration::from_secs(30));
    }
    assert_eq!(nac.len(), 1);
    let link = &nac.links()[0];
    assert_eq!(link.observation_count(), 4);
    assert!((link.predicted_value() - (1.0 - 0.5 * 0.86f64.powi(4))).abs() < 1e-12);
}

#[test]
fn events_outside_the_window_are_not_linked_and_old_ones_expire() {
    let (mut nac, clock) = default_store();
    nac.record_event("tool", "tool:grasp", &ctx(&[]), None).unwrap();
    clock.advance(Duration::from_secs(301));
    let report =
        nac.record_outcome(&Outcome::of_signature("tool_result", "tool:grasp", Valence::Positive)).unwrap();
    assert!(report.linked.is_empty());
    assert_eq!(report.expired, 0);
    assert_eq!(nac.pending_events().len(), 1);
    clock.advance(Duration::from_secs(300));
    let report =
        nac.record_outcome(&Outcome::of_signature("tool_result", "tool:grasp", Valence::Positive)).unwrap();
    assert_eq!(report.expired, 1);
    assert_eq!(nac.pending_events().len(), 0);
    assert!(nac.is_empty());
}

#[test]
fn attribution_by_event_id_links_that_event_only() {
    let (mut nac, clock) = default_store();
    let a = nac.record_event("tool", "tool:grasp", &ctx(&[]), None).unwrap();
    let b = nac.record_event("tool", "tool:grasp", &ctx(&[]), None).unwrap();
    assert_ne!(a, b);
    clock.advance(Duration::from_secs(1));
    let report = nac.record_outcome(&Outcome::of_event("tool_result", b, Valence::Negative)).unwrap();
    assert_eq!(report.linked.len(), 1);
    assert_eq!(report.linked[0].0, b);
    assert_eq!(nac.pending_events().map(|e| e.id).collect::<Vec<_>>(), vec![a]);
    assert_eq!(nac.links()[0].outcome_signature(), "tool:grasp:negative");
    let err = nac.record_outcome(&Outcome::of_event("tool_result", b, Valence::Negative)).unwrap_err();
    assert!(err.is_not_found());
}

#[test]
fn attribution_by_context_needs_similar_contexts() {
    let (mut nac, clock) = default_store();
    nac.record_event("tool", "tool:grasp", &ctx(&[("object", "mug"), ("room", "kitchen")]), None).unwrap();
    nac.record_event("tool", "tool:push", &ctx(&[("object", "box"), ("room", "hall")]), None).unwrap();
    clock.advance(Duration::from_secs(5));
    let outcome_ctx = ctx(&[("object", "Mug"), ("room", "kitchen")]);
    let outcome = Outcome {
        outcome_type: "state_change",
        attribution: Attribution::Context,
        outcome_signature: Some("object:held"),
        valence: Valence::Positive,
        context: &outcome_ctx,
        memory_id: Some(RecordId::from_u128(5)),
    };
    let report = nac.record_outcome(&outcome).unwrap();
    assert_eq!(report.linked.len(), 1);
    let link = nac.link(report.linked[0].1.link).unwrap();
    assert_eq!(link.event_signature(), "tool:grasp");
    assert_eq!(link.outcome_signature(), "object:held");
    assert_eq!(link.memory_ids().to_vec(), vec![RecordId::from_u128(5)]);
    assert_eq!(nac.pending_events().len(), 1);
}

#[test]
fn the_pending_list_is_bounded() {
    let (mut nac, _) = store(crate::common::with(|c| {
        c.max_pending_events = 3;
    }));
    let ids: Vec<_> =
        (0..5).map(|i| nac.record_event("tool", &format!("tool:{i}"), &ctx(&[]), None).unwrap()).collect();
    assert_eq!(nac.pending_events().map(|e| e.id).collect::<Vec<_>>(), ids[2..].to_vec());
    assert_eq!(nac.stats().events_dropped, 2);
}
