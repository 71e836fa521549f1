//! Integration tests of the promoter: one binary, one module per concern.

mod bad_input;
mod common;
mod golden;
mod idempotence;
mod journal;
mod model;
mod persistence;
mod pipeline;
mod sources_gate;
