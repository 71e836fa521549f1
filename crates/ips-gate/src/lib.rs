//! `ips-gate`: the randomness gate in front of maxim's semantic promotion.
//!
//! The intraparietal sulcus judges numbers quickly. Here it decides whether a series looks
//! random: a Wald–Wolfowitz runs test about the median and the lag-1 autocorrelation,
//! combined into a pattern confidence (`spec/maxim-reference.md` §9.1). The gate built on it
//! keeps noise out of the semantic layer (§9.2): a causal pattern whose observations came at
//! random intervals was likely a coincidence and is rejected; statistical patterns, already
//! assessed when they were found, pass on confidence; too few observations pass,
//! conservatively. Every decision says why. Unlike the original, the gate is wired in by
//! default, reads the observation times from the candidate itself, and never rejects a
//! candidate for having too little data.
//!
//! Principal items:
//! - [`assess_randomness`] and its [`Assessment`] (with the runs test's p-value);
//! - [`IpsGate`], the core's [`RandomnessGate`](maxim_core::RandomnessGate), configured by
//!   [`GateConfig`], judging candidates one by one or in parallel batches, each with a
//!   [`Verdict`];
//! - the other number-sense functions of §9.3 in [`sense`].
//!
//! ```
//! use ips_gate::{IpsGate, assess_randomness};
//! use maxim_core::contracts::CAUSAL_PATTERN;
//! use maxim_core::{PatternType, PromotionCandidate, RandomnessGate, SplitMix64, Source, Timestamp};
//! // The [run] vectors of §9.1.
//! let alternating: Vec<f64> = (0..10).map(|i| f64::from(i % 2 == 0)).collect();
//! let a = assess_randomness(&alternating)?;
//! assert_eq!(a.pattern_type, PatternType::Cyclic);
//! assert!((a.runs_z - 2.683).abs() < 1e-3 && (a.lag1_autocorrelation + 0.9).abs() < 1e-12);
//!
//! // A causal pattern observed at random moments is rejected; one observed on a schedule
//! // that slows down is admitted.
//! let mut rng = SplitMix64::new(5);
//! let mut t = 0.0;
//! let random_times: Vec<Timestamp> = (0..40)
//!     .map(|_| { t += -(1.0 - rng.uniform()).ln() * 3600.0; Timestamp::from_secs(t as i64) })
//!     .collect();
//! let candidate = |times: Vec<Timestamp>| PromotionCandidate {
//!     pattern_name: "tool:grasp \u{2192} tool:grasp:positive".into(),
//!     category: CAUSAL_PATTERN.into(),
//!     confidence: 0.9,
//!     observations: times.len() as u32,
//!     source_memory_ids: vec![],
//!     observed_at: times,
//!     source: Source::Episodic,
//!     metadata: Default::default(),
//! };
//! let gate = IpsGate::default();
//! let noise = gate.admits(&candidate(random_times));
//! assert!(!noise.admitted, "{}", noise.reason);
//! let slowing: Vec<Timestamp> = (0..40).map(|i| Timestamp::from_secs(i * i * 60)).collect();
//! assert!(gate.admits(&candidate(slowing)).admitted);
//! # Ok::<(), ips_gate::Error>(())
//! ```
//!
//! # Crate features
//!
//! None. Batches of candidates are judged in parallel with `rayon` when they are large.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod assess;
mod error;
pub mod gate;
pub mod sense;

pub use assess::{
    Assessment, MIN_OFF_MEDIAN, MIN_VALUES, RANDOM_BELOW, STACK_VALUES, assess_randomness,
    lag1_autocorrelation, median,
};
pub use error::{Error, Result};
pub use gate::{GateConfig, IpsGate, Judgement, Verdict};
pub use maxim_core;
