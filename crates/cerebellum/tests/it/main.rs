//! Integration tests of the procedural layer: one binary, one module per concern.

mod contract;
mod journal;
mod lab;
mod model;
mod persistence;
