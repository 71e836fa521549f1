//! The contracts two leaf crates must agree on without knowing each other.
//!
//! A leaf crate depends on `maxim-core` alone. Whatever `nac` hands the `promoter`, whatever
//! the `promoter` asks of the `atl`, whatever the `crossgraph` walks in a layer, is a trait
//! or a type here: [`PromotionSource`] and [`PromotionCandidate`] (lent borrowed as a
//! [`PromotionCandidateRef`]), [`RandomnessGate`],
//! [`ConceptStore`], [`CrossLinks`], [`GraphView`] (and [`Embedder`](crate::embed::Embedder)
//! in [`embed`](crate::embed)).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::graph::EdgeKind;
use crate::id::RecordId;
use crate::record::Source;
use crate::time::Timestamp;

/// A boxed error for contracts whose implementors fail in their own ways.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The memory layers a record can live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// Episodes: what happened.
    Hippocampus,
    /// Concepts: what things mean.
    Atl,
    /// Numbers and fitted patterns: what the numbers say.
    AngularGyrus,
    /// Skills: how to do it.
    Cerebellum,
}

impl LayerKind {
    /// Every layer.
    pub const ALL: [Self; 4] = [Self::Hippocampus, Self::Atl, Self::AngularGyrus, Self::Cerebellum];

    /// The layer's name (`hippocampus`, `atl`, `angular_gyrus`, `cerebellum`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hippocampus => "hippocampus",
            Self::Atl => "atl",
            Self::AngularGyrus => "angular_gyrus",
            Self::Cerebellum => "cerebellum",
        }
    }
}

impl fmt::Display for LayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A record named by its layer and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LayerRecord {
    /// The layer holding it.
    pub layer: LayerKind,
    /// Its id.
    pub id: RecordId,
}

impl LayerRecord {
    /// The record `id` of `layer`.
    pub const fn new(layer: LayerKind, id: RecordId) -> Self {
        Self { layer, id }
    }
}

impl fmt::Display for LayerRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.layer, self.id)
    }
}

/// Read access to a layer's associative graph, for walks that cross layers.
pub trait GraphView: Send + Sync {
    /// True when `id` is a node.
    fn contains(&self, id: RecordId) -> bool;
    /// Number of nodes.
    fn node_count(&self) -> usize;
    /// Number of directed edges.
    fn edge_count(&self) -> usize;
    /// Calls `visit(target, kind, weight)` for every outgoing edge of `id` (nothing when `id`
    /// is not a node).
    fn for_each_outgoing(&self, id: RecordId, visit: &mut dyn FnMut(RecordId, EdgeKind, f64));
}

impl<G: GraphView + ?Sized> GraphView for &G {
    fn contains(&self, id: RecordId) -> bool {
        (**self).contains(id)
    }
    fn node_count(&self) -> usize {
        (**self).node_count()
    }
    fn edge_count(&self) -> usize {
        (**self).edge_count()
    }
    fn for_each_outgoing(&self, id: RecordId, visit: &mut dyn FnMut(RecordId, EdgeKind, f64)) {
        (**self).for_each_outgoing(id, visit);
    }
}

/// A value in a candidate's or an edge's free-form metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MetaValue {
    /// Text.
    Text(String),
    /// A number.
    Number(f64),
    /// A count.
    Count(u64),
    /// A flag.
    Flag(bool),
    /// A record id.
    Id(RecordId),
}

/// Candidate category of causal patterns from reward learning (NAc).
pub const CAUSAL_PATTERN: &str = "causal_pattern";
/// Candidate category of confirmed operational patterns from the statistician.
pub const OPERATIONAL_PATTERN: &str = "operational_pattern";

/// A pattern some system believes deserves lasting semantic status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromotionCandidate {
    /// The pattern's name, e.g. `tool:grasp → tool:grasp:positive` or `stat:tool:navigate:success`.
    pub pattern_name: String,
    /// [`CAUSAL_PATTERN`], [`OPERATIONAL_PATTERN`] or another category.
    pub category: String,
    /// The source system's confidence, in `[0, 1]`.
    pub confidence: f64,
    /// How many times the pattern was observed.
    pub observations: u32,
    /// Episodes that contributed (may be empty).
    pub source_memory_ids: Vec<RecordId>,
    /// When the observations happened, oldest first (what the randomness gate tests; may be
    /// empty when the source keeps no times).
    pub observed_at: Vec<Timestamp>,
    /// Where the evidence came from.
    pub source: Source,
    /// Source-specific extras (event and outcome signatures, pattern type, R², ...).
    pub metadata: BTreeMap<String, MetaValue>,
}

/// A sequence borrowed as two slices read one after the other: the halves of a ring
/// buffer, oldest first, lent without copying. A plain slice is a split slice with an
/// empty second half.
///
/// ```
/// use maxim_core::SplitSlice;
/// let (front, back) = ([3, 4], [5]);
/// let s = SplitSlice::new(&front, &back);
/// assert_eq!(s.len(), 3);
/// assert_eq!(s.get(2), Some(&5));
/// assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
/// assert_eq!(s.to_vec(), SplitSlice::from(&[3, 4, 5][..]).to_vec());
/// assert_eq!(s, SplitSlice::from(&[3, 4, 5][..]));
/// ```
#[derive(Debug)]
pub struct SplitSlice<'a, T> {
    front: &'a [T],
    back: &'a [T],
}

impl<T> Clone for SplitSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SplitSlice<'_, T> {}

impl<T> Default for SplitSlice<'_, T> {
    fn default() -> Self {
        Self { front: &[], back: &[] }
    }
}

impl<'a, T> SplitSlice<'a, T> {
    /// The values of `front`, then those of `back`.
    pub const fn new(front: &'a [T], back: &'a [T]) -> Self {
        Self { front, back }
    }

    /// Number of values.
    pub const fn len(&self) -> usize {
        self.front.len() + self.back.len()
    }

    /// True when there is no value.
    pub const fn is_empty(&self) -> bool {
        self.front.is_empty() && self.back.is_empty()
    }

    /// The two halves, in order.
    pub const fn as_slices(&self) -> (&'a [T], &'a [T]) {
        (self.front, self.back)
    }

    /// The value at `index`.
    pub fn get(&self, index: usize) -> Option<&'a T> {
        match index.checked_sub(self.front.len()) {
            None => self.front.get(index),
            Some(i) => self.back.get(i),
        }
    }

    /// The first value.
    pub fn first(&self) -> Option<&'a T> {
        self.front.first().or_else(|| self.back.first())
    }

    /// The last value.
    pub fn last(&self) -> Option<&'a T> {
        self.back.last().or_else(|| self.front.last())
    }

    /// The values, in order.
    pub fn iter(&self) -> std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>> {
        self.front.iter().chain(self.back.iter())
    }

    /// The values, in order, as a new vector.
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        let mut out = Vec::with_capacity(self.len());
        out.extend_from_slice(self.front);
        out.extend_from_slice(self.back);
        out
    }

    /// Copies the values, in order, into `out`, which must be exactly [`len`](Self::len)
    /// long (it panics otherwise, as [`slice::copy_from_slice`] does).
    pub fn copy_to(&self, out: &mut [T])
    where
        T: Copy,
    {
        let (a, b) = out.split_at_mut(self.front.len());
        a.copy_from_slice(self.front);
        b.copy_from_slice(self.back);
    }
}

impl<'a, T> From<&'a [T]> for SplitSlice<'a, T> {
    fn from(values: &'a [T]) -> Self {
        Self { front: values, back: &[] }
    }
}

impl<'a, T> From<&'a Vec<T>> for SplitSlice<'a, T> {
    fn from(values: &'a Vec<T>) -> Self {
        Self { front: values, back: &[] }
    }
}

impl<'a, T> IntoIterator for SplitSlice<'a, T> {
    type Item = &'a T;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &SplitSlice<'a, T> {
    type Item = &'a T;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: PartialEq> PartialEq for SplitSlice<'_, T> {
    /// Equal when they hold equal values in the same order, however split.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// A borrowed [`MetaValue`]: text is lent, not copied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetaValueRef<'a> {
    /// Text.
    Text(&'a str),
    /// A number.
    Number(f64),
    /// A count.
    Count(u64),
    /// A flag.
    Flag(bool),
    /// A record id.
    Id(RecordId),
}

impl MetaValue {
    /// The value, borrowed.
    pub fn as_view(&self) -> MetaValueRef<'_> {
        match self {
            Self::Text(t) => MetaValueRef::Text(t),
            Self::Number(x) => MetaValueRef::Number(*x),
            Self::Count(n) => MetaValueRef::Count(*n),
            Self::Flag(b) => MetaValueRef::Flag(*b),
            Self::Id(id) => MetaValueRef::Id(*id),
        }
    }
}

impl MetaValueRef<'_> {
    /// The owned value.
    pub fn to_value(self) -> MetaValue {
        match self {
            Self::Text(t) => MetaValue::Text(t.to_owned()),
            Self::Number(x) => MetaValue::Number(x),
            Self::Count(n) => MetaValue::Count(n),
            Self::Flag(b) => MetaValue::Flag(b),
            Self::Id(id) => MetaValue::Id(id),
        }
    }
}

/// A candidate's metadata, borrowed: an owned candidate's map, or key–value pairs a source
/// lends without building a map.
#[derive(Debug, Clone, Copy)]
pub enum MetadataRef<'a> {
    /// The map of an owned [`PromotionCandidate`].
    Map(&'a BTreeMap<String, MetaValue>),
    /// Pairs, each key once (a repeated key: [`get`](Self::get) finds the first, the owned
    /// map keeps the last).
    Pairs(&'a [(&'a str, MetaValueRef<'a>)]),
}

impl Default for MetadataRef<'_> {
    fn default() -> Self {
        Self::Pairs(&[])
    }
}

impl<'a> MetadataRef<'a> {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<MetaValueRef<'a>> {
        match *self {
            Self::Map(map) => map.get(key).map(MetaValue::as_view),
            Self::Pairs(pairs) => pairs.iter().find(|(k, _)| *k == key).map(|&(_, v)| v),
        }
    }

    /// Number of entries (pairs counted as given).
    pub fn len(&self) -> usize {
        match self {
            Self::Map(map) => map.len(),
            Self::Pairs(pairs) => pairs.len(),
        }
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every entry, in the map's key order or the pairs' order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, MetaValueRef<'a>)> + 'a {
        let (map, pairs) = match *self {
            Self::Map(map) => (Some(map), &[][..]),
            Self::Pairs(pairs) => (None, pairs),
        };
        map.into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_view())))
            .chain(pairs.iter().copied())
    }

    /// The owned map.
    pub fn to_map(&self) -> BTreeMap<String, MetaValue> {
        self.iter().map(|(k, v)| (k.to_owned(), v.to_value())).collect()
    }
}

/// A [`PromotionCandidate`] borrowed from the source that holds it: what
/// [`PromotionSource::for_each_candidate`] lends, so a scan reads a source's patterns
/// without building (and allocating) an owned candidate for each. It carries everything the
/// owned form carries; [`to_candidate`](Self::to_candidate) makes the owned form when a
/// caller needs to keep one, and [`PromotionCandidate::as_view`] lends an owned one.
///
/// ```
/// use maxim_core::{MetaValue, MetaValueRef, PromotionCandidate, Source, Timestamp};
/// let owned = PromotionCandidate {
///     pattern_name: "a \u{2192} b".into(),
///     category: "causal_pattern".into(),
///     confidence: 0.7,
///     observations: 4,
///     source_memory_ids: vec![],
///     observed_at: vec![Timestamp::from_secs(60), Timestamp::from_secs(120)],
///     source: Source::Episodic,
///     metadata: [("event_signature".to_owned(), MetaValue::Text("a".into()))].into_iter().collect(),
/// };
/// let view = owned.as_view();
/// assert_eq!(view.observed_at.len(), 2);
/// assert_eq!(view.metadata.get("event_signature"), Some(MetaValueRef::Text("a")));
/// assert_eq!(view.to_candidate(), owned);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PromotionCandidateRef<'a> {
    /// The pattern's name, e.g. `tool:grasp → tool:grasp:positive`.
    pub pattern_name: &'a str,
    /// [`CAUSAL_PATTERN`], [`OPERATIONAL_PATTERN`] or another category.
    pub category: &'a str,
    /// The source system's confidence, in `[0, 1]`.
    pub confidence: f64,
    /// How many times the pattern was observed.
    pub observations: u32,
    /// Episodes that contributed (may be empty).
    pub source_memory_ids: SplitSlice<'a, RecordId>,
    /// When the observations happened, oldest first (may be empty).
    pub observed_at: SplitSlice<'a, Timestamp>,
    /// Where the evidence came from.
    pub source: &'a Source,
    /// Source-specific extras.
    pub metadata: MetadataRef<'a>,
}

impl PromotionCandidateRef<'_> {
    /// The owned candidate, every field copied.
    pub fn to_candidate(&self) -> PromotionCandidate {
        PromotionCandidate {
            pattern_name: self.pattern_name.to_owned(),
            category: self.category.to_owned(),
            confidence: self.confidence,
            observations: self.observations,
            source_memory_ids: self.source_memory_ids.to_vec(),
            observed_at: self.observed_at.to_vec(),
            source: self.source.clone(),
            metadata: self.metadata.to_map(),
        }
    }
}

impl PromotionCandidate {
    /// The candidate, borrowed (allocates nothing).
    pub fn as_view(&self) -> PromotionCandidateRef<'_> {
        PromotionCandidateRef {
            pattern_name: &self.pattern_name,
            category: &self.category,
            confidence: self.confidence,
            observations: self.observations,
            source_memory_ids: SplitSlice::from(&self.source_memory_ids),
            observed_at: SplitSlice::from(&self.observed_at),
            source: &self.source,
            metadata: MetadataRef::Map(&self.metadata),
        }
    }
}

/// Anything that detects patterns worth promoting into concepts (NAc, the statistician, ...).
pub trait PromotionSource: Send + Sync {
    /// A short name for logs and reports.
    fn source_name(&self) -> &str;

    /// The patterns with at least `min_confidence` and `min_observations`.
    fn promotion_candidates(
        &self,
        min_confidence: f64,
        min_observations: u32,
    ) -> Result<Vec<PromotionCandidate>, BoxError>;

    /// Lends `visit` each candidate [`promotion_candidates`](Self::promotion_candidates)
    /// would return, in the same order, and returns how many it lent. A source that holds
    /// its patterns lends them borrowed, building no owned candidate; the default builds the
    /// owned list and lends each of its candidates. An error comes before any candidate is
    /// lent.
    fn for_each_candidate(
        &self,
        min_confidence: f64,
        min_observations: u32,
        visit: &mut dyn FnMut(&PromotionCandidateRef<'_>),
    ) -> Result<usize, BoxError> {
        let candidates = self.promotion_candidates(min_confidence, min_observations)?;
        for candidate in &candidates {
            visit(&candidate.as_view());
        }
        Ok(candidates.len())
    }
}

/// What a randomness test says of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PatternType {
    /// No structure found.
    Random,
    /// A run structure of a trend (too few runs).
    Trending,
    /// Alternation (too many runs).
    Cyclic,
    /// Neighbouring values resemble each other.
    Clustering,
    /// Too few values to judge.
    InsufficientData,
}

/// The outcome of a randomness assessment (`spec/maxim-reference.md` §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RandomnessAssessment {
    /// True when no pattern was found (or there was too little data to find one).
    pub is_random: bool,
    /// How strongly a pattern shows, in `[0, 1]`.
    pub pattern_confidence: f64,
    /// The kind of structure found.
    pub pattern_type: PatternType,
    /// Wald–Wolfowitz runs-test z score.
    pub runs_z: f64,
    /// Lag-1 autocorrelation.
    pub lag1_autocorrelation: f64,
    /// Values assessed.
    pub n: usize,
}

impl RandomnessAssessment {
    /// The assessment of `n` values too few to show a pattern: random, no confidence, no
    /// statistics (what a gate says of a short series, and what a stand-in gate says of any).
    ///
    /// ```
    /// use maxim_core::{PatternType, RandomnessAssessment};
    /// let a = RandomnessAssessment::insufficient(3);
    /// assert!(a.is_random && a.pattern_type == PatternType::InsufficientData && a.n == 3);
    /// ```
    pub fn insufficient(n: usize) -> Self {
        Self {
            is_random: true,
            pattern_confidence: 0.0,
            pattern_type: PatternType::InsufficientData,
            runs_z: 0.0,
            lag1_autocorrelation: 0.0,
            n,
        }
    }
}

/// Whether a candidate passes the promotion gate, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateDecision {
    /// True when the candidate may be promoted.
    pub admitted: bool,
    /// Why, in a few words.
    pub reason: String,
}

/// The noise filter in front of promotion.
pub trait RandomnessGate: Send + Sync {
    /// Assesses whether `values` look random.
    fn assess(&self, values: &[f64]) -> RandomnessAssessment;

    /// Decides whether `candidate` may be promoted.
    fn admits(&self, candidate: &PromotionCandidate) -> GateDecision;

    /// Decides whether the borrowed `candidate` may be promoted: the same decision as
    /// [`admits`](Self::admits) on its owned form. The default judges an owned copy; a gate
    /// that can read the view directly should override it.
    fn admits_view(&self, candidate: &PromotionCandidateRef<'_>) -> GateDecision {
        self.admits(&candidate.to_candidate())
    }
}

/// How a concept was formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConceptProvenance {
    /// Extracted from repeated episodes via reward signals.
    #[default]
    EpisodicConsolidation,
    /// Proposed by the agent (the statistician) from confirmed patterns.
    AgentInference,
    /// Imported from documents.
    DirectIngestion,
    /// Several of the above contributed.
    Hybrid,
}

/// What the promoter asks a concept store to find or create.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptSpec {
    /// The concept's name.
    pub name: String,
    /// Its category (object, person, causal_pattern, ...).
    pub category: String,
    /// A natural-language definition.
    pub definition: String,
    /// How it was formed.
    pub provenance: ConceptProvenance,
    /// The episode that contributed, if any.
    pub source_episode: Option<RecordId>,
    /// Where the evidence came from.
    pub source: Source,
    /// Trust in `[0, 1]`.
    pub trust: f64,
}

/// A store of named concepts with typed relationships (the ATL implements it).
///
/// The methods carry a `concept` word in their names so that they never clash with a
/// store's own inherent methods, whose richer signatures (a report instead of a pair, say)
/// a direct caller wants.
pub trait ConceptStore {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Finds the concept `spec` names (after the store's deduplication) or creates it.
    /// Returns its id and whether it was created. Finding it with a source episode reinforces it.
    fn find_or_create_concept(&mut self, spec: &ConceptSpec) -> Result<(RecordId, bool), Self::Error>;

    /// Reinforces concept `id`, crediting `episode` if given.
    fn reinforce_concept(&mut self, id: RecordId, episode: Option<RecordId>) -> Result<(), Self::Error>;

    /// The `k` concepts most similar to `text`, best first, with their similarity in `[-1, 1]`.
    fn similar_concepts(&self, text: &str, k: usize) -> Vec<(RecordId, f64)>;

    /// Relates `source` to `target` by the named relationship type (defining it again
    /// reinforces it).
    fn relate_concepts(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
    ) -> Result<(), Self::Error>;

    /// Records `source`'s claim that property `key` of concept `id` has `value`, with `trust`
    /// in `[0, 1]`. A different value from another source is kept beside the first (a
    /// contradiction), never silently overwritten.
    fn set_concept_property(
        &mut self,
        id: RecordId,
        key: &str,
        value: crate::value::Value,
        source: &Source,
        trust: f64,
    ) -> Result<(), Self::Error>;
}

/// The types of edge between records of different layers (`spec/maxim-reference.md` §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CrossEdgeKind {
    /// An ATL concept formed from an episode (concept → episode).
    DerivedFrom,
    /// An episode is an instance of a concept (episode → concept).
    InstanceOf,
    /// Generic: one record informs another.
    Informs,
    /// An AG record computed from source data.
    ComputedFrom,
    /// An AG record quantifies a concept.
    Quantifies,
    /// An AG pattern statistically confirms a concept.
    StatisticallyConfirms,
    /// Two records correlate in time.
    TemporallyCorrelates,
}

/// Typed, weighted edges between records of different layers (the crossgraph implements it).
///
/// As with [`ConceptStore`], the method names say `cross` so they never clash with the
/// implementor's inherent methods.
pub trait CrossLinks {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Adds (or, when the same edge exists, updates) an edge `from → to`.
    fn add_cross_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<(), Self::Error>;

    /// Removes every edge into or out of `record`; returns how many.
    fn remove_cross_edges(&mut self, record: LayerRecord) -> usize;

    /// The outgoing edges of `from`.
    fn cross_edges_from(&self, from: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)>;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn candidate(name: &str, times: &[i64]) -> PromotionCandidate {
        PromotionCandidate {
            pattern_name: name.to_owned(),
            category: CAUSAL_PATTERN.to_owned(),
            confidence: 0.7,
            observations: u32::try_from(times.len()).unwrap(),
            source_memory_ids: vec![RecordId::from_u128(7), RecordId::from_u128(9)],
            observed_at: times.iter().map(|&t| Timestamp::from_secs(t)).collect(),
            source: Source::Episodic,
            metadata: [
                ("event_signature".to_owned(), MetaValue::Text("a".into())),
                ("observation_count".to_owned(), MetaValue::Count(3)),
                ("phase_coherence".to_owned(), MetaValue::Number(0.5)),
                ("confirmed".to_owned(), MetaValue::Flag(true)),
                ("ag_memory_id".to_owned(), MetaValue::Id(RecordId::from_u128(5))),
            ]
            .into_iter()
            .collect(),
        }
    }

    proptest! {
        #[test]
        fn a_split_slice_reads_as_its_halves_joined(values in proptest::collection::vec(0u32..100, 0..20), cut in 0usize..20) {
            let cut = cut.min(values.len());
            let s = SplitSlice::new(&values[..cut], &values[cut..]);
            prop_assert_eq!(s.len(), values.len());
            prop_assert_eq!(s.is_empty(), values.is_empty());
            prop_assert_eq!(s.to_vec(), values.clone());
            prop_assert_eq!(s.iter().copied().collect::<Vec<_>>(), values.clone());
            prop_assert_eq!(s.iter().rev().copied().collect::<Vec<_>>(), values.iter().rev().copied().collect::<Vec<_>>());
            for i in 0..=values.len() {
                prop_assert_eq!(s.get(i), values.get(i));
            }
            prop_assert_eq!(s.first(), values.first());
            prop_assert_eq!(s.last(), values.last());
            let mut out = vec![0; values.len()];
            s.copy_to(&mut out);
            prop_assert_eq!(&out, &values);
            prop_assert_eq!(s, SplitSlice::from(&values));
            prop_assert_eq!(s.as_slices(), (&values[..cut], &values[cut..]));
        }
    }

    #[test]
    fn split_slices_differ_by_their_values_not_their_cut() {
        let a = [1, 2, 3];
        let b = [1, 2, 4];
        assert_ne!(SplitSlice::new(&a[..1], &a[1..]), SplitSlice::from(&b[..]));
        assert_ne!(SplitSlice::new(&a[..1], &a[1..]), SplitSlice::from(&a[..2]));
        assert_eq!(SplitSlice::<u8>::default().len(), 0);
    }

    #[test]
    fn a_view_carries_every_field_and_turns_back_into_the_candidate() {
        let owned = candidate("a \u{2192} b", &[60, 120, 300]);
        let view = owned.as_view();
        assert_eq!(view.pattern_name, owned.pattern_name);
        assert_eq!(view.observed_at.to_vec(), owned.observed_at);
        assert_eq!(view.source_memory_ids.to_vec(), owned.source_memory_ids);
        assert_eq!(view.metadata.len(), 5);
        assert_eq!(view.metadata.get("phase_coherence"), Some(MetaValueRef::Number(0.5)));
        assert_eq!(view.metadata.get("missing"), None);
        assert_eq!(view.to_candidate(), owned);
    }

    #[test]
    fn pairs_and_maps_of_metadata_agree() {
        let owned = candidate("p", &[]);
        let pairs: Vec<(&str, MetaValueRef<'_>)> =
            owned.metadata.iter().rev().map(|(k, v)| (k.as_str(), v.as_view())).collect();
        let lent = MetadataRef::Pairs(&pairs);
        let map = MetadataRef::Map(&owned.metadata);
        assert_eq!(lent.len(), map.len());
        for (k, v) in map.iter() {
            assert_eq!(lent.get(k), Some(v));
        }
        assert_eq!(lent.to_map(), owned.metadata);
        assert!(MetadataRef::default().is_empty());
        assert_eq!(MetadataRef::default().to_map(), BTreeMap::new());
    }

    struct Owned(Vec<PromotionCandidate>, bool);

    impl PromotionSource for Owned {
        #[allow(clippy::unnecessary_literal_bound, reason = "the trait's signature")]
        fn source_name(&self) -> &str {
            "owned"
        }

        fn promotion_candidates(
            &self,
            min_confidence: f64,
            _: u32,
        ) -> Result<Vec<PromotionCandidate>, BoxError> {
            if self.1 {
                return Err("broken".into());
            }
            Ok(self.0.iter().filter(|c| c.confidence >= min_confidence).cloned().collect())
        }
    }

    #[test]
    fn the_default_visit_lends_the_owned_candidates_in_order() {
        let mut weak = candidate("weak", &[1]);
        weak.confidence = 0.2;
        let source = Owned(vec![candidate("x", &[1, 2]), weak, candidate("y", &[3])], false);
        let mut seen = Vec::new();
        let n = source.for_each_candidate(0.5, 0, &mut |c| seen.push(c.to_candidate())).unwrap();
        assert_eq!(n, 2);
        assert_eq!(seen, source.promotion_candidates(0.5, 0).unwrap());
        let broken = Owned(vec![candidate("x", &[1])], true);
        let mut visits = 0;
        assert!(broken.for_each_candidate(0.0, 0, &mut |_| visits += 1).is_err());
        assert_eq!(visits, 0);
    }

    struct ByName;

    impl RandomnessGate for ByName {
        fn assess(&self, values: &[f64]) -> RandomnessAssessment {
            RandomnessAssessment::insufficient(values.len())
        }

        fn admits(&self, candidate: &PromotionCandidate) -> GateDecision {
            GateDecision { admitted: candidate.observed_at.len() > 1, reason: candidate.pattern_name.clone() }
        }
    }

    #[test]
    fn the_default_view_decision_is_the_owned_one() {
        for c in [candidate("two", &[1, 2]), candidate("one", &[1])] {
            assert_eq!(ByName.admits_view(&c.as_view()), ByName.admits(&c));
        }
    }
}
