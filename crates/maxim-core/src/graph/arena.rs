//! The carrier arena: each node's outgoing ASSOCIATES and CAUSES edges kept as one
//! contiguous run of `(target, edge, weight)` carriers in one vector shared by every node, so
//! that a spread reads a node's edges from one or two cache lines instead of following
//! petgraph's linked edge lists.
//!
//! A run has room to grow; a full run moves to the end of the arena with twice the room, and
//! once the garbage the moves leave passes an eighth of the live room the arena is packed
//! (see [`Graph::maybe_compact_arena`]). [`Slot`] is what the graph keeps per node beside
//! petgraph and the node's id: its run and its degree counters.

use petgraph::stable_graph::EdgeIndex;

use super::store::{Graph, Ix};

/// Garbage the carrier arena may hold beyond an eighth of its live runs before it is packed (small
/// under test, so that the property tests pack it often).
pub(super) const COMPACT_SLACK: usize = if cfg!(test) { 4 } else { 1024 };

/// What the graph keeps per node index beside petgraph and the node's id: where the node's
/// carriers sit in the arena, and its degree counters (36 bytes; the fields a spread reads
/// first, `start` and `len`, cross a cache line for one node in sixteen).
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// The node's outgoing ASSOCIATES and CAUSES edges are `arena[start..start + len]`, in no
    /// particular order; the run has room up to `start + cap`.
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) cap: u32,
    /// Incoming edges.
    pub(super) inc: u32,
    /// Outgoing edges per kind, indexed by [`EdgeKind::slot`].
    pub(super) out: [u32; 5],
}

const _: () = assert!(std::mem::size_of::<Slot>() == 36);

impl Slot {
    pub(super) fn new() -> Self {
        Self { start: 0, len: 0, cap: 0, inc: 0, out: [0; 5] }
    }

    #[inline]
    pub(super) fn run(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// An outgoing edge that carries activation, as a spread reads it (16 bytes).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Carrier {
    pub(super) target: u32,
    /// The petgraph edge, for its valence and for upkeep.
    pub(super) edge: u32,
    pub(super) weight: f64,
}

impl Graph {
    /// Appends a carrier to node `n`'s run, moving the run to the end of the arena with twice
    /// the room when it is full.
    pub(super) fn push_carrier(&mut self, n: usize, carrier: Carrier) {
        let Slot { start, len, cap, .. } = self.slots[n];
        if len < cap {
            self.arena[(start + len) as usize] = carrier;
            self.slots[n].len += 1;
            return;
        }
        if (start + cap) as usize == self.arena.len() {
            // The run ends the arena: grow it in place.
            self.arena.push(carrier);
            let slot = &mut self.slots[n];
            slot.len += 1;
            slot.cap += 1;
            self.arena_used += 1;
            return;
        }
        let new_cap = (cap * 2).max(4);
        let new_start = self.arena.len();
        self.arena.extend_from_within(start as usize..(start + len) as usize);
        self.arena.push(carrier);
        self.arena.resize(new_start + new_cap as usize, Carrier::default());
        let slot = &mut self.slots[n];
        (slot.start, slot.len, slot.cap) = (new_start as u32, len + 1, new_cap);
        self.arena_used += (new_cap - cap) as usize;
        self.maybe_compact_arena();
    }

    /// Removes the carrier of edge `e` from node `n`'s run.
    pub(super) fn drop_carrier(&mut self, n: usize, e: EdgeIndex<Ix>) {
        let slot = &mut self.slots[n];
        let run = &mut self.arena[slot.run()];
        if let Some(i) = run.iter().position(|c| c.edge == e.index() as u32) {
            run.swap(i, run.len() - 1);
            slot.len -= 1;
        }
    }

    /// Packs the live runs, in node order, once the garbage passes an eighth of them (so the
    /// arena stays within 12.5% of the room the runs hold, room included; the copies this
    /// costs are amortized over the moves that made the garbage).
    ///
    /// A run keeps room for a quarter more carriers than it holds (rounded up; less if it had
    /// less): packing every run tight would make the next carrier of any node move its run
    /// again, so nodes that gain and lose an edge now and then (an episode linked to a new
    /// one that is soon removed) would refill the arena with garbage within a few thousand
    /// edges and make it pack again and again.
    pub(super) fn maybe_compact_arena(&mut self) {
        if self.arena.len() <= self.arena_used + self.arena_used / 8 + COMPACT_SLACK {
            return;
        }
        let room = |s: &Slot| s.cap.min(s.len.saturating_add(s.len.div_ceil(4)));
        let mut packed = Vec::with_capacity(self.slots.iter().map(|s| room(s) as usize).sum());
        for slot in &mut self.slots {
            let cap = room(slot);
            // A run without room starts at 0 (see `reset_node`).
            let start = if cap == 0 { 0 } else { packed.len() as u32 };
            packed.extend_from_slice(&self.arena[slot.run()]);
            packed.resize(packed.len() + (cap - slot.len) as usize, Carrier::default());
            (slot.start, slot.cap) = (start, cap);
        }
        self.arena_used = packed.len();
        self.arena = packed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeKind;
    use crate::id::RecordId;

    #[test]
    fn carrier_runs_move_and_get_packed() {
        let ids: Vec<RecordId> = (1..=64).map(RecordId::from_u128).collect();
        let mut g = Graph::new();
        // Round robin: every node's run fills up and moves to the end of the arena, again and
        // again, leaving garbage behind.
        for round in 1..=20 {
            for (i, &s) in ids.iter().enumerate() {
                let t = ids[(i + round) % ids.len()];
                g.add_edge(s, t, EdgeKind::Associates, 1.0 / round as f64, None).unwrap();
            }
        }
        g.check_invariants();
        let bound = |g: &Graph| g.arena_used + g.arena_used / 8 + COMPACT_SLACK;
        assert!(g.arena.len() <= bound(&g));
        // Removals leave their runs as garbage ...
        for &id in ids.iter().step_by(2) {
            g.remove_node(id);
        }
        g.check_invariants();
        assert!(g.arena.len() > bound(&g));
        assert_eq!(g.out_degree(ids[1], None), 10);
        // ... which the next move packs.
        for &s in ids.iter().skip(1).step_by(2) {
            for &t in ids.iter().skip(1).step_by(2) {
                g.add_edge(s, t, EdgeKind::Causes, 0.5, None).unwrap();
            }
        }
        g.check_invariants();
        assert!(g.arena.len() <= bound(&g));
    }
}
