//! `angular-gyrus`: the mathematical layer of maxim: what the numbers say.
//!
//! The angular gyrus holds mathematical knowledge as records: facts, formulas, methods,
//! constants, and the statistical patterns the agent learns from its own metrics. It depends
//! on [`maxim_core`] alone.
//!
//! The principal types:
//!
//! - [`AngularGyrus`], the store: [`MathRecord`]s (or their [`CompressedMathRecord`] form)
//!   seeded with the built-in constants and methods as firmware traces, indexed by name,
//!   category and domain, with filtered recall, an association graph walked by spreading
//!   activation, consolidation on a 90-day horizon, and persistence. It implements the core
//!   [`MemoryLayer`](maxim_core::MemoryLayer).
//! - [`compute`]: exact arithmetic ([`compute::compute`]) and `analyze` (descriptive
//!   statistics with exactly rounded mean and variance, linear and quadratic fits,
//!   percentiles).
//! - [`fit`]: the pattern fitting the original declared but never built: trends, all-pairs
//!   correlation with Benjamini–Hochberg, and cosinor (circadian) fits, over many series in
//!   parallel; [`patterns`] stores confirmed fits as PATTERN records.
//! - [`Statistician`]: per-metric series, the pattern detector's state machine, escalation
//!   to the fitters, and the core [`PromotionSource`](maxim_core::PromotionSource).
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory, MathFilter, fit};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ag = AngularGyrus::builder().clock(clock.shared()).id_seed(1).build()?;
//! // A typed category matches (the original's enum-versus-string miss found nothing).
//! assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Method), 10).len(), 6);
//!
//! // Exact statistics, as the reference computes them.
//! let line = angular_gyrus::compute::linear(&[1.0, 2.0, 3.0, 5.0])?;
//! assert!((line.slope - 1.3).abs() < 1e-12 && (line.intercept - 0.8).abs() < 1e-12);
//!
//! // A daily decline of 0.02 over 30 days, fitted and stored as a PATTERN record.
//! let t0 = 1_700_000_000.0;
//! let times: Vec<f64> = (0..30).map(|d| t0 + f64::from(d) * 86_400.0).collect();
//! let values: Vec<f64> = (0..30).map(|d| 0.9 - 0.02 * f64::from(d) + 0.01 * f64::from(d % 3)).collect();
//! let trend = fit::fit_trend(&times, &values)?;
//! assert!((trend.slope_per_day + 0.02).abs() < 0.002 && trend.p_value < 1e-6);
//! let stored = ag.store_trend("tool:navigate:success", &trend, &fit::FitConfig::default())?;
//! let id = stored.expect("a strong trend is stored");
//! assert_eq!(ag.math_record(id).unwrap().category, MathCategory::Pattern);
//! # Ok::<(), angular_gyrus::Error>(())
//! ```
//!
//! # Crate features
//!
//! None: everything is always built.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod compute;
pub mod consolidate;
pub mod error;
mod exact;
pub mod fit;
pub mod journal;
pub mod layer;
pub mod patterns;
pub mod persist;
pub mod record;
pub mod statistician;
pub mod store;

pub use consolidate::retention_score;
pub use error::{Error, Result};
pub use maxim_core;
pub use persist::{SCHEMA_VERSION, SNAPSHOT_KIND};
pub use record::{CompressedMathRecord, MAX_NAME_LEN, MathCategory, MathEntry, MathRecord, Origin};
pub use statistician::{DetectorState, PatternDetector, Statistician, StatisticianConfig};
pub use store::{
    AngularGyrus, AngularGyrusBuilder, AngularGyrusConfig, LAYER_NAME, MathFilter, MathRelation, Op,
    built_in_id,
};
