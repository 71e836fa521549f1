//! Consolidation of the mathematical layer (§6.3, a 90-day horizon).
//!
//! Each record scores
//!
//! ```text
//! score = 0                                        if age >= max_age and access_count < 3
//!       = 0.3 * max(0, 1 - age / max_age)
//!       + 0.3 * min(1, log2(max(access_count, 1)) / 5)
//!       + 0.4 * confidence                         otherwise
//! ```
//!
//! with `age` the time since the last access, doubled (capped at 1) for a long-term record.
//! Built-ins are firmware and always preserved. A record scoring below the retention
//! threshold (0.15) is removed; a full one below the compression threshold (0.3) is
//! compressed (its edge count kept). Unlike the original, a removal here runs the deletion
//! callbacks, so a cross-layer graph hears about it.
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory, retention_score};
//! use maxim_core::{ManualClock, MemoryLayer, Timestamp, days};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ag = AngularGyrus::builder().clock(clock.shared()).build()?;
//! let mut weak = ag.new_record("guess", MathCategory::Fact, "misc")?;
//! weak.confidence = 0.1;
//! let weak = ag.insert(weak.into())?;
//! clock.advance(days(100));
//! assert_eq!(retention_score(ag.record(weak).unwrap(), clock.now(), days(90)), 0.0);
//! let report = ag.consolidate()?;
//! assert_eq!((report.removed, report.preserved), (1, 9)); // the built-ins stay
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::time::Duration;

use maxim_core::layer::ConsolidationReport;
use maxim_core::{MemoryRecord, Timestamp};

use crate::error::Result;
use crate::record::MathEntry;
use crate::store::{AngularGyrus, Op};

/// The retention score of `entry` at `now` (see the [module docs](self)).
pub fn retention_score(entry: &MathEntry, now: Timestamp, max_age: Duration) -> f64 {
    let meta = entry.meta();
    let max_age = max_age.as_secs_f64();
    let age = now.secs_since(meta.accessed_at).max(0.0);
    let n = meta.access_count;
    if age >= max_age && n < 3 {
        return 0.0;
    }
    let recency = 0.3 * (1.0 - age / max_age).max(0.0);
    let usage = 0.3 * (f64::from(n.max(1)).log2() / 5.0).min(1.0);
    let score = recency + usage + 0.4 * entry.confidence();
    if meta.long_term { (score * 2.0).min(1.0) } else { score }
}

impl AngularGyrus {
    /// One consolidation pass at the clock's time (see the [module docs](self)).
    pub fn consolidate_now(&mut self) -> Result<ConsolidationReport> {
        let _s = tracing::debug_span!("ag_consolidate", n_records = self.len_records()).entered();
        let now = self.clock.now();
        let max_age = self.config.max_age_without_access;
        let mut report = ConsolidationReport::default();
        let mut compressed = Vec::new();
        let mut removed = Vec::new();
        for entry in &self.state.records {
            if entry.is_built_in() {
                report.preserved += 1;
                continue;
            }
            let score = retention_score(entry, now, max_age);
            if score < self.config.retention_threshold {
                removed.push(entry.id());
                report.removed += 1;
            } else if score < self.config.compression_threshold {
                if let MathEntry::Full(r) = entry {
                    let edges = self.state.graph.out_degree(r.meta.id, None);
                    compressed.push(r.compress(u32::try_from(edges).unwrap_or(u32::MAX)));
                    report.compressed += 1;
                } else {
                    report.preserved += 1;
                }
            } else {
                report.preserved += 1;
            }
        }
        let gone = removed.clone();
        self.journal_and_apply(Op::Consolidate { compressed, removed })?;
        for id in gone {
            self.callbacks.fire_delete(id);
        }
        tracing::debug!(removed = report.removed, compressed = report.compressed, "ag consolidated");
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{MathCategory, MathRecord};
    use maxim_core::{RecordId, days};

    fn entry(confidence: f64, access_count: u32, long_term: bool) -> MathEntry {
        let mut r =
            MathRecord::new(RecordId::from_u128(1), "x", MathCategory::Fact, "d", Timestamp::from_secs(0))
                .unwrap();
        r.confidence = confidence;
        r.meta.access_count = access_count;
        r.meta.long_term = long_term;
        r.into()
    }

    #[test]
    fn scores_follow_the_formula() {
        let t0 = Timestamp::from_secs(0);
        let max = days(90);
        // Fresh, one access, confidence 1: 0.3 + 0 + 0.4.
        assert!((retention_score(&entry(1.0, 1, false), t0, max) - 0.7).abs() < 1e-12);
        // 45 days, 32 accesses (log2 = 5 -> 1), confidence 0.5: 0.15 + 0.3 + 0.2.
        let s = retention_score(&entry(0.5, 32, false), t0 + days(45), max);
        assert!((s - 0.65).abs() < 1e-12, "{s}");
        // Old and rarely used: 0 whatever the confidence, long-term or not.
        assert_eq!(retention_score(&entry(1.0, 2, true), t0 + days(90), max), 0.0);
        // Old but used three times: 0.3 * log2(3) / 5 + 0.4 * 0.2, doubled when long-term.
        let s = retention_score(&entry(0.2, 3, false), t0 + days(200), max);
        let want = 0.3 * 3f64.log2() / 5.0 + 0.08;
        assert!((s - want).abs() < 1e-12);
        let s = retention_score(&entry(0.2, 3, true), t0 + days(200), max);
        assert!((s - 2.0 * want).abs() < 1e-12);
    }
}
