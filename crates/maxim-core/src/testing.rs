//! The [`MemoryLayer`] contract suite (feature `testing`).
//!
//! Every layer crate proves the protocol the same way: it implements [`ContractFixture`] for
//! a small fixture type and invokes [`contract_tests!`](crate::contract_tests) in its
//! integration tests, which expands to one `#[test]` per check below, as every regex engine
//! runs the shared `regex-test` suite.
//!
//! ```ignore
//! struct Fixture;
//! impl maxim_core::testing::ContractFixture for Fixture { /* ... */ }
//! maxim_core::contract_tests!(Fixture);
//! ```
//!
//! Each check panics with a message naming the broken rule.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::contracts::GraphView;
use crate::error::Error;
use crate::id::RecordId;
use crate::layer::{CALLBACK_FAILURES, LayerView, MemoryLayer, MemoryRecord};
use crate::time::{ManualClock, SharedClock, Timestamp};

/// How a layer crate plugs into the contract suite.
pub trait ContractFixture {
    /// The layer under test.
    type Layer: MemoryLayer;

    /// A fresh, empty layer whose clock is `clock`.
    fn new_layer(&self, clock: SharedClock) -> Self::Layer;

    /// A valid record, distinct for every `n`, made at `now` with an id the layer accepts.
    fn record(
        &self,
        layer: &mut Self::Layer,
        n: usize,
        now: Timestamp,
    ) -> <Self::Layer as MemoryLayer>::Record;

    /// Links `a` to `b` through the layer's own API, so that spreading activation from `a`
    /// reaches `b`.
    fn associate(&self, layer: &mut Self::Layer, a: RecordId, b: RecordId);
}

type Rec<F> = <<F as ContractFixture>::Layer as MemoryLayer>::Record;

/// The start time of every check.
pub const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

fn setup<F: ContractFixture>(f: &F, n: usize) -> (ManualClock, F::Layer, Vec<RecordId>) {
    let clock = ManualClock::new(T0);
    let mut layer = f.new_layer(clock.shared());
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let record = f.record(&mut layer, i, clock.now());
        let id = layer.store(record).expect("contract: storing a valid record must succeed");
        ids.push(id);
        clock.advance(Duration::from_secs(1));
    }
    (clock, layer, ids)
}

fn access<L: MemoryLayer>(layer: &L, id: RecordId) -> (u32, Timestamp) {
    let meta = layer.peek(id).expect("contract: stored record must be peekable").meta();
    (meta.access_count, meta.accessed_at)
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("contract: cannot create a temporary directory")
}

/// `store` returns the record's id; `get` returns it and records one access at the clock's time.
pub fn store_then_get<F: ContractFixture>(f: &F) {
    let (clock, mut layer, ids) = setup(f, 3);
    assert_eq!(layer.len(), 3, "contract: len counts stored records");
    assert!(!layer.is_empty());
    let (count, _) = access(&layer, ids[1]);
    clock.advance(Duration::from_secs(60));
    let got = layer.get(ids[1]).expect("contract: get of a stored id must succeed");
    assert_eq!(got.id(), ids[1], "contract: get returns the asked record");
    let (after, at) = access(&layer, ids[1]);
    assert_eq!(after, count + 1, "contract: get records one access");
    assert_eq!(at, clock.now(), "contract: get stamps the access with the clock's time");
}

/// `peek`, `recall`, `recall_by_ids` and `recall_associated` record no access.
pub fn reads_do_not_touch<F: ContractFixture>(f: &F) {
    let (clock, mut layer, ids) = setup(f, 4);
    f.associate(&mut layer, ids[0], ids[1]);
    let before: Vec<_> = ids.iter().map(|&id| access(&layer, id)).collect();
    clock.advance(Duration::from_secs(3600));
    let _ = layer.peek(ids[0]);
    let _ = layer.recall(&Default::default(), 10);
    let _ = layer.recall_by_ids(&ids);
    let _ = layer.recall_associated(&[ids[0]], 10);
    let after: Vec<_> = ids.iter().map(|&id| access(&layer, id)).collect();
    assert_eq!(before, after, "contract: reads must not record accesses");
}

fn is_not_found<E: Into<Error>>(err: E, id: RecordId) -> bool {
    matches!(err.into(), Error::NotFound { id: got } if got == id)
}

/// Unknown ids give [`Error::NotFound`] (once converted to the core error) from `get` and
/// `remove`, through the typed protocol and the object-safe view, and change nothing.
pub fn unknown_ids_are_errors<F: ContractFixture>(f: &F) {
    let (_clock, mut layer, ids) = setup(f, 2);
    let unknown = RecordId::from_u128(u128::MAX - 7);
    assert!(!ids.contains(&unknown));
    let err = layer.get(unknown).err().expect("contract: get of an unknown id is an error");
    assert!(is_not_found(err, unknown), "contract: get of an unknown id is Error::NotFound");
    let err = layer.remove(unknown).err().expect("contract: remove of an unknown id is an error");
    assert!(is_not_found(err, unknown), "contract: remove of an unknown id is Error::NotFound");
    let view: &mut dyn LayerView = &mut layer;
    let err = view.remove_by_id(unknown).expect_err("contract: remove through the view is an error too");
    assert!(
        matches!(err, Error::NotFound { id } if id == unknown),
        "contract: the view passes NotFound through"
    );
    assert!(layer.peek(unknown).is_none());
    assert_eq!(layer.len(), 2, "contract: a failed call changes nothing");
}

/// Storing a record whose id is held already is [`Error::Duplicate`] (once converted to the
/// core error) and changes nothing: the held record stays as it was and no callback fires.
pub fn duplicate_ids_are_refused<F: ContractFixture>(f: &F) {
    let clock = ManualClock::new(T0);
    let mut layer = f.new_layer(clock.shared());
    let record = f.record(&mut layer, 0, clock.now());
    let id = layer.store(record.clone()).expect("contract: storing a valid record must succeed");
    let before = layer.peek(id).expect("contract: the stored record is held").meta().clone();
    let fired = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&fired);
    layer.on_capture(Box::new(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }));
    let err = layer.store(record).expect_err("contract: storing an id twice is an error");
    assert!(
        matches!(err.into(), Error::Duplicate { id: got } if got == id),
        "contract: storing an id twice is Error::Duplicate"
    );
    assert_eq!(layer.len(), 1, "contract: a refused store changes nothing");
    assert_eq!(
        layer.peek(id).map(|r| r.meta().clone()),
        Some(before),
        "contract: the held record is unchanged"
    );
    assert_eq!(fired.load(Ordering::SeqCst), 0, "contract: a refused store fires no callback");
}

/// The statistics name the layer as [`MemoryLayer::name`] does and count its records.
pub fn stats_name_the_layer<F: ContractFixture>(f: &F) {
    let (_clock, layer, _ids) = setup(f, 3);
    let stats = layer.stats();
    assert_eq!(stats.layer, layer.name(), "contract: stats name the layer");
    assert_eq!(stats.records, 3, "contract: stats count the records");
    assert!(stats.counters.contains_key(CALLBACK_FAILURES), "contract: stats count callback failures");
}

/// `remove` drops the record from the records, the recall results, the graph (with every
/// incident edge), and fires the deletion callbacks once.
pub fn remove_cleans_everything<F: ContractFixture>(f: &F) {
    let (_clock, mut layer, ids) = setup(f, 4);
    f.associate(&mut layer, ids[0], ids[1]);
    f.associate(&mut layer, ids[1], ids[2]);
    f.associate(&mut layer, ids[2], ids[1]);
    let deleted = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&deleted);
    layer.on_delete(Box::new(move |id| {
        sink.lock().expect("lock").push(id);
        Ok(())
    }));
    let removed = layer.remove(ids[1]).expect("contract: remove of a stored id succeeds");
    assert_eq!(removed.id(), ids[1], "contract: remove returns the removed record");
    assert_eq!(*deleted.lock().expect("lock"), vec![ids[1]], "contract: deletion callbacks fire once");
    assert!(layer.peek(ids[1]).is_none());
    assert_eq!(layer.len(), 3);
    assert!(!layer.graph().contains(ids[1]), "contract: the graph node goes with the record");
    for &other in &[ids[0], ids[2], ids[3]] {
        let mut dangling = false;
        layer.graph().for_each_outgoing(other, &mut |target, _, _| dangling |= target == ids[1]);
        assert!(!dangling, "contract: no edge may point at a removed record");
    }
    assert!(layer.recall(&Default::default(), 100).iter().all(|r| r.id() != ids[1]));
    assert!(layer.recall_associated(&[ids[0]], 100).iter().all(|(r, _)| r.id() != ids[1]));
    assert!(layer.iter().all(|r| r.id() != ids[1]));
}

/// The default filter matches every record; `limit` is respected.
pub fn recall_respects_limit<F: ContractFixture>(f: &F) {
    let (_clock, layer, ids) = setup(f, 5);
    let all: BTreeSet<_> = layer.recall(&Default::default(), 100).iter().map(|r| r.id()).collect();
    assert_eq!(all, ids.iter().copied().collect(), "contract: the default filter matches every record");
    assert_eq!(layer.recall(&Default::default(), 2).len(), 2, "contract: recall honours its limit");
    assert!(layer.recall(&Default::default(), 0).is_empty(), "contract: limit 0 returns nothing");
}

/// `recall_by_ids` keeps the given order and skips unknown ids.
pub fn recall_by_ids_skips_unknown<F: ContractFixture>(f: &F) {
    let (_clock, layer, ids) = setup(f, 3);
    let unknown = RecordId::from_u128(u128::MAX - 1);
    let got: Vec<_> = layer.recall_by_ids(&[ids[2], unknown, ids[0]]).iter().map(|r| r.id()).collect();
    assert_eq!(got, vec![ids[2], ids[0]]);
}

/// `recall_associated` finds linked records, excludes the seeds, and sorts by activation.
pub fn recall_associated_excludes_seeds<F: ContractFixture>(f: &F) {
    let (_clock, mut layer, ids) = setup(f, 4);
    f.associate(&mut layer, ids[0], ids[1]);
    f.associate(&mut layer, ids[1], ids[2]);
    let found = layer.recall_associated(&[ids[0]], 10);
    assert!(found.iter().all(|(r, _)| r.id() != ids[0]), "contract: seeds are excluded");
    assert!(found.iter().any(|(r, _)| r.id() == ids[1]), "contract: a linked record is found");
    assert!(found.iter().all(|(_, s)| s.is_finite() && *s > 0.0));
    assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "contract: strongest first");
    assert!(layer.recall_associated(&[ids[0]], 0).is_empty());
    let unknown = RecordId::from_u128(u128::MAX - 2);
    assert!(layer.recall_associated(&[unknown], 10).is_empty(), "contract: unknown seeds find nothing");
}

/// Capture callbacks run after each store; failing or panicking callbacks are contained.
pub fn capture_callbacks_are_contained<F: ContractFixture>(f: &F) {
    let clock = ManualClock::new(T0);
    let mut layer = f.new_layer(clock.shared());
    let seen = Arc::new(AtomicUsize::new(0));
    layer.on_capture(Box::new(|_, _| Err("refused".into())));
    layer.on_capture(Box::new(|_, _| panic!("contract: a panicking callback")));
    let s = Arc::clone(&seen);
    layer.on_capture(Box::new(move |id, record: &Rec<F>| {
        assert_eq!(id, record.id());
        s.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }));
    for i in 0..3 {
        let r = f.record(&mut layer, i, clock.now());
        layer.store(r).expect("contract: store succeeds despite failing callbacks");
    }
    assert_eq!(seen.load(Ordering::SeqCst), 3, "contract: every capture callback runs for every store");
    assert_eq!(layer.len(), 3);
    let failures = layer.stats().counters.get(CALLBACK_FAILURES).copied();
    assert!(
        failures.unwrap_or(0) >= 6,
        "contract: stats count every failed callback under CALLBACK_FAILURES"
    );
}

/// `save` then `load` into a fresh layer restores every record and every graph edge.
pub fn save_load_round_trip<F: ContractFixture>(f: &F) {
    let (clock, mut layer, ids) = setup(f, 5);
    f.associate(&mut layer, ids[0], ids[1]);
    f.associate(&mut layer, ids[3], ids[4]);
    let dir = temp_dir();
    let path = dir.path().join(format!("{}.snap", layer.name()));
    layer.save(&path).expect("contract: save succeeds");
    let mut fresh = f.new_layer(clock.shared());
    fresh.load(&path).expect("contract: load of a saved file succeeds");
    assert_eq!(fresh.len(), layer.len());
    for &id in &ids {
        let (a, b) = (layer.peek(id).expect("orig"), fresh.peek(id).expect("contract: every record reloads"));
        assert_eq!(a.meta(), b.meta(), "contract: meta survives save/load");
        assert_eq!(a.describe(), b.describe());
    }
    assert_eq!(edges(layer.graph(), &ids), edges(fresh.graph(), &ids), "contract: every edge survives");
    assert_eq!(fresh.graph().edge_count(), layer.graph().edge_count());
}

fn edges(g: &dyn GraphView, ids: &[RecordId]) -> Vec<(RecordId, RecordId, String, u64)> {
    let mut out = Vec::new();
    for &id in ids {
        g.for_each_outgoing(id, &mut |t, kind, w| out.push((id, t, kind.to_string(), w.to_bits())));
    }
    out.sort();
    out
}

/// `save` overwrites only a file the layer created or read: a fresh layer saving over
/// another layer's snapshot gets [`Error::OverwriteRefused`] and writes nothing; once it has
/// loaded the file, it may save over it.
pub fn saves_never_overwrite_a_strangers_file<F: ContractFixture>(f: &F) {
    let (clock, layer, _ids) = setup(f, 2);
    let dir = temp_dir();
    let path = dir.path().join(format!("{}.snap", layer.name()));
    layer.save(&path).expect("contract: save succeeds");
    layer.save(&path).expect("contract: a layer may overwrite the file it created");
    let saved = std::fs::read(&path).expect("read");
    let mut fresh = f.new_layer(clock.shared());
    let err: Error = fresh.save(&path).expect_err("contract: a fresh layer may not overwrite").into();
    assert!(matches!(err, Error::OverwriteRefused { .. }), "contract: OverwriteRefused, got {err}");
    assert_eq!(std::fs::read(&path).expect("read"), saved, "contract: a refused save writes nothing");
    fresh.load(&path).expect("contract: load of a saved file succeeds");
    fresh.save(&path).expect("contract: a layer may overwrite the file it read");
}

/// A failed load (garbage, a corrupted save, a missing file) leaves the layer unchanged.
pub fn failed_load_changes_nothing<F: ContractFixture>(f: &F) {
    let (_clock, mut layer, ids) = setup(f, 3);
    f.associate(&mut layer, ids[0], ids[1]);
    let dir = temp_dir();
    let good = dir.path().join("good.snap");
    layer.save(&good).expect("save");
    let mut bytes = std::fs::read(&good).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    let flipped = dir.path().join("flipped.snap");
    std::fs::write(&flipped, &bytes).expect("write");
    let garbage = dir.path().join("garbage.snap");
    std::fs::write(&garbage, b"this is not a snapshot").expect("write");
    let missing = dir.path().join("missing.snap");

    let (_c2, mut other, _) = setup(f, 2);
    let before: Vec<_> = other.iter().map(|r| r.meta().clone()).collect();
    let edges_before = other.graph().edge_count();
    for path in [&flipped, &garbage, &missing] {
        assert!(other.load(path).is_err(), "contract: loading {} must fail", path.display());
        let after: Vec<_> = other.iter().map(|r| r.meta().clone()).collect();
        assert_eq!(before, after, "contract: a failed load leaves the layer as it was");
        assert_eq!(other.graph().edge_count(), edges_before);
    }
}

/// `iter` yields every record once; the object-safe view agrees with the typed protocol.
pub fn iteration_and_view_agree<F: ContractFixture>(f: &F) {
    let (_clock, mut layer, ids) = setup(f, 4);
    let mut seen: Vec<_> = layer.iter().map(MemoryRecord::id).collect();
    seen.sort_unstable();
    let mut expected = ids.clone();
    expected.sort_unstable();
    assert_eq!(seen, expected, "contract: iter yields every record exactly once");
    let name = layer.name();
    let stats = layer.stats();
    assert_eq!(stats.records, layer.len());
    assert_eq!(stats.graph_nodes, layer.graph().node_count());
    assert_eq!(stats.graph_edges, layer.graph().edge_count());
    let view: &mut dyn LayerView = &mut layer;
    assert_eq!(view.layer_name(), name);
    assert_eq!(view.record_ids(), expected, "contract: record_ids is sorted");
    assert!(view.contains(ids[0]));
    assert!(view.describe(ids[0]).is_some());
    view.remove_by_id(ids[0]).expect("remove through the view");
    assert!(!view.contains(ids[0]));
    assert!(view.remove_by_id(ids[0]).is_err());
    assert_eq!(view.record_count(), 3);
}

/// `touch` records one access for each existing id and reports how many.
pub fn touch_counts_existing<F: ContractFixture>(f: &F) {
    let (clock, mut layer, ids) = setup(f, 2);
    clock.advance(Duration::from_secs(10));
    let (before, _) = access(&layer, ids[0]);
    let n = layer.touch(&[ids[0], RecordId::from_u128(u128::MAX - 3), ids[1]]);
    assert_eq!(n, 2, "contract: touch counts the records that exist");
    assert_eq!(access(&layer, ids[0]), (before + 1, clock.now()));
}

/// Unused memories decay: after 400 days without access, a consolidation pass removes or
/// compresses some of six never-used records, and the layer then holds exactly `removed`
/// fewer records, every one of which iteration still yields.
pub fn consolidate_accounts_for_removals<F: ContractFixture>(f: &F) {
    let (clock, mut layer, _ids) = setup(f, 6);
    clock.advance(crate::time::days(400));
    let before = layer.len();
    let report = layer.consolidate().expect("contract: consolidate succeeds");
    assert!(report.removed + report.compressed > 0, "contract: unused memories decay ({report:?})");
    assert_eq!(layer.len(), before - report.removed, "contract: removed records are gone, others stay");
    assert_eq!(layer.iter().count(), layer.len(), "contract: iteration agrees with len after consolidation");
}

/// Expands to one `#[test]` per contract check for `$fixture` (an expression of a type that
/// implements [`ContractFixture`](crate::testing::ContractFixture)).
#[macro_export]
macro_rules! contract_tests {
    ($fixture:expr) => {
        $crate::contract_tests!(@each $fixture;
            store_then_get, reads_do_not_touch, unknown_ids_are_errors, duplicate_ids_are_refused,
            stats_name_the_layer, remove_cleans_everything,
            recall_respects_limit, recall_by_ids_skips_unknown, recall_associated_excludes_seeds,
            capture_callbacks_are_contained, save_load_round_trip, saves_never_overwrite_a_strangers_file,
            failed_load_changes_nothing,
            iteration_and_view_agree, touch_counts_existing, consolidate_accounts_for_removals);
    };
    (@each $fixture:expr; $($check:ident),+) => {
        $(
            #[test]
            fn $check() {
                $crate::testing::$check(&$fixture);
            }
        )+
    };
}
