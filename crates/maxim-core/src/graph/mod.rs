//! The associative graph every layer owns, and spreading activation over it.

use serde::{Deserialize, Serialize};

/// The type of an edge of a layer's associative graph (`spec/maxim-reference.md` §2.1).
///
/// Only [`EdgeKind::Associates`] and [`EdgeKind::Causes`] carry activation;
/// [`EdgeKind::Requires`] and [`EdgeKind::Enables`] form the dependency order, which must
/// stay acyclic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeKind {
    /// The source needs the target first.
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
}

impl std::fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
