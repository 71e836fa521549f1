//! Property tests of the fitters against naive models: the trend agrees with the plain
//! least-squares line of `compute::linear` on daily samples, and a cosinor's residuals are
//! orthogonal to its design (1, cos, sin), which is what least squares means.

use angular_gyrus::compute;
use angular_gyrus::fit::{self, Period};
use proptest::prelude::*;

use crate::common::T0;

const DAY: f64 = 86_400.0;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_trend_on_daily_samples_is_the_index_line(values in proptest::collection::vec(-100.0f64..100.0, 3..60)) {
        let times: Vec<f64> = (0..values.len()).map(|d| T0.as_secs_f64() + d as f64 * DAY).collect();
        match (fit::fit_trend(&times, &values), compute::linear(&values)) {
            (Ok(t), Ok(l)) => {
                let scale = values.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                prop_assert!((t.slope_per_day - l.slope).abs() <= 1e-9 * scale, "{} vs {}", t.slope_per_day, l.slope);
                prop_assert!((t.intercept - l.intercept).abs() <= 1e-9 * scale);
                prop_assert!((t.r_squared - l.r_squared).abs() <= 1e-9);
                prop_assert!((0.0..=1.0).contains(&t.p_value));
            }
            (Err(angular_gyrus::Error::Constant { .. }), Ok(l)) => prop_assert_eq!(l.r_squared, 0.0),
            (t, l) => prop_assert!(false, "{t:?} / {l:?}"),
        }
    }

    #[test]
    fn cosinor_residuals_are_orthogonal_to_the_design(
        values in proptest::collection::vec(-10.0f64..10.0, 6..80),
        step_minutes in 30u64..400,
    ) {
        let times: Vec<f64> = (0..values.len()).map(|i| T0.as_secs_f64() + (i as u64 * step_minutes * 60) as f64).collect();
        let Ok(c) = fit::fit_cosinor(&times, &values, Period::DAILY) else {
            return Ok(()); // a singular or constant design is refused, which bad_input covers
        };
        prop_assert!((0.0..1.0).contains(&c.phase) && c.amplitude >= 0.0);
        prop_assert!((0.0..=1.0).contains(&c.r_squared) && (0.0..=1.0).contains(&c.p_value));
        let mut dots = [0.0f64; 3];
        let mut scale = 0.0f64;
        for (t, y) in times.iter().zip(&values) {
            let angle = std::f64::consts::TAU * (t / DAY - c.phase);
            let fitted = c.mesor + c.amplitude * angle.cos();
            let r = y - fitted;
            let w = std::f64::consts::TAU * t / DAY;
            for (d, x) in dots.iter_mut().zip([1.0, w.cos(), w.sin()]) {
                *d += r * x;
            }
            scale += y.abs();
        }
        for d in dots {
            prop_assert!(d.abs() <= 1e-7 * scale.max(1.0), "{dots:?}");
        }
    }
}
