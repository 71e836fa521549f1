//! The core protocols the semantic layer speaks: [`MemoryLayer`] (so a hub holds it beside
//! the other layers) and [`ConceptStore`] (what the promoter asks of it).
//!
//! `get` and `touch` record an access; `peek`, `recall`, `recall_by_ids` and
//! `recall_associated` never do (the original's touching `recall_associated` is
//! [`Atl::recall_associated_touching`]).
//!
//! ```
//! use atl::{Atl, ConceptFilter};
//! use maxim_core::{ConceptProvenance, ConceptSpec, ConceptStore, ManualClock, MemoryLayer, Source, Timestamp};
//! let mut atl = Atl::builder().clock(ManualClock::new(Timestamp::from_secs(1_700_000_000)).shared()).build().expect("the default settings are valid");
//! let spec = ConceptSpec {
//!     name: "tool navigate declining".into(),
//!     category: "operational_pattern".into(),
//!     definition: "navigate succeeds less and less".into(),
//!     provenance: ConceptProvenance::AgentInference,
//!     source_episode: None,
//!     source: Source::AgentInference,
//!     trust: 0.5,
//! };
//! let (id, created) = atl.find_or_create_concept(&spec)?;
//! assert!(created);
//! assert_eq!(atl.find_or_create_concept(&spec)?, (id, false));
//! assert_eq!(atl.recall_similar("navigate declining", 1)[0].0, id);
//! assert_eq!(atl.recall(&ConceptFilter::new().category("operational pattern"), 10).len(), 1);
//! assert_eq!(atl.stats().counters["concepts_stored"], 1);
//! # Ok::<(), atl::Error>(())
//! ```

use std::path::Path;

use maxim_core::layer::{CaptureCallback, ConsolidationReport, DeleteCallback, LayerStats};
use maxim_core::{ConceptSpec, ConceptStore, GraphView, MemoryLayer, MemoryRecord, RecordId};

use crate::concept::SemanticRecord;
use crate::error::{Error, Result};
use crate::filter::ConceptFilter;
use crate::relations::DefineOutcome;
use crate::store::{Atl, LAYER_NAME};

impl MemoryLayer for Atl {
    type Record = SemanticRecord;
    type Filter = ConceptFilter;
    type Error = Error;

    fn name(&self) -> &'static str {
        LAYER_NAME
    }

    fn store(&mut self, record: SemanticRecord) -> Result<RecordId> {
        self.insert(record)
    }

    fn get(&mut self, id: RecordId) -> Result<&SemanticRecord> {
        Atl::get(self, id)
    }

    fn peek(&self, id: RecordId) -> Option<&SemanticRecord> {
        self.record(id)
    }

    fn remove(&mut self, id: RecordId) -> Result<SemanticRecord> {
        self.remove_concept(id)
    }

    fn recall(&self, filter: &ConceptFilter, limit: usize) -> Vec<&SemanticRecord> {
        self.recall_concepts(filter, limit)
    }

    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&SemanticRecord, f64)> {
        self.recall_associated_with(seeds, limit, &self.config.activation)
    }

    fn graph(&self) -> &dyn GraphView {
        &self.state.graph
    }

    fn save(&self, path: &Path) -> Result<()> {
        self.save(path)
    }

    fn load(&mut self, path: &Path) -> Result<()> {
        self.load(path)
    }

    fn consolidate(&mut self) -> Result<ConsolidationReport> {
        self.consolidate_now()
    }

    fn on_capture(&mut self, callback: CaptureCallback<SemanticRecord>) {
        self.callbacks.add_capture(callback);
    }

    fn on_delete(&mut self, callback: DeleteCallback) {
        self.callbacks.add_delete(callback);
    }

    /// Records, compressed and long-term counts, the graph's size, and the counters:
    /// `concepts_stored`, `concepts_created`, `exact_hits`, `similarity_merges`,
    /// `similarity_comparisons`, `reinforcements`, `removals`, `evictions`, `compressions`,
    /// `consolidations`, `relationships_defined`, `relationships_reinforced`,
    /// `contradictions_reported`, `queries`, `callback_failures`, `journal_failures` (writes
    /// that cannot return an error, whose journal append failed), and the gauges
    /// `contested_concepts`, `relationship_types`, `index_keys`, `vectors`.
    fn stats(&self) -> LayerStats {
        let queries = self.queries.load(std::sync::atomic::Ordering::Relaxed);
        let mut counters: std::collections::BTreeMap<String, u64> =
            self.state.counters.to_pairs(queries).into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        counters.insert("callback_failures".into(), self.callbacks.failures());
        counters.insert("journal_failures".into(), self.journal_failures);
        counters.insert("contested_concepts".into(), self.state.contested.len() as u64);
        counters.insert("relationship_types".into(), self.state.registry.len() as u64);
        counters.insert("index_keys".into(), self.state.index.key_count() as u64);
        counters.insert("vectors".into(), self.state.vectors.len() as u64);
        LayerStats {
            layer: LAYER_NAME.to_owned(),
            records: self.state.len(),
            compressed: self.compressed_count(),
            long_term: self.state.records.iter().filter(|r| r.meta().long_term).count(),
            graph_nodes: self.state.graph.node_count(),
            graph_edges: self.state.graph.edge_count(),
            counters,
        }
    }

    fn len(&self) -> usize {
        self.state.len()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &SemanticRecord> + '_> {
        Box::new(self.state.records.iter())
    }

    fn touch(&mut self, ids: &[RecordId]) -> usize {
        Atl::touch(self, ids)
    }
}

impl ConceptStore for Atl {
    type Error = Error;

    fn find_or_create_concept(&mut self, spec: &ConceptSpec) -> Result<(RecordId, bool)> {
        Atl::find_or_create(self, spec).map(|f| (f.id, f.created))
    }

    fn reinforce_concept(&mut self, id: RecordId, episode: Option<RecordId>) -> Result<()> {
        Atl::reinforce(self, id, episode)
    }

    fn similar_concepts(&self, text: &str, k: usize) -> Vec<(RecordId, f64)> {
        Atl::recall_similar(self, text, k)
    }

    fn relate_concepts(
        &mut self,
        source: RecordId,
        target: RecordId,
        relationship: &str,
        weight: f64,
        confidence: f64,
    ) -> Result<()> {
        self.define_relationship(source, target, relationship, weight, confidence).map(|_: DefineOutcome| ())
    }

    fn set_concept_property(
        &mut self,
        id: RecordId,
        key: &str,
        value: maxim_core::Value,
        source: &maxim_core::Source,
        trust: f64,
    ) -> Result<()> {
        self.set_property(id, key, value, source.clone(), trust).map(drop)
    }
}
