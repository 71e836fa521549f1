//! The links between the cross-layer graph's nodes and each layer graph's dense indices,
//! cached so that a spread names every record it meets by one dense number without hashing
//! its id.
//!
//! A record can have two dense numbers: its node in the cross-layer graph (if it has a
//! cross-layer edge) and its index in its layer's core [`Graph`] (if it is a node there).
//! For each layer, [`Links`] holds both directions: `node_of[index]` (the cross-layer node of
//! the layer graph's node at `index`) and `index_of[node]` (the layer-graph index of the
//! cross-layer node `node`). An entry is filled the first time a spread needs it (one hash
//! lookup, as before the cache) and both directions are filled together, so the tables hold
//! only pairs `node_of[i] == n` ⇔ `index_of[n] == i`, or [`UNKNOWN`]. "No partner" is never
//! cached: a spread that meets such a record looks it up every time, as it always did.
//!
//! # Staying right
//!
//! - A layer graph's indices change meaning only when it loses a node (a later node reuses
//!   the index) or when it is another graph: [`Graph::numbering`] changes then, and the
//!   layer's tables are emptied before the next spread reads them. Adding nodes keeps every
//!   pair true (the tables grow with the graph).
//! - A cross-layer node changes meaning only when its record loses its last edge (the next
//!   new record reuses the node): [`State`](crate::store::State) calls [`LinkTables::forget`]
//!   then, which empties that node's pair. A new node starts without a pair.
//! - A loaded or rebuilt graph starts with empty tables.
//!
//! A spread takes each layer's tables for its whole length (one uncontended lock), so two
//! spreads over different graphs of the same layer never mix their entries; a spread that
//! finds the tables taken by another runs without them. Within a spread the rayon tasks
//! share the tables through relaxed atomics: every value any task writes is true for the
//! graphs the spread borrows, and the borrows keep them from changing until it ends.

use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use maxim_core::graph::{Graph, Numbering};

/// Not looked up yet.
pub(crate) const UNKNOWN: u32 = u32::MAX - 1;
/// No partner: a record without a cross-layer edge, or absent from its layer's graph.
pub(crate) const NONE: u32 = u32::MAX;

/// One layer's cached pairs.
#[derive(Debug, Default)]
pub(crate) struct Links {
    /// The layer graph the pairs belong to, as it numbered its nodes when they were made.
    numbering: Option<Numbering>,
    /// Per layer-graph index: its record's cross-layer node, or [`UNKNOWN`].
    node_of: Vec<AtomicU32>,
    /// Per cross-layer node: its record's layer-graph index, or [`UNKNOWN`].
    index_of: Vec<AtomicU32>,
}

impl Links {
    /// Makes the tables valid for `graph` and a cross-layer graph of `nodes` nodes.
    fn prepare(&mut self, graph: &Graph, nodes: usize) {
        let numbering = graph.numbering();
        if self.numbering != Some(numbering) {
            for e in self.node_of.iter_mut().chain(self.index_of.iter_mut()) {
                *e.get_mut() = UNKNOWN;
            }
            self.numbering = Some(numbering);
        }
        let bound = maxim_core::graph::Adjacency::node_bound(graph);
        if self.node_of.len() < bound {
            self.node_of.resize_with(bound, || AtomicU32::new(UNKNOWN));
        }
        if self.index_of.len() < nodes {
            self.index_of.resize_with(nodes, || AtomicU32::new(UNKNOWN));
        }
    }

    /// The cross-layer node paired with layer-graph index `index`, or [`UNKNOWN`].
    #[inline]
    pub(crate) fn node_of(&self, index: u32) -> u32 {
        self.node_of[index as usize].load(Relaxed)
    }

    /// The layer-graph index paired with cross-layer node `node`, or [`UNKNOWN`].
    #[inline]
    pub(crate) fn index_of(&self, node: u32) -> u32 {
        self.index_of[node as usize].load(Relaxed)
    }

    /// Records that layer-graph index `index` and cross-layer node `node` name one record.
    #[inline]
    pub(crate) fn pair(&self, index: u32, node: u32) {
        self.node_of[index as usize].store(node, Relaxed);
        self.index_of[node as usize].store(index, Relaxed);
    }
}

/// Every layer's [`Links`], owned by the cross-layer graph's state.
#[derive(Debug, Default)]
pub(crate) struct LinkTables([Mutex<Links>; 4]);

impl Clone for LinkTables {
    /// A copy starts empty: the pairs are a cache.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl LinkTables {
    /// Cross-layer node `node` of layer slot `layer` is going away (its record lost its last
    /// edge): its pair, if any, is emptied.
    pub(crate) fn forget(&mut self, layer: usize, node: u32) {
        let links = self.0[layer].get_mut().unwrap_or_else(PoisonError::into_inner);
        let Some(e) = links.index_of.get_mut(node as usize) else { return };
        let index = std::mem::replace(e.get_mut(), UNKNOWN);
        if index != UNKNOWN
            && let Some(back) = links.node_of.get_mut(index as usize)
        {
            *back.get_mut() = UNKNOWN;
        }
    }

    /// Takes layer slot `layer`'s tables for a spread over `graph` with a cross-layer graph
    /// of `nodes` nodes, made valid for them; `None` when another spread holds them.
    pub(crate) fn take(&self, layer: usize, graph: &Graph, nodes: usize) -> Option<MutexGuard<'_, Links>> {
        let mut guard = match self.0[layer].try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        guard.prepare(graph, nodes);
        Some(guard)
    }
}
