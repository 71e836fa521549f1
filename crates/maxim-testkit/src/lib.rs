//! `maxim-testkit`: the generators of the shared benchmark workload of
//! `shared/bench/WORKLOAD.md` (`maxim-memory-workload/1`), for tests and benchmarks.
//!
//! Every criterion benchmark of maxim and every workload test draws its inputs from here, so
//! their figures and counts can be set beside the original Python system's, which ran the
//! same seeded workload. The generators are exact: the same streams, the same draws in the
//! same order. The crate depends on `maxim-core` alone, so any layer crate may take it as a
//! dev-dependency without reaching a sibling.
//!
//! ```
//! use maxim_testkit::{episode_stream, GOALS};
//! let eps = episode_stream(2);
//! assert_eq!(eps[0].objects, vec!["obj_119", "obj_190", "obj_035"]);
//! assert_eq!(GOALS[eps[0].goal], "inspect box");
//! ```

use maxim_core::SplitMix64;

pub mod dialogue;

/// The workload's name and version.
pub const WORKLOAD: &str = "maxim-memory-workload/1";

/// The start of the virtual clock, in seconds since the epoch.
pub const T0_SECS: i64 = 1_700_000_000;

/// Seconds between two captures on the virtual clock.
pub const CAPTURE_STEP_SECS: i64 = 60;

/// Stream seeds, one per part of the workload.
pub mod seeds {
    /// The episode stream (part a).
    pub const EPISODES: u64 = 1;
    /// Filtered recall queries (part b).
    pub const RECALL_QUERIES: u64 = 2;
    /// Associative recall seeds (part c).
    pub const ASSOCIATIVE_SEEDS: u64 = 3;
    /// Semantic store relationships and seeds (part f).
    pub const SEMANTIC: u64 = 6;
    /// Cross-layer graph (part g).
    pub const CROSS_LAYER: u64 = 7;
    /// Causal learner (part h).
    pub const CAUSAL: u64 = 8;
    /// Randomness series (part i).
    pub const RANDOMNESS: u64 = 9;
    /// Opaque episode ids (parts g and h).
    pub const EPISODE_IDS: u64 = 10;
}

const VERBS: [&str; 10] =
    ["find", "grab", "inspect", "move", "open", "close", "clean", "sort", "fetch", "place"];
const NOUNS: [&str; 5] = ["mug", "box", "door", "shelf", "tool"];

/// The 50 goals: goal `g` is `VERBS[g / 5] + " " + NOUNS[g % 5]`.
pub static GOALS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| (0..50).map(|g| format!("{} {}", VERBS[g / 5], NOUNS[g % 5])).collect());

/// The 200 objects `obj_000` … `obj_199`.
pub fn object(o: u64) -> String {
    format!("obj_{o:03}")
}

/// The 20 tools `tool_00` … `tool_19`.
pub fn tool(t: u64) -> String {
    format!("tool_{t:02}")
}

/// The five semantic categories.
pub const CATEGORIES: [&str; 5] = ["object", "person", "action", "location", "goal"];

/// The four relationship types of part f.
pub const RELATIONSHIP_TYPES: [&str; 4] = ["IS_A", "HAS_PART", "RELATED_TO", "CAUSES"];

/// One pre-drawn episode of the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeDraw {
    /// Detected objects, in draw order (1 to 3, distinct).
    pub objects: Vec<String>,
    /// Index into [`GOALS`].
    pub goal: usize,
    /// Tool name.
    pub tool: String,
    /// Whether the action succeeded.
    pub success: bool,
    /// Salience in `[0, 1)`.
    pub salience: f64,
    /// Novelty in `[0, 1)`.
    pub novelty: f64,
}

impl EpisodeDraw {
    /// The goal's text.
    pub fn goal_text(&self) -> &str {
        &GOALS[self.goal]
    }
}

/// The first `n` episodes of the stream (seed 1); the stream does not depend on `n`.
pub fn episode_stream(n: usize) -> Vec<EpisodeDraw> {
    let mut rng = SplitMix64::new(seeds::EPISODES);
    (0..n)
        .map(|_| {
            let k = 1 + rng.below(3) as usize;
            let mut picked: Vec<u64> = Vec::with_capacity(k);
            while picked.len() < k {
                let o = rng.below(200);
                if !picked.contains(&o) {
                    picked.push(o);
                }
            }
            let goal = rng.below(50) as usize;
            let tool = tool(rng.below(20));
            let success = rng.uniform() < 0.7;
            let salience = rng.uniform();
            let novelty = rng.uniform();
            EpisodeDraw {
                objects: picked.into_iter().map(object).collect(),
                goal,
                tool,
                success,
                salience,
                novelty,
            }
        })
        .collect()
}

/// The virtual clock's time while episode `i` is captured: `T0 + 60·i` seconds.
pub fn capture_time(i: usize) -> maxim_core::Timestamp {
    maxim_core::Timestamp::from_secs(T0_SECS + CAPTURE_STEP_SECS * i as i64)
}

/// One filtered-recall query of part b.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecallQuery {
    /// Goal index for `by_goal`.
    pub goal: usize,
    /// Tool index for `by_tool_success`.
    pub tool: u64,
    /// Success flag for `by_tool_success`.
    pub success: bool,
    /// Object index for `by_object`.
    pub object: u64,
}

/// The 1,000 recall queries of part b (seed 2).
pub fn recall_queries() -> Vec<RecallQuery> {
    let mut rng = SplitMix64::new(seeds::RECALL_QUERIES);
    (0..1000)
        .map(|_| {
            let goal = rng.below(50) as usize;
            let tool = rng.below(20);
            let success = rng.below(2) == 0;
            let object = rng.below(200);
            RecallQuery { goal, tool, success, object }
        })
        .collect()
}

/// The 1,000 associative seeds of part c (seed 3): indices of captured episodes.
pub fn associative_seeds(n: usize) -> Vec<usize> {
    let mut rng = SplitMix64::new(seeds::ASSOCIATIVE_SEEDS);
    (0..1000).map(|_| rng.below(n as u64) as usize).collect()
}

/// One relationship of part f.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelationshipDraw {
    /// Source concept index.
    pub source: usize,
    /// Target concept index (never the source).
    pub target: usize,
    /// Index into [`RELATIONSHIP_TYPES`].
    pub kind: usize,
    /// Weight in `[0.2, 1.0)`.
    pub weight: f64,
}

/// Part f's draws for `c` concepts (seed 6): `5·c` relationships, then 1,000 seeds.
pub fn semantic_draws(c: usize) -> (Vec<RelationshipDraw>, Vec<usize>) {
    let mut rng = SplitMix64::new(seeds::SEMANTIC);
    let c64 = c as u64;
    let rels = (0..5 * c)
        .map(|_| {
            let source = rng.below(c64);
            let mut target = rng.below(c64 - 1);
            if target >= source {
                target += 1;
            }
            let kind = rng.below(4) as usize;
            let weight = 0.2 + 0.8 * rng.uniform();
            RelationshipDraw { source: source as usize, target: target as usize, kind, weight }
        })
        .collect();
    let seeds = (0..1000).map(|_| rng.below(c64) as usize).collect();
    (rels, seeds)
}

/// Concept `j`'s name and category in part f: `concept_` + `j` zero-padded to 5 digits.
pub fn concept(j: usize) -> (String, &'static str) {
    (format!("concept_{j:05}"), CATEGORIES[j % 5])
}

/// `k` distinct indices from `[0, n)` drawn from `rng` (the workload's `sample_indices`: a
/// partial Fisher–Yates shuffle of `0..n`, the first `k` kept in draw order).
pub fn sample_indices(rng: &mut SplitMix64, n: usize, k: usize) -> Vec<usize> {
    let k = k.min(n);
    let mut a: Vec<usize> = (0..n).collect();
    for i in 0..k {
        let j = i + rng.below((n - i) as u64) as usize;
        a.swap(i, j);
    }
    a.truncate(k);
    a
}

/// The workload's opaque episode ids (stream 10) for parts g and h: for each of `n` episodes,
/// two draws written big-endian into 16 bytes with the UUID-v4 version and variant bits set,
/// as a [`RecordId`](maxim_core::RecordId) (which prints as the lowercase 8-4-4-4-12 form).
pub fn episode_ids(n: usize) -> Vec<maxim_core::RecordId> {
    let mut rng = SplitMix64::new(seeds::EPISODE_IDS);
    (0..n)
        .map(|_| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&rng.next_u64().to_be_bytes());
            b[8..].copy_from_slice(&rng.next_u64().to_be_bytes());
            b[6] = (b[6] & 0x0F) | 0x40;
            b[8] = (b[8] & 0x3F) | 0x80;
            maxim_core::RecordId::from_u128(u128::from_be_bytes(b))
        })
        .collect()
}

/// Part g's draws (stream 7) for `n` episodes and `c = n / 10` concepts.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossLayerDraws {
    /// `inst[i]`: the concept episode `i` is an INSTANCE_OF (`n` entries).
    pub inst: Vec<usize>,
    /// For concept `j`: the episode it is DERIVED_FROM and the weight in `[0.5, 1)`.
    pub derived: Vec<(usize, f64)>,
    /// The 1,000 activation seeds (episode indices).
    pub seeds: Vec<usize>,
    /// The removal set: 1,000 distinct episode indices (fewer when `n < 1000`).
    pub removals: Vec<usize>,
}

/// Part g's draws for `n` episodes (stream 7), in the workload's order: `inst`, then each
/// concept's episode and weight, then the seeds, then the removal set. `n` must be at least 10
/// (one concept).
pub fn cross_layer_draws(n: usize) -> CrossLayerDraws {
    let c = n / 10;
    let mut rng = SplitMix64::new(seeds::CROSS_LAYER);
    let inst = (0..n).map(|_| rng.below(c as u64) as usize).collect();
    let derived = (0..c).map(|_| (rng.below(n as u64) as usize, 0.5 + 0.5 * rng.uniform())).collect();
    let seeds = (0..1000).map(|_| rng.below(n as u64) as usize).collect();
    let removals = sample_indices(&mut rng, n, 1000);
    CrossLayerDraws { inst, derived, seeds, removals }
}

/// The causal learner's three context modes (part h).
pub const MODES: [&str; 3] = ["explore", "exploit", "idle"];

/// Causal event signature `k` of part h: `tool:tool_` + `k` zero-padded to 3 digits.
pub fn causal_signature(k: usize) -> String {
    format!("tool:tool_{k:03}")
}

/// One observation of part h.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CausalDraw {
    /// Event signature index (0 … 499, see [`causal_signature`]).
    pub k: usize,
    /// Whether the outcome is positive.
    pub positive: bool,
    /// Index into [`MODES`].
    pub mode: usize,
    /// Delay between event and outcome, in seconds, in `[0.1, 5.0)`.
    pub delta: f64,
    /// The episode (an index into [`episode_ids`]).
    pub memory: usize,
}

/// Part h's observations for `n` episodes (stream 8): the 500 chances of a positive outcome
/// are drawn first, then every item of the iterator draws one observation. The workload feeds
/// the first `10·n`; the stream goes on beyond them.
pub fn causal_stream(n: usize) -> impl Iterator<Item = CausalDraw> {
    let mut rng = SplitMix64::new(seeds::CAUSAL);
    let p_pos: Vec<f64> = (0..500).map(|_| rng.uniform()).collect();
    std::iter::repeat_with(move || {
        let k = rng.below(500) as usize;
        let positive = rng.uniform() < p_pos[k];
        let mode = rng.below(3) as usize;
        let delta = 0.1 + 4.9 * rng.uniform();
        let memory = rng.below(n as u64) as usize;
        CausalDraw { k, positive, mode, delta, memory }
    })
}

/// The 10,000 series of 100 values of part i (stream 9): series `s` is of kind `s mod 4`
/// (uniform, drifting, periodic with period 12, exponential).
pub fn randomness_series() -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(seeds::RANDOMNESS);
    (0..10_000)
        .map(|s| {
            (0..100)
                .map(|t| {
                    let u = rng.uniform();
                    let t = f64::from(t);
                    match s % 4 {
                        0 => u,
                        1 => 0.01 * t + u,
                        2 => (2.0 * std::f64::consts::PI * t / 12.0).sin() + 0.5 * u,
                        _ => -(1.0 - u).ln(),
                    }
                })
                .collect()
        })
        .collect()
}

/// Peak resident set size of this process so far, in KiB (`VmHWM` from `/proc/self/status`;
/// `None` where that file does not exist).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Current resident set size of this process, in KiB (`VmRSS`).
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episode_stream_matches_the_workload_vectors() {
        let eps = episode_stream(2);
        assert_eq!(eps[0].objects, ["obj_119", "obj_190", "obj_035"]);
        assert_eq!(eps[0].goal_text(), "inspect box");
        assert_eq!(eps[0].tool, "tool_08");
        assert!(!eps[0].success);
        assert_eq!(eps[0].salience, 0.523_067_179_850_981_4);
        assert_eq!(eps[0].novelty, 0.285_508_684_396_966_64);
        assert_eq!(eps[1].objects, ["obj_137", "obj_070"]);
        assert_eq!(eps[1].goal_text(), "clean tool");
        assert_eq!(eps[1].tool, "tool_02");
        assert!(eps[1].success);
    }

    #[test]
    fn the_stream_does_not_depend_on_its_length() {
        assert_eq!(episode_stream(1000)[..10], episode_stream(10)[..]);
    }

    #[test]
    fn goals_follow_the_vocabulary() {
        assert_eq!(GOALS[0], "find mug");
        assert_eq!(GOALS[7], "grab door");
        assert_eq!(GOALS.len(), 50);
    }

    #[test]
    fn semantic_draws_never_relate_a_concept_to_itself() {
        let (rels, seeds) = semantic_draws(100);
        assert_eq!(rels.len(), 500);
        assert_eq!(seeds.len(), 1000);
        assert!(rels.iter().all(|r| r.source != r.target && r.source < 100 && r.target < 100));
        assert!(rels.iter().all(|r| (0.2..1.0).contains(&r.weight)));
    }

    #[test]
    fn rss_is_readable_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss_kib().unwrap() >= rss_kib().unwrap() / 2);
        }
    }

    #[test]
    fn episode_ids_match_the_workload_vectors() {
        let ids = episode_ids(2);
        assert_eq!(ids[0].to_string(), "088712be-8a58-4fca-bbff-7c596e26ce46");
        assert_eq!(ids[1].to_string(), "21876e7a-2aec-4a3d-977e-91a249eb9308");
    }

    #[test]
    fn splitmix_matches_the_workload_vectors() {
        let mut rng = SplitMix64::new(1);
        assert_eq!(
            [rng.next_u64(), rng.next_u64(), rng.next_u64()],
            [0x910a_2dec_8902_5cc1, 0xbeeb_8da1_658e_ec67, 0xf893_a2ee_fb32_555e]
        );
    }

    #[test]
    fn sample_indices_are_distinct_and_in_range() {
        let mut rng = SplitMix64::new(5);
        let s = sample_indices(&mut rng, 50, 20);
        let mut sorted = s.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 20);
        assert!(s.iter().all(|&i| i < 50));
        assert_eq!(sample_indices(&mut rng, 3, 10).len(), 3);
    }

    #[test]
    fn cross_layer_draws_have_the_workload_shape() {
        let d = cross_layer_draws(1000);
        assert_eq!((d.inst.len(), d.derived.len(), d.seeds.len(), d.removals.len()), (1000, 100, 1000, 1000));
        assert!(d.inst.iter().all(|&j| j < 100));
        assert!(d.derived.iter().all(|&(e, w)| e < 1000 && (0.5..1.0).contains(&w)));
        let mut distinct = d.removals.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 1000);
    }

    #[test]
    fn the_causal_stream_is_the_same_however_far_it_is_read() {
        let short: Vec<CausalDraw> = causal_stream(100).take(10).collect();
        let long: Vec<CausalDraw> = causal_stream(100).take(1000).collect();
        assert_eq!(short[..], long[..10]);
        assert!(
            long.iter().all(|d| d.k < 500 && d.mode < 3 && d.memory < 100 && (0.1..5.0).contains(&d.delta))
        );
        assert_eq!(causal_signature(7), "tool:tool_007");
    }

    #[test]
    fn randomness_series_match_the_workload_vectors() {
        let all = randomness_series();
        assert_eq!((all.len(), all[0].len()), (10_000, 100));
        assert_eq!(all[0][..3], [0.682_362_734_978_995_8, 0.750_694_892_958_278_7, 0.265_322_440_599_183_3]);
    }
}
