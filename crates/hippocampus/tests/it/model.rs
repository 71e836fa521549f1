//! Property tests: the indexed recall and similarity paths agree with a naive model after
//! any sequence of captures (timestamps out of order and tied), removals, compressions and
//! touches, and the layer stays consistent.

use std::collections::BTreeSet;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use hippocampus::{Episode, Hippocampus, HippocampusConfig, NewEpisode, Perception, RecallFilter};
use maxim_core::{EdgeKind, RecordId, Timestamp};
use proptest::prelude::*;

use crate::common::{T0, layer, layer_with};

const OBJECTS: [&str; 5] = ["mug", "cup", "box", "door", "Mug"];
const PEOPLE: [&str; 2] = ["Ana", "Bo"];
const GOALS: [&str; 3] = ["find mug", "open door", ""];
const TOOLS: [&str; 2] = ["look", ""];

#[derive(Debug, Clone)]
enum Op {
    Capture {
        objects: Vec<usize>,
        people: Vec<usize>,
        goal: usize,
        tool: usize,
        success: Option<bool>,
        at: u64,
    },
    Remove(usize),
    Compress(usize),
    Touch(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (
            prop::collection::vec(0..OBJECTS.len(), 0..4),
            prop::collection::vec(0..PEOPLE.len(), 0..2),
            0..GOALS.len(),
            0..TOOLS.len(),
            prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
            0u64..20,
        )
            .prop_map(|(objects, people, goal, tool, success, at)| Op::Capture { objects, people, goal, tool, success, at }),
        1 => (0usize..64).prop_map(Op::Remove),
        1 => (0usize..64).prop_map(Op::Compress),
        1 => (0usize..64).prop_map(Op::Touch),
    ]
}

#[derive(Debug, Clone)]
struct Model {
    id: RecordId,
    ts: Timestamp,
    keys: BTreeSet<String>,
    compressed: bool,
}

fn apply(h: &mut Hippocampus, model: &mut Vec<Model>, op: &Op) {
    match op {
        Op::Capture { objects, people, goal, tool, success, at } => {
            let mut e = NewEpisode::default();
            e.perception.detected_objects = objects.iter().map(|&o| OBJECTS[o].into()).collect();
            e.perception.detected_people = people.iter().map(|&p| PEOPLE[p].into()).collect();
            if !GOALS[*goal].is_empty() {
                e.context.active_goal = Some(GOALS[*goal].into());
            }
            e.action.tool_name = TOOLS[*tool].into();
            e.outcome.success = *success;
            let ts = T0 + Duration::from_secs(*at);
            e.timestamp = Some(ts);
            let mut keys: BTreeSet<String> = BTreeSet::new();
            if !GOALS[*goal].is_empty() {
                keys.insert(format!("goal:{}", GOALS[*goal]));
            }
            if !TOOLS[*tool].is_empty() {
                keys.insert(format!("tool:{}", TOOLS[*tool]));
            }
            let s = match success {
                Some(true) => "True",
                Some(false) => "False",
                None => "None",
            };
            keys.insert(format!("success:{s}"));
            keys.insert("mode:observe".to_owned());
            keys.extend(e.perception.detected_objects.iter().map(|o| format!("object:{o}")));
            keys.extend(e.perception.detected_people.iter().map(|p| format!("person:{p}")));
            let id = h.capture(e).unwrap();
            model.push(Model { id, ts, keys, compressed: false });
        }
        Op::Remove(i) if !model.is_empty() => {
            let m = model.remove(i % model.len());
            h.remove(m.id).unwrap();
        }
        Op::Compress(i) if !model.is_empty() => {
            let n = model.len();
            let m = &mut model[i % n];
            let done = h.compress(m.id).unwrap();
            assert_eq!(done, !m.compressed);
            m.compressed = true;
        }
        Op::Touch(i) if !model.is_empty() => {
            assert_eq!(h.touch(&[model[i % model.len()].id]), 1);
        }
        _ => {}
    }
}

fn newest_first(v: &mut [&Model]) {
    v.sort_by_key(|m| std::cmp::Reverse((m.ts, m.id)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn recall_agrees_with_a_naive_model(
        ops in prop::collection::vec(op(), 1..60),
        goal in prop::option::of(0..GOALS.len() - 1),
        object in prop::option::of(0..OBJECTS.len()),
        person in prop::option::of(0..PEOPLE.len()),
        success in prop::option::of(any::<bool>()),
        window in prop::option::of((0u64..20, 0u64..20)),
        full_only in any::<bool>(),
        limit in 0usize..8,
    ) {
        let (_clock, mut h) = layer();
        let mut model = Vec::new();
        for op in &ops {
            apply(&mut h, &mut model, op);
        }
        prop_assert!(h.check_consistency().is_consistent(), "{:?}", h.check_consistency());
        prop_assert_eq!(h.len(), model.len());

        let mut f = RecallFilter::new();
        let mut wanted: Vec<String> = Vec::new();
        if let Some(g) = goal {
            f = f.goal(GOALS[g]);
            wanted.push(format!("goal:{}", GOALS[g]));
        }
        if let Some(o) = object {
            f = f.object(OBJECTS[o]);
            wanted.push(format!("object:{}", OBJECTS[o]));
        }
        if let Some(p) = person {
            f = f.person(PEOPLE[p]);
            wanted.push(format!("person:{}", PEOPLE[p]));
        }
        if let Some(s) = success {
            f = f.success(s);
            wanted.push(format!("success:{}", if s { "True" } else { "False" }));
        }
        let (after, before) = match window {
            Some((a, b)) => (Some(T0 + Duration::from_secs(a.min(b))), Some(T0 + Duration::from_secs(a.max(b)))),
            None => (None, None),
        };
        f = f.between(after, before);
        if full_only {
            f = f.full_only();
        }
        let mut expected: Vec<&Model> = model
            .iter()
            .filter(|m| wanted.iter().all(|k| m.keys.contains(k)))
            .filter(|m| after.is_none_or(|t| m.ts >= t) && before.is_none_or(|t| m.ts <= t))
            .filter(|m| !(full_only && m.compressed))
            .collect();
        newest_first(&mut expected);
        let expected: Vec<RecordId> = expected.into_iter().take(limit).map(|m| m.id).collect();
        let got: Vec<RecordId> = h.recall(&f, limit).iter().map(|e| e.id()).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn similarity_agrees_with_a_naive_model(
        ops in prop::collection::vec(op(), 1..60),
        objects in prop::collection::vec(0..OBJECTS.len(), 0..4),
        people in prop::collection::vec(0..PEOPLE.len(), 0..3),
        include_compressed in any::<bool>(),
        limit in 0usize..7,
    ) {
        let (_clock, mut h) = layer();
        let mut model = Vec::new();
        for op in &ops {
            apply(&mut h, &mut model, op);
        }
        let probe = Perception {
            detected_objects: objects.iter().map(|&o| OBJECTS[o].into()).collect(),
            detected_people: people.iter().map(|&p| PEOPLE[p].into()).collect(),
            ..Perception::default()
        };
        let query: BTreeSet<String> = probe
            .detected_objects
            .iter()
            .map(|o| format!("object:{o}"))
            .chain(probe.detected_people.iter().map(|p| format!("person:{p}")))
            .collect();
        let mut scored: Vec<(usize, &Model)> = model
            .iter()
            .filter(|m| include_compressed || !m.compressed)
            .map(|m| (m.keys.intersection(&query).count(), m))
            .filter(|(n, _)| *n > 0)
            .collect();
        scored.sort_by_key(|(n, m)| std::cmp::Reverse((*n, m.ts, m.id)));
        let expected: Vec<(RecordId, u32)> = scored.into_iter().take(limit).map(|(n, m)| (m.id, n as u32)).collect();
        let got: Vec<(RecordId, u32)> =
            h.recall_similar(&probe, limit, include_compressed).into_iter().map(|(e, n)| (e.id(), n)).collect();
        prop_assert_eq!(got, expected);
    }
}

/// One step of the eviction model: capture (with a salience that may make it long-term, and
/// objects that may associate it), remove, compress, touch or promote.
#[derive(Debug, Clone)]
enum EvictOp {
    Capture { salience: u8, objects: Vec<usize> },
    Remove(usize),
    Compress(usize),
    Touch(usize),
    Promote(usize),
}

fn evict_op() -> impl Strategy<Value = EvictOp> {
    prop_oneof![
        8 => (0u8..4, prop::collection::vec(0..OBJECTS.len(), 0..3))
            .prop_map(|(salience, objects)| EvictOp::Capture { salience, objects }),
        1 => (0usize..64).prop_map(EvictOp::Remove),
        1 => (0usize..64).prop_map(EvictOp::Compress),
        1 => (0usize..64).prop_map(EvictOp::Touch),
        1 => (0usize..64).prop_map(EvictOp::Promote),
    ]
}

/// The records a capture at capacity must evict: the `batch` lowest (score, timestamp, id)
/// among those that are not long-term, lowest first.
fn naive_victims(h: &Hippocampus, batch: usize) -> Vec<RecordId> {
    let strategy = h.retention_strategy();
    let now = h.now();
    let mut all: Vec<(f64, (Timestamp, RecordId))> = h
        .iter()
        .filter(|r| !r.meta().long_term)
        .map(|r| {
            let degree = match r {
                Episode::Full(_) => h.associative_graph().out_degree(r.id(), Some(EdgeKind::Associates)),
                Episode::Compressed(c) => c.edge_count as usize,
            };
            (strategy.score(r, degree, now), (r.meta().timestamp, r.id()))
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    all.into_iter().take(batch).map(|(_, (_, id))| id).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every eviction removes exactly the lowest-scored batch of records that are not
    /// long-term, whether it scores every record or only its pool, in stores that are
    /// mostly long-term or mostly not.
    #[test]
    fn eviction_agrees_with_a_naive_model(ops in prop::collection::vec(evict_op(), 1..160)) {
        let config = { let mut c = HippocampusConfig::default(); c.max_nodes = 24; c.eviction_fraction = 0.1; c };
        let (clock, mut h) = layer_with(config);
        let deleted = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&deleted);
        h.on_delete(Box::new(move |id| {
            sink.lock().unwrap().push(id);
            Ok(())
        }));
        let mut ids: Vec<RecordId> = Vec::new();
        for op in &ops {
            clock.advance(Duration::from_secs(3_000));
            let pick = |i: usize| ids.get(i % ids.len().max(1)).copied();
            match op {
                EvictOp::Capture { salience, objects } => {
                    let expected = if h.len() >= 24 { naive_victims(&h, 3) } else { Vec::new() };
                    deleted.lock().unwrap().clear();
                    let mut e = NewEpisode::default();
                    // Half the captures are long-term, so stores of every mix arise.
                    e.perception.salience = [0.2, 0.6, 1.0, 1.0][usize::from(*salience)];
                    e.perception.detected_objects = objects.iter().map(|&o| OBJECTS[o].into()).collect();
                    ids.push(h.capture(e).unwrap());
                    prop_assert_eq!(&*deleted.lock().unwrap(), &expected);
                }
                EvictOp::Remove(i) => {
                    if let Some(id) = pick(*i) {
                        let _removed = h.remove(id);
                    }
                }
                EvictOp::Compress(i) => {
                    if let Some(id) = pick(*i) {
                        let _compressed = h.compress(id);
                    }
                }
                EvictOp::Touch(i) => {
                    if let Some(id) = pick(*i) {
                        h.touch(&[id]);
                    }
                }
                EvictOp::Promote(i) => {
                    if let Some(id) = pick(*i) {
                        let _promoted = h.promote(&[id], 1);
                    }
                }
            }
            ids.retain(|&id| h.contains(id));
        }
        prop_assert!(h.check_consistency().is_consistent());
    }
}
