//! Consolidation (`spec/maxim-reference.md` §3.8), sleep (§3.9) and compression (§3.10).
//!
//! - [`Hippocampus::promote_candidates`] drains the consolidation queue and makes long-term
//!   every candidate with salience or novelty above 0.9, a successful user interaction, five
//!   accesses or a use pressure of 3, up to a number of promotions; the unexamined rest is
//!   queued again. [`Hippocampus::promote`] promotes given ids.
//! - Recalls with a query build *use pressure* ([`Hippocampus::recall_touching`]): each
//!   distinct query adds `min(salience, 1) + min(1, 1 − 1/access_count)`, the pressure
//!   leaks 0.02 per second between scorings, and at 3.0 the episode is promoted.
//! - [`Hippocampus::sleep`] promotes the queue, then scores every record with the retention
//!   strategy (long-term scores × 2, capped at 1): below 0.3 it is removed, below 0.6 a full
//!   episode is compressed when the strategy allows, otherwise it is kept. Compressions are
//!   applied first, then removals (which clean the index, the graph and the queue, and tell
//!   the deletion callbacks).
//!
//! - [`Hippocampus::sleep_with_clustering`] (§3.9, with a temporal context connected)
//!   thins crowded (hour, weekday) clusters: a cluster of at most `max_per_cluster` episodes,
//!   and an episode without a cluster, is judged as `sleep` judges it; in a larger cluster the
//!   `max_per_cluster` best-scored episodes are kept (compressed when full and below the
//!   compression threshold, 0.6) and
//!   the rest are removed below 0.3, otherwise compressed, and removed when already
//!   compressed.
//!
//! **Trace tiers** ([`HippocampusConfig::trace_tiers`](crate::HippocampusConfig::trace_tiers),
//! on by default) add a guard from each episode's memory trace, read at the sleep's `now`
//! (decay is a function of time: sleep evaluates every trace's strength and tier, after
//! `spec/lex-memory.md` §5.5, with the configured [`TraceParams`](maxim_core::trace::TraceParams)).
//! The strategy's thresholds stay the default; the tier only changes a verdict:
//! - **hot** (reinforced or used within 24 hours): never removed; what the strategy would
//!   remove is compressed when the strategy allows it, else kept;
//! - **warm** (within 90 days): the strategy's verdict;
//! - **cold** (longer): an episode the strategy would keep full is compressed when the
//!   strategy allows it;
//! - **erased** (strength at most 0.01, [`PRUNE_THRESHOLD`](maxim_core::trace::PRUNE_THRESHOLD)):
//!   removed when its retention score is below the compression threshold (low importance).
//!
//! Uses (`get`, `touch`, `recall_touching`) reinforce the trace, so an episode in use stays
//! hot and strong.
//!
//! With the default access-based strategy an unaccessed, little-connected episode that is
//! not long-term goes after about seven days without access; successful user interactions
//! and episodes accessed ten times never go.
//!
//! ```
//! use std::time::Duration;
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
//! use maxim_core::{ManualClock, Timestamp, days};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let report = hippo.sleep();
//! assert_eq!((report.compressed, report.removed, report.preserved, report.promoted), (0, 0, 0, 0));
//! let id = hippo.capture(NewEpisode::default())?;
//! assert_eq!(hippo.sleep().preserved, 1);
//! clock.advance(days(2)); // recency 5/7: 0.357 + 0.04 = 0.397, compressible
//! assert_eq!(hippo.sleep().compressed, 1);
//! assert!(hippo.peek(id).unwrap().is_compressed());
//! clock.advance(days(6)); // a week without access: 0.04, removed
//! assert_eq!(hippo.sleep().removed, 1);
//! assert!(hippo.is_empty());
//! # Ok::<(), hippocampus::Error>(())
//! ```

use maxim_core::graph::EdgeKind;
use maxim_core::trace::StorageTier;
use maxim_core::{ConsolidationReport, RecordId, Timestamp};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::episode::{CompressedMemory, Episode, EpisodicMemory};
use crate::error::{Error, Result};
use crate::hash::query_signature;
use crate::index::Slot;
use crate::store::Hippocampus;
use crate::strategy::{RetentionStrategy, TemporalContext};

/// Salience or novelty above which a queued candidate is promoted.
pub const PROMOTION_LEVEL: f64 = 0.9;
/// Accesses at which a queued candidate is promoted.
pub const PROMOTION_ACCESSES: u32 = 5;
/// Use pressure at which an episode is promoted.
pub const PROMOTION_PRESSURE: f64 = 3.0;
/// Use pressure lost per second between two scorings.
pub const PRESSURE_LEAK_PER_SEC: f64 = 0.02;
/// Query signatures an episode remembers for use pressure.
pub const MAX_ACCESS_CONTEXTS: usize = 10;
/// Records at which sleep scores (and compresses) in parallel.
const PARALLEL_SLEEP_MIN: usize = 4096;

/// What a promotion pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromotionReport {
    /// Records made long-term.
    pub promoted: usize,
    /// Records that already were.
    pub already_long_term: usize,
    /// Candidates examined and left as they were (or gone).
    pub skipped: usize,
}

/// What [`Hippocampus::sleep_with_clustering`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusteredSleepReport {
    /// The counts, as [`Hippocampus::sleep`] reports them.
    pub report: ConsolidationReport,
    /// The distinct (hour, weekday) clusters among the episodes judged.
    pub clusters_processed: usize,
    /// Of those, the clusters of more than `max_per_cluster` episodes, which were thinned.
    pub clusters_thinned: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Keep,
    Compress,
    Remove,
}

impl EpisodicMemory {
    /// The compressed form ([`CompressedMemory::from_episodic`]), moving the run id and the
    /// use pressure out of `self` instead of copying them.
    pub fn into_compressed(mut self, edge_count: u32) -> CompressedMemory {
        let run_id = std::mem::take(&mut self.run_id);
        let usage = self.usage.take();
        CompressedMemory { run_id, usage, ..CompressedMemory::from_episodic(&self, edge_count) }
    }
}

/// Whether a queued candidate deserves long-term memory.
fn qualifies(rec: &Episode) -> bool {
    rec.salience() > PROMOTION_LEVEL
        || rec.novelty() > PROMOTION_LEVEL
        || (rec.had_user_input() && rec.success() == Some(true))
        || rec.meta().access_count >= PROMOTION_ACCESSES
        || rec.promotion_pressure() >= PROMOTION_PRESSURE
}

impl Hippocampus {
    /// Makes the record in slot `s` long-term; false when it already was.
    fn promote_slot(&mut self, s: Slot, now: Timestamp) -> bool {
        let Some(rec) = self.slots.get_mut(s) else { return false };
        if !rec.meta_mut().promote(now) {
            return false;
        }
        *rec.usage_mut() = None;
        self.counters.long_term_count = self.counters.long_term_count.saturating_add(1);
        true
    }

    /// Drains the consolidation queue, oldest first, promoting each candidate that
    /// qualifies until `max_promotions` are promoted; the candidates not yet examined are
    /// queued again.
    ///
    /// On a layer open on a directory this ends with a
    /// [`checkpoint`](Hippocampus::checkpoint) (see [`crate::journal`]).
    pub fn promote_candidates(&mut self, max_promotions: usize) -> PromotionReport {
        let report = self.promote_queued(max_promotions);
        self.checkpoint_after_consolidation();
        report
    }

    fn promote_queued(&mut self, max_promotions: usize) -> PromotionReport {
        let _s = tracing::debug_span!("hippocampus_promote", n_candidates = self.candidates.len()).entered();
        let now = self.clock.now();
        let mut report = PromotionReport::default();
        let mut queue = std::mem::take(&mut self.candidates);
        while let Some(id) = queue.pop_front() {
            if report.promoted >= max_promotions {
                queue.push_front(id);
                break;
            }
            let Some(s) = self.slots.slot_of(id) else {
                report.skipped += 1;
                continue;
            };
            let Some(rec) = self.slots.get(s) else { continue };
            if rec.meta().long_term {
                report.already_long_term += 1;
            } else if qualifies(rec) {
                self.promote_slot(s, now);
                report.promoted += 1;
            } else {
                report.skipped += 1;
            }
        }
        self.candidates = queue;
        report
    }

    /// Promotes the records `ids` (at most `max_promotions` of them), whatever their
    /// scores. Errors: an unknown id ([`maxim_core::Error::NotFound`]); nothing changes.
    pub fn promote(&mut self, ids: &[RecordId], max_promotions: usize) -> Result<PromotionReport> {
        let slots: Vec<Slot> = ids
            .iter()
            .map(|&id| self.slots.slot_of(id).ok_or(maxim_core::Error::NotFound { id }))
            .collect::<Result<_, _>>()?;
        let now = self.clock.now();
        let mut report = PromotionReport::default();
        for s in slots {
            if report.promoted >= max_promotions {
                break;
            }
            if self.promote_slot(s, now) {
                report.promoted += 1;
            } else {
                report.already_long_term += 1;
            }
        }
        self.checkpoint_after_consolidation();
        Ok(report)
    }

    /// Scores use-based promotion pressure for the records in `slots` that are not
    /// long-term, for one recall with `query` at `now`.
    pub(crate) fn score_use(&mut self, slots: &[Slot], query: &str, now: Timestamp) {
        let signature = query_signature(query);
        for &s in slots {
            let Some(rec) = self.slots.get_mut(s) else { continue };
            if rec.meta().long_term {
                continue;
            }
            let gain =
                rec.salience().min(1.0) + (1.0 - 1.0 / f64::from(rec.meta().access_count.max(1))).min(1.0);
            let usage = rec.usage_mut().get_or_insert_with(Default::default);
            let elapsed = usage.last_scored_at.map_or(f64::INFINITY, |t| now.secs_since(t).max(0.0));
            usage.pressure = (usage.pressure - PRESSURE_LEAK_PER_SEC * elapsed).max(0.0);
            usage.last_scored_at = Some(now);
            if usage.access_contexts.contains(&signature) {
                continue;
            }
            usage.access_contexts.push(signature);
            if usage.access_contexts.len() > MAX_ACCESS_CONTEXTS {
                usage.access_contexts.remove(0);
            }
            usage.pressure += gain;
            if usage.pressure >= PROMOTION_PRESSURE {
                self.promote_slot(s, now);
            }
        }
    }

    /// Replaces the full episode `id` by its compressed form (its index keys and graph node
    /// stay) and tells the compression callbacks. Returns false when it already was
    /// compressed; [`maxim_core::Error::NotFound`] for an unknown id.
    pub fn compress(&mut self, id: RecordId) -> Result<bool> {
        let s = self.slots.slot_of(id).ok_or(maxim_core::Error::NotFound { id })?;
        if !self.slots.get(s).is_some_and(|r| matches!(r, crate::episode::Episode::Full(_))) {
            return Ok(false);
        }
        let op = crate::journal::Op::Compress { id };
        self.journal_op(&op)?;
        self.apply(op);
        Ok(true)
    }

    pub(crate) fn compress_slot(&mut self, s: Slot) -> bool {
        let id = self.slots.ids[s as usize];
        let edge_count = self.graph.out_degree(id, Some(EdgeKind::Associates));
        let Some(slot) = self.slots.records.get_mut(s as usize) else { return false };
        if !compress_in_place(slot, edge_count) {
            return false;
        }
        self.after_compression(s);
        true
    }

    /// What follows the compression of the record in slot `s`: its text in the lexical
    /// index, its text vector (when an embedder is configured) and the compression
    /// callbacks.
    fn after_compression(&mut self, s: Slot) {
        let id = self.slots.ids[s as usize];
        self.index_text(s);
        if let (Some(embedder), Some(vectors), Some(rec)) =
            (&self.embedder, &mut self.vectors, self.slots.records[s as usize].as_ref())
        {
            let _ = vectors.add(id, &embedder.embed(&crate::capture::episode_text(rec)));
        }
        self.fire_compress(id);
    }

    /// One sleep cycle with the configured strategy (temporal-aware when a temporal context
    /// is connected); see the [module docs](self). On a layer open on a directory it ends
    /// with a [`checkpoint`](Hippocampus::checkpoint) (see [`crate::journal`]).
    pub fn sleep(&mut self) -> ConsolidationReport {
        let strategy = self.retention_strategy();
        self.sleep_with(&*strategy)
    }

    /// One sleep cycle with `strategy`.
    ///
    /// The strategy must not panic: records are compressed as they are scored, so a panic
    /// midway would leave the ones already compressed without their callbacks.
    pub fn sleep_with(&mut self, strategy: &dyn RetentionStrategy) -> ConsolidationReport {
        let _s =
            tracing::debug_span!("hippocampus_sleep", n_records = self.len(), strategy = strategy.name())
                .entered();
        if !self.config.enable_sleep_consolidation {
            return ConsolidationReport { preserved: self.len(), ..ConsolidationReport::default() };
        }
        let promoted = if self.config.consolidate_during_sleep {
            self.promote_queued(self.config.max_promotions).promoted
        } else {
            0
        };
        let now = self.clock.now();
        let verdicts = self.judge_and_compress(strategy, now);
        let mut report = ConsolidationReport { promoted, ..ConsolidationReport::default() };
        let mut doomed: Vec<Slot> = Vec::new();
        for &(s, v) in &verdicts {
            match v {
                Verdict::Keep => report.preserved += 1,
                Verdict::Compress => {
                    report.compressed += 1;
                    self.after_compression(s);
                }
                Verdict::Remove => doomed.push(s),
            }
        }
        self.finish_sleep(&mut report, &doomed);
        report
    }

    /// The end of every sleep: removes `doomed`, counts, forgets unused names, and
    /// checkpoints on a directory.
    fn finish_sleep(&mut self, report: &mut ConsolidationReport, doomed: &[Slot]) {
        report.removed = doomed.len();
        self.remove_slots(doomed);
        self.counters.consolidations = self.counters.consolidations.saturating_add(1);
        self.counters.compressions = self.counters.compressions.saturating_add(report.compressed as u64);
        self.purge_names();
        tracing::debug!(
            promoted = report.promoted,
            compressed = report.compressed,
            removed = report.removed,
            preserved = report.preserved,
            "slept"
        );
        self.checkpoint_after_consolidation();
    }

    /// One sleep cycle by (hour, weekday) cluster, with the configured strategy made
    /// temporal-aware (see the [module docs](self)). Within a crowded cluster, episodes are
    /// ranked by score, ties going to the newer.
    ///
    /// Errors (nothing changes): no temporal context is connected
    /// ([`Error::NoTemporalContext`]); `max_per_cluster` is 0, which would keep no episode of
    /// any cluster and remove every compressed one, long-term ones included
    /// ([`maxim_core::Error::InvalidArgument`]).
    pub fn sleep_with_clustering(&mut self, max_per_cluster: usize) -> Result<ClusteredSleepReport> {
        let Some(context) = self.temporal.clone() else { return Err(Error::NoTemporalContext) };
        if max_per_cluster == 0 {
            return Err(
                maxim_core::Error::invalid("max_per_cluster", "must keep at least one episode").into()
            );
        }
        let strategy = self.retention_strategy();
        let _s = tracing::debug_span!(
            "hippocampus_sleep_with_clustering",
            n_records = self.len(),
            max_per_cluster
        )
        .entered();
        if !self.config.enable_sleep_consolidation {
            let report = ConsolidationReport { preserved: self.len(), ..ConsolidationReport::default() };
            return Ok(ClusteredSleepReport { report, ..ClusteredSleepReport::default() });
        }
        let promoted = if self.config.consolidate_during_sleep {
            self.promote_queued(self.config.max_promotions).promoted
        } else {
            0
        };
        let now = self.clock.now();
        let (verdicts, clusters_processed, clusters_thinned) =
            self.cluster_verdicts(&*strategy, &*context, max_per_cluster, now);
        let mut report = ConsolidationReport { promoted, ..ConsolidationReport::default() };
        let mut doomed: Vec<Slot> = Vec::new();
        for (s, v) in verdicts {
            match v {
                Verdict::Keep => report.preserved += 1,
                Verdict::Compress => {
                    if self.compress_slot(s) {
                        report.compressed += 1;
                    } else {
                        report.preserved += 1;
                    }
                }
                Verdict::Remove => doomed.push(s),
            }
        }
        self.finish_sleep(&mut report, &doomed);
        Ok(ClusteredSleepReport { report, clusters_processed, clusters_thinned })
    }

    /// The verdicts of [`sleep_with_clustering`](Self::sleep_with_clustering) in slot order,
    /// with the numbers of clusters seen and thinned.
    fn cluster_verdicts(
        &self,
        strategy: &dyn RetentionStrategy,
        context: &dyn TemporalContext,
        max_per_cluster: usize,
        now: Timestamp,
    ) -> (Vec<(Slot, Verdict)>, usize, usize) {
        let retention = self.config.retention_threshold;
        let compression = self.config.compression_threshold;
        let boost = self.config.long_term_retention_boost;
        let (tiers, params) = (self.config.trace_tiers, self.config.trace);
        let mut judged: Vec<Judged> = Vec::with_capacity(self.len());
        for (s, rec) in self.slots.records.iter().enumerate() {
            let Some(rec) = rec else { continue };
            let compressed = rec.is_compressed();
            judged.push(Judged {
                slot: s as Slot,
                score: retention_score(strategy, rec, self.degree_of(rec), now, boost),
                cluster: context.cluster_of(rec.id()),
                compressed,
                compressible: !compressed && strategy.should_compress(rec, now),
                tier: tiers.then(|| rec.meta().trace.tier(now, &params)),
            });
        }
        let mut members: rustc_hash::FxHashMap<u64, Vec<usize>> = rustc_hash::FxHashMap::default();
        for (i, j) in judged.iter().enumerate() {
            if let Some(c) = j.cluster {
                members.entry(c).or_default().push(i);
            }
        }
        let mut verdicts: Vec<Option<Verdict>> = vec![None; judged.len()];
        let mut thinned = 0;
        let order = self.slots.order();
        for list in members.values_mut() {
            if list.len() <= max_per_cluster {
                continue;
            }
            thinned += 1;
            // Best first; equal scores go to the newer episode.
            list.sort_unstable_by(|&a, &b| {
                let (a, b) = (&judged[a], &judged[b]);
                b.score.total_cmp(&a.score).then_with(|| order.key(b.slot).cmp(&order.key(a.slot)))
            });
            for (rank, &i) in list.iter().enumerate() {
                let j = &judged[i];
                verdicts[i] = Some(if rank < max_per_cluster {
                    if j.score < compression && !j.compressed { Verdict::Compress } else { Verdict::Keep }
                } else if j.score < retention || j.compressed {
                    Verdict::Remove
                } else {
                    Verdict::Compress
                });
            }
        }
        let clusters = members.len();
        // Episodes without a cluster, and those of small clusters, are judged as `sleep` does.
        let alone = |j: &Judged| {
            if j.score < retention {
                Verdict::Remove
            } else if j.score < compression && j.compressible {
                Verdict::Compress
            } else {
                Verdict::Keep
            }
        };
        let verdicts = judged
            .iter()
            .zip(verdicts)
            .map(|(j, v)| {
                let v = v.unwrap_or_else(|| alone(j));
                let v = match j.tier {
                    Some(tier) => tier_verdict(v, tier, j.score < compression, || j.compressible),
                    None => v,
                };
                (j.slot, v)
            })
            .collect();
        (verdicts, clusters, thinned)
    }

    /// The verdict on every record, in slot order, compressing in place each full record
    /// judged compressible (the record is at hand, and the work is spread with the scoring).
    /// A record reported `Compress` was compressed; what follows a compression (vectors,
    /// callbacks) is left to the caller.
    fn judge_and_compress(
        &mut self,
        strategy: &dyn RetentionStrategy,
        now: Timestamp,
    ) -> Vec<(Slot, Verdict)> {
        let retention = self.config.retention_threshold;
        let compression = self.config.compression_threshold;
        let boost = self.config.long_term_retention_boost;
        let (tiers, params) = (self.config.trace_tiers, self.config.trace);
        let parallel = self.len() >= PARALLEL_SLEEP_MIN && rayon::current_num_threads() > 1;
        let (graph, slots) = (&self.graph, &mut self.slots);
        let ids = &slots.ids;
        let judge = |(s, slot): (usize, &mut Option<Episode>)| -> Option<(Slot, Verdict)> {
            let rec = slot.as_ref()?;
            // A full record's ASSOCIATES edges (a compressed one carries its count).
            let degree = match rec {
                Episode::Full(_) => graph.out_degree(ids[s], Some(EdgeKind::Associates)),
                Episode::Compressed(c) => c.edge_count as usize,
            };
            let score = retention_score(strategy, rec, degree, now, boost);
            let may_compress = || !rec.is_compressed() && strategy.should_compress(rec, now);
            let mut verdict = if score < retention {
                Verdict::Remove
            } else if score < compression && may_compress() {
                Verdict::Compress
            } else {
                Verdict::Keep
            };
            if tiers {
                let tier = rec.meta().trace.tier(now, &params);
                verdict = tier_verdict(verdict, tier, score < compression, may_compress);
            }
            if verdict == Verdict::Compress && !compress_in_place(slot, degree) {
                verdict = Verdict::Keep;
            }
            Some((s as Slot, verdict))
        };
        if parallel {
            slots.records.par_iter_mut().enumerate().filter_map(judge).collect()
        } else {
            slots.records.iter_mut().enumerate().filter_map(judge).collect()
        }
    }
}

/// One record as [`Hippocampus::sleep_with_clustering`] sees it.
struct Judged {
    slot: Slot,
    score: f64,
    cluster: Option<u64>,
    compressed: bool,
    /// Full, and compressible by the strategy's rule.
    compressible: bool,
    /// Its trace's storage tier, when sleep follows tiers.
    tier: Option<StorageTier>,
}

/// What a trace's storage tier makes of the strategy's `verdict` (see the [module
/// docs](self)): a hot trace is never removed (compressed instead when `may_compress`, else
/// kept); a cold one that would be kept is compressed when `may_compress`; an erased one of
/// `low_importance` (a retention score below the compression threshold) is removed. A warm
/// trace leaves the verdict as it is.
fn tier_verdict(
    verdict: Verdict,
    tier: StorageTier,
    low_importance: bool,
    may_compress: impl FnOnce() -> bool,
) -> Verdict {
    match (tier, verdict) {
        (StorageTier::Hot, Verdict::Remove) => {
            if may_compress() {
                Verdict::Compress
            } else {
                Verdict::Keep
            }
        }
        (StorageTier::Cold, Verdict::Keep) if may_compress() => Verdict::Compress,
        (StorageTier::Erased, Verdict::Keep | Verdict::Compress) if low_importance => Verdict::Remove,
        _ => verdict,
    }
}

/// `strategy`'s score of `rec`, times `boost` (capped at 1) for a long-term record.
fn retention_score(
    strategy: &dyn RetentionStrategy,
    rec: &Episode,
    degree: usize,
    now: Timestamp,
    boost: f64,
) -> f64 {
    let score = strategy.score(rec, degree, now);
    if rec.meta().long_term { (score * boost).min(1.0) } else { score }
}

/// Replaces the full episode in `slot` by its compressed form with `edge_count` ASSOCIATES
/// edges; false (and nothing changes) when the slot holds no full episode.
fn compress_in_place(slot: &mut Option<Episode>, edge_count: usize) -> bool {
    let Some(Episode::Full(_)) = slot else { return false };
    let Some(Episode::Full(m)) = slot.take() else { return false };
    let edge_count = u32::try_from(edge_count).unwrap_or(u32::MAX);
    *slot = Some(Episode::Compressed(Box::new(m.into_compressed(edge_count))));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::EpisodicMemory;

    #[test]
    fn tiers_guard_the_strategys_verdicts() {
        use StorageTier::{Cold, Erased, Hot, Warm};
        use Verdict::{Compress, Keep, Remove};
        let yes = || true;
        let no = || false;
        assert_eq!(tier_verdict(Remove, Hot, true, yes), Compress);
        assert_eq!(tier_verdict(Remove, Hot, true, no), Keep);
        assert_eq!(tier_verdict(Keep, Hot, false, yes), Keep);
        for v in [Keep, Compress, Remove] {
            assert_eq!(tier_verdict(v, Warm, true, yes), v, "warm leaves {v:?}");
        }
        assert_eq!(tier_verdict(Keep, Cold, false, yes), Compress);
        assert_eq!(tier_verdict(Keep, Cold, false, no), Keep);
        assert_eq!(tier_verdict(Remove, Cold, true, yes), Remove);
        assert_eq!(tier_verdict(Keep, Erased, true, no), Remove);
        assert_eq!(tier_verdict(Compress, Erased, true, no), Remove);
        assert_eq!(tier_verdict(Keep, Erased, false, no), Keep, "an important record stays");
    }

    #[test]
    fn into_compressed_agrees_with_from_episodic() {
        let mut m = EpisodicMemory::new(RecordId::from_u128(3), Timestamp::from_secs(9));
        m.context.active_goal = Some("open door".into());
        m.decision.intent.insert("goal", "open door".into());
        m.perception.detected_objects = vec!["door".into()];
        m.perception.transcript = Some("open it".into());
        m.action.tool_name = "push".into();
        let a = CompressedMemory::from_episodic(&m, 7);
        assert_eq!(m.clone().into_compressed(7), a);
        let shared = m.clone().into_compressed(7).goal.unwrap();
        assert!(
            std::sync::Arc::ptr_eq(&shared, m.context.active_goal.as_ref().unwrap()),
            "the same goal is shared"
        );
        m.decision.intent.insert("goal", "kick door".into());
        assert_eq!(m.clone().into_compressed(1).goal.as_deref(), Some("kick door"));
        assert_eq!(CompressedMemory::from_episodic(&m, 1).goal.as_deref(), Some("kick door"));
    }
}
