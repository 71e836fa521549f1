//! The associative graph every layer owns, and spreading activation over it.
//!
//! - [`Graph`] is a directed graph over [`RecordId`](crate::RecordId)s with typed, weighted
//!   edges ([`EdgeKind`], optional [`EdgeMeta`]). An edge is identified by its source, its
//!   target, its kind and its relation label; adding it again merges into the existing edge.
//!   REQUIRES and ENABLES edges stay acyclic. Relation labels are interned, so no edge
//!   allocates; [`remove_nodes`](Graph::remove_nodes) removes many nodes in one pass.
//! - [`spread`](Graph::spread) runs spreading activation exactly as
//!   `spec/maxim-reference.md` §2.3 describes it (outgoing ASSOCIATES and CAUSES edges,
//!   `parent * decay * weight`, strict threshold, max depth, max combination);
//!   [`spread_parallel`](Graph::spread_parallel) returns the same [`Activation`] bit for bit,
//!   expanding large frontiers on rayon.
//! - [`CsrGraph`] is a compact read-only snapshot of a [`Graph`] that both paths also run on.
//! - Both graphs implement [`Adjacency`], the small trait the activation code is written
//!   against, and [`GraphView`](crate::GraphView).
//!
//! ```
//! use maxim_core::graph::{ActivationParams, EdgeKind, Graph};
//! use maxim_core::RecordId;
//!
//! let [a, b, c, d] = [1, 2, 3, 4].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! g.add_edge(a, b, EdgeKind::Associates, 1.0, None)?;
//! g.add_edge(b, c, EdgeKind::Associates, 1.0, None)?;
//! g.add_edge(a, c, EdgeKind::Associates, 0.1, None)?;
//! g.add_edge(c, d, EdgeKind::Causes, 1.0, None)?;
//!
//! let params = ActivationParams::new(0.5, 0.05, 3)?;
//! let act = g.spread(&[a], &params);
//! assert_eq!(act.ranked(None), vec![(b, 0.5), (c, 0.25), (d, 0.125)]);
//! assert_eq!(act.get(a), Some(1.0));
//! assert_eq!(g.spread_parallel(&[a], &params), act);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use serde::{Deserialize, Serialize};

mod activation;
mod arena;
mod csr;
mod meta;
mod serial;
mod store;
#[cfg(test)]
mod tests;

pub use activation::{Activation, ActivationParams, Adjacency, spread, spread_parallel, spread_with_valence};
pub use csr::CsrGraph;
pub use meta::{EdgeMeta, EdgeMetaRef};
pub use store::{EdgeInsert, EdgeRef, Graph};

/// The type of an edge of a layer's associative graph (`spec/maxim-reference.md` §2.1).
///
/// Only [`EdgeKind::Associates`] and [`EdgeKind::Causes`] carry activation;
/// [`EdgeKind::Requires`] and [`EdgeKind::Enables`] form the dependency order, which must
/// stay acyclic. A dependency edge `s -> t` puts `s` before `t`: `s` is one of
/// [`Graph::dependencies`] of `t`, and `t` one of [`Graph::dependents`] of `s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeKind {
    /// The target needs the source first.
    Requires,
    /// The source makes the target possible.
    Enables,
    /// The source suppresses the target.
    Inhibits,
    /// The two are associated (carries activation).
    Associates,
    /// The source causes the target (carries activation).
    Causes,
}

impl EdgeKind {
    /// Every kind, in the reference's order.
    pub const ALL: [Self; 5] =
        [Self::Requires, Self::Enables, Self::Inhibits, Self::Associates, Self::Causes];

    /// True for the kinds spreading activation follows (ASSOCIATES and CAUSES).
    pub const fn carries_activation(self) -> bool {
        matches!(self, Self::Associates | Self::Causes)
    }

    /// True for the kinds that must stay acyclic (REQUIRES and ENABLES).
    pub const fn is_dependency(self) -> bool {
        matches!(self, Self::Requires | Self::Enables)
    }

    /// The upper-case name (`ASSOCIATES`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Requires => "REQUIRES",
            Self::Enables => "ENABLES",
            Self::Inhibits => "INHIBITS",
            Self::Associates => "ASSOCIATES",
            Self::Causes => "CAUSES",
        }
    }

    /// The kind's position in [`EdgeKind::ALL`].
    pub(crate) const fn slot(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
