//! [`TraceStore`]: traces with payloads, keyed by [`RecordId`], with the store-level
//! behaviour of lex-memory (§5.2-§5.9, §6.1): decay cycles, tier migration, reinforcement,
//! ranked retrieval, Hebbian links and erasure.
//!
//! The store keeps no strengths. Every call that filters, orders or prunes by strength takes
//! a `now` and reads [`TraceState::strength_at`] there, so its answer does not depend on
//! whether, or when, a decay cycle last ran; a decay cycle only deletes the traces that have
//! faded out.
//!
//! Storage is dense: parallel vectors indexed by a `u32`, an `FxHashMap` from id to index.
//! Entries keep their insertion order, except that [`TraceStore::remove`] moves the last entry
//! into the freed slot; bulk removals (decay cycles, erasure) keep the relative order. Every
//! sorted answer breaks ties by id, so results never depend on that order.
//!
//! Where the reference is wrong, the store differs on purpose (see `docs/decisions.md`):
//! a removed trace leaves no id behind in any link list or co-activation count; links are
//! always symmetric; a full link list (20) gives up its weakest link to a strictly stronger
//! pair instead of dropping the new one on one side; [`TraceStore::record_coactivation`]
//! answers whether the pair is linked and refuses unknown ids; erasure has no cap.
//!
//! ```
//! use std::time::Duration;
//! use maxim_core::{RecordId, Timestamp};
//! use maxim_core::trace::{ReinforceOutcome, TraceEntry, TraceKind, TraceParams, TraceState, TraceStore};
//! let t0 = Timestamp::from_secs(1_000_000);
//! let mut store = TraceStore::new(TraceParams::default());
//! let id = RecordId::from_u128(7);
//! store.insert(TraceEntry::new(id, TraceState::new(TraceKind::Semantic, t0), ()))?;
//! assert_eq!(store.reinforce(id, t0), ReinforceOutcome::Reinforced { new_strength: 0.6 });
//! assert_eq!(store.reinforce(RecordId::from_u128(8), t0), ReinforceOutcome::NotFound);
//! // One hour later: recency halves the score, and 60 ticks of decay trim the strength.
//! let later = t0 + Duration::from_secs(3_600);
//! let ranked = store.retrieve_ranked(&[id], later);
//! let strength = store.get(id).unwrap().state.strength_at(later, store.params());
//! assert!(strength < 0.6);
//! assert_eq!(ranked[0].score, strength * 0.5);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use super::TraceKind;
use super::formula::{
    COACTIVATION_THRESHOLD, MAX_ASSOCIATIONS, PRUNE_THRESHOLD, RETRIEVE_AND_REINFORCE_MIN_STRENGTH,
    StorageTier,
};
use super::state::{ReinforceError, TraceParams, TraceState, decay_all};
use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::Partition;
use crate::time::Timestamp;

/// An owned trace: what goes into a [`TraceStore`] and what comes out of
/// [`TraceStore::remove`].
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry<P> {
    /// The trace's id.
    pub id: RecordId,
    /// The agent (or user) partition it belongs to, if any; see
    /// [`TraceStore::erase_by_partition`].
    pub partition: Option<Partition>,
    /// Its trace state.
    pub state: TraceState,
    /// What it remembers.
    pub payload: P,
}

impl<P> TraceEntry<P> {
    /// An entry without a partition.
    pub fn new(id: RecordId, state: TraceState, payload: P) -> Self {
        Self { id, partition: None, state, payload }
    }

    /// The same entry in `partition`.
    pub fn with_partition(mut self, partition: Partition) -> Self {
        self.partition = Some(partition);
        self
    }
}

/// A borrowed view of one trace of a [`TraceStore`].
#[derive(Debug)]
pub struct TraceRef<'a, P> {
    /// The trace's id.
    pub id: RecordId,
    /// Its partition, if any.
    pub partition: Option<&'a Partition>,
    /// Its trace state.
    pub state: &'a TraceState,
    /// Its payload.
    pub payload: &'a P,
    /// Its storage-tier label, as of the last [`TraceStore::migrate_tiers`] (`Hot` when new).
    pub tier: StorageTier,
}

impl<P> Clone for TraceRef<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for TraceRef<'_, P> {}

/// What [`TraceStore::decay_cycle`] did. Zero-rate (firmware) traces are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecayCycleReport {
    /// Decaying traces whose strength at the cycle's `now` is above [`PRUNE_THRESHOLD`]: they
    /// remain.
    pub decayed: usize,
    /// Traces deleted because their strength at the cycle's `now` is [`PRUNE_THRESHOLD`] or
    /// below.
    pub pruned: usize,
}

/// The answer of [`TraceStore::reinforce`] (the reference runner's `found` / `reinforced` /
/// `reason`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReinforceOutcome {
    /// No trace has this id (`found: false`).
    NotFound,
    /// The trace is firmware and was left unchanged (`reinforced: false, reason: firmware`).
    Firmware,
    /// The trace was reinforced to `new_strength`.
    Reinforced {
        /// The reinforced strength, [`TraceState::reinforce`]'s value (lex-memory's
        /// `new_strength`); the trace's strength at that time is at least this, more only by
        /// the rounding of its effective age to whole ticks.
        new_strength: f64,
    },
}

/// One answer of [`TraceStore::retrieve_ranked`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The trace.
    pub id: RecordId,
    /// Its retrieval score (§5.4); not a probability, at most 2.3.
    pub score: f64,
}

/// One trace reached by [`TraceStore::walk_associations`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStep {
    /// The trace reached.
    pub id: RecordId,
    /// Links followed from the start (1 for a direct partner).
    pub depth: usize,
    /// The ids from the start to this trace, both included.
    pub path: Vec<RecordId>,
}

/// Hebbian state of one trace: co-activation counts with other stored traces and its links
/// (in the order they formed, so the first is the oldest).
#[derive(Debug, Clone, Default)]
struct Assoc {
    counts: FxHashMap<RecordId, u32>,
    links: Vec<RecordId>,
}

/// Whether a trace has room for one more link.
enum Slot {
    Free,
    /// Room once the link to this partner (the weakest) is dropped.
    Replace(RecordId),
    Full,
}

/// Traces with payloads of type `P`, keyed by [`RecordId`].
///
/// The store holds the [`TraceParams`] (tick length, imprint window) its time-based calls use.
#[derive(Debug, Clone)]
pub struct TraceStore<P> {
    params: TraceParams,
    ids: Vec<RecordId>,
    states: Vec<TraceState>,
    tiers: Vec<StorageTier>,
    partitions: Vec<Option<Partition>>,
    payloads: Vec<P>,
    assoc: Vec<Assoc>,
    index: FxHashMap<RecordId, u32>,
}

impl<P> Default for TraceStore<P> {
    fn default() -> Self {
        Self::new(TraceParams::default())
    }
}

impl<P> TraceStore<P> {
    /// An empty store using `params`.
    pub fn new(params: TraceParams) -> Self {
        Self {
            params,
            ids: Vec::new(),
            states: Vec::new(),
            tiers: Vec::new(),
            partitions: Vec::new(),
            payloads: Vec::new(),
            assoc: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &TraceParams {
        &self.params
    }

    /// Replaces the parameters (for example to start the imprint window).
    pub fn set_params(&mut self, params: TraceParams) {
        self.params = params;
    }

    /// Number of traces.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the store holds no trace.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether a trace has this id.
    pub fn contains(&self, id: RecordId) -> bool {
        self.index.contains_key(&id)
    }

    /// Adds a trace, with the tier label `Hot` and no links. An id already stored is
    /// [`Error::InvalidArgument`] and changes nothing.
    pub fn insert(&mut self, entry: TraceEntry<P>) -> Result<()> {
        if self.contains(entry.id) {
            return Err(Error::invalid("id", format!("{} is already stored", entry.id)));
        }
        let Ok(slot) = u32::try_from(self.ids.len()) else {
            return Err(Error::invalid("id", "the store holds u32::MAX traces already"));
        };
        self.index.insert(entry.id, slot);
        self.ids.push(entry.id);
        self.states.push(entry.state);
        self.tiers.push(StorageTier::Hot);
        self.partitions.push(entry.partition);
        self.payloads.push(entry.payload);
        self.assoc.push(Assoc::default());
        Ok(())
    }

    /// The trace with this id.
    pub fn get(&self, id: RecordId) -> Option<TraceRef<'_, P>> {
        self.slot(id).map(|i| self.view(i))
    }

    /// Every trace, in store order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TraceRef<'_, P>> + '_ {
        (0..self.ids.len()).map(|i| self.view(i))
    }

    /// The ids, in store order.
    pub fn ids(&self) -> &[RecordId] {
        &self.ids
    }

    /// The trace states, in store order (a slice [`decay_all`] works on).
    pub fn states(&self) -> &[TraceState] {
        &self.states
    }

    /// The state of the trace with this id, to change (rehearse, reinforce).
    pub fn state_mut(&mut self, id: RecordId) -> Option<&mut TraceState> {
        self.slot(id).map(|i| &mut self.states[i])
    }

    /// The payload of the trace with this id, to change.
    pub fn payload_mut(&mut self, id: RecordId) -> Option<&mut P> {
        self.slot(id).map(|i| &mut self.payloads[i])
    }

    /// Moves the trace with this id to `partition` (`None`: no partition).
    pub fn set_partition(&mut self, id: RecordId, partition: Option<Partition>) -> Result<()> {
        let i = self.slot(id).ok_or(Error::NotFound { id })?;
        self.partitions[i] = partition;
        Ok(())
    }

    /// Removes the trace with this id and returns it. Its co-activation counts and links go
    /// with it, on both sides: no other trace keeps its id. An unknown id is
    /// [`Error::NotFound`].
    pub fn remove(&mut self, id: RecordId) -> Result<TraceEntry<P>> {
        let i = self.slot(id).ok_or(Error::NotFound { id })?;
        self.detach(i);
        self.index.remove(&id);
        self.ids.swap_remove(i);
        self.tiers.swap_remove(i);
        self.assoc.swap_remove(i);
        let entry = TraceEntry {
            id,
            partition: self.partitions.swap_remove(i),
            state: self.states.swap_remove(i),
            payload: self.payloads.swap_remove(i),
        };
        if let Some(moved) = self.ids.get(i) {
            self.index.insert(*moved, i as u32);
        }
        Ok(entry)
    }

    /// One decay cycle at `now` (§5.2 with time-based ticks): the traces whose strength at
    /// `now` ([`TraceState::strength_at`]) is at or below [`PRUNE_THRESHOLD`] are removed as by
    /// [`TraceStore::remove`]; zero-rate (firmware) traces are never removed and not counted.
    /// Nothing else changes: the survivors' strengths are a function of time, not stored.
    pub fn decay_cycle(&mut self, now: Timestamp) -> DecayCycleReport {
        let _span = tracing::debug_span!("decay_cycle", n_traces = self.len()).entered();
        let mut strengths = Vec::new();
        let summary = decay_all(&self.states, now, &self.params, &mut strengths);
        let mut pruned = 0;
        if summary.prune_candidates > 0 {
            let doomed: Vec<bool> = self
                .states
                .iter()
                .zip(&strengths)
                .map(|(s, &strength)| s.base_decay_rate() != 0.0 && strength <= PRUNE_THRESHOLD)
                .collect();
            pruned = self.remove_flagged(&doomed);
        }
        tracing::debug!(decayed = summary.decayed, pruned, "decay cycle");
        DecayCycleReport { decayed: summary.decayed, pruned }
    }

    /// Recomputes every trace's tier label at `now` ([`TraceState::tier`], from the strength
    /// at `now`; firmware included) and returns how many changed (§5.5). The label is all that
    /// changes: an `Erased` trace stays in the store.
    pub fn migrate_tiers(&mut self, now: Timestamp) -> usize {
        let _span = tracing::debug_span!("migrate_tiers", n_traces = self.len()).entered();
        let mut changed = 0;
        for (tier, state) in self.tiers.iter_mut().zip(&self.states) {
            let new = state.tier(now, &self.params);
            if new != *tier {
                *tier = new;
                changed += 1;
            }
        }
        changed
    }

    /// Reinforces the trace with this id at `now` ([`TraceState::reinforce`], with the store's
    /// imprint window).
    pub fn reinforce(&mut self, id: RecordId, now: Timestamp) -> ReinforceOutcome {
        let Some(i) = self.slot(id) else {
            return ReinforceOutcome::NotFound;
        };
        match self.states[i].reinforce(now, &self.params) {
            Ok(new_strength) => ReinforceOutcome::Reinforced { new_strength },
            Err(ReinforceError::Firmware) => ReinforceOutcome::Firmware,
        }
    }

    /// The `limit` strongest traces at `now`, with strength at least 0.1 (§5.8), strongest
    /// first, ties by id. Each one with a non-zero decay rate is rehearsed and counted as
    /// reinforced ([`TraceState::mark_retrieved`]): it stays hot, and its strength and decay do
    /// not change. Firmware is returned but left alone.
    pub fn retrieve_and_reinforce(&mut self, limit: usize, now: Timestamp) -> Vec<RecordId> {
        let _span = tracing::debug_span!("retrieve_and_reinforce", limit).entered();
        let chosen = self.strongest_first(0..self.len(), RETRIEVE_AND_REINFORCE_MIN_STRENGTH, now, limit);
        for &i in &chosen {
            if self.states[i].base_decay_rate() != 0.0 {
                self.states[i].mark_retrieved(now);
            }
        }
        chosen.into_iter().map(|i| self.ids[i]).collect()
    }

    /// Scores the requested traces at `now` and ranks them (§5.7): unknown ids are dropped,
    /// a repeated id is scored each time, and a trace gets the association bonus when another
    /// requested trace is linked to it ([`TraceState::retrieval_score`], from the strength at
    /// `now`). Sorted by score, highest first, ties by id.
    pub fn retrieve_ranked(&self, ids: &[RecordId], now: Timestamp) -> Vec<Scored> {
        let _span = tracing::debug_span!("retrieve_ranked", n_ids = ids.len()).entered();
        let found: Vec<usize> = ids.iter().filter_map(|&id| self.slot(id)).collect();
        let bonus: FxHashSet<RecordId> =
            found.iter().flat_map(|&i| self.assoc[i].links.iter().copied()).collect();
        let mut scored: Vec<Scored> = found
            .iter()
            .map(|&i| {
                let id = self.ids[i];
                let score = self.states[i].retrieval_score(now, bonus.contains(&id), &self.params);
                Scored { id, score }
            })
            .collect();
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        scored
    }

    /// Up to `limit` traces of `kind` with strength at `now` at least `min_strength`,
    /// strongest first, ties by id.
    pub fn retrieve_by_kind(
        &self,
        kind: TraceKind,
        min_strength: f64,
        limit: usize,
        now: Timestamp,
    ) -> Vec<TraceRef<'_, P>> {
        let of_kind = (0..self.len()).filter(|&i| self.states[i].kind() == kind);
        self.strongest_first(of_kind, min_strength, now, limit).into_iter().map(|i| self.view(i)).collect()
    }

    /// Up to `limit` traces linked to `id` with strength at `now` at least `min_strength`,
    /// strongest first, ties by id. Empty for an unknown id.
    pub fn retrieve_associated(
        &self,
        id: RecordId,
        min_strength: f64,
        limit: usize,
        now: Timestamp,
    ) -> Vec<TraceRef<'_, P>> {
        let partners = self.associated(id).unwrap_or_default().iter().filter_map(|&p| self.slot(p));
        self.strongest_first(partners, min_strength, now, limit).into_iter().map(|i| self.view(i)).collect()
    }

    /// Records that `a` and `b` were active together and answers whether they are now linked.
    ///
    /// The pair's count rises by one; from the third co-activation on
    /// ([`COACTIVATION_THRESHOLD`]) the store tries to link them, on both sides or on neither.
    /// A trace holds at most [`MAX_ASSOCIATIONS`] links; when one side is full, its weakest
    /// link (lowest count, then oldest) gives way only if the new pair's count is strictly
    /// higher, and that link is dropped on both of its sides. A pair `a == b` records nothing
    /// and answers `false`. An unknown id is [`Error::NotFound`] and records nothing (the
    /// reference counts co-activations with ids it does not hold and answers `linked: true`
    /// to every call).
    pub fn record_coactivation(&mut self, a: RecordId, b: RecordId) -> Result<bool> {
        let ia = self.slot(a).ok_or(Error::NotFound { id: a })?;
        let ib = self.slot(b).ok_or(Error::NotFound { id: b })?;
        if ia == ib {
            return Ok(false);
        }
        let count = {
            let c = self.assoc[ia].counts.entry(b).or_insert(0);
            *c = c.saturating_add(1);
            *c
        };
        self.assoc[ib].counts.insert(a, count);
        if self.assoc[ia].links.contains(&b) {
            return Ok(true);
        }
        if count < COACTIVATION_THRESHOLD {
            return Ok(false);
        }
        let (slot_a, slot_b) = (self.slot_for(ia, count), self.slot_for(ib, count));
        if matches!(slot_a, Slot::Full) || matches!(slot_b, Slot::Full) {
            return Ok(false);
        }
        if let Slot::Replace(weakest) = slot_a {
            self.unlink(a, weakest);
        }
        if let Slot::Replace(weakest) = slot_b {
            self.unlink(b, weakest);
        }
        self.assoc[ia].links.push(b);
        self.assoc[ib].links.push(a);
        Ok(true)
    }

    /// How many times `a` and `b` were recorded together (0 for unknown ids).
    pub fn coactivation_count(&self, a: RecordId, b: RecordId) -> u32 {
        self.slot(a).and_then(|i| self.assoc[i].counts.get(&b).copied()).unwrap_or(0)
    }

    /// The traces linked to `id`, oldest link first; `None` for an unknown id.
    pub fn associated(&self, id: RecordId) -> Option<&[RecordId]> {
        self.slot(id).map(|i| self.assoc[i].links.as_slice())
    }

    /// Whether `a` and `b` are linked.
    pub fn is_linked(&self, a: RecordId, b: RecordId) -> bool {
        self.associated(a).is_some_and(|links| links.contains(&b))
    }

    /// Breadth-first walk over the links from `start` (§6.1): each trace is reported once,
    /// with its depth and the path from `start`; a trace whose strength at `now` is below
    /// `min_strength` is neither reported nor walked through; traces at depth `max_hops` are
    /// reported but not expanded. The start is never reported and its own strength is not
    /// checked; an unknown start gives nothing. Partners are visited in link order (oldest
    /// first).
    pub fn walk_associations(
        &self,
        start: RecordId,
        max_hops: usize,
        min_strength: f64,
        now: Timestamp,
    ) -> Vec<WalkStep> {
        let _span = tracing::debug_span!("walk_associations", %start, max_hops).entered();
        let Some(first) = self.slot(start) else {
            return Vec::new();
        };
        let mut steps: Vec<WalkStep> = Vec::new();
        let mut seen: FxHashSet<RecordId> = FxHashSet::default();
        seen.insert(start);
        // (index of the trace, index of its step in `steps`, or None for the start)
        let mut queue: VecDeque<(usize, Option<usize>)> = VecDeque::from([(first, None)]);
        while let Some((i, step)) = queue.pop_front() {
            let depth = step.map_or(0, |s| steps[s].depth);
            if depth >= max_hops {
                continue;
            }
            for &partner in &self.assoc[i].links {
                let Some(j) = self.slot(partner) else { continue };
                // `!(s >= min)` rather than `s < min`: a NaN minimum lets nothing through, as
                // in the other queries.
                let strong_enough = self.states[j].strength_at(now, &self.params) >= min_strength;
                if !strong_enough || !seen.insert(partner) {
                    continue;
                }
                let mut path = step.map_or_else(|| vec![start], |s| steps[s].path.clone());
                path.push(partner);
                steps.push(WalkStep { id: partner, depth: depth + 1, path });
                queue.push_back((j, Some(steps.len() - 1)));
            }
        }
        steps
    }

    /// Removes every trace of `kind` and returns how many (no cap, unlike the reference's
    /// 100,000 per call).
    pub fn erase_by_kind(&mut self, kind: TraceKind) -> usize {
        let _span = tracing::debug_span!("erase_by_kind", %kind).entered();
        let doomed: Vec<bool> = self.states.iter().map(|s| s.kind() == kind).collect();
        self.remove_flagged(&doomed)
    }

    /// Removes every trace whose partition equals `partition` and returns how many;
    /// `None` removes the traces without a partition (as the reference's
    /// `erase_by_agent(nil)`).
    pub fn erase_by_partition(&mut self, partition: Option<&Partition>) -> usize {
        let _span = tracing::debug_span!("erase_by_partition", partition = partition.map(Partition::as_str))
            .entered();
        let doomed: Vec<bool> = self.partitions.iter().map(|p| p.as_ref() == partition).collect();
        self.remove_flagged(&doomed)
    }

    fn slot(&self, id: RecordId) -> Option<usize> {
        self.index.get(&id).map(|&i| i as usize)
    }

    fn view(&self, i: usize) -> TraceRef<'_, P> {
        TraceRef {
            id: self.ids[i],
            partition: self.partitions[i].as_ref(),
            state: &self.states[i],
            payload: &self.payloads[i],
            tier: self.tiers[i],
        }
    }

    /// The traces of `indices` whose strength at `now` is at least `min_strength` (none for a
    /// NaN minimum), strongest first (ties by id), the first `limit`. Each strength is
    /// computed once.
    fn strongest_first(
        &self,
        indices: impl IntoIterator<Item = usize>,
        min_strength: f64,
        now: Timestamp,
        limit: usize,
    ) -> Vec<usize> {
        let mut scored: Vec<(f64, usize)> = indices
            .into_iter()
            .filter_map(|i| {
                let strength = self.states[i].strength_at(now, &self.params);
                (strength >= min_strength).then_some((strength, i))
            })
            .collect();
        let order = |&(sa, a): &(f64, usize), &(sb, b): &(f64, usize)| {
            sb.total_cmp(&sa).then(self.ids[a].cmp(&self.ids[b]))
        };
        if limit < scored.len() {
            scored.select_nth_unstable_by(limit, order);
            scored.truncate(limit);
        }
        scored.sort_unstable_by(order);
        scored.into_iter().map(|(_, i)| i).collect()
    }

    /// Whether trace `i` can take a link whose pair count is `count`.
    fn slot_for(&self, i: usize, count: u32) -> Slot {
        let assoc = &self.assoc[i];
        if assoc.links.len() < MAX_ASSOCIATIONS {
            return Slot::Free;
        }
        // Lowest count, then oldest (first in the list).
        let weakest = assoc
            .links
            .iter()
            .enumerate()
            .min_by_key(|&(pos, p)| (assoc.counts.get(p).copied().unwrap_or(0), pos))
            .map(|(_, p)| (*p, assoc.counts.get(p).copied().unwrap_or(0)));
        match weakest {
            Some((partner, weakest_count)) if count > weakest_count => Slot::Replace(partner),
            _ => Slot::Full,
        }
    }

    /// Drops the link between `a` and `b` on both sides (counts stay).
    fn unlink(&mut self, a: RecordId, b: RecordId) {
        for (x, y) in [(a, b), (b, a)] {
            if let Some(i) = self.slot(x) {
                self.assoc[i].links.retain(|&p| p != y);
            }
        }
    }

    /// Removes trace `i`'s id from every partner's counts and links, and clears its own.
    fn detach(&mut self, i: usize) {
        let id = self.ids[i];
        let own = std::mem::take(&mut self.assoc[i]);
        for partner in own.counts.keys() {
            if let Some(j) = self.slot(*partner) {
                let assoc = &mut self.assoc[j];
                assoc.counts.remove(&id);
                assoc.links.retain(|&p| p != id);
            }
        }
    }

    /// Removes every trace `i` with `doomed[i]`, keeping the others' relative order, and
    /// returns how many.
    fn remove_flagged(&mut self, doomed: &[bool]) -> usize {
        let Some(first) = doomed.iter().position(|&d| d) else {
            return 0;
        };
        let mut removed = 0;
        for (i, _) in doomed.iter().enumerate().skip(first).filter(|(_, d)| **d) {
            self.detach(i);
            self.index.remove(&self.ids[i]);
            removed += 1;
        }
        retain_unflagged(&mut self.ids, doomed);
        retain_unflagged(&mut self.states, doomed);
        retain_unflagged(&mut self.tiers, doomed);
        retain_unflagged(&mut self.partitions, doomed);
        retain_unflagged(&mut self.payloads, doomed);
        retain_unflagged(&mut self.assoc, doomed);
        for (i, id) in self.ids.iter().enumerate().skip(first) {
            self.index.insert(*id, i as u32);
        }
        removed
    }
}

fn retain_unflagged<T>(items: &mut Vec<T>, doomed: &[bool]) {
    let mut flags = doomed.iter();
    items.retain(|_| !flags.next().copied().unwrap_or(false));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days;

    fn id(n: u128) -> RecordId {
        RecordId::from_u128(n)
    }

    fn store_of(n: u128, kind: TraceKind, now: Timestamp) -> TraceStore<u128> {
        let mut store = TraceStore::default();
        for k in 1..=n {
            store.insert(TraceEntry::new(id(k), TraceState::new(kind, now), k)).unwrap();
        }
        store
    }

    /// Every link is symmetric, every count has its mirror, and no id points outside.
    fn assert_consistent<P>(store: &TraceStore<P>) {
        assert_eq!(store.index.len(), store.ids.len());
        for (i, id) in store.ids.iter().enumerate() {
            assert_eq!(store.index[id] as usize, i);
            let assoc = &store.assoc[i];
            assert!(assoc.links.len() <= MAX_ASSOCIATIONS);
            for (p, c) in &assoc.counts {
                assert_eq!(store.coactivation_count(*p, *id), *c, "count mirror");
            }
            for p in &assoc.links {
                assert!(store.is_linked(*p, *id), "link symmetric");
                assert!(assoc.counts[p] >= COACTIVATION_THRESHOLD);
            }
        }
    }

    #[test]
    fn insert_refuses_duplicates_and_remove_refuses_unknown_ids() {
        let now = Timestamp::EPOCH;
        let mut store = store_of(2, TraceKind::Semantic, now);
        let dup = TraceEntry::new(id(1), TraceState::new(TraceKind::Sensory, now), 9);
        assert!(matches!(store.insert(dup), Err(Error::InvalidArgument { .. })));
        assert_eq!(store.get(id(1)).unwrap().state.kind(), TraceKind::Semantic);
        assert!(matches!(store.remove(id(3)), Err(Error::NotFound { .. })));
        assert!(matches!(store.set_partition(id(3), None), Err(Error::NotFound { .. })));
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn remove_moves_the_last_entry_and_keeps_the_index() {
        let now = Timestamp::EPOCH;
        let mut store = store_of(4, TraceKind::Semantic, now);
        let gone = store.remove(id(2)).unwrap();
        assert_eq!((gone.id, gone.payload), (id(2), 2));
        assert_eq!(store.ids(), &[id(1), id(4), id(3)]);
        assert_eq!(*store.get(id(4)).unwrap().payload, 4);
        *store.payload_mut(id(4)).unwrap() = 40;
        assert_eq!(store.iter().map(|t| *t.payload).collect::<Vec<_>>(), [1, 40, 3]);
        assert_consistent(&store);
    }

    #[test]
    fn ties_in_retrieval_break_by_id() {
        let now = Timestamp::EPOCH;
        let mut store = store_of(5, TraceKind::Semantic, now);
        let got: Vec<_> =
            store.retrieve_by_kind(TraceKind::Semantic, 0.0, 3, now).iter().map(|t| t.id).collect();
        assert_eq!(got, [id(1), id(2), id(3)]);
        assert!(store.retrieve_by_kind(TraceKind::Semantic, f64::NAN, 10, now).is_empty());
        assert_eq!(store.retrieve_and_reinforce(2, now), [id(1), id(2)]);
        assert_eq!(store.retrieve_and_reinforce(0, now), []);
        let ranked = store.retrieve_ranked(&[id(5), id(3), id(5)], now);
        assert_eq!(ranked.iter().map(|s| s.id).collect::<Vec<_>>(), [id(3), id(5), id(5)]);
    }

    #[test]
    fn links_are_symmetric_under_churn() {
        let now = Timestamp::EPOCH;
        let mut store = store_of(30, TraceKind::Episodic, now);
        let mut rng = crate::id::SplitMix64::new(5);
        for _ in 0..3_000 {
            let a = id(1 + u128::from(rng.below(30)));
            let b = id(1 + u128::from(rng.below(30)));
            let linked = store.record_coactivation(a, b).unwrap();
            assert_eq!(linked, a != b && store.is_linked(a, b));
        }
        assert_consistent(&store);
        store.remove(id(7)).unwrap();
        store.erase_by_partition(None);
        assert!(store.is_empty());
    }

    #[test]
    fn bulk_removal_keeps_order_and_cleans_links() {
        let now = Timestamp::EPOCH;
        let mut store = store_of(6, TraceKind::Semantic, now);
        let p = Partition::new("agent-1").unwrap();
        for k in [2, 4, 5] {
            store.set_partition(id(k), Some(p.clone())).unwrap();
        }
        for _ in 0..3 {
            store.record_coactivation(id(1), id(2)).unwrap();
            store.record_coactivation(id(3), id(4)).unwrap();
            store.record_coactivation(id(3), id(6)).unwrap();
        }
        assert_eq!(store.erase_by_partition(Some(&p)), 3);
        assert_eq!(store.ids(), &[id(1), id(3), id(6)]);
        assert_eq!(store.associated(id(1)), Some(&[][..]));
        assert_eq!(store.associated(id(3)), Some(&[id(6)][..]));
        assert_eq!(store.coactivation_count(id(3), id(4)), 0);
        assert_consistent(&store);
    }

    fn strengths_at(store: &TraceStore<u128>, now: Timestamp) -> Vec<f64> {
        store.states().iter().map(|s| s.strength_at(now, store.params())).collect()
    }

    #[test]
    fn decay_cycles_change_no_answer() {
        let t0 = Timestamp::from_secs(1_000);
        let mut once = store_of(3, TraceKind::Sensory, t0);
        once.reinforce(id(2), t0 + days(2));
        once.state_mut(id(3)).unwrap().rehearse(t0 + days(5));
        let mut often = once.clone();
        let untouched = once.clone();
        let end = t0 + days(10);
        assert_eq!(once.decay_cycle(end), DecayCycleReport { decayed: 3, pruned: 0 });
        for h in 0..=240 {
            often.decay_cycle(t0 + std::time::Duration::from_secs(h * 3_600));
        }
        for s in [&once, &often] {
            assert_eq!(s.states(), untouched.states(), "a cycle stores nothing");
            assert_eq!(strengths_at(s, end), strengths_at(&untouched, end));
            assert_eq!(
                s.retrieve_ranked(&[id(1), id(2), id(3)], end),
                untouched.retrieve_ranked(&[id(1), id(2), id(3)], end)
            );
        }
    }

    /// The review's scenario in the store: every query reads the strength at its own `now`, so
    /// a year-old trace's reinforcement shows at once in every answer, decay cycle or not.
    #[test]
    fn queries_agree_with_strength_at() {
        let t0 = Timestamp::from_secs(1_700_000_000);
        let year = t0 + days(365);
        let mut store = store_of(3, TraceKind::Sensory, t0);
        // 1 stays a year old (0.107); 2 is made fresh a year on; 3 is reinforced a year on.
        store.remove(id(2)).unwrap();
        store.insert(TraceEntry::new(id(2), TraceState::new(TraceKind::Sensory, year), 2)).unwrap();
        let ReinforceOutcome::Reinforced { new_strength } = store.reinforce(id(3), year) else {
            panic!("sensory traces reinforce")
        };
        let p = *store.params();
        let now = year + std::time::Duration::from_secs(30);
        // 3 moved back along its curve to where it had 0.207 (up to whole ticks).
        let reinforced = store.get(id(3)).unwrap().state;
        assert!(reinforced.strength_at(year, &p) >= new_strength);
        assert!((reinforced.strength_at(now, &p) - new_strength).abs() < 1e-4);
        let expected_order = {
            let mut by_strength: Vec<(f64, RecordId)> =
                store.iter().map(|t| (t.state.strength_at(now, &p), t.id)).collect();
            by_strength.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            by_strength.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
        };
        assert_eq!(expected_order, [id(2), id(3), id(1)]);
        let by_kind: Vec<_> =
            store.retrieve_by_kind(TraceKind::Sensory, 0.0, 10, now).iter().map(|t| t.id).collect();
        assert_eq!(by_kind, expected_order);
        // 0.15 lies between the old trace (0.107) and the reinforced one (0.207).
        let strong: Vec<_> =
            store.retrieve_by_kind(TraceKind::Sensory, 0.15, 10, now).iter().map(|t| t.id).collect();
        assert_eq!(strong, [id(2), id(3)]);
        let ranked = store.retrieve_ranked(&[id(1), id(2), id(3)], now);
        for scored in &ranked {
            let state = store.get(scored.id).unwrap().state;
            assert_eq!(scored.score, state.retrieval_score(now, false, &p));
        }
        assert_eq!(ranked.iter().map(|s| s.id).collect::<Vec<_>>(), [id(2), id(3), id(1)]);
        for _ in 0..3 {
            store.record_coactivation(id(1), id(3)).unwrap();
        }
        let linked: Vec<_> = store.retrieve_associated(id(1), 0.15, 10, now).iter().map(|t| t.id).collect();
        assert_eq!(linked, [id(3)]);
        assert!(store.retrieve_associated(id(3), 0.15, 10, now).is_empty(), "1 is too faint");
        assert_eq!(store.walk_associations(id(3), 3, 0.1, now).len(), 1);
        assert!(store.walk_associations(id(3), 3, 0.15, now).is_empty());
        assert!(store.walk_associations(id(3), 3, f64::NAN, now).is_empty(), "a NaN minimum admits nothing");
        // retrieve_and_reinforce takes what is at least 0.1 at its own `now`.
        for at in [now, now + days(1), now + days(30), now + days(800)] {
            let mut copy = store.clone();
            let mut want: Vec<(f64, RecordId)> = copy
                .iter()
                .map(|t| (t.state.strength_at(at, &p), t.id))
                .filter(|&(s, _)| s >= RETRIEVE_AND_REINFORCE_MIN_STRENGTH)
                .collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let want: Vec<RecordId> = want.into_iter().map(|(_, id)| id).collect();
            assert_eq!(copy.retrieve_and_reinforce(10, at), want, "{at}");
        }
        assert_eq!(store.retrieve_and_reinforce(10, now).len(), 3, "1 (0.107) passes at `now`");
        // Tiers: 1 was last reinforced a year ago, 3 just now.
        assert_eq!(store.migrate_tiers(now), 0, "retrieve_and_reinforce rehearsed all three");
        assert_eq!(store.get(id(3)).unwrap().tier, StorageTier::Hot);
        // Pruning needs no earlier pass: a faint trace made at t0 is gone in one cycle a year on.
        let mut faint = TraceState::new(TraceKind::Sensory, t0).to_parts();
        faint.peak = 0.0101;
        store.insert(TraceEntry::new(id(4), TraceState::from_parts(faint).unwrap(), 4)).unwrap();
        assert_eq!(store.decay_cycle(now), DecayCycleReport { decayed: 3, pruned: 1 });
        assert!(!store.contains(id(4)));
    }

    /// Two sensory traces made together; one is reinforced a year later. From then on it is
    /// never weaker than the other, so no query drops it first. (Restarting the power law at
    /// the reinforced 0.207 let it fall under 0.1 a day later, a year before the other.)
    #[test]
    fn a_reinforced_trace_never_drops_out_before_an_unreinforced_twin() {
        let t0 = Timestamp::from_secs(1_700_000_000);
        let year = t0 + days(365);
        let mut store = store_of(2, TraceKind::Sensory, t0);
        assert!(matches!(store.reinforce(id(2), year), ReinforceOutcome::Reinforced { .. }));
        let p = *store.params();
        let mut both = 0;
        for d in [0, 1, 2, 30, 300, 362, 363, 364, 400, 5_000] {
            let at = year + days(d);
            let [plain, reinforced] = [id(1), id(2)].map(|i| store.get(i).unwrap().state.strength_at(at, &p));
            assert!(reinforced >= plain, "day {d}: {reinforced} < {plain}");
            let got = store.clone().retrieve_and_reinforce(10, at);
            if got.contains(&id(1)) {
                assert_eq!(got, [id(2), id(1)], "day {d}");
                both += 1;
            }
            let by_kind: Vec<_> =
                store.retrieve_by_kind(TraceKind::Sensory, 0.0, 1, at).iter().map(|t| t.id).collect();
            assert_eq!(by_kind, [id(2)], "day {d}");
        }
        assert_eq!(both, 7, "the unreinforced trace stays above 0.1 for 363 more days");
        // The reinforcement bought back the year of decay, less the 12 hours of its effective
        // age: the reinforced trace falls under 0.1 about 364 days after its twin.
        assert_eq!(store.clone().retrieve_and_reinforce(10, year + days(727)), [id(2)]);
        assert!(store.clone().retrieve_and_reinforce(10, year + days(728)).is_empty());
    }
}
