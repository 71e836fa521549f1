//! Integration tests of the semantic layer: one binary, one module per concern.

mod bad_input;
mod common;
mod contract;
mod contradictions;
mod crash;
mod dedup;
mod fuzz;
mod golden;
mod journal;
mod model;
mod persistence;
mod recall;
mod relationships;
mod spec_checklist;
mod traces;
mod workload;
