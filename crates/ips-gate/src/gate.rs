//! [`IpsGate`]: the quality gate in front of promotion (`spec/maxim-reference.md` §9.2, seed
//! "IPS Randomness Quality Gate"), the core's [`RandomnessGate`].
//!
//! - A statistical candidate (category `operational_pattern`) already passed the IPS → AG
//!   assessment when it was detected: it passes when its confidence reaches the threshold
//!   (0.4).
//! - Any other candidate (a causal pattern from NAc) is judged on the timing of its
//!   observations: the intervals between its `observed_at` times, sorted, are assessed by
//!   [`assess_randomness`](crate::assess_randomness). It is rejected when they look random
//!   with a pattern confidence below the threshold, and passes otherwise.
//! - Too few times to judge passes, conservatively: fewer than `min_samples` intervals
//!   (so at least 9 times are needed for a test), or intervals the runs test cannot use
//!   (nearly all equal: perfectly regular timing, which is structure, not noise).
//!
//! Every decision says why ([`Verdict`]). Unlike the original, the gate reads the times from
//! the candidate itself and never touches the episodic layer, and it never rejects a
//! candidate for having too little data.
//!
//! ```
//! use maxim_core::{PromotionCandidate, RandomnessGate, Source, Timestamp};
//! use maxim_core::contracts::CAUSAL_PATTERN;
//! use ips_gate::{IpsGate, Verdict};
//! let gate = IpsGate::default();
//! let mut c = PromotionCandidate {
//!     pattern_name: "tool:grasp \u{2192} tool:grasp:positive".into(),
//!     category: CAUSAL_PATTERN.into(),
//!     confidence: 0.8,
//!     observations: 5,
//!     source_memory_ids: vec![],
//!     observed_at: (0..5).map(|i| Timestamp::from_secs(60 * i)).collect(),
//!     source: Source::Episodic,
//!     metadata: Default::default(),
//! };
//! let d = gate.admits(&c);
//! assert!(d.admitted && d.reason.contains("too few"));
//! // Intervals that keep growing: structured, admitted.
//! c.observed_at = (0..20).map(|i| Timestamp::from_secs(i * i * 10)).collect();
//! let j = gate.judge(&c);
//! assert!(j.admitted);
//! assert!(matches!(j.verdict, Verdict::Structured { .. }));
//! ```

use std::fmt;

use maxim_core::contracts::OPERATIONAL_PATTERN;
use maxim_core::{
    GateDecision, PromotionCandidate, PromotionCandidateRef, RandomnessAssessment, RandomnessGate,
    SplitSlice, Timestamp,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::assess::{Assessment, STACK_VALUES, assess_finite};
use crate::error::{Error, Result};

/// The gate's settings (the original's `randomness_threshold` and `randomness_min_samples`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GateConfig {
    /// Pattern confidence below which random-looking timing is rejected, and the confidence a
    /// statistical candidate needs (default 0.4), in `[0, 1]`.
    pub threshold: f64,
    /// Fewest intervals the timing test needs (default 8, so 9 observation times); fewer
    /// pass. At least 8, the fewest values the assessment judges.
    pub min_samples: usize,
    /// Smallest batch [`IpsGate::judge_batch`] spreads over threads (default 256).
    pub parallel_min_batch: usize,
}

impl Default for GateConfig {
    fn default() -> Self {
        Self { threshold: 0.4, min_samples: 8, parallel_min_batch: 256 }
    }
}

impl GateConfig {
    /// Checks the settings: `threshold` finite in `[0, 1]`, `min_samples` at least 8.
    pub fn validate(&self) -> Result<()> {
        maxim_core::check_unit("threshold", self.threshold)?;
        if self.min_samples < crate::assess::MIN_VALUES {
            return Err(Error::Core(maxim_core::Error::OutOfRange {
                field: "min_samples",
                value: self.min_samples as f64,
                expected: "at least 8 (the fewest values the assessment judges)",
            }));
        }
        Ok(())
    }
}

/// Why a candidate passed or was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// A statistical candidate whose confidence reaches the threshold (admitted).
    ConfidentStatistic {
        /// Its confidence.
        confidence: f64,
    },
    /// A statistical candidate below the threshold, or with a confidence that is not a number
    /// (rejected).
    WeakStatistic {
        /// Its confidence.
        confidence: f64,
        /// The threshold.
        threshold: f64,
    },
    /// Too few observation times to judge (admitted).
    TooFewTimes {
        /// Intervals available.
        intervals: usize,
        /// Intervals needed.
        needed: usize,
    },
    /// Intervals the runs test cannot use (almost all equal: regular timing) (admitted).
    Untestable {
        /// Intervals assessed.
        intervals: usize,
    },
    /// The timing shows structure (admitted).
    Structured {
        /// The assessment of the intervals.
        assessment: Assessment,
    },
    /// The timing looks random (rejected).
    Random {
        /// The assessment of the intervals.
        assessment: Assessment,
    },
}

impl Verdict {
    /// Whether the verdict admits the candidate.
    pub fn admits(&self) -> bool {
        !matches!(self, Self::WeakStatistic { .. } | Self::Random { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConfidentStatistic { confidence } => {
                write!(f, "statistical pattern with confidence {confidence:.3}, already assessed by the IPS")
            }
            Self::WeakStatistic { confidence, threshold } => {
                write!(f, "statistical pattern with confidence {confidence:.3}, below {threshold}")
            }
            Self::TooFewTimes { intervals, needed } => write!(
                f,
                "too few observation times to judge ({intervals} intervals, {needed} needed): admitted conservatively"
            ),
            Self::Untestable { intervals } => write!(
                f,
                "{intervals} intervals almost all equal (regular timing): the runs test cannot judge them, admitted"
            ),
            Self::Structured { assessment: a } => write!(
                f,
                "timing shows {:?} structure (pattern confidence {:.3}, runs z {:.2}, p {:.3}, lag-1 r {:.2}, {} intervals)",
                a.pattern_type, a.pattern_confidence, a.runs_z, a.runs_p_value, a.lag1_autocorrelation, a.n
            ),
            Self::Random { assessment: a } => write!(
                f,
                "timing looks random (pattern confidence {:.3}, runs z {:.2}, p {:.3}, lag-1 r {:.2}, {} intervals)",
                a.pattern_confidence, a.runs_z, a.runs_p_value, a.lag1_autocorrelation, a.n
            ),
        }
    }
}

/// The gate's decision on one candidate, with the reason in structure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Whether the candidate may be promoted.
    pub admitted: bool,
    /// Why.
    pub verdict: Verdict,
}

impl Judgement {
    /// The core's form: admitted or not, with the verdict in words.
    pub fn to_decision(&self) -> GateDecision {
        GateDecision { admitted: self.admitted, reason: self.verdict.to_string() }
    }
}

/// The randomness gate; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct IpsGate {
    config: GateConfig,
}

impl IpsGate {
    /// A gate with `config`, once it is checked.
    pub fn new(config: GateConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// Judges one candidate (see the [module docs](self)). Allocates nothing for up to
    /// [`STACK_VALUES`] observation times.
    pub fn judge(&self, candidate: &PromotionCandidate) -> Judgement {
        self.judge_view(&candidate.as_view())
    }

    /// [`judge`](Self::judge) for a borrowed candidate (what a source lends through
    /// [`PromotionSource::for_each_candidate`](maxim_core::PromotionSource::for_each_candidate)):
    /// the same judgement, read without copying the candidate.
    pub fn judge_view(&self, candidate: &PromotionCandidateRef<'_>) -> Judgement {
        let verdict = if candidate.category == OPERATIONAL_PATTERN {
            let confidence = candidate.confidence;
            // NaN fails the comparison and is rejected.
            if confidence >= self.config.threshold {
                Verdict::ConfidentStatistic { confidence }
            } else {
                Verdict::WeakStatistic { confidence, threshold: self.config.threshold }
            }
        } else {
            self.judge_split_times(candidate.observed_at)
        };
        Judgement { admitted: verdict.admits(), verdict }
    }

    /// Judges observation times (any order) by the randomness of their intervals.
    pub fn judge_times(&self, times: &[Timestamp]) -> Verdict {
        self.judge_split_times(SplitSlice::from(times))
    }

    /// [`judge_times`](Self::judge_times) of times lent as two slices (a ring's halves).
    pub fn judge_split_times(&self, times: SplitSlice<'_, Timestamp>) -> Verdict {
        let intervals = times.len().saturating_sub(1);
        if intervals < self.config.min_samples {
            return Verdict::TooFewTimes { intervals, needed: self.config.min_samples };
        }
        let assessment = if times.len() <= STACK_VALUES {
            let mut sorted = [Timestamp::EPOCH; STACK_VALUES];
            let mut gaps = [0.0f64; STACK_VALUES];
            self.assess_times(times, &mut sorted[..times.len()], &mut gaps[..intervals])
        } else {
            let mut sorted = vec![Timestamp::EPOCH; times.len()];
            let mut gaps = vec![0.0; intervals];
            self.assess_times(times, &mut sorted, &mut gaps)
        };
        if assessment.pattern_type == maxim_core::PatternType::InsufficientData {
            Verdict::Untestable { intervals }
        } else if assessment.is_random && assessment.pattern_confidence < self.config.threshold {
            Verdict::Random { assessment }
        } else {
            Verdict::Structured { assessment }
        }
    }

    #[allow(clippy::unused_self)]
    fn assess_times(
        &self,
        times: SplitSlice<'_, Timestamp>,
        sorted: &mut [Timestamp],
        gaps: &mut [f64],
    ) -> Assessment {
        times.copy_to(sorted);
        sorted.sort_unstable();
        for (g, w) in gaps.iter_mut().zip(sorted.windows(2)) {
            *g = w[1].secs_since(w[0]);
        }
        assess_finite(gaps)
    }

    /// Judges every candidate, in order; spread over rayon's threads when there are at least
    /// [`GateConfig::parallel_min_batch`] of them. The result is the same either way.
    pub fn judge_batch(&self, candidates: &[PromotionCandidate]) -> Vec<Judgement> {
        let _s = tracing::debug_span!("ips_judge_batch", n_candidates = candidates.len()).entered();
        self.batch(candidates, |c| self.judge(c))
    }

    /// Judges every candidate, in order, on the calling thread.
    pub fn judge_batch_sequential(&self, candidates: &[PromotionCandidate]) -> Vec<Judgement> {
        candidates.iter().map(|c| self.judge(c)).collect()
    }

    /// [`judge_batch`](Self::judge_batch) of borrowed candidates (views of a source's
    /// candidates, [`PromotionCandidate::as_view`]): the same judgements, nothing copied.
    pub fn judge_views(&self, candidates: &[PromotionCandidateRef<'_>]) -> Vec<Judgement> {
        let _s = tracing::debug_span!("ips_judge_views", n_candidates = candidates.len()).entered();
        self.batch(candidates, |c| self.judge_view(c))
    }

    /// [`judge_views`](Self::judge_views) on the calling thread.
    pub fn judge_views_sequential(&self, candidates: &[PromotionCandidateRef<'_>]) -> Vec<Judgement> {
        candidates.iter().map(|c| self.judge_view(c)).collect()
    }

    /// [`judge_batch`](Self::judge_batch) in the core's form.
    pub fn admit_batch(&self, candidates: &[PromotionCandidate]) -> Vec<GateDecision> {
        if candidates.len() >= self.config.parallel_min_batch.max(1) {
            candidates.par_iter().with_min_len(PARALLEL_CHUNK).map(|c| self.judge(c).to_decision()).collect()
        } else {
            candidates.iter().map(|c| self.judge(c).to_decision()).collect()
        }
    }

    /// Judges `items` in order, over rayon's threads for a batch of at least
    /// `parallel_min_batch`: each thread takes runs of at least [`PARALLEL_CHUNK`]
    /// candidates and writes their judgements straight into their places in the one result
    /// vector (no lock, no allocation per candidate: a judgement is a plain value and up to
    /// [`STACK_VALUES`] times are sorted on the stack).
    fn batch<T: Sync>(&self, items: &[T], judge: impl Fn(&T) -> Judgement + Sync + Send) -> Vec<Judgement> {
        if items.len() >= self.config.parallel_min_batch.max(1) {
            items.par_iter().with_min_len(PARALLEL_CHUNK).map(judge).collect()
        } else {
            items.iter().map(judge).collect()
        }
    }
}

/// Fewest candidates a thread judges in one run of a parallel batch (a judgement of 100
/// times takes a few microseconds, so a run is long against the cost of handing it out).
pub const PARALLEL_CHUNK: usize = 64;

impl RandomnessGate for IpsGate {
    /// [`assess_randomness`](crate::assess_randomness) in the core's form. A series holding a
    /// NaN or an infinity cannot be judged: it is reported random with confidence 0 and
    /// [`PatternType::InsufficientData`](maxim_core::PatternType::InsufficientData) (the
    /// fallible function says which value was bad).
    fn assess(&self, values: &[f64]) -> RandomnessAssessment {
        match crate::assess::assess_randomness(values) {
            Ok(a) => a.to_core(),
            Err(_) => RandomnessAssessment {
                is_random: true,
                pattern_confidence: 0.0,
                pattern_type: maxim_core::PatternType::InsufficientData,
                runs_z: 0.0,
                lag1_autocorrelation: 0.0,
                n: values.len(),
            },
        }
    }

    fn admits(&self, candidate: &PromotionCandidate) -> GateDecision {
        self.judge(candidate).to_decision()
    }

    fn admits_view(&self, candidate: &PromotionCandidateRef<'_>) -> GateDecision {
        self.judge_view(candidate).to_decision()
    }
}
