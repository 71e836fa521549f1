//! The mathematical layer on a directory: `open(dir)`, its journal of operations, and
//! `checkpoint()` (`docs/durability.md`, "The journal").
//!
//! Every write to a layer opened on a directory is resolved to an [`Op`] (the record
//! with its id and times chosen, the link with its weight, a consolidation's compressed forms
//! and removals), journaled through [`maxim_core::journal::StoreDir`], and only then applied
//! by the one function that changes the layer for a write and cannot fail. Opening the
//! directory loads `angular_gyrus.snap` (falling back to its backup) and applies the
//! journaled operations after it, so the layer comes back with every acknowledged write.
//!
//! What is journaled: inserts (also of fitted patterns), replacements (refits), removals,
//! links, consolidations (one entry each). Access bookkeeping by reads (`get`, `touch`,
//! `recall_touching`) is not journaled: it reaches the disk with the next checkpoint or save.
//! The built-ins are seeded by the build, never journaled: they are the same in every run.
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory};
//! use maxim_core::journal::SyncPolicy;
//! let dir = tempfile::tempdir()?;
//! let mut ag = AngularGyrus::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! let r = ag.new_record("speed_of_light", MathCategory::Constant, "physics")?;
//! let id = ag.insert(r.into())?; // journaled before it returns
//! drop(ag); // a crash here loses nothing
//! let ag = AngularGyrus::builder().open(dir.path())?;
//! assert!(ag.record(id).is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{OpenReport, StoreDir, SyncPolicy};

use crate::error::{Error, Result};
use crate::persist::SNAPSHOT_KIND;
use crate::store::{AngularGyrus, Op};

/// The layer's directory while it is open on one.
#[derive(Debug)]
pub(crate) struct Journaled {
    pub(crate) dir: StoreDir<Op>,
}

impl AngularGyrus {
    /// Opens the layer on `dir` (see the [module docs](self)); called by
    /// [`AngularGyrusBuilder::open`](crate::AngularGyrusBuilder::open).
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
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
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "angular gyrus opened");
        self.journal = Some(Journaled { dir: store });
        Ok(self)
    }

    /// Whether the layer is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the layer into its directory and starts a fresh journal.
    /// Errors: the layer is not open on a directory ([`maxim_core::Error::InvalidArgument`]),
    /// or the save fails (the journal is kept and still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("ag_checkpoint", n_records = self.len_records()).entered();
        let Some(mut journaled) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the layer is not open on a directory").into()
            );
        };
        let result = journaled.dir.checkpoint(|path, seq| self.save_recording(path, seq));
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

    /// The sequence number of the last journaled operation, or the one the last loaded
    /// snapshot recorded.
    pub(crate) fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, |j| j.dir.last_seq())
    }

    /// Journals `op` when the layer is open on a directory, then applies it. When the journal
    /// refuses the write (an I/O error), nothing changes.
    pub(crate) fn journal_and_apply(&mut self, op: Op) -> Result<()> {
        if let Some(j) = &mut self.journal {
            j.dir.append(&op)?;
        }
        self.apply(op);
        Ok(())
    }
}
