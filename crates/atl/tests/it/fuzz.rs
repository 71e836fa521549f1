//! Fuzzing the journal (issue 15): seeded mutations of a journal (bit flips, truncations,
//! inserted and overwritten bytes) never panic an open; an open that succeeds gives the state
//! after some prefix of the writes (damage at the tail is cut off, damage before an intact
//! entry is refused), never a state the writes did not pass through. 500 mutations by
//! default (each opens a directory); `MAXIM_FUZZ_ROUNDS` sets another number.

use std::collections::BTreeSet;

use atl::{Atl, spec};
use maxim_core::journal::SyncPolicy;
use maxim_core::{ManualClock, RecordId, Source, SplitMix64};

use crate::common::{T0, fingerprint};

fn open(dir: &std::path::Path, clock: &ManualClock) -> atl::Result<Atl> {
    Atl::builder().clock(clock.shared()).id_seed(8).sync_policy(SyncPolicy::Never).open(dir)
}

#[test]
fn a_mutated_journal_opens_to_a_prefix_of_the_writes_or_is_refused() {
    let clock = ManualClock::new(T0);
    let src = tempfile::tempdir().unwrap();
    let mut atl = open(src.path(), &clock).unwrap();
    let mut states = BTreeSet::new();
    states.insert(fingerprint(&atl));
    let mut ids: Vec<RecordId> = Vec::new();
    for i in 0..12u32 {
        ids.push(atl.find_or_create(&spec(&format!("thing {i}"), "object")).unwrap().id);
        states.insert(fingerprint(&atl));
        if i % 3 == 1 {
            atl.set_property(ids[0], "n", i64::from(i), Source::UserStated, 1.0).unwrap();
            states.insert(fingerprint(&atl));
            atl.define_relationship(ids[0], ids[i as usize], "HAS_PART", 0.5, 0.5).unwrap();
            states.insert(fingerprint(&atl));
        }
    }
    drop(atl);
    let bytes = std::fs::read(src.path().join("atl.journal")).unwrap();
    let mut rng = SplitMix64::new(2026);
    let (mut opened, mut refused) = (0, 0);
    let rounds: usize = std::env::var("MAXIM_FUZZ_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    for round in 0..rounds {
        let mut b = bytes.clone();
        let at = (rng.next_u64() % b.len() as u64) as usize;
        match rng.next_u64() % 4 {
            0 => b[at] ^= 1 << (rng.next_u64() % 8),
            1 => b.truncate(at),
            2 => b.insert(at, rng.next_u64() as u8),
            _ => {
                for x in b.iter_mut().skip(at).take(8) {
                    *x = rng.next_u64() as u8;
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("atl.journal"), &b).unwrap();
        match open(dir.path(), &clock) {
            Ok(back) => {
                opened += 1;
                assert!(
                    states.contains(&fingerprint(&back)),
                    "round {round}: a state no prefix of the writes gives"
                );
            }
            Err(_) => refused += 1,
        }
    }
    eprintln!("journal fuzz: {rounds} mutations, {opened} opened to a prefix, {refused} refused, 0 panics");
    assert!(opened > 0 && refused > 0);
}
