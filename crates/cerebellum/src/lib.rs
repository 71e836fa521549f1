//! `cerebellum`: procedural memory for maxim.
//!
//! The cerebellum will keep skills distilled from verified-successful runs (seed 004): the
//! method rather than the answer, with the preconditions under which it applies, its steps,
//! the checks that verified it, and counts of uses and successes. Skills that keep
//! succeeding are promoted, skills that stop are retired, and everything distilled from a
//! compromised run can be revoked by its provenance; a skill with a write action needs human
//! confirmation before promotion.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
