//! [`Graph`]: the mutable associative graph, on a petgraph `StableDiGraph`.
//!
//! Nodes are [`RecordId`]s, mapped to petgraph node indices by an `FxHashMap`. Edges carry an
//! [`EdgeKind`], a weight (finite, `>= 0`) and optional metadata ([`EdgeMeta`] in,
//! [`EdgeMetaRef`] out). No edge allocates anything of its own: a relation label is interned
//! in the graph's label table (the edge holds its 16-bit id) and a confidence or valence sits
//! in a reusable slot of a side table, so an edge is 16 bytes in petgraph. The identity of an
//! edge is `(source, target, kind, relation)`: adding an edge that already exists replaces its
//! weight and overwrites the metadata fields the new metadata sets (the original appended a
//! parallel duplicate). REQUIRES/ENABLES edges that would close a cycle among dependency edges
//! are refused and leave the graph unchanged.
//!
//! Beside petgraph, each node keeps its degree counters and its outgoing ASSOCIATES/CAUSES
//! edges as one run of `(target, edge, weight)` entries in an arena shared by all nodes: a
//! spread reads one node's edges from one or two cache lines instead of following petgraph's
//! linked edge lists. [`remove_nodes`](Graph::remove_nodes) removes many nodes in one pass.
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
//! assert_eq!(g.remove_nodes(&[cup, kitchen, mug]), 2);
//! assert!(g.is_empty());
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::visit::{
    EdgeFiltered, EdgeIndexable as _, EdgeRef as _, IntoEdgeReferences as _, NodeIndexable as _,
};
use rustc_hash::FxHashMap;

use super::arena::{Carrier, Slot};
use super::meta::{Extras, Label, Labels, NO_EXTRA};
use super::{Activation, ActivationParams, Adjacency, EdgeKind, EdgeMeta, EdgeMetaRef};
use crate::contracts::GraphView;
use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::check_non_negative;

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
    /// The edge's metadata ([`EdgeMetaRef::EMPTY`] when it has none; `meta.cloned()` gives
    /// the owned form).
    pub meta: EdgeMetaRef<'a>,
}

impl<'a> EdgeRef<'a> {
    /// The relation label, if any.
    pub fn relation(&self) -> Option<&'a str> {
        self.meta.relation
    }

    /// The confidence, if set.
    pub fn confidence(&self) -> Option<f64> {
        self.meta.confidence
    }

    /// The valence, if set.
    pub fn valence(&self) -> Option<f64> {
        self.meta.valence
    }
}

/// An edge's payload in petgraph (16 bytes; an edge with its links is 32).
#[derive(Debug, Clone, Copy)]
pub(super) struct EdgeData {
    pub(super) weight: f64,
    /// The edge's slot in [`Graph::extras`], or [`NO_EXTRA`].
    pub(super) extra: u32,
    pub(super) label: Option<Label>,
    pub(super) kind: EdgeKind,
}

/// The index type of the petgraph graph underneath.
pub(super) type Ix = u32;

/// Carriers in a run that [`Graph::find_between`] always scans rather than walk a list (two
/// cache lines).
const SHORT_RUN: u32 = 8;

/// Most nodes or edges the graph holds (petgraph reserves `u32::MAX` as "no index").
const MAX_ELEMENTS: usize = u32::MAX as usize - 1;

/// A bulk removal rebuilds the edge lists (one pass over every edge) instead of unlinking
/// edge by edge when the removed edges number at least `edge_count / REBUILD_RATIO`.
/// Unlinking one edge walks the other endpoint's petgraph list through scattered memory; the
/// rebuild streams the edge array.
const REBUILD_RATIO: usize = 12;

/// Scratch space of the dependency-cycle check, kept between calls (a clone starts empty).
#[derive(Debug, Default)]
struct Scratch {
    stack: Vec<NodeIndex<Ix>>,
    /// Per node index, the call that last reached it.
    seen: Vec<u32>,
    call: u32,
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// A directed graph over [`RecordId`]s with typed, weighted edges, on a petgraph
/// `StableDiGraph`.
///
/// An edge is identified by `(source, target, kind, relation)`:
/// [`add_edge`](Self::add_edge) of an existing edge replaces its weight and overwrites the
/// metadata fields it sets. REQUIRES/ENABLES edges stay acyclic. Degree counts are kept per
/// node, and each node's outgoing ASSOCIATES/CAUSES edges are also kept in one contiguous
/// run, which is what [`spread`](Self::spread) walks.
///
/// Iteration orders: [`nodes`](Self::nodes), [`outgoing`](Self::outgoing) and
/// [`incoming`](Self::incoming) follow the internal layout (deterministic for a given history
/// of calls); calls that return a `Vec` sort it by id. Two graphs are equal when they hold the
/// same nodes and the same edges with the same weights and metadata, whatever their history.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub(super) inner: StableDiGraph<(), EdgeData, Ix>,
    /// Per node index; the slot of a removed node is stale until the index is reused.
    pub(super) slots: Vec<Slot>,
    /// The id of each node index, beside the slots rather than in them: a spread reads the
    /// ids of every node it reaches but the slots of those it expands only, and reached
    /// nodes outnumber expanded ones. Stale for a removed node, like its slot.
    pub(super) ids: Vec<RecordId>,
    pub(super) index: FxHashMap<RecordId, NodeIndex<Ix>>,
    /// Every node's carrier run; what lies outside the live runs is garbage.
    pub(super) arena: Vec<Carrier>,
    /// The sum of the live runs' capacities.
    pub(super) arena_used: usize,
    pub(super) labels: Labels,
    pub(super) extras: Extras,
    /// Edges per kind.
    kind_counts: [usize; 5],
    scratch: Scratch,
    /// Tests force bulk removals to rebuild (`Some(true)`) or to unlink (`Some(false)`).
    #[cfg(test)]
    pub(super) force_rebuild: Option<bool>,
}

impl Graph {
    /// Most distinct relation labels one graph holds; [`add_edge`](Self::add_edge) with a new
    /// label past it fails.
    pub const MAX_RELATION_LABELS: usize = Labels::MAX;

    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty graph with room for `nodes` nodes and `edges` edges.
    pub fn with_capacity(nodes: usize, edges: usize) -> Self {
        let mut index = FxHashMap::default();
        index.reserve(nodes);
        Self {
            inner: StableDiGraph::with_capacity(nodes, edges),
            slots: Vec::with_capacity(nodes),
            ids: Vec::with_capacity(nodes),
            index,
            arena: Vec::with_capacity(edges),
            ..Self::default()
        }
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
        Some(self.unlink_node(n))
    }

    /// Removes every node of `ids` (ids that are not nodes, or repeated, are skipped) with every
    /// edge incident to them; returns how many nodes were removed.
    ///
    /// The result is the same as calling [`remove_node`](Self::remove_node) for each id, but
    /// when the removed nodes hold a sizeable share of the edges the edge lists are rebuilt in
    /// one pass over the edges (O(V + E)) instead of being unlinked edge by edge.
    pub fn remove_nodes(&mut self, ids: &[RecordId]) -> usize {
        let doomed: Vec<NodeIndex<Ix>> = ids.iter().filter_map(|id| self.index.remove(id)).collect();
        if doomed.is_empty() {
            return 0;
        }
        let _s =
            tracing::debug_span!("graph_remove_nodes", n_nodes = doomed.len(), n_edges = self.edge_count())
                .entered();
        let incident: usize =
            doomed.iter().map(|n| (self.out_total(*n) + self.slots[n.index()].inc) as usize).sum();
        if self.rebuilds_for(incident) {
            let mut dead = vec![false; self.inner.node_bound()];
            for n in &doomed {
                dead[n.index()] = true;
            }
            self.rebuild_edges(|s, t, _| !dead[s] && !dead[t]);
            for &n in &doomed {
                self.inner.remove_node(n);
                self.reset_node(n);
            }
        } else {
            // Newest nodes first, by index as a proxy for age: an edge joins the front of its
            // endpoints' lists, so unlinking the newer ones first shortens the walks that
            // unlink the older ones.
            let mut doomed = doomed;
            doomed.sort_unstable_by_key(|n| std::cmp::Reverse(n.index()));
            for &n in &doomed {
                self.unlink_node(n);
            }
            return doomed.len();
        }
        doomed.len()
    }

    /// Adds the edge `source -> target`, creating missing nodes, or merges into the existing
    /// edge with the same `(source, target, kind, relation)`: the weight is replaced and the
    /// fields `meta` sets overwrite the old ones.
    ///
    /// Errors (the graph is left unchanged): a weight that is NaN, infinite or negative
    /// ([`Error::OutOfRange`]); invalid metadata (see [`EdgeMeta::validate`]); a new relation
    /// label past [`MAX_RELATION_LABELS`](Self::MAX_RELATION_LABELS); a REQUIRES/ENABLES edge
    /// that would close a cycle among dependency edges, a self-loop included
    /// ([`Error::DependencyCycle`]).
    #[expect(clippy::needless_pass_by_value, reason = "callers build the metadata for the call")]
    pub fn add_edge(
        &mut self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        weight: f64,
        meta: Option<EdgeMeta>,
    ) -> Result<EdgeInsert> {
        let meta = meta.as_ref().map_or(EdgeMetaRef::EMPTY, EdgeMeta::view);
        self.add_edge_ref(source, target, kind, weight, meta)
    }

    /// [`add_edge`](Self::add_edge) with borrowed metadata ([`EdgeMetaRef::EMPTY`] for none),
    /// which spares the caller building a `String` for the relation label.
    pub fn add_edge_ref(
        &mut self,
        source: RecordId,
        target: RecordId,
        kind: EdgeKind,
        weight: f64,
        meta: EdgeMetaRef<'_>,
    ) -> Result<EdgeInsert> {
        let weight = checked_weight(weight)?;
        meta.validate()?;
        if kind.is_dependency() && self.would_close_cycle(source, target) {
            return Err(cycle_error(source, target, kind));
        }
        let new_nodes =
            usize::from(!self.contains(source)) + usize::from(source != target && !self.contains(target));
        self.ensure_room(new_nodes, 1)?;
        let label = meta.relation.map(|r| self.labels.intern(r)).transpose()?;
        let s = self.intern(source)?;
        let t = self.intern(target)?;
        self.upsert(s, t, kind, weight, label, meta)
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
        let none = EdgeMetaRef::EMPTY;
        Ok([self.upsert(na, nb, kind, weight, None, none)?, self.upsert(nb, na, kind, weight, None, none)?])
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
        let meta = meta.map_or(EdgeMetaRef::EMPTY, EdgeMeta::view);
        meta.validate()?;
        if let Some(label) = meta.relation
            && Some(label) != relation
        {
            return Err(Error::invalid(
                "relation",
                format!("update names relation {label:?} for the edge labelled {relation:?}"),
            ));
        }
        let Some(e) = self.find_index(source, target, kind, relation) else {
            return Ok(false);
        };
        if let Some(w) = weight {
            self.set_weight(e, w);
        }
        self.merge_extra(e, meta);
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
        let label = match relation {
            Some(r) => Some(self.labels.get(r)?),
            None => None,
        };
        if let (Some(kind), Some(_)) = (kind, label) {
            // A whole identity names at most one edge, which the carrier run finds without
            // walking petgraph's linked list.
            let e = self.find_between(s, t, kind, label)?;
            let d = &self.inner[e];
            return Some(EdgeRef { source, target, kind, weight: d.weight, meta: self.meta_of(d) });
        }
        self.inner
            .edges_directed(s, Outgoing)
            .filter(|e| {
                let d = e.weight();
                e.target() == t
                    && kind.is_none_or(|k| d.kind == k)
                    && label.is_none_or(|l| d.label == Some(l))
            })
            .min_by(|x, y| {
                let (x, y) = (x.weight(), y.weight());
                (x.kind, self.labels.name_of(x.label)).cmp(&(y.kind, self.labels.name_of(y.label)))
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
                (self.id_of(e.target()), d.kind, self.labels.name_of(d.label), d.weight)
            })
            .collect();
        found.sort_unstable_by(|x, y| (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2)));
        found.into_iter().map(|(t, _, _, w)| (t, w)).collect()
    }

    /// `id`'s outgoing edges (none when `id` is not a node).
    pub fn outgoing(&self, id: RecordId) -> impl Iterator<Item = EdgeRef<'_>> + '_ {
        self.outgoing_raw(id).map(|e| self.view(e))
    }

    /// `id`'s outgoing edges whose weight `keep` accepts, asked edge by edge as the iterator
    /// advances, before anything else of the edge is read: a caller that keeps the heaviest
    /// few can raise its floor as it goes and pay only for the edges above it.
    ///
    /// ```
    /// use std::cell::Cell;
    /// use maxim_core::graph::{EdgeKind, Graph};
    /// use maxim_core::RecordId;
    /// let [a, b, c] = [1, 2, 3].map(RecordId::from_u128);
    /// let mut g = Graph::new();
    /// g.add_edge(a, b, EdgeKind::Associates, 0.9, None)?;
    /// g.add_edge(a, c, EdgeKind::Associates, 0.2, None)?;
    /// let floor = Cell::new(0.5);
    /// let heavy: Vec<RecordId> = g.outgoing_where(a, |w| w >= floor.get()).map(|e| e.target).collect();
    /// assert_eq!(heavy, vec![b]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn outgoing_where<F: FnMut(f64) -> bool>(
        &self,
        id: RecordId,
        mut keep: F,
    ) -> impl Iterator<Item = EdgeRef<'_>> + use<'_, F> {
        self.outgoing_raw(id).filter(move |e| keep(e.weight().weight)).map(|e| self.view(e))
    }

    /// [`outgoing_where`](Self::outgoing_where) for `id`'s incoming edges.
    pub fn incoming_where<F: FnMut(f64) -> bool>(
        &self,
        id: RecordId,
        mut keep: F,
    ) -> impl Iterator<Item = EdgeRef<'_>> + use<'_, F> {
        self.index
            .get(&id)
            .into_iter()
            .flat_map(|&n| self.inner.edges_directed(n, Incoming))
            .filter(move |e| keep(e.weight().weight))
            .map(|e| self.view(e))
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
            kind.map_or_else(|| self.out_total(n), |k| self.slots[n.index()].out[k.slot()]) as usize
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
        if !self.has_dependency_edges() {
            return Vec::new();
        }
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
        // The carriers hold the same weights: the same product gives the same bits.
        let carrier_kinds = [EdgeKind::Associates, EdgeKind::Causes];
        let any_carrier = carrier_kinds.iter().any(|k| selected[k.slot()]);
        let every_carrier =
            carrier_kinds.iter().all(|k| selected[k.slot()] || self.kind_counts[k.slot()] == 0);
        if any_carrier && every_carrier {
            // Garbage outside the live runs may be multiplied too: it is never read.
            for c in &mut self.arena {
                c.weight *= factor;
            }
        } else if any_carrier {
            let mut hit = vec![false; self.inner.edge_bound()];
            for e in self.inner.edge_references() {
                let kind = e.weight().kind;
                hit[e.id().index()] = kind.carries_activation() && selected[kind.slot()];
            }
            let Self { slots, arena, .. } = self;
            for slot in slots.iter() {
                for c in &mut arena[slot.run()] {
                    if hit[c.edge as usize] {
                        c.weight *= factor;
                    }
                }
            }
        }
        if !prune {
            return Ok(0);
        }
        let doomed = |d: &EdgeData| selected[d.kind.slot()] && d.weight <= floor;
        let n_doomed = self.inner.edge_weights().filter(|d| doomed(d)).count();
        if self.rebuilds_for(n_doomed) {
            self.rebuild_edges(|_, _, d| !doomed(d));
        } else {
            let found: Vec<EdgeIndex<Ix>> =
                self.inner.edge_references().filter(|e| doomed(e.weight())).map(|e| e.id()).collect();
            for e in found {
                self.detach_edge(e);
            }
        }
        Ok(n_doomed)
    }

    /// The node index of `id`, adding the node if it is missing. The caller has checked room.
    pub(super) fn intern(&mut self, id: RecordId) -> Result<NodeIndex<Ix>> {
        if let Some(&n) = self.index.get(&id) {
            return Ok(n);
        }
        let n = self.inner.try_add_node(()).map_err(|_| full("nodes"))?;
        if n.index() == self.slots.len() {
            self.slots.push(Slot::new());
            self.ids.push(id);
        } else {
            self.slots[n.index()] = Slot::new();
            self.ids[n.index()] = id;
        }
        self.index.insert(id, n);
        Ok(n)
    }

    /// Merges into the edge `(s, t, kind, label)` or adds it, with validated values and
    /// without a cycle check. `meta.relation` is ignored (`label` is its interned form).
    pub(super) fn upsert(
        &mut self,
        s: NodeIndex<Ix>,
        t: NodeIndex<Ix>,
        kind: EdgeKind,
        weight: f64,
        label: Option<Label>,
        meta: EdgeMetaRef<'_>,
    ) -> Result<EdgeInsert> {
        if let Some(e) = self.find_between(s, t, kind, label) {
            let previous_weight = self.set_weight(e, weight);
            self.merge_extra(e, meta);
            return Ok(EdgeInsert::Merged { previous_weight });
        }
        self.insert_edge(s, t, EdgeData { weight, extra: NO_EXTRA, label, kind }, meta)?;
        Ok(EdgeInsert::Added)
    }

    /// Adds a new edge (no merge, no cycle check) with its counters and carrier;
    /// `data.extra` must be [`NO_EXTRA`], the confidence and valence come from `meta`.
    pub(super) fn insert_edge(
        &mut self,
        s: NodeIndex<Ix>,
        t: NodeIndex<Ix>,
        data: EdgeData,
        meta: EdgeMetaRef<'_>,
    ) -> Result<EdgeIndex<Ix>> {
        let e = self.inner.try_add_edge(s, t, data).map_err(|_| full("edges"))?;
        self.merge_extra(e, meta);
        self.slots[s.index()].out[data.kind.slot()] += 1;
        if data.kind.carries_activation() {
            self.push_carrier(
                s.index(),
                Carrier { target: t.index() as u32, edge: e.index() as u32, weight: data.weight },
            );
        }
        self.slots[t.index()].inc += 1;
        self.kind_counts[data.kind.slot()] += 1;
        Ok(e)
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

    /// True when some edge is a REQUIRES or ENABLES edge.
    pub(super) fn has_dependency_edges(&self) -> bool {
        EdgeKind::ALL.iter().any(|k| k.is_dependency() && self.kind_counts[k.slot()] > 0)
    }

    /// The metadata of an edge, borrowed from the side tables.
    #[inline]
    pub(super) fn meta_of(&self, d: &EdgeData) -> EdgeMetaRef<'_> {
        let (confidence, valence) = self.extras.get(d.extra);
        EdgeMetaRef { relation: self.labels.name_of(d.label), confidence, valence }
    }

    /// Builds the borrowed view of a petgraph edge.
    fn view<'a>(&'a self, e: petgraph::stable_graph::EdgeReference<'a, EdgeData, Ix>) -> EdgeRef<'a> {
        let d = e.weight();
        EdgeRef {
            source: self.id_of(e.source()),
            target: self.id_of(e.target()),
            kind: d.kind,
            weight: d.weight,
            meta: self.meta_of(d),
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
        let label = match relation {
            Some(r) => Some(self.labels.get(r)?),
            None => None,
        };
        self.find_between(s, t, kind, label)
    }

    /// The edge with exactly this identity: scanning `s`'s carrier run for a carrier kind
    /// (contiguous), else walking the shorter of `s`'s outgoing and `t`'s incoming lists.
    fn find_between(
        &self,
        s: NodeIndex<Ix>,
        t: NodeIndex<Ix>,
        kind: EdgeKind,
        label: Option<Label>,
    ) -> Option<EdgeIndex<Ix>> {
        let same = |d: &EdgeData| d.kind == kind && d.label == label;
        if kind.carries_activation() {
            let slot = &self.slots[s.index()];
            // A contiguous scan costs a fraction of a linked-list step per edge, and a short
            // run (a cache line or two) is scanned without reading `t`'s slot at all.
            if slot.len <= SHORT_RUN || slot.len <= self.slots[t.index()].inc.saturating_mul(4) {
                let target = t.index() as u32;
                return self.arena[slot.run()]
                    .iter()
                    .map(|c| (c.target, EdgeIndex::new(c.edge as usize)))
                    .find(|&(ct, e)| ct == target && same(&self.inner[e]))
                    .map(|(_, e)| e);
            }
        }
        let incoming = self.slots[t.index()].inc;
        if self.out_total(s) <= incoming {
            self.inner.edges_directed(s, Outgoing).find(|e| e.target() == t && same(e.weight()))
        } else {
            self.inner.edges_directed(t, Incoming).find(|e| e.source() == s && same(e.weight()))
        }
        .map(|e| e.id())
    }

    /// Removes an edge and updates the counters, the carriers and the side tables.
    fn detach_edge(&mut self, e: EdgeIndex<Ix>) -> bool {
        let Some((s, t)) = self.inner.edge_endpoints(e) else {
            return false;
        };
        let Some(data) = self.inner.remove_edge(e) else {
            return false;
        };
        self.slots[s.index()].out[data.kind.slot()] -= 1;
        if data.kind.carries_activation() {
            self.drop_carrier(s.index(), e);
        }
        self.slots[t.index()].inc -= 1;
        self.forget(data);
        true
    }

    /// Removes node `n` (already out of the id index) edge by edge; returns how many edges
    /// went.
    fn unlink_node(&mut self, n: NodeIndex<Ix>) -> usize {
        let mut dropped = 0;
        // Each edge is taken from the head of `n`'s list, so petgraph only walks the other
        // endpoint's list to unlink it.
        while let Some((e, t, data)) =
            self.inner.edges_directed(n, Outgoing).next().map(|e| (e.id(), e.target(), *e.weight()))
        {
            self.inner.remove_edge(e);
            if t != n {
                self.slots[t.index()].inc -= 1;
            }
            self.forget(data);
            dropped += 1;
        }
        while let Some((e, s, data)) =
            self.inner.edges_directed(n, Incoming).next().map(|e| (e.id(), e.source(), *e.weight()))
        {
            self.inner.remove_edge(e);
            self.slots[s.index()].out[data.kind.slot()] -= 1;
            if data.kind.carries_activation() {
                self.drop_carrier(s.index(), e);
            }
            self.forget(data);
            dropped += 1;
        }
        self.inner.remove_node(n);
        // The run's room becomes garbage, packed by the next move that finds too much of it.
        self.reset_node(n);
        dropped
    }

    /// Clears the per-node tables of a removed node. A run that ends the arena is cut off it
    /// (a node removed soon after it was added usually holds the newest run), so it leaves
    /// no garbage to pack. Cutting is safe because every run without room starts at 0 (a new
    /// node's, and those that packing and rebuilding leave empty), so no run, empty or not,
    /// reaches past the cut.
    fn reset_node(&mut self, n: NodeIndex<Ix>) {
        let slot = &mut self.slots[n.index()];
        self.arena_used -= slot.cap as usize;
        if slot.cap > 0 && (slot.start + slot.cap) as usize == self.arena.len() {
            self.arena.truncate(slot.start as usize);
        }
        *slot = Slot::new();
    }

    /// True when removing about `n_edges` edges should rebuild the edge lists rather than
    /// unlink edge by edge.
    fn rebuilds_for(&self, n_edges: usize) -> bool {
        #[cfg(test)]
        if let Some(forced) = self.force_rebuild {
            return forced;
        }
        n_edges.saturating_mul(REBUILD_RATIO) >= self.edge_count()
    }

    /// The bookkeeping of an edge that left petgraph: its side-table slot and kind count.
    fn forget(&mut self, data: EdgeData) {
        self.extras.release(data.extra);
        self.kind_counts[data.kind.slot()] -= 1;
    }

    /// Keeps the edges `keep(source index, target index, data)` accepts and rebuilds petgraph's
    /// edge lists and the carrier arena from them, streaming over the edges (O(V + E))
    /// instead of unlinking edge by edge (each unlink walks the other endpoint's list through
    /// scattered memory). The kept edges keep their relative order and are renumbered; each
    /// node's carriers become one tight run, in node order; node indices do not change.
    /// Returns how many edges were removed.
    fn rebuild_edges(&mut self, mut keep: impl FnMut(usize, usize, &EdgeData) -> bool) -> usize {
        let Self { inner, slots, extras, kind_counts, arena, .. } = self;
        // Carriers per source, shifted by one for the prefix sums below.
        let mut run_start = vec![0u32; slots.len() + 1];
        let mut kept: Vec<(u32, u32, EdgeData)> = Vec::with_capacity(inner.edge_count());
        for e in inner.edge_references() {
            let (s, t, d) = (e.source().index(), e.target().index(), *e.weight());
            if keep(s, t, &d) {
                run_start[s + 1] += u32::from(d.kind.carries_activation());
                kept.push((s as u32, t as u32, d));
            } else {
                slots[s].out[d.kind.slot()] -= 1;
                slots[t].inc -= 1;
                extras.release(d.extra);
                kind_counts[d.kind.slot()] -= 1;
            }
        }
        let removed = inner.edge_count() - kept.len();
        if removed == 0 {
            return 0;
        }
        // Kept edges go back in order into an emptied edge array: edge `i` of `kept` gets
        // index `i`.
        inner.clear_edges();
        for &(s, t, d) in &kept {
            inner
                .try_add_edge(NodeIndex::new(s as usize), NodeIndex::new(t as usize), d)
                .expect("re-adding fewer edges than the graph held, between live nodes");
        }
        for i in 0..slots.len() {
            run_start[i + 1] += run_start[i];
        }
        let n_carriers = run_start[slots.len()] as usize;
        arena.clear();
        arena.resize(n_carriers, Carrier::default());
        for (slot, w) in slots.iter_mut().zip(run_start.windows(2)) {
            // A run without room starts at 0 (see `reset_node`).
            let cap = w[1] - w[0];
            (slot.start, slot.len, slot.cap) = (if cap == 0 { 0 } else { w[0] }, 0, cap);
        }
        for (i, &(s, t, d)) in kept.iter().enumerate() {
            if d.kind.carries_activation() {
                let slot = &mut slots[s as usize];
                arena[(slot.start + slot.len) as usize] =
                    Carrier { target: t, edge: i as u32, weight: d.weight };
                slot.len += 1;
            }
        }
        self.arena_used = n_carriers;
        removed
    }

    /// The id of the node at `n`.
    #[inline]
    pub(super) fn id_of(&self, n: NodeIndex<Ix>) -> RecordId {
        self.ids[n.index()]
    }

    /// Outgoing edges of `n`, all kinds.
    #[inline]
    fn out_total(&self, n: NodeIndex<Ix>) -> u32 {
        self.slots[n.index()].out.iter().sum()
    }

    /// Sets an edge's weight (in petgraph and in its source's carrier run); returns the old one.
    fn set_weight(&mut self, e: EdgeIndex<Ix>, weight: f64) -> f64 {
        let data = &mut self.inner[e];
        let previous = std::mem::replace(&mut data.weight, weight);
        if data.kind.carries_activation()
            && let Some((s, _)) = self.inner.edge_endpoints(e)
        {
            let slot = self.slots[s.index()];
            if let Some(c) = self.arena[slot.run()].iter_mut().find(|c| c.edge == e.index() as u32) {
                c.weight = weight;
            }
        }
        previous
    }

    /// Overwrites an edge's confidence and valence with those `meta` sets.
    fn merge_extra(&mut self, e: EdgeIndex<Ix>, meta: EdgeMetaRef<'_>) {
        let slot = &mut self.inner[e].extra;
        self.extras.merge(slot, meta.confidence, meta.valence);
    }

    /// True when a dependency edge `source -> target` would close a cycle: it is a self-loop,
    /// or `target` already reaches `source` along dependency edges.
    pub fn would_close_cycle(&mut self, source: RecordId, target: RecordId) -> bool {
        if source == target {
            return true;
        }
        let (Some(&s), Some(&t)) = (self.index.get(&source), self.index.get(&target)) else {
            return false;
        };
        let Self { inner, slots, scratch, .. } = self;
        let has_dependents = |n: NodeIndex<Ix>| {
            EdgeKind::ALL.iter().any(|k| k.is_dependency() && slots[n.index()].out[k.slot()] > 0)
        };
        if !has_dependents(t) {
            return false;
        }
        let bound = inner.node_bound();
        if scratch.seen.len() < bound {
            scratch.seen.resize(bound, 0);
        }
        scratch.call = scratch.call.wrapping_add(1);
        if scratch.call == 0 {
            scratch.seen.fill(0);
            scratch.call = 1;
        }
        let call = scratch.call;
        scratch.stack.clear();
        scratch.stack.push(t);
        scratch.seen[t.index()] = call;
        while let Some(n) = scratch.stack.pop() {
            if !has_dependents(n) {
                continue;
            }
            for e in inner.edges_directed(n, Outgoing) {
                if !e.weight().kind.is_dependency() {
                    continue;
                }
                let next = e.target();
                if next == s {
                    return true;
                }
                if scratch.seen[next.index()] != call {
                    scratch.seen[next.index()] = call;
                    scratch.stack.push(next);
                }
            }
        }
        false
    }
}

/// Spreading activation over the graph (`spec/maxim-reference.md` §2.3).
impl Graph {
    /// Spreads activation from `seeds` sequentially ([`spread`](super::spread)).
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
        self.ids[node as usize]
    }

    #[inline]
    fn for_each_carrier<F: FnMut(u32, f64)>(&self, node: u32, mut visit: F) {
        for c in &self.arena[self.slots[node as usize].run()] {
            visit(c.target, c.weight);
        }
    }

    fn for_each_carrier_valence<F: FnMut(u32, f64, f64)>(&self, node: u32, mut visit: F) {
        for c in &self.arena[self.slots[node as usize].run()] {
            let extra = self.inner[EdgeIndex::new(c.edge as usize)].extra;
            visit(c.target, c.weight, self.extras.valence_or_zero(extra));
        }
    }

    #[inline]
    fn touch_carriers(&self, node: u32) -> u64 {
        let run = &self.arena[self.slots[node as usize].run()];
        // One read per cache line (four carriers) and the last one.
        run.iter().step_by(4).chain(run.last()).fold(0, |acc, c| acc ^ u64::from(c.target))
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
                    o.weight == e.weight && other.meta_of(o) == e.meta
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

#[cfg(test)]
impl Graph {
    /// Checks every side table (id index, counters, carrier runs, metadata slots) against
    /// petgraph; panics on the first disagreement.
    pub(super) fn check_invariants(&self) {
        let bound = self.slots.len();
        assert!(bound >= self.inner.node_bound());
        assert_eq!(self.ids.len(), bound);
        assert_eq!(self.index.len(), self.node_count());
        let mut kind_counts = [0usize; 5];
        let mut extras = std::collections::BTreeSet::new();
        let mut runs = Vec::new();
        let mut used = 0;
        for i in 0..bound {
            let n = NodeIndex::new(i);
            let slot = &self.slots[i];
            if self.inner.node_weight(n).is_none() {
                assert_eq!((slot.len, slot.cap, slot.out), (0, 0, [0; 5]), "a removed node keeps a run");
                continue;
            }
            assert_eq!(self.index.get(&self.ids[i]), Some(&n));
            let mut out = [0u32; 5];
            let mut expected = Vec::new();
            for e in self.inner.edges_directed(n, Outgoing) {
                let d = e.weight();
                out[d.kind.slot()] += 1;
                kind_counts[d.kind.slot()] += 1;
                if d.kind.carries_activation() {
                    expected.push((e.id().index() as u32, e.target().index() as u32, d.weight.to_bits()));
                }
                if d.extra != NO_EXTRA {
                    assert!(extras.insert(d.extra), "two edges share a metadata slot");
                    assert!(!self.extras.is_free(d.extra), "an edge holds a freed metadata slot");
                    assert!(!self.meta_of(d).is_empty());
                }
            }
            assert_eq!(slot.out, out, "out-degree counters");
            assert_eq!(
                slot.inc as usize,
                self.inner.edges_directed(n, Incoming).count(),
                "in-degree counter"
            );
            let mut actual: Vec<(u32, u32, u64)> =
                self.arena[slot.run()].iter().map(|c| (c.edge, c.target, c.weight.to_bits())).collect();
            expected.sort_unstable();
            actual.sort_unstable();
            assert_eq!(actual, expected, "the carrier run of node {i}");
            assert!(slot.len <= slot.cap && (slot.start + slot.cap) as usize <= self.arena.len());
            if slot.cap > 0 {
                runs.push((slot.start, slot.start + slot.cap));
            } else {
                assert_eq!(slot.start, 0, "a run without room starts at 0, so cutting the arena keeps it");
            }
            used += slot.cap as usize;
        }
        assert_eq!(kind_counts, self.kind_counts, "edges per kind");
        assert_eq!(used, self.arena_used, "arena capacity in use");
        runs.sort_unstable();
        assert!(runs.windows(2).all(|w| w[0].1 <= w[1].0), "carrier runs overlap");
    }
}

/// Checks an edge weight (finite, `>= 0`) and turns `-0.0` into `+0.0`, so that the bits of
/// every activation order like its value.
pub(super) fn checked_weight(weight: f64) -> Result<f64> {
    check_non_negative("weight", weight).map(f64::abs)
}

pub(super) fn cycle_error(source: RecordId, target: RecordId, kind: EdgeKind) -> Error {
    Error::DependencyCycle { source_id: source, target_id: target, kind: kind.as_str() }
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

    /// A random graph with every kind, labels, metadata and holes in the node indices.
    fn random_graph(n: u64, seed: u64) -> (Graph, Vec<RecordId>) {
        let mut rng = crate::id::SplitMix64::new(seed);
        let ids: Vec<RecordId> = (0..n).map(|i| RecordId::from_u128(u128::from(i) + 1)).collect();
        let mut g = Graph::new();
        for _ in 0..n * 6 {
            let (s, t) = (ids[rng.below(n) as usize], ids[rng.below(n) as usize]);
            let kind = EdgeKind::ALL[rng.below(5) as usize];
            let meta = match rng.below(4) {
                0 => EdgeMetaRef::EMPTY,
                1 => EdgeMetaRef::relation(["IS_A", "HAS_PART"][rng.below(2) as usize]),
                2 => EdgeMetaRef::EMPTY.with_valence(rng.uniform() - 0.5),
                _ => EdgeMetaRef::relation("IS_A").with_confidence(rng.uniform()),
            };
            let _ = g.add_edge_ref(s, t, kind, rng.uniform(), meta);
        }
        for &id in ids.iter().step_by(7) {
            g.remove_node(id);
            g.add_node(id).unwrap();
        }
        g.check_invariants();
        (g, ids)
    }

    #[test]
    fn remove_nodes_matches_removing_one_by_one_either_way() {
        let (g, ids) = random_graph(300, 5);
        let doomed: Vec<RecordId> = ids.iter().copied().filter(|id| id.as_u128() % 3 == 0).collect();
        let mut one_by_one = g.clone();
        let expected_edges: usize = doomed.iter().map(|&id| one_by_one.remove_node(id).unwrap()).sum();
        for force in [Some(true), Some(false), None] {
            let mut bulk = g.clone();
            bulk.force_rebuild = force;
            let mut request = doomed.clone();
            request.extend([doomed[0], RecordId::from_u128(10_000)]); // a repeat and a stranger
            assert_eq!(bulk.remove_nodes(&request), doomed.len());
            bulk.check_invariants();
            assert_eq!(bulk, one_by_one, "{force:?}");
            assert_eq!(g.edge_count() - bulk.edge_count(), expected_edges);
            let p = ActivationParams::new(0.9, 0.0, 4).unwrap();
            let seeds = [ids[1], ids[2], ids[4]];
            assert_eq!(bulk.spread(&seeds, &p), one_by_one.spread(&seeds, &p));
            assert_eq!(bulk.spread_with_valence(&seeds, &p), one_by_one.spread_with_valence(&seeds, &p));
            // The graph goes on working after a rebuild.
            bulk.add_edge(ids[1], ids[2], EdgeKind::Causes, 0.5, None).unwrap();
            assert_eq!(bulk.remove_nodes(&[]), 0);
            bulk.check_invariants();
        }
    }

    #[test]
    fn labels_are_shared_and_unknown_labels_match_nothing() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        for (s, t) in [(a, b), (b, c), (a, c), (c, a)] {
            g.add_edge_ref(s, t, EdgeKind::Associates, 0.5, EdgeMetaRef::relation("IS_A")).unwrap();
        }
        assert_eq!(g.labels.get("IS_A").map(|l| g.labels.name(l)), Some("IS_A"));
        assert!(g.labels.get("HAS_PART").is_none());
        assert!(g.find_edge(a, b, None, Some("HAS_PART")).is_none());
        assert!(!g.remove_edge(a, b, EdgeKind::Associates, Some("HAS_PART")));
        assert!(!g.update_edge(a, b, EdgeKind::Associates, Some("HAS_PART"), Some(1.0), None).unwrap());
        assert_eq!(g.edges().filter(|e| e.relation() == Some("IS_A")).count(), 4);
        assert!(g.edges().all(|e| e.meta.cloned() == Some(EdgeMeta::relation("IS_A"))));
    }

    #[test]
    fn decaying_one_carrier_kind_leaves_the_other() {
        let [a, b, c] = ids();
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Associates, 0.5, None).unwrap();
        g.add_edge(a, c, EdgeKind::Causes, 0.5, None).unwrap();
        g.add_edge(b, c, EdgeKind::Requires, 0.5, None).unwrap();
        assert_eq!(g.decay_edges(0.5, &[EdgeKind::Causes, EdgeKind::Requires], 0.0, false).unwrap(), 0);
        g.check_invariants();
        let p = ActivationParams::new(1.0, 0.0, 1).unwrap();
        assert_eq!(g.spread(&[a], &p).ranked(None), vec![(b, 0.5), (c, 0.25)]);
        assert_eq!(g.find_edge(b, c, None, None).unwrap().weight, 0.25);
        // With no CAUSES edge left, decaying ASSOCIATES touches every carrier.
        assert!(g.remove_edge(a, c, EdgeKind::Causes, None));
        g.decay_edges(0.5, &[EdgeKind::Associates], 0.0, false).unwrap();
        g.check_invariants();
        assert_eq!(g.spread(&[a], &p).ranked(None), vec![(b, 0.25)]);
    }

    #[test]
    fn pruning_either_way_gives_the_same_graph() {
        let (g, _) = random_graph(200, 9);
        let mut results = Vec::new();
        for force in [Some(true), Some(false)] {
            let mut h = g.clone();
            h.force_rebuild = force;
            let pruned = h.decay_edges(0.5, &[EdgeKind::Associates, EdgeKind::Requires], 0.2, true).unwrap();
            h.check_invariants();
            assert!(pruned > 0);
            results.push((pruned, h));
        }
        assert_eq!(results[0].0, results[1].0);
        assert_eq!(results[0].1, results[1].1);
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
