//! Ranking: the order in which a recall hands memories back.
//!
//! Three scores, from two sources, and one documented way to combine them.
//!
//! **Memory score** (seed 004). How much a memory is worth keeping at hand, whatever the
//! question: `trust × 0.5^(age_days / 30) × (1 + 0.1 × uses)`, where `age_days` is the time
//! since the memory was last used (its last access; a last use in the future counts as now)
//! and `uses` is the number of accesses after the first (a new record has `access_count` 1 and
//! so 0 uses). Trust carries provenance into the order; the 30-day half-life lets unused
//! memories fade; uses let proven ones rise. [`memory_score`], [`seed_score`].
//!
//! **Trace score** (lex-memory's composite, `spec/lex-memory.md` §5.4).
//! `strength × 2^(−seconds / 3600) × (1 + emotional_intensity) × (1.15 if associated)`, with
//! the strength the trace has decayed to at `now` and the seconds since its last reinforcement
//! or rehearsal. It favours what is strong, emotionally marked, linked to the other results,
//! and in use this very hour; it lies in `[0, 2.3]`. [`trace_score`].
//!
//! **Relevance.** How well the memory answers the question at hand: the activation a
//! spreading-activation recall gave it, or the cosine similarity of an embedding search,
//! clamped to `[0, 1]`.
//!
//! **Final score.** The hub orders a recall by
//!
//! ```text
//! final = relevance × memory_score × (1 + trace_score)
//! ```
//!
//! Relevance gates (an irrelevant memory scores 0 however strong it is); the memory score
//! carries trust and slow, month-scale recency; the trace score adds a bounded boost (at
//! most ×3.3) for memories that are strong, emotional, co-retrieved and hot right now, and
//! fades to ×1 within hours, so it never outweighs trust. Ties go to the smaller
//! [`RecordId`], so the order is deterministic. [`final_score`], [`rank`].
//!
//! The seed's own `recall` (over-fetch `k × 4` candidates from a relevance search, drop those
//! below a minimum trust, sort by memory score, keep `k`) is [`recall`].
//!
//! ```
//! use maxim_core::rank::{RankConfig, memory_score, recall};
//! use maxim_core::{RecordId, RecordMeta, Source, Timestamp, TraceKind, days};
//! let now = Timestamp::from_secs(100 * 86_400);
//! let meta = |n: u128, trust: f64, age: u64| {
//!     let mut m = RecordMeta::new(RecordId::from_u128(n), now - days(age), Source::ToolResult, trust, TraceKind::Semantic)?;
//!     m.accessed_at = now - days(age);
//!     Ok::<_, maxim_core::Error>(m)
//! };
//! let (fresh, month_old, untrusted) = (meta(1, 0.8, 0)?, meta(2, 0.8, 30)?, meta(3, 0.2, 0)?);
//! let cfg = RankConfig::default();
//! assert_eq!(memory_score(&fresh, now, &cfg), 0.8);
//! assert!((memory_score(&month_old, now, &cfg) - 0.4).abs() < 1e-12);
//! // The seed's recall: over-fetch 4 × k, drop low trust, order by memory score.
//! let store = [untrusted, month_old, fresh];
//! let got = recall(2, now, &cfg, |n| { assert_eq!(n, 8); store.iter().collect() }, |m| *m)?;
//! assert_eq!(got.iter().map(|r| r.item.id.as_u128()).collect::<Vec<_>>(), [1, 2]);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::record::{RecordMeta, check_finite, check_unit};
use crate::time::Timestamp;
use crate::trace::TraceParams;

/// The parameters of ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankConfig {
    /// Days after which an unused memory's score halves (seed: 30).
    pub half_life_days: f64,
    /// Score added per use, as a fraction (seed: 0.1).
    pub use_bonus: f64,
    /// Memories with less trust are dropped (seed: 0.5).
    pub min_trust: f64,
    /// How many candidates per wanted result a recall fetches before ranking (seed: 4).
    pub overfetch: usize,
    /// Trace decay parameters for the trace score.
    pub trace: TraceParams,
}

impl Default for RankConfig {
    fn default() -> Self {
        Self {
            half_life_days: 30.0,
            use_bonus: 0.1,
            min_trust: 0.5,
            overfetch: 4,
            trace: TraceParams::default(),
        }
    }
}

impl RankConfig {
    /// Checks every field: a positive finite half-life, a finite non-negative use bonus, a
    /// minimum trust in `[0, 1]` and an over-fetch of at least 1.
    pub fn validate(&self) -> Result<()> {
        if !(self.half_life_days.is_finite() && self.half_life_days > 0.0) {
            return Err(Error::OutOfRange {
                field: "half_life_days",
                value: self.half_life_days,
                expected: "a finite number > 0",
            });
        }
        crate::record::check_non_negative("use_bonus", self.use_bonus)?;
        check_unit("min_trust", self.min_trust)?;
        if self.overfetch == 0 {
            return Err(Error::invalid("overfetch", "must be at least 1"));
        }
        Ok(())
    }
}

/// Seed 004's score from its parts: `trust × 0.5^(age_days / half_life_days) × (1 + use_bonus × uses)`.
/// A negative age (a last use in the future) counts as 0.
pub fn seed_score(trust: f64, age_days: f64, uses: u32, half_life_days: f64, use_bonus: f64) -> f64 {
    let recency = 0.5f64.powf(age_days.max(0.0) / half_life_days);
    trust * recency * (1.0 + use_bonus * f64::from(uses))
}

/// The memory score of a record at `now` (seed 004): trust, time since its last access,
/// and its accesses after the first.
pub fn memory_score(meta: &RecordMeta, now: Timestamp, cfg: &RankConfig) -> f64 {
    let uses = meta.access_count.saturating_sub(1);
    seed_score(meta.trust.get(), now.days_since(meta.accessed_at), uses, cfg.half_life_days, cfg.use_bonus)
}

/// The trace score of a record at `now` (lex-memory's composite): its trace's
/// [`TraceState::retrieval_score`](crate::trace::TraceState::retrieval_score), with the
/// strength at `now`; `associated` adds the 15% Hebbian bonus.
pub fn trace_score(meta: &RecordMeta, now: Timestamp, associated: bool, params: &TraceParams) -> f64 {
    meta.trace.retrieval_score(now, associated, params)
}

/// `relevance × memory_score × (1 + trace_score)`; an error when `relevance` is NaN or
/// infinite. Relevance is clamped to `[0, 1]`.
pub fn final_score(
    relevance: f64,
    meta: &RecordMeta,
    now: Timestamp,
    associated: bool,
    cfg: &RankConfig,
) -> Result<f64> {
    let relevance = check_finite("relevance", relevance)?.clamp(0.0, 1.0);
    Ok(relevance * memory_score(meta, now, cfg) * (1.0 + trace_score(meta, now, associated, &cfg.trace)))
}

/// An item with its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<T> {
    /// The item.
    pub item: T,
    /// Its score (higher first).
    pub score: f64,
}

/// A candidate for [`rank`]: the item, its relevance, and whether it is linked to another
/// candidate of the same request (for the trace score's association bonus).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate<T> {
    /// The item.
    pub item: T,
    /// Relevance in `[0, 1]` (activation or similarity).
    pub relevance: f64,
    /// Linked to another candidate of the same request.
    pub associated: bool,
}

/// Orders `candidates` by [`final_score`], best first, after dropping those whose trust is
/// below `cfg.min_trust`; ties go to the smaller id. An error (and nothing ranked) when a
/// relevance is NaN or infinite or the configuration is invalid.
pub fn rank<T>(
    candidates: impl IntoIterator<Item = Candidate<T>>,
    meta_of: impl Fn(&T) -> &RecordMeta,
    now: Timestamp,
    cfg: &RankConfig,
) -> Result<Vec<Ranked<T>>> {
    cfg.validate()?;
    let mut out = Vec::new();
    for c in candidates {
        let meta = meta_of(&c.item);
        let score = final_score(c.relevance, meta, now, c.associated, cfg)?;
        let (id, trusted) = (meta.id, meta.trust.get() >= cfg.min_trust);
        if trusted {
            out.push((id, Ranked { item: c.item, score }));
        }
    }
    Ok(sort_ranked(out))
}

/// Seed 004's `recall`: asks `search` for `k × cfg.overfetch` candidates (most relevant
/// first), drops those with trust below `cfg.min_trust`, orders the rest by
/// [`memory_score`] (ties to the smaller id) and keeps `k`.
pub fn recall<T>(
    k: usize,
    now: Timestamp,
    cfg: &RankConfig,
    search: impl FnOnce(usize) -> Vec<T>,
    meta_of: impl Fn(&T) -> &RecordMeta,
) -> Result<Vec<Ranked<T>>> {
    cfg.validate()?;
    if k == 0 {
        return Ok(Vec::new());
    }
    let hits = search(k.saturating_mul(cfg.overfetch));
    let scored = hits
        .into_iter()
        .filter_map(|item| {
            let meta = meta_of(&item);
            let (id, score) = (meta.id, memory_score(meta, now, cfg));
            (meta.trust.get() >= cfg.min_trust).then_some((id, Ranked { item, score }))
        })
        .collect();
    let mut ranked = sort_ranked(scored);
    ranked.truncate(k);
    Ok(ranked)
}

fn sort_ranked<T>(mut scored: Vec<(RecordId, Ranked<T>)>) -> Vec<Ranked<T>> {
    scored.sort_by(|(ia, a), (ib, b)| b.score.total_cmp(&a.score).then(ia.cmp(ib)));
    scored.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days;
    use crate::trace::TraceKind;
    use std::time::Duration;

    const NOW: Timestamp = Timestamp::from_secs(1_000 * 86_400);

    fn meta(n: u128, trust: f64, idle_days: u64, uses: u32) -> RecordMeta {
        let at = NOW - days(idle_days);
        let mut m =
            RecordMeta::new(RecordId::from_u128(n), at, crate::Source::Episodic, trust, TraceKind::Episodic)
                .unwrap();
        m.access_count = 1 + uses;
        m
    }

    #[test]
    fn seed_score_halves_every_thirty_days_and_grows_with_use() {
        let cfg = RankConfig::default();
        assert_eq!(memory_score(&meta(1, 1.0, 0, 0), NOW, &cfg), 1.0);
        assert!((memory_score(&meta(1, 1.0, 30, 0), NOW, &cfg) - 0.5).abs() < 1e-15);
        assert!((memory_score(&meta(1, 1.0, 60, 0), NOW, &cfg) - 0.25).abs() < 1e-15);
        assert!((memory_score(&meta(1, 0.5, 0, 3), NOW, &cfg) - 0.65).abs() < 1e-15);
        // A last use in the future counts as now.
        assert_eq!(seed_score(0.7, -5.0, 0, 30.0, 0.1), 0.7);
    }

    #[test]
    fn trace_score_follows_the_lex_composite() {
        let params = TraceParams::default();
        let m = meta(1, 1.0, 0, 0);
        // Episodic, just made: strength 0.6, no emotion, not associated.
        assert_eq!(trace_score(&m, NOW, false, &params), 0.6);
        assert!((trace_score(&m, NOW, true, &params) - 0.69).abs() < 1e-12);
        // One hour later the recency factor has halved, and decay has nibbled at strength.
        let later = NOW + Duration::from_secs(3600);
        let s = trace_score(&m, later, false, &params);
        assert!(s < 0.3 && s > 0.25, "{s}");
    }

    #[test]
    fn final_score_gates_on_relevance_and_refuses_nan() {
        let cfg = RankConfig::default();
        let m = meta(1, 1.0, 0, 0);
        assert_eq!(final_score(0.0, &m, NOW, false, &cfg).unwrap(), 0.0);
        assert!((final_score(1.0, &m, NOW, false, &cfg).unwrap() - 1.6).abs() < 1e-12);
        assert_eq!(
            final_score(7.0, &m, NOW, false, &cfg).unwrap(),
            final_score(1.0, &m, NOW, false, &cfg).unwrap()
        );
        assert!(matches!(final_score(f64::NAN, &m, NOW, false, &cfg), Err(Error::OutOfRange { .. })));
    }

    #[test]
    fn rank_drops_low_trust_orders_by_final_score_and_breaks_ties_by_id() {
        let cfg = RankConfig::default();
        let metas = [meta(3, 0.9, 0, 0), meta(1, 0.9, 0, 0), meta(2, 0.2, 0, 0), meta(4, 0.9, 90, 0)];
        let cands = metas.iter().map(|m| Candidate { item: m, relevance: 0.5, associated: false });
        let got = rank(cands, |m| *m, NOW, &cfg).unwrap();
        let ids: Vec<u128> = got.iter().map(|r| r.item.id.as_u128()).collect();
        assert_eq!(ids, [1, 3, 4]);
        assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
        let bad = [Candidate { item: &metas[0], relevance: f64::INFINITY, associated: false }];
        assert!(rank(bad, |m| *m, NOW, &cfg).is_err());
    }

    #[test]
    fn recall_overfetches_and_keeps_k() {
        let cfg = RankConfig::default();
        let metas: Vec<_> =
            (0..20).map(|i| meta(i, if i % 3 == 0 { 0.1 } else { 0.9 }, i as u64, 0)).collect();
        let mut asked = 0;
        let got = recall(
            3,
            NOW,
            &cfg,
            |n| {
                asked = n;
                metas.iter().take(n).collect()
            },
            |m| *m,
        )
        .unwrap();
        assert_eq!(asked, 12);
        let ids: Vec<u128> = got.iter().map(|r| r.item.id.as_u128()).collect();
        assert_eq!(ids, [1, 2, 4], "low-trust 0 and 3 dropped, then most recently used first");
        assert!(recall(0, NOW, &cfg, |_| metas.iter().collect(), |m| *m).unwrap().is_empty());
    }

    #[test]
    fn invalid_config_is_refused() {
        for bad in [
            RankConfig { half_life_days: 0.0, ..RankConfig::default() },
            RankConfig { use_bonus: f64::NAN, ..RankConfig::default() },
            RankConfig { min_trust: 1.5, ..RankConfig::default() },
            RankConfig { overfetch: 0, ..RankConfig::default() },
        ] {
            assert!(bad.validate().is_err());
            assert!(recall(1, NOW, &bad, |_| Vec::<&RecordMeta>::new(), |m| *m).is_err());
        }
    }
}
