//! Concept records: [`Concept`] (the full form), [`CompressedSemantic`] (what consolidation
//! leaves), [`SemanticRecord`] (either), the per-layer [`MemoryRefs`], and the
//! [`confidence`](confidence_for) rule.
//!
//! A concept carries every field of `spec/maxim-reference.md` §4.1 and §4.3: name, definition,
//! category, properties (as sourced claims, see [`properties`](crate::properties)),
//! provenance, contributing episodes, source document, confidence, reinforcement count,
//! embedding text, substrate modality, metadata, and references to records of other layers
//! (at most [`MAX_REFS_PER_LAYER`] per layer, the oldest evicted first). It also keeps the
//! aliases under which deduplication found it. Its [`RecordMeta`] has a semantic trace.
//!
//! ```
//! use atl::{Concept, confidence_for};
//! use maxim_core::{LayerKind, RecordId, Timestamp};
//!
//! let now = Timestamp::from_secs(1_700_000_000);
//! let mut mug = Concept::new(RecordId::from_u128(1), "Coffee Mug", "object", now)?;
//! assert_eq!(mug.reinforcement_count, 1);
//! assert_eq!(mug.confidence, confidence_for(1)); // 0.6
//! mug.reinforce(Some(RecordId::from_u128(9)), now);
//! assert_eq!(mug.reinforcement_count, 2);
//! assert_eq!(mug.source_episode_ids, [RecordId::from_u128(9)]);
//! assert!(mug.keywords().contains("coffee mug"));
//! assert!(mug.add_ref(LayerKind::Hippocampus, RecordId::from_u128(9), now));
//! assert_eq!(mug.memory_refs.count(None), 1);
//! # Ok::<(), atl::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::names::name_key;
use maxim_core::trace::TraceParams;
use maxim_core::value::Map;
use maxim_core::{
    ConceptProvenance, LayerKind, MemoryRecord, RecordId, RecordMeta, Source, Timestamp, TraceKind,
    check_unit,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::properties::Properties;

/// The default cap of [`MemoryRefs`] per layer (the original's `MAX_REFS_PER_LAYER`).
pub const MAX_REFS_PER_LAYER: usize = 200;

/// The most contributing episodes a concept remembers in
/// [`source_episode_ids`](Concept::source_episode_ids): the newest, the oldest forgotten first,
/// as [`MemoryRefs`] keeps references (the same cap).
pub const MAX_SOURCE_EPISODES: usize = MAX_REFS_PER_LAYER;

/// The most aliases a concept keeps; names merged beyond it still find the concept through
/// the similarity check, they are just not remembered as aliases.
pub const MAX_ALIASES: usize = 32;

/// The highest confidence reinforcement reaches.
pub const MAX_CONFIDENCE: f64 = 0.99;

/// The confidence of a concept reinforced `reinforcement_count` times, after the seed:
/// `min(0.99, 0.5 + 0.1 * sqrt(n))`.
///
/// The seed's rule is used for every `n`, so a new concept (`n = 1`) has 0.6. (The original
/// halved the slope below `n = 3` and gave a new concept 0.5; see `docs/decisions.md`.)
///
/// ```
/// use atl::confidence_for;
/// assert_eq!(confidence_for(1), 0.6);
/// assert!((confidence_for(5) - 0.7236).abs() < 1e-4);
/// assert!((confidence_for(11) - 0.8317).abs() < 1e-4);
/// assert!(confidence_for(24) < 0.99);
/// assert_eq!(confidence_for(25), 0.99);
/// ```
pub fn confidence_for(reinforcement_count: u32) -> f64 {
    (0.5 + 0.1 * f64::from(reinforcement_count).sqrt()).min(MAX_CONFIDENCE)
}

/// The provenance a concept gets when a second one contributes: the same when they agree,
/// [`ConceptProvenance::Hybrid`] when they differ.
pub fn merge_provenance(current: ConceptProvenance, contributing: ConceptProvenance) -> ConceptProvenance {
    if current == contributing { current } else { ConceptProvenance::Hybrid }
}

/// The [`Source`] that matches a provenance when the caller names none.
pub fn default_source(provenance: ConceptProvenance) -> Source {
    match provenance {
        ConceptProvenance::EpisodicConsolidation | ConceptProvenance::Hybrid => Source::Episodic,
        ConceptProvenance::AgentInference => Source::AgentInference,
        ConceptProvenance::DirectIngestion => Source::DirectIngestion,
    }
}

/// References from a concept to records of other layers: per layer, an insertion-ordered set of
/// ids of at most [`cap`](Self::cap) entries, the oldest evicted first (§4.3).
///
/// ```
/// use atl::MemoryRefs;
/// use maxim_core::{LayerKind, RecordId};
/// let id = RecordId::from_u128;
/// let mut refs = MemoryRefs::with_cap(3);
/// for n in 1..=5 {
///     refs.add(LayerKind::Hippocampus, id(n));
/// }
/// assert_eq!(refs.get(LayerKind::Hippocampus), [id(3), id(4), id(5)]);
/// assert!(!refs.add(LayerKind::Hippocampus, id(4))); // already there
/// assert!(!refs.remove(LayerKind::AngularGyrus, id(4))); // harmless
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRefs {
    cap: usize,
    refs: BTreeMap<LayerKind, RefList>,
}

impl Default for MemoryRefs {
    fn default() -> Self {
        Self::with_cap(MAX_REFS_PER_LAYER)
    }
}

impl MemoryRefs {
    /// No reference, at most `cap` per layer (a cap of 0 is raised to 1).
    pub fn with_cap(cap: usize) -> Self {
        Self { cap: cap.max(1), refs: BTreeMap::new() }
    }

    /// The most references kept per layer.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Adds a reference to record `id` of `layer`; false when it was already there. At the cap
    /// the oldest reference of that layer is evicted.
    ///
    /// An id greater than every id the layer's list has held is known to be new without a
    /// scan (record ids are time-ordered, so the newest episode's always is), and evicting
    /// the oldest moves the list only once every quarter of the cap.
    pub fn add(&mut self, layer: LayerKind, id: RecordId) -> bool {
        let cap = self.cap;
        self.refs.entry(layer).or_default().add(id, cap)
    }

    /// Removes the reference; false when there was none.
    pub fn remove(&mut self, layer: LayerKind, id: RecordId) -> bool {
        let Some(list) = self.refs.get_mut(&layer) else {
            return false;
        };
        if !list.remove(id) {
            return false;
        }
        if list.ids().is_empty() {
            self.refs.remove(&layer);
        }
        true
    }

    /// The references to `layer`, oldest first.
    pub fn get(&self, layer: LayerKind) -> &[RecordId] {
        self.refs.get(&layer).map_or(&[], RefList::ids)
    }

    /// The number of references to `layer`, or to every layer when `None`.
    pub fn count(&self, layer: Option<LayerKind>) -> usize {
        match layer {
            Some(l) => self.get(l).len(),
            None => self.refs.values().map(|l| l.ids().len()).sum(),
        }
    }

    /// The layers referenced, with their references (oldest first); empty layers are absent.
    pub fn iter(&self) -> impl Iterator<Item = (LayerKind, &[RecordId])> {
        self.refs.iter().map(|(&l, v)| (l, v.ids()))
    }

    fn validate(&self) -> std::result::Result<(), String> {
        for (layer, list) in self.iter() {
            if list.is_empty() || list.len() > self.cap {
                return Err(format!("{} references to {layer} with a cap of {}", list.len(), self.cap));
            }
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(format!("a reference to {layer} appears twice"));
            }
        }
        Ok(())
    }
}

/// One layer's references: the live ones are `ids[start..]`, oldest first; the `start`
/// entries before them are evicted ones not yet moved out (at most a quarter of the cap, so
/// an eviction moves the list once every quarter cap). `bound` is at least every id the list
/// holds (it is not lowered by removals), so a larger id needs no membership scan.
#[derive(Clone, Default)]
struct RefList {
    ids: Vec<RecordId>,
    start: usize,
    bound: Option<RecordId>,
}

impl RefList {
    fn of(ids: Vec<RecordId>) -> Self {
        let bound = ids.iter().max().copied();
        Self { ids, start: 0, bound }
    }

    fn ids(&self) -> &[RecordId] {
        &self.ids[self.start..]
    }

    fn add(&mut self, id: RecordId, cap: usize) -> bool {
        if self.bound.is_some_and(|b| id <= b) && self.ids().contains(&id) {
            return false;
        }
        self.bound = self.bound.max(Some(id));
        if self.ids.len() - self.start >= cap {
            self.start += 1;
            if self.start > cap / 4 {
                self.ids.drain(..self.start);
                self.start = 0;
            }
        }
        self.ids.push(id);
        true
    }

    fn remove(&mut self, id: RecordId) -> bool {
        let Some(pos) = self.ids().iter().position(|&x| x == id) else {
            return false;
        };
        self.ids.remove(self.start + pos);
        true
    }
}

impl PartialEq for RefList {
    fn eq(&self, other: &Self) -> bool {
        self.ids() == other.ids()
    }
}

impl Eq for RefList {}

impl std::fmt::Debug for RefList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

// A list reads and writes as the plain vector of its live ids, as it did when it was one.
impl Serialize for RefList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.ids().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RefList {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Vec::<RecordId>::deserialize(deserializer).map(Self::of)
    }
}

/// A concept in full: what a thing means (§4.1, §4.3). The original's `SemanticMemory` and
/// `Concept` are one type here (a plain semantic memory is a concept without references).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concept {
    /// Id, timestamps, access tracking, source, trust and trace (kind semantic).
    pub meta: RecordMeta,
    /// The name, as first given ("coffee mug", "navigate_tool_reliability").
    pub name: String,
    /// A natural-language definition.
    pub definition: String,
    /// The category (object, person, action, location, goal, fact, causal_pattern, ...).
    pub category: String,
    /// Properties, as claims of sources.
    pub properties: Properties,
    /// How the concept was formed.
    pub provenance: ConceptProvenance,
    /// Episodes that contributed, oldest first, each once: the newest
    /// [`MAX_SOURCE_EPISODES`] (the store keeps the newest of a longer list it is given).
    pub source_episode_ids: Vec<RecordId>,
    /// The document it was ingested from, if any.
    pub source_document: Option<String>,
    /// Confidence in `[0, 1]`; see [`confidence_for`].
    pub confidence: f64,
    /// How many times the concept was confirmed (1 when created).
    pub reinforcement_count: u32,
    /// The text embedded for similarity search; when empty, the name and the definition are.
    pub embedding_text: String,
    /// The modality of a substrate concept (`text`, `vision`), if any.
    pub substrate_modality: Option<String>,
    /// Free-form metadata.
    pub metadata: Map,
    /// Other names deduplication merged into this concept, in the order they were met (at most
    /// [`MAX_ALIASES`]).
    pub aliases: Vec<String>,
    /// References to records of other layers.
    pub memory_refs: MemoryRefs,
}

impl Concept {
    /// A new concept named `name` in `category`, made `now`, formed by episodic consolidation,
    /// from the [`Source::Episodic`] source with its default trust, reinforced once
    /// (confidence 0.6).
    ///
    /// Errors: a name without a letter or digit ([`Error::EmptyName`]).
    pub fn new(id: RecordId, name: &str, category: &str, now: Timestamp) -> Result<Self> {
        check_name("name", name)?;
        let source = Source::Episodic;
        let trust = source.default_trust().get();
        let meta = RecordMeta::new(id, now, source, trust, TraceKind::Semantic)?;
        Ok(Self {
            meta,
            name: name.trim().to_owned(),
            definition: String::new(),
            category: category.trim().to_owned(),
            properties: Properties::new(),
            provenance: ConceptProvenance::EpisodicConsolidation,
            source_episode_ids: Vec::new(),
            source_document: None,
            confidence: confidence_for(1),
            reinforcement_count: 1,
            embedding_text: String::new(),
            substrate_modality: None,
            metadata: Map::new(),
            aliases: Vec::new(),
            memory_refs: MemoryRefs::default(),
        })
    }

    /// The same concept with `definition`.
    pub fn with_definition(mut self, definition: impl Into<String>) -> Self {
        self.definition = definition.into();
        self
    }

    /// The same concept with `provenance`.
    pub fn with_provenance(mut self, provenance: ConceptProvenance) -> Self {
        self.provenance = provenance;
        self
    }

    /// The same concept from `source` with `trust`. Errors: a trust outside `[0, 1]`.
    pub fn with_source(mut self, source: Source, trust: f64) -> Result<Self> {
        self.meta.trust = maxim_core::Trust::new(trust)?;
        self.meta.source = source;
        Ok(self)
    }

    /// The same concept with `text` as its embedding text.
    pub fn with_embedding_text(mut self, text: impl Into<String>) -> Self {
        self.embedding_text = text.into();
        self
    }

    /// The concept's id.
    pub fn id(&self) -> RecordId {
        self.meta.id
    }

    /// The lowercase name and category (the original's keywords).
    pub fn keywords(&self) -> BTreeSet<String> {
        keywords(&self.name, &self.category)
    }

    /// The text to embed: the embedding text, or the name and the definition when it is empty.
    pub fn text_for_embedding(&self) -> String {
        if !self.embedding_text.trim().is_empty() {
            return self.embedding_text.clone();
        }
        if self.definition.trim().is_empty() {
            return self.name.clone();
        }
        format!("{}. {}", self.name, self.definition)
    }

    /// One more confirmation at `now`: the count goes up, `episode` (if not among the episodes
    /// remembered) is recorded, forgetting the oldest beyond [`MAX_SOURCE_EPISODES`], the
    /// confidence becomes `max(confidence, confidence_for(count))`, and the record is accessed
    /// and its trace reinforced. The membership check scans at most [`MAX_SOURCE_EPISODES`] ids.
    pub fn reinforce(&mut self, episode: Option<RecordId>, now: Timestamp) {
        self.reinforce_with(episode, now, &TraceParams::default());
    }

    /// [`reinforce`](Self::reinforce), with the trace reinforced under `params` (the layer's
    /// [`AtlConfig::trace`](crate::AtlConfig::trace): 0.3 instead of 0.1 in the imprint window).
    pub fn reinforce_with(&mut self, episode: Option<RecordId>, now: Timestamp, params: &TraceParams) {
        self.reinforce_crediting(episode, false, now, params);
    }

    /// [`reinforce_with`](Self::reinforce_with); `known_new` says `episode` is not among the
    /// source episodes (the layer knows it is greater than every one of them), which saves
    /// the membership scan.
    pub(crate) fn reinforce_crediting(
        &mut self,
        episode: Option<RecordId>,
        known_new: bool,
        now: Timestamp,
        params: &TraceParams,
    ) {
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
        if let Some(ep) = episode
            && (known_new || !self.source_episode_ids.contains(&ep))
        {
            self.source_episode_ids.push(ep);
            self.keep_newest_episodes();
        }
        self.confidence = self.confidence.max(confidence_for(self.reinforcement_count));
        self.meta.touch(now);
        // A firmware trace cannot be reinforced; the concept's own count still moves.
        let _ = self.meta.trace.reinforce(now, params);
    }

    /// Forgets the oldest source episodes beyond [`MAX_SOURCE_EPISODES`].
    pub(crate) fn keep_newest_episodes(&mut self) {
        let n = self.source_episode_ids.len();
        if n > MAX_SOURCE_EPISODES {
            self.source_episode_ids.drain(..n - MAX_SOURCE_EPISODES);
        }
    }

    /// Adds a reference to record `id` of `layer` and records an access (§4.3); false (and no
    /// access) when the reference was already there.
    pub fn add_ref(&mut self, layer: LayerKind, id: RecordId, now: Timestamp) -> bool {
        let added = self.memory_refs.add(layer, id);
        if added {
            self.meta.touch(now);
        }
        added
    }

    /// Checks every field: a name with a letter or digit, a confidence in `[0, 1]`, aliases
    /// with a letter or digit, well-formed properties and references.
    pub fn validate(&self) -> Result<()> {
        check_name("name", &self.name)?;
        check_unit("confidence", self.confidence)?;
        for alias in &self.aliases {
            check_name("alias", alias)?;
        }
        let bad = |reason: String| Error::Core(maxim_core::Error::invalid("concept", reason));
        self.properties.validate().map_err(bad)?;
        self.memory_refs.validate().map_err(bad)?;
        if self.aliases.len() > MAX_ALIASES {
            return Err(bad(format!("{} aliases, at most {MAX_ALIASES}", self.aliases.len())));
        }
        // One check for what an insert takes and a load reads: nothing is stored that
        // cannot be read back.
        self.metadata.check("metadata")?;
        Ok(())
    }
}

/// What consolidation keeps of a concept that is rarely used (§4.4): its identity, names and
/// standing, without definition, properties, episodes, embedding text or references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressedSemantic {
    /// Id, timestamps, access tracking, source, trust and trace.
    pub meta: RecordMeta,
    /// The name.
    pub name: String,
    /// The category.
    pub category: String,
    /// The aliases (kept so that deduplication still finds the concept).
    pub aliases: Vec<String>,
    /// Confidence in `[0, 1]`.
    pub confidence: f64,
    /// How many times the concept was confirmed.
    pub reinforcement_count: u32,
    /// How the concept was formed.
    pub provenance: ConceptProvenance,
    /// Outgoing relationship edges when it was compressed.
    pub edge_count: u32,
}

impl CompressedSemantic {
    /// The compressed form of `concept`, which had `edge_count` outgoing edges.
    pub fn from_concept(concept: Concept, edge_count: u32) -> Self {
        Self {
            meta: concept.meta,
            name: concept.name,
            category: concept.category,
            aliases: concept.aliases,
            confidence: concept.confidence,
            reinforcement_count: concept.reinforcement_count,
            provenance: concept.provenance,
            edge_count,
        }
    }

    /// The lowercase name and category.
    pub fn keywords(&self) -> BTreeSet<String> {
        keywords(&self.name, &self.category)
    }

    /// One more confirmation at `now`: as [`Concept::reinforce`], without the episode (a
    /// compressed concept keeps none).
    pub fn reinforce(&mut self, now: Timestamp) {
        self.reinforce_with(now, &TraceParams::default());
    }

    /// [`reinforce`](Self::reinforce), with the trace reinforced under `params`.
    pub fn reinforce_with(&mut self, now: Timestamp, params: &TraceParams) {
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
        self.confidence = self.confidence.max(confidence_for(self.reinforcement_count));
        self.meta.touch(now);
        let _ = self.meta.trace.reinforce(now, params);
    }

    fn validate(&self) -> Result<()> {
        check_name("name", &self.name)?;
        check_unit("confidence", self.confidence)?;
        for alias in &self.aliases {
            check_name("alias", alias)?;
        }
        Ok(())
    }
}

/// A record of the semantic layer: a full concept or its compressed form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SemanticRecord {
    /// A concept in full.
    Full(Box<Concept>),
    /// A concept compressed by consolidation.
    Compressed(Box<CompressedSemantic>),
}

impl From<Concept> for SemanticRecord {
    fn from(c: Concept) -> Self {
        Self::Full(Box::new(c))
    }
}

impl From<CompressedSemantic> for SemanticRecord {
    fn from(c: CompressedSemantic) -> Self {
        Self::Compressed(Box::new(c))
    }
}

impl SemanticRecord {
    /// The concept, when the record is full.
    pub fn as_concept(&self) -> Option<&Concept> {
        match self {
            Self::Full(c) => Some(c),
            Self::Compressed(_) => None,
        }
    }

    /// The compressed form, when the record is compressed.
    pub fn as_compressed(&self) -> Option<&CompressedSemantic> {
        match self {
            Self::Full(_) => None,
            Self::Compressed(c) => Some(&**c),
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        match self {
            Self::Full(c) => &c.name,
            Self::Compressed(c) => &c.name,
        }
    }

    /// The category.
    pub fn category(&self) -> &str {
        match self {
            Self::Full(c) => &c.category,
            Self::Compressed(c) => &c.category,
        }
    }

    /// The aliases.
    pub fn aliases(&self) -> &[String] {
        match self {
            Self::Full(c) => &c.aliases,
            Self::Compressed(c) => &c.aliases,
        }
    }

    /// The confidence.
    pub fn confidence(&self) -> f64 {
        match self {
            Self::Full(c) => c.confidence,
            Self::Compressed(c) => c.confidence,
        }
    }

    /// The reinforcement count.
    pub fn reinforcement_count(&self) -> u32 {
        match self {
            Self::Full(c) => c.reinforcement_count,
            Self::Compressed(c) => c.reinforcement_count,
        }
    }

    /// The provenance.
    pub fn provenance(&self) -> ConceptProvenance {
        match self {
            Self::Full(c) => c.provenance,
            Self::Compressed(c) => c.provenance,
        }
    }

    /// The lowercase name and category.
    pub fn keywords(&self) -> BTreeSet<String> {
        keywords(self.name(), self.category())
    }

    /// Checks every field (see [`Concept::validate`]).
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Full(c) => c.validate(),
            Self::Compressed(c) => c.validate(),
        }
    }

    /// Drops the record, taking its metadata apart without recursion (for a refused record,
    /// whose values may nest arbitrarily deep).
    pub(crate) fn dispose_values(self) {
        if let Self::Full(c) = self {
            maxim_core::value::dispose(maxim_core::value::Value::Map(c.metadata));
        }
    }

    pub(crate) fn aliases_mut(&mut self) -> &mut Vec<String> {
        match self {
            Self::Full(c) => &mut c.aliases,
            Self::Compressed(c) => &mut c.aliases,
        }
    }

    pub(crate) fn reinforce(&mut self, episode: Option<RecordId>, now: Timestamp, params: &TraceParams) {
        match self {
            Self::Full(c) => c.reinforce_with(episode, now, params),
            Self::Compressed(c) => c.reinforce_with(now, params),
        }
    }

    /// A read that counts as use at `now`: an access ([`RecordMeta::touch`](maxim_core::RecordMeta::touch))
    /// and a reinforcement of the trace under `params`. Never allocates.
    pub(crate) fn use_at(&mut self, now: Timestamp, params: &TraceParams) {
        let meta = self.meta_mut();
        meta.touch(now);
        // A firmware trace refuses the reinforcement; the access still counts.
        let _ = meta.trace.reinforce(now, params);
    }
}

impl MemoryRecord for SemanticRecord {
    fn meta(&self) -> &RecordMeta {
        match self {
            Self::Full(c) => &c.meta,
            Self::Compressed(c) => &c.meta,
        }
    }

    fn meta_mut(&mut self) -> &mut RecordMeta {
        match self {
            Self::Full(c) => &mut c.meta,
            Self::Compressed(c) => &mut c.meta,
        }
    }

    fn is_compressed(&self) -> bool {
        matches!(self, Self::Compressed(_))
    }

    /// `name (category)`, or the name alone when the category is empty.
    fn describe(&self) -> String {
        if self.category().is_empty() {
            self.name().to_owned()
        } else {
            format!("{} ({})", self.name(), self.category())
        }
    }
}

/// Checks that `value` holds a letter or a digit.
pub(crate) fn check_name(field: &'static str, value: &str) -> Result<()> {
    if name_key(value).is_empty() {
        return Err(Error::EmptyName { field, value: value.to_owned() });
    }
    Ok(())
}

fn keywords(name: &str, category: &str) -> BTreeSet<String> {
    [name, category].into_iter().filter(|s| !s.is_empty()).map(str::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        Timestamp::from_secs(1_700_000_000)
    }

    fn id(n: u128) -> RecordId {
        RecordId::from_u128(n)
    }

    #[test]
    fn confidence_follows_the_seed_formula() {
        for (n, expected) in [(1, 0.6), (4, 0.7), (9, 0.8), (16, 0.9)] {
            assert!((confidence_for(n) - expected).abs() < 1e-12, "n = {n}");
        }
        assert!((confidence_for(2) - 0.641_421_356).abs() < 1e-9);
        assert!((confidence_for(5) - 0.7236).abs() < 5e-5, "[run] n=5");
        assert!((confidence_for(11) - 0.8317).abs() < 5e-5, "[run] n=11");
        assert!((confidence_for(24) - 0.989_897_948_556_635_6).abs() < 1e-12);
        assert_eq!(confidence_for(25), 0.99);
        assert_eq!(confidence_for(u32::MAX), 0.99);
        assert!((1..200).all(|n| confidence_for(n) <= confidence_for(n + 1)));
    }

    #[test]
    fn reinforcement_records_episodes_once_and_accesses() {
        let mut c = Concept::new(id(1), "mug", "object", now()).unwrap();
        assert_eq!(c.meta.access_count, 1);
        assert_eq!(c.meta.trace.kind(), TraceKind::Semantic);
        let later = now() + std::time::Duration::from_secs(60);
        c.reinforce(Some(id(7)), later);
        c.reinforce(Some(id(7)), later);
        c.reinforce(None, later);
        assert_eq!(c.reinforcement_count, 4);
        assert_eq!(c.source_episode_ids, [id(7)]);
        assert_eq!(c.confidence, 0.7);
        assert_eq!((c.meta.access_count, c.meta.accessed_at), (4, later));
        assert_eq!(c.meta.trace.reinforcement_count(), 3);
    }

    #[test]
    fn source_episodes_keep_the_newest_two_hundred() {
        let mut c = Concept::new(id(1), "mug", "object", now()).unwrap();
        for n in 0..500 {
            c.reinforce(Some(id(1000 + n)), now());
        }
        assert_eq!(c.reinforcement_count, 501, "every confirmation counts");
        let newest: Vec<RecordId> = (300..500).map(|n| id(1000 + n)).collect();
        assert_eq!(c.source_episode_ids, newest);
        c.reinforce(Some(id(1400)), now());
        assert_eq!(c.source_episode_ids, newest, "a remembered episode keeps its place");
        c.reinforce(Some(id(1000)), now());
        assert_eq!(c.source_episode_ids.len(), MAX_SOURCE_EPISODES);
        assert_eq!((c.source_episode_ids[0], c.source_episode_ids[199]), (id(1301), id(1000)));
    }

    #[test]
    fn reinforcement_never_lowers_a_given_confidence() {
        let mut c = Concept::new(id(1), "mug", "object", now()).unwrap();
        c.confidence = 0.95;
        c.reinforce(None, now());
        assert_eq!(c.confidence, 0.95);
    }

    #[test]
    fn refs_follow_the_spec_tests() {
        let mut c = Concept::new(id(1), "mug", "object", now()).unwrap();
        assert_eq!(c.memory_refs.count(None), 0, "a new concept has no refs");
        let before = c.meta.access_count;
        assert!(c.add_ref(LayerKind::Hippocampus, id(10), now()));
        assert!(!c.add_ref(LayerKind::Hippocampus, id(10), now()), "duplicates are ignored");
        assert!(c.add_ref(LayerKind::AngularGyrus, id(11), now()));
        assert_eq!(c.meta.access_count, before + 2, "add_ref raises access_count");
        assert_eq!(c.memory_refs.count(Some(LayerKind::Hippocampus)), 1);
        assert_eq!(c.memory_refs.count(None), 2);
        assert!(!c.memory_refs.remove(LayerKind::Cerebellum, id(10)), "removing a missing ref is harmless");
        assert!(c.memory_refs.remove(LayerKind::AngularGyrus, id(11)));
        assert_eq!(c.memory_refs.count(Some(LayerKind::AngularGyrus)), 0);

        let mut five = MemoryRefs::with_cap(5);
        (0..10).for_each(|n| {
            five.add(LayerKind::Hippocampus, id(n));
        });
        assert_eq!(five.count(None), 5);
        let mut three = MemoryRefs::with_cap(3);
        for n in [1, 2, 3, 4] {
            three.add(LayerKind::Hippocampus, id(n));
        }
        assert!(!three.get(LayerKind::Hippocampus).contains(&id(1)), "A is evicted");
        for n in [1, 2, 3] {
            three.add(LayerKind::AngularGyrus, id(n));
        }
        assert_eq!(three.count(Some(LayerKind::AngularGyrus)), 3, "caps per layer are independent");
        assert_eq!(three.count(Some(LayerKind::Hippocampus)), 3);
        assert_eq!(MemoryRefs::default().cap(), MAX_REFS_PER_LAYER);
    }

    /// The plain-vector model of one layer's references that `MemoryRefs` replaced: a scan
    /// for membership, the oldest removed from the front at the cap.
    fn model_add(list: &mut Vec<RecordId>, id: RecordId, cap: usize) -> bool {
        if list.contains(&id) {
            return false;
        }
        if list.len() >= cap {
            list.remove(0);
        }
        list.push(id);
        true
    }

    proptest::proptest! {
        /// Adds (ids mostly rising, as time-ordered ids do, some older) and removals agree
        /// with the plain-vector model, and the references read back through the codec
        /// as the model's vectors (the format of before).
        #[test]
        fn refs_agree_with_the_plain_vector_model(
            cap in 1usize..12,
            ops in proptest::collection::vec((0u8..3, 0u8..2, 0u128..8), 0..300),
        ) {
            let layers = [LayerKind::Hippocampus, LayerKind::AngularGyrus];
            let mut refs = MemoryRefs::with_cap(cap);
            let mut model: BTreeMap<LayerKind, Vec<RecordId>> = BTreeMap::new();
            let mut next = 100u128;
            for (step, (what, layer, back)) in ops.into_iter().enumerate() {
                let layer = layers[layer as usize];
                let list = model.entry(layer).or_default();
                match what {
                    0 => {
                        next += 1;
                        proptest::prop_assert_eq!(refs.add(layer, id(next)), model_add(list, id(next), cap));
                    }
                    1 => {
                        let old = id(next.saturating_sub(back * 3));
                        proptest::prop_assert_eq!(refs.add(layer, old), model_add(list, old, cap));
                    }
                    _ => {
                        let old = id(next.saturating_sub(back));
                        let held = list.iter().position(|&x| x == old).map(|p| list.remove(p)).is_some();
                        proptest::prop_assert_eq!(refs.remove(layer, old), held);
                    }
                }
                model.retain(|_, l| !l.is_empty());
                for (&l, list) in &model {
                    proptest::prop_assert_eq!(refs.get(l), list.as_slice(), "step {}", step);
                }
                proptest::prop_assert_eq!(refs.count(None), model.values().map(Vec::len).sum::<usize>());
                proptest::prop_assert!(refs.validate().is_ok());
            }
            let plain = RefsModel { cap: cap.max(1), refs: model };
            let bytes = maxim_core::codec::encode("atl-refs", &refs).unwrap();
            proptest::prop_assert_eq!(&bytes, &maxim_core::codec::encode("atl-refs", &plain).unwrap());
            let back: MemoryRefs = maxim_core::codec::decode("refs", "atl-refs", &bytes).unwrap();
            proptest::prop_assert_eq!(&back, &refs);
        }
    }

    /// `MemoryRefs` as it was declared before its lists kept evicted room: the format.
    #[derive(Serialize)]
    struct RefsModel {
        cap: usize,
        refs: BTreeMap<LayerKind, Vec<RecordId>>,
    }

    #[test]
    fn compression_keeps_identity_and_drops_content() {
        let c = Concept::new(id(1), "mug", "object", now()).unwrap().with_definition("a cup");
        let meta = c.meta.clone();
        let small = CompressedSemantic::from_concept(c, 3);
        assert_eq!((small.name.as_str(), small.category.as_str(), small.edge_count), ("mug", "object", 3));
        assert_eq!(small.meta, meta);
        let rec = SemanticRecord::from(small);
        assert!(rec.is_compressed() && rec.as_concept().is_none());
        assert_eq!(rec.describe(), "mug (object)");
        assert_eq!(rec.keywords().into_iter().collect::<Vec<_>>(), ["mug", "object"]);
    }

    #[test]
    fn bad_records_are_refused() {
        assert!(matches!(Concept::new(id(1), "  ", "object", now()), Err(Error::EmptyName { .. })));
        assert!(matches!(Concept::new(id(1), "", "object", now()), Err(Error::EmptyName { .. })));
        let mut c = Concept::new(id(1), "mug", "object", now()).unwrap();
        c.confidence = f64::NAN;
        assert!(c.validate().is_err());
        c.confidence = 0.5;
        c.aliases.push("__".into());
        assert!(c.validate().is_err());
        assert!(Concept::new(id(1), "mug", "", now()).unwrap().with_source(Source::UserStated, 1.5).is_err());
    }

    #[test]
    fn embedding_text_falls_back_to_name_and_definition() {
        let c = Concept::new(id(1), "mug", "object", now()).unwrap();
        assert_eq!(c.text_for_embedding(), "mug");
        let c = c.with_definition("a cup for coffee");
        assert_eq!(c.text_for_embedding(), "mug. a cup for coffee");
        assert_eq!(c.with_embedding_text("ceramic").text_for_embedding(), "ceramic");
    }

    #[test]
    fn provenance_merges_to_hybrid() {
        use ConceptProvenance::*;
        assert_eq!(merge_provenance(AgentInference, AgentInference), AgentInference);
        assert_eq!(merge_provenance(EpisodicConsolidation, AgentInference), Hybrid);
        assert_eq!(default_source(DirectIngestion), Source::DirectIngestion);
    }
}
