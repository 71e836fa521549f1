//! Typed relationships between concepts (§5.2) and spreading activation over them.
//!
//! A relationship travels as one graph edge per direction: `CAUSES` as a CAUSES edge, every
//! other type as an ASSOCIATES edge, each labelled with its type and carrying a confidence
//! ([`EdgeMeta`]). An edge's identity is (source, target, type), so:
//!
//! - defining a relationship that exists **reinforces** it instead of stacking a parallel
//!   edge: the weight becomes the larger of the old and the new (spreading activation takes
//!   the max over parallel paths, so this is exactly what the original's parallel edges did
//!   to activation), and the confidence becomes `max(old, new) + 0.05`, capped at 0.95 (a
//!   confidence already above 0.95 stays);
//! - a symmetric type writes, reinforces, updates and removes both directions together, and a
//!   definition of `b → a` merges into the symmetric pair made by `a → b`.
//!
//! Both ends must be held concepts; a concept is related to itself only by a type that allows
//! it (no built-in type does). Weights and confidences are finite numbers in `[0, 1]`.
//!
//! ```
//! use atl::{Atl, DefineOutcome, Direction, spec};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp};
//!
//! let mut atl = Atl::builder().clock(ManualClock::new(Timestamp::from_secs(1_700_000_000)).shared()).build().expect("the default settings are valid");
//! let mug = atl.find_or_create(&spec("mug", "object"))?.id;
//! let kitchen = atl.find_or_create(&spec("kitchen", "location"))?.id;
//! assert_eq!(atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.5)?, DefineOutcome::Created);
//! assert_eq!(atl.concept_graph().edge_count(), 2); // symmetric: both directions
//! let again = atl.define_relationship(kitchen, mug, "RELATED_TO", 0.3, 0.5)?;
//! assert!(matches!(again, DefineOutcome::Reinforced { .. }));
//! assert_eq!(atl.concept_graph().edge_count(), 2); // merged, not stacked
//! let found = atl.find_relationships(mug, Some("RELATED_TO"), Direction::Outgoing, 20)?;
//! assert_eq!((found[0].target, found[0].weight, found[0].confidence), (kitchen, 0.8, 0.55));
//! let near = atl.recall_associated(&[mug], 10);
//! assert_eq!(near[0].0.name(), "kitchen");
//! assert_eq!(near[0].1, 0.4);
//! assert!(atl.define_relationship(mug, mug, "IS_A", 1.0, 0.5).is_err());
//! # Ok::<(), atl::Error>(())
//! ```

use std::cell::Cell;

use maxim_core::graph::{ActivationParams, EdgeMeta, EdgeMetaRef, EdgeRef, Graph};
use maxim_core::{EdgeKind, MemoryRecord, RecordId, check_unit};

use crate::concept::SemanticRecord;
use crate::error::{Error, Result};
use crate::journal::{Applied, Op};
use crate::registry::{check_type_name, edge_kind_of};
use crate::store::Atl;

/// Limits up to this many keep a weight floor in [`Atl::find_relationships`].
const FLOOR_SLOTS: usize = 16;

/// The confidence of a relationship defined without one.
pub const DEFAULT_RELATIONSHIP_CONFIDENCE: f64 = 0.5;
/// What defining an existing relationship adds to its confidence.
pub const REINFORCE_CONFIDENCE_STEP: f64 = 0.05;
/// The confidence reinforcement and relative updates never go above.
pub const MAX_RELATIONSHIP_CONFIDENCE: f64 = 0.95;
/// The confidence relative updates never go below.
pub const MIN_RELATIONSHIP_CONFIDENCE: f64 = 0.05;

/// Which edges of a concept [`Atl::find_relationships`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Relationships from the concept.
    #[default]
    Outgoing,
    /// Relationships to the concept.
    Incoming,
    /// Both (a symmetric relationship is listed once).
    Both,
}

/// One relationship, as stored in one direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relationship<'a> {
    /// The source concept.
    pub source: RecordId,
    /// The target concept.
    pub target: RecordId,
    /// The type (`IS_A`, ...).
    pub relationship: &'a str,
    /// The weight, in `[0, 1]`.
    pub weight: f64,
    /// The confidence, in `[0, 1]`.
    pub confidence: f64,
}

impl Relationship<'_> {
    /// The end that is not `of` (the target when `of` is the source).
    pub fn other(&self, of: RecordId) -> RecordId {
        if self.source == of { self.target } else { self.source }
    }

    fn from_edge(e: EdgeRef<'_>) -> Option<Relationship<'_>> {
        Some(Relationship {
            source: e.source,
            target: e.target,
            relationship: e.relation()?,
            weight: e.weight,
            confidence: e.confidence().unwrap_or(DEFAULT_RELATIONSHIP_CONFIDENCE),
        })
    }
}

/// What [`Atl::define_relationship`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefineOutcome {
    /// The relationship is new.
    Created,
    /// The relationship existed and was reinforced.
    Reinforced {
        /// Its weight before.
        previous_weight: f64,
        /// Its confidence before.
        previous_confidence: f64,
    },
}

/// A change to an existing relationship (see [`Atl::update_relationship`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EdgeUpdate {
    /// The new weight, in `[0, 1]`.
    pub weight: Option<f64>,
    /// The new confidence, in `[0, 1]` (wins over `confidence_delta`).
    pub confidence: Option<f64>,
    /// A change of confidence; the result is clamped to `[0.05, 0.95]`.
    pub confidence_delta: Option<f64>,
}

/// The confidence after defining again, at `given`, a relationship of confidence `old`.
pub fn reinforced_confidence(old: f64, given: f64) -> f64 {
    let c = old.max(given);
    if c >= MAX_RELATIONSHIP_CONFIDENCE {
        c
    } else {
        (c + REINFORCE_CONFIDENCE_STEP).min(MAX_RELATIONSHIP_CONFIDENCE)
    }
}

fn check_weight(weight: f64) -> Result<f64> {
    Ok(check_unit("weight", weight)?)
}

/// One direction of a relationship as it is to be written.
#[derive(Clone, Copy)]
struct EdgeSpec<'a> {
    kind: EdgeKind,
    relationship: &'a str,
    weight: f64,
    confidence: f64,
}

impl EdgeSpec<'_> {
    /// Writes `source → target`: an existing edge is updated in place (no allocation), a new
    /// one is added with its metadata.
    fn write(&self, graph: &mut Graph, source: RecordId, target: RecordId, exists: bool) -> Result<()> {
        if exists {
            let update = EdgeMeta { confidence: Some(self.confidence), ..EdgeMeta::default() };
            let found = graph.update_edge(
                source,
                target,
                self.kind,
                Some(self.relationship),
                Some(self.weight),
                Some(&update),
            )?;
            if found {
                return Ok(());
            }
        }
        // Borrowed metadata: the graph interns the label, nothing is allocated for it here.
        let meta = EdgeMetaRef::relation(self.relationship).with_confidence(self.confidence);
        graph.add_edge_ref(source, target, self.kind, self.weight, meta)?;
        Ok(())
    }
}

/// Most results whose slots [`Atl::recall_associated_with`] looks up on the stack.
const RESOLVE_INLINE: usize = 32;

impl Atl {
    /// Relates `source` to `target` by `relationship` with `weight` and `confidence` (see the
    /// [module docs](self)); a symmetric type also relates `target` to `source`.
    ///
    /// Errors (nothing changes): an unknown type ([`Error::UnknownRelationship`]), a weight or
    /// confidence that is NaN or outside `[0, 1]`, an end that is not a held concept
    /// ([`maxim_core::Error::NotFound`]), a self-relationship of a type that does not allow it
    /// ([`Error::SelfRelationship`]).
    pub fn define_relationship(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
    ) -> Result<DefineOutcome> {
        let _s = tracing::debug_span!("atl_define_relationship", %source, %target).entered();
        let op = self.resolve_relate(source, target, relationship, weight, confidence, &[])?;
        match self.commit(op)? {
            Applied::Defined(outcome) => Ok(outcome),
            _ => Err(Error::UnknownRelationship { name: relationship.to_owned() }),
        }
    }

    /// The operation of [`define_relationship`](Self::define_relationship), checked, with the
    /// final weight and confidence chosen; nothing changes. `created` are concepts about to be
    /// created (by the same journal record), which count as held and have no edges yet.
    pub(crate) fn resolve_relate(
        &self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
        created: &[RecordId],
    ) -> Result<Op> {
        let reflexive = self.state.registry.require(relationship)?.reflexive;
        let weight = check_weight(weight)?;
        let confidence = check_unit("confidence", confidence)?;
        let kind = edge_kind_of(relationship);
        let graph = &self.state.graph;
        let forward = graph
            .find_edge(source, target, Some(kind), Some(relationship))
            .map(|e| (e.weight, e.confidence().unwrap_or(DEFAULT_RELATIONSHIP_CONFIDENCE)));
        if forward.is_none() {
            // Every concept is a graph node and every node a concept. An edge found has both
            // ends, so only a new one needs them checked.
            for id in [source, target] {
                if !graph.contains(id) && !created.contains(&id) {
                    return Err(Error::not_found(id));
                }
            }
        }
        if source == target && !reflexive {
            return Err(Error::SelfRelationship { id: source, relationship: relationship.to_owned() });
        }
        let (weight, confidence) = match forward {
            Some((w, c)) => (w.max(weight), reinforced_confidence(c, confidence)),
            None => (weight, confidence),
        };
        Ok(Op::Relate { source, target, relationship: relationship.to_owned(), weight, confidence })
    }

    /// Writes the relationship `source → target` (and its reverse for a symmetric type) with
    /// its final `weight` and `confidence`, counting a creation or a reinforcement. Both ends
    /// are held and the numbers checked; only a graph at its size limit refuses an edge, which
    /// is logged and leaves the graph as it was.
    pub(crate) fn apply_relate(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
    ) -> DefineOutcome {
        let symmetric = self.state.registry.is_symmetric(relationship);
        let kind = edge_kind_of(relationship);
        let graph = &mut self.state.graph;
        // A symmetric pair is always written whole, so the forward edge speaks for both (a
        // lone reverse edge, which only a hand-made file could hold, is overwritten).
        let forward = graph
            .find_edge(source, target, Some(kind), Some(relationship))
            .map(|e| (e.weight, e.confidence().unwrap_or(DEFAULT_RELATIONSHIP_CONFIDENCE)));
        let edge = EdgeSpec { kind, relationship, weight, confidence };
        let mut written = edge.write(graph, source, target, forward.is_some());
        if written.is_ok()
            && symmetric
            && source != target
            && let Err(err) = edge.write(graph, target, source, forward.is_some())
        {
            // Put the first direction back as it was (only reachable when the graph is full).
            match forward {
                None => {
                    graph.remove_edge(source, target, kind, Some(relationship));
                }
                Some((weight, confidence)) => {
                    let old = EdgeSpec { weight, confidence, ..edge };
                    let _ = old.write(graph, source, target, true);
                }
            }
            written = Err(err);
        }
        if let Err(err) = written {
            tracing::warn!(%source, %target, relationship, error = %err, "the concept graph refused the relationship");
        }
        if let Some((previous_weight, previous_confidence)) = forward {
            self.state.counters.relationships_reinforced += 1;
            DefineOutcome::Reinforced { previous_weight, previous_confidence }
        } else {
            self.state.counters.relationships_defined += 1;
            DefineOutcome::Created
        }
    }

    /// Removes the relationships `source → target` of type `relationship`, or of every type when
    /// `None`; a symmetric type's reverse edge goes too. Returns how many directed edges went.
    ///
    /// Errors: an unknown type, an end that is not a held concept.
    pub fn remove_relationship(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: Option<&str>,
    ) -> Result<usize> {
        let _s = tracing::debug_span!("atl_remove_relationship", %source, %target).entered();
        if let Some(name) = relationship {
            self.state.registry.require(name)?;
        }
        self.state.require(source)?;
        self.state.require(target)?;
        let any =
            self.state.graph.outgoing(source).any(|e| {
                e.target == target && e.relation().is_some_and(|r| relationship.is_none_or(|n| r == n))
            });
        if !any {
            return Ok(0);
        }
        let op = Op::RemoveRelationship { source, target, relationship: relationship.map(str::to_owned) };
        match self.commit(op)? {
            Applied::Count(n) => Ok(n),
            _ => Ok(0),
        }
    }

    /// Removes the relationships `source → target` of type `relationship` (every type when
    /// `None`), and the reverse edges of symmetric types; returns how many directed edges went.
    pub(crate) fn apply_remove_relationship(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: Option<&str>,
    ) -> usize {
        let doomed: Vec<(EdgeKind, String)> = self
            .state
            .graph
            .outgoing(source)
            .filter(|e| e.target == target)
            .filter_map(|e| e.relation().map(|r| (e.kind, r)))
            .filter(|(_, r)| relationship.is_none_or(|name| *r == name))
            .map(|(k, r)| (k, r.to_owned()))
            .collect();
        let mut removed = 0;
        for (kind, name) in doomed {
            removed += usize::from(self.state.graph.remove_edge(source, target, kind, Some(&name)));
            if self.state.registry.is_symmetric(&name) && source != target {
                removed += usize::from(self.state.graph.remove_edge(target, source, kind, Some(&name)));
            }
        }
        removed
    }

    /// Up to `limit` relationships of concept `id` (of type `relationship`, or of any type when
    /// `None`) in `direction`, by weight descending, then confidence descending, then the other
    /// end's id and the type.
    ///
    /// Errors: an unknown type, an unknown concept.
    pub fn find_relationships(
        &self,
        id: RecordId,
        relationship: Option<&str>,
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Relationship<'_>>> {
        if let Some(name) = relationship {
            self.state.registry.require(name)?;
        }
        self.state.require(id)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let graph = &self.state.graph;
        let wanted = |r: &Relationship<'_>| relationship.is_none_or(|name| r.relationship == name);
        let order = |a: &Relationship<'_>, b: &Relationship<'_>| {
            b.weight
                .total_cmp(&a.weight)
                .then(b.confidence.total_cmp(&a.confidence))
                .then(a.other(id).cmp(&b.other(id)))
                .then(a.relationship.cmp(b.relationship))
                .then(a.source.cmp(&b.source))
        };
        // The order is total (two edges equal in all five are the same edge), so keeping the
        // first `limit` of every batch keeps exactly what a full sort would: a concept with
        // hundreds of relationships asked for three holds at most a batch at a time.
        let batch = limit.saturating_mul(2).max(64);
        let mut found: Vec<Relationship<'_>> = Vec::new();
        // For a small `limit`, the `limit` largest weights held so far: an edge lighter than
        // the last of them has `limit` heavier ones ahead of it (weight comes first in the
        // order), so it is skipped before anything else of it is read.
        let mut heaviest = [f64::NEG_INFINITY; FLOOR_SLOTS];
        let floor = Cell::new(f64::NEG_INFINITY);
        let keep = |found: &mut Vec<Relationship<'_>>, heaviest: &mut [f64; FLOOR_SLOTS]| {
            let w = found.last().map_or(f64::NEG_INFINITY, |r| r.weight);
            if limit <= FLOOR_SLOTS && w > heaviest[limit - 1] {
                let at = heaviest[..limit].partition_point(|&h| h >= w);
                heaviest.copy_within(at..limit - 1, at + 1);
                heaviest[at] = w;
                floor.set(heaviest[limit - 1]);
            }
            if found.len() >= batch && limit < found.len() {
                found.select_nth_unstable_by(limit - 1, order);
                found.truncate(limit);
            }
        };
        let heavy_enough = |w: f64| w >= floor.get();
        if direction != Direction::Incoming {
            for r in graph
                .outgoing_where(id, heavy_enough)
                .filter_map(Relationship::from_edge)
                .filter(|r| wanted(r))
            {
                found.push(r);
                keep(&mut found, &mut heaviest);
            }
        }
        if direction != Direction::Outgoing {
            let both = direction == Direction::Both;
            let listed = graph
                .incoming_where(id, heavy_enough)
                .filter_map(Relationship::from_edge)
                .filter(|r| wanted(r))
                .filter(|r| {
                    // A symmetric pair is listed once, from the outgoing side.
                    !(both
                        && r.source != id
                        && self.state.registry.is_symmetric(r.relationship)
                        && graph
                            .find_edge(id, r.source, Some(edge_kind_of(r.relationship)), Some(r.relationship))
                            .is_some())
                });
            for r in listed {
                found.push(r);
                keep(&mut found, &mut heaviest);
            }
        }
        if limit < found.len() {
            found.select_nth_unstable_by(limit - 1, order);
            found.truncate(limit);
        }
        found.sort_by(order);
        Ok(found)
    }

    /// Every relationship of concept `id`, both directions, at most 100 (the original's
    /// `get_all_for`).
    pub fn relationships_of(&self, id: RecordId) -> Result<Vec<Relationship<'_>>> {
        self.find_relationships(id, None, Direction::Both, 100)
    }

    /// Changes the existing relationship `source → target` of type `relationship` (and its
    /// reverse for a symmetric type): the weight is replaced when given; the confidence is set
    /// when given, else moved by the delta and clamped to `[0.05, 0.95]`. Returns false when
    /// there is no such relationship.
    ///
    /// Errors (nothing changes): an unknown type or concept, a value that is NaN or out of
    /// range (weight and confidence in `[0, 1]`, delta finite).
    pub fn update_relationship(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        update: EdgeUpdate,
    ) -> Result<bool> {
        self.state.registry.require(relationship)?;
        let weight = update.weight.map(check_weight).transpose()?;
        let confidence = update.confidence.map(|c| check_unit("confidence", c)).transpose()?;
        let delta =
            update.confidence_delta.map(|d| maxim_core::check_finite("confidence_delta", d)).transpose()?;
        self.state.require(source)?;
        self.state.require(target)?;
        let kind = edge_kind_of(relationship);
        let Some(edge) = self.state.graph.find_edge(source, target, Some(kind), Some(relationship)) else {
            return Ok(false);
        };
        let old = edge.confidence().unwrap_or(DEFAULT_RELATIONSHIP_CONFIDENCE);
        let confidence = match (confidence, delta) {
            (Some(c), _) => Some(c),
            (None, Some(d)) => {
                Some((old + d).clamp(MIN_RELATIONSHIP_CONFIDENCE, MAX_RELATIONSHIP_CONFIDENCE))
            }
            (None, None) => None,
        };
        let relationship = relationship.to_owned();
        let op = Op::UpdateRelationship { source, target, relationship, weight, confidence };
        Ok(matches!(self.commit(op)?, Applied::Flag(true)))
    }

    /// Sets the weight and the confidence given of the relationship `source → target` (and of
    /// its reverse for a symmetric type); false when there is no such relationship. The
    /// numbers were checked, so the graph takes them.
    pub(crate) fn apply_update_relationship(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: Option<f64>,
        confidence: Option<f64>,
    ) -> bool {
        let symmetric = self.state.registry.is_symmetric(relationship);
        let kind = edge_kind_of(relationship);
        let meta = confidence.map(|c| EdgeMeta { confidence: Some(c), ..EdgeMeta::default() });
        let graph = &mut self.state.graph;
        let found = graph
            .update_edge(source, target, kind, Some(relationship), weight, meta.as_ref())
            .unwrap_or(false);
        if found && symmetric && source != target {
            let _ = graph.update_edge(target, source, kind, Some(relationship), weight, meta.as_ref());
        }
        found
    }

    /// Registers a relationship type proposed at run time (see
    /// [`RelationshipRegistry::propose`](crate::RelationshipRegistry::propose)); false when the
    /// name is known.
    pub fn propose_relationship_type(
        &mut self,
        name: &str,
        description: &str,
        symmetric: bool,
    ) -> Result<bool> {
        self.propose_relationship_type_with(name, description, symmetric, false)
    }

    /// [`propose_relationship_type`](Self::propose_relationship_type) with the choice of
    /// allowing a concept to stand in the relationship to itself.
    pub fn propose_relationship_type_with(
        &mut self,
        name: &str,
        description: &str,
        symmetric: bool,
        reflexive: bool,
    ) -> Result<bool> {
        check_type_name(name)?;
        if self.state.registry.contains(name) {
            return Ok(false);
        }
        let op = Op::ProposeType {
            name: name.to_owned(),
            description: description.to_owned(),
            symmetric,
            reflexive,
        };
        Ok(matches!(self.commit(op)?, Applied::Flag(true)))
    }

    /// Spreading activation from `seeds` with `params`: up to `limit` concepts (seeds excluded)
    /// with their activation, strongest first (ties by id). No access is recorded.
    pub fn recall_associated_with(
        &self,
        seeds: &[RecordId],
        limit: usize,
        params: &ActivationParams,
    ) -> Vec<(&SemanticRecord, f64)> {
        let _s = tracing::debug_span!("atl_recall_associated", n_seeds = seeds.len(), limit).entered();
        if limit == 0 {
            return Vec::new();
        }
        let ranked = self.state.graph.spread(seeds, params).ranked(Some(limit));
        self.resolve(&ranked)
    }

    /// The records of `ranked` with their activations, in order (ids no longer held are
    /// skipped).
    fn resolve(&self, ranked: &[(RecordId, f64)]) -> Vec<(&SemanticRecord, f64)> {
        // Two passes: the hash probes of all results are independent, so the processor
        // overlaps their cache misses instead of waiting for each record in turn.
        let mut inline = [u32::MAX; RESOLVE_INLINE];
        let mut heap = Vec::new();
        let slots: &mut [u32] = if ranked.len() <= RESOLVE_INLINE {
            &mut inline[..ranked.len()]
        } else {
            heap.resize(ranked.len(), u32::MAX);
            &mut heap
        };
        for (slot, (id, _)) in slots.iter_mut().zip(ranked) {
            *slot = self.state.slots.get(id).copied().unwrap_or(u32::MAX);
        }
        let mut out = Vec::with_capacity(ranked.len());
        for (&slot, &(_, a)) in slots.iter().zip(ranked) {
            if let Some(record) = self.state.records.get(slot as usize) {
                out.push((record, a));
            }
        }
        out
    }

    /// The original's `recall_associated`: as
    /// [`recall_associated`](maxim_core::MemoryLayer::recall_associated), then records an access
    /// to each concept returned. Returns ids and activations.
    pub fn recall_associated_touching(&mut self, seeds: &[RecordId], limit: usize) -> Vec<(RecordId, f64)> {
        let found: Vec<(RecordId, f64)> = self
            .recall_associated_with(seeds, limit, &self.config.activation)
            .into_iter()
            .map(|(r, a)| (r.id(), a))
            .collect();
        let ids: Vec<RecordId> = found.iter().map(|f| f.0).collect();
        self.touch(&ids);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec;
    use maxim_core::{ManualClock, Timestamp};

    fn layer_with(n: usize) -> (Atl, Vec<RecordId>) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut atl = Atl::builder().clock(clock.shared()).id_seed(5).build().unwrap();
        let ids = (0..n).map(|j| atl.find_or_create(&spec(&format!("c {j}"), "x")).unwrap().id).collect();
        (atl, ids)
    }

    #[test]
    fn recall_resolves_every_limit_in_rank_order() {
        let (mut atl, ids) = layer_with(60);
        for (i, &b) in ids[1..].iter().enumerate() {
            atl.define_relationship(ids[0], b, "HAS_PART", 0.2 + (i % 7) as f64 / 10.0, 0.5).unwrap();
        }
        let params = atl.config.activation;
        for limit in [1, 10, RESOLVE_INLINE, RESOLVE_INLINE + 1, 100] {
            let got: Vec<(RecordId, f64)> = atl
                .recall_associated_with(&[ids[0]], limit, &params)
                .into_iter()
                .map(|(r, a)| (r.id(), a))
                .collect();
            let want = atl.concept_graph().spread(&[ids[0]], &params).ranked(Some(limit));
            assert_eq!(got, want, "limit {limit}");
            assert_eq!(got.len(), limit.min(59));
        }
    }

    #[test]
    fn confidence_reinforcement_rule() {
        assert_eq!(reinforced_confidence(0.5, 0.5), 0.55);
        assert_eq!(reinforced_confidence(0.3, 0.6), 0.65);
        assert_eq!(reinforced_confidence(0.93, 0.5), 0.95);
        assert_eq!(reinforced_confidence(0.97, 0.5), 0.97);
    }

    #[test]
    fn update_clamps_relative_changes_on_both_directions() {
        let (mut atl, ids) = layer_with(2);
        atl.define_relationship(ids[0], ids[1], "CORRELATES_WITH", 1.0, 0.3).unwrap();
        let up = EdgeUpdate { confidence_delta: Some(0.9), ..EdgeUpdate::default() };
        assert!(atl.update_relationship(ids[0], ids[1], "CORRELATES_WITH", up).unwrap());
        for (s, t) in [(ids[0], ids[1]), (ids[1], ids[0])] {
            let r = atl.find_relationships(s, Some("CORRELATES_WITH"), Direction::Outgoing, 5).unwrap();
            assert_eq!((r[0].target, r[0].confidence), (t, 0.95), "[run] +0.9 on 0.3");
        }
        let down = EdgeUpdate { confidence_delta: Some(-5.0), weight: Some(0.4), ..EdgeUpdate::default() };
        assert!(atl.update_relationship(ids[1], ids[0], "CORRELATES_WITH", down).unwrap());
        let r = atl.find_relationships(ids[0], None, Direction::Outgoing, 5).unwrap();
        assert_eq!((r[0].confidence, r[0].weight), (0.05, 0.4), "[run] -5");
        let both =
            EdgeUpdate { confidence: Some(0.99), confidence_delta: Some(-1.0), ..EdgeUpdate::default() };
        assert!(atl.update_relationship(ids[0], ids[1], "CORRELATES_WITH", both).unwrap());
        assert_eq!(atl.find_relationships(ids[1], None, Direction::Outgoing, 5).unwrap()[0].confidence, 0.99);
        assert!(!atl.update_relationship(ids[0], ids[1], "IS_A", EdgeUpdate::default()).unwrap());
        let nan = EdgeUpdate { confidence_delta: Some(f64::NAN), ..EdgeUpdate::default() };
        assert!(atl.update_relationship(ids[0], ids[1], "CORRELATES_WITH", nan).is_err());
    }

    #[test]
    fn causes_travels_as_a_causal_edge() {
        let (mut atl, ids) = layer_with(2);
        atl.define_relationship(ids[0], ids[1], "CAUSES", 0.7, 0.6).unwrap();
        atl.define_relationship(ids[0], ids[1], "IS_A", 0.7, 0.6).unwrap();
        let g = atl.concept_graph();
        assert_eq!(g.find_edge(ids[0], ids[1], Some(EdgeKind::Causes), Some("CAUSES")).unwrap().weight, 0.7);
        assert!(g.find_edge(ids[0], ids[1], Some(EdgeKind::Associates), Some("IS_A")).is_some());
        assert_eq!(g.edge_count(), 2);
        assert_eq!(atl.remove_relationship(ids[0], ids[1], None).unwrap(), 2);
        assert_eq!(atl.concept_graph().edge_count(), 0);
    }

    #[test]
    fn both_directions_list_a_symmetric_pair_once() {
        let (mut atl, ids) = layer_with(3);
        atl.define_relationship(ids[0], ids[1], "RELATED_TO", 0.5, 0.5).unwrap();
        atl.define_relationship(ids[2], ids[0], "IS_A", 0.9, 0.5).unwrap();
        let all = atl.relationships_of(ids[0]).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].source, all[0].relationship), (ids[2], "IS_A"));
        assert_eq!(all[1].other(ids[0]), ids[1]);
        let incoming = atl.find_relationships(ids[0], None, Direction::Incoming, 10).unwrap();
        assert_eq!(incoming.len(), 2, "incoming lists the reverse of the symmetric pair");
        assert_eq!(atl.find_relationships(ids[0], None, Direction::Both, 1).unwrap().len(), 1);
    }

    #[test]
    fn reflexive_proposed_types_allow_self_relationships() {
        let (mut atl, ids) = layer_with(1);
        assert!(atl.propose_relationship_type_with("REFINES", "", false, true).unwrap());
        assert!(atl.propose_relationship_type("SAME_AS", "", true).unwrap());
        atl.define_relationship(ids[0], ids[0], "REFINES", 0.5, 0.5).unwrap();
        assert!(matches!(
            atl.define_relationship(ids[0], ids[0], "SAME_AS", 0.5, 0.5),
            Err(Error::SelfRelationship { .. })
        ));
        assert_eq!(atl.concept_graph().edge_count(), 1);
        assert_eq!(atl.remove_relationship(ids[0], ids[0], Some("REFINES")).unwrap(), 1);
    }
}
