//! [`Atl`]: the semantic layer's store and its API: deduplicating
//! [`find_or_create`](Atl::find_or_create), filtered [`recall`](Atl::recall_concepts),
//! [`recall_similar`](Atl::recall_similar), and the property claims of concepts. Its settings
//! and builder are in [`config`](crate::config), its recall filter in
//! [`filter`](crate::filter), and the state a snapshot replaces in a private `state` module.
//!
//! Records live in a dense vector; a `RecordId → slot` map finds them, and a removal swaps the
//! last record into the hole. Beside each record the store keeps its name, category and alias
//! keys, so filters and index updates never recompute them.
//!
//! ```
//! use atl::{Atl, ConceptFilter, MatchKind, spec};
//! use maxim_core::{ManualClock, RecordId, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut atl = Atl::builder().clock(clock.shared()).id_seed(1).build()?;
//! let first = atl.find_or_create(&spec("coffee_mug", "object"))?;
//! assert!(first.created);
//! for name in ["coffee mug", "Coffee Mug", "coffee mugs"] {
//!     let again = atl.find_or_create(&spec(name, "object"))?;
//!     assert_eq!((again.id, again.created, again.matched), (first.id, false, MatchKind::Exact));
//! }
//! let typo = atl.find_or_create(&spec("coffe mug", "object"))?;
//! assert_eq!(typo.id, first.id);
//! assert!(matches!(typo.matched, MatchKind::Similar { .. }));
//! assert!(atl.find_or_create(&spec("coffee mug", "person"))?.created); // another category
//! assert_eq!(atl.recall_concepts(&ConceptFilter::new().category("object"), 10).len(), 1);
//! # Ok::<(), atl::Error>(())
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::names::{is_structured_name, name_key, name_key_into};
use maxim_core::embed::Embedder;
use maxim_core::graph::Graph;
use maxim_core::layer::Callbacks;
use maxim_core::value::Value;
use maxim_core::{
    ConceptProvenance, ConceptSpec, IdGenerator, LayerKind, MemoryRecord, RecordId, SharedClock, Source,
    Timestamp, Trust,
};

use crate::concept::{Concept, MemoryRefs, SemanticRecord, default_source};
use crate::config::{AtlBuilder, AtlConfig};
use crate::error::{Error, Result};
use crate::filter::{ConceptFilter, Prepared};
use crate::index::property_value_key;
use crate::journal::{Applied, Op};
use crate::properties::{Claim, Contradiction, Property, PropertyChange, check_key, check_value, same_value};
use crate::registry::RelationshipRegistry;
pub(crate) use crate::state::State;

/// The layer's name.
pub const LAYER_NAME: &str = "atl";

/// A [`ConceptSpec`] for `name` in `category` with the defaults of the original's
/// `find_or_create`: no definition, episodic consolidation, no episode, from
/// [`Source::Episodic`] with its default trust.
///
/// ```
/// let s = atl::spec("mug", "object");
/// assert_eq!((s.name.as_str(), s.category.as_str(), s.trust), ("mug", "object", 0.6));
/// assert!(s.source_episode.is_none());
/// ```
pub fn spec(name: &str, category: &str) -> ConceptSpec {
    let source = default_source(ConceptProvenance::EpisodicConsolidation);
    ConceptSpec {
        name: name.to_owned(),
        category: category.to_owned(),
        definition: String::new(),
        provenance: ConceptProvenance::EpisodicConsolidation,
        source_episode: None,
        trust: source.default_trust().get(),
        source,
    }
}

/// How [`Atl::find_or_create`] matched the name.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchKind {
    /// Nothing matched: a concept was created.
    Created,
    /// The name's key equals the key of the concept's name or of one of its aliases.
    Exact,
    /// The name's key is similar enough to the name of a concept held (aliases are not
    /// compared); the new name became an alias.
    Similar {
        /// The similarity score.
        score: f64,
        /// The key of the concept's name it matched.
        matched_key: String,
    },
}

/// What [`Atl::find_or_create`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct FindOrCreate {
    /// The concept found or created.
    pub id: RecordId,
    /// True when it was created.
    pub created: bool,
    /// True when an existing concept was reinforced: a source episode was given and the
    /// concept is held in full. A compressed concept is found but never reinforced (see
    /// [`Atl::find_or_create`]).
    pub reinforced: bool,
    /// How the name matched.
    pub matched: MatchKind,
}

/// What [`Atl::set_property`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyWrite {
    /// What happened to the claims.
    pub change: PropertyChange,
    /// The open contradiction over the property, when sources now disagree.
    pub contradiction: Option<Contradiction>,
}

/// What [`Atl::purge_source`] removed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourcePurge {
    /// Concepts whose own source it was, removed.
    pub concepts_removed: Vec<RecordId>,
    /// Claims of that source retracted from the concepts that stay.
    pub claims_retracted: usize,
}

/// A [`ConceptSpec`] borrowed, its trust checked: what `find_or_create` reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpecView<'a> {
    pub(crate) name: &'a str,
    pub(crate) category: &'a str,
    pub(crate) definition: &'a str,
    pub(crate) provenance: ConceptProvenance,
    pub(crate) source_episode: Option<RecordId>,
    pub(crate) source: &'a Source,
    pub(crate) trust: Trust,
}

impl<'a> SpecView<'a> {
    fn of(spec: &'a ConceptSpec, trust: Trust) -> Self {
        Self {
            name: &spec.name,
            category: &spec.category,
            definition: &spec.definition,
            provenance: spec.provenance,
            source_episode: spec.source_episode,
            source: &spec.source,
            trust,
        }
    }
}

/// How a name resolves in `find_or_create`, before anything changes.
pub(crate) enum Resolved {
    /// The name's key is a concept's name or alias.
    Exact(RecordId),
    /// The name is similar to a concept's name; it becomes an alias.
    Similar { id: RecordId, alias: String, scored: u64, score: f64, matched_key: String },
    /// Nothing matched: this concept, with its new id, is to be created.
    New { concept: Box<Concept>, scored: u64 },
}

/// Reusable buffers of the hot paths.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    name: String,
    category: String,
    key: String,
    vector: Vec<f32>,
    /// The name and category keys of an episode's concepts (`record_episode`).
    pub(crate) episode_keys: Vec<(String, String)>,
    /// The steps of an episode not yet journaled (`record_episode`), kept for their room.
    pub(crate) episode_pending: crate::episode::Pending,
}

/// The semantic layer: concepts, their relationships and their contradictions. See the
/// [crate docs](crate).
pub struct Atl {
    pub(crate) config: AtlConfig,
    pub(crate) clock: SharedClock,
    pub(crate) ids: IdGenerator,
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) state: State,
    pub(crate) callbacks: Callbacks<SemanticRecord>,
    pub(crate) queries: AtomicU64,
    /// The files this layer created or read, which its saves may overwrite.
    pub(crate) claims: maxim_core::ownership::FileClaims,
    /// The directory and journal, when the layer was opened on one.
    pub(crate) journal: Option<crate::journal::Journaled>,
    /// The journal sequence number recorded in the snapshot last loaded.
    pub(crate) loaded_journal_seq: u64,
    /// Writes whose journal failure could not be returned (`purge_source`), counted.
    pub(crate) journal_failures: u64,
    pub(crate) scratch: Scratch,
}

impl Drop for Atl {
    /// Journals the accesses of reads not journaled yet (the journal itself writes what it
    /// gathered when it is dropped).
    fn drop(&mut self) {
        if let Err(e) = self.flush_reads() {
            tracing::warn!(error = %e, "the accesses of the last reads were not journaled");
        }
    }
}

impl std::fmt::Debug for Atl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Atl")
            .field("concepts", &self.state.len())
            .field("graph_edges", &self.state.graph.edge_count())
            .field("embedder", &self.embedder.name())
            .field("config", &self.config)
            .field("journaled", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

impl Atl {
    /// A builder with every default.
    pub fn builder() -> AtlBuilder {
        AtlBuilder::default()
    }

    /// An empty layer: what [`AtlBuilder::build`] returns.
    pub(crate) fn from_parts(
        config: AtlConfig,
        clock: SharedClock,
        ids: IdGenerator,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        config.validate()?;
        let state = State::new(&config, embedder.dim())?;
        Ok(Self {
            config,
            clock,
            ids,
            embedder,
            state,
            callbacks: Callbacks::new(LAYER_NAME),
            queries: AtomicU64::new(0),
            claims: maxim_core::ownership::FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
            journal_failures: 0,
            scratch: Scratch::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &AtlConfig {
        &self.config
    }

    /// The embedder of [`recall_similar`](Self::recall_similar).
    pub fn embedder(&self) -> &dyn Embedder {
        &*self.embedder
    }

    /// The clock's current time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The relationship types.
    pub fn registry(&self) -> &RelationshipRegistry {
        &self.state.registry
    }

    /// The concept graph.
    pub fn concept_graph(&self) -> &Graph {
        &self.state.graph
    }

    /// Number of concepts held, full and compressed.
    pub fn concept_count(&self) -> usize {
        self.state.len()
    }

    /// Number of compressed concepts held.
    pub fn compressed_count(&self) -> usize {
        self.state.records.iter().filter(|r| r.is_compressed()).count()
    }

    /// The record `id`, without recording an access.
    pub fn record(&self, id: RecordId) -> Option<&SemanticRecord> {
        self.state.record(id)
    }

    /// The full concept `id`, without recording an access (`None` when it is unknown or
    /// compressed).
    pub fn concept(&self, id: RecordId) -> Option<&Concept> {
        self.state.record(id).and_then(SemanticRecord::as_concept)
    }

    /// A new concept named `name` in `category` with a fresh id made now, ready for
    /// [`store`](maxim_core::MemoryLayer::store) (see [`Concept::new`]).
    pub fn new_concept(&mut self, name: &str, category: &str) -> Result<Concept> {
        let now = self.clock.now();
        let id = self.ids.next_id(now);
        let mut c = Concept::new(id, name, category, now)?;
        c.memory_refs = MemoryRefs::with_cap(self.config.max_refs_per_layer);
        Ok(c)
    }

    /// Stores `record` as it is (no deduplication; see [`find_or_create`](Self::find_or_create)),
    /// evicting the lowest-ranked concept when the store is full (see
    /// [Eviction at capacity](crate::consolidate#eviction-at-capacity)), then runs the capture
    /// callbacks.
    ///
    /// Errors (nothing changes): an invalid record ([`SemanticRecord::validate`]), an id already
    /// held ([`maxim_core::Error::Duplicate`]), a journal that refuses the write.
    pub fn insert(&mut self, record: SemanticRecord) -> Result<RecordId> {
        let id = record.id();
        let _s = tracing::debug_span!("atl_store", %id, n_concepts = self.state.len()).entered();
        if let Err(e) = record.validate() {
            record.dispose_values();
            return Err(e);
        }
        if self.state.slots.contains_key(&id) {
            return Err(maxim_core::Error::Duplicate { id }.into());
        }
        let at = self.clock.now();
        let evicted = self.victims(at);
        self.commit_evicting(Op::Store { record: Box::new(record), at, evicted })?;
        Ok(id)
    }

    /// Commits a write that may evict: a refused write puts the eviction candidates it took
    /// back by dropping the ranking.
    pub(crate) fn commit_evicting(&mut self, op: Op) -> Result<Applied> {
        let result = self.commit(op);
        if result.is_err() {
            self.state.eviction.clear();
        }
        result
    }

    /// Removes concept `id` from the store, every index and the graph (with all its edges), then
    /// runs the deletion callbacks. Errors: [`maxim_core::Error::NotFound`], a journal that
    /// refuses the write.
    pub fn remove_concept(&mut self, id: RecordId) -> Result<SemanticRecord> {
        let _s = tracing::debug_span!("atl_remove", %id).entered();
        self.state.require(id)?;
        match self.commit(Op::Remove { id })? {
            Applied::Removed(Some(record)) => Ok(record),
            _ => Err(Error::not_found(id)),
        }
    }

    /// Appends a validated record whose id is new to the state, with its indexes and vector.
    pub(crate) fn push_into_state(&mut self, record: SemanticRecord) -> Result<usize> {
        self.state.push(record, &*self.embedder, &mut self.scratch.vector)
    }

    /// Computes the vector of the record at `slot` again.
    pub(crate) fn reembed(&mut self, slot: usize) {
        self.state.embed(slot, &*self.embedder, &mut self.scratch.vector);
    }

    /// Finds the concept `spec` names, or creates it (§4.5, with the seed's deduplication).
    ///
    /// The name's [`name_key`] is looked up in its category: first exactly (the name or an
    /// alias of a concept), then by similarity with the names of blocked candidates (see
    /// [`names`](crate::names); aliases are found exactly only, so merges never chain). A
    /// similar name becomes an alias of the concept, so the next lookup is exact. A name a
    /// program wrote ([`is_structured_name`]:
    /// `tool:navigate`) is looked up exactly only.
    ///
    /// A hit with a source episode on a full concept reinforces it (the episode is recorded,
    /// and the provenance becomes hybrid when the spec's differs); a hit fills an empty
    /// definition. A hit on a compressed concept changes neither its count nor its confidence
    /// (`reinforced` is false, as in §4.5): it keeps no episodes, and confidence its evidence
    /// cannot show would break provenance; it still takes a similar name as an alias. A miss
    /// creates a concept from the spec (reinforcement count 1, confidence 0.6, the spec's
    /// source and trust, the episode if any).
    ///
    /// Errors (nothing changes): a name without a letter or digit ([`Error::EmptyName`]), a
    /// trust outside `[0, 1]`, a journal that refuses the write.
    pub fn find_or_create(&mut self, spec: &ConceptSpec) -> Result<FindOrCreate> {
        let _s = tracing::debug_span!("atl_find_or_create", n_concepts = self.state.len()).entered();
        let trust = Trust::new(spec.trust)?;
        let view = SpecView::of(spec, trust);
        let mut name = std::mem::take(&mut self.scratch.name);
        let mut category = std::mem::take(&mut self.scratch.category);
        name_key_into(&spec.name, &mut name);
        name_key_into(&spec.category, &mut category);
        let now = self.clock.now();
        let resolved = if name.is_empty() {
            Err(Error::EmptyName { field: "name", value: spec.name.clone() })
        } else {
            self.resolve_find(&view, &name, &category, now)
        };
        self.scratch.name = name;
        self.scratch.category = category;
        match resolved? {
            Resolved::Exact(id) => {
                let reinforced = self.commit_hit(self.hit_op(id, None, 0, &view, now))?;
                Ok(FindOrCreate { id, created: false, reinforced, matched: MatchKind::Exact })
            }
            Resolved::Similar { id, alias, scored, score, matched_key } => {
                let _s = tracing::debug_span!("atl_similar_name", %id, scored).entered();
                let reinforced = self.commit_hit(self.hit_op(id, Some(alias), scored, &view, now))?;
                let matched = MatchKind::Similar { score, matched_key };
                Ok(FindOrCreate { id, created: false, reinforced, matched })
            }
            Resolved::New { concept, scored } => {
                let id = concept.meta.id;
                let evicted = self.victims(now);
                self.commit_evicting(Op::Create { concept, at: now, evicted, scored })?;
                Ok(FindOrCreate { id, created: true, reinforced: false, matched: MatchKind::Created })
            }
        }
    }

    /// What `find_or_create` finds for `spec`, whose name and category keys are `name`
    /// (not empty) and `category`, at `now`: nothing changes, except that a new concept takes
    /// the next id.
    pub(crate) fn resolve_find(
        &mut self,
        spec: &SpecView<'_>,
        name: &str,
        category: &str,
        now: Timestamp,
    ) -> Result<Resolved> {
        let key = &mut self.scratch.key;
        if let Some(id) = self.state.names.exact_with(key, category, name) {
            return Ok(Resolved::Exact(id));
        }
        let (hit, scored) = if is_structured_name(spec.name) {
            (None, 0)
        } else {
            self.state.names.similar_with(key, category, name)
        };
        if let Some(hit) = hit {
            let alias = spec.name.trim().to_owned();
            return Ok(Resolved::Similar {
                id: hit.id,
                alias,
                scored: scored as u64,
                score: hit.score,
                matched_key: hit.key,
            });
        }
        let id = self.ids.next_id(now);
        let mut concept = Concept::new(id, spec.name, spec.category, now)?
            .with_definition(spec.definition)
            .with_provenance(spec.provenance);
        concept.meta.source = spec.source.clone();
        concept.meta.trust = spec.trust;
        concept.memory_refs = MemoryRefs::with_cap(self.config.max_refs_per_layer);
        concept.source_episode_ids.extend(spec.source_episode);
        concept.validate()?;
        Ok(Resolved::New { concept: Box::new(concept), scored: scored as u64 })
    }

    /// The operation of a hit on concept `id` (by similarity when `alias` is given): what the
    /// concept takes from the spec. Only what applies is carried: a definition the concept
    /// lacks, for a full concept.
    pub(crate) fn hit_op(
        &self,
        id: RecordId,
        alias: Option<String>,
        scored: u64,
        spec: &SpecView<'_>,
        at: Timestamp,
    ) -> Op {
        let definition = self
            .concept(id)
            .filter(|c| c.definition.trim().is_empty() && !spec.definition.trim().is_empty())
            .map(|_| spec.definition.to_owned());
        Op::Hit {
            id,
            at,
            alias,
            scored,
            episode: spec.source_episode,
            provenance: spec.provenance,
            definition,
        }
    }

    /// Journals and applies a hit; returns whether it reinforced the concept (only a full
    /// concept is).
    fn commit_hit(&mut self, op: Op) -> Result<bool> {
        Ok(matches!(self.commit(op)?, Applied::Flag(true)))
    }

    /// The concepts to evict at `at` to make room for one more (see
    /// [Eviction at capacity](crate::consolidate#eviction-at-capacity)): none below capacity.
    pub(crate) fn victims(&mut self, at: Timestamp) -> Vec<RecordId> {
        let (len, max) = (self.state.len(), self.config.max_concepts);
        if len < max {
            return Vec::new();
        }
        if len == max {
            return self.next_eviction(at).into_iter().collect();
        }
        // Above capacity (a loaded file larger than this layer's capacity): the lowest-ranked
        // `len + 1 - max` of one ranking.
        self.lowest_ranked_n(len + 1 - max, at)
    }

    /// The concept `name` would be found as in `category`, without changing anything: the
    /// exact match or the best similar one.
    pub fn lookup(&self, name: &str, category: &str) -> Option<(RecordId, MatchKind)> {
        let (key, cat) = (name_key(name), name_key(category));
        if key.is_empty() {
            return None;
        }
        if let Some(id) = self.state.names.exact(&cat, &key) {
            return Some((id, MatchKind::Exact));
        }
        self.state
            .names
            .similar(&cat, &key)
            .map(|h| (h.id, MatchKind::Similar { score: h.score, matched_key: h.key }))
    }

    /// Reinforces concept `id` now, crediting `episode` if given (§4.2).
    ///
    /// Unlike a [`find_or_create`](Self::find_or_create) hit, an explicit call reinforces a
    /// compressed concept too (count, confidence and trace), but it keeps no episodes, so
    /// `episode` is not recorded then. Errors: [`maxim_core::Error::NotFound`].
    pub fn reinforce(&mut self, id: RecordId, episode: Option<RecordId>) -> Result<()> {
        self.state.require(id)?;
        let at = self.clock.now();
        self.commit(Op::Reinforce { id, episode, at })?;
        Ok(())
    }

    /// Up to `limit` records matching `filter`, most recently accessed first (ties: newer id
    /// first). The candidates come from the first index the filter names (name, category,
    /// property, modality), else from every record; each is then checked against the whole
    /// filter. No access is recorded.
    pub fn recall_concepts(&self, filter: &ConceptFilter, limit: usize) -> Vec<&SemanticRecord> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        let _s = tracing::debug_span!("atl_recall", limit, n_concepts = self.state.len()).entered();
        if limit == 0 {
            return Vec::new();
        }
        let prepared = Prepared::new(filter);
        let idx = &self.state.index;
        let candidates: Option<&crate::index::IdSet> = if let Some(name) = &prepared.name {
            idx.names.get(name)
        } else if let Some(category) = &prepared.category {
            idx.categories.get(category)
        } else if let Some(key) = prepared.property_key {
            match &filter.property_value {
                Some(v) => idx.property_values.get(&property_value_key(key, v)),
                None => idx.property_keys.get(key),
            }
        } else if let Some(m) = filter.substrate_modality.as_deref() {
            idx.modalities.get(m)
        } else {
            let mut found: Vec<usize> =
                (0..self.state.len()).filter(|&s| self.matches(s, filter, &prepared)).collect();
            return self.most_recent(&mut found, limit);
        };
        let any_index = prepared.name.is_some()
            || prepared.category.is_some()
            || prepared.property_key.is_some()
            || filter.substrate_modality.is_some();
        debug_assert!(any_index);
        let mut found: Vec<usize> = candidates
            .into_iter()
            .flat_map(|set| set.iter())
            .filter_map(|id| self.state.slot(id))
            .filter(|&s| self.matches(s, filter, &prepared))
            .collect();
        self.most_recent(&mut found, limit)
    }

    fn most_recent(&self, slots: &mut [usize], limit: usize) -> Vec<&SemanticRecord> {
        let records = &self.state.records;
        let order = |a: &usize, b: &usize| {
            let (ma, mb) = (records[*a].meta(), records[*b].meta());
            mb.accessed_at.cmp(&ma.accessed_at).then(mb.id.cmp(&ma.id))
        };
        if limit < slots.len() {
            slots.select_nth_unstable_by(limit - 1, order);
        }
        let n = limit.min(slots.len());
        let top = &mut slots[..n];
        top.sort_unstable_by(order);
        top.iter().map(|&s| &records[s]).collect()
    }

    fn matches(&self, slot: usize, filter: &ConceptFilter, prepared: &Prepared<'_>) -> bool {
        let record = &self.state.records[slot];
        let keys = &self.state.keys[slot];
        let concept = record.as_concept();
        if !filter.include_compressed && concept.is_none() {
            return false;
        }
        if prepared.name.as_deref().is_some_and(|n| !keys.has(n)) {
            return false;
        }
        if prepared.category.as_deref().is_some_and(|c| *keys.category != *c) {
            return false;
        }
        if filter.min_confidence.is_some_and(|m| m.is_nan() || record.confidence() < m) {
            return false;
        }
        if let Some(key) = prepared.property_key {
            let Some(prop) = concept.and_then(|c| c.properties.get(key)) else {
                return false;
            };
            if filter.property_value.as_ref().is_some_and(|v| !same_value(prop.current(), v)) {
                return false;
            }
        }
        if let Some(m) = filter.substrate_modality.as_deref()
            && concept.and_then(|c| c.substrate_modality.as_deref()) != Some(m)
        {
            return false;
        }
        if filter.source.as_ref().is_some_and(|s| record.meta().source != *s) {
            return false;
        }
        if let Some(want) = filter.contested
            && self.state.contested.contains(&record.id()) != want
        {
            return false;
        }
        true
    }

    /// The `k` full concepts whose embedded text is most similar to `text` (cosine, best
    /// first, ties by id): "do I already know about this?". Compressed concepts, which
    /// dropped their text, are never returned. No access is recorded.
    pub fn recall_similar(&self, text: &str, k: usize) -> Vec<(RecordId, f64)> {
        self.recall_similar_where(text, k, |_| true)
    }

    /// [`recall_similar`](Self::recall_similar) among the concepts of `category` (compared by key).
    pub fn recall_similar_in(&self, text: &str, k: usize, category: &str) -> Vec<(RecordId, f64)> {
        let cat = name_key(category);
        self.recall_similar_where(text, k, |slot| *self.state.keys[slot].category == *cat)
    }

    fn recall_similar_where(
        &self,
        text: &str,
        k: usize,
        keep: impl Fn(usize) -> bool + Sync,
    ) -> Vec<(RecordId, f64)> {
        let _s =
            tracing::debug_span!("atl_recall_similar", k, n_vectors = self.state.vectors.len()).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        let query = self.embedder.embed(text);
        let filter = |id: RecordId| self.state.slot(id).is_some_and(&keep);
        match self.state.vectors.top_k_filtered(&query, k, filter) {
            Ok(hits) => hits.into_iter().map(|(id, s)| (id, f64::from(s))).collect(),
            Err(err) => {
                tracing::warn!(error = %err, "the embedder's query vector was refused");
                Vec::new()
            }
        }
    }

    /// Records a use of concept `id` (an access, and a reinforcement of its trace under
    /// [`AtlConfig::trace`](crate::AtlConfig::trace)) and returns it.
    /// Errors: [`maxim_core::Error::NotFound`].
    ///
    /// On a directory the access is journaled with the next write (see [`crate::journal`]).
    pub fn get(&mut self, id: RecordId) -> Result<&SemanticRecord> {
        let slot = self.state.require(id)?;
        let now = self.clock.now();
        self.touch_slot(slot, now);
        Ok(&self.state.records[slot])
    }

    /// Records a use of each of `ids` that is held (as [`get`](Self::get) does); returns how
    /// many. On a directory the
    /// accesses are journaled with the next write (see [`crate::journal`]).
    pub fn touch(&mut self, ids: &[RecordId]) -> usize {
        let now = self.clock.now();
        let mut n = 0;
        for &id in ids {
            if let Some(slot) = self.state.slot(id) {
                self.touch_slot(slot, now);
                n += 1;
            }
        }
        n
    }

    /// Sets the definition of concept `id` (and re-embeds it). Errors: unknown or compressed,
    /// a journal that refuses the write.
    pub fn set_definition(&mut self, id: RecordId, definition: &str) -> Result<()> {
        self.full_slot(id, "a definition")?;
        self.commit(Op::SetDefinition { id, definition: definition.to_owned() })?;
        Ok(())
    }

    /// Sets the embedding text of concept `id` (and re-embeds it). Errors: unknown or
    /// compressed, a journal that refuses the write.
    pub fn set_embedding_text(&mut self, id: RecordId, text: &str) -> Result<()> {
        self.full_slot(id, "an embedding text")?;
        self.commit(Op::SetEmbeddingText { id, text: text.to_owned() })?;
        Ok(())
    }

    /// Adds a reference from concept `id` to record `target` of `layer` and records an access
    /// (§4.3); false when it was already there (nothing is journaled then). Errors: unknown or
    /// compressed concept, a journal that refuses the write.
    pub fn add_ref(&mut self, id: RecordId, layer: LayerKind, target: RecordId) -> Result<bool> {
        let slot = self.full_slot(id, "memory references")?;
        if self.state.records[slot].as_concept().is_some_and(|c| c.memory_refs.get(layer).contains(&target)) {
            return Ok(false);
        }
        let at = self.clock.now();
        Ok(matches!(self.commit(Op::AddRef { id, layer, target, at })?, Applied::Flag(true)))
    }

    /// Removes a reference; false when there was none (nothing is journaled then). Errors:
    /// unknown or compressed concept, a journal that refuses the write.
    pub fn remove_ref(&mut self, id: RecordId, layer: LayerKind, target: RecordId) -> Result<bool> {
        let slot = self.full_slot(id, "memory references")?;
        if !self.state.records[slot].as_concept().is_some_and(|c| c.memory_refs.get(layer).contains(&target))
        {
            return Ok(false);
        }
        Ok(matches!(self.commit(Op::RemoveRef { id, layer, target })?, Applied::Flag(true)))
    }

    /// Reinforces the substrate concept `id`, or creates it (§4.5 `activate_substrate_node`): a
    /// concept with that id, named after the first 80 characters of `text`, category
    /// `substrate`, defined by `text`, of `modality`, inferred by the agent. Returns whether it
    /// was created.
    pub fn activate_substrate(
        &mut self,
        id: RecordId,
        text: &str,
        modality: &str,
        embedding_text: &str,
    ) -> Result<bool> {
        if self.state.slot(id).is_some() {
            self.reinforce(id, None)?;
            return Ok(false);
        }
        let now = self.clock.now();
        let name: String = text.trim().chars().take(80).collect();
        let mut c = Concept::new(id, &name, "substrate", now)?
            .with_definition(text)
            .with_provenance(ConceptProvenance::AgentInference)
            .with_embedding_text(embedding_text)
            .with_source(Source::AgentInference, Source::AgentInference.default_trust().get())?;
        let modality = modality.trim();
        c.substrate_modality = (!modality.is_empty()).then(|| modality.to_owned());
        c.memory_refs = MemoryRefs::with_cap(self.config.max_refs_per_layer);
        self.insert(c.into())?;
        Ok(true)
    }

    fn full_slot(&self, id: RecordId, what: &'static str) -> Result<usize> {
        let slot = self.state.require(id)?;
        if self.state.records[slot].is_compressed() {
            return Err(Error::Compressed { id, what });
        }
        Ok(slot)
    }

    // -----------------------------------------------------------------------------------------
    // Properties and contradictions.

    /// Records `source`'s claim (with `trust`) that property `key` of concept `id` is `value`.
    ///
    /// Nothing is overwritten: the same source restating supersedes its own claim; another
    /// source's differing value is kept beside the others, the concept becomes contested, and
    /// the returned [`PropertyWrite`] carries the open [`Contradiction`]. Writing is not an
    /// access.
    ///
    /// Values compare by [`same_value`] (`Int(1)` and
    /// `Float(1.0)` agree).
    ///
    /// Errors (nothing changes): unknown or compressed concept, a key without a letter or
    /// digit, a trust outside `[0, 1]`, a value holding a NaN or an infinity anywhere
    /// ([`maxim_core::Error::OutOfRange`]) or nested too deeply (see
    /// [`check_value`]).
    pub fn set_property(
        &mut self,
        id: RecordId,
        key: &str,
        value: impl Into<Value>,
        source: Source,
        trust: f64,
    ) -> Result<PropertyWrite> {
        let _s = tracing::debug_span!("atl_set_property", %id).entered();
        let trust = Trust::new(trust)?;
        let key = check_key(key)?.to_owned();
        self.full_slot(id, "properties")?;
        let at = self.clock.now();
        let value = value.into();
        check_value(&value)?;
        match self.commit(Op::SetProperty { id, key: key.clone(), value, source, trust, at })? {
            Applied::Write(write) => Ok(write),
            _ => Err(Error::NoSuchClaim { id, key }),
        }
    }

    /// Applies `edit` to the properties of the full concept at `slot`, keeping the indexes
    /// right.
    pub(crate) fn edit_properties<T>(&mut self, slot: usize, edit: impl FnOnce(&mut Concept) -> T) -> T {
        self.state.unindex_content(slot);
        let SemanticRecord::Full(c) = &mut self.state.records[slot] else {
            unreachable!("callers pass full concepts");
        };
        let out = edit(c);
        self.state.index_content(slot);
        out
    }

    /// The current value of property `key` of concept `id`: the claim with the highest trust,
    /// then the newest.
    pub fn property(&self, id: RecordId, key: &str) -> Option<&Value> {
        self.concept(id)?.properties.current(key)
    }

    /// Every claim on property `key` of concept `id`.
    pub fn claims(&self, id: RecordId, key: &str) -> Option<&[Claim]> {
        self.concept(id)?.properties.get(key).map(Property::claims)
    }

    /// True when sources disagree about some property of concept `id`.
    pub fn is_contested(&self, id: RecordId) -> bool {
        self.state.contested.contains(&id)
    }

    /// Every open contradiction, by concept id then key.
    pub fn contradictions(&self) -> Vec<Contradiction> {
        let mut ids: Vec<RecordId> = self.state.contested.iter().copied().collect();
        ids.sort_unstable();
        ids.into_iter().flat_map(|id| self.contradictions_of(id)).collect()
    }

    /// The open contradictions of concept `id`, in the order its properties were first set.
    pub fn contradictions_of(&self, id: RecordId) -> Vec<Contradiction> {
        self.concept(id)
            .map(|c| c.properties.contested().map(|p| Contradiction::of(id, p)).collect())
            .unwrap_or_default()
    }

    /// Resolves property `key` of concept `id` in favour of `value`: the claims of other values
    /// are dropped and returned. Errors: unknown or compressed concept, or no claim of that
    /// value ([`Error::NoSuchClaim`]); nothing changes then.
    pub fn accept_value(&mut self, id: RecordId, key: &str, value: &Value) -> Result<Vec<Claim>> {
        let slot = self.full_slot(id, "properties")?;
        let no_claim = || Error::NoSuchClaim { id, key: key.trim().to_owned() };
        let held = self.state.records[slot].as_concept().and_then(|c| c.properties.get(key));
        if !held.is_some_and(|p| p.claims().iter().any(|c| same_value(&c.value, value))) {
            return Err(no_claim());
        }
        let op = Op::AcceptValue { id, key: key.trim().to_owned(), value: value.clone() };
        match self.commit(op)? {
            Applied::Claims(Some(dropped)) => Ok(dropped),
            _ => Err(no_claim()),
        }
    }

    /// Retracts `source`'s claim on property `key` of concept `id`; returns it. Errors: unknown
    /// or compressed concept, or no such claim.
    pub fn retract_claim(&mut self, id: RecordId, key: &str, source: &Source) -> Result<Claim> {
        let slot = self.full_slot(id, "properties")?;
        let no_claim = || Error::NoSuchClaim { id, key: key.trim().to_owned() };
        let held = self.state.records[slot].as_concept().and_then(|c| c.properties.get(key));
        if !held.is_some_and(|p| p.claims().iter().any(|c| c.source == *source)) {
            return Err(no_claim());
        }
        let op = Op::RetractClaim { id, key: key.trim().to_owned(), source: source.clone() };
        match self.commit(op)? {
            Applied::Claim(Some(claim)) => Ok(claim),
            _ => Err(no_claim()),
        }
    }

    /// Removes property `key` of concept `id` with every claim; returns it. Errors: unknown or
    /// compressed concept, or no such property.
    pub fn remove_property(&mut self, id: RecordId, key: &str) -> Result<Property> {
        let slot = self.full_slot(id, "properties")?;
        let no_claim = || Error::NoSuchClaim { id, key: key.trim().to_owned() };
        if self.state.records[slot].as_concept().is_none_or(|c| c.properties.get(key).is_none()) {
            return Err(no_claim());
        }
        match self.commit(Op::RemoveProperty { id, key: key.trim().to_owned() })? {
            Applied::Property(Some(p)) => Ok(p),
            _ => Err(no_claim()),
        }
    }

    /// Everything from `source` (seed 004: trace and revoke a source): the concepts it is the
    /// source of, and the (concept, key) pairs it made claims on elsewhere, both sorted.
    pub fn from_source(&self, source: &Source) -> (Vec<RecordId>, Vec<(RecordId, String)>) {
        let mut own = Vec::new();
        let mut claims = Vec::new();
        for record in &self.state.records {
            if record.meta().source == *source {
                own.push(record.id());
            } else if let Some(c) = record.as_concept() {
                for p in c.properties.iter() {
                    if p.claims().iter().any(|cl| cl.source == *source) {
                        claims.push((c.meta.id, p.key().to_owned()));
                    }
                }
            }
        }
        own.sort_unstable();
        claims.sort_unstable();
        (own, claims)
    }

    /// Removes everything from `source`: the concepts it is the source of (deletion callbacks
    /// run) and its claims on the concepts that stay.
    ///
    /// On a directory a journal that refuses the write is logged and counted
    /// (`journal_failures` in the stats) and nothing is removed (an empty report);
    /// [`try_purge_source`](Self::try_purge_source) returns the error instead.
    pub fn purge_source(&mut self, source: &Source) -> SourcePurge {
        match self.try_purge_source(source) {
            Ok(purge) => purge,
            Err(e) => {
                self.journal_failures += 1;
                tracing::warn!(%source, error = %e, "source not purged: the journal refused the write");
                SourcePurge::default()
            }
        }
    }

    /// [`purge_source`](Self::purge_source), returning the journal's error when it refuses
    /// the write (nothing changes then).
    pub fn try_purge_source(&mut self, source: &Source) -> Result<SourcePurge> {
        let _s = tracing::debug_span!("atl_purge_source").entered();
        match self.commit(Op::PurgeSource { source: source.clone() })? {
            Applied::Purge(purge) => Ok(purge),
            _ => Ok(SourcePurge::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concept::MAX_SOURCE_EPISODES;
    use crate::state::Counters;
    use maxim_core::{ManualClock, MemoryLayer, days};

    fn layer() -> (ManualClock, Atl) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let atl = Atl::builder().clock(clock.shared()).id_seed(3).build().unwrap();
        (clock, atl)
    }

    #[test]
    fn the_layer_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Atl>();
        assert_send_sync::<SemanticRecord>();
    }

    #[test]
    fn keys_and_slots_stay_aligned_through_removals() {
        let (_clock, mut atl) = layer();
        let ids: Vec<RecordId> =
            (0..20).map(|j| atl.find_or_create(&spec(&format!("thing {j}"), "object")).unwrap().id).collect();
        for &id in ids.iter().step_by(3) {
            atl.remove_concept(id).unwrap();
        }
        for (slot, record) in atl.state.records.iter().enumerate() {
            assert_eq!(atl.state.slot(record.id()), Some(slot));
            assert_eq!(*atl.state.keys[slot].name, name_key(record.name()));
            assert!(atl.state.vectors.contains(record.id()));
        }
        assert_eq!(atl.state.vectors.len(), atl.len());
        assert_eq!(atl.state.graph.node_count(), atl.len());
    }

    #[test]
    fn similar_names_become_aliases_and_then_hit_exactly() {
        let (_clock, mut atl) = layer();
        let mug = atl.find_or_create(&spec("coffee mug", "object")).unwrap().id;
        let typo = atl.find_or_create(&spec("coffe mug", "object")).unwrap();
        assert!(matches!(typo.matched, MatchKind::Similar { .. }));
        assert_eq!(atl.concept(mug).unwrap().aliases, ["coffe mug"]);
        let again = atl.find_or_create(&spec("Coffe_Mugs", "object")).unwrap();
        assert_eq!((again.id, again.matched), (mug, MatchKind::Exact));
        assert_eq!(atl.state.counters.similarity_merges, 1);
        assert_eq!(atl.state.counters.exact_hits, 1);
        assert_eq!(atl.recall_concepts(&ConceptFilter::new().name("coffe mug"), 5).len(), 1);
    }

    #[test]
    fn stored_concepts_keep_their_newest_source_episodes() {
        let (_clock, mut atl) = layer();
        let mut c = atl.new_concept("mug", "object").unwrap();
        c.source_episode_ids = (0..300).map(RecordId::from_u128).collect();
        let id = atl.insert(c.into()).unwrap();
        let kept = &atl.concept(id).unwrap().source_episode_ids;
        assert_eq!(kept.len(), MAX_SOURCE_EPISODES);
        assert_eq!((kept[0], kept[199]), (RecordId::from_u128(100), RecordId::from_u128(299)));
    }

    /// The bound of a concept's source episodes saves the scan only for a newer episode:
    /// older ones, repeats, a stored concept's own list and an episode forgotten and given
    /// again are each kept once, in the order they came.
    #[test]
    fn source_episodes_stay_unique_whatever_order_they_come_in() {
        let (_clock, mut atl) = layer();
        let ep = RecordId::from_u128;
        let episodes = |atl: &Atl, id| atl.concept(id).unwrap().source_episode_ids.clone();
        let mut s = spec("mug", "object");
        s.source_episode = Some(ep(50));
        let mug = atl.find_or_create(&s).unwrap().id;
        for e in [60, 40, 60, 50, 70, 40, 70] {
            s.source_episode = Some(ep(e));
            atl.find_or_create(&s).unwrap();
            atl.reinforce(mug, Some(ep(e))).unwrap();
        }
        assert_eq!(episodes(&atl, mug), [50, 60, 40, 70].map(ep));
        assert!(atl.forget_episode(mug, ep(70)).unwrap());
        atl.reinforce(mug, Some(ep(70))).unwrap();
        atl.reinforce(mug, Some(ep(70))).unwrap();
        assert_eq!(episodes(&atl, mug), [50, 60, 40, 70].map(ep));
        let mut c = atl.new_concept("cup", "object").unwrap();
        c.source_episode_ids = vec![ep(90), ep(80)];
        let cup = atl.insert(c.into()).unwrap();
        for e in [85, 90, 95, 80, 95] {
            atl.reinforce(cup, Some(ep(e))).unwrap();
        }
        assert_eq!(episodes(&atl, cup), [90, 80, 85, 95].map(ep));
        assert!(atl.concept(cup).unwrap().validate().is_ok());
    }

    #[test]
    fn counters_are_read_and_written_by_the_same_names() {
        let mut counters = Counters::default();
        let names: Vec<&str> = counters.to_pairs(0).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), 14);
        assert_eq!(names.last(), Some(&"queries"));
        for (i, name) in names.iter().enumerate() {
            counters.set(name, i as u64 + 1);
        }
        counters.set("no_such_counter", 99);
        let pairs = counters.to_pairs(14);
        assert!(pairs.iter().enumerate().all(|(i, &(_, v))| v == i as u64 + 1), "{pairs:?}");
        assert_eq!((counters.concepts_stored, counters.contradictions_reported), (1, 13));
    }

    #[test]
    fn eviction_keeps_the_store_at_capacity() {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let config = AtlConfig { max_concepts: 3, ..AtlConfig::default() };
        let mut atl = Atl::builder().clock(clock.shared()).config(config).id_seed(1).build().unwrap();
        let first = atl.find_or_create(&spec("first", "x")).unwrap().id;
        clock.advance(days(10));
        let ids: Vec<RecordId> = ["second", "third", "fourth"]
            .iter()
            .map(|n| atl.find_or_create(&spec(n, "x")).unwrap().id)
            .collect();
        assert_eq!(atl.len(), 3);
        assert!(atl.record(first).is_none(), "the stalest concept went");
        assert!(ids.iter().all(|&id| atl.record(id).is_some()));
        assert_eq!(atl.state.counters.evictions, 1);
    }
}
