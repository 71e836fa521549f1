//! Direct edits of the semantic layer through the hub, for a caller that states knowledge
//! instead of capturing episodes (the MCP server's entities, relations and observations).
//!
//! - [`MemoryHub::state_concept`] creates a concept exactly as stated: no similarity match
//!   merges it into another (only the same name, as the ATL normalises names, in the same
//!   category is the same concept);
//! - [`MemoryHub::set_concept_definition`] rewrites what a concept means;
//! - [`MemoryHub::relate`] and [`MemoryHub::unrelate`] add and remove one relationship by
//!   type name, proposing a type that is not built in;
//! - [`MemoryHub::link_instance`] links an episode to the concept it is about (the reference
//!   and the INSTANCE_OF edge a capture makes for the concepts it extracts), so that
//!   forgetting either end cascades as for any captured episode.
//!
//! Each call checks its arguments before it changes anything.

use atl::{DefineOutcome, MatchKind, SemanticRecord};
use maxim_core::{ConceptSpec, CrossEdgeKind, LayerKind, LayerRecord, RecordId, Trust};

use super::{Error, MemoryHub, Result};

impl MemoryHub {
    /// The concept `spec` states, created exactly as stated when its category holds no
    /// concept of the same name (as [`atl::names::name_key`] normalises names; no similarity
    /// match): `(id, created)`. The spec's definition, provenance, source and trust are the
    /// new concept's; an existing concept is returned unchanged.
    ///
    /// ```
    /// use maxim::MemoryHub;
    /// let mut hub = MemoryHub::builder().build()?;
    /// let (smith, created) = hub.state_concept(&maxim::atl::spec("John Smith", "person"))?;
    /// assert!(created);
    /// // A similar name is another person, not an alias; the same name is the same one.
    /// assert!(hub.state_concept(&maxim::atl::spec("John Smyth", "person"))?.1);
    /// assert_eq!(hub.state_concept(&maxim::atl::spec("john_smith", "person"))?, (smith, false));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors (nothing changes): a name without a letter or digit, a trust outside `[0, 1]`,
    /// a journal that refuses the write.
    pub fn state_concept(&mut self, spec: &ConceptSpec) -> Result<(RecordId, bool)> {
        Trust::new(spec.trust)?;
        if let Some((id, MatchKind::Exact)) = self.atl.lookup(&spec.name, &spec.category) {
            return Ok((id, false));
        }
        let concept = self
            .atl
            .new_concept(&spec.name, &spec.category)?
            .with_definition(spec.definition.clone())
            .with_provenance(spec.provenance)
            .with_source(spec.source.clone(), spec.trust)?;
        let id = self.atl.insert(SemanticRecord::Full(Box::new(concept)))?;
        // The insertion may have evicted a concept to make room: cascade it.
        let mut warnings = Vec::new();
        self.cascade_removed(&mut warnings);
        for w in warnings {
            tracing::warn!(concept = %id, "{w}");
        }
        self.index_knowledge(LayerRecord::new(LayerKind::Atl, id));
        Ok((id, true))
    }

    /// Sets what concept `id` means (and re-indexes it for recall).
    ///
    /// Errors: an unknown or compressed concept, a journal that refuses the write.
    pub fn set_concept_definition(&mut self, id: RecordId, definition: &str) -> Result<()> {
        self.atl.set_definition(id, definition)?;
        self.index_knowledge(LayerRecord::new(LayerKind::Atl, id));
        Ok(())
    }

    /// Relates concept `source` to concept `target` by the relationship type `relationship`
    /// (`[A-Z0-9_]`, starting with a letter), first proposing the type, not symmetric, with
    /// `description` when the ATL does not know it. Defining a relationship that exists
    /// reinforces it.
    ///
    /// Errors (nothing changes): a type name the registry refuses, an end that is not a held
    /// concept, a self-relationship, a weight or confidence outside `[0, 1]`.
    pub fn relate(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        description: &str,
        weight: f64,
        confidence: f64,
    ) -> Result<DefineOutcome> {
        maxim_core::check_unit("weight", weight)?;
        maxim_core::check_unit("confidence", confidence)?;
        for id in [source, target] {
            if self.atl.record(id).is_none() {
                return Err(Error::UnknownRecord { id });
            }
        }
        if source == target {
            return Err(
                atl::Error::SelfRelationship { id: source, relationship: relationship.to_owned() }.into()
            );
        }
        if !self.atl.registry().contains(relationship) {
            self.atl.propose_relationship_type(relationship, description, false)?;
        }
        Ok(self.atl.define_relationship(source, target, relationship, weight, confidence)?)
    }

    /// Removes the relationship `source → target` of type `relationship` (and its reverse
    /// when the type is symmetric); returns how many directed edges went, 0 when there was
    /// none or the type is unknown.
    ///
    /// Errors: an end that is not a held concept, a journal that refuses the write.
    pub fn unrelate(&mut self, source: RecordId, target: RecordId, relationship: &str) -> Result<usize> {
        if !self.atl.registry().contains(relationship) {
            return Ok(0);
        }
        Ok(self.atl.remove_relationship(source, target, Some(relationship))?)
    }

    /// Links episode `episode` to concept `concept` as an instance of it: the concept's
    /// reference to the episode and the INSTANCE_OF cross-layer edge, as a capture makes for
    /// the concepts it extracts (so forgetting the episode cascades into the concept).
    ///
    /// Errors (nothing changes): an episode or concept this hub does not hold, a compressed
    /// concept, a full cross-layer graph.
    pub fn link_instance(&mut self, episode: RecordId, concept: RecordId) -> Result<()> {
        if !self.hippocampus.contains(episode) {
            return Err(Error::UnknownRecord { id: episode });
        }
        if self.atl.concept(concept).is_none() {
            return Err(Error::UnknownRecord { id: concept });
        }
        let added = self.atl.add_ref(concept, LayerKind::Hippocampus, episode)?;
        let from = LayerRecord::new(LayerKind::Hippocampus, episode);
        let to = LayerRecord::new(LayerKind::Atl, concept);
        if let Err(e) =
            self.graph.add_edge(from, to, CrossEdgeKind::InstanceOf, crate::extract::INSTANCE_OF_WEIGHT)
        {
            if added {
                let _ = self.atl.remove_ref(concept, LayerKind::Hippocampus, episode);
            }
            return Err(e.into());
        }
        Ok(())
    }
}
