//! `nac`: reward learning for maxim.
//!
//! The nucleus accumbens will learn causal links from events to outcomes by Rescorla–Wagner
//! (`spec/maxim-reference.md` §8): link keys by event signature, outcome signature and
//! context, predicted value, confidence, delays, contributing episodes, context similarity,
//! decay, and the promotion candidates it offers the promoter through
//! [`maxim_core::PromotionSource`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
