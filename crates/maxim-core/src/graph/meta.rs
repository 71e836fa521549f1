//! Edge metadata: [`EdgeMeta`] (owned, what callers build) and [`EdgeMetaRef`] (borrowed, what
//! the graph hands out), and the two side tables that let a [`Graph`](super::Graph) store it
//! without an allocation per edge: interned relation labels and a slab of confidence/valence
//! pairs.
//!
//! An edge stores a 16-bit label id and a 32-bit slot number; the label's text lives once in
//! the graph's label table, so comparing two edges' relations compares two integers.
//!
//! ```
//! use maxim_core::graph::{EdgeKind, EdgeMeta, EdgeMetaRef, Graph};
//! use maxim_core::RecordId;
//!
//! let [a, b] = [1, 2].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! g.add_edge(a, b, EdgeKind::Associates, 0.5, Some(EdgeMeta::relation("IS_A").with_confidence(0.9)))?;
//! // The borrowed form adds the same edge without building a `String`.
//! g.add_edge_ref(b, a, EdgeKind::Associates, 0.5, EdgeMetaRef::relation("IS_A").with_confidence(0.9))?;
//! let e = g.find_edge(a, b, None, Some("IS_A")).unwrap();
//! assert_eq!(e.meta, EdgeMetaRef::relation("IS_A").with_confidence(0.9));
//! assert_eq!(e.meta.cloned(), Some(EdgeMeta::relation("IS_A").with_confidence(0.9)));
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::num::NonZeroU16;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::{check_signed_unit, check_unit};

/// Optional metadata of an edge, as callers build it.
///
/// `relation` is part of the edge's identity: the ATL's relationship types (IS_A, HAS_PART,
/// ...) travel as the same [`EdgeKind`](super::EdgeKind) and are told apart by it.
/// `confidence` must be in `[0, 1]` and `valence` in `[-1, 1]`; spreading activation with
/// valence adds `valence` along the path
/// ([`Graph::spread_with_valence`](super::Graph::spread_with_valence)). The graph does not
/// keep this struct: it interns the label and keeps the numbers in a side table, and hands
/// them back as an [`EdgeMetaRef`].
///
/// ```
/// use maxim_core::graph::EdgeMeta;
/// let meta = EdgeMeta::relation("HAS_PART").with_confidence(0.9).with_valence(-0.5);
/// assert_eq!(meta.relation.as_deref(), Some("HAS_PART"));
/// assert!(meta.validate().is_ok());
/// assert!(EdgeMeta::default().with_confidence(1.5).validate().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EdgeMeta {
    /// The relationship type the edge stands for, if any (part of the edge's identity).
    pub relation: Option<String>,
    /// Confidence in the edge, in `[0, 1]`.
    pub confidence: Option<f64>,
    /// Emotional valence the edge carries, in `[-1, 1]`.
    pub valence: Option<f64>,
}

impl EdgeMeta {
    /// Metadata holding only a relation label.
    pub fn relation(relation: impl Into<String>) -> Self {
        Self { relation: Some(relation.into()), ..Self::default() }
    }

    /// The same metadata with `confidence` set.
    pub fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence);
        self
    }

    /// The same metadata with `valence` set.
    pub fn with_valence(mut self, valence: f64) -> Self {
        self.valence = Some(valence);
        self
    }

    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        self.view().is_empty()
    }

    /// Checks the fields: a relation label is not empty, confidence is in `[0, 1]`, valence in
    /// `[-1, 1]`, both finite.
    pub fn validate(&self) -> Result<()> {
        self.view().validate()
    }

    /// The borrowed form of this metadata.
    pub fn view(&self) -> EdgeMetaRef<'_> {
        EdgeMetaRef { relation: self.relation.as_deref(), confidence: self.confidence, valence: self.valence }
    }
}

impl<'a> From<&'a EdgeMeta> for EdgeMetaRef<'a> {
    fn from(meta: &'a EdgeMeta) -> Self {
        meta.view()
    }
}

/// Edge metadata, borrowed: what [`EdgeRef::meta`](super::EdgeRef::meta) holds and what
/// [`Graph::add_edge_ref`](super::Graph::add_edge_ref) takes. An edge without metadata has
/// every field `None` ([`EdgeMetaRef::EMPTY`]).
///
/// [`cloned`](Self::cloned) gives the owned [`EdgeMeta`], `None` for an edge without
/// metadata, as `Option<&EdgeMeta>::cloned` did when `EdgeRef::meta` was that type.
///
/// ```
/// use maxim_core::graph::{EdgeMeta, EdgeMetaRef};
/// let m = EdgeMetaRef::relation("CAUSES").with_valence(0.25);
/// assert_eq!((m.relation, m.confidence, m.valence), (Some("CAUSES"), None, Some(0.25)));
/// assert_eq!(m.cloned(), Some(EdgeMeta::relation("CAUSES").with_valence(0.25)));
/// assert_eq!(EdgeMetaRef::EMPTY.cloned(), None);
/// assert!(EdgeMetaRef::relation("").validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EdgeMetaRef<'a> {
    /// The relationship type, if any (part of the edge's identity).
    pub relation: Option<&'a str>,
    /// Confidence in the edge, in `[0, 1]`.
    pub confidence: Option<f64>,
    /// Emotional valence the edge carries, in `[-1, 1]`.
    pub valence: Option<f64>,
}

impl<'a> EdgeMetaRef<'a> {
    /// No metadata.
    pub const EMPTY: Self = Self { relation: None, confidence: None, valence: None };

    /// Metadata holding only a relation label.
    pub const fn relation(relation: &'a str) -> Self {
        Self { relation: Some(relation), confidence: None, valence: None }
    }

    /// The same metadata with `confidence` set.
    pub const fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence);
        self
    }

    /// The same metadata with `valence` set.
    pub const fn with_valence(mut self, valence: f64) -> Self {
        self.valence = Some(valence);
        self
    }

    /// True when no field is set.
    pub const fn is_empty(&self) -> bool {
        self.relation.is_none() && self.confidence.is_none() && self.valence.is_none()
    }

    /// The owned form.
    pub fn to_meta(&self) -> EdgeMeta {
        EdgeMeta {
            relation: self.relation.map(str::to_owned),
            confidence: self.confidence,
            valence: self.valence,
        }
    }

    /// The owned form, `None` when no field is set.
    pub fn cloned(&self) -> Option<EdgeMeta> {
        (!self.is_empty()).then(|| self.to_meta())
    }

    /// Checks the fields as [`EdgeMeta::validate`] does.
    pub fn validate(&self) -> Result<()> {
        if self.relation == Some("") {
            return Err(Error::invalid("relation", "an edge's relation label must not be empty"));
        }
        if let Some(c) = self.confidence {
            check_unit("confidence", c)?;
        }
        if let Some(v) = self.valence {
            check_signed_unit("valence", v)?;
        }
        Ok(())
    }
}

/// An interned relation label: its position in the graph's label table, plus one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Label(NonZeroU16);

/// The relation labels of one graph, each stored once. Labels are never dropped from the
/// table (a graph holds few distinct relationship types); a save and load keeps only those
/// in use.
#[derive(Debug, Clone, Default)]
pub(super) struct Labels {
    names: Vec<Box<str>>,
    ids: FxHashMap<Box<str>, Label>,
}

impl Labels {
    /// Most distinct labels a graph holds.
    pub(super) const MAX: usize = u16::MAX as usize;

    /// The label of `name`, if some edge ever used it.
    #[inline]
    pub(super) fn get(&self, name: &str) -> Option<Label> {
        self.ids.get(name).copied()
    }

    /// The label of `name`, added if new; fails when the table is full.
    pub(super) fn intern(&mut self, name: &str) -> Result<Label> {
        if let Some(label) = self.get(name) {
            return Ok(label);
        }
        let Some(label) = u16::try_from(self.names.len() + 1).ok().and_then(NonZeroU16::new).map(Label)
        else {
            return Err(Error::invalid(
                "relation",
                format!("the graph cannot hold more than {} distinct relation labels", Self::MAX),
            ));
        };
        self.names.push(name.into());
        self.ids.insert(name.into(), label);
        Ok(label)
    }

    /// The text of `label`.
    #[inline]
    pub(super) fn name(&self, label: Label) -> &str {
        &self.names[usize::from(label.0.get()) - 1]
    }

    /// The text of an optional label.
    #[inline]
    pub(super) fn name_of(&self, label: Option<Label>) -> Option<&str> {
        label.map(|l| self.name(l))
    }
}

/// The slot number of an edge without confidence and valence.
pub(super) const NO_EXTRA: u32 = u32::MAX;

/// An edge's confidence and valence; NaN stands for "not set" (set values are finite).
#[derive(Debug, Clone, Copy)]
struct Extra {
    confidence: f64,
    valence: f64,
}

/// The confidence/valence pairs of the edges that have one, in reusable slots.
#[derive(Debug, Clone, Default)]
pub(super) struct Extras {
    slots: Vec<Extra>,
    free: Vec<u32>,
}

fn unset_as_nan(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

fn nan_as_unset(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

impl Extras {
    /// The confidence and valence in slot `slot` (both `None` for [`NO_EXTRA`]).
    #[inline]
    pub(super) fn get(&self, slot: u32) -> (Option<f64>, Option<f64>) {
        match self.slots.get(slot as usize) {
            Some(e) => (nan_as_unset(e.confidence), nan_as_unset(e.valence)),
            None => (None, None),
        }
    }

    /// The valence in slot `slot`, 0 when unset.
    #[inline]
    pub(super) fn valence_or_zero(&self, slot: u32) -> f64 {
        self.slots.get(slot as usize).map_or(0.0, |e| if e.valence.is_nan() { 0.0 } else { e.valence })
    }

    /// Overwrites the fields that are set in the slot `*slot`, taking a slot first when the
    /// edge has none and something is set.
    pub(super) fn merge(&mut self, slot: &mut u32, confidence: Option<f64>, valence: Option<f64>) {
        if confidence.is_none() && valence.is_none() {
            return;
        }
        if *slot == NO_EXTRA {
            let fresh = Extra { confidence: unset_as_nan(confidence), valence: unset_as_nan(valence) };
            *slot = if let Some(s) = self.free.pop() {
                self.slots[s as usize] = fresh;
                s
            } else {
                self.slots.push(fresh);
                (self.slots.len() - 1) as u32
            };
            return;
        }
        let e = &mut self.slots[*slot as usize];
        if let Some(c) = confidence {
            e.confidence = c;
        }
        if let Some(v) = valence {
            e.valence = v;
        }
    }

    /// True when slot `slot` is on the free list.
    #[cfg(test)]
    pub(super) fn is_free(&self, slot: u32) -> bool {
        self.free.contains(&slot)
    }

    /// Gives slot `slot` back (nothing for [`NO_EXTRA`]).
    #[inline]
    pub(super) fn release(&mut self, slot: u32) {
        if slot != NO_EXTRA {
            self.free.push(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_interned_once_and_refused_past_the_limit() {
        let mut labels = Labels::default();
        let is_a = labels.intern("IS_A").unwrap();
        assert_eq!(labels.intern("IS_A").unwrap(), is_a);
        assert_ne!(labels.intern("HAS_PART").unwrap(), is_a);
        assert_eq!((labels.name(is_a), labels.get("nope")), ("IS_A", None));
        for i in labels.names.len()..Labels::MAX {
            labels.intern(&format!("L{i}")).unwrap();
        }
        assert!(labels.intern("one too many").is_err());
        assert_eq!(labels.get("one too many"), None);
        assert!(labels.intern("IS_A").is_ok());
    }

    #[test]
    fn extras_merge_release_and_reuse_slots() {
        let mut extras = Extras::default();
        let mut a = NO_EXTRA;
        extras.merge(&mut a, None, None);
        assert_eq!((a, extras.get(a)), (NO_EXTRA, (None, None)));
        extras.merge(&mut a, Some(0.5), None);
        extras.merge(&mut a, None, Some(-0.25));
        assert_eq!(extras.get(a), (Some(0.5), Some(-0.25)));
        assert_eq!(extras.valence_or_zero(a), -0.25);
        extras.release(a);
        let mut b = NO_EXTRA;
        extras.merge(&mut b, None, Some(1.0));
        assert_eq!((b, extras.get(b)), (a, (None, Some(1.0))));
        assert_eq!(extras.valence_or_zero(NO_EXTRA), 0.0);
    }

    #[test]
    fn meta_views_round_trip() {
        let owned = EdgeMeta::relation("IS_A").with_confidence(0.5);
        assert_eq!(owned.view().cloned(), Some(owned.clone()));
        assert_eq!(EdgeMetaRef::from(&owned).to_meta(), owned);
        assert!(EdgeMeta::default().is_empty() && EdgeMetaRef::default().is_empty());
        assert!(EdgeMetaRef::EMPTY.with_valence(2.0).validate().is_err());
        assert!(EdgeMetaRef::EMPTY.with_confidence(f64::NAN).validate().is_err());
    }
}
