//! Saving and loading the procedural layer through the core snapshot codec.
//!
//! A snapshot of kind [`SNAPSHOT_KIND`] holds, after its [`SCHEMA_VERSION`], every skill
//! (with its counts, window, status, confirmation, retirement and origins), the skill graph
//! with every edge, and the counters. Saving is atomic and keeps the previous file as a
//! backup ([`maxim_core::codec::save`]), and overwrites only a file this layer created or
//! read ([`maxim_core::ownership`]). Loading decodes and checks the whole file first (every
//! skill valid, ids distinct, every graph node a skill, only ASSOCIATES and CAUSES edges
//! with weights in `[0, 1]`), builds the new state aside, and only then replaces the layer's
//! contents, so a failed load leaves the layer as it was. The settings, clock and callbacks
//! are the instance's own, never the file's.
//!
//! ```
//! use cerebellum::{Cerebellum, Outcome, RunTrace, Step};
//! use maxim_core::{ManualClock, Source, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut cb = Cerebellum::builder().clock(clock.shared()).build()?;
//! let run = RunTrace::new("r1", "flush the cache", Source::ToolResult, 0.8).call(Step::write("flush", "cache"));
//! let id = cb.distil(&run, &Outcome::verified(["hit rate recovered"]))?.id().unwrap();
//! cb.record_use(id, true)?;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("cerebellum.snap");
//! cb.save(&path)?;
//! let mut fresh = Cerebellum::builder().clock(clock.shared()).build()?;
//! fresh.load(&path)?;
//! assert_eq!(fresh.skill(id), cb.skill(id));
//! assert!(fresh.load(dir.path().join("missing.snap")).is_err());
//! # Ok::<(), cerebellum::Error>(())
//! ```

use std::path::Path;
use std::sync::atomic::Ordering;

use maxim_core::codec::{self, LoadOutcome, Recovery};
use maxim_core::graph::{EdgeKind, Graph};
use maxim_core::{CorruptReason, MemoryRecord};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::skill::Skill;
use crate::state::{Counters, State};
use crate::store::Cerebellum;

/// The snapshot kind of the procedural layer.
pub const SNAPSHOT_KIND: &str = "cerebellum";

/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    skills: Vec<&'a Skill>,
    graph: &'a Graph,
    counters: &'a Counters,
    queries: u64,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    skills: Vec<Skill>,
    graph: Graph,
    counters: Counters,
    queries: u64,
}

fn corrupt(path: &Path, reason: String) -> Error {
    maxim_core::Error::Corrupt {
        path: path.to_path_buf(),
        reason: CorruptReason::Payload(reason),
        kept_aside: None,
    }
    .into()
}

impl Cerebellum {
    /// Saves the whole layer to `path` atomically (the previous file is kept as
    /// `<path>.backup`).
    ///
    /// A file that already exists is overwritten only when this layer created it (an
    /// earlier save) or read it (a load), or after
    /// [`allow_overwrite`](Self::allow_overwrite); otherwise
    /// [`maxim_core::Error::OverwriteRefused`] and nothing is written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let _s = tracing::debug_span!("cerebellum_save", n_skills = self.state.len()).entered();
        let seq =
            self.journal.as_ref().map_or(self.loaded_journal_seq, maxim_core::journal::StoreDir::last_seq);
        self.save_recording(path.as_ref(), seq)
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        let mut skills: Vec<&Skill> = self.state.iter().collect();
        skills.sort_unstable_by_key(|s| s.meta.id);
        let snapshot = SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            skills,
            graph: &self.state.graph,
            counters: &self.state.counters,
            queries: self.queries(),
        };
        self.claims.save(path, SNAPSHOT_KIND, &snapshot)?;
        Ok(())
    }

    /// Lets [`save`](Self::save) overwrite files this layer neither created nor read
    /// (`true`), or only its own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this layer created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the layer's contents with the snapshot at `path`. A missing, unreadable,
    /// corrupt or inconsistent file is an error and changes nothing (a file the codec or the
    /// layer's checks reject is moved aside, see [`maxim_core::codec::load_checked`]). On a store open on a
    /// directory the load ends with a [`checkpoint`](Self::checkpoint), so the directory
    /// holds the loaded contents; an error of that checkpoint is returned with the contents
    /// already loaded.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("cerebellum_load").entered();
        let (state, queries, journal_seq) = codec::load_checked(path, SNAPSHOT_KIND, checked)?;
        self.install(state, queries, journal_seq);
        self.claims.claim(path);
        self.checkpoint_if_journaled()
    }

    /// Loads `path`, or its backup when `path` is missing or rejected (by the codec or by the
    /// checks of [`load`](Self::load)); when neither exists
    /// the layer stays as it is and the outcome says [`LoadOutcome::Missing`]. On a store
    /// open on a directory a successful load ends with a checkpoint, as [`load`](Self::load)
    /// does.
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("cerebellum_load_with_recovery").entered();
        let ((state, queries, journal_seq), recovery) =
            match codec::load_with_recovery_checked(path, SNAPSHOT_KIND, checked) {
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
        self.install(state, queries, journal_seq);
        // The main file was read, or was rejected and moved aside for the backup.
        self.claims.claim(path);
        self.checkpoint_if_journaled()?;
        Ok(outcome)
    }

    /// After a load into a store open on a directory: the journal continues the snapshot it
    /// was opened with, so the loaded contents are made the directory's snapshot.
    fn checkpoint_if_journaled(&mut self) -> Result<()> {
        if self.is_journaled() { self.checkpoint() } else { Ok(()) }
    }

    fn install(&mut self, state: State, queries: u64, journal_seq: u64) {
        self.loaded_journal_seq = journal_seq;
        for skill in state.iter() {
            self.ids.observe(skill.id());
        }
        tracing::debug!(n_skills = state.len(), n_edges = state.graph.edge_count(), "cerebellum loaded");
        self.state = state;
        self.queries.store(queries, Ordering::Relaxed);
    }
}

/// The layer's checks as the codec runs them (state, query count, journal number): a file
/// they refuse is moved aside like one the codec refuses, and recovery then tries the backup.
fn checked(path: &Path, snap: SnapshotIn) -> maxim_core::Result<(State, u64, u64)> {
    let journal_seq = snap.journal_seq;
    let (state, queries) = rebuild(path, snap)?;
    Ok((state, queries, journal_seq))
}

/// The state a snapshot describes, checked, built aside.
fn rebuild(path: &Path, snap: SnapshotIn) -> Result<(State, u64)> {
    if snap.schema != SCHEMA_VERSION {
        return Err(maxim_core::Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: snap.schema,
            supported: SCHEMA_VERSION,
            kept_aside: None,
        }
        .into());
    }
    let mut state = State::default();
    for skill in snap.skills {
        let id = skill.id();
        skill.validate().map_err(|e| corrupt(path, format!("skill {id}: {e}")))?;
        if state.slot(id).is_some() {
            return Err(corrupt(path, format!("skill {id} appears twice")));
        }
        state.place(skill);
    }
    let mut graph = snap.graph;
    for node in graph.nodes() {
        if state.slot(node).is_none() {
            return Err(corrupt(path, format!("graph node {node} is not a skill")));
        }
    }
    for e in graph.edges() {
        if !matches!(e.kind, EdgeKind::Associates | EdgeKind::Causes) {
            return Err(corrupt(path, format!("edge {} -> {} is {}", e.source, e.target, e.kind)));
        }
        if !(0.0..=1.0).contains(&e.weight) {
            return Err(corrupt(path, format!("edge {} -> {} has weight {}", e.source, e.target, e.weight)));
        }
    }
    let ids: Vec<_> = state.iter().map(MemoryRecord::id).collect();
    for id in ids {
        graph.add_node(id)?;
    }
    state.graph = graph;
    state.counters = snap.counters;
    Ok((state, snap.queries))
}
