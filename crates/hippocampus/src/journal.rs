//! The episodic layer on a directory: its journal of operations, `open(dir)` and
//! `checkpoint()` (`docs/durability.md`, "The journal").
//!
//! Every write to a layer opened on a directory is resolved to an [`Op`] (the record with
//! its id and times chosen, the records a capture at capacity evicts), journaled through
//! [`maxim_core::journal::StoreDir`], and then applied by `Hippocampus::apply`, the one
//! function that changes the layer for a write and cannot fail. Opening the directory
//! loads `hippocampus.snap` (falling back to its backup) and applies the journaled
//! operations after it, so the layer comes back with every acknowledged write.
//!
//! What is journaled: captures (all three kinds), links and associations, compressions and
//! removals. A consolidation (`sleep`, `sleep_with`, `sleep_with_clustering`, `promote`,
//! `promote_candidates`, `repair_consistency`) rewrites much of the layer at once, so on a
//! directory it ends with a [`checkpoint`](Hippocampus::checkpoint) instead. Access
//! bookkeeping by reads (`get`, `touch`, `recall_touching`) is not journaled: it reaches
//! the disk with the next checkpoint or save.
//!
//! ```
//! use hippocampus::{Hippocampus, NewEpisode};
//! use maxim_core::journal::SyncPolicy;
//! let dir = tempfile::tempdir()?;
//! let mut hippo = Hippocampus::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! let mut e = NewEpisode::default();
//! e.perception.detected_objects = vec!["mug".into()];
//! let id = hippo.capture(e)?; // journaled before it returns
//! drop(hippo); // a crash here loses nothing
//! let hippo = Hippocampus::builder().open(dir.path())?;
//! assert!(hippo.peek(id).is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{OpenReport, StoreDir};
use maxim_core::value::Value;
use maxim_core::{EdgeKind, RecordId, Timestamp};
use serde::{Deserialize, Serialize};

use crate::episode::EpisodicMemory;
use crate::error::{Error, Result};
use crate::persist::SNAPSHOT_KIND;
use crate::store::Hippocampus;

/// One write to the episodic layer, with everything chosen: what the journal holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// A capture: the validated record (id chosen), its state snapshot, the time it was
    /// made, and the records evicted for it (`None` when the layer was below capacity).
    Capture {
        /// The record, as validated.
        record: Box<EpisodicMemory>,
        /// The state snapshot it refers to.
        state: Option<Value>,
        /// When it was captured.
        now: Timestamp,
        /// The records evicted to make room, lowest score first.
        evicted: Option<Vec<RecordId>>,
    },
    /// An edge `source -> target` of `kind` (`both`: also `target -> source`).
    Link {
        /// The source.
        source: RecordId,
        /// The target.
        target: RecordId,
        /// The edge kind.
        kind: EdgeKind,
        /// The weight.
        weight: f64,
        /// Whether the edge goes both ways.
        both: bool,
    },
    /// The compression of a full record.
    Compress {
        /// The record.
        id: RecordId,
    },
    /// The removal of a record.
    Remove {
        /// The record.
        id: RecordId,
    },
}

/// The layer's directory while it is open on one.
pub(crate) struct Journaled {
    pub(crate) dir: StoreDir<Op>,
    /// Set when a consolidation could not checkpoint: the layer is ahead of its files, so
    /// writes are refused until a checkpoint succeeds.
    pub(crate) behind: Option<String>,
}

impl Hippocampus {
    /// Opens the layer on `dir` (see the [module docs](self)); called by
    /// [`HippocampusBuilder::open`](crate::HippocampusBuilder::open).
    pub(crate) fn open_dir(mut self, dir: &Path, policy: maxim_core::journal::SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.load_with_recovery(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report: OpenReport = store.replay(seq, |op| {
            self.apply(op);
            Ok::<_, Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "hippocampus opened");
        self.journal = Some(Journaled { dir: store, behind: None });
        Ok(self)
    }

    /// Whether the layer is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the layer into its directory and starts a fresh journal
    /// (`docs/durability.md`, "Checkpoint"). Errors: the layer is not open on a directory
    /// ([`maxim_core::Error::InvalidArgument`]), or the save fails (the journal is kept and
    /// still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("hippocampus_checkpoint", n_records = self.len()).entered();
        let Some(mut journaled) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the layer is not open on a directory").into()
            );
        };
        let result = journaled.dir.checkpoint(|path, seq| self.save_recording(path, seq));
        if result.is_ok() {
            journaled.behind = None;
        }
        self.journal = Some(journaled);
        result
    }

    /// Makes every journaled write durable now, whatever the sync policy (nothing for a
    /// layer in memory). Access bookkeeping is not journaled and waits for a checkpoint.
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(j) => Ok(j.dir.sync()?),
            None => Ok(()),
        }
    }

    /// Journals `op` when the layer is open on a directory (nothing otherwise). Refuses
    /// while the layer is ahead of its files (a consolidation that could not checkpoint).
    pub(crate) fn journal_op(&mut self, op: &Op) -> Result<()> {
        let Some(journaled) = &mut self.journal else { return Ok(()) };
        if let Some(why) = &journaled.behind {
            return Err(Error::CheckpointNeeded { reason: why.clone() });
        }
        journaled.dir.append(op)?;
        Ok(())
    }

    /// After a consolidation on a directory: checkpoint, or remember that the layer is ahead
    /// of its files (logged; the next write says so).
    pub(crate) fn checkpoint_after_consolidation(&mut self) {
        if self.journal.is_none() {
            return;
        }
        if let Err(e) = self.checkpoint() {
            self.counters.checkpoint_failures = self.counters.checkpoint_failures.saturating_add(1);
            tracing::warn!(error = %e, "checkpoint after consolidation failed; writes wait for a checkpoint");
            if let Some(j) = &mut self.journal {
                j.behind = Some(e.to_string());
            }
        }
    }

    /// Applies a resolved write: the one place a journaled write changes the layer. It cannot
    /// fail: everything was checked when the operation was made (a replayed operation on a
    /// record that is no longer there changes nothing).
    pub(crate) fn apply(&mut self, op: Op) {
        match op {
            Op::Capture { mut record, state, now, evicted } => {
                self.ids.observe(record.meta.id);
                if let Some(snapshot) = state {
                    record.context.state_ref = Some(self.states.store(snapshot));
                }
                self.insert_resolved(record, now, evicted);
            }
            Op::Link { source, target, kind, weight, both } => {
                if self.contains(source) && self.contains(target) {
                    if both {
                        let _ = self.graph.add_bidirectional(source, target, kind, weight);
                    } else {
                        let _ = self.graph.add_edge(source, target, kind, weight, None);
                    }
                }
            }
            Op::Compress { id } => {
                if let Some(s) = self.slots.slot_of(id)
                    && self.compress_slot(s)
                {
                    self.counters.compressions = self.counters.compressions.saturating_add(1);
                }
            }
            Op::Remove { id } => {
                if let Some(s) = self.slots.slot_of(id) {
                    self.remove_slot(s);
                }
            }
        }
    }
}
