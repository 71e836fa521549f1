//! Capture through the hub: one episode feeds every layer.
//!
//! The episode is validated and stored by the hippocampus first (journaled: from then on it
//! is acknowledged). Then, in this order:
//! 1. its concepts (objects, people, place, goal words, tool: [`crate::extract()`]) are found
//!    or created in the ATL, crediting the episode, with the episode's source and trust;
//!    each gets a reference to the episode and an INSTANCE_OF edge from it, and the §13
//!    inline relationships relate them to each other (the ATL's part is one write and, once
//!    the concepts are known, one journal record: [`atl::Atl::record_episode`]; the edges
//!    are one record of the cross-layer graph: [`crossgraph::CrossLayerGraph::add_edges_from`]);
//! 2. a known tool outcome and goal outcome teach NAc (`tool:<name>` → `tool:<name>:positive`
//!    or `:negative`, and the same for the goal) and the statistician;
//! 3. the hub's metric series get one event each;
//! 4. whatever the capture evicted is removed everywhere.
//!
//! Steps 1–3 derive knowledge from an episode that is already kept: when one of them fails
//! (a concept name the ATL refuses, a full graph) the episode stays, the failure is logged
//! and returned in [`Captured::warnings`], and the other steps still run.

use atl::{EpisodeConcept, EpisodeRelationship, EpisodeWrite, RecordedEpisode};
use hippocampus::{Episode, NewEpisode};
use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId, Timestamp};
use nac::{Observation, Valence};

use super::{Error, MemoryHub, Result};
use crate::extract::{self, Category};

/// What a capture did beyond storing the episode.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Captured {
    /// The episode's id.
    pub id: RecordId,
    /// The concepts it named, found or created.
    pub concepts: Vec<RecordId>,
    /// How many of them were created by this capture.
    pub concepts_created: usize,
    /// Inline relationships defined or reinforced.
    pub relationships: usize,
    /// NAc observations made.
    pub observations: usize,
    /// Records the capture evicted (from any layer) and removed everywhere.
    pub evicted: Vec<RecordId>,
    /// Derivations that failed; the episode itself is kept.
    pub warnings: Vec<String>,
}

/// A weight for the INSTANCE_OF edge from an episode to a concept it names.
const INSTANCE_WEIGHT: f64 = extract::INSTANCE_OF_WEIGHT;
/// Weight and confidence of a new inline relationship (§13).
const INLINE_WEIGHT: f64 = 0.3;

impl MemoryHub {
    /// Captures `episode` into the hub's memory and feeds every layer from it (see the
    /// [module docs](self)). Returns the episode's id.
    ///
    /// Errors: the hippocampus refuses the episode (bad numbers, a value nested too deep,
    /// another partition's record: [`Error::PartitionMismatch`]); nothing is stored then.
    pub fn capture(&mut self, episode: NewEpisode) -> Result<RecordId> {
        self.capture_detailed(episode).map(|c| c.id)
    }

    /// [`capture`](Self::capture), returning what was derived from the episode.
    pub fn capture_detailed(&mut self, mut episode: NewEpisode) -> Result<Captured> {
        self.drain_error_traces(); // the program's own errors first (`hub::errors`)
        let _s = tracing::debug_span!("hub_capture").entered();
        match &episode.partition {
            Some(p) if p != &self.partition => {
                return Err(Error::PartitionMismatch {
                    hub: self.partition.as_str().to_owned(),
                    given: p.as_str().to_owned(),
                });
            }
            _ => episode.partition = Some(self.partition.clone()),
        }
        let id = self.hippocampus.capture(episode)?;
        let mut out = Captured { id, ..Captured::default() };
        // Evictions made room for the episode: cascade them first.
        out.evicted = self.cascade_removed(&mut out.warnings);
        let Some(stored) = self.hippocampus.peek(id) else {
            // Only a zero-capacity store evicts what it just took.
            return Ok(out);
        };
        let derived = Derived::of(stored);
        let significance = stored.salience().clamp(0.0, 1.0);
        if let Err(e) = self.scn.register(id, derived.timestamp, significance) {
            warn(&mut out, format!("temporal bins: {e}"));
        }
        self.derive(&derived, &mut out);
        self.metrics.mark(derived.created_at);
        Ok(out)
    }

    /// Steps 1–3 of the module docs for an episode the hippocampus holds.
    fn derive(&mut self, episode: &Derived, out: &mut Captured) {
        self.derive_concepts(episode, out);
        self.derive_outcomes(episode, out);
    }

    fn derive_concepts(&mut self, episode: &Derived, out: &mut Captured) {
        let extraction = &episode.extraction;
        if extraction.concepts.is_empty() {
            return;
        }
        let concepts: Vec<EpisodeConcept<'_>> = extraction
            .concepts
            .iter()
            .map(|c| EpisodeConcept::new(&c.name, c.category.as_str(), &c.definition))
            .collect();
        let relationships: Vec<EpisodeRelationship<'_>> = extraction
            .relations
            .iter()
            .map(|&(a, b, kind)| EpisodeRelationship::new(a, b, kind.as_str(), INLINE_WEIGHT, INLINE_WEIGHT))
            .collect();
        let write = EpisodeWrite::new(episode.id, LayerKind::Hippocampus, &episode.source, episode.trust)
            .concepts(&concepts)
            .relationships(&relationships);
        // One journal record for the episode's concepts, references and relationships.
        let ids = match self.atl.record_episode(&write) {
            Ok(recorded) => self.link_recorded(episode, &recorded, out),
            // A name the ATL refuses (checked before anything is written): the concepts one
            // by one, so that the others are still found.
            Err(atl::Error::EmptyName { .. }) => self.derive_concepts_one_by_one(episode, out),
            Err(e) => {
                warn(out, format!("concepts of episode {}: {e}", episode.id));
                return;
            }
        };
        // A tool's concept is a kind of tool capability: the anchor the statistician's
        // patterns about it attach to.
        if let Some(i) = extraction.concepts.iter().position(|c| c.category == Category::Action)
            && let Some(Some(tool)) = ids.get(i)
            && let Err(e) = self.link_tool_capability(*tool)
        {
            warn(out, format!("tool capability of {}: {e}", extraction.concepts[i].name));
        }
    }

    /// The hub's side of an episode the ATL recorded: the knowledge index of the concepts it
    /// created, the INSTANCE_OF edges, and what it could not write, as warnings. Returns the
    /// concept ids by extraction index.
    fn link_recorded(
        &mut self,
        episode: &Derived,
        recorded: &RecordedEpisode,
        out: &mut Captured,
    ) -> Vec<Option<RecordId>> {
        let id = episode.id;
        let extraction = &episode.extraction;
        let from = LayerRecord::new(LayerKind::Hippocampus, id);
        let mut targets = Vec::with_capacity(recorded.concepts.len());
        for (i, found) in recorded.concepts.iter().enumerate() {
            let concept = &extraction.concepts[i];
            let to = LayerRecord::new(LayerKind::Atl, found.id);
            if found.created {
                self.index_knowledge(to);
            }
            targets.push(to);
            out.concepts.push(found.id);
            out.concepts_created += usize::from(found.created);
            if !recorded.referenced[i] && self.atl.record(found.id).is_some_and(|r| r.as_concept().is_none())
            {
                let e = atl::Error::Compressed { id: found.id, what: "memory references" };
                warn(out, format!("reference {} → episode {id}: {e}", concept.name));
            }
        }
        // The INSTANCE_OF edges in one journal record.
        if let Err(e) = self.graph.add_edges_from(from, &targets, CrossEdgeKind::InstanceOf, INSTANCE_WEIGHT)
        {
            warn(out, format!("INSTANCE_OF episode {id} → its {} concepts: {e}", targets.len()));
        }
        for (&(a, b, kind), defined) in extraction.relations.iter().zip(&recorded.relationships) {
            let (source, target) = (recorded.concepts[a].id, recorded.concepts[b].id);
            match defined {
                Some(_) => out.relationships += 1,
                None if source != target => {
                    warn(
                        out,
                        format!("{kind} between concepts of episode {id}: a concept is no longer held"),
                    );
                }
                None => {}
            }
        }
        recorded.concepts.iter().map(|f| Some(f.id)).collect()
    }

    /// Step 1 one concept at a time (each its own ATL write): for an episode one of whose
    /// names the ATL refuses. Returns the concept ids by extraction index.
    fn derive_concepts_one_by_one(&mut self, episode: &Derived, out: &mut Captured) -> Vec<Option<RecordId>> {
        let id = episode.id;
        let from = LayerRecord::new(LayerKind::Hippocampus, id);
        let extraction = &episode.extraction;
        let mut ids: Vec<Option<RecordId>> = Vec::with_capacity(extraction.concepts.len());
        for concept in &extraction.concepts {
            let spec = maxim_core::ConceptSpec {
                name: concept.name.clone(),
                category: concept.category.as_str().to_owned(),
                definition: concept.definition.clone(),
                provenance: maxim_core::ConceptProvenance::EpisodicConsolidation,
                source_episode: Some(id),
                source: episode.source.clone(),
                trust: episode.trust,
            };
            match self.atl.find_or_create(&spec) {
                Ok(found) => {
                    if found.created {
                        self.index_knowledge(LayerRecord::new(LayerKind::Atl, found.id));
                    }
                    out.concepts.push(found.id);
                    out.concepts_created += usize::from(found.created);
                    ids.push(Some(found.id));
                    if let Err(e) = self.atl.add_ref(found.id, LayerKind::Hippocampus, id) {
                        warn(out, format!("reference {} → episode {id}: {e}", concept.name));
                    }
                    let to = LayerRecord::new(LayerKind::Atl, found.id);
                    if let Err(e) = self.graph.add_edge(from, to, CrossEdgeKind::InstanceOf, INSTANCE_WEIGHT)
                    {
                        warn(out, format!("INSTANCE_OF episode {id} → {}: {e}", concept.name));
                    }
                }
                Err(e) => {
                    ids.push(None);
                    warn(out, format!("concept {:?} ({}): {e}", concept.name, concept.category));
                }
            }
        }
        for &(a, b, kind) in &extraction.relations {
            let (Some(Some(source)), Some(Some(target))) = (ids.get(a), ids.get(b)) else { continue };
            if source == target {
                continue;
            }
            match self.atl.define_relationship(*source, *target, kind.as_str(), INLINE_WEIGHT, INLINE_WEIGHT)
            {
                Ok(_) => out.relationships += 1,
                Err(e) => warn(out, format!("{kind} between concepts of episode {id}: {e}")),
            }
        }
        ids
    }

    fn derive_outcomes(&mut self, episode: &Derived, out: &mut Captured) {
        let Some(success) = episode.success else { return };
        let at = episode.timestamp;
        let id = episode.id;
        let value = if success { 1.0 } else { 0.0 };
        let valence = if success { Valence::Positive } else { Valence::Negative };
        let suffix = if success { ":positive" } else { ":negative" };
        // One buffer holds the event (`tool:<name>`), then the outcome (the event and the
        // suffix), then the metric (the event and `:success`).
        let mut key = String::new();
        let outcomes = [("tool", "tool_result", &episode.tool), ("goal", "goal_result", &episode.goal_key)];
        for (kind, result, name) in outcomes {
            let Some(name) = name else { continue };
            let event = outcome_key(&mut key, kind, name, suffix);
            let observation = Observation::new(kind, &key[..event], result, &key, valence).memory(id);
            self.observe(&observation, out);
            // The statistician's metric is the series' (`tool:<name>:success`, what
            // `record_tool_result` and `record_goal` name; the names are trimmed already).
            metric_key(&mut key, kind, name);
            if let Err(e) = self.statistician.observe(&key, value, at) {
                warn(out, format!("statistician, {kind} {name}: {e}"));
            }
            self.metrics.record(&key, at, value);
        }
    }

    fn observe(&mut self, observation: &Observation<'_>, out: &mut Captured) {
        match self.nac.observe(observation) {
            Ok(_) => out.observations += 1,
            Err(e) => warn(out, format!("NAc: {e}")),
        }
    }

    /// Relates the action concept `tool` IS_A the category concept `tool capability`.
    pub(super) fn link_tool_capability(&mut self, tool: RecordId) -> Result<()> {
        if self.tools_linked.contains(&tool) {
            return Ok(());
        }
        let mut spec = atl::spec(TOOL_CAPABILITY, "category");
        "What the agent's tools can do, and how reliably".clone_into(&mut spec.definition);
        spec.source = maxim_core::Source::AgentInference;
        spec.trust = 0.9;
        let category = self.atl.find_or_create(&spec)?.id;
        let held = self
            .atl
            .find_relationships(tool, Some("IS_A"), atl::Direction::Outgoing, 16)?
            .iter()
            .any(|r| r.target == category);
        if !held {
            self.atl.define_relationship(tool, category, "IS_A", 0.8, 0.8)?;
        }
        self.tools_linked.insert(tool);
        Ok(())
    }

    /// Feeds the metric series and the statistician with the episodes captured after the
    /// series' last save (they are in the journaled hippocampus; the series are snapshots).
    pub(super) fn catch_up_metrics(&mut self) {
        let upto = self.metrics.upto();
        let mut missed: Vec<(Timestamp, RecordId)> = self
            .hippocampus
            .iter()
            .filter(|e| upto.is_none_or(|u| e.meta().created_at > u))
            .map(|e| (e.meta().created_at, e.id()))
            .collect();
        if missed.is_empty() {
            return;
        }
        missed.sort_unstable();
        tracing::info!(
            episodes = missed.len(),
            "feeding the metric series the episodes after their last save"
        );
        for (created, id) in missed {
            let Some(episode) = self.hippocampus.peek(id) else { continue };
            let derived = Derived::of(episode);
            if let Some(success) = derived.success {
                let value = if success { 1.0 } else { 0.0 };
                if let Some(tool) = &derived.tool {
                    let _ = self.statistician.record_tool_result(tool, success, derived.timestamp);
                    self.metrics.record(&format!("tool:{tool}:success"), derived.timestamp, value);
                }
                if let Some(key) = &derived.goal_key {
                    let _ = self.statistician.record_goal(key, success, derived.timestamp);
                    self.metrics.record(&format!("goal:{key}:success"), derived.timestamp, value);
                }
            }
            self.metrics.mark(created);
        }
    }
}

/// What the hub derives from one stored episode, read out of it once (so the stores can be
/// written while nothing borrows the hippocampus).
struct Derived {
    id: RecordId,
    created_at: Timestamp,
    timestamp: Timestamp,
    extraction: extract::Extraction,
    /// The episode's source and trust, which the concepts it creates take.
    source: maxim_core::Source,
    trust: f64,
    success: Option<bool>,
    tool: Option<String>,
    goal_key: Option<String>,
}

impl Derived {
    fn of(episode: &Episode) -> Self {
        let extraction = extract::extract(episode);
        let tool = Some(episode.tool_name().trim()).filter(|t| !t.is_empty()).map(str::to_owned);
        let goal_key = episode.goal().map(goal_key).filter(|k| !k.is_empty());
        Self {
            id: episode.id(),
            created_at: episode.meta().created_at,
            timestamp: episode.meta().timestamp,
            extraction,
            source: episode.meta().source.clone(),
            trust: episode.meta().trust.get(),
            success: episode.success(),
            tool,
            goal_key,
        }
    }
}

/// The normalised tokens of `goal` joined by `_` (`normalize_tokens(goal).join("_")`), in one
/// string.
fn goal_key(goal: &str) -> String {
    let mut key = String::with_capacity(goal.len());
    maxim_core::text::for_each_token(goal, |token| {
        if !key.is_empty() {
            key.push('_');
        }
        key.push_str(token);
    });
    key
}

/// The name of the category concept every tool concept IS_A.
pub(super) const TOOL_CAPABILITY: &str = "tool capability";

/// Writes `<kind>:<name><suffix>` into `key`; returns the length of the event
/// `<kind>:<name>` at its start.
fn outcome_key(key: &mut String, kind: &str, name: &str, suffix: &str) -> usize {
    key.clear();
    key.push_str(kind);
    key.push(':');
    key.push_str(name);
    let event = key.len();
    key.push_str(suffix);
    event
}

/// Writes the metric `<kind>:<name>:success` into `key`.
fn metric_key(key: &mut String, kind: &str, name: &str) {
    key.clear();
    key.push_str(kind);
    key.push(':');
    key.push_str(name);
    key.push_str(":success");
}

fn warn(out: &mut Captured, message: String) {
    tracing::warn!(episode = %out.id, "{message}");
    out.warnings.push(message);
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_goal_key_joins_the_normalised_tokens() {
        for goal in [
            "fetch the mug",
            "  Opening the DOORS, quickly! ",
            "",
            "the a of",
            "navigate to 42 rooms",
            "café au lait",
        ] {
            let joined = maxim_core::text::normalize_tokens(goal).join("_");
            assert_eq!(super::goal_key(goal), joined, "{goal:?}");
        }
    }
}
