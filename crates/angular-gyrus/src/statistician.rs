//! The statistician (`spec/maxim-reference.md` §10): per-metric series, a
//! [`PatternDetector`] state machine per metric, escalation to the fitters, summaries, and the
//! core [`PromotionSource`] that hands confirmed operational patterns to the promoter.
//!
//! Each metric keeps its last `window_size` (100) observations. On every [`step`](Statistician::step),
//! a metric with at least `min_observations` (15) values is assessed by a
//! [`RandomnessGate`] (the core contract; the `ips-gate` crate implements it, and this crate
//! does not depend on it) and its detector moves:
//!
//! ```text
//! OBSERVING         pc > 0.4                                   -> PATTERN_FORMING
//! PATTERN_FORMING   the last 5 pc all > 0.65                    -> CONFIRMED_PATTERN
//!                   8 steps forming and 0.3 < pc < 0.65         -> ESCALATED_TO_AG
//!                   pc < 0.2                                    -> OBSERVING
//! CONFIRMED_RANDOM  pc > 0.4 (assessed every 10th step only)    -> OBSERVING
//! CONFIRMED_PATTERN terminal
//! ESCALATED_TO_AG   resolved in the same step:
//!   no angular gyrus: pc > 0.5 -> CONFIRMED_PATTERN, else PATTERN_FORMING
//!   a trend record of the metric is held: the series still moves its way (or oscillates)
//!       -> observation count + 1, confidence + 0.05, CONFIRMED_PATTERN
//!       else confidence x 0.7 -> PATTERN_FORMING
//!   none: fit a trend and a 24 h cosinor (see [`fit`](crate::fit)); the confirmed fits are
//!       stored as PATTERN records; best R² > 0.5 -> CONFIRMED_PATTERN,
//!       < 0.2 -> CONFIRMED_RANDOM, else PATTERN_FORMING
//! ```
//!
//! The original fitted only a line against the index; here escalation fits the trend against
//! time and the circadian rhythm, and a metric confirmed by its randomness readings alone is
//! fitted too on confirmation (when an angular gyrus is given), so that its promotion
//! candidate carries the fitted record's id, R² and, when phase-locked, the phase and the
//! coupling (the cosinor's R²: the share of the variance locked to the 24 h cycle).
//!
//! ```
//! use angular_gyrus::{DetectorState, Statistician};
//! use maxim_core::{PatternType, RandomnessAssessment, RandomnessGate, GateDecision, PromotionCandidate, Timestamp};
//!
//! /// A gate that sees a pattern in any series holding a 1.
//! struct OnesGate;
//! impl RandomnessGate for OnesGate {
//!     fn assess(&self, values: &[f64]) -> RandomnessAssessment {
//!         let pc = if values.contains(&1.0) { 1.0 } else { 0.0 };
//!         RandomnessAssessment { is_random: pc < 0.4, pattern_confidence: pc, pattern_type: PatternType::Trending, runs_z: 0.0, lag1_autocorrelation: 0.0, n: values.len() }
//!     }
//!     fn admits(&self, c: &PromotionCandidate) -> GateDecision { GateDecision { admitted: c.confidence >= 0.4, reason: String::new() } }
//! }
//!
//! let mut stat = Statistician::new(Default::default())?;
//! let t0 = Timestamp::from_secs(1_700_000_000);
//! for i in 0..25 {
//!     stat.record_tool_result("nav", i >= 20, t0 + std::time::Duration::from_secs(60 * i))?;
//!     stat.step(&OnesGate, None);
//! }
//! assert_eq!(stat.state("tool:nav:success"), Some(DetectorState::ConfirmedPattern));
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use maxim_core::contracts::OPERATIONAL_PATTERN;
use maxim_core::{
    BoxError, MetaValue, PatternType, PromotionCandidate, PromotionSource, RandomnessGate, RecordId, Source,
    Timestamp, codec,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fit::{self, FitConfig, Period};
use crate::patterns::trend_name;
use crate::record::check_name;
use crate::store::AngularGyrus;

/// The snapshot kind of a saved statistician.
pub const STATISTICIAN_KIND: &str = "statistician";

/// Settings of a [`Statistician`]; the defaults are the original's (§10).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StatisticianConfig {
    /// Observations kept per metric (default 100).
    pub window_size: usize,
    /// Observations a metric needs before it is assessed (default 15).
    pub min_observations: usize,
    /// A reading above this starts a pattern forming (default 0.4).
    pub forming_threshold: f64,
    /// Readings above this confirm a pattern (default 0.65).
    pub confirm_threshold: f64,
    /// A reading below this sends a forming pattern back to observing (default 0.2).
    pub drop_threshold: f64,
    /// Steps forming before an uncertain pattern is escalated (default 8).
    pub escalation_patience: u32,
    /// Consecutive high readings that confirm (default 5).
    pub confirm_window: usize,
    /// A confirmed-random metric is assessed on every this-many-th step (default 10).
    pub random_recheck_every: u32,
    /// Readings kept per metric (default 50).
    pub history_cap: usize,
    /// Best fitted R² above this confirms an escalated pattern (default 0.5).
    pub fit_confirm_r_squared: f64,
    /// Best fitted R² below this declares an escalated metric random (default 0.2).
    pub fit_random_r_squared: f64,
    /// How fits are judged before they are stored.
    pub fit: FitConfig,
}

impl Default for StatisticianConfig {
    fn default() -> Self {
        Self {
            window_size: 100,
            min_observations: 15,
            forming_threshold: 0.4,
            confirm_threshold: 0.65,
            drop_threshold: 0.2,
            escalation_patience: 8,
            confirm_window: 5,
            random_recheck_every: 10,
            history_cap: 50,
            fit_confirm_r_squared: 0.5,
            fit_random_r_squared: 0.2,
            fit: FitConfig::default(),
        }
    }
}

impl StatisticianConfig {
    /// Checks the settings: windows of at least one (and at least `min_observations` values
    /// kept), thresholds in `[0, 1]` and in order.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("forming_threshold", self.forming_threshold),
            ("confirm_threshold", self.confirm_threshold),
            ("drop_threshold", self.drop_threshold),
            ("fit_confirm_r_squared", self.fit_confirm_r_squared),
            ("fit_random_r_squared", self.fit_random_r_squared),
        ] {
            maxim_core::check_unit(field, v)?;
        }
        if self.window_size == 0 || self.min_observations == 0 || self.window_size < self.min_observations {
            return Err(Error::out_of_range(
                "window_size",
                self.window_size as f64,
                "at least min_observations (>= 1)",
            ));
        }
        if self.confirm_window == 0 || self.history_cap < self.confirm_window {
            return Err(Error::out_of_range(
                "confirm_window",
                self.confirm_window as f64,
                "1 to history_cap",
            ));
        }
        if self.random_recheck_every == 0 {
            return Err(Error::out_of_range("random_recheck_every", 0.0, "at least 1"));
        }
        if self.drop_threshold > self.forming_threshold || self.forming_threshold > self.confirm_threshold {
            return Err(Error::out_of_range(
                "forming_threshold",
                self.forming_threshold,
                "between drop and confirm thresholds",
            ));
        }
        if self.fit_random_r_squared > self.fit_confirm_r_squared {
            return Err(Error::out_of_range(
                "fit_random_r_squared",
                self.fit_random_r_squared,
                "at most fit_confirm_r_squared",
            ));
        }
        self.fit.validate()
    }
}

/// Where a metric's detector stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DetectorState {
    /// Watching; no pattern yet.
    Observing,
    /// A pattern shows but is not confirmed.
    PatternForming,
    /// Confirmed (terminal).
    ConfirmedPattern,
    /// Declared random; assessed again only now and then.
    ConfirmedRandom,
    /// Handed to the fitters (resolved within the step; reported in transitions).
    EscalatedToAg,
}

/// The pattern detector of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternDetector {
    /// The state.
    pub state: DetectorState,
    /// Steps spent forming.
    pub steps_forming: u32,
    /// Assessments made.
    pub observations: u32,
    /// Steps taken while confirmed random.
    pub steps_random: u32,
    /// The last readings (pattern confidences), oldest first.
    pub history: VecDeque<f64>,
    /// The kind of structure last assessed.
    pub pattern_type: PatternType,
    /// The fitted PATTERN record, once there is one.
    pub ag_record: Option<RecordId>,
    /// Its R² (or refined confidence).
    pub ag_r_squared: Option<f64>,
    /// The 24 h acrophase and coupling (cosinor R²), when phase-locked.
    pub phase_lock: Option<(f64, f64)>,
}

impl PatternDetector {
    fn new() -> Self {
        Self {
            state: DetectorState::Observing,
            steps_forming: 0,
            observations: 0,
            steps_random: 0,
            history: VecDeque::new(),
            pattern_type: PatternType::InsufficientData,
            ag_record: None,
            ag_r_squared: None,
            phase_lock: None,
        }
    }

    /// The last reading, 0 before any.
    pub fn last_confidence(&self) -> f64 {
        self.history.back().copied().unwrap_or(0.0)
    }
}

/// One metric: its window of observations and its detector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Metric {
    /// `(seconds since the epoch, value)`, oldest first.
    series: VecDeque<(f64, f64)>,
    detector: PatternDetector,
}

/// A state change made by a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// The metric.
    pub metric: String,
    /// The state before.
    pub from: DetectorState,
    /// The state after.
    pub to: DetectorState,
    /// The reading that moved it.
    pub confidence: f64,
}

/// Published when a metric's pattern is confirmed.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticalInsight {
    /// The metric.
    pub metric: String,
    /// `min(1, 0.8 pc + 0.2)`.
    pub severity: f64,
    /// The kind of structure.
    pub pattern_type: PatternType,
    /// The fitted record, if any.
    pub ag_record: Option<RecordId>,
}

/// The statistician (see the [module docs](self)).
#[derive(Debug)]
pub struct Statistician {
    config: StatisticianConfig,
    metrics: BTreeMap<String, Metric>,
    insights: Vec<StatisticalInsight>,
    claims: maxim_core::ownership::FileClaims,
}

impl Statistician {
    /// A statistician with `config`, once checked.
    pub fn new(config: StatisticianConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            config,
            metrics: BTreeMap::new(),
            insights: Vec::new(),
            claims: maxim_core::ownership::FileClaims::new(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &StatisticianConfig {
        &self.config
    }

    /// Records `value` of `metric` at `at`. Errors: an empty or overlong name, a NaN or
    /// infinite value.
    pub fn observe(&mut self, metric: &str, value: f64, at: Timestamp) -> Result<()> {
        let metric = check_name("metric", metric)?;
        if !value.is_finite() {
            return Err(Error::NonFinite { what: "observation", index: 0, value });
        }
        let window = self.config.window_size;
        // A known metric is found by its name without allocating a key.
        let m = match self.metrics.get_mut(metric) {
            Some(m) => m,
            None => self.metrics.entry(metric.to_owned()).or_insert_with(|| Metric {
                series: VecDeque::with_capacity(window),
                detector: PatternDetector::new(),
            }),
        };
        if m.series.len() == window {
            m.series.pop_front();
        }
        m.series.push_back((at.as_secs_f64(), value));
        Ok(())
    }

    /// Records a tool's outcome as `tool:<tool>:success` (1 or 0).
    pub fn record_tool_result(&mut self, tool: &str, success: bool, at: Timestamp) -> Result<()> {
        self.observe(&format!("tool:{}:success", tool.trim()), f64::from(u8::from(success)), at)
    }

    /// Records a goal's outcome as `goal:<goal>:success` (1 or 0).
    pub fn record_goal(&mut self, goal: &str, success: bool, at: Timestamp) -> Result<()> {
        self.observe(&format!("goal:{}:success", goal.trim()), f64::from(u8::from(success)), at)
    }

    /// The metrics, sorted.
    pub fn metrics(&self) -> impl Iterator<Item = &str> {
        self.metrics.keys().map(String::as_str)
    }

    /// The detector state of `metric`.
    pub fn state(&self, metric: &str) -> Option<DetectorState> {
        self.detector(metric).map(|d| d.state)
    }

    /// The detector of `metric`.
    pub fn detector(&self, metric: &str) -> Option<&PatternDetector> {
        self.metrics.get(metric.trim()).map(|m| &m.detector)
    }

    /// The values of `metric`'s window, oldest first.
    pub fn series(&self, metric: &str) -> Vec<f64> {
        self.metrics
            .get(metric.trim())
            .map(|m| m.series.iter().map(|&(_, v)| v).collect())
            .unwrap_or_default()
    }

    /// The insights published so far, taken out.
    pub fn take_insights(&mut self) -> Vec<StatisticalInsight> {
        std::mem::take(&mut self.insights)
    }

    /// Assesses every metric with enough observations and moves its detector (see the
    /// [module docs](self)); with an angular gyrus, escalations and confirmations are fitted
    /// and the confirmed fits stored in it. Returns the state changes, by metric name.
    ///
    /// A step never fails: when storing a fit fails (a full angular gyrus, say), the failure
    /// is logged, an escalation resolves to PATTERN_FORMING (as the original's did on any
    /// exception) and a confirmation stays confirmed without a record.
    pub fn step(&mut self, gate: &dyn RandomnessGate, mut ag: Option<&mut AngularGyrus>) -> Vec<Transition> {
        let _s = tracing::debug_span!("statistician_step", n_metrics = self.metrics.len()).entered();
        let mut transitions = Vec::new();
        let names: Vec<String> = self.metrics.keys().cloned().collect();
        for name in names {
            let ag = ag.as_deref_mut();
            if let Some(t) = self.step_metric(&name, gate, ag) {
                transitions.extend(t);
            }
        }
        transitions
    }

    fn step_metric(
        &mut self,
        name: &str,
        gate: &dyn RandomnessGate,
        ag: Option<&mut AngularGyrus>,
    ) -> Option<Vec<Transition>> {
        let cfg = &self.config;
        let m = self.metrics.get_mut(name).expect("listed");
        if m.series.len() < cfg.min_observations || m.detector.state == DetectorState::ConfirmedPattern {
            return None;
        }
        let d = &mut m.detector;
        if d.state == DetectorState::ConfirmedRandom {
            d.steps_random += 1;
            if !d.steps_random.is_multiple_of(cfg.random_recheck_every) {
                d.observations += 1;
                return None;
            }
        }
        let values: Vec<f64> = m.series.iter().map(|&(_, v)| v).collect();
        let assessment = gate.assess(&values);
        let pc = if assessment.pattern_confidence.is_finite() {
            assessment.pattern_confidence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if d.history.len() == cfg.history_cap {
            d.history.pop_front();
        }
        d.history.push_back(pc);
        d.observations += 1;
        d.pattern_type = assessment.pattern_type;
        let from = d.state;
        let mut out = Vec::new();
        let mut next = from;
        let mut escalated = false;
        match from {
            DetectorState::Observing if pc > cfg.forming_threshold => {
                next = DetectorState::PatternForming;
                d.steps_forming = 0;
            }
            DetectorState::PatternForming => {
                d.steps_forming += 1;
                let w = cfg.confirm_window;
                let confirmed = d.history.len() >= w
                    && d.history.iter().rev().take(w).all(|&h| h > cfg.confirm_threshold);
                if confirmed {
                    next = DetectorState::ConfirmedPattern;
                } else if d.steps_forming >= cfg.escalation_patience && pc > 0.3 && pc < cfg.confirm_threshold
                {
                    next = DetectorState::EscalatedToAg;
                } else if pc < cfg.drop_threshold {
                    next = DetectorState::Observing;
                    d.steps_forming = 0;
                }
            }
            DetectorState::ConfirmedRandom if pc > cfg.forming_threshold => {
                next = DetectorState::Observing;
                d.steps_random = 0;
            }
            _ => {}
        }
        if next == DetectorState::EscalatedToAg {
            out.push(Transition { metric: name.to_owned(), from, to: next, confidence: pc });
            escalated = true;
            let resolved = self.escalate(name, pc, ag).unwrap_or_else(|e| {
                tracing::warn!(metric = name, error = %e, "escalation failed; the pattern keeps forming");
                DetectorState::PatternForming
            });
            out.push(Transition {
                metric: name.to_owned(),
                from: DetectorState::EscalatedToAg,
                to: resolved,
                confidence: pc,
            });
            next = resolved;
        } else if next != from {
            out.push(Transition { metric: name.to_owned(), from, to: next, confidence: pc });
            if next == DetectorState::ConfirmedPattern
                && let Some(ag) = ag
                && let Err(e) = self.fit_into(name, ag)
            {
                tracing::warn!(metric = name, error = %e, "fitting a confirmed pattern failed");
            }
        }
        let d = &mut self.metrics.get_mut(name).expect("listed").detector;
        if next == DetectorState::ConfirmedRandom && from != DetectorState::ConfirmedRandom {
            d.steps_random = 0;
        }
        d.state = next;
        if escalated && next == DetectorState::PatternForming {
            d.steps_forming = 0;
        }
        if next == DetectorState::ConfirmedPattern && from != DetectorState::ConfirmedPattern {
            self.insights.push(StatisticalInsight {
                metric: name.to_owned(),
                severity: (0.8 * pc + 0.2).min(1.0),
                pattern_type: d.pattern_type,
                ag_record: d.ag_record,
            });
        }
        Some(out)
    }

    /// Resolves an escalation (see the [module docs](self)); returns the new state.
    fn escalate(&mut self, name: &str, pc: f64, ag: Option<&mut AngularGyrus>) -> Result<DetectorState> {
        let Some(ag) = ag else {
            return Ok(if pc > 0.5 {
                DetectorState::ConfirmedPattern
            } else {
                DetectorState::PatternForming
            });
        };
        let m = self.metrics.get_mut(name).expect("listed");
        if let Some(&prior) = ag.find_by_name(&trend_name(name)).first() {
            let slope = ag.math_record(prior).and_then(|r| r.input_f64("slope_per_day")).unwrap_or(0.0);
            let values: Vec<f64> = m.series.iter().map(|&(_, v)| v).collect();
            let direction = trend_direction(&values);
            let agrees = (slope > 0.0 && direction == Direction::Increasing)
                || (slope < 0.0 && direction == Direction::Decreasing)
                || direction == Direction::Oscillating;
            let d = &mut m.detector;
            d.ag_record = Some(prior);
            let conf =
                d.ag_r_squared.or_else(|| ag.record(prior).map(crate::MathEntry::confidence)).unwrap_or(0.0);
            if agrees {
                if let Some(mut r) = ag.math_record(prior).cloned() {
                    r.observation_count = r.observation_count.saturating_add(1);
                    r.confidence = (r.confidence + 0.05).min(1.0);
                    d.ag_r_squared = Some(r.confidence);
                    ag.replace(r)?;
                }
                return Ok(DetectorState::ConfirmedPattern);
            }
            d.ag_r_squared = Some(conf * 0.7);
            return Ok(DetectorState::PatternForming);
        }
        let best = self.fit_into(name, ag)?;
        Ok(match best {
            Some(r2) if r2 > self.config.fit_confirm_r_squared => DetectorState::ConfirmedPattern,
            Some(r2) if r2 >= self.config.fit_random_r_squared => DetectorState::PatternForming,
            _ => DetectorState::ConfirmedRandom,
        })
    }

    /// Fits a trend and a daily cosinor to `name`'s window, stores the confirmed fits, and
    /// notes the best record on the detector. Returns the best R² of the fits that could be
    /// made (`None` when no fit could: too few distinct times, a constant window).
    fn fit_into(&mut self, name: &str, ag: &mut AngularGyrus) -> Result<Option<f64>> {
        let cfg = self.config.fit.clone();
        let m = self.metrics.get_mut(name).expect("listed");
        let times: Vec<f64> = m.series.iter().map(|&(t, _)| t).collect();
        let values: Vec<f64> = m.series.iter().map(|&(_, v)| v).collect();
        let trend = fit::fit_trend(&times, &values).ok();
        let rhythm = fit::fit_cosinor(&times, &values, Period::DAILY).ok();
        let mut best: Option<(f64, RecordId)> = None;
        let mut consider = |r2: f64, id: Option<RecordId>| {
            if let Some(id) = id
                && best.is_none_or(|(b, _)| r2 > b)
            {
                best = Some((r2, id));
            }
        };
        if let Some(t) = &trend {
            consider(t.r_squared, ag.store_trend(name, t, &cfg)?);
        }
        let d = &mut m.detector;
        if let Some(c) = &rhythm
            && let Some(id) = ag.store_cosinor(name, c, &cfg)?
        {
            d.phase_lock = Some((c.phase, c.r_squared));
            consider(c.r_squared, Some(id));
        }
        if let Some((r2, id)) = best {
            d.ag_record = Some(id);
            d.ag_r_squared = Some(r2);
        }
        let fitted = [trend.map(|t| t.r_squared), rhythm.map(|c| c.r_squared)];
        Ok(fitted.into_iter().flatten().reduce(f64::max))
    }

    /// The confirmed metrics for an LLM's context, top 3 by last reading: `[PATTERN] <metric>
    /// | type=<T> | confidence=<pc> | R²=<r2> | observed N times`, plus `[PHASE] peaks at
    /// <phase> of the day (coupling <c>)` when phase-locked.
    pub fn summarize_for_context(&self) -> Vec<String> {
        let mut confirmed: Vec<(&String, &PatternDetector)> = self
            .metrics
            .iter()
            .filter(|(_, m)| m.detector.state == DetectorState::ConfirmedPattern)
            .map(|(n, m)| (n, &m.detector))
            .collect();
        confirmed.sort_by(|a, b| b.1.last_confidence().total_cmp(&a.1.last_confidence()).then(a.0.cmp(b.0)));
        confirmed
            .into_iter()
            .take(3)
            .map(|(name, d)| {
                let r2 = d.ag_r_squared.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"));
                let mut line = format!(
                    "[PATTERN] {name} | type={:?} | confidence={:.2} | R²={r2} | observed {} times",
                    d.pattern_type,
                    d.last_confidence(),
                    d.observations
                );
                if let Some((phase, coupling)) = d.phase_lock {
                    let _ =
                        write!(line, " | [PHASE] peaks at {phase:.2} of the day (coupling {coupling:.2})");
                }
                line
            })
            .collect()
    }

    /// Saves the series and detectors to `path` through the snapshot codec. A file that
    /// already exists is overwritten only when this statistician created or read it, or after
    /// [`allow_overwrite`](Self::allow_overwrite) (`OverwriteRefused` otherwise).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let snap = Snapshot {
            schema: 1,
            metrics: self.metrics.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        };
        self.claims.save(path, STATISTICIAN_KIND, &snap)?;
        Ok(())
    }

    /// Lets saves overwrite files this statistician neither created nor read (`true`), or
    /// only its own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this statistician created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the series and detectors with those saved at `path`; on error nothing
    /// changes. A saved value that is not finite, or a window longer than this statistician
    /// keeps, is refused as corrupt, and a refused file is moved aside (as the codec moves
    /// aside one it refuses itself).
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let window = self.config.window_size;
        let metrics =
            codec::load_checked(path, STATISTICIAN_KIND, |p, snap| check_snapshot(p, snap, window))?;
        self.metrics = metrics;
        self.claims.claim(path);
        Ok(())
    }

    /// Loads like [`load`](Self::load), falling back to the backup the previous save kept
    /// when the file is missing or refused (by the codec or by the checks of `load`); when
    /// neither exists the statistician stays as it is and the outcome says
    /// [`LoadOutcome::Missing`](maxim_core::LoadOutcome::Missing).
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<maxim_core::LoadOutcome> {
        let path = path.as_ref();
        let window = self.config.window_size;
        let checked = codec::load_with_recovery_checked(path, STATISTICIAN_KIND, |p, snap| {
            check_snapshot(p, snap, window)
        });
        let (metrics, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(maxim_core::LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        let outcome = match recovery {
            maxim_core::Recovery::Backup { path: backup, primary_error } => {
                tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
                maxim_core::LoadOutcome::FromBackup { path: backup, primary_error }
            }
            _ => maxim_core::LoadOutcome::Loaded,
        };
        self.metrics = metrics;
        // The main file was read, or was refused and moved aside for the backup.
        self.claims.claim(path);
        Ok(outcome)
    }
}

/// Checks a decoded statistician snapshot read from `path` against a window of `window`
/// values, as the codec runs a caller's checks: a refusal is a rejection, so the file is
/// moved aside.
fn check_snapshot(
    path: &Path,
    snap: Snapshot,
    window: usize,
) -> maxim_core::Result<BTreeMap<String, Metric>> {
    let corrupt = |reason: &str| maxim_core::Error::Corrupt {
        path: path.to_path_buf(),
        reason: maxim_core::CorruptReason::Payload(reason.to_owned()),
        kept_aside: None,
    };
    if snap.schema != 1 {
        return Err(corrupt("unknown statistician schema"));
    }
    for (name, m) in &snap.metrics {
        check_name("metric", name).map_err(|_| corrupt("bad metric name"))?;
        let finite = m.series.iter().all(|(t, v)| t.is_finite() && v.is_finite())
            && m.detector.history.iter().all(|h| (0.0..=1.0).contains(h));
        if !finite || m.series.len() > window {
            return Err(corrupt("a metric holds values out of range"));
        }
    }
    Ok(snap.metrics.into_iter().collect())
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    schema: u16,
    metrics: Vec<(String, Metric)>,
}

/// The direction of the last values (§9.3 `detect_trend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// At least 70% of the steps go up.
    Increasing,
    /// At least 70% of the steps go down.
    Decreasing,
    /// The step's sign changes at least 60% of the time.
    Oscillating,
    /// None of the above.
    Stable,
    /// Fewer than 3 values.
    Insufficient,
}

/// The direction of the last 10 of `values` (§9.3): share of rising steps ≥ 0.7 →
/// increasing, of falling steps ≥ 0.7 → decreasing, share of sign changes between steps ≥
/// 0.6 → oscillating, else stable.
pub fn trend_direction(values: &[f64]) -> Direction {
    let tail = &values[values.len().saturating_sub(10)..];
    if tail.len() < 3 {
        return Direction::Insufficient;
    }
    let diffs: Vec<f64> = tail.windows(2).map(|w| w[1] - w[0]).collect();
    let n = diffs.len() as f64;
    let up = diffs.iter().filter(|&&d| d > 0.0).count() as f64 / n;
    let down = diffs.iter().filter(|&&d| d < 0.0).count() as f64 / n;
    let changes = diffs.windows(2).filter(|w| w[0] * w[1] < 0.0).count() as f64 / (n - 1.0).max(1.0);
    if up >= 0.7 {
        Direction::Increasing
    } else if down >= 0.7 {
        Direction::Decreasing
    } else if changes >= 0.6 {
        Direction::Oscillating
    } else {
        Direction::Stable
    }
}

impl PromotionSource for Statistician {
    fn source_name(&self) -> &'static str {
        "statistician"
    }

    /// Confirmed metrics with at least `min_observations` assessments whose confidence (the
    /// fitted R² when there is one, else the last reading) is at least `min_confidence`, as
    /// `stat:<metric>` candidates of category `operational_pattern`, with no episodes and the
    /// metadata `metric_name`, `pattern_type`, `observations`, and when fitted `ag_memory_id`
    /// and `r_squared`, and when phase-locked `phase` and `coupling`.
    fn promotion_candidates(
        &self,
        min_confidence: f64,
        min_observations: u32,
    ) -> Result<Vec<PromotionCandidate>, BoxError> {
        let mut out = Vec::new();
        for (name, m) in &self.metrics {
            let d = &m.detector;
            if d.state != DetectorState::ConfirmedPattern || d.observations < min_observations {
                continue;
            }
            let confidence = d.ag_r_squared.filter(|r| *r > 0.0).unwrap_or_else(|| d.last_confidence());
            if confidence < min_confidence {
                continue;
            }
            let mut metadata = BTreeMap::new();
            metadata.insert("metric_name".to_owned(), MetaValue::Text(name.clone()));
            metadata.insert("pattern_type".to_owned(), MetaValue::Text(format!("{:?}", d.pattern_type)));
            metadata.insert("observations".to_owned(), MetaValue::Count(u64::from(d.observations)));
            if let Some(id) = d.ag_record {
                metadata.insert("ag_memory_id".to_owned(), MetaValue::Id(id));
            }
            if let Some(r2) = d.ag_r_squared {
                metadata.insert("r_squared".to_owned(), MetaValue::Number(r2));
            }
            if let Some((phase, coupling)) = d.phase_lock {
                metadata.insert("phase".to_owned(), MetaValue::Number(phase));
                metadata.insert("coupling".to_owned(), MetaValue::Number(coupling));
            }
            out.push(PromotionCandidate {
                pattern_name: format!("stat:{name}"),
                category: OPERATIONAL_PATTERN.to_owned(),
                confidence,
                observations: d.observations,
                source_memory_ids: Vec::new(),
                observed_at: Vec::new(),
                source: Source::AgentInference,
                metadata,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_follow_the_shares() {
        assert_eq!(trend_direction(&[1.0, 2.0]), Direction::Insufficient);
        assert_eq!(trend_direction(&[1.0, 2.0, 3.0, 4.0]), Direction::Increasing);
        assert_eq!(trend_direction(&[4.0, 3.0, 2.0, 1.0]), Direction::Decreasing);
        assert_eq!(trend_direction(&[1.0, 3.0, 1.0, 3.0, 1.0, 3.0]), Direction::Oscillating);
        assert_eq!(trend_direction(&[1.0, 1.0, 1.0, 1.0]), Direction::Stable);
    }

    #[test]
    fn config_is_checked() {
        for bad in [
            StatisticianConfig { window_size: 10, ..Default::default() },
            StatisticianConfig { forming_threshold: 0.9, ..Default::default() },
            StatisticianConfig { confirm_threshold: f64::NAN, ..Default::default() },
            StatisticianConfig { random_recheck_every: 0, ..Default::default() },
        ] {
            assert!(Statistician::new(bad).is_err());
        }
    }
}
