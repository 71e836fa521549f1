//! Consolidation (§4.6): concepts decay over 30 days without access, rarely used ones are
//! compressed, and forgotten ones are removed.
//!
//! Each concept is scored with the access-based retention rule of the original
//! (`spec/maxim-reference.md` §3.7, with the ATL's 30-day maximum age):
//!
//! ```text
//! recency = max(0, 1 - days since last access / 30)
//! access  = min(1, access_count / 5)
//! central = min(1, degree / 20)          degree = outgoing relationship edges + references
//! score   = 0.5 recency + 0.2 access + 0.3 central,  at least 0.8 when accessed 10 times
//! ```
//!
//! A score below 0.2 removes the concept (deletion callbacks run); a full concept scoring below
//! 0.4 is compressed when it is at least 7 days old and was accessed fewer than 5 times. A
//! contested concept is never compressed: compression drops properties, and with them the
//! open contradiction (seed 004).
//!
//! # Eviction at capacity
//!
//! A store holding `max_concepts` makes room for a new concept by evicting the lowest-ranked
//! one. The rank orders by: long-term concepts last (they go only when every concept held is
//! long-term), then the retention score above, then the least recently accessed, then the
//! smallest id.
//!
//! Ranking the whole store costs a pass over every concept, so it is not done for every
//! eviction. The store is ranked once and the lowest-ranked `max(1, max_concepts / 32)`
//! ([`EVICTION_BATCH_DIVISOR`]) become the eviction candidates, with their ranks; the highest
//! of those ranks is the *cutoff*. Each eviction then takes the candidate of lowest rank that
//! is still held, after ranking it again: a candidate whose rank rose since (it was accessed,
//! reinforced, related or referenced) goes back among the candidates with its new rank, or
//! leaves them when that is above the cutoff. A concept stored meanwhile joins the candidates
//! when its rank is at most the cutoff. The store is ranked again when the candidates run out,
//! when the ranking is more than [`EVICTION_RANKING_TTL`] (one hour) old by the layer's clock
//! or the clock went back, and after every consolidation.
//!
//! So the concept evicted is exactly the lowest-ranked of the store, except when a concept
//! outside the candidates fell below them since the ranking: by losing edges or references
//! (to a concept evicted or removed, say), or by the passing of time within the hour (every
//! untouched concept loses recency at the same rate, so this reorders only concepts that
//! reach the 30-day limit meanwhile). Such a concept is found at the next ranking. The cost is
//! one ranking per `max_concepts / 32` evictions, that is about 32 concepts scored per
//! eviction, plus a heap operation or two.
//!
//! ```
//! use atl::{Atl, spec};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp, days};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut atl = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
//! let mug = atl.find_or_create(&spec("mug", "object"))?.id;
//! assert_eq!(atl.consolidate()?.preserved, 1);
//! clock.advance(days(20)); // recency 1/3: score 0.5/3 + 0.2/5 = 0.207, old enough to compress
//! assert_eq!(atl.consolidate()?.compressed, 1);
//! assert!(atl.record(mug).unwrap().as_compressed().is_some());
//! clock.advance(days(20));
//! assert_eq!(atl.consolidate()?.removed, 1);
//! assert!(atl.is_empty());
//! # Ok::<(), atl::Error>(())
//! ```

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Duration;

use maxim_core::graph::Graph;
use maxim_core::layer::ConsolidationReport;
use maxim_core::{MemoryRecord, RecordId, RecordMeta, Timestamp};

use crate::concept::{CompressedSemantic, SemanticRecord};
use crate::config::AtlConfig;
use crate::error::Result;
use crate::journal::{Applied, Op};
use crate::state::State;
use crate::store::Atl;

/// The eviction candidates are the lowest-ranked `max_concepts / EVICTION_BATCH_DIVISOR`
/// concepts (at least one); see [Eviction at capacity](self#eviction-at-capacity).
pub const EVICTION_BATCH_DIVISOR: usize = 32;

/// How long, by the layer's clock, a ranking of the store for eviction stays in use; see
/// [Eviction at capacity](self#eviction-at-capacity).
pub const EVICTION_RANKING_TTL: Duration = Duration::from_secs(3600);

/// What a long-term concept adds to its rank: more than any retention score, so that
/// long-term concepts are evicted last.
const LONG_TERM_RANK: f64 = 2.0;

/// Access count from which the access term is full.
const ACCESS_FULL: f64 = 5.0;
/// Degree from which the centrality term is full.
const DEGREE_FULL: f64 = 20.0;
/// Access count from which the score is at least [`FREQUENT_FLOOR`].
const FREQUENT_ACCESSES: u32 = 10;
/// Score floor of frequently accessed concepts.
const FREQUENT_FLOOR: f64 = 0.8;
/// Access count from which a concept is never compressed.
const NO_COMPRESS_ACCESSES: u32 = 5;

/// The access-based retention score of a record with `meta` and `degree` at `now` (see the
/// [module docs](self)).
///
/// ```
/// use atl::{AtlConfig, retention_score};
/// use maxim_core::{RecordId, RecordMeta, Source, Timestamp, TraceKind, days};
/// let t0 = Timestamp::from_secs(0);
/// let mut meta = RecordMeta::new(RecordId::from_u128(1), t0, Source::Episodic, 0.6, TraceKind::Semantic)?;
/// meta.access_count = 3;
/// let config = AtlConfig::default();
/// assert!((retention_score(&meta, 2, t0, &config) - 0.65).abs() < 1e-12);
/// assert!((retention_score(&meta, 0, t0 + days(15), &config) - 0.37).abs() < 1e-12);
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn retention_score(meta: &RecordMeta, degree: usize, now: Timestamp, config: &AtlConfig) -> f64 {
    let max_age = config.max_age_without_access.as_secs_f64();
    let age = now.secs_since(meta.accessed_at).max(0.0);
    let recency = if age >= max_age { 0.0 } else { 1.0 - age / max_age };
    let access = (f64::from(meta.access_count) / ACCESS_FULL).min(1.0);
    let central = if degree > 0 { (degree as f64 / DEGREE_FULL).min(1.0) } else { 0.0 };
    let mut score = 0.5 * recency + 0.2 * access + 0.3 * central;
    if meta.access_count >= FREQUENT_ACCESSES {
        score = score.max(FREQUENT_FLOOR);
    }
    score.min(1.0)
}

/// Whether a full concept with `meta` may be compressed at `now`: old enough and not
/// frequently accessed.
pub fn may_compress(meta: &RecordMeta, now: Timestamp, config: &AtlConfig) -> bool {
    now.secs_since(meta.created_at) >= config.compression_age.as_secs_f64()
        && meta.access_count < NO_COMPRESS_ACCESSES
}

/// The degree consolidation scores a record by: outgoing edges, plus references for a full one;
/// a compressed one keeps the edge count it had when compressed.
fn degree(graph: &Graph, record: &SemanticRecord) -> usize {
    match record {
        SemanticRecord::Full(c) => graph.out_degree(c.meta.id, None) + c.memory_refs.count(None),
        SemanticRecord::Compressed(c) => c.edge_count as usize,
    }
}

/// A concept's place in the eviction order: lowest first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked {
    /// The retention score, plus [`LONG_TERM_RANK`] for a long-term concept.
    rank: f64,
    accessed_at: Timestamp,
    id: RecordId,
}

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank
            .total_cmp(&other.rank)
            .then(self.accessed_at.cmp(&other.accessed_at))
            .then(self.id.cmp(&other.id))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The rank of the record at `slot` at `now`.
fn rank_of(state: &State, config: &AtlConfig, slot: usize, now: Timestamp) -> Ranked {
    let record = &state.records[slot];
    let meta = record.meta();
    let score = retention_score(meta, degree(&state.graph, record), now, config);
    Ranked {
        rank: if meta.long_term { score + LONG_TERM_RANK } else { score },
        accessed_at: meta.accessed_at,
        id: meta.id,
    }
}

/// The eviction candidates of a store and the ranking they come from; see
/// [Eviction at capacity](self#eviction-at-capacity). Derived data: a snapshot never holds it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EvictionQueue {
    /// The candidates, lowest rank on top.
    heap: BinaryHeap<Reverse<Ranked>>,
    /// The highest rank among the candidates when ranked, and when that was.
    ranking: Option<(Ranked, Timestamp)>,
}

impl EvictionQueue {
    /// Forgets the ranking: the next eviction ranks the store again.
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.ranking = None;
    }

    /// Whether the ranking can still be used at `now`.
    fn is_fresh(&self, now: Timestamp) -> bool {
        self.ranking.is_some_and(|(_, at)| {
            now >= at && now.secs_since(at) <= EVICTION_RANKING_TTL.as_secs_f64() && !self.heap.is_empty()
        })
    }

    /// Makes the record at `slot`, just stored, a candidate when a ranking is in use and its
    /// rank is at most the cutoff.
    pub(crate) fn offer(state: &mut State, config: &AtlConfig, slot: usize, now: Timestamp) {
        let Some((cutoff, _)) = state.eviction.ranking else {
            return;
        };
        let ranked = rank_of(state, config, slot, now);
        let queue = &mut state.eviction;
        if ranked <= cutoff {
            queue.heap.push(Reverse(ranked));
            // Stores that add far more than they evict: rank afresh rather than grow.
            if queue.heap.len() > 4 * eviction_batch(config) {
                queue.clear();
            }
        }
    }
}

/// How many candidates one ranking keeps.
fn eviction_batch(config: &AtlConfig) -> usize {
    (config.max_concepts / EVICTION_BATCH_DIVISOR).max(1)
}

/// The held concept of lowest rank at `now`, by a full pass (the model the eviction queue is
/// tested against).
#[cfg(test)]
pub(crate) fn lowest_ranked(atl: &Atl, now: Timestamp) -> Option<RecordId> {
    (0..atl.state.len()).map(|slot| rank_of(&atl.state, &atl.config, slot, now)).min().map(|r| r.id)
}

impl Atl {
    /// The concept to evict at `now` to make room for one more (see
    /// [Eviction at capacity](self#eviction-at-capacity)); `None` when the store is empty.
    pub(crate) fn next_eviction(&mut self, now: Timestamp) -> Option<RecordId> {
        for _ in 0..2 {
            if !self.state.eviction.is_fresh(now) {
                self.rank_for_eviction(now);
            }
            let cutoff = self.state.eviction.ranking.map(|(c, _)| c);
            while let Some(Reverse(top)) = self.state.eviction.heap.pop() {
                let Some(slot) = self.state.slot(top.id) else {
                    continue; // removed since
                };
                let current = rank_of(&self.state, &self.config, slot, now);
                if current > top {
                    if cutoff.is_some_and(|c| current <= c) {
                        self.state.eviction.heap.push(Reverse(current));
                    }
                    continue;
                }
                return Some(top.id);
            }
            // Every candidate went or rose above the cutoff: rank again.
            self.state.eviction.clear();
        }
        None
    }

    /// The `n` lowest-ranked concepts at `now`, lowest first, by one full ranking.
    pub(crate) fn lowest_ranked_n(&self, n: usize, now: Timestamp) -> Vec<RecordId> {
        let mut all: Vec<Ranked> =
            (0..self.state.len()).map(|slot| rank_of(&self.state, &self.config, slot, now)).collect();
        all.sort_unstable();
        all.into_iter().take(n).map(|r| r.id).collect()
    }

    /// Ranks every concept at `now` and keeps the lowest as the eviction candidates.
    fn rank_for_eviction(&mut self, now: Timestamp) {
        let _s = tracing::debug_span!("atl_rank_for_eviction", n_concepts = self.state.len()).entered();
        let batch = eviction_batch(&self.config);
        let mut all: Vec<Ranked> =
            (0..self.state.len()).map(|slot| rank_of(&self.state, &self.config, slot, now)).collect();
        if batch < all.len() {
            all.select_nth_unstable(batch - 1);
            all.truncate(batch);
        }
        let queue = &mut self.state.eviction;
        queue.ranking = all.iter().max().map(|&cutoff| (cutoff, now));
        queue.heap = all.into_iter().map(Reverse).collect();
    }

    /// One consolidation pass at the clock's time (see the [module docs](self)).
    pub fn consolidate_now(&mut self) -> Result<ConsolidationReport> {
        let now = self.clock.now();
        self.consolidate_at(now)
    }

    /// One consolidation pass at `now`: compressions first, then removals. Returns the counts
    /// (`promoted` is always 0: the semantic layer promotes nothing). On a directory the pass
    /// is journaled as the lists of concepts it compresses and removes. Errors: a journal that
    /// refuses the write (nothing changes then).
    pub fn consolidate_at(&mut self, now: Timestamp) -> Result<ConsolidationReport> {
        let _s = tracing::debug_span!("atl_consolidate", n_concepts = self.state.len()).entered();
        let mut remove = Vec::new();
        let mut compress = Vec::new();
        for record in &self.state.records {
            let id = record.id();
            let score = retention_score(record.meta(), degree(&self.state.graph, record), now, &self.config);
            if score < self.config.retention_threshold {
                remove.push(id);
            } else if score < self.config.compression_threshold
                && !record.is_compressed()
                && may_compress(record.meta(), now, &self.config)
                && !self.state.contested.contains(&id)
            {
                compress.push(id);
            }
        }
        let report = match self.commit(Op::Consolidate { at: now, compress, remove })? {
            Applied::Consolidated(report) => report,
            _ => ConsolidationReport::default(),
        };
        tracing::debug!(compressed = report.compressed, removed = report.removed, "atl consolidated");
        Ok(report)
    }

    /// Replaces the full concept `id` by its compressed form; it leaves the vector index and the
    /// property and modality indexes, keeps its graph node, edges, names and aliases. False
    /// when `id` is not a full concept held.
    pub(crate) fn compress(&mut self, id: RecordId) -> bool {
        let Some(slot) = self.state.slot(id) else {
            return false;
        };
        if self.state.records[slot].is_compressed() {
            return false;
        }
        self.state.unindex_content(slot);
        let edge_count = u32::try_from(self.state.graph.out_degree(id, None)).unwrap_or(u32::MAX);
        let placeholder = SemanticRecord::from(CompressedSemantic {
            meta: self.state.records[slot].meta().clone(),
            name: String::new(),
            category: String::new(),
            aliases: Vec::new(),
            confidence: 0.0,
            reinforcement_count: 0,
            provenance: maxim_core::ConceptProvenance::default(),
            edge_count: 0,
        });
        let SemanticRecord::Full(concept) = std::mem::replace(&mut self.state.records[slot], placeholder)
        else {
            unreachable!("checked above that the record is full");
        };
        self.state.records[slot] = CompressedSemantic::from_concept(*concept, edge_count).into();
        let _ = self.state.vectors.remove(id);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec;
    use maxim_core::{LayerKind, ManualClock, Source, TraceKind, days};
    use proptest::prelude::*;

    fn full_layer(max_concepts: usize) -> (ManualClock, Atl) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let config = AtlConfig { max_concepts, ..AtlConfig::default() };
        let atl = Atl::builder().clock(clock.shared()).config(config).id_seed(11).build().unwrap();
        (clock, atl)
    }

    fn held(atl: &Atl, id: RecordId) -> bool {
        atl.record(id).is_some()
    }

    #[derive(Debug, Clone)]
    enum Op {
        Miss,
        Touch(usize),
        Reference(usize),
        Reinforce(usize),
        LongTerm(usize),
        Minutes(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => Just(Op::Miss),
            2 => (0usize..200).prop_map(Op::Touch),
            2 => (0usize..200).prop_map(Op::Reference),
            1 => (0usize..200).prop_map(Op::Reinforce),
            1 => (0usize..200).prop_map(Op::LongTerm),
            1 => any::<u8>().prop_map(Op::Minutes),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// While no concept loses edges or references and the clock stays within the
        /// hour, every eviction takes exactly the concept a full ranking would.
        #[test]
        fn evictions_follow_a_full_ranking(ops in prop::collection::vec(op(), 1..120)) {
            let (clock, mut atl) = full_layer(96);
            for j in 0..96 {
                atl.find_or_create(&spec(&format!("c {j}"), "x")).unwrap();
                clock.advance(Duration::from_secs(7));
            }
            let mut n = 96;
            for op in ops {
                let ids: Vec<RecordId> = atl.state.records.iter().map(MemoryRecord::id).collect();
                let pick = |i: usize| ids[i % ids.len()];
                match op {
                    Op::Miss => {
                        let expected = lowest_ranked(&atl, clock.now()).unwrap();
                        n += 1;
                        let made = atl.find_or_create(&spec(&format!("c {n}"), "x")).unwrap();
                        prop_assert!(made.created);
                        prop_assert!(!held(&atl, expected), "the lowest-ranked concept was evicted");
                        prop_assert_eq!(atl.concept_count(), 96);
                    }
                    Op::Touch(i) => {
                        atl.get(pick(i)).unwrap();
                    }
                    Op::Reference(i) => {
                        atl.add_ref(pick(i), LayerKind::Hippocampus, RecordId::from_u128(i as u128)).unwrap();
                    }
                    Op::Reinforce(i) => atl.reinforce(pick(i), None).unwrap(),
                    Op::LongTerm(i) => {
                        let slot = atl.state.slot(pick(i)).unwrap();
                        atl.state.records[slot].meta_mut().long_term = true;
                    }
                    Op::Minutes(m) => clock.advance(Duration::from_secs(60 * u64::from(m % 30))),
                }
            }
            prop_assert!(atl.state.eviction.heap.len() <= 4 * eviction_batch(&atl.config));
        }
    }

    #[test]
    fn a_concept_that_falls_below_the_candidates_waits_for_the_next_ranking() {
        // 64 concepts: two candidates per ranking.
        let (clock, mut atl) = full_layer(64);
        let ids: Vec<RecordId> =
            (0..64).map(|j| atl.find_or_create(&spec(&format!("c {j}"), "x")).unwrap().id).collect();
        let hub = ids[63];
        for &id in &ids[..63] {
            atl.add_ref(id, LayerKind::Hippocampus, RecordId::from_u128(1)).unwrap();
        }
        atl.get(hub).unwrap();
        for &other in &ids[58..63] {
            atl.define_relationship(hub, other, "HAS_PART", 1.0, 0.5).unwrap();
        }
        clock.advance(days(10));
        // Ranked now: the hub (degree 5) is far from the two candidates (degree 1). A new
        // concept is fresher than them all and does not join the candidates.
        let first = atl.find_or_create(&spec("new 1", "x")).unwrap().id;
        assert_eq!(atl.state.eviction.heap.len(), 1);
        assert!(held(&atl, hub));
        for &other in &ids[58..63] {
            atl.remove_relationship(hub, other, None).unwrap();
        }
        assert_eq!(lowest_ranked(&atl, clock.now()), Some(hub), "the hub fell below everything");
        atl.find_or_create(&spec("new 2", "x")).unwrap();
        assert!(held(&atl, hub), "within the hour the remaining candidate goes first");
        assert_eq!(atl.concept_count(), 64);
        clock.advance(EVICTION_RANKING_TTL + Duration::from_secs(1));
        atl.find_or_create(&spec("new 3", "x")).unwrap();
        assert!(!held(&atl, hub), "the next ranking finds it");
        assert!(held(&atl, first));
        assert_eq!(atl.state.counters.evictions, 3);
    }

    #[test]
    fn long_term_concepts_go_last() {
        let (clock, mut atl) = full_layer(3);
        let ids: Vec<RecordId> =
            (0..3).map(|j| atl.find_or_create(&spec(&format!("c {j}"), "x")).unwrap().id).collect();
        atl.state.records[0].meta_mut().long_term = true; // the stalest
        clock.advance(days(1));
        atl.find_or_create(&spec("c 3", "x")).unwrap();
        assert!(held(&atl, ids[0]) && !held(&atl, ids[1]));
        for r in &mut atl.state.records {
            r.meta_mut().long_term = true;
        }
        atl.find_or_create(&spec("c 4", "x")).unwrap();
        assert!(!held(&atl, ids[0]), "all long-term: the lowest score goes");
        assert_eq!(atl.concept_count(), 3);
    }

    #[test]
    fn consolidation_and_a_clock_going_back_drop_the_ranking() {
        let (clock, mut atl) = full_layer(64);
        for j in 0..65 {
            atl.find_or_create(&spec(&format!("c {j}"), "x")).unwrap();
        }
        assert!(atl.state.eviction.ranking.is_some());
        atl.consolidate_now().unwrap();
        assert!(atl.state.eviction.ranking.is_none());
        atl.find_or_create(&spec("c 65", "x")).unwrap();
        let (_, ranked_at) = atl.state.eviction.ranking.unwrap();
        assert!(atl.state.eviction.is_fresh(ranked_at));
        assert!(!atl.state.eviction.is_fresh(Timestamp::from_secs(0)));
        assert!(!atl.state.eviction.is_fresh(clock.now() + EVICTION_RANKING_TTL + Duration::from_secs(1)));
    }

    fn meta(access_count: u32, t: Timestamp) -> RecordMeta {
        let mut m =
            RecordMeta::new(RecordId::from_u128(1), t, Source::Episodic, 0.6, TraceKind::Semantic).unwrap();
        m.access_count = access_count;
        m
    }

    #[test]
    fn score_follows_the_access_based_rule() {
        let c = AtlConfig::default();
        let t0 = Timestamp::from_secs(0);
        assert!((retention_score(&meta(3, t0), 2, t0, &c) - 0.65).abs() < 1e-12);
        assert!((retention_score(&meta(1, t0), 0, t0 + days(30), &c) - 0.04).abs() < 1e-12);
        assert!((retention_score(&meta(1, t0), 40, t0 + days(60), &c) - 0.34).abs() < 1e-12);
        assert_eq!(retention_score(&meta(12, t0), 0, t0 + days(90), &c), 0.8);
        assert_eq!(retention_score(&meta(50, t0), 50, t0, &c), 1.0);
        assert!(!may_compress(&meta(1, t0), t0 + days(6), &c));
        assert!(may_compress(&meta(4, t0), t0 + days(7), &c));
        assert!(!may_compress(&meta(5, t0), t0 + days(70), &c));
    }

    #[test]
    fn contested_and_connected_concepts_survive_longer() {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut atl = Atl::builder().clock(clock.shared()).build().expect("the default settings are valid");
        let plain = atl.find_or_create(&spec("plain", "x")).unwrap().id;
        let contested = atl.find_or_create(&spec("contested", "x")).unwrap().id;
        atl.set_property(contested, "color", "red", Source::UserStated, 1.0).unwrap();
        atl.set_property(contested, "color", "blue", Source::Web("x.org".into()), 0.3).unwrap();
        let hub = atl.find_or_create(&spec("hub", "x")).unwrap().id;
        let others: Vec<RecordId> =
            (0..14).map(|i| atl.find_or_create(&spec(&format!("spoke {i}"), "y")).unwrap().id).collect();
        for &o in &others {
            atl.define_relationship(hub, o, "HAS_PART", 1.0, 0.5).unwrap();
        }
        clock.advance(days(20));
        let report = atl.consolidate_now().unwrap();
        assert!(atl.record(plain).unwrap().is_compressed());
        assert!(!atl.record(contested).unwrap().is_compressed(), "contested concepts keep their claims");
        assert!(!atl.record(hub).unwrap().is_compressed(), "degree 14: score 0.207 + 0.21");
        assert_eq!(report.compressed, 15, "plain and the fourteen spokes");
        assert_eq!(atl.contradictions().len(), 1);
        assert!(atl.recall_similar("plain", 5).iter().all(|(id, _)| *id != plain));
        assert_eq!(atl.record(hub).map(|r| degree(&atl.state.graph, r)), Some(14));
    }
}
