//! `nac`: reward learning for maxim.
//!
//! The nucleus accumbens learns which events lead to which outcomes, and how good those
//! outcomes are (`spec/maxim-reference.md` §8). Each event → outcome pair in a context is a
//! [`CausalLink`] whose value V moves towards the outcome's reward by Rescorla–Wagner
//! (`V += α·(R − V)`, R = 1 for a positive outcome, 0 for a negative one, 0.5 otherwise).
//! Links count their observations (confidence `min(0.99, 0.5 + 0.1·√count)`), smooth their
//! valence, keep their last delays, episodes and observation times, predict what an event
//! will lead to, decay, and are evicted at capacity. The confident, positive ones become
//! promotion candidates for the semantic layer, through [`maxim_core::PromotionSource`].
//!
//! Principal types:
//! - [`Nac`], the store (built with [`Nac::builder`], configured by [`NacConfig`]);
//! - [`CausalLink`] and its [`LinkId`], [`Valence`];
//! - [`Observation`] for [`Nac::observe`], [`Outcome`] for [`Nac::record_outcome`] after
//!   [`Nac::record_event`], and the [`Prediction`] of [`Nac::predict`].
//!
//! A store lives in memory ([`NacBuilder::build`]) or on a directory ([`NacBuilder::open`]),
//! where every write is journaled before it returns and [`Nac::checkpoint`] compacts (see
//! [`journal`]).
//!
//! Unlike the original, a link keeps the times of its observations (bounded) and its
//! promotion candidate carries them in `observed_at`, so the randomness gate needs no access
//! to the episodic layer. `nac` knows nothing of `hippocampus`: episodes are opaque
//! [`RecordId`](maxim_core::RecordId)s.
//!
//! ```
//! use maxim_core::value::{Map, Value};
//! use maxim_core::{ManualClock, PromotionSource, Timestamp};
//! use nac::{Nac, Observation, Valence};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut nac = Nac::builder().clock(clock.shared()).build()?;
//! let mug: Map = [("object", Value::from("mug"))].into_iter().collect();
//! let heavy: Map = [("object", Value::from("heavy_box"))].into_iter().collect();
//! for _ in 0..10 {
//!     nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "grasped", Valence::Positive).context(&mug))?;
//!     nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "dropped", Valence::Negative).context(&heavy))?;
//! }
//! // The context decides which link predicts.
//! let p = nac.predict("tool", "tool:grasp", &mug).unwrap();
//! assert_eq!(p.outcome.as_ref().map(|(_, sig)| sig.as_str()), Some("grasped"));
//! assert!(p.value > 0.75);
//! // Only the positive link is worth promoting.
//! let candidates = nac.promotion_candidates(0.6, 3)?;
//! assert_eq!(candidates.len(), 1);
//! assert_eq!(candidates[0].observed_at.len(), 10);
//! # Ok::<(), maxim_core::BoxError>(())
//! ```
//!
//! # Crate features
//!
//! None.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod candidates;
mod config;
pub mod context;
mod error;
pub mod journal;
mod keys;
mod link;
mod persist;
mod ring;
mod store;

pub use config::{MAX_HISTORY_BOUND, NacConfig};
pub use error::{Error, Result};
pub use link::{CausalLink, LinkId, Valence, alpha};
pub use maxim_core;
pub use persist::{SCHEMA_VERSION, SNAPSHOT_KIND};
pub use ring::Ring;
pub use store::{
    Attribution, DelayEstimate, EventId, MIN_KEYWORD_CHARS, Nac, NacBuilder, NacStats, Observation, Observed,
    Outcome, OutcomeReport, PendingEvent, Prediction, Prior,
};
