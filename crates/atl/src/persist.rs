//! Saving and loading the semantic layer (§4.7) through the core snapshot codec.
//!
//! A snapshot of kind `atl` holds its schema version, the number of the last journaled
//! operation it holds (`journal_seq`, 0 for a layer in memory; see [`crate::journal`]), the
//! records (full and compressed), the concept graph with every relationship edge and its
//! metadata, the relationship types proposed at run time, and the counters. Version 1 files
//! (without `journal_seq`) still load, as `journal_seq` 0. Saving is atomic (`maxim_core::codec::save`). Loading decodes and checks the
//! whole file first (every record valid, ids distinct, every graph node a concept, every edge
//! labelled with a known relationship type on the right edge kind) and only then replaces the
//! layer's contents, so a failed load leaves the layer as it was.
//!
//! Embedding vectors are not saved: loading embeds the full concepts again with the layer's
//! embedder, so a snapshot never mixes vectors of two models and stays small (10^5 vectors of
//! 128 floats would add 51 MB). Built-in relationship types always come from the code: a
//! file can add types, never redefine one. The layer's settings, clock, embedder and callbacks
//! are the instance's own, never the file's.
//!
//! ```
//! use atl::{Atl, spec};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut atl = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
//! let mug = atl.find_or_create(&spec("mug", "object"))?.id;
//! let cup = atl.find_or_create(&spec("cup", "object"))?.id;
//! atl.propose_relationship_type("NESTS_IN", "fits inside", false)?;
//! atl.define_relationship(mug, cup, "NESTS_IN", 0.7, 0.6)?;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("atl.snap");
//! atl.save(&path)?;
//! let mut fresh = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
//! fresh.load(&path)?;
//! assert_eq!(fresh.len(), 2);
//! assert!(!fresh.registry().get("NESTS_IN").unwrap().builtin);
//! assert_eq!(fresh.recall_similar("mugs", 1)[0].0, mug);
//! # Ok::<(), atl::Error>(())
//! ```

use std::path::Path;

use maxim_core::codec::{LoadOutcome, Recovery};
use maxim_core::graph::Graph;
use maxim_core::{CorruptReason, MemoryRecord, codec};
use serde::{Deserialize, Serialize};

use crate::concept::SemanticRecord;
use crate::error::{Error, Result};
use crate::registry::{RelationshipType, edge_kind_of};
use crate::state::State;
use crate::store::{Atl, LAYER_NAME};

/// The version of the snapshot's payload layout this build writes: 2 (version 1, which it
/// still reads, had no `journal_seq`).
pub const SCHEMA_VERSION: u16 = 2;

/// The first schema version, read as `journal_seq` 0.
const SCHEMA_V1: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    records: &'a [SemanticRecord],
    graph: &'a Graph,
    relationship_types: Vec<&'a RelationshipType>,
    counters: Vec<(&'static str, u64)>,
}

/// A decoded snapshot of either version: the schema, then (from version 2) `journal_seq`,
/// then the body both versions share.
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    body: BodyIn,
}

#[derive(Deserialize)]
struct BodyIn {
    records: Vec<SemanticRecord>,
    graph: Graph,
    relationship_types: Vec<RelationshipType>,
    counters: Vec<(String, u64)>,
}

impl<'de> Deserialize<'de> for SnapshotIn {
    /// postcard lays a struct out as its fields in order, so the payload reads as a sequence:
    /// the schema first, which says whether `journal_seq` follows.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = SnapshotIn;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an atl snapshot: schema, journal_seq (from version 2), body")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<SnapshotIn, A::Error> {
                let missing = |n| serde::de::Error::invalid_length(n, &"an atl snapshot");
                let schema: u16 = seq.next_element()?.ok_or_else(|| missing(0))?;
                let journal_seq =
                    if schema == SCHEMA_V1 { 0 } else { seq.next_element()?.ok_or_else(|| missing(1))? };
                let body = seq.next_element()?.ok_or_else(|| missing(2))?;
                Ok(SnapshotIn { schema, journal_seq, body })
            }
        }
        d.deserialize_tuple(3, Fields)
    }
}

/// The snapshot kind of the semantic layer.
pub const SNAPSHOT_KIND: &str = LAYER_NAME;

impl Atl {
    /// Saves the layer to `path` atomically (see the [module docs](self)); the previous file
    /// is kept as `<path>.backup`.
    ///
    /// A file that already exists is overwritten only when this layer created it (an
    /// earlier save) or read it (a load), or after
    /// [`allow_overwrite`](Self::allow_overwrite); otherwise
    /// [`maxim_core::Error::OverwriteRefused`] and nothing is written (see
    /// [`maxim_core::ownership`]).
    ///
    /// A layer open on a directory saves copies elsewhere (recording the last journaled
    /// operation); its own snapshot in the directory is written by
    /// [`checkpoint`](Self::checkpoint) only (`InvalidArgument` here).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("atl_save", n_concepts = self.state.len()).entered();
        if let Some(j) = &self.journal
            && path == j.dir.snapshot_path()
        {
            return Err(maxim_core::Error::invalid(
                "save",
                "this is the snapshot of the layer's own directory; call checkpoint() instead",
            )
            .into());
        }
        self.save_recording(path, self.journal_seq())
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        let snapshot = SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            records: &self.state.records,
            graph: &self.state.graph,
            relationship_types: self.state.registry.proposed().collect(),
            counters: self.state.counters.to_pairs(self.queries.load(std::sync::atomic::Ordering::Relaxed)),
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
    /// left exactly as it was (see the [module docs](self)). A file that fails the codec's
    /// checks or the layer's own is moved aside (see [`maxim_core::codec::load_checked`]).
    /// A layer open on a directory refuses (`InvalidArgument`): it reloads by reopening, since
    /// its journal continues its own snapshot.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("atl_load").entered();
        self.refuse_when_journaled("load")?;
        let loaded = codec::load_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        })?;
        self.install(loaded);
        self.claims.claim(path);
        Ok(())
    }

    /// Loads `path`, or its backup when `path` is missing, rejected by the codec or refused
    /// by the layer's own checks (the refused file is moved aside); when neither exists the
    /// layer stays as it is and the outcome says [`LoadOutcome::Missing`]. A layer open on a
    /// directory refuses, as [`load`](Self::load) does.
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("atl_load_with_recovery").entered();
        self.refuse_when_journaled("load_with_recovery")?;
        self.recover(path)
    }

    /// [`load_with_recovery`](Self::load_with_recovery) without the journal check (opening a
    /// directory uses it before the journal is attached).
    pub(crate) fn recover(&mut self, path: &Path) -> Result<LoadOutcome> {
        let checked = codec::load_with_recovery_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        });
        let (loaded, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        self.install(loaded);
        self.claims.claim(path);
        Ok(match recovery {
            Recovery::Backup { path: backup, primary_error } => {
                tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
                LoadOutcome::FromBackup { path: backup, primary_error }
            }
            _ => LoadOutcome::Loaded,
        })
    }

    /// Refuses `what` (a load) on a layer open on a directory.
    fn refuse_when_journaled(&self, what: &'static str) -> Result<()> {
        if self.journal.is_some() {
            return Err(maxim_core::Error::invalid(
                "load",
                format!("{what}: the layer is open on a directory; reopen it instead"),
            )
            .into());
        }
        Ok(())
    }

    fn install(&mut self, (state, queries, journal_seq): (State, u64, u64)) {
        self.loaded_journal_seq = journal_seq;
        for record in &state.records {
            self.ids.observe(record.id());
        }
        tracing::debug!(n_concepts = state.len(), n_edges = state.graph.edge_count(), "atl loaded");
        self.state = state;
        self.queries.store(queries, std::sync::atomic::Ordering::Relaxed);
    }

    /// Checks a decoded snapshot and builds the layer's state from it.
    fn rebuild(&self, path: &Path, snap: SnapshotIn) -> Result<(State, u64, u64)> {
        let corrupt = |reason: String| {
            Error::Core(maxim_core::Error::Corrupt {
                path: path.to_path_buf(),
                reason: CorruptReason::Payload(reason),
                kept_aside: None,
            })
        };
        if snap.schema != SCHEMA_VERSION && snap.schema != SCHEMA_V1 {
            return Err(Error::Core(maxim_core::Error::UnsupportedVersion {
                path: path.to_path_buf(),
                found: snap.schema,
                supported: SCHEMA_VERSION,
                kept_aside: None,
            }));
        }
        let journal_seq = snap.journal_seq;
        let snap = snap.body;
        let mut state = State::new(&self.config, self.embedder.dim())?;
        state.registry.merge_saved(&snap.relationship_types);
        let mut vector = Vec::new();
        for record in snap.records {
            let id = record.id();
            record.validate().map_err(|e| corrupt(format!("concept {id}: {e}")))?;
            if state.slots.contains_key(&id) {
                return Err(corrupt(format!("concept {id} appears twice")));
            }
            state.push(record, &*self.embedder, &mut vector)?;
        }
        let graph = snap.graph;
        for node in graph.nodes() {
            if state.slot(node).is_none() {
                return Err(corrupt(format!("graph node {node} is not a concept")));
            }
        }
        for e in graph.edges() {
            let Some(name) = e.relation() else {
                return Err(corrupt(format!("edge {} -> {} has no relationship type", e.source, e.target)));
            };
            let Some(t) = state.registry.get(name).filter(|_| edge_kind_of(name) == e.kind) else {
                return Err(corrupt(format!(
                    "edge {} -> {} has an unknown type {name:?}",
                    e.source, e.target
                )));
            };
            if e.source == e.target && !t.reflexive {
                return Err(corrupt(format!("concept {} is {name} of itself", e.source)));
            }
            if e.weight > 1.0 {
                return Err(corrupt(format!(
                    "edge {} -> {} has weight {} above 1",
                    e.source, e.target, e.weight
                )));
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
        let queries = snap.counters.iter().find(|(n, _)| n == "queries").map_or(0, |(_, v)| *v);
        Ok((state, queries, journal_seq))
    }
}
