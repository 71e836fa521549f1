//! Consolidation (§4.6): concepts decay over 30 days without access, rarely used ones are
//! compressed, and forgotten ones are removed.
//!
//! Each concept is scored with the access-based retention rule of the original
//! (`spec/maxim-reference.md` §3.7, with the ATL's 30-day maximum age):
//!
//! ```text
//! recency = max(0, 1 - days since last access / 30)
//! access  = min(1, access_count / 5)
//! central = min(1, degree / 20)          degree = outgoing relationship edges + references
//! score   = 0.5 recency + 0.2 access + 0.3 central,  at least 0.8 when accessed 10 times
//! ```
//!
//! A score below 0.2 removes the concept (deletion callbacks run); a full concept scoring below
//! 0.4 is compressed when it is at least 7 days old and was accessed fewer than 5 times. A
//! contested concept is never compressed: compression drops properties, and with them the
//! open contradiction (seed 004).
//!
//! ```
//! use atl::{Atl, spec};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp, days};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut atl = Atl::with_clock(clock.shared());
//! let mug = atl.find_or_create(&spec("mug", "object"))?.id;
//! assert_eq!(atl.consolidate()?.preserved, 1);
//! clock.advance(days(20)); // recency 1/3: score 0.5/3 + 0.2/5 = 0.207, old enough to compress
//! assert_eq!(atl.consolidate()?.compressed, 1);
//! assert!(atl.record(mug).unwrap().as_compressed().is_some());
//! clock.advance(days(20));
//! assert_eq!(atl.consolidate()?.removed, 1);
//! assert!(atl.is_empty());
//! # Ok::<(), atl::Error>(())
//! ```

use maxim_core::layer::ConsolidationReport;
use maxim_core::{MemoryRecord, RecordId, RecordMeta, Timestamp};

use crate::concept::{CompressedSemantic, SemanticRecord};
use crate::error::Result;
use crate::store::{Atl, AtlConfig};

/// Access count from which the access term is full.
const ACCESS_FULL: f64 = 5.0;
/// Degree from which the centrality term is full.
const DEGREE_FULL: f64 = 20.0;
/// Access count from which the score is at least [`FREQUENT_FLOOR`].
const FREQUENT_ACCESSES: u32 = 10;
/// Score floor of frequently accessed concepts.
const FREQUENT_FLOOR: f64 = 0.8;
/// Access count from which a concept is never compressed.
const NO_COMPRESS_ACCESSES: u32 = 5;

/// The access-based retention score of a record with `meta` and `degree` at `now` (see the
/// [module docs](self)).
///
/// ```
/// use atl::{AtlConfig, retention_score};
/// use maxim_core::{RecordId, RecordMeta, Source, Timestamp, TraceKind, days};
/// let t0 = Timestamp::from_secs(0);
/// let mut meta = RecordMeta::new(RecordId::from_u128(1), t0, Source::Episodic, 0.6, TraceKind::Semantic)?;
/// meta.access_count = 3;
/// let config = AtlConfig::default();
/// assert!((retention_score(&meta, 2, t0, &config) - 0.65).abs() < 1e-12);
/// assert!((retention_score(&meta, 0, t0 + days(15), &config) - 0.37).abs() < 1e-12);
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn retention_score(meta: &RecordMeta, degree: usize, now: Timestamp, config: &AtlConfig) -> f64 {
    let max_age = config.max_age_without_access.as_secs_f64();
    let age = now.secs_since(meta.accessed_at).max(0.0);
    let recency = if age >= max_age { 0.0 } else { 1.0 - age / max_age };
    let access = (f64::from(meta.access_count) / ACCESS_FULL).min(1.0);
    let central = if degree > 0 { (degree as f64 / DEGREE_FULL).min(1.0) } else { 0.0 };
    let mut score = 0.5 * recency + 0.2 * access + 0.3 * central;
    if meta.access_count >= FREQUENT_ACCESSES {
        score = score.max(FREQUENT_FLOOR);
    }
    score.min(1.0)
}

/// Whether a full concept with `meta` may be compressed at `now`: old enough and not
/// frequently accessed.
pub fn may_compress(meta: &RecordMeta, now: Timestamp, config: &AtlConfig) -> bool {
    now.secs_since(meta.created_at) >= config.compression_age.as_secs_f64()
        && meta.access_count < NO_COMPRESS_ACCESSES
}

/// The degree consolidation scores a record by: outgoing edges, plus references for a full one;
/// a compressed one keeps the edge count it had when compressed.
fn degree(atl: &Atl, record: &SemanticRecord) -> usize {
    match record {
        SemanticRecord::Full(c) => atl.state.graph.out_degree(c.meta.id, None) + c.memory_refs.count(None),
        SemanticRecord::Compressed(c) => c.edge_count as usize,
    }
}

/// The held concept with the lowest retention score (ties: least recently accessed, then the
/// smallest id), or `None` when the store is empty.
pub(crate) fn lowest_scored(atl: &Atl, now: Timestamp) -> Option<RecordId> {
    atl.state
        .records
        .iter()
        .map(|r| (retention_score(r.meta(), degree(atl, r), now, &atl.config), r.meta().accessed_at, r.id()))
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)))
        .map(|(_, _, id)| id)
}

impl Atl {
    /// One consolidation pass at the clock's time (see the [module docs](self)).
    pub fn consolidate_now(&mut self) -> Result<ConsolidationReport> {
        let now = self.clock.now();
        self.consolidate_at(now)
    }

    /// One consolidation pass at `now`: compressions first, then removals. Returns the counts
    /// (`promoted` is always 0: the semantic layer promotes nothing).
    pub fn consolidate_at(&mut self, now: Timestamp) -> Result<ConsolidationReport> {
        let _s = tracing::debug_span!("atl_consolidate", n_concepts = self.state.len()).entered();
        let mut remove = Vec::new();
        let mut compress = Vec::new();
        for record in &self.state.records {
            let id = record.id();
            let score = retention_score(record.meta(), degree(self, record), now, &self.config);
            if score < self.config.retention_threshold {
                remove.push(id);
            } else if score < self.config.compression_threshold
                && !record.is_compressed()
                && may_compress(record.meta(), now, &self.config)
                && !self.state.contested.contains(&id)
            {
                compress.push(id);
            }
        }
        for &id in &compress {
            self.compress(id);
        }
        for &id in &remove {
            self.remove_concept(id)?;
        }
        self.state.counters.compressions += compress.len() as u64;
        self.state.counters.consolidations += 1;
        let report = ConsolidationReport {
            promoted: 0,
            compressed: compress.len(),
            removed: remove.len(),
            preserved: self.state.len() - compress.len(),
        };
        tracing::debug!(compressed = report.compressed, removed = report.removed, "atl consolidated");
        Ok(report)
    }

    /// Replaces the full concept `id` by its compressed form; it leaves the vector index and the
    /// property and modality indexes, keeps its graph node, edges, names and aliases.
    fn compress(&mut self, id: RecordId) {
        let Some(slot) = self.state.slot(id) else {
            return;
        };
        if self.state.records[slot].is_compressed() {
            return;
        }
        self.state.unindex_content(slot);
        let edge_count = u32::try_from(self.state.graph.out_degree(id, None)).unwrap_or(u32::MAX);
        let placeholder = SemanticRecord::from(CompressedSemantic {
            meta: self.state.records[slot].meta().clone(),
            name: String::new(),
            category: String::new(),
            aliases: Vec::new(),
            confidence: 0.0,
            reinforcement_count: 0,
            provenance: maxim_core::ConceptProvenance::default(),
            edge_count: 0,
        });
        let SemanticRecord::Full(concept) = std::mem::replace(&mut self.state.records[slot], placeholder)
        else {
            unreachable!("checked above that the record is full");
        };
        self.state.records[slot] = CompressedSemantic::from_concept(*concept, edge_count).into();
        let _ = self.state.vectors.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec;
    use maxim_core::{ManualClock, Source, TraceKind, days};

    fn meta(access_count: u32, t: Timestamp) -> RecordMeta {
        let mut m =
            RecordMeta::new(RecordId::from_u128(1), t, Source::Episodic, 0.6, TraceKind::Semantic).unwrap();
        m.access_count = access_count;
        m
    }

    #[test]
    fn score_follows_the_access_based_rule() {
        let c = AtlConfig::default();
        let t0 = Timestamp::from_secs(0);
        assert!((retention_score(&meta(3, t0), 2, t0, &c) - 0.65).abs() < 1e-12);
        assert!((retention_score(&meta(1, t0), 0, t0 + days(30), &c) - 0.04).abs() < 1e-12);
        assert!((retention_score(&meta(1, t0), 40, t0 + days(60), &c) - 0.34).abs() < 1e-12);
        assert_eq!(retention_score(&meta(12, t0), 0, t0 + days(90), &c), 0.8);
        assert_eq!(retention_score(&meta(50, t0), 50, t0, &c), 1.0);
        assert!(!may_compress(&meta(1, t0), t0 + days(6), &c));
        assert!(may_compress(&meta(4, t0), t0 + days(7), &c));
        assert!(!may_compress(&meta(5, t0), t0 + days(70), &c));
    }

    #[test]
    fn contested_and_connected_concepts_survive_longer() {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut atl = Atl::with_clock(clock.shared());
        let plain = atl.find_or_create(&spec("plain", "x")).unwrap().id;
        let contested = atl.find_or_create(&spec("contested", "x")).unwrap().id;
        atl.set_property(contested, "color", "red", Source::UserStated, 1.0).unwrap();
        atl.set_property(contested, "color", "blue", Source::Web("x.org".into()), 0.3).unwrap();
        let hub = atl.find_or_create(&spec("hub", "x")).unwrap().id;
        let others: Vec<RecordId> =
            (0..14).map(|i| atl.find_or_create(&spec(&format!("spoke {i}"), "y")).unwrap().id).collect();
        for &o in &others {
            atl.define_relationship(hub, o, "HAS_PART", 1.0, 0.5).unwrap();
        }
        clock.advance(days(20));
        let report = atl.consolidate_now().unwrap();
        assert!(atl.record(plain).unwrap().is_compressed());
        assert!(!atl.record(contested).unwrap().is_compressed(), "contested concepts keep their claims");
        assert!(!atl.record(hub).unwrap().is_compressed(), "degree 14: score 0.207 + 0.21");
        assert_eq!(report.compressed, 15, "plain and the fourteen spokes");
        assert_eq!(atl.contradictions().len(), 1);
        assert!(atl.recall_similar("plain", 5).iter().all(|(id, _)| *id != plain));
        assert_eq!(atl.record(hub).map(|r| degree(&atl, r)), Some(14));
    }
}
