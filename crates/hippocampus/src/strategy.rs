//! Retention strategies (`spec/maxim-reference.md` §3.7): how much an episode is worth
//! keeping, and whether it may be compressed.
//!
//! Sleep scores every episode with a [`RetentionStrategy`]: below the retention threshold
//! (0.3) it is removed; below the compression threshold (0.6) a full episode is compressed
//! when the strategy allows it; long-term episodes have their score doubled (capped at 1).
//! `degree` is the episode's number of outgoing associations (for a compressed episode, the
//! number it had when compressed).
//!
//! - [`AccessBased`] (the default): recency of access, access count, centrality, with
//!   floors for much-used episodes and successful user interactions;
//! - [`ImportanceBased`]: age, success, novelty and user input;
//! - [`Composite`]: a weighted average, compression by strict majority;
//! - [`TemporalAware`]: another strategy's score raised for episodes alone in their
//!   (hour, weekday) cluster or in a busy hour, read from a [`TemporalContext`] (the hub's
//!   SCN implements it).
//!
//! ```
//! use std::time::Duration;
//! use hippocampus::{AccessBased, Episode, EpisodicMemory, RetentionStrategy};
//! use maxim_core::{RecordId, Timestamp};
//! let t0 = Timestamp::from_secs(1_700_000_000);
//! let mut m = EpisodicMemory::new(RecordId::from_u128(1), t0);
//! m.meta.access_count = 3;
//! let e = Episode::from(m);
//! let s = AccessBased::default();
//! assert!((s.score(&e, 2, t0) - 0.65).abs() < 1e-12); // [run] fresh, 3 accesses, 2 edges
//! let later = t0 + Duration::from_secs(302_400); // 3.5 days
//! assert!((s.score(&e, 0, later) - 0.37).abs() < 1e-12);
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use maxim_core::{RecordId, Timestamp, days};

use crate::episode::Episode;

/// Scores an episode for retention and decides whether it may be compressed.
pub trait RetentionStrategy: Send + Sync + fmt::Debug {
    /// A short name (`access_based`, ...).
    fn name(&self) -> &'static str;

    /// The retention score in `[0, 1]` of `record`, which has `degree` outgoing
    /// associations, at `now`.
    fn score(&self, record: &Episode, degree: usize, now: Timestamp) -> f64;

    /// Whether `record` may be compressed at `now` (never when it already is).
    fn should_compress(&self, record: &Episode, now: Timestamp) -> bool;

    /// Told when a record is activated by a use (§1.2 `activate`); nothing by default.
    fn on_activation(&self, _record: &Episode, _now: Timestamp) {}
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Retention by recency of access, access count and centrality (the default).
///
/// ```text
/// recency = 0 if since_access >= max_age else 1 - since_access / max_age
/// access  = min(1, access_count / access_count_threshold)
/// central = min(1, degree / 20)
/// score   = 0.5 recency + 0.2 access + centrality_weight central
/// floors: 0.8 when access_count >= 10; 0.7 for a successful episode with user input
/// ```
///
/// Compression: never before `compression_age`, never with `access_count_threshold`
/// accesses or more, episodes with user input only after three times `compression_age`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessBased {
    /// Time without access after which recency is 0 (default 7 days).
    pub max_age: Duration,
    /// Age (since creation) before which nothing is compressed (default 1 day).
    pub compression_age: Duration,
    /// Accesses at which the access term saturates and compression stops (default 5).
    pub access_count_threshold: u32,
    /// Weight of centrality (default 0.3).
    pub centrality_weight: f64,
}

impl Default for AccessBased {
    fn default() -> Self {
        Self { max_age: days(7), compression_age: days(1), access_count_threshold: 5, centrality_weight: 0.3 }
    }
}

impl RetentionStrategy for AccessBased {
    fn name(&self) -> &'static str {
        "access_based"
    }

    fn score(&self, record: &Episode, degree: usize, now: Timestamp) -> f64 {
        let meta = record.meta();
        let since = now.secs_since(meta.accessed_at);
        let max_age = secs(self.max_age);
        let recency = if since >= max_age { 0.0 } else { 1.0 - since / max_age };
        let access = (f64::from(meta.access_count) / f64::from(self.access_count_threshold.max(1))).min(1.0);
        let central = if degree > 0 { (degree as f64 / 20.0).min(1.0) } else { 0.0 };
        let mut score = 0.5 * recency + 0.2 * access + self.centrality_weight * central;
        if meta.access_count >= 10 {
            score = score.max(0.8);
        }
        if record.had_user_input() && record.success() == Some(true) {
            score = score.max(0.7);
        }
        score.min(1.0)
    }

    fn should_compress(&self, record: &Episode, now: Timestamp) -> bool {
        if record.is_compressed() {
            return false;
        }
        let meta = record.meta();
        let age = now.secs_since(meta.created_at);
        let min_age = secs(self.compression_age);
        if age < min_age || meta.access_count >= self.access_count_threshold {
            return false;
        }
        if record.had_user_input() {
            return age > 3.0 * min_age;
        }
        true
    }
}

/// Retention by age, success, novelty and user input.
///
/// ```text
/// score = 0 when age > max_age and access_count < 3, else
///         0.4 max(0, 1 - age / max_age) + success_weight s + novelty_weight novelty + 0.3 [user input]
/// s = 1.0 success, 0.3 failure, 0.65 unknown
/// ```
///
/// Compression: never before `compression_age` (3 days); with user input only after
/// three times that; with novelty above 0.8 only after twice that.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportanceBased {
    /// Age (since creation) past which a rarely accessed episode scores 0 (default 30 days).
    pub max_age: Duration,
    /// Age before which nothing is compressed (default 3 days).
    pub compression_age: Duration,
    /// Weight of novelty (default 0.2).
    pub novelty_weight: f64,
    /// Weight of success (default 0.2).
    pub success_weight: f64,
}

impl Default for ImportanceBased {
    fn default() -> Self {
        Self { max_age: days(30), compression_age: days(3), novelty_weight: 0.2, success_weight: 0.2 }
    }
}

impl RetentionStrategy for ImportanceBased {
    fn name(&self) -> &'static str {
        "importance_based"
    }

    fn score(&self, record: &Episode, _degree: usize, now: Timestamp) -> f64 {
        let meta = record.meta();
        let age = now.secs_since(meta.created_at);
        let max_age = secs(self.max_age);
        if age > max_age && meta.access_count < 3 {
            return 0.0;
        }
        let success = match record.success() {
            Some(true) => 1.0,
            Some(false) => 0.3,
            None => 0.65,
        };
        let user = if record.had_user_input() { 0.3 } else { 0.0 };
        let score = 0.4 * (1.0 - age / max_age).max(0.0)
            + self.success_weight * success
            + self.novelty_weight * record.novelty()
            + user;
        score.min(1.0)
    }

    fn should_compress(&self, record: &Episode, now: Timestamp) -> bool {
        if record.is_compressed() {
            return false;
        }
        let age = now.secs_since(record.meta().created_at);
        let min_age = secs(self.compression_age);
        if age < min_age {
            false
        } else if record.had_user_input() {
            age > 3.0 * min_age
        } else if record.novelty() > 0.8 {
            age > 2.0 * min_age
        } else {
            true
        }
    }
}

/// A weighted average of strategies; compression when a strict majority agrees.
#[derive(Debug)]
pub struct Composite {
    parts: Vec<(Box<dyn RetentionStrategy>, f64)>,
}

impl Composite {
    /// The average of `parts` with their weights, normalised to sum 1. Weights must be finite
    /// and not negative, with a positive sum.
    pub fn new(parts: Vec<(Box<dyn RetentionStrategy>, f64)>) -> maxim_core::Result<Self> {
        let mut sum = 0.0;
        for (_, w) in &parts {
            sum += maxim_core::check_non_negative("weight", *w)?;
        }
        if sum <= 0.0 || !sum.is_finite() {
            return Err(maxim_core::Error::invalid("weights", "must have a positive, finite sum"));
        }
        Ok(Self { parts: parts.into_iter().map(|(s, w)| (s, w / sum)).collect() })
    }

    /// The original's composite: access-based 0.6, importance-based 0.4.
    pub fn reference() -> Self {
        Self::new(vec![(Box::new(AccessBased::default()), 0.6), (Box::new(ImportanceBased::default()), 0.4)])
            .expect("the reference weights are valid")
    }
}

impl RetentionStrategy for Composite {
    fn name(&self) -> &'static str {
        "composite"
    }

    fn score(&self, record: &Episode, degree: usize, now: Timestamp) -> f64 {
        self.parts.iter().map(|(s, w)| w * s.score(record, degree, now)).sum::<f64>().min(1.0)
    }

    fn should_compress(&self, record: &Episode, now: Timestamp) -> bool {
        let yes = self.parts.iter().filter(|(s, _)| s.should_compress(record, now)).count();
        2 * yes > self.parts.len()
    }

    fn on_activation(&self, record: &Episode, now: Timestamp) {
        for (s, _) in &self.parts {
            s.on_activation(record, now);
        }
    }
}

/// What the temporal-aware strategy needs to know about the time of an episode: the sizes
/// of its SCN bins. The hub's SCN implements it.
pub trait TemporalContext: Send + Sync {
    /// Number of episodes in the (hour, weekday) cluster of `id`, `None` when `id` is not
    /// registered.
    fn cluster_size(&self, id: RecordId) -> Option<usize>;

    /// Number of episodes in the hour bin of `id`, `None` when `id` is not registered.
    fn hour_bin_size(&self, id: RecordId) -> Option<usize>;

    /// The (hour, weekday) cluster of `id` as an opaque key (episodes with equal keys share
    /// a cluster), `None` when `id` is not registered. Only
    /// [`Hippocampus::sleep_with_clustering`](crate::Hippocampus::sleep_with_clustering)
    /// asks; by default no episode has a cluster, and that sleep judges each on its own.
    fn cluster_of(&self, id: RecordId) -> Option<u64> {
        let _ = id;
        None
    }
}

/// Another strategy's score × 1.5 when the episode is alone in its (hour, weekday) cluster
/// and × 1.3 when its hour bin holds at least 5 episodes (both can apply), capped at 1;
/// compression decisions are the base strategy's. Sleep uses it automatically when a
/// [`TemporalContext`] is connected.
pub struct TemporalAware {
    base: Arc<dyn RetentionStrategy>,
    context: Arc<dyn TemporalContext>,
}

impl TemporalAware {
    /// Multiplier for an episode alone in its (hour, weekday) cluster.
    pub const SOLE_REPRESENTATIVE: f64 = 1.5;
    /// Multiplier for an episode in an hour bin of at least [`Self::RHYTHMIC_BIN`] episodes.
    pub const RHYTHMIC: f64 = 1.3;
    /// Episodes an hour bin needs to count as rhythmic.
    pub const RHYTHMIC_BIN: usize = 5;

    /// `base`, adjusted by `context`.
    pub fn new(base: Arc<dyn RetentionStrategy>, context: Arc<dyn TemporalContext>) -> Self {
        Self { base, context }
    }
}

impl fmt::Debug for TemporalAware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemporalAware").field("base", &self.base).finish_non_exhaustive()
    }
}

impl RetentionStrategy for TemporalAware {
    fn name(&self) -> &'static str {
        "temporal_aware"
    }

    fn score(&self, record: &Episode, degree: usize, now: Timestamp) -> f64 {
        let mut score = self.base.score(record, degree, now);
        let id = record.id();
        if self.context.cluster_size(id) == Some(1) {
            score *= Self::SOLE_REPRESENTATIVE;
        }
        if self.context.hour_bin_size(id).is_some_and(|n| n >= Self::RHYTHMIC_BIN) {
            score *= Self::RHYTHMIC;
        }
        score.min(1.0)
    }

    fn should_compress(&self, record: &Episode, now: Timestamp) -> bool {
        self.base.should_compress(record, now)
    }

    fn on_activation(&self, record: &Episode, now: Timestamp) {
        self.base.on_activation(record, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::EpisodicMemory;
    use rustc_hash::FxHashMap;

    const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

    fn episode(access_count: u32) -> EpisodicMemory {
        let mut m = EpisodicMemory::new(RecordId::from_u128(1), T0);
        m.meta.access_count = access_count;
        m
    }

    fn at_days(d: f64) -> Timestamp {
        Timestamp::from_secs_f64(T0.as_secs_f64() + d * 86_400.0).unwrap()
    }

    #[test]
    fn access_based_matches_the_run_vectors() {
        let s = AccessBased::default();
        let e = Episode::from(episode(3));
        assert!((s.score(&e, 2, T0) - 0.65).abs() < 1e-12);
        assert!((s.score(&e, 0, at_days(3.5)) - 0.37).abs() < 1e-12);
        assert!((s.score(&e, 0, at_days(8.0)) - 0.12).abs() < 1e-12);
    }

    #[test]
    fn access_based_floors_and_centrality() {
        let s = AccessBased::default();
        let busy = Episode::from(episode(10));
        assert_eq!(s.score(&busy, 0, at_days(30.0)), 0.8);
        let mut m = episode(1);
        m.perception.cli_input = Some("go".into());
        m.outcome.success = Some(true);
        let user = Episode::from(m.clone());
        assert_eq!(s.score(&user, 0, at_days(30.0)), 0.7);
        m.outcome.success = Some(false);
        assert!((s.score(&Episode::from(m), 0, at_days(30.0)) - 0.04).abs() < 1e-12);
        // Centrality saturates at 20 edges: 0.5 + 0.04 + 0.3.
        assert!((s.score(&Episode::from(episode(1)), 40, T0) - 0.84).abs() < 1e-12);
    }

    #[test]
    fn access_based_compression_rules() {
        let s = AccessBased::default();
        let e = Episode::from(episode(1));
        assert!(!s.should_compress(&e, at_days(0.5)), "younger than a day");
        assert!(s.should_compress(&e, at_days(1.0)));
        assert!(!s.should_compress(&Episode::from(episode(5)), at_days(2.0)), "used five times");
        let mut m = episode(1);
        m.perception.transcript = Some("hello".into());
        let user = Episode::from(m.clone());
        assert!(!s.should_compress(&user, at_days(3.0)));
        assert!(s.should_compress(&user, at_days(3.01)));
        let c = Episode::from(m.compress(0));
        assert!(!s.should_compress(&c, at_days(30.0)), "already compressed");
    }

    #[test]
    fn importance_based_scores_and_compression() {
        let s = ImportanceBased::default();
        let mut m = episode(1);
        m.perception.novelty = 0.5;
        m.outcome.success = Some(true);
        let e = Episode::from(m.clone());
        // 0.4 * 1 + 0.2 * 1 + 0.2 * 0.5.
        assert!((s.score(&e, 0, T0) - 0.7).abs() < 1e-12);
        assert_eq!(s.score(&e, 0, at_days(31.0)), 0.0);
        m.outcome.success = None;
        // 0.4 * 0.5 + 0.2 * 0.65 + 0.2 * 0.5 at 15 days.
        assert!((s.score(&Episode::from(m.clone()), 0, at_days(15.0)) - 0.43).abs() < 1e-12);
        assert!(!s.should_compress(&e, at_days(2.9)));
        assert!(s.should_compress(&e, at_days(3.0)));
        m.perception.novelty = 0.9;
        let novel = Episode::from(m.clone());
        assert!(!s.should_compress(&novel, at_days(6.0)));
        assert!(s.should_compress(&novel, at_days(6.1)));
        m.perception.cli_input = Some("x".into());
        assert!(!s.should_compress(&Episode::from(m.clone()), at_days(9.0)));
        assert!(s.should_compress(&Episode::from(m), at_days(9.1)));
    }

    #[test]
    fn composite_averages_and_votes() {
        let c = Composite::reference();
        let e = Episode::from(episode(3));
        let a = AccessBased::default().score(&e, 2, T0);
        let i = ImportanceBased::default().score(&e, 2, T0);
        assert!((c.score(&e, 2, T0) - (0.6 * a + 0.4 * i)).abs() < 1e-12);
        // Access-based says yes after a day, importance-based not before three: 1 of 2 is no majority.
        assert!(!c.should_compress(&e, at_days(2.0)));
        assert!(c.should_compress(&e, at_days(4.0)));
        assert!(Composite::new(vec![(Box::new(AccessBased::default()), f64::NAN)]).is_err());
        assert!(Composite::new(vec![(Box::new(AccessBased::default()), 0.0)]).is_err());
    }

    #[derive(Default)]
    struct FakeScn {
        cluster: FxHashMap<RecordId, usize>,
        hour: FxHashMap<RecordId, usize>,
    }

    impl TemporalContext for FakeScn {
        fn cluster_size(&self, id: RecordId) -> Option<usize> {
            self.cluster.get(&id).copied()
        }
        fn hour_bin_size(&self, id: RecordId) -> Option<usize> {
            self.hour.get(&id).copied()
        }
    }

    #[test]
    fn temporal_aware_multiplies_the_base_score() {
        let e = Episode::from(episode(3));
        let id = e.id();
        let base = AccessBased::default().score(&e, 0, at_days(3.5)); // 0.37
        let mut scn = FakeScn::default();
        let wrap = |scn: FakeScn| TemporalAware::new(Arc::new(AccessBased::default()), Arc::new(scn));
        assert_eq!(wrap(FakeScn::default()).score(&e, 0, at_days(3.5)), base, "unregistered: unchanged");
        scn.cluster.insert(id, 1);
        assert!((wrap(scn).score(&e, 0, at_days(3.5)) - base * 1.5).abs() < 1e-12);
        let mut scn = FakeScn::default();
        scn.cluster.insert(id, 2);
        scn.hour.insert(id, 5);
        assert!((wrap(scn).score(&e, 0, at_days(3.5)) - base * 1.3).abs() < 1e-12);
        let mut scn = FakeScn::default();
        scn.cluster.insert(id, 1);
        scn.hour.insert(id, 9);
        assert!((wrap(scn).score(&e, 0, at_days(3.5)) - base * 1.5 * 1.3).abs() < 1e-12);
        let mut scn = FakeScn::default();
        scn.cluster.insert(id, 1);
        scn.hour.insert(id, 4);
        assert!((wrap(scn).score(&e, 2, T0) - 0.975).abs() < 1e-12, "0.65 × 1.5");
        let mut scn = FakeScn::default();
        scn.cluster.insert(id, 1);
        scn.hour.insert(id, 6);
        assert_eq!(wrap(scn).score(&e, 2, T0), 1.0, "capped at 1");
        let t = TemporalAware::new(Arc::new(AccessBased::default()), Arc::new(FakeScn::default()));
        assert_eq!(
            t.should_compress(&e, at_days(2.0)),
            AccessBased::default().should_compress(&e, at_days(2.0))
        );
    }
}
