//! Cross-layer spreading activation (seed 000, "Cross-Layer Spreading Activation";
//! `spec/maxim-reference.md` §7 and §2.3).
//!
//! From seeds in any layer, activation flows
//!
//! 1. along the intra-layer edges of each layer's associative graph (outgoing ASSOCIATES and
//!    CAUSES edges, as §2.3 spreads): a core [`Graph`] is read through its dense adjacency
//!    (one contiguous run per node), any other [`GraphView`] through its trait calls
//!    ([`LayerGraph`]), and
//! 2. along cross-layer edges: forward for the types in [`CrossParams::forward`], and from
//!    target back to source for the types in [`CrossParams::backward`] (by default every
//!    type both ways, so that a concept reaches the AG pattern that confirms it),
//!
//! as `parent * decay * weight` (evaluated in that order, as the layers' own spreads do). A
//! value below the threshold is dropped (one equal to it is kept); a record `d` hops from a
//! seed is reached when `d <= max_depth` (the original recorded only `max_depth - 1` hops);
//! a record reached along several paths keeps the **max**, and one improved later spreads
//! again. Seeds are not returned. The activation of a record is therefore the max, over
//! every walk of at most `max_depth` hops from a seed whose every prefix stays at or above
//! the threshold, of the walk's product, which does not depend on the order of exploration.
//!
//! The spread runs level by level. A level with at least
//! [`CrossParams::parallel_min_frontier`] records expands on rayon: each task reads the
//! graphs and the activations of the previous levels, and the candidates are merged in
//! order afterwards, so the parallel path returns exactly what the sequential one returns.
//! The last level on rayon (most of a large spread: its records only receive) skips the
//! record-by-record offers: its neighbours are hashed into partitions of a few thousand,
//! each partition is merged by record on its own task with its table in cache, and the
//! index of reached records keeps the earlier levels only (a few thousand records where
//! the last level brings tens of thousands).
//! A smaller level expands in blocks of records, each block in three passes (look up each
//! record's node and dense index, touch what its expansion reads first, expand) so that the
//! cache misses of a pass overlap; neighbours found through a core graph many times over
//! (a small, dense graph of co-occurring concepts) are merged by dense index before their
//! ids are read; and a record's cross-layer runs are grouped by edge type, so the types a
//! spread does not follow are skipped a group at a time.
//!
//! ```
//! use crossgraph::{CrossLayerGraph, LayerGraphs};
//! use maxim_core::graph::{EdgeKind, Graph};
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//!
//! let [ep, similar, concept, pattern] = [1, 2, 3, 4].map(RecordId::from_u128);
//! let mut episodes = Graph::new();
//! episodes.add_edge(ep, similar, EdgeKind::Associates, 0.8, None)?;
//! let mut g = CrossLayerGraph::builder().build()?;
//! let hip = |id| LayerRecord::new(LayerKind::Hippocampus, id);
//! let atl = LayerRecord::new(LayerKind::Atl, concept);
//! let ag = LayerRecord::new(LayerKind::AngularGyrus, pattern);
//! g.add_edge(hip(ep), atl, CrossEdgeKind::InstanceOf, 1.0)?;
//! g.add_edge(ag, atl, CrossEdgeKind::StatisticallyConfirms, 0.5)?; // walked backwards
//!
//! let layers = LayerGraphs::new().with(LayerKind::Hippocampus, &episodes);
//! let act = g.activate(&[hip(ep)], &layers);
//! assert_eq!(act.ranked(LayerKind::Hippocampus, None), vec![(similar, 0.4)]);
//! assert_eq!(act.ranked(LayerKind::Atl, None), vec![(concept, 0.5)]);
//! assert_eq!(act.get(ag), Some(0.125));
//! assert_eq!(act.get(hip(ep)), None); // seeds are not returned
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::Ordering::Relaxed;

use maxim_core::graph::{ActivationParams, Adjacency, CsrGraph, Graph};
use maxim_core::{GraphView, LayerKind, LayerRecord, RecordId};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::kind::{ALL_KINDS, KindSet, layer_slot};
use crate::store::{CrossLayerGraph, Half, RecordKey, Side, State};

/// The level size from which a spread expands on rayon by default.
pub const PARALLEL_MIN_FRONTIER: usize = 4096;

/// Records of a level per rayon task.
const CHUNK: usize = 256;

/// Neighbours per partition when the last level is merged by partition
/// ([`Walk::expand_last`]).
const PARTITION: usize = 2048;

/// A node not looked up yet.
const UNKNOWN: u32 = u32::MAX - 1;
/// No node: a record without a cross-layer edge, or absent from its layer's graph.
const NONE: u32 = u32::MAX;

/// One layer's associative graph, as the spread reads it: a core [`Graph`] through its
/// dense adjacency (each node's activation-carrying edges in one contiguous run, targets as
/// dense indices), or any other [`GraphView`] through its trait calls.
///
/// Made by `From` a `&Graph`, a `&CsrGraph` or a `&dyn GraphView`; [`LayerGraphs::with`]
/// takes any of them.
#[derive(Clone, Copy)]
pub struct LayerGraph<'a>(View<'a>);

#[derive(Clone, Copy)]
enum View<'a> {
    Dyn(&'a dyn GraphView),
    Graph(&'a Graph),
}

impl<'a> LayerGraph<'a> {
    /// The graph as a [`GraphView`].
    pub fn view(self) -> &'a dyn GraphView {
        match self.0 {
            View::Dyn(v) => v,
            View::Graph(g) => g,
        }
    }
}

impl<'a> From<&'a Graph> for LayerGraph<'a> {
    fn from(graph: &'a Graph) -> Self {
        Self(View::Graph(graph))
    }
}

impl<'a> From<&'a CsrGraph> for LayerGraph<'a> {
    fn from(graph: &'a CsrGraph) -> Self {
        Self(View::Dyn(graph))
    }
}

impl<'a> From<&'a dyn GraphView> for LayerGraph<'a> {
    fn from(view: &'a dyn GraphView) -> Self {
        Self(View::Dyn(view))
    }
}

/// The associative graph of each layer, as the spread reads it (a layer without one is
/// crossed through its cross-layer edges only).
///
/// ```
/// use crossgraph::LayerGraphs;
/// use maxim_core::graph::Graph;
/// use maxim_core::{GraphView, LayerKind};
/// let concepts = Graph::new();
/// let episodes = Graph::new();
/// let layers = LayerGraphs::new()
///     .with(LayerKind::Atl, &concepts)
///     .with(LayerKind::Hippocampus, &episodes as &dyn GraphView);
/// assert!(layers.get(LayerKind::Atl).is_some() && layers.get(LayerKind::AngularGyrus).is_none());
/// ```
#[derive(Clone, Copy, Default)]
pub struct LayerGraphs<'a> {
    views: [Option<LayerGraph<'a>>; 4],
}

impl<'a> LayerGraphs<'a> {
    /// No layer graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// These graphs with `graph` as `layer`'s (a `&Graph`, a `&CsrGraph` or a
    /// `&dyn GraphView`).
    #[must_use]
    pub fn with(mut self, layer: LayerKind, graph: impl Into<LayerGraph<'a>>) -> Self {
        self.views[layer_slot(layer)] = Some(graph.into());
        self
    }

    /// Sets `layer`'s graph.
    pub fn set(&mut self, layer: LayerKind, graph: impl Into<LayerGraph<'a>>) {
        self.views[layer_slot(layer)] = Some(graph.into());
    }

    /// `layer`'s graph, if given.
    #[inline]
    pub fn get(&self, layer: LayerKind) -> Option<&'a dyn GraphView> {
        self.views[layer_slot(layer)].map(LayerGraph::view)
    }

    #[inline]
    fn raw(&self, layer: LayerKind) -> Option<View<'a>> {
        self.views[layer_slot(layer)].map(|v| v.0)
    }
}

impl std::fmt::Debug for LayerGraphs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for layer in LayerKind::ALL {
            if let Some(v) = self.get(layer) {
                m.entry(&layer.as_str(), &(v.node_count(), v.edge_count()));
            }
        }
        m.finish()
    }
}

/// Parameters of a cross-layer spread. Always valid: the numbers are an
/// [`ActivationParams`], which validates on construction.
///
/// ```
/// use crossgraph::{CrossParams, KindSet};
/// use maxim_core::graph::ActivationParams;
/// use maxim_core::CrossEdgeKind;
/// let mut p = CrossParams::new(ActivationParams::new(0.5, 0.01, 2)?);
/// p.backward = KindSet::of(&[CrossEdgeKind::StatisticallyConfirms]);
/// assert_eq!(p.activation.max_depth(), 2);
/// assert!(p.forward.contains(CrossEdgeKind::InstanceOf));
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CrossParams {
    /// Initial activation of the seeds, decay per hop, threshold and max depth.
    pub activation: ActivationParams,
    /// Edge types followed from source to target.
    pub forward: KindSet,
    /// Edge types also followed from target to source.
    pub backward: KindSet,
    /// Levels with at least this many records expand on rayon (`usize::MAX`: never;
    /// 1: always).
    pub parallel_min_frontier: usize,
}

impl CrossParams {
    /// `activation` with every type followed both ways and the default parallel switch.
    pub fn new(activation: ActivationParams) -> Self {
        Self {
            activation,
            forward: KindSet::ALL,
            backward: KindSet::ALL,
            parallel_min_frontier: PARALLEL_MIN_FRONTIER,
        }
    }
}

/// The result of a cross-layer spread: every record reached (seeds excluded) with its
/// activation, grouped by layer.
///
/// Within a layer the entries are in no particular order; [`ranked`](Self::ranked) and
/// [`by_layer`](Self::by_layer) sort them (activation descending, ties by id ascending).
/// Two activations are equal when they hold the same records with the same values.
#[derive(Debug, Clone, Default)]
pub struct CrossActivation {
    groups: [Vec<(RecordId, f64)>; 4],
}

impl CrossActivation {
    /// Number of records reached, over all layers.
    pub fn len(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// True when nothing was reached.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(Vec::is_empty)
    }

    /// The records of `layer` reached, in no particular order.
    pub fn layer(&self, layer: LayerKind) -> &[(RecordId, f64)] {
        &self.groups[layer_slot(layer)]
    }

    /// Every record reached with its activation, layer by layer, in no particular order
    /// within a layer.
    pub fn iter(&self) -> impl Iterator<Item = (LayerRecord, f64)> + '_ {
        LayerKind::ALL
            .into_iter()
            .flat_map(move |l| self.layer(l).iter().map(move |&(id, a)| (LayerRecord::new(l, id), a)))
    }

    /// The activation of `record`, if it was reached (a linear scan of its layer).
    pub fn get(&self, record: LayerRecord) -> Option<f64> {
        self.layer(record.layer).iter().find(|e| e.0 == record.id).map(|e| e.1)
    }

    /// The records of `layer` by activation descending, ties by id ascending, at most `limit`.
    pub fn ranked(&self, layer: LayerKind, limit: Option<usize>) -> Vec<(RecordId, f64)> {
        top(self.layer(layer).to_vec(), limit, |e| e.0)
    }

    /// Every record reached, over all layers, by activation descending, ties by record
    /// ascending, at most `limit`.
    pub fn ranked_all(&self, limit: Option<usize>) -> Vec<(LayerRecord, f64)> {
        top(self.iter().collect(), limit, |e| e.0)
    }

    /// The original's shape: for each layer with a record reached, its records ranked as by
    /// [`ranked`](Self::ranked), at most `limit` per layer.
    pub fn by_layer(&self, limit: Option<usize>) -> BTreeMap<LayerKind, Vec<(RecordId, f64)>> {
        LayerKind::ALL
            .into_iter()
            .filter(|&l| !self.layer(l).is_empty())
            .map(|l| (l, self.ranked(l, limit)))
            .collect()
    }
}

impl PartialEq for CrossActivation {
    fn eq(&self, other: &Self) -> bool {
        let canon = |g: &[(RecordId, f64)]| {
            let mut v: Vec<(RecordId, u64)> = g.iter().map(|e| (e.0, e.1.to_bits())).collect();
            v.sort_unstable();
            v
        };
        self.groups.iter().zip(&other.groups).all(|(a, b)| a.len() == b.len() && canon(a) == canon(b))
    }
}

/// `entries` by value descending, ties by `key` ascending, at most `limit`.
fn top<T: Copy, K: Ord>(
    mut entries: Vec<(T, f64)>,
    limit: Option<usize>,
    key: impl Fn(&(T, f64)) -> K,
) -> Vec<(T, f64)> {
    let by_rank = |x: &(T, f64), y: &(T, f64)| y.1.total_cmp(&x.1).then_with(|| key(x).cmp(&key(y)));
    if let Some(k) = limit {
        if k == 0 {
            return Vec::new();
        }
        if k < entries.len() {
            entries.select_nth_unstable_by(k - 1, by_rank);
            entries.truncate(k);
        }
    }
    entries.sort_unstable_by(by_rank);
    entries
}

impl CrossLayerGraph {
    /// Spreads activation from `seeds` over the cross-layer edges and `layers`' graphs with
    /// the graph's configured parameters (see the [module docs](self)).
    pub fn activate(&self, seeds: &[LayerRecord], layers: &LayerGraphs<'_>) -> CrossActivation {
        self.activate_with(seeds, layers, self.params())
    }

    /// [`activate`](Self::activate) from `seeds` of one layer (the original's
    /// `cross_layer_activation(start_layer, seeds)`).
    pub fn activate_from(
        &self,
        layer: LayerKind,
        seeds: &[RecordId],
        layers: &LayerGraphs<'_>,
    ) -> CrossActivation {
        let seeds: Vec<LayerRecord> = seeds.iter().map(|&id| LayerRecord::new(layer, id)).collect();
        self.activate(&seeds, layers)
    }

    /// [`activate`](Self::activate) with explicit parameters.
    pub fn activate_with(
        &self,
        seeds: &[LayerRecord],
        layers: &LayerGraphs<'_>,
        params: &CrossParams,
    ) -> CrossActivation {
        let _s = tracing::debug_span!("cross_layer_activation", n_seeds = seeds.len()).entered();
        self.activations.fetch_add(1, Relaxed);
        let walk = Walk { state: &self.state, layers, params };
        walk.run(seeds)
    }
}

/// One spread's inputs.
struct Walk<'w, 'a> {
    state: &'w State,
    layers: &'w LayerGraphs<'a>,
    params: &'w CrossParams,
}

/// The neighbours of one partition of the last level, merged by record
/// ([`Walk::expand_last`]): records reached before, by position, and new records, each with
/// its largest value.
#[derive(Default)]
struct LastLevel {
    improved: Vec<(u32, f64)>,
    fresh: Vec<(LayerRecord, f64)>,
}

/// One task's neighbours of a last level grouped by partition (a counting sort): partition
/// `p` is `items[offsets[p]..offsets[p + 1]]`.
struct Parted {
    items: Vec<(RecordKey, f64)>,
    offsets: Vec<u32>,
}

impl Parted {
    fn new(items: &[(RecordKey, f64)], parts: usize, part_of: impl Fn(RecordKey) -> usize) -> Self {
        let mut offsets = vec![0u32; parts + 1];
        for &(k, _) in items {
            offsets[part_of(k) + 1] += 1;
        }
        for p in 0..parts {
            offsets[p + 1] += offsets[p];
        }
        let mut fill = offsets.clone();
        let mut sorted = vec![(RecordKey::default(), 0.0); items.len()];
        for &(k, a) in items {
            let at = &mut fill[part_of(k)];
            sorted[*at as usize] = (k, a);
            *at += 1;
        }
        Self { items: sorted, offsets }
    }

    fn part(&self, p: usize) -> &[(RecordKey, f64)] {
        &self.items[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }
}

/// Reusable buffers of a spread.
#[derive(Default)]
struct Scratch {
    reached: Reached,
    frontier: Vec<(u32, f64)>,
    next: Vec<u32>,
    /// Cross-layer neighbours of a level, by node, with their value.
    pending: Vec<(u32, f64)>,
    /// Neighbours of a level in a core layer graph, by layer and dense index there, with
    /// their value.
    pending_dense: Vec<(LayerKind, u32, f64)>,
    /// The records of `pending_dense` then of `pending`, with their node ([`UNKNOWN`] for
    /// the first) and their dense index in their layer's core graph ([`UNKNOWN`] for the
    /// second), and value.
    resolved: Vec<(LayerRecord, u32, u32, f64)>,
    /// Per layer, by dense index of its core graph, the entry (plus one) of `pending_dense`
    /// that holds the index; 0 elsewhere (see [`Walk::collapse`]).
    collapse: [Vec<u32>; 4],
}

impl Scratch {
    fn clear(&mut self) {
        let r = &mut self.reached;
        r.map.clear();
        r.records.clear();
        r.nodes.clear();
        r.local.clear();
        r.values.clear();
        r.levels.clear();
        self.frontier.clear();
        self.next.clear();
        self.pending.clear();
        self.pending_dense.clear();
        self.resolved.clear();
    }
}

/// Buffers of more records than this are freed after a spread rather than kept.
const KEEP_SCRATCH: usize = 1 << 20;

/// Records of a level expanded together: their lookups, then their first reads, then their
/// expansion, each a pass of independent loads whose cache misses overlap, on a block small
/// enough that what the first passes bring in is still in cache for the last.
const BLOCK: usize = 256;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The records a spread reached: position `p` holds `records[p]`, its node in the
/// cross-layer graph and its dense index in its layer's core graph (each [`NONE`] when it
/// has none, or [`UNKNOWN`] until it is needed), its activation and the last level it
/// joined.
#[derive(Default)]
struct Reached {
    map: FxHashMap<RecordKey, u32>,
    records: Vec<LayerRecord>,
    nodes: Vec<u32>,
    local: Vec<u32>,
    values: Vec<f64>,
    levels: Vec<u32>,
}

impl Reached {
    /// Offers `value` to `target` (at cross-layer node `node` and dense index `local` of its
    /// layer's core graph, either possibly [`UNKNOWN`]) at `level`: a new record joins, a
    /// better value replaces the old one; either way the record joins the next frontier
    /// (once) when `expands`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn offer(
        &mut self,
        target: LayerRecord,
        node: u32,
        local: u32,
        value: f64,
        level: u32,
        expands: bool,
        next: &mut Vec<u32>,
    ) {
        match self.map.entry(RecordKey::from(target)) {
            Entry::Vacant(v) => {
                let p = self.records.len() as u32;
                v.insert(p);
                self.records.push(target);
                self.nodes.push(node);
                self.local.push(local);
                self.values.push(value);
                self.levels.push(level);
                if expands {
                    next.push(p);
                }
            }
            Entry::Occupied(o) => {
                let p = *o.get() as usize;
                if value > self.values[p] {
                    self.values[p] = value;
                    if expands && self.levels[p] != level {
                        self.levels[p] = level;
                        next.push(p as u32);
                    }
                }
            }
        }
    }
}

impl Walk<'_, '_> {
    /// `record`'s node in the cross-layer graph ([`NONE`] when it has no edge), looked up
    /// when `node` is [`UNKNOWN`].
    #[inline]
    fn node_of(&self, record: LayerRecord, node: u32) -> u32 {
        if node == UNKNOWN { self.state.node(record).unwrap_or(NONE) } else { node }
    }

    /// `record`'s dense index in its layer's core graph ([`NONE`] when the layer is not read
    /// as one or does not hold it), looked up when `local` is [`UNKNOWN`].
    #[inline]
    fn local_of(&self, record: LayerRecord, local: u32) -> u32 {
        if local != UNKNOWN {
            return local;
        }
        match self.layers.raw(record.layer) {
            Some(View::Graph(g)) => g.dense_index(record.id).unwrap_or(NONE),
            _ => NONE,
        }
    }

    /// Looks up the node and dense index of the record at `p` once, for its expansion.
    /// Records are looked up only when they expand: those of the last level, most of a
    /// spread, never are.
    #[inline]
    fn settle(&self, reached: &mut Reached, p: u32) {
        let i = p as usize;
        let record = reached.records[i];
        reached.nodes[i] = self.node_of(record, reached.nodes[i]);
        reached.local[i] = self.local_of(record, reached.local[i]);
    }

    /// The record at dense index `local` of `layer`'s core graph (`None` for a layer not
    /// read as one, which gives no dense index).
    #[inline]
    fn dense_record(&self, layer: LayerKind, local: u32) -> Option<LayerRecord> {
        match self.layers.raw(layer) {
            Some(View::Graph(g)) => Some(LayerRecord::new(layer, g.record_id(local))),
            _ => None,
        }
    }

    /// Reads what expanding `record` (at `local` in its layer's core graph and at cross-layer
    /// node `node`) will read first, its runs and the start of its edges, and returns
    /// something computed from them.
    #[inline]
    fn touch(&self, record: LayerRecord, local: u32, node: u32) -> u64 {
        let mut warm = match (self.layers.raw(record.layer), local) {
            (Some(View::Graph(g)), l) if l != NONE => g.touch_carriers(l),
            _ => 0,
        };
        if node != NONE {
            for side in [Side::Out, Side::In] {
                if let Some(h) = self.state.halves(node, side).first() {
                    warm ^= u64::from(h.other);
                }
            }
        }
        warm
    }

    /// For every neighbour of `record` (at dense index `local` of its layer's core graph and
    /// at cross-layer node `node`) whose value clears the threshold, calls `emit(target,
    /// value)` (a neighbour in the layer's [`GraphView`]), `emit_dense(target, value)` (a
    /// neighbour in the layer's core graph, by its dense index there) or `emit_node(node,
    /// value)` (a neighbour across a cross-layer edge, by its node).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn expand<F: FnMut(LayerRecord, f64), D: FnMut(u32, f64), G: FnMut(u32, f64)>(
        &self,
        record: LayerRecord,
        local: u32,
        node: u32,
        a: f64,
        mut emit: F,
        mut emit_dense: D,
        mut emit_node: G,
    ) {
        let act = &self.params.activation;
        let base = a * act.decay();
        let threshold = act.threshold();
        match self.layers.raw(record.layer) {
            // A core graph: the node's activation-carrying edges are one contiguous run.
            Some(View::Graph(g)) if local != NONE => g.for_each_carrier(local, |t, w| {
                let na = base * w;
                // A NaN (an infinite activation times a zero weight) is dropped too.
                if na >= threshold {
                    emit_dense(t, na);
                }
            }),
            Some(View::Dyn(view)) => view.for_each_outgoing(record.id, &mut |t, kind, w| {
                let na = base * w;
                if kind.carries_activation() && na >= threshold {
                    emit(LayerRecord::new(record.layer, t), na);
                }
            }),
            Some(View::Graph(_)) | None => {}
        }
        if node == NONE {
            return;
        }
        for (side, kinds) in [(Side::Out, self.params.forward), (Side::In, self.params.backward)] {
            if kinds.is_empty() {
                continue;
            }
            let mut visit = |group: &[Half]| {
                for h in group {
                    let na = base * h.weight;
                    if na < threshold || na.is_nan() {
                        continue;
                    }
                    emit_node(h.other, na);
                }
            };
            let mut halves = self.state.halves(node, side);
            if kinds == KindSet::ALL {
                visit(halves);
                continue;
            }
            // A run is grouped by type: a group not followed is skipped whole (a concept's
            // thousands of INSTANCE_OF entries, when the spread does not walk them back).
            while let Some(first) = halves.first() {
                let kind = first.kind_slot();
                let (group, rest) = halves.split_at(halves.partition_point(|h| h.kind_slot() == kind));
                if kinds.contains(ALL_KINDS[kind]) {
                    visit(group);
                }
                halves = rest;
            }
        }
    }

    /// Merges the entries of `pending` that name the same dense index, keeping the first
    /// one's place and the largest value (offering each value in turn would do the same),
    /// when the level holds at least a quarter as many entries as its core graphs hold
    /// nodes: a spread through a small, dense graph (concepts that co-occur) offers the
    /// same few hundred records thousands of times, and each offer reads an id and probes
    /// the index. `tables` is all zeros before and after.
    fn collapse(&self, pending: &mut Vec<(LayerKind, u32, f64)>, tables: &mut [Vec<u32>; 4]) {
        let bound: usize = LayerKind::ALL
            .into_iter()
            .filter_map(|l| match self.layers.raw(l) {
                Some(View::Graph(g)) => Some(g.node_bound()),
                _ => None,
            })
            .sum();
        if pending.len() < 2 || pending.len().saturating_mul(4) < bound {
            return;
        }
        for layer in LayerKind::ALL {
            if let Some(View::Graph(g)) = self.layers.raw(layer) {
                let table = &mut tables[layer_slot(layer)];
                if table.len() < g.node_bound() {
                    table.resize(g.node_bound(), 0);
                }
            }
        }
        let mut kept = 0;
        for i in 0..pending.len() {
            let (layer, t, na) = pending[i];
            let slot = &mut tables[layer_slot(layer)][t as usize];
            if *slot == 0 {
                pending[kept] = pending[i];
                kept += 1;
                *slot = kept as u32;
            } else {
                let e = &mut pending[*slot as usize - 1].2;
                *e = e.max(na);
            }
        }
        pending.truncate(kept);
        for &(layer, t, _) in pending.iter() {
            tables[layer_slot(layer)][t as usize] = 0;
        }
    }

    fn run(&self, seeds: &[LayerRecord]) -> CrossActivation {
        // Small spreads dominate; their buffers are reused from one call to the next.
        let mut scratch = SCRATCH.with(RefCell::take);
        let out = self.run_in(seeds, &mut scratch);
        // The merge tables (all zeros between spreads) hold one entry per node of a core
        // graph the spread merged through: kept up to four entries per record kept.
        let tables: usize = scratch.collapse.iter().map(Vec::len).sum();
        if scratch.reached.records.capacity() <= KEEP_SCRATCH && tables <= 4 * KEEP_SCRATCH {
            scratch.clear();
            SCRATCH.with(|cell| cell.replace(scratch));
        }
        out
    }

    /// Expands a chunk of a level through the sequential path's passes (look up, touch,
    /// expand, name the neighbours) against the graphs and the previous levels, and hands
    /// each neighbour to `sink` as `(record, node, local, value)` (node and local possibly
    /// [`UNKNOWN`]).
    fn expand_chunk(
        &self,
        reached: &Reached,
        chunk: &[(u32, f64)],
        mut sink: impl FnMut(LayerRecord, u32, u32, f64),
    ) {
        let settled: Vec<(LayerRecord, u32, u32, f64)> = chunk
            .iter()
            .map(|&(p, a)| {
                let i = p as usize;
                let record = reached.records[i];
                (record, self.node_of(record, reached.nodes[i]), self.local_of(record, reached.local[i]), a)
            })
            .collect();
        let warm = settled.iter().fold(0u64, |acc, &(r, node, local, _)| acc ^ self.touch(r, local, node));
        std::hint::black_box(warm);
        let mut cross = Vec::new();
        let mut inside = Vec::new();
        for &(record, node, local, a) in &settled {
            self.expand(
                record,
                local,
                node,
                a,
                |t, na| sink(t, UNKNOWN, UNKNOWN, na),
                |t, na| inside.push((record.layer, t, na)),
                |o, na| cross.push((o, na)),
            );
        }
        for &(layer, t, na) in &inside {
            if let Some(r) = self.dense_record(layer, t) {
                sink(r, UNKNOWN, t, na);
            }
        }
        for &(o, na) in &cross {
            sink(self.state.record(o), o, UNKNOWN, na);
        }
    }

    /// Expands one level on rayon: each task expands a chunk of the level
    /// ([`expand_chunk`](Self::expand_chunk)) and returns its neighbours, which are offered
    /// in order afterwards.
    fn expand_parallel(
        &self,
        reached: &Reached,
        frontier: &[(u32, f64)],
    ) -> Vec<Vec<(LayerRecord, u32, u32, f64)>> {
        frontier
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut out = Vec::new();
                self.expand_chunk(reached, chunk, |t, node, local, na| out.push((t, node, local, na)));
                out
            })
            .collect()
    }

    /// Expands the last level on rayon without offering its neighbours one by one: they
    /// expand nothing, so they need not enter the index of reached records (which then
    /// holds the earlier levels only, a few thousand records where the last level brings
    /// tens of thousands). Each task hashes its neighbours into partitions; each partition
    /// (a few thousand neighbours, its table in cache) is then merged by record on its own
    /// task, keeping the largest value, and each record found is either one reached
    /// before, returned with its position and value, or a new one, returned with its value.
    /// Returns one [`LastLevel`] per partition, in partition order: the order depends on
    /// the level only, not on the tasks' timing.
    fn expand_last(&self, reached: &Reached, frontier: &[(u32, f64)]) -> Vec<LastLevel> {
        let tasks: Vec<Vec<(RecordKey, f64)>> = frontier
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut out = Vec::new();
                self.expand_chunk(reached, chunk, |t, _, _, na| out.push((RecordKey::from(t), na)));
                out
            })
            .collect();
        let total: usize = tasks.iter().map(Vec::len).sum();
        // Partitions of about `PARTITION` neighbours: their tables stay in the L1/L2 cache.
        let bits = (total / PARTITION).max(1).next_power_of_two().trailing_zeros().min(12);
        let parts = 1usize << bits;
        let part_of = move |k: RecordKey| if bits == 0 { 0 } else { (k.spread() >> (64 - bits)) as usize };
        // Each task's neighbours grouped by partition (a counting sort), with its offsets.
        let grouped: Vec<Parted> =
            tasks.into_par_iter().map(|items| Parted::new(&items, parts, part_of)).collect();
        (0..parts)
            .into_par_iter()
            .map(|p| {
                let size: usize = grouped.iter().map(|g| g.part(p).len()).sum();
                let mut at: FxHashMap<RecordKey, u32> = FxHashMap::default();
                at.reserve(size);
                let mut best: Vec<(RecordKey, f64)> = Vec::with_capacity(size);
                for &(k, a) in grouped.iter().flat_map(|g| g.part(p)) {
                    match at.entry(k) {
                        Entry::Vacant(v) => {
                            v.insert(best.len() as u32);
                            best.push((k, a));
                        }
                        Entry::Occupied(o) => {
                            let e = &mut best[*o.get() as usize].1;
                            if a > *e {
                                *e = a;
                            }
                        }
                    }
                }
                let mut out = LastLevel::default();
                for (k, a) in best {
                    match reached.map.get(&k) {
                        Some(&pos) => out.improved.push((pos, a)),
                        None => out.fresh.push((k.record(), a)),
                    }
                }
                out
            })
            .collect()
    }

    fn run_in(&self, seeds: &[LayerRecord], scratch: &mut Scratch) -> CrossActivation {
        let act = &self.params.activation;
        let (initial, max_depth) = (act.initial(), act.max_depth());
        let Scratch { reached, frontier, next, pending, pending_dense, resolved, collapse } = scratch;
        let reached: &mut Reached = reached;
        let frontier: &mut Vec<(u32, f64)> = frontier;
        let next: &mut Vec<u32> = next;
        for &s in seeds {
            if !reached.map.contains_key(&RecordKey::from(s)) {
                reached.offer(s, UNKNOWN, UNKNOWN, initial, 0, true, next);
            }
        }
        let n_seeds = reached.records.len();
        frontier.extend(next.drain(..).map(|p| (p, initial)));
        // The records of a last level merged by partition (the new ones never enter
        // `reached`).
        let mut last: Vec<LastLevel> = Vec::new();
        let mut level = 0;
        while level < max_depth && !frontier.is_empty() {
            let next_level = level + 1;
            let expands = next_level < max_depth;
            if frontier.len() >= self.params.parallel_min_frontier && !expands {
                let _s = tracing::debug_span!("expand_last", level, frontier = frontier.len()).entered();
                last = self.expand_last(reached, frontier);
                for &(p, a) in last.iter().flat_map(|part| &part.improved) {
                    let v = &mut reached.values[p as usize];
                    if a > *v {
                        *v = a;
                    }
                }
            } else if frontier.len() >= self.params.parallel_min_frontier {
                let _s = tracing::debug_span!("expand_parallel", level, frontier = frontier.len()).entered();
                for (t, node, local, na) in self.expand_parallel(reached, frontier).into_iter().flatten() {
                    reached.offer(t, node, local, na, next_level, expands, next);
                }
            } else {
                for block in frontier.chunks(BLOCK) {
                    // The lookups of a block, then its first reads, each a pass of independent
                    // loads, so that their cache misses overlap instead of waiting one by one
                    // inside the expansion.
                    for &(p, _) in block {
                        self.settle(reached, p);
                    }
                    if block.len() > 1 {
                        let warm = block.iter().fold(0u64, |acc, &(p, _)| {
                            let i = p as usize;
                            acc ^ self.touch(reached.records[i], reached.local[i], reached.nodes[i])
                        });
                        std::hint::black_box(warm);
                    }
                    for &(p, a) in block {
                        let i = p as usize;
                        let record = reached.records[i];
                        self.expand(
                            record,
                            reached.local[i],
                            reached.nodes[i],
                            a,
                            |t, na| reached.offer(t, UNKNOWN, UNKNOWN, na, next_level, expands, next),
                            |t, na| pending_dense.push((record.layer, t, na)),
                            |o, na| pending.push((o, na)),
                        );
                    }
                }
                self.collapse(pending_dense, collapse);
                // The neighbours' ids, read in one pass of independent loads for the same
                // reason (most of a spread is its last level, whose records are only offered).
                resolved.extend(
                    pending_dense
                        .iter()
                        .filter_map(|&(layer, t, na)| Some((self.dense_record(layer, t)?, UNKNOWN, t, na))),
                );
                resolved.extend(pending.iter().map(|&(o, na)| (self.state.record(o), o, UNKNOWN, na)));
                for &(t, node, local, na) in resolved.iter() {
                    reached.offer(t, node, local, na, next_level, expands, next);
                }
                pending.clear();
                pending_dense.clear();
                resolved.clear();
            }
            frontier.clear();
            frontier.extend(next.iter().map(|&p| (p, reached.values[p as usize])));
            next.clear();
            level = next_level;
        }
        let mut out = CrossActivation::default();
        for (record, &value) in reached.records.iter().zip(&reached.values).skip(n_seeds) {
            out.groups[layer_slot(record.layer)].push((record.id, value));
        }
        for &(record, value) in last.iter().flat_map(|part| &part.fresh) {
            out.groups[layer_slot(record.layer)].push((record.id, value));
        }
        out
    }
}
