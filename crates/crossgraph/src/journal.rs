//! The cross-layer graph on a directory: its journal of [`Op`]s, `open(dir)` and
//! [`checkpoint`](CrossLayerGraph::checkpoint) (`docs/durability.md`, "The journal").
//!
//! Every write to a graph opened on a directory ([`CrossLayerGraphBuilder::open`]) is
//! validated, resolved to an [`Op`], journaled through [`maxim_core::journal::StoreDir`], and
//! then applied by the one function that changes the graph and cannot fail. An op that changes
//! nothing (removing an edge or a record the graph does not hold, as most deletion callbacks
//! do) is not journaled. Opening the directory loads `crossgraph.snap` (falling back to its
//! backup) and applies the journaled ops after it, so the graph comes back with every
//! acknowledged write. A checkpoint writes a snapshot and starts a fresh journal. Reads
//! (activation counts included) are not journaled: counters reach the disk with the next
//! checkpoint or save.
//!
//! ```
//! use crossgraph::CrossLayerGraph;
//! use maxim_core::journal::SyncPolicy;
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//! let ep = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(1));
//! let concept = LayerRecord::new(LayerKind::Atl, RecordId::from_u128(2));
//! let dir = tempfile::tempdir()?;
//! let mut g = CrossLayerGraph::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! g.add_edge(ep, concept, CrossEdgeKind::InstanceOf, 1.0)?; // journaled before it returns
//! drop(g); // a crash here loses nothing
//! let g = CrossLayerGraph::builder().open(dir.path())?;
//! assert_eq!(g.edge_count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{OpenReport, StoreDir, SyncPolicy};

use crate::SNAPSHOT_KIND;
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::store::CrossLayerGraphBuilder;
use crate::store::{CrossLayerGraph, Op};

impl CrossLayerGraph {
    /// Opens the graph on `dir` (see the [module docs](self)); called by
    /// [`CrossLayerGraphBuilder::open`].
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.recover(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report: OpenReport = store.replay(seq, |op| {
            // Journaled ops were valid when written; checking again keeps a bad entry from
            // ever reaching the graph.
            let op = self.validate(op)?;
            self.apply_valid(op);
            Ok::<_, Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "crossgraph opened");
        self.journal = Some(store);
        Ok(self)
    }

    /// Whether the graph is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the graph into its directory and starts a fresh journal. Errors:
    /// the graph is not open on a directory ([`maxim_core::Error::InvalidArgument`]), or the
    /// save fails (the journal is kept and still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("crossgraph_checkpoint", n_edges = self.edge_count()).entered();
        let Some(mut store) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the graph is not open on a directory").into()
            );
        };
        let result = store.checkpoint(|path, seq| self.save_recording(path, seq));
        self.journal = Some(store);
        result
    }

    /// Makes every journaled write durable now, whatever the sync policy (nothing for a graph
    /// in memory).
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(store) => Ok(store.sync()?),
            None => Ok(()),
        }
    }

    /// Journals `op` when the graph is open on a directory (nothing otherwise).
    pub(crate) fn journal_op(&mut self, op: &Op) -> Result<()> {
        if let Some(store) = &mut self.journal {
            store.append(op)?;
        }
        Ok(())
    }

    /// The journal sequence number a snapshot of the current contents records.
    pub(crate) fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, StoreDir::last_seq)
    }

    /// Refuses `what` (a load) on a graph open on a directory.
    pub(crate) fn refuse_when_journaled(&self, what: &'static str) -> Result<()> {
        if self.journal.is_some() {
            return Err(maxim_core::Error::invalid(
                "load",
                format!("{what}: the graph is open on a directory; open another directory instead"),
            )
            .into());
        }
        Ok(())
    }
}
