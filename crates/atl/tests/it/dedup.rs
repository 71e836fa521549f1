//! `find_or_create` with name-similarity deduplication (seed 000: "Before creating
//! `coffee_mug`, checks if `coffee mug` already exists").

use atl::{AtlConfig, MatchKind, spec};
use maxim_core::{ConceptProvenance, MemoryLayer, RecordId};
use proptest::prelude::*;

use crate::common::{layer, layer_with};

#[test]
fn the_issue_examples_are_one_concept() {
    let (_clock, mut atl) = layer();
    let first = atl.find_or_create(&spec("coffee_mug", "object")).unwrap();
    assert_eq!((first.created, first.matched.clone()), (true, MatchKind::Created));
    for name in ["coffee mug", "Coffee Mug", "coffee mugs", "COFFEE-MUGS", "  coffee.mug! "] {
        let again = atl.find_or_create(&spec(name, "object")).unwrap();
        assert_eq!((again.id, again.created, again.matched), (first.id, false, MatchKind::Exact), "{name}");
    }
    assert_eq!(atl.len(), 1);
}

#[test]
fn numbers_identifiers_and_categories_keep_concepts_apart() {
    let (_clock, mut atl) = layer();
    let pairs = [
        ("concept_00001", "object", "concept_00002", "object"),
        ("room 1", "location", "room 2", "location"),
        ("room", "location", "room 3", "location"),
        ("sensor v2", "object", "sensor v3", "object"),
        ("coffee mug", "object", "coffee mug", "person"),
    ];
    for (a, ca, b, cb) in pairs {
        let x = atl.find_or_create(&spec(a, ca)).unwrap();
        let y = atl.find_or_create(&spec(b, cb)).unwrap();
        assert!(y.created, "{b} ({cb}) must not merge into {a} ({ca})");
        assert_ne!(x.id, y.id);
    }
}

/// Issue 5: names that differ only in a letter, a roman numeral, a Greek letter or a number
/// word are different concepts; the same layer still merges the spellings and typos of one
/// name.
#[test]
fn letter_and_numeral_identifiers_keep_concepts_apart() {
    let (_clock, mut atl) = layer();
    let apart = [
        ("conference room a", "conference room b"),
        ("kitchen cabinet A", "kitchen cabinet B"),
        ("phase ii", "phase iii"),
        ("temperature x", "temperature y"),
        ("sensor alpha", "sensor alpha b"),
        ("sensor alpha", "sensor beta"),
        ("pump one", "pump two"),
        ("world war i", "world war ii"),
    ];
    for (a, b) in apart {
        let x = atl.find_or_create(&spec(a, "object")).unwrap();
        let y = atl.find_or_create(&spec(b, "object")).unwrap();
        assert!(y.created && x.id != y.id, "{b} must not merge into {a}: {:?}", y.matched);
        let back = atl.find_or_create(&spec(a, "object")).unwrap();
        assert_eq!((back.id, back.matched), (x.id, MatchKind::Exact), "{a} is still found");
    }
    let mug = atl.find_or_create(&spec("coffee_mug", "object")).unwrap();
    assert!(mug.created);
    for name in ["coffee mug", "Coffee Mug", "coffee mugs"] {
        let again = atl.find_or_create(&spec(name, "object")).unwrap();
        assert_eq!((again.id, again.matched), (mug.id, MatchKind::Exact), "{name}");
    }
    for name in ["coffe mug", "mug coffee"] {
        let again = atl.find_or_create(&spec(name, "object")).unwrap();
        assert!(matches!(again.matched, MatchKind::Similar { .. }) && again.id == mug.id, "{name}");
    }
    let room_a = atl.lookup("conference room a", "object").unwrap().0;
    let typo = atl.find_or_create(&spec("conferense room A", "object")).unwrap();
    assert_eq!(typo.id, room_a, "a typo in a word that is not an identifier still merges");
    assert_eq!(atl.len(), 16, "15 distinct names (\"sensor alpha\" is there twice) and the mug");
}

#[test]
fn typos_merge_and_are_remembered_as_aliases() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    for typo in ["coffe mug", "cofee mug", "mug coffee", "Coffee Mugg"] {
        let hit = atl.find_or_create(&spec(typo, "object")).unwrap();
        assert_eq!(hit.id, mug, "{typo}");
        assert!(matches!(hit.matched, MatchKind::Similar { score, .. } if score >= 0.8), "{typo}");
        let again = atl.find_or_create(&spec(typo, "object")).unwrap();
        assert_eq!(again.matched, MatchKind::Exact, "{typo} is an alias now");
    }
    assert_eq!(atl.concept(mug).unwrap().aliases, ["coffe mug", "cofee mug", "mug coffee", "Coffee Mugg"]);
    assert_eq!(atl.len(), 1);
    assert_eq!(atl.stats().counters["similarity_merges"], 4);
}

/// Similarity is scored against concepts' names, never their aliases: a chain of typos, each
/// close to the one before, does not drift into the concept.
#[test]
fn similarity_does_not_chain_through_aliases() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    for typo in ["coffe mug", "cofe mug"] {
        let hit = atl.find_or_create(&spec(typo, "object")).unwrap();
        assert!(
            matches!(&hit.matched, MatchKind::Similar { matched_key, .. } if matched_key == "coffee mug")
        );
        assert_eq!(hit.id, mug, "{typo}");
    }
    // "cofe mg" is 0.82 from the alias "cofe mug" but 0.74 from the name.
    let mg = atl.find_or_create(&spec("cofe mg", "object")).unwrap();
    assert!(mg.created && mg.id != mug);
    // "cofe mig" is 0.82 from "cofe mg", a name now: it joins that concept, not the mug.
    let mig = atl.find_or_create(&spec("cofe mig", "object")).unwrap();
    assert_eq!(mig.id, mg.id);
    assert_eq!(atl.concept(mug).unwrap().aliases, ["coffe mug", "cofe mug"]);
    assert_eq!(atl.find_or_create(&spec("cofe mug", "object")).unwrap().matched, MatchKind::Exact);
    assert_eq!(atl.len(), 2);
}

#[test]
fn different_things_do_not_merge() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    for other in ["mug", "coffee mug handle", "tea cup", "coffee", "cofee mgu"] {
        let hit = atl.find_or_create(&spec(other, "object")).unwrap();
        assert!(hit.created && hit.id != mug, "{other}");
    }
}

#[test]
fn names_a_program_wrote_match_exactly_only() {
    let (_clock, mut atl) = layer();
    let pattern = |goal: &str| format!("goal:{goal} → goal:{goal}:positive");
    let bag = atl.find_or_create(&spec(&pattern("carry_bag"), "causal_pattern")).unwrap().id;
    // These score above the threshold as words, but they are other keys.
    for goal in ["carry_box", "carry_bin", "dry_bag", "carry_bags"] {
        let other = atl.find_or_create(&spec(&pattern(goal), "causal_pattern")).unwrap();
        assert!(other.created && other.id != bag, "{goal}");
    }
    // The same key, spelled as name keys are (case, separators), is the same concept.
    let again = atl.find_or_create(&spec(&pattern("Carry_Bag"), "causal_pattern")).unwrap();
    assert_eq!((again.id, again.matched), (bag, MatchKind::Exact));
    // A person's name is never merged into a program's key, nor the other way round.
    let tool = atl.find_or_create(&spec("tool:navigate", "action")).unwrap().id;
    let natural = atl.find_or_create(&spec("tool navigat", "action")).unwrap();
    assert!(natural.created && natural.id != tool);
    let keyed = atl.find_or_create(&spec("tool:navigat", "action")).unwrap();
    assert!(keyed.created && keyed.id != tool && keyed.id != natural.id);
    assert_eq!(atl.len(), 8);
}

#[test]
fn the_threshold_is_configurable() {
    let (_clock, mut strict) = layer_with({
        let mut c = AtlConfig::default();
        c.name_similarity_threshold = 1.0;
        c
    });
    let mug = strict.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    assert!(strict.find_or_create(&spec("coffe mug", "object")).unwrap().created);
    assert_eq!(strict.find_or_create(&spec("mug coffee", "object")).unwrap().id, mug, "same words");
    let (_clock, mut loose) = layer_with({
        let mut c = AtlConfig::default();
        c.name_similarity_threshold = 0.5;
        c
    });
    let mug = loose.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    assert_eq!(loose.find_or_create(&spec("mug", "object")).unwrap().id, mug, "0.53 >= 0.5");
}

#[test]
fn creation_and_reinforcement_are_reported() {
    let (_clock, mut atl) = layer();
    let created = atl.find_or_create(&spec("grasp action", "action")).unwrap();
    assert!(created.created && !created.reinforced);
    let found = atl.find_or_create(&spec("grasp actions", "action")).unwrap();
    assert!(!found.created && !found.reinforced, "no episode: found, not reinforced");
    assert_eq!(atl.concept(created.id).unwrap().reinforcement_count, 1);
    let mut with_episode = spec("grasping action", "action");
    with_episode.source_episode = Some(RecordId::from_u128(9));
    with_episode.provenance = ConceptProvenance::AgentInference;
    with_episode.definition = "closing the gripper on an object".into();
    let reinforced = atl.find_or_create(&with_episode).unwrap();
    assert!(!reinforced.created && reinforced.reinforced);
    let c = atl.concept(created.id).unwrap();
    assert_eq!(c.reinforcement_count, 2);
    assert_eq!(c.provenance, ConceptProvenance::Hybrid, "two kinds of evidence");
    assert_eq!(c.definition, "closing the gripper on an object", "an empty definition is filled");
    let counters = atl.stats().counters;
    assert_eq!((counters["concepts_created"], counters["reinforcements"]), (1, 1));
}

/// §4.5: a hit reinforces only a full concept; a compressed one keeps no episodes.
#[test]
fn a_compressed_concept_is_found_but_not_reinforced() {
    let (_clock, mut atl) = layer();
    let old = atl.new_concept("coffee mug", "object").unwrap();
    let id = atl.store(atl::CompressedSemantic::from_concept(old, 0).into()).unwrap();
    let before = atl.peek(id).unwrap().clone();
    let mut seen = spec("coffee mugs", "object");
    seen.source_episode = Some(RecordId::from_u128(9));
    seen.provenance = ConceptProvenance::AgentInference;
    let hit = atl.find_or_create(&seen).unwrap();
    assert_eq!((hit.id, hit.created, hit.reinforced, hit.matched), (id, false, false, MatchKind::Exact));
    assert_eq!(atl.peek(id), Some(&before), "count, confidence, provenance and access unchanged");
    seen.name = "cofee mug".into();
    let similar = atl.find_or_create(&seen).unwrap();
    assert!(!similar.reinforced && matches!(similar.matched, MatchKind::Similar { .. }));
    let after = atl.peek(id).unwrap();
    assert_eq!(after.aliases(), ["cofee mug"], "the name is still remembered");
    assert_eq!((after.reinforcement_count(), after.confidence()), (1, before.confidence()));
    assert_eq!(atl.stats().counters["reinforcements"], 0);
}

#[test]
fn a_created_concept_takes_the_spec() {
    let (_clock, mut atl) = layer();
    let mut s = spec("navigate tool reliability", "operational_pattern");
    s.definition = "navigate fails more in the evening".into();
    s.provenance = ConceptProvenance::AgentInference;
    s.source = maxim_core::Source::AgentInference;
    s.trust = 0.5;
    s.source_episode = Some(RecordId::from_u128(3));
    let id = atl.find_or_create(&s).unwrap().id;
    let c = atl.concept(id).unwrap();
    assert_eq!((c.reinforcement_count, c.confidence), (1, 0.6));
    assert_eq!((c.meta.source.clone(), c.meta.trust.get()), (maxim_core::Source::AgentInference, 0.5));
    assert_eq!(c.source_episode_ids, [RecordId::from_u128(3)]);
    assert_eq!(c.provenance, ConceptProvenance::AgentInference);
}

#[test]
fn removing_a_concept_frees_its_names_and_aliases() {
    let (_clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    atl.find_or_create(&spec("coffe mug", "object")).unwrap();
    atl.remove(mug).unwrap();
    assert!(atl.lookup("coffe mug", "object").is_none());
    assert!(atl.find_or_create(&spec("coffe mug", "object")).unwrap().created);
}

#[test]
fn numbered_names_are_never_compared_pairwise() {
    let (_clock, mut atl) = layer_with({
        let mut c = AtlConfig::default();
        c.max_concepts = 5_000;
        c
    });
    for j in 0..3_000 {
        let (name, category) = maxim_testkit::concept(j);
        assert!(atl.find_or_create(&spec(&name, category)).unwrap().created);
    }
    assert_eq!(atl.stats().counters["similarity_comparisons"], 0);
    let (name, category) = maxim_testkit::concept(1234);
    let hit = atl.find_or_create(&spec(&name.replace('_', " ").to_uppercase(), category)).unwrap();
    assert_eq!(hit.matched, MatchKind::Exact);
    let near = atl.find_or_create(&spec("concepts 01234", category)).unwrap();
    assert_eq!((near.created, near.matched), (false, MatchKind::Exact), "plural lemmatised away");
    let typo = atl.find_or_create(&spec("concpt 01234", category)).unwrap();
    assert_eq!(typo.id, hit.id);
    assert_eq!(
        atl.stats().counters["similarity_comparisons"],
        1,
        "one candidate: same number, same category"
    );
}

const WORDS: [&str; 8] = ["coffee", "mug", "kitchen", "door", "robot", "arm", "gripper", "shelf"];

fn variant(words: &[&str], style: u8) -> String {
    let joined = match style % 4 {
        0 => words.join(" "),
        1 => words.join("_"),
        2 => words.join("-"),
        _ => words.iter().map(|w| w.to_uppercase()).collect::<Vec<_>>().join(" "),
    };
    if style / 4 % 2 == 1 { format!("{joined}s") } else { joined }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any spelling of a name (separators, case, a plural) finds the concept the first spelling
    /// made, and nothing else is created.
    #[test]
    fn spellings_of_one_name_are_one_concept(
        picks in prop::collection::vec(0usize..WORDS.len(), 1..4),
        styles in prop::collection::vec(0u8..8, 1..6),
    ) {
        let words: Vec<&str> = picks.iter().map(|&i| WORDS[i]).collect();
        let (_clock, mut atl) = layer();
        let first = atl.find_or_create(&spec(&variant(&words, 0), "object")).unwrap();
        for style in styles {
            let again = atl.find_or_create(&spec(&variant(&words, style), "object")).unwrap();
            prop_assert_eq!(again.id, first.id);
            prop_assert!(!again.created);
        }
        prop_assert_eq!(atl.len(), 1);
    }

    /// Names that differ in a number are always different concepts.
    #[test]
    fn numbers_always_separate(word in 0usize..WORDS.len(), a in 0u32..1000, b in 0u32..1000) {
        prop_assume!(a != b);
        let (_clock, mut atl) = layer();
        let x = atl.find_or_create(&spec(&format!("{} {a}", WORDS[word]), "object")).unwrap();
        let y = atl.find_or_create(&spec(&format!("{}_{b}", WORDS[word]), "object")).unwrap();
        prop_assert!(x.created && y.created);
    }
}
