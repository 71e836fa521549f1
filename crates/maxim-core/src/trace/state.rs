//! The trace state every record carries, its time-based decay, and [`decay_all`] over a
//! slice of states.
//!
//! The reference decays every trace from its peak with one caller-supplied tick count
//! (§5.2, pitfall 1 of §11). maxim counts the ticks of each trace itself: the whole ticks of
//! [`TraceParams::tick`] (default 60 s, the reference decay actor's interval) elapsed since the
//! trace was last reinforced or rehearsed. So
//! `strength(now) = compute_decay(peak, rate, ticks_since_last_reinforced, intensity)`:
//! decay stays computed from the peak (not cumulative), deterministic, and independent of how
//! often it is run.
//!
//! ```
//! use std::time::Duration;
//! use maxim_core::Timestamp;
//! use maxim_core::trace::{TraceKind, TraceParams, TraceState};
//! let t0 = Timestamp::from_secs(1_700_000_000);
//! let params = TraceParams::default(); // 60-second ticks, no imprint window
//! let mut trace = TraceState::new(TraceKind::Semantic, t0);
//! // 100 ticks later: 0.5 * 101^-0.01.
//! let later = t0 + Duration::from_secs(100 * 60);
//! assert!((trace.decay(later, &params) - 0.4774487829134969).abs() < 1e-12);
//! // Decaying again at the same time changes nothing: decay is computed from the peak.
//! assert_eq!(trace.decay(later, &params), trace.strength());
//! assert_eq!(trace.reinforce(later, &params)?, trace.strength());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::TraceKind;
use super::formula::{
    DEFAULT_TICK, Disposition, IMPRINT_WINDOW, PRUNE_THRESHOLD, StorageTier, compute_decay,
    compute_reinforcement, compute_retrieval_score, compute_storage_tier,
};
use crate::error::{Error, Result};
use crate::record::{check_signed_unit, check_unit};
use crate::time::{MICROS_PER_SEC, Timestamp};

/// Slices at least this long are decayed in parallel by [`decay_all`].
pub const PARALLEL_DECAY_MIN_LEN: usize = 32 * 1024;
/// States per parallel task in [`decay_all`].
const DECAY_CHUNK: usize = 8 * 1024;

/// How traces decay and reinforce: the tick length and the agent's imprint window.
///
/// The imprint window belongs to the agent's cold start (§5.3): reinforcements count three
/// times while `now - started_at < 7 days` (strictly). lex-memory only receives the boolean;
/// maxim keeps the start here so that every call can derive it from `now`.
///
/// ```
/// use std::time::Duration;
/// use maxim_core::{Timestamp, days};
/// use maxim_core::trace::TraceParams;
/// let start = Timestamp::from_secs(0);
/// let params = TraceParams::new(Duration::from_secs(60))?.with_imprint_start(start);
/// assert!(params.imprint_active(start + days(7) - Duration::from_micros(1)));
/// assert!(!params.imprint_active(start + days(7)));
/// assert_eq!(params.ticks_between(start, start + Duration::from_secs(119)), 1);
/// assert!(TraceParams::new(Duration::ZERO).is_err());
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TraceParamsRepr", into = "TraceParamsRepr")]
pub struct TraceParams {
    /// Tick length in microseconds, at least 1.
    tick_micros: u64,
    imprint_started_at: Option<Timestamp>,
}

impl TraceParams {
    /// Parameters with ticks of `tick` and no imprint window; an error when `tick` is shorter
    /// than one microsecond or longer than the timestamp range.
    pub fn new(tick: Duration) -> Result<Self> {
        let micros = tick.as_micros();
        if micros == 0 || micros > i64::MAX as u128 {
            return Err(Error::OutOfRange {
                field: "tick",
                value: tick.as_secs_f64(),
                expected: "at least one microsecond",
            });
        }
        Ok(Self { tick_micros: micros as u64, imprint_started_at: None })
    }

    /// The same parameters with the agent's imprint window starting at `started_at`.
    pub fn with_imprint_start(mut self, started_at: Timestamp) -> Self {
        self.imprint_started_at = Some(started_at);
        self
    }

    /// The same parameters without an imprint window.
    pub fn without_imprint(mut self) -> Self {
        self.imprint_started_at = None;
        self
    }

    /// Length of one decay tick.
    pub fn tick(&self) -> Duration {
        Duration::from_micros(self.tick_micros)
    }

    /// When the agent's imprint window started, if it has one.
    pub fn imprint_started_at(&self) -> Option<Timestamp> {
        self.imprint_started_at
    }

    /// Whether reinforcements at `now` fall in the imprint window: `now - started_at < 7 days`,
    /// strictly (a `now` before the start also counts, as in the reference's formula).
    pub fn imprint_active(&self, now: Timestamp) -> bool {
        let window = IMPRINT_WINDOW.as_secs() as i64 * MICROS_PER_SEC;
        self.imprint_started_at
            .is_some_and(|start| now.as_micros().saturating_sub(start.as_micros()) < window)
    }

    /// Whole ticks from `from` to `to`; 0 when `to` is not after `from`.
    #[inline]
    pub fn ticks_between(&self, from: Timestamp, to: Timestamp) -> u64 {
        ticks_between_micros(from.as_micros(), to.as_micros(), self.tick_micros)
    }
}

impl Default for TraceParams {
    /// Ticks of [`DEFAULT_TICK`] (60 s), no imprint window.
    fn default() -> Self {
        Self { tick_micros: DEFAULT_TICK.as_micros() as u64, imprint_started_at: None }
    }
}

#[inline]
fn ticks_between_micros(from: i64, to: i64, tick_micros: u64) -> u64 {
    let elapsed = to.saturating_sub(from);
    if elapsed <= 0 { 0 } else { elapsed as u64 / tick_micros }
}

/// The serde form of [`TraceParams`], validated on the way in.
#[derive(Serialize, Deserialize)]
struct TraceParamsRepr {
    tick_micros: u64,
    imprint_started_at: Option<Timestamp>,
}

impl TryFrom<TraceParamsRepr> for TraceParams {
    type Error = Error;
    fn try_from(repr: TraceParamsRepr) -> Result<Self> {
        let mut params = Self::new(Duration::from_micros(repr.tick_micros))?;
        params.imprint_started_at = repr.imprint_started_at;
        Ok(params)
    }
}

impl From<TraceParams> for TraceParamsRepr {
    fn from(p: TraceParams) -> Self {
        Self { tick_micros: p.tick_micros, imprint_started_at: p.imprint_started_at }
    }
}

/// Why [`TraceState::reinforce`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReinforceError {
    /// Firmware traces are never reinforced (the reference checks the kind, not the rate).
    #[error("firmware traces are never reinforced")]
    Firmware,
}

/// The trace state a record carries: kind, strength, peak, emotion, reinforcements and the
/// time of the last reinforcement.
///
/// Invariants, checked by every constructor and by deserialisation: strength and peak are
/// finite and in `[0, 1]` with `strength <= peak`, intensity is in `[0, 1]`, valence in
/// `[-1, 1]`. lex-memory clamps out-of-range emotion silently; maxim refuses it with
/// [`Error::OutOfRange`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TraceStateParts")]
pub struct TraceState {
    kind: TraceKind,
    strength: f64,
    peak: f64,
    emotional_intensity: f64,
    emotional_valence: f64,
    reinforcement_count: u32,
    last_reinforced: Timestamp,
}

/// Every field of a [`TraceState`], for loading an explicit state
/// ([`TraceState::from_parts`]); also the validated form serde reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceStateParts {
    /// The kind (fixes the base decay rate).
    pub kind: TraceKind,
    /// Current strength, in `[0, peak]`.
    pub strength: f64,
    /// Highest strength reached, in `[0, 1]`.
    pub peak: f64,
    /// Emotional intensity, in `[0, 1]`.
    pub emotional_intensity: f64,
    /// Emotional valence, in `[-1, 1]`.
    pub emotional_valence: f64,
    /// Reinforcements so far.
    pub reinforcement_count: u32,
    /// Last reinforcement or rehearsal.
    pub last_reinforced: Timestamp,
}

impl TryFrom<TraceStateParts> for TraceState {
    type Error = Error;
    fn try_from(parts: TraceStateParts) -> Result<Self> {
        Self::from_parts(parts)
    }
}

impl TraceState {
    /// A new trace of `kind` made at `now`: strength and peak at the kind's starting strength,
    /// no emotion, no reinforcements.
    pub fn new(kind: TraceKind, now: Timestamp) -> Self {
        let s = kind.starting_strength();
        Self {
            kind,
            strength: s,
            peak: s,
            emotional_intensity: 0.0,
            emotional_valence: 0.0,
            reinforcement_count: 0,
            last_reinforced: now,
        }
    }

    /// A new trace of `kind` made at `now` with an emotional `intensity` in `[0, 1]` (which
    /// slows decay and raises the retrieval score) and a `valence` in `[-1, 1]`.
    ///
    /// NaN or out-of-range values are refused with [`Error::OutOfRange`], where the reference
    /// clamps them silently (1.7 → 1.0, valence −3 → −1.0).
    ///
    /// ```
    /// use maxim_core::Timestamp;
    /// use maxim_core::trace::{TraceKind, TraceState};
    /// let t = TraceState::with_emotion(TraceKind::Episodic, Timestamp::EPOCH, 0.7, -0.6)?;
    /// assert_eq!(t.emotional_intensity(), 0.7);
    /// assert!(TraceState::with_emotion(TraceKind::Episodic, Timestamp::EPOCH, 1.7, 0.0).is_err());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn with_emotion(kind: TraceKind, now: Timestamp, intensity: f64, valence: f64) -> Result<Self> {
        let emotional_intensity = check_unit("emotional_intensity", intensity)?;
        let emotional_valence = check_signed_unit("emotional_valence", valence)?;
        Ok(Self { emotional_intensity, emotional_valence, ..Self::new(kind, now) })
    }

    /// A new trace of `kind` encoded at `now` under `params`: as [`TraceState::new`], and
    /// counted as one reinforcement (strength unchanged) when the agent's imprint window is
    /// active, as the reference's `store_trace(imprint_active: true)` does.
    pub fn encoded(kind: TraceKind, now: Timestamp, params: &TraceParams) -> Self {
        let mut state = Self::new(kind, now);
        state.reinforcement_count = u32::from(params.imprint_active(now));
        state
    }

    /// A state with every field given, validated (see the type's invariants).
    ///
    /// ```
    /// use maxim_core::Timestamp;
    /// use maxim_core::trace::{TraceKind, TraceState, TraceStateParts};
    /// let mut parts = TraceState::new(TraceKind::Sensory, Timestamp::EPOCH).to_parts();
    /// parts.strength = 0.1;
    /// assert_eq!(TraceState::from_parts(parts)?.strength(), 0.1);
    /// parts.strength = f64::NAN;
    /// assert!(TraceState::from_parts(parts).is_err());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn from_parts(parts: TraceStateParts) -> Result<Self> {
        let peak = check_unit("peak", parts.peak)?;
        let strength = check_unit("strength", parts.strength)?;
        if strength > peak {
            return Err(Error::OutOfRange {
                field: "strength",
                value: strength,
                expected: "at most the peak strength",
            });
        }
        Ok(Self {
            kind: parts.kind,
            strength,
            peak,
            emotional_intensity: check_unit("emotional_intensity", parts.emotional_intensity)?,
            emotional_valence: check_signed_unit("emotional_valence", parts.emotional_valence)?,
            reinforcement_count: parts.reinforcement_count,
            last_reinforced: parts.last_reinforced,
        })
    }

    /// Every field, for saving or for building a modified state through
    /// [`TraceState::from_parts`].
    pub fn to_parts(&self) -> TraceStateParts {
        TraceStateParts {
            kind: self.kind,
            strength: self.strength,
            peak: self.peak,
            emotional_intensity: self.emotional_intensity,
            emotional_valence: self.emotional_valence,
            reinforcement_count: self.reinforcement_count,
            last_reinforced: self.last_reinforced,
        }
    }

    /// The kind.
    pub fn kind(&self) -> TraceKind {
        self.kind
    }

    /// The base decay rate of the kind.
    pub fn base_decay_rate(&self) -> f64 {
        self.kind.base_decay_rate()
    }

    /// The strength as last computed (by [`TraceState::decay`], [`decay_all`] or
    /// [`TraceState::reinforce`]). [`TraceState::strength_at`] gives the strength at any time.
    pub fn strength(&self) -> f64 {
        self.strength
    }

    /// The highest strength reached. Only reinforcement raises it; nothing lowers it.
    pub fn peak(&self) -> f64 {
        self.peak
    }

    /// Emotional intensity in `[0, 1]`; slows decay.
    pub fn emotional_intensity(&self) -> f64 {
        self.emotional_intensity
    }

    /// Emotional valence in `[-1, 1]`.
    pub fn emotional_valence(&self) -> f64 {
        self.emotional_valence
    }

    /// Reinforcements so far.
    pub fn reinforcement_count(&self) -> u32 {
        self.reinforcement_count
    }

    /// When the trace was last reinforced or rehearsed.
    pub fn last_reinforced(&self) -> Timestamp {
        self.last_reinforced
    }

    /// Records a retrieval: `last_reinforced = now`, strength and peak unchanged (the
    /// rehearsal of lex-memory's `retrieve_and_reinforce`). A retrieval keeps a trace hot.
    /// The time never moves backwards.
    pub fn rehearse(&mut self, now: Timestamp) {
        self.last_reinforced = self.last_reinforced.max(now);
    }

    /// A rehearsal that also counts one reinforcement: what `retrieve_and_reinforce` does to
    /// each trace it returns (§5.8). Strength and peak are unchanged.
    pub fn mark_retrieved(&mut self, now: Timestamp) {
        self.rehearse(now);
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
    }

    /// The strength at `now`: `compute_decay(peak, rate, ticks, intensity)` with `ticks` the
    /// whole ticks since the last reinforcement (0 when `now` is not after it). Always in
    /// `[0, 1]`, and never increasing with `now`.
    #[inline]
    pub fn strength_at(&self, now: Timestamp, params: &TraceParams) -> f64 {
        let ticks = params.ticks_between(self.last_reinforced, now);
        compute_decay(self.peak, self.kind.base_decay_rate(), ticks as f64, self.emotional_intensity)
    }

    /// Decays the stored strength to its value at `now` and returns it. Zero-rate (firmware)
    /// traces are left alone, as the reference's decay cycle skips them. Running it again,
    /// at any time, gives the value for that time: nothing accumulates.
    pub fn decay(&mut self, now: Timestamp, params: &TraceParams) -> f64 {
        if self.kind.base_decay_rate() != 0.0 {
            self.strength = self.strength_at(now, params);
        }
        self.strength
    }

    /// Reinforces the trace at `now` and returns the new strength.
    ///
    /// The trace is first brought to its strength at `now`, then
    /// `strength = compute_reinforcement(strength, imprint)` with the imprint window taken
    /// from `params`; `peak = max(peak, strength)`, `last_reinforced = now` (never moving
    /// backwards), one more reinforcement counted. Like any rehearsal this restarts the decay
    /// clock from the peak, as the reference's next decay cycle does. Firmware is refused with
    /// [`ReinforceError::Firmware`] and left unchanged.
    pub fn reinforce(&mut self, now: Timestamp, params: &TraceParams) -> Result<f64, ReinforceError> {
        if self.kind == TraceKind::Firmware {
            return Err(ReinforceError::Firmware);
        }
        let current = self.strength_at(now, params);
        let new = compute_reinforcement(current, params.imprint_active(now));
        self.strength = new;
        self.peak = self.peak.max(new);
        self.rehearse(now);
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
        Ok(new)
    }

    /// The storage tier at `now`, from the stored strength and the time since the last
    /// reinforcement (§5.5).
    pub fn tier(&self, now: Timestamp) -> StorageTier {
        compute_storage_tier(self.strength, now.secs_since(self.last_reinforced))
    }

    /// The retrieval score at `now` (§5.4), from the stored strength; `associated` adds the
    /// 15% Hebbian bonus.
    pub fn retrieval_score(&self, now: Timestamp, associated: bool) -> f64 {
        compute_retrieval_score(
            self.strength,
            self.emotional_intensity,
            now.secs_since(self.last_reinforced),
            associated,
        )
    }

    /// What a layer may do with the trace at `now`: auto-fire, keep, archive or prune, by its
    /// strength at `now` ([`TraceState::strength_at`]). [`Disposition::of`] classifies the
    /// stored strength instead.
    pub fn disposition(&self, now: Timestamp, params: &TraceParams) -> Disposition {
        Disposition::of(self.strength_at(now, params))
    }
}

/// What [`decay_all`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecaySummary {
    /// States recomputed whose strength stays above [`PRUNE_THRESHOLD`].
    pub decayed: usize,
    /// States recomputed whose strength is now at or below [`PRUNE_THRESHOLD`]; their strength
    /// is updated too, and the caller decides whether to delete them.
    pub prune_candidates: usize,
}

impl std::ops::Add for DecaySummary {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            decayed: self.decayed + other.decayed,
            prune_candidates: self.prune_candidates + other.prune_candidates,
        }
    }
}

/// Decays every state of `states` to its strength at `now` ([`TraceState::decay`]), skipping
/// zero-rate (firmware) states, and counts the results. Slices of at least
/// [`PARALLEL_DECAY_MIN_LEN`] states are split across rayon's pool; the result is the same
/// either way.
///
/// ```
/// use std::time::Duration;
/// use maxim_core::Timestamp;
/// use maxim_core::trace::{TraceKind, TraceParams, TraceState, decay_all};
/// let t0 = Timestamp::EPOCH;
/// let mut states: Vec<_> = TraceKind::ALL.iter().map(|&k| TraceState::new(k, t0)).collect();
/// let summary = decay_all(&mut states, t0 + Duration::from_secs(3_600), &TraceParams::default());
/// assert_eq!((summary.decayed, summary.prune_candidates), (6, 0)); // firmware skipped
/// assert!(states[6].strength() < 0.4); // sensory
/// ```
pub fn decay_all(states: &mut [TraceState], now: Timestamp, params: &TraceParams) -> DecaySummary {
    let _span = tracing::debug_span!("decay_all", n_states = states.len()).entered();
    if states.len() < PARALLEL_DECAY_MIN_LEN {
        decay_chunk(states, now, params)
    } else {
        states
            .par_chunks_mut(DECAY_CHUNK)
            .map(|chunk| decay_chunk(chunk, now, params))
            .reduce(DecaySummary::default, |a, b| a + b)
    }
}

fn decay_chunk(states: &mut [TraceState], now: Timestamp, params: &TraceParams) -> DecaySummary {
    let now = now.as_micros();
    let tick = params.tick_micros;
    let mut decayed = 0;
    let mut pruned = 0;
    for state in states {
        let rate = state.kind.base_decay_rate();
        if rate == 0.0 {
            continue;
        }
        let ticks = ticks_between_micros(state.last_reinforced.as_micros(), now, tick);
        // With 0 ticks, compute_decay is peak * 1^x = peak exactly (peak is in [0, 1]):
        // skip the pow for traces reinforced in the current tick.
        let strength = if ticks == 0 {
            state.peak
        } else {
            compute_decay(state.peak, rate, ticks as f64, state.emotional_intensity)
        };
        state.strength = strength;
        if strength <= PRUNE_THRESHOLD {
            pruned += 1;
        } else {
            decayed += 1;
        }
    }
    DecaySummary { decayed, prune_candidates: pruned }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_secs(secs)
    }

    #[test]
    fn ticks_are_whole_and_never_negative() {
        let p = TraceParams::default();
        assert_eq!(p.ticks_between(t(0), t(59)), 0);
        assert_eq!(p.ticks_between(t(0), t(60)), 1);
        assert_eq!(p.ticks_between(t(100), t(0)), 0);
        let extreme = p.ticks_between(Timestamp::from_micros(i64::MIN), Timestamp::from_micros(i64::MAX));
        assert_eq!(extreme, (i64::MAX as u64) / 60_000_000);
    }

    #[test]
    fn params_refuse_bad_ticks_even_from_serde() {
        assert!(TraceParams::new(Duration::from_nanos(999)).is_err());
        assert!(TraceParams::new(Duration::from_secs(u64::MAX)).is_err());
        let p = TraceParams::new(Duration::from_secs(5)).unwrap().with_imprint_start(t(3));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<TraceParams>(&json).unwrap(), p);
        assert!(
            serde_json::from_str::<TraceParams>(r#"{"tick_micros":0,"imprint_started_at":null}"#).is_err()
        );
        assert_eq!(p.without_imprint().imprint_started_at(), None);
        assert_eq!(TraceParams::default().tick(), Duration::from_secs(60));
    }

    #[test]
    fn imprint_window_is_strict_and_needs_a_start() {
        let start = t(1_000);
        let p = TraceParams::default().with_imprint_start(start);
        assert!(p.imprint_active(start));
        assert!(p.imprint_active(start + days(7) - Duration::from_micros(1)));
        assert!(!p.imprint_active(start + days(7)));
        assert!(p.imprint_active(t(0)), "before the start the reference's formula still holds");
        assert!(!TraceParams::default().imprint_active(start));
    }

    #[test]
    fn reinforcement_in_the_imprint_window_triples() {
        let start = t(0);
        let p = TraceParams::default().with_imprint_start(start);
        let mut s = TraceState::new(TraceKind::Semantic, start);
        assert_eq!(s.reinforce(start, &p), Ok(0.8));
        let mut late = TraceState::new(TraceKind::Semantic, start + days(8));
        assert_eq!(late.reinforce(start + days(8), &p), Ok(0.6));
        assert_eq!(TraceState::encoded(TraceKind::Semantic, start, &p).reinforcement_count(), 1);
        assert_eq!(TraceState::encoded(TraceKind::Semantic, start + days(8), &p).reinforcement_count(), 0);
    }

    #[test]
    fn reinforce_works_on_the_decayed_strength_and_keeps_the_peak() {
        let p = TraceParams::default();
        let mut s = TraceState::new(TraceKind::Sensory, t(0));
        let later = t(0) + days(30);
        let decayed = s.strength_at(later, &p);
        let new = s.reinforce(later, &p).unwrap();
        assert_eq!(new, compute_reinforcement(decayed, false));
        assert!(new < 0.4);
        assert_eq!(s.peak(), 0.4, "the peak never falls");
        assert_eq!(s.last_reinforced(), later);
        assert_eq!(s.reinforcement_count(), 1);
        // The decay clock restarted from the peak, as the reference's next decay cycle does.
        assert_eq!(s.strength_at(later, &p), 0.4);
    }

    #[test]
    fn firmware_is_refused_and_left_alone() {
        let p = TraceParams::default();
        let mut s = TraceState::new(TraceKind::Firmware, t(0));
        let before = s.clone();
        assert_eq!(s.reinforce(t(10), &p), Err(ReinforceError::Firmware));
        assert_eq!(s, before);
        assert_eq!(s.decay(t(0) + days(1000), &p), 1.0);
        assert_eq!(ReinforceError::Firmware.to_string(), "firmware traces are never reinforced");
    }

    #[test]
    fn time_never_moves_backwards() {
        let p = TraceParams::default();
        let mut s = TraceState::new(TraceKind::Episodic, t(100));
        s.rehearse(t(50));
        assert_eq!(s.last_reinforced(), t(100));
        s.reinforce(t(40), &p).unwrap();
        assert_eq!(s.last_reinforced(), t(100));
        s.mark_retrieved(t(200));
        assert_eq!((s.last_reinforced(), s.reinforcement_count()), (t(200), 2));
        // Strength before the last reinforcement is the peak (0 ticks).
        assert_eq!(s.strength_at(t(0), &p), s.peak());
    }

    #[test]
    fn constructors_refuse_nan_and_out_of_range() {
        let now = t(0);
        for (i, v) in [(f64::NAN, 0.0), (-0.01, 0.0), (1.01, 0.0), (0.5, f64::NAN), (0.5, 1.5), (0.5, -1.01)]
        {
            assert!(TraceState::with_emotion(TraceKind::Semantic, now, i, v).is_err(), "{i} {v}");
        }
        let base = TraceState::new(TraceKind::Semantic, now).to_parts();
        let bad = [
            TraceStateParts { strength: f64::NAN, ..base },
            TraceStateParts { peak: f64::INFINITY, ..base },
            TraceStateParts { strength: 0.6, peak: 0.5, ..base },
            TraceStateParts { strength: -0.1, ..base },
            TraceStateParts { emotional_intensity: 2.0, ..base },
            TraceStateParts { emotional_valence: -2.0, ..base },
        ];
        for parts in bad {
            assert!(matches!(TraceState::from_parts(parts), Err(Error::OutOfRange { .. })), "{parts:?}");
        }
        assert_eq!(TraceState::from_parts(base).unwrap(), TraceState::new(TraceKind::Semantic, now));
    }

    #[test]
    fn serde_round_trips_and_refuses_bad_states() {
        let s = TraceState::with_emotion(TraceKind::Trust, t(5), 0.25, -0.5).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<TraceState>(&json).unwrap(), s);
        let bytes = postcard::to_stdvec(&s).unwrap();
        assert_eq!(postcard::from_bytes::<TraceState>(&bytes).unwrap(), s);
        let bad = json.replace("\"strength\":0.3", "\"strength\":1.5");
        assert_ne!(bad, json);
        assert!(serde_json::from_str::<TraceState>(&bad).is_err());
        let nan = postcard::to_stdvec(&TraceStateParts { strength: f64::NAN, ..s.to_parts() }).unwrap();
        assert!(postcard::from_bytes::<TraceState>(&nan).is_err());
    }

    #[test]
    fn tier_score_and_disposition_read_the_state() {
        let p = TraceParams::default();
        let s = TraceState::with_emotion(TraceKind::Semantic, t(0), 0.5, 0.0).unwrap();
        assert_eq!(s.tier(t(0)), StorageTier::Hot);
        assert_eq!(s.tier(t(0) + days(30)), StorageTier::Warm);
        assert_eq!(s.retrieval_score(t(7_200), false), 0.1875);
        assert_eq!(s.disposition(t(0), &p), Disposition::Active);
        let identity = TraceState::new(TraceKind::Identity, t(0));
        assert_eq!(identity.disposition(t(0), &p), Disposition::AutoFire);
        let mut faint = TraceState::new(TraceKind::Sensory, t(0)).to_parts();
        faint.peak = 0.02;
        faint.strength = 0.02;
        let faint = TraceState::from_parts(faint).unwrap();
        assert_eq!(faint.disposition(t(0), &p), Disposition::Archive);
        assert_eq!(faint.disposition(t(0) + days(3650), &p), Disposition::Prune);
    }

    #[test]
    fn decay_all_counts_like_a_decay_cycle() {
        let p = TraceParams::default();
        let mut parts = TraceState::new(TraceKind::Sensory, t(0)).to_parts();
        parts.peak = 0.0101;
        parts.strength = 0.0101;
        let faint = TraceState::from_parts(parts).unwrap();
        let mut states = vec![
            faint,
            TraceState::new(TraceKind::Semantic, t(0)),
            TraceState::new(TraceKind::Firmware, t(0)),
        ];
        let s = decay_all(&mut states, t(60), &p);
        assert_eq!(s, DecaySummary { decayed: 1, prune_candidates: 1 });
        assert!(states[0].strength() <= PRUNE_THRESHOLD);
        assert_eq!(decay_all(&mut [], t(60), &p), DecaySummary::default());
    }
}
