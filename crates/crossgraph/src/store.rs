//! [`CrossLayerGraph`]: the store of cross-layer edges, its [`CrossGraphConfig`] and
//! [`CrossLayerGraphBuilder`], the mutations (as [`Op`]s) and the queries.
//!
//! # Layout
//!
//! Every record that has an edge gets a dense `u32` node index behind its [`LayerRecord`]
//! (one `FxHashMap` lookup). A node holds two runs: its outgoing edges in the *out* arena and
//! its incoming edges in the *in* arena, each a contiguous slice of 16-byte entries (the
//! other end's node, the edge's weight, and one word holding the edge's type, whether it has
//! metadata and the position of the edge's mirror entry in the other end's opposite run).
//! [`reserve`](CrossLayerGraph::reserve) pre-sizes the index and the arenas for a known bulk.
//! So:
//!
//! - [`linked`](CrossLayerGraph::linked), [`incoming`](CrossLayerGraph::incoming) and
//!   spreading activation read one slice per record;
//! - each run is kept grouped by edge type (type slots ascending), so a spread that follows
//!   some types skips the others' groups whole;
//! - finding an edge scans the shorter of the source's out run and the target's in run;
//! - adding an edge appends to both runs, then moves the first entry of each later type
//!   group to its group's end (none when the new type is the run's last, the common case;
//!   at most six); removing one fills the hole from the end of its group and cascades the
//!   same way (one move when the hole is in the run's last group). Each move fixes the back
//!   position of its mirror: O(1) whatever the degrees, plus a binary search per group
//!   crossed; [`remove_record`](CrossLayerGraph::remove_record) is O(degree);
//! - a run that fills moves to the end of its arena with twice the room (in place when it is
//!   already at the end); the room it leaves is reused when an arena is packed, which
//!   happens when garbage passes half of it. A record whose last edge goes gives back its
//!   node index, and the next new record takes it over.
//!
//! Metadata lives in a side map keyed by the edge, so an edge without metadata allocates
//! nothing.
//!
//! # Mutations
//!
//! Every mutation is an [`Op`]: it is validated first (a failed call changes nothing), then
//! applied by one function that cannot fail. [`CrossLayerGraph::apply`] takes an `Op` from
//! outside (a journal being replayed) through the same validation.
//!
//! ```
//! use crossgraph::{CrossLayerGraph, EdgeInsert, MetaValue};
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//!
//! let episode = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(1));
//! let concept = LayerRecord::new(LayerKind::Atl, RecordId::from_u128(2));
//! let mut g = CrossLayerGraph::builder().build()?;
//! assert_eq!(g.add_edge(episode, concept, CrossEdgeKind::InstanceOf, 0.6)?, EdgeInsert::Added);
//! // The same ends and type again: updated, not stacked.
//! let meta = [("field".to_owned(), MetaValue::Text("success_rate".into()))].into();
//! let again = g.add_edge_with(episode, concept, CrossEdgeKind::InstanceOf, 1.0, meta)?;
//! assert_eq!(again, EdgeInsert::Updated { previous_weight: 0.6 });
//! assert_eq!(g.edge_count(), 1);
//! assert_eq!(g.linked(episode, Some(LayerKind::Atl), None)[0].weight, 1.0);
//! assert_eq!(g.incoming(concept, None, Some(CrossEdgeKind::InstanceOf))[0].from, episode);
//! assert!(g.metadata(episode, concept, CrossEdgeKind::InstanceOf).unwrap().contains_key("field"));
//! assert_eq!(g.remove_record(concept)?, 1);
//! assert!(g.is_empty() && g.record_count() == 0);
//! # Ok::<(), crossgraph::Error>(())
//! ```

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use maxim_core::journal::{StoreDir, SyncPolicy};
use maxim_core::ownership::FileClaims;
use maxim_core::{CrossEdgeKind, CrossLinks, LayerKind, LayerRecord, LayerView, MetaValue, check_unit};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::activation::CrossParams;
use crate::error::{Error, Result};
use crate::kind::{ALL_KINDS, KindSet, kind_name, kind_slot, layer_slot};

/// Free-form metadata of an edge (`{field}`, `{phase_coherence}`, ...).
pub type Metadata = BTreeMap<String, MetaValue>;

/// Most edges one graph holds.
pub const MAX_EDGES: usize = 1 << 27;

/// Longest metadata key, in bytes.
pub const MAX_META_KEY_LEN: usize = 256;

/// Settings of a [`CrossLayerGraph`]: the defaults of its spreading activation.
///
/// The defaults: decay 0.5 per hop, threshold 0.01 (the original's), max depth 3 (a record
/// three hops from a seed is returned), every edge type followed in both directions, and
/// levels of at least 4,096 records expanded on rayon.
///
/// ```
/// use crossgraph::{CrossGraphConfig, KindSet};
/// let mut config = CrossGraphConfig::default();
/// config.max_depth = 2;
/// config.backward = KindSet::NONE;
/// assert!(config.validate().is_ok());
/// config.decay = 1.5;
/// assert!(config.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CrossGraphConfig {
    /// Factor applied per hop, in `(0, 1]` (default 0.5).
    pub decay: f64,
    /// Smallest activation kept; a value below it is dropped, one equal to it kept (default
    /// 0.01).
    pub threshold: f64,
    /// Most hops from a seed (default 3).
    pub max_depth: u32,
    /// Edge types that carry activation from source to target (default all).
    pub forward: KindSet,
    /// Edge types that also carry activation from target to source (default all: an AG
    /// pattern that confirms a concept is reached from the concept).
    pub backward: KindSet,
    /// Levels with at least this many records expand on rayon (default 4,096).
    pub parallel_min_frontier: usize,
}

impl Default for CrossGraphConfig {
    fn default() -> Self {
        Self {
            decay: 0.5,
            threshold: 0.01,
            max_depth: 3,
            forward: KindSet::ALL,
            backward: KindSet::ALL,
            parallel_min_frontier: 4096,
        }
    }
}

impl CrossGraphConfig {
    /// Checks the settings: decay in `(0, 1]`, threshold finite and `>= 0`.
    pub fn validate(&self) -> Result<()> {
        self.params().map(drop)
    }

    /// The activation parameters these settings describe.
    pub fn params(&self) -> Result<CrossParams> {
        let activation = maxim_core::ActivationParams::new(self.decay, self.threshold, self.max_depth)?;
        let mut params = CrossParams::new(activation);
        params.forward = self.forward;
        params.backward = self.backward;
        params.parallel_min_frontier = self.parallel_min_frontier;
        Ok(params)
    }
}

/// Assembles a [`CrossLayerGraph`].
///
/// The graph holds no clock and no ids of its own: nothing in it depends on time, and its
/// records are named by the layers that hold them.
///
/// ```
/// use crossgraph::{CrossGraphConfig, CrossLayerGraph};
/// let mut config = CrossGraphConfig::default();
/// config.max_depth = 4;
/// let g = CrossLayerGraph::builder().config(config).build()?;
/// assert_eq!(g.config().max_depth, 4);
/// # Ok::<(), crossgraph::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct CrossLayerGraphBuilder {
    config: CrossGraphConfig,
    sync_policy: SyncPolicy,
}

impl CrossLayerGraphBuilder {
    /// The settings (default [`CrossGraphConfig::default`]).
    pub fn config(&mut self, config: CrossGraphConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// An empty graph in memory; fails when the settings are invalid.
    pub fn build(&self) -> Result<CrossLayerGraph> {
        let params = self.config.params()?;
        Ok(CrossLayerGraph {
            config: self.config.clone(),
            params,
            state: State::default(),
            counters: Counters::default(),
            activations: AtomicU64::new(0),
            claims: FileClaims::new(),
            loaded_journal_seq: 0,
            journal: None,
        })
    }

    /// When journaled writes reach stable storage, for a graph opened on a directory
    /// (default [`SyncPolicy::Interval`] of one second).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The graph opened on the directory `dir` (created if missing): the snapshot
    /// `crossgraph.snap` (or its backup) loaded and the journal replayed, every later write
    /// journaled before it returns. Errors: the settings, another open graph holding the
    /// directory ([`maxim_core::Error::Locked`]), or damage that the snapshot's backup does
    /// not cover. See [`crate::journal`].
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<CrossLayerGraph> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }
}

/// One edge, as the queries return it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossEdge {
    /// The source record.
    pub from: LayerRecord,
    /// The target record.
    pub to: LayerRecord,
    /// The edge's type.
    pub kind: CrossEdgeKind,
    /// The edge's weight, in `[0, 1]`.
    pub weight: f64,
}

/// What adding an edge did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EdgeInsert {
    /// A new edge.
    Added,
    /// The edge (same ends, same type) existed: its weight was replaced and the metadata
    /// keys given overwrote the old ones.
    Updated {
        /// The weight it had before.
        previous_weight: f64,
    },
}

/// One mutation of the graph, with everything resolved: what a journal records and replays.
///
/// ```
/// use crossgraph::{Applied, CrossLayerGraph, Op};
/// use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
/// let [a, b] = [1, 2].map(|i| LayerRecord::new(LayerKind::Atl, RecordId::from_u128(i)));
/// let mut g = CrossLayerGraph::builder().build()?;
/// let op = Op::Link { from: a, to: b, kind: CrossEdgeKind::Informs, weight: 0.5, metadata: None };
/// assert!(matches!(g.apply(op)?, Applied::Linked(_)));
/// assert_eq!(g.apply(Op::RemoveRecord { record: b })?, Applied::Removed { edges: 1 });
/// // Invalid ops are refused as the direct calls refuse them.
/// assert!(g.apply(Op::Link { from: a, to: a, kind: CrossEdgeKind::Informs, weight: 0.5, metadata: None }).is_err());
/// # Ok::<(), crossgraph::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// Add the edge, or update it when it exists.
    Link {
        /// Source record.
        from: LayerRecord,
        /// Target record.
        to: LayerRecord,
        /// Edge type.
        kind: CrossEdgeKind,
        /// Weight in `[0, 1]`.
        weight: f64,
        /// Metadata to set (merged into an existing edge's), if any.
        metadata: Option<Metadata>,
    },
    /// Remove the edge, if it exists.
    Unlink {
        /// Source record.
        from: LayerRecord,
        /// Target record.
        to: LayerRecord,
        /// Edge type.
        kind: CrossEdgeKind,
    },
    /// Remove every edge into or out of the record.
    RemoveRecord {
        /// The record.
        record: LayerRecord,
    },
    /// Add or update the edges `from -> t` of one type and weight, for each `t` of `to` in
    /// order, as that many [`Op::Link`]s without metadata would: one journal record for
    /// several edges ([`CrossLayerGraph::add_edges_from`]). Valid only whole: one bad target
    /// refuses them all.
    LinkMany {
        /// Source record of every edge.
        from: LayerRecord,
        /// Target records, in order.
        to: Vec<LayerRecord>,
        /// Edge type.
        kind: CrossEdgeKind,
        /// Weight in `[0, 1]`.
        weight: f64,
    },
}

/// What applying an [`Op`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Applied {
    /// [`Op::Link`]: added or updated.
    Linked(EdgeInsert),
    /// [`Op::Unlink`]: the edge removed, or `None` when there was none.
    Unlinked(Option<CrossEdge>),
    /// [`Op::RemoveRecord`]: how many edges went.
    Removed {
        /// Edges removed.
        edges: usize,
    },
    /// [`Op::LinkMany`]: how many edges were added and how many updated.
    LinkedMany {
        /// Edges added.
        added: usize,
        /// Edges that existed and were updated.
        updated: usize,
    },
}

/// Counts that describe a [`CrossLayerGraph`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CrossGraphStats {
    /// Edges held.
    pub edges: usize,
    /// Records with at least one edge.
    pub records: usize,
    /// Records with at least one outgoing edge (the original's `source_records`).
    pub source_records: usize,
    /// Records with at least one incoming edge (the original's `target_records`).
    pub target_records: usize,
    /// Edges per type name (types with no edge are left out).
    pub edges_by_kind: BTreeMap<&'static str, usize>,
    /// Records per layer name (layers with no record are left out).
    pub records_by_layer: BTreeMap<&'static str, usize>,
    /// Counters since the graph was created or loaded: `edges_added`, `edges_updated`,
    /// `edges_removed`, `records_removed`, `journal_failures` (removals through
    /// [`CrossLinks`] that the journal refused), `activations`.
    pub counters: BTreeMap<&'static str, u64>,
}

/// The cross-layer graph: typed, directed, weighted edges between records of different
/// layers (see the [module docs](self) for the layout and [`crate::activation`] for the
/// spreading activation).
pub struct CrossLayerGraph {
    config: CrossGraphConfig,
    params: CrossParams,
    pub(crate) state: State,
    pub(crate) counters: Counters,
    pub(crate) activations: AtomicU64,
    pub(crate) claims: FileClaims,
    /// The journal sequence number the last loaded snapshot recorded.
    pub(crate) loaded_journal_seq: u64,
    /// The directory, when the graph is open on one.
    pub(crate) journal: Option<StoreDir<Op>>,
}

impl std::fmt::Debug for CrossLayerGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossLayerGraph")
            .field("config", &self.config)
            .field("edges", &self.edge_count())
            .field("records", &self.record_count())
            .field("journaled", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

/// The mutation counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) edges_added: u64,
    pub(crate) edges_updated: u64,
    pub(crate) edges_removed: u64,
    pub(crate) records_removed: u64,
    pub(crate) journal_failures: u64,
}

impl Counters {
    pub(crate) const NAMES: [&'static str; 5] =
        ["edges_added", "edges_updated", "edges_removed", "records_removed", "journal_failures"];

    pub(crate) fn values(self) -> [u64; 5] {
        [
            self.edges_added,
            self.edges_updated,
            self.edges_removed,
            self.records_removed,
            self.journal_failures,
        ]
    }

    pub(crate) fn set(&mut self, name: &str, value: u64) {
        match name {
            "edges_added" => self.edges_added = value,
            "edges_updated" => self.edges_updated = value,
            "edges_removed" => self.edges_removed = value,
            "records_removed" => self.records_removed = value,
            "journal_failures" => self.journal_failures = value,
            _ => {}
        }
    }
}

impl CrossLayerGraph {
    /// A builder with every default.
    pub fn builder() -> CrossLayerGraphBuilder {
        CrossLayerGraphBuilder::default()
    }

    /// The settings.
    pub fn config(&self) -> &CrossGraphConfig {
        &self.config
    }

    /// The activation parameters of the settings.
    pub fn params(&self) -> &CrossParams {
        &self.params
    }

    /// Makes room for `records` more records and `edges` more edges, so that adding them
    /// moves no table: the record index and the node tables take `records` more entries, and
    /// each arena twice `edges` more (a run has up to twice the room of its entries, and a
    /// run that outgrows its room leaves the old room behind until the arena is packed).
    ///
    /// Call it before a known bulk of insertions (a load, an import); the graph grows by
    /// itself otherwise. Reserved room that is never filled costs address space, not
    /// memory, on systems that commit pages when they are first written.
    ///
    /// ```
    /// use crossgraph::CrossLayerGraph;
    /// use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
    /// let mut g = CrossLayerGraph::builder().build()?;
    /// g.reserve(2_000, 1_000);
    /// for i in 0..1_000 {
    ///     let ep = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(i));
    ///     let concept = LayerRecord::new(LayerKind::Atl, RecordId::from_u128(i));
    ///     g.add_edge(ep, concept, CrossEdgeKind::InstanceOf, 1.0)?;
    /// }
    /// assert_eq!((g.record_count(), g.edge_count()), (2_000, 1_000));
    /// # Ok::<(), crossgraph::Error>(())
    /// ```
    pub fn reserve(&mut self, records: usize, edges: usize) {
        self.state.reserve(records, edges.min(MAX_EDGES));
    }

    /// Adds the edge `from -> to` of type `kind` with `weight`, or updates it when the same
    /// ends and type exist (the weight is replaced).
    ///
    /// Errors (nothing changes): a weight that is NaN, infinite or outside `[0, 1]`; a record
    /// joined to itself by any type but TEMPORALLY_CORRELATES ([`Error::SelfLoop`]); a full
    /// graph ([`Error::Full`]). Records need not exist in any layer (see
    /// [`dangling`](Self::dangling)).
    pub fn add_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<EdgeInsert> {
        let op = Op::Link { from, to, kind, weight, metadata: None };
        match self.apply(op)? {
            Applied::Linked(insert) => Ok(insert),
            _ => unreachable!("a link op links"),
        }
    }

    /// [`add_edge`](Self::add_edge) with metadata; on an existing edge the keys given
    /// overwrite the old ones and the others stay. Metadata keys must be 1 to 256 bytes and
    /// numbers finite.
    pub fn add_edge_with(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
        metadata: Metadata,
    ) -> Result<EdgeInsert> {
        let op = Op::Link { from, to, kind, weight, metadata: Some(metadata) };
        match self.apply(op)? {
            Applied::Linked(insert) => Ok(insert),
            _ => unreachable!("a link op links"),
        }
    }

    /// Adds (or updates) the edges `from -> t` of type `kind` with `weight` for every `t` of
    /// `to`, in order, as [`add_edge`](Self::add_edge) would one by one, with one journal
    /// record for all of them (a crash keeps all or none). Returns how many were added (the
    /// others existed and were updated).
    ///
    /// Errors (nothing changes, no edge is written): a weight that is NaN, infinite or outside
    /// `[0, 1]`; `from` among `to` for a type other than TEMPORALLY_CORRELATES
    /// ([`Error::SelfLoop`]); a graph without room for every target not yet linked
    /// ([`Error::Full`]; a target given twice is counted twice).
    ///
    /// ```
    /// use crossgraph::CrossLayerGraph;
    /// use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
    /// let episode = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(1));
    /// let [mug, kitchen] = [2, 3].map(|i| LayerRecord::new(LayerKind::Atl, RecordId::from_u128(i)));
    /// let mut g = CrossLayerGraph::builder().build()?;
    /// g.add_edge(episode, mug, CrossEdgeKind::InstanceOf, 0.5)?;
    /// assert_eq!(g.add_edges_from(episode, &[mug, kitchen], CrossEdgeKind::InstanceOf, 1.0)?, 1);
    /// assert_eq!(g.edge(episode, mug, CrossEdgeKind::InstanceOf).unwrap().weight, 1.0);
    /// // One bad target refuses them all.
    /// assert!(g.add_edges_from(mug, &[kitchen, mug], CrossEdgeKind::Informs, 1.0).is_err());
    /// assert_eq!(g.edge_count(), 2);
    /// # Ok::<(), crossgraph::Error>(())
    /// ```
    pub fn add_edges_from(
        &mut self,
        from: LayerRecord,
        to: &[LayerRecord],
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<usize> {
        let op = Op::LinkMany { from, to: to.to_vec(), kind, weight };
        match self.apply(op)? {
            Applied::LinkedMany { added, .. } => Ok(added),
            _ => unreachable!("a link-many op links many"),
        }
    }

    /// Removes the edge `from -> to` of type `kind`; returns it, or `None` when there was none.
    /// Fails only when the graph is open on a directory and the journal cannot be written.
    pub fn remove_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
    ) -> Result<Option<CrossEdge>> {
        match self.apply(Op::Unlink { from, to, kind })? {
            Applied::Unlinked(edge) => Ok(edge),
            _ => unreachable!("an unlink op unlinks"),
        }
    }

    /// Removes every edge into or out of `record`; returns how many (0 for a record with no
    /// edge, which is not an error: the hub calls this for every record any layer deletes).
    /// Fails only when the graph is open on a directory and the journal cannot be written.
    pub fn remove_record(&mut self, record: LayerRecord) -> Result<usize> {
        let _s = tracing::debug_span!("crossgraph_remove_record", layer = record.layer.as_str()).entered();
        match self.apply(Op::RemoveRecord { record })? {
            Applied::Removed { edges } => Ok(edges),
            _ => unreachable!("a remove op removes"),
        }
    }

    /// Validates `op` as the direct calls do, journals it when the graph is open on a
    /// directory (and the op changes something), then applies it.
    pub fn apply(&mut self, op: Op) -> Result<Applied> {
        let op = self.validate(op)?;
        if self.journal.is_some() && self.changes_something(&op) {
            self.journal_op(&op)?;
        }
        Ok(self.apply_valid(op))
    }

    /// False for an op that would change nothing (removing an edge or a record the graph
    /// does not hold), which is not journaled.
    fn changes_something(&self, op: &Op) -> bool {
        match op {
            Op::Link { .. } => true,
            Op::LinkMany { to, .. } => !to.is_empty(),
            Op::Unlink { from, to, kind } => self.edge(*from, *to, *kind).is_some(),
            Op::RemoveRecord { record } => self.contains_record(*record),
        }
    }

    /// Checks `op` against the graph and returns it normalised (a weight of `-0.0` becomes
    /// `0.0`, empty metadata none).
    pub(crate) fn validate(&self, op: Op) -> Result<Op> {
        match op {
            Op::Link { from, to, kind, weight, metadata } => {
                let weight = check_unit("weight", weight)?.abs();
                if from == to && kind != CrossEdgeKind::TemporallyCorrelates {
                    return Err(Error::SelfLoop { record: from, kind });
                }
                if let Some(m) = &metadata {
                    check_metadata(m)?;
                }
                if self.state.edge_count >= MAX_EDGES && self.edge(from, to, kind).is_none() {
                    return Err(Error::Full { what: "edges", limit: MAX_EDGES });
                }
                let metadata = metadata.filter(|m| !m.is_empty());
                Ok(Op::Link { from, to, kind, weight, metadata })
            }
            Op::LinkMany { from, to, kind, weight } => {
                let weight = check_unit("weight", weight)?.abs();
                if kind != CrossEdgeKind::TemporallyCorrelates && to.contains(&from) {
                    return Err(Error::SelfLoop { record: from, kind });
                }
                if self.state.edge_count + to.len() > MAX_EDGES {
                    let new = to.iter().filter(|&&t| self.edge(from, t, kind).is_none()).count();
                    if self.state.edge_count + new > MAX_EDGES {
                        return Err(Error::Full { what: "edges", limit: MAX_EDGES });
                    }
                }
                Ok(Op::LinkMany { from, to, kind, weight })
            }
            other => Ok(other),
        }
    }

    /// Applies a validated op; cannot fail.
    pub(crate) fn apply_valid(&mut self, op: Op) -> Applied {
        match op {
            Op::Link { from, to, kind, weight, metadata } => {
                let insert = self.state.link(from, to, kind, weight, metadata);
                match insert {
                    EdgeInsert::Added => self.counters.edges_added += 1,
                    EdgeInsert::Updated { .. } => self.counters.edges_updated += 1,
                }
                Applied::Linked(insert)
            }
            Op::Unlink { from, to, kind } => {
                let edge = self.state.unlink(from, to, kind);
                if edge.is_some() {
                    self.counters.edges_removed += 1;
                }
                Applied::Unlinked(edge)
            }
            Op::LinkMany { from, to, kind, weight } => {
                let (mut added, mut updated) = (0, 0);
                for t in to {
                    match self.state.link(from, t, kind, weight, None) {
                        EdgeInsert::Added => added += 1,
                        EdgeInsert::Updated { .. } => updated += 1,
                    }
                }
                self.counters.edges_added += added as u64;
                self.counters.edges_updated += updated as u64;
                Applied::LinkedMany { added, updated }
            }
            Op::RemoveRecord { record } => {
                let edges = self.state.remove_record(record);
                if edges > 0 {
                    self.counters.records_removed += 1;
                    self.counters.edges_removed += edges as u64;
                }
                Applied::Removed { edges }
            }
        }
    }

    /// The edge `from -> to` of type `kind`, if held.
    pub fn edge(&self, from: LayerRecord, to: LayerRecord, kind: CrossEdgeKind) -> Option<CrossEdge> {
        let (s, t) = (self.state.node(from)?, self.state.node(to)?);
        let pos = self.state.find(s, t, kind)?;
        Some(self.state.out_edge(s, pos))
    }

    /// The metadata of the edge `from -> to` of type `kind`, if it has any.
    pub fn metadata(&self, from: LayerRecord, to: LayerRecord, kind: CrossEdgeKind) -> Option<&Metadata> {
        let (s, t) = (self.state.node(from)?, self.state.node(to)?);
        self.state.meta.get(&(s, t, kind))
    }

    /// The outgoing edges of `record`, restricted to targets in `layer` and to type `kind`
    /// when given, sorted by target then type (the original's `get_linked`).
    pub fn linked(
        &self,
        record: LayerRecord,
        layer: Option<LayerKind>,
        kind: Option<CrossEdgeKind>,
    ) -> Vec<CrossEdge> {
        self.collect(record, Side::Out, layer, kind)
    }

    /// The incoming edges of `record`, restricted to sources in `layer` and to type `kind`
    /// when given, sorted by source then type (the original's `get_incoming`).
    pub fn incoming(
        &self,
        record: LayerRecord,
        layer: Option<LayerKind>,
        kind: Option<CrossEdgeKind>,
    ) -> Vec<CrossEdge> {
        self.collect(record, Side::In, layer, kind)
    }

    fn collect(
        &self,
        record: LayerRecord,
        side: Side,
        layer: Option<LayerKind>,
        kind: Option<CrossEdgeKind>,
    ) -> Vec<CrossEdge> {
        let Some(n) = self.state.node(record) else { return Vec::new() };
        let mut out: Vec<CrossEdge> = self
            .state
            .halves(n, side)
            .iter()
            .filter(|h| kind.is_none_or(|k| k == h.kind()))
            .map(|h| (self.state.record(h.other), h))
            .filter(|(other, _)| layer.is_none_or(|l| l == other.layer))
            .map(|(other, h)| match side {
                Side::Out => CrossEdge { from: record, to: other, kind: h.kind(), weight: h.weight },
                Side::In => CrossEdge { from: other, to: record, kind: h.kind(), weight: h.weight },
            })
            .collect();
        match side {
            Side::Out => out.sort_unstable_by_key(|e| (e.to, e.kind)),
            Side::In => out.sort_unstable_by_key(|e| (e.from, e.kind)),
        }
        out
    }

    /// Number of outgoing edges of `record`.
    pub fn out_degree(&self, record: LayerRecord) -> usize {
        self.state.node(record).map_or(0, |n| self.state.run(n, Side::Out).len as usize)
    }

    /// Number of incoming edges of `record`.
    pub fn in_degree(&self, record: LayerRecord) -> usize {
        self.state.node(record).map_or(0, |n| self.state.run(n, Side::In).len as usize)
    }

    /// Every edge, in internal order.
    pub fn edges(&self) -> impl Iterator<Item = CrossEdge> + '_ {
        self.state.live_nodes().flat_map(move |n| {
            (0..self.state.run(n, Side::Out).len).map(move |pos| self.state.out_edge(n, pos))
        })
    }

    /// Every record with at least one edge, in internal order.
    pub fn records(&self) -> impl Iterator<Item = LayerRecord> + '_ {
        self.state.live_nodes().map(|n| self.state.record(n))
    }

    /// True when `record` has at least one edge.
    pub fn contains_record(&self, record: LayerRecord) -> bool {
        self.state.index.contains_key(&RecordKey::from(record))
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.state.edge_count
    }

    /// Number of records with at least one edge.
    pub fn record_count(&self) -> usize {
        self.state.index.len()
    }

    /// True when the graph holds no edge.
    pub fn is_empty(&self) -> bool {
        self.state.edge_count == 0
    }

    /// The records with edges for which `exists` says false, sorted. The graph allows edges to
    /// records no layer holds (a layer may load after the graph); the hub runs this check at
    /// load and reports what it finds.
    pub fn dangling(&self, exists: impl Fn(LayerRecord) -> bool) -> Vec<LayerRecord> {
        let mut out: Vec<LayerRecord> = self.records().filter(|&r| !exists(r)).collect();
        out.sort_unstable();
        out
    }

    /// [`dangling`](Self::dangling) against layers: a record is dangling when no layer of
    /// `layers` with its layer's name holds it (so every record of a layer not given is).
    pub fn dangling_in(&self, layers: &[&dyn LayerView]) -> Vec<LayerRecord> {
        self.dangling(|r| layers.iter().any(|l| l.layer_name() == r.layer.as_str() && l.contains(r.id)))
    }

    /// Counts that describe the graph.
    pub fn stats(&self) -> CrossGraphStats {
        let mut stats =
            CrossGraphStats { edges: self.edge_count(), records: self.record_count(), ..Default::default() };
        for n in self.state.live_nodes() {
            let node = &self.state.nodes[n as usize];
            stats.source_records += usize::from(node.out.len > 0);
            stats.target_records += usize::from(node.inc.len > 0);
            *stats.records_by_layer.entry(self.state.record(n).layer.as_str()).or_default() += 1;
        }
        for k in ALL_KINDS {
            let c = self.state.kind_counts[kind_slot(k)];
            if c > 0 {
                stats.edges_by_kind.insert(kind_name(k), c);
            }
        }
        for (name, value) in Counters::NAMES.into_iter().zip(self.counters.values()) {
            stats.counters.insert(name, value);
        }
        stats.counters.insert("activations", self.activations.load(Relaxed));
        stats
    }
}

impl CrossLinks for CrossLayerGraph {
    type Error = Error;

    fn add_cross_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<()> {
        self.add_edge(from, to, kind, weight).map(drop)
    }

    /// A journal failure is logged and counted (`journal_failures`), and nothing is removed.
    fn remove_cross_edges(&mut self, record: LayerRecord) -> usize {
        self.remove_record(record).unwrap_or_else(|e| {
            self.counters.journal_failures += 1;
            tracing::warn!(%record, error = %e, "cross-layer edges not removed: the journal refused");
            0
        })
    }

    fn cross_edges_from(&self, from: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> {
        self.linked(from, None, None).into_iter().map(|e| (e.to, e.kind, e.weight)).collect()
    }
}

/// Checks metadata: keys of 1 to [`MAX_META_KEY_LEN`] bytes, finite numbers.
pub(crate) fn check_metadata(m: &Metadata) -> Result<()> {
    for (key, value) in m {
        if key.is_empty() || key.len() > MAX_META_KEY_LEN {
            return Err(maxim_core::Error::invalid(
                "metadata key",
                format!("{} bytes, expected 1 to 256", key.len()),
            )
            .into());
        }
        if let MetaValue::Number(x) = value {
            maxim_core::check_finite("metadata number", *x)?;
        }
    }
    Ok(())
}

/// Which of a node's two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Outgoing edges.
    Out = 0,
    /// Incoming edges.
    In = 1,
}

impl Side {
    const fn flip(self) -> Self {
        match self {
            Self::Out => Self::In,
            Self::In => Self::Out,
        }
    }
}

/// A node's slice of an arena: `start..start + len` holds entries, up to `start + cap` is its
/// room.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Run {
    pub(crate) start: u32,
    pub(crate) len: u32,
    pub(crate) cap: u32,
}

/// A node's two runs (its record is in [`State::records`], so that the runs of three nodes
/// share a cache line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) out: Run,
    pub(crate) inc: Run,
    pub(crate) live: bool,
}

/// One end's view of an edge: in the out arena, the target; in the in arena, the source
/// (16 bytes: four fit a cache line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Half {
    /// The node at the other end.
    pub(crate) other: u32,
    /// Where the mirror entry sits in `other`'s opposite run (the low [`BACK_BITS`] bits),
    /// the edge's type slot (the next three) and whether the edge has an entry in
    /// [`State::meta`] (the top bit).
    tag: u32,
    pub(crate) weight: f64,
}

/// Bits of [`Half::tag`] that hold the mirror's position: a run holds at most
/// [`MAX_EDGES`] entries, so a position is below `2^27`.
const BACK_BITS: u32 = 27;
const BACK_MASK: u32 = (1 << BACK_BITS) - 1;
const META_BIT: u32 = 1 << 31;
const _: () = assert!(MAX_EDGES <= 1 << BACK_BITS && ALL_KINDS.len() <= 8);

impl Half {
    #[inline]
    pub(crate) fn new(other: u32, back: u32, weight: f64, kind: CrossEdgeKind, has_meta: bool) -> Self {
        debug_assert!(back <= BACK_MASK);
        let tag = back | (kind_slot(kind) as u32) << BACK_BITS | if has_meta { META_BIT } else { 0 };
        Self { other, tag, weight }
    }

    /// Where the mirror entry sits in `other`'s opposite run.
    #[inline]
    pub(crate) fn back(self) -> u32 {
        self.tag & BACK_MASK
    }

    #[inline]
    fn set_back(&mut self, back: u32) {
        debug_assert!(back <= BACK_MASK);
        self.tag = (self.tag & !BACK_MASK) | back;
    }

    /// The slot of the edge's type in [`ALL_KINDS`].
    #[inline]
    pub(crate) fn kind_slot(self) -> usize {
        (self.tag >> BACK_BITS & 7) as usize
    }

    /// The edge's type.
    #[inline]
    pub(crate) fn kind(self) -> CrossEdgeKind {
        ALL_KINDS[self.kind_slot()]
    }

    /// The edge has an entry in [`State::meta`].
    #[inline]
    pub(crate) fn has_meta(self) -> bool {
        self.tag & META_BIT != 0
    }

    #[inline]
    fn set_meta(&mut self, has_meta: bool) {
        self.tag = if has_meta { self.tag | META_BIT } else { self.tag & !META_BIT };
    }
}

const PAD: Half = Half { other: u32::MAX, tag: 0, weight: 0.0 };

/// Garbage an arena may hold beyond half of its length before it is packed.
const COMPACT_SLACK: usize = if cfg!(test) { 4 } else { 4096 };

/// Free node slots keep runs up to this room for the next record; larger runs are released.
const KEEP_ROOM: u32 = 2;

/// A record as the graph's indexes key it: the id's two words and the layer's slot, 24
/// bytes (an entry of an index of records takes 32) hashed in three words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct RecordKey(u64, u64, u8);

impl From<LayerRecord> for RecordKey {
    #[inline]
    fn from(r: LayerRecord) -> Self {
        let id = r.id.as_u128();
        Self((id >> 64) as u64, id as u64, layer_slot(r.layer) as u8)
    }
}

impl RecordKey {
    /// The record this key names.
    #[inline]
    pub(crate) fn record(self) -> LayerRecord {
        let id = (u128::from(self.0) << 64) | u128::from(self.1);
        LayerRecord::new(LayerKind::ALL[usize::from(self.2)], maxim_core::RecordId::from_u128(id))
    }

    /// A well-mixed 64-bit hash of the key (the id's low half is random in a v7 id, but an
    /// id of a test or of a user may not be).
    #[inline]
    pub(crate) fn spread(self) -> u64 {
        (self.1 ^ self.0.rotate_left(32) ^ u64::from(self.2)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The graph's contents.
#[derive(Debug, Default, Clone)]
pub(crate) struct State {
    pub(crate) index: FxHashMap<RecordKey, u32>,
    pub(crate) nodes: Vec<Node>,
    /// The record of each node index (stale for a free index).
    pub(crate) records: Vec<LayerRecord>,
    free: Vec<u32>,
    /// The out arena and the in arena.
    pub(crate) arenas: [Vec<Half>; 2],
    garbage: [usize; 2],
    pub(crate) meta: FxHashMap<(u32, u32, CrossEdgeKind), Metadata>,
    pub(crate) edge_count: usize,
    pub(crate) kind_counts: [usize; 7],
    scratch: Vec<u32>,
}

impl State {
    #[inline]
    pub(crate) fn node(&self, record: LayerRecord) -> Option<u32> {
        self.index.get(&RecordKey::from(record)).copied()
    }

    /// The record at node `n`.
    #[inline]
    pub(crate) fn record(&self, n: u32) -> LayerRecord {
        self.records[n as usize]
    }

    #[inline]
    pub(crate) fn run(&self, n: u32, side: Side) -> Run {
        let node = &self.nodes[n as usize];
        match side {
            Side::Out => node.out,
            Side::In => node.inc,
        }
    }

    fn run_mut(&mut self, n: u32, side: Side) -> &mut Run {
        let node = &mut self.nodes[n as usize];
        match side {
            Side::Out => &mut node.out,
            Side::In => &mut node.inc,
        }
    }

    #[inline]
    pub(crate) fn halves(&self, n: u32, side: Side) -> &[Half] {
        let r = self.run(n, side);
        &self.arenas[side as usize][r.start as usize..(r.start + r.len) as usize]
    }

    fn half_mut(&mut self, n: u32, side: Side, pos: u32) -> &mut Half {
        let r = self.run(n, side);
        &mut self.arenas[side as usize][(r.start + pos) as usize]
    }

    pub(crate) fn live_nodes(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().enumerate().filter(|(_, n)| n.live).map(|(i, _)| i as u32)
    }

    pub(crate) fn out_edge(&self, s: u32, pos: u32) -> CrossEdge {
        let h = self.halves(s, Side::Out)[pos as usize];
        CrossEdge { from: self.record(s), to: self.record(h.other), kind: h.kind(), weight: h.weight }
    }

    /// The position in `s`'s out run of the edge `s -> t` of type `kind`, scanning the
    /// shorter of `s`'s out run and `t`'s in run.
    pub(crate) fn find(&self, s: u32, t: u32, kind: CrossEdgeKind) -> Option<u32> {
        if self.run(s, Side::Out).len <= self.run(t, Side::In).len {
            self.halves(s, Side::Out).iter().position(|h| h.other == t && h.kind() == kind).map(|p| p as u32)
        } else {
            self.halves(t, Side::In).iter().find(|h| h.other == s && h.kind() == kind).map(|h| h.back())
        }
    }

    pub(crate) fn reserve(&mut self, records: usize, edges: usize) {
        let spare = self.free.len();
        let fresh = records.saturating_sub(spare);
        self.index.reserve(records);
        self.nodes.reserve(fresh);
        self.records.reserve(fresh);
        for arena in &mut self.arenas {
            arena.reserve(edges.saturating_mul(2));
        }
    }

    fn intern(&mut self, record: LayerRecord) -> u32 {
        match self.index.entry(RecordKey::from(record)) {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => {
                let n = if let Some(n) = self.free.pop() {
                    self.records[n as usize] = record;
                    let node = &mut self.nodes[n as usize];
                    node.live = true;
                    node.out.len = 0;
                    node.inc.len = 0;
                    n
                } else {
                    self.nodes.push(Node { out: Run::default(), inc: Run::default(), live: true });
                    self.records.push(record);
                    (self.nodes.len() - 1) as u32
                };
                *v.insert(n)
            }
        }
    }

    fn free_node(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        debug_assert!(node.live && node.out.len == 0 && node.inc.len == 0);
        node.live = false;
        let record = self.records[n as usize];
        for (side, run) in [&mut node.out, &mut node.inc].into_iter().enumerate() {
            if run.cap > KEEP_ROOM {
                self.garbage[side] += run.cap as usize;
                *run = Run::default();
            }
        }
        self.index.remove(&RecordKey::from(record));
        self.free.push(n);
    }

    /// Inserts `half` into `n`'s run on `side`, growing the run when it is full, and returns
    /// its position. A run is kept grouped by edge type (type slots ascending), so that a
    /// spread that follows some types skips the others' groups whole: `half` goes at the
    /// end of its type's group, and the first entry of each later group moves to that
    /// group's end (at most six moves, each telling its mirror where it went). Appending a
    /// type at or after the run's last one, the common case, moves nothing.
    fn insert_half(&mut self, n: u32, side: Side, half: Half) -> u32 {
        let s = side as usize;
        let run = self.run(n, side);
        if run.len == run.cap {
            let new_cap = (run.cap * 2).max(2);
            let arena = &mut self.arenas[s];
            let start = if run.cap > 0 && (run.start + run.cap) as usize == arena.len() {
                arena.resize((run.start + new_cap) as usize, PAD);
                run.start
            } else {
                let start = arena.len();
                arena.extend_from_within(run.start as usize..(run.start + run.len) as usize);
                arena.resize(start + new_cap as usize, PAD);
                self.garbage[s] += run.cap as usize;
                start as u32
            };
            let r = self.run_mut(n, side);
            r.start = start;
            r.cap = new_cap;
        }
        let r = self.run_mut(n, side);
        let (start, mut hole) = (r.start as usize, r.len);
        r.len += 1;
        let kind = half.kind_slot();
        loop {
            let before = hole.checked_sub(1).map(|b| self.arenas[s][start + b as usize].kind_slot());
            match before {
                Some(k) if k > kind => {
                    // The group before the hole comes after `half`'s: its first entry moves
                    // to the hole, its end.
                    let first =
                        self.arenas[s][start..start + hole as usize].partition_point(|h| h.kind_slot() < k);
                    self.move_half(n, side, first as u32, hole);
                    hole = first as u32;
                }
                _ => break,
            }
        }
        self.arenas[s][start + hole as usize] = half;
        hole
    }

    /// Moves the entry at `from` of `n`'s run on `side` to `to` (a free slot of the run)
    /// and tells its mirror.
    fn move_half(&mut self, n: u32, side: Side, from: u32, to: u32) {
        let s = side as usize;
        let start = self.run(n, side).start;
        let moved = self.arenas[s][(start + from) as usize];
        self.arenas[s][(start + to) as usize] = moved;
        let mirror = self.run(moved.other, side.flip());
        self.arenas[side.flip() as usize][(mirror.start + moved.back()) as usize].set_back(to);
    }

    /// Removes the entry at `pos` of `n`'s run on `side`, keeping the run grouped by type:
    /// the last entry of its group fills the hole, the last entry of the next group fills
    /// the slot that left, and so on to the run's end (each move tells its mirror).
    fn remove_half(&mut self, n: u32, side: Side, pos: u32) {
        let s = side as usize;
        let run = self.run(n, side);
        let (start, len) = (run.start as usize, run.len as usize);
        let last = run.len - 1;
        // The run stays sorted by type with the hole's stale entry counted: it is the removed
        // entry first, then each moved entry, which left the end of its own group.
        let mut hole = pos;
        let mut kind = self.arenas[s][start + pos as usize].kind_slot();
        if kind == self.arenas[s][start + last as usize].kind_slot() {
            // The hole is in the run's last group (a run of one type always is): its last
            // entry, the run's, fills it.
            if pos != last {
                self.move_half(n, side, last, pos);
            }
            self.run_mut(n, side).len = last;
            return;
        }
        loop {
            let end =
                self.arenas[s][start..start + len].partition_point(|h| h.kind_slot() <= kind) as u32 - 1;
            if end != hole {
                self.move_half(n, side, end, hole);
            }
            hole = end;
            if hole == last {
                break;
            }
            kind = self.arenas[s][start + hole as usize + 1].kind_slot();
        }
        self.run_mut(n, side).len = last;
    }

    /// Removes the edge at `pos` of `s`'s out run; returns its out entry.
    fn remove_edge_at(&mut self, s: u32, pos: u32) -> Half {
        let h = self.halves(s, Side::Out)[pos as usize];
        self.remove_half(h.other, Side::In, h.back());
        self.remove_half(s, Side::Out, pos);
        if h.has_meta() {
            self.meta.remove(&(s, h.other, h.kind()));
        }
        self.kind_counts[h.kind_slot()] -= 1;
        self.edge_count -= 1;
        h
    }

    fn degree(&self, n: u32) -> u32 {
        let node = &self.nodes[n as usize];
        node.out.len + node.inc.len
    }

    pub(crate) fn link(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
        metadata: Option<Metadata>,
    ) -> EdgeInsert {
        let s = self.intern(from);
        let t = self.intern(to);
        let insert = if let Some(pos) = self.find(s, t, kind) {
            let h = self.halves(s, Side::Out)[pos as usize];
            let has_meta = h.has_meta() || metadata.is_some();
            let out = self.half_mut(s, Side::Out, pos);
            out.weight = weight;
            out.set_meta(has_meta);
            let inc = self.half_mut(t, Side::In, h.back());
            inc.weight = weight;
            inc.set_meta(has_meta);
            if let Some(m) = metadata {
                self.meta.entry((s, t, kind)).or_default().extend(m);
            }
            EdgeInsert::Updated { previous_weight: h.weight }
        } else {
            let has_meta = metadata.is_some();
            // The out entry's mirror does not exist yet: its position is set once it does.
            let out_pos = self.insert_half(s, Side::Out, Half::new(t, 0, weight, kind, has_meta));
            let in_pos = self.insert_half(t, Side::In, Half::new(s, out_pos, weight, kind, has_meta));
            self.half_mut(s, Side::Out, out_pos).set_back(in_pos);
            if let Some(m) = metadata {
                self.meta.insert((s, t, kind), m);
            }
            self.kind_counts[kind_slot(kind)] += 1;
            self.edge_count += 1;
            EdgeInsert::Added
        };
        self.maybe_compact();
        insert
    }

    pub(crate) fn unlink(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
    ) -> Option<CrossEdge> {
        let (s, t) = (self.node(from)?, self.node(to)?);
        let pos = self.find(s, t, kind)?;
        let h = self.remove_edge_at(s, pos);
        for n in [s, t] {
            if self.nodes[n as usize].live && self.degree(n) == 0 {
                self.free_node(n);
            }
        }
        Some(CrossEdge { from, to, kind, weight: h.weight })
    }

    pub(crate) fn remove_record(&mut self, record: LayerRecord) -> usize {
        let Some(n) = self.node(record) else { return 0 };
        let mut neighbours = std::mem::take(&mut self.scratch);
        let mut removed = 0;
        while let Some(last) = self.run(n, Side::Out).len.checked_sub(1) {
            neighbours.push(self.remove_edge_at(n, last).other);
            removed += 1;
        }
        while let Some(last) = self.run(n, Side::In).len.checked_sub(1) {
            let h = self.halves(n, Side::In)[last as usize];
            self.remove_edge_at(h.other, h.back());
            neighbours.push(h.other);
            removed += 1;
        }
        self.free_node(n);
        for &m in &neighbours {
            if self.nodes[m as usize].live && self.degree(m) == 0 {
                self.free_node(m);
            }
        }
        neighbours.clear();
        self.scratch = neighbours;
        removed
    }

    fn maybe_compact(&mut self) {
        for side in [Side::Out, Side::In] {
            let s = side as usize;
            if self.garbage[s] > COMPACT_SLACK && self.garbage[s] * 2 > self.arenas[s].len() {
                self.compact(side);
            }
        }
    }

    /// Packs the arena of `side`: every run keeps its room and its entries' positions.
    fn compact(&mut self, side: Side) {
        let s = side as usize;
        let old = std::mem::take(&mut self.arenas[s]);
        let mut packed = Vec::with_capacity(old.len() - self.garbage[s]);
        for node in &mut self.nodes {
            let run = match side {
                Side::Out => &mut node.out,
                Side::In => &mut node.inc,
            };
            if run.cap == 0 {
                continue;
            }
            let start = packed.len();
            packed.extend_from_slice(&old[run.start as usize..(run.start + run.cap) as usize]);
            run.start = start as u32;
        }
        self.arenas[s] = packed;
        self.garbage[s] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maxim_core::RecordId;

    fn rec(layer: LayerKind, i: u128) -> LayerRecord {
        LayerRecord::new(layer, RecordId::from_u128(i))
    }

    impl State {
        /// Checks every mirror, count and index against the runs; panics on the first
        /// disagreement.
        pub(crate) fn check_invariants(&self) {
            let mut edges = 0;
            let mut kinds = [0; 7];
            for (i, node) in self.nodes.iter().enumerate() {
                let n = i as u32;
                if !node.live {
                    assert_eq!((node.out.len, node.inc.len), (0, 0));
                    assert!(self.free.contains(&n));
                    continue;
                }
                assert_eq!(self.index.get(&RecordKey::from(self.record(n))), Some(&n));
                assert!(self.degree(n) > 0, "a live node has an edge");
                for side in [Side::Out, Side::In] {
                    let r = self.run(n, side);
                    assert!(r.len <= r.cap && (r.start + r.cap) as usize <= self.arenas[side as usize].len());
                    let halves = self.halves(n, side);
                    assert!(halves.is_sorted_by_key(|h| h.kind_slot()), "a run is grouped by type");
                    for (pos, h) in self.halves(n, side).iter().enumerate() {
                        let m = self.halves(h.other, side.flip())[h.back() as usize];
                        assert_eq!((m.other, m.back() as usize, m.kind()), (n, pos, h.kind()));
                        assert_eq!(m.has_meta(), h.has_meta());
                        assert_eq!(m.weight.to_bits(), h.weight.to_bits());
                        if side == Side::Out {
                            edges += 1;
                            kinds[kind_slot(h.kind())] += 1;
                            assert_eq!(h.has_meta(), self.meta.contains_key(&(n, h.other, h.kind())));
                        }
                    }
                }
            }
            assert_eq!(edges, self.edge_count);
            assert_eq!(kinds, self.kind_counts);
            assert_eq!(self.index.len(), self.nodes.iter().filter(|n| n.live).count());
            let with_meta = self
                .live_nodes()
                .map(|n| self.halves(n, Side::Out).iter().filter(|h| h.has_meta()).count())
                .sum::<usize>();
            assert_eq!(self.meta.len(), with_meta);
        }
    }

    #[test]
    fn churn_keeps_every_mirror_and_packs_the_arenas() {
        let mut g = CrossLayerGraph::builder().build().unwrap();
        let mut rng = maxim_core::SplitMix64::new(5);
        let layers = [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus];
        for step in 0..4000 {
            let a = rec(layers[rng.below(3) as usize], u128::from(rng.below(40)));
            let b = rec(layers[rng.below(3) as usize], u128::from(rng.below(40)));
            let kind = ALL_KINDS[rng.below(7) as usize];
            match rng.below(10) {
                0 => {
                    g.remove_record(a).unwrap();
                }
                1 => {
                    g.remove_edge(a, b, kind).unwrap();
                }
                _ => {
                    let _ = g.add_edge(a, b, kind, rng.uniform());
                }
            }
            if step % 97 == 0 {
                g.state.check_invariants();
            }
        }
        g.state.check_invariants();
        let live: usize = g.state.nodes.iter().map(|n| (n.out.cap + n.inc.cap) as usize).sum();
        assert!(g.state.arenas[0].len() + g.state.arenas[1].len() <= 2 * live + 4 * COMPACT_SLACK + 64);
    }

    #[test]
    fn a_hub_loses_edges_in_constant_time_per_edge() {
        let mut g = CrossLayerGraph::builder().build().unwrap();
        let hub = rec(LayerKind::Atl, 0);
        for i in 1..=1000 {
            g.add_edge(rec(LayerKind::Hippocampus, i), hub, CrossEdgeKind::InstanceOf, 1.0).unwrap();
        }
        for i in (1..=1000).step_by(3) {
            assert_eq!(g.remove_record(rec(LayerKind::Hippocampus, i)).unwrap(), 1);
        }
        g.state.check_invariants();
        assert_eq!(g.in_degree(hub), 666);
        assert_eq!(g.remove_record(hub).unwrap(), 666);
        assert!(g.is_empty() && g.record_count() == 0);
        g.state.check_invariants();
    }
}
