//! A store opened on a directory journals every write and comes back with all of them.

use std::time::Duration;

use maxim_core::journal::SyncPolicy;
use maxim_core::{ManualClock, RecordId, Timestamp};
use nac::{Nac, Observation, Outcome, Valence};

use crate::common::{T0, ctx, grasp};

fn open(dir: &std::path::Path, clock: &ManualClock) -> Nac {
    let mut b = Nac::builder();
    b.clock(clock.shared()).sync_policy(SyncPolicy::Always);
    b.open(dir).expect("the directory opens")
}

fn sorted(nac: &Nac) -> Vec<nac::CausalLink> {
    let mut links = nac.links().to_vec();
    links.sort_by_key(nac::CausalLink::id);
    links
}

/// Every kind of write, with the clock moving between them.
fn write_everything(nac: &mut Nac, clock: &ManualClock, round: u128) {
    for i in 0..6u128 {
        clock.advance(Duration::from_secs(30));
        let valence = if i % 3 == 0 { Valence::Negative } else { Valence::Positive };
        nac.observe(
            &grasp("ok", valence)
                .delay(0.5)
                .context(&ctx(&[("mode", "explore")]))
                .memory(RecordId::from_u128(round * 10 + i)),
        )
        .unwrap();
    }
    let e = nac
        .record_event("tool", "tool:lift", &ctx(&[("object", "mug")]), Some(RecordId::from_u128(99)))
        .unwrap();
    nac.record_event("tool", "tool:push", &ctx(&[]), None).unwrap();
    clock.advance(Duration::from_secs(2));
    nac.record_outcome(&Outcome::of_event("tool_result", e, Valence::Positive)).unwrap();
    nac.set_prior("tool", "tool:wave", 0.7, 0.3).unwrap();
    nac.decay_all(0.9).unwrap();
    nac.remove_memory(RecordId::from_u128(round * 10 + 1)).unwrap();
    let doomed =
        nac.observe(&Observation::new("tool", "tool:drop", "r", "bad", Valence::Negative)).unwrap().link;
    nac.remove_link(doomed).unwrap();
}

#[test]
fn a_reopened_store_finds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut nac = open(dir.path(), &clock);
    assert!(nac.is_journaled());
    write_everything(&mut nac, &clock, 1);
    let (links, stats) = (sorted(&nac), nac.stats());
    let pending: Vec<_> = nac.pending_events().cloned().collect();
    drop(nac); // no save: the journal alone holds the writes

    let mut again = open(dir.path(), &clock);
    assert_eq!(sorted(&again), links);
    assert_eq!(again.stats(), stats);
    assert_eq!(again.pending_events().cloned().collect::<Vec<_>>(), pending);
    assert_eq!(again.prior("tool", "tool:wave").unwrap().value, 0.7);

    // A checkpoint, more writes, and another reopening.
    again.checkpoint().unwrap();
    write_everything(&mut again, &clock, 2);
    let (links, stats) = (sorted(&again), again.stats());
    drop(again);
    let third = open(dir.path(), &clock);
    assert_eq!(sorted(&third), links);
    assert_eq!(third.stats(), stats);
    assert!(dir.path().join("nac.snap").exists());
}

#[test]
fn the_directory_is_locked_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let _first = open(dir.path(), &clock);
    let err = Nac::builder().open(dir.path()).unwrap_err();
    assert!(matches!(err, nac::Error::Core(maxim_core::Error::Locked { .. })), "{err}");
}

#[test]
fn a_store_in_memory_has_no_checkpoint() {
    let (mut nac, _) = crate::common::default_store();
    assert!(!nac.is_journaled());
    assert!(nac.checkpoint().is_err());
}

#[test]
fn a_refused_write_is_not_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut nac = open(dir.path(), &clock);
    nac.observe(&grasp("ok", Valence::Positive)).unwrap();
    assert!(nac.observe(&grasp("ok", Valence::Positive).delay(f64::NAN)).is_err());
    assert!(nac.decay_all(2.0).is_err());
    drop(nac);
    let again = open(dir.path(), &clock);
    assert_eq!(again.total_observations(), 1);
    assert_eq!(again.links()[0].confidence(), 0.5);
}

#[test]
fn a_store_in_memory_learns_exactly_as_a_journaled_one() {
    // The in-memory store updates known links without building a journal op; the
    // journaled one appends an op and applies it. Both must end in the same state.
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut journaled = open(dir.path(), &clock);
    let mut memory = Nac::builder().clock(clock.shared()).build().unwrap();
    for round in 1..=3 {
        for nac in [&mut journaled, &mut memory] {
            let start = clock.now();
            write_everything(nac, &clock, round);
            clock.set(start);
        }
        clock.advance(Duration::from_secs(600));
    }
    assert_eq!(sorted(&memory), sorted(&journaled));
    assert_eq!(memory.stats(), journaled.stats());
}
