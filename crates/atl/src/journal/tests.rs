//! The journal's model test: random sequences of every write (and of the reads that touch),
//! with checkpoints and consolidations among them, run on a layer opened on a directory and on
//! a layer in memory. The two must agree call by call, and reopening the directory must give
//! exactly the live layer's whole state: records in their slots, name and context indexes,
//! vectors, graph, registry, counters (the query counter included).

use std::sync::atomic::Ordering;
use std::time::Duration;

use maxim_core::journal::SyncPolicy;
use maxim_core::value::Value;
use maxim_core::{LayerKind, ManualClock, MemoryLayer, MemoryRecord, RecordId, Source, Timestamp};
use proptest::prelude::*;

use crate::relations::EdgeUpdate;
use crate::{
    Atl, AtlConfig, ConceptFilter, EpisodeConcept, EpisodeRelationship, EpisodeWrite, RecordedEpisode, spec,
};

const NAMES: [&str; 14] = [
    "coffee mug",
    "coffe mug",
    "Coffee Mugs",
    "kitchen",
    "kitchen sink",
    "red apple",
    "apple",
    "mug",
    "tea cup",
    "teacup",
    "dog",
    "dogs",
    "garden hose",
    "garden",
];
const CATEGORIES: [&str; 2] = ["object", "location"];
const TYPES: [&str; 6] = ["IS_A", "RELATED_TO", "CAUSES", "HAS_PART", "NESTS_IN", "SAME_AS"];
const KEYS: [&str; 3] = ["color", "size", "owner"];

fn source(i: u8) -> Source {
    match i % 4 {
        0 => Source::UserStated,
        1 => Source::Web("a.org".into()),
        2 => Source::Episodic,
        _ => Source::AgentInference,
    }
}

fn value(i: u8) -> Value {
    match i % 5 {
        0 => Value::Int(1),
        1 => Value::Float(1.0),
        2 => Value::from("blue"),
        3 => Value::from("red"),
        _ => Value::List(vec![Value::Int(2), Value::from("x")]),
    }
}

/// Everything the layer holds, canonical where the order of building may differ (hash maps,
/// index insertion order, the graph's internal order). The eviction ranking, a cache a
/// snapshot never holds, is left out.
fn digest(atl: &Atl) -> String {
    let st = &atl.state;
    let mut slots: Vec<(RecordId, u32)> = st.slots.iter().map(|(k, v)| (*k, *v)).collect();
    slots.sort_unstable();
    let keys: Vec<String> = st.keys.iter().map(|k| format!("{k:?}")).collect();
    let mut edges: Vec<String> = st
        .graph
        .edges()
        .map(|e| format!("{} {} {} {} {:?}", e.source, e.target, e.kind, e.weight, e.meta))
        .collect();
    edges.sort();
    let mut nodes: Vec<RecordId> = st.graph.nodes().collect();
    nodes.sort_unstable();
    let mut contested: Vec<RecordId> = st.contested.iter().copied().collect();
    contested.sort_unstable();
    let mut vectors: Vec<(RecordId, Vec<f32>)> = st.vectors.iter().map(|(id, v)| (id, v.to_vec())).collect();
    vectors.sort_by_key(|v| v.0);
    let registry: Vec<_> = st.registry.iter().collect();
    format!(
        "{:?}\n{keys:?}\n{slots:?}\n{}\n{}\n{contested:?}\n{vectors:?}\n{edges:?}\n{nodes:?}\n{registry:?}\n{:?}\nqueries {}",
        st.records,
        st.names.canonical(),
        st.index.canonical(),
        st.counters,
        atl.queries.load(Ordering::Relaxed)
    )
}

#[derive(Debug, Clone)]
enum Step {
    Find {
        name: u8,
        category: u8,
        episode: Option<u8>,
        define: bool,
    },
    Insert {
        name: u8,
        metadata: bool,
    },
    Reinforce(u8, Option<u8>),
    Remove(u8),
    Get(u8),
    Touch(u8, u8),
    Recall(u8),
    AssociatedTouching(u8),
    Definition(u8, u8),
    EmbeddingText(u8, u8),
    AddRef(u8, u8),
    RemoveRef(u8, u8),
    Substrate(u8),
    SetProperty {
        at: u8,
        key: u8,
        value: u8,
        source: u8,
        trust: u8,
    },
    Accept(u8, u8, u8),
    Retract(u8, u8, u8),
    RemoveProperty(u8, u8),
    Purge(u8),
    Relate(u8, u8, u8, u8),
    Unrelate(u8, u8, Option<u8>),
    Update(u8, u8, u8, Option<u8>, Option<i8>),
    Propose(u8, bool),
    Consolidate,
    Days(u8),
    Minutes(u8),
    Checkpoint,
    /// `record_episode`: concepts (name, category, defined), relationships (source, target,
    /// type, weight), the episode and its trust.
    Episode {
        episode: u8,
        concepts: Vec<(u8, u8, bool)>,
        relations: Vec<(u8, u8, u8, u8)>,
        trust: u8,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let b = any::<u8>;
    prop_oneof![
        6 => (b(), b(), proptest::option::of(b()), any::<bool>())
            .prop_map(|(name, category, episode, define)| Step::Find { name, category, episode, define }),
        1 => (b(), any::<bool>()).prop_map(|(name, metadata)| Step::Insert { name, metadata }),
        2 => (b(), proptest::option::of(b())).prop_map(|(a, e)| Step::Reinforce(a, e)),
        1 => b().prop_map(Step::Remove),
        2 => b().prop_map(Step::Get),
        1 => (b(), b()).prop_map(|(a, c)| Step::Touch(a, c)),
        1 => b().prop_map(Step::Recall),
        1 => b().prop_map(Step::AssociatedTouching),
        1 => (b(), b()).prop_map(|(a, c)| Step::Definition(a, c)),
        1 => (b(), b()).prop_map(|(a, c)| Step::EmbeddingText(a, c)),
        2 => (b(), b()).prop_map(|(a, c)| Step::AddRef(a, c)),
        1 => (b(), b()).prop_map(|(a, c)| Step::RemoveRef(a, c)),
        1 => b().prop_map(Step::Substrate),
        4 => (b(), b(), b(), b(), b())
            .prop_map(|(at, key, value, source, trust)| Step::SetProperty { at, key, value, source, trust }),
        1 => (b(), b(), b()).prop_map(|(a, k, v)| Step::Accept(a, k, v)),
        1 => (b(), b(), b()).prop_map(|(a, k, s)| Step::Retract(a, k, s)),
        1 => (b(), b()).prop_map(|(a, k)| Step::RemoveProperty(a, k)),
        1 => b().prop_map(Step::Purge),
        4 => (b(), b(), b(), b()).prop_map(|(x, y, t, w)| Step::Relate(x, y, t, w)),
        1 => (b(), b(), proptest::option::of(b())).prop_map(|(x, y, t)| Step::Unrelate(x, y, t)),
        1 => (b(), b(), b(), proptest::option::of(b()), proptest::option::of(any::<i8>()))
            .prop_map(|(x, y, t, w, d)| Step::Update(x, y, t, w, d)),
        1 => (b(), any::<bool>()).prop_map(|(t, s)| Step::Propose(t, s)),
        1 => Just(Step::Consolidate),
        1 => b().prop_map(Step::Days),
        2 => b().prop_map(Step::Minutes),
        1 => Just(Step::Checkpoint),
        5 => episode_step(),
    ]
}

fn episode_step() -> impl Strategy<Value = Step> {
    let b = any::<u8>;
    (
        b(),
        prop::collection::vec((b(), b(), any::<bool>()), 0..6),
        prop::collection::vec((b(), b(), b(), b()), 0..7),
        b(),
    )
        .prop_map(|(episode, concepts, relations, trust)| Step::Episode {
            episode,
            concepts,
            relations,
            trust,
        })
}

/// The concepts and relationships of an episode step, owned.
struct EpisodeParts {
    names: Vec<(&'static str, &'static str, String)>,
    relations: Vec<(usize, usize, &'static str, f64)>,
    source: Source,
    trust: f64,
}

impl EpisodeParts {
    fn of(concepts: &[(u8, u8, bool)], relations: &[(u8, u8, u8, u8)], trust: u8) -> Self {
        let names = concepts
            .iter()
            .map(|&(n, c, define)| {
                let name = NAMES[usize::from(n) % NAMES.len()];
                let definition = if define { format!("defined {n}") } else { String::new() };
                (name, CATEGORIES[usize::from(c) % 2], definition)
            })
            .collect();
        // Now and then bad input: an index past the end, a type not known (NESTS_IN, unless
        // proposed), a weight above 1.
        let n = concepts.len().max(1);
        let relations = relations
            .iter()
            .map(|&(x, y, t, w)| {
                let x = if x == 255 { n } else { usize::from(x) % n };
                let t = if t == 255 { "NESTS_IN" } else { TYPES[usize::from(t) % 4] };
                (x, usize::from(y) % n, t, f64::from(w % 51) / 50.0 + if w == 255 { 1.0 } else { 0.0 })
            })
            .collect();
        // Mostly the episode's trust; now and then out of range.
        let trust = if trust == 255 { 1.5 } else { 0.6 };
        Self { names, relations, source: source(2), trust }
    }

    fn concepts(&self) -> Vec<EpisodeConcept<'_>> {
        self.names.iter().map(|(n, c, d)| EpisodeConcept::new(n, c, d)).collect()
    }

    fn relationships(&self) -> Vec<EpisodeRelationship<'_>> {
        self.relations.iter().map(|&(a, b, t, w)| EpisodeRelationship::new(a, b, t, w, 0.3)).collect()
    }
}

/// What `record_episode` reports, without the record count (the single calls have none).
fn recorded(r: &Result<RecordedEpisode, crate::Error>) -> String {
    match r {
        Ok(r) => format!("{:?} {:?} {:?}", r.concepts, r.referenced, r.relationships),
        Err(e) => format!("error {e}"),
    }
}

/// The single calls `record_episode` stands for: `find_or_create` and `add_ref` per concept,
/// then `define_relationship` per relationship whose ends differ. Called only on input
/// `record_episode` accepts.
fn episode_by_single_calls(atl: &mut Atl, episode: RecordId, parts: &EpisodeParts) -> RecordedEpisode {
    let mut out = RecordedEpisode::default();
    for (name, category, definition) in &parts.names {
        let mut s = spec(name, category);
        definition.clone_into(&mut s.definition);
        s.source_episode = Some(episode);
        s.source = parts.source.clone();
        s.trust = parts.trust;
        let found = atl.find_or_create(&s).unwrap();
        let referenced = match atl.add_ref(found.id, LayerKind::Hippocampus, episode) {
            Ok(added) => added,
            Err(crate::Error::Compressed { .. }) => false,
            Err(e) => panic!("add_ref: {e}"),
        };
        out.concepts.push(found);
        out.referenced.push(referenced);
    }
    for &(a, b, t, w) in &parts.relations {
        let (source, target) = (out.concepts[a].id, out.concepts[b].id);
        let defined = if source == target {
            None
        } else {
            match atl.define_relationship(source, target, t, w, 0.3) {
                Ok(o) => Some(o),
                Err(e) if e.is_not_found() => None,
                Err(e) => panic!("define_relationship: {e}"),
            }
        };
        out.relationships.push(defined);
    }
    out
}

/// Runs `step` on `atl`; what the call returned, as text, for comparing two layers.
fn run(atl: &mut Atl, clock: &ManualClock, step: &Step) -> String {
    let ids: Vec<RecordId> = atl.state.records.iter().map(MemoryRecord::id).collect();
    let pick =
        |i: u8| if ids.is_empty() { RecordId::from_u128(999) } else { ids[usize::from(i) % ids.len()] };
    let ep = |i: u8| RecordId::from_u128(1_000 + u128::from(i % 8));
    match *step {
        Step::Find { name, category, episode, define } => {
            let mut s = spec(NAMES[usize::from(name) % NAMES.len()], CATEGORIES[usize::from(category) % 2]);
            s.source_episode = episode.map(ep);
            if define {
                s.definition = format!("defined {name}");
            }
            format!("{:?}", atl.find_or_create(&s).map(|f| (f.id, f.created, f.reinforced)))
        }
        Step::Insert { name, metadata } => {
            let mut c = match atl.new_concept(NAMES[usize::from(name) % NAMES.len()], "object") {
                Ok(c) => c,
                Err(e) => return format!("{e}"),
            };
            if metadata {
                c.metadata.insert("n", Value::Int(i64::from(name)));
            }
            c.source_episode_ids.push(ep(name));
            format!("{:?}", atl.insert(c.into()))
        }
        Step::Reinforce(a, e) => format!("{:?}", atl.reinforce(pick(a), e.map(ep))),
        Step::Remove(a) => format!("{:?}", atl.remove_concept(pick(a)).map(|r| r.id())),
        Step::Get(a) => format!("{:?}", atl.get(pick(a)).map(MemoryRecord::id)),
        Step::Touch(a, c) => format!("{}", atl.touch(&[pick(a), pick(c), RecordId::from_u128(5)])),
        Step::Recall(a) => {
            let n =
                atl.recall_concepts(&ConceptFilter::new().category(CATEGORIES[usize::from(a) % 2]), 5).len();
            format!("{n} {:?}", atl.recall_similar(NAMES[usize::from(a) % NAMES.len()], 2))
        }
        Step::AssociatedTouching(a) => format!("{:?}", atl.recall_associated_touching(&[pick(a)], 4)),
        Step::Definition(a, t) => format!("{:?}", atl.set_definition(pick(a), &format!("meaning {t}"))),
        Step::EmbeddingText(a, t) => format!("{:?}", atl.set_embedding_text(pick(a), &format!("text {t}"))),
        Step::AddRef(a, t) => {
            format!(
                "{:?}",
                atl.add_ref(pick(a), LayerKind::Hippocampus, RecordId::from_u128(u128::from(t % 6)))
            )
        }
        Step::RemoveRef(a, t) => format!(
            "{:?}",
            atl.remove_ref(pick(a), LayerKind::Hippocampus, RecordId::from_u128(u128::from(t % 6)))
        ),
        Step::Substrate(a) => format!(
            "{:?}",
            atl.activate_substrate(
                RecordId::from_u128(5_000 + u128::from(a % 4)),
                "a patch of light",
                "vision",
                ""
            )
        ),
        Step::SetProperty { at, key, value: v, source: s, trust } => format!(
            "{:?}",
            atl.set_property(
                pick(at),
                KEYS[usize::from(key) % KEYS.len()],
                value(v),
                source(s),
                f64::from(trust % 11) / 10.0
            )
        ),
        Step::Accept(a, k, v) => {
            format!("{:?}", atl.accept_value(pick(a), KEYS[usize::from(k) % KEYS.len()], &value(v)))
        }
        Step::Retract(a, k, s) => {
            format!("{:?}", atl.retract_claim(pick(a), KEYS[usize::from(k) % KEYS.len()], &source(s)))
        }
        Step::RemoveProperty(a, k) => {
            format!(
                "{:?}",
                atl.remove_property(pick(a), KEYS[usize::from(k) % KEYS.len()]).map(|p| p.claims().len())
            )
        }
        Step::Purge(s) => format!("{:?}", atl.try_purge_source(&source(s.max(1)))),
        Step::Relate(x, y, t, w) => format!(
            "{:?}",
            atl.define_relationship(
                pick(x),
                pick(y),
                TYPES[usize::from(t) % TYPES.len()],
                f64::from(w % 11) / 10.0,
                0.5
            )
        ),
        Step::Unrelate(x, y, t) => format!(
            "{:?}",
            atl.remove_relationship(pick(x), pick(y), t.map(|t| TYPES[usize::from(t) % TYPES.len()]))
        ),
        Step::Update(x, y, t, w, d) => {
            let update = EdgeUpdate {
                weight: w.map(|w| f64::from(w % 11) / 10.0),
                confidence: None,
                confidence_delta: d.map(|d| f64::from(d) / 100.0),
            };
            format!(
                "{:?}",
                atl.update_relationship(pick(x), pick(y), TYPES[usize::from(t) % TYPES.len()], update)
            )
        }
        Step::Propose(t, symmetric) => format!(
            "{:?}",
            atl.propose_relationship_type_with(
                TYPES[usize::from(t) % TYPES.len()],
                "proposed",
                symmetric,
                !symmetric
            )
        ),
        Step::Consolidate => format!("{:?}", atl.consolidate_now()),
        Step::Days(d) => {
            clock.advance(maxim_core::days(u64::from(d % 12)));
            String::new()
        }
        Step::Minutes(m) => {
            clock.advance(Duration::from_secs(60 * u64::from(m)));
            String::new()
        }
        Step::Checkpoint => {
            if atl.is_journaled() {
                atl.checkpoint().unwrap();
            }
            String::new()
        }
        Step::Episode { episode, ref concepts, ref relations, trust } => {
            let parts = EpisodeParts::of(concepts, relations, trust);
            let (concepts, relationships) = (parts.concepts(), parts.relationships());
            let write = EpisodeWrite::new(ep(episode), LayerKind::Hippocampus, &parts.source, parts.trust)
                .concepts(&concepts)
                .relationships(&relationships);
            recorded(&atl.record_episode(&write))
        }
    }
}

fn config() -> AtlConfig {
    AtlConfig { max_concepts: 10, ..AtlConfig::default() }
}

fn open(dir: &std::path::Path, clock: &ManualClock) -> Atl {
    Atl::builder()
        .clock(clock.shared())
        .config(config())
        .id_seed(9)
        .sync_policy(SyncPolicy::Never)
        .open(dir)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The directory reopens to exactly the live layer, which behaves exactly like a layer
    /// in memory.
    #[test]
    fn replaying_the_journal_gives_the_live_layer(steps in prop::collection::vec(step(), 1..90)) {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut live = open(dir.path(), &clock);
        let mut memory = Atl::builder().clock(clock.shared()).config(config()).id_seed(9).build().unwrap();
        for (i, s) in steps.iter().enumerate() {
            let (a, b) = (run(&mut live, &clock, s), run(&mut memory, &clock, s));
            prop_assert_eq!(a, b, "step {} {:?}", i, s);
        }
        let expected = digest(&live);
        prop_assert_eq!(&digest(&memory), &expected);
        prop_assert_eq!(live.len(), memory.len());
        drop(live);
        let back = open(dir.path(), &clock);
        prop_assert_eq!(digest(&back), expected);
    }
}

#[test]
fn reads_are_journaled_with_the_next_write_and_at_drop() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut atl = open(dir.path(), &clock);
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let journal = dir.path().join("atl.journal");
    let len = || std::fs::metadata(&journal).unwrap().len();
    let after_write = len();
    clock.advance(Duration::from_secs(5));
    atl.get(mug).unwrap();
    atl.recall_similar("mug", 1);
    assert_eq!(len(), after_write, "a read costs no I/O");
    atl.find_or_create(&spec("cup", "object")).unwrap();
    assert!(len() > after_write);
    atl.touch(&[mug]);
    let expected = digest(&atl);
    drop(atl);
    let back = open(dir.path(), &clock);
    assert_eq!(back.record(mug).unwrap().meta().access_count, 3); // created, got, touched
    assert_eq!(digest(&back), expected);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `record_episode` reports and leaves exactly what its single calls do, among every
    /// other write (at capacity too: the layer holds 10 concepts), and its journal replays to
    /// the same layer.
    #[test]
    fn an_episode_write_is_its_single_calls(steps in prop::collection::vec(step(), 1..70)) {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut batched = open(dir.path(), &clock);
        let mut single = Atl::builder().clock(clock.shared()).config(config()).id_seed(9).build().unwrap();
        for (i, s) in steps.iter().enumerate() {
            let (a, b) = match s {
                Step::Episode { episode, concepts, relations, trust } => {
                    let parts = EpisodeParts::of(concepts, relations, *trust);
                    let (concepts, relationships) = (parts.concepts(), parts.relationships());
                    let id = RecordId::from_u128(1_000 + u128::from(*episode % 8));
                    let write = EpisodeWrite::new(id, LayerKind::Hippocampus, &parts.source, parts.trust)
                        .concepts(&concepts)
                        .relationships(&relationships);
                    let before = digest(&batched);
                    let result = batched.record_episode(&write);
                    if result.is_err() {
                        // Refused input changes nothing, and the single calls are not made.
                        prop_assert_eq!(digest(&batched), before);
                        continue;
                    }
                    prop_assert!(result.as_ref().unwrap().records >= usize::from(!concepts.is_empty()));
                    (recorded(&result), recorded(&Ok(episode_by_single_calls(&mut single, id, &parts))))
                }
                _ => (run(&mut batched, &clock, s), run(&mut single, &clock, s)),
            };
            prop_assert_eq!(a, b, "step {} {:?}", i, s);
        }
        let expected = digest(&batched);
        prop_assert_eq!(&digest(&single), &expected);
        drop(batched);
        prop_assert_eq!(digest(&open(dir.path(), &clock)), expected);
    }
}

fn episode_write_parts() -> EpisodeParts {
    // An object, a place, two goal words and a tool (the hub's shape), related pairwise.
    let concepts = [(0, 0, true), (3, 1, true), (10, 0, false), (12, 0, false), (7, 1, true)];
    let relations = [(0, 1, 1, 3), (0, 2, 3, 3), (2, 3, 0, 3), (3, 4, 1, 3)];
    EpisodeParts::of(&concepts, &relations, 0)
}

/// A crash in the middle of writing an episode's record loses that episode whole and nothing
/// before it: the record is cut at every byte and the directory reopened.
#[test]
fn a_torn_episode_record_loses_that_episode_whole_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let parts = episode_write_parts();
    let (concepts, relationships) = (parts.concepts(), parts.relationships());
    let write = |atl: &mut Atl, n: u128| {
        let id = RecordId::from_u128(1_000 + n);
        let w = EpisodeWrite::new(id, LayerKind::Hippocampus, &parts.source, parts.trust)
            .concepts(&concepts)
            .relationships(&relationships);
        atl.record_episode(&w).unwrap()
    };
    let mut atl = Atl::builder()
        .clock(clock.shared())
        .id_seed(9)
        .sync_policy(SyncPolicy::Always)
        .open(dir.path())
        .unwrap();
    for n in 0..3 {
        write(&mut atl, n);
        clock.advance(Duration::from_secs(60));
    }
    let journal = dir.path().join("atl.journal");
    let before_last = std::fs::metadata(&journal).unwrap().len();
    let acknowledged = digest(&atl);
    let last = write(&mut atl, 3);
    assert_eq!(last.records, 1, "known concepts of distinct names: one record");
    assert!(last.concepts.iter().all(|c| !c.created && c.reinforced));
    let full = digest(&atl);
    drop(atl);
    let bytes = std::fs::read(&journal).unwrap();
    let reopen = |len: usize| {
        let copy = tempfile::tempdir().unwrap();
        std::fs::write(copy.path().join("atl.journal"), &bytes[..len]).unwrap();
        let atl = Atl::builder().clock(clock.shared()).id_seed(9).open(copy.path()).unwrap();
        digest(&atl)
    };
    assert_eq!(reopen(bytes.len()), full);
    let start = usize::try_from(before_last).unwrap();
    for cut in start..bytes.len() {
        assert_eq!(reopen(cut), acknowledged, "cut at byte {cut} of the last record");
    }
}

/// Bad input to `record_episode` is an error naming what is wrong, and nothing changes:
/// not the layer, not the journal.
#[test]
fn a_refused_episode_changes_nothing() {
    type Expected = fn(&crate::Error) -> bool;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut atl = open(dir.path(), &clock);
    let parts = episode_write_parts();
    let (concepts, relationships) = (parts.concepts(), parts.relationships());
    let ep = RecordId::from_u128(1_000);
    let good = EpisodeWrite::new(ep, LayerKind::Hippocampus, &parts.source, 0.6)
        .concepts(&concepts)
        .relationships(&relationships);
    atl.record_episode(&good).unwrap();
    let journal = dir.path().join("atl.journal");
    let (state, len) = (digest(&atl), std::fs::metadata(&journal).unwrap().len());
    let empty = [EpisodeConcept::new("mug", "object", ""), EpisodeConcept::new(" -- ", "object", "")];
    let out_of_range = [EpisodeRelationship::new(0, 5, "IS_A", 0.3, 0.3)];
    let unknown = [EpisodeRelationship::new(0, 1, "NESTS_IN", 0.3, 0.3)];
    let nan = [EpisodeRelationship::new(0, 1, "IS_A", f64::NAN, 0.3)];
    let high = [EpisodeRelationship::new(0, 1, "IS_A", 0.3, 1.5)];
    let cases: Vec<(EpisodeWrite<'_>, Expected)> = vec![
        (EpisodeWrite { trust: -0.1, ..good }, |e| {
            matches!(e, crate::Error::Core(maxim_core::Error::OutOfRange { .. }))
        }),
        (good.concepts(&empty), |e| matches!(e, crate::Error::EmptyName { field: "name", .. })),
        (good.relationships(&out_of_range), |e| {
            matches!(e, crate::Error::Core(maxim_core::Error::InvalidArgument { .. }))
        }),
        (good.relationships(&unknown), |e| matches!(e, crate::Error::UnknownRelationship { .. })),
        (good.relationships(&nan), |e| matches!(e, crate::Error::Core(maxim_core::Error::OutOfRange { .. }))),
        (good.relationships(&high), |e| {
            matches!(e, crate::Error::Core(maxim_core::Error::OutOfRange { .. }))
        }),
    ];
    for (i, (write, expected)) in cases.iter().enumerate() {
        let err = atl.record_episode(write).unwrap_err();
        assert!(expected(&err), "case {i}: {err:?}");
        assert_eq!(digest(&atl), state, "case {i}");
        assert_eq!(std::fs::metadata(&journal).unwrap().len(), len, "case {i}");
    }
}
