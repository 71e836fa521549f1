//! [`Graph`]: the mutable associative graph, on a petgraph `StableDiGraph`.
//!
//! Nodes are [`RecordId`]s, mapped to petgraph node indices by an `FxHashMap`. Edges carry an
//! [`EdgeKind`], a weight (finite, `>= 0`) and optional [`EdgeMeta`]; an edge without metadata
//! allocates nothing of its own (the metadata is an `Option<Box<EdgeMeta>>`). The identity of an edge is
//! `(source, target, kind, relation)`: adding an edge that already exists replaces its weight
//! and overwrites the metadata fields the new metadata sets (the original appended a parallel
//! duplicate). REQUIRES/ENABLES edges that would close a cycle among dependency edges are
//! refused and leave the graph unchanged.
//!
//! ```
//! use maxim_core::graph::{EdgeInsert, EdgeKind, EdgeMeta, Graph};
//! use maxim_core::{Error, RecordId};
//!
//! let [mug, cup, kitchen] = [1, 2, 3].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! let is_a = || Some(EdgeMeta::relation("IS_A").with_confidence(0.5));
//! assert_eq!(g.add_edge(mug, cup, EdgeKind::Associates, 0.3, is_a())?, EdgeInsert::Added);
//! // The same (source, target, kind, relation) again: merged, not duplicated.
//! assert_eq!(
//!     g.add_edge(mug, cup, EdgeKind::Associates, 0.8, is_a())?,
//!     EdgeInsert::Merged { previous_weight: 0.3 }
//! );
//! // Another relation label is another edge.
//! g.add_edge(mug, cup, EdgeKind::Associates, 0.4, Some(EdgeMeta::relation("RELATED_TO")))?;
//! assert_eq!(g.edge_count(), 2);
//! assert_eq!(g.find_edge(mug, cup, None, Some("IS_A")).map(|e| e.weight), Some(0.8));
//!
//! g.add_edge(kitchen, mug, EdgeKind::Requires, 1.0, None)?;
//! let refused = g.add_edge(mug, kitchen, EdgeKind::Enables, 1.0, None);
//! assert!(matches!(refused, Err(Error::DependencyCycle { .. })));
//! assert_eq!(g.dependents(kitchen), vec![mug]);
//! assert_eq!(g.remove_node(mug), Some(3));
//! assert_eq!(g.edge_count(), 0);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::visit::{EdgeFiltered, EdgeRef as _, IntoEdgeReferences as _, NodeIndexable as _};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::{Activation, ActivationParams, Adjacency, EdgeKind};
use crate::contracts::GraphView;
use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::{check_non_negative, check_signed_unit, check_unit};

/// Optional metadata of an edge.
///
/// `relation` is part of the edge's identity: the ATL's relationship types (IS_A, HAS_PART,
/// ...) travel as the same [`EdgeKind`] and are told apart by it. `confidence` must be in
/// `[0, 1]` and `valence` in `[-1, 1]`; spreading activation with valence adds `valence` along
/// the path ([`Graph::spread_with_valence`]).
///
/// ```
/// use maxim_core::graph::EdgeMeta;
/// let meta = EdgeMeta::relation("HAS_PART").with_confidence(0.9).with_valence(-0.5);
/// assert_eq!(meta.relation.as_deref(), Some("HAS_PART"));
/// assert!(meta.validate().is_ok());
/// assert!(EdgeMeta::default().with_confidence(1.5).validate().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EdgeMeta {
    /// The relationship type the edge stands for, if any (part of the edge's identity).
    pub relation: Option<String>,
    /// Confidence in the edge, in `[0, 1]`.
    pub confidence: Option<f64>,
    /// Emotional valence the edge carries, in `[-1, 1]`.
    pub valence: Option<f64>,
}

impl EdgeMeta {
    /// Metadata holding only a relation label.
    pub fn relation(relation: impl Into<String>) -> Self {
        Self { relation: Some(relation.into()), ..Self::default() }
    }

    /// The same metadata with `confidence` set.
    pub fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence);
        self
    }

    /// The same metadata with `valence` set.
    pub fn with_valence(mut self, valence: f64) -> Self {
        self.valence = Some(valence);
        self
    }

    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        self.relation.is_none() && self.confidence.is_none() && self.valence.is_none()
    }

    /// Checks the fields: a relation label is not empty, confidence is in `[0, 1]`, valence in
    /// `[-1, 1]`, both finite.
    pub fn validate(&self) -> Result<()> {
        if self.relation.as_deref() == Some("") {
            return Err(Error::invalid("relation", "an edge's relation label must not be empty"));
        }
        if let Some(c) = self.confidence {
            check_unit("confidence", c)?;
        }
        if let Some(v) = self.valence {
            check_signed_unit("valence", v)?;
        }
        Ok(())
    }

    /// Overwrites the fields `update` sets.
    fn overwrite_with(&mut self, update: Self) {
        if update.relation.is_some() {
            self.relation = update.relation;
        }
        if update.confidence.is_some() {
            self.confidence = update.confidence;
        }
        if update.valence.is_some() {
            self.valence = update.valence;
        }
    }
}

/// What [`Graph::add_edge`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EdgeInsert {
    /// A new edge was added.
    Added,
    /// The edge existed: its weight was replaced and the given metadata fields overwritten.
    Merged {
        /// The weight the edge had before.
        previous_weight: f64,
    },
}

/// A borrowed view of one edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeRef<'a> {
    /// The edge's source.
    pub source: RecordId,
    /// The edge's target.
    pub target: RecordId,
    /// The edge's kind.
    pub kind: EdgeKind,
    /// The edge's weight (finite, `>= 0`).
    pub weight: f64,
    /// The edge's metadata, if it has any.
    pub meta: Option<&'a EdgeMeta>,
}

impl<'a> EdgeRef<'a> {
    /// The relation label, if any.
    pub fn relation(&self) -> Option<&'a str> {
        self.meta.and_then(|m| m.relation.as_deref())
    }

    /// The confidence, if set.
    pub fn confidence(&self) -> Option<f64> {
        self.meta.and_then(|m| m.confidence)
    }

    /// The valence, if set.
    pub fn valence(&self) -> Option<f64> {
        self.meta.and_then(|m| m.valence)
    }
}

/// What the graph keeps per node beside petgraph's edge lists, indexed by node index: the id,
/// the degree counters, and the outgoing edges that carry activation in one contiguous list
/// (petgraph's per-node edge lists are linked through the edge array, so walking them is a
/// chain of dependent loads; a spread walks this list instead).
#[derive(Debug, Clone)]
pub(super) struct Slot {
    pub(super) id: RecordId,
    /// Outgoing ASSOCIATES and CAUSES edges, in no particular order.
    pub(super) carriers: Vec<Carrier>,
    /// Outgoing edges per kind, indexed by [`EdgeKind::slot`].
    out: [u32; 5],
    /// Incoming edges.
    inc: u32,
}

impl Slot {
    fn new(id: RecordId) -> Self {
        Self { id, carriers: Vec::new(), out: [0; 5], inc: 0 }
    }

    fn out_total(&self) -> u32 {
        self.out.iter().sum()
    }

    fn drop_carrier(&mut self, edge: EdgeIndex<Ix>) {
        if let Some(i) = self.carriers.iter().position(|c| c.edge == edge.index() as u32) {
            self.carriers.swap_remove(i);
        }
    }

    fn carrier_mut(&mut self, edge: EdgeIndex<Ix>) -> Option<&mut Carrier> {
        self.carriers.iter_mut().find(|c| c.edge == edge.index() as u32)
    }
}

/// An outgoing edge that carries activation, as a spread reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Carrier {
    pub(super) target: u32,
    /// The petgraph edge, for its valence and for upkeep.
    pub(super) edge: u32,
    pub(super) weight: f64,
}

/// An edge's payload.
#[derive(Debug, Clone)]
pub(super) struct EdgeData {
    pub(super) weight: f64,
    pub(super) meta: Option<Box<EdgeMeta>>,
    pub(super) kind: EdgeKind,
}

impl EdgeData {
    pub(super) fn relation(&self) -> Option<&str> {
        self.meta.as_deref().and_then(|m| m.relation.as_deref())
    }

    /// The edge's valence, 0 when it has none.
    #[inline]
    pub(super) fn valence(&self) -> f64 {
        self.meta.as_deref().and_then(|m| m.valence).unwrap_or(0.0)
    }
}

/// The index type of the petgraph graph underneath.
pub(super) type Ix = u32;

/// Most nodes or edges the graph holds (petgraph reserves `u32::MAX` as "no index").
const MAX_ELEMENTS: usize = u32::MAX as usize - 1;

/// A directed graph over [`RecordId`]s with typed, weighted edges, on a petgraph
/// `StableDiGraph`.
///
/// An edge is identified by `(source, target, kind, relation)`:
/// [`add_edge`](Self::add_edge) of an existing edge replaces its weight and overwrites the
/// metadata fields it sets. REQUIRES/ENABLES edges stay acyclic. Degree counts are kept per
/// node, and each node's outgoing ASSOCIATES/CAUSES edges are also kept in one contiguous
/// list, which is what [`spread`](Self::spread) walks.
///
/// Iteration orders: [`nodes`](Self::nodes), [`outgoing`](Self::outgoing) and
/// [`incoming`](Self::incoming) follow the internal layout (deterministic for a given history
/// of calls, most recently added edge first); calls that return a `Vec` sort it by id.
/// Two graphs are equal when they hold the same nodes and the same edges with the same
/// weights and metadata, whatever their history.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub(super) inner: StableDiGraph<(), EdgeData, Ix>,
    /// Per node index; the slot of a removed node is stale until the index is reused.
    pub(super) slots: Vec<Slot>,
    pub(super) index: FxHashMap<RecordId, NodeIndex<Ix>>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty graph with room for `nodes` nodes and `edges` edges.
    pub fn with_capacity(nodes: usize, edges: usize) -> Self {
        let mut index = FxHashMap::default();
        index.reserve(nodes);
        Self { inner: StableDiGraph::with_capacity(nodes, edges), slots: Vec::with_capacity(nodes), index }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.inner.node_count()
    }

    /// Number of directed edges.
    pub fn edge_count(&self) -> usize {
        self.inner.edge_count()
    }

    /// True when the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// True when `id` is a node.
    pub fn contains(&self, id: RecordId) -> bool {
        self.index.contains_key(&id)
    }

    /// Every node, in internal order.
    pub fn nodes(&self) -> impl Iterator<Item = RecordId> + '_ {
        self.inner.node_indices().map(|n| self.id_of(n))
    }

    /// Every edge, in internal order.
    pub fn edges(&self) -> impl Iterator<Item = EdgeRef<'_>> + '_ {
        self.inner.edge_references().map(|e| self.view(e))
    }

    /// Adds `id` as a node; false when it already was one.
    ///
    /// Fails only when the graph already holds `u32::MAX - 1` nodes.
    pub fn add_node(&mut self, id: RecordId) -> Result<bool> {
        if self.contains(id) {
            return Ok(false);
        }
        self.ensure_room(1, 0)?;
        self.intern(id)?;
        Ok(true)
    }

    /// Removes `id` and every edge incident to it; returns how many edges went, or `None` when
    /// `id` is not a node.
    pub fn remove_node(&mut self, id: RecordId) -> Option<usize> {
        let n = self.index.remove(&id)?;
        let mut dropped = 0;
        let mut out = self.inner.neighbors_directed(n, Outgoing).detach();
        while let Some((_, t)) = out.next(&self.inner) {
            if t != n {
                self.slots[t.index()].inc -= 1;
            }
            dropped += 1;
        }
        let mut inc = self.inner.neighbors_directed(n, Incoming).detach();
        while let Some((e, s)) = inc.next(&self.inner) {
            if s != n {
                let kind = self.inner[e].kind;
                let source = &mut self.slots[s.index()];
                source.out[kind.slot()] -= 1;
                if kind.carries_activation() {
                    source.drop_carrier(e);
                }
                dropped += 1;
            }
        }
        self.inner.remove_node(n);
        self.slots[n.index()] = Slot::new(id);
        Some(dropped)
    }

    /// Adds the edge `source -> target`, creating missing nodes, or merges into the existing
    /// edge with the same `(source, target, kind, relation)`: the weight is replaced and the
    /// fields `meta` sets overwrite the old ones.
    ///
    /// Errors (the graph is left unchanged): a weight that is NaN, infinite or negative
    /// ([`Error::OutOfRange`]); invalid metadata (see [`EdgeMeta::validate`]); a
    /// REQUIRES/ENABLES edge that would close a cycle among dependency edges, a self-loop
    /// included ([`Error::DependencyCycle`]).
    pub fn add_edge(
        &mut self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        weight: f64,
        meta: Option<EdgeMeta>,
    ) -> Result<EdgeInsert> {
        let weight = checked_weight(weight)?;
        let meta = checked_meta(meta)?;
        if kind.is_dependency() && self.would_close_cycle(source, target) {
            return Err(cycle_error(source, target, kind));
        }
        let new_nodes =
            usize::from(!self.contains(source)) + usize::from(source != target && !self.contains(target));
        self.ensure_room(new_nodes, 1)?;
        let s = self.intern(source)?;
        let t = self.intern(target)?;
        self.upsert(s, t, kind, weight, meta)
    }

    /// Adds `a -> b` and `b -> a` with the same kind and weight and no metadata (merging as
    /// [`add_edge`](Self::add_edge) does). A dependency kind is refused: the pair would be a
    /// cycle.
    pub fn add_bidirectional(
        &mut self,
        a: RecordId,
        b: RecordId,
        kind: EdgeKind,
        weight: f64,
    ) -> Result<[EdgeInsert; 2]> {
        let weight = checked_weight(weight)?;
        if kind.is_dependency() {
            return Err(cycle_error(b, a, kind));
        }
        let new_nodes = usize::from(!self.contains(a)) + usize::from(a != b && !self.contains(b));
        self.ensure_room(new_nodes, 2)?;
        let na = self.intern(a)?;
        let nb = self.intern(b)?;
        Ok([self.upsert(na, nb, kind, weight, None)?, self.upsert(nb, na, kind, weight, None)?])
    }

    /// Updates the edge `(source, target, kind, relation)` (exactly: `relation: None` names the
    /// edge without a label): replaces its weight when `weight` is given and overwrites the
    /// fields `meta` sets. Returns false when there is no such edge.
    ///
    /// `meta.relation`, if set, must equal `relation` (the label is the edge's identity; remove
    /// and add to relabel). Invalid values are refused and change nothing.
    pub fn update_edge(
        &mut self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        relation: Option<&str>,
        weight: Option<f64>,
        meta: Option<&EdgeMeta>,
    ) -> Result<bool> {
        let weight = weight.map(checked_weight).transpose()?;
        let meta = checked_meta(meta.cloned())?;
        if let Some(label) = meta.as_ref().and_then(|m| m.relation.as_deref()) {
            if Some(label) != relation {
                return Err(Error::invalid(
                    "relation",
                    format!("update names relation {label:?} for the edge labelled {relation:?}"),
                ));
            }
        }
        let Some(e) = self.find_index(source, target, kind, relation) else {
            return Ok(false);
        };
        if let Some(w) = weight {
            self.set_weight(e, w);
        }
        merge_meta(&mut self.inner[e].meta, meta);
        Ok(true)
    }

    /// The edge `source -> target` matching `kind` and `relation` (`None` matches any). When
    /// several match, the one with the smallest `(kind, relation)` is returned.
    pub fn find_edge(
        &self,
        source: RecordId,
        target: RecordId,
        kind: Option<EdgeKind>,
        relation: Option<&str>,
    ) -> Option<EdgeRef<'_>> {
        let s = *self.index.get(&source)?;
        let t = *self.index.get(&target)?;
        self.inner
            .edges_directed(s, Outgoing)
            .filter(|e| {
                let d = e.weight();
                e.target() == t
                    && kind.is_none_or(|k| d.kind == k)
                    && relation.is_none_or(|r| d.relation() == Some(r))
            })
            .min_by(|x, y| {
                let (x, y) = (x.weight(), y.weight());
                (x.kind, x.relation()).cmp(&(y.kind, y.relation()))
            })
            .map(|e| self.view(e))
    }

    /// Removes the edge `(source, target, kind, relation)` (exactly, as in
    /// [`update_edge`](Self::update_edge)); false when there is no such edge.
    pub fn remove_edge(
        &mut self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        relation: Option<&str>,
    ) -> bool {
        match self.find_index(source, target, kind, relation) {
            Some(e) => self.detach_edge(e),
            None => false,
        }
    }

    /// The targets of `id`'s outgoing edges of the given kinds, with their weights, sorted by
    /// target (then kind and relation). Empty when `id` is not a node.
    pub fn associated(&self, id: RecordId, kinds: &[EdgeKind]) -> Vec<(RecordId, f64)> {
        let mut found: Vec<(RecordId, EdgeKind, Option<&str>, f64)> = self
            .outgoing_raw(id)
            .filter(|e| kinds.contains(&e.weight().kind))
            .map(|e| {
                let d = e.weight();
                (self.id_of(e.target()), d.kind, d.relation(), d.weight)
            })
            .collect();
        found.sort_unstable_by(|x, y| (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2)));
        found.into_iter().map(|(t, _, _, w)| (t, w)).collect()
    }

    /// `id`'s outgoing edges (none when `id` is not a node).
    pub fn outgoing(&self, id: RecordId) -> impl Iterator<Item = EdgeRef<'_>> + '_ {
        self.outgoing_raw(id).map(|e| self.view(e))
    }

    /// `id`'s incoming edges (none when `id` is not a node).
    pub fn incoming(&self, id: RecordId) -> impl Iterator<Item = EdgeRef<'_>> + '_ {
        self.index
            .get(&id)
            .into_iter()
            .flat_map(|&n| self.inner.edges_directed(n, Incoming))
            .map(|e| self.view(e))
    }

    /// Number of `id`'s outgoing edges, of one kind or (`None`) of all kinds; 0 when `id` is
    /// not a node. Constant time: the counts are kept per node.
    pub fn out_degree(&self, id: RecordId, kind: Option<EdgeKind>) -> usize {
        self.index.get(&id).map_or(0, |&n| {
            let slot = &self.slots[n.index()];
            kind.map_or(slot.out_total(), |k| slot.out[k.slot()]) as usize
        })
    }

    /// Number of `id`'s incoming edges; 0 when `id` is not a node. Constant time.
    pub fn in_degree(&self, id: RecordId) -> usize {
        self.index.get(&id).map_or(0, |&n| self.slots[n.index()].inc as usize)
    }

    /// The sources of `id`'s incoming REQUIRES edges, sorted.
    pub fn dependencies(&self, id: RecordId) -> Vec<RecordId> {
        let mut found: Vec<RecordId> =
            self.incoming(id).filter(|e| e.kind == EdgeKind::Requires).map(|e| e.source).collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The targets of `id`'s outgoing REQUIRES edges, sorted.
    pub fn dependents(&self, id: RecordId) -> Vec<RecordId> {
        let mut found: Vec<RecordId> =
            self.outgoing(id).filter(|e| e.kind == EdgeKind::Requires).map(|e| e.target).collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The strongly connected components of more than one node among REQUIRES/ENABLES edges
    /// (Tarjan), each sorted, the list sorted. Empty for every graph built through this API,
    /// which refuses dependency cycles; a check for graphs assembled by other means.
    pub fn cycles(&self) -> Vec<Vec<RecordId>> {
        let deps = EdgeFiltered::from_fn(&self.inner, |e| e.weight().kind.is_dependency());
        let mut found: Vec<Vec<RecordId>> = petgraph::algo::tarjan_scc(&deps)
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .map(|scc| {
                let mut ids: Vec<RecordId> = scc.into_iter().map(|n| self.id_of(n)).collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        found.sort_unstable();
        found
    }

    /// Every node, ordered so that each REQUIRES/ENABLES edge's source comes before its
    /// target (Kahn's algorithm; among the nodes ready at a step the smallest id goes first).
    /// `None` if the dependency edges hold a cycle.
    pub fn topological_order(&self) -> Option<Vec<RecordId>> {
        let mut pending = vec![0u32; self.inner.node_bound()];
        for e in self.inner.edge_references() {
            if e.weight().kind.is_dependency() {
                pending[e.target().index()] += 1;
            }
        }
        let mut ready: BinaryHeap<Reverse<(RecordId, NodeIndex<Ix>)>> = self
            .inner
            .node_indices()
            .filter(|n| pending[n.index()] == 0)
            .map(|n| Reverse((self.id_of(n), n)))
            .collect();
        let mut order = Vec::with_capacity(self.node_count());
        while let Some(Reverse((id, n))) = ready.pop() {
            order.push(id);
            for e in self.inner.edges_directed(n, Outgoing) {
                if e.weight().kind.is_dependency() {
                    let t = e.target();
                    pending[t.index()] -= 1;
                    if pending[t.index()] == 0 {
                        ready.push(Reverse((self.id_of(t), t)));
                    }
                }
            }
        }
        (order.len() == self.node_count()).then_some(order)
    }

    /// Multiplies the weight of every edge of the given kinds by `factor` (in `(0, 1)`), and
    /// when `prune` removes those whose weight is then at or below `floor` (finite, `>= 0`).
    /// Returns how many edges were removed.
    pub fn decay_edges(&mut self, factor: f64, kinds: &[EdgeKind], floor: f64, prune: bool) -> Result<usize> {
        if !(factor > 0.0 && factor < 1.0) {
            return Err(Error::OutOfRange { field: "factor", value: factor, expected: "a number in (0, 1)" });
        }
        check_non_negative("floor", floor)?;
        let _s = tracing::debug_span!("decay_edges", n_edges = self.edge_count(), prune).entered();
        let mut selected = [false; 5];
        for k in kinds {
            selected[k.slot()] = true;
        }
        for d in self.inner.edge_weights_mut() {
            if selected[d.kind.slot()] {
                d.weight *= factor;
            }
        }
        if selected.iter().zip(EdgeKind::ALL).any(|(&on, k)| on && k.carries_activation()) {
            for n in self.inner.node_indices() {
                for c in &mut self.slots[n.index()].carriers {
                    c.weight = self.inner[EdgeIndex::new(c.edge as usize)].weight;
                }
            }
        }
        if !prune {
            return Ok(0);
        }
        let doomed: Vec<EdgeIndex<Ix>> = self
            .inner
            .edge_references()
            .filter(|e| selected[e.weight().kind.slot()] && e.weight().weight <= floor)
            .map(|e| e.id())
            .collect();
        for &e in &doomed {
            self.detach_edge(e);
        }
        Ok(doomed.len())
    }

    /// The node index of `id`, adding the node if it is missing. The caller has checked room.
    pub(super) fn intern(&mut self, id: RecordId) -> Result<NodeIndex<Ix>> {
        if let Some(&n) = self.index.get(&id) {
            return Ok(n);
        }
        let n = self.inner.try_add_node(()).map_err(|_| full("nodes"))?;
        if n.index() == self.slots.len() {
            self.slots.push(Slot::new(id));
        } else {
            self.slots[n.index()] = Slot::new(id);
        }
        self.index.insert(id, n);
        Ok(n)
    }

    /// Merges into the edge `(s, t, kind, relation)` or adds it, with validated values and
    /// without a cycle check.
    pub(super) fn upsert(
        &mut self,
        s: NodeIndex<Ix>,
        t: NodeIndex<Ix>,
        kind: EdgeKind,
        weight: f64,
        meta: Option<EdgeMeta>,
    ) -> Result<EdgeInsert> {
        let relation = meta.as_ref().and_then(|m| m.relation.as_deref());
        if let Some(e) = self.find_between(s, t, kind, relation) {
            let previous_weight = self.set_weight(e, weight);
            merge_meta(&mut self.inner[e].meta, meta);
            return Ok(EdgeInsert::Merged { previous_weight });
        }
        let e = self
            .inner
            .try_add_edge(s, t, EdgeData { weight, meta: meta.map(Box::new), kind })
            .map_err(|_| full("edges"))?;
        let source = &mut self.slots[s.index()];
        source.out[kind.slot()] += 1;
        if kind.carries_activation() {
            source.carriers.push(Carrier { target: t.index() as u32, edge: e.index() as u32, weight });
        }
        self.slots[t.index()].inc += 1;
        Ok(EdgeInsert::Added)
    }

    /// Fails when adding `nodes` nodes and `edges` edges would overflow petgraph's `u32`
    /// indices.
    pub(super) fn ensure_room(&self, nodes: usize, edges: usize) -> Result<()> {
        if self.node_count() + nodes > MAX_ELEMENTS {
            return Err(full("nodes"));
        }
        if self.edge_count() + edges > MAX_ELEMENTS {
            return Err(full("edges"));
        }
        Ok(())
    }

    /// Builds the borrowed view of a petgraph edge.
    fn view<'a>(&'a self, e: petgraph::stable_graph::EdgeReference<'a, EdgeData, Ix>) -> EdgeRef<'a> {
        let d = e.weight();
        EdgeRef {
            source: self.id_of(e.source()),
            target: self.id_of(e.target()),
            kind: d.kind,
            weight: d.weight,
            meta: d.meta.as_deref(),
        }
    }

    fn outgoing_raw(
        &self,
        id: RecordId,
    ) -> impl Iterator<Item = petgraph::stable_graph::EdgeReference<'_, EdgeData, Ix>> + '_ {
        self.index.get(&id).into_iter().flat_map(|&n| self.inner.edges_directed(n, Outgoing))
    }

    /// The edge with exactly this identity, by ids.
    fn find_index(
        &self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        relation: Option<&str>,
    ) -> Option<EdgeIndex<Ix>> {
        let s = *self.index.get(&source)?;
        let t = *self.index.get(&target)?;
        self.find_between(s, t, kind, relation)
    }

    /// The edge with exactly this identity, walking the shorter of `s`'s outgoing and `t`'s
    /// incoming lists.
    fn find_between(
        &self,
        s: NodeIndex<Ix>,
        t: NodeIndex<Ix>,
        kind: EdgeKind,
        relation: Option<&str>,
    ) -> Option<EdgeIndex<Ix>> {
        let same = |d: &EdgeData| d.kind == kind && d.relation() == relation;
        if self.slots[s.index()].out_total() <= self.slots[t.index()].inc {
            self.inner.edges_directed(s, Outgoing).find(|e| e.target() == t && same(e.weight()))
        } else {
            self.inner.edges_directed(t, Incoming).find(|e| e.source() == s && same(e.weight()))
        }
        .map(|e| e.id())
    }

    /// Removes an edge and updates the degree counters.
    fn detach_edge(&mut self, e: EdgeIndex<Ix>) -> bool {
        let Some((s, t)) = self.inner.edge_endpoints(e) else {
            return false;
        };
        let Some(data) = self.inner.remove_edge(e) else {
            return false;
        };
        let source = &mut self.slots[s.index()];
        source.out[data.kind.slot()] -= 1;
        if data.kind.carries_activation() {
            source.drop_carrier(e);
        }
        self.slots[t.index()].inc -= 1;
        true
    }

    /// The id of the node at `n`.
    #[inline]
    pub(super) fn id_of(&self, n: NodeIndex<Ix>) -> RecordId {
        self.slots[n.index()].id
    }

    /// Sets an edge's weight (in petgraph and in its source's carrier list); returns the old one.
    fn set_weight(&mut self, e: EdgeIndex<Ix>, weight: f64) -> f64 {
        let data = &mut self.inner[e];
        let previous = std::mem::replace(&mut data.weight, weight);
        if data.kind.carries_activation() {
            if let Some((s, _)) = self.inner.edge_endpoints(e) {
                if let Some(c) = self.slots[s.index()].carrier_mut(e) {
                    c.weight = weight;
                }
            }
        }
        previous
    }

    /// True when a dependency edge `source -> target` would close a cycle: it is a self-loop,
    /// or `target` already reaches `source` along dependency edges.
    fn would_close_cycle(&self, source: RecordId, target: RecordId) -> bool {
        if source == target {
            return true;
        }
        let (Some(&s), Some(&t)) = (self.index.get(&source), self.index.get(&target)) else {
            return false;
        };
        let mut stack = vec![t];
        let mut seen = FxHashSet::default();
        seen.insert(t);
        while let Some(n) = stack.pop() {
            for e in self.inner.edges_directed(n, Outgoing) {
                if !e.weight().kind.is_dependency() {
                    continue;
                }
                let next = e.target();
                if next == s {
                    return true;
                }
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        false
    }
}

/// Spreading activation over the graph (`spec/maxim-reference.md` §2.3).
impl Graph {
    /// Spreads activation from `seeds` sequentially, exactly as the reference does
    /// ([`spread`](super::spread)).
    pub fn spread(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread(self, seeds, params)
    }

    /// Spreads activation level by level, large levels on rayon; the same result as
    /// [`spread`](Self::spread) ([`spread_parallel`](super::spread_parallel)).
    pub fn spread_parallel(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread_parallel(self, seeds, params)
    }

    /// [`spread`](Self::spread), also carrying each edge's valence along the path that set a
    /// node's maximum ([`spread_with_valence`](super::spread_with_valence)).
    pub fn spread_with_valence(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread_with_valence(self, seeds, params)
    }
}

impl Adjacency for Graph {
    fn node_bound(&self) -> usize {
        self.inner.node_bound()
    }

    #[inline]
    fn dense_index(&self, id: RecordId) -> Option<u32> {
        self.index.get(&id).map(|n| n.index() as u32)
    }

    #[inline]
    fn record_id(&self, node: u32) -> RecordId {
        self.slots[node as usize].id
    }

    #[inline]
    fn for_each_carrier<F: FnMut(u32, f64)>(&self, node: u32, mut visit: F) {
        for c in &self.slots[node as usize].carriers {
            visit(c.target, c.weight);
        }
    }

    fn for_each_carrier_valence<F: FnMut(u32, f64, f64)>(&self, node: u32, mut visit: F) {
        for c in &self.slots[node as usize].carriers {
            visit(c.target, c.weight, self.inner[EdgeIndex::new(c.edge as usize)].valence());
        }
    }
}

impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        self.node_count() == other.node_count()
            && self.edge_count() == other.edge_count()
            && self.nodes().all(|id| other.contains(id))
            && self.edges().all(|e| {
                other.find_index(e.source, e.target, e.kind, e.relation()).is_some_and(|o| {
                    let o = &other.inner[o];
                    o.weight == e.weight && o.meta.as_deref() == e.meta
                })
            })
    }
}

impl GraphView for Graph {
    fn contains(&self, id: RecordId) -> bool {
        Graph::contains(self, id)
    }

    fn node_count(&self) -> usize {
        Graph::node_count(self)
    }

    fn edge_count(&self) -> usize {
        Graph::edge_count(self)
    }

    fn for_each_outgoing(&self, id: RecordId, visit: &mut dyn FnMut(RecordId, EdgeKind, f64)) {
        for e in self.outgoing_raw(id) {
            visit(self.id_of(e.target()), e.weight().kind, e.weight().weight);
        }
    }
}

/// Checks an edge weight (finite, `>= 0`) and turns `-0.0` into `+0.0`, so that the bits of
/// every activation order like its value.
pub(super) fn checked_weight(weight: f64) -> Result<f64> {
    check_non_negative("weight", weight).map(f64::abs)
}

/// Validates metadata; metadata that sets nothing becomes `None`.
pub(super) fn checked_meta(meta: Option<EdgeMeta>) -> Result<Option<EdgeMeta>> {
    match meta {
        Some(m) if !m.is_empty() => {
            m.validate()?;
            Ok(Some(m))
        }
        _ => Ok(None),
    }
}

pub(super) fn cycle_error(source: RecordId, target: RecordId, kind: EdgeKind) -> Error {
    Error::DependencyCycle { source_id: source, target_id: target, kind: kind.as_str() }
}

fn merge_meta(slot: &mut Option<Box<EdgeMeta>>, update: Option<EdgeMeta>) {
    let Some(update) = update else { return };
    match slot {
        Some(m) => m.overwrite_with(update),
        None => *slot = Some(Box::new(update)),
    }
}

fn full(what: &'static str) -> Error {
    Error::invalid("graph", format!("the graph cannot hold more {what} (u32 indices exhausted)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<const N: usize>() -> [RecordId; N] {
        std::array::from_fn(|i| RecordId::from_u128(i as u128 + 1))
    }

    #[test]
    fn bad_weights_and_metadata_are_refused_without_change() {
        let [a, b] = ids();
        let mut g = Graph::new();
        for w in [f64::NAN, f64::INFINITY, -0.5] {
            assert!(matches!(
                g.add_edge(a, b, EdgeKind::Associates, w, None),
                Err(Error::OutOfRange { field: "weight", .. })
            ));
        }
        let bad = [
            EdgeMeta::default().with_confidence(f64::NAN),
            EdgeMeta::default().with_confidence(-0.1),
            EdgeMeta::default().with_valence(1.5),
            EdgeMeta::relation(""),
        ];
        for m in bad {
            assert!(g.add_edge(a, b, EdgeKind::Associates, 1.0, Some(m)).is_err());
        }
        assert!(g.is_empty());
        assert_eq!(g.edge_count(), 0);
    }

    #[test]
    fn negative_zero_weight_is_stored_as_positive_zero() {
        let [a, b] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Associates, -0.0, None).unwrap();
        assert!(g.find_edge(a, b, None, None).unwrap().weight.is_sign_positive());
    }

    #[test]
    fn merging_replaces_weight_and_overwrites_only_given_fields() {
        let [a, b] = ids();
        let mut g = Graph::new();
        let first = EdgeMeta::relation("IS_A").with_confidence(0.5).with_valence(0.2);
        g.add_edge(a, b, EdgeKind::Associates, 0.3, Some(first)).unwrap();
        let second = EdgeMeta::relation("IS_A").with_confidence(0.9);
        let r = g.add_edge(a, b, EdgeKind::Associates, 0.7, Some(second)).unwrap();
        assert_eq!(r, EdgeInsert::Merged { previous_weight: 0.3 });
        let e = g.find_edge(a, b, Some(EdgeKind::Associates), Some("IS_A")).unwrap();
        assert_eq!((e.weight, e.confidence(), e.valence()), (0.7, Some(0.9), Some(0.2)));
        assert_eq!(g.edge_count(), 1);
        // Another kind is another edge.
        g.add_edge(a, b, EdgeKind::Causes, 0.7, None).unwrap();
        assert_eq!(g.edge_count(), 2);
        assert_eq!(g.out_degree(a, Some(EdgeKind::Associates)), 1);
        assert_eq!(g.out_degree(a, None), 2);
        assert_eq!(g.in_degree(b), 2);
    }

    #[test]
    fn find_edge_prefers_the_smallest_kind_and_relation() {
        let [a, b] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Causes, 0.1, None).unwrap();
        g.add_edge(a, b, EdgeKind::Associates, 0.2, Some(EdgeMeta::relation("RELATED_TO"))).unwrap();
        g.add_edge(a, b, EdgeKind::Associates, 0.3, Some(EdgeMeta::relation("HAS_PART"))).unwrap();
        assert_eq!(g.find_edge(a, b, None, None).unwrap().relation(), Some("HAS_PART"));
        assert_eq!(g.find_edge(a, b, Some(EdgeKind::Causes), None).unwrap().weight, 0.1);
        assert!(g.find_edge(a, b, Some(EdgeKind::Requires), None).is_none());
        assert!(g.find_edge(b, a, None, None).is_none());
    }

    #[test]
    fn update_edge_is_exact_and_validated() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Associates, 0.3, Some(EdgeMeta::relation("IS_A"))).unwrap();
        let k = EdgeKind::Associates;
        assert!(!g.update_edge(a, b, k, None, Some(0.9), None).unwrap());
        assert!(!g.update_edge(a, c, k, Some("IS_A"), Some(0.9), None).unwrap());
        let conf = EdgeMeta::default().with_confidence(0.8);
        assert!(g.update_edge(a, b, k, Some("IS_A"), Some(0.9), Some(&conf)).unwrap());
        let e = g.find_edge(a, b, None, None).unwrap();
        assert_eq!((e.weight, e.confidence()), (0.9, Some(0.8)));
        assert!(g.update_edge(a, b, k, Some("IS_A"), Some(f64::NAN), None).is_err());
        let relabel = EdgeMeta::relation("HAS_PART");
        assert!(g.update_edge(a, b, k, Some("IS_A"), None, Some(&relabel)).is_err());
        assert_eq!(g.find_edge(a, b, None, None).unwrap().weight, 0.9);
    }

    #[test]
    fn remove_edge_and_node_keep_counters() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        g.add_bidirectional(a, b, EdgeKind::Associates, 0.5).unwrap();
        g.add_edge(a, a, EdgeKind::Associates, 0.5, None).unwrap();
        g.add_edge(c, a, EdgeKind::Requires, 1.0, None).unwrap();
        assert_eq!(g.edge_count(), 4);
        assert!(g.remove_edge(b, a, EdgeKind::Associates, None));
        assert!(!g.remove_edge(b, a, EdgeKind::Associates, None));
        assert_eq!(g.out_degree(b, None), 0);
        assert_eq!(g.remove_node(a), Some(3));
        assert_eq!(g.remove_node(a), None);
        assert_eq!((g.node_count(), g.edge_count()), (2, 0));
        assert_eq!((g.out_degree(c, None), g.in_degree(b)), (0, 0));
    }

    #[test]
    fn dependency_queries_are_sorted() {
        let [a, b, c, d] = ids();
        let mut g = Graph::new();
        g.add_edge(c, d, EdgeKind::Requires, 1.0, None).unwrap();
        g.add_edge(a, d, EdgeKind::Requires, 1.0, None).unwrap();
        g.add_edge(b, d, EdgeKind::Enables, 1.0, None).unwrap();
        g.add_edge(d, b, EdgeKind::Associates, 1.0, None).unwrap();
        assert_eq!(g.dependencies(d), vec![a, c]);
        assert_eq!(g.dependents(a), vec![d]);
        assert_eq!(g.topological_order(), Some(vec![a, b, c, d]));
        assert!(g.cycles().is_empty());
        assert_eq!(g.associated(d, &[EdgeKind::Associates, EdgeKind::Causes]), vec![(b, 1.0)]);
        assert!(matches!(
            g.add_bidirectional(a, b, EdgeKind::Requires, 1.0),
            Err(Error::DependencyCycle { .. })
        ));
    }

    #[test]
    fn decay_edges_validates_and_prunes() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Associates, 0.04, None).unwrap();
        g.add_edge(a, c, EdgeKind::Associates, 1.0, None).unwrap();
        g.add_edge(b, c, EdgeKind::Causes, 0.01, None).unwrap();
        for f in [0.0, 1.0, f64::NAN, -0.5] {
            assert!(g.decay_edges(f, &[EdgeKind::Associates], 0.01, true).is_err());
        }
        assert!(g.decay_edges(0.5, &[EdgeKind::Associates], f64::NAN, true).is_err());
        assert_eq!(g.decay_edges(0.5, &[EdgeKind::Associates], 0.02, false).unwrap(), 0);
        assert_eq!(g.edge_count(), 3);
        assert_eq!(g.decay_edges(0.5, &[EdgeKind::Associates], 0.01, true).unwrap(), 1);
        assert_eq!(g.associated(a, &[EdgeKind::Associates]), vec![(c, 0.25)]);
        assert_eq!(g.find_edge(b, c, None, None).unwrap().weight, 0.01);
        assert_eq!(g.out_degree(a, Some(EdgeKind::Associates)), 1);
    }

    #[test]
    fn graph_view_lists_outgoing_edges() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Associates, 0.5, None).unwrap();
        g.add_edge(a, c, EdgeKind::Inhibits, 0.25, None).unwrap();
        let view: &dyn GraphView = &g;
        let mut seen = Vec::new();
        view.for_each_outgoing(a, &mut |t, k, w| seen.push((t, k, w)));
        seen.sort_by_key(|x| x.0);
        assert_eq!(seen, vec![(b, EdgeKind::Associates, 0.5), (c, EdgeKind::Inhibits, 0.25)]);
        assert_eq!((view.node_count(), view.edge_count()), (3, 2));
        assert!(view.contains(c) && !view.contains(RecordId::from_u128(99)));
    }
}
