//! The metric series the hub keeps from captured episodes (tool and goal success over time)
//! and the fits it makes of them at a session's end.
//!
//! The statistician keeps the last 100 values of each metric for its randomness readings;
//! a trend over two weeks needs the whole history, so the hub keeps its own bounded series
//! of `(time, value)` events per metric and fits two things when a metric has enough of
//! them:
//! - the **trend**: a line through the daily means (UTC days with at least three events),
//!   so that the time of day an event happened at, which varies from day to day, averages
//!   out;
//! - the **daily rhythm**: a 24-hour cosinor through the mean, per hour of day, of each
//!   event's difference from its own day's mean, so that the trend does not pose as a rhythm.
//!
//! The series are saved with the statistician at each checkpoint, together with the time of
//! the newest episode they include; on opening, episodes captured after that time (the
//! journaled hippocampus holds them) are fed again, so a crash loses none.

use std::collections::BTreeMap;
use std::path::Path;

use angular_gyrus::fit::{CosinorFit, Period, TrendFit, fit_cosinor, fit_trend};
use maxim_core::Timestamp;
use maxim_core::ownership::FileClaims;
use serde::{Deserialize, Serialize};

use super::Result;

const KIND: &str = "hub-metrics";
const DAY: f64 = 86_400.0;
const HOUR: f64 = 3_600.0;

/// One metric's events, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricSeries {
    /// Event times, seconds since the epoch.
    pub times: Vec<f64>,
    /// Event values (1 for a success, 0 for a failure).
    pub values: Vec<f64>,
}

impl MetricSeries {
    /// How many events.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The mean of the values.
    pub fn mean(&self) -> Option<f64> {
        (!self.values.is_empty()).then(|| self.values.iter().sum::<f64>() / self.values.len() as f64)
    }

    /// Daily means: `(day start in seconds, mean, events)` for every UTC day with at least
    /// `min_events` events, in day order.
    pub fn daily_means(&self, min_events: usize) -> Vec<(f64, f64, usize)> {
        let mut days: BTreeMap<i64, (f64, usize)> = BTreeMap::new();
        for (&t, &v) in self.times.iter().zip(&self.values) {
            let d = days.entry((t / DAY).floor() as i64).or_default();
            d.0 += v;
            d.1 += 1;
        }
        days.into_iter()
            .filter(|(_, (_, n))| *n >= min_events)
            .map(|(day, (sum, n))| (day as f64 * DAY, sum / n as f64, n))
            .collect()
    }

    /// Mean, per UTC hour of day, of each event's difference from its own day's mean:
    /// `(hour, mean difference, events)` for hours with at least two events.
    pub fn hourly_profile(&self) -> Vec<(u32, f64, usize)> {
        let mut days: BTreeMap<i64, (f64, usize)> = BTreeMap::new();
        for (&t, &v) in self.times.iter().zip(&self.values) {
            let d = days.entry((t / DAY).floor() as i64).or_default();
            d.0 += v;
            d.1 += 1;
        }
        let mut hours = [(0.0f64, 0usize); 24];
        for (&t, &v) in self.times.iter().zip(&self.values) {
            let (sum, n) = days[&((t / DAY).floor() as i64)];
            if n < 2 {
                continue;
            }
            let hour = (t.rem_euclid(DAY) / HOUR).floor() as usize % 24;
            hours[hour].0 += v - sum / n as f64;
            hours[hour].1 += 1;
        }
        (0u32..24)
            .zip(hours)
            .filter(|(_, (_, n))| *n >= 2)
            .map(|(h, (sum, n))| (h, sum / n as f64, n))
            .collect()
    }

    /// The trend through the daily means, when at least `min_days` days have three events.
    pub fn fit_trend(&self, min_days: usize) -> Option<TrendFit> {
        let days = self.daily_means(3);
        if days.len() < min_days.max(3) {
            return None;
        }
        let times: Vec<f64> = days.iter().map(|d| d.0 + DAY / 2.0).collect();
        let values: Vec<f64> = days.iter().map(|d| d.1).collect();
        fit_trend(&times, &values).ok()
    }

    /// The 24-hour rhythm of the hourly profile, when at least six hours of the day are seen.
    pub fn fit_daily_rhythm(&self) -> Option<CosinorFit> {
        let profile = self.hourly_profile();
        if profile.len() < 6 {
            return None;
        }
        let times: Vec<f64> = profile.iter().map(|p| f64::from(p.0) * HOUR + HOUR / 2.0).collect();
        let values: Vec<f64> = profile.iter().map(|p| p.1).collect();
        fit_cosinor(&times, &values, Period::DAILY).ok()
    }

    fn push(&mut self, t: f64, v: f64, cap: usize) {
        self.times.push(t);
        self.values.push(v);
        if self.times.len() > cap {
            let excess = self.times.len() - cap;
            self.times.drain(..excess);
            self.values.drain(..excess);
        }
    }
}

/// Every metric series, and the creation time of the newest episode they include.
#[derive(Debug, Default)]
pub(crate) struct MetricLog {
    state: Saved,
    cap: usize,
    claims: FileClaims,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Saved {
    schema: u32,
    upto: Option<Timestamp>,
    series: BTreeMap<String, MetricSeries>,
}

impl MetricLog {
    pub(crate) fn new(cap: usize) -> Self {
        Self { state: Saved { schema: 1, ..Saved::default() }, cap, claims: FileClaims::new() }
    }

    /// Loads the log saved at `path` (a missing file is an empty log; a damaged one falls back
    /// to its backup).
    pub(crate) fn open(path: &Path, cap: usize) -> Result<Self> {
        let mut log = Self::new(cap);
        let (saved, outcome): (Option<Saved>, _) =
            match maxim_core::codec::load_with_recovery::<Saved>(path, KIND) {
                Ok((s, r)) => (Some(s), Some(r)),
                Err(e) if maxim_core::codec::is_missing(&e) => (None, None),
                Err(e) => return Err(e.into()),
            };
        if let Some(r) = outcome
            && r.used_backup()
        {
            tracing::warn!(path = %path.display(), "the hub's metric series came from the backup");
        }
        if let Some(saved) = saved {
            log.state = saved;
            log.claims.claim(path);
        }
        Ok(log)
    }

    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        self.claims.save(path, KIND, &self.state)?;
        Ok(())
    }

    /// The creation time of the newest episode included.
    pub(crate) fn upto(&self) -> Option<Timestamp> {
        self.state.upto
    }

    pub(crate) fn mark(&mut self, created_at: Timestamp) {
        self.state.upto = Some(self.state.upto.map_or(created_at, |u| u.max(created_at)));
    }

    pub(crate) fn record(&mut self, metric: &str, at: Timestamp, value: f64) {
        let cap = self.cap;
        if let Some(s) = self.state.series.get_mut(metric) {
            s.push(at.as_secs_f64(), value, cap);
        } else {
            let mut s = MetricSeries::default();
            s.push(at.as_secs_f64(), value, cap);
            self.state.series.insert(metric.to_owned(), s);
        }
    }

    pub(crate) fn get(&self, metric: &str) -> Option<&MetricSeries> {
        self.state.series.get(metric)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &MetricSeries)> {
        self.state.series.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn len(&self) -> usize {
        self.state.series.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maxim_core::SplitMix64;

    /// A success rate falling 2% a day and 25 points lower at 20:00 than at 08:00 is found
    /// as a trend of about −0.02/day and a rhythm peaking in the morning.
    #[test]
    fn a_planted_trend_and_rhythm_are_recovered() {
        let mut rng = SplitMix64::new(7);
        let mut s = MetricSeries::default();
        for day in 0..14 {
            for k in 0..40 {
                let hour = 6.0 + 16.0 * (f64::from(k) + rng.uniform()) / 40.0;
                let t = 1_700_006_400.0 + f64::from(day) * DAY + hour * HOUR;
                let rhythm = 0.12 * (2.0 * std::f64::consts::PI * (hour - 8.0) / 24.0).cos();
                let p = (0.85 - 0.02 * f64::from(day) + rhythm).clamp(0.0, 1.0);
                s.push(t, if rng.uniform() < p { 1.0 } else { 0.0 }, 100_000);
            }
        }
        let trend = s.fit_trend(4).unwrap();
        assert!((trend.slope_per_day + 0.02).abs() < 0.008, "{trend:?}");
        assert!(trend.r_squared > 0.5, "{trend:?}");
        let rhythm = s.fit_daily_rhythm().unwrap();
        let peak = rhythm.acrophase_hours();
        assert!((5.0..=11.0).contains(&peak), "peak at {peak} h: {rhythm:?}");
        assert!(rhythm.r_squared > 0.3, "{rhythm:?}");
    }

    #[test]
    fn too_little_data_fits_nothing_and_the_cap_drops_the_oldest() {
        let mut s = MetricSeries::default();
        for i in 0..10 {
            s.push(f64::from(i) * 60.0, 1.0, 4);
        }
        assert_eq!(s.len(), 4);
        assert_eq!(s.times[0], 360.0);
        assert!(s.fit_trend(2).is_none());
        assert!(s.fit_daily_rhythm().is_none());
    }
}
