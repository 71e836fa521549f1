//! Persistence (§3.13): everything round-trips; failed loads change nothing.

use std::time::Duration;

use hippocampus::{
    Hippocampus, HippocampusConfig, IndexKey, IndexedKeys, KeyKind, LoadOutcome, NewEpisode, RecallFilter,
};
use maxim_core::value::Value;
use maxim_core::{EdgeKind, RecordId};

use crate::common::{episode, layer};

/// A store with full and compressed records, CAUSES edges, a queue, state snapshots and
/// use pressure.
fn rich() -> (maxim_core::ManualClock, Hippocampus, Vec<RecordId>) {
    let (clock, mut h) = layer();
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut e =
            episode(&["mug", if i % 2 == 0 { "cup" } else { "box" }], "find mug", "look", Some(i % 3 != 0));
        e.perception.salience = 0.5 + 0.08 * f64::from(i);
        e.perception.detected_people = vec!["Ana".into()];
        e.state_snapshot = Some(Value::Map([("step", Value::from(i64::from(i)))].into_iter().collect()));
        e.run_id = "run-1".into();
        ids.push(h.capture(e).unwrap());
        clock.advance(Duration::from_secs(600));
    }
    h.link(ids[0], ids[5], EdgeKind::Causes, 0.7).unwrap();
    h.compress(ids[1]).unwrap();
    h.recall_touching(&RecallFilter::new().goal("find mug").query("mug"), 3);
    (clock, h, ids)
}

#[test]
fn everything_round_trips() {
    let (clock, h, ids) = rich();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.snap");
    h.save(&path).unwrap();
    let mut back = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    back.load(&path).unwrap();
    assert_eq!(back.len(), h.len());
    for &id in &ids {
        assert_eq!(back.peek(id), h.peek(id), "record {id}");
        assert_eq!(back.keys_of(id), h.keys_of(id));
        assert_eq!(back.associated_ids(id), h.associated_ids(id));
    }
    assert!(back.peek(ids[1]).unwrap().is_compressed());
    assert_eq!(back.associative_graph(), h.associative_graph());
    assert!(back.associative_graph().find_edge(ids[0], ids[5], Some(EdgeKind::Causes), None).is_some());
    assert_eq!(back.index_keys(), h.index_keys());
    assert_eq!(
        back.consolidation_candidates().collect::<Vec<_>>(),
        h.consolidation_candidates().collect::<Vec<_>>()
    );
    assert_eq!(back.counters(), h.counters());
    assert_eq!(back.queries(), h.queries());
    assert_eq!(back.state_store().len(), 6);
    let r = h.peek(ids[2]).unwrap().as_full().unwrap().context.state_ref.unwrap();
    assert_eq!(back.state_store().peek(r), h.state_store().peek(r));
    assert!(back.peek(ids[5]).unwrap().usage().is_some());
    assert!(back.check_consistency().is_consistent());
    // Recall, association and sleep behave the same on the copy.
    let f = RecallFilter::new().object("mug").person("Ana");
    let a: Vec<RecordId> = h.recall(&f, 10).iter().map(|e| e.id()).collect();
    let b: Vec<RecordId> = back.recall(&f, 10).iter().map(|e| e.id()).collect();
    assert_eq!(a, b);
    // New ids after a load never collide with loaded ones.
    let new = back.capture(NewEpisode::default()).unwrap();
    assert!(ids.iter().all(|&id| id < new));
}

#[test]
fn bytes_round_trip_and_equal_states_encode_equally() {
    let (clock, h, _) = rich();
    let bytes = h.to_snapshot_bytes().unwrap();
    let mut back = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    back.load_from_bytes("mem", &bytes).unwrap();
    assert_eq!(back.to_snapshot_bytes().unwrap(), bytes);
}

#[test]
fn failed_loads_leave_the_layer_as_it_was() {
    let (_clock, h, _) = rich();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.snap");
    h.save(&good).unwrap();
    let mut bytes = std::fs::read(&good).unwrap();
    let (_c, mut other) = layer();
    let mine = other.capture(episode(&["plate"], "wash plate", "rinse", Some(true))).unwrap();
    let before = other.to_snapshot_bytes().unwrap();
    // A flipped bit, a truncated file, a garbage file, a missing file, another kind.
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("flipped.snap", bytes.clone()),
        ("truncated.snap", std::fs::read(&good).unwrap()[..100].to_vec()),
        ("garbage.snap", b"not a snapshot at all".to_vec()),
        ("kind.snap", maxim_core::codec::encode("atl", &1u8).unwrap()),
    ];
    for (name, content) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let err = other.load(&path).unwrap_err();
        assert!(matches!(err, hippocampus::Error::Core(_)), "{name}: {err}");
        assert_eq!(other.to_snapshot_bytes().unwrap(), before, "{name}");
        assert!(other.contains(mine));
    }
    assert!(other.load(dir.path().join("missing.snap")).is_err());
    assert!(other.load_from_bytes("x", b"MAXIMSNP").is_err());
    assert_eq!(other.to_snapshot_bytes().unwrap(), before);
}

#[test]
fn recovery_uses_the_backup_and_a_missing_file_is_a_fresh_start() {
    let (clock, h, _) = rich();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.snap");
    let (_c, mut fresh) = layer();
    assert!(matches!(fresh.load_with_recovery(&path).unwrap(), LoadOutcome::Missing));
    assert!(fresh.is_empty());
    h.save(&path).unwrap();
    let (_c2, mut second) = layer();
    second.capture(NewEpisode::default()).unwrap();
    second.allow_overwrite(true); // another store's file
    second.save(&path).unwrap(); // the first save is now the backup
    std::fs::write(&path, b"torn write").unwrap();
    let mut back = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    match back.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { .. } => {}
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(back.len(), h.len());
}

#[test]
fn a_load_indexes_the_kinds_the_loading_layer_indexes() {
    let (clock, h, ids) = rich();
    let bytes = h.to_snapshot_bytes().unwrap();
    let config = {
        let mut c = HippocampusConfig::default();
        c.indexed_keys = IndexedKeys { object: false, ..IndexedKeys::default() };
        c
    };
    let mut back = Hippocampus::builder().config(config).clock(clock.shared()).build().unwrap();
    back.load_from_bytes("narrow", &bytes).unwrap();
    assert!(back.check_consistency().is_consistent(), "{:?}", back.check_consistency());
    assert!(back.index_keys().iter().all(|k| k.kind() != KeyKind::Object));
    assert_eq!(back.memories_by_index(&IndexKey::Goal("find mug".into())).len(), ids.len());
    // Recall by object still works, by reading the full records' fields.
    assert_eq!(back.recall(&RecallFilter::new().object("cup"), 10).len(), 3);
}

#[test]
fn a_store_overwrites_only_files_it_created_or_read() {
    let (clock, h, _) = rich();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.snap");
    h.save(&path).unwrap();
    h.save(&path).unwrap(); // its own file
    let saved = std::fs::read(&path).unwrap();

    // A fresh store would replace the file with nothing: refused, and nothing is written.
    let (_c, stranger) = layer();
    let err = stranger.save(&path).unwrap_err();
    assert!(
        matches!(&err, hippocampus::Error::Core(maxim_core::Error::OverwriteRefused { path: p }) if p == &path)
    );
    assert_eq!(std::fs::read(&path).unwrap(), saved);

    // Reading the file makes it the reader's; so does being told to overwrite.
    let mut reader = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    reader.load(&path).unwrap();
    reader.save(&path).unwrap();
    stranger.allow_overwrite(true);
    stranger.save(&path).unwrap();
    // The file is now the stranger's: the first store no longer owns what is there.
    assert!(stranger.file_claims().owns(&path) && !h.file_claims().owns(&path));
    assert!(h.save(&path).is_err());

    // A failed load claims nothing.
    let (_c2, mut failed) = layer();
    assert!(failed.load(dir.path().join("missing.snap")).is_err());
    assert!(failed.file_claims().paths().is_empty());
}
