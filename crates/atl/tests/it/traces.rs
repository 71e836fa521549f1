//! Traces drive behaviour: reads that count as use (`get`, `touch`,
//! `recall_associated_touching`) and confirmations reinforce a concept's trace, with the
//! imprint window of the layer's trace settings, and the uses survive a reopen.

use atl::{Atl, AtlConfig, spec};
use maxim_core::trace::TraceParams;
use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, days};

use crate::common::{T0, layer, layer_with};

#[test]
fn get_and_touch_reinforce_and_plain_reads_do_not() {
    let (clock, mut atl) = layer();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let cup = atl.find_or_create(&spec("cup", "object")).unwrap().id;
    let count = |atl: &Atl, id| atl.record(id).unwrap().meta().trace.reinforcement_count();
    assert_eq!((count(&atl, mug), count(&atl, cup)), (0, 0));
    clock.advance(days(20));
    let _ = MemoryLayer::peek(&atl, mug);
    let _ = atl.record(mug);
    assert_eq!(count(&atl, mug), 0, "reads that record nothing leave the trace alone");
    let (now, p) = (T0 + days(20), TraceParams::default());
    let before = atl.record(mug).unwrap().meta().trace.strength_at(now, &p);
    atl.get(mug).unwrap();
    let after = atl.record(mug).unwrap().meta().trace.strength_at(now, &p);
    assert_eq!(count(&atl, mug), 1);
    assert!(after >= before + 0.1 && after < before + 0.105, "{before} -> {after}");
    assert_eq!(atl.touch(&[cup, maxim_core::RecordId::from_u128(404)]), 1);
    assert_eq!(count(&atl, cup), 1);
    assert_eq!(atl.record(cup).unwrap().meta().trace.last_reinforced(), now);
}

#[test]
fn uses_in_the_imprint_window_count_three_times() {
    let mut config = AtlConfig::default();
    config.trace = TraceParams::default().with_imprint_start(T0);
    let (clock, mut atl) = layer_with(config.clone());
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    clock.advance(days(2));
    let now = T0 + days(2);
    let strength = |atl: &Atl| atl.record(mug).unwrap().meta().trace.strength_at(now, &config.trace);
    let before = strength(&atl);
    atl.get(mug).unwrap();
    // Semantic traces start at their peak, 0.5: +0.3 lifts the peak, exactly.
    assert!((strength(&atl) - (before + 0.3)).abs() < 1e-12, "{before} -> {}", strength(&atl));
}

#[test]
fn batched_uses_replay_to_the_same_traces() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let open = || Atl::builder().clock(clock.shared()).id_seed(5).open(dir.path()).unwrap();
    let mut atl = open();
    let mug = atl.find_or_create(&spec("mug", "object")).unwrap().id;
    let cup = atl.find_or_create(&spec("cup", "object")).unwrap().id;
    clock.advance(days(3));
    atl.get(mug).unwrap();
    atl.touch(&[mug, cup]);
    let _ = atl.recall_associated_touching(&[cup], 5);
    let traces: Vec<_> = [mug, cup].map(|id| atl.record(id).unwrap().meta().trace.clone()).into();
    assert_eq!(traces[0].reinforcement_count(), 2);
    drop(atl); // the batched reads are journaled when the layer is dropped
    let atl = open();
    let replayed: Vec<_> = [mug, cup].map(|id| atl.record(id).unwrap().meta().trace.clone()).into();
    assert_eq!(replayed, traces);
}
