//! Property tests: the indexed recall and similarity paths agree with a naive model after
//! any sequence of captures (timestamps out of order and tied), removals, compressions and
//! touches, and the layer stays consistent.

use std::collections::BTreeSet;
use std::time::Duration;

use hippocampus::{Hippocampus, NewEpisode, Perception, RecallFilter};
use maxim_core::{RecordId, Timestamp};
use proptest::prelude::*;

use crate::common::{T0, layer};

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
