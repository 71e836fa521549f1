//! Integration tests of the mathematical layer: one binary, one module per concern.

mod bad_input;
mod common;
mod compute;
mod contract;
mod fit_model;
mod journal;
mod layer;
mod model;
mod planted;
mod statistician;
