//! [`CsrGraph`]: a compact, read-only snapshot of a [`Graph`] for heavy activation.
//!
//! Nodes get dense `u32` indices; the edges of node `i` are the slice
//! `offsets[i]..offsets[i + 1]` of flat `targets`, `weights` and `kinds` arrays, those that
//! carry activation first. Building takes one pass over the graph (O(V + E)); afterwards an
//! edge costs 13 bytes instead of a petgraph slot with its links, and a spread walks
//! contiguous memory. Spreads over a snapshot return exactly what they return over the
//! graph it was taken from.
//!
//! ```
//! use maxim_core::graph::{ActivationParams, CsrGraph, EdgeKind, Graph};
//! use maxim_core::RecordId;
//!
//! let [a, b, c] = [1, 2, 3].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! g.add_edge(a, b, EdgeKind::Associates, 0.8, None)?;
//! g.add_edge(b, c, EdgeKind::Causes, 0.5, None)?;
//! g.add_edge(a, c, EdgeKind::Inhibits, 1.0, None)?;
//! let csr = CsrGraph::from_graph(&g);
//! assert_eq!((csr.node_count(), csr.edge_count()), (3, 3));
//! let p = ActivationParams::new(0.5, 0.05, 3)?;
//! assert_eq!(csr.spread(&[a], &p), g.spread(&[a], &p));
//! assert_eq!(csr.spread_parallel(&[a], &p).ranked(None), vec![(b, 0.4), (c, 0.1)]);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use petgraph::visit::{EdgeRef as _, NodeIndexable as _};
use rustc_hash::FxHashMap;

use super::store::Graph;
use super::{Activation, ActivationParams, Adjacency, EdgeKind};
use crate::contracts::GraphView;
use crate::id::RecordId;

/// A compact read-only snapshot of a [`Graph`]: dense `u32` node indices and flat
/// offsets/targets/weights/kinds arrays, built in O(V + E). Spreads over it return exactly
/// what they return over the graph it was taken from.
#[derive(Debug, Clone, Default)]
pub struct CsrGraph {
    ids: Vec<RecordId>,
    index: FxHashMap<RecordId, u32>,
    /// `offsets[i]..offsets[i + 1]` are node `i`'s edges; `len = node_count + 1`.
    offsets: Vec<u32>,
    /// Node `i`'s edges that carry activation are `offsets[i]..carriers_end[i]`.
    carriers_end: Vec<u32>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    kinds: Vec<EdgeKind>,
    /// One valence per edge when any edge has one, else empty.
    valences: Vec<f64>,
}

impl CsrGraph {
    /// Takes a snapshot of `graph`, in O(V + E).
    pub fn from_graph(graph: &Graph) -> Self {
        let _s = tracing::debug_span!(
            "csr_from_graph",
            n_nodes = graph.node_count(),
            n_edges = graph.edge_count()
        )
        .entered();
        let g = &graph.inner;
        let n_nodes = g.node_count();
        let n_edges = g.edge_count();
        let mut dense = vec![u32::MAX; g.node_bound()];
        let mut ids = Vec::with_capacity(n_nodes);
        let mut index = FxHashMap::default();
        index.reserve(n_nodes);
        for n in g.node_indices() {
            let id = graph.id_of(n);
            dense[n.index()] = ids.len() as u32;
            index.insert(id, ids.len() as u32);
            ids.push(id);
        }
        let with_valence = g.edge_weights().any(|d| graph.extras.get(d.extra).1.is_some());
        let mut offsets = Vec::with_capacity(n_nodes + 1);
        let mut carriers_end = Vec::with_capacity(n_nodes);
        let mut targets = Vec::with_capacity(n_edges);
        let mut weights = Vec::with_capacity(n_edges);
        let mut kinds = Vec::with_capacity(n_edges);
        let mut valences = Vec::with_capacity(if with_valence { n_edges } else { 0 });
        offsets.push(0);
        for n in g.node_indices() {
            for carriers in [true, false] {
                for e in g.edges(n) {
                    let d = e.weight();
                    if d.kind.carries_activation() != carriers {
                        continue;
                    }
                    targets.push(dense[e.target().index()]);
                    weights.push(d.weight);
                    kinds.push(d.kind);
                    if with_valence {
                        valences.push(graph.extras.valence_or_zero(d.extra));
                    }
                }
                if carriers {
                    carriers_end.push(targets.len() as u32);
                }
            }
            offsets.push(targets.len() as u32);
        }
        Self { ids, index, offsets, carriers_end, targets, weights, kinds, valences }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.ids.len()
    }

    /// Number of directed edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// True when `id` is a node.
    pub fn contains(&self, id: RecordId) -> bool {
        self.index.contains_key(&id)
    }

    /// Every node, in dense-index order.
    pub fn nodes(&self) -> &[RecordId] {
        &self.ids
    }

    /// `id`'s outgoing edges as `(target, kind, weight)`, those that carry activation first
    /// (none when `id` is not a node).
    pub fn outgoing(&self, id: RecordId) -> impl Iterator<Item = (RecordId, EdgeKind, f64)> + '_ {
        let range = self.index.get(&id).map_or(0..0, |&n| self.edge_range(n));
        range.map(|e| (self.ids[self.targets[e] as usize], self.kinds[e], self.weights[e]))
    }

    /// Spreads activation from `seeds` sequentially ([`spread`](super::spread)).
    pub fn spread(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread(self, seeds, params)
    }

    /// Spreads activation level by level, large levels on rayon
    /// ([`spread_parallel`](super::spread_parallel)).
    pub fn spread_parallel(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread_parallel(self, seeds, params)
    }

    /// Spreads activation carrying valence ([`spread_with_valence`](super::spread_with_valence)).
    pub fn spread_with_valence(&self, seeds: &[RecordId], params: &ActivationParams) -> Activation {
        super::spread_with_valence(self, seeds, params)
    }

    fn edge_range(&self, node: u32) -> std::ops::Range<usize> {
        let n = node as usize;
        self.offsets[n] as usize..self.offsets[n + 1] as usize
    }

    fn carrier_range(&self, node: u32) -> std::ops::Range<usize> {
        let n = node as usize;
        self.offsets[n] as usize..self.carriers_end[n] as usize
    }
}

impl From<&Graph> for CsrGraph {
    fn from(graph: &Graph) -> Self {
        Self::from_graph(graph)
    }
}

impl Adjacency for CsrGraph {
    fn node_bound(&self) -> usize {
        self.ids.len()
    }

    #[inline]
    fn dense_index(&self, id: RecordId) -> Option<u32> {
        self.index.get(&id).copied()
    }

    #[inline]
    fn record_id(&self, node: u32) -> RecordId {
        self.ids[node as usize]
    }

    #[inline]
    fn for_each_carrier<F: FnMut(u32, f64)>(&self, node: u32, mut visit: F) {
        let range = self.carrier_range(node);
        for (&t, &w) in self.targets[range.clone()].iter().zip(&self.weights[range]) {
            visit(t, w);
        }
    }

    #[inline]
    fn touch_carriers(&self, node: u32) -> u64 {
        let range = self.carrier_range(node);
        // One read per cache line of targets and of weights.
        let targets = self.targets[range.clone()].iter().step_by(16).fold(0, |acc, &t| acc ^ u64::from(t));
        self.weights[range].iter().step_by(8).fold(targets, |acc, w| acc ^ w.to_bits())
    }

    fn for_each_carrier_valence<F: FnMut(u32, f64, f64)>(&self, node: u32, mut visit: F) {
        let range = self.carrier_range(node);
        let edges = self.targets[range.clone()].iter().zip(&self.weights[range.clone()]);
        if self.valences.is_empty() {
            for (&t, &w) in edges {
                visit(t, w, 0.0);
            }
        } else {
            for ((&t, &w), &v) in edges.zip(&self.valences[range]) {
                visit(t, w, v);
            }
        }
    }
}

impl GraphView for CsrGraph {
    fn contains(&self, id: RecordId) -> bool {
        CsrGraph::contains(self, id)
    }

    fn node_count(&self) -> usize {
        CsrGraph::node_count(self)
    }

    fn edge_count(&self) -> usize {
        CsrGraph::edge_count(self)
    }

    fn for_each_outgoing(&self, id: RecordId, visit: &mut dyn FnMut(RecordId, EdgeKind, f64)) {
        for (t, k, w) in self.outgoing(id) {
            visit(t, k, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeMeta;

    #[test]
    fn snapshot_keeps_every_edge_and_skips_holes() {
        let ids: Vec<RecordId> = (1..=5).map(RecordId::from_u128).collect();
        let mut g = Graph::new();
        g.add_edge(ids[0], ids[1], EdgeKind::Associates, 0.5, None).unwrap();
        g.add_edge(ids[1], ids[2], EdgeKind::Causes, 0.25, Some(EdgeMeta::default().with_valence(0.5)))
            .unwrap();
        g.add_edge(ids[2], ids[3], EdgeKind::Requires, 1.0, None).unwrap();
        g.add_edge(ids[3], ids[4], EdgeKind::Inhibits, 0.75, None).unwrap();
        g.remove_node(ids[4]);
        let csr = CsrGraph::from_graph(&g);
        assert_eq!((csr.node_count(), csr.edge_count()), (4, 3));
        assert!(!csr.contains(ids[4]));
        let mut all: Vec<(RecordId, RecordId, EdgeKind, u64)> = csr
            .nodes()
            .iter()
            .flat_map(|&s| csr.outgoing(s).map(move |(t, k, w)| (s, t, k, w.to_bits())))
            .collect();
        let mut expected: Vec<(RecordId, RecordId, EdgeKind, u64)> =
            g.edges().map(|e| (e.source, e.target, e.kind, e.weight.to_bits())).collect();
        all.sort_unstable();
        expected.sort_unstable();
        assert_eq!(all, expected);
        let p = ActivationParams::new(1.0, 0.0, 4).unwrap();
        let act = csr.spread_with_valence(&[ids[2]], &p);
        assert_eq!(act.ranked(None), vec![]);
        let act = csr.spread_with_valence(&[ids[0]], &p);
        assert_eq!(act.ranked(None), vec![(ids[1], 0.5), (ids[2], 0.125)]);
        assert_eq!((act.valence(ids[1]), act.valence(ids[2])), (Some(0.0), Some(0.5)));
        assert_eq!(act, g.spread_with_valence(&[ids[0]], &p));
    }
}
