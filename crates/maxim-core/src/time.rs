//! Time: [`Timestamp`] and the [`Clock`] every time-dependent call goes through.
//!
//! No code in maxim reads the wall clock directly. A layer holds a [`SharedClock`]; every
//! decay, recency and consolidation function takes `now` as an argument. Tests and
//! simulations use a [`ManualClock`] and advance it by days in microseconds of run time.
//!
//! ```
//! use std::time::Duration;
//! use maxim_core::{Clock, ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(0));
//! let shared = clock.clone();
//! clock.advance(Duration::from_secs(86_400));
//! assert_eq!(shared.now(), Timestamp::from_secs(86_400));
//! assert_eq!(shared.now().to_string(), "1970-01-02T00:00:00.000000Z");
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Microseconds in one second.
pub const MICROS_PER_SEC: i64 = 1_000_000;
/// Seconds in one day.
pub const SECS_PER_DAY: f64 = 86_400.0;

/// A point in time: microseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The Unix epoch.
    pub const EPOCH: Self = Self(0);

    /// The time `micros` microseconds after the epoch.
    pub const fn from_micros(micros: i64) -> Self {
        Self(micros)
    }

    /// The time `secs` whole seconds after the epoch.
    pub const fn from_secs(secs: i64) -> Self {
        Self(secs.saturating_mul(MICROS_PER_SEC))
    }

    /// The time `secs` seconds after the epoch, rounded to the microsecond; `None` for NaN,
    /// infinities and values outside the representable range.
    pub fn from_secs_f64(secs: f64) -> Option<Self> {
        let micros = (secs * MICROS_PER_SEC as f64).round();
        (micros.is_finite() && micros.abs() < 9.0e18).then_some(Self(micros as i64))
    }

    /// Microseconds since the epoch.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// Seconds since the epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }

    /// Signed seconds from `earlier` to `self` (negative when `earlier` is later). Exact for
    /// any two timestamps: the difference is taken in 128 bits, so it never overflows.
    pub fn secs_since(self, earlier: Self) -> f64 {
        (i128::from(self.0) - i128::from(earlier.0)) as f64 / MICROS_PER_SEC as f64
    }

    /// Signed days from `earlier` to `self`.
    pub fn days_since(self, earlier: Self) -> f64 {
        self.secs_since(earlier) / SECS_PER_DAY
    }

    /// This time plus `d`, saturating at the end of the range.
    pub fn saturating_add(self, d: Duration) -> Self {
        Self(self.0.saturating_add(duration_micros(d)))
    }

    /// This time minus `d`, saturating at the start of the range.
    pub fn saturating_sub(self, d: Duration) -> Self {
        Self(self.0.saturating_sub(duration_micros(d)))
    }

    /// A compact UTC form for file names: `20261130T013117Z`.
    pub fn file_stamp(self) -> String {
        let (y, mo, d, h, mi, s, _) = self.civil();
        format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
    }

    /// Calendar fields in UTC: year, month, day, hour, minute, second, microsecond.
    fn civil(self) -> (i64, u32, u32, u32, u32, u32, u32) {
        let secs = self.0.div_euclid(MICROS_PER_SEC);
        let micros = self.0.rem_euclid(MICROS_PER_SEC) as u32;
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        (year, month, day, rem / 3600, rem / 60 % 60, rem % 60, micros)
    }
}

impl std::ops::Add<Duration> for Timestamp {
    type Output = Self;
    fn add(self, d: Duration) -> Self {
        self.saturating_add(d)
    }
}

impl std::ops::Sub<Duration> for Timestamp {
    type Output = Self;
    fn sub(self, d: Duration) -> Self {
        self.saturating_sub(d)
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with microseconds: `2026-11-30T01:31:17.000000Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, h, mi, s, us) = self.civil();
        write!(f, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{us:06}Z")
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

fn duration_micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// Days as a [`Duration`] (`days(7)` is a week); saturates instead of overflowing.
pub const fn days(n: u64) -> Duration {
    Duration::from_secs(n.saturating_mul(86_400))
}

/// A source of "now".
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A clock shared by the parts of one memory.
pub type SharedClock = Arc<dyn Clock>;

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// The machine's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    /// The system clock behind an `Arc`, ready to hand to a layer.
    pub fn shared() -> SharedClock {
        Arc::new(Self)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let micros =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, duration_micros);
        Timestamp(micros)
    }
}

/// A clock that moves only when told to. Clones share one time, across threads.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    micros: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self { micros: Arc::new(AtomicI64::new(start.0)) }
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        Timestamp(self.micros.load(Ordering::SeqCst))
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.micros.fetch_add(duration_micros(d), Ordering::SeqCst);
    }

    /// Sets the clock to `t` (which may be earlier than now).
    pub fn set(&self, t: Timestamp) {
        self.micros.store(t.0, Ordering::SeqCst);
    }

    /// This clock behind an `Arc`, sharing its time with `self`.
    pub fn shared(&self) -> SharedClock {
        Arc::new(self.clone())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        ManualClock::now(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_rfc3339_utc() {
        assert_eq!(Timestamp::EPOCH.to_string(), "1970-01-01T00:00:00.000000Z");
        assert_eq!(Timestamp::from_micros(1_700_000_000_123_456).to_string(), "2023-11-14T22:13:20.123456Z");
        assert_eq!(Timestamp::from_secs(-1).to_string(), "1969-12-31T23:59:59.000000Z");
        assert_eq!(Timestamp::from_secs(951_782_400).to_string(), "2000-02-29T00:00:00.000000Z");
        assert_eq!(Timestamp::from_secs(1_700_000_000).file_stamp(), "20231114T221320Z");
    }

    #[test]
    fn float_seconds_round_to_micros_and_reject_nan() {
        assert_eq!(Timestamp::from_secs_f64(1.5), Some(Timestamp::from_micros(1_500_000)));
        assert_eq!(Timestamp::from_secs_f64(f64::NAN), None);
        assert_eq!(Timestamp::from_secs_f64(f64::INFINITY), None);
        assert_eq!(Timestamp::from_secs_f64(1e300), None);
    }

    #[test]
    fn arithmetic_saturates_and_differences_are_signed() {
        let t = Timestamp::from_secs(100);
        assert_eq!(t + Duration::from_secs(1), Timestamp::from_secs(101));
        assert_eq!(t.secs_since(Timestamp::from_secs(130)), -30.0);
        assert_eq!(
            Timestamp::from_micros(i64::MAX) + Duration::from_secs(1),
            Timestamp::from_micros(i64::MAX)
        );
        assert_eq!((t + days(2)).days_since(t), 2.0);
        let (min, max) = (Timestamp::from_micros(i64::MIN), Timestamp::from_micros(i64::MAX));
        assert!(max.secs_since(min) > 1.8e13);
        assert!(min.secs_since(max) < -1.8e13);
        assert_eq!(days(u64::MAX), Duration::from_secs(u64::MAX));
    }

    #[test]
    fn manual_clock_is_shared_across_threads() {
        let clock = ManualClock::new(Timestamp::from_secs(10));
        let shared = clock.shared();
        std::thread::scope(|s| {
            s.spawn(|| clock.advance(Duration::from_secs(5)));
        });
        assert_eq!(shared.now(), Timestamp::from_secs(15));
        clock.set(Timestamp::from_secs(1));
        assert_eq!(shared.now(), Timestamp::from_secs(1));
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now() > Timestamp::from_secs(1_577_836_800));
    }
}
