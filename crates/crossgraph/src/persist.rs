//! Saving and loading the cross-layer graph through the core snapshot codec.
//!
//! A snapshot of kind [`SNAPSHOT_KIND`] holds, after its
//! [`SCHEMA_VERSION`]: the layer names and edge-type names it uses (by name, so that a build
//! which does not know a name refuses the file instead of misreading it: the original
//! skipped unknown edge types silently), the records as (layer, id), the edges as (source,
//! target, type, weight) over those tables, the metadata of the edges that have some, and
//! the counters.
//!
//! Loading decodes and checks the whole file first (known names, indices in range, weights
//! in `[0, 1]`, no self-loop but TEMPORALLY_CORRELATES, no edge twice, valid metadata) and
//! only then replaces the graph's contents, so a failed load leaves the graph as it was.
//! Saving refuses to overwrite a file this graph neither created nor read
//! ([`maxim_core::ownership`]).
//!
//! ```
//! use crossgraph::CrossLayerGraph;
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//! let ep = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(1));
//! let concept = LayerRecord::new(LayerKind::Atl, RecordId::from_u128(2));
//! let mut g = CrossLayerGraph::builder().build()?;
//! g.add_edge(ep, concept, CrossEdgeKind::InstanceOf, 0.9)?;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("crossgraph.snap");
//! g.save(&path)?;
//! let mut fresh = CrossLayerGraph::builder().build()?;
//! fresh.load(&path)?;
//! assert_eq!(fresh.edge(ep, concept, CrossEdgeKind::InstanceOf).map(|e| e.weight), Some(0.9));
//! # Ok::<(), crossgraph::Error>(())
//! ```

use std::path::Path;

use maxim_core::{CorruptReason, LoadOutcome, RecordId, codec};
use serde::{Deserialize, Serialize};

use crate::SNAPSHOT_KIND;
use crate::error::{Error, Result};
use crate::kind::{ALL_KINDS, kind_name, parse_kind, parse_layer};
use crate::store::{Counters, CrossLayerGraph, Metadata, Op, Side, State, check_metadata};

/// The version of the snapshot's payload layout this build writes and reads.
pub const SCHEMA_VERSION: u16 = 1;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    layers: Vec<&'static str>,
    kinds: Vec<&'static str>,
    records: Vec<(u8, RecordId)>,
    edges: Vec<(u32, u32, u8, f64)>,
    metadata: Vec<(u32, &'a Metadata)>,
    counters: Vec<(&'static str, u64)>,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    layers: Vec<String>,
    kinds: Vec<String>,
    records: Vec<(u8, RecordId)>,
    edges: Vec<(u32, u32, u8, f64)>,
    metadata: Vec<(u32, Metadata)>,
    counters: Vec<(String, u64)>,
}

/// A snapshot's contents, checked and built, ready to replace the graph's.
struct Rebuilt {
    state: State,
    counters: Counters,
    journal_seq: u64,
}

impl CrossLayerGraph {
    /// Saves the graph to `path` atomically (see the [module docs](self)).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("crossgraph_save", n_edges = self.edge_count()).entered();
        self.save_recording(path, self.journal_seq())
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        self.claims.save(path, SNAPSHOT_KIND, &self.snapshot(journal_seq))?;
        Ok(())
    }

    fn snapshot(&self, journal_seq: u64) -> SnapshotOut<'_> {
        let state = &self.state;
        // Records are numbered in the order of the live nodes.
        let mut number = vec![u32::MAX; state.nodes.len()];
        let mut records = Vec::with_capacity(self.record_count());
        for n in state.live_nodes() {
            number[n as usize] = records.len() as u32;
            let r = state.record(n);
            records.push((crate::kind::layer_slot(r.layer) as u8, r.id));
        }
        let mut edges = Vec::with_capacity(self.edge_count());
        let mut metadata = Vec::with_capacity(state.meta.len());
        for n in state.live_nodes() {
            for h in state.halves(n, Side::Out) {
                if h.has_meta()
                    && let Some(m) = state.meta.get(&(n, h.other, h.kind()))
                {
                    metadata.push((edges.len() as u32, m));
                }
                edges.push((number[n as usize], number[h.other as usize], h.kind_slot() as u8, h.weight));
            }
        }
        SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            layers: maxim_core::LayerKind::ALL.iter().map(|l| l.as_str()).collect(),
            kinds: ALL_KINDS.iter().map(|&k| kind_name(k)).collect(),
            records,
            edges,
            metadata,
            counters: Counters::NAMES.into_iter().zip(self.counters.values()).collect(),
        }
    }

    /// Lets saves overwrite files this graph neither created nor read (`true`), or only its
    /// own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this graph created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the graph's contents with the snapshot at `path`; on any error the graph is
    /// left exactly as it was, and a file refused for its contents is moved aside (see the
    /// [module docs](self)). A graph open on a directory refuses: its journal continues its
    /// own snapshot.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("crossgraph_load").entered();
        self.refuse_when_journaled("load")?;
        let rebuilt = codec::load_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        })?;
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(())
    }

    /// Loads like [`load`](Self::load), falling back to the backup the previous save kept
    /// when the file is rejected (by the codec or by the checks of [`load`](Self::load)) or
    /// missing while a backup exists; a graph with neither file stays as it is
    /// ([`LoadOutcome::Missing`]).
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("crossgraph_load_with_recovery").entered();
        self.refuse_when_journaled("load_with_recovery")?;
        self.recover(path)
    }

    /// [`load_with_recovery`](Self::load_with_recovery) without the journal check (opening a
    /// directory uses it before the journal is attached).
    pub(crate) fn recover(&mut self, path: &Path) -> Result<LoadOutcome> {
        let checked = codec::load_with_recovery_checked(path, SNAPSHOT_KIND, |p, snap: SnapshotIn| {
            self.rebuild(p, snap).map_err(maxim_core::Error::from)
        });
        let (rebuilt, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        let outcome = if let codec::Recovery::Backup { path: backup, primary_error } = recovery {
            tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
            LoadOutcome::FromBackup { path: backup, primary_error }
        } else {
            LoadOutcome::Loaded
        };
        self.install(rebuilt);
        // The main file was read, or was rejected and moved aside for the backup.
        self.claims.claim(path);
        Ok(outcome)
    }

    fn install(&mut self, rebuilt: Rebuilt) {
        tracing::debug!(
            n_edges = rebuilt.state.edge_count,
            n_records = rebuilt.state.index.len(),
            "crossgraph loaded"
        );
        self.state = rebuilt.state;
        self.counters = rebuilt.counters;
        self.loaded_journal_seq = rebuilt.journal_seq;
    }

    /// Checks `snap` whole and builds the contents it describes.
    fn rebuild(&self, path: &Path, snap: SnapshotIn) -> Result<Rebuilt> {
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
        let layers = snap
            .layers
            .iter()
            .map(|name| parse_layer(name).map_err(|e| corrupt(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        let kinds = snap
            .kinds
            .iter()
            .map(|name| parse_kind(name).map_err(|e| corrupt(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        let records =
            snap.records
                .iter()
                .map(|&(layer, id)| {
                    layers.get(layer as usize).map(|&l| maxim_core::LayerRecord::new(l, id)).ok_or_else(
                        || corrupt(format!("record {id} names layer {layer} of {}", layers.len())),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
        let mut metadata: Vec<Option<Metadata>> = vec![None; snap.edges.len()];
        for (edge, m) in snap.metadata {
            let slot = metadata
                .get_mut(edge as usize)
                .ok_or_else(|| corrupt(format!("metadata of edge {edge}, which is not in the file")))?;
            if slot.is_some() {
                return Err(corrupt(format!("edge {edge} has metadata twice")));
            }
            check_metadata(&m).map_err(|e| corrupt(format!("edge {edge}: {e}")))?;
            *slot = Some(m).filter(|m| !m.is_empty());
        }
        let mut fresh = Self::builder().config(self.config().clone()).build()?;
        fresh.reserve(records.len(), snap.edges.len());
        let mut seen = rustc_hash::FxHashSet::default();
        for (i, (&(s, t, k, weight), meta)) in snap.edges.iter().zip(metadata).enumerate() {
            let from = *records.get(s as usize).ok_or_else(|| corrupt(format!("edge {i} has source {s}")))?;
            let to = *records.get(t as usize).ok_or_else(|| corrupt(format!("edge {i} has target {t}")))?;
            let kind = *kinds.get(k as usize).ok_or_else(|| corrupt(format!("edge {i} has type {k}")))?;
            if fresh.edge(from, to, kind).is_some() {
                return Err(corrupt(format!("edge {from} -> {to} {} appears twice", kind_name(kind))));
            }
            let op = Op::Link { from, to, kind, weight, metadata: meta };
            let op = fresh.validate(op).map_err(|e| corrupt(format!("edge {from} -> {to}: {e}")))?;
            fresh.apply_valid(op);
            seen.insert(from);
            seen.insert(to);
        }
        if seen.len() != records.len() {
            let mut distinct = rustc_hash::FxHashSet::default();
            if let Some(r) = records.iter().find(|r| !distinct.insert(**r)) {
                return Err(corrupt(format!("record {r} appears twice")));
            }
            return Err(corrupt("a record has no edge".to_owned()));
        }
        let mut counters = Counters::default();
        for (name, value) in &snap.counters {
            counters.set(name, *value);
        }
        Ok(Rebuilt { state: fresh.state, counters, journal_seq: snap.journal_seq })
    }
}
