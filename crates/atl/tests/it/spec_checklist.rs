//! The "ATL concept tests" of `spec/maxim-reference.md` §14 and the `[run]` values of §4–5.
//!
//! Where maxim deliberately differs from the original, the test says so and asserts maxim's
//! behaviour (see `docs/decisions.md`).

use atl::{
    Atl, CompressedSemantic, Concept, ConceptFilter, Direction, MAX_REFS_PER_LAYER, SemanticMemory,
    SemanticRecord, confidence_for, spec,
};
use maxim_core::{ConceptProvenance, LayerKind, MemoryLayer, MemoryRecord, RecordId};

use crate::common::{T0, layer};

fn with_episode(name: &str, category: &str, episode: u128) -> maxim_core::ConceptSpec {
    let mut s = spec(name, category);
    s.source_episode = Some(RecordId::from_u128(episode));
    s
}

#[test]
fn a_concept_is_a_semantic_memory_with_keywords_and_no_refs() {
    let c: SemanticMemory = Concept::new(RecordId::from_u128(1), "mug", "object", T0).unwrap();
    assert!(c.keywords().contains("mug") && c.keywords().contains("object"));
    assert_eq!(c.memory_refs.count(None), 0);
    assert_eq!(c.memory_refs.count(Some(LayerKind::Hippocampus)), 0, "missing refs count 0");
    assert_eq!(c.memory_refs.cap(), MAX_REFS_PER_LAYER);
}

#[test]
fn refs_through_the_layer_touch_and_deduplicate() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let before = atl.peek(mug).unwrap().meta().access_count;
    let ep = RecordId::from_u128(77);
    assert!(atl.add_ref(mug, LayerKind::Hippocampus, ep).unwrap());
    assert!(!atl.add_ref(mug, LayerKind::Hippocampus, ep).unwrap(), "duplicates are ignored");
    assert!(atl.add_ref(mug, LayerKind::AngularGyrus, RecordId::from_u128(78)).unwrap());
    assert_eq!(atl.peek(mug).unwrap().meta().access_count, before + 2, "add_ref raises access_count");
    let refs = &atl.concept(mug).unwrap().memory_refs;
    assert_eq!((refs.count(Some(LayerKind::Hippocampus)), refs.count(None)), (1, 2));
    assert!(!atl.remove_ref(mug, LayerKind::Cerebellum, ep).unwrap(), "removing a missing ref is harmless");
    assert!(atl.remove_ref(mug, LayerKind::Hippocampus, ep).unwrap());
}

#[test]
fn find_or_create_then_reinforce_with_another_episode() {
    let (_clock, mut atl) = layer();
    let first = atl.find_or_create(&with_episode("mug", "object", 1)).unwrap();
    assert!(first.created);
    assert!(atl.concept(first.id).is_some(), "find_or_create makes a full concept");
    let confidence = atl.concept(first.id).unwrap().confidence;
    let second = atl.find_or_create(&with_episode("mug", "object", 2)).unwrap();
    assert_eq!((second.id, second.created, second.reinforced), (first.id, false, true));
    let c = atl.concept(first.id).unwrap();
    assert_eq!(c.reinforcement_count, 2);
    assert!(c.confidence > confidence);
    assert_eq!(c.source_episode_ids, [RecordId::from_u128(1), RecordId::from_u128(2)]);
}

#[test]
fn confidence_run_values() {
    // [run] n=5 → 0.7236 and n=11 → 0.8317 hold; n=2 differs on purpose: the original halved the
    // slope below n = 3 (0.5707), maxim follows the seed's formula everywhere (0.6414).
    assert!((confidence_for(5) - 0.7236).abs() < 5e-5);
    assert!((confidence_for(11) - 0.8317).abs() < 5e-5);
    assert!((confidence_for(2) - 0.6414).abs() < 5e-5);
    assert_eq!(confidence_for(25), 0.99);
    let (_clock, mut atl) = layer();
    let id = atl.find_or_create(&with_episode("mug", "object", 1)).unwrap().id;
    for ep in 2..=11 {
        atl.find_or_create(&with_episode("mug", "object", ep)).unwrap();
    }
    let c = atl.concept(id).unwrap();
    assert_eq!(c.reinforcement_count, 11);
    assert_eq!(c.confidence, confidence_for(11));
}

#[test]
fn coffee_mug_spellings_are_one_concept_unlike_the_original() {
    // [run] the original created two concepts for "coffee_mug" and "coffee mug"; the seed asks
    // for one, and maxim builds what the seed asks.
    let (_clock, mut atl) = layer();
    let a = atl.find_or_create(&spec("coffee_mug", "object")).unwrap();
    let b = atl.find_or_create(&spec("coffee mug", "object")).unwrap();
    assert_eq!(a.id, b.id);
    assert!(a.created && !b.created);
}

#[test]
fn get_touches_and_unknown_is_an_error() {
    let (clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    clock.advance(std::time::Duration::from_secs(5));
    assert_eq!(atl.get(mug).unwrap().meta().access_count, 2);
    assert_eq!(atl.peek(mug).unwrap().meta().accessed_at, clock.now());
    assert!(atl.get(RecordId::from_u128(404)).is_err(), "the original returned null; maxim an error");
}

#[test]
fn recall_by_name_category_and_limit() {
    let (_clock, mut atl) = layer();
    for (name, category) in [("mug", "object"), ("chair", "object"), ("Dennis", "person")] {
        atl.find_or_create(&spec(name, category)).unwrap();
    }
    assert_eq!(atl.recall(&ConceptFilter::new().name("mug"), 10).len(), 1);
    let objects: Vec<&str> =
        atl.recall(&ConceptFilter::new().category("object"), 10).iter().map(|r| r.name()).collect();
    assert_eq!(objects.len(), 2);
    assert!(objects.contains(&"mug") && objects.contains(&"chair"));
    let (_clock, mut ten) = layer();
    for j in 0..10 {
        ten.find_or_create(&spec(&format!("thing {j}"), "object")).unwrap();
    }
    assert_eq!(ten.recall(&ConceptFilter::new(), 3).len(), 3);
}

#[test]
fn recall_by_ids_does_not_touch_and_skips_unknown() {
    let (clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    clock.advance(std::time::Duration::from_secs(5));
    let got = atl.recall_by_ids(&[RecordId::from_u128(1), mug]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].meta().access_count, 1);
}

#[test]
fn related_concepts_are_recalled_and_found_and_stats_count() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let kitchen = atl.find_or_create(&spec("kitchen", "location")).unwrap().id;
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.5).unwrap();
    let near: Vec<RecordId> = atl.recall_associated(&[mug], 10).iter().map(|(r, _)| r.id()).collect();
    assert!(near.contains(&kitchen));
    let found = atl.find_relationships(mug, Some("RELATED_TO"), Direction::Outgoing, 20).unwrap();
    assert!(found.iter().any(|r| r.target == kitchen));
    let stats = atl.stats();
    assert_eq!((stats.records, stats.counters["concepts_stored"]), (2, 2));
    assert_eq!(stats.counters["relationship_types"], 15);
    atl.remove(mug).unwrap();
    atl.remove(kitchen).unwrap();
    assert!(atl.get(mug).is_err());
    assert_eq!(atl.len(), 0);
}

#[test]
fn relation_weight_point_three_gives_point_one_five() {
    // [run] relation weight 0.3 from the seed → neighbour score 0.15.
    let (_clock, mut atl) = layer();
    let a = atl.find_or_create(&spec("a thing", "object")).unwrap().id;
    let b = atl.find_or_create(&spec("another", "object")).unwrap().id;
    atl.define_relationship(a, b, "HAS_PART", 0.3, 0.5).unwrap();
    let near = atl.recall_associated(&[a], 10);
    assert_eq!(near.len(), 1);
    assert_eq!((near[0].0.id(), near[0].1), (b, 0.15));
    assert!(atl.recall_associated(&[b], 10).is_empty(), "direction matters");
}

#[test]
fn recall_associated_touching_records_accesses() {
    let (clock, mut atl) = layer();
    let a = atl.find_or_create(&spec("a thing", "object")).unwrap().id;
    let b = atl.find_or_create(&spec("another", "object")).unwrap().id;
    atl.define_relationship(a, b, "CAUSES", 1.0, 0.5).unwrap();
    clock.advance(std::time::Duration::from_secs(9));
    assert_eq!(atl.recall_associated_touching(&[a], 10), [(b, 0.5)]);
    assert_eq!(atl.peek(b).unwrap().meta().accessed_at, clock.now());
    assert_eq!(atl.peek(a).unwrap().meta().access_count, 1, "seeds are not touched");
}

#[test]
fn save_load_restores_every_kind_of_record() {
    let (clock, mut atl) = layer();
    let mut mug = atl.new_concept("mug", "object").unwrap().with_definition("a cup with a handle");
    mug.provenance = ConceptProvenance::DirectIngestion;
    mug.add_ref(LayerKind::Hippocampus, RecordId::from_u128(5), T0);
    let mug = atl.store(mug.into()).unwrap();
    let fact = atl.new_concept("fact", "fact").unwrap();
    let plain = atl.store(fact.into()).unwrap();
    let compressed_source = atl.new_concept("old thing", "object").unwrap();
    let compressed = atl.store(CompressedSemantic::from_concept(compressed_source, 3).into()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    atl.save(&path).unwrap();
    let mut fresh = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
    fresh.load(&path).unwrap();
    assert_eq!(fresh.len(), 3);
    for id in [mug, plain, compressed] {
        assert_eq!(fresh.peek(id), atl.peek(id));
    }
    let back = fresh.concept(mug).unwrap();
    assert_eq!(
        (back.name.as_str(), back.category.as_str(), back.definition.as_str(), back.provenance),
        ("mug", "object", "a cup with a handle", ConceptProvenance::DirectIngestion)
    );
    assert_eq!(back.memory_refs.get(LayerKind::Hippocampus), [RecordId::from_u128(5)]);
    assert!(matches!(fresh.peek(compressed), Some(SemanticRecord::Compressed(_))));
    assert_eq!(fresh.stats().compressed, 1);
}
