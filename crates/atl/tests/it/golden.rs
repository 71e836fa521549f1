//! Format stability (issue 15): the version-1 snapshot committed under `tests/data/` must
//! still load, and this build must still write it byte for byte. A reordered field or a
//! changed encoding fails here: such a change needs a new `SCHEMA_VERSION` and a migration
//! (`docs/durability.md`). `MAXIM_BLESS=1` rewrites the file (only for a new version).

use std::path::Path;

use atl::{Atl, SCHEMA_VERSION, spec};
use maxim_core::{ManualClock, Source};

use crate::common::{T0, fingerprint};

#[test]
fn the_version_1_snapshot_loads_and_is_written_byte_for_byte() {
    assert_eq!(SCHEMA_VERSION, 1);
    let clock = ManualClock::new(T0);
    let mut atl = Atl::builder().clock(clock.shared()).id_seed(2026).build().unwrap();
    let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
    let kitchen = atl.find_or_create(&spec("kitchen", "location")).unwrap().id;
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.6).unwrap();
    atl.set_property(mug, "color", "blue", Source::UserStated, 1.0).unwrap();
    atl.propose_relationship_type("NESTS_IN", "fits inside", false).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("atl.snap");
    atl.save(&fresh).unwrap();
    let bytes = std::fs::read(&fresh).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/atl-v1.snap");
    if std::env::var_os("MAXIM_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let copy = tmp.path().join("golden.snap");
    std::fs::copy(&path, &copy).unwrap();
    let mut back = Atl::builder().clock(clock.shared()).build().unwrap();
    back.load(&copy).unwrap();
    assert_eq!(fingerprint(&back), fingerprint(&atl));
    assert_eq!(bytes, std::fs::read(&path).unwrap(), "this build no longer writes version 1 as it was");
}
