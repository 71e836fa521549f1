//! Pattern fitting: trends, cross-metric correlation and cosinor (circadian) fits, over one
//! series or many in parallel.
//!
//! The original declared these fits (CORRELATES_WITH, PHASE_LOCKED_TO) and never built them
//! (`spec/maxim-reference.md` §6.4). Here:
//!
//! - [`TrendFit`]: least squares of the values against time in days: the slope per day, the
//!   intercept (the fitted value at the first time), R², and the two-sided p-value of the
//!   slope (Student's t with `n - 2` degrees of freedom).
//! - [`CosinorFit`]: `y = mesor + amplitude * cos(2π (t / period - phase))` by least squares
//!   on the cosine and sine of the time (period 24 h, or 7 days, or any): the mesor, the
//!   amplitude, the acrophase as a phase in `[0, 1)` of the period (the peak's time of day for
//!   24 h, counted from UTC midnight; for 7 days, from the Unix epoch's Thursday 00:00 UTC), R²,
//!   and the F-test p-value of the rhythm (F with 2 and `n - 3` degrees of freedom).
//! - [`correlate_all`]: Pearson r for every pair of series on a common time grid, with its
//!   two-sided p-value (t with `n - 2` degrees of freedom) and the Benjamini–Hochberg q-value
//!   over all pairs.
//!
//! A [`Grid`] holds the design of one set of times (centred days, centred cosine and sine per
//! period), so fitting many series sampled at the same times costs a few dot products each;
//! [`fit_many`] runs them on rayon. A fit is *confirmed* ([`FitConfig`]) when its p-value is
//! below `alpha` and its effect is large enough (R², or |r|); only confirmed fits become
//! PATTERN records (see [`patterns`](crate::patterns)).
//!
//! Bad input is a typed error, never a NaN: fewer values than the fit needs
//! ([`Error::TooShort`]), a NaN or infinity ([`Error::NonFinite`]), times and values of
//! different lengths ([`Error::LengthMismatch`]), constant values or times
//! ([`Error::Constant`]), times that do not span the cycle ([`Error::Singular`]), values so
//! large that their squares overflow ([`Error::Undefined`]).
//!
//! ```
//! use angular_gyrus::fit::{self, Period};
//! // Two weeks, hourly, peaking at 0.8 of the day (19:12 UTC).
//! let times: Vec<f64> = (0..336).map(|h| 1_700_006_400.0 + f64::from(h) * 3600.0).collect();
//! let values: Vec<f64> = times
//!     .iter()
//!     .map(|t| 5.0 + 2.0 * (std::f64::consts::TAU * (t / 86_400.0 - 0.8)).cos())
//!     .collect();
//! let c = fit::fit_cosinor(&times, &values, Period::DAILY)?;
//! assert!((c.phase - 0.8).abs() < 1e-9 && (c.amplitude - 2.0).abs() < 1e-9);
//! assert!((c.mesor - 5.0).abs() < 1e-9 && c.r_squared > 0.999_999);
//! assert!(fit::fit_trend(&times, &vec![1.0; 336]).is_err()); // constant: no trend to fit
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

#![expect(
    clippy::needless_pass_by_value,
    reason = "array views are cheap handles that ndarray passes by value"
)]

use std::ops::Range;

use maxim_core::Parallelism;
use ndarray::{Array1, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::error::{Error, Result, check_all_finite};

/// Seconds in a day.
const DAY: f64 = 86_400.0;

/// Pairs of one task of [`correlate_all`]: its rows are cut into runs holding about this many
/// pairs each (row `a` of `m` has `m - 1 - a` partners, so equal row blocks would be unequal
/// work).
const CORR_TASK_PAIRS: usize = 512;

/// Rows compared with one row at once by [`correlate_all`] (a register tile: each value of
/// the one row is read once for all of them).
const CORR_TILE: usize = 4;

/// When a fit counts as confirmed, and what [`fit_many`] fits.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FitConfig {
    /// Significance level: a trend's or cosinor's p-value, and a correlation's
    /// Benjamini–Hochberg q-value, must be below it (default 0.05).
    pub alpha: f64,
    /// Least R² of a confirmed trend (default 0.5, the statistician's confirm threshold).
    pub min_trend_r_squared: f64,
    /// Least R² of a confirmed cosinor fit (default 0.3).
    pub min_cosinor_r_squared: f64,
    /// Least |r| of a confirmed correlation (default 0.5).
    pub min_abs_correlation: f64,
    /// Also fit a 7-day cosinor (default false).
    pub weekly: bool,
}

impl Default for FitConfig {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            min_trend_r_squared: 0.5,
            min_cosinor_r_squared: 0.3,
            min_abs_correlation: 0.5,
            weekly: false,
        }
    }
}

impl FitConfig {
    /// Checks that every threshold is a number in `[0, 1]` and `alpha` is above 0.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("alpha", self.alpha),
            ("min_trend_r_squared", self.min_trend_r_squared),
            ("min_cosinor_r_squared", self.min_cosinor_r_squared),
            ("min_abs_correlation", self.min_abs_correlation),
        ] {
            maxim_core::check_unit(field, v)?;
        }
        if self.alpha == 0.0 {
            return Err(Error::out_of_range("alpha", 0.0, "above 0"));
        }
        Ok(())
    }

    /// True when `fit` is a confirmed trend.
    pub fn confirms_trend(&self, fit: &TrendFit) -> bool {
        fit.p_value < self.alpha && fit.r_squared >= self.min_trend_r_squared
    }

    /// True when `fit` is a confirmed rhythm.
    pub fn confirms_cosinor(&self, fit: &CosinorFit) -> bool {
        fit.p_value < self.alpha && fit.r_squared >= self.min_cosinor_r_squared && fit.amplitude > 0.0
    }

    /// True when `pair` is a confirmed correlation.
    pub fn confirms_correlation(&self, pair: &PairCorrelation) -> bool {
        pair.q_value < self.alpha && pair.r.abs() >= self.min_abs_correlation
    }
}

/// A cycle length for a cosinor fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Period {
    secs: f64,
}

impl Period {
    /// 24 hours.
    pub const DAILY: Self = Self { secs: DAY };
    /// 7 days.
    pub const WEEKLY: Self = Self { secs: 7.0 * DAY };

    /// A period of `hours` (finite, above 0).
    pub fn hours(hours: f64) -> Result<Self> {
        if !(hours.is_finite() && hours > 0.0) {
            return Err(Error::out_of_range("period", hours, "a finite number of hours above 0"));
        }
        Ok(Self { secs: hours * 3600.0 })
    }

    /// The length in hours.
    pub fn as_hours(self) -> f64 {
        self.secs / 3600.0
    }
}

/// A least-squares trend against time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrendFit {
    /// Values fitted.
    pub n: usize,
    /// Change per day.
    pub slope_per_day: f64,
    /// The fitted value at the first time.
    pub intercept: f64,
    /// The first time, in seconds since the Unix epoch.
    pub t0_secs: f64,
    /// Share of the variance the line explains.
    pub r_squared: f64,
    /// Two-sided p-value of the slope (t with `n - 2` degrees of freedom; 0 for an exact line).
    pub p_value: f64,
}

/// A cosinor fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CosinorFit {
    /// Values fitted.
    pub n: usize,
    /// The period in hours.
    pub period_hours: f64,
    /// The rhythm-adjusted mean.
    pub mesor: f64,
    /// Half the peak-to-trough swing (at least 0).
    pub amplitude: f64,
    /// The acrophase: where in the period the peak falls, in `[0, 1)`.
    pub phase: f64,
    /// Share of the variance the rhythm explains.
    pub r_squared: f64,
    /// The F statistic of the rhythm (2 and `n - 3` degrees of freedom).
    pub f_statistic: f64,
    /// Its p-value (0 for an exact rhythm).
    pub p_value: f64,
}

impl CosinorFit {
    /// The acrophase in hours after the period's start (`phase * period_hours`).
    pub fn acrophase_hours(&self) -> f64 {
        self.phase * self.period_hours
    }
}

/// The design of one set of sample times, for fitting many series sampled at them.
#[derive(Debug, Clone)]
pub struct Grid {
    n: usize,
    t0: f64,
    /// Mean time, in days after `t0`.
    x_mean: f64,
    /// Centred times, in days.
    xc: Array1<f64>,
    sxx: f64,
    daily: Option<Harmonic>,
    weekly: Option<Harmonic>,
}

/// The centred cosine and sine columns of one period, and their 2×2 cross-products.
#[derive(Debug, Clone)]
struct Harmonic {
    period: Period,
    c_mean: f64,
    s_mean: f64,
    cc: Array1<f64>,
    sc: Array1<f64>,
    scc: f64,
    scs: f64,
    sss: f64,
    det: f64,
}

impl Harmonic {
    /// `None` when the times do not determine the fit (singular 2×2 design).
    fn new(times: &[f64], period: Period) -> Option<Self> {
        let n = times.len() as f64;
        let angle = |t: f64| std::f64::consts::TAU * (t.rem_euclid(period.secs) / period.secs);
        let c: Array1<f64> = times.iter().map(|&t| angle(t).cos()).collect();
        let s: Array1<f64> = times.iter().map(|&t| angle(t).sin()).collect();
        let (c_mean, s_mean) = (c.sum() / n, s.sum() / n);
        let cc = c - c_mean;
        let sc = s - s_mean;
        let (scc, scs, sss) = (cc.dot(&cc), cc.dot(&sc), sc.dot(&sc));
        let det = scc * sss - scs * scs;
        // Relative to the columns' scale, a vanishing determinant means they are (nearly)
        // collinear or constant.
        if det.is_nan()
            || det <= 1e-9 * (scc * sss).max(f64::MIN_POSITIVE)
            || scc < 1e-12 * n
            || sss < 1e-12 * n
        {
            return None;
        }
        Some(Self { period, c_mean, s_mean, cc, sc, scc, scs, sss, det })
    }
}

/// Per-series sums a fit needs: mean, centred sum of squares, and the dot products with the
/// centred design columns.
struct Sums {
    mean: f64,
    syy: f64,
    sxy: f64,
    scy: [f64; 2],
    ssy: [f64; 2],
}

impl Grid {
    /// The design for `times` (seconds since the Unix epoch). Errors: fewer than 3 times, a
    /// NaN or infinity, all times equal. The cosinor designs are kept when the times determine
    /// them (a fit on a grid without one is [`Error::Singular`]).
    pub fn new(times: &[f64]) -> Result<Self> {
        if times.len() < 3 {
            return Err(Error::TooShort { what: "fit", needed: 3, got: times.len() });
        }
        check_all_finite("times", times)?;
        let n = times.len();
        let t0 = times[0];
        let x: Array1<f64> = times.iter().map(|&t| (t - t0) / DAY).collect();
        let x_mean = x.sum() / n as f64;
        let xc = x - x_mean;
        let sxx = xc.dot(&xc);
        if sxx.is_nan() || sxx <= 0.0 {
            return Err(Error::Constant { what: "fit", input: "times" });
        }
        Ok(Self {
            n,
            t0,
            x_mean,
            xc,
            sxx,
            daily: Harmonic::new(times, Period::DAILY),
            weekly: Harmonic::new(times, Period::WEEKLY),
        })
    }

    /// Number of sample times.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a grid holds at least 3 times.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn check(&self, values: ArrayView1<'_, f64>) -> Result<()> {
        if values.len() != self.n {
            return Err(Error::LengthMismatch { what: "fit", left: self.n, right: values.len() });
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { what: "values", index, value: values[index] });
        }
        Ok(())
    }

    fn sums(&self, y: ArrayView1<'_, f64>, harmonics: [Option<&Harmonic>; 2]) -> Result<Sums> {
        self.check(y)?;
        let mean = y.sum() / self.n as f64;
        let syy = y.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>();
        // Values near the largest doubles overflow the sums of squares.
        if !(mean.is_finite() && syy.is_finite()) {
            return Err(Error::Undefined { operation: "fit" });
        }
        // A series whose spread is lost in rounding is constant for every fit.
        if syy.is_nan() || syy <= 1e-24 * (mean * mean).max(f64::MIN_POSITIVE) * self.n as f64 {
            return Err(Error::Constant { what: "fit", input: "values" });
        }
        let mut scy = [0.0; 2];
        let mut ssy = [0.0; 2];
        for (k, h) in harmonics.iter().enumerate() {
            if let Some(h) = h {
                scy[k] = h.cc.dot(&y);
                ssy[k] = h.sc.dot(&y);
            }
        }
        let sxy = self.xc.dot(&y);
        let all = [mean, syy, sxy, scy[0], scy[1], ssy[0], ssy[1]];
        if all.iter().any(|v| !v.is_finite()) {
            return Err(Error::Undefined { operation: "fit" });
        }
        Ok(Sums { mean, syy, sxy, scy, ssy })
    }

    /// The trend of `values` sampled at this grid's times.
    pub fn trend(&self, values: &[f64]) -> Result<TrendFit> {
        let s = self.sums(ArrayView1::from(values), [None, None])?;
        Ok(self.trend_from(&s))
    }

    fn trend_from(&self, s: &Sums) -> TrendFit {
        let slope = s.sxy / self.sxx;
        let r_squared = (s.sxy * s.sxy / (self.sxx * s.syy)).clamp(0.0, 1.0);
        let df = (self.n - 2) as f64;
        let sse = (s.syy - slope * s.sxy).max(0.0);
        let p_value = if df < 1.0 {
            1.0
        } else if sse <= s.syy * 1e-15 {
            0.0
        } else {
            let se = (sse / df / self.sxx).sqrt();
            two_sided_t(slope / se, df)
        };
        TrendFit {
            n: self.n,
            slope_per_day: slope,
            intercept: s.mean - slope * self.x_mean,
            t0_secs: self.t0,
            r_squared,
            p_value,
        }
    }

    /// The cosinor fit of `values` for `period` (24 h and 7 days use the grid's precomputed
    /// design; any other period is computed for the call). Errors as the module says; fewer
    /// than 4 values is [`Error::TooShort`].
    pub fn cosinor(&self, values: &[f64], period: Period, times: Option<&[f64]>) -> Result<CosinorFit> {
        let own;
        let h = if period == Period::DAILY {
            self.daily.as_ref()
        } else if period == Period::WEEKLY {
            self.weekly.as_ref()
        } else {
            let times = times.ok_or(Error::Singular { what: "cosinor" })?;
            own = Harmonic::new(times, period);
            own.as_ref()
        };
        if self.n < 4 {
            return Err(Error::TooShort { what: "cosinor", needed: 4, got: self.n });
        }
        let h = h.ok_or(Error::Singular { what: "cosinor" })?;
        let s = self.sums(ArrayView1::from(values), [Some(h), None])?;
        Ok(cosinor_from(self.n, h, &s, 0))
    }
}

fn cosinor_from(n: usize, h: &Harmonic, s: &Sums, k: usize) -> CosinorFit {
    let (scy, ssy) = (s.scy[k], s.ssy[k]);
    let beta = (h.sss * scy - h.scs * ssy) / h.det;
    let gamma = (h.scc * ssy - h.scs * scy) / h.det;
    let mesor = s.mean - beta * h.c_mean - gamma * h.s_mean;
    let amplitude = beta.hypot(gamma);
    let phase =
        if amplitude > 0.0 { (gamma.atan2(beta) / std::f64::consts::TAU).rem_euclid(1.0) } else { 0.0 };
    // rem_euclid can round up to exactly 1.0 for a tiny negative angle.
    let phase = if phase >= 1.0 { 0.0 } else { phase };
    let ssr = (beta * scy + gamma * ssy).clamp(0.0, s.syy);
    let sse = s.syy - ssr;
    let r_squared = (ssr / s.syy).clamp(0.0, 1.0);
    let df2 = (n - 3) as f64;
    let (f_statistic, p_value) = if sse <= s.syy * 1e-15 {
        (f64::MAX, 0.0)
    } else {
        let f = (ssr / 2.0) / (sse / df2);
        (f, f2_survival(f, df2))
    };
    CosinorFit {
        n,
        period_hours: h.period.as_hours(),
        mesor,
        amplitude,
        phase,
        r_squared,
        f_statistic,
        p_value,
    }
}

/// `P(F > f)` for F with 2 and `df2` degrees of freedom: in closed form,
/// `(1 + 2 f / df2)^(-df2 / 2)` (the F(2, d) survival function has no special function in it).
fn f2_survival(f: f64, df2: f64) -> f64 {
    (1.0 + 2.0 * f / df2).powf(-df2 / 2.0).clamp(0.0, 1.0)
}

/// Two-sided p-value of `t` with `df` degrees of freedom.
fn two_sided_t(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    StudentsT::new(0.0, 1.0, df).map_or(1.0, |d| (2.0 * d.sf(t.abs())).clamp(0.0, 1.0))
}

/// The trend of `values` at `times` (seconds since the Unix epoch). See the [module docs](self).
pub fn fit_trend(times: &[f64], values: &[f64]) -> Result<TrendFit> {
    if times.len() != values.len() {
        return Err(Error::LengthMismatch { what: "trend", left: times.len(), right: values.len() });
    }
    Grid::new(times)?.trend(values)
}

/// The cosinor fit of `values` at `times` for `period`. See the [module docs](self).
pub fn fit_cosinor(times: &[f64], values: &[f64], period: Period) -> Result<CosinorFit> {
    if times.len() != values.len() {
        return Err(Error::LengthMismatch { what: "cosinor", left: times.len(), right: values.len() });
    }
    Grid::new(times)?.cosinor(values, period, Some(times))
}

/// The fits of one series by [`fit_many`].
#[derive(Debug)]
pub struct SeriesFits {
    /// The trend.
    pub trend: Result<TrendFit>,
    /// The 24-hour cosinor.
    pub daily: Result<CosinorFit>,
    /// The 7-day cosinor, when [`FitConfig::weekly`] asks for it.
    pub weekly: Option<Result<CosinorFit>>,
}

/// Fits a trend and a daily (and, if configured, a weekly) cosinor to every row of `rows`
/// (one series per row, sampled at `grid`'s times), on rayon when `parallelism` says so
/// ([`Parallelism::Auto`]: from 64 rows of at least 64 points). Each row gets its own result:
/// one bad row never spoils the others. A row of the wrong length gets
/// [`Error::LengthMismatch`].
pub fn fit_many(
    grid: &Grid,
    rows: ArrayView2<'_, f64>,
    config: &FitConfig,
    parallelism: Parallelism,
) -> Vec<SeriesFits> {
    let _s = tracing::debug_span!("ag_fit_many", n_series = rows.nrows(), n_points = rows.ncols()).entered();
    let fit_row = |y: ArrayView1<'_, f64>| fit_row(grid, y, config.weekly);
    let parallel = match parallelism {
        Parallelism::Sequential => false,
        Parallelism::Parallel => true,
        Parallelism::Auto => rows.nrows() >= 64 && rows.ncols() >= 64 && rayon::current_num_threads() > 1,
    };
    if parallel {
        rows.outer_iter().collect::<Vec<_>>().into_par_iter().map(fit_row).collect()
    } else {
        rows.axis_iter(Axis(0)).map(fit_row).collect()
    }
}

fn fit_row(grid: &Grid, y: ArrayView1<'_, f64>, weekly: bool) -> SeriesFits {
    let harmonics = [grid.daily.as_ref(), if weekly { grid.weekly.as_ref() } else { None }];
    let sums = match grid.sums(y, harmonics) {
        Ok(s) => s,
        Err(e) => {
            return SeriesFits {
                daily: Err(copy_error(&e)),
                weekly: weekly.then(|| Err(copy_error(&e))),
                trend: Err(e),
            };
        }
    };
    let cosinor = |k: usize, h: Option<&Harmonic>| -> Result<CosinorFit> {
        if grid.n < 4 {
            return Err(Error::TooShort { what: "cosinor", needed: 4, got: grid.n });
        }
        h.map(|h| cosinor_from(grid.n, h, &sums, k)).ok_or(Error::Singular { what: "cosinor" })
    };
    SeriesFits {
        trend: Ok(grid.trend_from(&sums)),
        daily: cosinor(0, harmonics[0]),
        weekly: weekly.then(|| cosinor(1, harmonics[1])),
    }
}

/// A copy of an error of [`Grid::sums`] (length, finiteness, constant values), for the
/// other fits of the same row.
fn copy_error(e: &Error) -> Error {
    match *e {
        Error::LengthMismatch { what, left, right } => Error::LengthMismatch { what, left, right },
        Error::NonFinite { what, index, value } => Error::NonFinite { what, index, value },
        Error::Constant { what, input } => Error::Constant { what, input },
        Error::Undefined { operation } => Error::Undefined { operation },
        _ => Error::Singular { what: "fit" },
    }
}

/// The correlation of one pair of series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairCorrelation {
    /// Row of the first series.
    pub a: usize,
    /// Row of the second series (`a < b`).
    pub b: usize,
    /// Pearson's r.
    pub r: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Benjamini–Hochberg adjusted p-value over every pair.
    pub q_value: f64,
}

/// Every pairwise correlation of a set of series.
#[derive(Debug, Clone, PartialEq)]
pub struct Correlations {
    /// Points per series.
    pub n: usize,
    /// Every pair of non-constant rows, `a < b`, in row order.
    pub pairs: Vec<PairCorrelation>,
    /// Rows left out because they do not vary.
    pub constant_rows: Vec<usize>,
}

impl Correlations {
    /// The confirmed pairs, strongest |r| first.
    pub fn confirmed(&self, config: &FitConfig) -> Vec<PairCorrelation> {
        let mut out: Vec<PairCorrelation> =
            self.pairs.iter().copied().filter(|p| config.confirms_correlation(p)).collect();
        out.sort_by(|x, y| y.r.abs().total_cmp(&x.r.abs()).then((x.a, x.b).cmp(&(y.a, y.b))));
        out
    }
}

/// Pearson r, p-values and Benjamini–Hochberg q-values for every pair of rows of `rows`
/// (series on a common time grid, one per row). Errors: fewer than 3 points, a NaN or
/// infinity (its index counts row-major), values so large their squares overflow
/// ([`Error::Undefined`]). Constant rows are left out and listed.
///
/// Each row is standardised to mean 0 and norm 1, so that `r` is a dot product; the pairs
/// are computed in tasks of consecutive rows holding about 512 pairs each (row `a` of `m`
/// has `m - 1 - a` partners, so equal row blocks would be unequal work), each writing its
/// own part of the result in place, and the p-value of a pair is computed as soon as its r
/// is. Every pair is computed by the same instructions on both paths, so the
/// sequential and the parallel path agree bit for bit.
pub fn correlate_all(rows: ArrayView2<'_, f64>, parallelism: Parallelism) -> Result<Correlations> {
    let _s =
        tracing::debug_span!("ag_correlate_all", n_series = rows.nrows(), n_points = rows.ncols()).entered();
    let (k, n) = rows.dim();
    if n < 3 {
        return Err(Error::TooShort { what: "correlation", needed: 3, got: n });
    }
    let parallel = match parallelism {
        Parallelism::Sequential => false,
        Parallelism::Parallel => true,
        Parallelism::Auto => k >= 32 && k * n >= 1 << 15 && rayon::current_num_threads() > 1,
    };
    let stats_of = |i: usize| RowStats::of(rows.row(i));
    let stats: Vec<RowStats> = if parallel {
        (0..k).into_par_iter().map(stats_of).collect()
    } else {
        (0..k).map(stats_of).collect()
    };
    if let Some((i, j)) = stats.iter().enumerate().find_map(|(i, s)| s.non_finite.map(|j| (i, j))) {
        return Err(Error::NonFinite { what: "correlation", index: i * n + j, value: rows[[i, j]] });
    }
    // Standardise each row to mean 0 and norm 1; then r = z_a · z_b.
    let mut keep: Vec<(usize, f64, f64)> = Vec::with_capacity(k);
    let mut constant_rows = Vec::new();
    for (i, &RowStats { mean, ss, .. }) in stats.iter().enumerate() {
        if !(mean.is_finite() && ss.is_finite()) {
            return Err(Error::Undefined { operation: "correlation" });
        }
        if ss.is_nan() || ss <= 1e-24 * (mean * mean).max(f64::MIN_POSITIVE) * n as f64 {
            constant_rows.push(i);
        } else {
            keep.push((i, mean, ss.sqrt()));
        }
    }
    let m = keep.len();
    let mut z = vec![0.0; m * n];
    let standardise = |(out, &(i, mean, norm)): (&mut [f64], &(usize, f64, f64))| {
        for (o, &v) in out.iter_mut().zip(rows.row(i)) {
            *o = (v - mean) / norm;
        }
    };
    if parallel {
        z.par_chunks_mut(n).zip(keep.par_iter()).for_each(standardise);
    } else {
        z.chunks_mut(n).zip(&keep).for_each(standardise);
    }
    let df = (n - 2) as f64;
    let dist = StudentsT::new(0.0, 1.0, df).ok();
    let pair = |a: usize, b: usize, r: f64| {
        let rv = r.clamp(-1.0, 1.0);
        let p = if 1.0 - rv * rv <= 1e-15 {
            0.0
        } else {
            let t = rv * (df / (1.0 - rv * rv)).sqrt();
            dist.as_ref().map_or(1.0, |d| (2.0 * d.sf(t.abs())).clamp(0.0, 1.0))
        };
        PairCorrelation { a: keep[a].0, b: keep[b].0, r: rv, p_value: p, q_value: p }
    };
    let empty = PairCorrelation { a: 0, b: 0, r: 0.0, p_value: 1.0, q_value: 1.0 };
    let mut pairs = vec![empty; m * m.saturating_sub(1) / 2];
    // Each task's rows and the part of `pairs` it fills.
    let mut tasks: Vec<(Range<usize>, &mut [PairCorrelation])> = Vec::new();
    let mut rest = pairs.as_mut_slice();
    for (task_rows, len) in pair_tasks(m) {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        tasks.push((task_rows, head));
        rest = tail;
    }
    let run = |(task_rows, out): (Range<usize>, &mut [PairCorrelation])| {
        let mut w = 0;
        for a in task_rows {
            let za = &z[a * n..(a + 1) * n];
            let mut b = a + 1;
            while b < m {
                let t = (m - b).min(CORR_TILE);
                // A short tile repeats its last row; the repeats are not kept.
                let zb = std::array::from_fn(|j| {
                    let row = b + j.min(t - 1);
                    &z[row * n..(row + 1) * n]
                });
                let r = dot_tile(za, zb);
                for (j, &r) in r.iter().enumerate().take(t) {
                    out[w] = pair(a, b + j, r);
                    w += 1;
                }
                b += t;
            }
        }
    };
    if parallel {
        tasks.into_par_iter().for_each(run);
    } else {
        tasks.into_iter().for_each(run);
    }
    benjamini_hochberg(&mut pairs, parallel);
    Ok(Correlations { n, pairs, constant_rows })
}

/// A row's mean and sum of squared deviations, or the column of its first NaN or infinity.
struct RowStats {
    non_finite: Option<usize>,
    mean: f64,
    ss: f64,
}

impl RowStats {
    fn of(row: ArrayView1<'_, f64>) -> Self {
        if let Some(j) = row.iter().position(|v| !v.is_finite()) {
            return Self { non_finite: Some(j), mean: f64::NAN, ss: f64::NAN };
        }
        let mean = row.sum() / row.len() as f64;
        let ss: f64 = row.iter().map(|v| (v - mean) * (v - mean)).sum();
        Self { non_finite: None, mean, ss }
    }
}

/// The tasks of [`correlate_all`] over `m` rows: runs of consecutive rows holding about
/// [`CORR_TASK_PAIRS`] pairs each, with their numbers of pairs. They depend on `m` alone.
fn pair_tasks(m: usize) -> Vec<(Range<usize>, usize)> {
    let mut tasks = Vec::new();
    let (mut lo, mut count) = (0, 0);
    for a in 0..m {
        count += m - 1 - a;
        if count >= CORR_TASK_PAIRS || a + 1 == m {
            tasks.push((lo..a + 1, count));
            (lo, count) = (a + 1, 0);
        }
    }
    tasks
}

/// Values of a row read at once by [`dot_tile`] (two SSE2 registers' worth).
const DOT_LANES: usize = 4;

/// The dot products of `a` with each of `b` (all of `a`'s length): a register tile that reads
/// each value of `a` once for all of them, with [`DOT_LANES`] partial sums each.
fn dot_tile(a: &[f64], b: [&[f64]; CORR_TILE]) -> [f64; CORR_TILE] {
    let (a_chunks, a_tail) = a.as_chunks::<DOT_LANES>();
    let n_chunks = a_chunks.len();
    let b_chunks = b.map(|row| &row.as_chunks::<DOT_LANES>().0[..n_chunks]);
    let mut sums = [[0.0; DOT_LANES]; CORR_TILE];
    for (i, ac) in a_chunks.iter().enumerate() {
        for (sum, bc) in sums.iter_mut().zip(&b_chunks) {
            for ((s, &x), &y) in sum.iter_mut().zip(ac).zip(&bc[i]) {
                *s += x * y;
            }
        }
    }
    let tail_start = n_chunks * DOT_LANES;
    std::array::from_fn(|p| {
        let s = &sums[p];
        let mut sum = (s[0] + s[1]) + (s[2] + s[3]);
        for (j, &v) in a_tail.iter().enumerate() {
            sum += v * b[p][tail_start + j];
        }
        sum
    })
}

/// Sets each pair's q-value: `min over j >= rank of p_(j) * m / j`, capped at 1. Pairs of
/// equal p-values are ranked by position (their q-values do not depend on it).
fn benjamini_hochberg(pairs: &mut [PairCorrelation], parallel: bool) {
    let m = pairs.len();
    let mut order: Vec<(f64, usize)> = pairs.iter().enumerate().map(|(i, p)| (p.p_value, i)).collect();
    let by_p = |x: &(f64, usize), y: &(f64, usize)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
    if parallel {
        order.par_sort_unstable_by(by_p);
    } else {
        order.sort_unstable_by(by_p);
    }
    let mut running = 1.0f64;
    for (rank, &(p, i)) in order.iter().enumerate().rev() {
        let q = (p * m as f64 / (rank + 1) as f64).min(1.0);
        running = running.min(q);
        pairs[i].q_value = running;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(p: f64) -> PairCorrelation {
        PairCorrelation { a: 0, b: 1, r: 0.0, p_value: p, q_value: p }
    }

    #[test]
    fn pair_tasks_cover_every_pair_once_in_balanced_runs() {
        for m in 0..700 {
            let tasks = pair_tasks(m);
            let (mut next, mut total) = (0, 0);
            for (i, (rows, count)) in tasks.iter().enumerate() {
                assert_eq!(rows.start, next, "m = {m}: consecutive rows");
                assert!(rows.end > rows.start);
                next = rows.end;
                assert_eq!(*count, rows.clone().map(|a| m - 1 - a).sum::<usize>());
                assert!(*count < CORR_TASK_PAIRS + m, "m = {m}: one row too many");
                assert!(i + 1 == tasks.len() || *count >= CORR_TASK_PAIRS, "m = {m}: only the last is short");
                total += count;
            }
            assert_eq!((next, total), (m, m * m.saturating_sub(1) / 2), "m = {m}");
        }
    }

    #[test]
    fn dot_tiles_are_dot_products() {
        for n in 0..20u32 {
            let row = |s: f64| (0..n).map(|j| ((f64::from(j) + 1.0) * s).sin()).collect::<Vec<f64>>();
            let a = row(0.7);
            let b: Vec<Vec<f64>> = (0..CORR_TILE).map(|p| row(1.3 + p as f64)).collect();
            let got = dot_tile(&a, std::array::from_fn(|p| b[p].as_slice()));
            for (p, bp) in b.iter().enumerate() {
                let want: f64 = a.iter().zip(bp).map(|(x, y)| x * y).sum();
                assert!((got[p] - want).abs() < 1e-12, "n = {n}, row {p}");
            }
        }
    }

    #[test]
    fn benjamini_hochberg_matches_the_textbook_example() {
        // p = 0.01, 0.04, 0.03, 0.005 (m = 4): sorted 0.005, 0.01, 0.03, 0.04 ->
        // raw 0.02, 0.02, 0.04, 0.04; monotone from the top.
        let mut pairs: Vec<PairCorrelation> = [0.01, 0.04, 0.03, 0.005].into_iter().map(pc).collect();
        benjamini_hochberg(&mut pairs, false);
        let q: Vec<f64> = pairs.iter().map(|p| p.q_value).collect();
        let want = [0.02, 0.04, 0.04, 0.02];
        for (got, want) in q.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{q:?}");
        }
    }

    #[test]
    fn the_closed_form_f2_survival_matches_statrs() {
        use statrs::distribution::FisherSnedecor;
        for df2 in [1.0, 3.0, 10.0, 97.0, 997.0] {
            let d = FisherSnedecor::new(2.0, df2).unwrap();
            for f in [0.0, 0.1, 1.0, 2.5, 7.0, 30.0] {
                let (ours, theirs) = (f2_survival(f, df2), d.sf(f));
                assert!(
                    (ours - theirs).abs() < 1e-9 * theirs.max(1e-300) + 1e-14,
                    "F(2, {df2}) at {f}: {ours} vs {theirs}"
                );
            }
        }
    }

    #[test]
    fn an_exact_line_has_p_zero_and_r2_one() {
        let times: Vec<f64> = (0..10).map(|d| f64::from(d) * DAY).collect();
        let values: Vec<f64> = (0..10).map(|d| 3.0 - 0.5 * f64::from(d)).collect();
        let t = fit_trend(&times, &values).unwrap();
        assert!((t.slope_per_day + 0.5).abs() < 1e-12 && (t.intercept - 3.0).abs() < 1e-12);
        assert_eq!((t.r_squared, t.p_value), (1.0, 0.0));
    }

    #[test]
    fn trend_p_values_match_a_known_t_test() {
        // y = [1, 2, 3, 5] at days 0..3: slope 1.3, SSE 0.3, t = 1.3 / sqrt(0.3 / 2 / 5) =
        // 7.5056; with 2 degrees of freedom the two-sided p is 1 - t / sqrt(t^2 + 2).
        let t = fit_trend(&[0.0, DAY, 2.0 * DAY, 3.0 * DAY], &[1.0, 2.0, 3.0, 5.0]).unwrap();
        assert!((t.slope_per_day - 1.3).abs() < 1e-12);
        let tt = 1.3 / (0.3f64 / 2.0 / 5.0).sqrt();
        assert!((t.p_value - (1.0 - tt / (tt * tt + 2.0).sqrt())).abs() < 1e-9, "{}", t.p_value);
        assert!((t.r_squared - 0.965_714_285_714_285_7).abs() < 1e-12);
    }
}
