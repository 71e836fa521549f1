//! The integration tests of `nac`, one binary.

mod bad_input;
mod common;
mod convergence;
mod journal;
mod model;
mod outcomes;
mod persistence;
mod spec_checklist;
mod workload;
