//! `maxim`: a memory that accumulates, for AI agents.
//!
//! The facade over every maxim crate. It re-exports each layer and will wire them into a
//! `MemoryHub`; the `maxim` program looks into and manages a memory directory.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use angular_gyrus;
pub use atl;
pub use cerebellum;
pub use crossgraph;
pub use hippocampus;
pub use ips_gate;
pub use maxim_core as core;
pub use nac;
pub use promoter;
