//! `promoter`: promotes repeated patterns into lasting maxim concepts.
//!
//! The semantic promoter will scan every [`maxim_core::PromotionSource`], pass candidates
//! through the [`maxim_core::RandomnessGate`], deduplicate them against existing concepts
//! through [`maxim_core::ConceptStore::similar_concepts`], create or reinforce concepts, form
//! their relationships and record cross-layer edges through [`maxim_core::CrossLinks`]
//! without stacking duplicates (`spec/maxim-reference.md` §11, seed 000).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
