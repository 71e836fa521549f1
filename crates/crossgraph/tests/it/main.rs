//! Integration tests of the cross-layer graph: one binary, one module per concern.

mod bad_input;
mod common;
mod edges;
mod example;
mod journal;
mod model;
mod persistence;
mod workload;
