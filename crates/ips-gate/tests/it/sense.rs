//! The other IPS functions of §9.3.

use ips_gate::sense::{
    Comparison, Magnitude, TrendDirection, categorize, compare, detect_anomaly, detect_trend, estimate_mean,
    estimate_sum,
};

#[test]
fn compare_uses_the_weber_fraction() {
    assert_eq!(compare(100.0, 110.0).unwrap(), Comparison::Similar);
    assert_eq!(compare(100.0, 130.0).unwrap(), Comparison::Less);
    assert_eq!(compare(100.0, 70.0).unwrap(), Comparison::MuchGreater);
    assert_eq!(compare(130.0, 100.0).unwrap(), Comparison::Greater);
    assert_eq!(compare(70.0, 100.0).unwrap(), Comparison::MuchLess);
    assert_eq!(compare(0.0, 0.0).unwrap(), Comparison::Similar);
    assert_eq!(compare(-100.0, -110.0).unwrap(), Comparison::Similar);
    assert!(compare(f64::NAN, 1.0).is_err());
    assert!(compare(1.0, f64::INFINITY).is_err());
}

#[test]
fn categories_follow_log10() {
    let cases = [
        (0.0, Magnitude::Negligible),
        (0.005, Magnitude::Negligible),
        (0.05, Magnitude::Tiny),
        (0.5, Magnitude::Small),
        (1.0, Magnitude::Moderate),
        (99.0, Magnitude::Moderate),
        (100.0, Magnitude::Large),
        (-9_999.0, Magnitude::Large),
        (10_000.0, Magnitude::Huge),
    ];
    for (x, m) in cases {
        assert_eq!(categorize(x).unwrap(), m, "{x}");
    }
    assert!(categorize(f64::NAN).is_err());
}

#[test]
fn trends_over_the_last_ten_values() {
    let up = detect_trend(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!(up.direction, TrendDirection::Increasing);
    assert_eq!((up.confidence, up.slope), (1.0, 1.0));
    let down = detect_trend(&[5.0, 4.0, 3.5, 3.0, 1.0]).unwrap();
    assert_eq!(down.direction, TrendDirection::Decreasing);
    assert_eq!(down.slope, -0.75);
    let zigzag = detect_trend(&[1.0, 3.0, 1.0, 3.0, 1.0, 3.0]).unwrap();
    assert_eq!(zigzag.direction, TrendDirection::Oscillating);
    assert_eq!(zigzag.confidence, 1.0);
    let flat = detect_trend(&[2.0, 2.0, 2.0, 2.0, 3.0]).unwrap();
    assert_eq!(flat.direction, TrendDirection::Stable);
    assert_eq!(flat.confidence, 0.75);
    assert_eq!(detect_trend(&[1.0, 2.0]).unwrap().direction, TrendDirection::InsufficientData);
    // Only the last ten values count: an old fall does not hide a recent rise.
    let mut values: Vec<f64> = (0..20).map(|i| f64::from(100 - i)).collect();
    values.extend((0..10).map(f64::from));
    assert_eq!(detect_trend(&values).unwrap().direction, TrendDirection::Increasing);
    assert!(detect_trend(&[1.0, f64::NAN, 2.0]).is_err());
}

#[test]
fn anomalies_by_median_and_mad() {
    let history = [10.0, 11.0, 9.0, 10.0, 12.0];
    let a = detect_anomaly(50.0, &history).unwrap();
    assert!(a.is_anomalous);
    assert_eq!((a.median, a.mad), (10.0, 1.0));
    assert!((a.score - 40.0 / 1.4826).abs() < 1e-12);
    let b = detect_anomaly(11.0, &history).unwrap();
    assert!(!b.is_anomalous);
    // The line lies at two robust deviations (2 x 1.4826 = 2.9652 from the median).
    assert!(detect_anomaly(13.0, &history).unwrap().is_anomalous);
    assert!(!detect_anomaly(12.9, &history).unwrap().is_anomalous);
    assert!(detect_anomaly(7.0, &history).unwrap().is_anomalous);
    assert!(!detect_anomaly(1e9, &[1.0, 2.0]).unwrap().is_anomalous);
    let flat = detect_anomaly(5.0, &[4.0, 4.0, 4.0]).unwrap();
    assert!(flat.is_anomalous && flat.score.is_infinite());
    assert!(!detect_anomaly(4.0, &[4.0, 4.0, 4.0]).unwrap().is_anomalous);
    assert!(detect_anomaly(f64::NAN, &history).is_err());
}

#[test]
fn estimates_lose_confidence_with_size() {
    let s = estimate_sum(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(s.value, 10.0);
    assert!((s.confidence - 0.7).abs() < 1e-12);
    let m = estimate_mean(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(m.value, 2.5);
    assert!((m.confidence - 0.85).abs() < 1e-12);
    let many = vec![1.0; 1 << 12];
    assert_eq!(estimate_sum(&many).unwrap().confidence, 0.1);
    assert_eq!(estimate_mean(&many).unwrap().confidence, 0.2f64.max(1.0 - 0.075 * 12.0));
    assert_eq!(estimate_sum(&[5.0]).unwrap().confidence, 1.0);
    assert!(estimate_sum(&[]).is_err());
    assert!(estimate_mean(&[f64::NAN]).is_err());
}
