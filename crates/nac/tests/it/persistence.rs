//! Saving and loading (§8.5) and the layer checklist's persistence rules.

use maxim_core::codec::{self, LoadOutcome};
use maxim_core::{RecordId, Timestamp};
use nac::{Nac, Observation, Valence};

use crate::common::{ctx, default_store, grasp, store};

fn populated() -> (Nac, maxim_core::ManualClock) {
    let (mut nac, clock) = default_store();
    for i in 0..20u128 {
        clock.advance(std::time::Duration::from_secs(7));
        let valence = if i % 3 == 0 { Valence::Negative } else { Valence::Positive };
        nac.observe(
            &grasp(if i % 2 == 0 { "a" } else { "b" }, valence)
                .delay(i as f64 / 4.0)
                .context(&ctx(&[("mode", if i % 4 < 2 { "explore" } else { "exploit" })]))
                .memory(RecordId::from_u128(i)),
        )
        .unwrap();
    }
    nac.record_event("tool", "tool:lift", &ctx(&[("object", "mug")]), None).unwrap();
    nac.set_prior("tool", "tool:lift", 0.8, 0.4).unwrap();
    (nac, clock)
}

#[test]
fn a_save_and_load_keeps_everything() {
    let (nac, clock) = populated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nac.snap");
    nac.save(&path).unwrap();
    let mut fresh = Nac::builder().clock(clock.shared()).build().expect("the default settings are valid");
    fresh.load(&path).unwrap();
    let mut a: Vec<_> = nac.links().to_vec();
    let mut b: Vec<_> = fresh.links().to_vec();
    a.sort_by_key(nac::CausalLink::id);
    b.sort_by_key(nac::CausalLink::id);
    assert_eq!(a, b);
    assert_eq!(fresh.stats(), nac.stats());
    assert_eq!(fresh.pending_events().collect::<Vec<_>>(), nac.pending_events().collect::<Vec<_>>());
    assert_eq!(fresh.prior("tool", "tool:lift"), nac.prior("tool", "tool:lift"));
    assert_eq!(fresh.to_snapshot_bytes().unwrap().len(), nac.to_snapshot_bytes().unwrap().len());
    // Every link is found again through both indexes.
    for l in nac.links() {
        assert!(fresh.link(l.id()).is_some());
        assert_eq!(
            fresh.links_for_event(l.event_signature()).count(),
            nac.links_for_event(l.event_signature()).count()
        );
    }
    // The next event id continues where the saved store stopped.
    let mut fresh = fresh;
    let next = fresh.record_event("tool", "tool:x", &ctx(&[]), None).unwrap();
    assert!(next.index() > nac.pending_events().last().unwrap().id.index());
}

#[test]
fn a_loading_store_applies_its_own_bounds() {
    let (nac, clock) = populated();
    let bytes = nac.to_snapshot_bytes().unwrap();
    let config = crate::common::with(|c| {
        c.max_links = 2;
        c.max_observation_times = 2;
    });
    let mut b = Nac::builder();
    b.clock(clock.shared()).config(config);
    let mut small = b.build().unwrap();
    small.load_from_bytes("mem.snap", &bytes).unwrap();
    assert_eq!(small.len(), 2);
    assert!(small.links().iter().all(|l| l.observed_at().len() <= 2));
    // The most confident links were kept.
    let mut confidences: Vec<f64> = nac.links().iter().map(nac::CausalLink::confidence).collect();
    confidences.sort_by(|a, b| b.total_cmp(a));
    let mut kept: Vec<f64> = small.links().iter().map(nac::CausalLink::confidence).collect();
    kept.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(kept, confidences[..2].to_vec());
}

#[test]
fn a_corrupt_file_changes_nothing_and_the_backup_recovers() {
    let (mut nac, clock) = populated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nac.snap");
    nac.save(&path).unwrap();
    let saved_links = nac.len();
    nac.observe(&Observation::new("tool", "tool:new", "r", "ok", Valence::Positive)).unwrap();
    nac.save(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();

    let (mut other, _) = default_store();
    other.observe(&grasp("keep", Valence::Positive)).unwrap();
    assert!(other.load(&path).is_err());
    assert_eq!(other.len(), 1, "a failed load leaves the store as it was");

    let mut fresh = Nac::builder().clock(clock.shared()).build().expect("the default settings are valid");
    let outcome = fresh.load_with_recovery(&path).unwrap();
    assert!(matches!(outcome, LoadOutcome::FromBackup { .. }));
    assert_eq!(fresh.len(), saved_links);
    let missing = fresh.load_with_recovery(dir.path().join("none.snap")).unwrap();
    assert!(matches!(missing, LoadOutcome::Missing));
    assert_eq!(fresh.len(), saved_links);
}

#[test]
fn a_store_refuses_to_overwrite_a_file_it_did_not_create_or_read() {
    let (nac, _) = populated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nac.snap");
    nac.save(&path).unwrap();
    let (empty, _) = default_store();
    let err = empty.save(&path).unwrap_err();
    assert!(matches!(err, nac::Error::Core(maxim_core::Error::OverwriteRefused { .. })));
    empty.allow_overwrite(true);
    empty.save(&path).unwrap();
    assert!(empty.file_claims().owns(&path));
}

#[test]
fn a_snapshot_of_another_kind_or_a_bad_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    codec::save(&path, "atl", &1u8).unwrap();
    let (mut nac, _) = default_store();
    assert!(matches!(nac.load(&path), Err(nac::Error::Core(maxim_core::Error::WrongKind { .. }))));
    // A payload that decodes but holds garbage is refused as corrupt.
    let bad = codec::encode(nac::SNAPSHOT_KIND, &(1u16, Timestamp::EPOCH, vec![0u8; 3])).unwrap();
    assert!(nac.load_from_bytes("bad.snap", &bad).is_err());
    // A newer schema is refused.
    let (good, _) = populated();
    let mut bytes = good.to_snapshot_bytes().unwrap();
    // The schema is the payload's first field (a postcard varint right after the header).
    bytes[codec::HEADER_LEN] = 2;
    let bytes = codec::encode(nac::SNAPSHOT_KIND, &postcard_reencode(&bytes)).unwrap();
    assert!(nac.load_from_bytes("newer.snap", &bytes).is_err());
    assert!(nac.is_empty());
}

/// A file the codec accepts but the store's checks refuse (a newer schema): a plain load
/// keeps it aside, and recovery keeps it aside and loads the backup.
#[test]
fn a_file_refused_by_the_stores_checks_is_kept_aside_and_recovery_loads_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nac.snap");
    let (good, _) = populated();
    good.save(&path).unwrap();
    good.save(&path).unwrap(); // the backup now holds a good snapshot too
    let mut bytes = good.to_snapshot_bytes().unwrap();
    bytes[codec::HEADER_LEN] = 2;
    let newer = codec::encode(nac::SNAPSHOT_KIND, &postcard_reencode(&bytes)).unwrap();

    std::fs::write(&path, &newer).unwrap();
    let (mut nac, _) = default_store();
    let err = nac.load(&path).unwrap_err();
    assert!(
        matches!(err, nac::Error::Core(maxim_core::Error::UnsupportedVersion { kept_aside: Some(_), .. })),
        "{err:?}"
    );
    assert!(!path.exists(), "the refused file was moved aside");
    assert!(nac.is_empty(), "a failed load changes nothing");

    std::fs::write(&path, &newer).unwrap();
    match nac.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { primary_error, .. } => assert!(
            matches!(*primary_error, maxim_core::Error::UnsupportedVersion { kept_aside: Some(_), .. }),
            "{primary_error:?}"
        ),
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(nac.len(), good.len());
}

/// The payload of `bytes` as raw bytes (the header's checksum no longer matches after an
/// edit, so the test encodes the edited payload again through a byte-transparent wrapper).
fn postcard_reencode(bytes: &[u8]) -> serde_bytes_like::Raw {
    serde_bytes_like::Raw(bytes[codec::HEADER_LEN..].to_vec())
}

mod serde_bytes_like {
    //! A payload written as-is, for building a snapshot with an edited payload.
    pub(super) struct Raw(pub(super) Vec<u8>);
    impl serde::Serialize for Raw {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeTuple;
            let mut t = s.serialize_tuple(self.0.len())?;
            for b in &self.0 {
                t.serialize_element(b)?;
            }
            t.end()
        }
    }
}

#[test]
fn a_store_with_different_settings_keeps_its_own() {
    let (nac, clock) = populated();
    let bytes = nac.to_snapshot_bytes().unwrap();
    let (mut other, _) = store(crate::common::with(|c| {
        c.learning_rate = 0.5;
    }));
    other.load_from_bytes("x.snap", &bytes).unwrap();
    assert_eq!(other.config().learning_rate, 0.5);
    let _ = clock;
}
