//! Saving and loading the promoter's ledger through the core snapshot codec.
//!
//! A snapshot of kind `promoter` holds the journal sequence number it includes, the ledger (every pattern with its concept and the
//! evidence credited, every concept with its credited episodes, evidence kinds, properties
//! written and known name) and the counters. Saving is atomic and overwrites only a file this
//! promoter created or read ([`maxim_core::ownership`]); loading checks the whole file before
//! it replaces the ledger, so a failed load leaves the promoter as it was. The sources, gate,
//! reader, clock and settings are the instance's own, never the file's.
//!
//! ```
//! use promoter::{PromoterConfig, SemanticPromoter};
//! let mut config = PromoterConfig::default();
//! config.gate_enabled = false;
//! let promoter = SemanticPromoter::builder().config(config.clone()).build()?;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("promoter.snap");
//! promoter.save(&path)?;
//! let mut again = SemanticPromoter::builder().config(config).build()?;
//! again.load(&path)?;
//! assert!(again.ledger().is_empty());
//! # Ok::<(), promoter::Error>(())
//! ```

use std::path::Path;

use maxim_core::codec::{self, Recovery};
use maxim_core::{CorruptReason, LoadOutcome, RecordId};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::ledger::{ConceptEntry, Ledger, PatternEntry};
use crate::promoter::{Counters, SemanticPromoter};

/// The snapshot kind of the promoter's file.
pub const SNAPSHOT_KIND: &str = "promoter";
/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    /// The last journaled operation the snapshot holds (0 without a journal).
    journal_seq: u64,
    patterns: Vec<(&'a String, &'a PatternEntry)>,
    concepts: Vec<(&'a RecordId, &'a ConceptEntry)>,
    counters: Vec<(&'static str, u64)>,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    patterns: Vec<(String, PatternEntry)>,
    concepts: Vec<(RecordId, ConceptEntry)>,
    counters: Vec<(String, u64)>,
}

impl SemanticPromoter {
    /// Saves the ledger to `path` atomically; refuses
    /// ([`maxim_core::Error::OverwriteRefused`]) to overwrite a file this promoter neither
    /// created nor read unless [`allow_overwrite`](Self::allow_overwrite) says so.
    pub(crate) fn save_to_path(&self, path: &Path) -> Result<()> {
        let seq =
            self.journal.as_ref().map_or(self.loaded_journal_seq, maxim_core::journal::StoreDir::last_seq);
        self.save_recording(path, seq)
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        let _s = tracing::debug_span!("promoter_save", n_patterns = self.ledger.pattern_count()).entered();
        let (patterns, concepts) = self.ledger.to_parts();
        let snapshot = SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            patterns,
            concepts,
            counters: Counters::NAMES.into_iter().zip(self.counters.to_array()).collect(),
        };
        self.claims.save(path, SNAPSHOT_KIND, &snapshot)?;
        Ok(())
    }

    /// Lets saves overwrite files this promoter neither created nor read (`true`), or only its
    /// own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this promoter created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    pub(crate) fn load_from_path(&mut self, path: &Path) -> Result<()> {
        let _s = tracing::debug_span!("promoter_load").entered();
        self.refuse_if_journaled()?;
        let checked = codec::load_checked(path, SNAPSHOT_KIND, check)?;
        self.install(checked);
        self.claims.claim(path);
        Ok(())
    }

    /// Loads `path`, or its backup when `path` is missing or rejected (by the codec or by the
    /// ledger's checks, which move a refused file aside as the codec does); when neither
    /// exists the promoter stays as it is and the outcome says [`LoadOutcome::Missing`].
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("promoter_load_with_recovery").entered();
        self.refuse_if_journaled()?;
        let (checked, recovery) = match codec::load_with_recovery_checked(path, SNAPSHOT_KIND, check) {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        let outcome = match recovery {
            Recovery::Backup { path: backup, primary_error } => {
                tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
                LoadOutcome::FromBackup { path: backup, primary_error }
            }
            _ => LoadOutcome::Loaded,
        };
        self.install(checked);
        self.claims.claim(path);
        Ok(outcome)
    }

    /// A promoter open on a directory takes its ledger from there: loading another file
    /// would leave the journal describing a different ledger.
    fn refuse_if_journaled(&self) -> Result<()> {
        if self.journal.is_some() {
            return Err(maxim_core::Error::invalid("load", "the promoter is open on a directory").into());
        }
        Ok(())
    }

    /// Replaces the ledger, counters and journal number with a checked snapshot's.
    fn install(&mut self, checked: Checked) {
        tracing::debug!(
            n_patterns = checked.ledger.pattern_count(),
            n_concepts = checked.ledger.concept_count(),
            "promoter loaded"
        );
        self.ledger = checked.ledger;
        self.counters = checked.counters;
        self.loaded_journal_seq = checked.journal_seq;
    }
}

/// A snapshot that passed the ledger's checks.
struct Checked {
    ledger: Ledger,
    counters: Counters,
    journal_seq: u64,
}

/// Checks `snapshot` (read from `path`) as the codec runs the caller's checks: a file refused
/// here is moved aside like one the codec refuses, and recovery then tries the backup.
fn check(path: &Path, snapshot: SnapshotIn) -> maxim_core::Result<Checked> {
    if snapshot.schema != SCHEMA_VERSION {
        return Err(maxim_core::Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: snapshot.schema,
            supported: SCHEMA_VERSION,
            kept_aside: None,
        });
    }
    let ledger = Ledger::from_parts(snapshot.patterns, snapshot.concepts).map_err(|reason| {
        maxim_core::Error::Corrupt {
            path: path.to_path_buf(),
            reason: CorruptReason::Payload(reason),
            kept_aside: None,
        }
    })?;
    let mut counters = Counters::default();
    for (name, value) in &snapshot.counters {
        counters.set(name, *value);
    }
    Ok(Checked { ledger, counters, journal_seq: snapshot.journal_seq })
}
