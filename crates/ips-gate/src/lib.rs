//! `ips-gate`: the randomness gate in front of maxim's semantic promotion.
//!
//! The intraparietal sulcus will assess whether a series looks random (a Wald–Wolfowitz runs
//! test about the median and the lag-1 autocorrelation, `spec/maxim-reference.md` §9) and
//! decide which promotion candidates carry real temporal structure, through
//! [`maxim_core::RandomnessGate`]. Unlike the original, the gate is wired in by default.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
