//! `promoter`: promotes repeated patterns into lasting maxim concepts.
//!
//! Memory consolidation turns repeated, rewarded experience into knowledge. The
//! [`SemanticPromoter`] does this for maxim, with the whole flow of the seed (the original
//! took a shortcut, `spec/maxim-reference.md` §11): it collects
//! [`PromotionCandidate`](maxim_core::PromotionCandidate)s from every
//! [`PromotionSource`](maxim_core::PromotionSource) (NAc's causal patterns, the statistician's
//! operational ones; a failing source is reported and skipped), passes them through the
//! [`RandomnessGate`](maxim_core::RandomnessGate) (on by default), deduplicates them against
//! the concepts already known through
//! [`ConceptStore::similar_concepts`](maxim_core::ConceptStore::similar_concepts) and
//! `find_or_create_concept`, reinforces a known concept only with evidence it has not seen,
//! writes the elements shared by the source episodes as the concept's properties, relates a
//! causal pattern's event to its outcome by CAUSES, and links the concept to its episodes,
//! its angular-gyrus record and (when phase-locked) itself through
//! [`CrossLinks`](maxim_core::CrossLinks), never stacking an edge twice.
//!
//! The principal types:
//!
//! - [`SemanticPromoter`] (built by [`PromoterBuilder`] with a [`PromoterConfig`]): `scan`
//!   returns a [`PromotionReport`] of what was promoted, reinforced, left unchanged, rejected
//!   (with the reason) and what failed.
//! - [`EpisodeReader`]: how the promoter reads source episodes ([`EpisodeElements`]); any
//!   `Fn(RecordId) -> Option<EpisodeElements>` is one.
//! - [`Ledger`]: what was credited already, so a second scan over the same evidence changes
//!   nothing; saved and loaded through the core codec ([`persist`]), and journaled when the
//!   promoter is opened on a directory ([`journal`]).
//!
//! ```
//! use std::sync::Arc;
//! use maxim_core::{
//!     BoxError, ConceptProvenance, ConceptSpec, ConceptStore, CrossEdgeKind, CrossLinks, GateDecision,
//!     LayerRecord, PromotionCandidate, PromotionSource, RandomnessAssessment, RandomnessGate, RecordId,
//!     Source, Value,
//! };
//! use maxim_core::contracts::CAUSAL_PATTERN;
//! use promoter::SemanticPromoter;
//! # use std::collections::BTreeMap;
//! # #[derive(Default)] struct Concepts { names: Vec<String>, reinforced: u32 }
//! # impl ConceptStore for Concepts {
//! #     type Error = std::io::Error;
//! #     fn find_or_create_concept(&mut self, s: &ConceptSpec) -> Result<(RecordId, bool), Self::Error> {
//! #         if let Some(i) = self.names.iter().position(|n| *n == s.name) {
//! #             self.reinforced += u32::from(s.source_episode.is_some());
//! #             return Ok((RecordId::from_u128(i as u128 + 1), false));
//! #         }
//! #         self.names.push(s.name.clone());
//! #         Ok((RecordId::from_u128(self.names.len() as u128), true))
//! #     }
//! #     fn reinforce_concept(&mut self, _: RecordId, _: Option<RecordId>) -> Result<(), Self::Error> { self.reinforced += 1; Ok(()) }
//! #     fn similar_concepts(&self, _: &str, _: usize) -> Vec<(RecordId, f64)> { Vec::new() }
//! #     fn relate_concepts(&mut self, _: RecordId, _: RecordId, _: &str, _: f64, _: f64) -> Result<(), Self::Error> { Ok(()) }
//! #     fn set_concept_property(&mut self, _: RecordId, _: &str, _: Value, _: &Source, _: f64) -> Result<(), Self::Error> { Ok(()) }
//! # }
//! # #[derive(Default)] struct Links(Vec<(LayerRecord, LayerRecord, CrossEdgeKind, f64)>);
//! # impl CrossLinks for Links {
//! #     type Error = std::io::Error;
//! #     fn add_cross_edge(&mut self, f: LayerRecord, t: LayerRecord, k: CrossEdgeKind, w: f64) -> Result<(), Self::Error> {
//! #         self.0.retain(|e| (e.0, e.1, e.2) != (f, t, k)); self.0.push((f, t, k, w)); Ok(())
//! #     }
//! #     fn remove_cross_edges(&mut self, _: LayerRecord) -> usize { 0 }
//! #     fn cross_edges_from(&self, f: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> {
//! #         self.0.iter().filter(|e| e.0 == f).map(|e| (e.1, e.2, e.3)).collect()
//! #     }
//! # }
//! // A source with one causal pattern seen in four episodes.
//! struct Nac(Vec<RecordId>);
//! impl PromotionSource for Nac {
//!     fn source_name(&self) -> &str { "nac" }
//!     fn promotion_candidates(&self, _: f64, _: u32) -> Result<Vec<PromotionCandidate>, BoxError> {
//!         Ok(vec![PromotionCandidate {
//!             pattern_name: "tool:grasp → tool:grasp:positive".into(),
//!             category: CAUSAL_PATTERN.into(),
//!             confidence: 0.7,
//!             observations: self.0.len() as u32,
//!             source_memory_ids: self.0.clone(),
//!             observed_at: vec![],
//!             source: Source::Episodic,
//!             metadata: BTreeMap::new(),
//!         }])
//!     }
//! }
//! // A gate that lets everything through.
//! struct Open;
//! impl RandomnessGate for Open {
//!     fn assess(&self, values: &[f64]) -> RandomnessAssessment {
//!         RandomnessAssessment::insufficient(values.len())
//!     }
//!     fn admits(&self, _: &PromotionCandidate) -> GateDecision {
//!         GateDecision { admitted: true, reason: "open".into() }
//!     }
//! }
//!
//! let episodes: Vec<RecordId> = (1..=4).map(|n| RecordId::from_u128(100 + n)).collect();
//! let mut promoter = SemanticPromoter::builder()
//!     .gate(Arc::new(Open))
//!     .source(Arc::new(Nac(episodes.clone())))
//!     .build()?;
//! let (mut concepts, mut links) = (Concepts::default(), Links::default());
//!
//! let first = promoter.scan(&mut concepts, &mut links);
//! assert_eq!(first.promoted.len(), 1);
//! assert_eq!(first.promoted[0].provenance, ConceptProvenance::EpisodicConsolidation);
//! assert_eq!(first.promoted[0].reinforcements, 3); // the first episode came with the creation
//! assert_eq!(first.promoted[0].edges_added, 4); // DERIVED_FROM each episode
//!
//! // The same evidence again: nothing changes.
//! let second = promoter.scan(&mut concepts, &mut links);
//! assert!(second.is_quiet() && second.unchanged.len() == 1);
//! assert_eq!((concepts.reinforced, links.0.len()), (3, 4));
//! # Ok::<(), promoter::Error>(())
//! ```
//!
//! # Crate features
//!
//! None: everything is always built.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
pub mod episodes;
pub mod error;
pub mod journal;
pub mod ledger;
pub mod pattern;
pub mod persist;
pub mod promoter;
pub mod report;

pub use config::PromoterConfig;
pub use episodes::{EpisodeElements, EpisodeReader, RecurringElements, recurring};
pub use error::{Error, Result};
pub use ledger::{ConceptEntry, Ledger, Op, PatternEntry};
pub use maxim_core;
pub use persist::{SCHEMA_VERSION, SNAPSHOT_KIND};
pub use promoter::{PromoterBuilder, PromoterStats, SemanticPromoter};
pub use report::{Failure, Matched, Promotion, PromotionReport, RejectedBy, Rejection, Stage};
