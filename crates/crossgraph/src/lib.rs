//! `crossgraph`: typed edges between records of different maxim layers.
//!
//! The cross-layer graph will hold directed, weighted edges between a record of one layer
//! and a record of another (DERIVED_FROM, INSTANCE_OF, STATISTICALLY_CONFIRMS, QUANTIFIES,
//! TEMPORALLY_CORRELATES, ...; [`maxim_core::CrossEdgeKind`]) and run cross-layer spreading
//! activation: intra-layer edges through each layer's [`maxim_core::GraphView`], cross-layer
//! edges between layers, max combination, and a depth that means what it says
//! (`spec/maxim-reference.md` §7). It implements [`maxim_core::CrossLinks`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
