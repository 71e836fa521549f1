//! The contracts two leaf crates must agree on without knowing each other.
//!
//! A leaf crate depends on `maxim-core` alone. Whatever `nac` hands the `promoter`, whatever
//! the `promoter` asks of the `atl`, whatever the `crossgraph` walks in a layer, is a trait
//! or a type here: [`PromotionSource`] and [`PromotionCandidate`], [`RandomnessGate`],
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
