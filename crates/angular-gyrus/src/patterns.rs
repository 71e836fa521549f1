//! Confirmed fits become PATTERN records.
//!
//! Each store call takes a fit and the [`FitConfig`] that judges it: a weak or insignificant
//! fit is not stored (`Ok(None)`). A confirmed one is stored as a PATTERN record in the
//! domain [`PATTERN_DOMAIN`] whose `inputs` hold the fitted parameters, whose confidence is
//! the fit's R² (r² for a correlation), and whose origin is [`Origin::Learned`]. Names:
//!
//! | fit | name | inputs |
//! |---|---|---|
//! | trend | `trend:<metric>` | `kind`, `metric`, `slope_per_day`, `slope` (the same), `intercept`, `t0_secs`, `r_squared`, `p_value`, `n` |
//! | cosinor | `circadian:<metric>` (24 h), `weekly:<metric>` (7 d), `cosinor:<hours>h:<metric>` | `kind`, `metric`, `period_hours`, `mesor`, `amplitude`, `phase`, `acrophase_hours`, `r_squared`, `p_value`, `n` |
//! | correlation | `correlation:<a>~<b>` (names sorted) | `kind`, `metric_a`, `metric_b`, `r`, `p_value`, `q_value`, `n` |
//!
//! Storing a fit whose name is already held refits that record in place: same id, new
//! parameters and confidence, observation count plus one. A confirmed cosinor is linked
//! PHASE_LOCKED_TO the metric's trend record (weight: the cosinor's R²) when there is one,
//! and a correlation CORRELATES_WITH every pattern record of either metric (weight |r|).
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathRelation, fit::{self, FitConfig, Period}};
//! use maxim_core::{ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ag = AngularGyrus::builder().clock(clock.shared()).build()?;
//! let times: Vec<f64> = (0..240).map(|h| 1_699_920_000.0 + f64::from(h) * 3600.0).collect();
//! let rhythm: Vec<f64> = times.iter().map(|t| 0.7 + 0.2 * (std::f64::consts::TAU * (t / 86_400.0 - 0.8)).cos() - 1e-7 * t).collect();
//! let config = FitConfig::default();
//! let trend = ag.store_trend("success_rate", &fit::fit_trend(&times, &rhythm)?, &config)?;
//! assert!(trend.is_none()); // a tiny drift under a strong rhythm: not a trend worth keeping
//! let c = fit::fit_cosinor(&times, &rhythm, Period::DAILY)?;
//! let id = ag.store_cosinor("success_rate", &c, &config)?.expect("confirmed");
//! let record = ag.math_record(id).unwrap();
//! assert_eq!(record.name, "circadian:success_rate");
//! assert!((record.input_f64("phase").unwrap() - 0.8).abs() < 0.01);
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use maxim_core::value::{Map, Value};
use maxim_core::{MemoryRecord, RecordId};

use crate::error::Result;
use crate::fit::{CosinorFit, FitConfig, PairCorrelation, Period, TrendFit};
use crate::record::{MathCategory, MathEntry, MathRecord, Origin, check_name};
use crate::store::{AngularGyrus, MathFilter, MathRelation};

/// The domain of fitted operational patterns.
pub const PATTERN_DOMAIN: &str = "operational_statistics";

/// The name of the trend record of `metric`.
pub fn trend_name(metric: &str) -> String {
    format!("trend:{}", metric.trim())
}

/// The name of the cosinor record of `metric` for `period`.
pub fn cosinor_name(metric: &str, period: Period) -> String {
    let metric = metric.trim();
    if period == Period::DAILY {
        format!("circadian:{metric}")
    } else if period == Period::WEEKLY {
        format!("weekly:{metric}")
    } else {
        format!("cosinor:{}h:{metric}", period.as_hours())
    }
}

/// The name of the correlation record of metrics `a` and `b` (in either order).
pub fn correlation_name(a: &str, b: &str) -> String {
    let (a, b) = (a.trim(), b.trim());
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    format!("correlation:{x}~{y}")
}

fn num(v: f64) -> Value {
    Value::Float(v)
}

fn count(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

impl AngularGyrus {
    /// Stores `fit` as the trend of `metric` if `config` confirms it (see the
    /// [module docs](self)); returns the record's id, or `None` for a weak fit.
    pub fn store_trend(
        &mut self,
        metric: &str,
        fit: &TrendFit,
        config: &FitConfig,
    ) -> Result<Option<RecordId>> {
        config.validate()?;
        let metric = check_name("metric", metric)?;
        if !config.confirms_trend(fit) {
            return Ok(None);
        }
        let mut inputs = Map::with_capacity(9);
        inputs.insert("kind", "trend".into());
        inputs.insert("metric", metric.into());
        inputs.insert("slope_per_day", num(fit.slope_per_day));
        inputs.insert("slope", num(fit.slope_per_day));
        inputs.insert("intercept", num(fit.intercept));
        inputs.insert("t0_secs", num(fit.t0_secs));
        inputs.insert("r_squared", num(fit.r_squared));
        inputs.insert("p_value", num(fit.p_value));
        inputs.insert("n", count(fit.n));
        let verbal =
            format!("{metric} shows trend (R²={:.2}, slope={:.2}/day)", fit.r_squared, fit.slope_per_day);
        let code = format!("y = {} + {} * days_since({})", fit.intercept, fit.slope_per_day, fit.t0_secs);
        self.upsert_pattern(&trend_name(metric), inputs, verbal, code, fit.r_squared).map(Some)
    }

    /// Stores `fit` as the rhythm of `metric` if `config` confirms it; links it
    /// PHASE_LOCKED_TO the metric's trend record when there is one.
    pub fn store_cosinor(
        &mut self,
        metric: &str,
        fit: &CosinorFit,
        config: &FitConfig,
    ) -> Result<Option<RecordId>> {
        config.validate()?;
        let metric = check_name("metric", metric)?;
        if !config.confirms_cosinor(fit) {
            return Ok(None);
        }
        let period = Period::hours(fit.period_hours)?;
        let mut inputs = Map::with_capacity(10);
        inputs.insert("kind", "cosinor".into());
        inputs.insert("metric", metric.into());
        inputs.insert("period_hours", num(fit.period_hours));
        inputs.insert("mesor", num(fit.mesor));
        inputs.insert("amplitude", num(fit.amplitude));
        inputs.insert("phase", num(fit.phase));
        inputs.insert("acrophase_hours", num(fit.acrophase_hours()));
        inputs.insert("r_squared", num(fit.r_squared));
        inputs.insert("p_value", num(fit.p_value));
        inputs.insert("n", count(fit.n));
        let verbal = format!(
            "{metric} peaks at phase {:.2} of its {} h cycle (amplitude {:.3}, R²={:.2})",
            fit.phase, fit.period_hours, fit.amplitude, fit.r_squared
        );
        let code = format!(
            "y = {} + {} * cos(2π (t / {}h - {}))",
            fit.mesor, fit.amplitude, fit.period_hours, fit.phase
        );
        let id = self.upsert_pattern(&cosinor_name(metric, period), inputs, verbal, code, fit.r_squared)?;
        if let Some(&trend) = self.find_by_name(&trend_name(metric)).first() {
            self.link(id, trend, MathRelation::PhaseLockedTo, fit.r_squared)?;
        }
        Ok(Some(id))
    }

    /// Stores `pair` (of metrics `a` and `b`) as a correlation if `config` confirms it; links
    /// it CORRELATES_WITH the pattern records of both metrics.
    pub fn store_correlation(
        &mut self,
        a: &str,
        b: &str,
        pair: &PairCorrelation,
        n: usize,
        config: &FitConfig,
    ) -> Result<Option<RecordId>> {
        config.validate()?;
        let (a, b) = (check_name("metric", a)?, check_name("metric", b)?);
        if !config.confirms_correlation(pair) {
            return Ok(None);
        }
        let mut inputs = Map::with_capacity(7);
        inputs.insert("kind", "correlation".into());
        inputs.insert("metric_a", a.into());
        inputs.insert("metric_b", b.into());
        inputs.insert("r", num(pair.r));
        inputs.insert("p_value", num(pair.p_value));
        inputs.insert("q_value", num(pair.q_value));
        inputs.insert("n", count(n));
        let verbal = format!("{a} correlates with {b} (r={:.2}, q={:.3})", pair.r, pair.q_value);
        let code = format!("pearson({a}, {b}) = {}", pair.r);
        let id = self.upsert_pattern(&correlation_name(a, b), inputs, verbal, code, pair.r * pair.r)?;
        let mut targets = Vec::new();
        for metric in [a, b] {
            targets.extend(self.find_by_name(&trend_name(metric)));
            targets.extend(self.find_by_name(&cosinor_name(metric, Period::DAILY)));
            targets.extend(self.find_by_name(&cosinor_name(metric, Period::WEEKLY)));
        }
        for target in targets {
            self.link(id, target, MathRelation::CorrelatesWith, pair.r.abs())?;
        }
        Ok(Some(id))
    }

    /// The PATTERN records of the pattern domain, most confident first.
    pub fn patterns(&self) -> Vec<&MathRecord> {
        let filter = MathFilter::new()
            .category(MathCategory::Pattern)
            .domain(PATTERN_DOMAIN)
            .include_compressed(false);
        let mut out: Vec<&MathRecord> =
            self.recall_records(&filter, usize::MAX).into_iter().filter_map(MathEntry::as_full).collect();
        out.sort_by(|x, y| y.confidence.total_cmp(&x.confidence).then(x.meta.id.cmp(&y.meta.id)));
        out
    }

    /// Inserts the PATTERN record `name`, or refits the one held.
    fn upsert_pattern(
        &mut self,
        name: &str,
        inputs: Map,
        verbal: String,
        code: String,
        confidence: f64,
    ) -> Result<RecordId> {
        let confidence = confidence.clamp(0.0, 1.0);
        let held = self.find_by_name(name).into_iter().find(|&id| {
            self.record(id).is_some_and(|e| e.category() == MathCategory::Pattern && !e.is_built_in())
        });
        let mut record = if let Some(id) = held {
            let e = self.record(id).expect("found by name");
            let observations = match e {
                MathEntry::Full(r) => r.observation_count,
                MathEntry::Compressed(_) => 1,
            };
            let mut r =
                MathRecord::new(id, name, MathCategory::Pattern, PATTERN_DOMAIN, e.meta().created_at)?;
            r.meta = e.meta().clone();
            r.observation_count = observations.saturating_add(1);
            r
        } else {
            let mut r = self.new_record(name, MathCategory::Pattern, PATTERN_DOMAIN)?;
            r.observation_count = 1;
            r
        };
        record.inputs = inputs;
        record.verbal = verbal;
        record.code = code;
        record.confidence = confidence;
        record.origin = Origin::Learned;
        let id = record.meta.id;
        if held.is_some() {
            self.replace(record)?;
        } else {
            self.insert(record.into())?;
        }
        Ok(id)
    }
}

/// What [`AngularGyrus::fit_metrics`] did.
#[derive(Debug, Default)]
pub struct BatchReport {
    /// Trend records stored or refitted, by metric row.
    pub trends: Vec<(usize, RecordId)>,
    /// Cosinor records stored or refitted (daily, then weekly), by metric row.
    pub rhythms: Vec<(usize, RecordId)>,
    /// Correlation records stored or refitted, by pair of metric rows.
    pub correlations: Vec<((usize, usize), RecordId)>,
    /// Rows that could not be fitted, with the reason (constant, not finite, ...); they take
    /// no part in the correlations either.
    pub skipped: Vec<(usize, crate::Error)>,
}

impl AngularGyrus {
    /// Fits every metric of `values` (one row per metric, named by `names`, sampled at
    /// `times`): a trend and a daily cosinor (and a weekly one if `config` asks), on rayon as
    /// `parallelism` says, then the correlations of every pair of fittable rows, and stores
    /// every confirmed fit (see the [module docs](self)).
    ///
    /// Errors, before anything is stored: names that are empty, repeated, or not one per row;
    /// times that do not make a [`Grid`](crate::fit::Grid) or do not match the columns; bad
    /// settings; more new records than the store has room for ([`crate::Error::Full`]). A row
    /// that cannot be fitted is reported in [`BatchReport::skipped`], not an error.
    ///
    /// ```
    /// use angular_gyrus::{AngularGyrus, fit::FitConfig};
    /// use maxim_core::Parallelism;
    /// let mut ag = AngularGyrus::builder().build()?;
    /// let times: Vec<f64> = (0..96).map(|h| 1_699_920_000.0 + f64::from(h) * 3600.0).collect();
    /// let up: Vec<f64> = (0..96).map(|h| f64::from(h) * 0.1).collect();
    /// let down: Vec<f64> = up.iter().map(|v| 5.0 - 2.0 * v).collect();
    /// let values = ndarray::Array2::from_shape_vec((3, 96), [up, down, vec![1.0; 96]].concat()).unwrap();
    /// let report = ag.fit_metrics(&["load", "headroom", "flat"], &times, values.view(), &FitConfig::default(), Parallelism::Auto)?;
    /// assert_eq!(report.trends.len(), 2);
    /// assert_eq!(report.correlations.len(), 1);
    /// assert_eq!(report.skipped.len(), 1); // the flat metric cannot be fitted
    /// # Ok::<(), angular_gyrus::Error>(())
    /// ```
    #[expect(
        clippy::needless_pass_by_value,
        reason = "array views are cheap handles that ndarray passes by value"
    )]
    pub fn fit_metrics(
        &mut self,
        names: &[&str],
        times: &[f64],
        values: ndarray::ArrayView2<'_, f64>,
        config: &FitConfig,
        parallelism: maxim_core::Parallelism,
    ) -> Result<BatchReport> {
        let _s =
            tracing::debug_span!("ag_fit_metrics", n_metrics = names.len(), n_points = times.len()).entered();
        config.validate()?;
        if names.len() != values.nrows() {
            return Err(crate::Error::LengthMismatch {
                what: "metric names",
                left: names.len(),
                right: values.nrows(),
            });
        }
        if times.len() != values.ncols() {
            return Err(crate::Error::LengthMismatch {
                what: "times",
                left: times.len(),
                right: values.ncols(),
            });
        }
        let mut seen = std::collections::BTreeSet::new();
        for name in names {
            let name = check_name("metric", name)?;
            if !seen.insert(name) {
                return Err(crate::Error::Core(maxim_core::Error::invalid(
                    "metric names",
                    format!("{name:?} appears twice"),
                )));
            }
        }
        let grid = crate::fit::Grid::new(times)?;
        let fits = crate::fit::fit_many(&grid, values, config, parallelism);
        let mut report = BatchReport::default();
        let mut good = Vec::new();
        let mut planned: Vec<String> = Vec::new();
        for (row, f) in fits.iter().enumerate() {
            match &f.trend {
                Ok(t) => {
                    good.push(row);
                    if config.confirms_trend(t) {
                        planned.push(trend_name(names[row]));
                    }
                }
                Err(_) => continue,
            }
            for (c, period) in
                [(&f.daily, Period::DAILY)].into_iter().chain(f.weekly.as_ref().map(|w| (w, Period::WEEKLY)))
            {
                if let Ok(c) = c
                    && config.confirms_cosinor(c)
                {
                    planned.push(cosinor_name(names[row], period));
                }
            }
        }
        let sub = values.select(ndarray::Axis(0), &good);
        let correlations = if good.len() >= 2 {
            crate::fit::correlate_all(sub.view(), parallelism)?.confirmed(config)
        } else {
            Vec::new()
        };
        for p in &correlations {
            planned.push(correlation_name(names[good[p.a]], names[good[p.b]]));
        }
        let new = planned.iter().filter(|n| self.find_by_name(n).is_empty()).count();
        if self.len_records() + new > self.config().max_records {
            return Err(crate::Error::Full { max: self.config().max_records });
        }
        for (row, f) in fits.into_iter().enumerate() {
            let trend = match f.trend {
                Ok(t) => t,
                Err(e) => {
                    report.skipped.push((row, e));
                    continue;
                }
            };
            if let Some(id) = self.store_trend(names[row], &trend, config)? {
                report.trends.push((row, id));
            }
            for c in [f.daily].into_iter().chain(f.weekly).flatten() {
                if let Some(id) = self.store_cosinor(names[row], &c, config)? {
                    report.rhythms.push((row, id));
                }
            }
        }
        for p in &correlations {
            let (a, b) = (good[p.a], good[p.b]);
            if let Some(id) = self.store_correlation(names[a], names[b], p, times.len(), config)? {
                report.correlations.push(((a, b), id));
            }
        }
        Ok(report)
    }
}
