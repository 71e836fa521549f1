//! The layer on a directory (issue 15): every journaled write is there after a reopen, the
//! directory is held by one open layer, loads are refused, a torn journal tail is cut at the
//! last whole entry, and invalid input never reaches the journal.

use std::path::Path;
use std::time::Duration;

use atl::{Atl, AtlConfig, EdgeUpdate, spec};
use maxim_core::journal::SyncPolicy;
use maxim_core::value::{MAX_DEPTH, Value};
use maxim_core::{LayerKind, ManualClock, MemoryLayer, RecordId, Source};

use crate::common::{T0, fingerprint};

fn open(dir: &Path, clock: &ManualClock) -> Atl {
    Atl::builder().clock(clock.shared()).id_seed(4).sync_policy(SyncPolicy::Always).open(dir).unwrap()
}

/// Every kind of write, with the clock moving between them; returns the concepts made.
fn write_everything(atl: &mut Atl, clock: &ManualClock) -> Vec<RecordId> {
    let mut ids = Vec::new();
    for (name, category) in [("coffee mug", "object"), ("kitchen", "location"), ("tea cup", "object")] {
        ids.push(atl.find_or_create(&spec(name, category)).unwrap().id);
        clock.advance(Duration::from_secs(60));
    }
    let mut seen = spec("coffe mug", "object");
    seen.source_episode = Some(RecordId::from_u128(77));
    atl.find_or_create(&seen).unwrap();
    atl.reinforce(ids[1], None).unwrap();
    atl.set_definition(ids[2], "a small cup for tea").unwrap();
    atl.set_embedding_text(ids[2], "tea cup porcelain").unwrap();
    atl.add_ref(ids[0], LayerKind::Hippocampus, RecordId::from_u128(9)).unwrap();
    atl.set_property(ids[0], "color", "blue", Source::UserStated, 1.0).unwrap();
    atl.set_property(ids[0], "color", "red", Source::Web("example.com".into()), 0.3).unwrap();
    atl.set_property(ids[0], "size", 3, Source::UserStated, 0.9).unwrap();
    atl.remove_property(ids[0], "size").unwrap();
    atl.propose_relationship_type("NESTS_IN", "fits inside", false).unwrap();
    atl.define_relationship(ids[2], ids[0], "NESTS_IN", 0.7, 0.6).unwrap();
    atl.define_relationship(ids[0], ids[1], "RELATED_TO", 0.8, 0.5).unwrap();
    atl.define_relationship(ids[1], ids[0], "RELATED_TO", 0.4, 0.5).unwrap();
    let up = EdgeUpdate { confidence_delta: Some(0.2), ..EdgeUpdate::default() };
    atl.update_relationship(ids[0], ids[1], "RELATED_TO", up).unwrap();
    atl.activate_substrate(RecordId::from_u128(4242), "a red patch", "vision", "").unwrap();
    atl.get(ids[1]).unwrap();
    atl.recall_associated_touching(&[ids[0]], 5);
    let doomed = atl.find_or_create(&spec("doomed", "object")).unwrap().id;
    atl.remove_concept(doomed).unwrap();
    ids
}

#[test]
fn a_reopened_directory_holds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let mut atl = open(dir.path(), &clock);
    assert!(atl.is_journaled());
    let ids = write_everything(&mut atl, &clock);
    let expected = fingerprint(&atl);
    drop(atl); // no save: the journal alone holds the writes
    let mut back = open(dir.path(), &clock);
    assert_eq!(fingerprint(&back), expected);
    assert!(back.is_contested(ids[0]));
    assert_eq!(back.find_or_create(&spec("Coffe Mugs", "object")).unwrap().id, ids[0]);

    // A checkpoint, a consolidation a month later, more writes, another reopening.
    back.checkpoint().unwrap();
    assert_eq!(std::fs::metadata(dir.path().join("atl.journal")).unwrap().len(), 40);
    clock.advance(maxim_core::days(25));
    let report = back.consolidate().unwrap();
    assert!(report.compressed + report.removed > 0, "{report:?}");
    back.find_or_create(&spec("late", "object")).unwrap();
    let expected = fingerprint(&back);
    drop(back);
    assert_eq!(fingerprint(&open(dir.path(), &clock)), expected);
}

#[test]
fn a_directory_is_held_by_one_open_layer() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let first = open(dir.path(), &clock);
    let err = Atl::builder().open(dir.path()).unwrap_err();
    assert!(matches!(err, atl::Error::Core(maxim_core::Error::Locked { .. })), "{err:?}");
    drop(first);
    assert!(Atl::builder().open(dir.path()).is_ok());
}

#[test]
fn a_journaled_layer_refuses_loads_and_its_own_snapshot_path_and_a_memory_one_to_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let mut atl = open(dir.path(), &clock);
    write_everything(&mut atl, &clock);
    let elsewhere = dir.path().join("copy.snap");
    atl.save(&elsewhere).unwrap();
    assert!(atl.load(&elsewhere).is_err());
    assert!(atl.load_with_recovery(&elsewhere).is_err());
    assert!(atl.save(dir.path().join("atl.snap")).is_err(), "the directory's snapshot is the checkpoint's");
    let (_c, mut memory) = crate::common::layer();
    assert!(memory.checkpoint().is_err());
    assert!(!memory.is_journaled());
    memory.load(&elsewhere).unwrap();
    assert_eq!(fingerprint(&memory), fingerprint(&atl));
}

#[test]
fn a_strangers_file_in_the_directory_is_kept_aside_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("atl.snap"), b"someone else's notes").unwrap();
    assert!(Atl::builder().open(dir.path()).is_err());
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(std::fs::read(kept[0].path()).unwrap(), b"someone else's notes");
}

fn nested(depth: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..depth {
        v = Value::List(vec![v]);
    }
    v
}

#[test]
fn invalid_input_never_reaches_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let mut atl = open(dir.path(), &clock);
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let cup = atl.find_or_create(&spec("cup", "object")).unwrap().id;
    atl.define_relationship(mug, cup, "IS_A", 0.5, 0.5).unwrap();
    let journal = dir.path().join("atl.journal");
    let len = std::fs::metadata(&journal).unwrap().len();
    let expected = fingerprint(&atl);
    let ghost = RecordId::from_u128(31337);
    let mut bad_trust = spec("jug", "object");
    bad_trust.trust = f64::NAN;
    let mut bad_record = atl.new_concept("jar", "object").unwrap();
    bad_record.confidence = 2.0;
    let results: Vec<(&str, bool)> = vec![
        ("empty name", atl.find_or_create(&spec("  ?! ", "object")).is_err()),
        ("NaN trust", atl.find_or_create(&bad_trust).is_err()),
        ("bad record", atl.insert(bad_record.into()).is_err()),
        ("duplicate", atl.insert(atl.record(mug).unwrap().clone()).is_err()),
        ("unknown reinforce", atl.reinforce(ghost, None).is_err()),
        ("unknown remove", atl.remove_concept(ghost).is_err()),
        ("unknown definition", atl.set_definition(ghost, "x").is_err()),
        ("NaN property", atl.set_property(mug, "w", f64::NAN, Source::UserStated, 1.0).is_err()),
        (
            "deep property",
            atl.set_property(mug, "w", nested(MAX_DEPTH as usize + 1), Source::UserStated, 1.0).is_err(),
        ),
        ("empty key", atl.set_property(mug, " ", 1, Source::UserStated, 1.0).is_err()),
        ("trust above 1", atl.set_property(mug, "w", 1, Source::UserStated, 1.5).is_err()),
        ("no claim to accept", atl.accept_value(mug, "w", &Value::Int(1)).is_err()),
        ("no claim to retract", atl.retract_claim(mug, "w", &Source::UserStated).is_err()),
        ("no property", atl.remove_property(mug, "w").is_err()),
        ("unknown type", atl.define_relationship(mug, cup, "LIKES", 0.5, 0.5).is_err()),
        ("NaN weight", atl.define_relationship(mug, cup, "IS_A", f64::NAN, 0.5).is_err()),
        ("self", atl.define_relationship(mug, mug, "IS_A", 0.5, 0.5).is_err()),
        ("unknown end", atl.define_relationship(mug, ghost, "IS_A", 0.5, 0.5).is_err()),
        (
            "infinite delta",
            atl.update_relationship(
                mug,
                cup,
                "IS_A",
                EdgeUpdate { confidence_delta: Some(f64::INFINITY), ..EdgeUpdate::default() },
            )
            .is_err(),
        ),
        ("bad type name", atl.propose_relationship_type("not a name", "", false).is_err()),
        ("ref on unknown", atl.add_ref(ghost, LayerKind::Hippocampus, mug).is_err()),
    ];
    for (what, refused) in &results {
        assert!(refused, "{what} was accepted");
    }
    // Calls that change nothing are not journaled either.
    assert!(!atl.update_relationship(mug, cup, "HAS_PART", EdgeUpdate::default()).unwrap());
    assert_eq!(atl.remove_relationship(cup, mug, None).unwrap(), 0);
    assert!(!atl.propose_relationship_type("IS_A", "again", false).unwrap());
    assert!(!atl.remove_ref(mug, LayerKind::Hippocampus, cup).unwrap());
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), len, "a refused write reached the journal");
    assert_eq!(fingerprint(&atl), expected);
    drop(atl);
    assert_eq!(fingerprint(&open(dir.path(), &clock)), expected);
}

/// Offsets of the journal's entries (each entry: u32 length, u32 checksum, u64 number, payload).
fn entry_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = 40;
    let mut out = Vec::new();
    while at + 16 <= bytes.len() {
        out.push(at);
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        at += 16 + n;
    }
    assert_eq!(at, bytes.len());
    out
}

#[test]
fn a_journal_cut_at_any_byte_of_its_last_entry_opens_to_the_writes_before_it() {
    let src = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let mut atl = open(src.path(), &clock);
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    atl.find_or_create(&spec("kitchen", "location")).unwrap();
    atl.set_property(mug, "color", "blue", Source::UserStated, 1.0).unwrap();
    let before = fingerprint(&atl);
    // The last entry: a concept with a definition and properties.
    let mut last = spec("coffee grinder", "object");
    last.definition = "grinds the beans for the coffee in the mug".into();
    atl.find_or_create(&last).unwrap();
    let after = fingerprint(&atl);
    drop(atl);
    let bytes = std::fs::read(src.path().join("atl.journal")).unwrap();
    let start = *entry_offsets(&bytes).last().unwrap();
    assert!(bytes.len() - start > 60, "the last entry is {} bytes", bytes.len() - start);
    for cut in start..=bytes.len() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("atl.journal");
        std::fs::write(&journal, &bytes[..cut]).unwrap();
        let back = open(dir.path(), &clock);
        let want = if cut == bytes.len() { &after } else { &before };
        assert_eq!(&fingerprint(&back), want, "cut at {cut} of {}", bytes.len());
        drop(back);
        let kept = std::fs::metadata(&journal).unwrap().len() as usize;
        assert_eq!(kept, if cut == bytes.len() { cut } else { start }, "cut at {cut}: the torn tail stays");
    }
}

#[test]
fn a_full_store_on_a_directory_replays_its_evictions() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let capacity = |n| {
        let mut c = AtlConfig::default();
        c.max_concepts = n;
        c
    };
    let config = capacity(8);
    let open_full = || {
        Atl::builder()
            .clock(clock.shared())
            .config(config.clone())
            .sync_policy(SyncPolicy::Never)
            .open(dir.path())
            .unwrap()
    };
    let mut atl = open_full();
    for i in 0..30 {
        atl.find_or_create(&spec(&format!("thing {i}"), "object")).unwrap();
        clock.advance(Duration::from_secs(600));
        if i == 12 {
            atl.checkpoint().unwrap();
        }
    }
    assert_eq!(atl.len(), 8);
    assert_eq!(atl.stats().counters["evictions"], 22);
    let expected = fingerprint(&atl);
    drop(atl);
    // Reopened with a larger capacity: the journal says what was evicted, not the settings.
    let bigger = Atl::builder().clock(clock.shared()).config(capacity(100)).open(dir.path()).unwrap();
    assert_eq!(fingerprint(&bigger), expected);
}
