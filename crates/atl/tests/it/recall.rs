//! Filtered recall over the context index and `recall_similar` through the embedder.

use std::sync::Arc;
use std::time::Duration;

use atl::{Atl, CompressedSemantic, ConceptFilter, spec};
use maxim_core::embed::{Embedder, HashEmbedder};
use maxim_core::{MemoryLayer, MemoryRecord, RecordId, Source, days};

use crate::common::layer;

#[test]
fn every_filter_narrows_and_results_are_most_recent_first() {
    let (clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    clock.advance(Duration::from_secs(10));
    let cup = atl.find_or_create(&spec("cup", "object")).unwrap().id;
    clock.advance(Duration::from_secs(10));
    let kitchen = atl.find_or_create(&spec("kitchen", "location")).unwrap().id;
    let img = RecordId::from_u128(0xfeed);
    atl.activate_substrate(img, "a picture of a red mug on a table", "vision", "").unwrap();
    let ids = |atl: &Atl, f: &ConceptFilter| -> Vec<RecordId> {
        atl.recall(f, 10).iter().map(|r| r.id()).collect()
    };
    assert_eq!(ids(&atl, &ConceptFilter::new().category("Objects")), [cup, mug], "newest access first");
    assert_eq!(ids(&atl, &ConceptFilter::new().name("MUGS")), [mug]);
    assert_eq!(ids(&atl, &ConceptFilter::new().substrate_modality("vision")), [img]);
    assert_eq!(ids(&atl, &ConceptFilter::new().category("substrate")), [img]);
    assert_eq!(ids(&atl, &ConceptFilter::new().source(Source::AgentInference)), [img]);
    assert_eq!(ids(&atl, &ConceptFilter::new().min_confidence(0.61)), Vec::<RecordId>::new());
    assert_eq!(ids(&atl, &ConceptFilter::new().min_confidence(f64::NAN)), Vec::<RecordId>::new());
    assert_eq!(ids(&atl, &ConceptFilter::new()).len(), 4);
    clock.advance(Duration::from_secs(10));
    atl.get(mug).unwrap();
    assert_eq!(ids(&atl, &ConceptFilter::new().category("object")), [mug, cup], "get moved mug to the front");
    assert_eq!(ids(&atl, &ConceptFilter::new().category("object").name("kitchen")), Vec::<RecordId>::new());
    assert_eq!(ids(&atl, &ConceptFilter::new().name("kitchen").category("location")), [kitchen]);
    assert_eq!(atl.stats().counters["queries"], 11);
}

#[test]
fn compressed_concepts_can_be_left_out() {
    let (_clock, mut atl) = layer();
    let c = atl.new_concept("old mug", "object").unwrap();
    let old = atl.store(CompressedSemantic::from_concept(c, 0).into()).unwrap();
    let new = atl.find_or_create(&spec("new mug", "object")).unwrap().id;
    assert_eq!(atl.recall(&ConceptFilter::new().category("object"), 10).len(), 2);
    let full: Vec<RecordId> =
        atl.recall(&ConceptFilter::new().include_compressed(false), 10).iter().map(|r| r.id()).collect();
    assert_eq!(full, [new]);
    assert_ne!(old, new);
}

#[test]
fn recall_similar_answers_do_i_know_this() {
    let (_clock, mut atl) = layer();
    let mut mug = spec("coffee mug", "object");
    mug.definition = "a ceramic cup for hot drinks".into();
    let mug = atl.find_or_create(&mug).unwrap().id;
    let door = atl.find_or_create(&spec("kitchen door", "object")).unwrap().id;
    let robot = atl.find_or_create(&spec("robot arm", "object")).unwrap().id;
    let hits = atl.recall_similar("ceramic coffee cups", 2);
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].0, mug);
    assert!(hits[0].1 > hits[1].1 && hits[0].1 <= 1.0);
    assert_eq!(atl.recall_similar("the robot's arms", 1)[0].0, robot);
    assert_eq!(atl.recall_similar_in("kitchen door", 5, "person"), []);
    assert_eq!(atl.recall_similar_in("kitchen door", 1, "object")[0].0, door);
    assert!(atl.recall_similar("", 5).is_empty(), "nothing to embed, nothing found");
    assert!(atl.recall_similar("coffee", 0).is_empty());
}

#[test]
fn recall_similar_skips_compressed_concepts() {
    let (clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    let keep = atl.find_or_create(&spec("coffee machine", "object")).unwrap().id;
    for _ in 0..10 {
        atl.get(keep).unwrap(); // frequently used: never compressed
    }
    clock.advance(days(20));
    atl.consolidate().unwrap();
    assert!(atl.peek(mug).unwrap().is_compressed());
    let hits: Vec<RecordId> = atl.recall_similar("coffee mug", 5).into_iter().map(|h| h.0).collect();
    assert_eq!(hits, [keep]);
    assert_eq!(atl.stats().counters["vectors"], 1);
}

#[test]
fn definitions_and_embedding_texts_are_reembedded() {
    let (_clock, mut atl) = layer();
    let x = atl.find_or_create(&spec("widget", "object")).unwrap().id;
    let y = atl.find_or_create(&spec("gadget", "object")).unwrap().id;
    atl.set_definition(x, "a small blue lighthouse").unwrap();
    assert_eq!(atl.recall_similar("lighthouse", 1)[0].0, x);
    atl.set_embedding_text(y, "lighthouse lighthouse beacon").unwrap();
    assert_eq!(atl.recall_similar("lighthouse beacon", 1)[0].0, y);
}

/// An embedder of another dimension, to show any model plugs in.
struct Letters;

impl Embedder for Letters {
    fn name(&self) -> &'static str {
        "letters-26"
    }
    fn dim(&self) -> usize {
        26
    }
    fn embed_into(&self, text: &str, out: &mut [f32]) {
        out.fill(0.0);
        for b in text.bytes().filter(u8::is_ascii_lowercase) {
            out[usize::from(b - b'a')] += 1.0;
        }
    }
}

#[test]
fn any_embedder_plugs_in_and_a_load_reembeds_with_the_layers_own() {
    let clock = maxim_core::ManualClock::new(crate::common::T0);
    let mut atl = Atl::builder().clock(clock.shared()).embedder(Arc::new(Letters)).build().unwrap();
    let zzz = atl.find_or_create(&spec("zzz", "x")).unwrap().id;
    let abc = atl.find_or_create(&spec("abc", "x")).unwrap().id;
    assert_eq!(atl.recall_similar("zz", 1)[0].0, zzz);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    atl.save(&path).unwrap();
    let mut hashed =
        Atl::builder().clock(clock.shared()).embedder(Arc::new(HashEmbedder::default())).build().unwrap();
    hashed.load(&path).unwrap();
    assert_eq!(hashed.embedder().name(), "hash-v1-d128");
    assert_eq!(hashed.recall_similar("abc", 1)[0].0, abc);
    assert_eq!(hashed.stats().counters["vectors"], 2);
}
