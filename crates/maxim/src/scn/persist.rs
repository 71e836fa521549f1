//! Saving and loading the SCN through the core snapshot codec.
//!
//! A snapshot of kind [`SNAPSHOT_KIND`] holds, after its [`SCHEMA_VERSION`] and the journal
//! number: the time zone it was written in, the registered ids in registration order (id,
//! time, registration time, significance, order number), the 47 bins as positions into that
//! list (oldest first), the oscillator's state and the counters. Signatures are not stored:
//! they are computed again from the times.
//!
//! Loading decodes and checks the whole file first (a valid time zone, distinct ids,
//! significances in `[0, 1]`, increasing order numbers, every bin entry in the bin its
//! record's signature names and at most once per rhythm, the oscillator's numbers finite
//! and in their bounds) and only then replaces the store's contents, so a failed load leaves
//! the store as it was. A bin longer than the opening store's capacity keeps its newest
//! entries.
//!
//! A snapshot written in another time zone than the store's is re-binned: every record is
//! registered again in registration order in the store's zone, the oscillator learns the
//! held records again, and the event kinds' phases shift by the difference of the offsets.
//!
//! ```
//! use maxim::maxim_core::{ManualClock, RecordId, Timestamp};
//! use maxim::scn::Scn;
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut scn = Scn::builder().clock(clock.shared()).build()?;
//! scn.register(RecordId::from_u128(1), Timestamp::from_secs(1_700_000_000), 0.7)?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("scn.snap");
//! scn.save(&path)?;
//! let mut fresh = Scn::builder().clock(clock.shared()).build()?;
//! fresh.load(&path)?;
//! assert_eq!(fresh.registration(RecordId::from_u128(1)).map(|r| r.1), Some(0.7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::{CorruptReason, LoadOutcome, RecordId, Timestamp, codec};
use serde::{Deserialize, Serialize};

use super::Result;
use super::calendar::{Rhythm, TemporalSignature, TimeZone};
use super::oscillator::{Oscillator, State as OscillatorState};
use super::store::{Counters, Entry, N_BINS, Op, Scn, Slot, bin_base, cluster_key};

/// The kind of an SCN snapshot (and the stem of its files in a store directory).
pub const SNAPSHOT_KIND: &str = "scn";
/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

type RecordRow = (RecordId, Timestamp, Timestamp, f64, u64);

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    time_zone: i32,
    next_seq: u64,
    records: Vec<RecordRow>,
    bins: Vec<Vec<u32>>,
    oscillator: &'a OscillatorState,
    counters: Vec<(&'static str, u64)>,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    time_zone: i32,
    next_seq: u64,
    records: Vec<RecordRow>,
    bins: Vec<Vec<u32>>,
    oscillator: OscillatorState,
    counters: Vec<(String, u64)>,
}

/// A snapshot's contents, checked and built, ready to replace the store's.
struct Rebuilt {
    slots: Vec<Slot>,
    bins: [Vec<Entry>; N_BINS],
    oscillator: Oscillator,
    next_seq: u64,
    counters: Counters,
    journal_seq: u64,
}

impl Scn {
    /// Saves the store to `path` atomically (see the [module docs](self)).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let _s = tracing::debug_span!("scn_save", n_records = self.len()).entered();
        self.save_recording(path.as_ref(), self.journal_seq())
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq`.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        self.claims.save(path, SNAPSHOT_KIND, &self.snapshot(journal_seq))?;
        Ok(())
    }

    fn snapshot(&self, journal_seq: u64) -> SnapshotOut<'_> {
        let mut live: Vec<u32> =
            (0..self.slots.len() as u32).filter(|&s| self.slots[s as usize].live).collect();
        live.sort_unstable_by_key(|&s| self.slots[s as usize].seq);
        let mut number = vec![u32::MAX; self.slots.len()];
        for (i, &s) in live.iter().enumerate() {
            number[s as usize] = i as u32;
        }
        SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            time_zone: self.tz.offset_secs(),
            next_seq: self.next_seq,
            records: live
                .iter()
                .map(|&s| {
                    let x = &self.slots[s as usize];
                    (x.id, x.at, x.registered_at, x.significance, x.seq)
                })
                .collect(),
            bins: self.bins.iter().map(|b| b.iter().map(|e| number[e.slot as usize]).collect()).collect(),
            oscillator: self.oscillator.state(),
            counters: Counters::NAMES.into_iter().zip(self.counters.values()).collect(),
        }
    }

    /// Lets saves overwrite files this store neither created nor read (`true`), or only its
    /// own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this store created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the store's contents with the snapshot at `path`; on any error the store is
    /// left exactly as it was, and a file refused for its contents is moved aside. A store
    /// open on a directory refuses: its journal continues its own snapshot.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("scn_load").entered();
        self.refuse_when_journaled("load")?;
        let rebuilt = codec::load_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| self.rebuild(p, snap))?;
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(())
    }

    /// Loads like [`load`](Self::load), falling back to the backup the previous save kept
    /// when the file is rejected or missing while a backup exists; a store with neither file
    /// stays as it is ([`LoadOutcome::Missing`]).
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let _s = tracing::debug_span!("scn_load_with_recovery").entered();
        self.refuse_when_journaled("load_with_recovery")?;
        self.recover(path.as_ref())
    }

    /// [`load_with_recovery`](Self::load_with_recovery) without the journal check.
    pub(crate) fn recover(&mut self, path: &Path) -> Result<LoadOutcome> {
        let checked = codec::load_with_recovery_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap)
        });
        let (rebuilt, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e),
        };
        let outcome = if let codec::Recovery::Backup { path: backup, primary_error } = recovery {
            tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
            LoadOutcome::FromBackup { path: backup, primary_error }
        } else {
            LoadOutcome::Loaded
        };
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(outcome)
    }

    fn install(&mut self, rebuilt: Rebuilt) {
        self.index.clear();
        self.clusters = [0; 168];
        for (s, slot) in rebuilt.slots.iter().enumerate() {
            self.index.insert(slot.id, s as u32);
            self.clusters[cluster_key(&slot.sig)] += 1;
        }
        tracing::debug!(n_records = rebuilt.slots.len(), "scn loaded");
        self.slots = rebuilt.slots;
        self.free.clear();
        self.bins = rebuilt.bins;
        self.oscillator = rebuilt.oscillator;
        self.next_seq = rebuilt.next_seq;
        self.counters = rebuilt.counters;
        self.loaded_journal_seq = rebuilt.journal_seq;
    }

    /// Checks `snap` whole and builds the contents it describes.
    fn rebuild(&self, path: &Path, snap: SnapshotIn) -> maxim_core::Result<Rebuilt> {
        let corrupt = |reason: String| maxim_core::Error::Corrupt {
            path: path.to_path_buf(),
            reason: CorruptReason::Payload(reason),
            kept_aside: None,
        };
        if snap.schema != SCHEMA_VERSION {
            return Err(maxim_core::Error::UnsupportedVersion {
                path: path.to_path_buf(),
                found: snap.schema,
                supported: SCHEMA_VERSION,
                kept_aside: None,
            });
        }
        let tz = TimeZone::from_offset_secs(snap.time_zone).map_err(|e| corrupt(e.to_string()))?;
        let mut seen = rustc_hash::FxHashSet::default();
        let mut previous: Option<u64> = None;
        for &(id, _, _, significance, seq) in &snap.records {
            if !seen.insert(id) {
                return Err(corrupt(format!("record {id} appears twice")));
            }
            maxim_core::check_unit("significance", significance)
                .map_err(|e| corrupt(format!("record {id}: {e}")))?;
            if previous.is_some_and(|p| seq <= p) || seq >= snap.next_seq {
                return Err(corrupt(format!("record {id} is out of order")));
            }
            previous = Some(seq);
        }
        let mut oscillator =
            Oscillator::from_state(self.config.oscillator.clone(), snap.oscillator).map_err(corrupt)?;
        let mut counters = Counters::default();
        for (name, value) in &snap.counters {
            counters.set(name, *value);
        }
        if snap.bins.len() != N_BINS {
            return Err(corrupt(format!("{} bins, expected {N_BINS}", snap.bins.len())));
        }
        if tz != self.tz {
            // Re-bin in the store's zone: register every record again, in order.
            tracing::warn!(saved = %tz, zone = %self.tz, "snapshot written in another time zone: re-binning");
            oscillator.reset_events();
            let delta = f64::from(self.tz.offset_secs() - tz.offset_secs()) / 86_400.0;
            oscillator.shift_kinds(delta);
            let mut fresh = Scn::builder().config(self.config.clone()).time_zone(self.tz).build()?;
            fresh.oscillator = oscillator;
            for &(id, at, registered_at, significance, _) in &snap.records {
                fresh.apply_valid(Op::Register { id, at, significance, registered_at });
            }
            // Order numbers restart at 0 in the fresh store; the order is the same.
            return Ok(Rebuilt {
                slots: fresh.slots,
                bins: fresh.bins,
                oscillator: fresh.oscillator,
                next_seq: fresh.next_seq,
                counters,
                journal_seq: snap.journal_seq,
            });
        }
        let slots: Vec<Slot> = snap
            .records
            .iter()
            .map(|&(id, at, registered_at, significance, seq)| Slot {
                id,
                at,
                registered_at,
                significance,
                seq,
                sig: TemporalSignature::at(at, tz),
                live: true,
            })
            .collect();
        let mut bins: [Vec<Entry>; N_BINS] = std::array::from_fn(|_| Vec::new());
        // Which bin of each rhythm already holds a record.
        let mut placed = vec![[false; 4]; slots.len()];
        for r in Rhythm::ALL {
            for bin in 0..r.bins() {
                let b = bin_base(r) + usize::from(bin);
                let saved = &snap.bins[b];
                let keep = saved.len().saturating_sub(self.config.bin_capacity);
                for &pos in saved {
                    let slot = slots
                        .get(pos as usize)
                        .ok_or_else(|| corrupt(format!("{r} bin {bin} names record {pos}")))?;
                    if slot.sig.bin(r) != bin {
                        return Err(corrupt(format!("record {} is in {r} bin {bin}, not its own", slot.id)));
                    }
                    if std::mem::replace(&mut placed[pos as usize][r.index()], true) {
                        return Err(corrupt(format!("record {} is twice in the {r} bins", slot.id)));
                    }
                }
                bins[b] = saved[keep..]
                    .iter()
                    .map(|&pos| Entry { slot: pos, significance: slots[pos as usize].significance })
                    .collect();
            }
        }
        Ok(Rebuilt {
            slots,
            bins,
            oscillator,
            next_seq: snap.next_seq,
            counters,
            journal_seq: snap.journal_seq,
        })
    }
}
