//! A layer opened on a directory journals every write and reopens to all of them.

use angular_gyrus::fit::{self, FitConfig};
use angular_gyrus::{AngularGyrus, MathCategory, MathEntry, MathRelation};
use maxim_core::journal::SyncPolicy;
use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, days};

use crate::common::{T0, times};

fn open(clock: &ManualClock, dir: &std::path::Path) -> AngularGyrus {
    AngularGyrus::builder()
        .clock(clock.shared())
        .id_seed(3)
        .sync_policy(SyncPolicy::Always)
        .open(dir)
        .expect("opens")
}

/// Everything a reopen must reproduce: records (with their access history) and edges.
fn fingerprint(ag: &AngularGyrus) -> String {
    let mut records: Vec<&MathEntry> = ag.iter().filter(|e| !e.is_built_in()).collect();
    records.sort_by_key(|e| e.id());
    let mut edges: Vec<String> = ag
        .math_graph()
        .edges()
        .map(|e| format!("{} {} {:?} {}", e.source, e.target, e.relation(), e.weight))
        .collect();
    edges.sort();
    let mut stats = ag.stats();
    stats.counters.remove("total_recalls");
    format!("{records:?}\n{edges:?}\n{stats:?}")
}

#[test]
fn every_write_survives_a_reopen_with_and_without_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let mut ag = open(&clock, dir.path());
    assert!(ag.is_journaled());
    let r = ag.new_record("tau", MathCategory::Constant, "geometry").unwrap();
    let tau = ag.insert(r.into()).unwrap();
    let pi = ag.find_by_name("pi")[0];
    ag.link(tau, pi, MathRelation::DerivedFrom, 0.9).unwrap();
    let t = times(30, 86_400.0);
    let y: Vec<f64> = (0..30).map(|d| 5.0 - 0.1 * f64::from(d) + 0.01 * f64::from(d % 4)).collect();
    let trend = fit::fit_trend(&t, &y).unwrap();
    let pattern = ag.store_trend("queue", &trend, &FitConfig::default()).unwrap().unwrap();
    ag.store_trend("queue", &trend, &FitConfig::default()).unwrap(); // a refit: a replacement
    let r = ag.new_record("doomed", MathCategory::Fact, "x").unwrap();
    let doomed = ag.insert(r.into()).unwrap();
    ag.remove(doomed).unwrap();
    let before = fingerprint(&ag);
    drop(ag);

    let mut ag = open(&clock, dir.path());
    assert_eq!(fingerprint(&ag), before, "the journal alone brings every write back");
    assert_eq!(ag.math_record(pattern).unwrap().observation_count, 2);
    assert!(ag.peek(doomed).is_none());

    // A checkpoint, then more writes: snapshot plus journal.
    ag.checkpoint().unwrap();
    let r = ag.new_record("after", MathCategory::Fact, "x").unwrap();
    let after = ag.insert(r.into()).unwrap();
    clock.advance(days(120));
    let report = ag.consolidate().unwrap();
    assert!(report.removed + report.compressed > 0, "{report:?}");
    let before = fingerprint(&ag);
    drop(ag);

    let ag = open(&clock, dir.path());
    assert_eq!(fingerprint(&ag), before);
    assert!(ag.peek(after).is_none(), "the consolidation's removal was journaled");
    assert_eq!(ag.stats().counters["consolidations"], 1);
    // New ids never collide with replayed ones.
    let mut ag = ag;
    let r = ag.new_record("later", MathCategory::Fact, "x").unwrap();
    assert!(ag.peek(r.meta.id).is_none());
}

#[test]
fn a_directory_is_opened_by_one_layer_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let ag = open(&clock, dir.path());
    let mut ag = ag;
    let elsewhere = tempfile::tempdir().unwrap();
    let path = elsewhere.path().join("other.snap");
    ag.save(&path).unwrap();
    assert!(ag.load(&path).is_err(), "a journaled layer reloads only by reopening");
    let second = AngularGyrus::builder().clock(clock.shared()).open(dir.path());
    assert!(matches!(second, Err(angular_gyrus::Error::Core(maxim_core::Error::Locked { .. }))));
    drop(ag);
    assert!(AngularGyrus::builder().clock(clock.shared()).open(dir.path()).is_ok());
}

#[test]
fn a_layer_in_memory_has_no_checkpoint() {
    let (_clock, mut ag) = crate::common::layer();
    assert!(!ag.is_journaled());
    assert!(ag.checkpoint().is_err());
}
