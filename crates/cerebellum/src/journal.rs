//! The procedural layer on a directory: its journal of operations, `open(dir)` and
//! `checkpoint()` (`docs/durability.md`, "The journal").
//!
//! Every write to a store opened on a directory (a distillation, a use, a confirmation, a
//! retirement or revocation, a sequence link, a removal, a consolidation) is resolved to an
//! operation with its ids, times and status changes chosen, journaled through
//! [`maxim_core::journal::StoreDir`], and then applied by the one function that changes the
//! store and cannot fail. Opening the directory loads `cerebellum.snap` (falling back to its
//! backup) and applies the journaled operations after it, so the store comes back with every
//! acknowledged write. Access bookkeeping by reads (`get`, `touch`) is not journaled: it
//! reaches the disk with the next checkpoint or save.
//!
//! ```
//! use cerebellum::{Cerebellum, Outcome, RunTrace, SkillStatus, Step};
//! use maxim_core::journal::SyncPolicy;
//! use maxim_core::Source;
//! let dir = tempfile::tempdir()?;
//! let mut cb = Cerebellum::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! let run = RunTrace::new("r1", "rotate the logs", Source::ToolResult, 0.8).call(Step::write("gzip", "file"));
//! let id = cb.distil(&run, &Outcome::verified(["disk usage fell"]))?.id().unwrap();
//! for _ in 0..3 {
//!     cb.record_use(id, true)?; // journaled before it returns
//! }
//! cb.confirm(id, "ops-lead")?;
//! drop(cb); // a crash here loses nothing
//! let cb = Cerebellum::builder().open(dir.path())?;
//! assert_eq!(cb.skill(id).unwrap().status, SkillStatus::Active);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::MemoryRecord;
use maxim_core::journal::{OpenReport, StoreDir, SyncPolicy};

use crate::error::{Error, Result};
use crate::persist::SNAPSHOT_KIND;
use crate::store::Cerebellum;

impl Cerebellum {
    /// Opens the store on `dir` (see the [module docs](self)); called by
    /// [`CerebellumBuilder::open`](crate::CerebellumBuilder::open).
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.load_with_recovery(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let trace = self.config.rank.trace;
        let report: OpenReport = store.replay(seq, |op| {
            self.state.apply(op, &trace);
            Ok::<_, Error>(())
        })?;
        let ids: Vec<_> = self.state.iter().map(MemoryRecord::id).collect();
        for id in ids {
            self.ids.observe(id);
        }
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "cerebellum opened");
        self.journal = Some(store);
        Ok(self)
    }

    /// Whether the store is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the store into its directory and starts a fresh journal
    /// (`docs/durability.md`, "Checkpoint"). Errors: the store is not open on a directory
    /// ([`maxim_core::Error::InvalidArgument`]), or the save fails (the journal is kept and
    /// still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("cerebellum_checkpoint", n_skills = self.skill_count()).entered();
        let Some(mut journal) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the store is not open on a directory").into()
            );
        };
        let result = journal.checkpoint(|path, seq| self.save_recording(path, seq));
        self.journal = Some(journal);
        result
    }

    /// Makes every journaled write durable now, whatever the sync policy (nothing for a
    /// store in memory). Access bookkeeping is not journaled and waits for a checkpoint.
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(journal) => Ok(journal.sync()?),
            None => Ok(()),
        }
    }
}
