//! [`Hippocampus`]: the episodic store itself, its slots, access bookkeeping, removal,
//! statistics and the consistency check.
//!
//! Records live in dense slots (a `Vec`) behind their [`RecordId`]s; the context index, the
//! pair index and the order of all records speak in slots. Capture is in
//! [`capture`](crate::capture), retrieval in [`retrieval`](crate::retrieval), sleep in
//! [`sleep`](crate::sleep), saving and loading in [`persist`](crate::persist).
//!
//! ```
//! use hippocampus::{Hippocampus, NewEpisode};
//! use maxim_core::{ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let id = hippo.capture(NewEpisode::default())?;
//! assert_eq!(hippo.peek(id).map(|e| e.meta().access_count), Some(1));
//! assert_eq!(hippo.get(id)?.meta().access_count, 2); // get records an access
//! assert_eq!(hippo.len(), 1);
//! hippo.remove(id)?;
//! assert!(hippo.is_empty());
//! assert!(hippo.check_consistency().is_consistent());
//! # Ok::<(), hippocampus::Error>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use maxim_core::embed::{Embedder, VectorIndex};
use maxim_core::graph::Graph;
use maxim_core::layer::Callbacks;
use maxim_core::lexical::LexicalIndex;
use maxim_core::{BoxError, IdGenerator, LayerStats, RecordId, SharedClock, Timestamp};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::config::{HippocampusBuilder, HippocampusConfig, StrategyKind};
use crate::episode::{Episode, EpisodicMemory, Name};
use crate::error::{Error, Result};
use crate::index::{ContextIndex, IndexedKeys, KeyKind, Slot, SlotOrder, success_text};
use crate::state_store::StateStore;
use crate::strategy::{
    AccessBased, Composite, ImportanceBased, RetentionStrategy, TemporalAware, TemporalContext,
};

/// Records at which a bulk removal works on the graph and the records in parallel.
const PARALLEL_REMOVE_MIN: usize = 512;

/// The layer's name.
pub const LAYER_NAME: &str = "hippocampus";

/// A callback told about every record compressed by sleep, after the compression.
pub type CompressCallback = Box<dyn Fn(RecordId) -> std::result::Result<(), BoxError> + Send + Sync>;

/// The counters the layer keeps (and saves).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Episodes captured.
    pub memories_captured: u64,
    /// Captured episodes that succeeded.
    pub successful: u64,
    /// Captured episodes that failed.
    pub failed: u64,
    /// Promotions to long-term (at capture, by consolidation or by use).
    pub long_term_count: u64,
    /// Associations formed at capture (each a pair of directed edges).
    pub edges_formed: u64,
    /// Sleep cycles run.
    pub consolidations: u64,
    /// Episodes compressed by sleep.
    pub compressions: u64,
    /// Records removed (by `remove`, eviction or sleep).
    pub removals: u64,
    /// Records evicted at capacity.
    pub evictions: u64,
    /// Captures at capacity that found nothing to evict (every record long-term).
    pub over_capacity_inserts: u64,
    /// Checkpoints after a consolidation that failed, on a layer open on a directory
    /// (logged; writes then wait for a checkpoint).
    pub checkpoint_failures: u64,
}

impl Counters {
    /// Checks that the counters of a loaded file hold together: the successful and failed
    /// captures are among the captures, the evictions among the removals. (Counters only
    /// grow, saturating at `u64::MAX`; a file whose counters contradict each other was not
    /// written by this layer.)
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        let judged = self.successful.checked_add(self.failed);
        if judged.is_none_or(|n| n > self.memories_captured) {
            return Err(format!(
                "{} successful and {} failed captures of {} captures",
                self.successful, self.failed, self.memories_captured
            ));
        }
        if self.evictions > self.removals {
            return Err(format!("{} evictions of {} removals", self.evictions, self.removals));
        }
        Ok(())
    }
}

/// Records and their slot tables.
#[derive(Debug, Clone, Default)]
pub(crate) struct Slots {
    pub(crate) records: Vec<Option<Episode>>,
    pub(crate) ts: Vec<i64>,
    pub(crate) ids: Vec<RecordId>,
    pub(crate) by_id: FxHashMap<RecordId, Slot>,
    pub(crate) free: Vec<Slot>,
}

impl Slots {
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }

    pub(crate) fn order(&self) -> SlotOrder<'_> {
        SlotOrder { ts: &self.ts, ids: &self.ids }
    }

    #[inline]
    pub(crate) fn get(&self, s: Slot) -> Option<&Episode> {
        self.records.get(s as usize).and_then(Option::as_ref)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, s: Slot) -> Option<&mut Episode> {
        self.records.get_mut(s as usize).and_then(Option::as_mut)
    }

    #[inline]
    pub(crate) fn slot_of(&self, id: RecordId) -> Option<Slot> {
        self.by_id.get(&id).copied()
    }

    pub(crate) fn insert(&mut self, record: Episode) -> Slot {
        let id = record.id();
        let ts = record.meta().timestamp.as_micros();
        let s = if let Some(s) = self.free.pop() {
            let i = s as usize;
            self.records[i] = Some(record);
            self.ts[i] = ts;
            self.ids[i] = id;
            s
        } else {
            self.records.push(Some(record));
            self.ts.push(ts);
            self.ids.push(id);
            (self.records.len() - 1) as Slot
        };
        self.by_id.insert(id, s);
        s
    }

    /// Empties slot `s`; its timestamp and id stay until the slot is reused, so the index can
    /// still find it.
    pub(crate) fn take(&mut self, s: Slot) -> Option<Episode> {
        let rec = self.records.get_mut(s as usize)?.take()?;
        self.by_id.remove(&rec.id());
        self.free.push(s);
        Some(rec)
    }

    /// Which slots hold a record.
    pub(crate) fn live_mask(&self) -> Vec<bool> {
        self.records.iter().map(Option::is_some).collect()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (Slot, &Episode)> + '_ {
        self.records.iter().enumerate().filter_map(|(s, r)| r.as_ref().map(|r| (s as Slot, r)))
    }
}

/// What [`Hippocampus::check_consistency`] and [`Hippocampus::repair_consistency`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyReport {
    /// Index entries that point at no record, or at a record that does not list the key.
    pub orphan_index_entries: usize,
    /// Keys a record should be indexed under but is not (or reverse entries that are
    /// missing).
    pub missing_index_entries: usize,
    /// Postings out of (timestamp, id) order.
    pub unsorted_postings: usize,
    /// Graph nodes without a record.
    pub orphan_graph_nodes: usize,
    /// Consolidation candidates without a record.
    pub stale_candidates: usize,
}

impl ConsistencyReport {
    /// True when nothing was found.
    pub fn is_consistent(&self) -> bool {
        *self == Self::default()
    }
}

/// The episodic layer: see the [crate docs](crate).
pub struct Hippocampus {
    pub(crate) config: HippocampusConfig,
    pub(crate) clock: SharedClock,
    pub(crate) ids: IdGenerator,
    /// The embedder of text similarity, when one was given to the builder.
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    pub(crate) slots: Slots,
    pub(crate) index: ContextIndex,
    /// The BM25 index of every record's text ([`Episode::for_each_field_text`]), by slot.
    pub(crate) lexical: LexicalIndex<Slot>,
    pub(crate) graph: Graph,
    pub(crate) candidates: VecDeque<RecordId>,
    pub(crate) states: StateStore,
    pub(crate) counters: Counters,
    pub(crate) queries: AtomicU64,
    pub(crate) callbacks: Callbacks<Episode>,
    pub(crate) compress_callbacks: Vec<CompressCallback>,
    pub(crate) compress_failures: AtomicU64,
    pub(crate) strategy: Arc<dyn RetentionStrategy>,
    pub(crate) temporal: Option<Arc<dyn TemporalContext>>,
    pub(crate) vectors: Option<VectorIndex>,
    pub(crate) names: FxHashSet<Name>,
    pub(crate) evict_pool: crate::capture::EvictionPool,
    /// The files this layer created or read, which its saves may overwrite.
    pub(crate) claims: maxim_core::ownership::FileClaims,
    /// The directory and journal, when the layer was opened on one.
    pub(crate) journal: Option<crate::journal::Journaled>,
    /// The journal sequence number recorded in the snapshot last loaded.
    pub(crate) loaded_journal_seq: u64,
}

impl fmt::Debug for Hippocampus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hippocampus")
            .field("records", &self.len())
            .field("index_keys", &self.index.key_count())
            .field("graph_nodes", &self.graph.node_count())
            .field("graph_edges", &self.graph.edge_count())
            .field("candidates", &self.candidates.len())
            .field("counters", &self.counters)
            .field("callbacks", &self.callbacks)
            .finish_non_exhaustive()
    }
}

/// The strategy a configuration names.
pub(crate) fn strategy_for(config: &HippocampusConfig) -> Arc<dyn RetentionStrategy> {
    let access = AccessBased {
        max_age: config.max_age_without_access,
        compression_age: config.compression_age,
        ..AccessBased::default()
    };
    match config.memory_strategy {
        StrategyKind::AccessBased => Arc::new(access),
        StrategyKind::ImportanceBased => Arc::new(ImportanceBased::default()),
        StrategyKind::Composite => Arc::new(
            Composite::new(vec![(Box::new(access), 0.6), (Box::new(ImportanceBased::default()), 0.4)])
                .expect("the reference weights are valid"),
        ),
    }
}

impl Hippocampus {
    /// A builder with every default (see [`HippocampusBuilder`]).
    pub fn builder() -> HippocampusBuilder {
        HippocampusBuilder::default()
    }

    /// An empty layer: what [`HippocampusBuilder::build`] returns.
    pub(crate) fn from_parts(
        config: HippocampusConfig,
        clock: SharedClock,
        ids: IdGenerator,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self> {
        config.validate()?;
        let states = StateStore::new(config.state_store_max_entries)?;
        let vectors = match &embedder {
            Some(e) => Some(VectorIndex::new(e.dim())?),
            None => None,
        };
        Ok(Self {
            strategy: strategy_for(&config),
            config,
            clock,
            ids,
            embedder,
            slots: Slots::default(),
            index: ContextIndex::default(),
            lexical: LexicalIndex::new(),
            graph: Graph::new(),
            candidates: VecDeque::new(),
            states,
            counters: Counters::default(),
            queries: AtomicU64::new(0),
            callbacks: Callbacks::new(LAYER_NAME),
            compress_callbacks: Vec::new(),
            compress_failures: AtomicU64::new(0),
            temporal: None,
            vectors,
            names: FxHashSet::default(),
            evict_pool: crate::capture::EvictionPool::default(),
            claims: maxim_core::ownership::FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
        })
    }

    /// A copy of the layer's contents and settings, without its callbacks and without a
    /// temporal context (those are connections, not contents). Benchmarks and "what if"
    /// sleeps use it.
    pub fn clone_without_callbacks(&self) -> Self {
        Self {
            config: self.config.clone(),
            clock: Arc::clone(&self.clock),
            ids: self.ids.clone(),
            embedder: self.embedder.clone(),
            slots: self.slots.clone(),
            index: self.index.clone(),
            lexical: self.lexical.clone(),
            graph: self.graph.clone(),
            candidates: self.candidates.clone(),
            states: self.states.clone(),
            counters: self.counters.clone(),
            queries: AtomicU64::new(self.queries.load(Ordering::Relaxed)),
            callbacks: Callbacks::new(LAYER_NAME),
            compress_callbacks: Vec::new(),
            compress_failures: AtomicU64::new(0),
            strategy: Arc::clone(&self.strategy),
            temporal: None,
            vectors: self.vectors.clone(),
            names: self.names.clone(),
            evict_pool: self.evict_pool.clone(),
            claims: self.claims.clone(),
            journal: None,
            loaded_journal_seq: self.loaded_journal_seq,
        }
    }

    /// The settings.
    pub fn config(&self) -> &HippocampusConfig {
        &self.config
    }

    /// The embedder of text similarity, if the builder was given one.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// The clock's current time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Number of records, full and compressed.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` is held.
    pub fn contains(&self, id: RecordId) -> bool {
        self.slots.slot_of(id).is_some()
    }

    /// The record `id`, without recording an access.
    pub fn peek(&self, id: RecordId) -> Option<&Episode> {
        self.slots.slot_of(id).and_then(|s| self.slots.get(s))
    }

    /// The record `id`, recording a use: an access (`accessed_at = now`, `access_count + 1`)
    /// and a reinforcement of its trace with [`HippocampusConfig::trace`](crate::HippocampusConfig::trace).
    /// [`maxim_core::Error::NotFound`] when there is none.
    pub fn get(&mut self, id: RecordId) -> Result<&Episode> {
        let s = self.slots.slot_of(id).ok_or(maxim_core::Error::NotFound { id })?;
        let now = self.clock.now();
        let params = self.config.trace;
        let rec = self.slots.get_mut(s).ok_or(maxim_core::Error::NotFound { id })?;
        rec.use_at(now, &params);
        Ok(rec)
    }

    /// Records a use of each of `ids` that is held (as [`get`](Self::get) does); returns
    /// how many.
    pub fn touch(&mut self, ids: &[RecordId]) -> usize {
        let now = self.clock.now();
        let params = self.config.trace;
        let mut n = 0;
        for &id in ids {
            if let Some(rec) = self.slots.slot_of(id).and_then(|s| self.slots.get_mut(s)) {
                rec.use_at(now, &params);
                n += 1;
            }
        }
        n
    }

    /// Every record, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Episode> + '_ {
        self.slots.iter().map(|(_, r)| r)
    }

    /// Removes `id` from the records, the context index, the consolidation queue, the vector
    /// index and the graph (with every incident edge), then runs the deletion callbacks.
    /// [`maxim_core::Error::NotFound`] when there is no such record (nothing changes).
    pub fn remove(&mut self, id: RecordId) -> Result<Episode> {
        let _s = tracing::debug_span!("hippocampus_remove", %id).entered();
        let s = self.slots.slot_of(id).ok_or(maxim_core::Error::NotFound { id })?;
        if self.journal.is_some() {
            self.journal_op(&crate::journal::Op::Remove { id })?;
        }
        Ok(self.remove_slot(s))
    }

    /// Removes the record in slot `s` (which must be live) everywhere and fires the deletion
    /// callbacks.
    pub(crate) fn remove_slot(&mut self, s: Slot) -> Episode {
        let id = self.slots.ids[s as usize];
        self.index.remove(s, self.slots.order());
        self.lexical.remove(&s);
        self.graph.remove_node(id);
        if let Some(v) = &mut self.vectors {
            let _ = v.remove(id);
        }
        if let (Some(embedder), Some(rec)) = (&self.embedder, self.slots.get(s)) {
            embedder.forget_document(&crate::capture::episode_text(rec));
        }
        if let Some(pos) = self.candidates.iter().position(|&c| c == id) {
            self.candidates.remove(pos);
        }
        let rec = self.slots.take(s).expect("remove_slot is only called on live slots");
        self.counters.removals = self.counters.removals.saturating_add(1);
        self.callbacks.fire_delete(id);
        rec
    }

    /// Removes the live slots `doomed` in one pass over the index and the queue, then fires
    /// the deletion callbacks in order.
    pub(crate) fn remove_slots(&mut self, doomed: &[Slot]) {
        if doomed.is_empty() {
            return;
        }
        let mut dead = vec![false; self.slots.records.len()];
        for &s in doomed {
            dead[s as usize] = true;
        }
        let doomed_ids: Vec<RecordId> = doomed.iter().map(|&s| self.slots.ids[s as usize]).collect();
        let Self { graph, index, lexical, slots, vectors, embedder, .. } = self;
        // The graph and the records share nothing, and each side takes about a millisecond
        // per few thousand records (unlinking edges; freeing the records' allocations), so a
        // large batch removes them side by side.
        let mut remove_graph = || {
            graph.remove_nodes(&doomed_ids);
        };
        let mut remove_records = || {
            index.remove_many(doomed, &dead);
            let mut ids = Vec::with_capacity(doomed.len());
            for &s in doomed {
                let id = slots.ids[s as usize];
                lexical.remove(&s);
                if let Some(v) = vectors.as_mut() {
                    let _ = v.remove(id);
                }
                if let (Some(e), Some(rec)) = (embedder.as_ref(), slots.get(s)) {
                    e.forget_document(&crate::capture::episode_text(rec));
                }
                if slots.take(s).is_some() {
                    ids.push(id);
                }
            }
            ids
        };
        let ids = if doomed.len() >= PARALLEL_REMOVE_MIN && rayon::current_num_threads() > 1 {
            rayon::join(remove_graph, remove_records).1
        } else {
            remove_graph();
            remove_records()
        };
        let slots = &self.slots;
        self.candidates.retain(|id| slots.slot_of(*id).is_some());
        self.counters.removals = self.counters.removals.saturating_add(ids.len() as u64);
        for id in ids {
            self.callbacks.fire_delete(id);
        }
    }

    /// Registers a callback told about every captured record, after the write.
    pub fn on_capture(&mut self, callback: maxim_core::layer::CaptureCallback<Episode>) {
        self.callbacks.add_capture(callback);
    }

    /// Registers a callback told about every removed record, after the removal.
    pub fn on_delete(&mut self, callback: maxim_core::layer::DeleteCallback) {
        self.callbacks.add_delete(callback);
    }

    /// Registers a callback told about every record sleep compresses, after the compression
    /// (the hub's concept extractor drops the episode from its concepts' references).
    pub fn on_compress(&mut self, callback: CompressCallback) {
        self.compress_callbacks.push(callback);
    }

    /// Connects the SCN's view of time: sleep then wraps the configured strategy in
    /// [`TemporalAware`]. `None` disconnects it.
    pub fn set_temporal_context(&mut self, context: Option<Arc<dyn TemporalContext>>) {
        self.temporal = context;
    }

    /// The strategy sleep uses: the configured one, temporal-aware when a temporal context
    /// is connected.
    pub fn retention_strategy(&self) -> Arc<dyn RetentionStrategy> {
        match &self.temporal {
            Some(ctx) => Arc::new(TemporalAware::new(Arc::clone(&self.strategy), Arc::clone(ctx))),
            None => Arc::clone(&self.strategy),
        }
    }

    /// The state snapshots.
    pub fn state_store(&self) -> &StateStore {
        &self.states
    }

    /// The state snapshot `r`, refreshing its recency. [`Error::StateNotFound`] when it is
    /// not held.
    pub fn get_state(&mut self, r: crate::hash::StateRef) -> Result<&maxim_core::value::Value> {
        self.states.get(r).ok_or(Error::StateNotFound { state_ref: r })
    }

    /// The ids waiting for consolidation, oldest first.
    pub fn consolidation_candidates(&self) -> impl ExactSizeIterator<Item = RecordId> + '_ {
        self.candidates.iter().copied()
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Number of `recall` calls (both kinds) so far.
    pub fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    /// Callback failures (errors and panics) so far.
    pub fn callback_failures(&self) -> u64 {
        self.callbacks.failures() + self.compress_failures.load(Ordering::Relaxed)
    }

    /// The graph of associations.
    pub fn associative_graph(&self) -> &Graph {
        &self.graph
    }

    /// Counts that describe the layer (the original's `stats()`), by name.
    pub fn layer_stats(&self) -> LayerStats {
        let (mut compressed, mut long_term) = (0, 0);
        for (_, r) in self.slots.iter() {
            compressed += usize::from(r.is_compressed());
            long_term += usize::from(r.meta().long_term);
        }
        let c = &self.counters;
        let mut counters = BTreeMap::new();
        let mut put = |k: &str, v: u64| {
            counters.insert(k.to_owned(), v);
        };
        put("memories_captured", c.memories_captured);
        put("queries", self.queries());
        put("successful", c.successful);
        put("failed", c.failed);
        put("long_term_count", c.long_term_count);
        put("edges_formed", c.edges_formed);
        put("consolidations", c.consolidations);
        put("compressions", c.compressions);
        put("removals", c.removals);
        put("evictions", c.evictions);
        put("over_capacity_inserts", c.over_capacity_inserts);
        put("checkpoint_failures", c.checkpoint_failures);
        put("callback_failures", self.callback_failures());
        put("total_memories", self.len() as u64);
        put("compressed_memories", compressed as u64);
        put("full_memories", (self.len() - compressed) as u64);
        put("long_term_memories", long_term as u64);
        put("index_keys", self.index.key_count() as u64);
        put("consolidation_candidates", self.candidates.len() as u64);
        put("state_store_entries", self.states.len() as u64);
        put("state_store_max_entries", self.states.max_entries() as u64);
        put("graph_nodes", self.graph.node_count() as u64);
        put("graph_edges", self.graph.edge_count() as u64);
        put("graph_enabled", u64::from(self.config.enable_associative_graph));
        LayerStats {
            layer: LAYER_NAME.to_owned(),
            records: self.len(),
            compressed,
            long_term,
            graph_nodes: self.graph.node_count(),
            graph_edges: self.graph.edge_count(),
            counters,
        }
    }

    /// Checks that the context index, its reverse index, the pair index, the graph and the
    /// consolidation queue agree with the records. Changes nothing.
    pub fn check_consistency(&self) -> ConsistencyReport {
        let live = self.slots.live_mask();
        let audit = self.index.audit(&live, self.slots.order());
        let mut report = ConsistencyReport {
            orphan_index_entries: audit.orphan_entries,
            missing_index_entries: audit.missing_entries,
            unsorted_postings: audit.unsorted_postings,
            orphan_graph_nodes: self.graph.nodes().filter(|id| !self.contains(*id)).count(),
            stale_candidates: self.candidates.iter().filter(|id| !self.contains(**id)).count(),
        };
        // Full records must be indexed under exactly the keys they derive.
        for (s, r) in self.slots.iter() {
            if let Some(m) = r.as_full() {
                let mut expected = derive_keys(m, self.config.indexed_keys);
                expected.sort_unstable();
                expected.dedup();
                let mut held: Vec<(KeyKind, &str)> = self
                    .index
                    .keys_of(s)
                    .iter()
                    .map(|&k| (self.index.kind_of(k), self.index.text_of(k)))
                    .collect();
                held.sort_unstable();
                if held != expected {
                    report.missing_index_entries += 1;
                }
            }
        }
        report
    }

    /// Rebuilds the context index from the records (full records from their fields,
    /// compressed ones from the keys they held), drops graph nodes without a record and
    /// stale queue entries. Returns what [`check_consistency`](Self::check_consistency)
    /// found before the repair.
    pub fn repair_consistency(&mut self) -> ConsistencyReport {
        let _s = tracing::debug_span!("hippocampus_repair", n_records = self.len()).entered();
        let report = self.check_consistency();
        if report.is_consistent() {
            return report;
        }
        let mut live: Vec<Slot> = self.slots.iter().map(|(s, _)| s).collect();
        let order = self.slots.order();
        live.sort_unstable_by_key(|&s| order.key(s));
        let keys: Vec<(Slot, Vec<(KeyKind, String)>)> = live
            .iter()
            .map(|&s| {
                let keys = match self.slots.get(s) {
                    Some(Episode::Full(m)) => derive_keys(m, self.config.indexed_keys)
                        .into_iter()
                        .map(|(k, t)| (k, t.to_owned()))
                        .collect(),
                    _ => self
                        .index
                        .keys_of(s)
                        .iter()
                        .filter(|&&k| {
                            self.index.lookup(self.index.kind_of(k), self.index.text_of(k)) == Some(k)
                        })
                        .map(|&k| (self.index.kind_of(k), self.index.text_of(k).to_owned()))
                        .collect(),
                };
                (s, keys)
            })
            .collect();
        self.index.clear();
        for (s, ks) in &keys {
            let borrowed: Vec<(KeyKind, &str)> = ks.iter().map(|(k, t)| (*k, t.as_str())).collect();
            self.index.insert(*s, &borrowed, self.slots.order());
        }
        self.rebuild_lexical();
        let orphans: Vec<RecordId> =
            self.graph.nodes().filter(|id| self.slots.slot_of(*id).is_none()).collect();
        for id in orphans {
            self.graph.remove_node(id);
        }
        let slots = &self.slots;
        self.candidates.retain(|id| slots.slot_of(*id).is_some());
        report
    }

    /// Indexes the text of the record in slot `s` for keyword recall (replacing what was
    /// indexed for the slot).
    pub(crate) fn index_text(&mut self, s: Slot) {
        if let Some(rec) = self.slots.get(s) {
            let fields = rec.lexical_fields();
            self.lexical.insert(s, &fields).expect("the field weights are valid");
        }
    }

    /// Rebuilds the lexical index from the records (after a load or a repair).
    pub(crate) fn rebuild_lexical(&mut self) {
        self.lexical = lexical_of(&self.slots);
    }

    /// Replaces the record's names by the layer's shared copies (adding new names).
    pub(crate) fn intern_names(&mut self, record: &mut Episode) {
        intern_into(&mut self.names, record);
    }

    /// Forgets the names no record uses any more.
    pub(crate) fn purge_names(&mut self) {
        self.names.retain(|n| Arc::strong_count(n) > 1);
    }

    /// Calls every compression callback for `id`, containing failures.
    pub(crate) fn fire_compress(&self, id: RecordId) {
        for (idx, cb) in self.compress_callbacks.iter().enumerate() {
            let failure = match catch_unwind(AssertUnwindSafe(|| cb(id))) {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(_) => "panic".to_owned(),
            };
            self.compress_failures.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(layer = LAYER_NAME, callback = "compress", index = idx, %id, error = %failure, "memory callback failed");
        }
    }
}

/// The lexical index of every record in `slots`, inserted in slot order.
pub(crate) fn lexical_of(slots: &Slots) -> LexicalIndex<Slot> {
    let mut lexical = LexicalIndex::new();
    for (s, rec) in slots.iter() {
        lexical.insert(s, &rec.lexical_fields()).expect("the field weights are valid");
    }
    lexical
}

/// Replaces `record`'s names by the copies in `names`, adding the new ones.
pub(crate) fn intern_into(names: &mut FxHashSet<Name>, record: &mut Episode) {
    record.for_each_name_mut(&mut |n| {
        if let Some(shared) = names.get(&**n) {
            if !Arc::ptr_eq(shared, n) {
                *n = Arc::clone(shared);
            }
        } else {
            names.insert(Arc::clone(n));
        }
    });
}

/// The index keys of a full episode (§3.4), for the kinds `indexed` holds: `goal:` from the
/// active goal, `tool:` and `mode:` when not empty, `success:` always, one `object:` and
/// `person:` per distinct name.
pub(crate) fn derive_keys(m: &EpisodicMemory, indexed: IndexedKeys) -> Vec<(KeyKind, &str)> {
    let mut keys: Vec<(KeyKind, &str)> = Vec::with_capacity(4 + m.perception.detected_objects.len());
    if indexed.goal
        && let Some(g) = m.context.active_goal.as_deref().filter(|g| !g.is_empty())
    {
        keys.push((KeyKind::Goal, g));
    }
    if indexed.tool && !m.action.tool_name.is_empty() {
        keys.push((KeyKind::Tool, &*m.action.tool_name));
    }
    if indexed.success {
        keys.push((KeyKind::Success, success_text(m.outcome.success)));
    }
    if indexed.mode && !m.context.active_mode.is_empty() {
        keys.push((KeyKind::Mode, &*m.context.active_mode));
    }
    if indexed.object {
        keys.extend(m.perception.detected_objects.iter().map(|o| (KeyKind::Object, &**o)));
    }
    if indexed.person {
        keys.extend(m.perception.detected_people.iter().map(|p| (KeyKind::Person, &**p)));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::NewEpisode;
    use maxim_core::{ManualClock, Timestamp};

    fn store() -> (Hippocampus, Vec<RecordId>) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut h = Hippocampus::builder().clock(clock.shared()).build().unwrap();
        let ids = (0..4)
            .map(|i| {
                let mut e = NewEpisode::default();
                e.perception.detected_objects =
                    vec!["mug".into(), if i % 2 == 0 { "cup" } else { "box" }.into()];
                e.context.active_goal = Some("find mug".into());
                h.capture(e).unwrap()
            })
            .collect();
        (h, ids)
    }

    #[test]
    fn repair_rebuilds_a_damaged_index_and_drops_orphans() {
        let (mut h, ids) = store();
        assert!(h.check_consistency().is_consistent());
        h.compress(ids[0]).unwrap();
        let mug = h.index.lookup(KeyKind::Object, "mug").unwrap();
        h.index.corrupt_for_test(mug);
        h.graph.add_node(RecordId::from_u128(77)).unwrap();
        h.candidates.push_back(RecordId::from_u128(78));
        let found = h.check_consistency();
        assert!(found.orphan_index_entries >= 1);
        assert_eq!((found.orphan_graph_nodes, found.stale_candidates), (1, 1));
        let repaired = h.repair_consistency();
        assert_eq!(repaired, found, "repair reports what it found");
        assert!(h.check_consistency().is_consistent());
        // The compressed record kept its object keys through the rebuild.
        let object_keys = h.keys_of(ids[0]).into_iter().filter(|k| k.kind() == KeyKind::Object).count();
        assert_eq!(object_keys, 2);
        assert_eq!(h.memories_by_index(&crate::IndexKey::Object("mug".into())).len(), 4);
    }

    #[test]
    fn stats_name_every_counter() {
        let (h, _) = store();
        let stats = h.layer_stats();
        for key in [
            "memories_captured",
            "queries",
            "successful",
            "failed",
            "long_term_count",
            "edges_formed",
            "consolidations",
            "compressions",
            "removals",
            "callback_failures",
            "total_memories",
            "compressed_memories",
            "full_memories",
            "long_term_memories",
            "index_keys",
            "consolidation_candidates",
            "state_store_entries",
            "state_store_max_entries",
            "graph_nodes",
            "graph_edges",
            "graph_enabled",
        ] {
            assert!(stats.counters.contains_key(key), "{key}");
        }
        assert_eq!(stats.counters["memories_captured"], 4);
        assert_eq!(stats.records, 4);
        assert_eq!(stats.graph_edges, h.graph.edge_count());
    }

    #[test]
    fn a_clone_has_the_contents_but_no_callbacks() {
        let (mut h, ids) = store();
        h.on_delete(Box::new(|_| Err("no".into())));
        let mut copy = h.clone_without_callbacks();
        copy.remove(ids[0]).unwrap();
        assert_eq!(copy.callback_failures(), 0);
        assert!(h.contains(ids[0]) && !copy.contains(ids[0]));
        assert_eq!(h.len(), 4);
    }
}
