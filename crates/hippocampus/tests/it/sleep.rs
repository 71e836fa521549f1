//! Consolidation (§3.8), sleep (§3.9), compression (§3.10) and removal (§3.11).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hippocampus::{HippocampusConfig, NewEpisode, RecallFilter, StrategyKind, TemporalContext};
use maxim_core::{RecordId, days};
use rustc_hash::FxHashMap;

use crate::common::{episode, layer, layer_with};

fn queued(salience: f64) -> NewEpisode {
    let mut e = NewEpisode::default();
    e.perception.salience = salience;
    e
}

#[test]
fn sleeping_an_empty_store_and_a_fresh_one() {
    let (_clock, mut h) = layer();
    let r = h.sleep();
    assert_eq!((r.compressed, r.removed, r.preserved, r.promoted), (0, 0, 0, 0));
    h.capture(NewEpisode::default()).unwrap();
    let r = h.sleep();
    assert_eq!((r.compressed, r.removed, r.preserved, r.promoted), (0, 0, 1, 0));
    assert_eq!(h.len(), 1);
    assert_eq!(h.counters().consolidations, 2);
}

#[test]
fn disabled_sleep_preserves_everything() {
    let config = {
        let mut c = HippocampusConfig::default();
        c.enable_sleep_consolidation = false;
        c
    };
    let (clock, mut h) = layer_with(config);
    h.capture(NewEpisode::default()).unwrap();
    clock.advance(days(30));
    let r = h.sleep();
    assert_eq!((r.removed, r.preserved), (0, 1));
}

#[test]
fn consolidation_promotes_qualifying_candidates_up_to_the_cap() {
    let (_clock, mut h) = layer();
    let high = h.capture(queued(0.91)).unwrap();
    let low = h.capture(queued(0.8)).unwrap();
    let mut spoken = queued(0.5);
    spoken.perception.transcript = Some("bring it".into());
    spoken.outcome.success = Some(true);
    let spoken = h.capture(spoken).unwrap();
    let used = h.capture(queued(0.75)).unwrap();
    h.touch(&[used, used, used, used]); // five accesses
    let report = h.promote_candidates(2);
    assert_eq!((report.promoted, report.skipped), (2, 1));
    assert!(h.peek(high).unwrap().meta().long_term);
    assert!(!h.peek(low).unwrap().meta().long_term);
    assert!(h.peek(spoken).unwrap().meta().long_term);
    // The candidate not yet examined stays queued.
    assert_eq!(h.consolidation_candidates().collect::<Vec<_>>(), vec![used]);
    let report = h.promote_candidates(100);
    assert_eq!(report.promoted, 1);
    assert!(h.peek(used).unwrap().meta().long_term);
    assert_eq!(h.consolidation_candidates().count(), 0);
    assert_eq!(h.counters().long_term_count, 3);
}

#[test]
fn forced_promotion_and_unknown_ids() {
    let (_clock, mut h) = layer();
    let a = h.capture(NewEpisode::default()).unwrap();
    let b = h.capture(NewEpisode::default()).unwrap();
    assert!(h.promote(&[a, RecordId::from_u128(5)], 10).is_err());
    assert!(!h.peek(a).unwrap().meta().long_term, "a failed promotion changes nothing");
    let r = h.promote(&[a, b, a], 10).unwrap();
    assert_eq!((r.promoted, r.already_long_term), (2, 1));
}

#[test]
fn access_based_sleep_compresses_then_forgets() {
    let (clock, mut h) = layer();
    let plain = h.capture(episode(&["mug"], "find mug", "look", Some(false))).unwrap();
    let mut user = episode(&["cup"], "say hi", "speak", Some(true));
    user.perception.cli_input = Some("hi".into());
    let user = h.capture(user).unwrap();
    let busy = h.capture(episode(&["box"], "sort box", "sort", None)).unwrap();
    for _ in 0..9 {
        h.touch(&[busy]);
    }
    clock.advance(days(2));
    let r = h.sleep();
    assert_eq!(r.compressed, 1);
    assert!(h.peek(plain).unwrap().is_compressed());
    assert!(!h.peek(user).unwrap().is_compressed(), "user interactions wait 3 days");
    clock.advance(days(8));
    let r = h.sleep();
    assert_eq!(r.removed, 1);
    assert!(!h.contains(plain));
    assert!(h.contains(user), "successful user interactions stay (floor 0.7)");
    assert!(h.contains(busy), "ten accesses stay (floor 0.8)");
    assert!(h.check_consistency().is_consistent());
    assert!(h.recall(&RecallFilter::new().object("mug"), 10).is_empty());
}

#[test]
fn long_term_records_get_double_scores() {
    let (clock, mut h) = layer();
    let lt = h.capture(queued(0.99)).unwrap();
    let st = h.capture(NewEpisode::default()).unwrap();
    // 5.5 days without access: 0.5 · 1.5/7 + 0.04 = 0.147; doubled 0.294 — still removed;
    // at 5 days: 0.183, doubled 0.366 — kept (long-term records are compressed too, when
    // their score is low).
    clock.advance(days(5));
    h.sleep();
    assert!(h.contains(lt));
    assert!(!h.contains(st));
    clock.advance(Duration::from_secs(43_200));
    h.sleep();
    assert!(!h.contains(lt), "resistant, not immune");
}

#[test]
fn sleep_fires_compression_and_deletion_callbacks() {
    let (clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "", "", None)).unwrap();
    let b = h.capture(episode(&["mug"], "", "", None)).unwrap();
    let compressed = Arc::new(Mutex::new(Vec::new()));
    let deleted = Arc::new(Mutex::new(Vec::new()));
    let (c, d) = (Arc::clone(&compressed), Arc::clone(&deleted));
    h.on_compress(Box::new(move |id| {
        c.lock().unwrap().push(id);
        Ok(())
    }));
    h.on_compress(Box::new(|_| Err("refused".into())));
    h.on_delete(Box::new(move |id| {
        d.lock().unwrap().push(id);
        Ok(())
    }));
    clock.advance(days(3));
    h.sleep();
    let mut got = compressed.lock().unwrap().clone();
    got.sort_unstable();
    assert_eq!(got, vec![a, b]);
    assert_eq!(h.callback_failures(), 2);
    // The graph nodes and edges survive compression; the edge count is kept in the record.
    assert_eq!(h.peek(a).unwrap().as_compressed().unwrap().edge_count, 1);
    assert_eq!(h.associative_graph().edge_count(), 2);
    clock.advance(days(7));
    h.sleep();
    let mut gone = deleted.lock().unwrap().clone();
    gone.sort_unstable();
    assert_eq!(gone, vec![a, b]);
    assert_eq!(h.associative_graph().node_count(), 0);
    assert_eq!(h.associative_graph().edge_count(), 0);
}

#[test]
fn remove_cleans_index_graph_queue_and_tells_callbacks() {
    let (_clock, mut h) = layer();
    let a = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let b = h.capture(queued(0.8)).unwrap();
    let c = h.capture(episode(&["mug"], "find mug", "look", Some(true))).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&calls);
    h.on_delete(Box::new(move |_| {
        n.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }));
    let removed = h.remove(a).unwrap();
    assert_eq!(removed.id(), a);
    h.remove(b).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(!h.associative_graph().contains(a));
    assert!(h.associated_ids(c).is_empty());
    assert_eq!(h.consolidation_candidates().count(), 0);
    assert_eq!(h.memories_by_index(&"object:mug".parse().unwrap()), vec![c]);
    assert_eq!(h.counters().removals, 2);
    h.remove(c).unwrap();
    assert!(h.index_keys().is_empty(), "empty keys are deleted");
    assert!(h.check_consistency().is_consistent());
}

#[test]
fn the_configured_strategy_is_used() {
    let config = {
        let mut c = HippocampusConfig::default();
        c.memory_strategy = StrategyKind::ImportanceBased;
        c
    };
    let (clock, mut h) = layer_with(config);
    h.capture(NewEpisode::default()).unwrap();
    clock.advance(days(10));
    // Access-based would remove it (0.04); importance-based: 0.4 · 2/3 + 0.2 · 0.65 + 0.2 · 0.5 = 0.497.
    let r = h.sleep();
    assert_eq!((r.removed, r.compressed), (0, 1));
    let (clock, mut h) = layer();
    h.capture(NewEpisode::default()).unwrap();
    clock.advance(days(10));
    assert_eq!(h.sleep().removed, 1);
    assert_eq!(h.retention_strategy().name(), "access_based");
}

#[derive(Default)]
struct FakeScn(FxHashMap<RecordId, (usize, usize)>);

impl TemporalContext for FakeScn {
    fn cluster_size(&self, id: RecordId) -> Option<usize> {
        self.0.get(&id).map(|e| e.0)
    }
    fn hour_bin_size(&self, id: RecordId) -> Option<usize> {
        self.0.get(&id).map(|e| e.1)
    }
}

#[test]
fn a_temporal_context_makes_sleep_temporal_aware() {
    let (clock, mut h) = layer();
    let sole = h.capture(NewEpisode::default()).unwrap();
    let crowd = h.capture(NewEpisode::default()).unwrap();
    let mut scn = FakeScn::default();
    scn.0.insert(sole, (1, 1));
    scn.0.insert(crowd, (3, 3));
    h.set_temporal_context(Some(Arc::new(scn)));
    assert_eq!(h.retention_strategy().name(), "temporal_aware");
    // 3 days: 0.5 · 4/7 + 0.04 = 0.326 (kept, compressed); 5 days: 0.183 (removed) but ×1.5
    // for the sole representative is 0.274 (still removed); 4.5 days: 0.219 ×1.5 = 0.329.
    clock.advance(Duration::from_secs(4 * 86_400 + 43_200));
    let r = h.sleep();
    assert_eq!(r.removed, 1);
    assert!(h.contains(sole) && !h.contains(crowd));
}

/// An SCN that knows each episode's (hour, weekday) cluster and nothing of hour bins.
#[derive(Default)]
struct ClusterScn(FxHashMap<RecordId, u64>);

impl TemporalContext for ClusterScn {
    fn cluster_size(&self, id: RecordId) -> Option<usize> {
        let c = self.0.get(&id)?;
        Some(self.0.values().filter(|&v| v == c).count())
    }
    fn hour_bin_size(&self, id: RecordId) -> Option<usize> {
        self.0.get(&id).map(|_| 1)
    }
    fn cluster_of(&self, id: RecordId) -> Option<u64> {
        self.0.get(&id).copied()
    }
}

#[test]
fn clustering_sleep_needs_a_temporal_context_and_changes_nothing_without_one() {
    let (clock, mut h) = layer();
    let id = h.capture(NewEpisode::default()).unwrap();
    clock.advance(days(30));
    assert!(matches!(h.sleep_with_clustering(3), Err(hippocampus::Error::NoTemporalContext)));
    assert!(h.contains(id));
    h.set_temporal_context(Some(Arc::new(ClusterScn::default())));
    let err = h.sleep_with_clustering(0).unwrap_err();
    assert!(matches!(err, hippocampus::Error::Core(maxim_core::Error::InvalidArgument { .. })), "{err}");
    assert!(h.contains(id));
    assert_eq!(h.counters().consolidations, 0);
}

#[test]
fn clustering_sleep_thins_crowded_clusters() {
    let (clock, mut h) = layer();
    let hours = |x: f64| Duration::from_secs_f64(x * 3600.0);
    // Ages at the sleep, six days from now, with the access-based score of an unaccessed
    // episode without edges, 0.5 · (1 − age/7 days) + 0.04.
    let e = h.capture(NewEpisode::default()).unwrap(); // 6 d: 0.111
    clock.advance(days(3));
    let c = h.capture(NewEpisode::default()).unwrap(); // 3 d: 0.326
    let f = h.capture(NewEpisode::default()).unwrap(); // 3 d, no cluster
    clock.advance(hours(12.0));
    let d = h.capture(NewEpisode::default()).unwrap(); // 2.5 d: 0.361, compressed below
    h.compress(d).unwrap();
    clock.advance(days(1));
    let b = h.capture(NewEpisode::default()).unwrap(); // 1.5 d: 0.433
    clock.advance(days(1));
    let a = h.capture(NewEpisode::default()).unwrap(); // 0.5 d: 0.504
    let g = h.capture(NewEpisode::default()).unwrap();
    let g2 = h.capture(NewEpisode::default()).unwrap();
    clock.advance(hours(12.0));
    let mut scn = ClusterScn::default();
    for id in [a, b, c, d, e] {
        scn.0.insert(id, 1);
    }
    scn.0.insert(g, 2);
    scn.0.insert(g2, 2);
    h.set_temporal_context(Some(Arc::new(scn)));
    let plain = h.clone_without_callbacks().sleep();
    assert_eq!((plain.compressed, plain.removed, plain.preserved), (3, 1, 4), "b, c, f; e; a, d, g, g2");

    let out = h.sleep_with_clustering(2).unwrap();
    assert_eq!((out.clusters_processed, out.clusters_thinned), (2, 1));
    let r = out.report;
    // Cluster 1 keeps its best two, a and b, compressed below 0.6; of the rest, d (already
    // compressed) and e (below 0.3) go and c is compressed. f and cluster 2 are judged alone.
    assert_eq!((r.compressed, r.removed, r.preserved), (4, 2, 2));
    for id in [a, b, c, f] {
        assert!(h.peek(id).unwrap().is_compressed(), "{id}");
    }
    assert!(!h.contains(d) && !h.contains(e));
    for id in [g, g2] {
        assert!(!h.peek(id).unwrap().is_compressed());
    }
    assert_eq!(h.counters().consolidations, 1);
}

#[test]
fn without_clusters_clustering_sleep_is_sleep() {
    let (clock, mut h) = layer();
    for i in 0..12 {
        h.capture(episode(&["mug"], "find mug", "look", (i % 3 == 0).then_some(true))).unwrap();
        clock.advance(Duration::from_secs(9 * 3600));
    }
    clock.advance(days(3));
    h.set_temporal_context(Some(Arc::new(FakeScn::default())));
    let mut twin = h.clone_without_callbacks();
    twin.set_temporal_context(Some(Arc::new(FakeScn::default())));
    let plain = twin.sleep();
    let out = h.sleep_with_clustering(1).unwrap();
    assert_eq!(out.report, plain);
    assert_eq!((out.clusters_processed, out.clusters_thinned), (0, 0));
    assert!(plain.compressed + plain.removed > 0, "the comparison is not vacuous");
    assert_eq!(h.len(), twin.len());
}
