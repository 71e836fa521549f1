//! Format stability (issue 15): the version-1 snapshot and journal committed under
//! `tests/data/` must still load, and this build must still write them byte for byte. A
//! reordered field or a changed encoding fails here: such a change needs a new
//! `SCHEMA_VERSION` and a migration (`docs/durability.md`). `MAXIM_BLESS=1` rewrites the
//! files (only for a deliberate new version).

use std::path::{Path, PathBuf};
use std::time::Duration;

use hippocampus::{Hippocampus, SCHEMA_VERSION};
use maxim_core::journal::SyncPolicy;
use maxim_core::value::Value;
use maxim_core::{EdgeKind, ManualClock, RecordId, Timestamp};

use crate::common::episode;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn bless(path: &Path, bytes: &[u8]) {
    if std::env::var_os("MAXIM_BLESS").is_some() {
        std::fs::write(path, bytes).unwrap();
    }
}

/// The same writes every time: fixed clock, fixed id seed.
fn write_all(h: &mut Hippocampus, clock: &ManualClock) -> Vec<RecordId> {
    let mut ids = Vec::new();
    for i in 0..4 {
        let mut e =
            episode(&["mug", if i % 2 == 0 { "cup" } else { "box" }], "find mug", "look", Some(i % 2 == 0));
        e.perception.observations.insert("step", Value::from(i64::from(i)));
        e.state_snapshot = Some(Value::from("kitchen"));
        ids.push(h.capture(e).unwrap());
        clock.advance(Duration::from_secs(60));
    }
    h.link(ids[0], ids[3], EdgeKind::Causes, 0.5).unwrap();
    h.compress(ids[1]).unwrap();
    h.remove(ids[2]).unwrap();
    ids
}

fn builder(clock: &ManualClock) -> hippocampus::HippocampusBuilder {
    let mut b = Hippocampus::builder();
    b.clock(clock.shared()).id_seed(2026);
    b
}

#[test]
fn the_version_1_snapshot_loads_and_is_written_byte_for_byte() {
    assert_eq!(SCHEMA_VERSION, 1);
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut h = builder(&clock).build().unwrap();
    let ids = write_all(&mut h, &clock);
    let bytes = h.to_snapshot_bytes().unwrap();
    let path = data("hippocampus-v1.snap");
    bless(&path, &bytes);
    let golden = std::fs::read(&path).unwrap();
    let mut back = builder(&clock).build().unwrap();
    back.load_from_bytes(&path, &golden).unwrap();
    assert_eq!(back.len(), 3);
    assert!(back.peek(ids[1]).unwrap().is_compressed());
    assert!(back.peek(ids[2]).is_none());
    assert_eq!(back.to_snapshot_bytes().unwrap(), golden, "a loaded file writes back the same bytes");
    assert_eq!(
        bytes, golden,
        "this build no longer writes version 1 as it was: bump SCHEMA_VERSION and migrate"
    );
}

#[test]
fn the_version_1_journal_replays_and_is_written_byte_for_byte() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let tmp = tempfile::tempdir().unwrap();
    let mut h = builder(&clock).sync_policy(SyncPolicy::Never).open(tmp.path()).unwrap();
    let ids = write_all(&mut h, &clock);
    let expected = h.to_snapshot_bytes().unwrap();
    drop(h);
    let journal = std::fs::read(tmp.path().join("hippocampus.journal")).unwrap();
    let path = data("hippocampus-v1.journal");
    bless(&path, &journal);
    let golden = std::fs::read(&path).unwrap();
    // The committed journal alone, in a fresh directory, replays to the same layer.
    let replay_dir = tempfile::tempdir().unwrap();
    std::fs::copy(&path, replay_dir.path().join("hippocampus.journal")).unwrap();
    let back = builder(&clock).open(replay_dir.path()).unwrap();
    assert_eq!(back.to_snapshot_bytes().unwrap(), expected);
    assert!(back.peek(ids[2]).is_none());
    assert_eq!(journal, golden, "this build no longer writes journal version 1 as it was");
}
