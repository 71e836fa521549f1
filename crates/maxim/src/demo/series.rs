//! Success rates of a tool per day and per hour of day, as plain series to fit and draw.

use maxim_core::Timestamp;

use super::{DAY_SECS, START, day_of};

/// One point of a series: where it is, the success rate there, and how many outcomes made it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The day (counted from [`START`]) or the hour of day (UTC, bin start).
    pub x: f64,
    /// Successes over attempts, in `[0, 1]`.
    pub rate: f64,
    /// Attempts.
    pub n: u32,
}

/// A tool's success rate per day and per hour of day, from its outcomes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuccessSeries {
    /// One point per day that has outcomes, in day order (x = the day's number).
    pub by_day: Vec<Point>,
    /// One point per hour of day (UTC) that has outcomes, 0 to 23 (x = the hour).
    pub by_hour: Vec<Point>,
}

impl SuccessSeries {
    /// Counts `outcomes` (capture time, success) per day and per hour of day.
    ///
    /// ```
    /// use maxim::demo::{START, SuccessSeries};
    /// use std::time::Duration;
    /// let hour = |h: u64| START + Duration::from_secs(h * 3600);
    /// let s = SuccessSeries::from_outcomes([(hour(1), true), (hour(1), false), (hour(25), true)]);
    /// assert_eq!((s.by_day[0].rate, s.by_day[1].rate), (0.5, 1.0));
    /// assert_eq!(s.by_hour.len(), 1);
    /// assert_eq!((s.by_hour[0].x, s.by_hour[0].n), (1.0, 3));
    /// ```
    pub fn from_outcomes(outcomes: impl IntoIterator<Item = (Timestamp, bool)>) -> Self {
        let mut days: std::collections::BTreeMap<i64, (u32, u32)> = std::collections::BTreeMap::new();
        let mut hours = [(0u32, 0u32); 24];
        for (at, success) in outcomes {
            let day = days.entry(day_of(at)).or_default();
            day.0 += u32::from(success);
            day.1 += 1;
            let secs_of_day = (at.as_micros() / 1_000_000).rem_euclid(DAY_SECS);
            let hour = &mut hours[(secs_of_day / 3600) as usize];
            hour.0 += u32::from(success);
            hour.1 += 1;
        }
        let point = |x: f64, (ok, n): (u32, u32)| Point { x, rate: f64::from(ok) / f64::from(n), n };
        Self {
            by_day: days.into_iter().map(|(d, c)| point(d as f64, c)).collect(),
            by_hour: hours
                .into_iter()
                .enumerate()
                .filter(|(_, c)| c.1 > 0)
                .map(|(h, c)| point(h as f64, c))
                .collect(),
        }
    }

    /// The times to fit the daily rates at, in seconds since the Unix epoch (each day's noon).
    pub fn day_times(&self) -> Vec<f64> {
        let start = START.as_secs_f64();
        self.by_day.iter().map(|p| start + (p.x + 0.5) * DAY_SECS as f64).collect()
    }

    /// The times to fit the hourly rates at, in seconds since the Unix epoch: the middle of
    /// each hour on day 0 (a UTC midnight), so a fitted phase is a phase of the UTC day.
    pub fn hour_times(&self) -> Vec<f64> {
        let start = START.as_secs_f64();
        self.by_hour.iter().map(|p| start + (p.x + 0.5) * 3600.0).collect()
    }

    /// The daily rates.
    pub fn day_rates(&self) -> Vec<f64> {
        self.by_day.iter().map(|p| p.rate).collect()
    }

    /// The hourly rates.
    pub fn hour_rates(&self) -> Vec<f64> {
        self.by_hour.iter().map(|p| p.rate).collect()
    }

    /// Attempts counted.
    pub fn total(&self) -> u64 {
        self.by_day.iter().map(|p| u64::from(p.n)).sum()
    }
}
