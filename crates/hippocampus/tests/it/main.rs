//! Integration tests of the `hippocampus` crate: one binary, one module per concern.

mod bad_input;
mod capture;
mod common;
mod contract;
mod crash;
mod durability;
mod fuzz;
mod golden;
mod model;
mod persist;
mod retrieval;
mod sizes;
mod sleep;
mod traces;
mod workload;
