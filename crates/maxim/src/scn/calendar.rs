//! Calendar arithmetic by hand: [`TimeZone`] (a fixed UTC offset, a setting), the civil date
//! of a day number, and the [`TemporalSignature`] of a timestamp (`spec/maxim-reference.md`
//! §12.2).
//!
//! The signature is computed in the time zone it is given, never in the machine's: the same
//! timestamp gives the same bins on every machine. Days are converted to dates with Howard
//! Hinnant's `civil_from_days` (proleptic Gregorian calendar, exact for every timestamp), so
//! the module needs no date crate.
//!
//! ```
//! use maxim::maxim_core::Timestamp;
//! use maxim::scn::{TemporalSignature, TimeZone};
//! // 1970-01-01 00:00 UTC was a Thursday.
//! let sig = TemporalSignature::at(Timestamp::EPOCH, TimeZone::UTC);
//! assert_eq!(sig.bins(), (0, 3, 0, 0));
//! // Two hours west of UTC it was still Wednesday 31 December 1969, 22:00.
//! let sig = TemporalSignature::at(Timestamp::EPOCH, TimeZone::from_offset_secs(-2 * 3600)?);
//! assert_eq!(sig.date(), (1969, 12, 31));
//! assert_eq!(sig.bins(), (22, 2, 3, 11));
//! # Ok::<(), maxim::maxim_core::Error>(())
//! ```

use std::fmt;

use maxim_core::Timestamp;
use serde::{Deserialize, Serialize};

/// Microseconds in one day.
const MICROS_PER_DAY: i128 = 86_400_000_000;
/// Largest offset from UTC a [`TimeZone`] may have, in seconds (18 hours).
pub const MAX_OFFSET_SECS: i32 = 18 * 3600;

/// A time zone as a fixed offset from UTC, in seconds east of Greenwich (`+3600` for UTC+1).
///
/// It is a setting of the SCN, never read from the machine. Daylight-saving changes are not
/// followed: a user who wants them sets the offset when they change.
///
/// ```
/// use maxim::scn::TimeZone;
/// let paris_summer = TimeZone::from_offset_secs(2 * 3600)?;
/// assert_eq!(paris_summer.to_string(), "+02:00");
/// assert!(TimeZone::from_offset_secs(19 * 3600).is_err());
/// # Ok::<(), maxim::maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimeZone {
    offset_secs: i32,
}

impl TimeZone {
    /// Coordinated Universal Time (offset 0), the default.
    pub const UTC: Self = Self { offset_secs: 0 };

    /// The zone `offset_secs` seconds east of UTC. Errors: an offset beyond ±18 hours
    /// ([`maxim_core::Error::OutOfRange`]).
    pub fn from_offset_secs(offset_secs: i32) -> maxim_core::Result<Self> {
        if offset_secs.unsigned_abs() > MAX_OFFSET_SECS.unsigned_abs() {
            return Err(maxim_core::Error::OutOfRange {
                field: "time_zone",
                value: f64::from(offset_secs),
                expected: "an offset within ±18 hours (±64800 s)",
            });
        }
        Ok(Self { offset_secs })
    }

    /// Seconds east of UTC.
    pub const fn offset_secs(self) -> i32 {
        self.offset_secs
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.offset_secs < 0 { '-' } else { '+' };
        let abs = self.offset_secs.unsigned_abs();
        write!(f, "{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)?;
        if !abs.is_multiple_of(60) {
            write!(f, ":{:02}", abs % 60)?;
        }
        Ok(())
    }
}

/// One of the four rhythms the SCN indexes, with its number of bins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Rhythm {
    /// The day: 24 hour bins.
    Circadian,
    /// The week: 7 day bins, Monday = 0.
    Weekly,
    /// The month: 4 week-of-month bins (days 1–8, 9–16, 17–24, 25–31).
    Monthly,
    /// The year: 12 month bins, January = 0.
    Annual,
}

impl Rhythm {
    /// The four rhythms, in this order.
    pub const ALL: [Self; 4] = [Self::Circadian, Self::Weekly, Self::Monthly, Self::Annual];

    /// Number of bins of the rhythm (24, 7, 4, 12).
    pub const fn bins(self) -> u8 {
        match self {
            Self::Circadian => 24,
            Self::Weekly => 7,
            Self::Monthly => 4,
            Self::Annual => 12,
        }
    }

    /// Position in [`Rhythm::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name (`circadian`, `weekly`, `monthly`, `annual`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Circadian => "circadian",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
            Self::Annual => "annual",
        }
    }

    /// The period of the rhythm in days (1, 7, 30, 365.25): the natural frequency of its
    /// oscillator is one cycle per period.
    pub const fn period_days(self) -> f64 {
        match self {
            Self::Circadian => 1.0,
            Self::Weekly => 7.0,
            Self::Monthly => 30.0,
            Self::Annual => 365.25,
        }
    }
}

impl fmt::Display for Rhythm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a moment falls in the four rhythms: phases in `[0, 1)` and bins, in one time zone.
///
/// - circadian phase = seconds into the day / 86 400, hour bin ⌊24·phase⌋;
/// - weekly phase = (weekday · 86 400 + seconds into the day) / 604 800 with Monday = 0,
///   day bin ⌊7·phase⌋ (the weekday);
/// - monthly phase = (day of month − 1) / 31, week-of-month bin ⌊4·phase⌋;
/// - annual phase = (day of year − 1) / 365.25; the month bin is the calendar month
///   (January = 0), not the original's ⌊12·phase⌋, which put 1 and 2 March in February's bin.
///
/// The fields are private so that every signature is a real one (bins in range).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TemporalSignature {
    circadian: f64,
    weekly: f64,
    monthly: f64,
    annual: f64,
    hour: u8,
    weekday: u8,
    week_of_month: u8,
    month: u8,
    year: i64,
    day: u8,
}

impl TemporalSignature {
    /// The signature of `ts` seen in the time zone `tz`.
    pub fn at(ts: Timestamp, tz: TimeZone) -> Self {
        let local = i128::from(ts.as_micros()) + i128::from(tz.offset_secs) * 1_000_000;
        let days = local.div_euclid(MICROS_PER_DAY);
        let micros_of_day = local.rem_euclid(MICROS_PER_DAY);
        // |days| < 2^47: i64 holds it, and every step of civil_from_days below.
        let days = days as i64;
        let (year, month, day) = civil_from_days(days);
        // 1970-01-01 was a Thursday (3 with Monday = 0).
        let weekday = (days + 3).rem_euclid(7) as u8;
        let doy = day_of_year(year, month, day);
        let secs = micros_of_day as f64 / 1e6;
        let circadian = secs / 86_400.0;
        let weekly = (f64::from(weekday) * 86_400.0 + secs) / 604_800.0;
        let monthly = f64::from(day - 1) / 31.0;
        let annual = f64::from(doy - 1) / 365.25;
        let hour = (micros_of_day / 3_600_000_000) as u8;
        let week_of_month = ((4.0 * monthly).floor() as u8).min(3);
        Self { circadian, weekly, monthly, annual, hour, weekday, week_of_month, month: month - 1, year, day }
    }

    /// Phase of the day in `[0, 1)`.
    pub const fn circadian_phase(&self) -> f64 {
        self.circadian
    }

    /// Phase of the week in `[0, 1)` (Monday 00:00 = 0).
    pub const fn weekly_phase(&self) -> f64 {
        self.weekly
    }

    /// Phase of the month in `[0, 1)` ((day − 1) / 31).
    pub const fn monthly_phase(&self) -> f64 {
        self.monthly
    }

    /// Phase of the year in `[0, 1)` ((day of year − 1) / 365.25).
    pub const fn annual_phase(&self) -> f64 {
        self.annual
    }

    /// The phase of `rhythm`.
    pub const fn phase(&self, rhythm: Rhythm) -> f64 {
        match rhythm {
            Rhythm::Circadian => self.circadian,
            Rhythm::Weekly => self.weekly,
            Rhythm::Monthly => self.monthly,
            Rhythm::Annual => self.annual,
        }
    }

    /// The four phases, in the order of [`Rhythm::ALL`].
    pub const fn phases(&self) -> [f64; 4] {
        [self.circadian, self.weekly, self.monthly, self.annual]
    }

    /// Hour of the day, 0–23.
    pub const fn hour(&self) -> u8 {
        self.hour
    }

    /// Day of the week, 0–6, Monday = 0.
    pub const fn weekday(&self) -> u8 {
        self.weekday
    }

    /// Week of the month, 0–3 (days 1–8, 9–16, 17–24, 25–31).
    pub const fn week_of_month(&self) -> u8 {
        self.week_of_month
    }

    /// Month, 0–11, January = 0.
    pub const fn month(&self) -> u8 {
        self.month
    }

    /// The bin of `rhythm`.
    pub const fn bin(&self, rhythm: Rhythm) -> u8 {
        match rhythm {
            Rhythm::Circadian => self.hour,
            Rhythm::Weekly => self.weekday,
            Rhythm::Monthly => self.week_of_month,
            Rhythm::Annual => self.month,
        }
    }

    /// The bins (hour, weekday, week of month, month).
    pub const fn bins(&self) -> (u8, u8, u8, u8) {
        (self.hour, self.weekday, self.week_of_month, self.month)
    }

    /// The local civil date (year, month 1–12, day 1–31).
    pub const fn date(&self) -> (i64, u8, u8) {
        (self.year, self.month + 1, self.day)
    }
}

/// Whether `year` is a leap year of the Gregorian calendar.
pub const fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The civil date (year, month 1–12, day 1–31) of the day `days` after 1970-01-01
/// (Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from 1 March
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The day of the year, 1–366, of a civil date.
fn day_of_year(year: i64, month: u8, day: u8) -> u16 {
    const BEFORE: [u16; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let leap = u16::from(month > 2 && is_leap_year(year));
    BEFORE[usize::from(month - 1)] + leap + u16::from(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days from 1970-01-01 to a civil date, by counting (the naive model).
    fn naive_days(year: i64, month: u8, day: u8) -> i64 {
        let mut days = 0i64;
        if year >= 1970 {
            for y in 1970..year {
                days += if is_leap_year(y) { 366 } else { 365 };
            }
        } else {
            for y in year..1970 {
                days -= if is_leap_year(y) { 366 } else { 365 };
            }
        }
        days + i64::from(day_of_year(year, month, day)) - 1
    }

    #[test]
    fn civil_dates_match_counting_over_four_centuries() {
        let mut days = naive_days(1800, 1, 1);
        for year in 1800..2200 {
            for month in 1..=12u8 {
                let len = match month {
                    2 if is_leap_year(year) => 29,
                    2 => 28,
                    4 | 6 | 9 | 11 => 30,
                    _ => 31,
                };
                for day in 1..=len {
                    assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
                    days += 1;
                }
            }
        }
    }

    #[test]
    fn leap_years() {
        assert!(is_leap_year(2000) && is_leap_year(2024) && is_leap_year(1600));
        assert!(!is_leap_year(1900) && !is_leap_year(2023) && !is_leap_year(2100));
        assert_eq!(day_of_year(2024, 12, 31), 366);
        assert_eq!(day_of_year(2023, 12, 31), 365);
        assert_eq!(day_of_year(2024, 3, 1), 61);
    }

    #[test]
    fn time_zone_bounds_and_display() {
        assert!(TimeZone::from_offset_secs(MAX_OFFSET_SECS).is_ok());
        assert!(TimeZone::from_offset_secs(-MAX_OFFSET_SECS).is_ok());
        assert!(TimeZone::from_offset_secs(MAX_OFFSET_SECS + 1).is_err());
        assert!(TimeZone::from_offset_secs(i32::MIN).is_err());
        assert_eq!(TimeZone::from_offset_secs(-(5 * 3600 + 30 * 60)).unwrap().to_string(), "-05:30");
        assert_eq!(TimeZone::UTC.to_string(), "+00:00");
    }

    #[test]
    fn extreme_timestamps_do_not_panic() {
        for micros in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX] {
            for offset in [-MAX_OFFSET_SECS, 0, MAX_OFFSET_SECS] {
                let sig = TemporalSignature::at(
                    Timestamp::from_micros(micros),
                    TimeZone::from_offset_secs(offset).unwrap(),
                );
                for r in Rhythm::ALL {
                    assert!(sig.bin(r) < r.bins());
                    assert!((0.0..1.0).contains(&sig.phase(r)), "{r} {}", sig.phase(r));
                }
            }
        }
    }
}
