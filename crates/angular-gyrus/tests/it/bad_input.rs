//! Bad input: typed errors, nothing changed, never a NaN stored.

use angular_gyrus::fit::{self, FitConfig, Period};
use angular_gyrus::{Error, MathCategory, MathFilter, MathRelation};
use maxim_core::value::Value;
use maxim_core::{MemoryLayer, RecordId};
use ndarray::Array2;

use crate::common::{layer, times};

#[test]
fn records_with_nan_or_bad_names_are_refused() {
    let (_clock, mut ag) = layer();
    let mut r = ag.new_record("x", MathCategory::Fact, "d").unwrap();
    r.inputs.insert("slope", Value::Float(f64::NAN));
    assert!(ag.insert(r.into()).is_err());
    let mut r = ag.new_record("x", MathCategory::Fact, "d").unwrap();
    r.confidence = f64::INFINITY;
    assert!(ag.insert(r.into()).is_err());
    assert!(matches!(ag.new_record("", MathCategory::Fact, "d"), Err(Error::BadName { .. })));
    assert!(matches!(ag.new_record("x", MathCategory::Fact, &"d".repeat(300)), Err(Error::BadName { .. })));
    assert_eq!(ag.len(), 9);
}

#[test]
fn duplicates_unknown_ids_and_bad_links_change_nothing() {
    let (_clock, mut ag) = layer();
    let r = ag.new_record("x", MathCategory::Fact, "d").unwrap();
    let id = ag.insert(r.clone().into()).unwrap();
    let err = ag.insert(r.into()).unwrap_err();
    assert!(err.is_duplicate() && matches!(err, Error::Core(maxim_core::Error::Duplicate { .. })));
    let ghost = RecordId::from_u128(42);
    assert!(ag.link(id, ghost, MathRelation::Associates, 0.5).unwrap_err().is_not_found());
    assert!(ag.link(id, id, MathRelation::Associates, 0.5).is_err());
    let pi = ag.find_by_name("pi")[0];
    for w in [f64::NAN, -0.1, 1.5] {
        assert!(ag.link(id, pi, MathRelation::Associates, w).is_err());
    }
    assert_eq!(ag.math_graph().edge_count(), 0);
    assert!(ag.get(ghost).unwrap_err().is_not_found());
    assert_eq!(ag.len(), 10);
}

#[test]
fn fits_refuse_bad_series() {
    let t = times(10, 3600.0);
    let ok = vec![1.0, 2.0, 1.5, 3.0, 2.0, 4.0, 3.0, 5.0, 4.0, 6.0];
    assert!(matches!(fit::fit_trend(&t[..2], &ok[..2]), Err(Error::TooShort { needed: 3, .. })));
    assert!(matches!(fit::fit_trend(&t, &ok[..9]), Err(Error::LengthMismatch { left: 10, right: 9, .. })));
    let mut nan = ok.clone();
    nan[4] = f64::NAN;
    assert!(matches!(fit::fit_trend(&t, &nan), Err(Error::NonFinite { index: 4, .. })));
    let mut inf_t = t.clone();
    inf_t[2] = f64::INFINITY;
    assert!(matches!(fit::fit_trend(&inf_t, &ok), Err(Error::NonFinite { .. })));
    assert!(matches!(fit::fit_trend(&t, &[2.5; 10]), Err(Error::Constant { input: "values", .. })));
    assert!(matches!(fit::fit_trend(&[5.0; 10], &ok), Err(Error::Constant { input: "times", .. })));
    // Every sample at the same time of day: a daily rhythm cannot be told.
    let daily = times(10, 86_400.0);
    assert!(matches!(fit::fit_cosinor(&daily, &ok, Period::DAILY), Err(Error::Singular { .. })));
    assert!(matches!(
        fit::fit_cosinor(&t[..3], &ok[..3], Period::DAILY),
        Err(Error::TooShort { needed: 4, .. })
    ));
    assert!(Period::hours(0.0).is_err() && Period::hours(f64::NAN).is_err());
    // Squares of values this large overflow: an error, not a NaN fit.
    let huge: Vec<f64> = ok.iter().map(|v| v * 1e307).collect();
    assert!(matches!(fit::fit_trend(&t, &huge), Err(Error::Undefined { .. })));
    assert!(matches!(fit::fit_cosinor(&t, &huge, Period::DAILY), Err(Error::Undefined { .. })));
    let rows = ndarray::Array2::from_shape_vec((2, 10), [huge.clone(), huge].concat()).unwrap();
    assert!(matches!(
        fit::correlate_all(rows.view(), maxim_core::Parallelism::Sequential),
        Err(Error::Undefined { .. })
    ));
}

#[test]
fn batch_fits_isolate_bad_rows() {
    let grid = fit::Grid::new(&times(48, 3600.0)).unwrap();
    let mut rows = Array2::<f64>::zeros((3, 48));
    for j in 0..48 {
        rows[[0, j]] = j as f64;
        rows[[1, j]] = 7.0;
        rows[[2, j]] = if j == 5 { f64::NAN } else { j as f64 };
    }
    let fits = fit::fit_many(&grid, rows.view(), &FitConfig::default(), maxim_core::Parallelism::Sequential);
    assert!(fits[0].trend.is_ok() && fits[0].daily.is_ok());
    assert!(matches!(fits[1].trend, Err(Error::Constant { .. })) && fits[1].daily.is_err());
    assert!(matches!(fits[2].trend, Err(Error::NonFinite { index: 5, .. })));
    assert!(matches!(
        fit::correlate_all(rows.view(), maxim_core::Parallelism::Sequential),
        Err(Error::NonFinite { .. })
    ));
    let c = fit::correlate_all(
        rows.slice_axis(ndarray::Axis(0), ndarray::Slice::from(0..2)),
        maxim_core::Parallelism::Sequential,
    )
    .unwrap();
    assert_eq!((c.pairs.len(), c.constant_rows.clone()), (0, vec![1]));
    assert!(
        fit::correlate_all(Array2::<f64>::zeros((4, 2)).view(), maxim_core::Parallelism::Sequential).is_err()
    );
}

#[test]
fn bad_fit_settings_are_refused_before_anything_is_stored() {
    let (_clock, mut ag) = layer();
    let t = times(30, 86_400.0);
    let y: Vec<f64> = (0..30).map(f64::from).collect();
    let trend = fit::fit_trend(&t, &y).unwrap();
    let mut config = FitConfig::default();
    config.alpha = f64::NAN;
    assert!(ag.store_trend("m", &trend, &config).is_err());
    assert!(ag.store_trend("  ", &trend, &FitConfig::default()).is_err());
    assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Pattern), 10).len(), 0);
}
