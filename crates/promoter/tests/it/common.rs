//! In-test stores, sources, gate and episode reader shared by the test modules.
//!
//! `Concepts` and `Links` implement the core contracts the simplest way that obeys their
//! documentation, and count every call, so the tests can say exactly what the promoter asked.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use maxim_core::contracts::{CAUSAL_PATTERN, OPERATIONAL_PATTERN};
use maxim_core::{
    BoxError, ConceptProvenance, ConceptSpec, ConceptStore, CrossEdgeKind, CrossLinks, GateDecision,
    LayerRecord, ManualClock, MetaValue, PromotionCandidate, PromotionSource, RandomnessAssessment,
    RandomnessGate, RecordId, Source, Timestamp, Value,
};
use promoter::{EpisodeElements, PromoterConfig, SemanticPromoter};

/// The start of every test clock.
pub(crate) const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

/// The error the in-test stores fail with.
pub(crate) type TestError = std::io::Error;

fn injected(what: &str) -> TestError {
    std::io::Error::other(format!("injected failure in {what}"))
}

/// One concept of the in-test store.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TestConcept {
    pub(crate) name: String,
    pub(crate) category: String,
    pub(crate) definition: String,
    pub(crate) provenance: ConceptProvenance,
    pub(crate) source_episodes: Vec<RecordId>,
    pub(crate) reinforcements: u32,
    /// key → (value, source, trust) claims.
    pub(crate) properties: BTreeMap<String, Vec<(Value, Source, f64)>>,
}

/// Calls the promoter made, by method.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Calls {
    pub(crate) find_or_create: u32,
    pub(crate) reinforce: u32,
    pub(crate) relate: u32,
    pub(crate) set_property: u32,
}

/// An in-test [`ConceptStore`]: exact (name, category) matching, token-overlap similarity,
/// provenance merged on a reinforcing lookup, relationships reinforced when defined again.
#[derive(Debug, Default)]
#[allow(clippy::struct_field_names, reason = "a store of concepts holds `concepts`")]
pub(crate) struct Concepts {
    pub(crate) concepts: Vec<TestConcept>,
    /// (source, target, type) → (weight, confidence, times defined).
    pub(crate) relations: BTreeMap<(RecordId, RecordId, String), (f64, f64, u32)>,
    pub(crate) calls: Calls,
    /// Methods that fail (by name: `find_or_create`, `reinforce`, `relate`, `set_property`).
    pub(crate) failing: BTreeSet<&'static str>,
    /// Fail `reinforce` after this many successful calls.
    pub(crate) reinforce_budget: Option<u32>,
    /// Calls of `similar_concepts` (a read, hence a cell).
    pub(crate) similar_calls: std::cell::Cell<u32>,
    /// When set, `similar_concepts` answers this instead of comparing words.
    pub(crate) similar_override: Option<Vec<(RecordId, f64)>>,
}

/// The id of the concept at `index`.
pub(crate) fn cid(index: usize) -> RecordId {
    RecordId::from_u128(index as u128 + 1)
}

fn index_of(id: RecordId) -> Option<usize> {
    usize::try_from(id.as_u128()).ok()?.checked_sub(1)
}

/// Jaccard overlap of the words of two texts.
pub(crate) fn overlap(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

impl Concepts {
    pub(crate) fn concept(&self, id: RecordId) -> &TestConcept {
        &self.concepts[index_of(id).expect("an id of this store")]
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<(RecordId, &TestConcept)> {
        self.concepts.iter().enumerate().find(|(_, c)| c.name == name).map(|(i, c)| (cid(i), c))
    }

    fn check(&self, what: &'static str) -> Result<(), TestError> {
        if self.failing.contains(what) { Err(injected(what)) } else { Ok(()) }
    }

    fn slot(&mut self, id: RecordId) -> Result<&mut TestConcept, TestError> {
        index_of(id)
            .and_then(|i| self.concepts.get_mut(i))
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, format!("no concept {id}")))
    }

    /// Everything observable, for before/after comparisons.
    pub(crate) fn fingerprint(&self) -> String {
        format!("{:?}\n{:?}", self.concepts, self.relations)
    }
}

fn merge(current: ConceptProvenance, new: ConceptProvenance) -> ConceptProvenance {
    if current == new { current } else { ConceptProvenance::Hybrid }
}

impl ConceptStore for Concepts {
    type Error = TestError;

    fn find_or_create_concept(&mut self, spec: &ConceptSpec) -> Result<(RecordId, bool), TestError> {
        self.calls.find_or_create += 1;
        self.check("find_or_create")?;
        if let Some(i) = self.concepts.iter().position(|c| c.name == spec.name && c.category == spec.category)
        {
            let c = &mut self.concepts[i];
            if let Some(ep) = spec.source_episode {
                c.reinforcements += 1;
                if !c.source_episodes.contains(&ep) {
                    c.source_episodes.push(ep);
                }
                c.provenance = merge(c.provenance, spec.provenance);
            }
            return Ok((cid(i), false));
        }
        self.concepts.push(TestConcept {
            name: spec.name.clone(),
            category: spec.category.clone(),
            definition: spec.definition.clone(),
            provenance: spec.provenance,
            source_episodes: spec.source_episode.into_iter().collect(),
            reinforcements: 1,
            properties: BTreeMap::new(),
        });
        Ok((cid(self.concepts.len() - 1), true))
    }

    fn reinforce_concept(&mut self, id: RecordId, episode: Option<RecordId>) -> Result<(), TestError> {
        self.calls.reinforce += 1;
        self.check("reinforce")?;
        if let Some(budget) = &mut self.reinforce_budget {
            if *budget == 0 {
                return Err(injected("reinforce"));
            }
            *budget -= 1;
        }
        let c = self.slot(id)?;
        c.reinforcements += 1;
        if let Some(ep) = episode
            && !c.source_episodes.contains(&ep)
        {
            c.source_episodes.push(ep);
        }
        Ok(())
    }

    fn similar_concepts(&self, text: &str, k: usize) -> Vec<(RecordId, f64)> {
        self.similar_calls.set(self.similar_calls.get() + 1);
        if let Some(hits) = &self.similar_override {
            return hits.iter().copied().take(k).collect();
        }
        let mut hits: Vec<(RecordId, f64)> = self
            .concepts
            .iter()
            .enumerate()
            .map(|(i, c)| (cid(i), overlap(text, &format!("{}. {}", c.name, c.definition))))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits
    }

    fn relate_concepts(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
    ) -> Result<(), TestError> {
        self.calls.relate += 1;
        self.check("relate")?;
        self.slot(source)?;
        self.slot(target)?;
        let e = self.relations.entry((source, target, relationship.to_owned())).or_insert((0.0, 0.0, 0));
        *e = (e.0.max(weight), e.1.max(confidence), e.2 + 1);
        Ok(())
    }

    fn set_concept_property(
        &mut self,
        id: RecordId,
        key: &str,
        value: Value,
        source: &Source,
        trust: f64,
    ) -> Result<(), TestError> {
        self.calls.set_property += 1;
        self.check("set_property")?;
        let c = self.slot(id)?;
        let claims = c.properties.entry(key.to_owned()).or_default();
        claims.retain(|(_, s, _)| s != source);
        claims.push((value, source.clone(), trust));
        Ok(())
    }
}

/// An in-test [`CrossLinks`]: one edge per (from, to, kind), updated in place, every call
/// counted.
#[derive(Debug, Default)]
pub(crate) struct Links {
    pub(crate) edges: Vec<(LayerRecord, LayerRecord, CrossEdgeKind, f64)>,
    pub(crate) adds: u32,
    pub(crate) failing: bool,
}

impl Links {
    pub(crate) fn of_kind(
        &self,
        kind: CrossEdgeKind,
    ) -> Vec<&(LayerRecord, LayerRecord, CrossEdgeKind, f64)> {
        self.edges.iter().filter(|e| e.2 == kind).collect()
    }
}

impl CrossLinks for Links {
    type Error = TestError;

    fn add_cross_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<(), TestError> {
        self.adds += 1;
        if self.failing {
            return Err(injected("add_cross_edge"));
        }
        if let Some(e) = self.edges.iter_mut().find(|e| (e.0, e.1, e.2) == (from, to, kind)) {
            e.3 = weight;
        } else {
            self.edges.push((from, to, kind, weight));
        }
        Ok(())
    }

    fn remove_cross_edges(&mut self, record: LayerRecord) -> usize {
        let before = self.edges.len();
        self.edges.retain(|e| e.0 != record && e.1 != record);
        before - self.edges.len()
    }

    fn cross_edges_from(&self, from: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> {
        self.edges.iter().filter(|e| e.0 == from).map(|e| (e.1, e.2, e.3)).collect()
    }
}

/// A source whose candidates the test sets between scans.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) name: &'static str,
    pub(crate) candidates: Mutex<Vec<PromotionCandidate>>,
    pub(crate) asked: Mutex<Vec<(f64, u32)>>,
}

impl Fixed {
    pub(crate) fn new(name: &'static str, candidates: Vec<PromotionCandidate>) -> Self {
        Self { name, candidates: Mutex::new(candidates), asked: Mutex::new(Vec::new()) }
    }
}

impl PromotionSource for Fixed {
    fn source_name(&self) -> &str {
        self.name
    }

    fn promotion_candidates(
        &self,
        min_confidence: f64,
        min_observations: u32,
    ) -> Result<Vec<PromotionCandidate>, BoxError> {
        self.asked.lock().unwrap().push((min_confidence, min_observations));
        Ok(self.candidates.lock().unwrap().clone())
    }
}

/// A source that always fails.
#[derive(Debug)]
pub(crate) struct Broken;

impl PromotionSource for Broken {
    #[allow(clippy::unnecessary_literal_bound, reason = "the trait's signature")]
    fn source_name(&self) -> &str {
        "broken"
    }

    fn promotion_candidates(&self, _: f64, _: u32) -> Result<Vec<PromotionCandidate>, BoxError> {
        Err("the statistician is offline".into())
    }
}

/// A gate that rejects every candidate whose name contains `noise`, and counts its calls.
#[derive(Debug, Default)]
pub(crate) struct NameGate {
    pub(crate) calls: Mutex<u32>,
}

impl RandomnessGate for NameGate {
    fn assess(&self, values: &[f64]) -> RandomnessAssessment {
        RandomnessAssessment::insufficient(values.len())
    }

    fn admits(&self, candidate: &PromotionCandidate) -> GateDecision {
        *self.calls.lock().unwrap() += 1;
        if candidate.pattern_name.contains("noise") {
            GateDecision { admitted: false, reason: "observation timing looks random".into() }
        } else {
            GateDecision { admitted: true, reason: "structured timing".into() }
        }
    }
}

/// Episode id `n`.
pub(crate) fn ep(n: u128) -> RecordId {
    RecordId::from_u128(1_000 + n)
}

/// Episodes `range` as ids.
pub(crate) fn eps(range: std::ops::Range<u128>) -> Vec<RecordId> {
    range.map(ep).collect()
}

/// A causal candidate `<event> → <event>:positive` seen in `episodes`, once each.
pub(crate) fn causal(event: &str, episodes: Vec<RecordId>, confidence: f64) -> PromotionCandidate {
    let outcome = format!("{event}:positive");
    let mut metadata = BTreeMap::new();
    metadata.insert("event_signature".into(), MetaValue::Text(event.into()));
    metadata.insert("outcome_signature".into(), MetaValue::Text(outcome.clone()));
    metadata.insert("valence".into(), MetaValue::Text("positive".into()));
    metadata.insert("observation_count".into(), MetaValue::Count(episodes.len() as u64));
    PromotionCandidate {
        pattern_name: format!("{event} → {outcome}"),
        category: CAUSAL_PATTERN.into(),
        confidence,
        observations: episodes.len() as u32,
        source_memory_ids: episodes,
        observed_at: Vec::new(),
        source: Source::Episodic,
        metadata,
    }
}

/// An operational candidate `stat:<metric>` backed by AG record `ag`.
pub(crate) fn statistical(
    metric: &str,
    ag: RecordId,
    confidence: f64,
    observations: u32,
) -> PromotionCandidate {
    let mut metadata = BTreeMap::new();
    metadata.insert("metric_name".into(), MetaValue::Text(metric.into()));
    metadata.insert("pattern_type".into(), MetaValue::Text("TRENDING".into()));
    metadata.insert("ag_memory_id".into(), MetaValue::Id(ag));
    PromotionCandidate {
        pattern_name: format!("stat:{metric}"),
        category: OPERATIONAL_PATTERN.into(),
        confidence,
        observations,
        source_memory_ids: Vec::new(),
        observed_at: Vec::new(),
        source: Source::AgentInference,
        metadata,
    }
}

/// A promoter with the [`NameGate`], a manual clock and `config`.
pub(crate) fn promoter_with(config: PromoterConfig) -> SemanticPromoter {
    let clock = ManualClock::new(T0);
    SemanticPromoter::builder()
        .config(config)
        .clock(clock.shared())
        .gate(std::sync::Arc::new(NameGate::default()))
        .build()
        .expect("valid settings")
}

/// A promoter with the defaults and the [`NameGate`].
pub(crate) fn promoter() -> SemanticPromoter {
    promoter_with(PromoterConfig::default())
}

/// Episode elements for the reader.
pub(crate) fn elements(objects: &[&str], tool: &str, goal: &str, outcome: &str) -> EpisodeElements {
    EpisodeElements {
        objects: objects.iter().map(|s| (*s).to_owned()).collect(),
        tools: vec![tool.to_owned()],
        goals: vec![goal.to_owned()],
        outcome: Some(outcome.to_owned()),
    }
}

/// A reader over a fixed map of episodes.
pub(crate) fn reader(
    map: HashMap<RecordId, EpisodeElements>,
) -> impl Fn(RecordId) -> Option<EpisodeElements> {
    move |id| map.get(&id).cloned()
}
