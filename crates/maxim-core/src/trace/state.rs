//! The trace state every record carries, its time-based decay, and [`decay_all`] over a
//! slice of states.
//!
//! A trace's strength is a pure function of its state and the time. A state keeps the height
//! of its decay curve, its *peak*, and the curve's virtual start, its *decay origin*, and
//! [`TraceState::strength_at`] reads the curve:
//! `strength_at(now) = compute_decay(peak, rate, ticks, intensity)`, with `ticks` the whole
//! ticks of [`TraceParams::tick`] (default 60 s, the reference decay actor's interval) from
//! the decay origin to `now`. No "current strength" is stored anywhere: tiers, retrieval
//! scores, dispositions, rankings and pruning all evaluate the strength at their own `now`, so
//! no answer depends on when a decay pass last ran.
//!
//! Two events change a state:
//! - a *reinforcement* ([`TraceState::reinforce`]) adds 0.1 (0.3 in the imprint window) to the
//!   strength at that instant, `s' = compute_reinforcement(strength_at(now))`. When `s'`
//!   reaches the peak, it becomes the new peak and the curve starts again at `now`. Otherwise
//!   the peak stays and the trace moves back along its curve to the point where it had the
//!   strength `s'`: its *effective age* becomes the `t'` with `peak * (t' + 1)^-eff = s'`, and
//!   the decay origin moves to `now - t'` ticks. Decay goes on along the same curve from there;
//! - a *rehearsal* ([`TraceState::rehearse`], what a retrieval or `RecordMeta::touch` does)
//!   moves `last_reinforced` only. The trace stays hot and scores as recent, but its strength
//!   and its decay go on unchanged: restarting a power law's clock on every access would make
//!   the most used traces decay fastest.
//!
//! A reinforcement never lowers the peak and never moves the decay origin back, so it never
//! lowers the strength at any time, then or later. Restarting a power law below its peak would
//! (the curve is steepest just after its start): a year-old sensory trace restarted from 0.207
//! would fall under the curve it followed unreinforced within a day.
//!
//! Differences from the reference (§5.2, pitfall 1 of §11), which decays every trace from its
//! peak by one caller-supplied tick count: maxim counts each trace's ticks from its decay
//! origin. A trace never reinforced has its creation as origin, so it takes the reference's
//! value for the same tick count, bit for bit. A trace reinforced up to its peak (a fresh
//! trace, or the reinforcements of RS1) takes the reference's values too. A trace reinforced
//! below its peak keeps the reinforced strength (up to whole-tick rounding) and decays along
//! the peak's curve from there, where the reference's next decay cycle would recompute it from
//! the peak and lift it straight back up.
//!
//! ```
//! use std::time::Duration;
//! use maxim_core::{Timestamp, days};
//! use maxim_core::trace::{TraceKind, TraceParams, TraceState};
//! let t0 = Timestamp::from_secs(1_700_000_000);
//! let params = TraceParams::default(); // 60-second ticks, no imprint window
//! let mut trace = TraceState::new(TraceKind::Sensory, t0);
//! let untouched = trace.clone();
//! // A year later the sensory trace has faded from 0.4 to 0.4 * 525,601^-0.1.
//! let year = t0 + days(365);
//! let old = trace.strength_at(year, &params);
//! assert!((old - 0.10715).abs() < 1e-5);
//! // A reinforcement returns that plus 0.1 and moves the trace back along its curve, to where
//! // it had 0.207: about 12 hours after the curve's start (719 whole ticks).
//! assert_eq!(trace.reinforce(year, &params)?, old + 0.1);
//! assert!(trace.strength_at(year, &params) >= old + 0.1);
//! assert!(trace.strength_at(year, &params) - (old + 0.1) < 1e-4);
//! assert_eq!(params.ticks_between(trace.decay_origin(), year), 719);
//! assert_eq!(trace.peak(), 0.4);
//! // Decay goes on along the peak's curve: a day later it is still far above the trace that
//! // was never reinforced.
//! let next_day = year + days(1);
//! assert!(trace.strength_at(next_day, &params) > 0.185);
//! assert!(untouched.strength_at(next_day, &params) < 0.108);
//! // A rehearsal keeps the trace hot but changes neither its strength nor its decay.
//! let before = trace.strength_at(next_day + days(1), &params);
//! trace.rehearse(next_day);
//! assert_eq!(trace.strength_at(next_day + days(1), &params), before);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::TraceKind;
use super::formula::{
    ARCHIVE_THRESHOLD, DEFAULT_TICK, Disposition, E_WEIGHT, IMPRINT_WINDOW, PRUNE_THRESHOLD, StorageTier,
    compute_decay, compute_reinforcement, compute_retrieval_score, compute_storage_tier,
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

/// The trace state a record carries: kind, the decay curve (its peak and its origin),
/// emotion, reinforcements and the time of the last reinforcement or rehearsal.
///
/// The strength is not a field: [`TraceState::strength_at`] computes it for any time (see the
/// [module docs](crate::trace#strength)).
///
/// Invariants, checked by every constructor and by deserialisation: the peak is finite and in
/// `[0, 1]`, intensity is in `[0, 1]`, valence in `[-1, 1]`. lex-memory clamps out-of-range
/// emotion silently; maxim refuses it with [`Error::OutOfRange`]. Any decay origin is valid,
/// before or after `last_reinforced`: it is a position on a curve, not an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TraceStateParts", into = "TraceStateParts")]
pub struct TraceState {
    kind: TraceKind,
    peak: f64,
    decay_origin: Timestamp,
    emotional_intensity: f64,
    emotional_valence: f64,
    reinforcement_count: u32,
    last_reinforced: Timestamp,
}

/// Every field of a [`TraceState`], for loading an explicit state
/// ([`TraceState::from_parts`]); also the validated form serde reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceStateParts {
    /// The kind (fixes the base decay rate).
    pub kind: TraceKind,
    /// The height of the decay curve, in `[0, 1]`: the strength at `decay_origin`.
    pub peak: f64,
    /// The virtual start of the decay curve: ticks are counted from it.
    pub decay_origin: Timestamp,
    /// Emotional intensity, in `[0, 1]`.
    pub emotional_intensity: f64,
    /// Emotional valence, in `[-1, 1]`.
    pub emotional_valence: f64,
    /// Reinforcements so far (retrievals included).
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

impl From<TraceState> for TraceStateParts {
    fn from(state: TraceState) -> Self {
        state.to_parts()
    }
}

impl TraceState {
    /// A new trace of `kind` made at `now`: its curve starts at `now` with the kind's starting
    /// strength as peak; no emotion, no reinforcements.
    pub fn new(kind: TraceKind, now: Timestamp) -> Self {
        Self {
            kind,
            peak: kind.starting_strength(),
            decay_origin: now,
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

    /// The same trace felt with an emotional `intensity` in `[0, 1]` and a `valence` in
    /// `[-1, 1]` (as [`TraceState::with_emotion`], keeping everything else: an
    /// [`encoded`](Self::encoded) trace keeps its imprint reinforcement). Errors as
    /// [`with_emotion`](Self::with_emotion)'s.
    ///
    /// ```
    /// use maxim_core::{Timestamp, TraceParams};
    /// use maxim_core::trace::{TraceKind, TraceState};
    /// let now = Timestamp::from_secs(1_000);
    /// let params = TraceParams::default().with_imprint_start(now);
    /// let t = TraceState::encoded(TraceKind::Episodic, now, &params).felt(0.7, -0.6)?;
    /// assert_eq!((t.emotional_intensity(), t.emotional_valence(), t.reinforcement_count()), (0.7, -0.6, 1));
    /// assert!(t.felt(f64::NAN, 0.0).is_err());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn felt(&self, intensity: f64, valence: f64) -> Result<Self> {
        let emotional_intensity = check_unit("emotional_intensity", intensity)?;
        let emotional_valence = check_signed_unit("emotional_valence", valence)?;
        Ok(Self { emotional_intensity, emotional_valence, ..self.clone() })
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
    /// use maxim_core::{Timestamp, TraceParams, days};
    /// use maxim_core::trace::{TraceKind, TraceState, TraceStateParts};
    /// let p = TraceParams::default();
    /// let now = Timestamp::from_secs(1_000_000_000);
    /// // A sensory trace made 30 days ago, loaded with its age.
    /// let mut parts = TraceState::new(TraceKind::Sensory, now).to_parts();
    /// parts.decay_origin = now - days(30);
    /// let state = TraceState::from_parts(parts)?;
    /// let made_then = TraceState::new(TraceKind::Sensory, now - days(30));
    /// assert_eq!(state.strength_at(now, &p), made_then.strength_at(now, &p));
    /// parts.peak = f64::NAN;
    /// assert!(TraceState::from_parts(parts).is_err());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn from_parts(parts: TraceStateParts) -> Result<Self> {
        let peak = check_unit("peak", parts.peak)?;
        let emotional_intensity = check_unit("emotional_intensity", parts.emotional_intensity)?;
        let emotional_valence = check_signed_unit("emotional_valence", parts.emotional_valence)?;
        Ok(Self {
            kind: parts.kind,
            peak,
            decay_origin: parts.decay_origin,
            emotional_intensity,
            emotional_valence,
            reinforcement_count: parts.reinforcement_count,
            last_reinforced: parts.last_reinforced,
        })
    }

    /// Every field, for saving or for building a modified state through
    /// [`TraceState::from_parts`].
    pub fn to_parts(&self) -> TraceStateParts {
        TraceStateParts {
            kind: self.kind,
            peak: self.peak,
            decay_origin: self.decay_origin,
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

    /// The height of the decay curve: the strength at [`TraceState::decay_origin`]. It starts
    /// at the kind's starting strength and only a reinforcement that reaches it raises it;
    /// nothing lowers it. [`TraceState::strength_at`] gives the strength at any time.
    pub fn peak(&self) -> f64 {
        self.peak
    }

    /// The virtual start of the decay curve, which ticks are counted from: the creation for a
    /// trace never reinforced, the last reinforcement that reached the peak, or the earlier
    /// time a reinforcement below the peak moved the trace back to (its effective age). Only a
    /// reinforcement moves it, and only forwards.
    pub fn decay_origin(&self) -> Timestamp {
        self.decay_origin
    }

    /// Emotional intensity in `[0, 1]`; slows decay.
    pub fn emotional_intensity(&self) -> f64 {
        self.emotional_intensity
    }

    /// Emotional valence in `[-1, 1]`.
    pub fn emotional_valence(&self) -> f64 {
        self.emotional_valence
    }

    /// Reinforcements so far, retrievals ([`TraceState::mark_retrieved`]) included.
    pub fn reinforcement_count(&self) -> u32 {
        self.reinforcement_count
    }

    /// When the trace was last reinforced or rehearsed: what its tier and the recency of its
    /// retrieval score count from.
    pub fn last_reinforced(&self) -> Timestamp {
        self.last_reinforced
    }

    /// The strength at `now`: `compute_decay(peak, rate, ticks, intensity)` with `ticks` the
    /// whole ticks from [`TraceState::decay_origin`] to `now` (0 when `now` is not after it),
    /// so the peak itself until one tick has passed. Zero-rate (firmware) traces keep their
    /// peak. Always in `[0, 1]`, never increasing with `now` between reinforcements, never
    /// lowered by a reinforcement and unchanged by rehearsals.
    #[inline]
    pub fn strength_at(&self, now: Timestamp, params: &TraceParams) -> f64 {
        let ticks = params.ticks_between(self.decay_origin, now);
        compute_decay(self.peak, self.kind.base_decay_rate(), ticks as f64, self.emotional_intensity)
    }

    /// Records a rehearsal (a retrieval, an access): `last_reinforced = max(last_reinforced,
    /// now)` and nothing else. It keeps the trace hot and raises the recency of its retrieval
    /// score; its strength and decay are unchanged.
    ///
    /// ```
    /// use maxim_core::{Timestamp, TraceParams, days};
    /// use maxim_core::trace::{StorageTier, TraceKind, TraceState};
    /// let p = TraceParams::default();
    /// let t0 = Timestamp::EPOCH;
    /// let mut trace = TraceState::new(TraceKind::Episodic, t0);
    /// let later = t0 + days(30);
    /// let strength = trace.strength_at(later, &p);
    /// assert_eq!(trace.tier(later, &p), StorageTier::Warm);
    /// trace.rehearse(later);
    /// assert_eq!(trace.tier(later, &p), StorageTier::Hot);
    /// assert_eq!(trace.strength_at(later, &p), strength);
    /// ```
    pub fn rehearse(&mut self, now: Timestamp) {
        self.last_reinforced = self.last_reinforced.max(now);
    }

    /// A rehearsal that also counts one reinforcement: what `retrieve_and_reinforce` does to
    /// each trace it returns (§5.8). Strength, peak and decay origin are unchanged.
    pub fn mark_retrieved(&mut self, now: Timestamp) {
        self.rehearse(now);
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
    }

    /// Reinforces the trace at `now` and returns the reinforced strength
    /// `s' = compute_reinforcement(strength_at(now), imprint)`, with the imprint window of
    /// `params` at `now` (lex-memory's `new_strength`).
    ///
    /// - When `s'` reaches the peak (a fresh or barely decayed trace), it becomes the peak and
    ///   the curve starts again at `now`: `strength_at(now)` is `s'` exactly.
    /// - Otherwise the peak stays and the trace moves back along its curve to the point where
    ///   it had the strength `s'`: the decay origin moves to `now - t'` ticks, with
    ///   `t' = (peak / s')^(1 / eff) - 1` and `eff = rate / (1 + 0.3 intensity)`. Since ticks
    ///   are whole, `strength_at(now)` is then the curve's value at the last whole tick not
    ///   below `s'`: at least `s'`, and one more tick would take it below `s'`.
    ///
    /// In both cases `last_reinforced = max(last_reinforced, now)` and one more reinforcement
    /// is counted. The peak never falls and the decay origin never moves back, so the strength
    /// at every time, now or later, is at least what it would have been without the
    /// reinforcement.
    ///
    /// A `now` before [`TraceState::decay_origin`] (a late report of an earlier reinforcement)
    /// is applied at the decay origin, to the peak, so that time never runs backwards on the
    /// curve; the imprint window is still judged at `now`. Firmware is refused with
    /// [`ReinforceError::Firmware`] and left unchanged.
    ///
    /// ```
    /// use maxim_core::{Timestamp, TraceParams, days};
    /// use maxim_core::trace::{TraceKind, TraceState};
    /// let p = TraceParams::default();
    /// let t0 = Timestamp::EPOCH;
    /// // A fresh semantic trace: 0.5, then 0.6 and a new peak.
    /// let mut fresh = TraceState::new(TraceKind::Semantic, t0);
    /// assert_eq!(fresh.reinforce(t0, &p)?, 0.6);
    /// assert_eq!((fresh.peak(), fresh.decay_origin()), (0.6, t0));
    /// // An old episodic trace reinforced below its peak moves back along its curve.
    /// let mut old = TraceState::new(TraceKind::Episodic, t0);
    /// let untouched = old.clone();
    /// let now = t0 + days(400);
    /// let new = old.reinforce(now, &p)?;
    /// assert!(new < old.peak() && old.strength_at(now, &p) >= new);
    /// assert!(old.decay_origin() > t0 && old.decay_origin() < now);
    /// for later in [now, now + days(1), now + days(3_000)] {
    ///     assert!(old.strength_at(later, &p) >= untouched.strength_at(later, &p));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reinforce(&mut self, now: Timestamp, params: &TraceParams) -> Result<f64, ReinforceError> {
        if self.kind == TraceKind::Firmware {
            return Err(ReinforceError::Firmware);
        }
        let at = self.decay_origin.max(now);
        let strength = self.strength_at(at, params);
        let new = compute_reinforcement(strength, params.imprint_active(now));
        if new >= self.peak {
            self.peak = new;
            self.decay_origin = at;
        } else {
            self.decay_origin = self.origin_where_strength_is(new, strength, at, params);
        }
        self.last_reinforced = self.last_reinforced.max(now);
        self.reinforcement_count = self.reinforcement_count.saturating_add(1);
        Ok(new)
    }

    /// The decay origin that puts the trace, at `now`, at the point of its curve where its
    /// strength is `target`: the last whole tick `k` with `compute_decay(peak, .., k, ..) >=
    /// target`, and within that tick the fraction the closed form gives.
    ///
    /// Preconditions (what [`TraceState::reinforce`] guarantees when it calls this): the rate
    /// is not zero, `now >= decay_origin`, `strength` is `strength_at(now)` and
    /// `strength < target < peak`, so at least one whole tick has passed. The answer lies after
    /// the current origin and at most at `now`; outside the preconditions it is the current
    /// origin (no change of curve position).
    ///
    /// The closed form `t' = (peak / target)^(1 / eff) - 1` is only a first guess: the whole
    /// tick is found by a search over `[0, ticks to now)` that evaluates the very curve
    /// [`TraceState::strength_at`] reads (two evaluations when the guess is right), so an
    /// infinite, NaN or imprecise guess (a tiny `eff` raises the ratio to a power in the
    /// thousands) can neither overflow nor break the guarantee `strength_at(now) >= target`.
    fn origin_where_strength_is(
        &self,
        target: f64,
        strength: f64,
        now: Timestamp,
        params: &TraceParams,
    ) -> Timestamp {
        let (peak, rate, intensity) = (self.peak, self.kind.base_decay_rate(), self.emotional_intensity);
        let decay = |k: u64| compute_decay(peak, rate, k as f64, intensity);
        let tick = params.tick_micros;
        // `now >= decay_origin`, so `elapsed` is the true distance unless it saturates.
        let elapsed = now.as_micros().saturating_sub(self.decay_origin.as_micros()).max(0) as u64;
        let current = elapsed / tick;
        // Largest k with decay(k) >= target, in [lo, hi): decay(0) = peak > target and
        // decay(current) = strength < target.
        let (mut lo, mut hi) = (0u64, current);
        if hi == 0 || !(strength < target && target < peak) {
            return self.decay_origin;
        }
        let effective_rate = rate / (1.0 + intensity * E_WEIGHT);
        let exact = (peak / target).powf(1.0 / effective_rate) - 1.0;
        // `as` saturates: NaN gives 0, +inf gives u64::MAX.
        let guess = (exact as u64).min(hi - 1);
        if decay(guess) >= target {
            lo = guess;
            if guess + 1 < hi {
                if decay(guess + 1) >= target {
                    lo = guess + 1;
                } else {
                    hi = guess + 1;
                }
            }
        } else {
            hi = guess;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if decay(mid) >= target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let k = lo;
        // Within tick k, the closed form's fraction, clamped into the tick (0 for a NaN).
        let fraction = (exact - k as f64).clamp(0.0, 1.0);
        let within = ((fraction * tick as f64) as u64).min(tick - 1);
        // k + 1 <= current, so age < (k + 1) * tick <= elapsed: the origin moves forwards.
        let age = k * tick + within;
        Timestamp::from_micros(now.as_micros() - age as i64)
    }

    /// The storage tier at `now` (§5.5), from the strength at `now` and the time since the
    /// last reinforcement or rehearsal.
    pub fn tier(&self, now: Timestamp, params: &TraceParams) -> StorageTier {
        compute_storage_tier(self.strength_at(now, params), now.secs_since(self.last_reinforced))
    }

    /// The retrieval score at `now` (§5.4), from the strength at `now` and the time since the
    /// last reinforcement or rehearsal; `associated` adds the 15% Hebbian bonus.
    pub fn retrieval_score(&self, now: Timestamp, associated: bool, params: &TraceParams) -> f64 {
        compute_retrieval_score(
            self.strength_at(now, params),
            self.emotional_intensity,
            now.secs_since(self.last_reinforced),
            associated,
        )
    }

    /// What a layer may do with the trace at `now`: auto-fire, keep, archive or prune, by its
    /// strength at `now`.
    pub fn disposition(&self, now: Timestamp, params: &TraceParams) -> Disposition {
        Disposition::of(self.strength_at(now, params))
    }
}

/// What [`decay_all`] found. Zero-rate (firmware) states are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecaySummary {
    /// Decaying states whose strength is above [`PRUNE_THRESHOLD`].
    pub decayed: usize,
    /// Decaying states whose strength is at or below [`PRUNE_THRESHOLD`]: what a decay cycle
    /// deletes.
    pub prune_candidates: usize,
    /// Those of `decayed` below [`ARCHIVE_THRESHOLD`] ([`Disposition::Archive`]).
    pub archive_candidates: usize,
}

impl std::ops::Add for DecaySummary {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            decayed: self.decayed + other.decayed,
            prune_candidates: self.prune_candidates + other.prune_candidates,
            archive_candidates: self.archive_candidates + other.archive_candidates,
        }
    }
}

/// Computes the strength at `now` of every state of `states` into `out` (resized to
/// `states.len()`; `out[i]` is `states[i].strength_at(now, params)`, bit for bit) and counts
/// the decaying states by what they may become. Slices of at least
/// [`PARALLEL_DECAY_MIN_LEN`] states are split across rayon's pool; the result is the same
/// either way. Nothing is written to the states.
///
/// ```
/// use std::time::Duration;
/// use maxim_core::Timestamp;
/// use maxim_core::trace::{DecaySummary, TraceKind, TraceParams, TraceState, decay_all};
/// let (t0, p) = (Timestamp::EPOCH, TraceParams::default());
/// let states: Vec<_> = TraceKind::ALL.iter().map(|&k| TraceState::new(k, t0)).collect();
/// let mut strengths = Vec::new();
/// let now = t0 + Duration::from_secs(3_600);
/// let summary = decay_all(&states, now, &p, &mut strengths);
/// assert_eq!(summary, DecaySummary { decayed: 6, prune_candidates: 0, archive_candidates: 0 });
/// assert_eq!(strengths[0], 1.0); // firmware keeps its peak and is not counted
/// assert_eq!(strengths[6], states[6].strength_at(now, &p)); // sensory
/// assert!(strengths[6] < 0.4);
/// ```
pub fn decay_all(
    states: &[TraceState],
    now: Timestamp,
    params: &TraceParams,
    out: &mut Vec<f64>,
) -> DecaySummary {
    let _span = tracing::debug_span!("decay_all", n_states = states.len()).entered();
    // Only new slots are written here; every slot is overwritten below.
    out.truncate(states.len());
    out.resize(states.len(), 0.0);
    if states.len() < PARALLEL_DECAY_MIN_LEN {
        decay_chunk(states, out, now, params)
    } else {
        states
            .par_chunks(DECAY_CHUNK)
            .zip(out.par_chunks_mut(DECAY_CHUNK))
            .map(|(chunk, out)| decay_chunk(chunk, out, now, params))
            .reduce(DecaySummary::default, |a, b| a + b)
    }
}

fn decay_chunk(states: &[TraceState], out: &mut [f64], now: Timestamp, params: &TraceParams) -> DecaySummary {
    let now = now.as_micros();
    let tick = params.tick_micros;
    let (mut decayed, mut pruned, mut archived) = (0, 0, 0);
    for (state, slot) in states.iter().zip(out) {
        let rate = state.kind.base_decay_rate();
        if rate == 0.0 {
            *slot = state.peak;
            continue;
        }
        let ticks = ticks_between_micros(state.decay_origin.as_micros(), now, tick);
        // With 0 ticks, compute_decay is peak * 1^x = peak exactly (the peak is in [0, 1]):
        // skip the pow for traces whose curve started in the current tick.
        let strength = if ticks == 0 {
            state.peak
        } else {
            compute_decay(state.peak, rate, ticks as f64, state.emotional_intensity)
        };
        *slot = strength;
        if strength <= PRUNE_THRESHOLD {
            pruned += 1;
        } else {
            decayed += 1;
            archived += usize::from(strength < ARCHIVE_THRESHOLD);
        }
    }
    DecaySummary { decayed, prune_candidates: pruned, archive_candidates: archived }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_secs(secs)
    }

    fn parts_with(kind: TraceKind, peak: f64, at: Timestamp) -> TraceStateParts {
        TraceStateParts { peak, ..TraceState::new(kind, at).to_parts() }
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

    /// A reinforcement that reaches the peak raises it and starts the curve again: the
    /// strength is then exactly the returned value, and decays from it as a new trace would.
    #[test]
    fn reinforcing_up_to_the_peak_restarts_the_curve_there() {
        let p = TraceParams::default();
        let t0 = t(1_000);
        let mut s = TraceState::with_emotion(TraceKind::Episodic, t0, 0.5, 0.0).unwrap();
        // Ten ticks on: 0.6 * 11^-eff + 0.1 is above 0.6.
        let at = t0 + p.tick() * 10;
        let before = s.strength_at(at, &p);
        let new = s.reinforce(at, &p).unwrap();
        assert_eq!(new, before + 0.1);
        assert!(new > 0.6);
        assert_eq!((s.peak(), s.decay_origin(), s.last_reinforced()), (new, at, at));
        assert_eq!(s.strength_at(at, &p), new);
        let fresh = TraceState::from_parts(TraceStateParts { peak: new, ..s.to_parts() }).unwrap();
        for later in [at + p.tick(), at + days(3)] {
            assert_eq!(s.strength_at(later, &p), fresh.strength_at(later, &p));
            let ticks = p.ticks_between(at, later) as f64;
            assert_eq!(s.strength_at(later, &p), compute_decay(new, 0.02, ticks, 0.5));
        }
    }

    /// The review's scenario: a year-old sensory trace (0.4 * 525,601^-0.1 = 0.107) reinforced
    /// once returns 0.207 and moves back along its peak's curve to where it had that strength,
    /// about 12 hours after the curve's start.
    #[test]
    fn a_year_old_trace_reinforced_once_moves_back_along_its_curve() {
        let p = TraceParams::default();
        let t0 = t(1_700_000_000);
        let mut s = TraceState::new(TraceKind::Sensory, t0);
        let year = t0 + days(365);
        let old = s.strength_at(year, &p);
        assert_eq!(old, compute_decay(0.4, 0.1, 525_600.0, 0.0));
        assert!((old - 0.107).abs() < 1e-3, "{old}");
        let new = s.reinforce(year, &p).unwrap();
        assert_eq!(new, old + 0.1);
        assert_eq!((s.peak(), s.last_reinforced(), s.reinforcement_count()), (0.4, year, 1));
        // t' = (0.4 / 0.20715)^10 - 1 = 719.67 ticks: the origin is 719.67 ticks before `year`.
        let ticks = p.ticks_between(s.decay_origin(), year);
        assert_eq!(ticks, 719);
        let age_secs = year.secs_since(s.decay_origin());
        assert!((age_secs / 60.0 - 719.674_5).abs() < 1e-3, "{age_secs}");
        // At `year` the strength is the curve at the last whole tick not below 0.20715.
        let now = s.strength_at(year, &p);
        assert_eq!(now, compute_decay(0.4, 0.1, 719.0, 0.0));
        assert!(now >= new && now - new < 3e-5, "{now} vs {new}");
        assert!(compute_decay(0.4, 0.1, 720.0, 0.0) < new);
        // The next tick comes when the fractional age reaches 720, 0.33 tick later.
        let next = s.decay_origin() + p.tick() * 720;
        assert!(next > year && next < year + Duration::from_secs(20), "{next} {year}");
        assert_eq!(s.strength_at(next - Duration::from_micros(1), &p), now);
        assert_eq!(s.strength_at(next, &p), compute_decay(0.4, 0.1, 720.0, 0.0));
        // Every reader sees the same strength.
        assert_eq!(s.tier(year, &p), StorageTier::Hot);
        assert_eq!(s.retrieval_score(year, false, &p), now);
        assert_eq!(s.disposition(year, &p), Disposition::Active);
    }

    /// The flaw the effective age fixes: restarting the power law at the reinforced strength
    /// (the former model) left the year-old trace under its unreinforced curve a day later.
    /// Moving back along the peak's curve keeps it above at every later time, near 0.19 a day
    /// later where the unreinforced trace is at 0.107.
    #[test]
    fn reinforcing_an_old_trace_never_drops_it_under_its_unreinforced_curve() {
        let p = TraceParams::default();
        let t0 = t(0);
        let untouched = TraceState::new(TraceKind::Sensory, t0);
        let mut reinforced = untouched.clone();
        let year = t0 + days(365);
        let new = reinforced.reinforce(year, &p).unwrap();
        assert!((new - 0.207).abs() < 1e-3, "{new}");
        let day_after = year + days(1);
        let (got, plain) = (reinforced.strength_at(day_after, &p), untouched.strength_at(day_after, &p));
        assert!(got >= plain);
        assert!((got - 0.1856).abs() < 1e-3, "{got}");
        assert!((plain - 0.1071).abs() < 1e-3, "{plain}");
        // The former model: compute_decay from 0.207 over the day's 1,440 ticks, below `plain`.
        assert!(compute_decay(new, 0.1, 1_440.0, 0.0) < plain);
        for later in [
            year,
            year + Duration::from_secs(60),
            year + Duration::from_secs(3_600),
            year + days(7),
            year + days(365),
            year + days(36_500),
        ] {
            assert!(reinforced.strength_at(later, &p) >= untouched.strength_at(later, &p), "{later}");
        }
        // A year on, the reinforced trace is where the untouched one was at the reinforcement:
        // the reinforcement bought back a year of decay, less 12 hours.
        let a_year_on = reinforced.strength_at(year + days(365), &p);
        assert!((a_year_on - untouched.strength_at(year, &p)).abs() < 1e-4, "{a_year_on}");
    }

    /// Whole-tick rounding and the fraction kept within the tick, over kinds, emotions, ages
    /// and tick lengths.
    #[test]
    fn reinforcing_below_the_peak_lands_on_the_last_whole_tick_not_below_the_target() {
        let mut below = 0;
        for tick in [Duration::from_micros(1), Duration::from_secs(1), Duration::from_secs(60), days(1)] {
            let p = TraceParams::new(tick).unwrap();
            for kind in TraceKind::ALL.into_iter().filter(|k| *k != TraceKind::Firmware) {
                for intensity in [0.0, 0.35, 1.0] {
                    for age in [days(2), days(90), days(3_650), days(365 * 200_000)] {
                        let t0 = t(-1_000_000_000);
                        let mut s = TraceState::with_emotion(kind, t0, intensity, 0.0).unwrap();
                        let now = t0 + age;
                        let new = s.reinforce(now, &p).unwrap();
                        let (peak, rate) = (s.peak(), kind.base_decay_rate());
                        let k = p.ticks_between(s.decay_origin(), now);
                        assert!(s.strength_at(now, &p) >= new, "{kind} {intensity} {age:?}");
                        if peak == kind.starting_strength() && new < peak {
                            below += 1;
                            assert!(s.decay_origin() > t0 && s.decay_origin() <= now);
                            let next = compute_decay(peak, rate, (k + 1) as f64, intensity);
                            assert!(next < new, "{kind} {intensity} {age:?}: one more tick is below");
                        } else {
                            assert_eq!((s.decay_origin(), s.strength_at(now, &p)), (now, new));
                        }
                    }
                }
            }
        }
        assert!(below > 50, "{below}");
    }

    /// The search never leaves `[old origin, now]`, even where the closed form is imprecise:
    /// identity and procedural traces (the smallest rates, raised to powers in the hundreds)
    /// across the whole timestamp range in one-microsecond ticks.
    #[test]
    fn extreme_ages_and_tiny_rates_keep_the_origin_in_range() {
        let p = TraceParams::new(Duration::from_micros(1)).unwrap();
        let (start, end) = (Timestamp::from_micros(i64::MIN), Timestamp::from_micros(i64::MAX));
        for kind in [TraceKind::Identity, TraceKind::Procedural, TraceKind::Trust, TraceKind::Sensory] {
            for intensity in [0.0, 1.0] {
                let mut parts = TraceState::with_emotion(kind, start, intensity, 0.0).unwrap().to_parts();
                parts.peak = 1.0;
                let s = TraceState::from_parts(parts).unwrap();
                let strength = s.strength_at(end, &p);
                // Targets from just above the current strength to just under the peak.
                for target in [strength + 1e-12, f64::midpoint(strength, 1.0), 1.0 - 1e-9] {
                    if !(target > strength && target < 1.0) {
                        continue;
                    }
                    let origin = s.origin_where_strength_is(target, strength, end, &p);
                    assert!(origin > start && origin <= end, "{kind} {intensity} {target}");
                    let moved = TraceState { decay_origin: origin, ..s.clone() };
                    assert!(moved.strength_at(end, &p) >= target, "{kind} {intensity} {target}");
                }
                // Outside the preconditions the curve position is kept.
                assert_eq!(s.origin_where_strength_is(strength, strength, end, &p), start);
                assert_eq!(s.origin_where_strength_is(1.0, strength, end, &p), start);
                assert_eq!(s.origin_where_strength_is(0.99, 1.0, start, &p), start);
            }
        }
    }

    #[test]
    fn rehearsal_changes_neither_strength_nor_decay() {
        let p = TraceParams::default();
        let t0 = t(0);
        let plain = TraceState::with_emotion(TraceKind::Episodic, t0, 0.4, 0.0).unwrap();
        let mut rehearsed = plain.clone();
        for h in [1, 5, 24, 24 * 40] {
            let at = t0 + Duration::from_secs(h * 3_600);
            rehearsed.rehearse(at);
            assert_eq!(rehearsed.last_reinforced(), at);
            for probe in [at, at + p.tick(), at + days(3), at + days(400)] {
                assert_eq!(rehearsed.strength_at(probe, &p), plain.strength_at(probe, &p));
            }
        }
        assert_eq!((rehearsed.peak(), rehearsed.decay_origin()), (plain.peak(), plain.decay_origin()));
        // Recency and tier count from the rehearsal; the strength factor does not change.
        let now = t0 + days(40) + Duration::from_secs(1_800);
        assert_eq!(plain.tier(now, &p), StorageTier::Warm);
        assert_eq!(rehearsed.tier(now, &p), StorageTier::Hot);
        let strength = plain.strength_at(now, &p);
        assert_eq!(
            rehearsed.retrieval_score(now, false, &p),
            compute_retrieval_score(strength, 0.4, 1_800.0, false)
        );
        // mark_retrieved is a rehearsal plus a count.
        let mut retrieved = plain.clone();
        retrieved.mark_retrieved(now);
        assert_eq!(retrieved.reinforcement_count(), 1);
        assert_eq!(retrieved.strength_at(now + days(9), &p), plain.strength_at(now + days(9), &p));
    }

    #[test]
    fn tier_score_and_disposition_read_strength_at() {
        let p = TraceParams::default();
        let s = TraceState::with_emotion(TraceKind::Semantic, t(0), 0.5, 0.0).unwrap();
        assert_eq!(s.tier(t(0), &p), StorageTier::Hot);
        assert_eq!(s.tier(t(0) + days(30), &p), StorageTier::Warm);
        assert_eq!(s.retrieval_score(t(0), false, &p), 0.75);
        // Two hours later the strength has decayed too: the score is 0.1875 times it / 0.5.
        let later = t(7_200);
        let decayed = s.strength_at(later, &p);
        assert!(decayed < 0.5);
        assert_eq!(
            s.retrieval_score(later, false, &p),
            compute_retrieval_score(decayed, 0.5, 7_200.0, false)
        );
        assert_eq!(s.disposition(t(0), &p), Disposition::Active);
        let identity = TraceState::new(TraceKind::Identity, t(0));
        assert_eq!(identity.disposition(t(0), &p), Disposition::AutoFire);
        let faint = TraceState::from_parts(parts_with(TraceKind::Sensory, 0.02, t(0))).unwrap();
        assert_eq!(faint.disposition(t(0), &p), Disposition::Archive);
        assert_eq!(faint.tier(t(0), &p), StorageTier::Hot);
        // Decay alone, with no decay pass run, erases it.
        let decade = t(0) + days(3650);
        assert_eq!(faint.disposition(decade, &p), Disposition::Prune);
        assert_eq!(faint.tier(decade, &p), StorageTier::Erased);
    }

    #[test]
    fn firmware_keeps_its_peak_and_refuses_reinforcement() {
        let p = TraceParams::default();
        let mut s = TraceState::new(TraceKind::Firmware, t(0));
        let before = s.clone();
        assert_eq!(s.reinforce(t(10), &p), Err(ReinforceError::Firmware));
        assert_eq!(s, before);
        assert_eq!(s.strength_at(t(0) + days(1000), &p), 1.0);
        let dim = TraceState::from_parts(parts_with(TraceKind::Firmware, 0.005, t(0))).unwrap();
        assert_eq!(dim.strength_at(t(0) + days(1000), &p), 0.005);
        assert_eq!(ReinforceError::Firmware.to_string(), "firmware traces are never reinforced");
    }

    #[test]
    fn time_never_moves_backwards() {
        let p = TraceParams::default();
        let mut s = TraceState::new(TraceKind::Episodic, t(1_000));
        s.rehearse(t(50));
        assert_eq!(s.last_reinforced(), t(1_000));
        // A reinforcement dated before the decay origin is applied at the origin, to the peak.
        assert_eq!(s.reinforce(t(40), &p), Ok(0.7));
        assert_eq!((s.decay_origin(), s.last_reinforced(), s.peak()), (t(1_000), t(1_000), 0.7));
        assert_eq!(s.strength_at(t(40), &p), 0.7);
        assert_eq!(s.strength_at(t(1_000), &p), 0.7);
        // After a rehearsal far ahead, a reinforcement between the origin and the rehearsal
        // moves the origin (here back along the curve, below the peak) but not
        // last_reinforced.
        let rehearsal = t(1_000) + days(900);
        s.mark_retrieved(rehearsal);
        assert_eq!((s.last_reinforced(), s.reinforcement_count()), (rehearsal, 2));
        let at = t(1_000) + days(600);
        let before = s.clone();
        let new = s.reinforce(at, &p).unwrap();
        assert_eq!(new, compute_reinforcement(before.strength_at(at, &p), false));
        assert!(new < s.peak());
        assert!(s.decay_origin() > t(1_000) && s.decay_origin() < at);
        assert_eq!(s.last_reinforced(), rehearsal);
        for probe in [t(0), at, rehearsal, rehearsal + days(10)] {
            assert!(s.strength_at(probe, &p) >= before.strength_at(probe, &p));
        }
        // Strength before the origin is the peak (0 ticks).
        assert_eq!(s.strength_at(t(0), &p), s.peak());
        assert!(TraceState::from_parts(s.to_parts()).is_ok(), "the invariants hold");
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
            TraceStateParts { peak: f64::NAN, ..base },
            TraceStateParts { peak: f64::INFINITY, ..base },
            TraceStateParts { peak: 1.5, ..base },
            TraceStateParts { peak: -0.1, ..base },
            TraceStateParts { emotional_intensity: 2.0, ..base },
            TraceStateParts { emotional_valence: -2.0, ..base },
        ];
        for parts in bad {
            assert!(matches!(TraceState::from_parts(parts), Err(Error::OutOfRange { .. })), "{parts:?}");
        }
        // Any decay origin is valid, before or after the last reinforcement.
        for origin in [t(-5), t(5), Timestamp::from_micros(i64::MIN), Timestamp::from_micros(i64::MAX)] {
            let parts = TraceStateParts { decay_origin: origin, ..base };
            assert_eq!(TraceState::from_parts(parts).unwrap().decay_origin(), origin);
        }
        let rehearsed_later = TraceStateParts { last_reinforced: t(5), ..base };
        assert_eq!(TraceState::from_parts(rehearsed_later).unwrap().last_reinforced(), t(5));
        assert_eq!(TraceState::from_parts(base).unwrap(), TraceState::new(TraceKind::Semantic, now));
    }

    #[test]
    fn serde_round_trips_and_refuses_bad_states() {
        let mut s = TraceState::with_emotion(TraceKind::Trust, t(5), 0.25, -0.5).unwrap();
        s.reinforce(t(5) + days(300), &TraceParams::default()).unwrap();
        s.rehearse(t(5) + days(301));
        assert!(s.decay_origin() > t(5), "reinforced below the peak");
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"peak\":") && json.contains("\"decay_origin\":"), "{json}");
        assert!(!json.contains("anchor") && !json.contains("strength"), "{json}");
        assert_eq!(serde_json::from_str::<TraceState>(&json).unwrap(), s);
        let bytes = postcard::to_stdvec(&s).unwrap();
        assert_eq!(postcard::from_bytes::<TraceState>(&bytes).unwrap(), s);
        assert_eq!(postcard::to_stdvec(&s.to_parts()).unwrap(), bytes, "the parts are the wire form");
        let bad = serde_json::to_string(&TraceStateParts { peak: 1.5, ..s.to_parts() }).unwrap();
        assert!(serde_json::from_str::<TraceState>(&bad).is_err(), "peak above 1");
        let nan = postcard::to_stdvec(&TraceStateParts { peak: f64::NAN, ..s.to_parts() }).unwrap();
        assert!(postcard::from_bytes::<TraceState>(&nan).is_err());
        let loud = TraceStateParts { emotional_intensity: 1.01, ..s.to_parts() };
        assert!(postcard::from_bytes::<TraceState>(&postcard::to_stdvec(&loud).unwrap()).is_err());
    }

    #[test]
    fn decay_all_counts_and_writes_strength_at() {
        let p = TraceParams::default();
        let states = vec![
            TraceState::from_parts(parts_with(TraceKind::Sensory, 0.0101, t(0))).unwrap(),
            TraceState::new(TraceKind::Semantic, t(0)),
            TraceState::new(TraceKind::Firmware, t(0)),
            TraceState::from_parts(parts_with(TraceKind::Sensory, 0.04, t(0))).unwrap(),
            TraceState::from_parts(parts_with(TraceKind::Firmware, 0.001, t(0))).unwrap(),
        ];
        let mut out = vec![7.0; 9];
        let s = decay_all(&states, t(60), &p, &mut out);
        assert_eq!(s, DecaySummary { decayed: 2, prune_candidates: 1, archive_candidates: 1 });
        assert_eq!(out.len(), states.len());
        for (state, got) in states.iter().zip(&out) {
            assert_eq!(*got, state.strength_at(t(60), &p));
        }
        assert!(out[0] <= PRUNE_THRESHOLD);
        assert_eq!(decay_all(&[], t(60), &p, &mut out), DecaySummary::default());
        assert!(out.is_empty());
    }
}
