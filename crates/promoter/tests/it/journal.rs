//! The promoter opened on a directory: every change of its ledger is journaled, so it opens
//! again knowing every credit it made.

use maxim_core::Error as CoreError;
use maxim_core::journal::SyncPolicy;
use promoter::{Error, PromoterBuilder, SemanticPromoter};

use crate::common::{Concepts, Links, NameGate, causal, eps, statistical};

fn builder() -> PromoterBuilder {
    let mut b = SemanticPromoter::builder();
    b.gate(std::sync::Arc::new(NameGate::default())).sync_policy(SyncPolicy::Always);
    b
}

#[test]
fn a_reopened_promoter_finds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let mut p = builder().open(dir.path()).unwrap();
    assert!(p.is_journaled());
    p.promote_candidates("nac", &[causal("tool:a", eps(0..4), 0.7)], &mut concepts, &mut links);
    p.checkpoint().unwrap();
    // After the checkpoint: more evidence, a second pattern and a forgotten concept.
    p.promote_candidates("nac", &[causal("tool:a", eps(0..6), 0.7)], &mut concepts, &mut links);
    let ag = maxim_core::RecordId::from_u128(9);
    let stat = p.promote_candidates("s", &[statistical("m", ag, 0.8, 20)], &mut concepts, &mut links);
    assert!(p.forget_concept(stat.promoted[0].concept).unwrap());
    let ledger = p.ledger().clone();
    drop(p); // no save: only the journal holds the writes since the checkpoint

    let mut again = builder().open(dir.path()).unwrap();
    assert_eq!(again.ledger(), &ledger);
    assert!(dir.path().join("promoter.snap").exists() && dir.path().join("promoter.journal").exists());
    let before = concepts.fingerprint();
    let report =
        again.promote_candidates("nac", &[causal("tool:a", eps(0..6), 0.7)], &mut concepts, &mut links);
    assert!(report.is_quiet(), "{report:?}");
    assert_eq!(concepts.fingerprint(), before);
}

#[test]
fn a_fresh_directory_opens_empty_and_a_second_opener_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = builder().open(dir.path().join("new")).unwrap();
    assert!(p.ledger().is_empty());
    let err = builder().open(dir.path().join("new")).unwrap_err();
    assert!(matches!(err, Error::Core(CoreError::Locked { .. })), "{err:?}");
}

#[test]
fn a_journaled_promoter_loads_only_from_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.snap");
    crate::common::promoter().save(&other).unwrap();
    let mut p = builder().open(dir.path().join("dir")).unwrap();
    assert!(p.load(&other).is_err());
    assert!(p.load_with_recovery(&other).is_err());
    let mut memory = crate::common::promoter();
    assert!(!memory.is_journaled());
    assert!(memory.checkpoint().is_err(), "only a promoter on a directory checkpoints");
    memory.load(&other).unwrap();
}
