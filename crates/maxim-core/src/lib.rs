//! `maxim-core`: the contracts every maxim crate speaks.
//!
//! maxim gives an AI agent a memory that accumulates: episodes (hippocampus), concepts
//! (atl), numbers and patterns (angular-gyrus), skills (cerebellum), joined by a
//! cross-layer graph. Every one of those crates depends on this one and on no other, so
//! whatever two of them must agree on lives here:
//!
//! - ids and time: [`RecordId`], [`IdGenerator`], [`Timestamp`], [`Clock`];
//! - what every record carries: [`RecordMeta`] with its [`Source`], [`Trust`] and
//!   trace state;
//! - the layer protocol: [`MemoryLayer`], [`MemoryRecord`] and the object-safe [`LayerView`];
//! - the cross-crate contracts in [`contracts`]: [`PromotionSource`], [`RandomnessGate`],
//!   [`ConceptStore`], [`CrossLinks`], [`GraphView`], and the [`Embedder`] of [`embed`];
//! - shared mechanisms: the associative [`graph`] with spreading activation, memory
//!   [`trace`]s, [`rank`]ing, [`text`] normalisation, [`lexical`] search (BM25), the snapshot [`codec`] and the operation [`journal`].
//!
//! ```
//! use maxim_core::{IdGenerator, ManualClock, RecordMeta, Source, Timestamp, TraceKind};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ids = IdGenerator::seeded(1);
//! let meta = RecordMeta::new(ids.next_id(clock.now()), clock.now(), Source::ToolResult, 0.8, TraceKind::Episodic)?;
//! assert_eq!(meta.trust.get(), 0.8);
//! assert_eq!(meta.trace.strength_at(clock.now(), &maxim_core::TraceParams::default()), 0.6);
//! # Ok::<(), maxim_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! - `testing`: the [`MemoryLayer`] contract suite (`maxim_core::testing`) that every layer
//!   crate runs against itself.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod codec;
#[cfg(test)]
mod contract_selftest;
pub mod contracts;
pub mod embed;
pub mod error;
pub mod graph;
pub mod hash;
pub mod id;
pub mod journal;
pub mod layer;
pub mod lexical;
pub mod ownership;
pub mod rank;
pub mod record;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;
pub mod time;
pub mod trace;
pub mod value;

pub use codec::{LoadOutcome, Recovery, SaveReport, SnapshotInfo};
pub use contracts::{
    BoxError, ConceptProvenance, ConceptSpec, ConceptStore, CrossEdgeKind, CrossLinks, GateDecision,
    GraphView, LayerKind, LayerRecord, MetaValue, MetaValueRef, MetadataRef, PatternType, PromotionCandidate,
    PromotionCandidateRef, PromotionSource, RandomnessAssessment, RandomnessGate, SplitSlice,
};
pub use embed::{Embedder, HashEmbedder, HashEmbedderConfig, Parallelism, VectorIndex};
pub use error::{CorruptReason, Error, Result};
pub use graph::{
    Activation, ActivationParams, CsrGraph, EdgeInsert, EdgeKind, EdgeMeta, EdgeMetaRef, EdgeRef, Graph,
};
pub use id::{IdGenerator, RecordId, SplitMix64};
pub use layer::{
    CALLBACK_FAILURES, Callbacks, ConsolidationReport, LayerStats, LayerView, MemoryLayer, MemoryRecord,
};
pub use record::{
    Partition, RecordMeta, Source, Trust, check_finite, check_non_negative, check_signed_unit, check_unit,
};
pub use text::normalize_tokens;
pub use time::{Clock, ManualClock, SharedClock, SystemClock, Timestamp, days};
pub use trace::{
    DecaySummary, Disposition, ReinforceError, ReinforceOutcome, StorageTier, TraceEntry, TraceKind,
    TraceParams, TraceRef, TraceState, TraceStateParts, TraceStore, decay_all,
};
pub use value::{Map, Value};
