//! Capture (`spec/maxim-reference.md` §3.3) and association formation (§3.5).
//!
//! A capture validates the episode, makes room at capacity (it evicts the records with the
//! lowest retention scores among those that are not long-term, a batch at a time; see
//! eviction in `docs/hippocampus.md`), stores and indexes the episode, promotes it to
//! long-term at once when its salience or novelty reaches 0.95 (else queues it for
//! consolidation when either exceeds 0.7 or the user spoke), forms its associations, and
//! then tells the capture callbacks.
//!
//! Capture is synchronous. The original also offered an asynchronous capture queue (100
//! entries, a worker thread polling every half second) because its capture cost
//! milliseconds; here a capture costs microseconds, so the queue would only add latency
//! and a way to lose episodes. An agent recording from several threads wraps the layer in
//! a lock (the hub offers a thread-safe handle).
//!
//! **Associations.** The new episode is compared with every stored episode sharing an
//! object or a person with it: each shared key counts 1, scores are divided by the best
//! score, and the best five by (score, timestamp) become candidates. Each candidate whose
//! normalised score is at least 0.5 is linked both ways by an ASSOCIATES edge of weight
//!
//! ```text
//! 0.6 × score + goal term + 0.15 / (1 + |Δt| / 3600 s), capped at 1
//! ```
//!
//! where the goal term is 0.25 for equal active goals and 0.25 × the Jaccard index of their
//! words (lowercased, minus a few stop words) otherwise; the candidate is touched.
//!
//! ```
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
//! use maxim_core::{ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let episode = |objects: &[&str], goal: &str| {
//!     let mut e = NewEpisode::default();
//!     e.perception.detected_objects = objects.iter().map(|&o| o.into()).collect();
//!     e.context.active_goal = Some(goal.into());
//!     e
//! };
//! let first = hippo.capture(episode(&["mug"], "find mug"))?;
//! let second = hippo.capture(episode(&["mug"], "find mug"))?;
//! let third = hippo.capture(episode(&["mug", "cup"], "grab mug"))?;
//! // [run] same object, same goal, same second: weight 1.0; goals "find mug" / "grab mug": 0.8333.
//! let links = hippo.associated_ids(second);
//! assert_eq!((links[0].0, links[0].1), (first, 1.0));
//! assert_eq!(links[1].0, third);
//! assert!((links[1].1 - 0.833_333).abs() < 1e-6);
//! assert_eq!(hippo.peek(first).unwrap().meta().access_count, 3);
//! # Ok::<(), hippocampus::Error>(())
//! ```

use std::sync::Arc;

use maxim_core::graph::EdgeKind;
use maxim_core::value::{Map, Value};
use maxim_core::{Partition, RecordId, RecordMeta, Source, Timestamp, TraceKind, check_unit};
use rayon::prelude::*;

use crate::episode::{
    Action, Decision, Episode, EpisodeContext, EpisodicMemory, MAX_NAMES, Name, Outcome, Perception,
};
use crate::error::{Error, Result};
use crate::index::{KeyId, Slot};
use crate::journal::Op;
use crate::store::{Hippocampus, derive_keys};

/// Salience or novelty above which a capture joins the consolidation queue.
pub const QUEUE_LEVEL: f64 = 0.7;

/// Slots at which an eviction that scores every record scores in parallel.
const PARALLEL_EVICTION_MIN: usize = 4096;

/// How many eviction batches the [`EvictionPool`] may hold.
const EVICTION_POOL_FACTOR: usize = 4;

/// An eviction candidate: its retention score, its (timestamp, id) and its slot.
type Victim = (f64, (i64, RecordId), Slot);

/// The records an eviction has to score, when they are few.
///
/// A record can only become evictable (held and not long-term) by being stored, so once an
/// eviction has scored every record, the evictable ones it leaves plus those stored since
/// are all the evictable records there are. When they are few (at most four batches) the
/// pool lists them, and the next eviction scores only them, with the same result as scoring
/// every record; entries for records since removed, replaced or promoted are skipped. This
/// keeps a store that is nearly all long-term from scoring every record on every capture.
#[derive(Debug, Clone, Default)]
pub(crate) struct EvictionPool {
    /// Every evictable record as (slot, id), with stale entries; `None` when unknown or too
    /// many.
    members: Option<Vec<(Slot, RecordId)>>,
}

impl EvictionPool {
    /// Forgets the members (after the records were replaced wholesale).
    pub(crate) fn reset(&mut self) {
        self.members = None;
    }
}

/// Words the goal term of an association weight ignores.
const GOAL_STOP_WORDS: [&str; 9] = ["the", "a", "an", "to", "and", "or", "in", "on", "at"];

/// The parts of a new episode, for [`Hippocampus::capture`]. Every part defaults as the
/// original's did (salience and novelty 0.5, mode `observe`, confidence 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewEpisode {
    /// What the agent perceived.
    pub perception: Perception,
    /// The situation (its `state_ref` is replaced when `state_snapshot` is given).
    pub context: EpisodeContext,
    /// What it decided.
    pub decision: Decision,
    /// What it did.
    pub action: Action,
    /// What came of it.
    pub outcome: Outcome,
    /// The run it belongs to.
    pub run_id: String,
    /// The agent's state, stored in the [`StateStore`](crate::StateStore); the episode keeps
    /// its reference.
    pub state_snapshot: Option<Value>,
    /// Where it comes from (default: the configuration's `default_source`).
    pub source: Option<Source>,
    /// How far it may be trusted, in `[0, 1]` (default: the configuration's).
    pub trust: Option<f64>,
    /// Whose memory it is (default: `default`).
    pub partition: Option<Partition>,
    /// When it happened, when not now.
    pub timestamp: Option<Timestamp>,
    /// How strongly it was felt, for its trace (lex-memory's emotional intensity slows the
    /// trace's decay): none by default (intensity 0, valence 0).
    pub emotion: Option<Emotion>,
}

/// The feeling of a new episode ([`NewEpisode::emotion`]): an `intensity` in `[0, 1]` and a
/// `valence` in `[-1, 1]`; anything else (NaN included) is refused by the capture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Emotion {
    /// How strong, in `[0, 1]`: it slows the trace's decay (`rate / (1 + 0.3 intensity)`).
    pub intensity: f64,
    /// How pleasant, in `[-1, 1]`.
    pub valence: f64,
}

/// One turn of an agent's loop as loose data, for [`Hippocampus::capture_from_loop`].
///
/// Read from `observation`: `objects` (or `detected_objects`) and `people` (or
/// `detected_people`) as lists of text, `salience` and `novelty` as numbers, `cli_input` and
/// `transcript` as text; the whole map is kept as the observations. From `state`: the
/// snapshot, and its `mode` as the active mode. From `intent`: `goal` (the active goal),
/// `reasoning` and `confidence` (else from `decision`). From `action`: `tool` (or `name`,
/// `tool_name`) and `params`. From `result`: `success` when the result is a flag or a map
/// holding one (else unknown, as in the original 1.3.3), and `error`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopStep {
    /// The percept.
    pub observation: Map,
    /// The agent's state snapshot.
    pub state: Option<Value>,
    /// The intent.
    pub intent: Map,
    /// The decision, when the loop keeps it apart from the intent.
    pub decision: Map,
    /// The action taken.
    pub action: Map,
    /// The result.
    pub result: Value,
    /// Evaluations of the outcome.
    pub evaluations: Vec<Map>,
    /// The run.
    pub run_id: String,
}

impl LoopStep {
    /// Checks every free-form value of the step (see [`Value::check`]).
    fn check_values(&self) -> maxim_core::Result<()> {
        self.observation.check("observation")?;
        if let Some(state) = &self.state {
            state.check("state")?;
        }
        self.intent.check("intent")?;
        self.decision.check("decision")?;
        self.action.check("action")?;
        self.result.check("result")?;
        self.evaluations.iter().try_for_each(|e| e.check("evaluations"))
    }

    /// Drops the step, taking its values apart without recursion.
    fn dispose_values(self) {
        use maxim_core::value::dispose;
        let maps =
            [self.observation, self.intent, self.decision, self.action].into_iter().chain(self.evaluations);
        for m in maps {
            dispose(Value::Map(m));
        }
        if let Some(state) = self.state {
            dispose(state);
        }
        dispose(self.result);
    }
}

impl Hippocampus {
    /// Captures a new episode made now (or at `episode.timestamp`) and returns its id.
    ///
    /// Errors (nothing changes): salience, novelty, fear level, confidence or trust NaN or
    /// outside `[0, 1]`; more than [`MAX_NAMES`] detected objects and
    /// people together. Every check runs before the first change to the layer (the id
    /// generator and the state store included); once they pass, nothing can fail.
    /// Any timestamp is accepted, from `i64::MIN` to `i64::MAX` microseconds.
    pub fn capture(&mut self, episode: NewEpisode) -> Result<RecordId> {
        let now = self.clock.now();
        let source = episode.source.unwrap_or_else(|| self.config.default_source.clone());
        let trust = match episode.trust {
            Some(t) => check_unit("trust", t)?,
            None => self.config.trust_for(&source),
        };
        let at = episode.timestamp.unwrap_or(now);
        let mut meta = RecordMeta::new(RecordId::default(), now, source, trust, TraceKind::Episodic)?;
        meta.timestamp = at;
        // lex-memory's encoding: a trace made in the imprint window starts with one reinforcement.
        meta.trace = maxim_core::trace::TraceState::encoded(TraceKind::Episodic, now, &self.config.trace);
        let felt = match episode.emotion {
            Some(e) => meta.trace.felt(e.intensity, e.valence).map(|t| meta.trace = t),
            None => Ok(()),
        };
        if let Some(p) = episode.partition {
            meta.partition = p;
        }
        let mut m = EpisodicMemory {
            meta,
            run_id: episode.run_id,
            perception: episode.perception,
            context: episode.context,
            decision: episode.decision,
            action: episode.action,
            outcome: episode.outcome,
            usage: None,
        };
        let state = episode.state_snapshot;
        let checked = felt
            .and_then(|()| m.validate())
            .and_then(|()| state.as_ref().map_or(Ok(()), |s| s.check("state_snapshot")));
        if let Err(e) = checked {
            // A refused value may nest arbitrarily deep: take it apart without recursion.
            m.dispose_values();
            if let Some(s) = state {
                maxim_core::value::dispose(s);
            }
            return Err(e.into());
        }
        // Nothing below fails but the journal: the layer changes only from here on.
        m.meta.id = self.ids.next_id(now);
        let id = m.meta.id;
        let evicted = self.choose_evictions(now);
        let op = Op::Capture { record: Box::new(m), state, now, evicted };
        self.journal_op(&op)?;
        self.apply(op);
        Ok(id)
    }

    /// Captures a complete episode as it is (its id, times and access count kept), as the
    /// original's `capture(record=...)`. Errors: invalid numbers, or an id already held
    /// ([`maxim_core::Error::Duplicate`]); nothing changes.
    pub fn capture_record(&mut self, record: EpisodicMemory) -> Result<RecordId> {
        if let Err(e) = record.validate() {
            record.dispose_values();
            return Err(e.into());
        }
        let id = record.meta.id;
        if self.contains(id) {
            return Err(maxim_core::Error::Duplicate { id }.into());
        }
        let now = self.clock.now();
        let evicted = self.choose_evictions(now);
        let op = Op::Capture { record: Box::new(record), state: None, now, evicted };
        self.journal_op(&op)?;
        self.apply(op);
        Ok(id)
    }

    /// Captures one turn of an agent's loop given as loose data (see [`LoopStep`]).
    /// Errors: a field of the wrong type or a number out of range; nothing changes.
    pub fn capture_from_loop(&mut self, step: LoopStep) -> Result<RecordId> {
        if let Err(e) = step.check_values() {
            step.dispose_values();
            return Err(e.into());
        }
        let episode = episode_from_loop(step)?;
        self.capture(episode)
    }

    /// Stores a validated full episode made at `now`: evicts at capacity, indexes,
    /// promotes or queues, associates, tells the callbacks.
    /// The records a capture made now must evict first: `None` below capacity, else the
    /// batch of lowest score (empty when every record is long-term).
    pub(crate) fn choose_evictions(&mut self, now: Timestamp) -> Option<Vec<RecordId>> {
        (self.len() >= self.config.max_nodes).then(|| self.evict_batch(now))
    }

    /// Stores a validated full episode made at `now` after removing the chosen `evicted`
    /// records: indexes, promotes or queues, associates, tells the callbacks. The episode's
    /// box becomes the record's (a capture allocates it once).
    pub(crate) fn insert_resolved(
        &mut self,
        mut m: Box<EpisodicMemory>,
        now: Timestamp,
        evicted: Option<Vec<RecordId>>,
    ) -> RecordId {
        let _s = tracing::debug_span!("hippocampus_capture", n_records = self.len()).entered();
        if let Some(victims) = evicted {
            self.evict(&victims);
        }
        let id = m.meta.id;
        let c = &mut self.counters;
        c.memories_captured = c.memories_captured.saturating_add(1);
        match m.outcome.success {
            Some(true) => c.successful = c.successful.saturating_add(1),
            Some(false) => c.failed = c.failed.saturating_add(1),
            None => {}
        }
        let (salience, novelty) = (m.perception.salience, m.perception.novelty);
        if salience >= self.config.immediate_promotion_salience
            || novelty >= self.config.immediate_promotion_novelty
        {
            if m.meta.promote(now) {
                self.counters.long_term_count = self.counters.long_term_count.saturating_add(1);
            }
        } else if salience > QUEUE_LEVEL || novelty > QUEUE_LEVEL || m.perception.had_user_input() {
            self.candidates.push_back(id);
            while self.candidates.len() > self.config.max_consolidation_candidates {
                self.candidates.pop_front();
            }
        }
        compact(&mut m);
        let long_term = m.meta.long_term;
        let mut record = Episode::Full(m);
        self.intern_names(&mut record);
        let slot = self.slots.insert(record);
        if !long_term {
            self.note_evictable(slot);
        }
        if let Some(Episode::Full(rec)) = self.slots.records[slot as usize].as_ref() {
            let keys = derive_keys(rec, self.config.indexed_keys);
            self.index.insert(slot, &keys, self.slots.order());
        }
        self.index_text(slot);
        if let (Some(embedder), Some(vectors)) = (&self.embedder, &mut self.vectors)
            && let Some(rec) = self.slots.records[slot as usize].as_ref()
        {
            let text = episode_text(rec);
            embedder.observe_document(&text);
            let _ = vectors.add(id, &embedder.embed(&text));
        }
        if self.config.enable_associative_graph {
            let formed = self.form_associations(slot, now);
            self.counters.edges_formed = self.counters.edges_formed.saturating_add(formed as u64);
        }
        tracing::trace!(%id, "captured");
        if let Some(rec) = self.slots.get(slot) {
            self.callbacks.fire_capture(id, rec);
        }
        id
    }

    /// Forms the associations of the episode in `slot` (§3.5); returns how many.
    fn form_associations(&mut self, slot: Slot, now: Timestamp) -> usize {
        // A captured episode has at most MAX_NAMES object and person keys.
        let mut query = [0 as KeyId; MAX_NAMES];
        let mut n_query = 0;
        for &k in self.index.keys_of(slot) {
            if self.index.kind_of(k).is_associative() && n_query < MAX_NAMES {
                query[n_query] = k;
                n_query += 1;
            }
        }
        let candidates =
            self.index
                .similar(&query[..n_query], self.config.association_limit, self.slots.order(), |s| s != slot);
        let Some(&(_, best)) = candidates.first() else { return 0 };
        let id = self.slots.ids[slot as usize];
        let _ = self.graph.add_node(id);
        let ts = self.slots.ts[slot as usize];
        // The goal is an interned name: holding it costs a reference count, not a copy.
        let own_goal: Option<Name> = self.slots.get(slot).and_then(Episode::association_goal).cloned();
        let own_words = own_goal.as_deref().map(GoalWords::of);
        let best = f64::from(best);
        let mut formed = 0;
        for (c, shared) in candidates {
            let score = f64::from(shared) / best;
            if score < self.config.association_threshold {
                continue;
            }
            let Some(cand) = self.slots.get(c) else { continue };
            let mut weight = 0.6 * score;
            if let (Some(goal), Some(words), Some(other)) = (&own_goal, &own_words, cand.association_goal())
                && !goal.is_empty()
                && !other.is_empty()
            {
                weight += if Arc::ptr_eq(goal, other) || goal == other {
                    0.25
                } else {
                    0.25 * words.jaccard(&GoalWords::of(other))
                };
            }
            // Any two timestamps are allowed, so their difference may not fit an i64.
            let dt = ts.abs_diff(self.slots.ts[c as usize]) as f64 / 1e6;
            weight += 0.15 / (1.0 + dt / 3600.0);
            let weight = weight.min(1.0);
            let cid = self.slots.ids[c as usize];
            if let Err(e) = self.graph.add_bidirectional(id, cid, EdgeKind::Associates, weight) {
                tracing::warn!(%id, candidate = %cid, error = %e, "association refused");
                continue;
            }
            if let Some(rec) = self.slots.get_mut(c) {
                rec.meta_mut().touch(now);
            }
            formed += 1;
        }
        formed
    }

    /// Evicts the configured batch (`eviction_fraction` of `max_nodes`) of records with the
    /// lowest retention scores at `now` among those that are not long-term (ties: the
    /// oldest), lowest first; logs and counts when every record is long-term. Scores the
    /// [`EvictionPool`] when it holds every evictable record, else every record.
    fn evict_batch(&mut self, now: Timestamp) -> Vec<RecordId> {
        let strategy = self.retention_strategy();
        let batch = self.config.eviction_batch();
        let order = self.slots.order();
        let score = |s: Slot| -> Option<Victim> {
            let rec = self.slots.get(s).filter(|r| !r.meta().long_term)?;
            Some((strategy.score(rec, self.degree_of(rec), now), order.key(s), s))
        };
        let mut scored: Vec<Victim> = match &self.evict_pool.members {
            Some(pool) => pool
                .iter()
                .filter(|&&(s, id)| self.slots.ids.get(s as usize) == Some(&id))
                .filter_map(|&(s, _)| score(s))
                .collect(),
            None if self.slots.records.len() >= PARALLEL_EVICTION_MIN && rayon::current_num_threads() > 1 => {
                (0..self.slots.records.len() as Slot).into_par_iter().filter_map(score).collect()
            }
            None => (0..self.slots.records.len() as Slot).filter_map(score).collect(),
        };
        let lowest_first = |a: &Victim, b: &Victim| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1));
        let n_doomed = batch.min(scored.len());
        if n_doomed < scored.len() {
            scored.select_nth_unstable_by(n_doomed, lowest_first);
        }
        let (doomed, kept) = scored.split_at_mut(n_doomed);
        doomed.sort_unstable_by(lowest_first);
        self.evict_pool.members = (kept.len() <= self.evict_pool_max())
            .then(|| kept.iter().map(|v| (v.2, self.slots.ids[v.2 as usize])).collect());
        doomed.iter().map(|v| self.slots.ids[v.2 as usize]).collect()
    }

    /// Removes the chosen victims of an eviction (those still held).
    fn evict(&mut self, victims: &[RecordId]) {
        if victims.is_empty() {
            self.counters.over_capacity_inserts = self.counters.over_capacity_inserts.saturating_add(1);
            tracing::warn!(
                layer = crate::store::LAYER_NAME,
                n_records = self.len(),
                "at capacity and every record is long-term: inserting over capacity"
            );
            return;
        }
        let doomed: Vec<Slot> = victims.iter().filter_map(|&id| self.slots.slot_of(id)).collect();
        self.remove_slots(&doomed);
        self.counters.evictions = self.counters.evictions.saturating_add(doomed.len() as u64);
    }

    /// Most members the eviction pool keeps before it gives up (the next eviction then
    /// scores every record).
    fn evict_pool_max(&self) -> usize {
        EVICTION_POOL_FACTOR * self.config.eviction_batch()
    }

    /// Adds a record that may be evicted, just stored in `slot`, to the eviction pool.
    fn note_evictable(&mut self, slot: Slot) {
        let max = self.evict_pool_max();
        let Some(pool) = &mut self.evict_pool.members else { return };
        if pool.len() >= max {
            let slots = &self.slots;
            pool.retain(|&(s, id)| {
                slots.ids.get(s as usize) == Some(&id) && slots.get(s).is_some_and(|r| !r.meta().long_term)
            });
        }
        if pool.len() >= max {
            self.evict_pool.members = None;
        } else {
            pool.push((slot, self.slots.ids[slot as usize]));
        }
    }

    /// The retention strategies' degree of `rec`: its outgoing ASSOCIATES edges, or for a
    /// compressed record the count it had when compressed.
    pub(crate) fn degree_of(&self, rec: &Episode) -> usize {
        match rec {
            Episode::Full(m) => self.graph.out_degree(m.meta.id, Some(EdgeKind::Associates)),
            Episode::Compressed(c) => c.edge_count as usize,
        }
    }

    /// Links `source` to `target` with an edge of `kind` and `weight` (finite, `>= 0`), for
    /// links the layer does not form itself (a tool-pain bridge's CAUSES edges, for
    /// example). Both records must be held. An existing edge of the same kind is updated.
    pub fn link(&mut self, source: RecordId, target: RecordId, kind: EdgeKind, weight: f64) -> Result<()> {
        self.require_held([source, target])?;
        maxim_core::check_non_negative("weight", weight)?;
        if kind.is_dependency() && self.graph.would_close_cycle(source, target) {
            let kind = kind.as_str();
            return Err(
                maxim_core::Error::DependencyCycle { source_id: source, target_id: target, kind }.into()
            );
        }
        let op = Op::Link { source, target, kind, weight, both: false };
        self.journal_op(&op)?;
        self.apply(op);
        Ok(())
    }

    /// Links `a` and `b` both ways with ASSOCIATES edges of `weight`, as association
    /// formation does. Both records must be held.
    pub fn associate(&mut self, a: RecordId, b: RecordId, weight: f64) -> Result<()> {
        self.require_held([a, b])?;
        maxim_core::check_non_negative("weight", weight)?;
        let op = Op::Link { source: a, target: b, kind: EdgeKind::Associates, weight, both: true };
        self.journal_op(&op)?;
        self.apply(op);
        Ok(())
    }

    /// [`maxim_core::Error::NotFound`] for the first of `ids` that is not held.
    fn require_held(&self, ids: [RecordId; 2]) -> Result<()> {
        match ids.into_iter().find(|&id| !self.contains(id)) {
            Some(id) => Err(maxim_core::Error::NotFound { id }.into()),
            None => Ok(()),
        }
    }
}

/// Gives every string, list and map of `m` exactly the capacity it needs: a record lives
/// for days, and a map built by inserting one entry holds room for four. Shrinking in place
/// leaves what is already tight alone (cloning a map to compact it would allocate each of
/// its keys and values again).
fn compact(m: &mut EpisodicMemory) {
    fn map(m: &mut Map) {
        m.shrink_to_fit_deep();
    }
    fn value(v: &mut Value) {
        v.shrink_to_fit_deep();
    }
    fn strings(v: &mut Vec<String>) {
        v.shrink_to_fit();
        v.iter_mut().for_each(String::shrink_to_fit);
    }
    fn names(v: &mut Vec<Name>) {
        v.shrink_to_fit();
    }
    fn maps(v: &mut Vec<Map>) {
        v.shrink_to_fit();
        v.iter_mut().for_each(map);
    }
    let opt = |s: &mut Option<String>| {
        if let Some(s) = s {
            s.shrink_to_fit();
        }
    };
    let p = &mut m.perception;
    map(&mut p.observations);
    opt(&mut p.cli_input);
    opt(&mut p.transcript);
    names(&mut p.detected_objects);
    names(&mut p.detected_people);
    p.decision_rationale.shrink_to_fit();
    strings(&mut p.tool_alternatives);
    let c = &mut m.context;
    opt(&mut c.memory_context);
    let d = &mut m.decision;
    map(&mut d.intent);
    opt(&mut d.reasoning);
    maps(&mut d.alternatives_considered);
    if let Some(plan) = &mut d.plan {
        maps(plan);
    }
    map(&mut m.action.tool_params);
    value(&mut m.outcome.result);
    opt(&mut m.outcome.error);
    maps(&mut m.outcome.evaluations);
    m.run_id.shrink_to_fit();
}

/// Distinct goal words held without allocating.
const GOAL_WORDS_INLINE: usize = 16;

/// The words of a goal for the goal term: split on whitespace, stop words and repeats
/// dropped, compared as lowercased.
///
/// A goal of ASCII text with at most [`GOAL_WORDS_INLINE`] distinct words borrows its words
/// (compared ignoring ASCII case), which is every goal of the workload; any other goal holds
/// its words lowercased. `a.eq_ignore_ascii_case(b)` then decides exactly whether the two
/// words' lowercase forms are equal, whichever way each is held: a word held as it is is
/// ASCII, and a word held lowercased has no uppercase ASCII letter left.
#[expect(clippy::large_enum_variant, reason = "a local of one capture, on the stack so as not to allocate")]
enum GoalWords<'a> {
    Inline { words: [&'a str; GOAL_WORDS_INLINE], len: usize },
    Lowercased(Vec<String>),
}

impl<'a> GoalWords<'a> {
    fn of(goal: &'a str) -> Self {
        if goal.is_ascii() {
            let mut words = [""; GOAL_WORDS_INLINE];
            let mut len = 0;
            for w in goal.split_whitespace() {
                if is_goal_stop_word(w) || words[..len].iter().any(|x| x.eq_ignore_ascii_case(w)) {
                    continue;
                }
                if len == GOAL_WORDS_INLINE {
                    return Self::lowercased(goal);
                }
                words[len] = w;
                len += 1;
            }
            Self::Inline { words, len }
        } else {
            Self::lowercased(goal)
        }
    }

    fn lowercased(goal: &str) -> Self {
        let mut words: Vec<String> = Vec::new();
        for w in goal.split_whitespace() {
            let w = w.to_lowercase();
            if !is_goal_stop_word(&w) && !words.contains(&w) {
                words.push(w);
            }
        }
        Self::Lowercased(words)
    }

    fn words(&self) -> impl Iterator<Item = &str> + '_ {
        let (inline, owned): (&[&str], &[String]) = match self {
            Self::Inline { words, len } => (&words[..*len], &[]),
            Self::Lowercased(words) => (&[], words),
        };
        inline.iter().copied().chain(owned.iter().map(String::as_str))
    }

    fn len(&self) -> usize {
        match self {
            Self::Inline { len, .. } => *len,
            Self::Lowercased(words) => words.len(),
        }
    }

    /// The Jaccard index of the two word sets; 0 when both are empty.
    fn jaccard(&self, other: &GoalWords<'_>) -> f64 {
        let inter = self.words().filter(|a| other.words().any(|b| a.eq_ignore_ascii_case(b))).count();
        let union = self.len() + other.len() - inter;
        if union == 0 { 0.0 } else { inter as f64 / union as f64 }
    }
}

fn is_goal_stop_word(word: &str) -> bool {
    GOAL_STOP_WORDS.iter().any(|s| s.eq_ignore_ascii_case(word))
}

/// The text the embedder indexes for an episode.
pub(crate) fn episode_text(e: &Episode) -> String {
    let mut text = String::new();
    e.for_each_text(&mut |s| {
        if !s.is_empty() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(s);
        }
    });
    text
}

fn field_error(field: &'static str, expected: &str) -> Error {
    maxim_core::Error::invalid(field, format!("expected {expected}")).into()
}

fn text_list(map: &Map, keys: [&'static str; 2]) -> Result<Vec<Name>> {
    for key in keys {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::List(items)) => {
                return items
                    .iter()
                    .map(|v| v.as_str().map(Name::from).ok_or_else(|| field_error(key, "a list of text")))
                    .collect();
            }
            Some(_) => return Err(field_error(key, "a list of text")),
        }
    }
    Ok(Vec::new())
}

fn opt_text(map: &Map, key: &'static str) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Text(s)) => Ok(Some(s.clone())),
        Some(_) => Err(field_error(key, "text")),
    }
}

fn opt_number(map: &Map, key: &'static str) -> Result<Option<f64>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| field_error(key, "a number")),
    }
}

/// Converts loose loop data into the parts of an episode.
fn episode_from_loop(step: LoopStep) -> Result<NewEpisode> {
    let obs = &step.observation;
    let mut perception = Perception {
        detected_objects: text_list(obs, ["objects", "detected_objects"])?,
        detected_people: text_list(obs, ["people", "detected_people"])?,
        cli_input: opt_text(obs, "cli_input")?,
        transcript: opt_text(obs, "transcript")?,
        ..Perception::default()
    };
    if let Some(s) = opt_number(obs, "salience")? {
        perception.salience = s;
    }
    if let Some(n) = opt_number(obs, "novelty")? {
        perception.novelty = n;
    }
    let mut context = EpisodeContext {
        active_goal: opt_text(&step.intent, "goal")?.map(Name::from),
        ..EpisodeContext::default()
    };
    if let Some(Value::Map(state)) = &step.state
        && let Some(mode) = opt_text(state, "mode")?
    {
        context.active_mode = Name::from(mode);
    }
    let reasoning = match opt_text(&step.intent, "reasoning")? {
        Some(r) => Some(r),
        None => opt_text(&step.decision, "reasoning")?,
    };
    let confidence = match opt_number(&step.intent, "confidence")? {
        Some(c) => c,
        None => opt_number(&step.decision, "confidence")?.unwrap_or(1.0),
    };
    let tool_name = match opt_text(&step.action, "tool")? {
        Some(t) => t,
        None => match opt_text(&step.action, "name")? {
            Some(t) => t,
            None => opt_text(&step.action, "tool_name")?.unwrap_or_default(),
        },
    };
    let tool_params = match step.action.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => return Err(field_error("params", "a map")),
    };
    let (success, error) = match &step.result {
        Value::Bool(b) => (Some(*b), None),
        Value::Map(m) => (
            match m.get("success") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(field_error("success", "a flag")),
            },
            opt_text(m, "error")?,
        ),
        _ => (None, None),
    };
    perception.observations = step.observation;
    Ok(NewEpisode {
        perception,
        context,
        decision: Decision { intent: step.intent, reasoning, confidence, ..Decision::default() },
        action: Action { tool_name: Name::from(tool_name), tool_params, ..Action::default() },
        outcome: Outcome { success, result: step.result, error, evaluations: step.evaluations },
        run_id: step.run_id,
        state_snapshot: step.state,
        ..NewEpisode::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(goal: &str) -> Vec<String> {
        GoalWords::of(goal).words().map(str::to_lowercase).collect()
    }

    fn jaccard(a: &str, b: &str) -> f64 {
        GoalWords::of(a).jaccard(&GoalWords::of(b))
    }

    #[test]
    fn goal_words_drop_stop_words_and_case() {
        assert_eq!(words("Go to the Kitchen and find THE mug"), ["go", "kitchen", "find", "mug"]);
        assert_eq!(jaccard("find mug", "grab mug"), 1.0 / 3.0);
        assert_eq!(jaccard("Find MUG", "find the mug"), 1.0);
        assert_eq!(jaccard("the", "a"), 0.0);
        assert!(matches!(GoalWords::of("find the mug"), GoalWords::Inline { len: 2, .. }));
    }

    /// The goal term as first written: every word lowercased into a `String`.
    fn reference_jaccard(a: &str, b: &str) -> f64 {
        let words = |goal: &str| {
            let mut words: Vec<String> = Vec::new();
            for w in goal.split_whitespace() {
                let w = w.to_lowercase();
                if !GOAL_STOP_WORDS.contains(&w.as_str()) && !words.contains(&w) {
                    words.push(w);
                }
            }
            words
        };
        let (a, b) = (words(a), words(b));
        let inter = a.iter().filter(|w| b.contains(w)).count();
        let union = a.len() + b.len() - inter;
        if union == 0 { 0.0 } else { inter as f64 / union as f64 }
    }

    proptest::proptest! {
        #[test]
        fn the_goal_term_agrees_with_lowercasing_every_word(
            a in "(?:(?:[aAbBtT]|an|AN|The|ö|Ö|ß|SS|\u{212A}|Σ|σ|ς|İ|i){1,3}[ \t]){0,20}",
            b in "(?:(?:[aAbBtT]|an|AN|The|ö|Ö|ß|SS|\u{212A}|Σ|σ|ς|İ|i){1,3}[ \t]){0,20}",
        ) {
            proptest::prop_assert_eq!(jaccard(&a, &b), reference_jaccard(&a, &b));
        }
    }

    #[test]
    fn long_and_non_ascii_goals_compare_as_lowercase() {
        // Seventeen distinct words: held lowercased.
        let long = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 mug";
        assert!(matches!(GoalWords::of(long), GoalWords::Lowercased(_)));
        assert_eq!(jaccard(long, "MUG"), 1.0 / 17.0);
        // Non-ASCII words match across case, and match ASCII words with the same lowercase
        // (the Kelvin sign lowercases to `k`).
        assert_eq!(jaccard("Öffne TÜR", "öffne tür"), 1.0);
        assert_eq!(jaccard("\u{212A}ey", "KEY"), 1.0);
        assert_eq!(jaccard("Straße finden", "STRASSE finden"), 1.0 / 3.0);
        assert_eq!(words("Öffne die Tür Öffne"), ["öffne", "die", "tür"]);
    }

    #[test]
    fn loop_data_is_converted() {
        let observation: Map = [
            ("objects", Value::List(vec!["mug".into(), "table".into()])),
            ("salience", Value::from(0.7)),
            ("novelty", Value::from(0.6)),
            ("cli_input", Value::from("find the mug")),
        ]
        .into_iter()
        .collect();
        let intent: Map =
            [("goal", Value::from("find mug")), ("confidence", Value::from(0.8))].into_iter().collect();
        let action: Map = [
            ("tool", Value::from("look_around")),
            ("params", Value::Map([("direction", Value::from("left"))].into_iter().collect())),
        ]
        .into_iter()
        .collect();
        let state = Value::Map([("mode", Value::from("exploration"))].into_iter().collect());
        let result =
            Value::Map([("found", Value::from(true)), ("success", Value::from(true))].into_iter().collect());
        let e = episode_from_loop(LoopStep {
            observation,
            state: Some(state),
            intent,
            action,
            result,
            ..LoopStep::default()
        })
        .unwrap();
        assert_eq!(e.perception.detected_objects, [Name::from("mug"), Name::from("table")]);
        assert_eq!((e.perception.salience, e.perception.novelty), (0.7, 0.6));
        assert_eq!(e.context.active_goal.as_deref(), Some("find mug"));
        assert_eq!(&*e.context.active_mode, "exploration");
        assert_eq!(e.decision.confidence, 0.8);
        assert_eq!(&*e.action.tool_name, "look_around");
        assert_eq!(e.action.tool_params.get("direction").and_then(Value::as_str), Some("left"));
        assert_eq!(e.outcome.success, Some(true));
        assert!(e.state_snapshot.is_some());
    }

    #[test]
    fn a_bare_percept_has_unknown_success() {
        let e = episode_from_loop(LoopStep { result: Value::from("ok"), ..LoopStep::default() }).unwrap();
        assert_eq!(e.outcome.success, None);
        assert_eq!(&*e.context.active_mode, "observe");
    }

    #[test]
    fn wrong_types_are_refused() {
        let bad: Map = [("salience", Value::from("high"))].into_iter().collect();
        assert!(episode_from_loop(LoopStep { observation: bad, ..LoopStep::default() }).is_err());
        let bad: Map = [("objects", Value::List(vec![Value::from(3i64)]))].into_iter().collect();
        assert!(episode_from_loop(LoopStep { observation: bad, ..LoopStep::default() }).is_err());
    }
}
