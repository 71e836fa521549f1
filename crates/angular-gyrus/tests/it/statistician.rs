//! The statistician walks its states on the §10 scenario and escalates to the fitters.

use std::sync::Mutex;
use std::time::Duration;

use angular_gyrus::statistician::{DetectorState, Statistician, StatisticianConfig, Transition};
use angular_gyrus::{MathCategory, MathFilter};
use maxim_core::{
    GateDecision, MemoryLayer, MetaValue, PatternType, PromotionCandidate, PromotionSource,
    RandomnessAssessment, RandomnessGate,
};

use crate::common::{Noise, T0, layer};

/// The runs test and lag-1 autocorrelation of §9.1, as the `ips-gate` crate implements them.
struct RunsGate;

impl RandomnessGate for RunsGate {
    fn assess(&self, values: &[f64]) -> RandomnessAssessment {
        let n = values.len();
        let insufficient = RandomnessAssessment::insufficient(n);
        if n < 8 {
            return insufficient;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if n % 2 == 1 { sorted[n / 2] } else { f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]) };
        let b: Vec<bool> = values.iter().filter(|&&v| v != median).map(|&v| v > median).collect();
        if b.len() < 4 {
            return insufficient;
        }
        let runs = 1 + b.windows(2).filter(|w| w[0] != w[1]).count();
        let n1 = b.iter().filter(|&&x| x).count() as f64;
        let n0 = b.len() as f64 - n1;
        let nn = n1 + n0;
        let z = if n1 == 0.0 || n0 == 0.0 {
            0.0
        } else {
            let mean = 2.0 * n1 * n0 / nn + 1.0;
            let var = (2.0 * n1 * n0 * (2.0 * n1 * n0 - nn) / (nn * nn * (nn - 1.0))).max(1e-10);
            (runs as f64 - mean) / var.sqrt()
        };
        let mean = values.iter().sum::<f64>() / n as f64;
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        let r1 = if ss < 1e-15 {
            0.0
        } else {
            values.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / ss
        };
        let pc = (z.abs() / 3.0).min(1.0).max((2.0 * r1.abs()).min(1.0));
        let is_random = pc < 0.4;
        let pattern_type = if is_random {
            PatternType::Random
        } else if z < -1.96 {
            PatternType::Trending
        } else if z > 1.96 {
            PatternType::Cyclic
        } else if r1.abs() > 0.3 {
            PatternType::Clustering
        } else {
            PatternType::Trending
        };
        RandomnessAssessment {
            is_random,
            pattern_confidence: pc,
            pattern_type,
            runs_z: z,
            lag1_autocorrelation: r1,
            n,
        }
    }

    fn admits(&self, candidate: &PromotionCandidate) -> GateDecision {
        GateDecision { admitted: candidate.confidence >= 0.4, reason: "confidence".into() }
    }
}

/// A gate that answers a fixed confidence, whatever the values.
struct FixedGate(Mutex<f64>);

impl FixedGate {
    fn new(pc: f64) -> Self {
        Self(Mutex::new(pc))
    }

    fn set(&self, pc: f64) {
        *self.0.lock().unwrap() = pc;
    }
}

impl RandomnessGate for FixedGate {
    fn assess(&self, values: &[f64]) -> RandomnessAssessment {
        let pc = *self.0.lock().unwrap();
        RandomnessAssessment {
            is_random: pc < 0.4,
            pattern_confidence: pc,
            pattern_type: if pc < 0.4 { PatternType::Random } else { PatternType::Trending },
            runs_z: 0.0,
            lag1_autocorrelation: 0.0,
            n: values.len(),
        }
    }

    fn admits(&self, candidate: &PromotionCandidate) -> GateDecision {
        GateDecision { admitted: candidate.confidence >= 0.4, reason: "confidence".into() }
    }
}

fn minutes(i: u64) -> maxim_core::Timestamp {
    T0 + Duration::from_secs(60 * i)
}

#[test]
fn the_section_10_scenario_walks_observing_forming_confirmed() {
    // 20 failures of one tool, then successes; a step after every observation.
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    let metric = "tool:nav:success";
    let mut walk: Vec<(u64, Transition)> = Vec::new();
    for i in 0..40u64 {
        stat.record_tool_result("nav", i >= 20, minutes(i)).unwrap();
        for t in stat.step(&RunsGate, None) {
            walk.push((i, t));
        }
        if i < 14 {
            assert_eq!(stat.detector(metric).unwrap().observations, 0, "not assessed below 15 values");
        }
        if (14..20).contains(&i) {
            // A constant window shows no pattern.
            assert_eq!(stat.detector(metric).unwrap().last_confidence(), 0.0);
            assert_eq!(stat.state(metric), Some(DetectorState::Observing));
        }
    }
    let states: Vec<(DetectorState, DetectorState)> = walk.iter().map(|(_, t)| (t.from, t.to)).collect();
    assert_eq!(
        states,
        [
            (DetectorState::Observing, DetectorState::PatternForming),
            (DetectorState::PatternForming, DetectorState::ConfirmedPattern)
        ]
    );
    // The gate sees a pattern once four successes stand apart from the median (§9.1 drops
    // ties): the 24th observation; five high readings in a row confirm it four steps later.
    assert_eq!((walk[0].0, walk[1].0), (23, 27));
    assert_eq!(walk[0].1.confidence, 1.0);
    // Confirmed is terminal: no more transitions, no more assessments.
    let d = stat.detector(metric).unwrap();
    assert_eq!(d.observations, 14);
    let insights = stat.take_insights();
    assert_eq!(insights.len(), 1);
    assert_eq!((insights[0].metric.as_str(), insights[0].severity), (metric, 1.0));
    let candidates = stat.promotion_candidates(0.6, 3).unwrap();
    assert_eq!(candidates.len(), 1);
    let c = &candidates[0];
    assert_eq!(
        (c.pattern_name.as_str(), c.category.as_str(), c.confidence),
        ("stat:tool:nav:success", "operational_pattern", 1.0)
    );
    assert!(c.source_memory_ids.is_empty() && !c.metadata.contains_key("r_squared"));
    assert_eq!(c.metadata["metric_name"], MetaValue::Text(metric.into()));
    assert!(RunsGate.admits(c).admitted);
    assert!(stat.promotion_candidates(0.6, 15).unwrap().is_empty(), "too few observations");
    let summary = stat.summarize_for_context();
    assert_eq!(summary.len(), 1);
    assert!(
        summary[0].starts_with("[PATTERN] tool:nav:success | type=Clustering | confidence=1.00 | R²=n/a"),
        "{}",
        summary[0]
    );
}

#[test]
fn a_confirmation_with_an_angular_gyrus_is_fitted_and_the_candidate_carries_the_record() {
    let (_clock, mut ag) = layer();
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    // A declining success rate, one reading an hour.
    let mut noise = Noise::new(11);
    let gate = FixedGate::new(0.0);
    for i in 0..60u64 {
        let v = 0.9 - 0.02 * (i as f64 / 24.0) * 10.0 + 0.01 * noise.normal();
        stat.observe("success_rate", v, T0 + Duration::from_secs(3600 * i)).unwrap();
        if i >= 40 {
            gate.set(0.9);
        }
        stat.step(&gate, Some(&mut ag));
    }
    assert_eq!(stat.state("success_rate"), Some(DetectorState::ConfirmedPattern));
    let d = stat.detector("success_rate").unwrap();
    let id = d.ag_record.expect("the trend was stored");
    let record = ag.math_record(id).unwrap();
    assert_eq!(record.name, "trend:success_rate");
    assert!((record.input_f64("slope_per_day").unwrap() + 0.2).abs() < 0.01);
    let c = &stat.promotion_candidates(0.6, 3).unwrap()[0];
    assert_eq!(c.metadata["ag_memory_id"], MetaValue::Id(id));
    assert_eq!(c.metadata["r_squared"], MetaValue::Number(record.confidence));
    assert_eq!(c.confidence, record.confidence);
}

#[test]
fn an_uncertain_pattern_is_escalated_and_a_circadian_rhythm_is_found() {
    let (_clock, mut ag) = layer();
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    let gate = FixedGate::new(0.5);
    let mut noise = Noise::new(12);
    let mut walk = Vec::new();
    for i in 0..100u64 {
        let t = T0 + Duration::from_secs(3600 * i);
        let phase = t.as_secs_f64() / 86_400.0 - 0.8;
        let v = 0.7 + 0.2 * (std::f64::consts::TAU * phase).cos() + 0.03 * noise.normal();
        stat.observe("success_rate", v, t).unwrap();
        walk.extend(stat.step(&gate, Some(&mut ag)).into_iter().map(|t| (t.from, t.to)));
    }
    // Forming at the first assessment, escalated 8 steps later, confirmed by the rhythm.
    assert_eq!(
        walk,
        [
            (DetectorState::Observing, DetectorState::PatternForming),
            (DetectorState::PatternForming, DetectorState::EscalatedToAg),
            (DetectorState::EscalatedToAg, DetectorState::ConfirmedPattern),
        ]
    );
    let d = stat.detector("success_rate").unwrap();
    let (phase, coupling) = d.phase_lock.expect("phase-locked");
    assert!((phase - 0.8).abs() < 0.02 && coupling > 0.9, "{phase} {coupling}");
    let c = &stat.promotion_candidates(0.6, 3).unwrap()[0];
    assert_eq!(c.metadata["phase"], MetaValue::Number(phase));
    assert_eq!(c.metadata["coupling"], MetaValue::Number(coupling));
    let id = match c.metadata["ag_memory_id"] {
        MetaValue::Id(id) => id,
        ref other => panic!("{other:?}"),
    };
    assert_eq!(ag.math_record(id).unwrap().name, "circadian:success_rate");
    let summary = stat.summarize_for_context();
    assert!(summary[0].contains("| [PHASE] peaks at 0.8"), "{summary:?}");
}

#[test]
fn an_escalated_noise_series_is_declared_random_and_rechecked_every_tenth_step() {
    let (_clock, mut ag) = layer();
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    let gate = FixedGate::new(0.5);
    let mut noise = Noise::new(13);
    let mut at = 0u64;
    let mut feed = |stat: &mut Statistician, ag: &mut angular_gyrus::AngularGyrus, gate: &FixedGate| {
        stat.observe("latency", 100.0 + noise.normal(), minutes(at)).unwrap();
        at += 1;
        stat.step(gate, Some(ag))
    };
    let mut entered = false;
    for _ in 0..30 {
        let moved = feed(&mut stat, &mut ag, &gate);
        if moved.last().is_some_and(|t| t.to == DetectorState::ConfirmedRandom) {
            entered = true;
            break;
        }
    }
    assert!(entered && stat.state("latency") == Some(DetectorState::ConfirmedRandom));
    assert_eq!(
        ag.recall(&MathFilter::new().category(MathCategory::Pattern), 10).len(),
        0,
        "noise is not stored"
    );
    gate.set(0.9);
    let mut moved_at = None;
    for step in 1..=10 {
        if !feed(&mut stat, &mut ag, &gate).is_empty() {
            moved_at = Some(step);
            break;
        }
    }
    assert_eq!(moved_at, Some(10), "a random metric is assessed on every tenth step only");
    assert_eq!(stat.state("latency"), Some(DetectorState::Observing));
}

#[test]
fn a_held_trend_that_the_series_still_follows_is_reinforced() {
    let (_clock, mut ag) = layer();
    let config = angular_gyrus::fit::FitConfig::default();
    let times: Vec<f64> = (0..30).map(|d| T0.as_secs_f64() + f64::from(d) * 86_400.0).collect();
    let values: Vec<f64> = (0..30).map(|d| 10.0 - 0.5 * f64::from(d)).collect();
    let trend = angular_gyrus::fit::fit_trend(&times, &values).unwrap();
    let id = ag.store_trend("queue", &trend, &config).unwrap().unwrap();
    let before = ag.math_record(id).unwrap().clone();
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    let gate = FixedGate::new(0.5);
    for i in 0..24u64 {
        stat.observe("queue", 50.0 - i as f64, minutes(i)).unwrap();
        stat.step(&gate, Some(&mut ag));
    }
    assert_eq!(stat.state("queue"), Some(DetectorState::ConfirmedPattern));
    let after = ag.math_record(id).unwrap();
    assert_eq!(after.observation_count, before.observation_count + 1);
    assert!((after.confidence - (before.confidence + 0.05).min(1.0)).abs() < 1e-15);
    assert_eq!(stat.detector("queue").unwrap().ag_record, Some(id));
}

#[test]
fn bad_observations_are_refused_and_a_saved_statistician_reloads() {
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    assert!(stat.observe("m", f64::NAN, T0).is_err());
    assert!(stat.observe("", 1.0, T0).is_err());
    assert_eq!(stat.metrics().count(), 0);
    for i in 0..120u64 {
        stat.record_goal("g1", i % 3 == 0, minutes(i)).unwrap();
        stat.step(&RunsGate, None);
    }
    assert_eq!(stat.series("goal:g1:success").len(), 100, "the window keeps the last 100");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stat.snap");
    stat.save(&path).unwrap();
    let mut fresh = Statistician::new(StatisticianConfig::default()).unwrap();
    let err = fresh.save(&path).unwrap_err();
    assert!(matches!(err, angular_gyrus::Error::Core(maxim_core::Error::OverwriteRefused { .. })));
    fresh.load(&path).unwrap();
    fresh.save(&path).unwrap();
    assert_eq!(fresh.series("goal:g1:success"), stat.series("goal:g1:success"));
    assert_eq!(fresh.detector("goal:g1:success"), stat.detector("goal:g1:success"));
    std::fs::write(&path, b"garbage").unwrap();
    assert!(fresh.load(&path).is_err());
    assert_eq!(fresh.series("goal:g1:success").len(), 100);
}

/// A statistician file the codec accepts but the statistician's checks refuse (a window
/// longer than the reader keeps) is kept aside; recovery then loads the backup, and a
/// missing file is a fresh start.
#[test]
fn a_refused_statistician_file_is_kept_aside_and_recovery_loads_the_backup() {
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    for i in 0..40u64 {
        stat.record_goal("g1", i % 3 == 0, minutes(i)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stat.snap");
    let mut small = StatisticianConfig::default();
    small.window_size = 20;
    let mut reader = Statistician::new(small.clone()).unwrap();
    assert!(matches!(reader.load_with_recovery(&path).unwrap(), maxim_core::LoadOutcome::Missing));

    // The 40 values exceed the reader's window of 20: refused and moved aside.
    stat.save(&path).unwrap();
    let err = reader.load(&path).unwrap_err();
    assert!(
        matches!(err, angular_gyrus::Error::Core(maxim_core::Error::Corrupt { kept_aside: Some(_), .. })),
        "{err:?}"
    );
    assert!(!path.exists(), "the refused file was moved aside");
    assert_eq!(reader.metrics().count(), 0, "a failed load changes nothing");

    // A backup that fits the window, then a main file that does not: the backup is loaded.
    let mut fits = Statistician::new(small).unwrap();
    for i in 0..15u64 {
        fits.record_goal("g1", i % 2 == 0, minutes(i)).unwrap();
    }
    let path = dir.path().join("stat2.snap");
    fits.save(&path).unwrap();
    fits.allow_overwrite(true);
    stat.allow_overwrite(true);
    fits.save(&path).unwrap(); // the backup holds the 15 values
    stat.save(&path).unwrap(); // the main file holds 40
    match reader.load_with_recovery(&path).unwrap() {
        maxim_core::LoadOutcome::FromBackup { primary_error, .. } => assert!(
            matches!(*primary_error, maxim_core::Error::Corrupt { kept_aside: Some(_), .. }),
            "{primary_error:?}"
        ),
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(reader.series("goal:g1:success"), fits.series("goal:g1:success"));
}

#[test]
fn a_full_angular_gyrus_leaves_an_escalated_pattern_forming() {
    let mut config = angular_gyrus::AngularGyrusConfig::default();
    config.max_records = 9; // the built-ins fill it
    let (_clock, mut ag) = crate::common::layer_with(config);
    let mut stat = Statistician::new(StatisticianConfig::default()).unwrap();
    let gate = FixedGate::new(0.5);
    let mut walk = Vec::new();
    for i in 0..23u64 {
        let t = T0 + Duration::from_secs(3600 * i);
        let v = 0.7 + 0.2 * (std::f64::consts::TAU * (t.as_secs_f64() / 86_400.0 - 0.8)).cos();
        stat.observe("success_rate", v, t).unwrap();
        walk.extend(stat.step(&gate, Some(&mut ag)).into_iter().map(|t| (t.from, t.to)));
    }
    assert_eq!(walk.last(), Some(&(DetectorState::EscalatedToAg, DetectorState::PatternForming)));
    assert_eq!(stat.detector("success_rate").unwrap().steps_forming, 0);
    assert_eq!(ag.len(), 9);
}
