//! One episode's concepts in one write: [`Atl::record_episode`].
//!
//! An episode names a few concepts (an object, a person, a place, goal words, a tool), each
//! found or created crediting the episode and given a reference to it, and a few
//! relationships between them. Written one call at a time, that is a
//! [`find_or_create`](Atl::find_or_create) and an [`add_ref`](Atl::add_ref) per concept and a
//! [`define_relationship`](Atl::define_relationship) per pair: a dozen journal records. An
//! [`EpisodeWrite`] does the same work as that sequence, with the same result and the same
//! final state, resolved into one [`Op::Episode`] journaled as one record
//! and applied by the same code as the single operations.
//!
//! **When a record splits.** A write is resolved against the layer as it stands, before
//! anything is applied. When a step would read what an earlier step of the same record
//! changes, the record so far is journaled and applied first and the step starts the next
//! one: a name looked up in a category where this episode has already created a concept or
//! added an alias; a creation at capacity (the eviction ranking must see every earlier step);
//! a creation that evicts (the next steps must not find the concepts it removes); a second
//! relationship between the same two concepts. An episode whose concepts are all known and
//! whose names differ in category is one record.
//!
//! **Failures.** Everything the caller gives is checked before anything changes: the trust,
//! every name, every relationship's ends, type, weight and confidence; bad input is an error
//! and nothing changes. Each record is all or nothing: when the journal refuses one, nothing
//! of it is applied and the error is returned; records already written (a split) stay, as
//! any acknowledged write does.
//!
//! ```
//! use atl::episode::{EpisodeConcept, EpisodeRelationship, EpisodeWrite};
//! use atl::{Atl, DefineOutcome};
//! use maxim_core::{ConceptProvenance, LayerKind, RecordId, Source};
//!
//! let mut atl = Atl::builder().id_seed(1).build()?;
//! let concepts = [
//!     EpisodeConcept::new("mug", "object", "object: mug"),
//!     EpisodeConcept::new("grasp", "action", "action: grasp"),
//! ];
//! let relationships = [EpisodeRelationship::new(0, 1, "RELATED_TO", 0.3, 0.3)];
//! let episode = RecordId::from_u128(7);
//! let source = Source::Episodic;
//! let write = EpisodeWrite::new(episode, LayerKind::Hippocampus, &source, 0.6)
//!     .concepts(&concepts)
//!     .relationships(&relationships);
//! let first = atl.record_episode(&write)?;
//! assert!(first.concepts.iter().all(|c| c.created));
//! assert_eq!(first.relationships, [Some(DefineOutcome::Created)]);
//! let mug = first.concepts[0].id;
//! assert_eq!(atl.concept(mug).unwrap().memory_refs.get(LayerKind::Hippocampus), [episode]);
//!
//! let again = atl.record_episode(&write.episode(RecordId::from_u128(8)))?;
//! assert_eq!(again.concepts[0].id, mug);
//! assert!(again.concepts[0].reinforced);
//! assert_eq!(atl.concept(mug).unwrap().source_episode_ids.len(), 2);
//! # Ok::<(), atl::Error>(())
//! ```

use maxim_core::{ConceptProvenance, LayerKind, RecordId, Source, Timestamp, Trust, check_unit};
use serde::{Deserialize, Serialize};

use crate::concept::Concept;
use crate::error::{Error, Result};
use crate::journal::{Applied, Op};
use crate::names::name_key_into;
use crate::relations::DefineOutcome;
use crate::store::{Atl, FindOrCreate, MatchKind, Resolved, SpecView};

/// One episode's concepts and the relationships between them, for
/// [`Atl::record_episode`] (see the [module docs](self)).
#[derive(Debug, Clone, Copy)]
pub struct EpisodeWrite<'a> {
    /// The episode: every concept is credited with it and references it.
    pub episode: RecordId,
    /// The layer that holds the episode (the references' layer).
    pub layer: LayerKind,
    /// How the concepts are formed (a created concept's provenance; a found one merges it).
    pub provenance: ConceptProvenance,
    /// The source of a created concept.
    pub source: &'a Source,
    /// The trust of a created concept, in `[0, 1]`.
    pub trust: f64,
    /// The concepts, in order.
    pub concepts: &'a [EpisodeConcept<'a>],
    /// The relationships, by index into [`concepts`](Self::concepts).
    pub relationships: &'a [EpisodeRelationship<'a>],
}

impl<'a> EpisodeWrite<'a> {
    /// A write for `episode` of `layer`, its concepts formed by episodic consolidation from
    /// `source` with `trust`, naming nothing yet.
    pub fn new(episode: RecordId, layer: LayerKind, source: &'a Source, trust: f64) -> Self {
        Self {
            episode,
            layer,
            provenance: ConceptProvenance::EpisodicConsolidation,
            source,
            trust,
            concepts: &[],
            relationships: &[],
        }
    }

    /// The same write with these concepts.
    #[must_use]
    pub fn concepts(mut self, concepts: &'a [EpisodeConcept<'a>]) -> Self {
        self.concepts = concepts;
        self
    }

    /// The same write with these relationships.
    #[must_use]
    pub fn relationships(mut self, relationships: &'a [EpisodeRelationship<'a>]) -> Self {
        self.relationships = relationships;
        self
    }

    /// The same write for another episode.
    #[must_use]
    pub fn episode(mut self, episode: RecordId) -> Self {
        self.episode = episode;
        self
    }
}

/// A concept an episode names: what [`Atl::find_or_create`] takes of a spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeConcept<'a> {
    /// The name.
    pub name: &'a str,
    /// The category.
    pub category: &'a str,
    /// The definition a created concept takes (and a found one without a definition).
    pub definition: &'a str,
}

impl<'a> EpisodeConcept<'a> {
    /// A concept named `name` in `category`, defined as `definition`.
    pub fn new(name: &'a str, category: &'a str, definition: &'a str) -> Self {
        Self { name, category, definition }
    }
}

/// A relationship between two concepts of an episode, by their indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeRelationship<'a> {
    /// The index of the source concept.
    pub source: usize,
    /// The index of the target concept.
    pub target: usize,
    /// The type.
    pub relationship: &'a str,
    /// The weight, in `[0, 1]`.
    pub weight: f64,
    /// The confidence, in `[0, 1]`.
    pub confidence: f64,
}

impl<'a> EpisodeRelationship<'a> {
    /// `source → target` of type `relationship`.
    pub fn new(source: usize, target: usize, relationship: &'a str, weight: f64, confidence: f64) -> Self {
        Self { source, target, relationship, weight, confidence }
    }
}

/// What [`Atl::record_episode`] did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RecordedEpisode {
    /// Per concept, in order: what finding it did.
    pub concepts: Vec<FindOrCreate>,
    /// Per concept: whether the reference to the episode was added (false when it was there
    /// already, or the concept is compressed and keeps no references).
    pub referenced: Vec<bool>,
    /// Per relationship, in order: what defining it did; `None` when it was not written,
    /// because its two ends are one concept, or an end was evicted by a creation of this
    /// same episode.
    pub relationships: Vec<Option<DefineOutcome>>,
    /// The journal records written (layers in memory count them too): 1, more when the
    /// write split (see the [module docs](self)), 0 for an episode that names nothing.
    pub records: usize,
}

/// A concept of an [`Op::Episode`], found or created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum EpisodeFind {
    /// Created, as a `find_or_create` miss creates it (the episode among its source
    /// episodes).
    Create {
        /// The concept, with its id.
        concept: Box<Concept>,
        /// The concepts evicted for it, in order.
        evicted: Vec<RecordId>,
        /// Candidate names the similarity path scored before creating it.
        scored: u64,
    },
    /// Found, as a `find_or_create` hit: reinforced crediting the episode.
    Hit {
        /// The concept found.
        id: RecordId,
        /// For a hit by similarity, the name given (trimmed), which becomes an alias.
        alias: Option<String>,
        /// Candidate names the similarity path scored.
        scored: u64,
        /// The provenance of the write.
        provenance: ConceptProvenance,
        /// The definition the concept takes, when it had none.
        definition: Option<String>,
    },
}

/// A relationship of an [`Op::Episode`], with the weight and confidence
/// it ends with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRelate {
    /// The source concept.
    pub source: RecordId,
    /// The target concept.
    pub target: RecordId,
    /// The type.
    pub relationship: String,
    /// The edge's weight after the write.
    pub weight: f64,
    /// The edge's confidence after the write.
    pub confidence: f64,
}

/// What applying an [`Op::Episode`] did, per concept and relationship.
#[derive(Debug, Default)]
pub(crate) struct EpisodeApplied {
    reinforced: Vec<bool>,
    referenced: Vec<bool>,
    defined: Vec<DefineOutcome>,
}

/// The steps resolved but not yet journaled, and what later steps must not read past.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    finds: Vec<EpisodeFind>,
    /// The concept index of each find.
    find_of: Vec<usize>,
    relates: Vec<EpisodeRelate>,
    /// The relationship index of each relate.
    relate_of: Vec<usize>,
    /// Concepts whose step changed the name index of their category (a creation, an alias).
    renamed: Vec<usize>,
    /// Concepts created.
    created: Vec<RecordId>,
    /// Whether a creation evicts.
    evicts: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.finds.is_empty() && self.relates.is_empty()
    }

    /// Empties it, keeping the room of the lists it keeps (the steps themselves go into the
    /// journal record).
    fn clear(&mut self) {
        self.finds.clear();
        self.find_of.clear();
        self.relates.clear();
        self.relate_of.clear();
        self.renamed.clear();
        self.created.clear();
        self.evicts = false;
    }
}

impl Atl {
    /// Finds or creates each concept of `write` crediting its episode, adds a reference from
    /// each to the episode, and defines each relationship (see the [module docs](crate::episode)):
    /// what [`find_or_create`](Self::find_or_create), [`add_ref`](Self::add_ref) and
    /// [`define_relationship`](Self::define_relationship) would do called in that order, one
    /// journal record instead of a dozen. A relationship whose two ends resolve to one
    /// concept is skipped.
    ///
    /// Errors (nothing changes): a trust outside `[0, 1]`, a name without a letter or digit
    /// ([`Error::EmptyName`]), a relationship index out of range
    /// ([`maxim_core::Error::InvalidArgument`]), an unknown type, a weight or confidence that
    /// is NaN or outside `[0, 1]`; a journal that refuses the write (see the module docs for a
    /// write that split).
    pub fn record_episode(&mut self, write: &EpisodeWrite<'_>) -> Result<RecordedEpisode> {
        let _s = tracing::debug_span!(
            "atl_record_episode",
            episode = %write.episode,
            n_concepts = write.concepts.len(),
            n_relationships = write.relationships.len()
        )
        .entered();
        let mut keys = std::mem::take(&mut self.scratch.episode_keys);
        let mut pending = std::mem::take(&mut self.scratch.episode_pending);
        pending.clear();
        let result = self
            .check_episode(write, &mut keys)
            .and_then(|trust| self.write_episode(write, trust, &keys, &mut pending));
        self.scratch.episode_keys = keys;
        self.scratch.episode_pending = pending;
        result
    }

    /// Checks everything `write` gives; fills `keys` with the name and category keys of its
    /// concepts.
    fn check_episode(&self, write: &EpisodeWrite<'_>, keys: &mut Vec<(String, String)>) -> Result<Trust> {
        let trust = Trust::new(write.trust)?;
        if keys.len() < write.concepts.len() {
            keys.resize_with(write.concepts.len(), Default::default);
        }
        for (c, (name, category)) in write.concepts.iter().zip(keys.iter_mut()) {
            name_key_into(c.name, name);
            if name.is_empty() {
                return Err(Error::EmptyName { field: "name", value: c.name.to_owned() });
            }
            name_key_into(c.category, category);
        }
        let n = write.concepts.len();
        for r in write.relationships {
            if r.source >= n || r.target >= n {
                let reason = format!("concept index {} of {n}", r.source.max(r.target));
                return Err(maxim_core::Error::invalid("episode relationship", reason).into());
            }
            self.state.registry.require(r.relationship)?;
            check_unit("weight", r.weight)?;
            check_unit("confidence", r.confidence)?;
        }
        Ok(trust)
    }

    /// Resolves, journals and applies a checked `write`.
    fn write_episode(
        &mut self,
        write: &EpisodeWrite<'_>,
        trust: Trust,
        keys: &[(String, String)],
        pending: &mut Pending,
    ) -> Result<RecordedEpisode> {
        let now = self.clock.now();
        let n = write.concepts.len();
        let mut out = RecordedEpisode {
            concepts: Vec::with_capacity(n),
            referenced: vec![false; n],
            relationships: vec![None; write.relationships.len()],
            records: 0,
        };
        for (i, c) in write.concepts.iter().enumerate() {
            let (name, category) = &keys[i];
            if pending.renamed.iter().any(|&j| keys[j].1 == *category) {
                self.commit_episode(write, now, pending, &mut out)?;
            }
            let spec = SpecView {
                name: c.name,
                category: c.category,
                definition: c.definition,
                provenance: write.provenance,
                source_episode: Some(write.episode),
                source: write.source,
                trust,
            };
            let found = match self.resolve_find(&spec, name, category, now)? {
                Resolved::Exact(id) => {
                    self.push_hit(pending, i, id, None, 0, &spec, now);
                    FindOrCreate { id, created: false, reinforced: false, matched: MatchKind::Exact }
                }
                Resolved::Similar { id, alias, scored, score, matched_key } => {
                    self.push_hit(pending, i, id, Some(alias), scored, &spec, now);
                    pending.renamed.push(i);
                    let matched = MatchKind::Similar { score, matched_key };
                    FindOrCreate { id, created: false, reinforced: false, matched }
                }
                Resolved::New { concept, scored } => {
                    let id = concept.meta.id;
                    if self.state.len() + pending.created.len() >= self.config.max_concepts {
                        // The eviction ranking must see every earlier step.
                        self.commit_episode(write, now, pending, &mut out)?;
                    }
                    let evicted = self.victims(now);
                    pending.evicts |= !evicted.is_empty();
                    pending.finds.push(EpisodeFind::Create { concept, evicted, scored });
                    pending.find_of.push(i);
                    pending.created.push(id);
                    pending.renamed.push(i);
                    FindOrCreate { id, created: true, reinforced: false, matched: MatchKind::Created }
                }
            };
            out.concepts.push(found);
            if pending.evicts {
                // What a creation evicts must be gone before the next step looks.
                self.commit_episode(write, now, pending, &mut out)?;
            }
        }
        let mut pairs: Vec<(RecordId, RecordId)> = Vec::with_capacity(write.relationships.len());
        for (k, r) in write.relationships.iter().enumerate() {
            let (source, target) = (out.concepts[r.source].id, out.concepts[r.target].id);
            if source == target {
                continue;
            }
            let pair = if source < target { (source, target) } else { (target, source) };
            if pairs.contains(&pair) {
                // The second definition reads the edge the first one writes.
                self.commit_episode(write, now, pending, &mut out)?;
                pairs.clear();
            }
            let op = match self.resolve_relate(
                source,
                target,
                r.relationship,
                r.weight,
                r.confidence,
                &pending.created,
            ) {
                Ok(op) => op,
                // An end evicted by a creation of this episode: skipped, as reported.
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            let Op::Relate { source, target, relationship, weight, confidence } = op else {
                unreachable!("resolve_relate makes a Relate");
            };
            pending.relates.push(EpisodeRelate { source, target, relationship, weight, confidence });
            pending.relate_of.push(k);
            pairs.push(pair);
        }
        self.commit_episode(write, now, pending, &mut out)?;
        Ok(out)
    }

    /// Adds a hit on `id` for concept `i` to `pending`.
    #[allow(clippy::too_many_arguments)]
    fn push_hit(
        &self,
        pending: &mut Pending,
        i: usize,
        id: RecordId,
        alias: Option<String>,
        scored: u64,
        spec: &SpecView<'_>,
        at: Timestamp,
    ) {
        // A second hit on one concept may carry the definition the first gives: applying it
        // then leaves the definition as it is.
        let Op::Hit { provenance, definition, .. } = self.hit_op(id, alias.clone(), scored, spec, at) else {
            unreachable!("hit_op makes a Hit");
        };
        pending.finds.push(EpisodeFind::Hit { id, alias, scored, provenance, definition });
        pending.find_of.push(i);
    }

    /// Journals and applies the pending steps as one record, if there are any, and reports
    /// what they did into `out`.
    fn commit_episode(
        &mut self,
        write: &EpisodeWrite<'_>,
        at: Timestamp,
        pending: &mut Pending,
        out: &mut RecordedEpisode,
    ) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let op = Op::Episode {
            episode: write.episode,
            layer: write.layer,
            at,
            concepts: std::mem::take(&mut pending.finds),
            relationships: std::mem::take(&mut pending.relates),
        };
        let applied = if pending.evicts { self.commit_evicting(op) } else { self.commit(op) }?;
        let Applied::Episode(applied) = applied else {
            unreachable!("an episode applies to an episode report");
        };
        for (k, &i) in pending.find_of.iter().enumerate() {
            out.concepts[i].reinforced = applied.reinforced[k];
            out.referenced[i] = applied.referenced[k];
        }
        for (k, &r) in pending.relate_of.iter().enumerate() {
            out.relationships[r] = Some(applied.defined[k]);
        }
        out.records += 1;
        pending.clear();
        Ok(())
    }

    /// Applies an [`Op::Episode`]: each concept as the single
    /// operations of a `find_or_create` and an `add_ref` apply, in order, then each
    /// relationship as a `define_relationship` applies.
    pub(crate) fn apply_episode(
        &mut self,
        episode: RecordId,
        layer: LayerKind,
        at: Timestamp,
        concepts: Vec<EpisodeFind>,
        relationships: Vec<EpisodeRelate>,
    ) -> EpisodeApplied {
        let mut applied = EpisodeApplied {
            reinforced: Vec::with_capacity(concepts.len()),
            referenced: Vec::with_capacity(concepts.len()),
            defined: Vec::with_capacity(relationships.len()),
        };
        for find in concepts {
            let (id, reinforced) = match find {
                EpisodeFind::Create { concept, evicted, scored } => {
                    let id = concept.meta.id;
                    self.apply(Op::Create { concept, at, evicted, scored });
                    (id, false)
                }
                EpisodeFind::Hit { id, alias, scored, provenance, definition } => {
                    let hit =
                        Op::Hit { id, at, alias, scored, episode: Some(episode), provenance, definition };
                    (id, matches!(self.apply(hit), Applied::Flag(true)))
                }
            };
            applied.reinforced.push(reinforced);
            let referenced = self.apply(Op::AddRef { id, layer, target: episode, at });
            applied.referenced.push(matches!(referenced, Applied::Flag(true)));
        }
        for r in relationships {
            let defined = self.apply_relate(r.source, r.target, &r.relationship, r.weight, r.confidence);
            applied.defined.push(defined);
        }
        applied
    }
}
