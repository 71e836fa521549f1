//! Forgetting and export: seed 004's rules as calls.
//!
//! A record removed from any layer, by [`MemoryHub::forget`] or by the layer itself (sleep,
//! eviction, consolidation), is removed everywhere it is named: its cross-layer edges, the
//! causal evidence NAc keeps for it, the promoter's credits, the concepts' references to it.
//! After a forget, every store of an on-disk hub is checkpointed twice, so that neither the
//! journals nor the snapshots' backups still hold what was forgotten.
//!
//! [`MemoryHub::export`] returns everything the hub holds as one JSON document.

use std::collections::HashSet;

use maxim_core::{LayerKind, LayerRecord, MemoryLayer, MemoryRecord, RecordId, Source};
use serde_json::{Value as Json, json};

use super::{Error, MemoryHub, Result};

/// What to forget.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Forget {
    /// One record, in whichever layer holds it.
    Id(RecordId),
    /// Everything that came from a source: its episodes, concepts, mathematical records and
    /// skills, and its claims on concepts that stay; concepts formed from its episodes lose
    /// confidence in proportion.
    Source(Source),
    /// Several records, each in whichever layer holds it, with one rewrite of the files
    /// (every id must be held when the call starts; one removed by the cascade of an
    /// earlier one is skipped).
    Ids(Vec<RecordId>),
}

/// What the hub found and mended when it opened a memory.
///
/// The cross-layer graph may name records no layer holds: a removal whose cascade a crash
/// interrupted (each store journals on its own), or a layer recovered from its backup.
/// Opening finds them ([`CrossLayerGraph::dangling`](crossgraph::CrossLayerGraph::dangling))
/// and completes their cascade, as a forget would have: their cross-layer edges, the causal
/// evidence NAc keeps for them, the promoter's credits and their time bins go.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct OpenReport {
    /// The records named by the graph that no layer held, sorted.
    pub dangling: Vec<LayerRecord>,
    /// Cross-layer edges removed with them.
    pub edges_removed: usize,
    /// What the cascade could not mend (the open still succeeds: nothing held is lost).
    pub failures: Vec<String>,
}

/// What a forget removed and changed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ForgetReport {
    /// Every record removed, with its layer (the cascade included).
    pub removed: Vec<(LayerKind, RecordId)>,
    /// Cross-layer edges removed.
    pub edges_removed: usize,
    /// NAc links that lost evidence.
    pub causal_links_changed: usize,
    /// Property claims retracted from concepts that stay.
    pub claims_retracted: usize,
    /// Concepts that stay but were formed partly from removed episodes:
    /// `(id, confidence before, confidence after)`.
    pub concepts_weakened: Vec<(RecordId, f64, f64)>,
    /// Whether the stores were rewritten so that no file holds what was removed.
    pub files_rewritten: bool,
    /// Steps that failed (the others ran).
    pub failures: Vec<String>,
}

impl ForgetReport {
    /// How many records were removed from `layer`.
    pub fn removed_from(&self, layer: LayerKind) -> usize {
        self.removed.iter().filter(|(l, _)| *l == layer).count()
    }
}

impl MemoryHub {
    /// Forgets `what` (see [`Forget`]) in every layer, cascading, and rewrites the files.
    ///
    /// Errors: an id no layer holds ([`Error::UnknownRecord`]; for [`Forget::Ids`], any of
    /// them); nothing changes then.
    pub fn forget(&mut self, what: &Forget) -> Result<ForgetReport> {
        let _s = tracing::info_span!("hub_forget").entered();
        let mut report = ForgetReport::default();
        match what {
            Forget::Id(id) => self.forget_id(*id, &mut report)?,
            Forget::Source(source) => self.forget_source(source, &mut report),
            Forget::Ids(ids) => {
                if let Some(&id) = ids.iter().find(|&&id| self.layer_of(id).is_none()) {
                    return Err(Error::UnknownRecord { id });
                }
                for &id in ids {
                    if self.layer_of(id).is_some() {
                        self.forget_id(id, &mut report)?;
                    }
                }
            }
        }
        self.cascade_into(&mut report);
        if self.dir.is_some() {
            // Twice: the second checkpoint's backup is the first, which already lacks it.
            for _ in 0..2 {
                report.failures.extend(self.checkpoint_all().into_iter().map(|f| f.to_string()));
            }
            report.files_rewritten = report.failures.is_empty();
        }
        tracing::info!(removed = report.removed.len(), edges = report.edges_removed, "forgotten");
        Ok(report)
    }

    /// Forgets this whole partition: closes the hub and deletes its directory (an in-memory
    /// hub is dropped). Returns how many records each layer held.
    pub fn forget_partition(self) -> Result<ForgetReport> {
        let mut report = ForgetReport::default();
        report.removed.extend(self.hippocampus.iter().map(|e| (LayerKind::Hippocampus, e.id())));
        report.removed.extend(MemoryLayer::iter(&self.atl).map(|r| (LayerKind::Atl, r.id())));
        report
            .removed
            .extend(MemoryLayer::iter(&self.angular_gyrus).map(|r| (LayerKind::AngularGyrus, r.id())));
        report.removed.extend(MemoryLayer::iter(&self.skills).map(|r| (LayerKind::Cerebellum, r.id())));
        report.edges_removed = self.graph.edge_count();
        report.causal_links_changed = self.nac.links().len();
        let dir = self.dir.clone();
        drop(self);
        if let Some(dir) = dir {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            if let Some(parent) = dir.parent() {
                let _ = std::fs::File::open(parent).and_then(|d| d.sync_all());
            }
            report.files_rewritten = true;
        }
        Ok(report)
    }

    fn forget_id(&mut self, id: RecordId, report: &mut ForgetReport) -> Result<()> {
        match self.layer_of(id) {
            Some(LayerKind::Hippocampus) => {
                self.weaken_concepts_of(&[id], report);
                self.hippocampus.remove(id)?;
            }
            Some(LayerKind::Atl) => {
                self.atl.remove_concept(id)?;
            }
            Some(LayerKind::AngularGyrus) => {
                self.angular_gyrus.remove_record(id)?;
            }
            Some(LayerKind::Cerebellum) => {
                self.skills.remove_skill(id)?;
            }
            None => return Err(Error::UnknownRecord { id }),
        }
        Ok(())
    }

    fn forget_source(&mut self, source: &Source, report: &mut ForgetReport) {
        let episodes: Vec<RecordId> = self
            .hippocampus
            .iter()
            .filter(|e| &e.meta().source == source)
            .map(hippocampus::Episode::id)
            .collect();
        self.weaken_concepts_of(&episodes, report);
        for id in episodes {
            if let Err(e) = self.hippocampus.remove(id) {
                report.failures.push(format!("episode {id}: {e}"));
            }
        }
        let purge = self.atl.purge_source(source);
        report.claims_retracted += purge.claims_retracted;
        let math: Vec<RecordId> = MemoryLayer::iter(&self.angular_gyrus)
            .filter(|r| &r.meta().source == source && !r.is_built_in())
            .map(MemoryRecord::id)
            .collect();
        for id in math {
            if let Err(e) = self.angular_gyrus.remove_record(id) {
                report.failures.push(format!("math record {id}: {e}"));
            }
        }
        if let Err(e) = self.skills.revoke_source(source) {
            report.failures.push(format!("skills of {source}: {e}"));
        }
        let skills: Vec<RecordId> =
            MemoryLayer::iter(&self.skills).filter(|s| &s.meta.source == source).map(|s| s.meta.id).collect();
        for id in skills {
            if let Err(e) = self.skills.remove_skill(id) {
                report.failures.push(format!("skill {id}: {e}"));
            }
        }
    }

    /// Lowers the confidence of the concepts formed from `episodes` that stay, in
    /// proportion to the share of their episodes that goes (done before the episodes go,
    /// while their INSTANCE_OF edges still name the concepts).
    fn weaken_concepts_of(&mut self, episodes: &[RecordId], report: &mut ForgetReport) {
        let mut lost: std::collections::BTreeMap<RecordId, usize> = std::collections::BTreeMap::new();
        for &episode in episodes {
            let from = LayerRecord::new(LayerKind::Hippocampus, episode);
            for edge in self.graph.linked(from, Some(LayerKind::Atl), None) {
                *lost.entry(edge.to.id).or_default() += 1;
            }
        }
        for (concept, n) in lost {
            let Some(c) = self.atl.concept(concept) else { continue };
            let total =
                c.memory_refs.count(Some(LayerKind::Hippocampus)).max(c.source_episode_ids.len()).max(n);
            let before = c.confidence;
            let after = before * (1.0 - n as f64 / total as f64);
            match self.atl.weaken_concept(concept, after) {
                Ok(()) => report.concepts_weakened.push((concept, before, after)),
                Err(e) => report.failures.push(format!("concept {concept}: {e}")),
            }
        }
    }

    /// Finds the records the cross-layer graph names that no layer holds and completes their
    /// cascade (see [`OpenReport`]).
    pub(super) fn mend_dangling(&mut self) -> OpenReport {
        let dangling = self.graph.dangling(|r| match r.layer {
            LayerKind::Hippocampus => self.hippocampus.contains(r.id),
            LayerKind::Atl => self.atl.record(r.id).is_some(),
            LayerKind::AngularGyrus => self.angular_gyrus.record(r.id).is_some(),
            LayerKind::Cerebellum => self.skills.skill(r.id).is_some(),
        });
        if dangling.is_empty() {
            return OpenReport::default();
        }
        tracing::warn!(records = dangling.len(), "the cross-layer graph named records no layer holds: removing them");
        self.removed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(dangling.iter().map(|r| (r.layer, r.id)));
        let mut failures = Vec::new();
        let (_, edges_removed, _) = self.cascade(&mut failures);
        OpenReport { dangling, edges_removed, failures }
    }

    /// Removes everywhere the records the layers removed, into `report`.
    fn cascade_into(&mut self, report: &mut ForgetReport) {
        let mut failures = Vec::new();
        let (removed, edges, links) = self.cascade(&mut failures);
        report.removed.extend(removed);
        report.edges_removed += edges;
        report.causal_links_changed += links;
        report.failures.extend(failures);
    }

    /// Removes everywhere the records the layers removed since the last call; returns their
    /// ids (a capture's evictions).
    pub(super) fn cascade_removed(&mut self, warnings: &mut Vec<String>) -> Vec<RecordId> {
        self.cascade(warnings).0.into_iter().map(|(_, id)| id).collect()
    }

    fn cascade(&mut self, failures: &mut Vec<String>) -> (Vec<(LayerKind, RecordId)>, usize, usize) {
        let mut all = Vec::new();
        let (mut edges, mut links) = (0, 0);
        // Removing one record can remove others (a concept's removal, say): drain until quiet.
        loop {
            let batch = self.take_removed();
            if batch.is_empty() {
                break;
            }
            let episodes: HashSet<RecordId> =
                batch.iter().filter(|(l, _)| *l == LayerKind::Hippocampus).map(|&(_, id)| id).collect();
            for (layer, id) in batch {
                let record = LayerRecord::new(layer, id);
                if layer == LayerKind::Hippocampus {
                    for edge in self.graph.linked(record, Some(LayerKind::Atl), None) {
                        if let Err(e) = self.atl.forget_episode(edge.to.id, id) {
                            failures.push(format!("concept {} → episode {id}: {e}", edge.to.id));
                        }
                    }
                    match self.nac.remove_memory(id) {
                        Ok(n) => links += n,
                        Err(e) => failures.push(format!("NAc, episode {id}: {e}")),
                    }
                    if let Err(e) = self.promoter.forget_episode(id) {
                        failures.push(format!("promoter, episode {id}: {e}"));
                    }
                }
                if layer == LayerKind::Atl
                    && let Err(e) = self.promoter.forget_concept(id)
                {
                    failures.push(format!("promoter, concept {id}: {e}"));
                }
                self.knowledge_index.remove(&record);
                if let Err(e) = self.scn.remove(id) {
                    failures.push(format!("temporal bins, {id}: {e}"));
                }
                match self.graph.remove_record(record) {
                    Ok(n) => edges += n,
                    Err(e) => failures.push(format!("cross-layer edges of {id}: {e}")),
                }
                all.push((layer, id));
            }
            self.forget_source_episodes(&episodes, failures);
        }
        (all, edges, links)
    }

    /// Removes `episodes` from the source episodes of every concept naming them, including
    /// concepts with no cross-layer edge to them (promoted ones, formed from NAc's evidence).
    fn forget_source_episodes(&mut self, episodes: &HashSet<RecordId>, failures: &mut Vec<String>) {
        if episodes.is_empty() {
            return;
        }
        let naming: Vec<(RecordId, RecordId)> = MemoryLayer::iter(&self.atl)
            .filter_map(|r| r.as_concept())
            .flat_map(|c| {
                c.source_episode_ids.iter().filter(|e| episodes.contains(e)).map(|&e| (c.meta.id, e))
            })
            .collect();
        for (concept, episode) in naming {
            if let Err(e) = self.atl.forget_episode(concept, episode) {
                failures.push(format!("concept {concept} → episode {episode}: {e}"));
            }
        }
    }

    /// Everything this hub holds, as one JSON document: every layer's records, the concepts'
    /// relationships, the cross-layer edges, the causal links, the metric series.
    pub fn export(&self) -> Json {
        let _s = tracing::info_span!("hub_export").entered();
        let to_json =
            |v: Result<Json, serde_json::Error>| v.unwrap_or_else(|e| json!({ "error": e.to_string() }));
        let episodes: Vec<Json> = self.hippocampus.iter().map(|e| to_json(serde_json::to_value(e))).collect();
        let concepts: Vec<Json> =
            MemoryLayer::iter(&self.atl).map(|r| to_json(serde_json::to_value(r))).collect();
        let mut relationships = Vec::new();
        for record in MemoryLayer::iter(&self.atl) {
            let id = record.id();
            for r in self.atl.relationships_of(id).unwrap_or_default() {
                if r.source == id {
                    relationships.push(json!({
                        "source": r.source, "target": r.target, "type": r.relationship,
                        "weight": r.weight, "confidence": r.confidence,
                    }));
                }
            }
        }
        let math: Vec<Json> = MemoryLayer::iter(&self.angular_gyrus)
            .filter(|r| !r.is_built_in())
            .map(|r| to_json(serde_json::to_value(r)))
            .collect();
        let skills: Vec<Json> =
            MemoryLayer::iter(&self.skills).map(|s| to_json(serde_json::to_value(s))).collect();
        let edges: Vec<Json> = self
            .graph
            .edges()
            .map(|e| {
                json!({
                    "from": { "layer": e.from.layer.as_str(), "id": e.from.id },
                    "to": { "layer": e.to.layer.as_str(), "id": e.to.id },
                    "type": crossgraph::kind_name(e.kind), "weight": e.weight,
                })
            })
            .collect();
        let links: Vec<Json> = self.nac.links().iter().map(|l| to_json(serde_json::to_value(l))).collect();
        let metrics: serde_json::Map<String, Json> =
            self.metrics.iter().map(|(k, v)| (k.to_owned(), to_json(serde_json::to_value(v)))).collect();
        json!({
            "format": "maxim-export/1",
            "partition": self.partition.as_str(),
            "exported_at": self.clock.now(),
            "episodes": episodes,
            "concepts": concepts,
            "relationships": relationships,
            "math_records": math,
            "skills": skills,
            "cross_edges": edges,
            "causal_links": links,
            "metrics": metrics,
        })
    }
}
