//! Retrieval (§3.6): filters, order, touching recall, similarity, spreading activation,
//! content search.

use std::sync::Arc;
use std::time::Duration;

use hippocampus::{HippocampusConfig, Perception, RecallFilter};
use maxim_core::RecordId;
use maxim_core::embed::HashEmbedder;
use maxim_core::graph::ActivationParams;
use maxim_core::value::Value;

use crate::common::{T0, episode, layer, layer_with};

fn ids<'a>(found: impl IntoIterator<Item = &'a hippocampus::Episode>) -> Vec<RecordId> {
    found.into_iter().map(hippocampus::Episode::id).collect()
}

#[test]
fn filters_intersect_and_results_are_newest_first() {
    let (clock, mut h) = layer();
    let mut all = Vec::new();
    for (i, (objects, goal, tool, ok)) in [
        (&["mug"][..], "find mug", "look", true),
        (&["mug", "cup"][..], "find mug", "grasp", false),
        (&["cup"][..], "open door", "look", true),
        (&["mug"][..], "find mug", "look", true),
    ]
    .into_iter()
    .enumerate()
    {
        clock.set(T0 + Duration::from_secs(60 * i as u64));
        all.push(h.capture(episode(objects, goal, tool, Some(ok))).unwrap());
    }
    let f = RecallFilter::new().goal("find mug").tool("look").success(true).object("mug");
    assert_eq!(ids(h.recall(&f, 10)), [all[3], all[0]]);
    assert_eq!(ids(h.recall(&RecallFilter::new().object("cup"), 10)), [all[2], all[1]]);
    assert_eq!(ids(h.recall(&RecallFilter::new(), 2)), [all[3], all[2]]);
    assert!(h.recall(&RecallFilter::new().goal("nothing"), 10).is_empty());
    assert!(h.recall(&RecallFilter::new().mode("explore"), 10).is_empty());
    assert_eq!(h.recall(&RecallFilter::new().mode("observe"), 10).len(), 4);
    // The time window is inclusive at both ends.
    let window =
        RecallFilter::new().between(Some(T0 + Duration::from_secs(60)), Some(T0 + Duration::from_secs(120)));
    assert_eq!(ids(h.recall(&window, 10)), [all[2], all[1]]);
    let after = RecallFilter::new().goal("find mug").between(Some(T0 + Duration::from_secs(61)), None);
    assert_eq!(ids(h.recall(&after, 10)), [all[3]]);
}

#[test]
fn compressed_records_are_included_unless_excluded() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let b = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    h.compress(a).unwrap();
    // The compressed record keeps its index keys, objects included.
    assert_eq!(h.recall(&RecallFilter::new().object("mug"), 10).len(), 2);
    assert_eq!(ids(h.recall(&RecallFilter::new().object("mug").full_only(), 10)), [b]);
}

#[test]
fn unindexed_kinds_fall_back_to_scanning_fields() {
    let mut config = HippocampusConfig::default();
    config.indexed_keys.tool = false;
    config.indexed_keys.object = false;
    let (_clock, mut h) = layer_with(config);
    let a = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    h.capture(episode(&["cup"], "find mug", "grasp", Some(true))).unwrap();
    assert_eq!(ids(h.recall(&RecallFilter::new().tool("look").object("mug"), 10)), [a]);
    assert!(
        h.index_keys()
            .iter()
            .all(|k| !matches!(k, hippocampus::IndexKey::Tool(_) | hippocampus::IndexKey::Object(_)))
    );
    assert_eq!(h.associative_graph().edge_count(), 0, "no object keys, no associations");
}

#[test]
fn plain_recall_records_no_access_and_touching_recall_does() {
    let (clock, mut h) = layer();
    let a = h.capture(episode(&[], "find mug", "", None)).unwrap();
    clock.advance(Duration::from_secs(100));
    let _ = h.recall(&RecallFilter::new().goal("find mug"), 10);
    assert_eq!(h.peek(a).unwrap().meta().access_count, 1);
    let found = h.recall_touching(&RecallFilter::new().goal("find mug"), 10);
    assert_eq!(found[0].meta().access_count, 2);
    assert_eq!(found[0].meta().accessed_at, clock.now());
    assert_eq!(h.queries(), 2);
}

#[test]
fn a_query_ranks_by_keyword_relevance_then_recency() {
    let (clock, mut h) = layer();
    let kitchen = h.capture(episode(&["kettle"], "boil water in the kitchen", "stove", None)).unwrap();
    clock.advance(Duration::from_secs(60));
    let both = h.capture(episode(&["mug"], "carry mug to the kitchen", "grasp", None)).unwrap();
    clock.advance(Duration::from_secs(60));
    let none = h.capture(episode(&["door"], "open door", "push", None)).unwrap();
    let found = ids(h.recall(&RecallFilter::new().query("Kitchen mugs"), 10));
    assert_eq!(found, [both, kitchen, none]);
}

#[test]
fn distinct_queries_build_use_pressure_until_promotion() {
    let (_clock, mut h) = layer();
    let mut e = episode(&["mug"], "find mug", "look", None);
    e.perception.salience = 0.9;
    let id = h.capture(e).unwrap();
    for (i, q) in ["mug", "find mug", "the mug please"].into_iter().enumerate() {
        assert!(!h.peek(id).unwrap().meta().long_term, "not promoted before query {i}");
        h.recall_touching(&RecallFilter::new().goal("find mug").query(q), 10);
    }
    // Gains: 0.9 + 0.5, 0.9 + 2/3, then 0.9 + 0.75 reaches 3.0 (no time passed, no leak).
    assert!(h.peek(id).unwrap().meta().long_term);
    assert_eq!(h.peek(id).unwrap().promotion_pressure(), 0.0, "promotion resets the pressure");
    // The same query twice accrues once.
    let (clock2, mut g) = layer();
    let id = g.capture(episode(&["mug"], "find mug", "look", None)).unwrap();
    for _ in 0..5 {
        g.recall_touching(&RecallFilter::new().query("mug"), 10);
    }
    let usage = g.peek(id).unwrap().usage().unwrap().clone();
    assert_eq!(usage.access_contexts.len(), 1);
    assert!((usage.pressure - (0.5 + 0.5)).abs() < 1e-12);
    // Pressure leaks 0.02 per second.
    clock2.advance(Duration::from_secs(10));
    g.recall_touching(&RecallFilter::new().query("cup"), 10);
    let p = g.peek(id).unwrap().promotion_pressure();
    assert!((p - (1.0 - 0.2 + 0.5 + (1.0 - 1.0 / 7.0))).abs() < 1e-12, "{p}");
}

#[test]
fn recall_similar_counts_shared_objects_and_people() {
    let (clock, mut h) = layer();
    let mut e = episode(&["mug", "table"], "", "", None);
    e.perception.detected_people = vec!["Ana".into()];
    let both = h.capture(e).unwrap();
    clock.advance(Duration::from_secs(60));
    let mug = h.capture(episode(&["mug"], "", "", None)).unwrap();
    clock.advance(Duration::from_secs(60));
    let other = h.capture(episode(&["door"], "", "", None)).unwrap();
    let probe = Perception {
        detected_objects: vec!["mug".into(), "table".into(), "unknown".into()],
        detected_people: vec!["Ana".into()],
        ..Perception::default()
    };
    let found: Vec<(RecordId, u32)> =
        h.recall_similar(&probe, 5, true).into_iter().map(|(r, n)| (r.id(), n)).collect();
    assert_eq!(found, vec![(both, 3), (mug, 1)]);
    assert!(!found.iter().any(|(id, _)| *id == other));
    h.compress(both).unwrap();
    let found: Vec<RecordId> = h.recall_similar(&probe, 5, false).into_iter().map(|(r, _)| r.id()).collect();
    assert_eq!(found, vec![mug]);
}

#[test]
fn similarity_among_candidates_scores_only_them_as_the_whole_store_would() {
    let (_clock, mut h) = layer_with_embedder();
    let mug = h.capture(episode(&["coffee mug"], "fetch the coffee mug", "grasp", None)).unwrap();
    let cup = h.capture(episode(&["coffee cup"], "fill the coffee cup", "pour", None)).unwrap();
    let door = h.capture(episode(&["door"], "open the front door", "push", None)).unwrap();
    let whole: Vec<(RecordId, f32)> =
        h.recall_similar_text("coffee mugs", 3).unwrap().into_iter().map(|(e, s)| (e.id(), s)).collect();
    let among: Vec<(RecordId, f32)> = h
        .recall_similar_text_among("coffee mugs", &[door, cup, mug, cup, RecordId::from_u128(7)], 3)
        .unwrap()
        .into_iter()
        .map(|(e, s)| (e.id(), s))
        .collect();
    assert_eq!(among.iter().map(|a| a.0).collect::<Vec<_>>(), whole.iter().map(|w| w.0).collect::<Vec<_>>());
    for (a, w) in among.iter().zip(&whole) {
        assert!((a.1 - w.1).abs() < 1e-6, "{a:?} against {w:?}");
    }
    let only_door = h.recall_similar_text_among("coffee mugs", &[door], 3).unwrap();
    assert_eq!(only_door.iter().map(|(e, _)| e.id()).collect::<Vec<_>>(), [door]);
    assert!(h.recall_similar_text_among("coffee mugs", &[mug], 0).unwrap().is_empty());
    let (_c, plain) = layer();
    assert!(matches!(plain.recall_similar_text_among("x", &[mug], 1), Err(hippocampus::Error::NoEmbedder)));
}

#[test]
fn an_episodes_search_terms_come_from_the_index_with_their_counts() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "fetch the mugs", "grasp", None)).unwrap();
    h.capture(episode(&["door"], "open the door", "push", None)).unwrap();
    let mut terms: Vec<(String, usize)> = Vec::new();
    h.for_each_search_term(a, |t, tf, df| {
        assert!(tf > 0.0);
        terms.push((t.to_owned(), df));
    });
    assert!(terms.contains(&("mug".to_owned(), 1)), "{terms:?}");
    assert!(terms.contains(&("grasp".to_owned(), 1)), "{terms:?}");
    assert!(!terms.iter().any(|(t, _)| t == "door" || t == "the"), "{terms:?}");
    let mut none = 0;
    h.for_each_search_term(RecordId::from_u128(99), |_, _, _| none += 1);
    assert_eq!(none, 0);
}

#[test]
fn recall_similar_text_goes_through_the_embedder() {
    let (_clock, mut h) = layer_with_embedder();
    let mug = h.capture(episode(&["coffee mug"], "fetch the coffee mug", "grasp", None)).unwrap();
    h.capture(episode(&["door"], "open the front door", "push", None)).unwrap();
    let found = h.recall_similar_text("coffee mugs", 1).unwrap();
    assert_eq!(found[0].0.id(), mug);
    assert!(found[0].1 > 0.3);
    h.remove(mug).unwrap();
    assert!(h.recall_similar_text("coffee mugs", 5).unwrap().iter().all(|(r, _)| r.id() != mug));
    let (_c, plain) = layer();
    assert!(matches!(plain.recall_similar_text("x", 1), Err(hippocampus::Error::NoEmbedder)));
}

#[test]
fn an_episode_compressed_by_sleep_is_still_found_by_text() {
    let (clock, mut h) = layer_with_embedder();
    let mug = h.capture(episode(&["coffee mug"], "fetch the coffee mug", "grasp", None)).unwrap();
    h.capture(episode(&["door"], "open the front door", "push", None)).unwrap();
    clock.advance(Duration::from_secs(3 * 86_400));
    assert_eq!(h.sleep().compressed, 2);
    assert!(h.peek(mug).unwrap().is_compressed());
    let found = h.recall_similar_text("coffee mug", 1).unwrap();
    assert_eq!(found[0].0.id(), mug, "the compressed text keeps its vector");
}

#[test]
fn recall_associated_matches_the_run_vector() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let b = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let c = h.capture(episode(&["mug", "cup"], "grab mug", "", Some(false))).unwrap();
    let found: Vec<(RecordId, f64)> =
        h.recall_associated(&[a], 10).into_iter().map(|(r, s)| (r.id(), s)).collect();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0], (b, 0.5));
    assert_eq!(found[1].0, c);
    assert!((found[1].1 - 0.416_666_7).abs() < 1e-6);
    let before = h.peek(b).unwrap().meta().clone();
    let _ = h.recall_associated(&[a], 10);
    assert_eq!(h.peek(b).unwrap().meta(), &before, "recall_associated does not touch");
    // A stricter threshold drops c; excluding compressed drops b once it is compressed.
    let strict = ActivationParams::new(0.5, 0.45, 3).unwrap();
    assert_eq!(h.recall_associated_with(&[a], 10, &strict, true).len(), 1);
    h.compress(b).unwrap();
    let p = ActivationParams::new(0.5, 0.05, 3).unwrap();
    let found: Vec<RecordId> =
        h.recall_associated_with(&[a], 10, &p, false).into_iter().map(|(r, _)| r.id()).collect();
    assert_eq!(found, vec![c]);
    assert_eq!(h.edge_count(a), 2);
}

#[test]
fn search_by_content_reads_observations_results_and_reasoning() {
    let (clock, mut h) = layer();
    let mut e = episode(&[], "", "", None);
    e.perception.observations.insert("room", Value::from("Kitchen"));
    let a = h.capture(e).unwrap();
    clock.advance(Duration::from_secs(1));
    let mut e = episode(&[], "", "", None);
    e.outcome.result = Value::from("found the KITCHEN light");
    let b = h.capture(e).unwrap();
    clock.advance(Duration::from_secs(1));
    let mut e = episode(&[], "", "", None);
    e.decision.reasoning = Some("nothing to see".into());
    h.capture(e).unwrap();
    assert_eq!(ids(h.search_by_content("kitchen", 20)), [b, a]);
    assert_eq!(ids(h.search_by_content("kitchen", 1)), [b]);
    assert_eq!(h.search_by_content("to see", 20).len(), 1);
    assert!(h.search_by_content("garage", 20).is_empty());
}

/// A default layer with the default hash embedder.
fn layer_with_embedder() -> (maxim_core::ManualClock, hippocampus::Hippocampus) {
    let clock = maxim_core::ManualClock::new(crate::common::T0);
    let h = hippocampus::Hippocampus::builder()
        .clock(clock.shared())
        .embedder(Arc::new(HashEmbedder::default()))
        .id_seed(7)
        .build()
        .expect("valid settings");
    (clock, h)
}

/// A turn of a two-person conversation as an episode: the speaker as a person, the words as
/// the transcript.
fn turn(speaker: &str, said: &str) -> hippocampus::NewEpisode {
    let mut e = hippocampus::NewEpisode::default();
    e.perception.detected_people = vec![speaker.into()];
    e.perception.transcript = Some(format!("{speaker}: {said}"));
    e
}

#[test]
fn keyword_recall_weighs_rare_words_above_the_speakers_name() {
    let (clock, mut h) = layer();
    let mut ids = Vec::new();
    for (speaker, said) in [
        ("Caroline", "I went to the support group yesterday"),
        ("Melanie", "That sounds great, how did it go?"),
        ("Caroline", "We talked about adoption agencies for hours"),
        ("Melanie", "Caroline, I painted a sunset over the lake"),
        ("Caroline", "Lovely! The kids must have loved it"),
        ("Caroline", "I am still reading about agencies"),
    ] {
        ids.push(h.capture(turn(speaker, said)).unwrap());
        clock.advance(Duration::from_secs(60));
    }
    // The speaker's name is in four of six turns; "adoption" in one.
    let found = ids_of(h.recall(&RecallFilter::new().query("What did Caroline say about adoption?"), 3));
    assert_eq!(found[0], ids[2]);
    // The transcript is read, stemmed: "painting" finds "painted".
    let found = ids_of(h.recall(&RecallFilter::new().query("Melanie painting"), 1));
    assert_eq!(found, [ids[3]]);
    // A filter still applies, and the query ranks inside it.
    let found = ids_of(h.recall(&RecallFilter::new().person("Caroline").query("agency"), 10));
    assert_eq!(found[..2], [ids[5], ids[2]], "the shorter turn first");
    assert_eq!(found.len(), 4, "the others that pass the filter follow");
}

fn ids_of<'a>(found: impl IntoIterator<Item = &'a hippocampus::Episode>) -> Vec<RecordId> {
    found.into_iter().map(hippocampus::Episode::id).collect()
}

#[test]
fn search_by_content_matches_the_words_of_a_question() {
    let (clock, mut h) = layer();
    let a = h.capture(turn("Caroline", "We adopted two kittens in May")).unwrap();
    clock.advance(Duration::from_secs(60));
    let b = h.capture(turn("Melanie", "My kitten sleeps all day")).unwrap();
    clock.advance(Duration::from_secs(60));
    let mut e = episode(&["kettle"], "boil water", "stove", Some(true));
    e.outcome.result = Value::from("the kitten moved away from the stove");
    let c = h.capture(e).unwrap();
    // Most words held first ("which" is held by none), then the newest.
    assert_eq!(ids_of(h.search_by_content("Which kittens did Caroline adopt?", 10)), [a, c, b]);
    assert_eq!(ids_of(h.search_by_content("kitten", 10)), [c, b, a]);
    assert_eq!(ids_of(h.search_by_content("kitten", 2)), [c, b]);
    assert_eq!(ids_of(h.search_by_content("stove kitten", 10)), [c, b, a]);
    assert_eq!(ids_of(h.search_by_content("stove kitten", 1)), [c]);
    assert!(h.search_by_content("garage", 10).is_empty());
    assert!(h.search_by_content("what is the", 10).is_empty());
    assert!(h.search_by_content("kitten", 0).is_empty());
    h.compress(c).unwrap();
    assert_eq!(ids_of(h.search_by_content("kitten", 10)), [b, a], "compressed episodes are left out");
}

#[test]
fn the_lexical_index_comes_back_with_a_journal_replay() {
    let dir = tempfile::tempdir().unwrap();
    let clock = maxim_core::ManualClock::new(T0);
    let open = || {
        hippocampus::Hippocampus::builder()
            .clock(clock.shared())
            .id_seed(7)
            .sync_policy(maxim_core::journal::SyncPolicy::Always)
            .open(dir.path())
            .unwrap()
    };
    let mut h = open();
    let a = h.capture(turn("Caroline", "the garden is dry")).unwrap();
    h.checkpoint().unwrap();
    let b = h.capture(turn("Melanie", "the kitten is hungry")).unwrap();
    let c = h.capture(turn("Melanie", "a second kitten arrived")).unwrap();
    h.remove(c).unwrap();
    drop(h);
    let back = open();
    assert_eq!(ids_of(back.recall(&RecallFilter::new().query("garden"), 1)), [a]);
    assert_eq!(ids_of(back.search_by_content("kitten", 10)), [b]);
}

#[test]
fn text_similarity_reads_every_text_field() {
    let (_clock, mut h) = layer_with_embedder();
    let mut e = episode(&[], "", "", None);
    e.outcome.result = Value::from("the red kettle is boiling");
    let a = h.capture(e).unwrap();
    let mut e = episode(&[], "", "", None);
    e.perception.observations.insert("note", Value::from("garden hose leaking"));
    let b = h.capture(e).unwrap();
    assert_eq!(h.recall_similar_text("red kettle", 1).unwrap()[0].0.id(), a);
    assert_eq!(h.recall_similar_text("leaking hose", 1).unwrap()[0].0.id(), b);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// The time-ordered walk gives what a scan of every episode by (time, id) gives, with
    /// equal times, out-of-order captures and removals.
    #[test]
    fn neighbours_in_time_are_the_nearest_by_time_then_id(
        offsets in proptest::collection::vec(0u64..20, 1..40),
        removed in proptest::collection::vec(0usize..40, 0..10),
        k in 0usize..4,
    ) {
        let (clock, mut h) = layer();
        let mut held: Vec<(maxim_core::Timestamp, RecordId)> = Vec::new();
        for &o in &offsets {
            clock.set(T0 + Duration::from_secs(o));
            let id = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
            held.push((T0 + Duration::from_secs(o), id));
        }
        for &r in &removed {
            if r < held.len() {
                let (_, id) = held.remove(r);
                h.remove(id).unwrap();
            }
        }
        held.sort_unstable();
        for (i, &(_, id)) in held.iter().enumerate() {
            let before = held[..i].iter().rev().take(k).map(|p| p.1);
            let want: Vec<RecordId> = before.chain(held[i + 1..].iter().take(k).map(|p| p.1)).collect();
            proptest::prop_assert_eq!(h.neighbours_in_time(id, k), want);
        }
    }
}
