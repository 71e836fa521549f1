//! Cross-layer spreading activation (seed 000, "Cross-Layer Spreading Activation";
//! `spec/maxim-reference.md` §7 and §2.3).
//!
//! From seeds in any layer, activation flows
//!
//! 1. along the intra-layer edges of each layer's associative graph, read through the
//!    layer's [`GraphView`] (outgoing ASSOCIATES and CAUSES edges, as §2.3 spreads), and
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

use crate::kind::{KindSet, layer_slot};
use crate::store::{CrossLayerGraph, Side, State};

/// The level size from which a spread expands on rayon by default.
pub const PARALLEL_MIN_FRONTIER: usize = 4096;

/// Records of a level per rayon task.
const CHUNK: usize = 256;

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

/// A candidate from a layer's own graph: the record, its node in that graph ([`UNKNOWN`]
/// for a graph read through [`GraphView`]) and its value.
type IntraCandidate = (LayerRecord, u32, f64);

/// A candidate as the merge takes it: its cross-layer node (or [`NONE`]), its record (read
/// only when the node is [`NONE`]), its node in its layer's graph and its value.
type Candidate = (u32, LayerRecord, u32, f64);

/// Reusable buffers of a spread. The marks are per node of the cross-layer graph and
/// stamped with the spread that wrote them, so a spread clears nothing it does not touch.
#[derive(Default)]
struct Scratch {
    /// Per cross-layer node: the spread that last reached it (high half) and its position
    /// in `reached` (low half).
    marks: Vec<u64>,
    epoch: u32,
    /// Records reached that have no cross-layer node, by record.
    loose: FxHashMap<LayerRecord, u32>,
    reached: Reached,
    frontier: Vec<(u32, f64)>,
    next: Vec<u32>,
    /// Candidates of a level from the layers' graphs, by the layer's node, before their ids
    /// are read.
    intra_nodes: Vec<(LayerKind, u32, f64)>,
    /// Candidates of a level from the layers' graphs, by record.
    intra: Vec<IntraCandidate>,
    /// The cross-layer node of each of `intra`.
    resolved: Vec<u32>,
}

/// Buffers of more records reached than this are freed after a spread rather than kept.
const KEEP_REACHED: usize = 1 << 20;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A record that stands in for the record of a position that has a cross-layer node (whose
/// record is read from the graph).
const NO_RECORD: LayerRecord = LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(0));

/// The records a spread reached: position `p` holds its cross-layer node `node[p]` (or
/// [`NONE`], and then its record `records[p]`), its node in its layer's graph (or
/// [`UNKNOWN`] until looked up, [`NONE`] when absent), its activation and the last level it
/// joined.
#[derive(Default)]
struct Reached {
    node: Vec<u32>,
    records: Vec<LayerRecord>,
    lnode: Vec<u32>,
    values: Vec<f64>,
    levels: Vec<u32>,
}

impl Reached {
    fn clear(&mut self) {
        self.node.clear();
        self.records.clear();
        self.lnode.clear();
        self.values.clear();
        self.levels.clear();
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    #[inline]
    fn push(&mut self, node: u32, record: LayerRecord, lnode: u32, value: f64, level: u32) -> u32 {
        let p = self.values.len() as u32;
        self.node.push(node);
        self.records.push(record);
        self.lnode.push(lnode);
        self.values.push(value);
        self.levels.push(level);
        p
    }

    /// Offers `value` to the record at `p`: a better value replaces the old one, and the
    /// record joins the next frontier (once per level) when `expands`.
    #[inline]
    fn improve(&mut self, p: usize, lnode: u32, value: f64, level: u32, expands: bool, next: &mut Vec<u32>) {
        if self.lnode[p] == UNKNOWN {
            self.lnode[p] = lnode;
        }
        if value > self.values[p] {
            self.values[p] = value;
            if expands && self.levels[p] != level {
                self.levels[p] = level;
                next.push(p as u32);
            }
        }
    }

    /// The value at `p`.
    #[inline]
    fn value(&self, p: usize) -> f64 {
        self.values[p]
    }
}

impl Scratch {
    /// Starts a spread over a graph of `nodes` nodes.
    fn begin(&mut self, nodes: usize) {
        if self.epoch == u32::MAX {
            self.marks.fill(0);
            self.epoch = 0;
        }
        self.epoch += 1;
        if self.marks.len() < nodes {
            self.marks.resize(nodes, 0);
        }
        self.loose.clear();
        self.reached.clear();
        self.frontier.clear();
        self.next.clear();
        self.intra_nodes.clear();
        self.intra.clear();
        self.resolved.clear();
    }

    /// Offers `value` at `level` to the record of cross-layer node `n` (or, when `n` is
    /// [`NONE`], to `record`).
    #[inline]
    fn offer(&mut self, n: u32, record: LayerRecord, lnode: u32, value: f64, level: u32, expands: bool) {
        if n == NONE {
            self.offer_loose(record, lnode, value, level, expands);
            return;
        }
        let mark = self.marks[n as usize];
        if (mark >> 32) as u32 == self.epoch {
            self.reached.improve(mark as u32 as usize, lnode, value, level, expands, &mut self.next);
        } else {
            let p = self.reached.push(n, NO_RECORD, lnode, value, level);
            self.marks[n as usize] = u64::from(self.epoch) << 32 | u64::from(p);
            if expands {
                self.next.push(p);
            }
        }
    }

    fn offer_loose(&mut self, record: LayerRecord, lnode: u32, value: f64, level: u32, expands: bool) {
        match self.loose.entry(record) {
            Entry::Vacant(v) => {
                let p = self.reached.push(NONE, record, lnode, value, level);
                v.insert(p);
                if expands {
                    self.next.push(p);
                }
            }
            Entry::Occupied(o) => {
                self.reached.improve(*o.get() as usize, lnode, value, level, expands, &mut self.next);
            }
        }
    }

    /// The position of the record of node `n` (or `record`), if reached.
    #[inline]
    fn position(&self, n: u32, record: LayerRecord) -> Option<usize> {
        if n == NONE {
            return self.loose.get(&record).map(|&p| p as usize);
        }
        let mark = self.marks[n as usize];
        ((mark >> 32) as u32 == self.epoch).then_some(mark as u32 as usize)
    }
}

impl Walk<'_, '_> {
    /// The record at position `p`.
    #[inline]
    fn record(&self, reached: &Reached, p: usize) -> LayerRecord {
        let n = reached.node[p];
        if n == NONE { reached.records[p] } else { self.state.record(n) }
    }

    /// The node of `record` in its layer's graph, when that graph is a core [`Graph`]
    /// ([`NONE`] otherwise or when absent), given what is known (`lnode`).
    #[inline]
    fn layer_node(&self, record: LayerRecord, lnode: u32) -> u32 {
        if lnode != UNKNOWN {
            return lnode;
        }
        match self.layers.raw(record.layer) {
            Some(View::Graph(g)) => g.dense_index(record.id).unwrap_or(NONE),
            _ => NONE,
        }
    }

    /// Reads what expanding the record at `p` reads first and returns something computed
    /// from it (folded into `black_box` by the caller), so that the cache misses of a whole
    /// level overlap.
    #[inline]
    fn touch(&self, reached: &Reached, p: usize) -> u64 {
        let n = reached.node[p];
        let record = self.record(reached, p);
        let mut warm = match self.layers.raw(record.layer) {
            Some(View::Graph(g)) => {
                let ln = self.layer_node(record, reached.lnode[p]);
                if ln == NONE { 0 } else { g.touch_carriers(ln) }
            }
            Some(View::Dyn(v)) => u64::from(v.contains(record.id)),
            None => 0,
        };
        if n != NONE {
            for side in [Side::Out, Side::In] {
                if let Some(h) = self.state.halves(n, side).first() {
                    warm ^= u64::from(h.other);
                }
            }
        }
        warm
    }

    /// Expands the record at `p` (node `n`, record `record`, layer node `ln`, value `a`):
    /// every neighbour in its layer's graph whose value clears the threshold goes to
    /// `intra_node(layer, node, value)` (a core graph) or `intra(record, value)` (another
    /// view), every neighbour across a cross-layer edge to `cross(node, value)`.
    #[inline]
    fn expand(
        &self,
        (n, record, ln, a): (u32, LayerRecord, u32, f64),
        mut intra_node: impl FnMut(u32, f64),
        mut intra: impl FnMut(LayerRecord, f64),
        mut cross: impl FnMut(u32, f64),
    ) {
        let act = &self.params.activation;
        let base = a * act.decay();
        let threshold = act.threshold();
        // A NaN (an infinite activation times a zero weight) is dropped too.
        let keep = |na: f64| na >= threshold;
        match self.layers.raw(record.layer) {
            Some(View::Graph(g)) if ln != NONE => g.for_each_carrier(ln, |t, w| {
                let na = base * w;
                if keep(na) {
                    intra_node(t, na);
                }
            }),
            Some(View::Dyn(view)) => view.for_each_outgoing(record.id, &mut |t, kind, w| {
                let na = base * w;
                if kind.carries_activation() && keep(na) {
                    intra(LayerRecord::new(record.layer, t), na);
                }
            }),
            _ => {}
        }
        if n == NONE {
            return;
        }
        for (side, kinds) in [(Side::Out, self.params.forward), (Side::In, self.params.backward)] {
            if kinds.is_empty() {
                continue;
            }
            for h in self.state.halves(n, side) {
                let na = base * h.weight;
                if kinds.contains(h.kind()) && keep(na) {
                    cross(h.other, na);
                }
            }
        }
    }

    /// The record of `layer`'s graph node `t` (which that graph, a core [`Graph`], holds).
    #[inline]
    fn layer_record(&self, layer: LayerKind, t: u32) -> LayerRecord {
        match self.layers.raw(layer) {
            Some(View::Graph(g)) => LayerRecord::new(layer, g.record_id(t)),
            _ => unreachable!("a layer node comes from a core graph"),
        }
    }

    fn run(&self, seeds: &[LayerRecord]) -> CrossActivation {
        // Buffers are reused from one call to the next (per thread).
        let mut scratch = SCRATCH.with(RefCell::take);
        scratch.begin(self.state.nodes.len());
        let out = self.run_in(seeds, &mut scratch);
        if scratch.reached.values.capacity() > KEEP_REACHED {
            scratch.reached = Reached::default();
        }
        SCRATCH.with(|cell| cell.replace(scratch));
        out
    }

    fn run_in(&self, seeds: &[LayerRecord], scratch: &mut Scratch) -> CrossActivation {
        let act = &self.params.activation;
        let (initial, max_depth) = (act.initial(), act.max_depth());
        for &s in seeds {
            let n = self.state.node(s).unwrap_or(NONE);
            if scratch.position(n, s).is_none() {
                scratch.offer(n, s, UNKNOWN, initial, 0, true);
            }
        }
        let n_seeds = scratch.reached.len();
        let mut frontier = std::mem::take(&mut scratch.frontier);
        frontier.extend(scratch.next.drain(..).map(|p| (p, initial)));
        let mut level = 0;
        while level < max_depth && !frontier.is_empty() {
            let next_level = level + 1;
            let expands = next_level < max_depth;
            if frontier.len() >= self.params.parallel_min_frontier {
                let _s = tracing::debug_span!("expand_parallel", level, frontier = frontier.len()).entered();
                self.level_parallel(&frontier, scratch, next_level, expands);
            } else {
                self.level_sequential(&frontier, scratch, next_level, expands);
            }
            frontier.clear();
            frontier.extend(scratch.next.iter().map(|&p| (p, scratch.reached.value(p as usize))));
            scratch.next.clear();
            level = next_level;
        }
        scratch.frontier = frontier;
        let reached = &scratch.reached;
        let mut out = CrossActivation::default();
        // The records of the positions with a node, read in one pass so that their misses
        // overlap.
        for p in n_seeds..reached.len() {
            let record = self.record(reached, p);
            out.groups[layer_slot(record.layer)].push((record.id, reached.values[p]));
        }
        out
    }

    /// Expands one level on this thread.
    fn level_sequential(&self, frontier: &[(u32, f64)], scratch: &mut Scratch, level: u32, expands: bool) {
        if frontier.len() > 1 {
            // One pass of independent lookups first, so that their cache misses overlap
            // instead of waiting one by one inside the expansion.
            let reached = &mut scratch.reached;
            let mut warm = 0u64;
            for &(p, _) in frontier {
                let p = p as usize;
                let record = self.record(reached, p);
                reached.lnode[p] = self.layer_node(record, reached.lnode[p]);
                warm ^= self.touch(reached, p);
            }
            std::hint::black_box(warm);
        }
        let mut intra_nodes = std::mem::take(&mut scratch.intra_nodes);
        let mut intra = std::mem::take(&mut scratch.intra);
        for &(p, a) in frontier {
            let p = p as usize;
            let (n, record) = (scratch.reached.node[p], self.record(&scratch.reached, p));
            let ln = self.layer_node(record, scratch.reached.lnode[p]);
            scratch.reached.lnode[p] = ln;
            self.expand(
                (n, record, ln, a),
                |t, na| intra_nodes.push((record.layer, t, na)),
                |t, na| intra.push((t, UNKNOWN, na)),
                |o, na| scratch.offer(o, NO_RECORD, UNKNOWN, na, level, expands),
            );
        }
        // The layers' candidates: their ids, then their cross-layer nodes, each in one pass
        // of independent lookups.
        intra.extend(intra_nodes.drain(..).map(|(layer, t, na)| (self.layer_record(layer, t), t, na)));
        let mut resolved = std::mem::take(&mut scratch.resolved);
        resolved.extend(intra.iter().map(|c| self.state.node(c.0).unwrap_or(NONE)));
        for (&(record, ln, na), &n) in intra.iter().zip(&resolved) {
            scratch.offer(n, record, ln, na, level, expands);
        }
        resolved.clear();
        intra.clear();
        scratch.intra_nodes = intra_nodes;
        scratch.intra = intra;
        scratch.resolved = resolved;
    }

    /// Expands one level on rayon: each task expands a chunk of the frontier against the
    /// activations of the previous levels and returns its candidates, which are then merged
    /// in order, so the result is the sequential one.
    fn level_parallel(&self, frontier: &[(u32, f64)], scratch: &mut Scratch, level: u32, expands: bool) {
        let view: &Scratch = scratch;
        let candidates: Vec<Vec<Candidate>> = frontier
            .par_chunks(CHUNK)
            .map(|chunk| {
                let reached = &view.reached;
                let mut out: Vec<Candidate> = Vec::with_capacity(chunk.len() * 8);
                // A candidate that cannot beat what the previous levels gave its record is
                // dropped here; the merge decides the others.
                let mut keep = |n: u32, record: LayerRecord, ln: u32, na: f64| {
                    if view.position(n, record).is_none_or(|q| na > reached.value(q)) {
                        out.push((n, record, ln, na));
                    }
                };
                let mut intra_nodes: Vec<(u32, f64)> = Vec::new();
                let mut intra: Vec<IntraCandidate> = Vec::new();
                for &(p, a) in chunk {
                    let p = p as usize;
                    let (n, record) = (reached.node[p], self.record(reached, p));
                    let ln = self.layer_node(record, reached.lnode[p]);
                    self.expand(
                        (n, record, ln, a),
                        |t, na| intra_nodes.push((t, na)),
                        |t, na| intra.push((t, UNKNOWN, na)),
                        |o, na| keep(o, NO_RECORD, UNKNOWN, na),
                    );
                    let named =
                        intra_nodes.drain(..).map(|(t, na)| (self.layer_record(record.layer, t), t, na));
                    for (t, ln, na) in intra.drain(..).chain(named) {
                        keep(self.state.node(t).unwrap_or(NONE), t, ln, na);
                    }
                }
                out
            })
            .collect();
        for (n, record, ln, na) in candidates.into_iter().flatten() {
            scratch.offer(n, record, ln, na, level, expands);
        }
    }
}
