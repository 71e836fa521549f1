//! Per-call timing: each call timed on its own, with the median, mean and 90th percentile
//! over all calls and each pass's own median, as the workload's conventions ask.

use std::time::Instant;

use serde_json::{Value, json};

/// The median of `xs` (the mean of the two middle values for an even count; 0 when empty).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { f64::midpoint(v[m - 1], v[m]) }
}

/// The `q`-quantile of `xs` by linear interpolation between closest ranks (Python's
/// `statistics.quantiles(method="inclusive")`); 0 when empty.
fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The durations of a series of calls, in microseconds, by pass, with the sizes of their
/// results.
#[derive(Debug, Clone, Default)]
pub struct Calls {
    passes: Vec<Vec<f64>>,
    result_total: usize,
}

impl Calls {
    /// No calls yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new pass.
    pub fn pass(&mut self) {
        self.passes.push(Vec::new());
    }

    /// Times `call` on its own, records its duration in the current pass and the size it
    /// returns.
    pub fn time(&mut self, call: impl FnOnce() -> usize) {
        let start = Instant::now();
        let size = call();
        let us = start.elapsed().as_secs_f64() * 1e6;
        if self.passes.is_empty() {
            self.pass();
        }
        self.passes.last_mut().expect("a pass").push(us);
        self.result_total += size;
    }

    /// Number of calls timed.
    pub fn len(&self) -> usize {
        self.passes.iter().map(Vec::len).sum()
    }

    /// Whether no call was timed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `calls`, `median_us`, `mean_us`, `p90_us`, `pass_medians_us` and, when `with_size`,
    /// `mean_result_size`.
    pub fn to_json(&self, with_size: bool) -> Value {
        let all: Vec<f64> = self.passes.iter().flatten().copied().collect();
        let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
        let mut v = json!({
            "calls": all.len(),
            "median_us": super::round(median(&all), 3),
            "mean_us": super::round(mean, 3),
            "p90_us": super::round(quantile(&all, 0.9), 3),
            "pass_medians_us": self.passes.iter().map(|p| super::round(median(p), 3)).collect::<Vec<_>>(),
        });
        if with_size {
            v["mean_result_size"] = super::mean3(self.result_total, all.len()).into();
        }
        v
    }
}

/// Times one block.
pub(crate) fn block(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_quantile_follow_the_usual_definitions() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        let xs: Vec<f64> = (1..=11).map(f64::from).collect();
        assert_eq!(quantile(&xs, 0.9), 10.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 1.5);
    }

    #[test]
    fn calls_report_per_pass_medians_and_mean_sizes() {
        let mut c = Calls::new();
        for _ in 0..2 {
            c.pass();
            for size in [1, 2, 3] {
                c.time(|| size);
            }
        }
        let v = c.to_json(true);
        assert_eq!(v["calls"], 6);
        assert_eq!(v["mean_result_size"], 2.0);
        assert_eq!(v["pass_medians_us"].as_array().unwrap().len(), 2);
        assert!(c.to_json(false).get("mean_result_size").is_none());
    }
}
