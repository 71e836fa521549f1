//! The gate of §9.2: statistical candidates on confidence, causal ones on their timing.

use std::collections::BTreeMap;

use ips_gate::{GateConfig, IpsGate, Verdict, assess_randomness};
use maxim_core::contracts::{CAUSAL_PATTERN, OPERATIONAL_PATTERN};
use maxim_core::{PatternType, PromotionCandidate, RandomnessGate, Source, SplitMix64, Timestamp};

fn causal(times: Vec<Timestamp>) -> PromotionCandidate {
    PromotionCandidate {
        pattern_name: "tool:grasp \u{2192} tool:grasp:positive".into(),
        category: CAUSAL_PATTERN.into(),
        confidence: 0.8,
        observations: times.len() as u32,
        source_memory_ids: Vec::new(),
        observed_at: times,
        source: Source::Episodic,
        metadata: BTreeMap::new(),
    }
}

fn statistical(confidence: f64) -> PromotionCandidate {
    PromotionCandidate {
        pattern_name: "stat:tool:navigate:success".into(),
        category: OPERATIONAL_PATTERN.into(),
        confidence,
        observations: 0,
        source_memory_ids: Vec::new(),
        observed_at: Vec::new(),
        source: Source::AgentInference,
        metadata: BTreeMap::new(),
    }
}

/// Times of a Poisson process with a mean gap of an hour.
fn poisson_times(seed: u64, n: usize) -> Vec<Timestamp> {
    let mut rng = SplitMix64::new(seed);
    let mut t = 1_700_000_000.0;
    (0..n)
        .map(|_| {
            t += -(1.0 - rng.uniform()).ln() * 3600.0;
            Timestamp::from_secs_f64(t).unwrap()
        })
        .collect()
}

fn secs(s: &[i64]) -> Vec<Timestamp> {
    s.iter().map(|&s| Timestamp::from_secs(1_700_000_000 + s)).collect()
}

#[test]
fn statistical_candidates_pass_on_confidence() {
    let gate = IpsGate::default();
    assert!(gate.admits(&statistical(0.4)).admitted);
    assert!(gate.admits(&statistical(0.95)).admitted);
    let weak = gate.judge(&statistical(0.39));
    assert!(!weak.admitted);
    assert!(matches!(weak.verdict, Verdict::WeakStatistic { threshold, .. } if threshold == 0.4));
    assert!(!gate.admits(&statistical(f64::NAN)).admitted);
    // Their timing is not looked at, even when it is random.
    let mut c = statistical(0.5);
    c.observed_at = poisson_times(1, 50);
    assert!(gate.admits(&c).admitted);
}

#[test]
fn too_few_times_pass_conservatively() {
    let gate = IpsGate::default();
    for n in [0, 1, 5, 8] {
        let j = gate.judge(&causal(poisson_times(2, n)));
        assert!(j.admitted, "{n} times");
        assert!(matches!(j.verdict, Verdict::TooFewTimes { needed: 8, .. }));
        assert!(j.to_decision().reason.contains("too few"));
    }
    // Nine times make eight intervals: a real test. The original rejected 8 times (7
    // intervals, "insufficient" counted as random).
    let j = gate.judge(&causal(poisson_times(2, 9)));
    assert!(!matches!(j.verdict, Verdict::TooFewTimes { .. }));
}

#[test]
fn regular_timing_is_admitted_as_untestable() {
    let gate = IpsGate::default();
    let hourly: Vec<i64> = (0..30).map(|i| i * 3600).collect();
    let j = gate.judge(&causal(secs(&hourly)));
    assert!(j.admitted);
    assert_eq!(j.verdict, Verdict::Untestable { intervals: 29 });
}

#[test]
fn random_timing_is_rejected_and_structure_admitted() {
    let gate = IpsGate::default();
    let mut rejected = 0;
    for seed in 0..100 {
        let j = gate.judge(&causal(poisson_times(seed, 40)));
        match j.verdict {
            Verdict::Random { assessment } => {
                rejected += 1;
                assert!(!j.admitted);
                assert!(assessment.pattern_confidence < 0.4);
                assert_eq!(assessment.n, 39);
            }
            Verdict::Structured { .. } => assert!(j.admitted),
            other => panic!("unexpected {other:?}"),
        }
    }
    // Random timing is rejected most of the time (the runs test's false-alarm rate is
    // what lets the rest through).
    assert!(rejected >= 55, "{rejected} of 100 rejected");

    // Bursts: five quick observations, then a long pause, repeated.
    let bursts: Vec<i64> = (0..40).map(|i| (i / 5) * 86_400 + (i % 5) * 60).collect();
    let j = gate.judge(&causal(secs(&bursts)));
    assert!(j.admitted, "{}", j.verdict);
    // Slowing down: ever longer gaps.
    let slowing: Vec<i64> = (0..30).map(|i| i * i * 60).collect();
    let j = gate.judge(&causal(secs(&slowing)));
    assert!(
        matches!(j.verdict, Verdict::Structured { assessment } if assessment.pattern_type == PatternType::Trending)
    );
}

#[test]
fn times_are_judged_in_time_order() {
    let gate = IpsGate::default();
    let slowing = secs(&(0..30).map(|i| i * i * 60).collect::<Vec<_>>());
    let mut shuffled = slowing.clone();
    let mut rng = SplitMix64::new(4);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    assert_eq!(gate.judge(&causal(shuffled)), gate.judge(&causal(slowing)));
}

#[test]
fn the_gate_tests_the_intervals_with_assess_randomness() {
    let gate = IpsGate::default();
    let times = poisson_times(11, 25);
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1].secs_since(w[0])).collect();
    let expected = assess_randomness(&gaps).unwrap();
    match gate.judge(&causal(times)).verdict {
        Verdict::Random { assessment } | Verdict::Structured { assessment } => {
            assert_eq!(assessment, expected);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn every_decision_says_why() {
    let gate = IpsGate::default();
    let candidates = [
        statistical(0.9),
        statistical(0.1),
        causal(poisson_times(3, 4)),
        causal(secs(&(0..20).map(|i| i * 60).collect::<Vec<_>>())),
        causal(poisson_times(3, 40)),
        causal(secs(&(0..30).map(|i| i * i * 60).collect::<Vec<_>>())),
    ];
    for c in &candidates {
        let j = gate.judge(c);
        let d = gate.admits(c);
        assert_eq!(d.admitted, j.admitted);
        assert_eq!(d.reason, j.verdict.to_string());
        assert!(!d.reason.is_empty());
    }
    assert!(gate.admits(&candidates[4]).reason.contains("random") || gate.admits(&candidates[4]).admitted);
}

#[test]
fn parallel_batches_agree_with_sequential_ones() {
    let gate = IpsGate::default();
    let mut rng = SplitMix64::new(8);
    let candidates: Vec<PromotionCandidate> = (0..2_000)
        .map(|i| match i % 4 {
            0 => statistical(rng.uniform()),
            1 => causal(poisson_times(i, 5 + (i as usize % 60))),
            2 => causal(secs(&(0..(10 + i as i64 % 50)).map(|k| k * k * 30).collect::<Vec<_>>())),
            _ => causal(poisson_times(i + 7, 100)),
        })
        .collect();
    let parallel = gate.judge_batch(&candidates);
    let sequential = gate.judge_batch_sequential(&candidates);
    assert_eq!(parallel, sequential);
    // Borrowed views are judged the same, in parallel and on one thread.
    let views: Vec<_> = candidates.iter().map(PromotionCandidate::as_view).collect();
    assert_eq!(gate.judge_views(&views), sequential);
    assert_eq!(gate.judge_views_sequential(&views), sequential);
    // Below the batch size, on the calling thread: the same again.
    assert_eq!(gate.judge_views(&views[..100]), sequential[..100]);
    let decisions = gate.admit_batch(&candidates);
    assert_eq!(decisions.len(), candidates.len());
    for (d, j) in decisions.iter().zip(&sequential) {
        assert_eq!(d.admitted, j.admitted);
    }
    // Both kinds of outcome occur.
    assert!(sequential.iter().any(|j| j.admitted) && sequential.iter().any(|j| !j.admitted));
}

#[test]
fn long_time_lists_are_judged_too() {
    let gate = IpsGate::default();
    let j = gate.judge(&causal(poisson_times(5, 1_000)));
    assert!(matches!(j.verdict, Verdict::Random { .. } | Verdict::Structured { .. }));
}

#[test]
fn settings_are_checked() {
    let mut bad = GateConfig::default();
    bad.threshold = 1.5;
    assert!(IpsGate::new(bad).is_err());
    let mut bad = GateConfig::default();
    bad.min_samples = 7;
    assert!(IpsGate::new(bad).is_err());
    let mut strict = GateConfig::default();
    strict.min_samples = 20;
    let gate = IpsGate::new(strict).unwrap();
    assert!(matches!(
        gate.judge(&causal(poisson_times(1, 15))).verdict,
        Verdict::TooFewTimes { needed: 20, .. }
    ));
}

#[test]
fn the_trait_assess_matches_the_function() {
    let gate = IpsGate::default();
    let values: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(gate.assess(&values), assess_randomness(&values).unwrap().to_core());
    let bad = gate.assess(&[1.0, f64::NAN, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    assert!(bad.is_random);
    assert_eq!(bad.pattern_type, PatternType::InsufficientData);
    assert_eq!(bad.n, 9);
}

proptest::proptest! {
    #[test]
    fn a_lent_candidate_is_judged_as_its_owned_form(
        gaps in proptest::collection::vec(1u32..5_000, 0..40),
        cut in 0usize..40,
        statistical in proptest::bool::ANY,
        confidence in 0.0f64..1.0,
    ) {
        use maxim_core::{PromotionCandidateRef, SplitSlice};
        let mut t = 1_700_000_000i64;
        let times: Vec<Timestamp> = gaps.iter().map(|&g| { t += i64::from(g); Timestamp::from_secs(t) }).collect();
        let mut owned = PromotionCandidate {
            pattern_name: "a \u{2192} b".into(),
            category: if statistical { OPERATIONAL_PATTERN } else { CAUSAL_PATTERN }.into(),
            confidence,
            observations: times.len() as u32,
            source_memory_ids: vec![],
            observed_at: times,
            source: Source::Episodic,
            metadata: BTreeMap::default(),
        };
        // Times out of order in the owned form are judged in time order too.
        owned.observed_at.reverse();
        let cut = cut.min(owned.observed_at.len());
        let (front, back) = owned.observed_at.split_at(cut);
        let view = PromotionCandidateRef { observed_at: SplitSlice::new(front, back), ..owned.as_view() };
        let gate = IpsGate::default();
        proptest::prop_assert_eq!(gate.judge_view(&view), gate.judge(&owned));
        proptest::prop_assert_eq!(gate.admits_view(&view), gate.admits(&owned));
        proptest::prop_assert_eq!(gate.judge_split_times(view.observed_at), gate.judge_times(&owned.observed_at));
    }
}
