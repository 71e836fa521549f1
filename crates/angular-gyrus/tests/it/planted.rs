//! The planted-pattern suite: known trends, correlations and acrophases hidden in seeded
//! noise are recovered within stated tolerances, and pure noise is rejected at the stated
//! false-positive rate.
//!
//! Stated rates: at `alpha = 0.05` a pure-noise series passes the p-value test of a trend or a
//! cosinor about 5% of the time (checked within three binomial standard deviations over 2,000
//! series), and is *confirmed* (p-value and effect size, [`FitConfig::default`]) never; over
//! families of null series the Benjamini–Hochberg step confirms a correlation in at most
//! `alpha` of the families.

use angular_gyrus::fit::{self, FitConfig, Grid, Period};
use angular_gyrus::{MathCategory, MathFilter, MathRelation};
use maxim_core::{MemoryLayer, Parallelism};
use ndarray::Array2;

use crate::common::{Noise, layer, times};

const DAY: f64 = 86_400.0;

#[test]
fn a_planted_trend_is_recovered_and_stored() {
    // 60 days every 2 hours, -0.02 per day, noise sd 0.05.
    let t = times(720, 7200.0);
    let mut noise = Noise::new(1);
    let y: Vec<f64> = t.iter().map(|&s| 0.9 - 0.02 * (s - t[0]) / DAY + 0.05 * noise.normal()).collect();
    let trend = fit::fit_trend(&t, &y).unwrap();
    assert!((trend.slope_per_day + 0.02).abs() < 0.001, "{trend:?}");
    assert!((trend.intercept - 0.9).abs() < 0.02 && trend.r_squared > 0.95 && trend.p_value < 1e-12);
    let (_clock, mut ag) = layer();
    let id = ag.store_trend("tool:navigate:success", &trend, &FitConfig::default()).unwrap().unwrap();
    let r = ag.math_record(id).unwrap();
    assert_eq!(
        (r.name.as_str(), r.category, r.domain.as_str()),
        ("trend:tool:navigate:success", MathCategory::Pattern, "operational_statistics")
    );
    assert_eq!(r.confidence, trend.r_squared);
    assert_eq!(r.input_f64("slope_per_day"), Some(trend.slope_per_day));
    assert_eq!((r.input_f64("p_value"), r.input_f64("n")), (Some(trend.p_value), Some(720.0)));
}

#[test]
fn the_seed_example_is_recovered_r2_073_slope_minus_002_per_day() {
    // Noise sd 0.21 over the same 60 days leaves R² near 0.73, as in the seed's traversal.
    let t = times(720, 7200.0);
    let mut noise = Noise::new(2);
    let y: Vec<f64> = t.iter().map(|&s| 0.9 - 0.02 * (s - t[0]) / DAY + 0.21 * noise.normal()).collect();
    let trend = fit::fit_trend(&t, &y).unwrap();
    assert!((trend.r_squared - 0.73).abs() < 0.03, "{trend:?}");
    assert!((trend.slope_per_day + 0.02).abs() < 0.001);
    let (_clock, mut ag) = layer();
    let id = ag.store_trend("tool:navigate:success", &trend, &FitConfig::default()).unwrap().unwrap();
    let verbal = &ag.math_record(id).unwrap().verbal;
    assert!(verbal.starts_with("tool:navigate:success shows trend (R²=0.7"), "{verbal}");
    assert!(verbal.ends_with("slope=-0.02/day)"), "{verbal}");
    // Fitting again refits the same record.
    let again = ag.store_trend("tool:navigate:success", &trend, &FitConfig::default()).unwrap().unwrap();
    assert_eq!(again, id);
    assert_eq!(ag.math_record(id).unwrap().observation_count, 2);
    assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Pattern), 10).len(), 1);
}

#[test]
fn a_planted_acrophase_of_08_is_recovered() {
    // Two weeks hourly: mesor 5, amplitude 1, peak at 0.8 of the day (19:12 UTC), noise sd 0.5.
    let t = times(336, 3600.0);
    let mut noise = Noise::new(3);
    let y: Vec<f64> = t
        .iter()
        .map(|&s| 5.0 + (std::f64::consts::TAU * (s / DAY - 0.8)).cos() + 0.5 * noise.normal())
        .collect();
    let c = fit::fit_cosinor(&t, &y, Period::DAILY).unwrap();
    assert!((c.phase - 0.8).abs() < 0.03, "{c:?}");
    assert!((c.amplitude - 1.0).abs() < 0.15 && (c.mesor - 5.0).abs() < 0.1 && c.p_value < 1e-12, "{c:?}");
    assert!((c.acrophase_hours() - 19.2).abs() < 0.72);
    let (_clock, mut ag) = layer();
    let config = FitConfig::default();
    // A trend record of the same metric exists: the rhythm is linked PHASE_LOCKED_TO it.
    let drift: Vec<f64> = t.iter().map(|&s| (s - t[0]) / DAY + 0.1 * noise.normal()).collect();
    let trend_id =
        ag.store_trend("success_rate", &fit::fit_trend(&t, &drift).unwrap(), &config).unwrap().unwrap();
    let id = ag.store_cosinor("success_rate", &c, &config).unwrap().unwrap();
    let r = ag.math_record(id).unwrap();
    assert_eq!(r.name, "circadian:success_rate");
    assert_eq!((r.input_f64("phase"), r.input_f64("period_hours")), (Some(c.phase), Some(24.0)));
    assert_eq!(ag.links_of(id), vec![(trend_id, MathRelation::PhaseLockedTo, c.r_squared)]);
    assert_eq!(ag.associated(&[trend_id], 5)[0].0.name(), "circadian:success_rate");
}

#[test]
fn a_planted_weekly_phase_is_recovered() {
    // Eight weeks every 4 hours, peak at 0.3 of the week (counted from the epoch's Thursday).
    let t = times(336, 4.0 * 3600.0);
    let mut noise = Noise::new(4);
    let y: Vec<f64> = t
        .iter()
        .map(|&s| 2.0 + 0.5 * (std::f64::consts::TAU * (s / (7.0 * DAY) - 0.3)).cos() + 0.2 * noise.normal())
        .collect();
    let c = fit::fit_cosinor(&t, &y, Period::WEEKLY).unwrap();
    assert!((c.phase - 0.3).abs() < 0.03 && (c.amplitude - 0.5).abs() < 0.08, "{c:?}");
    assert_eq!(c.period_hours, 168.0);
    let mut config = FitConfig::default();
    config.weekly = true;
    let grid = Grid::new(&t).unwrap();
    let rows = Array2::from_shape_vec((1, t.len()), y).unwrap();
    let fits = fit::fit_many(&grid, rows.view(), &config, Parallelism::Sequential);
    let weekly = fits[0].weekly.as_ref().unwrap().as_ref().unwrap();
    assert!((weekly.phase - c.phase).abs() < 1e-9);
}

#[test]
fn planted_correlations_are_found_and_nothing_else() {
    // 12 series of 500 points; r(0, 1) = 1/sqrt(1.25) = 0.894, r(2, 3) = -1/sqrt(2) = -0.707.
    let (k, n) = (12, 500);
    let mut noise = Noise::new(5);
    let mut rows = Array2::<f64>::zeros((k, n));
    for i in 0..k {
        for j in 0..n {
            rows[[i, j]] = noise.normal();
        }
    }
    for j in 0..n {
        rows[[1, j]] = rows[[0, j]] + 0.5 * noise.normal();
        rows[[3, j]] = -rows[[2, j]] + noise.normal();
    }
    let config = FitConfig::default();
    let all = fit::correlate_all(rows.view(), Parallelism::Sequential).unwrap();
    assert_eq!(all.pairs.len(), 66);
    let found = all.confirmed(&config);
    let pairs: Vec<(usize, usize)> = found.iter().map(|p| (p.a, p.b)).collect();
    assert_eq!(pairs, [(0, 1), (2, 3)]);
    assert!((found[0].r - 0.894).abs() < 0.03 && (found[1].r + 0.707).abs() < 0.05, "{found:?}");
    assert!(found.iter().all(|p| p.q_value < 1e-12));
    // Stored: the record links CORRELATES_WITH both metrics' pattern records.
    let (_clock, mut ag) = layer();
    let t = times(n, 3600.0);
    let metric_trend = |name: &str, slope: f64, ag: &mut angular_gyrus::AngularGyrus| {
        let y: Vec<f64> = t.iter().map(|&s| slope * (s - t[0]) / DAY).collect::<Vec<_>>();
        let y: Vec<f64> = y.iter().enumerate().map(|(j, v)| v + 0.01 * rows[[0, j]]).collect();
        ag.store_trend(name, &fit::fit_trend(&t, &y).unwrap(), &config).unwrap().unwrap()
    };
    let a = metric_trend("latency", 1.0, &mut ag);
    let b = metric_trend("errors", 2.0, &mut ag);
    let id = ag.store_correlation("latency", "errors", &found[0], n, &config).unwrap().unwrap();
    assert_eq!(ag.math_record(id).unwrap().name, "correlation:errors~latency");
    let linked: Vec<_> = ag.links_of(id).into_iter().map(|(t, rel, _)| (t, rel)).collect();
    let mut want = vec![(a, MathRelation::CorrelatesWith), (b, MathRelation::CorrelatesWith)];
    want.sort();
    assert_eq!(linked, want);
    assert!((ag.math_record(id).unwrap().confidence - found[0].r * found[0].r).abs() < 1e-15);
}

#[test]
fn pure_noise_is_rejected_at_the_stated_rate() {
    let (k, n) = (2000, 100);
    let t = times(n, 3600.0);
    let grid = Grid::new(&t).unwrap();
    let mut noise = Noise::new(6);
    let rows = Array2::from_shape_fn((k, n), |_| noise.normal());
    let config = FitConfig::default();
    let fits = fit::fit_many(&grid, rows.view(), &config, Parallelism::Auto);
    let (mut trend_p, mut cos_p, mut confirmed) = (0, 0, 0);
    for f in &fits {
        let (tr, co) = (f.trend.as_ref().unwrap(), f.daily.as_ref().unwrap());
        trend_p += usize::from(tr.p_value < 0.05);
        cos_p += usize::from(co.p_value < 0.05);
        confirmed += usize::from(config.confirms_trend(tr) || config.confirms_cosinor(co));
    }
    // Binomial(2000, 0.05): mean 100, sd 9.7; three sd either way.
    assert!((71..=129).contains(&trend_p), "trend false positives {trend_p}");
    assert!((71..=129).contains(&cos_p), "cosinor false positives {cos_p}");
    assert_eq!(confirmed, 0);
    let (_clock, mut ag) = layer();
    for (i, f) in fits.iter().enumerate().take(200) {
        let name = format!("noise{i}");
        assert!(ag.store_trend(&name, f.trend.as_ref().unwrap(), &config).unwrap().is_none());
        assert!(ag.store_cosinor(&name, f.daily.as_ref().unwrap(), &config).unwrap().is_none());
    }
    assert_eq!(ag.len(), 9);
}

#[test]
fn benjamini_hochberg_keeps_null_families_clean() {
    let mut noise = Noise::new(7);
    let config = FitConfig::default();
    let (mut families_with_discovery, mut raw_hits, mut pairs) = (0, 0, 0);
    for _ in 0..40 {
        let rows = Array2::from_shape_fn((20, 100), |_| noise.normal());
        let c = fit::correlate_all(rows.view(), Parallelism::Sequential).unwrap();
        let discoveries = c.pairs.iter().filter(|p| p.q_value < config.alpha).count();
        families_with_discovery += usize::from(discoveries > 0);
        raw_hits += c.pairs.iter().filter(|p| p.p_value < 0.05).count();
        pairs += c.pairs.len();
        assert!(c.confirmed(&config).is_empty());
    }
    // All nulls: BH controls the family-wise rate at alpha, 2 of 40 expected.
    assert!(families_with_discovery <= 4, "{families_with_discovery}");
    // The raw p-values are calibrated: about 5% of 7,600 pairs (sd 19).
    let rate = raw_hits as f64 / pairs as f64;
    assert!((0.04..=0.06).contains(&rate), "{rate}");
}

#[test]
fn parallel_and_sequential_fits_agree_bit_for_bit() {
    let t = times(200, 1800.0);
    let grid = Grid::new(&t).unwrap();
    let mut noise = Noise::new(8);
    let rows = Array2::from_shape_fn((300, 200), |(i, j)| (i % 7) as f64 * j as f64 * 1e-3 + noise.normal());
    let mut config = FitConfig::default();
    config.weekly = true;
    let seq = fit::fit_many(&grid, rows.view(), &config, Parallelism::Sequential);
    let par = fit::fit_many(&grid, rows.view(), &config, Parallelism::Parallel);
    for (a, b) in seq.iter().zip(&par) {
        assert_eq!(a.trend.as_ref().unwrap(), b.trend.as_ref().unwrap());
        assert_eq!(a.daily.as_ref().unwrap(), b.daily.as_ref().unwrap());
    }
    // One series through the batch equals the single-series call.
    let single = fit::fit_trend(&t, rows.row(3).as_slice().unwrap()).unwrap();
    assert_eq!(&single, seq[3].trend.as_ref().unwrap());
    let small = rows.slice_axis(ndarray::Axis(0), ndarray::Slice::from(0..60));
    let cs = fit::correlate_all(small, Parallelism::Sequential).unwrap();
    let cp = fit::correlate_all(small, Parallelism::Parallel).unwrap();
    assert_eq!(cs.pairs.len(), cp.pairs.len());
    for (a, b) in cs.pairs.iter().zip(&cp.pairs) {
        assert_eq!(a, b);
    }
}

#[test]
fn a_batch_of_metrics_stores_exactly_what_was_planted() {
    // Ten days hourly: row 0 trends, row 1 peaks at 0.8 of the day, rows 2 and 3 move
    // together, rows 4..20 are noise, row 20 is flat.
    let (k, n) = (21, 240);
    let t = times(n, 3600.0);
    let mut noise = Noise::new(9);
    let mut rows = Array2::<f64>::zeros((k, n));
    for j in 0..n {
        let day = (t[j] - t[0]) / DAY;
        rows[[0, j]] = 1.0 - 0.05 * day + 0.05 * noise.normal();
        rows[[1, j]] = 3.0 + (std::f64::consts::TAU * (t[j] / DAY - 0.8)).cos() + 0.3 * noise.normal();
        rows[[2, j]] = noise.normal();
        rows[[3, j]] = rows[[2, j]] + 0.5 * noise.normal();
        for i in 4..20 {
            rows[[i, j]] = noise.normal();
        }
        rows[[20, j]] = 2.0;
    }
    let names: Vec<String> = (0..k).map(|i| format!("m{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let config = FitConfig::default();
    let (_clock, mut ag) = layer();
    let report = ag.fit_metrics(&names, &t, rows.view(), &config, Parallelism::Parallel).unwrap();
    let rows_of = |v: &[(usize, maxim_core::RecordId)]| v.iter().map(|(r, _)| *r).collect::<Vec<_>>();
    assert_eq!(rows_of(&report.trends), [0]);
    assert_eq!(rows_of(&report.rhythms), [1]);
    assert_eq!(report.correlations.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [(2, 3)]);
    assert_eq!(report.skipped.len(), 1);
    assert!(matches!(report.skipped[0], (20, angular_gyrus::Error::Constant { .. })));
    let rhythm = ag.math_record(report.rhythms[0].1).unwrap();
    assert!((rhythm.input_f64("phase").unwrap() - 0.8).abs() < 0.02);
    assert_eq!(ag.len(), 12);
    // The same batch again refits the same records; a sequential run agrees.
    let again = ag.fit_metrics(&names, &t, rows.view(), &config, Parallelism::Sequential).unwrap();
    assert_eq!(again.trends, report.trends);
    assert_eq!(ag.len(), 12);
    assert_eq!(ag.math_record(report.trends[0].1).unwrap().observation_count, 2);
}

#[test]
fn a_batch_that_would_overflow_the_store_stores_nothing() {
    let t = times(100, 3600.0);
    let rows = Array2::from_shape_fn((3, 100), |(i, j)| (i + 1) as f64 * j as f64);
    let mut config = angular_gyrus::AngularGyrusConfig::default();
    config.max_records = 10;
    let (_clock, mut ag) = crate::common::layer_with(config);
    let err = ag
        .fit_metrics(&["a", "b", "c"], &t, rows.view(), &FitConfig::default(), Parallelism::Sequential)
        .unwrap_err();
    assert!(matches!(err, angular_gyrus::Error::Full { max: 10 }));
    assert_eq!(ag.len(), 9);
    let err = ag
        .fit_metrics(&["a", "a", "c"], &t, rows.view(), &FitConfig::default(), Parallelism::Sequential)
        .unwrap_err();
    assert!(matches!(err, angular_gyrus::Error::Core(maxim_core::Error::InvalidArgument { .. })));
    assert!(
        ag.fit_metrics(&["a", "b"], &t, rows.view(), &FitConfig::default(), Parallelism::Sequential).is_err()
    );
    assert!(
        ag.fit_metrics(
            &["a", "b", "c"],
            &t[..99],
            rows.view(),
            &FitConfig::default(),
            Parallelism::Sequential
        )
        .is_err()
    );
}

#[test]
fn all_pairs_agree_across_paths_and_with_a_naive_pearson_and_benjamini_hochberg() {
    // 150 rows (11,026 pairs after the constant row: many tasks, tiles with a remainder) of 37
    // points (a tail past the groups of four values the dot products read at once).
    let (k, n) = (150, 37);
    let mut noise = Noise::new(21);
    let mut rows =
        Array2::from_shape_fn((k, n), |(i, j)| (i % 5) as f64 * (j as f64 * 0.3).sin() + noise.normal());
    rows.row_mut(7).fill(3.0);
    let seq = fit::correlate_all(rows.view(), Parallelism::Sequential).unwrap();
    let par = fit::correlate_all(rows.view(), Parallelism::Parallel).unwrap();
    assert_eq!(seq, par, "the sequential and the parallel path agree bit for bit");
    assert_eq!(seq.constant_rows, [7]);
    let kept: Vec<usize> = (0..k).filter(|&i| i != 7).collect();
    assert_eq!(seq.pairs.len(), kept.len() * (kept.len() - 1) / 2);
    let pearson = |a: usize, b: usize| {
        let (x, y) = (rows.row(a), rows.row(b));
        let (mx, my) = (x.sum() / n as f64, y.sum() / n as f64);
        let sxy: f64 = x.iter().zip(&y).map(|(u, v)| (u - mx) * (v - my)).sum();
        let sxx: f64 = x.iter().map(|u| (u - mx) * (u - mx)).sum();
        let syy: f64 = y.iter().map(|v| (v - my) * (v - my)).sum();
        sxy / (sxx * syy).sqrt()
    };
    let mut pairs = seq.pairs.iter();
    for (i, &a) in kept.iter().enumerate() {
        for &b in &kept[i + 1..] {
            let p = pairs.next().unwrap();
            assert_eq!((p.a, p.b), (a, b), "pairs in row order");
            assert!((p.r - pearson(a, b)).abs() < 1e-12, "r of ({a}, {b})");
            assert!((0.0..=1.0).contains(&p.p_value));
        }
    }
    // Benjamini–Hochberg by the book: rank the p-values, q_(i) = min_{j >= i} p_(j) m / j.
    let m = seq.pairs.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| seq.pairs[x].p_value.total_cmp(&seq.pairs[y].p_value));
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min((seq.pairs[i].p_value * m as f64 / (rank + 1) as f64).min(1.0));
        q[i] = running;
    }
    assert!(seq.pairs.iter().zip(&q).all(|(p, q)| p.q_value == *q));
    assert!(seq.pairs.iter().any(|p| p.r.abs() > 0.5), "the planted rows correlate");
}
