//! The protocol every memory layer implements (`spec/maxim-reference.md` §1.2).
//!
//! [`MemoryLayer`] is the typed protocol: a layer stores records of one type, recalls them
//! with a layer-specific filter, walks its associative graph, saves and loads itself,
//! consolidates, and tells registered callbacks about captures and deletions.
//! [`LayerView`] is its object-safe, record-independent part, implemented for every
//! `MemoryLayer`, so a hub can hold layers as `dyn LayerView`.
//!
//! Access bookkeeping is explicit: [`MemoryLayer::get`] and [`MemoryLayer::touch`] record an
//! access; [`MemoryLayer::peek`], [`MemoryLayer::recall`], [`MemoryLayer::recall_by_ids`] and
//! [`MemoryLayer::recall_associated`] do not (seed 004: reading never writes).

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::contracts::{BoxError, GraphView};
use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::RecordMeta;

/// What a layer's records have in common.
pub trait MemoryRecord: Clone + Send + Sync + 'static {
    /// The shared fields.
    fn meta(&self) -> &RecordMeta;

    /// The shared fields, for the layer to update.
    fn meta_mut(&mut self) -> &mut RecordMeta;

    /// True for the compressed form consolidation leaves behind.
    fn is_compressed(&self) -> bool;

    /// A one-line description for inspection (no more than the record's name or goal).
    fn describe(&self) -> String;

    /// The record's id.
    fn id(&self) -> RecordId {
        self.meta().id
    }
}

/// A callback told about every record stored, after the write.
pub type CaptureCallback<R> = Box<dyn Fn(RecordId, &R) -> Result<(), BoxError> + Send + Sync>;

/// A callback told about every record removed, after the removal.
pub type DeleteCallback = Box<dyn Fn(RecordId) -> Result<(), BoxError> + Send + Sync>;

/// The counts a consolidation pass returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsolidationReport {
    /// Records made long-term.
    pub promoted: usize,
    /// Full records replaced by their compressed form.
    pub compressed: usize,
    /// Records removed.
    pub removed: usize,
    /// Records kept as they were.
    pub preserved: usize,
}

/// Counts that describe a layer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerStats {
    /// The layer's name.
    pub layer: String,
    /// Records held, full and compressed.
    pub records: usize,
    /// Compressed records held.
    pub compressed: usize,
    /// Long-term records held.
    pub long_term: usize,
    /// Nodes of the associative graph.
    pub graph_nodes: usize,
    /// Directed edges of the associative graph.
    pub graph_edges: usize,
    /// Layer-specific counters (captures, queries, removals, callback failures, ...).
    pub counters: BTreeMap<String, u64>,
}

/// The memory-layer protocol.
pub trait MemoryLayer: Send + Sync {
    /// The record type (an enum when the layer also keeps a compressed form).
    type Record: MemoryRecord;
    /// The layer's recall filter; its default matches every record.
    type Filter: Default;
    /// The layer's error. It wraps the core [`Error`] and hands it back unwrapped
    /// (`Into<Error>`), so callers holding layers as [`LayerView`] see the core's typed errors
    /// (`NotFound`, `Corrupt`, ...) whatever the layer, and the layer's own errors as
    /// [`Error::Layer`].
    type Error: std::error::Error + Send + Sync + 'static + From<Error> + Into<Error>;

    /// The layer's name (`hippocampus`, `atl`, ...).
    fn name(&self) -> &'static str;

    /// Stores `record` and returns its id. Capture callbacks run after the write.
    fn store(&mut self, record: Self::Record) -> Result<RecordId, Self::Error>;

    /// The record `id`, recording an access. [`Error::NotFound`] when there is none.
    fn get(&mut self, id: RecordId) -> Result<&Self::Record, Self::Error>;

    /// The record `id`, without recording an access.
    fn peek(&self, id: RecordId) -> Option<&Self::Record>;

    /// Removes `id` from the records, every index and the graph (with all its edges), then
    /// runs the deletion callbacks. [`Error::NotFound`] when there is no such record.
    fn remove(&mut self, id: RecordId) -> Result<Self::Record, Self::Error>;

    /// Up to `limit` records matching `filter`, in the layer's documented order. No access
    /// is recorded.
    fn recall(&self, filter: &Self::Filter, limit: usize) -> Vec<&Self::Record>;

    /// The records among `ids` that exist, in the order given. No access is recorded.
    fn recall_by_ids(&self, ids: &[RecordId]) -> Vec<&Self::Record> {
        ids.iter().filter_map(|&id| self.peek(id)).collect()
    }

    /// Spreading activation from `seeds` with the layer's default parameters: up to `limit`
    /// records (seeds excluded) with their activation, strongest first.
    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&Self::Record, f64)>;

    /// The layer's associative graph.
    fn graph(&self) -> &dyn GraphView;

    /// Saves the whole layer to `path` atomically. The layers of this workspace refuse to
    /// overwrite a file they neither created nor read ([`Error::OverwriteRefused`]; see
    /// [`ownership`](crate::ownership)).
    fn save(&self, path: &Path) -> Result<(), Self::Error>;

    /// Replaces the layer's contents with the snapshot at `path`. On any error the layer is
    /// left exactly as it was.
    fn load(&mut self, path: &Path) -> Result<(), Self::Error>;

    /// One maintenance pass: promote, compress, decay, prune.
    fn consolidate(&mut self) -> Result<ConsolidationReport, Self::Error>;

    /// Registers a callback told about every stored record.
    fn on_capture(&mut self, callback: CaptureCallback<Self::Record>);

    /// Registers a callback told about every removed record.
    fn on_delete(&mut self, callback: DeleteCallback);

    /// Counts that describe the layer; `counters` includes [`CALLBACK_FAILURES`].
    fn stats(&self) -> LayerStats;

    /// Number of records, full and compressed.
    fn len(&self) -> usize;

    /// True when the layer holds no record.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every record, in no particular order.
    fn iter(&self) -> Box<dyn Iterator<Item = &Self::Record> + '_>;

    /// Records an access to each of `ids` that exists; returns how many.
    fn touch(&mut self, ids: &[RecordId]) -> usize;
}

/// The name of the [`LayerStats::counters`] entry that counts failed or panicking callbacks.
pub const CALLBACK_FAILURES: &str = "callback_failures";

/// The object-safe part of a [`MemoryLayer`], independent of its record type.
///
/// Implemented for every `MemoryLayer`; errors arrive as the core error they wrap, or as
/// [`Error::Layer`] for the layer's own.
pub trait LayerView: Send + Sync {
    /// The layer's name.
    fn layer_name(&self) -> &'static str;
    /// Number of records.
    fn record_count(&self) -> usize;
    /// True when `id` is held.
    fn contains(&self, id: RecordId) -> bool;
    /// The shared fields of record `id`, without recording an access.
    fn record_meta(&self, id: RecordId) -> Option<&RecordMeta>;
    /// A one-line description of record `id`.
    fn describe(&self, id: RecordId) -> Option<String>;
    /// Every record id, sorted (so oldest first).
    fn record_ids(&self) -> Vec<RecordId>;
    /// Removes record `id` as [`MemoryLayer::remove`] does.
    fn remove_by_id(&mut self, id: RecordId) -> Result<()>;
    /// The layer's statistics.
    fn layer_stats(&self) -> LayerStats;
    /// The layer's graph.
    fn graph_view(&self) -> &dyn GraphView;
    /// Saves the layer.
    fn save_to(&self, path: &Path) -> Result<()>;
    /// Loads the layer.
    fn load_from(&mut self, path: &Path) -> Result<()>;
    /// Runs one consolidation pass.
    fn consolidate_layer(&mut self) -> Result<ConsolidationReport>;
    /// Records an access to each of `ids`.
    fn touch_ids(&mut self, ids: &[RecordId]) -> usize;
}

impl<L: MemoryLayer> LayerView for L {
    fn layer_name(&self) -> &'static str {
        self.name()
    }
    fn record_count(&self) -> usize {
        self.len()
    }
    fn contains(&self, id: RecordId) -> bool {
        self.peek(id).is_some()
    }
    fn record_meta(&self, id: RecordId) -> Option<&RecordMeta> {
        self.peek(id).map(MemoryRecord::meta)
    }
    fn describe(&self, id: RecordId) -> Option<String> {
        self.peek(id).map(MemoryRecord::describe)
    }
    fn record_ids(&self) -> Vec<RecordId> {
        let mut ids: Vec<RecordId> = self.iter().map(MemoryRecord::id).collect();
        ids.sort_unstable();
        ids
    }
    fn remove_by_id(&mut self, id: RecordId) -> Result<()> {
        self.remove(id).map(drop).map_err(Into::into)
    }
    fn layer_stats(&self) -> LayerStats {
        self.stats()
    }
    fn graph_view(&self) -> &dyn GraphView {
        self.graph()
    }
    fn save_to(&self, path: &Path) -> Result<()> {
        self.save(path).map_err(Into::into)
    }
    fn load_from(&mut self, path: &Path) -> Result<()> {
        self.load(path).map_err(Into::into)
    }
    fn consolidate_layer(&mut self) -> Result<ConsolidationReport> {
        self.consolidate().map_err(Into::into)
    }
    fn touch_ids(&mut self, ids: &[RecordId]) -> usize {
        self.touch(ids)
    }
}

/// The capture and deletion callbacks of one layer.
///
/// A callback that returns an error or panics is contained: the failure is logged with
/// `tracing` and counted, the other callbacks still run, and the layer is unaffected.
pub struct Callbacks<R> {
    layer: &'static str,
    capture: Vec<CaptureCallback<R>>,
    delete: Vec<DeleteCallback>,
    failures: std::sync::atomic::AtomicU64,
}

impl<R> Callbacks<R> {
    /// No callbacks yet, for the layer named `layer`.
    pub fn new(layer: &'static str) -> Self {
        Self { layer, capture: Vec::new(), delete: Vec::new(), failures: 0.into() }
    }

    /// Registers a capture callback.
    pub fn add_capture(&mut self, cb: CaptureCallback<R>) {
        self.capture.push(cb);
    }

    /// Registers a deletion callback.
    pub fn add_delete(&mut self, cb: DeleteCallback) {
        self.delete.push(cb);
    }

    /// Tells every capture callback about `record`.
    pub fn fire_capture(&self, id: RecordId, record: &R) {
        for (idx, cb) in self.capture.iter().enumerate() {
            self.contain("capture", idx, id, || cb(id, record));
        }
    }

    /// Tells every deletion callback that `id` is gone.
    pub fn fire_delete(&self, id: RecordId) {
        for (idx, cb) in self.delete.iter().enumerate() {
            self.contain("delete", idx, id, || cb(id));
        }
    }

    /// Callback failures (errors and panics) so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Number of registered (capture, deletion) callbacks.
    pub fn counts(&self) -> (usize, usize) {
        (self.capture.len(), self.delete.len())
    }

    fn contain(
        &self,
        what: &'static str,
        idx: usize,
        id: RecordId,
        call: impl FnOnce() -> Result<(), BoxError>,
    ) {
        let outcome = catch_unwind(AssertUnwindSafe(call));
        let failure = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(err)) => err.to_string(),
            Err(panic) => panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".to_owned()),
        };
        self.failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(layer = self.layer, callback = what, index = idx, %id, error = %failure, "memory callback failed");
    }
}

impl<R> std::fmt::Debug for Callbacks<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callbacks")
            .field("layer", &self.layer)
            .field("capture", &self.capture.len())
            .field("delete", &self.delete.len())
            .field("failures", &self.failures())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn failing_and_panicking_callbacks_are_contained() {
        let mut cbs: Callbacks<u32> = Callbacks::new("test");
        let seen = Arc::new(AtomicUsize::new(0));
        cbs.add_capture(Box::new(|_, _| Err("refused".into())));
        cbs.add_capture(Box::new(|_, _| panic!("boom")));
        let s = Arc::clone(&seen);
        cbs.add_capture(Box::new(move |_, r| {
            s.fetch_add(*r as usize, Ordering::SeqCst);
            Ok(())
        }));
        cbs.add_delete(Box::new(|_| panic!("{}", String::from("owned boom"))));
        cbs.fire_capture(RecordId::from_u128(1), &5);
        cbs.fire_delete(RecordId::from_u128(1));
        assert_eq!(seen.load(Ordering::SeqCst), 5);
        assert_eq!(cbs.failures(), 3);
        assert_eq!(cbs.counts(), (3, 1));
    }
}
