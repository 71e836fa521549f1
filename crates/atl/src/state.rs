//! The semantic layer's state: everything a snapshot replaces (records, their keys, the
//! name, context and vector indexes, the relationship graph and registry, the counters), and
//! the upkeep that keeps those parts in step when a record is stored, changed or removed.

use maxim_core::embed::{Embedder, VectorIndex};
use maxim_core::graph::Graph;
use maxim_core::{MemoryRecord, RecordId};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::concept::{MAX_ALIASES, SemanticRecord};
use crate::config::AtlConfig;
use crate::consolidate::EvictionQueue;
use crate::error::{Error, Result};
use crate::index::{ContextIndex, property_value_key};
use crate::names::{NameIndex, is_structured_name, name_key};
use crate::registry::RelationshipRegistry;

/// The keys kept beside each record.
#[derive(Clone)]
pub(crate) struct Keys {
    pub(crate) name: Box<str>,
    pub(crate) category: Box<str>,
    pub(crate) aliases: Vec<Box<str>>,
    /// At least every id among the concept's source episodes (`None`: it has none). Record
    /// ids are time-ordered, so an episode that reinforces a concept is usually greater, and
    /// then known new without a scan of the list. Every write that credits an episode raises
    /// it ([`State::credit`]); a removal leaves it as it is, still a bound.
    pub(crate) episodes_bound: Option<RecordId>,
}

// The bound of the source episodes is left out: it is a cache, and a layer reopened from
// its files may hold a lower one (the greatest id its lists hold now) than the live layer.
impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("name", &self.name)
            .field("category", &self.category)
            .field("aliases", &self.aliases)
            .finish_non_exhaustive()
    }
}

impl Keys {
    fn of(record: &SemanticRecord) -> Self {
        Self {
            name: name_key(record.name()).into(),
            category: name_key(record.category()).into(),
            aliases: record.aliases().iter().map(|a| name_key(a).into()).collect(),
            episodes_bound: record.as_concept().and_then(|c| c.source_episode_ids.iter().max().copied()),
        }
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        *self.name == *key || self.aliases.iter().any(|a| **a == *key)
    }
}

/// Declares [`Counters`] from one list of documented names: the struct, and the name-keyed
/// reads and writes that `stats` and snapshots use, so the names cannot drift apart.
macro_rules! counters {
    ($($(#[doc = $doc:literal])+ $name:ident,)+) => {
        /// Counts kept by the layer (reported by `stats`, saved with it).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub(crate) struct Counters {
            $($(#[doc = $doc])+ pub(crate) $name: u64,)+
        }

        impl Counters {
            /// Every counter with its name, in declaration order, then `queries` (kept apart,
            /// as an atomic, by the layer).
            pub(crate) fn to_pairs(&self, queries: u64) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)+ ("queries", queries)]
            }

            /// Sets the counter called `name`; unknown names (of a newer build) are ignored.
            pub(crate) fn set(&mut self, name: &str, value: u64) {
                match name {
                    $(stringify!($name) => self.$name = value,)+
                    _ => {}
                }
            }
        }
    };
}

counters! {
    /// Records stored (created, inserted or loaded through `store`).
    concepts_stored,
    /// Concepts created by `find_or_create`.
    concepts_created,
    /// `find_or_create` calls that found a name or alias exactly.
    exact_hits,
    /// `find_or_create` calls that merged a name by similarity.
    similarity_merges,
    /// Candidate names scored by the similarity path.
    similarity_comparisons,
    /// Reinforcements (by `find_or_create` hits with an episode and by `reinforce`).
    reinforcements,
    /// Concepts removed (by `remove`, eviction, consolidation or a purge).
    removals,
    /// Concepts evicted at capacity.
    evictions,
    /// Concepts compressed by consolidation.
    compressions,
    /// Consolidation passes.
    consolidations,
    /// Relationships created.
    relationships_defined,
    /// Relationships defined again (merged into the existing edge).
    relationships_reinforced,
    /// Contradictions opened: writes that made an uncontested property contested (writes to a
    /// property already contested do not count again).
    contradictions_reported,
}

/// Everything a snapshot replaces.
#[derive(Debug, Clone)]
pub(crate) struct State {
    pub(crate) records: Vec<SemanticRecord>,
    pub(crate) keys: Vec<Keys>,
    pub(crate) slots: FxHashMap<RecordId, u32>,
    pub(crate) names: NameIndex,
    pub(crate) index: ContextIndex,
    pub(crate) contested: FxHashSet<RecordId>,
    pub(crate) vectors: VectorIndex,
    pub(crate) graph: Graph,
    pub(crate) registry: RelationshipRegistry,
    pub(crate) counters: Counters,
    pub(crate) eviction: EvictionQueue,
}

impl State {
    pub(crate) fn new(config: &AtlConfig, dim: usize) -> Result<Self> {
        Ok(Self {
            records: Vec::new(),
            keys: Vec::new(),
            slots: FxHashMap::default(),
            names: NameIndex::new(config.name_similarity_threshold)?,
            index: ContextIndex::default(),
            contested: FxHashSet::default(),
            vectors: VectorIndex::new(dim)?,
            graph: Graph::new(),
            registry: RelationshipRegistry::new(),
            counters: Counters::default(),
            eviction: EvictionQueue::default(),
        })
    }

    pub(crate) fn slot(&self, id: RecordId) -> Option<usize> {
        self.slots.get(&id).map(|&s| s as usize)
    }

    pub(crate) fn record(&self, id: RecordId) -> Option<&SemanticRecord> {
        self.slot(id).map(|s| &self.records[s])
    }

    pub(crate) fn require(&self, id: RecordId) -> Result<usize> {
        self.slot(id).ok_or(Error::not_found(id))
    }

    /// Appends a validated record whose id is new, with every index, graph node and vector;
    /// a concept keeps its newest [`MAX_SOURCE_EPISODES`](crate::MAX_SOURCE_EPISODES) source
    /// episodes.
    pub(crate) fn push(
        &mut self,
        mut record: SemanticRecord,
        embedder: &dyn Embedder,
        vec: &mut Vec<f32>,
    ) -> Result<usize> {
        if let SemanticRecord::Full(c) = &mut record {
            c.keep_newest_episodes();
        }
        let id = record.id();
        self.graph.add_node(id)?;
        let slot = self.records.len();
        self.slots.insert(id, slot as u32);
        self.keys.push(Keys::of(&record));
        self.records.push(record);
        self.index_names(slot);
        self.index_content(slot);
        self.embed(slot, embedder, vec);
        Ok(slot)
    }

    /// Takes the record at `slot` out of every index, the graph and the vectors, and out of
    /// the store (the last record moves into its slot).
    pub(crate) fn take(&mut self, slot: usize) -> SemanticRecord {
        let id = self.records[slot].id();
        self.unindex_content(slot);
        self.unindex_names(slot);
        self.graph.remove_node(id);
        let _ = self.vectors.remove(id);
        self.slots.remove(&id);
        self.keys.swap_remove(slot);
        let record = self.records.swap_remove(slot);
        if slot < self.records.len() {
            let moved = self.records[slot].id();
            self.slots.insert(moved, slot as u32);
        }
        record
    }

    fn index_names(&mut self, slot: usize) {
        let id = self.records[slot].id();
        let keys = &self.keys[slot];
        if is_structured_name(self.records[slot].name()) {
            // Exact only (`names`): found by its key, never by similarity.
            self.names.insert_alias(id, &keys.category, &keys.name);
        } else {
            self.names.insert(id, &keys.category, &keys.name);
        }
        self.index.names.insert(&keys.name, id);
        for alias in &keys.aliases {
            self.names.insert_alias(id, &keys.category, alias);
            self.index.names.insert(alias, id);
        }
        self.index.categories.insert(&keys.category, id);
    }

    fn unindex_names(&mut self, slot: usize) {
        let id = self.records[slot].id();
        let keys = &self.keys[slot];
        self.names.remove(id, &keys.category, &keys.name);
        self.index.names.remove(&keys.name, id);
        for alias in &keys.aliases {
            self.names.remove_alias(id, &keys.category, alias);
            self.index.names.remove(alias, id);
        }
        self.index.categories.remove(&keys.category, id);
    }

    /// Indexes what only full concepts have: properties, modality, contested state.
    pub(crate) fn index_content(&mut self, slot: usize) {
        let SemanticRecord::Full(c) = &self.records[slot] else {
            return;
        };
        let id = c.meta.id;
        for p in c.properties.iter() {
            self.index.property_keys.insert(p.key(), id);
            self.index.property_values.insert(&property_value_key(p.key(), p.current()), id);
        }
        if let Some(m) = c.substrate_modality.as_deref() {
            self.index.modalities.insert(m, id);
        }
        if c.properties.is_contested() {
            self.contested.insert(id);
        }
    }

    pub(crate) fn unindex_content(&mut self, slot: usize) {
        let SemanticRecord::Full(c) = &self.records[slot] else {
            return;
        };
        let id = c.meta.id;
        for p in c.properties.iter() {
            self.index.property_keys.remove(p.key(), id);
            self.index.property_values.remove(&property_value_key(p.key(), p.current()), id);
        }
        if let Some(m) = c.substrate_modality.as_deref() {
            self.index.modalities.remove(m, id);
        }
        self.contested.remove(&id);
    }

    /// (Re)computes the vector of the full concept at `slot`; a compressed one has none.
    pub(crate) fn embed(&mut self, slot: usize, embedder: &dyn Embedder, vec: &mut Vec<f32>) {
        let record = &self.records[slot];
        let id = record.id();
        match record {
            SemanticRecord::Full(c) => {
                vec.resize(embedder.dim(), 0.0);
                embedder.embed_into(&c.text_for_embedding(), vec);
                if let Err(err) = self.vectors.add(id, vec) {
                    tracing::warn!(%id, error = %err, "embedder produced an unusable vector; concept not searchable");
                    let _ = self.vectors.remove(id);
                }
            }
            SemanticRecord::Compressed(_) => {
                let _ = self.vectors.remove(id);
            }
        }
    }

    /// Adds `alias` (whose key is `key`) to the concept at `slot`, unless the key is already
    /// one of its names or it has [`MAX_ALIASES`]. Returns whether it was added.
    pub(crate) fn add_alias(&mut self, slot: usize, alias: &str, key: &str) -> bool {
        if self.keys[slot].has(key) || self.keys[slot].aliases.len() >= MAX_ALIASES {
            return false;
        }
        let id = self.records[slot].id();
        self.records[slot].aliases_mut().push(alias.to_owned());
        self.keys[slot].aliases.push(key.into());
        let category = &self.keys[slot].category;
        self.names.insert_alias(id, category, key);
        self.index.names.insert(key, id);
        true
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Reinforces the record at `slot` crediting `episode` (see
    /// [`SemanticRecord::reinforce`]), skipping the membership scan of its source episodes
    /// when `episode` is above every one of them; keeps the slot's bound of them.
    pub(crate) fn credit(
        &mut self,
        slot: usize,
        episode: Option<RecordId>,
        at: maxim_core::Timestamp,
        params: &maxim_core::trace::TraceParams,
    ) {
        let bound = &mut self.keys[slot].episodes_bound;
        let known_new = episode.is_some_and(|e| bound.is_none_or(|b| e > b));
        *bound = (*bound).max(episode);
        match &mut self.records[slot] {
            SemanticRecord::Full(c) => c.reinforce_crediting(episode, known_new, at, params),
            record @ SemanticRecord::Compressed(_) => record.reinforce(episode, at, params),
        }
    }
}
