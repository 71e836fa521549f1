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
//! - [`Hippocampus`]: the store; [`HippocampusConfig`] its settings;
//! - [`Episode`]: a record, full ([`EpisodicMemory`]) or compressed ([`CompressedMemory`]);
//! - [`NewEpisode`] and [`LoopStep`]: what a capture takes; [`RecallFilter`]: what a recall
//!   matches;
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
//! # Sizes
//!
//! Encoded with the core snapshot codec (postcard payload after a 40-byte header), the
//! typical episode of the original's hub tests (two objects, a typed command, a goal,
//! an intent of two entries, a tool with one parameter, a result of two entries) takes
//! **288 bytes** full and **149 bytes** compressed (189 with the header); the test
//! `sizes` holds the compressed form, header included, to at most 200 bytes, and checks
//! these figures. (The original
//! quoted about 2.5 KB of JSON for a full episode and about 200 bytes compressed.)
//! A workload episode takes about 400 bytes of snapshot file, graph edges included.
//!
//! In memory a full workload episode costs under **2 KB resident** with its index entries
//! and its share of the graph (about ten directed edges, some 800 bytes of it): 1,966 bytes
//! per episode at 10^4 episodes and 1,870 at 10^5 (growth of the resident set over the
//! capture loop in a fresh process, printed by
//! `cargo bench -p maxim-benches --bench hippocampus`). Names
//! (objects, people, goals, modes, tools) are [`Name`]s interned by the layer, so the
//! thousands of episodes that saw `mug` share one allocation; maps and lists are trimmed
//! to their length at capture.
//!
//! Capture is synchronous and costs a few microseconds, so the original's asynchronous
//! capture queue is not reproduced (see [`capture`]).
//!
//! # Eviction at capacity
//!
//! The store holds at most `max_nodes` records (10,000 by default). The original made room
//! for a capture at capacity by evicting one record, the lowest retention score among the
//! records that are not long-term, found by scoring every record: a pass over the store for
//! every capture at capacity. Here a capture that finds the store full scores every record
//! once and evicts a *batch*: the `⌈eviction_fraction × max_nodes⌉` records (1%, 100 of
//! 10,000, by default; at least one) with the lowest scores at that moment among those that
//! are not long-term, ties going to the oldest, lowest first. The next captures fill that
//! room without scoring anything, so one pass serves a batch of captures: a capture at
//! capacity costs about 12 to 15 µs at 10^4 records instead of about 280 µs
//! (`capture_at_capacity/10000`; a capture below capacity costs about 3 µs, the rest is the
//! pass shared by a hundred captures and the removal of one record).
//!
//! What holds exactly: the records evicted together are the batch-size lowest scores among
//! the evictable records at the time of the eviction, and no record with a lower score stays;
//! a long-term record is never evicted (when every record is long-term, the capture goes over
//! capacity and counts it in `over_capacity_inserts`). What differs from evicting one at a
//! time: once full, the store holds between `max_nodes − batch + 1` and `max_nodes` records,
//! not always `max_nodes`, and a record can be evicted up to `batch − 1` captures earlier
//! than one-at-a-time eviction would have evicted it (or at all, if an access in those
//! captures would have raised its score).
//! `eviction_fraction = 0` gives the original's behaviour and cost.
//!
//! Why a batch and not a list of candidates kept for later: scores move between captures
//! (an access raises one, time lowers them all), so candidates ranked once and evicted one at
//! a time later would be chosen on stale scores. A batch is chosen on the scores of one
//! moment, which keeps the rule exact for that moment, at the price of holding up to 1% fewer
//! records for a while.
//!
//! A store that is nearly all long-term has few records to evict; a record only becomes
//! evictable by being stored, so after a pass the layer keeps the list of the evictable
//! records left (when there are at most four batches of them) and adds those stored since,
//! and the next eviction scores only that list, with the same result. Otherwise such a store
//! would pay a whole pass for every capture.
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
pub mod layer;
pub mod persist;
pub mod retrieval;
pub mod sleep;
pub mod state_store;
pub mod store;
pub mod strategy;

pub use capture::{LoopStep, NewEpisode};
pub use config::{HippocampusBuilder, HippocampusConfig, StrategyKind};
pub use episode::{
    Action, CompressedMemory, Decision, Episode, EpisodeContext, EpisodeSummary, EpisodicMemory, MAX_NAMES,
    Name, Outcome, Perception, UsePressure, empty_name,
};
pub use error::{Error, Result};
pub use hash::StateRef;
pub use index::{IndexKey, IndexedKeys, KeyKind, PAIR_KEYS_MAX};
pub use maxim_core;
pub use persist::{LoadOutcome, SNAPSHOT_KIND};
pub use retrieval::RecallFilter;
pub use sleep::{ClusteredSleepReport, PromotionReport};
pub use state_store::{StateStore, StateStoreStats};
pub use store::{CompressCallback, ConsistencyReport, Counters, Hippocampus, LAYER_NAME};
pub use strategy::{
    AccessBased, Composite, ImportanceBased, RetentionStrategy, TemporalAware, TemporalContext,
};
