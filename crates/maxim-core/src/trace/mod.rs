//! Memory traces: how records strengthen and fade, after lex-memory (`spec/lex-memory.md`).
//!
//! - the pure formulas with the reference's operation order
//!   ([`compute_decay`], [`compute_reinforcement`], [`compute_retrieval_score`],
//!   [`compute_storage_tier`]) and the named constants;
//! - [`TraceState`]: the state a record carries. Its strength is not stored: it is a pure
//!   function of the state and the time ([`TraceState::strength_at`], [`TraceParams`]),
//!   read on the power-law curve of the trace's peak from its decay origin. Tiers,
//!   retrieval scores and dispositions all read it at their `now`; [`decay_all`] evaluates it
//!   for a whole slice of states;
//! - [`TraceStore`]: a store of traces with payloads, decay cycles (which prune faded traces),
//!   tier migration, ranked retrieval, Hebbian links and erasure, every strength read at the
//!   caller's `now`.
//!
//! ```
//! use std::time::Duration;
//! use maxim_core::{RecordId, Timestamp, days};
//! use maxim_core::trace::{TraceEntry, TraceKind, TraceParams, TraceState, TraceStore};
//! let t0 = Timestamp::from_secs(1_700_000_000);
//! let mut store = TraceStore::new(TraceParams::default());
//! let (a, b) = (RecordId::from_u128(1), RecordId::from_u128(2));
//! store.insert(TraceEntry::new(a, TraceState::new(TraceKind::Semantic, t0), "fact"))?;
//! store.insert(TraceEntry::new(b, TraceState::new(TraceKind::Episodic, t0), "event"))?;
//! for _ in 0..2 {
//!     assert!(!store.record_coactivation(a, b)?);
//! }
//! assert!(store.record_coactivation(a, b)?); // linked on the third co-activation
//! // 100 ticks later: 0.5 * 101^-0.01, whether or not a decay cycle runs.
//! let later = t0 + Duration::from_secs(100 * 60);
//! let strength = store.get(a).unwrap().state.strength_at(later, store.params());
//! assert!((strength - 0.4774487829134969).abs() < 1e-12);
//! let report = store.decay_cycle(later);
//! assert_eq!((report.decayed, report.pruned), (2, 0));
//! // A year on, the episodic trace has faded to 0.461; a reinforcement takes it to 0.561 and
//! // leaves it stronger than it would have been at every later time.
//! let year = t0 + days(365);
//! let untouched = store.get(b).unwrap().state.clone();
//! store.reinforce(b, year);
//! let (week, p) = (year + days(7), *store.params());
//! let reinforced = store.get(b).unwrap().state;
//! assert!(reinforced.strength_at(week, &p) > untouched.strength_at(week, &p) + 0.03);
//! # Ok::<(), maxim_core::Error>(())
//! ```
//!
//! # Strength
//!
//! A [`TraceState`] keeps a decay curve: its *peak* (the curve's height) and its *decay
//! origin* (the curve's virtual start). `strength_at(now) = compute_decay(peak, rate, ticks,
//! intensity)`, lex-memory's power law, with `ticks` the whole ticks of [`TraceParams::tick`]
//! (default 60 s) from the decay origin to `now`. Only two events change a state:
//! - a reinforcement computes `s' = compute_reinforcement(strength_at(now))`, adding 0.1 (0.3 in
//!   the imprint window). If `s'` reaches the peak, it becomes the peak and the curve starts
//!   again at `now`. Otherwise the peak stays and the trace moves back along its curve to the
//!   point where it had the strength `s'` (its *effective age* `t'`, with
//!   `peak * (t' + 1)^-eff = s'`), rounded to the last whole tick not below `s'`;
//! - a rehearsal (a retrieval, `RecordMeta::touch`) only moves `last_reinforced`, which drives
//!   the tier and the recency of the retrieval score. Strength and decay go on unchanged:
//!   restarting a power law's clock on every access would make the most used traces decay
//!   fastest.
//!
//! A reinforcement never lowers the peak and never moves the origin back, so it never makes a
//! trace weaker, at its own time or later. (Restarting the power law at the reinforced strength
//! would: a power law falls fastest just after its start, so a year-old sensory trace
//! reinforced from 0.107 to 0.207 would be under its unreinforced curve within a day. Along the
//! peak's curve it is at 0.186 a day later, against 0.107.)
//!
//! A trace never reinforced has its creation as origin and takes lex-memory's value for the
//! same tick count, bit for bit, and so does a trace reinforced up to its peak. After a
//! reinforcement below the peak, maxim decays along the peak's curve from the effective age,
//! where lex-memory's next decay cycle would recompute from the peak at the cycle's tick count.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod formula;
mod state;
mod store;
#[cfg(test)]
mod tests;

pub use formula::{
    ARCHIVE_THRESHOLD, ASSOCIATION_BONUS, AUTO_FIRE_THRESHOLD, COACTIVATION_THRESHOLD, DEFAULT_TICK,
    Disposition, E_WEIGHT, HOT_TIER_WINDOW_SECS, IMPRINT_MULTIPLIER, IMPRINT_WINDOW, MAX_ASSOCIATIONS,
    PRUNE_THRESHOLD, R_AMOUNT, RETRIEVAL_RECENCY_HALF_SECS, RETRIEVE_AND_REINFORCE_MIN_STRENGTH, StorageTier,
    WARM_TIER_WINDOW_SECS, compute_decay, compute_reinforcement, compute_retrieval_score,
    compute_storage_tier,
};
pub use state::{
    DecaySummary, PARALLEL_DECAY_MIN_LEN, ReinforceError, TraceParams, TraceState, TraceStateParts, decay_all,
};
pub use store::{DecayCycleReport, ReinforceOutcome, Scored, TraceEntry, TraceRef, TraceStore, WalkStep};

/// The seven kinds of trace, each with its starting strength and base decay rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// Never decays: hard-coded values (starting strength 1.0, rate 0.0).
    Firmware,
    /// The self-model (1.0, 0.001).
    Identity,
    /// How-to knowledge, skills (0.4, 0.005).
    Procedural,
    /// Trust records (0.3, 0.008).
    Trust,
    /// Facts and concepts (0.5, 0.010).
    Semantic,
    /// Events, episodes (0.6, 0.020).
    Episodic,
    /// Transient perception (0.4, 0.100).
    Sensory,
}

impl TraceKind {
    /// Every kind, in the reference's order.
    pub const ALL: [Self; 7] = [
        Self::Firmware,
        Self::Identity,
        Self::Procedural,
        Self::Trust,
        Self::Semantic,
        Self::Episodic,
        Self::Sensory,
    ];

    /// Strength (and peak) of a new trace of this kind.
    pub const fn starting_strength(self) -> f64 {
        match self {
            Self::Firmware | Self::Identity => 1.0,
            Self::Procedural | Self::Sensory => 0.4,
            Self::Trust => 0.3,
            Self::Semantic => 0.5,
            Self::Episodic => 0.6,
        }
    }

    /// Base decay rate of this kind (the exponent of the power law before emotion).
    pub const fn base_decay_rate(self) -> f64 {
        match self {
            Self::Firmware => 0.0,
            Self::Identity => 0.001,
            Self::Procedural => 0.005,
            Self::Trust => 0.008,
            Self::Semantic => 0.010,
            Self::Episodic => 0.020,
            Self::Sensory => 0.100,
        }
    }

    /// The reference's name: `firmware`, `identity`, `procedural`, `trust`, `semantic`,
    /// `episodic` or `sensory`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Firmware => "firmware",
            Self::Identity => "identity",
            Self::Procedural => "procedural",
            Self::Trust => "trust",
            Self::Semantic => "semantic",
            Self::Episodic => "episodic",
            Self::Sensory => "sensory",
        }
    }
}

impl fmt::Display for TraceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TraceKind {
    type Err = Error;

    /// Parses the reference's name (exactly, lowercase); anything else is
    /// [`Error::InvalidArgument`], as the reference's "invalid trace type".
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| Error::invalid("trace kind", format!("{s:?} is not one of the seven kinds")))
    }
}
