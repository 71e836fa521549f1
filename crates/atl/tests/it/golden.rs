//! Format stability (issue 15): the snapshots committed under `tests/data/` must still load,
//! and this build must still write the current version byte for byte. A reordered field or
//! a changed encoding fails here: such a change needs a new `SCHEMA_VERSION` and a migration
//! (`docs/durability.md`). `MAXIM_BLESS=1` rewrites the current version's file (only for a
//! new version).
//!
//! - `atl-v1.snap`: schema 1, without `journal_seq`; it loads and converts (as `journal_seq`
//!   0), and a save writes it as version 2.
//! - `atl-v2.snap`: schema 2, with `journal_seq`; written byte for byte.

use std::path::Path;

use atl::{Atl, SCHEMA_VERSION, spec};
use maxim_core::{ManualClock, Source};

use crate::common::{T0, fingerprint};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The layer both golden files hold.
fn golden_layer(clock: &ManualClock) -> Atl {
    let mut atl = Atl::builder().clock(clock.shared()).id_seed(2026).build().unwrap();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    let kitchen = atl.find_or_create(&spec("kitchen", "location")).unwrap().id;
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.6).unwrap();
    atl.set_property(mug, "color", "blue", Source::UserStated, 1.0).unwrap();
    atl.propose_relationship_type("NESTS_IN", "fits inside", false).unwrap();
    atl
}

#[test]
fn the_version_2_snapshot_loads_and_is_written_byte_for_byte() {
    assert_eq!(SCHEMA_VERSION, 2);
    let clock = ManualClock::new(T0);
    let atl = golden_layer(&clock);
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("atl.snap");
    atl.save(&fresh).unwrap();
    let bytes = std::fs::read(&fresh).unwrap();
    let path = data("atl-v2.snap");
    if std::env::var_os("MAXIM_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let copy = tmp.path().join("golden.snap");
    std::fs::copy(&path, &copy).unwrap();
    let mut back = Atl::builder().clock(clock.shared()).build().unwrap();
    back.load(&copy).unwrap();
    assert_eq!(fingerprint(&back), fingerprint(&atl));
    assert_eq!(bytes, std::fs::read(&path).unwrap(), "this build no longer writes version 2 as it was");
}

#[test]
fn the_version_1_snapshot_still_loads_and_is_saved_as_version_2() {
    let clock = ManualClock::new(T0);
    let atl = golden_layer(&clock);
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("golden-v1.snap");
    std::fs::copy(data("atl-v1.snap"), &copy).unwrap();
    let mut back = Atl::builder().clock(clock.shared()).build().unwrap();
    back.load(&copy).unwrap();
    assert_eq!(fingerprint(&back), fingerprint(&atl));
    // Saved again, it is the version-2 file (journal_seq 0).
    back.save(&copy).unwrap();
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(data("atl-v2.snap")).unwrap());
}

/// `atl-v1.journal`: the journal of a few writes of every common kind, after an empty
/// snapshot. It must replay to the same layer, and this build must write it byte for byte
/// (the operation enum's encoding is frozen: new kinds of operation go at its end).
#[test]
fn the_version_1_journal_replays_and_is_written_byte_for_byte() {
    use atl::EdgeUpdate;
    use maxim_core::journal::SyncPolicy;
    use maxim_core::{LayerKind, RecordId};
    let clock = ManualClock::new(T0);
    let open = |dir: &Path| {
        Atl::builder().clock(clock.shared()).id_seed(2026).sync_policy(SyncPolicy::Always).open(dir).unwrap()
    };
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("fresh");
    let mut atl = open(&fresh);
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    let kitchen = atl.find_or_create(&spec("kitchen", "location")).unwrap().id;
    let mut seen = spec("coffe mug", "object");
    seen.source_episode = Some(RecordId::from_u128(7));
    atl.find_or_create(&seen).unwrap();
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.6).unwrap();
    let up = EdgeUpdate { weight: Some(0.9), ..EdgeUpdate::default() };
    atl.update_relationship(mug, kitchen, "RELATED_TO", up).unwrap();
    atl.set_property(mug, "color", "blue", Source::UserStated, 1.0).unwrap();
    atl.add_ref(mug, LayerKind::Hippocampus, RecordId::from_u128(7)).unwrap();
    atl.propose_relationship_type("NESTS_IN", "fits inside", false).unwrap();
    atl.get(kitchen).unwrap();
    atl.reinforce(kitchen, None).unwrap();
    let doomed = atl.find_or_create(&spec("doomed", "object")).unwrap().id;
    atl.remove_concept(doomed).unwrap();
    let expected = fingerprint(&atl);
    drop(atl);
    let bytes = std::fs::read(fresh.join("atl.journal")).unwrap();
    let path = data("atl-v1.journal");
    if std::env::var_os("MAXIM_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let golden = tmp.path().join("golden");
    std::fs::create_dir(&golden).unwrap();
    std::fs::copy(&path, golden.join("atl.journal")).unwrap();
    assert_eq!(fingerprint(&open(&golden)), expected);
    assert_eq!(bytes, std::fs::read(&path).unwrap(), "this build no longer writes the journal as it was");
}
