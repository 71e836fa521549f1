//! Saving and loading the ledger: a reloaded promoter remembers what it credited.

use maxim_core::{Error as CoreError, LoadOutcome};
use promoter::Error;

use crate::common::{Concepts, Links, causal, eps, promoter};

#[test]
fn a_reloaded_promoter_changes_nothing_over_the_same_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("promoter.snap");
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    p.save(&path).unwrap();

    let mut fresh = promoter();
    fresh.load(&path).unwrap();
    assert_eq!(fresh.ledger(), p.ledger());
    assert_eq!(fresh.stats(), p.stats());
    let before = concepts.fingerprint();
    let report =
        fresh.promote_candidates("nac", &[causal("tool:grasp", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert!(report.is_quiet());
    assert_eq!(concepts.fingerprint(), before);
    // New evidence after the reload is credited once.
    let report =
        fresh.promote_candidates("nac", &[causal("tool:grasp", eps(0..5), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.reinforced[0].reinforcements, 1);
}

#[test]
fn a_corrupt_file_is_refused_and_the_backup_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("promoter.snap");
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:a", eps(0..3), 0.7)], &mut concepts, &mut links);
    p.save(&path).unwrap();
    p.promote_candidates("nac", &[causal("tool:b", eps(10..13), 0.7)], &mut concepts, &mut links);
    p.save(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();

    let mut fresh = promoter();
    fresh.promote_candidates(
        "nac",
        &[causal("tool:z", eps(50..53), 0.7)],
        &mut Concepts::default(),
        &mut Links::default(),
    );
    let before = fresh.ledger().clone();
    let err = fresh.load(&path).unwrap_err();
    assert!(matches!(err, Error::Core(CoreError::Corrupt { .. })), "{err:?}");
    assert_eq!(fresh.ledger(), &before, "a refused load changes nothing");

    // The corrupt file was moved aside; the backup holds the first save.
    let outcome = fresh.load_with_recovery(&path).unwrap();
    assert!(matches!(outcome, LoadOutcome::FromBackup { .. }));
    assert_eq!(fresh.ledger().pattern_count(), 1);
    assert!(fresh.concept_of("causal_pattern", "tool:a → tool:a:positive").is_some());
}

#[test]
fn a_missing_file_leaves_the_promoter_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = promoter();
    assert!(matches!(p.load_with_recovery(dir.path().join("none.snap")).unwrap(), LoadOutcome::Missing));
    assert!(p.load(dir.path().join("none.snap")).is_err());
}

#[test]
fn a_file_of_another_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.snap");
    maxim_core::codec::save(&path, "atl", &1u8).unwrap();
    let err = promoter().load(&path).unwrap_err();
    assert!(matches!(err, Error::Core(CoreError::WrongKind { .. })), "{err:?}");
}

#[test]
fn saves_overwrite_only_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("promoter.snap");
    std::fs::write(&path, b"someone else's").unwrap();
    let p = promoter();
    let err = p.save(&path).unwrap_err();
    assert!(matches!(err, Error::Core(CoreError::OverwriteRefused { .. })), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"someone else's");
    p.allow_overwrite(true);
    p.save(&path).unwrap();
    assert!(p.file_claims().owns(&path));
}

/// A file the codec accepts but the ledger's checks refuse (a newer schema): a plain load
/// keeps it aside, and recovery keeps it aside and loads the backup.
#[test]
fn a_file_refused_by_the_ledgers_checks_is_kept_aside_and_recovery_loads_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("promoter.snap");
    let mut p = promoter();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:a", eps(0..3), 0.7)], &mut concepts, &mut links);
    p.save(&path).unwrap();
    p.save(&path).unwrap(); // the backup now holds a good snapshot too
    let empty: (Vec<u8>, Vec<u8>, Vec<(String, u64)>) = (Vec::new(), Vec::new(), Vec::new());
    let newer = (promoter::SCHEMA_VERSION + 1, 0u64, empty.0, empty.1, empty.2);
    let newer = maxim_core::codec::encode(promoter::SNAPSHOT_KIND, &newer).unwrap();

    std::fs::write(&path, &newer).unwrap();
    let mut fresh = promoter();
    let err = fresh.load(&path).unwrap_err();
    assert!(matches!(err, Error::Core(CoreError::UnsupportedVersion { kept_aside: Some(_), .. })), "{err:?}");
    assert!(!path.exists(), "the refused file was moved aside");
    assert_eq!(fresh.ledger().pattern_count(), 0, "a failed load changes nothing");

    std::fs::write(&path, &newer).unwrap();
    match fresh.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { primary_error, .. } => assert!(
            matches!(*primary_error, CoreError::UnsupportedVersion { kept_aside: Some(_), .. }),
            "{primary_error:?}"
        ),
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(fresh.ledger(), p.ledger());
}
