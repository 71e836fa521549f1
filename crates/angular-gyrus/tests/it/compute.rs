//! Exact compute and `analyze` against the reference's numbers (§6.3 [run] vectors, and
//! Python 3.11's `statistics` module for the exactly rounded mean and variance).

#![expect(clippy::unreadable_literal, reason = "vectors are pasted as Python's repr prints them")]

use angular_gyrus::Error;
use angular_gyrus::compute::{self, Analysis, AnalysisMethod, Operation};

#[test]
fn linear_on_the_run_vector() {
    // [run] linear on [1, 2, 3, 5] -> slope 1.3, intercept 0.8, R² 0.9657.
    let fit = compute::linear(&[1.0, 2.0, 3.0, 5.0]).unwrap();
    assert!((fit.slope - 1.3).abs() < 1e-12);
    assert!((fit.intercept - 0.8).abs() < 1e-12);
    assert_eq!((fit.r_squared * 1e4).round() / 1e4, 0.9657);
    assert_eq!(fit.confidence, fit.r_squared);
    assert_eq!(fit.strength(), "strong");
    let Analysis::Linear(via) = compute::analyze(&[1.0, 2.0, 3.0, 5.0], AnalysisMethod::Linear).unwrap()
    else {
        panic!("a linear analysis")
    };
    assert_eq!(via, fit);
}

/// Python 3.11: mean, variance, stdev, median, mode of each list.
const PYTHON: [(&[f64], [f64; 5]); 4] = [
    (&[0.1, 0.2, 0.3, 0.7, 0.001], [0.2602, 0.0728702, 0.2699448091740235, 0.2, 0.1]),
    (&[1e16, 1.0, -1e16, 3.5], [1.125, 6.666666666666667e31, 8164965809277260.0, 2.25, 1e16]),
    (
        &[
            -0.2558802884476004,
            0.511431512516514,
            -0.2260961647831047,
            -0.3150684223311854,
            -0.9300181903227674,
            -0.21330194742120367,
            1.1119173809863208,
        ],
        [
            -0.04528801711471813,
            0.43497654771265976,
            0.6595275185408565,
            -0.2260961647831047,
            -0.2558802884476004,
        ],
    ),
    (&[2.5, 2.5, 1.0, 1.0, 3.0], [2.0, 0.875, 0.9354143466934853, 2.5, 2.5]),
];

#[test]
fn descriptive_statistics_match_python_bit_for_bit() {
    for (data, [mean, variance, stdev, median, mode]) in PYTHON {
        let d = compute::descriptive(data).unwrap();
        assert_eq!(d.mean, mean, "mean of {data:?}");
        assert_eq!(d.variance, variance, "variance of {data:?}");
        assert_eq!(d.std_dev, stdev, "stdev of {data:?}");
        assert_eq!(d.median, median, "median of {data:?}");
        assert_eq!(d.mode, mode, "mode of {data:?}");
        assert_eq!(d.count, data.len());
    }
    // Python: statistics.variance([0.1, 0.2, 0.3]) == 0.009999999999999998.
    assert_eq!(compute::descriptive(&[0.1, 0.2, 0.3]).unwrap().variance, 0.009999999999999998);
}

#[test]
fn descriptive_edge_cases() {
    let one = compute::descriptive(&[4.0]).unwrap();
    assert_eq!((one.mean, one.variance, one.std_dev, one.mode, one.range), (4.0, 0.0, 0.0, 4.0, 0.0));
    assert!((one.confidence - 1.0 / 30.0).abs() < 1e-15);
    // All distinct: the mode is the first element; ties go to the first seen.
    assert_eq!(compute::descriptive(&[3.0, 1.0, 2.0]).unwrap().mode, 3.0);
    assert_eq!(compute::descriptive(&[5.0, 1.0, 1.0, 5.0]).unwrap().mode, 5.0);
    assert_eq!(compute::descriptive(&vec![1.0; 45]).unwrap().confidence, 1.0);
    assert!(matches!(compute::descriptive(&[]), Err(Error::TooShort { needed: 1, got: 0, .. })));
    assert!(matches!(compute::descriptive(&[1.0, f64::NAN]), Err(Error::NonFinite { index: 1, .. })));
    assert!(matches!(compute::descriptive(&[1e308, -1e308]), Err(Error::Undefined { .. })));
}

#[test]
fn quadratic_recovers_a_parabola_and_falls_back_for_two_points() {
    let data: Vec<f64> = (0..8).map(|x| 2.0 * f64::from(x * x) - 3.0 * f64::from(x) + 1.0).collect();
    let q = compute::quadratic(&data).unwrap();
    assert!((q.a - 2.0).abs() < 1e-9 && (q.b + 3.0).abs() < 1e-9 && (q.c - 1.0).abs() < 1e-9, "{q:?}");
    assert!(!q.fell_back_to_linear && q.r_squared > 0.999_999);
    let two = compute::quadratic(&[1.0, 3.0]).unwrap();
    assert!(two.fell_back_to_linear);
    assert_eq!((two.a, two.b, two.c), (0.0, 2.0, 1.0));
}

#[test]
fn percentiles_interpolate_linearly() {
    let p = compute::percentiles(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
    assert_eq!((p.p25, p.p50, p.p75), (2.0, 3.0, 4.0));
    assert!((p.p90 - 4.6).abs() < 1e-12 && (p.p99 - 4.96).abs() < 1e-12);
    assert_eq!(compute::percentiles(&[7.0]).unwrap().p99, 7.0);
}

#[test]
fn exact_operations() {
    let r = compute::compute(Operation::Add, &[3.0, 4.0]).unwrap();
    assert_eq!((r.value, r.code.as_str(), r.verbal.as_str()), (7.0, "3 + 4", "3 + 4 = 7"));
    assert_eq!(compute::compute(Operation::Add, &[]).unwrap().value, 0.0);
    assert_eq!(compute::compute(Operation::Multiply, &[2.0, 3.0, 4.0]).unwrap().value, 24.0);
    assert_eq!(compute::compute(Operation::Divide, &[12.0, 3.0, 2.0]).unwrap().value, 2.0);
    assert_eq!(compute::compute(Operation::Power, &[2.0, 10.0]).unwrap().value, 1024.0);
    // Python's % takes the divisor's sign.
    assert_eq!(compute::compute(Operation::Modulo, &[-7.0, 3.0]).unwrap().value, 2.0);
    assert_eq!(compute::compute(Operation::Modulo, &[7.0, -3.0]).unwrap().value, -2.0);
    assert_eq!("Divide".parse::<Operation>().unwrap(), Operation::Divide);
    assert!(matches!("sqrt".parse::<Operation>(), Err(Error::Unknown { .. })));
}

#[test]
fn operations_without_a_finite_result_are_errors_not_nan() {
    assert!(matches!(compute::compute(Operation::Divide, &[1.0, 0.0]), Err(Error::Undefined { .. })));
    assert!(matches!(compute::compute(Operation::Divide, &[1.0]), Err(Error::TooShort { .. })));
    assert!(matches!(compute::compute(Operation::Modulo, &[1.0, 0.0]), Err(Error::Undefined { .. })));
    assert!(matches!(compute::compute(Operation::Power, &[-8.0, 0.5]), Err(Error::Undefined { .. })));
    assert!(matches!(compute::compute(Operation::Multiply, &[1e200, 1e200]), Err(Error::Undefined { .. })));
    assert!(matches!(compute::compute(Operation::Subtract, &[]), Err(Error::TooShort { .. })));
    assert!(matches!(compute::compute(Operation::Add, &[1.0, f64::INFINITY]), Err(Error::NonFinite { .. })));
}

#[test]
fn method_names_parse() {
    assert_eq!(" Percentiles ".parse::<AnalysisMethod>().unwrap(), AnalysisMethod::Percentiles);
    assert!("median".parse::<AnalysisMethod>().is_err());
}

#[test]
fn methods_are_recalled_by_description_and_codified() {
    let (_clock, ag) = crate::common::layer();
    assert_eq!(ag.recall_method("fit a parabola, quadratic").unwrap().name, "quadratic_fit");
    assert_eq!(ag.recall_method("the median of my latencies").unwrap().name, "median");
    assert_eq!(ag.recall_method("Standard Deviation please").unwrap().name, "standard_deviation");
    assert!(ag.recall_method("zzz qqq").is_none());
    assert_eq!(ag.codify("mean"), Some("sum(x) / n"));
    assert_eq!(ag.codify("pi"), None, "pi is a constant, not a method");
}

#[test]
fn analyses_of_extreme_values_are_finite_or_errors() {
    let extremes = [
        vec![f64::MAX, -f64::MAX, f64::MAX, 0.0],
        vec![1e308, 1e308, -1e308],
        vec![5e-324, -5e-324, 0.0, 5e-324],
        vec![1e-300, 2e-300, 3e-300, 5e-300],
    ];
    let methods = [
        AnalysisMethod::Descriptive,
        AnalysisMethod::Linear,
        AnalysisMethod::Quadratic,
        AnalysisMethod::Percentiles,
    ];
    for data in &extremes {
        for method in methods {
            match compute::analyze(data, method) {
                Ok(a) => {
                    let text = format!("{a:?}");
                    assert!(!text.contains("NaN") && !text.contains("inf"), "{method:?} of {data:?}: {text}");
                }
                Err(e) => assert!(matches!(e, Error::Undefined { .. }), "{method:?} of {data:?}: {e}"),
            }
        }
    }
}
