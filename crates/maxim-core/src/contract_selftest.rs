//! A minimal [`MemoryLayer`] that runs the contract suite, proving the suite itself and
//! showing, in one place, what implementing the protocol takes.

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::contracts::GraphView;
use crate::graph::{ActivationParams, EdgeKind, Graph};
use crate::layer::{
    Callbacks, CaptureCallback, ConsolidationReport, DeleteCallback, LayerStats, MemoryLayer, MemoryRecord,
};
use crate::ownership::FileClaims;
use crate::testing::ContractFixture;
use crate::{
    Error, IdGenerator, RecordId, RecordMeta, Result, SharedClock, Source, Timestamp, TraceKind, codec,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    meta: RecordMeta,
    text: String,
}

impl MemoryRecord for Note {
    fn meta(&self) -> &RecordMeta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut RecordMeta {
        &mut self.meta
    }
    fn is_compressed(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        self.text.clone()
    }
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    notes: Vec<Note>,
    graph: Graph,
}

struct NoteLayer {
    clock: SharedClock,
    notes: Vec<Note>,
    slot_of: FxHashMap<RecordId, usize>,
    graph: Graph,
    callbacks: Callbacks<Note>,
    claims: FileClaims,
}

impl NoteLayer {
    fn new(clock: SharedClock) -> Self {
        Self {
            clock,
            notes: Vec::new(),
            slot_of: FxHashMap::default(),
            graph: Graph::new(),
            claims: FileClaims::new(),
            callbacks: Callbacks::new("notes"),
        }
    }

    fn reindex(&mut self) {
        self.slot_of = self.notes.iter().enumerate().map(|(i, n)| (n.meta.id, i)).collect();
    }
}

impl MemoryLayer for NoteLayer {
    type Record = Note;
    type Filter = ();
    type Error = Error;

    fn name(&self) -> &'static str {
        "notes"
    }

    fn store(&mut self, record: Note) -> Result<RecordId> {
        let id = record.meta.id;
        if self.slot_of.contains_key(&id) {
            return Err(Error::Duplicate { id });
        }
        self.graph.add_node(id)?;
        self.slot_of.insert(id, self.notes.len());
        self.notes.push(record);
        self.callbacks.fire_capture(id, &self.notes[self.notes.len() - 1]);
        Ok(id)
    }

    fn get(&mut self, id: RecordId) -> Result<&Note> {
        let slot = *self.slot_of.get(&id).ok_or(Error::NotFound { id })?;
        let now = self.clock.now();
        self.notes[slot].meta.touch(now);
        Ok(&self.notes[slot])
    }

    fn peek(&self, id: RecordId) -> Option<&Note> {
        self.slot_of.get(&id).map(|&slot| &self.notes[slot])
    }

    fn remove(&mut self, id: RecordId) -> Result<Note> {
        let slot = self.slot_of.remove(&id).ok_or(Error::NotFound { id })?;
        let note = self.notes.swap_remove(slot);
        if let Some(moved) = self.notes.get(slot) {
            self.slot_of.insert(moved.meta.id, slot);
        }
        self.graph.remove_node(id);
        self.callbacks.fire_delete(id);
        Ok(note)
    }

    fn recall(&self, (): &(), limit: usize) -> Vec<&Note> {
        self.notes.iter().rev().take(limit).collect()
    }

    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&Note, f64)> {
        let params = ActivationParams::new(0.5, 0.05, 3).expect("valid parameters");
        self.graph
            .spread(seeds, &params)
            .ranked(Some(limit))
            .into_iter()
            .filter_map(|(id, score)| self.peek(id).map(|n| (n, score)))
            .collect()
    }

    fn graph(&self) -> &dyn GraphView {
        &self.graph
    }

    fn save(&self, path: &Path) -> Result<()> {
        let snapshot = Snapshot { notes: self.notes.clone(), graph: self.graph.clone() };
        self.claims.save(path, "notes", &snapshot)?;
        Ok(())
    }

    fn load(&mut self, path: &Path) -> Result<()> {
        let snapshot: Snapshot = codec::load(path, "notes")?;
        self.notes = snapshot.notes;
        self.graph = snapshot.graph;
        self.reindex();
        self.claims.claim(path);
        Ok(())
    }

    fn consolidate(&mut self) -> Result<ConsolidationReport> {
        let now = self.clock.now();
        let stale: Vec<RecordId> = self
            .notes
            .iter()
            .filter(|n| now.days_since(n.meta.accessed_at) > 365.0)
            .map(|n| n.meta.id)
            .collect();
        for &id in &stale {
            self.remove(id)?;
        }
        Ok(ConsolidationReport {
            removed: stale.len(),
            preserved: self.notes.len(),
            ..ConsolidationReport::default()
        })
    }

    fn on_capture(&mut self, callback: CaptureCallback<Note>) {
        self.callbacks.add_capture(callback);
    }

    fn on_delete(&mut self, callback: DeleteCallback) {
        self.callbacks.add_delete(callback);
    }

    fn stats(&self) -> LayerStats {
        LayerStats {
            layer: "notes".into(),
            records: self.notes.len(),
            graph_nodes: self.graph.node_count(),
            graph_edges: self.graph.edge_count(),
            counters: [(crate::CALLBACK_FAILURES.to_owned(), self.callbacks.failures())].into(),
            ..LayerStats::default()
        }
    }

    fn len(&self) -> usize {
        self.notes.len()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &Note> + '_> {
        Box::new(self.notes.iter())
    }

    fn touch(&mut self, ids: &[RecordId]) -> usize {
        let now = self.clock.now();
        ids.iter()
            .filter_map(|id| self.slot_of.get(id).copied())
            .map(|slot| self.notes[slot].meta.touch(now))
            .count()
    }
}

struct Fixture;

impl ContractFixture for Fixture {
    type Layer = NoteLayer;

    fn new_layer(&self, clock: SharedClock) -> NoteLayer {
        NoteLayer::new(clock)
    }

    fn record(&self, _layer: &mut NoteLayer, n: usize, now: Timestamp) -> Note {
        let mut ids = IdGenerator::seeded(n as u64);
        let meta = RecordMeta::new(ids.next_id(now), now, Source::UserStated, 1.0, TraceKind::Semantic)
            .expect("valid meta");
        Note { meta, text: format!("note {n}") }
    }

    fn associate(&self, layer: &mut NoteLayer, a: RecordId, b: RecordId) {
        layer.graph.add_edge(a, b, EdgeKind::Associates, 0.8, None).expect("valid edge");
    }
}

crate::contract_tests!(Fixture);
