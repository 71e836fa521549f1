//! Random sequences of operations keep every index consistent with the records.

use std::collections::BTreeSet;

use atl::names::name_key;
use atl::{Atl, ConceptFilter, MatchKind, spec};
use maxim_core::{MemoryLayer, MemoryRecord, RecordId, Source, days};
use proptest::prelude::*;

use crate::common::layer;

const NAMES: [&str; 10] = [
    "coffee mug",
    "coffe mug",
    "Coffee_Mugs",
    "room 1",
    "room 2",
    "kitchen",
    "kitchens door",
    "robot arm",
    "robot",
    "arm",
];
const CATEGORIES: [&str; 2] = ["object", "location"];
const TYPES: [&str; 4] = ["IS_A", "RELATED_TO", "CAUSES", "CORRELATES_WITH"];

#[derive(Debug, Clone)]
enum Op {
    Find(usize, usize, bool),
    Remove(usize),
    Relate(usize, usize, usize, f64),
    Unrelate(usize, usize),
    Claim(usize, bool, u8),
    Age(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..NAMES.len(), 0..CATEGORIES.len(), any::<bool>()).prop_map(|(n, c, e)| Op::Find(n, c, e)),
        1 => (0usize..20).prop_map(Op::Remove),
        3 => (0usize..20, 0usize..20, 0..TYPES.len(), 0.0f64..=1.0).prop_map(|(a, b, t, w)| Op::Relate(a, b, t, w)),
        1 => (0usize..20, 0usize..20).prop_map(|(a, b)| Op::Unrelate(a, b)),
        2 => (0usize..20, any::<bool>(), 0u8..3).prop_map(|(a, s, v)| Op::Claim(a, s, v)),
        1 => (0u8..25).prop_map(Op::Age),
    ]
}

fn pick(atl: &Atl, n: usize) -> Option<RecordId> {
    let mut ids: Vec<RecordId> = atl.iter().map(MemoryRecord::id).collect();
    ids.sort_unstable();
    (!ids.is_empty()).then(|| ids[n % ids.len()])
}

fn check_invariants(atl: &Atl) -> Result<(), TestCaseError> {
    let ids: BTreeSet<RecordId> = atl.iter().map(MemoryRecord::id).collect();
    prop_assert_eq!(ids.len(), atl.len());
    prop_assert_eq!(atl.concept_graph().node_count(), atl.len());
    for e in atl.concept_graph().edges() {
        prop_assert!(ids.contains(&e.source) && ids.contains(&e.target));
        prop_assert!(e.relation().is_some_and(|r| atl.registry().contains(r)));
        prop_assert!(e.source != e.target);
        if atl.registry().is_symmetric(e.relation().unwrap()) {
            let back = atl.concept_graph().find_edge(e.target, e.source, Some(e.kind), e.relation()).unwrap();
            prop_assert_eq!((back.weight, back.confidence()), (e.weight, e.confidence()));
        }
    }
    let full = atl.iter().filter(|r| !r.is_compressed()).count();
    prop_assert_eq!(atl.stats().counters["vectors"], full as u64);
    for r in atl.iter() {
        let by_name = atl.recall(&ConceptFilter::new().name(r.name()).category(r.category()), 100);
        prop_assert!(by_name.iter().any(|x| x.id() == r.id()), "recall by name finds {}", r.name());
        for alias in r.aliases() {
            let hit = atl.lookup(alias, r.category());
            prop_assert!(matches!(hit, Some((_, MatchKind::Exact))), "alias {} is indexed", alias);
        }
        let found = atl.lookup(r.name(), r.category()).map(|m| m.0).expect("every name is found");
        let other = atl.peek(found).unwrap();
        prop_assert_eq!(name_key(other.category()), name_key(r.category()));
        let contested = r.as_concept().is_some_and(|c| c.properties.is_contested());
        prop_assert_eq!(atl.is_contested(r.id()), contested);
    }
    prop_assert_eq!(atl.graph().edge_count(), atl.stats().graph_edges);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn operations_keep_indexes_consistent(ops in prop::collection::vec(op(), 1..60)) {
        let (clock, mut atl) = layer();
        for op in ops {
            match op {
                Op::Find(n, c, episode) => {
                    let mut s = spec(NAMES[n], CATEGORIES[c]);
                    s.source_episode = episode.then(|| RecordId::from_u128(n as u128 + 1));
                    atl.find_or_create(&s).unwrap();
                }
                Op::Remove(i) => {
                    if let Some(id) = pick(&atl, i) {
                        atl.remove(id).unwrap();
                    }
                }
                Op::Relate(a, b, t, w) => {
                    if let (Some(a), Some(b)) = (pick(&atl, a), pick(&atl, b)) {
                        let r = atl.define_relationship(a, b, TYPES[t], w, 0.5);
                        prop_assert_eq!(r.is_err(), a == b);
                    }
                }
                Op::Unrelate(a, b) => {
                    if let (Some(a), Some(b)) = (pick(&atl, a), pick(&atl, b)) {
                        atl.remove_relationship(a, b, None).unwrap();
                    }
                }
                Op::Claim(a, trusted, v) => {
                    if let Some(id) = pick(&atl, a) {
                        let source = if trusted { Source::UserStated } else { Source::Web("x.org".into()) };
                        let r = atl.set_property(id, "color", i64::from(v), source, if trusted { 1.0 } else { 0.3 });
                        prop_assert_eq!(r.is_err(), atl.peek(id).unwrap().is_compressed());
                    }
                }
                Op::Age(d) => {
                    clock.advance(days(u64::from(d)));
                    atl.consolidate().unwrap();
                }
            }
            check_invariants(&atl)?;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("atl.snap");
        atl.save(&path).unwrap();
        let mut fresh = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
        fresh.load(&path).unwrap();
        check_invariants(&fresh)?;
        prop_assert_eq!(crate::common::fingerprint(&fresh), crate::common::fingerprint(&atl));
    }
}
