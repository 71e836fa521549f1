//! Capture (§3.3), the context index (§3.4) and association formation (§3.5), with the
//! spec's [run] vectors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hippocampus::{HippocampusConfig, IndexKey, LoopStep, NewEpisode, RecallFilter};
use maxim_core::value::{Map, Value};
use maxim_core::{EdgeKind, RecordId, Source};

use crate::common::{T0, episode, layer, layer_with};

#[test]
fn index_keys_match_the_run_vector() {
    let (_clock, mut h) = layer();
    h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    h.capture(episode(&["mug", "cup"], "grab mug", "", Some(false))).unwrap();
    let keys: Vec<String> = h.index_keys().iter().map(ToString::to_string).collect();
    assert_eq!(
        keys,
        [
            "goal:find mug",
            "goal:grab mug",
            "mode:observe",
            "object:cup",
            "object:mug",
            "success:False",
            "success:True",
            "tool:look"
        ]
    );
    assert_eq!(h.memories_by_index(&"object:mug".parse().unwrap()).len(), 3);
    assert_eq!(h.memories_by_index(&IndexKey::Object("cup".into())).len(), 1);
    assert!(h.memories_by_index(&IndexKey::Object("plate".into())).is_empty());
}

#[test]
fn association_weights_and_touches_match_the_run_vectors() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let b = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let c = h.capture(episode(&["mug", "cup"], "grab mug", "", Some(false))).unwrap();
    // Same object, same goal, same second: 0.6 + 0.25 + 0.15 = 1.0.
    assert_eq!(h.associative_graph().find_edge(a, b, Some(EdgeKind::Associates), None).unwrap().weight, 1.0);
    assert_eq!(h.associative_graph().find_edge(b, a, Some(EdgeKind::Associates), None).unwrap().weight, 1.0);
    // Goals "find mug" / "grab mug": Jaccard 1/3, so 0.6 + 0.0833 + 0.15.
    let w = h.associative_graph().find_edge(c, a, Some(EdgeKind::Associates), None).unwrap().weight;
    assert!((w - 0.833_333_333).abs() < 1e-9, "{w}");
    assert_eq!(h.peek(a).unwrap().meta().access_count, 3);
    assert_eq!(h.peek(b).unwrap().meta().access_count, 2);
    assert_eq!(h.peek(c).unwrap().meta().access_count, 1);
    assert_eq!(h.counters().edges_formed, 3);
    assert_eq!(h.associative_graph().edge_count(), 6);
}

#[test]
fn the_first_episode_is_no_graph_node_until_something_associates_with_it() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "", "", None)).unwrap();
    assert!(!h.associative_graph().contains(a));
    let lonely = h.capture(episode(&["plate"], "", "", None)).unwrap();
    assert!(!h.associative_graph().contains(lonely));
    h.capture(episode(&["mug"], "", "", None)).unwrap();
    assert!(h.associative_graph().contains(a));
}

#[test]
fn the_temporal_term_falls_with_distance_in_time() {
    let (clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "", "", None)).unwrap();
    clock.advance(Duration::from_secs(3600));
    let b = h.capture(episode(&["mug"], "", "", None)).unwrap();
    // 0.6 + 0.15 / (1 + 1): no goal term without goals.
    assert_eq!(h.associated_ids(b), vec![(a, 0.6 + 0.075)]);
}

#[test]
fn scores_are_normalised_by_the_best_and_cut_at_the_threshold() {
    let (clock, mut h) = layer();
    let one = h.capture(episode(&["a"], "", "", None)).unwrap();
    let two = h.capture(episode(&["a", "b"], "", "", None)).unwrap();
    let three = h.capture(episode(&["a", "b", "c"], "", "", None)).unwrap();
    clock.advance(Duration::from_secs(7200));
    let new = h.capture(episode(&["a", "b", "c"], "", "", None)).unwrap();
    let links: Vec<RecordId> = h.associated_ids(new).into_iter().map(|(id, _)| id).collect();
    // Shares 3 with `three` (1.0), 2 with `two` (2/3), 1 with `one` (1/3 < 0.5: not linked).
    assert!(links.contains(&three) && links.contains(&two) && !links.contains(&one));
    let w = h.associated_ids(new).into_iter().find(|e| e.0 == two).unwrap().1;
    assert!((w - (0.6 * (2.0 / 3.0) + 0.15 / 3.0)).abs() < 1e-12);
}

#[test]
fn at_most_five_associations_newest_first() {
    let (clock, mut h) = layer();
    let old: Vec<RecordId> = (0..8)
        .map(|_| {
            clock.advance(Duration::from_secs(60));
            h.capture(episode(&["mug", "cup"], "", "", None)).unwrap()
        })
        .collect();
    let new = h.capture(episode(&["mug", "cup"], "", "", None)).unwrap();
    let mut links: Vec<RecordId> = h.associated_ids(new).into_iter().map(|(id, _)| id).collect();
    links.sort_unstable();
    assert_eq!(links, old[3..]);
}

#[test]
fn a_thousand_overlapping_captures_form_five_links_each() {
    // §14's benchmark captures objects [mug, cup] 1,000 times ("about 9,940 directed edges").
    let (clock, mut h) = layer();
    for _ in 0..1000 {
        clock.advance(Duration::from_millis(10));
        h.capture(episode(&["mug", "cup"], "", "", None)).unwrap();
    }
    assert_eq!(h.associative_graph().edge_count(), 2 * (1 + 2 + 3 + 4 + 995 * 5));
}

#[test]
fn salience_or_novelty_at_095_promotes_at_once_and_others_queue() {
    let (_clock, mut h) = layer();
    let mut e = NewEpisode::default();
    e.perception.salience = 0.95;
    let salient = h.capture(e.clone()).unwrap();
    e.perception.salience = 0.5;
    e.perception.novelty = 0.95;
    let novel = h.capture(e.clone()).unwrap();
    e.perception.novelty = 0.71;
    let queued = h.capture(e.clone()).unwrap();
    e.perception.novelty = 0.7;
    let plain = h.capture(e.clone()).unwrap();
    e.perception.cli_input = Some("hello".into());
    let spoken = h.capture(e).unwrap();
    for id in [salient, novel] {
        let meta = h.peek(id).unwrap().meta();
        assert!(meta.long_term);
        assert_eq!(meta.consolidated_at, Some(T0));
    }
    assert_eq!(h.counters().long_term_count, 2);
    assert_eq!(h.consolidation_candidates().collect::<Vec<_>>(), vec![queued, spoken]);
    assert!(!h.peek(plain).unwrap().meta().long_term);
}

#[test]
fn the_candidate_queue_rotates_out_its_oldest() {
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_consolidation_candidates = 3;
        c
    };
    let (_clock, mut h) = layer_with(config);
    let mut e = NewEpisode::default();
    e.perception.salience = 0.8;
    let ids: Vec<RecordId> = (0..5).map(|_| h.capture(e.clone()).unwrap()).collect();
    assert_eq!(h.consolidation_candidates().collect::<Vec<_>>(), ids[2..]);
}

#[test]
fn eviction_at_capacity_takes_the_weakest_and_never_a_long_term_record() {
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_nodes = 3;
        c
    };
    let (clock, mut h) = layer_with(config);
    let mut e = NewEpisode::default();
    e.perception.salience = 0.99;
    let kept = h.capture(e).unwrap(); // long-term, and the oldest
    clock.advance(Duration::from_secs(3600));
    let weak = h.capture(NewEpisode::default()).unwrap();
    clock.advance(Duration::from_secs(3600));
    let strong = h.capture(NewEpisode::default()).unwrap();
    h.touch(&[strong]);
    let deleted = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&deleted);
    h.on_delete(Box::new(move |id| {
        sink.lock().unwrap().push(id);
        Ok(())
    }));
    let newest = h.capture(NewEpisode::default()).unwrap();
    assert_eq!(h.len(), 3);
    assert!(h.contains(kept) && h.contains(strong) && h.contains(newest));
    assert!(!h.contains(weak));
    assert_eq!(*deleted.lock().unwrap(), vec![weak]);
    assert_eq!(h.counters().evictions, 1);
    assert!(h.check_consistency().is_consistent());
}

#[test]
fn a_full_store_evicts_the_lowest_scored_batch_at_once() {
    // Capacity 200, 5%: one eviction removes 10 records, the 10 lowest scores at that time.
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_nodes = 200;
        c.eviction_fraction = 0.05;
        c
    };
    let (clock, mut h) = layer_with(config);
    let mut e = NewEpisode::default();
    e.perception.salience = 0.99;
    let long_term = h.capture(e).unwrap(); // the oldest and weakest, but long-term
    let mut ids = Vec::new();
    for i in 0..199 {
        clock.advance(Duration::from_secs(60));
        ids.push(h.capture(episode(&[], "", if i % 3 == 0 { "look" } else { "" }, None)).unwrap());
    }
    clock.advance(Duration::from_secs(60));
    h.touch(&ids[..5]); // the five oldest are now among the freshest
    let strategy = h.retention_strategy();
    let now = clock.now();
    let mut expected: Vec<(f64, RecordId)> =
        h.iter().filter(|r| !r.meta().long_term).map(|r| (strategy.score(r, 0, now), r.id())).collect();
    expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let expected: Vec<RecordId> = expected.into_iter().take(10).map(|e| e.1).collect();
    assert_eq!(expected, ids[5..15], "the model: the oldest untouched");
    let deleted = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&deleted);
    h.on_delete(Box::new(move |id| {
        sink.lock().unwrap().push(id);
        Ok(())
    }));
    let newest = h.capture(NewEpisode::default()).unwrap();
    assert_eq!(*deleted.lock().unwrap(), expected, "lowest first");
    assert_eq!((h.len(), h.counters().evictions), (191, 10));
    assert!(h.contains(long_term) && h.contains(newest) && ids[..5].iter().all(|&id| h.contains(id)));
    assert!(h.check_consistency().is_consistent());
    // The room is filled without evicting; the next capture at capacity evicts a batch again.
    for _ in 0..9 {
        h.capture(NewEpisode::default()).unwrap();
    }
    assert_eq!((h.len(), h.counters().evictions), (200, 10));
    h.capture(NewEpisode::default()).unwrap();
    assert_eq!((h.len(), h.counters().evictions), (191, 20));
    // Fraction 0 evicts one at a time, as the original did.
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_nodes = 3;
        c.eviction_fraction = 0.0;
        c
    };
    let (_c, mut one) = layer_with(config);
    for _ in 0..5 {
        one.capture(NewEpisode::default()).unwrap();
    }
    assert_eq!((one.len(), one.counters().evictions), (3, 2));
}

#[test]
fn with_only_long_term_records_the_store_goes_over_capacity() {
    let config = {
        let mut c = HippocampusConfig::default();
        c.max_nodes = 2;
        c
    };
    let (_clock, mut h) = layer_with(config);
    let mut e = NewEpisode::default();
    e.perception.novelty = 1.0;
    for _ in 0..3 {
        h.capture(e.clone()).unwrap();
    }
    assert_eq!(h.len(), 3);
    assert_eq!(h.counters().over_capacity_inserts, 1);
}

#[test]
fn capture_callbacks_see_the_stored_record() {
    let (_clock, mut h) = layer();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    h.on_capture(Box::new(move |id, rec| {
        assert_eq!(rec.id(), id);
        sink.lock().unwrap().push((id, rec.goal().map(str::to_owned)));
        Ok(())
    }));
    let id = h.capture(episode(&[], "find mug", "", None)).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(id, Some("find mug".to_owned()))]);
}

#[test]
fn the_hub_fixture_capture_from_loop() {
    // §14 test_memory_hub: capture, then recall by goal and by success.
    let (_clock, mut h) = layer();
    let observation: Map = [
        ("objects", Value::List(vec!["mug".into(), "table".into()])),
        ("salience", Value::from(0.7)),
        ("novelty", Value::from(0.6)),
        ("cli_input", Value::from("find the mug")),
    ]
    .into_iter()
    .collect();
    let id = h
        .capture_from_loop(LoopStep {
            observation,
            state: Some(Value::Map([("mode", Value::from("exploration"))].into_iter().collect())),
            intent: [("goal", Value::from("find mug")), ("action", Value::from("look_around"))]
                .into_iter()
                .collect(),
            decision: [("confidence", Value::from(0.8))].into_iter().collect(),
            action: [
                ("tool", Value::from("look_around")),
                ("params", Value::Map([("direction", Value::from("left"))].into_iter().collect())),
            ]
            .into_iter()
            .collect(),
            result: Value::Map(
                [
                    ("found", Value::from(true)),
                    ("object", Value::from("mug")),
                    ("success", Value::from(true)),
                ]
                .into_iter()
                .collect(),
            ),
            ..LoopStep::default()
        })
        .unwrap();
    assert_eq!(h.len(), 1);
    let found = h.recall(&RecallFilter::new().goal("find mug"), 10);
    assert_eq!(found.len(), 1);
    let m = found[0].as_full().unwrap();
    assert_eq!(m.context.active_goal.as_deref(), Some("find mug"));
    assert_eq!(&*m.context.active_mode, "exploration");
    assert_eq!(m.decision.confidence, 0.8);
    assert_eq!(h.recall(&RecallFilter::new().success(true), 10).len(), 1);
    assert_eq!(h.recall(&RecallFilter::new().success(false), 10).len(), 0);
    // The state snapshot went to the state store; the episode keeps its reference.
    let r = m.context.state_ref.unwrap();
    assert_eq!(h.state_store().len(), 1);
    assert!(h.get_state(r).is_ok());
    assert_eq!(h.peek(id).unwrap().summary().tool, "look_around");
    // salience 0.7 is not above 0.7, but the user spoke: queued for consolidation.
    assert_eq!(h.consolidation_candidates().collect::<Vec<_>>(), vec![id]);
}

#[test]
fn sources_trust_and_partitions_are_recorded() {
    let (_clock, mut h) = layer();
    let plain = h.capture(NewEpisode::default()).unwrap();
    let meta = h.peek(plain).unwrap().meta();
    assert_eq!(meta.source, Source::Episodic);
    assert_eq!(meta.trust.get(), 0.6);
    assert_eq!(meta.trace.kind(), maxim_core::TraceKind::Episodic);
    let web = h
        .capture(NewEpisode {
            source: Some(Source::Web("example.com".into())),
            trust: Some(0.2),
            partition: Some(maxim_core::Partition::new("user-7").unwrap()),
            ..NewEpisode::default()
        })
        .unwrap();
    let meta = h.peek(web).unwrap().meta();
    assert_eq!((meta.source.to_string().as_str(), meta.trust.get()), ("web:example.com", 0.2));
    assert_eq!(meta.partition.as_str(), "user-7");
}

#[test]
fn equal_state_snapshots_share_one_entry() {
    let (_clock, mut h) = layer();
    let state = Value::Map([("battery", Value::from(0.5))].into_iter().collect());
    let a = h.capture(NewEpisode { state_snapshot: Some(state.clone()), ..NewEpisode::default() }).unwrap();
    let b = h.capture(NewEpisode { state_snapshot: Some(state), ..NewEpisode::default() }).unwrap();
    let ra = h.peek(a).unwrap().as_full().unwrap().context.state_ref;
    assert_eq!(ra, h.peek(b).unwrap().as_full().unwrap().context.state_ref);
    assert_eq!(h.state_store().len(), 1);
    assert_eq!(ra.unwrap().to_string().len(), 16);
}

#[test]
fn names_are_shared_between_episodes_and_forgotten_with_them() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "find mug", "look", None)).unwrap();
    let b = h.capture(episode(&["mug"], "find mug", "look", None)).unwrap();
    let name = |id| h.peek(id).unwrap().as_full().unwrap().perception.detected_objects[0].clone();
    assert!(Arc::ptr_eq(&name(a), &name(b)), "one allocation for every `mug`");
    let goal = |id| h.peek(id).unwrap().as_full().unwrap().context.active_goal.clone().unwrap();
    assert!(Arc::ptr_eq(&goal(a), &goal(b)));
    let shared_goal = goal(b);
    // Compression keeps sharing the goal and the tool.
    h.compress(a).unwrap();
    let c = h.peek(a).unwrap().as_compressed().unwrap().goal.clone().unwrap();
    assert!(Arc::ptr_eq(&c, &shared_goal));
}
