//! The scenario's plants, recovered statistically from the generated data alone.

use cerebellum::{Cerebellum, Distilled};
use hippocampus::Hippocampus;
use maxim_core::{ManualClock, Source};

use super::*;

/// Least-squares slope of `ys` against `xs`.
fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Amplitude and peak phase of a 24-hour cosine through 24 hourly rates (bin centres): the
/// least-squares cosinor, which for evenly spaced hours is the first Fourier coefficient.
fn cosinor(by_hour: &[Point]) -> (f64, f64) {
    assert_eq!(by_hour.len(), 24);
    let (mut a, mut b) = (0.0, 0.0);
    for p in by_hour {
        let angle = std::f64::consts::TAU * (p.x + 0.5) / 24.0;
        a += p.rate * angle.cos();
        b += p.rate * angle.sin();
    }
    let (a, b) = (a * 2.0 / 24.0, b * 2.0 / 24.0);
    (a.hypot(b), b.atan2(a).rem_euclid(std::f64::consts::TAU) / std::f64::consts::TAU)
}

fn navigate_series(scenario: Scenario) -> SuccessSeries {
    SuccessSeries::from_outcomes(scenario.days().flat_map(|d| d.navigate_outcomes().collect::<Vec<_>>()))
}

#[test]
fn the_same_seed_gives_the_same_days_and_another_seed_others() {
    let a: Vec<Day> = Scenario { seed: 3, days: 4 }.days().collect();
    let b: Vec<Day> = Scenario { seed: 3, days: 4 }.days().collect();
    assert_eq!(a, b);
    // A day made on its own is the day made in sequence: a continued run sees the same world.
    assert_eq!(Scenario { seed: 3, days: 1 }.day(2), a[2]);
    assert_eq!(Scenario { seed: 3, days: 2 }.days_from(2).next().unwrap(), a[2]);
    let c: Vec<Day> = Scenario { seed: 4, days: 4 }.days().collect();
    assert_ne!(a, c);
}

#[test]
fn events_are_in_time_order_within_their_day_and_carry_source_and_trust() {
    for day in (Scenario { seed: 11, days: 3 }).days() {
        assert!(day.events.windows(2).all(|w| w[0].at <= w[1].at));
        let end = day_start(day.index + 1);
        for e in &day.events {
            assert!(day.start <= e.at && e.at < end, "day {} event at {:?}", day.index, e.at);
            assert!(e.episode.source.is_some() && e.episode.trust.is_some());
            assert!(e.episode.outcome.success.is_some());
            assert!(!e.episode.action.tool_name.is_empty());
        }
        let navigations = day.navigate_outcomes().count();
        assert_eq!(navigations, NAVIGATIONS_PER_DAY);
        assert_eq!(day_of(day.start), i64::from(day.index));
    }
}

#[test]
fn navigate_success_declines_by_about_two_percent_a_day() {
    let slopes: Vec<f64> = (1..=8)
        .map(|seed| {
            let s = navigate_series(Scenario { seed, days: 14 });
            assert_eq!(s.by_day.len(), 14);
            let xs: Vec<f64> = s.by_day.iter().map(|p| p.x).collect();
            slope(&xs, &s.day_rates())
        })
        .collect();
    // One seed: the slope's standard error is about 0.0045 a day; 3.3 of them.
    for (seed, b) in slopes.iter().enumerate() {
        assert!((b + DECLINE_PER_DAY).abs() < 0.015, "seed {}: slope {b}", seed + 1);
    }
    let mean = slopes.iter().sum::<f64>() / slopes.len() as f64;
    assert!((mean + DECLINE_PER_DAY).abs() < 0.005, "mean slope {mean}");
}

#[test]
fn navigate_success_peaks_in_the_morning_and_is_worst_in_the_evening() {
    let mut pooled = Vec::new();
    for seed in 1..=8 {
        let s = navigate_series(Scenario { seed, days: 14 });
        let (amplitude, phase) = cosinor(&s.by_hour);
        // One seed: the phase's standard error is about 0.035 of a day.
        assert!((phase - PEAK_PHASE).abs() < 0.12, "seed {seed}: phase {phase}");
        assert!(amplitude > 0.04, "seed {seed}: amplitude {amplitude}");
        let mean = |hours: std::ops::Range<usize>| {
            let n = hours.len() as f64;
            hours.map(|h| s.by_hour[h].rate).sum::<f64>() / n
        };
        assert!(mean(17..22) < mean(5..10), "seed {seed}: evening is worse than morning");
        pooled.push((amplitude, phase));
    }
    let n = pooled.len() as f64;
    let amplitude = pooled.iter().map(|p| p.0).sum::<f64>() / n;
    let phase = pooled.iter().map(|p| p.1).sum::<f64>() / n;
    assert!((phase - PEAK_PHASE).abs() < 0.04, "mean phase {phase}");
    assert!((amplitude - AMPLITUDE).abs() < 0.04, "mean amplitude {amplitude}");
}

#[test]
fn the_planted_probability_is_the_documented_curve() {
    assert!((navigate_success_probability(0, 7.2) - (BASE_SUCCESS + AMPLITUDE)).abs() < 1e-12);
    assert!((navigate_success_probability(0, 19.2) - (BASE_SUCCESS - AMPLITUDE)).abs() < 1e-12);
    assert!((navigate_success_probability(10, 1.2) - (BASE_SUCCESS - 0.2)).abs() < 1e-12);
    assert_eq!(navigate_success_probability(100, 19.2), 0.02);
}

#[test]
fn grasping_mugs_mostly_succeeds() {
    let (mut ok, mut n) = (0u32, 0u32);
    for day in (Scenario { seed: 5, days: 14 }).days() {
        for e in &day.events {
            let ep = &e.episode;
            if &*ep.action.tool_name == GRASP && ep.perception.detected_objects.iter().any(|o| &**o == "mug")
            {
                n += 1;
                ok += u32::from(ep.outcome.success == Some(true));
            }
        }
    }
    assert!(n > 80, "{n} mug grasps");
    let rate = f64::from(ok) / f64::from(n);
    assert!(rate > 0.85, "mug grasps succeed {rate}");
}

#[test]
fn a_person_states_a_fact_that_a_web_page_contradicts() {
    let day = Scenario::default().day(0);
    let claims: Vec<&Claim> = day.claims().collect();
    assert_eq!(claims.len(), 2);
    let (said, read) = (claims[0], claims[1]);
    assert_eq!((said.subject, said.key), (read.subject, read.key));
    assert_ne!(said.value, read.value);
    assert_eq!(said.source, Source::UserStated);
    assert_eq!(read.source, Source::Web(WEB_DOMAIN.into()));
    assert!(said.trust > read.trust);
    // The claims' episodes carry the same source and trust.
    for e in day.events.iter().filter(|e| e.claim.is_some()) {
        let claim = e.claim.as_ref().unwrap();
        assert_eq!(e.episode.source.as_ref(), Some(&claim.source));
        assert_eq!(e.episode.trust, Some(claim.trust));
    }
    assert_eq!(Scenario::default().day(1).claims().count(), 0);
}

#[test]
fn every_episode_captures_and_the_run_distils_into_a_skill() {
    let day = Scenario::default().day(0);
    let clock = ManualClock::new(day.start);
    let mut hippo = Hippocampus::builder().clock(clock.shared()).build().unwrap();
    for e in &day.events {
        clock.set(e.at);
        hippo.capture(e.episode.clone()).unwrap();
    }
    assert_eq!(hippo.len(), day.events.len());
    let run = day.skill_run.expect("day 0 has the tea run");
    assert_eq!(run.trace.calls.len(), 5);
    assert!(run.outcome.verified_success);
    clock.set(run.at);
    let mut skills = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    let distilled = skills.distil(&run.trace, &run.outcome).unwrap();
    assert!(matches!(distilled, Distilled::Created(_)), "{distilled:?}");
    assert!(Scenario::default().day(1).skill_run.is_none());
}
