//! The reference server's nine tools over the hub: entities are ATL concepts, observations
//! are episodes linked INSTANCE_OF to their concept, relations are ATL relationships.
//!
//! - **Names.** An entity is found by its exact name (trimmed), else by the name as the ATL
//!   normalises it (`John_Smith` and `john smith` are one entity); names are unique across
//!   types, as in the reference server.
//! - **Observations** are episodes whose run is [`OBSERVATION_RUN`], the text as their
//!   transcript, marked as a successful user interaction so the default retention keeps them
//!   (the reference server never forgets a fact); an entity's observations are the texts of
//!   those linked to it, oldest first, and its concept's definition is kept to them, newest
//!   first, so a knowledge context shows what is known about it.
//! - **Relation types** are written in the ATL's form (`works at` → `WORKS_AT`): a type that
//!   is not built in is proposed at run time with the client's spelling in its description
//!   (`mcp:works at`), which is how it is read back. Built-in types (`IS_A`, `PART_OF`, ...)
//!   read back in their own name.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use atl::Direction;
use hippocampus::NewEpisode;
use maxim_core::{
    ConceptProvenance, CrossEdgeKind, LayerKind, LayerRecord, MemoryLayer, MemoryRecord, RecordId,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

use super::{
    MAX_QUERY_CHARS, MAX_TEXT_CHARS, McpMemory, ToolError, ToolOutput, check_items, check_len, check_name,
    failed,
};
use crate::MemoryHub;
use crate::hub::{Forget, RecallOptions};

/// The run of every observation episode.
pub const OBSERVATION_RUN: &str = "mcp:observation";
/// The description prefix of a relationship type proposed through the server, before the
/// client's own spelling.
pub const TYPE_PREFIX: &str = "mcp:";
/// Longest definition kept from an entity's observations, in characters.
const MAX_DEFINITION_CHARS: usize = 2000;
/// Entities `search_nodes` returns at most.
const SEARCH_LIMIT: usize = 50;
/// The weight of a relation created through the server.
const RELATION_WEIGHT: f64 = 0.8;

/// An entity, as the reference server reads and writes it.
#[allow(clippy::struct_field_names, reason = "the reference server's wire names")]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Entity {
    /// The name of the entity.
    name: String,
    /// The type of the entity.
    entity_type: String,
    /// An array of observation contents associated with the entity.
    #[serde(default)]
    observations: Vec<String>,
}

/// A relation, as the reference server reads and writes it.
#[allow(clippy::struct_field_names, reason = "the reference server's wire names")]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Relation {
    /// The name of the entity where the relation starts.
    from: String,
    /// The name of the entity where the relation ends.
    to: String,
    /// The type of the relation (in active voice).
    relation_type: String,
}

/// `create_entities`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateEntities {
    /// The entities to create.
    entities: Vec<Entity>,
}

/// `create_relations` and `delete_relations`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Relations {
    /// The relations.
    relations: Vec<Relation>,
}

/// One entity's new observations.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct NewObservations {
    /// The name of the entity to add the observations to.
    entity_name: String,
    /// An array of observation contents to add.
    contents: Vec<String>,
}

/// `add_observations`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AddObservations {
    /// The observations to add, by entity.
    observations: Vec<NewObservations>,
}

/// `delete_entities`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct DeleteEntities {
    /// An array of entity names to delete.
    entity_names: Vec<String>,
}

/// One entity's observations to delete.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Deletion {
    /// The name of the entity containing the observations.
    entity_name: String,
    /// An array of observations to delete.
    observations: Vec<String>,
}

/// `delete_observations`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteObservations {
    /// The observations to delete, by entity.
    deletions: Vec<Deletion>,
}

/// `read_graph` (and the other tools without arguments of their own).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArguments {}

/// `search_nodes`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchNodes {
    /// The search query, matched against entity names, types and observations by recall.
    query: String,
}

/// `open_nodes`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenNodes {
    /// An array of entity names to retrieve.
    names: Vec<String>,
}

/// The relationship type the ATL keeps for the client's `relation_type`: ASCII letters and
/// digits uppercased, any other letter or digit as `U` and its code point in hex, every
/// other run of characters as one `_`; `R_` in front when it would not start with a letter;
/// at most 64 bytes. `None` when nothing is left.
pub(super) fn type_key(relation_type: &str) -> Option<String> {
    let mut out = String::with_capacity(relation_type.len());
    let mut gap = false;
    for c in relation_type.trim().chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c.to_ascii_uppercase());
        } else if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            let _ = write!(out, "U{:04X}", u32::from(c));
        } else {
            gap = true;
        }
    }
    if out.is_empty() {
        return None;
    }
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert_str(0, "R_");
    }
    if out.len() > 64 {
        out.truncate(64);
        while out.ends_with('_') {
            out.pop();
        }
    }
    Some(out)
}

/// The name a relationship type reads back as: the client's spelling for a type proposed
/// through the server, else the type's own name.
fn type_display(hub: &MemoryHub, key: &str) -> String {
    hub.atl()
        .registry()
        .get(key)
        .filter(|t| !t.builtin)
        .and_then(|t| t.description.strip_prefix(TYPE_PREFIX))
        .unwrap_or(key)
        .to_owned()
}

/// The concept an entity name stands for: the exact (trimmed) name first, else the same
/// name as the ATL normalises it; the first in the store's order when several match.
pub(super) fn find_entity(hub: &MemoryHub, name: &str) -> Option<RecordId> {
    let name = name.trim();
    let atl = hub.atl();
    if let Some(r) = MemoryLayer::iter(atl).find(|r| r.name() == name) {
        return Some(r.id());
    }
    let key = atl::names::name_key(name);
    if key.is_empty() {
        return None;
    }
    let mut scratch = String::new();
    MemoryLayer::iter(atl)
        .find(|r| {
            atl::names::name_key_into(r.name(), &mut scratch);
            scratch == key
        })
        .map(MemoryRecord::id)
}

/// The observation episodes of concept `id`, oldest first: `(episode, text)`.
pub(super) fn observations_of(hub: &MemoryHub, id: RecordId) -> Vec<(RecordId, String)> {
    let concept = LayerRecord::new(LayerKind::Atl, id);
    let mut out: Vec<(maxim_core::Timestamp, RecordId, String)> = hub
        .cross_graph()
        .incoming(concept, Some(LayerKind::Hippocampus), Some(CrossEdgeKind::InstanceOf))
        .into_iter()
        .filter_map(|e| {
            let episode = hub.hippocampus().peek(e.from.id)?.as_full()?;
            if episode.run_id != OBSERVATION_RUN {
                return None;
            }
            let text = episode.perception.transcript.clone()?;
            Some((episode.meta.created_at, e.from.id, text))
        })
        .collect();
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(_, id, text)| (id, text)).collect()
}

/// The definition an entity's concept keeps: its observations, newest first, joined by
/// `; `, at most [`MAX_DEFINITION_CHARS`].
fn definition_of<'a>(observations: impl DoubleEndedIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for text in observations.rev() {
        let n = text.chars().count();
        if !out.is_empty() {
            if chars + 2 + n > MAX_DEFINITION_CHARS {
                break;
            }
            out.push_str("; ");
            chars += 2;
        }
        if n > MAX_DEFINITION_CHARS {
            out.extend(text.chars().take(MAX_DEFINITION_CHARS));
            break;
        }
        out.push_str(text);
        chars += n;
    }
    out
}

/// The entity JSON of concept `id`.
fn entity_json(hub: &MemoryHub, id: RecordId) -> Option<Json> {
    let r = hub.atl().record(id)?;
    let observations: Vec<String> = observations_of(hub, id).into_iter().map(|(_, t)| t).collect();
    Some(json!({ "name": r.name(), "entityType": r.category(), "observations": observations }))
}

/// The relations leaving concept `id` whose target `keep` accepts.
fn relations_from(hub: &MemoryHub, id: RecordId, keep: impl Fn(RecordId) -> bool, out: &mut Vec<Json>) {
    let atl = hub.atl();
    let Some(from) = atl.record(id) else { return };
    for r in atl.find_relationships(id, None, Direction::Outgoing, usize::MAX).unwrap_or_default() {
        if !keep(r.target) {
            continue;
        }
        let Some(to) = atl.record(r.target) else { continue };
        out.push(json!({
            "from": from.name(),
            "to": to.name(),
            "relationType": type_display(hub, r.relationship),
        }));
    }
}

/// The graph of `ids` (in order) and the relations between them.
fn subgraph(hub: &MemoryHub, ids: &[RecordId]) -> Json {
    let set: HashSet<RecordId> = ids.iter().copied().collect();
    let entities: Vec<Json> = ids.iter().filter_map(|&id| entity_json(hub, id)).collect();
    let mut relations = Vec::new();
    for &id in ids {
        relations_from(hub, id, |t| set.contains(&t), &mut relations);
    }
    json!({ "entities": entities, "relations": relations })
}

/// The handlers of the reference server's tools. Every handler has the catalogue's one signature (its arguments by
/// value, a result), whether or not it consumes them or can fail.
#[allow(
    clippy::needless_pass_by_value,
    clippy::unnecessary_wraps,
    reason = "the catalogue's one handler signature"
)]
impl McpMemory {
    /// A new observation episode with `text`, from the server's source and trust.
    fn observation_episode(&self, text: &str) -> NewEpisode {
        let mut e = NewEpisode::default();
        e.perception.transcript = Some(text.to_owned());
        e.outcome.success = Some(true);
        OBSERVATION_RUN.clone_into(&mut e.run_id);
        e.source = Some(self.config.source.clone());
        e.trust = Some(self.config.trust);
        e
    }

    /// Captures `texts` as observations of concept `id` and keeps its definition to them.
    fn observe(&self, hub: &mut MemoryHub, id: RecordId, texts: &[&str]) -> Result<(), ToolError> {
        for text in texts {
            let episode = hub.capture(self.observation_episode(text)).map_err(|e| failed(&e))?;
            hub.link_instance(episode, id).map_err(|e| failed(&e))?;
        }
        Self::refresh_definition(hub, id)
    }

    /// Sets the definition of concept `id` from its observations (a compressed concept keeps
    /// none and is left as it is).
    fn refresh_definition(hub: &mut MemoryHub, id: RecordId) -> Result<(), ToolError> {
        if hub.atl().concept(id).is_none() {
            return Ok(());
        }
        let observations = observations_of(hub, id);
        let definition = definition_of(observations.iter().map(|(_, t)| t.as_str()));
        hub.set_concept_definition(id, &definition).map_err(|e| failed(&e))
    }

    pub(super) fn create_entities(&self, a: CreateEntities) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "create_entities";
        check_items(TOOL, "entities", a.entities.len())?;
        for e in &a.entities {
            check_name(TOOL, "name", &e.name)?;
            check_name(TOOL, "entityType", &e.entity_type)?;
            check_items(TOOL, "observations", e.observations.len())?;
            for o in &e.observations {
                check_len(TOOL, "observation", o, MAX_TEXT_CHARS)?;
            }
        }
        let mut hub = self.hub.lock();
        let mut seen = HashSet::new();
        let new: Vec<&Entity> = a
            .entities
            .iter()
            .filter(|e| seen.insert(e.name.trim().to_owned()) && find_entity(&hub, &e.name).is_none())
            .collect();
        let items = new.iter().map(|e| 1 + e.observations.len()).sum();
        self.spend(items, hub.clock().now())?;
        let mut created = Vec::with_capacity(new.len());
        for e in new {
            let mut spec = atl::spec(e.name.trim(), e.entity_type.trim());
            spec.source = self.config.source.clone();
            spec.trust = self.config.trust;
            spec.provenance = ConceptProvenance::AgentInference;
            let (id, fresh) = hub.state_concept(&spec).map_err(|e| failed(&e))?;
            if !fresh {
                continue;
            }
            let mut texts: Vec<&str> = Vec::with_capacity(e.observations.len());
            for o in &e.observations {
                if !texts.contains(&o.as_str()) {
                    texts.push(o);
                }
            }
            self.observe(&mut hub, id, &texts)?;
            created.push(Entity {
                name: e.name.trim().to_owned(),
                entity_type: e.entity_type.trim().to_owned(),
                observations: texts.into_iter().map(str::to_owned).collect(),
            });
        }
        let text = serde_json::to_string_pretty(&created).unwrap_or_default();
        Ok(ToolOutput { text, structured: json!({ "entities": created }) })
    }

    pub(super) fn create_relations(&self, a: Relations) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "create_relations";
        check_items(TOOL, "relations", a.relations.len())?;
        let mut keys = Vec::with_capacity(a.relations.len());
        for r in &a.relations {
            check_name(TOOL, "relationType", &r.relation_type)?;
            keys.push(type_key(&r.relation_type).ok_or_else(|| {
                ToolError::InvalidParams(format!(
                    "{TOOL}: relationType {:?} has no letter or digit",
                    r.relation_type
                ))
            })?);
        }
        let mut hub = self.hub.lock();
        // Resolve every end first: an unknown entity refuses the whole call.
        let mut ends = Vec::with_capacity(a.relations.len());
        for r in &a.relations {
            let from = find_entity(&hub, &r.from)
                .ok_or_else(|| ToolError::Failed(format!("Entity with name {} not found", r.from)))?;
            let to = find_entity(&hub, &r.to)
                .ok_or_else(|| ToolError::Failed(format!("Entity with name {} not found", r.to)))?;
            if from == to {
                return Err(ToolError::Failed(format!(
                    "a relation from {} to itself is refused: an entity is not related to itself",
                    r.from
                )));
            }
            ends.push((from, to));
        }
        let mut seen = HashSet::new();
        let mut todo = Vec::new();
        for ((r, key), &(from, to)) in a.relations.iter().zip(&keys).zip(&ends) {
            if !seen.insert((from, to, key.clone())) {
                continue;
            }
            let held = hub.atl().registry().contains(key)
                && hub
                    .atl()
                    .find_relationships(from, Some(key), Direction::Outgoing, usize::MAX)
                    .is_ok_and(|found| found.iter().any(|f| f.target == to));
            if !held {
                todo.push((r, key, from, to));
            }
        }
        self.spend(todo.len(), hub.clock().now())?;
        let mut created = Vec::with_capacity(todo.len());
        for (r, key, from, to) in todo {
            let description = format!("{TYPE_PREFIX}{}", r.relation_type.trim());
            hub.relate(from, to, key, &description, RELATION_WEIGHT, self.config.trust)
                .map_err(|e| failed(&e))?;
            created.push(r.clone());
        }
        let text = serde_json::to_string_pretty(&created).unwrap_or_default();
        Ok(ToolOutput { text, structured: json!({ "relations": created }) })
    }

    pub(super) fn add_observations(&self, a: AddObservations) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "add_observations";
        check_items(TOOL, "observations", a.observations.len())?;
        let mut total = 0usize;
        for o in &a.observations {
            check_len(TOOL, "entityName", &o.entity_name, super::MAX_NAME_CHARS)?;
            total += o.contents.len();
            for c in &o.contents {
                check_len(TOOL, "contents", c, MAX_TEXT_CHARS)?;
            }
        }
        check_items(TOOL, "contents", total)?;
        let mut hub = self.hub.lock();
        let mut plan: Vec<(RecordId, &str, Vec<&str>)> = Vec::with_capacity(a.observations.len());
        let mut pending: HashMap<RecordId, HashSet<String>> = HashMap::new();
        for o in &a.observations {
            let id = find_entity(&hub, &o.entity_name)
                .ok_or_else(|| ToolError::Failed(format!("Entity with name {} not found", o.entity_name)))?;
            let held = pending
                .entry(id)
                .or_insert_with(|| observations_of(&hub, id).into_iter().map(|(_, t)| t).collect());
            let mut new = Vec::new();
            for c in &o.contents {
                if held.insert(c.clone()) {
                    new.push(c.as_str());
                }
            }
            plan.push((id, o.entity_name.as_str(), new));
        }
        if plan.iter().any(|(id, _, new)| !new.is_empty() && hub.atl().concept(*id).is_none()) {
            return Err(ToolError::Failed(
                "an entity consolidated into its compressed form takes no new observations".into(),
            ));
        }
        self.spend(plan.iter().map(|p| p.2.len()).sum(), hub.clock().now())?;
        let mut results = Vec::with_capacity(plan.len());
        for (id, name, new) in plan {
            self.observe(&mut hub, id, &new)?;
            results.push(json!({ "entityName": name, "addedObservations": new }));
        }
        let text = serde_json::to_string_pretty(&results).unwrap_or_default();
        Ok(ToolOutput { text, structured: json!({ "results": results }) })
    }

    pub(super) fn delete_entities(&self, a: DeleteEntities) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "delete_entities";
        check_items(TOOL, "entityNames", a.entity_names.len())?;
        let mut hub = self.hub.lock();
        let mut doomed: Vec<RecordId> = Vec::new();
        let mut not_found = Vec::new();
        let mut deleted = 0usize;
        for name in &a.entity_names {
            match find_entity(&hub, name) {
                Some(id) if !doomed.contains(&id) => {
                    deleted += 1;
                    doomed.extend(observations_of(&hub, id).into_iter().map(|(e, _)| e));
                    doomed.push(id);
                }
                Some(_) => deleted += 1,
                None => not_found.push(name.as_str()),
            }
        }
        if !doomed.is_empty() {
            // The concept's relationships go with it; its observations go first, so that
            // nothing is left pointing at it.
            hub.forget(&Forget::Ids(doomed)).map_err(|e| failed(&e))?;
        }
        let message = if not_found.is_empty() {
            "Entities deleted successfully".to_owned()
        } else {
            format!(
                "Deleted {deleted} of {} entities. Not found: {}",
                a.entity_names.len(),
                not_found.join(", ")
            )
        };
        Ok(ToolOutput { text: message.clone(), structured: json!({ "success": true, "message": message }) })
    }

    pub(super) fn delete_observations(&self, a: DeleteObservations) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "delete_observations";
        check_items(TOOL, "deletions", a.deletions.len())?;
        let requested: usize = a.deletions.iter().map(|d| d.observations.len()).sum();
        check_items(TOOL, "observations", requested)?;
        let mut hub = self.hub.lock();
        let mut doomed: Vec<RecordId> = Vec::new();
        let mut touched: Vec<RecordId> = Vec::new();
        let mut missing = Vec::new();
        for d in &a.deletions {
            let Some(id) = find_entity(&hub, &d.entity_name) else {
                missing.push(d.entity_name.as_str());
                continue;
            };
            let wanted: HashSet<&str> = d.observations.iter().map(String::as_str).collect();
            for (episode, text) in observations_of(&hub, id) {
                if wanted.contains(text.as_str()) && !doomed.contains(&episode) {
                    doomed.push(episode);
                }
            }
            touched.push(id);
        }
        let count = doomed.len();
        if !doomed.is_empty() {
            hub.forget(&Forget::Ids(doomed)).map_err(|e| failed(&e))?;
            for id in touched {
                Self::refresh_definition(&mut hub, id)?;
            }
        }
        let mut message = if count == requested {
            "Observations deleted successfully".to_owned()
        } else {
            format!("Deleted {count} of {requested} observations.")
        };
        if !missing.is_empty() && count != requested {
            let _ = write!(message, " Entities not found: {}", missing.join(", "));
        }
        Ok(ToolOutput { text: message.clone(), structured: json!({ "success": true, "message": message }) })
    }

    pub(super) fn delete_relations(&self, a: Relations) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "delete_relations";
        check_items(TOOL, "relations", a.relations.len())?;
        for r in &a.relations {
            check_len(TOOL, "relationType", &r.relation_type, super::MAX_NAME_CHARS)?;
        }
        let mut hub = self.hub.lock();
        let mut deleted = 0usize;
        for r in &a.relations {
            let (Some(from), Some(to), Some(key)) =
                (find_entity(&hub, &r.from), find_entity(&hub, &r.to), type_key(&r.relation_type))
            else {
                continue;
            };
            let n = hub.unrelate(from, to, &key).map_err(|e| failed(&e))?;
            deleted += usize::from(n > 0);
        }
        let message = if deleted == a.relations.len() {
            "Relations deleted successfully".to_owned()
        } else {
            format!("Deleted {deleted} of {} relations. The rest matched nothing.", a.relations.len())
        };
        Ok(ToolOutput { text: message.clone(), structured: json!({ "success": true, "message": message }) })
    }

    pub(super) fn read_graph(&self, _: NoArguments) -> Result<ToolOutput, ToolError> {
        let hub = self.hub.lock();
        let ids: Vec<RecordId> = MemoryLayer::iter(hub.atl()).map(MemoryRecord::id).collect();
        let entities: Vec<Json> = ids.iter().filter_map(|&id| entity_json(&hub, id)).collect();
        let mut relations = Vec::new();
        for &id in &ids {
            relations_from(&hub, id, |_| true, &mut relations);
        }
        Ok(ToolOutput::json(json!({ "entities": entities, "relations": relations })))
    }

    pub(super) fn search_nodes(&self, a: SearchNodes) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "search_nodes";
        check_len(TOOL, "query", &a.query, MAX_QUERY_CHARS)?;
        let hub = self.hub.lock();
        // Words and the entities they name: a stated fact's neighbours in time, the query's
        // expansion and a weak embedding likeness would return entities the query does not
        // match, which the reference's callers do not expect.
        let mut options =
            RecallOptions::default().layers(&[LayerKind::Hippocampus, LayerKind::Atl]).limit(SEARCH_LIMIT);
        options.semantic = false;
        options.neighbours = false;
        options.expansion = false;
        let hits = hub.recall(&a.query, &options).map_err(|e| failed(&e))?;
        let mut ids: Vec<RecordId> = Vec::new();
        for hit in hits {
            match hit.record.layer {
                LayerKind::Atl if !ids.contains(&hit.record.id) => ids.push(hit.record.id),
                LayerKind::Hippocampus => {
                    for e in hub.cross_graph().linked(
                        hit.record,
                        Some(LayerKind::Atl),
                        Some(CrossEdgeKind::InstanceOf),
                    ) {
                        if !ids.contains(&e.to.id) {
                            ids.push(e.to.id);
                        }
                    }
                }
                _ => {}
            }
            if ids.len() >= SEARCH_LIMIT {
                break;
            }
        }
        ids.truncate(SEARCH_LIMIT);
        Ok(ToolOutput::json(subgraph(&hub, &ids)))
    }

    pub(super) fn open_nodes(&self, a: OpenNodes) -> Result<ToolOutput, ToolError> {
        const TOOL: &str = "open_nodes";
        check_items(TOOL, "names", a.names.len())?;
        let hub = self.hub.lock();
        let mut ids = Vec::with_capacity(a.names.len());
        for name in &a.names {
            if let Some(id) = find_entity(&hub, name)
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        }
        Ok(ToolOutput::json(subgraph(&hub, &ids)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_types_take_the_atl_form() {
        assert_eq!(type_key("works_at").as_deref(), Some("WORKS_AT"));
        assert_eq!(type_key("  works at ").as_deref(), Some("WORKS_AT"));
        assert_eq!(type_key("is-a").as_deref(), Some("IS_A"));
        assert_eq!(type_key("3rd party of").as_deref(), Some("R_3RD_PARTY_OF"));
        assert_eq!(type_key("aime").as_deref(), Some("AIME"));
        assert_eq!(type_key("é").as_deref(), Some("U00E9"));
        assert_eq!(type_key("--"), None);
        assert!(type_key(&"x".repeat(300)).is_some_and(|k| k.len() == 64));
    }

    #[test]
    fn a_definition_holds_the_newest_observations_first() {
        let d = definition_of(["old", "new"].into_iter());
        assert_eq!(d, "new; old");
        let long = "y".repeat(MAX_DEFINITION_CHARS - 1);
        assert_eq!(definition_of(["x", long.as_str()].into_iter()), long);
        let huge = "z".repeat(MAX_DEFINITION_CHARS + 10);
        assert_eq!(definition_of([huge.as_str()].into_iter()).chars().count(), MAX_DEFINITION_CHARS);
    }
}
