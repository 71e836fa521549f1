//! Saving and loading the mathematical layer through the core snapshot codec.
//!
//! A snapshot of kind [`SNAPSHOT_KIND`] holds the payload's [`SCHEMA_VERSION`], the last
//! journaled operation it holds (for a layer opened on a directory, see
//! [`journal`](crate::journal)), every record
//! (full and compressed, built-ins included), the association graph with every edge and its
//! relation (the original did not persist the graph: reloading gave bare nodes), and the
//! counters. Saving is atomic. Loading decodes and checks the whole file first (every record
//! valid with no NaN, ids distinct, every graph node a record, every edge an association with
//! a known relation and a weight in `[0, 1]`) and only then replaces the layer's contents, so
//! a failed load leaves the layer as it was.
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory, MathRelation};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ag = AngularGyrus::builder().clock(clock.shared()).build()?;
//! let r = ag.new_record("tau", MathCategory::Constant, "geometry")?;
//! let tau = ag.insert(r.into())?;
//! ag.link(tau, ag.find_by_name("pi")[0], MathRelation::DerivedFrom, 0.9)?;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("ag.snap");
//! ag.save(&path)?;
//! let mut fresh = AngularGyrus::builder().clock(clock.shared()).build()?;
//! fresh.load(&path)?;
//! assert_eq!(fresh.len(), 10);
//! assert_eq!(fresh.links_of(tau).len(), 1);
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::path::Path;

use maxim_core::graph::{EdgeKind, Graph};
use maxim_core::{CorruptReason, LoadOutcome, MemoryRecord, Recovery, codec};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::MathEntry;
use crate::store::{AngularGyrus, MathRelation, State};

/// The kind written in the snapshot header.
pub const SNAPSHOT_KIND: &str = "angular_gyrus";

/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    records: &'a [MathEntry],
    graph: &'a Graph,
    counters: Vec<(&'static str, u64)>,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    records: Vec<MathEntry>,
    graph: Graph,
    counters: Vec<(String, u64)>,
}

impl AngularGyrus {
    /// Saves the layer to `path` atomically. A file that already exists is overwritten only
    /// when this layer created or read it, or after [`allow_overwrite`](Self::allow_overwrite)
    /// (`OverwriteRefused` otherwise, and nothing is written).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.save_recording(path.as_ref(), self.journal_seq())
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        let _s = tracing::debug_span!("ag_save", n_records = self.len_records()).entered();
        let snapshot = SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            records: &self.state.records,
            graph: &self.state.graph,
            counters: self.state.counters.to_pairs(),
        };
        self.claims.save(path, SNAPSHOT_KIND, &snapshot)?;
        Ok(())
    }

    /// Lets saves overwrite files this layer neither created nor read (`true`), or only its
    /// own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this layer created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the layer's contents with the snapshot at `path`; on any error the layer is
    /// left exactly as it was (see the [module docs](self)), and a file refused for its
    /// contents, by the codec or by the layer's checks, is moved aside. A layer open on a
    /// directory refuses (`InvalidArgument`): it reloads by reopening.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("ag_load").entered();
        self.refuse_if_journaled()?;
        let (state, seq) = codec::load_checked(path, SNAPSHOT_KIND, checked)?;
        self.install(state, seq);
        self.claims.claim(path);
        Ok(())
    }

    /// Loads `path`, or its backup when `path` is missing or rejected (by the codec or by
    /// the checks of [`load`](Self::load)); when neither exists the layer stays as it is and
    /// the outcome says [`LoadOutcome::Missing`].
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("ag_load_with_recovery").entered();
        self.refuse_if_journaled()?;
        let ((state, seq), recovery) = match codec::load_with_recovery_checked(path, SNAPSHOT_KIND, checked) {
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
        self.install(state, seq);
        self.claims.claim(path);
        Ok(outcome)
    }

    /// A layer open on a directory reloads only by reopening: replacing its contents under
    /// its journal would make the journal describe another state.
    fn refuse_if_journaled(&self) -> Result<()> {
        if self.is_journaled() {
            return Err(maxim_core::Error::invalid(
                "load",
                "the layer is open on a directory; reopen it instead",
            )
            .into());
        }
        Ok(())
    }

    fn install(&mut self, state: State, journal_seq: u64) {
        self.loaded_journal_seq = journal_seq;
        for record in &state.records {
            self.ids.observe(record.id());
        }
        tracing::debug!(n_records = state.records.len(), n_edges = state.graph.edge_count(), "ag loaded");
        self.state = state;
    }
}

/// The layer's checks as the codec runs them: a file they refuse is moved aside like one the
/// codec refuses, and recovery then tries the backup.
fn checked(path: &Path, snap: SnapshotIn) -> maxim_core::Result<(State, u64)> {
    let seq = snap.journal_seq;
    Ok((rebuild(path, snap)?, seq))
}

/// Checks a decoded snapshot and builds the state it describes.
fn rebuild(path: &Path, snap: SnapshotIn) -> Result<State> {
    let corrupt = |reason: String| {
        Error::Core(maxim_core::Error::Corrupt {
            path: path.to_path_buf(),
            reason: CorruptReason::Payload(reason),
            kept_aside: None,
        })
    };
    if snap.schema != SCHEMA_VERSION {
        return Err(Error::Core(maxim_core::Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: snap.schema,
            supported: SCHEMA_VERSION,
            kept_aside: None,
        }));
    }
    let mut state = State::default();
    for record in snap.records {
        let id = record.id();
        record.validate().map_err(|e| corrupt(format!("record {id}: {e}")))?;
        if state.slot(id).is_some() {
            return Err(corrupt(format!("record {id} appears twice")));
        }
        state.push(record);
    }
    let graph = snap.graph;
    for node in graph.nodes() {
        if state.slot(node).is_none() {
            return Err(corrupt(format!("graph node {node} is not a record")));
        }
    }
    for e in graph.edges() {
        let known =
            e.kind == EdgeKind::Associates && e.relation().and_then(MathRelation::from_label).is_some();
        if !known || !(0.0..=1.0).contains(&e.weight) {
            return Err(corrupt(format!(
                "edge {} -> {} is not an association of this layer",
                e.source, e.target
            )));
        }
        if graph.find_edge(e.target, e.source, Some(e.kind), e.relation()).is_none() {
            return Err(corrupt(format!("edge {} -> {} has no reverse", e.source, e.target)));
        }
    }
    let mut graph = graph;
    for record in &state.records {
        graph.add_node(record.id())?;
    }
    state.graph = graph;
    for (name, value) in &snap.counters {
        state.counters.set(name, *value);
    }
    Ok(state)
}
