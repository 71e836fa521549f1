//! Saving and loading the store (`spec/maxim-reference.md` §8.5) through the core snapshot
//! codec.
//!
//! A snapshot of kind `nac` holds every link (with its bounded histories and observation
//! times), the pending events, the priors and the counters. Saving is atomic with a backup
//! ([`maxim_core::codec::save`]) and refuses to overwrite a file this store neither created
//! nor read ([`maxim_core::ownership`]). A load decodes and checks the whole file (every
//! link's names, numbers and id, no id twice, pending events and priors in range) and builds
//! the new state aside; only then does it replace the store's contents, so a failed load
//! leaves the store as it was. The settings and clock are the store's own: histories longer
//! than the store's bounds keep their newest values, and a file holding more links than
//! `max_links` loses its least confident ones, as eviction would.
//!
//! ```
//! use maxim_core::{ManualClock, Timestamp};
//! use nac::{Nac, Observation, Valence};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut nac = Nac::builder().clock(clock.shared()).build()?;
//! nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "tool:grasp:positive", Valence::Positive))?;
//! nac.set_prior("tool", "tool:lift", 0.7, 0.3)?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("nac.snap");
//! nac.save(&path)?;
//! let mut fresh = Nac::builder().clock(clock.shared()).build()?;
//! fresh.load(&path)?;
//! assert_eq!(fresh.links(), nac.links());
//! assert_eq!(fresh.stats(), nac.stats());
//! assert!(fresh.load(dir.path().join("missing.snap")).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use maxim_core::codec::{self, LoadOutcome, Recovery};
use maxim_core::{CorruptReason, Timestamp};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::context::{check_context, check_name};
use crate::error::{Error, Result};
use crate::link::CausalLink;
use crate::store::{Counters, Nac, PendingEvent, Prior};

/// The snapshot kind of the store.
pub const SNAPSHOT_KIND: &str = "nac";

/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    saved_at: Timestamp,
    journal_seq: u64,
    links: &'a [CausalLink],
    pending: &'a VecDeque<PendingEvent>,
    next_event: u64,
    priors: &'a BTreeMap<String, Prior>,
    counters: &'a Counters,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    #[allow(dead_code)]
    saved_at: Timestamp,
    journal_seq: u64,
    links: Vec<CausalLink>,
    pending: VecDeque<PendingEvent>,
    next_event: u64,
    priors: BTreeMap<String, Prior>,
    counters: Counters,
}

/// The state a snapshot rebuilds, before it replaces the store's.
struct Rebuilt {
    journal_seq: u64,
    links: Vec<CausalLink>,
    pending: VecDeque<PendingEvent>,
    next_event: u64,
    priors: BTreeMap<String, Prior>,
    counters: Counters,
}

fn corrupt(path: &Path, reason: String) -> Error {
    maxim_core::Error::Corrupt {
        path: path.to_path_buf(),
        reason: CorruptReason::Payload(reason),
        kept_aside: None,
    }
    .into()
}

impl Nac {
    /// Encodes the whole store as snapshot bytes (header and payload), as
    /// [`save`](Self::save) writes them.
    pub fn to_snapshot_bytes(&self) -> Result<Vec<u8>> {
        Ok(codec::encode(SNAPSHOT_KIND, &self.snapshot_out(self.journal_seq()))?)
    }

    /// The journal sequence number a snapshot of the current state records.
    fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, maxim_core::journal::StoreDir::last_seq)
    }

    fn snapshot_out(&self, journal_seq: u64) -> SnapshotOut<'_> {
        SnapshotOut {
            schema: SCHEMA_VERSION,
            saved_at: self.clock.now(),
            journal_seq,
            links: &self.links,
            pending: &self.pending,
            next_event: self.next_event,
            priors: &self.priors,
            counters: &self.counters,
        }
    }

    /// Saves the store to `path` atomically (the previous file is kept as `<path>.backup`).
    ///
    /// A file that already exists is overwritten only when this store created it (an earlier
    /// save) or read it (a load), or after [`allow_overwrite`](Self::allow_overwrite);
    /// otherwise [`maxim_core::Error::OverwriteRefused`] and nothing is written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("nac_save", n_links = self.links.len()).entered();
        self.save_recording(path, self.journal_seq())
    }

    /// Saves, recording `journal_seq` as the last journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        self.claims.save(path, SNAPSHOT_KIND, &self.snapshot_out(journal_seq))?;
        Ok(())
    }

    /// Lets [`save`](Self::save) overwrite files this store neither created nor read
    /// (`true`), or only its own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this store created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the store's contents with the snapshot at `path`. A missing, unreadable,
    /// corrupt or inconsistent file is an error and changes nothing (a file the codec or the
    /// store's checks reject is moved aside, see [`maxim_core::codec::load_checked`]).
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("nac_load").entered();
        let rebuilt = codec::load_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        })?;
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(())
    }

    /// Replaces the store's contents with snapshot `bytes` (as
    /// [`to_snapshot_bytes`](Self::to_snapshot_bytes) makes them); `path` only names them in
    /// errors.
    pub fn load_from_bytes(&mut self, path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
        let path = path.as_ref();
        let snapshot: SnapshotIn = codec::decode(path, SNAPSHOT_KIND, bytes)?;
        let rebuilt = self.rebuild(path, snapshot)?;
        self.install(rebuilt);
        Ok(())
    }

    /// Loads `path`, or its backup when `path` is missing or rejected (by the codec or by the
    /// checks of [`load`](Self::load)); when neither exists the store stays as it is and the
    /// outcome says [`LoadOutcome::Missing`].
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("nac_load_with_recovery").entered();
        let checked = codec::load_with_recovery_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        });
        let (rebuilt, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        let outcome = if let Recovery::Backup { path: backup, primary_error } = recovery {
            tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
            LoadOutcome::FromBackup { path: backup, primary_error }
        } else {
            LoadOutcome::Loaded
        };
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(outcome)
    }

    fn rebuild(&self, path: &Path, snap: SnapshotIn) -> Result<Rebuilt> {
        if snap.schema != SCHEMA_VERSION {
            return Err(maxim_core::Error::UnsupportedVersion {
                path: path.to_path_buf(),
                found: snap.schema,
                supported: SCHEMA_VERSION,
                kept_aside: None,
            }
            .into());
        }
        let mut seen = FxHashSet::default();
        let mut links = snap.links;
        for link in &mut links {
            link.validate().map_err(|e| corrupt(path, format!("link {}: {e}", link.key.id)))?;
            if !seen.insert(link.key.id) {
                return Err(corrupt(path, format!("link {} appears twice", link.key.id)));
            }
            link.history.set_capacity(self.config.max_history);
            link.delays.set_capacity(self.config.max_delays);
            link.memory_ids.set_capacity(self.config.max_memory_ids);
            link.observed_at.set_capacity(self.config.max_observation_times);
        }
        let mut counters = snap.counters;
        if links.len() > self.config.max_links {
            // Keep the most confident, as eviction would have.
            links.sort_by(|a, b| {
                b.confidence
                    .total_cmp(&a.confidence)
                    .then(b.last_observed.cmp(&a.last_observed))
                    .then_with(|| b.key.id.cmp(&a.key.id))
            });
            counters.evictions += (links.len() - self.config.max_links) as u64;
            links.truncate(self.config.max_links);
        }
        let mut pending = snap.pending;
        let mut last = 0;
        for e in &pending {
            check_name("event_type", &e.event_type)
                .map_err(|err| corrupt(path, format!("{}: {err}", e.id)))?;
            check_name("event_signature", &e.signature)
                .map_err(|err| corrupt(path, format!("{}: {err}", e.id)))?;
            check_context("context", &e.context).map_err(|err| corrupt(path, format!("{}: {err}", e.id)))?;
            if e.id.index() <= last || e.id.index() >= snap.next_event {
                return Err(corrupt(path, format!("{} is out of order", e.id)));
            }
            last = e.id.index();
        }
        while pending.len() > self.config.max_pending_events {
            pending.pop_front();
        }
        for (key, prior) in &snap.priors {
            if key.is_empty()
                || !(prior.value.is_finite() && (0.0..=1.0).contains(&prior.value))
                || !(prior.confidence.is_finite() && (0.0..=1.0).contains(&prior.confidence))
            {
                return Err(corrupt(path, format!("prior {key:?} is out of range")));
            }
        }
        Ok(Rebuilt {
            journal_seq: snap.journal_seq,
            links,
            pending,
            next_event: snap.next_event.max(1),
            priors: snap.priors,
            counters,
        })
    }

    fn install(&mut self, r: Rebuilt) {
        self.links = Vec::with_capacity(r.links.len());
        self.by_id.clear();
        self.by_id.reserve(r.links.len());
        self.by_event.clear();
        for link in r.links {
            let check = link.key_check();
            self.insert(link, check);
        }
        self.pending = r.pending;
        self.next_event = r.next_event;
        self.priors = r.priors;
        self.counters = r.counters;
        self.loaded_journal_seq = r.journal_seq;
        tracing::debug!(n_links = self.links.len(), "nac loaded");
    }
}
