//! The [`MemoryLayer`] protocol for [`Hippocampus`] (`spec/maxim-reference.md` §1.2).
//!
//! Every method delegates to the inherent method of the same name; `consolidate` is
//! [`Hippocampus::sleep`] and `stats` is [`Hippocampus::layer_stats`]. The trait's reads
//! record no access: `recall` is [`Hippocampus::recall`], not
//! [`Hippocampus::recall_touching`].
//!
//! ```
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode, RecallFilter};
//! use maxim_core::{LayerView, ManualClock, MemoryLayer, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let id = hippo.capture(NewEpisode::default())?;
//! let layer: &dyn LayerView = &hippo;
//! assert_eq!(layer.layer_name(), "hippocampus");
//! assert_eq!(layer.record_ids(), vec![id]);
//! assert_eq!(MemoryLayer::recall(&hippo, &RecallFilter::new(), 5).len(), 1);
//! assert!(hippo.stats().counters.contains_key("callback_failures"));
//! # Ok::<(), hippocampus::Error>(())
//! ```

use std::path::Path;

use maxim_core::contracts::GraphView;
use maxim_core::layer::{CaptureCallback, DeleteCallback};
use maxim_core::{ConsolidationReport, LayerStats, MemoryLayer, RecordId};

use crate::episode::Episode;
use crate::error::{Error, Result};
use crate::retrieval::RecallFilter;
use crate::store::{Hippocampus, LAYER_NAME};

impl MemoryLayer for Hippocampus {
    type Record = Episode;
    type Filter = RecallFilter;
    type Error = Error;

    fn name(&self) -> &'static str {
        LAYER_NAME
    }

    /// Captures a full episode as it is ([`Hippocampus::capture_record`]); a compressed
    /// record is refused with [`Error::CompressedStore`].
    fn store(&mut self, record: Episode) -> Result<RecordId> {
        match record {
            Episode::Full(m) => self.capture_record(*m),
            Episode::Compressed(c) => Err(Error::CompressedStore { id: c.meta.id }),
        }
    }

    fn get(&mut self, id: RecordId) -> Result<&Episode> {
        Hippocampus::get(self, id)
    }

    fn peek(&self, id: RecordId) -> Option<&Episode> {
        Hippocampus::peek(self, id)
    }

    fn remove(&mut self, id: RecordId) -> Result<Episode> {
        Hippocampus::remove(self, id)
    }

    fn recall(&self, filter: &RecallFilter, limit: usize) -> Vec<&Episode> {
        Hippocampus::recall(self, filter, limit)
    }

    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&Episode, f64)> {
        Hippocampus::recall_associated(self, seeds, limit)
    }

    fn graph(&self) -> &dyn GraphView {
        &self.graph
    }

    fn save(&self, path: &Path) -> Result<()> {
        Hippocampus::save(self, path)
    }

    fn load(&mut self, path: &Path) -> Result<()> {
        Hippocampus::load(self, path)
    }

    fn consolidate(&mut self) -> Result<ConsolidationReport> {
        Ok(self.sleep())
    }

    fn on_capture(&mut self, callback: CaptureCallback<Episode>) {
        Hippocampus::on_capture(self, callback);
    }

    fn on_delete(&mut self, callback: DeleteCallback) {
        Hippocampus::on_delete(self, callback);
    }

    fn stats(&self) -> LayerStats {
        self.layer_stats()
    }

    fn len(&self) -> usize {
        Hippocampus::len(self)
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &Episode> + '_> {
        Box::new(Hippocampus::iter(self))
    }

    fn touch(&mut self, ids: &[RecordId]) -> usize {
        Hippocampus::touch(self, ids)
    }
}
