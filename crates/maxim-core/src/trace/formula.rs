//! The pure formulas of lex-memory (`spec/lex-memory.md` §3, §5.1, §5.3-§5.5) and their
//! constants.
//!
//! Each function keeps the reference's operation order, so that its results agree with the
//! reference bit for bit where only `+`, `*`, `/` and clamps are involved, and to the last bit
//! on the same libm where `pow` is involved. They do not validate their inputs: a NaN goes in,
//! a NaN comes out, and nothing panics. The validated entry points are the methods of
//! [`TraceState`](super::TraceState).
//!
//! ```
//! use maxim_core::trace::{StorageTier, compute_decay, compute_reinforcement, compute_storage_tier};
//! // A semantic trace (peak 0.5, rate 0.01) after 100 ticks: 0.5 * 101^-0.01.
//! assert!((compute_decay(0.5, 0.01, 100.0, 0.0) - 0.4774487829134969).abs() < 1e-12);
//! // A zero rate returns the peak unchanged, even above 1.
//! assert_eq!(compute_decay(1.5, 0.0, 5.0, 0.0), 1.5);
//! assert_eq!(compute_reinforcement(0.5, true), 0.8);
//! assert_eq!(compute_storage_tier(0.5, 86_400.0), StorageTier::Hot);
//! ```

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::time::days;

/// Weight of emotional intensity in the decay exponent: `rate / (1 + intensity * E_WEIGHT)`.
pub const E_WEIGHT: f64 = 0.3;
/// Strength added by one reinforcement (times [`IMPRINT_MULTIPLIER`] in the imprint window).
pub const R_AMOUNT: f64 = 0.10;
/// Multiplier of [`R_AMOUNT`] while the agent's imprint window is active.
pub const IMPRINT_MULTIPLIER: f64 = 3.0;
/// At or above this strength a trace may fire on its own ([`Disposition::AutoFire`]).
/// Defined but unused by the reference; maxim exposes it through [`Disposition`].
pub const AUTO_FIRE_THRESHOLD: f64 = 0.85;
/// Below this strength a trace is a candidate for archiving ([`Disposition::Archive`]).
/// Defined but unused by the reference; maxim exposes it through [`Disposition`].
pub const ARCHIVE_THRESHOLD: f64 = 0.05;
/// At or below this strength a trace is pruned by a decay cycle and its tier is `erased`.
pub const PRUNE_THRESHOLD: f64 = 0.01;
/// A trace last reinforced at most this many seconds ago is [`StorageTier::Hot`] (24 h).
pub const HOT_TIER_WINDOW_SECS: f64 = 86_400.0;
/// A trace last reinforced at most this many seconds ago (and not hot) is
/// [`StorageTier::Warm`] (90 days).
pub const WARM_TIER_WINDOW_SECS: f64 = 7_776_000.0;
/// Half-life of the recency factor of the retrieval score, in seconds (1 h).
pub const RETRIEVAL_RECENCY_HALF_SECS: f64 = 3_600.0;
/// Retrieval-score bonus of a trace linked from another trace of the same request (×1.15).
pub const ASSOCIATION_BONUS: f64 = 0.15;
/// Hebbian links kept per trace.
pub const MAX_ASSOCIATIONS: usize = 20;
/// Co-activations of a pair before a Hebbian link forms.
pub const COACTIVATION_THRESHOLD: u32 = 3;
/// Length of the agent's imprint window, counted from its cold start (7 days, strict).
pub const IMPRINT_WINDOW: Duration = days(7);
/// Default length of one decay tick: the reference's decay actor runs every 60 s.
pub const DEFAULT_TICK: Duration = Duration::from_secs(60);
/// `retrieve_and_reinforce` considers traces at or above this strength.
pub const RETRIEVE_AND_REINFORCE_MIN_STRENGTH: f64 = 0.1;

/// Power-law decay (§5.1): `peak * (ticks + 1)^(-rate / (1 + intensity * 0.3))`, clamped to
/// `[0, 1]`.
///
/// As in the reference, a zero `rate` returns `peak` unchanged and unclamped (1.5 stays 1.5),
/// and a zero `peak` returns 0 before anything else is computed. `ticks = -1` gives
/// `0^(-x) = +inf`, clamped to 1.
///
/// ```
/// use maxim_core::trace::compute_decay;
/// assert_eq!(compute_decay(0.5, 0.01, 0.0, 0.0), 0.5);
/// assert!(compute_decay(0.6, 0.02, 50.0, 0.9) > compute_decay(0.6, 0.02, 50.0, 0.0));
/// assert_eq!(compute_decay(1.5, 0.01, 0.0, 0.0), 1.0);
/// ```
#[inline]
pub fn compute_decay(peak: f64, rate: f64, ticks: f64, intensity: f64) -> f64 {
    if rate == 0.0 {
        return peak;
    }
    if peak == 0.0 {
        return 0.0;
    }
    let effective_rate = rate / (1.0 + intensity * E_WEIGHT);
    let value = peak * (ticks + 1.0).powf(-effective_rate);
    value.clamp(0.0, 1.0)
}

/// Reinforcement (§5.3): `clamp(current + 0.10 * m, 0, 1)` with `m = 3` in the imprint window
/// and 1 otherwise. Binary64 leaves residues: 0.7 + 0.1 is 0.7999999999999999.
///
/// ```
/// use maxim_core::trace::compute_reinforcement;
/// assert_eq!(compute_reinforcement(0.5, false), 0.6);
/// assert_eq!(compute_reinforcement(0.7, false), 0.7999999999999999);
/// assert_eq!(compute_reinforcement(0.95, false), 1.0);
/// assert_eq!(compute_reinforcement(-0.5, false), 0.0);
/// ```
#[inline]
pub fn compute_reinforcement(current: f64, imprint_active: bool) -> f64 {
    let multiplier = if imprint_active { IMPRINT_MULTIPLIER } else { 1.0 };
    (current + R_AMOUNT * multiplier).clamp(0.0, 1.0)
}

/// Retrieval score (§5.4): `strength * 2^(-seconds / 3600) * (1 + intensity) * assoc`,
/// evaluated left to right, where `assoc` is 1.15 for an associated trace and 1 otherwise.
///
/// A negative `seconds_since` (a last reinforcement in the future) counts as 0. The score is
/// not a probability: it lies in `[0, 2.3]` for valid inputs.
///
/// ```
/// use maxim_core::trace::compute_retrieval_score;
/// assert_eq!(compute_retrieval_score(0.5, 0.5, 0.0, false), 0.75);
/// assert_eq!(compute_retrieval_score(0.5, 0.5, 7_200.0, false), 0.1875);
/// assert_eq!(compute_retrieval_score(1.0, 1.0, 0.0, true), 2.3);
/// ```
#[inline]
pub fn compute_retrieval_score(strength: f64, intensity: f64, seconds_since: f64, associated: bool) -> f64 {
    let seconds = seconds_since.max(0.0);
    let recency = 2.0_f64.powf(-(seconds / RETRIEVAL_RECENCY_HALF_SECS));
    let emotional = 1.0 + intensity;
    let assoc = if associated { 1.0 + ASSOCIATION_BONUS } else { 1.0 };
    strength * recency * emotional * assoc
}

/// Storage tier (§5.5), checked in order: `strength <= 0.01` is erased; then at most 24 h
/// since the last reinforcement is hot, at most 90 days warm, older cold. Both windows are
/// inclusive, and a negative age counts as hot.
///
/// ```
/// use maxim_core::trace::{StorageTier, compute_storage_tier};
/// assert_eq!(compute_storage_tier(0.5, 86_400.001), StorageTier::Warm);
/// assert_eq!(compute_storage_tier(0.5, 8_640_000.0), StorageTier::Cold);
/// assert_eq!(compute_storage_tier(0.01, 0.0), StorageTier::Erased);
/// ```
#[inline]
pub fn compute_storage_tier(strength: f64, seconds_since: f64) -> StorageTier {
    if strength <= PRUNE_THRESHOLD {
        StorageTier::Erased
    } else if seconds_since <= HOT_TIER_WINDOW_SECS {
        StorageTier::Hot
    } else if seconds_since <= WARM_TIER_WINDOW_SECS {
        StorageTier::Warm
    } else {
        StorageTier::Cold
    }
}

/// Where a trace belongs by the recency of its last reinforcement (§5.5).
///
/// The tier is a label: nothing moves between storage media, and an `Erased` trace is not
/// deleted by tiering (pruning happens only in a decay cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageTier {
    /// Reinforced within the last 24 hours (inclusive); the tier of every new trace.
    #[default]
    Hot,
    /// Reinforced within the last 90 days (inclusive).
    Warm,
    /// Reinforced more than 90 days ago.
    Cold,
    /// Strength at or below [`PRUNE_THRESHOLD`].
    Erased,
}

impl StorageTier {
    /// The reference's name: `hot`, `warm`, `cold` or `erased`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hot => "hot",
            Self::Warm => "warm",
            Self::Cold => "cold",
            Self::Erased => "erased",
        }
    }
}

impl fmt::Display for StorageTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a layer may do with a trace, by its strength and the three thresholds of §3
/// (the reference defines the auto-fire and archive thresholds but never uses them).
///
/// ```
/// use maxim_core::trace::Disposition;
/// assert_eq!(Disposition::of(0.85), Disposition::AutoFire);
/// assert_eq!(Disposition::of(0.5), Disposition::Active);
/// assert_eq!(Disposition::of(0.049), Disposition::Archive);
/// assert_eq!(Disposition::of(0.01), Disposition::Prune);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Strength at or above [`AUTO_FIRE_THRESHOLD`]: strong enough to surface unprompted.
    AutoFire,
    /// Between the thresholds: an ordinary live trace.
    Active,
    /// Strength below [`ARCHIVE_THRESHOLD`] (and above the prune threshold): archive it.
    Archive,
    /// Strength at or below [`PRUNE_THRESHOLD`]: a decay cycle deletes it.
    Prune,
}

impl Disposition {
    /// The disposition of a trace of `strength`. A NaN strength is [`Disposition::Active`]
    /// (no threshold holds); validated traces never have one.
    pub fn of(strength: f64) -> Self {
        if strength <= PRUNE_THRESHOLD {
            Self::Prune
        } else if strength < ARCHIVE_THRESHOLD {
            Self::Archive
        } else if strength >= AUTO_FIRE_THRESHOLD {
            Self::AutoFire
        } else {
            Self::Active
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_rate_is_checked_before_zero_peak_and_skips_the_clamp() {
        assert_eq!(compute_decay(0.0, 0.0, 10.0, 0.0), 0.0);
        assert_eq!(compute_decay(2.0, 0.0, 10.0, 1.0), 2.0);
        assert_eq!(compute_decay(0.0, 0.5, -1.0, 0.0), 0.0);
        assert_eq!(compute_decay(0.3, 0.5, -1.0, 0.0), 1.0);
    }

    #[test]
    fn nan_inputs_give_nan_or_a_label_and_never_panic() {
        assert!(compute_decay(f64::NAN, 0.1, 1.0, 0.0).is_nan());
        assert!(compute_decay(0.5, 0.1, f64::NAN, 0.0).is_nan());
        assert!(compute_reinforcement(f64::NAN, false).is_nan());
        assert!(compute_retrieval_score(f64::NAN, 0.0, 0.0, false).is_nan());
        // NaN seconds count as 0 (max ignores NaN), as a future last reinforcement does.
        assert_eq!(compute_retrieval_score(0.5, 0.0, f64::NAN, false), 0.5);
        assert_eq!(compute_storage_tier(f64::NAN, 0.0), StorageTier::Hot);
        assert_eq!(Disposition::of(f64::NAN), Disposition::Active);
    }

    #[test]
    fn association_factor_is_exactly_the_literal() {
        assert_eq!(1.0 + ASSOCIATION_BONUS, 1.15);
    }

    #[test]
    fn dispositions_follow_the_thresholds_at_their_edges() {
        assert_eq!(Disposition::of(1.0), Disposition::AutoFire);
        assert_eq!(Disposition::of(0.849_999), Disposition::Active);
        assert_eq!(Disposition::of(0.05), Disposition::Active);
        assert_eq!(Disposition::of(0.010_001), Disposition::Archive);
        assert_eq!(Disposition::of(0.0), Disposition::Prune);
    }

    #[test]
    fn tiers_print_and_serialise_by_name() {
        assert_eq!(StorageTier::Erased.to_string(), "erased");
        assert_eq!(serde_json::to_string(&StorageTier::Warm).unwrap(), "\"warm\"");
        assert_eq!(StorageTier::default(), StorageTier::Hot);
    }
}
