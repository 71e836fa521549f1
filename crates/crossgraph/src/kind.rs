//! Names of the edge types and layers, and [`KindSet`], a set of edge types.
//!
//! Edge types and layers travel by name in snapshots, so that a file written by a build that
//! knows another set of types is refused with a clear error instead of being misread.
//!
//! ```
//! use crossgraph::{KindSet, kind_name, parse_kind};
//! use maxim_core::CrossEdgeKind;
//! assert_eq!(kind_name(CrossEdgeKind::StatisticallyConfirms), "STATISTICALLY_CONFIRMS");
//! assert_eq!(parse_kind("INSTANCE_OF")?, CrossEdgeKind::InstanceOf);
//! assert!(parse_kind("IS_A").is_err());
//! let set = KindSet::of(&[CrossEdgeKind::InstanceOf, CrossEdgeKind::DerivedFrom]);
//! assert!(set.contains(CrossEdgeKind::InstanceOf) && !set.contains(CrossEdgeKind::Informs));
//! assert_eq!(set.len(), 2);
//! assert_eq!(KindSet::ALL.len(), 7);
//! # Ok::<(), crossgraph::Error>(())
//! ```

use maxim_core::{CrossEdgeKind, LayerKind};

use crate::error::{Error, Result};

/// Every edge type, in the order of [`CrossEdgeKind`]'s declaration.
pub const ALL_KINDS: [CrossEdgeKind; 7] = [
    CrossEdgeKind::DerivedFrom,
    CrossEdgeKind::InstanceOf,
    CrossEdgeKind::Informs,
    CrossEdgeKind::ComputedFrom,
    CrossEdgeKind::Quantifies,
    CrossEdgeKind::StatisticallyConfirms,
    CrossEdgeKind::TemporallyCorrelates,
];

/// The upper-case name of an edge type (`INSTANCE_OF`), as the original serialised it.
pub const fn kind_name(kind: CrossEdgeKind) -> &'static str {
    match kind {
        CrossEdgeKind::DerivedFrom => "DERIVED_FROM",
        CrossEdgeKind::InstanceOf => "INSTANCE_OF",
        CrossEdgeKind::Informs => "INFORMS",
        CrossEdgeKind::ComputedFrom => "COMPUTED_FROM",
        CrossEdgeKind::Quantifies => "QUANTIFIES",
        CrossEdgeKind::StatisticallyConfirms => "STATISTICALLY_CONFIRMS",
        CrossEdgeKind::TemporallyCorrelates => "TEMPORALLY_CORRELATES",
    }
}

/// The edge type named `name` (exactly as [`kind_name`] writes it);
/// [`Error::UnknownEdgeKind`] otherwise.
pub fn parse_kind(name: &str) -> Result<CrossEdgeKind> {
    ALL_KINDS
        .into_iter()
        .find(|&k| kind_name(k) == name)
        .ok_or_else(|| Error::UnknownEdgeKind { name: name.to_owned() })
}

/// The layer named `name` (as [`LayerKind::as_str`] writes it); [`Error::UnknownLayer`]
/// otherwise.
pub fn parse_layer(name: &str) -> Result<LayerKind> {
    LayerKind::ALL
        .into_iter()
        .find(|l| l.as_str() == name)
        .ok_or_else(|| Error::UnknownLayer { name: name.to_owned() })
}

/// The position of `kind` in [`ALL_KINDS`].
pub(crate) const fn kind_slot(kind: CrossEdgeKind) -> usize {
    kind as usize
}

/// The position of `layer` in [`LayerKind::ALL`].
pub(crate) const fn layer_slot(layer: LayerKind) -> usize {
    layer as usize
}

/// A set of edge types (a bit set; `Copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KindSet(u8);

impl KindSet {
    /// No type.
    pub const NONE: Self = Self(0);
    /// Every type.
    pub const ALL: Self = Self((1 << ALL_KINDS.len()) - 1);

    /// The set holding `kinds`.
    pub fn of(kinds: &[CrossEdgeKind]) -> Self {
        kinds.iter().fold(Self::NONE, |set, &k| set.with(k))
    }

    /// This set with `kind` added.
    #[must_use]
    pub const fn with(self, kind: CrossEdgeKind) -> Self {
        Self(self.0 | 1 << kind_slot(kind))
    }

    /// This set without `kind`.
    #[must_use]
    pub const fn without(self, kind: CrossEdgeKind) -> Self {
        Self(self.0 & !(1 << kind_slot(kind)))
    }

    /// True when `kind` is in the set.
    #[inline]
    pub const fn contains(self, kind: CrossEdgeKind) -> bool {
        self.0 & (1 << kind_slot(kind)) != 0
    }

    /// Number of types in the set.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// True when the set holds no type.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The types in the set, in the order of [`ALL_KINDS`].
    pub fn iter(self) -> impl Iterator<Item = CrossEdgeKind> {
        ALL_KINDS.into_iter().filter(move |&k| self.contains(k))
    }
}

impl FromIterator<CrossEdgeKind> for KindSet {
    fn from_iter<I: IntoIterator<Item = CrossEdgeKind>>(iter: I) -> Self {
        iter.into_iter().fold(Self::NONE, Self::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_slots_follow_the_declaration() {
        for (i, k) in ALL_KINDS.into_iter().enumerate() {
            assert_eq!(parse_kind(kind_name(k)).unwrap(), k);
            assert_eq!(kind_slot(k), i);
        }
        for (i, l) in LayerKind::ALL.into_iter().enumerate() {
            assert_eq!(parse_layer(l.as_str()).unwrap(), l);
            assert_eq!(layer_slot(l), i);
        }
        assert!(matches!(parse_kind("instance_of"), Err(Error::UnknownEdgeKind { .. })));
        assert!(matches!(parse_layer("cortex"), Err(Error::UnknownLayer { .. })));
    }

    #[test]
    fn sets_add_and_remove() {
        let s: KindSet = [CrossEdgeKind::Informs, CrossEdgeKind::Informs].into_iter().collect();
        assert_eq!(s.len(), 1);
        assert!(s.without(CrossEdgeKind::Informs).is_empty());
        assert_eq!(KindSet::ALL.iter().count(), 7);
        assert_eq!(KindSet::ALL.without(CrossEdgeKind::InstanceOf).len(), 6);
    }
}
