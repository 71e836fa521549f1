//! `hippocampus`: the episodic layer of maxim, what happened.
//!
//! The hippocampus records one [`EpisodicMemory`] per observe → decide → act → evaluate
//! cycle of an agent, indexes it by goal, tool, success, mode, object and person, links it
//! to earlier episodes that shared its objects, and during [`sleep`](Hippocampus::sleep)
//! promotes the important episodes to long-term memory, compresses the old and little-used
//! ones into a [`CompressedMemory`] and forgets the rest (seven days without access by
//! default). It follows `spec/maxim-reference.md` §3 and implements the core
//! [`MemoryLayer`](maxim_core::MemoryLayer) protocol. It depends on `maxim-core` alone.
//!
//! The principal types:
//!
//! - [`Hippocampus`]: the store, built in memory or opened on a directory with its journal
//!   ([`HippocampusBuilder::open`], [`journal`], [`Op`]); [`HippocampusConfig`] its settings;
//! - [`Episode`]: a record, full ([`EpisodicMemory`]) or compressed ([`CompressedMemory`]);
//! - [`NewEpisode`] and [`LoopStep`]: what a capture takes; [`RecallFilter`]: what a recall
//!   matches (with a query, ranked by BM25 over the text fields [`TextField`] declares, through
//!   a [`LexicalIndex`](maxim_core::lexical::LexicalIndex) kept in step with every write);
//! - [`RetentionStrategy`] and its implementations, [`StateStore`] for state snapshots.
//!
//! ```
//! use std::time::Duration;
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode, RecallFilter};
//! use maxim_core::{ManualClock, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let mut looked = NewEpisode::default();
//! looked.perception.detected_objects = vec!["mug".into(), "table".into()];
//! looked.context.active_goal = Some("find mug".into());
//! looked.action.tool_name = "look_around".into();
//! looked.outcome.success = Some(true);
//! let first = hippo.capture(looked.clone())?;
//! clock.advance(Duration::from_secs(60));
//! let second = hippo.capture(looked)?;
//!
//! let found = hippo.recall(&RecallFilter::new().goal("find mug").success(true), 10);
//! assert_eq!(found.iter().map(|e| e.id()).collect::<Vec<_>>(), [second, first]); // newest first
//! let linked = hippo.recall_associated(&[second], 10);
//! assert_eq!(linked[0].0.id(), first);
//! assert_eq!(hippo.sleep().preserved, 2);
//! # Ok::<(), hippocampus::Error>(())
//! ```
//!
//! How big an episode is on disk and in memory, and how the store makes room at capacity
//! (a batch eviction, not the original's one record per capture), are described in
//! `docs/hippocampus.md`.
//!
//! # Crate features
//!
//! None. Text similarity ([`Hippocampus::recall_similar_text`]) is switched on at run time by
//! giving the configuration an [`Embedder`](maxim_core::embed::Embedder).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod capture;
pub mod config;
pub mod episode;
pub mod error;
pub mod hash;
pub mod index;
pub mod journal;
pub mod layer;
pub mod persist;
pub mod retrieval;
pub mod sleep;
pub mod state_store;
pub mod store;
pub mod strategy;

pub use capture::{Emotion, LoopStep, NewEpisode};
pub use config::{HippocampusBuilder, HippocampusConfig, StrategyKind};
pub use episode::{
    Action, CompressedMemory, Decision, Episode, EpisodeContext, EpisodeSummary, EpisodicMemory, MAX_NAMES,
    Name, Outcome, Perception, TextField, UsePressure, empty_name,
};
pub use error::{Error, Result};
pub use hash::StateRef;
pub use index::{IndexKey, IndexedKeys, KeyKind, PAIR_KEYS_MAX};
pub use journal::Op;
pub use maxim_core;
pub use persist::{LoadOutcome, SCHEMA_VERSION, SNAPSHOT_KIND};
pub use retrieval::RecallFilter;
pub use sleep::{ClusteredSleepReport, PromotionReport};
pub use state_store::{StateStore, StateStoreStats};
pub use store::{CompressCallback, ConsistencyReport, Counters, Hippocampus, LAYER_NAME};
pub use strategy::{
    AccessBased, Composite, ImportanceBased, RetentionStrategy, TemporalAware, TemporalContext,
};
