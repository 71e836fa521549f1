//! The core protocol the procedural layer speaks: [`MemoryLayer`], so a hub holds it beside
//! the other layers.
//!
//! `get` and `touch` record an access; `peek`, `recall`, `recall_by_ids` and
//! `recall_associated` never do. The layer's associative graph links skills that share tools
//! (ASSOCIATES, weighted by the Jaccard similarity of their tool sets) and skills that follow
//! one another (CAUSES, [`Cerebellum::link_sequence`]).
//!
//! ```
//! use cerebellum::{Cerebellum, SkillFilter, SkillStatus, Step};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp};
//! let mut cb = Cerebellum::builder().clock(ManualClock::new(Timestamp::from_secs(1_700_000_000)).shared()).build()?;
//! let a = cb.new_skill("rotate logs", vec![Step::read("ls", "dir"), Step::write("gzip", "file")], &["ls(dir)"])?;
//! let b = cb.new_skill("compress backups", vec![Step::read("ls", "dir"), Step::write("gzip", "file")], &["ls(dir)"])?;
//! let (a, b) = (cb.store(a)?, cb.store(b)?);
//! assert_eq!(cb.recall_associated(&[a], 10)[0].0.meta.id, b); // they share every tool
//! assert_eq!(cb.recall(&SkillFilter::new().status(SkillStatus::Candidate), 10).len(), 2);
//! assert_eq!(cb.stats().counters["skills_stored"], 2);
//! # Ok::<(), cerebellum::Error>(())
//! ```

use std::path::Path;

use maxim_core::layer::{CaptureCallback, ConsolidationReport, DeleteCallback, LayerStats};
use maxim_core::{GraphView, MemoryLayer, RecordId};

use crate::error::{Error, Result};
use crate::skill::{Skill, SkillStatus};
use crate::store::{Cerebellum, LAYER_NAME, SkillFilter};

impl MemoryLayer for Cerebellum {
    type Record = Skill;
    type Filter = SkillFilter;
    type Error = Error;

    fn name(&self) -> &'static str {
        LAYER_NAME
    }

    fn store(&mut self, record: Skill) -> Result<RecordId> {
        self.insert(record)
    }

    fn get(&mut self, id: RecordId) -> Result<&Skill> {
        Cerebellum::get(self, id)
    }

    fn peek(&self, id: RecordId) -> Option<&Skill> {
        self.skill(id)
    }

    fn remove(&mut self, id: RecordId) -> Result<Skill> {
        self.remove_skill(id)
    }

    fn recall(&self, filter: &SkillFilter, limit: usize) -> Vec<&Skill> {
        self.recall_skills(filter, limit)
    }

    fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&Skill, f64)> {
        self.recall_associated_with(seeds, limit, &self.config.activation)
    }

    fn graph(&self) -> &dyn GraphView {
        &self.state.graph
    }

    fn save(&self, path: &Path) -> Result<()> {
        Cerebellum::save(self, path)
    }

    fn load(&mut self, path: &Path) -> Result<()> {
        Cerebellum::load(self, path)
    }

    fn consolidate(&mut self) -> Result<ConsolidationReport> {
        self.consolidate_now()
    }

    fn on_capture(&mut self, callback: CaptureCallback<Skill>) {
        self.callbacks.add_capture(callback);
    }

    fn on_delete(&mut self, callback: DeleteCallback) {
        self.callbacks.add_delete(callback);
    }

    /// Records and long-term (active) counts, the graph's size, and the counters:
    /// `skills_stored`, `distilled`, `reinforced`, `skipped_unverified`, `skipped_low_trust`,
    /// `skipped_retired`, `uses`, `successes`, `failures`, `promotions`, `confirmations`,
    /// `retirements`, `revocations`, `removals`, `consolidations`, `sequence_links`,
    /// `queries`, `callback_failures`, and the gauges `candidate`, `awaiting_confirmation`,
    /// `active`, `retired`.
    fn stats(&self) -> LayerStats {
        let mut counters: std::collections::BTreeMap<String, u64> =
            self.state.counters.to_pairs().into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        counters.insert("queries".into(), self.queries());
        counters.insert(maxim_core::CALLBACK_FAILURES.into(), self.callbacks.failures());
        let mut by_status = [0u64; 4];
        for skill in self.state.iter() {
            by_status[skill.status as usize] += 1;
        }
        for (name, status) in [
            ("candidate", SkillStatus::Candidate),
            ("awaiting_confirmation", SkillStatus::AwaitingConfirmation),
            ("active", SkillStatus::Active),
            ("retired", SkillStatus::Retired),
        ] {
            counters.insert(name.into(), by_status[status as usize]);
        }
        LayerStats {
            layer: LAYER_NAME.to_owned(),
            records: self.state.len(),
            compressed: 0,
            long_term: self.state.iter().filter(|s| s.meta.long_term).count(),
            graph_nodes: self.state.graph.node_count(),
            graph_edges: self.state.graph.edge_count(),
            counters,
        }
    }

    fn len(&self) -> usize {
        self.skill_count()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &Skill> + '_> {
        Box::new(self.state.iter())
    }

    fn touch(&mut self, ids: &[RecordId]) -> usize {
        Cerebellum::touch(self, ids)
    }
}
