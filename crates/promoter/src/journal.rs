//! The promoter on a directory: its ledger's journal, `open(dir)` and `checkpoint()`
//! (`docs/durability.md`, "The journal").
//!
//! Every change of the [`Ledger`](crate::Ledger) is an [`Op`]. On a promoter opened on a
//! directory each one is journaled through [`maxim_core::journal::StoreDir`] before
//! [`Ledger::apply`](crate::Ledger::apply) applies it, so a promoter that stops at any point
//! (a crash between two candidates of a scan, say) opens again knowing every credit it made
//! and does not make it twice. Opening loads `promoter.snap` (falling back to its backup) and
//! replays the operations journaled after it. The counters of [`stats`](SemanticPromoter::stats)
//! are not journaled: they reach the disk with the next checkpoint or save.
//!
//! ```
//! use promoter::{PromoterConfig, SemanticPromoter, ledger::Op, pattern::PatternKind};
//! use maxim_core::journal::SyncPolicy;
//! use maxim_core::RecordId;
//! # use maxim_core::{ConceptSpec, ConceptStore, CrossEdgeKind, CrossLinks, LayerRecord, Source, Value};
//! # struct Store(u128);
//! # impl ConceptStore for Store {
//! #     type Error = std::io::Error;
//! #     fn find_or_create_concept(&mut self, _: &ConceptSpec) -> Result<(RecordId, bool), Self::Error> { self.0 += 1; Ok((RecordId::from_u128(self.0), true)) }
//! #     fn reinforce_concept(&mut self, _: RecordId, _: Option<RecordId>) -> Result<(), Self::Error> { Ok(()) }
//! #     fn similar_concepts(&self, _: &str, _: usize) -> Vec<(RecordId, f64)> { Vec::new() }
//! #     fn relate_concepts(&mut self, _: RecordId, _: RecordId, _: &str, _: f64, _: f64) -> Result<(), Self::Error> { Ok(()) }
//! #     fn set_concept_property(&mut self, _: RecordId, _: &str, _: Value, _: &Source, _: f64) -> Result<(), Self::Error> { Ok(()) }
//! # }
//! # struct Links;
//! # impl CrossLinks for Links {
//! #     type Error = std::io::Error;
//! #     fn add_cross_edge(&mut self, _: LayerRecord, _: LayerRecord, _: CrossEdgeKind, _: f64) -> Result<(), Self::Error> { Ok(()) }
//! #     fn remove_cross_edges(&mut self, _: LayerRecord) -> usize { 0 }
//! #     fn cross_edges_from(&self, _: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> { Vec::new() }
//! # }
//! # fn candidate() -> maxim_core::PromotionCandidate {
//! #     maxim_core::PromotionCandidate { pattern_name: "stat:tool:x:success".into(),
//! #         category: maxim_core::contracts::OPERATIONAL_PATTERN.into(), confidence: 0.8, observations: 20,
//! #         source_memory_ids: vec![], observed_at: vec![], source: Source::AgentInference, metadata: Default::default() }
//! # }
//! let dir = tempfile::tempdir()?;
//! let mut config = PromoterConfig::default();
//! config.gate_enabled = false;
//! let mut builder = SemanticPromoter::builder();
//! builder.config(config).sync_policy(SyncPolicy::Always);
//! let mut promoter = builder.open(dir.path())?;
//! let report = promoter.promote_candidates("statistician", &[candidate()], &mut Store(0), &mut Links);
//! let concept = report.promoted[0].concept;
//! drop(promoter); // a crash here loses nothing
//! let promoter = builder.open(dir.path())?;
//! assert_eq!(promoter.concept_of("operational_pattern", "stat:tool:x:success"), Some(concept));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::journal::{OpenReport, StoreDir, SyncPolicy};

use crate::error::{Error, Result};
use crate::ledger::Op;
use crate::persist::SNAPSHOT_KIND;
use crate::promoter::SemanticPromoter;

impl SemanticPromoter {
    /// Opens the promoter on `dir` (see the [module docs](self)); called by
    /// [`PromoterBuilder::open`](crate::PromoterBuilder::open).
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.load_with_recovery(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report: OpenReport = store.replay(seq, |op| {
            self.ledger.apply(op);
            Ok::<_, Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "promoter opened");
        self.journal = Some(store);
        Ok(self)
    }

    /// Whether the promoter is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the ledger into its directory and starts a fresh journal. Errors:
    /// the promoter is not open on a directory ([`maxim_core::Error::InvalidArgument`]), or the
    /// save fails (the journal is kept and still holds every change).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s =
            tracing::debug_span!("promoter_checkpoint", n_patterns = self.ledger.pattern_count()).entered();
        let Some(mut store) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the promoter is not open on a directory").into()
            );
        };
        let result = store.checkpoint(|path, seq| self.save_recording(path, seq));
        self.journal = Some(store);
        result
    }

    /// Makes every journaled change durable now, whatever the sync policy (nothing for a
    /// promoter in memory). The counters are not journaled and wait for a checkpoint.
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.journal {
            Some(store) => Ok(store.sync()?),
            None => Ok(()),
        }
    }

    /// Journals `op` when the promoter is open on a directory, then applies it to the ledger;
    /// when the journal refuses it, nothing changes.
    pub(crate) fn record(&mut self, op: Op) -> Result<()> {
        if let Some(store) = &mut self.journal {
            store.append(&op)?;
        }
        self.ledger.apply(op);
        Ok(())
    }
}
