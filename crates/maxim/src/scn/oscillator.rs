//! The SCN's oscillator network: four coupled Kuramoto oscillators, one per rhythm, entrained
//! by the events the SCN registers (`spec/maxim-reference.md` §12.2).
//!
//! # The model
//!
//! Every registered event is a phase on each rhythm (its [`TemporalSignature`]). The events of
//! one rhythm form a population whose Kuramoto order parameter `r·e^{iψ} = Σ wₖ e^{iφₖ} / Σ wₖ`
//! says how tightly they lock to one phase (`r` near 1: they recur at one time; near 0:
//! spread evenly) and where (`ψ`). Older events weigh less: every observation multiplies the
//! weights so far by the weight decay (0.999, a half-life of about 693 events).
//!
//! Each rhythm has an oscillator `θᵢ`, measured in the frame that turns with its natural
//! frequency (one cycle per day, 7 days, 30 days, 365.25 days), the frame the signature's
//! phases are measured in, so the frequency term drops out of its equation. Between two
//! events the oscillators are integrated by Euler steps of one hour of elapsed time (at most
//! [`OscillatorConfig::max_steps`], three days, per event):
//!
//! `dθᵢ/dt = K·rᵢ·sin(ψᵢ − θᵢ) + (K/4)·Σⱼ Wᵢⱼ·sin(eⱼ − eᵢ)`, with `eᵢ = θᵢ − ψᵢ`,
//!
//! the mean-field Kuramoto pull of the events (coupling K = 0.1 per hour) plus the coupling of
//! the oscillators' phase errors through the learned weights `W`. The weights learn by a
//! Hebbian rule: an event's activity on rhythm `i` is `aᵢ = cos(φᵢ − θᵢ)` (1 when it falls
//! where the oscillator expects), and `ΔWᵢⱼ = η·aᵢ·aⱼ` (η = 0.01), then `W *= 0.999`, clamped
//! to `[−0.5, 2]`: rhythms on which the same events are punctual become coupled ("Monday
//! mornings").
//!
//! # What it answers
//!
//! - [`coherence`](Oscillator::coherence) of a rhythm: its order parameter `r`, reported once
//!   the events span at least one period of the rhythm and number at least the cold start
//!   (3); before that 0, since a handful of events seen within one day lock to every slower
//!   rhythm trivially. [`phase_coherence`](Oscillator::phase_coherence) is the circadian one.
//! - [`temporal_anomaly_score`](Oscillator::temporal_anomaly_score) of a signature:
//!   `maxᵢ rᵢ·(1 − cos(φᵢ − θᵢ))/2`, in `[0, 1]`: 0 at the expected time or on rhythms without
//!   structure, 1 opposite a perfectly locked rhythm.
//! - per event kind (`tool:navigate`, ...), the circadian phases of its last 50 occurrences and
//!   [`imminence`](Oscillator::imminence): how close a moment is to the kind's usual time of
//!   day, scaled by how regular the kind is, 0 below 3 observations.
//!
//! ```
//! use maxim::maxim_core::Timestamp;
//! use maxim::scn::{Oscillator, OscillatorConfig, TemporalSignature, TimeZone};
//! let mut osc = Oscillator::new(OscillatorConfig::default())?;
//! for day in 0..20 {
//!     let at = Timestamp::from_secs(day * 86_400 + 9 * 3600); // every day at 09:00
//!     osc.observe(&TemporalSignature::at(at, TimeZone::UTC), at);
//! }
//! assert!(osc.phase_coherence() > 0.99);
//! let nine = TemporalSignature::at(Timestamp::from_secs(30 * 86_400 + 9 * 3600), TimeZone::UTC);
//! let nine_pm = TemporalSignature::at(Timestamp::from_secs(30 * 86_400 + 21 * 3600), TimeZone::UTC);
//! assert!(osc.temporal_anomaly_score(&nine) < 0.05);
//! assert!(osc.temporal_anomaly_score(&nine_pm) > 0.9);
//! # Ok::<(), maxim::maxim_core::Error>(())
//! ```

use std::f64::consts::{PI, TAU};

use maxim_core::Timestamp;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::calendar::{Rhythm, TemporalSignature};

/// Number of oscillators (one per [`Rhythm`]).
const N: usize = 4;

/// Settings of the [`Oscillator`]: numbers only; set fields by assignment on a default.
///
/// ```
/// use maxim::scn::OscillatorConfig;
/// let mut config = OscillatorConfig::default();
/// assert_eq!((config.coupling, config.learning_rate, config.weight_decay), (0.1, 0.01, 0.999));
/// config.weight_decay = 1.5;
/// assert!(config.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OscillatorConfig {
    /// Kuramoto coupling K per hour, finite and in `[0, 1]` (default 0.1).
    pub coupling: f64,
    /// Hebbian learning rate η, finite and in `[0, 1]` (default 0.01).
    pub learning_rate: f64,
    /// Factor applied to the coupling weights and to the weight of every earlier event at each
    /// observation, in `(0, 1]` (default 0.999).
    pub weight_decay: f64,
    /// Smallest coupling weight (default −0.5).
    pub min_weight: f64,
    /// Largest coupling weight (default 2.0).
    pub max_weight: f64,
    /// Euler step in seconds of elapsed time, finite and in `[1, 86 400]` (default 3600: one
    /// hour).
    pub step_secs: f64,
    /// Most Euler steps integrated between two events (default 72: three days; a longer gap
    /// integrates its first three days, by which time the oscillators have settled to within
    /// e^{−7.2} of the pull of a perfectly locked rhythm).
    pub max_steps: u32,
    /// Occurrences remembered per event kind, 1 to 100 000 (default 50).
    pub kind_window: usize,
    /// Most event kinds tracked, 1 to 1 000 000 (default 1024); a new kind beyond it replaces
    /// the kind seen longest ago.
    pub max_kinds: usize,
    /// Observations below which coherence and imminence are 0 (default 3).
    pub cold_start: usize,
}

impl Default for OscillatorConfig {
    fn default() -> Self {
        Self {
            coupling: 0.1,
            learning_rate: 0.01,
            weight_decay: 0.999,
            min_weight: -0.5,
            max_weight: 2.0,
            step_secs: 3600.0,
            max_steps: 72,
            kind_window: 50,
            max_kinds: 1024,
            cold_start: 3,
        }
    }
}

impl OscillatorConfig {
    /// Checks every setting (see the fields).
    pub fn validate(&self) -> maxim_core::Result<()> {
        maxim_core::check_unit("oscillator.coupling", self.coupling)?;
        maxim_core::check_unit("oscillator.learning_rate", self.learning_rate)?;
        let out = |field, value: f64, expected| Err(maxim_core::Error::OutOfRange { field, value, expected });
        if !(self.weight_decay > 0.0 && self.weight_decay <= 1.0) {
            return out("oscillator.weight_decay", self.weight_decay, "a number in (0, 1]");
        }
        if !(self.min_weight.is_finite() && self.max_weight.is_finite() && self.min_weight <= 0.0) {
            return out("oscillator.min_weight", self.min_weight, "a finite number <= 0");
        }
        if self.max_weight < self.min_weight.max(0.0) {
            return out("oscillator.max_weight", self.max_weight, "a finite number >= max(0, min_weight)");
        }
        if !(self.step_secs >= 1.0 && self.step_secs <= 86_400.0) {
            return out("oscillator.step_secs", self.step_secs, "a number in [1, 86400]");
        }
        if self.max_steps == 0 || self.max_steps > 100_000 {
            return out("oscillator.max_steps", f64::from(self.max_steps), "between 1 and 100000");
        }
        if self.kind_window == 0 || self.kind_window > 100_000 {
            return out("oscillator.kind_window", self.kind_window as f64, "between 1 and 100000");
        }
        if self.max_kinds == 0 || self.max_kinds > 1_000_000 {
            return out("oscillator.max_kinds", self.max_kinds as f64, "between 1 and 1000000");
        }
        if self.cold_start > 1_000_000 {
            return out("oscillator.cold_start", self.cold_start as f64, "at most 1000000");
        }
        Ok(())
    }
}

/// The occurrences of one event kind: circadian phases in radians, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct KindPhases {
    phases: Vec<f64>,
    /// Position of the oldest phase once the window is full.
    head: usize,
    /// The observation number of its last occurrence (for replacement at capacity).
    last_seen: u64,
}

/// The coupled oscillators of the SCN (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct Oscillator {
    config: OscillatorConfig,
    state: State,
}

/// Everything an oscillator learned; what a snapshot holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct State {
    /// Weighted sums (Σ w cos φ, Σ w sin φ) per rhythm, and Σ w.
    field: [[f64; 2]; N],
    weight: f64,
    theta: [f64; N],
    coupling: [[f64; N]; N],
    observations: u64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    kind_observations: u64,
    kinds: Vec<(String, KindPhases)>,
    #[serde(skip)]
    kind_index: FxHashMap<String, usize>,
}

impl Oscillator {
    /// An oscillator that has seen nothing. Errors: invalid settings.
    pub fn new(config: OscillatorConfig) -> maxim_core::Result<Self> {
        config.validate()?;
        Ok(Self { config, state: State::default() })
    }

    /// Its settings.
    pub fn config(&self) -> &OscillatorConfig {
        &self.config
    }

    /// Feeds one event that happened at `at` with signature `sig` (see the [module
    /// docs](self)).
    pub fn observe(&mut self, sig: &TemporalSignature, at: Timestamp) {
        let c = &self.config;
        let st = &mut self.state;
        let phi = sig.phases().map(|p| p * TAU);
        // Hebbian learning on the activities the oscillators predicted, then decay and clamp.
        if st.observations > 0 {
            let act: [f64; N] = std::array::from_fn(|i| (phi[i] - st.theta[i]).cos());
            for i in 0..N {
                for j in 0..N {
                    if i != j {
                        let w = (st.coupling[i][j] + c.learning_rate * act[i] * act[j]) * c.weight_decay;
                        st.coupling[i][j] = w.clamp(c.min_weight, c.max_weight);
                    }
                }
            }
        }
        // The event joins the mean fields; earlier events weigh less.
        for (f, p) in st.field.iter_mut().zip(phi) {
            f[0] = f[0] * c.weight_decay + p.cos();
            f[1] = f[1] * c.weight_decay + p.sin();
        }
        st.weight = st.weight * c.weight_decay + 1.0;
        if st.observations == 0 {
            // The first event sets the oscillators.
            st.theta = phi;
        } else {
            let elapsed = st.last.map_or(0.0, |last| at.secs_since(last)).max(0.0);
            let steps = ((elapsed / c.step_secs).round() as u32).clamp(1, c.max_steps);
            let hours = c.step_secs / 3600.0;
            let (r, psi) = self.fields();
            let st = &mut self.state;
            for _ in 0..steps {
                // sin(eⱼ − eᵢ) = sin eⱼ·cos eᵢ − cos eⱼ·sin eᵢ: eight trigonometric calls a step.
                let (sin_e, cos_e): ([f64; N], [f64; N]) = {
                    let e: [f64; N] = std::array::from_fn(|i| st.theta[i] - psi[i]);
                    (e.map(f64::sin), e.map(f64::cos))
                };
                for i in 0..N {
                    let mut pair = 0.0;
                    for j in 0..N {
                        if i != j {
                            pair += st.coupling[i][j] * (sin_e[j] * cos_e[i] - cos_e[j] * sin_e[i]);
                        }
                    }
                    let d = -c.coupling * r[i] * sin_e[i] + c.coupling / N as f64 * pair;
                    st.theta[i] = (st.theta[i] + d * hours).rem_euclid(TAU);
                }
            }
        }
        let st = &mut self.state;
        st.observations += 1;
        st.first = Some(st.first.map_or(at, |f| f.min(at)));
        st.last = Some(st.last.map_or(at, |l| l.max(at)));
    }

    /// The order parameter `r` and mean phase `ψ` (radians) of every rhythm's events.
    fn fields(&self) -> ([f64; N], [f64; N]) {
        let st = &self.state;
        let mut r = [0.0; N];
        let mut psi = [0.0; N];
        if st.weight > 0.0 {
            for i in 0..N {
                let [x, y] = st.field[i];
                r[i] = (x.hypot(y) / st.weight).clamp(0.0, 1.0);
                psi[i] = y.atan2(x).rem_euclid(TAU);
            }
        }
        (r, psi)
    }

    /// How tightly the events lock to one phase of `rhythm`, in `[0, 1]`: the Kuramoto order
    /// parameter of their phases, 0 until the events number at least the cold start and span
    /// one period of the rhythm.
    pub fn coherence(&self, rhythm: Rhythm) -> f64 {
        let st = &self.state;
        let (Some(first), Some(last)) = (st.first, st.last) else { return 0.0 };
        if st.observations < self.config.cold_start as u64 || last.days_since(first) < rhythm.period_days() {
            return 0.0;
        }
        self.fields().0[rhythm.index()]
    }

    /// The circadian [`coherence`](Self::coherence): near 1 when the events recur at one time
    /// of day, near 0 when they are spread over the day.
    pub fn phase_coherence(&self) -> f64 {
        self.coherence(Rhythm::Circadian)
    }

    /// The phase in `[0, 1)` where the oscillator of `rhythm` expects events.
    pub fn expected_phase(&self, rhythm: Rhythm) -> f64 {
        self.state.theta[rhythm.index()] / TAU
    }

    /// How unusual `sig` is for the events seen so far, in `[0, 1]` (see the [module
    /// docs](self)).
    pub fn temporal_anomaly_score(&self, sig: &TemporalSignature) -> f64 {
        Rhythm::ALL
            .iter()
            .map(|&r| {
                let d = (sig.phase(r) * TAU - self.state.theta[r.index()]).cos();
                self.coherence(r) * (1.0 - d) / 2.0
            })
            .fold(0.0, f64::max)
            .clamp(0.0, 1.0)
    }

    /// The learned coupling weight from `a` to `b` (symmetric; 0 on the diagonal).
    pub fn coupling(&self, a: Rhythm, b: Rhythm) -> f64 {
        self.state.coupling[a.index()][b.index()]
    }

    /// Events observed.
    pub fn observations(&self) -> u64 {
        self.state.observations
    }

    /// Records that an event of `kind` happened with signature `sig`.
    pub fn observe_kind(&mut self, kind: &str, sig: &TemporalSignature) {
        let st = &mut self.state;
        st.kind_observations += 1;
        let seen = st.kind_observations;
        let phase = sig.circadian_phase() * TAU;
        let slot = match st.kind_index.get(kind) {
            Some(&slot) => slot,
            None if st.kinds.len() < self.config.max_kinds => {
                st.kinds.push((kind.to_owned(), KindPhases { phases: Vec::new(), head: 0, last_seen: 0 }));
                st.kind_index.insert(kind.to_owned(), st.kinds.len() - 1);
                st.kinds.len() - 1
            }
            None => {
                // Replace the kind seen longest ago.
                let (slot, _) = st
                    .kinds
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, (_, k))| k.last_seen)
                    .expect("max_kinds >= 1, so a full table is not empty");
                let old = std::mem::replace(
                    &mut st.kinds[slot],
                    (kind.to_owned(), KindPhases { phases: Vec::new(), head: 0, last_seen: 0 }),
                );
                st.kind_index.remove(&old.0);
                st.kind_index.insert(kind.to_owned(), slot);
                slot
            }
        };
        let k = &mut st.kinds[slot].1;
        k.last_seen = seen;
        if k.phases.len() < self.config.kind_window {
            k.phases.push(phase);
        } else {
            k.phases[k.head] = phase;
            k.head = (k.head + 1) % k.phases.len();
        }
    }

    /// Occurrences of `kind` remembered (at most the kind window).
    pub fn kind_observations(&self, kind: &str) -> usize {
        self.state.kind_index.get(kind).map_or(0, |&s| self.state.kinds[s].1.phases.len())
    }

    /// The usual time of day of `kind` as a circadian phase in `[0, 1)` and how regular it is
    /// (the order parameter of its phases); `None` below the cold start.
    pub fn kind_phase(&self, kind: &str) -> Option<(f64, f64)> {
        let &slot = self.state.kind_index.get(kind)?;
        let phases = &self.state.kinds[slot].1.phases;
        if phases.len() < self.config.cold_start.max(1) {
            return None;
        }
        let (x, y) = phases.iter().fold((0.0, 0.0), |(x, y), p| (x + p.cos(), y + p.sin()));
        let r = (x.hypot(y) / phases.len() as f64).clamp(0.0, 1.0);
        Some((y.atan2(x).rem_euclid(TAU) / TAU, r))
    }

    /// How close `sig` is to the usual time of day of `kind`, in `[0, 1]`: `r·(1 − d/π)` with
    /// `d` the circular distance to the kind's mean phase and `r` its regularity; 0 below
    /// 3 observations (the cold start) or for an unknown kind.
    pub fn imminence(&self, kind: &str, sig: &TemporalSignature) -> f64 {
        let Some((mean, r)) = self.kind_phase(kind) else { return 0.0 };
        let diff = (sig.circadian_phase() - mean).rem_euclid(1.0);
        let d = diff.min(1.0 - diff) * TAU;
        (r * (1.0 - d / PI)).clamp(0.0, 1.0)
    }

    /// The event kinds tracked, in the order they were first seen (a replaced kind takes the
    /// place of the one it replaced).
    pub fn kinds(&self) -> impl Iterator<Item = &str> + '_ {
        self.state.kinds.iter().map(|(name, _)| name.as_str())
    }

    /// The kinds whose [`imminence`](Self::imminence) at `sig` is at least `min`, most imminent
    /// first (then by name).
    pub fn anticipated_kinds(&self, sig: &TemporalSignature, min: f64) -> Vec<(&str, f64)> {
        let mut out: Vec<(&str, f64)> =
            self.kinds().map(|k| (k, self.imminence(k, sig))).filter(|&(_, i)| i > 0.0 && i >= min).collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// Event kinds tracked.
    pub fn kind_count(&self) -> usize {
        self.state.kinds.len()
    }

    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    /// An oscillator with a saved state, checked: every number finite, phases in `[0, 2π)`,
    /// weights within the settings' bounds, kinds distinct and within the window.
    pub(crate) fn from_state(config: OscillatorConfig, mut state: State) -> Result<Self, String> {
        let finite = |v: f64| v.is_finite();
        if !state.field.iter().flatten().all(|&v| finite(v)) || !finite(state.weight) || state.weight < 0.0 {
            return Err("oscillator mean field is not finite".into());
        }
        if !state.theta.iter().all(|&t| (0.0..TAU).contains(&t)) {
            return Err("oscillator phase outside [0, 2π)".into());
        }
        for i in 0..N {
            for j in 0..N {
                let w = state.coupling[i][j];
                if !finite(w) || (i == j && w != 0.0) || (w < config.min_weight || w > config.max_weight) {
                    return Err(format!("oscillator coupling [{i}][{j}] = {w} out of bounds"));
                }
            }
        }
        if state.kinds.len() > config.max_kinds {
            return Err("more event kinds than max_kinds".into());
        }
        state.kind_index.clear();
        for (slot, (name, k)) in state.kinds.iter().enumerate() {
            if k.phases.len() > config.kind_window
                || (k.head != 0 && k.head >= k.phases.len())
                || !k.phases.iter().all(|&p| (0.0..TAU).contains(&p))
            {
                return Err(format!("event kind {name:?} has bad phases"));
            }
            if state.kind_index.insert(name.clone(), slot).is_some() {
                return Err(format!("event kind {name:?} appears twice"));
            }
        }
        Ok(Self { config, state })
    }

    /// Shifts every remembered kind phase by `delta` days of the circadian rhythm (a change of
    /// time zone).
    pub(crate) fn shift_kinds(&mut self, delta_cycles: f64) {
        for (_, k) in &mut self.state.kinds {
            for p in &mut k.phases {
                *p = (*p + delta_cycles * TAU).rem_euclid(TAU);
                if *p >= TAU {
                    *p = 0.0;
                }
            }
        }
    }

    /// Forgets everything but the event kinds.
    pub(crate) fn reset_events(&mut self) {
        let kinds = std::mem::take(&mut self.state.kinds);
        let kind_index = std::mem::take(&mut self.state.kind_index);
        let kind_observations = self.state.kind_observations;
        self.state = State { kind_observations, kinds, kind_index, ..State::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scn::TimeZone;

    fn sig(secs: i64) -> TemporalSignature {
        TemporalSignature::at(Timestamp::from_secs(secs), TimeZone::UTC)
    }

    #[test]
    fn coherence_waits_for_a_full_period() {
        let mut osc = Oscillator::new(OscillatorConfig::default()).unwrap();
        for h in 0..5 {
            osc.observe(&sig(h * 60), Timestamp::from_secs(h * 60));
        }
        assert_eq!(osc.phase_coherence(), 0.0, "five events in five minutes span no day");
        osc.observe(&sig(86_400), Timestamp::from_secs(86_400));
        assert!(osc.phase_coherence() > 0.9);
        assert_eq!(osc.coherence(Rhythm::Weekly), 0.0);
    }

    #[test]
    fn weights_stay_clamped_and_symmetric() {
        let config =
            OscillatorConfig { learning_rate: 1.0, weight_decay: 1.0, ..OscillatorConfig::default() };
        let mut osc = Oscillator::new(config).unwrap();
        // Every Monday at 08:00 (1970-01-05 was a Monday).
        for week in 0..500 {
            let at = 4 * 86_400 + week * 7 * 86_400 + 8 * 3600;
            osc.observe(&sig(at), Timestamp::from_secs(at));
        }
        for a in Rhythm::ALL {
            for b in Rhythm::ALL {
                let w = osc.coupling(a, b);
                assert!((-0.5..=2.0).contains(&w));
                assert_eq!(w, osc.coupling(b, a));
            }
        }
        assert_eq!(
            osc.coupling(Rhythm::Circadian, Rhythm::Weekly),
            2.0,
            "Monday mornings couple the day and the week"
        );
    }

    #[test]
    fn kinds_replace_the_one_seen_longest_ago() {
        let config = OscillatorConfig { max_kinds: 2, kind_window: 2, ..OscillatorConfig::default() };
        let mut osc = Oscillator::new(config).unwrap();
        osc.observe_kind("a", &sig(0));
        osc.observe_kind("b", &sig(0));
        osc.observe_kind("a", &sig(3600));
        osc.observe_kind("a", &sig(7200));
        assert_eq!(osc.kind_observations("a"), 2);
        osc.observe_kind("c", &sig(0));
        assert_eq!(osc.kind_observations("b"), 0);
        assert_eq!(osc.kind_observations("a"), 2);
        assert_eq!(osc.kind_count(), 2);
    }
}
