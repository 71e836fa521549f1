//! The core protocol the mathematical layer speaks: [`MemoryLayer`], so a hub holds it
//! beside the other layers.
//!
//! `get` and `touch` record an access; `peek`, `recall`, `recall_by_ids` and
//! `recall_associated` never do (the original's touching reads are
//! [`AngularGyrus::recall_touching`] and [`AngularGyrus::recall_associated_touching`]).
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory, MathFilter};
//! use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, Timestamp};
//! let mut ag = AngularGyrus::builder().clock(ManualClock::new(Timestamp::from_secs(1_700_000_000)).shared()).build()?;
//! let r = ag.new_record("speed_of_light", MathCategory::Constant, "physics")?;
//! let id = ag.store(r.into())?;
//! assert_eq!(ag.get(id)?.meta().access_count, 2);
//! assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Constant), 10).len(), 4);
//! assert_eq!(ag.stats().counters["total_stores"], 1);
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::path::Path;
use std::sync::atomic::Ordering;

use maxim_core::layer::{CaptureCallback, ConsolidationReport, DeleteCallback, LayerStats};
use maxim_core::{GraphView, MemoryLayer, MemoryRecord, RecordId};

use crate::error::{Error, Result};
use crate::record::MathEntry;
use crate::store::{AngularGyrus, LAYER_NAME, MathFilter};

impl MemoryLayer for AngularGyrus {
    type Record = MathEntry;
    type Filter = MathFilter;
    type Error = Error;

    fn name(&self) -> &'static str {
        LAYER_NAME
    }

    fn store(&mut self, record: MathEntry) -> Result<RecordId> {
        self.insert(record)
    }

    fn get(&mut self, id: RecordId) -> Result<&MathEntry> {
        AngularGyrus::get(self, id)
    }

    fn peek(&self, id: RecordId) -> Option<&MathEntry> {
        self.record(id)
    }

    fn remove(&mut self, id: RecordId) -> Result<MathEntry> {
        self.remove_record(id)
    }

    fn recall(&self, filter: &MathFilter, limit: usize) -> Vec<&MathEntry> {
        self.recall_records(filter, limit)
    }

    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&MathEntry, f64)> {
        self.associated(seeds, limit)
    }

    fn graph(&self) -> &dyn GraphView {
        self.math_graph()
    }

    fn save(&self, path: &Path) -> Result<()> {
        AngularGyrus::save(self, path)
    }

    fn load(&mut self, path: &Path) -> Result<()> {
        AngularGyrus::load(self, path)
    }

    fn consolidate(&mut self) -> Result<ConsolidationReport> {
        self.consolidate_now()
    }

    fn on_capture(&mut self, callback: CaptureCallback<MathEntry>) {
        self.callbacks.add_capture(callback);
    }

    fn on_delete(&mut self, callback: DeleteCallback) {
        self.callbacks.add_delete(callback);
    }

    /// Records, compressed and long-term counts, the graph's size, and the counters
    /// `total_stores`, `replacements`, `removals`, `compressions`, `consolidations`, `links`,
    /// `total_recalls`, `callback_failures`, and the gauges `patterns` and `built_ins`.
    fn stats(&self) -> LayerStats {
        let mut counters: std::collections::BTreeMap<String, u64> =
            self.state.counters.to_pairs().into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        counters.insert("total_recalls".into(), self.queries.load(Ordering::Relaxed));
        counters.insert("callback_failures".into(), self.callbacks.failures());
        let count = |f: &dyn Fn(&MathEntry) -> bool| self.state.records.iter().filter(|r| f(r)).count();
        counters.insert("patterns".into(), count(&|r| r.category() == crate::MathCategory::Pattern) as u64);
        counters.insert("built_ins".into(), count(&MathEntry::is_built_in) as u64);
        LayerStats {
            layer: LAYER_NAME.to_owned(),
            records: self.state.records.len(),
            compressed: count(&MathEntry::is_compressed),
            long_term: count(&|r| r.meta().long_term),
            graph_nodes: self.state.graph.node_count(),
            graph_edges: self.state.graph.edge_count(),
            counters,
        }
    }

    fn len(&self) -> usize {
        self.state.records.len()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &MathEntry> + '_> {
        Box::new(self.state.records.iter())
    }

    fn touch(&mut self, ids: &[RecordId]) -> usize {
        AngularGyrus::touch(self, ids)
    }
}
