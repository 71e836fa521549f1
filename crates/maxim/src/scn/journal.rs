//! The SCN on a directory: its journal of [`Op`]s, `open(dir)` and
//! [`checkpoint`](Scn::checkpoint) (`docs/durability.md`, "The journal").
//!
//! Every write to a store opened on a directory ([`ScnBuilder::open`]) is validated,
//! resolved to an [`Op`] (the registration time chosen), journaled through
//! [`maxim_core::journal::StoreDir`], and then applied by the one function that changes the
//! store and cannot fail. Removing an id that is not registered journals nothing. Opening the
//! directory loads `scn.snap` (falling back to its backup) and applies the journaled ops
//! after it, so the store comes back with every acknowledged write. A checkpoint writes a
//! snapshot and starts a fresh journal.
//!
//! ```
//! use maxim::maxim_core::journal::SyncPolicy;
//! use maxim::maxim_core::{RecordId, Timestamp};
//! use maxim::scn::Scn;
//! let dir = tempfile::tempdir()?;
//! let mut scn = Scn::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! scn.register(RecordId::from_u128(7), Timestamp::from_secs(0), 0.5)?; // journaled
//! drop(scn); // a crash here loses nothing
//! let scn = Scn::builder().open(dir.path())?;
//! assert_eq!(scn.query_hour(0)?, vec![RecordId::from_u128(7)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{StoreDir, SyncPolicy};

use super::Result;
use super::persist::SNAPSHOT_KIND;
#[cfg(doc)]
use super::store::ScnBuilder;
use super::store::{Op, Scn};

impl Scn {
    /// Opens the store on `dir` (see the [module docs](self)); called by
    /// [`ScnBuilder::open`].
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.recover(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report = store.replay(seq, |op: Op| {
            // Journaled ops were valid when written; checking again keeps a bad entry from
            // ever reaching the store.
            self.validate(&op)?;
            self.apply_valid(op);
            Ok::<_, maxim_core::Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "scn opened");
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
        let _s = tracing::debug_span!("scn_checkpoint", n_records = self.len()).entered();
        let Some(mut store) = self.journal.take() else {
            return Err(maxim_core::Error::invalid("checkpoint", "the store is not open on a directory"));
        };
        let result = store.checkpoint(|path, seq| self.save_recording(path, seq));
        self.journal = Some(store);
        result
    }

    /// Makes every journaled write durable now, whatever the sync policy (nothing for a store
    /// in memory).
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(store) => store.sync(),
            None => Ok(()),
        }
    }

    /// The journal sequence number a snapshot of the current contents records.
    pub(crate) fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, StoreDir::last_seq)
    }

    /// Refuses `what` (a load) on a store open on a directory.
    pub(crate) fn refuse_when_journaled(&self, what: &'static str) -> Result<()> {
        if self.journal.is_some() {
            return Err(maxim_core::Error::invalid(
                "load",
                format!("{what}: the store is open on a directory; open another directory instead"),
            ));
        }
        Ok(())
    }
}
