//! Bad input: typed errors, no panics, nothing changed.

use hippocampus::{
    Emotion, EpisodicMemory, Error, HippocampusConfig, LoopStep, MAX_NAMES, NewEpisode, StateRef,
};
use maxim_core::value::{Map, Value};
use maxim_core::{MemoryLayer, RecordId, Timestamp};

use crate::common::{T0, episode, layer};

type Edit = Box<dyn Fn(&mut NewEpisode)>;

fn out_of_range(err: &Error) -> bool {
    matches!(err, Error::Core(maxim_core::Error::OutOfRange { .. }))
}

#[test]
fn out_of_range_numbers_are_refused_and_change_nothing() {
    let (_clock, mut h) = layer();
    let kept = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let before = h.to_snapshot_bytes().unwrap();
    let edits: Vec<Edit> = vec![
        Box::new(|e| e.perception.salience = f64::NAN),
        Box::new(|e| e.perception.salience = 1.01),
        Box::new(|e| e.perception.novelty = -0.5),
        Box::new(|e| e.perception.novelty = f64::INFINITY),
        Box::new(|e| e.decision.confidence = 2.0),
        Box::new(|e| e.context.fear_level = f64::NAN),
        Box::new(|e| e.trust = Some(1.5)),
        Box::new(|e| e.trust = Some(f64::NAN)),
        Box::new(|e| e.emotion = Some(Emotion { intensity: 1.5, valence: 0.0 })),
        Box::new(|e| e.emotion = Some(Emotion { intensity: f64::NAN, valence: 0.0 })),
        Box::new(|e| e.emotion = Some(Emotion { intensity: 0.5, valence: -1.01 })),
    ];
    for (i, edit) in edits.iter().enumerate() {
        let mut e = episode(&["mug"], "find mug", "look", Some(true));
        e.state_snapshot = Some(Value::from("a state"));
        edit(&mut e);
        let err = h.capture(e).unwrap_err();
        assert!(out_of_range(&err), "case {i}: {err}");
    }
    assert_eq!(h.len(), 1);
    assert_eq!(h.state_store().len(), 0, "a refused capture stores no state");
    assert_eq!(h.to_snapshot_bytes().unwrap(), before);
    assert!(h.contains(kept));
    assert_eq!(h.counters().memories_captured, 1);
}

#[test]
fn bad_records_and_duplicates_are_refused() {
    let (_clock, mut h) = layer();
    let mut m = EpisodicMemory::new(RecordId::from_u128(42), T0);
    m.perception.novelty = f64::NAN;
    assert!(out_of_range(&h.capture_record(m.clone()).unwrap_err()));
    m.perception.novelty = 0.2;
    h.capture_record(m.clone()).unwrap();
    assert!(h.capture_record(m.clone()).is_err_and(|e| e.is_duplicate()));
    let compressed = hippocampus::Episode::from(m.compress(0));
    assert!(matches!(h.store(compressed), Err(Error::CompressedStore { .. })));
    assert_eq!(h.len(), 1);
}

#[test]
fn unknown_ids_are_typed_errors() {
    let (_clock, mut h) = layer();
    let a = h.capture(NewEpisode::default()).unwrap();
    let unknown = RecordId::from_u128(7);
    assert!(h.get(unknown).unwrap_err().is_not_found());
    assert!(h.remove(unknown).unwrap_err().is_not_found());
    assert!(h.compress(unknown).unwrap_err().is_not_found());
    assert!(h.link(a, unknown, maxim_core::EdgeKind::Causes, 1.0).unwrap_err().is_not_found());
    assert!(h.associate(unknown, a, 1.0).unwrap_err().is_not_found());
    assert!(matches!(h.get_state(StateRef::from_u64(3)), Err(Error::StateNotFound { .. })));
    assert_eq!(h.touch(&[unknown]), 0);
    assert!(h.peek(unknown).is_none());
    assert!(h.keys_of(unknown).is_empty());
    assert!(h.recall_associated(&[unknown], 10).is_empty());
    assert_eq!(h.len(), 1);
    assert_eq!(h.associative_graph().edge_count(), 0);
}

#[test]
fn bad_edge_weights_are_refused() {
    let (_clock, mut h) = layer();
    let a = h.capture(NewEpisode::default()).unwrap();
    let b = h.capture(NewEpisode::default()).unwrap();
    for w in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(h.link(a, b, maxim_core::EdgeKind::Associates, w).is_err());
        assert!(h.associate(a, b, w).is_err());
    }
    assert_eq!(h.associative_graph().edge_count(), 0);
}

#[test]
fn loose_loop_data_of_the_wrong_shape_is_refused() {
    let (_clock, mut h) = layer();
    let cases: Vec<LoopStep> = vec![
        LoopStep {
            observation: [("salience", Value::from("high"))].into_iter().collect(),
            ..LoopStep::default()
        },
        LoopStep {
            observation: [("salience", Value::from(7.0))].into_iter().collect(),
            ..LoopStep::default()
        },
        LoopStep {
            observation: [("objects", Value::from("mug"))].into_iter().collect(),
            ..LoopStep::default()
        },
        LoopStep { intent: [("goal", Value::from(3i64))].into_iter().collect(), ..LoopStep::default() },
        LoopStep { action: [("params", Value::from("left"))].into_iter().collect(), ..LoopStep::default() },
        LoopStep {
            result: Value::Map([("success", Value::from("yes"))].into_iter().collect::<Map>()),
            ..LoopStep::default()
        },
    ];
    for (i, step) in cases.into_iter().enumerate() {
        assert!(h.capture_from_loop(step).is_err(), "case {i}");
    }
    assert!(h.is_empty());
}

#[test]
fn bad_configurations_are_refused() {
    let clock = maxim_core::ManualClock::new(T0);
    let bad = [
        {
            let mut c = HippocampusConfig::default();
            c.max_nodes = 0;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.eviction_fraction = 1.5;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.eviction_fraction = f64::NAN;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.retention_threshold = 1.5;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.association_threshold = f64::NAN;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.long_term_retention_boost = -2.0;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.default_trust = Some(2.0);
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.state_store_max_entries = 0;
            c
        },
        {
            let mut c = HippocampusConfig::default();
            c.compression_age = std::time::Duration::ZERO;
            c
        },
    ];
    for config in bad {
        assert!(hippocampus::Hippocampus::builder().config(config).clock(clock.shared()).build().is_err());
    }
}

#[test]
fn unparsable_keys_and_refs_are_typed_errors() {
    assert!("colour:red".parse::<hippocampus::IndexKey>().is_err());
    assert!("success:maybe".parse::<hippocampus::IndexKey>().is_err());
    assert!("xyz".parse::<StateRef>().is_err());
    assert!("+00000000000000a".parse::<StateRef>().is_err(), "a sign is not a hex digit");
}

#[test]
fn extreme_timestamps_are_captured_linked_and_kept() {
    let (_clock, mut h) = layer();
    let mut first = episode(&["mug"], "", "", None);
    first.timestamp = Some(Timestamp::from_micros(i64::MIN));
    first.action.execution_start = Some(Timestamp::from_micros(i64::MIN));
    first.action.execution_end = Some(Timestamp::from_micros(i64::MAX));
    let mut last = episode(&["mug"], "", "", None);
    last.timestamp = Some(Timestamp::from_micros(i64::MAX));
    let a = h.capture(first).unwrap();
    let b = h.capture(last).unwrap();
    // 2^64 µs apart: the temporal term 0.15 / (1 + 5.1e9 h) vanishes, leaving 0.6 × 1.
    let links = h.associated_ids(b);
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].0, a);
    assert!((links[0].1 - 0.6).abs() < 1e-9, "weight {}", links[0].1);
    assert!(h.check_consistency().is_consistent());
    let all = h.recall(
        &hippocampus::RecallFilter::new()
            .between(Some(Timestamp::from_micros(i64::MIN)), Some(Timestamp::from_micros(i64::MAX))),
        10,
    );
    assert_eq!(all.iter().map(|e| e.id()).collect::<Vec<_>>(), [b, a]);
    assert!(h.peek(a).unwrap().as_full().unwrap().duration_ms().is_finite());
    let bytes = h.to_snapshot_bytes().unwrap();
    let (_c, mut back) = layer();
    back.load_from_bytes("extreme", &bytes).unwrap();
    assert_eq!(back.to_snapshot_bytes().unwrap(), bytes);
    assert_eq!(h.sleep().preserved, 2);
}

#[test]
fn a_refused_capture_draws_no_id_and_stores_no_state() {
    let (_c1, mut refused) = layer();
    let (_c2, mut clean) = layer();
    let mut bad = episode(&["mug"], "find mug", "look", None);
    bad.state_snapshot = Some(Value::from("a state"));
    bad.perception.salience = f64::NAN;
    assert!(refused.capture(bad).is_err());
    assert!(refused.is_empty() && refused.state_store().is_empty());
    // The seeded id generator was not advanced: both layers draw the same next id.
    let good = episode(&["mug"], "find mug", "look", None);
    assert_eq!(refused.capture(good.clone()).unwrap(), clean.capture(good).unwrap());
}

#[test]
fn an_episode_carries_at_most_max_names_objects_and_people() {
    let (_clock, mut h) = layer();
    let names: Vec<hippocampus::Name> = (0..=MAX_NAMES).map(|i| format!("o{i}").into()).collect();
    let mut e = NewEpisode::default();
    e.perception.detected_objects = names[..100].to_vec();
    e.perception.detected_people = names[100..].to_vec();
    let before = h.to_snapshot_bytes().unwrap();
    for err in [h.capture(e.clone()).unwrap_err(), {
        let mut m = EpisodicMemory::new(RecordId::from_u128(5), T0);
        m.perception = e.perception.clone();
        h.capture_record(m).unwrap_err()
    }] {
        assert!(
            matches!(
                err,
                Error::Core(maxim_core::Error::OutOfRange {
                    field: "detected_objects + detected_people",
                    ..
                })
            ),
            "{err}"
        );
    }
    assert_eq!(h.to_snapshot_bytes().unwrap(), before);
    // At the limit, captures are indexed and associated as any other.
    e.perception.detected_people.pop();
    let a = h.capture(e.clone()).unwrap();
    let b = h.capture(e).unwrap();
    assert_eq!(h.associated_ids(b), vec![(a, 0.6 + 0.15)]);
    assert_eq!(h.memories_by_index(&"person:o127".parse().unwrap()), vec![b, a]);
    assert!(h.check_consistency().is_consistent());
    h.remove(a).unwrap();
    assert!(h.check_consistency().is_consistent());
}
