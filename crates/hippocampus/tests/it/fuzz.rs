//! The fuzz test (issue 15): seeded mutations of a valid snapshot and of a valid journal:
//! bit flips, truncations, insertions, and payload edits with the checksums recomputed (so
//! they reach the decoder and the layer's own checks). No mutation may panic, none may be
//! accepted as a state the layer could not have written, and a failed load leaves the layer
//! as it was. `MAXIM_FUZZ_CASES` scales both runs (default: 8,000 snapshot mutations and
//! 2,000 journal mutations).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use hippocampus::{Hippocampus, NewEpisode};
use maxim_core::journal::SyncPolicy;
use maxim_core::value::Value;
use maxim_core::{EdgeKind, ManualClock, SplitMix64, Timestamp};

use crate::common::episode;

fn scale() -> f64 {
    std::env::var("MAXIM_FUZZ_CASES").ok().and_then(|v| v.parse::<f64>().ok()).map_or(1.0, |n| n / 10_000.0)
}

/// The codec's checksum over a snapshot's header fields and payload, recomputed after an edit.
fn reseal_snapshot(bytes: &mut [u8]) {
    let payload_len = (bytes.len() - 40) as u64;
    bytes[28..36].copy_from_slice(&payload_len.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..36]);
    h.update(&bytes[40..]);
    let crc = h.finalize();
    bytes[36..40].copy_from_slice(&crc.to_le_bytes());
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mutation {
    Flip,
    Truncate,
    Insert,
    Resealed,
}

/// Mutates `bytes` (whose first `protected` bytes hold the header) and says how.
fn mutate(rng: &mut SplitMix64, bytes: &mut Vec<u8>, protected: usize) -> Mutation {
    let pick = |rng: &mut SplitMix64, n: usize| (rng.next_u64() % n as u64) as usize;
    match rng.next_u64() % 4 {
        0 => {
            for _ in 0..=pick(rng, 3) {
                let at = pick(rng, bytes.len());
                bytes[at] ^= 1 << pick(rng, 8);
            }
            Mutation::Flip
        }
        1 => {
            bytes.truncate(pick(rng, bytes.len()));
            Mutation::Truncate
        }
        2 => {
            let at = pick(rng, bytes.len() + 1);
            let n = 1 + pick(rng, 8);
            let junk: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            bytes.splice(at..at, junk);
            Mutation::Insert
        }
        _ => {
            // An edit past the header: change, drop or add a byte of the payload.
            let at = protected + pick(rng, bytes.len() - protected);
            match rng.next_u64() % 3 {
                0 => bytes[at] = rng.next_u64() as u8,
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, rng.next_u64() as u8),
            }
            Mutation::Resealed
        }
    }
}

fn rich(clock: &ManualClock) -> Hippocampus {
    let mut h = Hippocampus::builder().clock(clock.shared()).id_seed(3).build().unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut e =
            episode(&["mug", if i % 2 == 0 { "cup" } else { "box" }], "find mug", "look", Some(i % 3 == 0));
        e.perception.observations.insert("step", Value::from(i64::from(i)));
        e.state_snapshot = Some(Value::List(vec![Value::from(i64::from(i)), Value::from("s")]));
        ids.push(h.capture(e).unwrap());
        clock.advance(Duration::from_secs(60));
    }
    h.link(ids[0], ids[5], EdgeKind::Causes, 0.7).unwrap();
    h.compress(ids[1]).unwrap();
    h
}

#[test]
fn mutated_snapshots_are_refused_or_whole_and_never_change_a_failed_layer() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let source = rich(&clock).to_snapshot_bytes().unwrap();
    let mut target = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    target.capture(episode(&["kettle"], "make tea", "grasp", None)).unwrap();
    let before = target.to_snapshot_bytes().unwrap();
    let cases = (8_000.0 * scale()) as usize;
    let mut rng = SplitMix64::new(0x5eed);
    let (mut refused, mut accepted) = (0usize, 0usize);
    for case in 0..cases {
        let mut bytes = source.clone();
        let how = mutate(&mut rng, &mut bytes, 40);
        if how == Mutation::Resealed {
            reseal_snapshot(&mut bytes);
        }
        if target.load_from_bytes("fuzz.snap", &bytes).is_err() {
            refused += 1;
            assert_eq!(
                target.to_snapshot_bytes().unwrap(),
                before,
                "case {case} ({how:?}) changed the layer"
            );
        } else {
            accepted += 1;
            // Only an edit with a valid checksum can pass, and what it gives must be a
            // state the layer holds together and can write and read back.
            assert!(
                how == Mutation::Resealed || bytes == source,
                "case {case}: a {how:?} passed the checksum"
            );
            assert!(
                target.check_consistency().is_consistent(),
                "case {case}: {:?}",
                target.check_consistency()
            );
            let again = target.to_snapshot_bytes().unwrap();
            let mut copy = Hippocampus::builder().clock(clock.shared()).build().unwrap();
            copy.load_from_bytes("again", &again).unwrap();
            target.load_from_bytes("reset", &before).unwrap();
        }
    }
    eprintln!("snapshot fuzz: {cases} mutations, {refused} refused, {accepted} accepted whole, 0 panics");
    assert!(refused > cases / 2);
}

/// Empties `dir` and writes the snapshot and the journal into it.
fn restore(snapshot: &[u8], journal: &[u8], dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        std::fs::remove_file(entry.path()).unwrap();
    }
    std::fs::write(dir.join("hippocampus.snap"), snapshot).unwrap();
    std::fs::write(dir.join("hippocampus.journal"), journal).unwrap();
}

/// The layer's payload (its journal sequence number included).
fn contents(h: &Hippocampus) -> Vec<u8> {
    h.to_snapshot_bytes().unwrap()[40..].to_vec()
}

#[test]
fn mutated_journals_open_to_a_prefix_of_the_writes_or_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let open = |clock: &ManualClock| {
        Hippocampus::builder().clock(clock.shared()).id_seed(9).sync_policy(SyncPolicy::Never).open(dir)
    };
    let mut h = open(&clock).unwrap();
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(h.capture(episode(&["mug", "cup"], "g", "t", Some(i == 0))).unwrap());
    }
    h.checkpoint().unwrap();
    // Every state the journal's prefixes give, as the layer's payload with the sequence
    // number of that prefix.
    let mut prefixes: BTreeSet<Vec<u8>> = BTreeSet::new();
    prefixes.insert(contents(&h));
    for i in 0..10 {
        let mut e = NewEpisode::default();
        e.perception.detected_objects = vec![if i % 2 == 0 { "mug" } else { "box" }.into()];
        e.run_id = format!("r{i}");
        ids.push(h.capture(e).unwrap());
        prefixes.insert(contents(&h));
        if i == 4 {
            h.link(ids[0], ids[6], EdgeKind::Causes, 0.5).unwrap();
            prefixes.insert(contents(&h));
        }
        if i == 7 {
            h.remove(ids[1]).unwrap();
            prefixes.insert(contents(&h));
        }
    }
    drop(h);
    let snapshot = std::fs::read(dir.join("hippocampus.snap")).unwrap();
    let journal = std::fs::read(dir.join("hippocampus.journal")).unwrap();
    let cases = (2_000.0 * scale()) as usize;
    let mut rng = SplitMix64::new(0x1e55);
    let (mut refused, mut prefix, mut resealed_accepted) = (0usize, 0usize, 0usize);
    for case in 0..cases {
        let mut bytes = journal.clone();
        let how = mutate(&mut rng, &mut bytes, 40);
        if how == Mutation::Resealed {
            reseal_journal(&mut bytes);
        }
        restore(&snapshot, &bytes, dir);
        match open(&clock) {
            Err(_) => refused += 1,
            Ok(h) => {
                let state = contents(&h);
                assert!(h.check_consistency().is_consistent(), "case {case}");
                if prefixes.contains(&state) {
                    prefix += 1;
                } else {
                    // Only a resealed edit can make a valid entry that was never written.
                    assert_eq!(
                        how,
                        Mutation::Resealed,
                        "case {case}: a {how:?} opened to a state never written"
                    );
                    resealed_accepted += 1;
                }
            }
        }
    }
    eprintln!(
        "journal fuzz: {cases} mutations, {refused} refused, {prefix} opened to a prefix of the writes, \
         {resealed_accepted} resealed edits accepted as valid entries, 0 panics"
    );
    assert!(prefix > 0 && refused > 0);
}

/// Recomputes the length and checksum of every entry whose bytes still frame (after an
/// edit inside one, its own length is off by the bytes added or removed: the entry that
/// holds the edit is resealed to its new length when the rest still lines up).
fn reseal_journal(bytes: &mut [u8]) {
    let mut at = 40;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let end = (at + 16 + len).min(bytes.len());
        let payload_len = (end - at - 16) as u32;
        bytes[at..at + 4].copy_from_slice(&payload_len.to_le_bytes());
        let mut h = crc32fast::Hasher::new();
        h.update(&bytes[at..at + 4]);
        h.update(&bytes[at + 8..at + 16]);
        h.update(&bytes[at + 16..end]);
        let crc = h.finalize();
        bytes[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
        at = end;
    }
}
