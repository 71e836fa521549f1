//! The retrieval metrics of the evaluation, over one ranking and one question's evidence.
//!
//! - [`recall_all`]: 1 when every evidence turn is among the first `k` results, else 0 (the
//!   measure of `docs/retrieval.md`: a reader answers only with all of its evidence);
//! - [`recall_any`]: 1 when at least one is;
//! - [`ndcg`]: normalised discounted cumulative gain with binary relevance, the ideal
//!   ranking putting every evidence turn first;
//! - [`percentile`]: the nearest-rank percentile of latencies.
//!
//! A ranking that names a turn twice counts it once (at its first place).
//!
//! ```
//! use maxim_benches::eval::metrics::{ndcg, recall_all, recall_any};
//! use maxim_benches::dialogue::TurnId;
//! let ranking = [TurnId(4), TurnId(9), TurnId(1)];
//! let evidence = [TurnId(1), TurnId(4)];
//! assert_eq!(recall_all(&ranking, &evidence, 2), 0.0);
//! assert_eq!(recall_all(&ranking, &evidence, 3), 1.0);
//! assert_eq!(recall_any(&ranking, &evidence, 1), 1.0);
//! assert!(ndcg(&ranking, &evidence, 10) < 1.0);
//! ```

use maxim_testkit::dialogue::TurnId;

/// The distinct turns of `ranking`'s first `k` places that are evidence, by position.
fn hits(ranking: &[TurnId], evidence: &[TurnId], k: usize) -> impl Iterator<Item = usize> {
    let mut seen: Vec<TurnId> = Vec::new();
    let mut found = Vec::new();
    for (i, &id) in ranking.iter().take(k).enumerate() {
        if evidence.contains(&id) && !seen.contains(&id) {
            seen.push(id);
            found.push(i);
        }
    }
    found.into_iter()
}

/// 1 when every turn of `evidence` is in `ranking`'s first `k` places, else 0 (1 for no
/// evidence).
pub fn recall_all(ranking: &[TurnId], evidence: &[TurnId], k: usize) -> f64 {
    let mut distinct = evidence.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    f64::from(u8::from(hits(ranking, &distinct, k).count() == distinct.len()))
}

/// 1 when at least one turn of `evidence` is in `ranking`'s first `k` places, else 0.
pub fn recall_any(ranking: &[TurnId], evidence: &[TurnId], k: usize) -> f64 {
    f64::from(u8::from(hits(ranking, evidence, k).next().is_some()))
}

/// nDCG@k with binary relevance: Σ 1/log2(rank + 1) over the evidence in the first `k`
/// places, divided by the same sum for a ranking with all the evidence first (0 for no
/// evidence or `k` = 0).
pub fn ndcg(ranking: &[TurnId], evidence: &[TurnId], k: usize) -> f64 {
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let mut distinct = evidence.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let ideal: f64 = (0..distinct.len().min(k)).map(gain).sum();
    if ideal == 0.0 {
        return 0.0;
    }
    hits(ranking, &distinct, k).map(gain).sum::<f64>() / ideal
}

/// The nearest-rank `p`-th percentile (`p` in `[0, 100]`) of `values` (sorted here); `None`
/// when there are none or `p` is out of range.
pub fn percentile(values: &mut [f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    Some(values[rank.clamp(1, values.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<TurnId> {
        v.iter().copied().map(TurnId).collect()
    }

    #[test]
    fn recall_all_needs_every_evidence_turn_within_k() {
        let ranking = ids(&[7, 3, 5, 1, 9]);
        assert_eq!(recall_all(&ranking, &ids(&[3]), 1), 0.0);
        assert_eq!(recall_all(&ranking, &ids(&[3]), 2), 1.0);
        assert_eq!(recall_all(&ranking, &ids(&[3, 9]), 4), 0.0);
        assert_eq!(recall_all(&ranking, &ids(&[3, 9]), 5), 1.0);
        assert_eq!(recall_all(&ranking, &ids(&[3, 9]), 50), 1.0);
        assert_eq!(recall_all(&ranking, &ids(&[3, 4]), 50), 0.0);
        // A turn ranked twice does not stand in for a missing one.
        assert_eq!(recall_all(&ids(&[3, 3]), &ids(&[3, 4]), 2), 0.0);
        assert_eq!(recall_all(&ids(&[3]), &ids(&[3, 3]), 1), 1.0);
        assert_eq!(recall_all(&[], &ids(&[1]), 10), 0.0);
    }

    #[test]
    fn recall_any_needs_one_evidence_turn_within_k() {
        let ranking = ids(&[7, 3, 5]);
        assert_eq!(recall_any(&ranking, &ids(&[5, 100]), 2), 0.0);
        assert_eq!(recall_any(&ranking, &ids(&[5, 100]), 3), 1.0);
        assert_eq!(recall_any(&ranking, &ids(&[100]), 3), 0.0);
        assert_eq!(recall_any(&ranking, &ids(&[]), 3), 0.0);
    }

    #[test]
    fn ndcg_matches_hand_computed_values() {
        // Evidence first: ideal.
        assert_eq!(ndcg(&ids(&[1, 2, 3]), &ids(&[1, 2]), 10), 1.0);
        // One evidence turn at rank 2 of one: 1/log2(3).
        let v = ndcg(&ids(&[9, 1]), &ids(&[1]), 10);
        assert!((v - 1.0 / 3f64.log2()).abs() < 1e-12, "{v}");
        // Two evidence turns at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2(3)).
        let v = ndcg(&ids(&[1, 9, 2]), &ids(&[1, 2]), 10);
        let want = 1.5 / (1.0 + 1.0 / 3f64.log2());
        assert!((v - want).abs() < 1e-12, "{v} vs {want}");
        // Beyond k counts nothing; k caps the ideal too.
        assert_eq!(ndcg(&ids(&[9, 8, 1]), &ids(&[1]), 2), 0.0);
        assert_eq!(ndcg(&ids(&[1]), &ids(&[1, 2, 3]), 1), 1.0);
        // Duplicates count once.
        let v = ndcg(&ids(&[1, 1]), &ids(&[1, 2]), 10);
        assert!((v - 1.0 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-12, "{v}");
        assert_eq!(ndcg(&ids(&[1]), &[], 10), 0.0);
        assert_eq!(ndcg(&ids(&[1]), &ids(&[1]), 0), 0.0);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(percentile(&mut v, 50.0), Some(50.0));
        assert_eq!(percentile(&mut v, 95.0), Some(95.0));
        assert_eq!(percentile(&mut v, 100.0), Some(100.0));
        assert_eq!(percentile(&mut v, 0.0), Some(1.0));
        assert_eq!(percentile(&mut [3.0], 50.0), Some(3.0));
        assert_eq!(percentile(&mut [], 50.0), None);
        assert_eq!(percentile(&mut v, f64::NAN), None);
        assert_eq!(percentile(&mut v, 101.0), None);
    }
}
