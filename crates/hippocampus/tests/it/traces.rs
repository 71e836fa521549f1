//! Traces drive behaviour: reads that count as use reinforce an episode's trace (with the
//! imprint window), and sleep follows the trace's storage tier.

use hippocampus::{HippocampusConfig, ImportanceBased, RecallFilter};
use maxim_core::trace::{StorageTier, TraceParams};
use maxim_core::{MemoryLayer, days};

use crate::common::{T0, episode, layer, layer_with};

#[test]
fn get_and_touch_reinforce_the_trace_and_peek_and_recall_do_not() {
    let (clock, mut hippo) = layer();
    let a = hippo.capture(episode(&["mug"], "drink", "grasp", Some(true))).unwrap();
    let b = hippo.capture(episode(&["door"], "leave", "push", Some(true))).unwrap();
    let params = TraceParams::default();
    clock.advance(days(30));
    let now = T0 + days(30);
    let before = hippo.peek(a).unwrap().meta().trace.strength_at(now, &params);
    // Reads that record nothing leave the trace alone.
    let _ = hippo.peek(a);
    let _ = hippo.recall(&RecallFilter::default(), 10);
    assert_eq!(hippo.peek(a).unwrap().meta().trace.reinforcement_count(), 0);

    let got = hippo.get(a).unwrap().meta().trace.clone();
    assert_eq!(got.reinforcement_count(), 1);
    assert_eq!(got.last_reinforced(), now);
    let after = got.strength_at(now, &params);
    // +0.1, up to the whole-tick rounding of the moved decay origin (never below).
    assert!(after >= before + 0.1 && after < before + 0.105, "{before} -> {after}");
    assert_eq!(hippo.touch(&[b, maxim_core::RecordId::from_u128(99)]), 1);
    assert_eq!(hippo.peek(b).unwrap().meta().trace.reinforcement_count(), 1);
    // A week on, the used episode is still stronger than it was before its use.
    let later = now + days(7);
    assert!(hippo.peek(a).unwrap().meta().trace.strength_at(later, &params) > before + 0.01);
}

#[test]
fn recall_touching_reinforces_what_it_returns_only() {
    let (clock, mut hippo) = layer();
    let mug = hippo.capture(episode(&["mug"], "drink", "grasp", Some(true))).unwrap();
    let door = hippo.capture(episode(&["door"], "leave", "push", Some(false))).unwrap();
    clock.advance(days(2));
    let filter = RecallFilter { object: Some("mug".into()), ..RecallFilter::default() };
    let ids: Vec<_> = hippo.recall_touching(&filter, 10).iter().map(|e| e.id()).collect();
    assert_eq!(ids, [mug]);
    assert_eq!(hippo.peek(mug).unwrap().meta().trace.reinforcement_count(), 1);
    assert_eq!(hippo.peek(door).unwrap().meta().trace.reinforcement_count(), 0);
    let p = TraceParams::default();
    let now = T0 + days(2);
    assert_eq!(hippo.peek(mug).unwrap().meta().trace.tier(now + days(1), &p), StorageTier::Hot);
    assert_eq!(hippo.peek(door).unwrap().meta().trace.tier(now + days(1), &p), StorageTier::Warm);
}

#[test]
fn the_imprint_window_triples_a_use_and_marks_the_encoding() {
    let mut config = HippocampusConfig::default();
    config.trace = TraceParams::default().with_imprint_start(T0);
    let (clock, mut hippo) = layer_with(config.clone());
    let a = hippo.capture(episode(&["mug"], "drink", "grasp", None)).unwrap();
    // Encoded inside the window: one reinforcement on the count, strength unchanged.
    assert_eq!(hippo.peek(a).unwrap().meta().trace.reinforcement_count(), 1);
    clock.advance(days(3));
    let now = T0 + days(3);
    let before = hippo.peek(a).unwrap().meta().trace.strength_at(now, &config.trace);
    let after = hippo.get(a).unwrap().meta().trace.strength_at(now, &config.trace);
    assert!((after - (before + 0.3)).abs() < 1e-12, "{before} -> {after}: +0.3 in the window");
    // Past the window (7 days, strict), a use adds 0.1.
    clock.advance(days(5));
    let now = T0 + days(8);
    let before = hippo.peek(a).unwrap().meta().trace.strength_at(now, &config.trace);
    let after = hippo.get(a).unwrap().meta().trace.strength_at(now, &config.trace);
    assert!(after >= before + 0.1 && after < before + 0.105, "{before} -> {after}");
    assert_eq!(hippo.peek(a).unwrap().meta().trace.reinforcement_count(), 3);
}

/// A layer with trace tiers on or off. (The importance-based strategy scores 0 an episode
/// older than 30 days with fewer than three accesses, whatever its recent use.)
fn tiers_layer(trace_tiers: bool) -> (maxim_core::ManualClock, hippocampus::Hippocampus) {
    let mut config = HippocampusConfig::default();
    config.trace_tiers = trace_tiers;
    layer_with(config)
}

#[test]
fn a_hot_trace_protects_from_removal() {
    for tiers in [true, false] {
        let (clock, mut hippo) = tiers_layer(tiers);
        let used = hippo.capture(episode(&["mug"], "drink", "grasp", Some(true))).unwrap();
        let idle = hippo.capture(episode(&["door"], "leave", "push", Some(true))).unwrap();
        clock.advance(days(31));
        hippo.get(used).unwrap(); // hot again, but only two accesses: importance 0
        let report = hippo.sleep_with(&ImportanceBased::default());
        assert!(!hippo.contains(idle), "a warm trace scored 0 goes (tiers {tiers})");
        if tiers {
            assert!(hippo.peek(used).unwrap().is_compressed(), "hot: compressed, not removed");
            assert_eq!((report.removed, report.compressed), (1, 1));
        } else {
            assert!(!hippo.contains(used), "without tiers the strategy alone decides");
            assert_eq!(report.removed, 2);
        }
    }
}

#[test]
fn a_cold_trace_is_compressed_where_the_strategy_allows_it() {
    for tiers in [true, false] {
        let (clock, mut hippo) = tiers_layer(tiers);
        // A successful user interaction: the access-based floor of 0.7 keeps it forever.
        let mut e = episode(&["mug"], "drink", "grasp", Some(true));
        e.perception.transcript = Some("get me the mug".into());
        let id = hippo.capture(e).unwrap();
        clock.advance(days(89));
        assert_eq!(hippo.sleep().compressed, 0, "warm: the strategy keeps it full");
        assert!(!hippo.peek(id).unwrap().is_compressed());
        clock.advance(days(2)); // 91 days without reinforcement: cold
        let tier = hippo.peek(id).unwrap().meta().trace.tier(T0 + days(91), &TraceParams::default());
        assert_eq!(tier, StorageTier::Cold);
        let report = hippo.sleep();
        assert_eq!(report.removed, 0);
        assert_eq!(hippo.peek(id).unwrap().is_compressed(), tiers, "tiers {tiers}");
    }
}

#[test]
fn a_use_carries_over_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let clock = maxim_core::ManualClock::new(T0);
    let open =
        || hippocampus::Hippocampus::builder().clock(clock.shared()).id_seed(3).open(dir.path()).unwrap();
    let mut hippo = open();
    let id = hippo.capture(episode(&["mug"], "drink", "grasp", Some(true))).unwrap();
    clock.advance(days(1));
    let trace = hippo.get(id).unwrap().meta().trace.clone();
    hippo.checkpoint().unwrap();
    drop(hippo);
    let hippo = open();
    assert_eq!(MemoryLayer::peek(&hippo, id).unwrap().meta().trace, trace);
}
