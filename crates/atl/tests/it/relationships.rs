//! Typed relationships (§5): the registry, define/remove/find/update, merging of repeated
//! definitions.

use atl::{DefineOutcome, Direction, EdgeUpdate, Error, spec};
use maxim_core::{EdgeKind, MemoryLayer, RecordId};

use crate::common::layer;

fn three(atl: &mut atl::Atl) -> [RecordId; 3] {
    ["mug", "container", "kitchen"].map(|n| atl.find_or_create(&spec(n, "object")).unwrap().id)
}

#[test]
fn every_builtin_type_can_be_defined_with_its_symmetry() {
    let (_clock, mut atl) = layer();
    let [a, b, _] = three(&mut atl);
    let names: Vec<(String, bool)> = atl.registry().iter().map(|t| (t.name.clone(), t.symmetric)).collect();
    assert_eq!(names.len(), 15);
    for (name, symmetric) in names {
        let before = atl.concept_graph().edge_count();
        assert_eq!(atl.define_relationship(a, b, &name, 0.5, 0.5).unwrap(), DefineOutcome::Created, "{name}");
        let added = atl.concept_graph().edge_count() - before;
        assert_eq!(added, if symmetric { 2 } else { 1 }, "{name}");
        let kind = if name == "CAUSES" { EdgeKind::Causes } else { EdgeKind::Associates };
        let edge = atl.concept_graph().find_edge(a, b, Some(kind), Some(&name)).expect("the edge exists");
        assert_eq!((edge.weight, edge.confidence()), (0.5, Some(0.5)));
        assert_eq!(
            atl.concept_graph().find_edge(b, a, Some(kind), Some(&name)).is_some(),
            symmetric,
            "{name}"
        );
    }
    assert_eq!(atl.stats().counters["relationships_defined"], 15);
}

#[test]
fn defining_twice_reinforces_instead_of_stacking() {
    let (_clock, mut atl) = layer();
    let [mug, container, _] = three(&mut atl);
    atl.define_relationship(mug, container, "IS_A", 0.6, 0.5).unwrap();
    let again = atl.define_relationship(mug, container, "IS_A", 0.4, 0.5).unwrap();
    assert_eq!(again, DefineOutcome::Reinforced { previous_weight: 0.6, previous_confidence: 0.5 });
    assert_eq!(atl.concept_graph().edge_count(), 1);
    let r = atl.find_relationships(mug, Some("IS_A"), Direction::Outgoing, 5).unwrap();
    assert_eq!((r[0].weight, r[0].confidence), (0.6, 0.55), "the larger weight; confidence + 0.05");
    atl.define_relationship(mug, container, "IS_A", 0.9, 0.8).unwrap();
    let r = atl.find_relationships(mug, Some("IS_A"), Direction::Outgoing, 5).unwrap();
    assert_eq!((r[0].weight, r[0].confidence), (0.9, 0.8 + 0.05));
    for _ in 0..10 {
        atl.define_relationship(mug, container, "IS_A", 0.9, 0.5).unwrap();
    }
    let r = atl.find_relationships(mug, Some("IS_A"), Direction::Outgoing, 5).unwrap();
    assert_eq!(r[0].confidence, 0.95, "reinforcement caps at 0.95");
    assert_eq!(atl.concept_graph().edge_count(), 1);
    assert_eq!(atl.stats().counters["relationships_reinforced"], 12);
}

#[test]
fn a_reverse_symmetric_definition_merges_into_the_pair() {
    let (_clock, mut atl) = layer();
    let [a, b, _] = three(&mut atl);
    atl.define_relationship(a, b, "RELATED_TO", 0.3, 0.5).unwrap();
    let again = atl.define_relationship(b, a, "RELATED_TO", 0.7, 0.5).unwrap();
    assert!(matches!(again, DefineOutcome::Reinforced { previous_weight: 0.3, .. }));
    assert_eq!(atl.concept_graph().edge_count(), 2);
    for (s, t) in [(a, b), (b, a)] {
        let r = atl.find_relationships(s, Some("RELATED_TO"), Direction::Outgoing, 5).unwrap();
        assert_eq!((r.len(), r[0].target, r[0].weight, r[0].confidence), (1, t, 0.7, 0.55));
    }
    // A non-symmetric type in the other direction is another relationship.
    atl.define_relationship(a, b, "HAS_PART", 1.0, 0.5).unwrap();
    atl.define_relationship(b, a, "HAS_PART", 1.0, 0.5).unwrap();
    assert_eq!(atl.concept_graph().edge_count(), 4);
}

#[test]
fn remove_takes_the_symmetric_reverse_along() {
    let (_clock, mut atl) = layer();
    let [a, b, c] = three(&mut atl);
    atl.define_relationship(a, b, "RELATED_TO", 0.5, 0.5).unwrap();
    atl.define_relationship(a, b, "IS_A", 0.5, 0.5).unwrap();
    atl.define_relationship(b, a, "IS_A", 0.5, 0.5).unwrap();
    atl.define_relationship(a, c, "CAUSES", 0.5, 0.5).unwrap();
    assert_eq!(atl.remove_relationship(a, b, Some("IS_A")).unwrap(), 1, "only a -> b");
    assert_eq!(atl.remove_relationship(b, a, Some("RELATED_TO")).unwrap(), 2, "both directions");
    assert_eq!(atl.remove_relationship(a, b, Some("RELATED_TO")).unwrap(), 0);
    assert_eq!(atl.concept_graph().edge_count(), 2);
    assert_eq!(atl.remove_relationship(a, c, None).unwrap(), 1);
    assert!(matches!(atl.remove_relationship(a, c, Some("NOPE")), Err(Error::UnknownRelationship { .. })));
}

#[test]
fn find_by_direction_type_and_limit() {
    let (_clock, mut atl) = layer();
    let [mug, container, kitchen] = three(&mut atl);
    atl.define_relationship(mug, container, "IS_A", 0.9, 0.7).unwrap();
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.4, 0.5).unwrap();
    atl.define_relationship(kitchen, container, "HAS_PART", 0.6, 0.5).unwrap();
    let out = atl.find_relationships(mug, None, Direction::Outgoing, 20).unwrap();
    assert_eq!(
        out.iter().map(|r| (r.target, r.relationship)).collect::<Vec<_>>(),
        [(container, "IS_A"), (kitchen, "RELATED_TO")]
    );
    let into_container = atl.find_relationships(container, None, Direction::Incoming, 20).unwrap();
    assert_eq!(into_container.iter().map(|r| r.source).collect::<Vec<_>>(), [mug, kitchen]);
    let kitchen_all = atl.find_relationships(kitchen, None, Direction::Both, 20).unwrap();
    assert_eq!(kitchen_all.len(), 2, "HAS_PART out, RELATED_TO once");
    assert_eq!(atl.find_relationships(mug, None, Direction::Outgoing, 1).unwrap().len(), 1);
    assert!(atl.find_relationships(mug, Some("PREDICTS"), Direction::Both, 20).unwrap().is_empty());
    assert_eq!(atl.relationships_of(mug).unwrap().len(), 2);
}

#[test]
fn update_follows_the_run_values() {
    // [run] +0.9 on 0.3 → 0.95 on both directions; −5 → 0.05.
    let (_clock, mut atl) = layer();
    let [a, b, _] = three(&mut atl);
    atl.define_relationship(a, b, "RELATED_TO", 1.0, 0.3).unwrap();
    let up = EdgeUpdate { confidence_delta: Some(0.9), ..EdgeUpdate::default() };
    assert!(atl.update_relationship(a, b, "RELATED_TO", up).unwrap());
    for s in [a, b] {
        assert_eq!(atl.find_relationships(s, None, Direction::Outgoing, 5).unwrap()[0].confidence, 0.95);
    }
    let down = EdgeUpdate { confidence_delta: Some(-5.0), ..EdgeUpdate::default() };
    assert!(atl.update_relationship(a, b, "RELATED_TO", down).unwrap());
    for s in [a, b] {
        assert_eq!(atl.find_relationships(s, None, Direction::Outgoing, 5).unwrap()[0].confidence, 0.05);
    }
    let weight = EdgeUpdate { weight: Some(0.25), ..EdgeUpdate::default() };
    assert!(atl.update_relationship(b, a, "RELATED_TO", weight).unwrap());
    assert_eq!(atl.find_relationships(a, None, Direction::Outgoing, 5).unwrap()[0].weight, 0.25);
    assert!(!atl.update_relationship(a, b, "IS_A", weight).unwrap(), "no such relationship");
}

#[test]
fn proposed_types_work_and_persist_as_not_builtin() {
    let (clock, mut atl) = layer();
    let [a, b, _] = three(&mut atl);
    assert!(atl.propose_relationship_type("OPPOSES", "works against", true).unwrap());
    assert!(!atl.propose_relationship_type("OPPOSES", "again", false).unwrap());
    assert!(!atl.propose_relationship_type("IS_A", "redefined", true).unwrap());
    assert!(matches!(
        atl.propose_relationship_type("opposes", "", true),
        Err(Error::InvalidRelationshipName { .. })
    ));
    atl.define_relationship(a, b, "OPPOSES", 0.8, 0.5).unwrap();
    assert_eq!(atl.concept_graph().edge_count(), 2, "proposed symmetric type");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    atl.save(&path).unwrap();
    let mut fresh =
        atl::Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
    fresh.load(&path).unwrap();
    let t = fresh.registry().get("OPPOSES").unwrap();
    assert!(t.symmetric && !t.builtin);
    assert_eq!(fresh.registry().len(), 16);
    assert!(!fresh.registry().get("IS_A").unwrap().symmetric);
    assert_eq!(fresh.find_relationships(b, Some("OPPOSES"), Direction::Outgoing, 5).unwrap()[0].target, a);
}

#[test]
fn removing_a_concept_removes_its_relationships() {
    let (_clock, mut atl) = layer();
    let [a, b, c] = three(&mut atl);
    atl.define_relationship(a, b, "RELATED_TO", 0.5, 0.5).unwrap();
    atl.define_relationship(c, b, "IS_A", 0.5, 0.5).unwrap();
    atl.remove(b).unwrap();
    assert_eq!(atl.concept_graph().edge_count(), 0);
    assert!(atl.find_relationships(a, None, Direction::Both, 10).unwrap().is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Asked for the top `limit`, `find_relationships` (which skips edges lighter than the
    /// lightest it holds) returns exactly the first `limit` of every relationship sorted in
    /// its documented order, in each direction and for one type or all; weights repeat so
    /// that ties reach the later keys.
    #[test]
    fn the_top_few_relationships_are_those_of_a_full_sort(
        edges in proptest::collection::vec((0..12usize, 0..12usize, 0..4usize, 0..5u8, 0..4u8), 1..120),
        limit in 1..12usize,
        typed in proptest::bool::ANY,
    ) {
        let (_clock, mut atl) = layer();
        let ids: Vec<RecordId> =
            (0..12).map(|i| atl.find_or_create(&spec(&format!("concept number {i}"), "object")).unwrap().id).collect();
        let types = ["IS_A", "RELATED_TO", "CAUSES", "HAS_PART"];
        for (s, t, k, w, c) in edges {
            if s != t {
                let (w, c) = (f64::from(w) / 4.0, f64::from(c) / 4.0);
                atl.define_relationship(ids[s], ids[t], types[k], w, c).unwrap();
            }
        }
        let relationship = typed.then_some("RELATED_TO");
        for id in ids {
            for direction in [Direction::Outgoing, Direction::Incoming, Direction::Both] {
                let mut all = atl.find_relationships(id, relationship, direction, usize::MAX).unwrap();
                all.sort_by(|a, b| {
                    b.weight
                        .total_cmp(&a.weight)
                        .then(b.confidence.total_cmp(&a.confidence))
                        .then(a.other(id).cmp(&b.other(id)))
                        .then(a.relationship.cmp(b.relationship))
                        .then(a.source.cmp(&b.source))
                });
                all.truncate(limit);
                let top = atl.find_relationships(id, relationship, direction, limit).unwrap();
                proptest::prop_assert_eq!(top, all, "{:?}", direction);
            }
        }
    }
}
