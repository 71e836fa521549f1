//! `assess_randomness` (`spec/maxim-reference.md` §9.1): a Wald–Wolfowitz runs test about the
//! median and the lag-1 autocorrelation, combined.
//!
//! ```text
//! fewer than 8 values, or fewer than 4 off the median  -> random, confidence 0, INSUFFICIENT_DATA
//! z  = (runs - (2·n1·n0/n + 1)) / sqrt(max(2·n1·n0·(2·n1·n0 - n) / (n²·(n - 1)), 1e-10))
//!      (0 when every value lies on one side)
//! r1 = Σ (v_i - mean)(v_{i+1} - mean) / Σ (v - mean)²   (0 when the values are constant)
//! pattern_confidence = max(min(1, |z| / 3), min(1, 2·|r1|)); random when it is below 0.4
//! type: random -> RANDOM; z < -1.96 -> TRENDING; z > 1.96 -> CYCLIC; |r1| > 0.3 -> CLUSTERING;
//!       otherwise TRENDING
//! ```
//!
//! The assessment also gives the runs test's two-sided p-value under the normal approximation
//! (`erfc(|z| / √2)`, from `statrs`). Series of up to [`STACK_VALUES`] values are assessed
//! without allocating.
//!
//! ```
//! use ips_gate::assess_randomness;
//! use maxim_core::PatternType;
//! let rising: Vec<f64> = (1..=10).map(f64::from).collect();
//! let a = assess_randomness(&rising)?;
//! assert!(!a.is_random);
//! assert_eq!(a.pattern_type, PatternType::Trending);
//! assert!((a.runs_z + 2.683).abs() < 1e-3 && (a.lag1_autocorrelation - 0.7).abs() < 1e-12);
//! assert!(a.runs_p_value < 0.01);
//! assert_eq!(assess_randomness(&[1.0, 2.0, 3.0])?.pattern_type, PatternType::InsufficientData);
//! assert!(assess_randomness(&[1.0, f64::NAN]).is_err());
//! # Ok::<(), ips_gate::Error>(())
//! ```

use maxim_core::{PatternType, RandomnessAssessment};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Fewest values a series needs to be judged (§9.1).
pub const MIN_VALUES: usize = 8;
/// Fewest values off the median the runs test needs (§9.1).
pub const MIN_OFF_MEDIAN: usize = 4;
/// Pattern confidence from which a series is not random (§9.1).
pub const RANDOM_BELOW: f64 = 0.4;
/// Longest series assessed without allocating (a copy for the median lives on the stack).
pub const STACK_VALUES: usize = 256;

/// What [`assess_randomness`] found: the core's [`RandomnessAssessment`] and the runs test's
/// details.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// True when no pattern was found (or there was too little data to find one).
    pub is_random: bool,
    /// How strongly a pattern shows, in `[0, 1]`.
    pub pattern_confidence: f64,
    /// The kind of structure found.
    pub pattern_type: PatternType,
    /// Wald–Wolfowitz runs-test z score (0 when there was too little data).
    pub runs_z: f64,
    /// Two-sided p-value of `runs_z` under the normal approximation (1 without a test).
    pub runs_p_value: f64,
    /// Lag-1 autocorrelation (0 when there was too little data).
    pub lag1_autocorrelation: f64,
    /// Runs of values on one side of the median.
    pub runs: usize,
    /// Values above the median.
    pub above: usize,
    /// Values below the median.
    pub below: usize,
    /// Values assessed.
    pub n: usize,
}

impl Assessment {
    fn insufficient(n: usize) -> Self {
        Self {
            is_random: true,
            pattern_confidence: 0.0,
            pattern_type: PatternType::InsufficientData,
            runs_z: 0.0,
            runs_p_value: 1.0,
            lag1_autocorrelation: 0.0,
            runs: 0,
            above: 0,
            below: 0,
            n,
        }
    }

    /// The core's form of the assessment.
    pub fn to_core(&self) -> RandomnessAssessment {
        RandomnessAssessment {
            is_random: self.is_random,
            pattern_confidence: self.pattern_confidence,
            pattern_type: self.pattern_type,
            runs_z: self.runs_z,
            lag1_autocorrelation: self.lag1_autocorrelation,
            n: self.n,
        }
    }
}

impl From<Assessment> for RandomnessAssessment {
    fn from(a: Assessment) -> Self {
        a.to_core()
    }
}

/// Assesses whether `values` look random (see the [module docs](self)). Every value must be
/// finite: a NaN or an infinity is [`Error::NonFinite`] naming its position.
pub fn assess_randomness(values: &[f64]) -> Result<Assessment> {
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite { field: "values", index, value: values[index] });
    }
    Ok(assess_finite(values))
}

/// The median of finite `values` (the mean of the two middle values for an even count), as
/// Python's `statistics.median`; `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    if values.len() <= STACK_VALUES {
        let mut buf = [0.0f64; STACK_VALUES];
        let buf = &mut buf[..values.len()];
        buf.copy_from_slice(values);
        Some(median_in_place(buf))
    } else {
        let mut buf = values.to_vec();
        Some(median_in_place(&mut buf))
    }
}

/// The median of `buf` (not empty), reordering it.
pub(crate) fn median_in_place(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    let mid = n / 2;
    let (left, &mut upper, _) = buf.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        f64::midpoint(lower, upper)
    }
}

/// §9.1 on values known to be finite.
pub(crate) fn assess_finite(values: &[f64]) -> Assessment {
    let n_values = values.len();
    if n_values < MIN_VALUES {
        return Assessment::insufficient(n_values);
    }
    let m = median(values).expect("at least 8 values");
    // The runs about the median, ties dropped. Branch-free: on random data the side of each
    // value is a coin toss, and a mispredicted branch per value cost more than the rest of
    // the assessment. `last` is 2 before the first value off the median.
    let (mut above, mut off, mut runs) = (0usize, 0usize, 0usize);
    let mut last = 2u8;
    for &v in values {
        let is_off = usize::from(v != m);
        let side = u8::from(v > m);
        above += usize::from(side);
        off += is_off;
        runs += is_off & usize::from(side != last);
        // `side` when off the median, else `last` kept (a tie is never above it).
        last = if is_off == 1 { side } else { last };
    }
    let below = off - above;
    let n_off = above + below;
    if n_off < MIN_OFF_MEDIAN {
        return Assessment::insufficient(n_values);
    }
    let runs_z = if above == 0 || below == 0 {
        0.0
    } else {
        let (n1, n0, n) = (above as f64, below as f64, n_off as f64);
        let two = 2.0 * n1 * n0;
        let expected = two / n + 1.0;
        let variance = two * (two - n) / (n * n * (n - 1.0));
        (runs as f64 - expected) / variance.max(1e-10).sqrt()
    };
    let r1 = lag1_autocorrelation(values);
    let pattern_confidence = (runs_z.abs() / 3.0).min(1.0).max((2.0 * r1.abs()).min(1.0));
    let is_random = pattern_confidence < RANDOM_BELOW;
    let pattern_type = if is_random {
        PatternType::Random
    } else if runs_z < -1.96 {
        PatternType::Trending
    } else if runs_z > 1.96 {
        PatternType::Cyclic
    } else if r1.abs() > 0.3 {
        PatternType::Clustering
    } else {
        PatternType::Trending
    };
    Assessment {
        is_random,
        pattern_confidence,
        pattern_type,
        runs_z,
        runs_p_value: statrs::function::erf::erfc(runs_z.abs() / std::f64::consts::SQRT_2).min(1.0),
        lag1_autocorrelation: r1,
        runs,
        above,
        below,
        n: n_values,
    }
}

/// The lag-1 autocorrelation `Σ (v_i − mean)(v_{i+1} − mean) / Σ (v − mean)²` (0 for fewer
/// than two values or constant values).
pub fn lag1_autocorrelation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let mut denominator = 0.0;
    let mut numerator = 0.0;
    let mut prev = values[0] - mean;
    denominator += prev * prev;
    for &v in &values[1..] {
        let d = v - mean;
        numerator += prev * d;
        denominator += d * d;
        prev = d;
    }
    if denominator < 1e-15 { 0.0 } else { numerator / denominator }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn medians_follow_python() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let long: Vec<f64> = (0..1001).map(f64::from).rev().collect();
        assert_eq!(median(&long), Some(500.0));
    }

    proptest! {
        #[test]
        fn median_agrees_with_sorting(values in proptest::collection::vec(-1e6f64..1e6, 1..400)) {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len();
            let expected = if n % 2 == 1 { sorted[n / 2] } else { f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]) };
            prop_assert_eq!(median(&values), Some(expected));
        }

        #[test]
        fn assessments_stay_in_range(values in proptest::collection::vec(-1e3f64..1e3, 0..300)) {
            let a = assess_randomness(&values).unwrap();
            prop_assert!((0.0..=1.0).contains(&a.pattern_confidence));
            prop_assert!((0.0..=1.0).contains(&a.runs_p_value));
            prop_assert!(a.runs_z.is_finite() && a.lag1_autocorrelation.is_finite());
            prop_assert!(a.lag1_autocorrelation.abs() <= 1.0 + 1e-9);
            prop_assert_eq!(a.is_random, a.pattern_confidence < RANDOM_BELOW);
            prop_assert_eq!(a.n, values.len());
            prop_assert!(a.above + a.below <= values.len());
        }
    }
}
