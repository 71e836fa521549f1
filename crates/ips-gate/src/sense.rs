//! The IPS's other number-sense functions (`spec/maxim-reference.md` §9.3): comparison with a
//! Weber fraction, order-of-magnitude categories, short-window trends, robust anomalies, and
//! the confidence of quick sums and means.
//!
//! ```
//! use ips_gate::sense::{Comparison, Magnitude, TrendDirection, categorize, compare, detect_anomaly, detect_trend};
//! assert_eq!(compare(100.0, 110.0)?, Comparison::Similar);
//! assert_eq!(compare(100.0, 130.0)?, Comparison::Less);
//! assert_eq!(compare(100.0, 70.0)?, Comparison::MuchGreater);
//! assert_eq!(categorize(0.0)?, Magnitude::Negligible);
//! assert_eq!(categorize(-250.0)?, Magnitude::Large);
//! assert_eq!(detect_trend(&[1.0, 2.0, 3.0, 4.0, 5.0])?.direction, TrendDirection::Increasing);
//! assert!(detect_anomaly(50.0, &[10.0, 11.0, 9.0, 10.0, 12.0])?.is_anomalous);
//! # Ok::<(), ips_gate::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::assess::median;
use crate::error::{Error, Result, check_series};

/// The Weber fraction: relative differences below it are not noticed.
pub const WEBER_FRACTION: f64 = 0.15;
/// Relative difference from which one number is much greater or less than another.
pub const MUCH_FRACTION: f64 = 0.30;
/// How many of the last values [`detect_trend`] looks at.
pub const TREND_WINDOW: usize = 10;
/// Robust z score from which [`detect_anomaly`] calls a value anomalous.
pub const ANOMALY_SCORE: f64 = 2.0;
/// The factor that makes the median absolute deviation estimate a normal standard deviation.
pub const MAD_SCALE: f64 = 1.4826;

/// How `a` compares with `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Comparison {
    /// Within the Weber fraction.
    Similar,
    /// Noticeably greater.
    Greater,
    /// Noticeably less.
    Less,
    /// Greater by at least [`MUCH_FRACTION`].
    MuchGreater,
    /// Less by at least [`MUCH_FRACTION`].
    MuchLess,
}

/// Compares `a` with `b` (§9.3): similar when `|a − b| / max(|a|, |b|)` is below
/// [`WEBER_FRACTION`], greater or less below [`MUCH_FRACTION`], much greater or less from it.
/// Two zeros are similar; a non-finite argument is an error.
pub fn compare(a: f64, b: f64) -> Result<Comparison> {
    check_series("a", &[a])?;
    check_series("b", &[b])?;
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        return Ok(Comparison::Similar);
    }
    let rel = (a - b).abs() / scale;
    Ok(if rel < WEBER_FRACTION {
        Comparison::Similar
    } else if rel < MUCH_FRACTION {
        if a > b { Comparison::Greater } else { Comparison::Less }
    } else if a > b {
        Comparison::MuchGreater
    } else {
        Comparison::MuchLess
    })
}

/// An order-of-magnitude category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Magnitude {
    /// `|x| < 0.01` (and 0).
    Negligible,
    /// `0.01 ≤ |x| < 0.1`.
    Tiny,
    /// `0.1 ≤ |x| < 1`.
    Small,
    /// `1 ≤ |x| < 100`.
    Moderate,
    /// `100 ≤ |x| < 10^4`.
    Large,
    /// `|x| ≥ 10^4`.
    Huge,
}

/// The category of `x` by `log10 |x|` (§9.3): below −2 negligible, −1 tiny, 0 small, 2
/// moderate, 4 large, else huge; 0 is negligible. A non-finite `x` is an error.
pub fn categorize(x: f64) -> Result<Magnitude> {
    check_series("x", &[x])?;
    if x == 0.0 {
        return Ok(Magnitude::Negligible);
    }
    let l = x.abs().log10();
    Ok(if l < -2.0 {
        Magnitude::Negligible
    } else if l < -1.0 {
        Magnitude::Tiny
    } else if l < 0.0 {
        Magnitude::Small
    } else if l < 2.0 {
        Magnitude::Moderate
    } else if l < 4.0 {
        Magnitude::Large
    } else {
        Magnitude::Huge
    })
}

/// The direction of a short trend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TrendDirection {
    /// At least 70 % of the steps go up.
    Increasing,
    /// At least 70 % of the steps go down.
    Decreasing,
    /// The steps change sign at least 60 % of the time.
    Oscillating,
    /// None of the above.
    Stable,
    /// Fewer than three values.
    InsufficientData,
}

/// What [`detect_trend`] found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// The direction.
    pub direction: TrendDirection,
    /// How clearly, in `[0, 1]`: the share of steps in the direction (the sign-change ratio
    /// for oscillation; one minus the larger share for a stable series; 0 without data).
    pub confidence: f64,
    /// The median step.
    pub slope: f64,
}

/// The trend of the last [`TREND_WINDOW`] values (§9.3): the steps between neighbours; a
/// share of rising steps of at least 0.7 is increasing, of falling steps decreasing; else a
/// ratio of sign changes between consecutive steps of at least 0.6 is oscillating; else
/// stable. Fewer than three values give [`TrendDirection::InsufficientData`].
pub fn detect_trend(values: &[f64]) -> Result<Trend> {
    check_series("values", values)?;
    let window = &values[values.len().saturating_sub(TREND_WINDOW)..];
    if window.len() < 3 {
        return Ok(Trend { direction: TrendDirection::InsufficientData, confidence: 0.0, slope: 0.0 });
    }
    let mut diffs = [0.0f64; TREND_WINDOW];
    let diffs = &mut diffs[..window.len() - 1];
    for (d, w) in diffs.iter_mut().zip(window.windows(2)) {
        *d = w[1] - w[0];
    }
    let n = diffs.len() as f64;
    let up = diffs.iter().filter(|d| **d > 0.0).count() as f64 / n;
    let down = diffs.iter().filter(|d| **d < 0.0).count() as f64 / n;
    let changes = diffs.windows(2).filter(|w| w[0] * w[1] < 0.0).count() as f64 / (n - 1.0);
    let slope = median(diffs).unwrap_or(0.0);
    let (direction, confidence) = if up >= 0.7 {
        (TrendDirection::Increasing, up)
    } else if down >= 0.7 {
        (TrendDirection::Decreasing, down)
    } else if changes >= 0.6 {
        (TrendDirection::Oscillating, changes)
    } else {
        (TrendDirection::Stable, 1.0 - up.max(down))
    };
    Ok(Trend { direction, confidence, slope })
}

/// What [`detect_anomaly`] found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    /// Whether the value is anomalous.
    pub is_anomalous: bool,
    /// `|value − median| / (1.4826 · MAD)`: 0 when the value is the median, infinite when the
    /// history does not vary and the value differs from it.
    pub score: f64,
    /// The history's median.
    pub median: f64,
    /// The history's median absolute deviation (unscaled).
    pub mad: f64,
}

/// Whether `value` is anomalous against `history` (§9.3): a robust z score about the median
/// with the MAD scaled by [`MAD_SCALE`], anomalous from [`ANOMALY_SCORE`]. A history of fewer
/// than three values calls nothing anomalous.
pub fn detect_anomaly(value: f64, history: &[f64]) -> Result<Anomaly> {
    check_series("value", &[value])?;
    check_series("history", history)?;
    if history.len() < 3 {
        return Ok(Anomaly {
            is_anomalous: false,
            score: 0.0,
            median: median(history).unwrap_or(value),
            mad: 0.0,
        });
    }
    let m = median(history).expect("at least three values");
    let deviations: Vec<f64> = history.iter().map(|v| (v - m).abs()).collect();
    let mad = median(&deviations).expect("at least three values");
    let distance = (value - m).abs();
    let score = if mad == 0.0 {
        if distance == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        distance / (MAD_SCALE * mad)
    };
    Ok(Anomaly { is_anomalous: score >= ANOMALY_SCORE, score, median: m, mad })
}

/// A quick estimate and how far to trust it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The value.
    pub value: f64,
    /// Confidence in `[0, 1]`, falling with the number of values.
    pub confidence: f64,
}

/// The sum of `values` with confidence `max(0.1, 1 − 0.15·log2 n)` (§9.3). Empty or
/// non-finite input is an error.
pub fn estimate_sum(values: &[f64]) -> Result<Estimate> {
    check_series("values", values)?;
    if values.is_empty() {
        return Err(Error::Empty { field: "values" });
    }
    let n = values.len() as f64;
    Ok(Estimate { value: values.iter().sum(), confidence: (1.0 - 0.15 * n.log2()).max(0.1) })
}

/// The mean of `values` with confidence `max(0.2, 1 − 0.075·log2 n)` (§9.3). Empty or
/// non-finite input is an error.
pub fn estimate_mean(values: &[f64]) -> Result<Estimate> {
    check_series("values", values)?;
    if values.is_empty() {
        return Err(Error::Empty { field: "values" });
    }
    let n = values.len() as f64;
    Ok(Estimate { value: values.iter().sum::<f64>() / n, confidence: (1.0 - 0.075 * n.log2()).max(0.2) })
}
