//! `cerebellum`: procedural memory for maxim — how to do things.
//!
//! Seed 004 calls procedural memory the under-built frontier: when an agent solves a problem
//! it should keep the *method*, not just the answer, and be measurably faster the second
//! time. It is also where the risk is: a learned skill is a stored plan the system re-executes
//! with less scrutiny than the first time, so this crate puts a gate at promotion. It depends
//! on [`maxim_core`] alone.
//!
//! The principal types:
//!
//! - [`Cerebellum`], the store: [`distil`](Cerebellum::distil) keeps the method of a verified,
//!   trusted run (or reinforces the held skill with the same method);
//!   [`candidates`](Cerebellum::candidates) offers the skills matching a [`Task`] as ranked
//!   [`Plan`]s; [`record_use`](Cerebellum::record_use) promotes skills that keep succeeding
//!   and retires those that stop; [`confirm`](Cerebellum::confirm) records the human
//!   confirmation a skill with a write step needs before it becomes active;
//!   [`authorise`](Cerebellum::authorise) lets only active, trusted skills run unsupervised;
//!   [`revoke_source`](Cerebellum::revoke_source) retires and reports everything that came
//!   from a compromised source. It implements the core [`MemoryLayer`](maxim_core::MemoryLayer).
//! - [`Skill`]: name, preconditions, [`Step`]s (tool and argument shape, each marked when it
//!   writes), checks, uses, successes and failures, [`SkillStatus`], and a
//!   [`RecordMeta`](maxim_core::RecordMeta) with its source, trust and a procedural trace.
//! - [`RunTrace`] and [`Outcome`]: what a run did and how it ended, as `distil` takes them.
//! - [`lab`]: a small deterministic environment ("reset a stuck deploy") in which a naive
//!   agent gets faster once it has a skill, and a poisoned skill is stopped by the gate.
//!
//! ```
//! use cerebellum::{Authorisation, Cerebellum, Distilled, Outcome, Refusal, RunTrace, Step, Task};
//! use maxim_core::{ManualClock, Source, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(1).build()?;
//! let steps = [Step::write("drain", "target"), Step::write("restart", "target")];
//! let task = Task::new("reset a stuck deploy", ["deploy:stuck"]);
//!
//! // Only a verified success yields a skill.
//! let mut run = RunTrace::new("run-1", "reset a stuck deploy", Source::ToolResult, 0.8).facts(["deploy:stuck"]);
//! run.calls.extend(steps.iter().cloned());
//! assert!(matches!(cb.distil(&run, &Outcome::failed())?, Distilled::Skipped(_)));
//! let good = cb.distil(&run, &Outcome::verified(["verify(target)"]))?.id().unwrap();
//!
//! // A poisoned run: untrusted source, one extra destructive write.
//! let mut poison = RunTrace::new("run-x", "reset a stuck deploy", Source::web("paste.example")?, 0.3)
//!     .facts(["deploy:stuck"]);
//! poison.calls.extend(steps.iter().cloned());
//! poison.calls.push(Step::write("wipe_volume", "db"));
//! let bad = cb.distil(&poison, &Outcome::verified(["verify(target)"]))?.id().unwrap();
//!
//! // Both are offered; the low-trust one only informs.
//! let plans = cb.candidates(&task, 10)?;
//! assert_eq!(plans.len(), 2);
//! let of = |id| plans.iter().find(|p| p.skill.meta.id == id).unwrap().authorisation;
//! assert_eq!(of(good), Authorisation::Trial);
//! assert!(matches!(of(bad), Authorisation::InformOnly(Refusal::LowTrust { .. })));
//!
//! // Three successes promote the good skill, but it writes: a human must confirm it.
//! for _ in 0..3 {
//!     cb.record_use(good, true)?;
//! }
//! assert!(cb.authorise(good).is_err());
//! cb.confirm(good, "ops-lead")?;
//! assert!(cb.authorise(good).is_ok());
//!
//! // The source turns out hostile: everything from it is retired and reported.
//! let report = cb.revoke_source(&Source::web("paste.example")?)?;
//! assert_eq!(report.retired, [bad]);
//! assert_eq!(cb.candidates(&task, 10)?.len(), 1);
//! # Ok::<(), cerebellum::Error>(())
//! ```
//!
//! # Crate features
//!
//! - `plotters`: the lab's SVG chart (`lab::chart`) and the `lab` example, drawn with
//!   `plotters` (SVG backend only). The lab itself is always built.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
pub mod error;
pub mod journal;
pub mod lab;
pub mod layer;
pub mod persist;
pub mod skill;
mod state;
pub mod store;
#[cfg(test)]
mod tests;

pub use config::{CerebellumBuilder, CerebellumConfig};
pub use error::{Error, Result};
pub use maxim_core;
pub use persist::{SCHEMA_VERSION, SNAPSHOT_KIND};
pub use skill::{
    Authorisation, Confirmation, MAX_CHECKS, MAX_ORIGINS, MAX_PRECONDITIONS, MAX_STEPS, MAX_TEXT, MAX_WINDOW,
    Origin, Outcomes, Refusal, RetireReason, Retirement, Skill, SkillStatus, Step, normalise_fact,
    normalise_facts,
};
pub use store::{
    Cerebellum, Distilled, LAYER_NAME, Outcome, Plan, RevocationReport, RunTrace, SkillFilter, Skip, Task,
    UseOutcome,
};
