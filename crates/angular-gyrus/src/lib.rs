//! `angular-gyrus`: the mathematical layer of maxim: what the numbers say.
//!
//! The angular gyrus will hold `MathRecord`s (facts, formulas, methods, constants and
//! fitted patterns) seeded with mathematical constants at start-up, exact arithmetic,
//! descriptive statistics, linear and quadratic fits, and the pattern fitting the seed
//! describes (trends, cross-metric correlation, circadian phase-locking) run in parallel with
//! rayon, plus the statistician's state machine that escalates metrics from the randomness
//! gate to a fitted pattern (`spec/maxim-reference.md` §6 and §10).
//!
//! It implements [`maxim_core::MemoryLayer`] and depends on `maxim-core` alone.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
