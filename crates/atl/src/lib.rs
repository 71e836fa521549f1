//! `atl`: the semantic layer of maxim — what things mean.
//!
//! Episodic memory records what happened; the anterior temporal lobe holds what things mean:
//! named concepts with a definition, a category, properties, provenance and confidence,
//! linked by typed relationships. This crate is that layer. It depends on [`maxim_core`]
//! alone, so a downstream crate takes `maxim-core` and `atl` and has a working semantic store.
//!
//! The principal types:
//!
//! - [`Atl`], the store: deduplicating [`find_or_create`](Atl::find_or_create) (names are
//!   normalised, then compared by similarity within blocked candidates, see [`names`]),
//!   [`recall_similar`](Atl::recall_similar) through an [`Embedder`](maxim_core::embed::Embedder),
//!   filtered recall over a constant-time context index, spreading activation, consolidation
//!   and persistence. It implements the core [`MemoryLayer`](maxim_core::MemoryLayer) and
//!   [`ConceptStore`](maxim_core::ConceptStore) traits.
//! - [`Concept`] and [`SemanticRecord`]: a concept in full, or the [`CompressedSemantic`] form
//!   consolidation leaves; confidence follows the seed's rule ([`confidence_for`]). A
//!   `find_or_create` hit reinforces only a full concept: a compressed one is found (and
//!   takes a similar name as an alias), but its count and confidence stay as they are, since
//!   it keeps no episodes to show for them ([`FindOrCreate::reinforced`] is false).
//! - [`RelationshipRegistry`]: the fifteen built-in relationship types and the ones agents
//!   propose; relationships are defined, reinforced, found and updated on [`Atl`] (see
//!   [`relations`]).
//! - [`properties`]: properties are claims of sources; a second source's different value is
//!   kept beside the first and reported as a [`Contradiction`], never silently overwritten.
//! - [`journal`]: the layer opened on a directory ([`AtlBuilder::open`], with a
//!   [`SyncPolicy`](maxim_core::journal::SyncPolicy)): every write is resolved into an [`Op`]
//!   and journaled before it is applied, so a crash loses no acknowledged write;
//!   [`checkpoint`](Atl::checkpoint) compacts.
//!
//! ```
//! use atl::{Atl, Direction, MatchKind, spec};
//! use maxim_core::{ManualClock, MemoryLayer, RecordId, Source, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut atl = Atl::builder().clock(clock.shared()).build()?;
//!
//! // Deduplication: one concept however the name is written.
//! let mug = atl.find_or_create(&spec("coffee_mug", "object"))?;
//! assert!(mug.created);
//! let mut seen = spec("Coffee Mugs", "object");
//! seen.source_episode = Some(RecordId::from_u128(42));
//! let again = atl.find_or_create(&seen)?;
//! assert_eq!((again.id, again.created, again.reinforced), (mug.id, false, true));
//! assert_eq!(atl.concept(mug.id).unwrap().reinforcement_count, 2);
//! let typo = atl.find_or_create(&spec("coffe mug", "object"))?;
//! assert!(matches!(typo.matched, MatchKind::Similar { .. }) && typo.id == mug.id);
//!
//! // Typed relationships and spreading activation.
//! let kitchen = atl.find_or_create(&spec("kitchen", "location"))?.id;
//! atl.define_relationship(mug.id, kitchen, "RELATED_TO", 0.8, 0.5)?;
//! let found = atl.find_relationships(mug.id, Some("RELATED_TO"), Direction::Outgoing, 20)?;
//! assert_eq!(found[0].target, kitchen);
//! assert_eq!(atl.recall_associated(&[mug.id], 10)[0].0.name(), "kitchen");
//!
//! // Contradictions are surfaced, not overwritten.
//! atl.set_property(mug.id, "color", "blue", Source::UserStated, 1.0)?;
//! let write = atl.set_property(mug.id, "color", "red", Source::Web("example.com".into()), 0.3)?;
//! assert!(write.contradiction.is_some() && atl.is_contested(mug.id));
//! assert_eq!(atl.property(mug.id, "color").and_then(|v| v.as_str()), Some("blue"));
//!
//! // "Do I already know about this?"
//! assert_eq!(atl.recall_similar("coffee mugs", 1)[0].0, mug.id);
//! assert_eq!(atl.len(), 2);
//! # Ok::<(), atl::Error>(())
//! ```
//!
//! # Crate features
//!
//! None: everything is always built.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod concept;
pub mod config;
pub mod consolidate;
pub mod episode;
pub mod error;
pub mod filter;
mod forget;
mod index;
pub mod journal;
pub mod layer;
pub mod names;
pub mod persist;
pub mod properties;
pub mod registry;
pub mod relations;
mod state;
pub mod store;

pub use concept::{
    CompressedSemantic, Concept, MAX_ALIASES, MAX_CONFIDENCE, MAX_REFS_PER_LAYER, MAX_SOURCE_EPISODES,
    MemoryRefs, SemanticRecord, confidence_for,
};
pub use config::{AtlBuilder, AtlConfig};
pub use consolidate::{EVICTION_BATCH_DIVISOR, EVICTION_RANKING_TTL, may_compress, retention_score};
pub use episode::{EpisodeConcept, EpisodeRelationship, EpisodeWrite, RecordedEpisode};
pub use error::{Error, Result};
pub use filter::ConceptFilter;
pub use journal::Op;
pub use maxim_core;
pub use persist::SCHEMA_VERSION;
pub use properties::{Claim, Contradiction, Property, PropertyChange};
pub use registry::{RelationshipRegistry, RelationshipType};
pub use relations::{DefineOutcome, Direction, EdgeUpdate, Relationship};
pub use store::{Atl, FindOrCreate, LAYER_NAME, MatchKind, PropertyWrite, SourcePurge, spec};

/// The original's name for a concept record (`SemanticMemory`); here one type serves both it
/// and the original's `Concept`.
pub type SemanticMemory = Concept;
