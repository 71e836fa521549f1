//! Queries across layers: cross-layer activation, the traversal that explains it, and the
//! knowledge context an LLM receives.
//!
//! [`MemoryHub::recall_with_knowledge`] spreads activation from seeds in any layer through
//! every layer's own graph and the cross-layer edges (decay 0.5 per hop, threshold 0.01,
//! depth 3) and returns what it reached, grouped by layer. [`MemoryHub::traversal`] walks the
//! same edges breadth first from one record and says, for every record it reaches, by which
//! typed edge it was first reached: the seed's example traversal (a failed navigate episode →
//! INSTANCE_OF its tool's concept → IS_A tool capability, and ← STATISTICALLY_CONFIRMS the
//! trend PATTERN → PHASE_LOCKED_TO the rhythm) is read off it.
//!
//! [`MemoryHub::knowledge_context`] merges ATL concepts, angular-gyrus records and skills
//! reached from the query into one list ranked by `maxim_core::rank`'s documented
//! combination, `relevance × memory_score × (1 + trace_score)` with `0.6 activation + 0.4
//! confidence` as the relevance: (0.6 activation + 0.4 confidence) × trust × the record's
//! memory factor ([`KnowledgeEntry::memory_of`]; [`crate::context`]); entries below the
//! trust floor are listed apart, as information that never authorises anything. Reads here
//! never write: no access is recorded.

use std::collections::{HashSet, VecDeque};

use crossgraph::{CrossActivation, CrossParams, LayerGraphs};
use hippocampus::RecallFilter;
use maxim_core::{
    ActivationParams, CrossEdgeKind, GraphView, LayerKind, LayerRecord, MemoryLayer, MemoryRecord, RecordId,
    Timestamp,
};

use super::{MemoryHub, Result};
use crate::context::{
    self, Candidate, ContextRelation, KnowledgeContext, KnowledgeEntry, LowTrust, RankOptions,
};

/// What a knowledge context is built from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum KnowledgeQuery {
    /// A question or topic in words.
    Text(String),
    /// Records to start from (episodes the agent is working with, say), in any layer.
    Seeds(Vec<RecordId>),
}

impl From<&str> for KnowledgeQuery {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// One record a [`Traversal`] reached.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraversalStep {
    /// Hops from the start.
    pub depth: u32,
    /// The record.
    pub record: LayerRecord,
    /// Its name (a concept's or a record's name, an episode's summary).
    pub name: String,
    /// The record it was reached from.
    pub from: LayerRecord,
    /// The edge's type (`INSTANCE_OF`, `IS_A`, `STATISTICALLY_CONFIRMS`, ...), with `←` in
    /// front when the edge was followed against its direction.
    pub via: String,
    /// Its activation from the start (decay 0.5 per hop times the edge weights, max over
    /// paths).
    pub activation: f64,
}

/// What a breadth-first walk from one record reached, and how.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Traversal {
    /// The start.
    pub start: LayerRecord,
    /// Every record reached, by depth then activation.
    pub steps: Vec<TraversalStep>,
}

impl Traversal {
    /// The steps into `layer`.
    pub fn in_layer(&self, layer: LayerKind) -> impl Iterator<Item = &TraversalStep> {
        self.steps.iter().filter(move |s| s.record.layer == layer)
    }
}

/// Hops of a knowledge context's spread (`knowledge_params`).
const KNOWLEDGE_DEPTH: u32 = 2;

/// The activation settings of the hub's cross-layer queries.
fn hub_params() -> CrossParams {
    let activation = ActivationParams::new(0.5, 0.01, 3).unwrap_or(ActivationParams::DEFAULT);
    CrossParams::new(activation)
}

/// The activation settings of a knowledge context: knowledge only, so activation never
/// flows from a concept back into its (possibly thousands of) episodes; and two hops, not
/// three: an episode's concepts (INSTANCE_OF), then what is known about them (their
/// relationships, categories and the patterns that confirm them). A third hop walks the
/// co-occurrence relationships of every concept reached at the second (a person or a room
/// is related to nearly everything seen with it): in the hub bench it adds 94 records to
/// 165, mostly weakly related concepts that then rank by their confidence, for 13x the time
/// (`docs/decisions.md`, "The knowledge context spreads two hops").
fn knowledge_params() -> CrossParams {
    let activation = ActivationParams::new(0.5, 0.01, KNOWLEDGE_DEPTH).unwrap_or(ActivationParams::DEFAULT);
    let mut params = CrossParams::new(activation);
    params.forward = params.forward.without(CrossEdgeKind::DerivedFrom);
    params.backward = params.backward.without(CrossEdgeKind::InstanceOf);
    params
}

impl MemoryHub {
    fn layer_graphs(&self) -> LayerGraphs<'_> {
        LayerGraphs::new()
            .with(LayerKind::Hippocampus, self.hippocampus.associative_graph())
            .with(LayerKind::Atl, self.atl.concept_graph())
            .with(LayerKind::AngularGyrus, self.angular_gyrus.math_graph())
            .with(LayerKind::Cerebellum, self.skills.skill_graph())
    }

    /// The layer record of `id`, when a layer holds it.
    pub fn layer_record(&self, id: RecordId) -> Option<LayerRecord> {
        self.layer_of(id).map(|layer| LayerRecord::new(layer, id))
    }

    /// Cross-layer activation from `seeds` (ids in any layer; unknown ids are skipped):
    /// everything reached, grouped by layer (seeds excluded).
    pub fn recall_with_knowledge(&self, seeds: &[RecordId]) -> CrossActivation {
        let seeds: Vec<LayerRecord> = seeds.iter().filter_map(|&id| self.layer_record(id)).collect();
        self.graph.activate_with(&seeds, &self.layer_graphs(), &hub_params())
    }

    /// The name a person would recognise `record` by.
    pub fn record_name(&self, record: LayerRecord) -> String {
        match record.layer {
            LayerKind::Hippocampus => self.hippocampus.peek(record.id).map(episode_line),
            LayerKind::Atl => self.atl.record(record.id).map(|r| r.name().to_owned()),
            LayerKind::AngularGyrus => self.angular_gyrus.record(record.id).map(|r| r.name().to_owned()),
            LayerKind::Cerebellum => self.skills.skill(record.id).map(|s| s.name.clone()),
        }
        .unwrap_or_else(|| record.id.to_string())
    }

    /// Every typed edge of `record`, both directions: `(other end, type, weight)`, the type
    /// prefixed with `←` when the edge points at `record`.
    fn edges_of(&self, record: LayerRecord, out: &mut Vec<(LayerRecord, String, f64)>) {
        for e in self.graph.linked(record, None, None) {
            out.push((e.to, crossgraph::kind_name(e.kind).to_owned(), e.weight));
        }
        for e in self.graph.incoming(record, None, None) {
            out.push((e.from, format!("← {}", crossgraph::kind_name(e.kind)), e.weight));
        }
        let id = record.id;
        match record.layer {
            LayerKind::Atl => {
                for r in self.atl.relationships_of(id).unwrap_or_default() {
                    let (other, via) = if r.source == id {
                        (r.target, r.relationship.to_owned())
                    } else {
                        (r.source, format!("← {}", r.relationship))
                    };
                    out.push((LayerRecord::new(LayerKind::Atl, other), via, r.weight));
                }
            }
            LayerKind::AngularGyrus => {
                for (other, relation, weight) in self.angular_gyrus.links_of(id) {
                    out.push((
                        LayerRecord::new(LayerKind::AngularGyrus, other),
                        relation.as_str().to_owned(),
                        weight,
                    ));
                }
            }
            LayerKind::Hippocampus => {
                for (other, weight) in self.hippocampus.associated_ids(id) {
                    out.push((
                        LayerRecord::new(LayerKind::Hippocampus, other),
                        "ASSOCIATES".to_owned(),
                        weight,
                    ));
                }
            }
            LayerKind::Cerebellum => {
                self.skills.skill_graph().for_each_outgoing(id, &mut |other, kind, weight| {
                    out.push((LayerRecord::new(LayerKind::Cerebellum, other), format!("{kind:?}"), weight));
                });
            }
        }
    }

    /// A breadth-first walk of at most `max_depth` hops from `start` over every typed edge
    /// (module docs), each record listed once with the edge it was first reached by; within
    /// a depth, records of higher activation first. Episodes reached through the
    /// hippocampus's own associations are listed only at depth 1, so that a crowded episodic
    /// graph does not drown the other layers. Errors: `start` is held by no layer.
    pub fn traversal(&self, start: RecordId, max_depth: u32) -> Result<Traversal> {
        let start = self.layer_record(start).ok_or(super::Error::UnknownRecord { id: start })?;
        let activation = self.graph.activate_with(&[start], &self.layer_graphs(), &hub_params());
        let mut seen: HashSet<LayerRecord> = HashSet::from([start]);
        let mut steps = Vec::new();
        let mut queue = VecDeque::from([(start, 0u32)]);
        let mut edges = Vec::new();
        while let Some((at, depth)) = queue.pop_front() {
            if depth >= max_depth {
                continue;
            }
            edges.clear();
            self.edges_of(at, &mut edges);
            let mut level: Vec<TraversalStep> = Vec::new();
            for (other, via, _) in edges.drain(..) {
                if seen.contains(&other) || self.layer_of(other.id) != Some(other.layer) {
                    continue;
                }
                if other.layer == LayerKind::Hippocampus && at.layer == LayerKind::Hippocampus && depth > 0 {
                    continue;
                }
                seen.insert(other);
                level.push(TraversalStep {
                    depth: depth + 1,
                    record: other,
                    name: self.record_name(other),
                    from: at,
                    via,
                    activation: activation.get(other).unwrap_or(0.0),
                });
            }
            level.sort_by(|a, b| b.activation.total_cmp(&a.activation).then(a.record.cmp(&b.record)));
            for s in &level {
                queue.push_back((s.record, s.depth));
            }
            steps.extend(level);
        }
        steps.sort_by(|a, b| a.depth.cmp(&b.depth).then(b.activation.total_cmp(&a.activation)));
        Ok(Traversal { start, steps })
    }

    /// The seeds a text query starts from, with their own activation: the episodes it
    /// recalls (1.0: they only pass activation on) and the concepts whose names are like it
    /// (their similarity).
    fn text_seeds(&self, text: &str) -> Vec<(LayerRecord, f64)> {
        let mut seeds: Vec<(LayerRecord, f64)> = self
            .hippocampus
            .recall(&RecallFilter::new().query(text), 10)
            .into_iter()
            .map(|e| (LayerRecord::new(LayerKind::Hippocampus, e.id()), 1.0))
            .collect();
        for (id, score) in self.atl.recall_similar(text, 5) {
            if score > 0.0 {
                seeds.push((LayerRecord::new(LayerKind::Atl, id), score.min(1.0)));
            }
        }
        seeds
    }

    /// What the memory knows about `query`, for an LLM: ATL concepts, angular-gyrus records
    /// and skills in one ranked list of at most `limit` entries (module docs); render it
    /// with [`KnowledgeContext::render`].
    ///
    /// Reached from the query's seeds by cross-layer activation (a knowledge record that is
    /// a seed itself counts with its own match: 1 for a seed given by id, the name
    /// similarity for a text query). Every layer that has a candidate gets its best one in
    /// the list before the remaining places go by relevance, so that statistical knowledge
    /// is not crowded out by a dozen related concepts (the seed's "one unified list" that
    /// holds both). With nothing reached, the most confident concepts and patterns stand in.
    pub fn knowledge_context(&self, query: &KnowledgeQuery, limit: usize) -> Result<KnowledgeContext> {
        let _s = tracing::debug_span!("hub_knowledge_context", limit).entered();
        let (seeds, asked) = match query {
            KnowledgeQuery::Text(text) => (self.text_seeds(text), text.clone()),
            KnowledgeQuery::Seeds(ids) => (
                ids.iter().filter_map(|&id| self.layer_record(id)).map(|r| (r, 1.0)).collect(),
                format!("{} records", ids.len()),
            ),
        };
        // One reading of the clock, so a record's numbers when ranked and its listed entry agree.
        let now = self.clock.now();
        // Every knowledge record reached, as bare numbers: full entries (names, definitions,
        // relationships) are built for the few that are listed.
        let mut pool: Vec<(LayerRecord, Candidate)> = Vec::new();
        if !seeds.is_empty() {
            let starts: Vec<LayerRecord> = seeds.iter().map(|s| s.0).collect();
            // Seeds pass activation to their knowledge, never through the episodic graph.
            let layers = LayerGraphs::new()
                .with(LayerKind::Atl, self.atl.concept_graph())
                .with(LayerKind::AngularGyrus, self.angular_gyrus.math_graph())
                .with(LayerKind::Cerebellum, self.skills.skill_graph());
            let activation = self.graph.activate_with(&starts, &layers, &knowledge_params());
            pool.reserve(activation.len() + seeds.len());
            // A knowledge record that is a seed counts with the larger of its own match and
            // its activation (episodes are never listed: they need no merging).
            let mut own: Vec<(LayerRecord, f64)> = Vec::new();
            for &(record, act) in &seeds {
                if record.layer == LayerKind::Hippocampus {
                    continue;
                }
                match own.iter_mut().find(|(r, _)| *r == record) {
                    Some(slot) => slot.1 = slot.1.max(act),
                    None => own.push((record, act)),
                }
            }
            for (record, act) in activation.iter() {
                let act = match own.iter_mut().find(|(r, _)| *r == record) {
                    Some(slot) => std::mem::replace(&mut slot.1, f64::NAN).max(act),
                    None => act,
                };
                pool.extend(self.knowledge_candidate(record, act, now).map(|c| (record, c)));
            }
            for (record, act) in own {
                if !act.is_nan() {
                    pool.extend(self.knowledge_candidate(record, act, now).map(|c| (record, c)));
                }
            }
        }
        if pool.is_empty() {
            pool = self.fallback_candidates(now);
        }
        let min_trust = self.config.min_context_trust;
        let numbers: Vec<Candidate> = pool.iter().map(|p| p.1).collect();
        let chosen = context::select(
            &numbers,
            &RankOptions { limit, min_trust, low_trust: LowTrust::List { limit: LOW_TRUST_LISTED } },
        )?;
        let listed = one_of_each_layer_first(&pool, &chosen.entries, limit, min_trust);
        let entry = |idx: usize, below: bool| -> Result<KnowledgeEntry> {
            let (record, c) = pool[idx];
            let mut e = self
                .knowledge_entry(record, c.activation, now)
                .ok_or(super::Error::UnknownRecord { id: c.id })?;
            e.validate()?;
            // The ranking read the same numbers the entry carries.
            debug_assert_eq!(Candidate::of(&e), c, "the candidate of {record:?} disagrees with its entry");
            e.relevance = c.relevance();
            e.below_trust_floor = below;
            context::keep_heaviest(&mut e.relationships);
            Ok(e)
        };
        let entries = listed.iter().map(|&i| entry(i, false)).collect::<Result<Vec<_>>>()?;
        let low_trust = chosen.low_trust.iter().map(|&i| entry(i, true)).collect::<Result<Vec<_>>>()?;
        Ok(KnowledgeContext { query: asked, entries, low_trust })
    }

    /// The most confident concepts and patterns, with no activation.
    fn fallback_candidates(&self, now: Timestamp) -> Vec<(LayerRecord, Candidate)> {
        let mut out: Vec<(LayerRecord, Candidate)> = MemoryLayer::iter(&self.atl)
            .filter(|r| r.confidence() >= 0.5)
            .map(|r| LayerRecord::new(LayerKind::Atl, r.id()))
            .filter_map(|record| self.knowledge_candidate(record, 0.0, now).map(|c| (record, c)))
            .collect();
        out.extend(
            self.angular_gyrus
                .patterns()
                .into_iter()
                .map(|r| LayerRecord::new(LayerKind::AngularGyrus, r.meta.id))
                .filter_map(|record| self.knowledge_candidate(record, 0.0, now).map(|c| (record, c))),
        );
        out
    }

    /// The ranking numbers of a knowledge record, exactly when
    /// [`knowledge_entry`](Self::knowledge_entry) makes an entry of it (with the same
    /// confidence and trust), without building any of its text.
    fn knowledge_candidate(&self, record: LayerRecord, activation: f64, now: Timestamp) -> Option<Candidate> {
        let id = record.id;
        let rank = |trace| maxim_core::rank::RankConfig { trace, ..maxim_core::rank::RankConfig::default() };
        let (confidence, trust, memory) = match record.layer {
            LayerKind::Hippocampus => return None,
            LayerKind::Atl => {
                let r = self.atl.record(id)?;
                let memory = KnowledgeEntry::memory_of(r.meta(), now, &rank(self.atl.config().trace));
                (r.confidence(), r.meta().trust, memory)
            }
            LayerKind::AngularGyrus => {
                let entry = self.angular_gyrus.record(id)?;
                if entry.is_built_in() {
                    return None;
                }
                let r = entry.as_full()?;
                let memory =
                    KnowledgeEntry::memory_of(&r.meta, now, &rank(self.angular_gyrus.config().trace));
                (r.confidence, r.meta.trust, memory)
            }
            LayerKind::Cerebellum => {
                let s = self.skills.skill(id)?;
                if s.is_retired() {
                    return None;
                }
                let memory = KnowledgeEntry::memory_of(&s.meta, now, &self.skills.config().rank);
                (s.success_rate(), s.meta.trust, memory)
            }
        };
        Some(Candidate { id, activation, confidence, trust, memory })
    }

    /// The context entry of a knowledge record (`None` for episodes, built-in constants and
    /// records no layer holds).
    fn knowledge_entry(
        &self,
        record: LayerRecord,
        activation: f64,
        now: Timestamp,
    ) -> Option<KnowledgeEntry> {
        let id = record.id;
        // The layer's own trace settings; the seed's memory score otherwise.
        let rank = |trace| maxim_core::rank::RankConfig { trace, ..maxim_core::rank::RankConfig::default() };
        match record.layer {
            LayerKind::Hippocampus => None,
            LayerKind::Atl => {
                let r = self.atl.record(id)?;
                let memory = KnowledgeEntry::memory_of(r.meta(), now, &rank(self.atl.config().trace));
                let mut e = KnowledgeEntry::new(id, LayerKind::Atl, r.name(), r.confidence(), r.meta().trust)
                    .with_category(r.category())
                    .with_activation(activation)
                    .with_memory(memory)
                    .with_provenance(format!("{} ({:?})", r.meta().source, r.provenance()));
                if let Some(c) = r.as_concept() {
                    e = e.with_definition(c.definition.clone());
                }
                for rel in self
                    .atl
                    .find_relationships(id, None, atl::Direction::Outgoing, context::MAX_RELATIONSHIPS)
                    .unwrap_or_default()
                {
                    let target = self
                        .atl
                        .record(rel.target)
                        .map_or_else(|| rel.target.to_string(), |t| t.name().to_owned());
                    e = e.with_relationship(ContextRelation::new(rel.relationship, target, rel.weight));
                }
                Some(e)
            }
            LayerKind::AngularGyrus => {
                let entry = self.angular_gyrus.record(id)?;
                if entry.is_built_in() {
                    return None;
                }
                let r = entry.as_full()?;
                let memory =
                    KnowledgeEntry::memory_of(&r.meta, now, &rank(self.angular_gyrus.config().trace));
                let mut e =
                    KnowledgeEntry::new(id, LayerKind::AngularGyrus, &r.name, r.confidence, r.meta.trust)
                        .with_category(format!("math:{}", r.category.as_str()))
                        .with_definition(r.verbal.clone())
                        .with_activation(activation)
                        .with_memory(memory)
                        .with_provenance(r.meta.source.to_string());
                for (other, relation, weight) in
                    self.angular_gyrus.links_of(id).into_iter().take(context::MAX_RELATIONSHIPS)
                {
                    let name = self
                        .angular_gyrus
                        .record(other)
                        .map_or_else(|| other.to_string(), |o| o.name().to_owned());
                    e = e.with_relationship(ContextRelation::new(relation.as_str(), name, weight));
                }
                Some(e)
            }
            LayerKind::Cerebellum => {
                let s = self.skills.skill(id)?;
                if s.is_retired() {
                    return None;
                }
                let steps: Vec<String> = s.steps.iter().map(|st| st.tool.clone()).collect();
                let e =
                    KnowledgeEntry::new(id, LayerKind::Cerebellum, &s.name, s.success_rate(), s.meta.trust)
                        .with_category(format!("skill:{}", s.status))
                        .with_definition(format!("steps: {}", steps.join(" → ")))
                        .with_activation(activation)
                        .with_memory(KnowledgeEntry::memory_of(&s.meta, now, &self.skills.config().rank))
                        .with_provenance(s.meta.source.to_string());
                Some(e)
            }
        }
    }
}

/// How many entries below the trust floor a knowledge context lists apart.
const LOW_TRUST_LISTED: usize = 3;

/// The positions in `pool` a knowledge context lists, best first: the first `limit` of the
/// ranking (relevance, then id, then position) of the entries at or above `min_trust`,
/// except that the best entry of every layer present is kept. `top` is that ranking's first
/// `limit` ([`context::select`]).
///
/// Only `top` and the layers' best are ranked: the places that do not go to a layer's best
/// go to the best of the rest, and those are all among `top`.
fn one_of_each_layer_first(
    pool: &[(LayerRecord, Candidate)],
    top: &[usize],
    limit: usize,
    min_trust: f64,
) -> Vec<usize> {
    let rank = |a: usize, b: usize| {
        let (x, y) = (&pool[a].1, &pool[b].1);
        y.relevance().total_cmp(&x.relevance()).then(x.id.cmp(&y.id)).then(a.cmp(&b))
    };
    // The best of each layer, among the entries at or above the floor.
    let mut best: [Option<usize>; 4] = [None; 4];
    for (i, (record, c)) in pool.iter().enumerate() {
        if c.trust.get() < min_trust {
            continue;
        }
        let slot = &mut best[layer_slot(record.layer)];
        if slot.is_none_or(|b| rank(i, b).is_lt()) {
            *slot = Some(i);
        }
    }
    let mut order: Vec<usize> = top.to_vec();
    for b in best.into_iter().flatten() {
        if !order.contains(&b) {
            order.push(b);
        }
    }
    order.sort_by(|&a, &b| rank(a, b));
    let mut keep = vec![false; order.len()];
    let mut layers_seen: Vec<LayerKind> = Vec::with_capacity(4);
    let mut kept = 0;
    for (k, &i) in order.iter().enumerate() {
        let layer = pool[i].0.layer;
        if kept < limit && !layers_seen.contains(&layer) {
            layers_seen.push(layer);
            keep[k] = true;
            kept += 1;
        }
    }
    for k in &mut keep {
        if kept >= limit {
            break;
        }
        if !*k {
            *k = true;
            kept += 1;
        }
    }
    order.into_iter().zip(keep).filter_map(|(i, k)| k.then_some(i)).collect()
}

/// A dense position for each layer.
fn layer_slot(layer: LayerKind) -> usize {
    match layer {
        LayerKind::Hippocampus => 0,
        LayerKind::Atl => 1,
        LayerKind::AngularGyrus => 2,
        LayerKind::Cerebellum => 3,
    }
}

/// One line about an episode: its tool, goal, outcome and what it saw.
pub fn episode_line(e: &hippocampus::Episode) -> String {
    let s = e.summary();
    let outcome = match s.success {
        Some(true) => "succeeded",
        Some(false) => "failed",
        None => "outcome unknown",
    };
    let mut line = String::new();
    if !s.tool.is_empty() {
        line.push_str(&s.tool);
        line.push(' ');
    }
    line.push_str(outcome);
    if let Some(goal) = &s.goal {
        line.push_str(" (goal: ");
        line.push_str(goal);
        line.push(')');
    }
    if !s.detected_objects.is_empty() {
        line.push_str(", saw ");
        line.push_str(&s.detected_objects.join(", "));
    }
    line
}
