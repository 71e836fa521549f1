//! The semantic layer on a directory: its journal of [`Op`]s, `open(dir)` and
//! [`checkpoint`](Atl::checkpoint) (`docs/durability.md`, "The journal").
//!
//! Every write to a layer opened on a directory ([`AtlBuilder::open`]) is validated, then
//! resolved to an [`Op`] that carries everything it needs with ids, times and every value
//! derived from the clock already chosen (the concept a `find_or_create` miss makes, with its
//! id; the concepts a store at capacity evicts; the concepts a consolidation compresses and
//! removes; the final weight and confidence of a relationship), journaled through
//! [`maxim_core::journal::StoreDir`], and only then applied by `Atl::apply`, the one function
//! that changes the layer and cannot fail. A write the journal refuses (an I/O error) changes
//! nothing. Opening the directory loads `atl.snap` (falling back to its backup) and applies
//! the journaled operations after it, so the layer comes back with every acknowledged write,
//! its counters and its indexes.
//!
//! What is journaled: [`insert`](Atl::insert) (and `store`),
//! [`find_or_create`](Atl::find_or_create) (a hit or a creation),
//! [`reinforce`](Atl::reinforce), [`remove_concept`](Atl::remove_concept), definitions,
//! embedding texts, references, substrate activations, property claims (set, accept,
//! retract, remove), [`purge_source`](Atl::purge_source), consolidation (the resolved lists:
//! replaying it never depends on the settings or the clock of the process that replays),
//! relationships (define, update, remove, propose a type), and an episode's concepts,
//! references and relationships as one record ([`Atl::record_episode`]). A write that changes
//! nothing (a reference already there, an update of a relationship that does not exist, a
//! type already known) is not journaled.
//!
//! Reads that count as use ([`get`](Atl::get), [`touch`](Atl::touch),
//! [`recall_associated_touching`](Atl::recall_associated_touching): an access and a
//! reinforcement of the concept's trace) and the query counter of reads are *batched*: a read costs no I/O; its accesses are gathered and journaled as one
//! [`Op::Reads`] just before the next write, at [`sync`](Atl::sync), and when the layer is
//! dropped (and every 4,096 accesses). So the journal replays them in their place among the
//! writes, and a crash loses at most the access bookkeeping since the last write, never a
//! write. A replayed use or confirmation reinforces under the layer's
//! [`AtlConfig::trace`](crate::AtlConfig::trace): reopen with the same trace settings (the
//! hub does), as with the eviction settings.
//!
//! ```
//! use atl::{Atl, spec};
//! use maxim_core::journal::SyncPolicy;
//! let dir = tempfile::tempdir()?;
//! let mut atl = Atl::builder().sync_policy(SyncPolicy::Always).open(dir.path())?;
//! let mug = atl.find_or_create(&spec("coffee mug", "object"))?.id; // journaled before it returns
//! let kitchen = atl.find_or_create(&spec("kitchen", "location"))?.id;
//! atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.6)?;
//! drop(atl); // a crash here loses nothing
//! let mut atl = Atl::builder().open(dir.path())?;
//! assert_eq!(atl.len(), 2);
//! assert_eq!(atl.find_or_create(&spec("Coffee Mugs", "object"))?.id, mug);
//! atl.checkpoint()?; // a snapshot, and a fresh journal
//! # use maxim_core::MemoryLayer;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;
use std::sync::atomic::Ordering;

use maxim_core::journal::{OpenReport, StoreDir, SyncPolicy};
use maxim_core::layer::ConsolidationReport;
use maxim_core::value::Value;
use maxim_core::{
    ConceptProvenance, LayerKind, MemoryRecord, RecordId, Source, Timestamp, Trust, check_unit,
};
use serde::{Deserialize, Serialize};

use crate::concept::{Concept, SemanticRecord, merge_provenance};
#[cfg(doc)]
use crate::config::AtlBuilder;
use crate::episode::{EpisodeApplied, EpisodeFind, EpisodeRelate};
use crate::error::{Error, Result};
use crate::names::name_key;
use crate::persist::SNAPSHOT_KIND;
use crate::properties::{Claim, Contradiction, Property, check_key, check_value};
use crate::registry::check_type_name;
use crate::relations::DefineOutcome;
use crate::store::{Atl, PropertyWrite, SourcePurge};

/// Accesses gathered before they are journaled without waiting for a write.
const READS_BATCH: usize = 4096;

/// One write to the semantic layer, with everything chosen: what the journal holds.
///
/// New kinds of operation are added at the end (old journals still decode); see
/// `docs/durability.md`, "Versions and evolving a payload".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// A record stored as given ([`Atl::insert`]), after the records evicted to make room.
    Store {
        /// The record, as validated.
        record: Box<SemanticRecord>,
        /// When it was stored.
        at: Timestamp,
        /// The concepts evicted for it, in order (empty below capacity).
        evicted: Vec<RecordId>,
    },
    /// A concept created by a [`Atl::find_or_create`] miss.
    Create {
        /// The concept, with its id.
        concept: Box<Concept>,
        /// When it was created.
        at: Timestamp,
        /// The concepts evicted for it, in order.
        evicted: Vec<RecordId>,
        /// Candidate names the similarity path scored before creating it.
        scored: u64,
    },
    /// A [`Atl::find_or_create`] hit on concept `id`.
    Hit {
        /// The concept found.
        id: RecordId,
        /// When.
        at: Timestamp,
        /// For a hit by similarity, the name given (trimmed), which becomes an alias; `None`
        /// for an exact hit.
        alias: Option<String>,
        /// Candidate names the similarity path scored.
        scored: u64,
        /// The episode that reinforces the concept (`None`: no reinforcement).
        episode: Option<RecordId>,
        /// The provenance of the spec.
        provenance: ConceptProvenance,
        /// The definition the concept takes, when it had none.
        definition: Option<String>,
    },
    /// [`Atl::reinforce`].
    Reinforce {
        /// The concept.
        id: RecordId,
        /// The episode credited.
        episode: Option<RecordId>,
        /// When.
        at: Timestamp,
    },
    /// [`Atl::remove_concept`].
    Remove {
        /// The concept.
        id: RecordId,
    },
    /// The access bookkeeping of reads since the previous operation (see the
    /// [module docs](self)).
    Reads {
        /// The concepts accessed, each with the time of the access, in order.
        touches: Vec<(RecordId, Timestamp)>,
        /// Queries answered meanwhile (the `queries` counter).
        queries: u64,
    },
    /// [`Atl::set_definition`].
    SetDefinition {
        /// The concept.
        id: RecordId,
        /// The definition.
        definition: String,
    },
    /// [`Atl::set_embedding_text`].
    SetEmbeddingText {
        /// The concept.
        id: RecordId,
        /// The text.
        text: String,
    },
    /// [`Atl::add_ref`] of a reference not yet there.
    AddRef {
        /// The concept.
        id: RecordId,
        /// The layer of the target.
        layer: LayerKind,
        /// The target record.
        target: RecordId,
        /// When (the access it records).
        at: Timestamp,
    },
    /// [`Atl::remove_ref`] of a reference that is there.
    RemoveRef {
        /// The concept.
        id: RecordId,
        /// The layer of the target.
        layer: LayerKind,
        /// The target record.
        target: RecordId,
    },
    /// [`Atl::set_property`].
    SetProperty {
        /// The concept.
        id: RecordId,
        /// The key, trimmed.
        key: String,
        /// The value, checked.
        value: Value,
        /// Who claims it.
        source: Source,
        /// The claim's trust.
        trust: Trust,
        /// When.
        at: Timestamp,
    },
    /// [`Atl::accept_value`].
    AcceptValue {
        /// The concept.
        id: RecordId,
        /// The key.
        key: String,
        /// The value accepted.
        value: Value,
    },
    /// [`Atl::retract_claim`].
    RetractClaim {
        /// The concept.
        id: RecordId,
        /// The key.
        key: String,
        /// The source whose claim goes.
        source: Source,
    },
    /// [`Atl::remove_property`].
    RemoveProperty {
        /// The concept.
        id: RecordId,
        /// The key.
        key: String,
    },
    /// [`Atl::purge_source`].
    PurgeSource {
        /// The source.
        source: Source,
    },
    /// A consolidation pass: the concepts it compresses, then those it removes.
    Consolidate {
        /// When it ran.
        at: Timestamp,
        /// The full concepts compressed, in order.
        compress: Vec<RecordId>,
        /// The concepts removed, in order.
        remove: Vec<RecordId>,
    },
    /// [`Atl::define_relationship`], with the weight and confidence the edge ends with.
    Relate {
        /// The source concept.
        source: RecordId,
        /// The target concept.
        target: RecordId,
        /// The type.
        relationship: String,
        /// The edge's weight after the call.
        weight: f64,
        /// The edge's confidence after the call.
        confidence: f64,
    },
    /// [`Atl::update_relationship`] of an existing relationship, the confidence resolved.
    UpdateRelationship {
        /// The source concept.
        source: RecordId,
        /// The target concept.
        target: RecordId,
        /// The type.
        relationship: String,
        /// The new weight, if any.
        weight: Option<f64>,
        /// The new confidence, if any.
        confidence: Option<f64>,
    },
    /// [`Atl::remove_relationship`].
    RemoveRelationship {
        /// The source concept.
        source: RecordId,
        /// The target concept.
        target: RecordId,
        /// The type, or every type when `None`.
        relationship: Option<String>,
    },
    /// A relationship type proposed at run time, not known before.
    ProposeType {
        /// The name.
        name: String,
        /// What it means.
        description: String,
        /// Whether it is symmetric.
        symmetric: bool,
        /// Whether a concept may stand in it to itself.
        reflexive: bool,
    },
    /// [`Atl::forget_episode`]: the episode leaves the concept's source episodes and
    /// references.
    ForgetEpisode {
        /// The concept.
        id: RecordId,
        /// The episode.
        episode: RecordId,
    },
    /// [`Atl::weaken_concept`]: the concept's confidence lowered to `confidence`.
    Weaken {
        /// The concept.
        id: RecordId,
        /// The new confidence (never above the old).
        confidence: f64,
    },
    /// [`Atl::record_episode`]: one episode's concepts found or created, each crediting the
    /// episode and then referencing it, in order, then the relationships between them; applied
    /// as the single operations (`Create` or `Hit`, then `AddRef`, for each concept, then a
    /// `Relate` for each relationship) would be.
    Episode {
        /// The episode.
        episode: RecordId,
        /// The layer that holds it (the references' layer).
        layer: LayerKind,
        /// When.
        at: Timestamp,
        /// The concepts, in order.
        concepts: Vec<EpisodeFind>,
        /// The relationships, with their final weights and confidences, in order.
        relationships: Vec<EpisodeRelate>,
    },
}

/// What applying an operation gives back to the call that made it.
#[derive(Debug)]
pub(crate) enum Applied {
    /// Nothing to report.
    Nothing,
    /// A yes or no (reinforced, added, found, ...).
    Flag(bool),
    /// A count.
    Count(usize),
    /// The record removed.
    Removed(Option<SemanticRecord>),
    /// A property write.
    Write(PropertyWrite),
    /// The claims dropped by an accept.
    Claims(Option<Vec<Claim>>),
    /// The claim retracted.
    Claim(Option<Claim>),
    /// The property removed.
    Property(Option<Property>),
    /// What a purge removed.
    Purge(SourcePurge),
    /// What a consolidation did.
    Consolidated(ConsolidationReport),
    /// What defining a relationship did.
    Defined(DefineOutcome),
    /// What an episode's write did.
    Episode(EpisodeApplied),
}

/// The layer's directory while it is open on one, with the reads not journaled yet.
#[derive(Debug)]
pub(crate) struct Journaled {
    pub(crate) dir: StoreDir<Op>,
    /// Accesses recorded by reads since the last operation journaled.
    touches: Vec<(RecordId, Timestamp)>,
    /// The `queries` counter as far as the journal holds it.
    queries: u64,
}

impl Atl {
    /// Opens the layer on `dir` (see the [module docs](self)); called by
    /// [`AtlBuilder::open`].
    pub(crate) fn open_dir(mut self, dir: &Path, policy: SyncPolicy) -> Result<Self> {
        let mut store = StoreDir::open(dir, SNAPSHOT_KIND, policy)?;
        let snapshot = store.snapshot_path();
        let seq = match self.recover(&snapshot)? {
            maxim_core::LoadOutcome::Missing => 0,
            _ => self.loaded_journal_seq,
        };
        let report: OpenReport = store.replay(seq, |op| {
            // Journaled ops were checked when written; checking again keeps a forged entry
            // (one with a recomputed checksum) from ever reaching the layer.
            self.check_replayed(&op)?;
            self.apply(op);
            Ok::<_, Error>(())
        })?;
        tracing::info!(dir = %dir.display(), replayed = report.replayed, torn_bytes = report.torn_bytes, "atl opened");
        let queries = self.queries.load(Ordering::Relaxed);
        self.journal = Some(Journaled { dir: store, touches: Vec::new(), queries });
        Ok(self)
    }

    /// Whether the layer is open on a directory.
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Writes a snapshot of the layer into its directory and starts a fresh journal
    /// (`docs/durability.md`, "Checkpoint"). Errors: the layer is not open on a directory
    /// ([`maxim_core::Error::InvalidArgument`]), or the save fails (the journal is kept and
    /// still holds every write).
    pub fn checkpoint(&mut self) -> Result<()> {
        let _s = tracing::debug_span!("atl_checkpoint", n_concepts = self.state.len()).entered();
        let Some(mut journaled) = self.journal.take() else {
            return Err(
                maxim_core::Error::invalid("checkpoint", "the layer is not open on a directory").into()
            );
        };
        let result = journaled.dir.checkpoint(|path, seq| self.save_recording(path, seq));
        if result.is_ok() {
            // The snapshot holds every access and query so far.
            journaled.touches.clear();
            journaled.queries = self.queries.load(Ordering::Relaxed);
        }
        self.journal = Some(journaled);
        result
    }

    /// Makes every journaled write, and the accesses of reads so far, durable now, whatever
    /// the sync policy (nothing for a layer in memory).
    pub fn sync(&mut self) -> Result<()> {
        self.flush_reads()?;
        match &mut self.journal {
            Some(j) => Ok(j.dir.sync()?),
            None => Ok(()),
        }
    }

    /// The sequence number of the last journaled operation, or the one the last loaded
    /// snapshot recorded.
    pub(crate) fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, |j| j.dir.last_seq())
    }

    /// Journals the reads gathered since the last operation, if any.
    pub(crate) fn flush_reads(&mut self) -> Result<()> {
        let queries_now = self.queries.load(Ordering::Relaxed);
        let Some(j) = &mut self.journal else { return Ok(()) };
        let queries = queries_now.saturating_sub(j.queries);
        if j.touches.is_empty() && queries == 0 {
            return Ok(());
        }
        let op = Op::Reads { touches: std::mem::take(&mut j.touches), queries };
        match j.dir.append(&op) {
            Ok(_) => {
                j.queries = queries_now;
                Ok(())
            }
            Err(e) => {
                if let Op::Reads { touches, .. } = op {
                    j.touches = touches;
                }
                Err(e.into())
            }
        }
    }

    /// Records an access to the record at `slot` now; on a directory it joins the reads to
    /// journal.
    pub(crate) fn touch_slot(&mut self, slot: usize, at: Timestamp) {
        self.state.records[slot].use_at(at, &self.config.trace);
        if let Some(j) = &mut self.journal {
            j.touches.push((self.state.records[slot].id(), at));
            if j.touches.len() >= READS_BATCH
                && let Err(e) = self.flush_reads()
            {
                tracing::warn!(error = %e, "the journal refused the accesses of reads; kept for the next write");
            }
        }
    }

    /// Journals `op` when the layer is open on a directory (after the reads gathered since the
    /// last one), then applies it. When the journal refuses it, nothing changes.
    pub(crate) fn commit(&mut self, op: Op) -> Result<Applied> {
        if self.journal.is_some() {
            self.flush_reads()?;
            if let Some(j) = &mut self.journal {
                j.dir.append(&op)?;
            }
        }
        Ok(self.apply(op))
    }

    /// Checks what a replayed operation carries, as the calls check their arguments.
    fn check_replayed(&self, op: &Op) -> Result<()> {
        match op {
            Op::Store { record, .. } => record.validate(),
            Op::Create { concept, .. } => concept.validate(),
            Op::SetProperty { key, value, .. } => {
                check_key(key)?;
                check_value(value)
            }
            Op::Weaken { confidence, .. } => {
                check_unit("confidence", *confidence).map(drop).map_err(Into::into)
            }
            Op::Relate { relationship, weight, confidence, .. } => {
                self.state.registry.require(relationship)?;
                check_unit("weight", *weight)?;
                check_unit("confidence", *confidence)?;
                Ok(())
            }
            Op::UpdateRelationship { relationship, weight, confidence, .. } => {
                self.state.registry.require(relationship)?;
                for (field, v) in [("weight", weight), ("confidence", confidence)] {
                    if let Some(v) = v {
                        check_unit(field, *v)?;
                    }
                }
                Ok(())
            }
            Op::ProposeType { name, .. } => check_type_name(name),
            Op::Episode { concepts, relationships, .. } => {
                for find in concepts {
                    if let EpisodeFind::Create { concept, .. } = find {
                        concept.validate()?;
                    }
                }
                for r in relationships {
                    self.state.registry.require(&r.relationship)?;
                    check_unit("weight", r.weight)?;
                    check_unit("confidence", r.confidence)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Applies a resolved write: the one place a write changes the layer. It cannot fail:
    /// everything was checked when the operation was made (a replayed operation on a concept
    /// that is no longer there changes nothing).
    pub(crate) fn apply(&mut self, op: Op) -> Applied {
        match op {
            Op::Store { record, at, evicted } => {
                self.evict(&evicted);
                Applied::Flag(self.push_record(*record, at))
            }
            Op::Create { concept, at, evicted, scored } => {
                let counters = &mut self.state.counters;
                counters.similarity_comparisons = counters.similarity_comparisons.saturating_add(scored);
                self.evict(&evicted);
                if self.push_record(SemanticRecord::Full(concept), at) {
                    self.state.counters.concepts_created += 1;
                }
                Applied::Nothing
            }
            Op::Hit { id, at, alias, scored, episode, provenance, definition } => {
                let Some(slot) = self.state.slot(id) else { return Applied::Flag(false) };
                let counters = &mut self.state.counters;
                counters.similarity_comparisons = counters.similarity_comparisons.saturating_add(scored);
                match alias {
                    None => counters.exact_hits += 1,
                    Some(alias) => {
                        counters.similarity_merges += 1;
                        let key = name_key(&alias);
                        self.state.add_alias(slot, &alias, &key);
                    }
                }
                Applied::Flag(self.apply_hit(slot, episode, provenance, definition, at))
            }
            Op::Reinforce { id, episode, at } => {
                if let Some(slot) = self.state.slot(id) {
                    self.state.credit(slot, episode, at, &self.config.trace);
                    self.state.counters.reinforcements += 1;
                }
                Applied::Nothing
            }
            Op::Remove { id } => Applied::Removed(self.remove_held(id)),
            Op::Reads { touches, queries } => {
                for (id, at) in touches {
                    if let Some(slot) = self.state.slot(id) {
                        self.state.records[slot].use_at(at, &self.config.trace);
                    }
                }
                self.queries.fetch_add(queries, Ordering::Relaxed);
                Applied::Nothing
            }
            Op::SetDefinition { id, definition } => {
                self.edit_text(id, |c| c.definition = definition);
                Applied::Nothing
            }
            Op::SetEmbeddingText { id, text } => {
                self.edit_text(id, |c| c.embedding_text = text);
                Applied::Nothing
            }
            Op::AddRef { id, layer, target, at } => {
                Applied::Flag(self.full_mut(id).is_some_and(|c| c.add_ref(layer, target, at)))
            }
            Op::RemoveRef { id, layer, target } => {
                Applied::Flag(self.full_mut(id).is_some_and(|c| c.memory_refs.remove(layer, target)))
            }
            Op::ForgetEpisode { id, episode } => Applied::Flag(self.full_mut(id).is_some_and(|c| {
                let before = c.source_episode_ids.len();
                c.source_episode_ids.retain(|&e| e != episode);
                let referenced = c.memory_refs.remove(LayerKind::Hippocampus, episode);
                referenced || c.source_episode_ids.len() != before
            })),
            Op::Weaken { id, confidence } => {
                if let Some(slot) = self.state.slot(id) {
                    match &mut self.state.records[slot] {
                        SemanticRecord::Full(c) => c.confidence = c.confidence.min(confidence),
                        SemanticRecord::Compressed(c) => c.confidence = c.confidence.min(confidence),
                    }
                }
                Applied::Nothing
            }
            Op::SetProperty { id, key, value, source, trust, at } => {
                let Some(slot) = self.full_slot_of(id) else { return Applied::Nothing };
                Applied::Write(self.apply_set_property(slot, id, &key, value, source, trust, at))
            }
            Op::AcceptValue { id, key, value } => Applied::Claims(
                self.full_slot_of(id)
                    .and_then(|slot| self.edit_properties(slot, |c| c.properties.accept(&key, &value))),
            ),
            Op::RetractClaim { id, key, source } => Applied::Claim(
                self.full_slot_of(id)
                    .and_then(|slot| self.edit_properties(slot, |c| c.properties.retract(&key, &source))),
            ),
            Op::RemoveProperty { id, key } => Applied::Property(
                self.full_slot_of(id)
                    .and_then(|slot| self.edit_properties(slot, |c| c.properties.remove(&key))),
            ),
            Op::PurgeSource { source } => Applied::Purge(self.apply_purge(&source)),
            Op::Consolidate { at: _, compress, remove } => {
                let mut compressed = 0;
                for &id in &compress {
                    compressed += usize::from(self.compress(id));
                }
                let mut removed = 0;
                for &id in &remove {
                    removed += usize::from(self.remove_held(id).is_some());
                }
                self.state.counters.compressions += compressed as u64;
                self.state.counters.consolidations += 1;
                self.state.eviction.clear();
                Applied::Consolidated(ConsolidationReport {
                    promoted: 0,
                    compressed,
                    removed,
                    preserved: self.state.len().saturating_sub(compressed),
                })
            }
            Op::Relate { source, target, relationship, weight, confidence } => {
                Applied::Defined(self.apply_relate(source, target, &relationship, weight, confidence))
            }
            Op::UpdateRelationship { source, target, relationship, weight, confidence } => Applied::Flag(
                self.apply_update_relationship(source, target, &relationship, weight, confidence),
            ),
            Op::RemoveRelationship { source, target, relationship } => {
                Applied::Count(self.apply_remove_relationship(source, target, relationship.as_deref()))
            }
            Op::ProposeType { name, description, symmetric, reflexive } => Applied::Flag(
                self.state.registry.propose_type(&name, &description, symmetric, reflexive).unwrap_or(false),
            ),
            Op::Episode { episode, layer, at, concepts, relationships } => {
                Applied::Episode(self.apply_episode(episode, layer, at, concepts, relationships))
            }
        }
    }

    /// Removes the concepts `evicted` (those still held), counting evictions.
    fn evict(&mut self, evicted: &[RecordId]) {
        for &id in evicted {
            if self.remove_held(id).is_some() {
                tracing::debug!(%id, "store full: evicted the lowest-ranked concept");
                self.state.counters.evictions += 1;
            }
        }
    }

    /// Stores a validated record whose id is new at `at`, then runs the capture callbacks;
    /// false when the id is held already (a replayed store of a record the snapshot holds).
    fn push_record(&mut self, record: SemanticRecord, at: Timestamp) -> bool {
        let id = record.id();
        if self.state.slots.contains_key(&id) {
            return false;
        }
        self.ids.observe(id);
        let slot = match self.push_into_state(record) {
            Ok(slot) => slot,
            Err(e) => {
                // Only a graph of u32::MAX nodes refuses a node.
                tracing::warn!(%id, error = %e, "the concept graph is full; concept not stored");
                return false;
            }
        };
        crate::consolidate::EvictionQueue::offer(&mut self.state, &self.config, slot, at);
        self.state.counters.concepts_stored += 1;
        self.callbacks.fire_capture(id, &self.state.records[slot]);
        true
    }

    /// Removes the concept `id` if held (counted, deletion callbacks run); returns it.
    pub(crate) fn remove_held(&mut self, id: RecordId) -> Option<SemanticRecord> {
        let slot = self.state.slot(id)?;
        let record = self.state.take(slot);
        self.state.counters.removals += 1;
        self.callbacks.fire_delete(id);
        Some(record)
    }

    /// What a `find_or_create` hit does to the record at `slot`; whether it was reinforced
    /// (only a full concept is).
    fn apply_hit(
        &mut self,
        slot: usize,
        episode: Option<RecordId>,
        provenance: ConceptProvenance,
        definition: Option<String>,
        at: Timestamp,
    ) -> bool {
        if self.state.records[slot].is_compressed() {
            return false;
        }
        let reinforced = episode.is_some();
        if reinforced {
            self.state.credit(slot, episode, at, &self.config.trace);
            self.state.counters.reinforcements += 1;
        }
        let SemanticRecord::Full(c) = &mut self.state.records[slot] else {
            return false;
        };
        if reinforced {
            c.provenance = merge_provenance(c.provenance, provenance);
        }
        if let Some(definition) = definition
            && c.definition.trim().is_empty()
        {
            c.definition = definition;
            self.reembed(slot);
        }
        reinforced
    }

    /// The full concept `id`, if held.
    fn full_mut(&mut self, id: RecordId) -> Option<&mut Concept> {
        let slot = self.state.slot(id)?;
        match &mut self.state.records[slot] {
            SemanticRecord::Full(c) => Some(c),
            SemanticRecord::Compressed(_) => None,
        }
    }

    /// The slot of the full concept `id`, if held.
    fn full_slot_of(&self, id: RecordId) -> Option<usize> {
        self.state.slot(id).filter(|&s| !self.state.records[s].is_compressed())
    }

    /// Changes a text of the full concept `id` and embeds it again.
    fn edit_text(&mut self, id: RecordId, edit: impl FnOnce(&mut Concept)) {
        let Some(slot) = self.full_slot_of(id) else { return };
        if let SemanticRecord::Full(c) = &mut self.state.records[slot] {
            edit(c);
        }
        self.reembed(slot);
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_set_property(
        &mut self,
        slot: usize,
        id: RecordId,
        key: &str,
        value: Value,
        source: Source,
        trust: Trust,
        at: Timestamp,
    ) -> PropertyWrite {
        let was_contested = self.state.contested.contains(&id)
            && self.concept(id).and_then(|c| c.properties.get(key)).is_some_and(Property::is_contested);
        let outcome = self.edit_properties(slot, |c| c.properties.set_checked(key, value, source, trust, at));
        let contradiction = if outcome.contested {
            if !was_contested {
                self.state.counters.contradictions_reported += 1;
            }
            self.concept(id).and_then(|c| c.properties.get(key)).map(|prop| {
                tracing::debug!(%id, n_claims = prop.claims().len(), "contradiction surfaced");
                Contradiction::of(id, prop)
            })
        } else {
            None
        };
        PropertyWrite { change: outcome.change, contradiction }
    }

    fn apply_purge(&mut self, source: &Source) -> SourcePurge {
        let (own, _) = self.from_source(source);
        for &id in &own {
            self.remove_held(id);
        }
        let mut retracted = 0;
        for slot in 0..self.state.len() {
            let has =
                self.state.records[slot].as_concept().is_some_and(|c| c.properties.has_claim_from(source));
            if has {
                retracted += self.edit_properties(slot, |c| c.properties.retract_source(source).len());
            }
        }
        SourcePurge { concepts_removed: own, claims_retracted: retracted }
    }
}

#[cfg(test)]
mod tests;
