//! The store on a directory: its journal of operations, `open(dir)` and `checkpoint()`
//! (`docs/durability.md`, "The journal").
//!
//! Every write to a store opened on a directory (observations, events, outcomes, decay,
//! removals, priors) is resolved to one operation with its time and link ids chosen,
//! journaled through [`maxim_core::journal::StoreDir`], and only then applied by the one
//! function that changes the store and cannot fail. Opening the directory loads `nac.snap`
//! (falling back to its backup) and applies the journaled operations after it, so the store
//! comes back with every acknowledged write. [`Nac::checkpoint`] writes a snapshot and
//! starts a fresh journal. Replay uses the opening store's settings (learning rate, bounds,
//! capacity), as a snapshot load does.
//!
//! ```
//! use maxim_core::journal::SyncPolicy;
//! use nac::{Nac, Observation, Valence};
//! let dir = tempfile::tempdir()?;
//! let mut nac = Nac::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "ok", Valence::Positive))?;
//! drop(nac); // a crash here loses nothing
//! let nac = Nac::builder().open(dir.path())?;
//! assert_eq!(nac.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{StoreDir, SyncPolicy};

use crate::error::{Error, Result};
use crate::persist::SNAPSHOT_KIND;
use crate::store::Nac;

impl Nac {
    /// Opens the store on `dir` (see the [module docs](self)); called by
    /// [`NacBuilder::open`](crate::NacBuilder::open).
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.load_with_recovery(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report = store.replay(seq, |op| {
            self.apply(op);
            Ok::<_, Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "nac opened");
        self.journal = Some(store);
        Ok(self)
    }

    /// Whether the store is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the store into its directory and starts a fresh journal. Errors:
    /// the store is not open on a directory ([`maxim_core::Error::InvalidArgument`]), or the
    /// save fails (the journal is kept and still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("nac_checkpoint", n_links = self.links.len()).entered();
        let Some(mut dir) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the store is not open on a directory").into()
            );
        };
        let result = dir.checkpoint(|path, seq| self.save_recording(path, seq));
        self.journal = Some(dir);
        result
    }

    /// Makes every journaled write durable now, whatever the sync policy (nothing for a
    /// store in memory).
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(dir) => Ok(dir.sync()?),
            None => Ok(()),
        }
    }
}
