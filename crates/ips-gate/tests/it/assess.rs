//! `assess_randomness` with the [run] vectors of §9.1.

use ips_gate::{assess_randomness, lag1_autocorrelation};
use maxim_core::{PatternType, SplitMix64};
use proptest::prelude::*;

#[test]
fn one_to_ten_is_a_trend() {
    let values: Vec<f64> = (1..=10).map(f64::from).collect();
    let a = assess_randomness(&values).unwrap();
    assert!(!a.is_random);
    assert_eq!(a.pattern_confidence, 1.0);
    assert_eq!(a.pattern_type, PatternType::Trending);
    assert!((a.runs_z - -2.683).abs() < 5e-4, "z {}", a.runs_z);
    assert!((a.lag1_autocorrelation - 0.7).abs() < 1e-12);
    assert_eq!((a.runs, a.above, a.below, a.n), (2, 5, 5, 10));
    // z = -4 / sqrt(2000 / 900); p = erfc(|z| / sqrt 2).
    assert!((a.runs_z - (-4.0 / (2000.0f64 / 900.0).sqrt())).abs() < 1e-12);
    assert!((a.runs_p_value - 0.0073).abs() < 1e-4, "p {}", a.runs_p_value);
}

#[test]
fn alternation_is_cyclic() {
    let values: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { 1.0 } else { 0.0 }).collect();
    let a = assess_randomness(&values).unwrap();
    assert!(!a.is_random);
    assert_eq!(a.pattern_type, PatternType::Cyclic);
    assert!((a.runs_z - 2.683).abs() < 5e-4);
    assert!((a.lag1_autocorrelation - -0.9).abs() < 1e-12);
    assert_eq!(a.runs, 10);
}

#[test]
fn short_series_are_insufficient() {
    for values in [&[1.0, 2.0, 3.0][..], &[][..], &[1.0; 7][..]] {
        let a = assess_randomness(values).unwrap();
        assert!(a.is_random);
        assert_eq!(a.pattern_confidence, 0.0);
        assert_eq!(a.pattern_type, PatternType::InsufficientData);
        assert_eq!(a.n, values.len());
    }
    // Eight values, but only three off the median.
    let ties = [5.0, 5.0, 5.0, 5.0, 5.0, 1.0, 9.0, 9.0];
    assert_eq!(assess_randomness(&ties).unwrap().pattern_type, PatternType::InsufficientData);
    // Constant values: no variance, no runs.
    assert_eq!(assess_randomness(&[2.0; 20]).unwrap().pattern_type, PatternType::InsufficientData);
}

#[test]
fn fifty_seeded_uniforms_look_random() {
    // The [run] vector used Python's seeded generator (pc about 0.013); with the workload's
    // SplitMix64 the same kind of series must look random too, for most seeds.
    let mut random = 0;
    for seed in 0..100 {
        let mut rng = SplitMix64::new(seed);
        let values: Vec<f64> = (0..50).map(|_| rng.uniform()).collect();
        let a = assess_randomness(&values).unwrap();
        if a.is_random {
            random += 1;
            assert_eq!(a.pattern_type, PatternType::Random);
            assert!(a.pattern_confidence < 0.4);
        }
    }
    // Under the null, pc < 0.4 needs |z| < 1.2 and |r1| < 0.2: about 70 % of series.
    assert!((55..=90).contains(&random), "{random} of 100 looked random");
}

#[test]
fn a_trend_with_noise_and_clusters_are_seen() {
    let mut rng = SplitMix64::new(3);
    let trend: Vec<f64> = (0..100).map(|t| 0.05 * f64::from(t) + rng.uniform()).collect();
    let a = assess_randomness(&trend).unwrap();
    assert_eq!(a.pattern_type, PatternType::Trending);
    // Blocks of high and low values: few runs, strong lag-1 correlation.
    let blocks: Vec<f64> =
        (0..60).map(|t| if (t / 10) % 2 == 0 { 10.0 + rng.uniform() } else { rng.uniform() }).collect();
    let b = assess_randomness(&blocks).unwrap();
    assert!(!b.is_random);
    assert!(b.lag1_autocorrelation > 0.5);
}

#[test]
fn non_finite_values_are_refused() {
    let err = assess_randomness(&[1.0, 2.0, f64::INFINITY, 4.0]).unwrap_err();
    assert!(matches!(err, ips_gate::Error::NonFinite { index: 2, .. }));
    assert!(assess_randomness(&[f64::NAN; 10]).is_err());
}

#[test]
fn lag1_of_short_or_flat_series_is_zero() {
    assert_eq!(lag1_autocorrelation(&[]), 0.0);
    assert_eq!(lag1_autocorrelation(&[1.0]), 0.0);
    assert_eq!(lag1_autocorrelation(&[3.0; 5]), 0.0);
}

#[test]
fn long_series_are_assessed_too() {
    let values: Vec<f64> = (0..1000).map(|i| f64::from(i % 7)).collect();
    let a = assess_randomness(&values).unwrap();
    assert_eq!(a.n, 1000);
    assert!(!a.is_random);
}

/// §9.1 transliterated as the Python does it: sort for the median, lists for the runs.
fn naive(values: &[f64]) -> (bool, f64, PatternType, f64, f64) {
    let n = values.len();
    if n < 8 {
        return (true, 0.0, PatternType::InsufficientData, 0.0, 0.0);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let m = if n % 2 == 1 { sorted[n / 2] } else { f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]) };
    let b: Vec<bool> = values.iter().filter(|v| **v != m).map(|v| *v > m).collect();
    if b.len() < 4 {
        return (true, 0.0, PatternType::InsufficientData, 0.0, 0.0);
    }
    let runs = 1 + b.windows(2).filter(|w| w[0] != w[1]).count();
    let n1 = b.iter().filter(|x| **x).count() as f64;
    let n0 = b.len() as f64 - n1;
    let nn = b.len() as f64;
    let z = if n1 == 0.0 || n0 == 0.0 {
        0.0
    } else {
        (runs as f64 - (2.0 * n1 * n0 / nn + 1.0))
            / (2.0 * n1 * n0 * (2.0 * n1 * n0 - nn) / (nn * nn * (nn - 1.0))).max(1e-10).sqrt()
    };
    let mean = values.iter().sum::<f64>() / n as f64;
    let den: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    let num: f64 = values.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    let r1 = if den < 1e-15 { 0.0 } else { num / den };
    let pc = (z.abs() / 3.0).min(1.0).max((2.0 * r1.abs()).min(1.0));
    let random = pc < 0.4;
    let t = if random {
        PatternType::Random
    } else if z < -1.96 {
        PatternType::Trending
    } else if z > 1.96 {
        PatternType::Cyclic
    } else if r1.abs() > 0.3 {
        PatternType::Clustering
    } else {
        PatternType::Trending
    };
    (random, pc, t, z, r1)
}

proptest! {
    /// Continuous values and values with many ties (small integers), at every length.
    #[test]
    fn assess_agrees_with_a_naive_transliteration(
        values in proptest::collection::vec(prop_oneof![0.0f64..10.0, (0u8..4).prop_map(f64::from)], 0..300),
    ) {
        let a = assess_randomness(&values).unwrap();
        let (random, pc, t, z, r1) = naive(&values);
        prop_assert_eq!(a.is_random, random);
        prop_assert_eq!(a.pattern_type, t);
        prop_assert!((a.pattern_confidence - pc).abs() < 1e-9);
        prop_assert!((a.runs_z - z).abs() < 1e-9);
        prop_assert!((a.lag1_autocorrelation - r1).abs() < 1e-9);
    }
}
