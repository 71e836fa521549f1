//! `maxim`: a memory that accumulates, for AI agents.
//!
//! The facade over every maxim crate. It re-exports `maxim-core` and each layer, and will
//! wire them into a `MemoryHub`; the `maxim` program runs a demo and looks into memory
//! directories (`cargo run --release -p maxim -- demo`).
//!
//! ```
//! use maxim::atl::{Atl, spec};
//! use maxim::maxim_core::{ManualClock, Timestamp};
//! use maxim::hippocampus::{Hippocampus, NewEpisode};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut episodes = Hippocampus::builder().clock(clock.shared()).build()?;
//! let mut concepts = Atl::builder().clock(clock.shared()).build()?;
//! let mut seen = NewEpisode::default();
//! seen.perception.detected_objects = vec!["coffee_mug".into()];
//! let episode = episodes.capture(seen)?;
//! let mut mug = spec("Coffee Mugs", "object");
//! mug.source_episode = Some(episode);
//! let first = concepts.find_or_create(&mug)?;
//! assert_eq!(concepts.find_or_create(&spec("coffee mug", "object"))?.id, first.id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! One per layer crate, named after it and on by default: `hippocampus`, `atl`,
//! `angular-gyrus`, `crossgraph`, `nac`, `ips-gate`, `promoter`, `cerebellum`. With
//! `default-features = false` only `maxim-core` is re-exported, plus the layers named.
//! `cli` (on by default) brings what the `maxim` program needs beyond the layers (its log
//! subscriber, arguments, progress bar and SVG chart); the program needs `hub` and `cli`.
//! `error-traces` (on by default; it needs `hippocampus`) brings `maxim::error_traces`, a
//! `tracing-subscriber` layer that remembers the host program's errors as episodes.
//! `mcp` (on by default; it needs `hub`) brings [`mcp`], the memory as an MCP server
//! (`maxim mcp`) on rmcp and a single-threaded tokio runtime; `mcp-http` (off by default)
//! adds the same server over streamable HTTP on a loopback address (`maxim mcp --http`).
//! `maxim::extract` (concept extraction) needs `hippocampus` and `atl`; [`context`] (the
//! fenced knowledge context) is always built. `demo` (the program's simulated house robot)
//! needs `hippocampus` and `cerebellum`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;

pub mod context;
#[cfg(all(feature = "hippocampus", feature = "cerebellum"))]
pub mod demo;
#[cfg(feature = "error-traces")]
pub mod error_traces;
#[cfg(all(feature = "hippocampus", feature = "atl"))]
pub mod extract;
#[cfg(feature = "hub")]
pub mod hub;
#[cfg(feature = "mcp")]
pub mod mcp;

pub use context::{Candidate, ContextRelation, KnowledgeContext, KnowledgeEntry, LowTrust, RankOptions};
#[cfg(feature = "error-traces")]
pub use error_traces::{ErrorSink, ErrorTraces, ErrorTracesConfig};
#[cfg(all(feature = "hippocampus", feature = "atl"))]
pub use extract::{Category, ExtractedConcept, Extraction, RelationKind, extract};
#[cfg(feature = "hub")]
pub use hub::{
    Captured, Forget, ForgetReport, HubBuilder, HubConfig, HubStats, KnowledgeQuery, MemoryHub,
    SessionReport, SessionStart, SharedHub, Traversal, TraversalStep,
};

#[cfg(feature = "angular-gyrus")]
pub use angular_gyrus;
#[cfg(feature = "atl")]
pub use atl;
#[cfg(feature = "cerebellum")]
pub use cerebellum;
#[cfg(feature = "crossgraph")]
pub use crossgraph;
#[cfg(feature = "hippocampus")]
pub use hippocampus;
#[cfg(feature = "ips-gate")]
pub use ips_gate;
#[cfg(feature = "nac")]
pub use nac;
#[cfg(feature = "promoter")]
pub use promoter;

pub mod scn;
