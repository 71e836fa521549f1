//! Spreading activation (`spec/maxim-reference.md` §2.3), sequential and parallel.
//!
//! Seeds that are nodes start at `initial`; activation flows along outgoing ASSOCIATES and
//! CAUSES edges as `parent * decay * weight` (evaluated in that order); a value below the
//! threshold is dropped (one equal to it is kept); nothing spreads past `max_depth` hops; a
//! node reached along several paths keeps the **max**, and a node improved later spreads
//! again. The final activation of a node is therefore the max, over every path of at most
//! `max_depth` hops from a seed whose every prefix stays at or above the threshold, of the
//! path's product. That value does not depend on the order of exploration, and each path's
//! product is computed in the same order on every path, so:
//!
//! - [`spread`] (level by level over a small hash table, each improved node expanded once per
//!   level with its best value), [`spread_parallel`] (the same, large levels on rayon over a
//!   dense atomic store) and the reference's own FIFO queue with re-expansion (which
//!   [`spread_with_valence`] runs) return the same activations, bit for bit;
//! - all run over anything that implements [`Adjacency`]: the mutable
//!   [`Graph`](super::Graph) and its compact snapshot [`CsrGraph`](super::CsrGraph).
//!
//! [`spread_with_valence`] also carries a valence along the path that set each node's
//! maximum (`parent_valence * decay + edge valence`), on the sequential path.
//!
//! ```
//! use maxim_core::graph::{spread, spread_parallel, ActivationParams, EdgeKind, Graph};
//! use maxim_core::RecordId;
//!
//! let [a, b, c] = [1, 2, 3].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! g.add_edge(a, b, EdgeKind::Associates, 0.3, None)?;
//! g.add_edge(b, c, EdgeKind::Requires, 1.0, None)?; // does not carry activation
//! let act = spread(&g, &[a], &ActivationParams::default());
//! assert_eq!(act.ranked(Some(10)), vec![(b, 0.15)]);
//! assert_eq!(act.len(), 2); // the seed is in the map, not in the ranking
//! assert_eq!(spread_parallel(&g, &[a], &ActivationParams::default()), act);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::collections::VecDeque;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::check_non_negative;

/// Parameters of a spread: initial activation of the seeds, decay per hop, threshold and
/// maximum depth. Validated on construction, so a spread cannot fail.
///
/// The default is the reference's DependencyGraph default: initial 1.0, decay 0.5,
/// threshold 0.1, max depth 3.
///
/// ```
/// use maxim_core::graph::ActivationParams;
/// let p = ActivationParams::new(0.5, 0.05, 3)?;
/// assert_eq!((p.initial(), p.decay(), p.threshold(), p.max_depth()), (1.0, 0.5, 0.05, 3));
/// assert!(ActivationParams::new(0.0, 0.05, 3).is_err());
/// assert!(ActivationParams::new(0.5, f64::NAN, 3).is_err());
/// assert!(p.with_initial(-1.0).is_err());
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawParams", into = "RawParams")]
pub struct ActivationParams {
    initial: f64,
    decay: f64,
    threshold: f64,
    max_depth: u32,
}

impl ActivationParams {
    /// The reference default: initial 1.0, decay 0.5, threshold 0.1, max depth 3.
    pub const DEFAULT: Self = Self { initial: 1.0, decay: 0.5, threshold: 0.1, max_depth: 3 };

    /// Parameters with initial activation 1.0. `decay` must be in `(0, 1]`, `threshold` finite
    /// and `>= 0`; `max_depth` 0 returns only the seeds.
    pub fn new(decay: f64, threshold: f64, max_depth: u32) -> Result<Self> {
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(Error::OutOfRange { field: "decay", value: decay, expected: "a number in (0, 1]" });
        }
        let threshold = check_non_negative("threshold", threshold)?.abs();
        Ok(Self { initial: 1.0, decay, threshold, max_depth })
    }

    /// The same parameters with the seeds' activation set to `initial` (finite, `>= 0`).
    pub fn with_initial(self, initial: f64) -> Result<Self> {
        let initial = check_non_negative("initial", initial)?.abs();
        Ok(Self { initial, ..self })
    }

    /// Activation of the seeds.
    pub fn initial(&self) -> f64 {
        self.initial
    }

    /// Factor applied per hop.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    /// Smallest activation that is kept and spreads further.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Most hops from a seed.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }
}

impl Default for ActivationParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[derive(Serialize, Deserialize)]
struct RawParams {
    initial: f64,
    decay: f64,
    threshold: f64,
    max_depth: u32,
}

impl TryFrom<RawParams> for ActivationParams {
    type Error = Error;

    fn try_from(raw: RawParams) -> Result<Self> {
        Self::new(raw.decay, raw.threshold, raw.max_depth)?.with_initial(raw.initial)
    }
}

impl From<ActivationParams> for RawParams {
    fn from(p: ActivationParams) -> Self {
        Self { initial: p.initial, decay: p.decay, threshold: p.threshold, max_depth: p.max_depth }
    }
}

/// What a graph must offer for activation to run over it: dense `u32` node indices and, per
/// node, its outgoing edges that carry activation.
///
/// Implemented by [`Graph`](super::Graph) and [`CsrGraph`](super::CsrGraph). An implementor
/// must only report finite, non-negative weights (the parallel path orders activations by
/// their bits).
pub trait Adjacency: Sync {
    /// Every dense index is below this bound.
    fn node_bound(&self) -> usize;

    /// The dense index of `id`, if it is a node.
    fn dense_index(&self, id: RecordId) -> Option<u32>;

    /// The id of the node at dense index `node` (which must be a node).
    fn record_id(&self, node: u32) -> RecordId;

    /// Calls `visit(target, weight)` for every outgoing ASSOCIATES or CAUSES edge of `node`.
    fn for_each_carrier<F: FnMut(u32, f64)>(&self, node: u32, visit: F);

    /// Calls `visit(target, weight, valence)` for every outgoing ASSOCIATES or CAUSES edge of
    /// `node`, in the order of [`for_each_carrier`](Self::for_each_carrier) (valence 0 when the
    /// edge has none).
    fn for_each_carrier_valence<F: FnMut(u32, f64, f64)>(&self, node: u32, visit: F);

    /// Reads `node`'s carriers ahead of [`for_each_carrier`](Self::for_each_carrier), so that
    /// a spread can start the memory loads of a whole level at once, and returns something
    /// computed from what it read (the caller folds it into `std::hint::black_box`). The
    /// default reads nothing.
    #[inline]
    fn touch_carriers(&self, node: u32) -> u64 {
        let _ = node;
        0
    }
}

/// The result of a spread: every activated node with its activation, seeds included.
///
/// [`ranked`](Self::ranked) gives what a layer's `recall_associated` returns (seeds excluded,
/// best first); [`iter`](Self::iter) and [`to_map`](Self::to_map) give the whole map. Two
/// activations are equal when they hold the same seeds and the same nodes with the same
/// values, in whatever order.
#[derive(Debug, Clone, Default)]
pub struct Activation {
    /// Seeds first (in the order given, each once), then every other activated node, in no
    /// particular order.
    entries: Vec<(RecordId, f64)>,
    n_seeds: usize,
    /// One valence per entry when the spread carried valence, else empty.
    valence: Vec<f64>,
}

impl Activation {
    /// Number of activated nodes, seeds included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was activated (no seed was a node).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every activated node with its activation: the seeds first, then the others in no
    /// particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (RecordId, f64)> + '_ {
        self.entries.iter().copied()
    }

    /// The seeds that were nodes, each once, in the order given, with their final activation.
    pub fn seeds(&self) -> &[(RecordId, f64)] {
        &self.entries[..self.n_seeds]
    }

    /// The activated nodes that are not seeds, in no particular order.
    pub fn reached(&self) -> &[(RecordId, f64)] {
        &self.entries[self.n_seeds..]
    }

    /// The activation of `id`, if it was activated (a linear scan; use
    /// [`to_map`](Self::to_map) for many lookups).
    pub fn get(&self, id: RecordId) -> Option<f64> {
        self.position(id).map(|i| self.entries[i].1)
    }

    /// The valence carried to `id`, when the spread carried valence and `id` was activated.
    pub fn valence(&self, id: RecordId) -> Option<f64> {
        self.position(id).and_then(|i| self.valence.get(i).copied())
    }

    /// The whole map, seeds included.
    pub fn to_map(&self) -> FxHashMap<RecordId, f64> {
        self.entries.iter().copied().collect()
    }

    /// The activated nodes other than the seeds, by activation descending, ties by id
    /// ascending, at most `limit` of them.
    pub fn ranked(&self, limit: Option<usize>) -> Vec<(RecordId, f64)> {
        let mut out = self.reached().to_vec();
        let by_rank = |x: &(RecordId, f64), y: &(RecordId, f64)| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0));
        if let Some(k) = limit {
            if k == 0 {
                return Vec::new();
            }
            if k < out.len() {
                out.select_nth_unstable_by(k - 1, by_rank);
                out.truncate(k);
            }
        }
        out.sort_unstable_by(by_rank);
        out
    }

    fn position(&self, id: RecordId) -> Option<usize> {
        self.entries.iter().position(|e| e.0 == id)
    }
}

impl PartialEq for Activation {
    fn eq(&self, other: &Self) -> bool {
        let sorted = |a: &Self| {
            let mut seeds: Vec<(RecordId, u64)> = a.seeds().iter().map(|e| (e.0, e.1.to_bits())).collect();
            let mut rest: Vec<(RecordId, u64)> = a.reached().iter().map(|e| (e.0, e.1.to_bits())).collect();
            seeds.sort_unstable();
            rest.sort_unstable();
            (seeds, rest)
        };
        self.len() == other.len() && self.n_seeds == other.n_seeds && sorted(self) == sorted(other)
    }
}

/// Spreads activation from `seeds` over `graph`, sequentially; the activations are exactly
/// those of the reference's FIFO queue with re-expansion. Seeds that are not nodes are
/// ignored.
///
/// It runs level by level: every node whose activation improved during a level is expanded
/// once in the next, with its best value (a smaller value of the same node and depth only
/// spreads dominated products, so the maxima are the queue's). Before a level is expanded,
/// its nodes' edges are read in one pass, so that their cache misses overlap instead of
/// following each other; the activations are kept in a small open-addressing table sized for
/// the few hundred nodes a spread usually reaches.
pub fn spread<A: Adjacency + ?Sized>(graph: &A, seeds: &[RecordId], params: &ActivationParams) -> Activation {
    run_levels(graph, seeds, params, None)
}

/// [`spread`], also carrying valence: a seed starts at 0 and a node's valence is
/// `parent_valence * decay + edge valence` along the path that set its maximum (the first
/// such path in the reference's queue order when several tie). This one runs the reference's
/// FIFO queue itself, since ties depend on its order.
pub fn spread_with_valence<A: Adjacency + ?Sized>(
    graph: &A,
    seeds: &[RecordId],
    params: &ActivationParams,
) -> Activation {
    spread_queue_valence(graph, seeds, params)
}

/// Spreads activation level by level, expanding large levels in parallel on rayon; returns
/// exactly what [`spread`] returns.
///
/// It runs [`spread`]'s levels while they are small, so a small spread costs what [`spread`]
/// costs; once a level is large against the graph, the activations move to a dense atomic
/// store and levels of many nodes are split across rayon's threads.
pub fn spread_parallel<A: Adjacency + ?Sized>(
    graph: &A,
    seeds: &[RecordId],
    params: &ActivationParams,
) -> Activation {
    run_levels(graph, seeds, params, Some(Tuning::DEFAULT))
}

/// When the level-synchronous path switches to the dense store and to rayon.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tuning {
    /// A level of at least this many nodes moves to the dense store ...
    pub(super) dense_min: usize,
    /// ... when it also holds at least `node_bound / dense_ratio` nodes.
    pub(super) dense_ratio: usize,
    /// A level of at least this many nodes is expanded on rayon.
    pub(super) parallel_min: usize,
    /// Frontier nodes per rayon task.
    pub(super) chunk: usize,
}

impl Tuning {
    pub(super) const DEFAULT: Self =
        Self { dense_min: 2048, dense_ratio: 64, parallel_min: 2048, chunk: 512 };

    /// True when a level of `len` nodes should move to the dense store.
    fn goes_dense(&self, len: usize, node_bound: usize) -> bool {
        len >= self.dense_min && len.saturating_mul(self.dense_ratio) >= node_bound
    }
}

/// [`spread_parallel`] with explicit switch points (the tests force the dense store and
/// rayon on tiny graphs).
#[cfg(test)]
pub(super) fn spread_levels<A: Adjacency + ?Sized>(
    graph: &A,
    seeds: &[RecordId],
    params: &ActivationParams,
    tuning: Tuning,
) -> Activation {
    run_levels(graph, seeds, params, Some(tuning))
}

/// The nodes a sequential spread reached: `nodes[i]` and `values[i]` in the order they were
/// first reached (seeds first), `levels[i]` the last level whose frontier node `i` joined
/// (0 for none but the seeds'), and an open-addressing table from dense index to position
/// (Fibonacci hashing, linear probing, 8 bytes a slot, at most half full). The table starts
/// at 512 slots (4 KiB, room for a typical spread) and doubles as needed; the positions make
/// the frontier and the result plain array reads.
struct Touched {
    /// `(node, position)`, node [`Touched::FREE`] when the slot is free.
    table: Vec<(u32, u32)>,
    /// `32 - log2(table.len())`.
    shift: u32,
    nodes: Vec<u32>,
    values: Vec<f64>,
    levels: Vec<u32>,
}

impl Touched {
    const FREE: u32 = u32::MAX;

    fn new(expected: usize) -> Self {
        let n_slots = (expected * 2).next_power_of_two().max(16);
        Self {
            table: vec![(Self::FREE, 0); n_slots],
            shift: 32 - n_slots.trailing_zeros(),
            nodes: Vec::with_capacity(expected),
            values: Vec::with_capacity(expected),
            levels: Vec::with_capacity(expected),
        }
    }

    /// The position of `node` (`Ok`), or the free slot it would take (`Err`).
    #[inline]
    fn find(&self, node: u32) -> std::result::Result<usize, usize> {
        let mask = self.table.len() - 1;
        let mut i = (node.wrapping_mul(0x9E37_79B9) >> self.shift) as usize;
        loop {
            let (n, position) = self.table[i];
            if n == node {
                return Ok(position as usize);
            }
            if n == Self::FREE {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `node` in the free slot `slot` (from [`find`](Self::find)); returns its position.
    #[inline]
    fn insert(&mut self, slot: usize, node: u32, value: f64, level: u32) -> usize {
        let position = self.nodes.len();
        self.table[slot] = (node, position as u32);
        self.nodes.push(node);
        self.values.push(value);
        self.levels.push(level);
        if self.nodes.len() * 2 > self.table.len() {
            self.grow();
        }
        position
    }

    /// Makes room for `more` nodes beyond those reached, growing at most once.
    #[inline]
    fn reserve(&mut self, more: usize) {
        let needed = (self.nodes.len() + more) * 2;
        if needed > self.table.len() {
            self.grow_to(needed.next_power_of_two());
        }
    }

    #[cold]
    fn grow(&mut self) {
        self.grow_to(self.table.len() * 2);
    }

    #[cold]
    fn grow_to(&mut self, n_slots: usize) {
        self.table.clear();
        self.table.resize(n_slots, (Self::FREE, 0));
        self.shift = 32 - n_slots.trailing_zeros();
        for (position, &node) in self.nodes.iter().enumerate() {
            if let Err(slot) = self.find(node) {
                self.table[slot] = (node, position as u32);
            }
        }
    }
}

/// The level-synchronous spread ([`spread`]), moving to the dense store ([`Dense`]) when a
/// level is large against the graph and `switch` allows it.
fn run_levels<A: Adjacency + ?Sized>(
    graph: &A,
    seeds: &[RecordId],
    params: &ActivationParams,
    switch: Option<Tuning>,
) -> Activation {
    let &ActivationParams { initial, decay, threshold, max_depth } = params;
    let mut touched = Touched::new(graph.node_bound().min(256));
    // The level being expanded, as nodes with their value at the end of the previous level
    // (a node improved during this level spreads its new value in the next one), and the
    // positions in `touched` of the nodes that join the next level.
    let mut frontier: Vec<(u32, f64)> = Vec::with_capacity(seeds.len().max(16));
    let mut next: Vec<u32> = Vec::with_capacity(16);
    for &s in seeds {
        if let Some(n) = graph.dense_index(s)
            && let Err(slot) = touched.find(n)
        {
            touched.insert(slot, n, initial, 0);
            frontier.push((n, initial));
        }
    }
    let n_seeds = touched.nodes.len();
    let mut level = 0;
    while level < max_depth && !frontier.is_empty() {
        if let Some(tuning) = switch.filter(|t| t.goes_dense(frontier.len(), graph.node_bound())) {
            let _s = tracing::debug_span!("spread_dense", level, frontier = frontier.len()).entered();
            let act = touched.nodes.iter().copied().zip(touched.values.iter().copied());
            let dense = Dense::new(graph.node_bound(), act, touched.nodes[..n_seeds].to_vec());
            frontier.sort_unstable_by_key(|e| e.0);
            return dense.run(graph, params, tuning, frontier, level);
        }
        let next_level = level + 1;
        let expands = next_level < max_depth;
        if frontier.len() > 1 {
            let warm = frontier.iter().fold(0, |acc, &(u, _)| acc ^ graph.touch_carriers(u));
            std::hint::black_box(warm);
            // Guess eight new nodes per frontier node (capped by the graph), so that a spread
            // that widens grows its table once, while it is still small.
            touched.reserve((frontier.len() * 8).min(graph.node_bound()));
        }
        for &(u, a) in &frontier {
            let base = a * decay;
            graph.for_each_carrier(u, |t, w| {
                let na = base * w;
                // A NaN (an infinite activation times a zero weight) is dropped too.
                if na < threshold || na.is_nan() {
                    return;
                }
                match touched.find(t) {
                    Err(slot) => {
                        let position = touched.insert(slot, t, na, next_level);
                        if expands {
                            next.push(position as u32);
                        }
                    }
                    Ok(position) => {
                        if na > touched.values[position] {
                            touched.values[position] = na;
                            if expands && touched.levels[position] != next_level {
                                touched.levels[position] = next_level;
                                next.push(position as u32);
                            }
                        }
                    }
                }
            });
        }
        frontier.clear();
        frontier.extend(next.iter().map(|&p| (touched.nodes[p as usize], touched.values[p as usize])));
        next.clear();
        level = next_level;
    }
    let entries = touched.nodes.iter().zip(&touched.values).map(|(&n, &a)| (graph.record_id(n), a)).collect();
    Activation { entries, n_seeds, valence: Vec::new() }
}

/// The reference algorithm carrying valence: a FIFO of `(node, activation, valence, depth)`
/// entries; a node improved later is expanded again.
fn spread_queue_valence<A: Adjacency + ?Sized>(
    graph: &A,
    seeds: &[RecordId],
    params: &ActivationParams,
) -> Activation {
    let &ActivationParams { initial, decay, threshold, max_depth } = params;
    let mut act: FxHashMap<u32, (f64, f64)> = FxHashMap::default();
    let mut queue: VecDeque<(u32, f64, f64, u32)> = VecDeque::with_capacity(64);
    let mut seed_nodes: Vec<u32> = Vec::with_capacity(seeds.len());
    for &s in seeds {
        if let Some(n) = graph.dense_index(s)
            && let Entry::Vacant(v) = act.entry(n)
        {
            v.insert((initial, 0.0));
            seed_nodes.push(n);
            queue.push_back((n, initial, 0.0, 0));
        }
    }
    while let Some((n, a, valence, depth)) = queue.pop_front() {
        if depth >= max_depth {
            continue;
        }
        let base = a * decay;
        let next_depth = depth + 1;
        let expands = next_depth < max_depth;
        graph.for_each_carrier_valence(n, |t, w, ev| {
            let na = base * w;
            if na < threshold || na.is_nan() {
                return;
            }
            let next = valence * decay + ev;
            let improved = match act.entry(t) {
                Entry::Vacant(v) => {
                    v.insert((na, next));
                    true
                }
                Entry::Occupied(mut o) => {
                    let slot = o.get_mut();
                    let better = na > slot.0;
                    if better {
                        *slot = (na, next);
                    }
                    better
                }
            };
            if improved && expands {
                queue.push_back((t, na, next, next_depth));
            }
        });
    }
    let mut entries = Vec::with_capacity(act.len());
    let mut valences = Vec::with_capacity(act.len());
    for &n in &seed_nodes {
        if let Some((a, v)) = act.remove(&n) {
            entries.push((graph.record_id(n), a));
            valences.push(v);
        }
    }
    for (n, (a, v)) in act {
        entries.push((graph.record_id(n), a));
        valences.push(v);
    }
    Activation { entries, n_seeds: seed_nodes.len(), valence: valences }
}

/// The dense level-synchronous store: per node, `bits + 1` of its activation (0 = not
/// activated; activations are non-negative, so the bits order like the values and
/// `fetch_max` merges by max), and the last level at which it joined a frontier.
///
/// The frontier of level `d` holds every node whose activation improved during level
/// `d - 1`, with its value at the end of that level; a value reached at a shallower or equal
/// depth dominates a smaller one, so this keeps exactly the maxima the queue keeps.
struct Dense {
    best: Vec<AtomicU64>,
    stamp: Vec<AtomicU32>,
    /// Every activated node once, seeds first.
    order: Vec<u32>,
    n_seeds: usize,
}

#[inline]
fn encode(x: f64) -> u64 {
    x.to_bits() + 1
}

#[inline]
fn decode(bits: u64) -> f64 {
    f64::from_bits(bits - 1)
}

/// Per-task output of one dense level: nodes that joined the next frontier and nodes
/// activated for the first time.
#[derive(Default)]
struct LevelOut {
    next: Vec<u32>,
    fresh: Vec<u32>,
}

impl LevelOut {
    fn merge(mut self, mut other: Self) -> Self {
        self.next.append(&mut other.next);
        self.fresh.append(&mut other.fresh);
        self
    }
}

impl Dense {
    /// The store holding `act` (every activated node with its value, seeds included), with
    /// `seeds` first in its order.
    fn new(bound: usize, act: impl Iterator<Item = (u32, f64)>, seeds: Vec<u32>) -> Self {
        let best: Vec<AtomicU64> = (0..bound).map(|_| AtomicU64::new(0)).collect();
        let stamp: Vec<AtomicU32> = (0..bound).map(|_| AtomicU32::new(0)).collect();
        let n_seeds = seeds.len();
        let mut order = seeds;
        for &s in &order {
            best[s as usize].store(encode(0.0), Relaxed);
        }
        for (n, a) in act {
            if best[n as usize].swap(encode(a), Relaxed) == 0 {
                order.push(n);
            }
        }
        Self { best, stamp, order, n_seeds }
    }

    fn value(&self, n: u32) -> f64 {
        decode(self.best[n as usize].load(Relaxed))
    }

    fn run<A: Adjacency + ?Sized>(
        mut self,
        graph: &A,
        params: &ActivationParams,
        tuning: Tuning,
        mut frontier: Vec<(u32, f64)>,
        mut level: u32,
    ) -> Activation {
        while level < params.max_depth && !frontier.is_empty() {
            let next_level = level + 1;
            let out = if frontier.len() >= tuning.parallel_min {
                frontier
                    .par_chunks(tuning.chunk.max(1))
                    .fold(LevelOut::default, |mut out, chunk| {
                        self.expand(graph, params, chunk, next_level, &mut out);
                        out
                    })
                    .reduce(LevelOut::default, LevelOut::merge)
            } else {
                let mut out = LevelOut::default();
                self.expand(graph, params, &frontier, next_level, &mut out);
                out
            };
            self.order.extend_from_slice(&out.fresh);
            // Expanding in node order walks the adjacency arrays forward instead of jumping.
            let mut next = out.next;
            frontier = if next.len() >= tuning.parallel_min {
                next.par_sort_unstable();
                next.par_iter().map(|&t| (t, self.value(t))).collect()
            } else {
                next.sort_unstable();
                next.iter().map(|&t| (t, self.value(t))).collect()
            };
            level = next_level;
        }
        let entries = if self.order.len() >= tuning.parallel_min {
            self.order.par_iter().map(|&n| (graph.record_id(n), self.value(n))).collect()
        } else {
            self.order.iter().map(|&n| (graph.record_id(n), self.value(n))).collect()
        };
        Activation { entries, n_seeds: self.n_seeds, valence: Vec::new() }
    }

    /// Expands `frontier` into the store; safe to run on several threads at once.
    fn expand<A: Adjacency + ?Sized>(
        &self,
        graph: &A,
        params: &ActivationParams,
        frontier: &[(u32, f64)],
        next_level: u32,
        out: &mut LevelOut,
    ) {
        let &ActivationParams { decay, threshold, max_depth, .. } = params;
        let expands = next_level < max_depth;
        for &(u, a) in frontier {
            let base = a * decay;
            graph.for_each_carrier(u, |t, w| {
                let na = base * w;
                if na < threshold || na.is_nan() {
                    return;
                }
                let bits = encode(na);
                let slot = &self.best[t as usize];
                if slot.load(Relaxed) >= bits {
                    return;
                }
                let previous = slot.fetch_max(bits, Relaxed);
                if previous >= bits {
                    return;
                }
                if previous == 0 {
                    out.fresh.push(t);
                }
                if expands && self.stamp[t as usize].swap(next_level, Relaxed) != next_level {
                    out.next.push(t);
                }
            });
        }
    }
}
