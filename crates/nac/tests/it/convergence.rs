//! The learning behaviours of `tests/learning/test_nac_convergence.py` (§14).

use maxim_core::SplitMix64;
use nac::{Observation, Valence};

use crate::common::{ctx, default_store, grasp, observe_v, store};

#[test]
fn twenty_positives_drive_v_above_0_8() {
    let (mut nac, _) = default_store();
    let v = (0..20).map(|_| observe_v(&mut nac, Valence::Positive)).last().unwrap();
    assert!(v > 0.8, "V = {v}");
    // Exactly 1 - 0.5 * 0.86^20.
    assert!((v - (1.0 - 0.5 * 0.86f64.powi(20))).abs() < 1e-12);
}

#[test]
fn twenty_negatives_drive_v_below_0_2() {
    let (mut nac, _) = default_store();
    let v = (0..20).map(|_| observe_v(&mut nac, Valence::Negative)).last().unwrap();
    assert!(v < 0.2, "V = {v}");
    assert!((v - 0.5 * 0.86f64.powi(20)).abs() < 1e-12);
}

fn mixed(nac: &mut nac::Nac, n: usize, p_positive: f64, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut v = 0.5;
    for _ in 0..n {
        let valence = if rng.uniform() < p_positive { Valence::Positive } else { Valence::Negative };
        v = observe_v(nac, valence);
    }
    v
}

/// `n` observations of which the share `p` is positive, spread evenly (Bresenham).
fn spread(nac: &mut nac::Nac, n: usize, p: f64) -> f64 {
    let mut v = 0.5;
    for i in 0..n {
        let positive = ((i + 1) as f64 * p).floor() > (i as f64 * p).floor();
        v = observe_v(nac, if positive { Valence::Positive } else { Valence::Negative });
    }
    v
}

#[test]
fn seventy_percent_positive_settles_between_0_5_and_0_9() {
    let (mut nac, _) = default_store();
    let v = spread(&mut nac, 100, 0.7);
    assert!(0.5 < v && v < 0.9, "V = {v}");
    // Over the last 30 observations V stays in the band, around the share of positives.
    let history: Vec<f64> = nac.links()[0].history().iter().copied().collect();
    let tail = &history[history.len() - 30..];
    assert!(tail.iter().all(|v| 0.5 < *v && *v < 0.9));
    let mean = tail.iter().sum::<f64>() / 30.0;
    assert!((mean - 0.7).abs() < 0.05, "mean {mean}");
}

#[test]
fn thirty_positives_rise_monotonically() {
    let (mut nac, _) = default_store();
    let values: Vec<f64> = (0..30).map(|_| observe_v(&mut nac, Valence::Positive)).collect();
    let rising = values.windows(2).filter(|w| w[1] >= w[0]).count();
    assert!(rising as f64 >= 0.9 * (values.len() - 1) as f64);
    assert!(values.windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn a_higher_learning_rate_learns_faster() {
    let learn = |lr: f64| {
        let (mut nac, _) = store(crate::common::with(|c| {
            c.learning_rate = lr;
        }));
        (0..10).map(|_| observe_v(&mut nac, Valence::Positive)).last().unwrap()
    };
    let (fast, slow) = (learn(0.5), learn(0.05));
    assert!(fast > slow, "{fast} vs {slow}");
    assert!((fast - (1.0 - 0.5 * 0.725f64.powi(10))).abs() < 1e-12);
    assert!((slow - (1.0 - 0.5 * 0.9275f64.powi(10))).abs() < 1e-12);
}

#[test]
fn sixty_percent_positive_is_stable_at_the_end() {
    let (mut nac, _) = default_store();
    mixed(&mut nac, 100, 0.6, 7);
    let link = &nac.links()[0];
    let history: Vec<f64> = link.history().iter().copied().collect();
    assert_eq!(history.len(), 50);
    let last: &[f64] = &history[history.len() - 20..];
    let mean = last.iter().sum::<f64>() / 20.0;
    let variance = last.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 20.0;
    assert!(variance < 0.02, "variance {variance}");
}

#[test]
fn the_context_selects_the_link() {
    let (mut nac, _) = default_store();
    let mug = ctx(&[("object", "mug")]);
    let heavy = ctx(&[("object", "heavy_box")]);
    for _ in 0..10 {
        nac.observe(&grasp("success", Valence::Positive).context(&mug)).unwrap();
        nac.observe(&grasp("failure", Valence::Negative).context(&heavy)).unwrap();
    }
    let for_mug = nac.predict("tool", "tool:grasp", &mug).unwrap();
    let for_box = nac.predict("tool", "tool:grasp", &heavy).unwrap();
    assert!(for_mug.value > for_box.value);
    assert_eq!(for_mug.valence, Valence::Positive);
    assert_eq!(for_box.valence, Valence::Negative);
}

#[test]
fn delays_give_a_mean_and_bounds() {
    let (mut nac, _) = default_store();
    let delays = [1.0, 2.0, 3.0, 2.0, 1.5, 2.5];
    for d in delays {
        nac.observe(&grasp("success", Valence::Positive).delay(d)).unwrap();
    }
    let p = nac.predict("tool", "tool:grasp", &maxim_core::value::Map::new()).unwrap();
    let delay = p.delay.unwrap();
    assert!((delay.mean - 2.0).abs() < 0.1);
    assert!(delay.lower <= delay.mean && delay.mean <= delay.upper);
    assert!(delay.lower >= 0.8 * 1.0 && delay.upper <= 1.2 * 3.0);
    // Linear-interpolation percentiles of [1, 1.5, 2, 2, 2.5, 3].
    assert!((delay.lower - 1.25).abs() < 1e-12 && (delay.upper - 2.75).abs() < 1e-12);
}

#[test]
fn extinction_lowers_v() {
    let (mut nac, _) = default_store();
    let peak = (0..10).map(|_| observe_v(&mut nac, Valence::Positive)).last().unwrap();
    let after = (0..30).map(|_| observe_v(&mut nac, Valence::Negative)).last().unwrap();
    assert!(after < peak && after < 0.6, "{peak} -> {after}");
    // The smoothed valence follows: the link is negative now.
    assert_eq!(nac.links()[0].valence(), Valence::Negative);
}

#[test]
fn a_regime_change_from_80_to_20_percent_lowers_v() {
    let (mut nac, _) = default_store();
    let before = mixed(&mut nac, 50, 0.8, 3);
    let after = mixed(&mut nac, 50, 0.2, 4);
    assert!(after < before, "{before} -> {after}");
    assert!(after < 0.5);
}

#[test]
fn a_positive_link_is_not_flipped_by_one_failure() {
    let (mut nac, _) = default_store();
    for _ in 0..5 {
        nac.observe(&Observation::new("tool", "tool:nav", "tool_result", "done", Valence::Positive)).unwrap();
    }
    nac.observe(&Observation::new("tool", "tool:nav", "tool_result", "done", Valence::Negative)).unwrap();
    let link = &nac.links()[0];
    assert_eq!(link.valence(), Valence::Positive);
    assert!((link.valence_score() - 0.6).abs() < 1e-12);
}
