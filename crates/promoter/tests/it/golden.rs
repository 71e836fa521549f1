//! Format stability: the version-1 ledger snapshot committed under `tests/data/` must still
//! load, and this build must still write it byte for byte. A reordered field or a changed
//! encoding fails here: such a change needs a new `SCHEMA_VERSION` and a migration
//! (`docs/durability.md`). `MAXIM_BLESS=1` rewrites the file (only for a new version).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use maxim_core::{ManualClock, RecordId};
use promoter::{SCHEMA_VERSION, SemanticPromoter};

use crate::common::{Concepts, Links, NameGate, T0, causal, elements, ep, eps, reader, statistical};

#[test]
fn the_version_1_snapshot_loads_and_is_written_byte_for_byte() {
    assert_eq!(SCHEMA_VERSION, 1);
    let clock = ManualClock::new(T0);
    let mut episodes = HashMap::new();
    for n in 0..4 {
        episodes.insert(ep(n), elements(&["mug"], "grasp", "make coffee", "success"));
    }
    let build = || {
        SemanticPromoter::builder()
            .clock(clock.shared())
            .gate(Arc::new(NameGate::default()))
            .episode_reader(Arc::new(reader(episodes.clone())))
            .build()
            .unwrap()
    };
    let mut p = build();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let candidates = [
        causal("tool:grasp", eps(0..4), 0.7),
        statistical("tool:x:success", RecordId::from_u128(7), 0.8, 20),
    ];
    p.promote_candidates("golden", &candidates, &mut concepts, &mut links);
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("promoter.snap");
    p.save(&fresh).unwrap();
    let bytes = std::fs::read(&fresh).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/promoter-v1.snap");
    if std::env::var_os("MAXIM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
    }
    let copy = tmp.path().join("golden.snap");
    std::fs::copy(&path, &copy).unwrap();
    let mut back = build();
    back.load(&copy).unwrap();
    assert_eq!(back.ledger(), p.ledger());
    assert_eq!(back.stats(), p.stats());
    assert_eq!(bytes, std::fs::read(&path).unwrap(), "this build no longer writes version 1 as it was");
}
