//! Integration tests of `maxim::scn`: signatures against hand-computed dates, the bounded
//! bins against a naive model, the queries, the oscillator's ranges and coherence, bad input,
//! persistence (round trip, damaged and forged files, time-zone change) and the journal.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use maxim::maxim_core::journal::SyncPolicy;
use maxim::maxim_core::{
    CorruptReason, Error, LoadOutcome, ManualClock, RecordId, SplitMix64, Timestamp, codec,
};
use maxim::scn::{
    Op, Oscillator, OscillatorConfig, Rhythm, SNAPSHOT_KIND, Scn, ScnConfig, TemporalSignature, TimeQuery,
    TimeZone,
};
use proptest::prelude::*;

fn id(n: u128) -> RecordId {
    RecordId::from_u128(n)
}

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_secs(secs)
}

fn tz(hours: i32) -> TimeZone {
    TimeZone::from_offset_secs(hours * 3600).unwrap()
}

fn store(capacity: usize) -> (ManualClock, Scn) {
    let clock = ManualClock::new(ts(1_700_000_000));
    let mut config = ScnConfig::default();
    config.bin_capacity = capacity;
    let scn = Scn::builder().clock(clock.shared()).config(config).build().unwrap();
    (clock, scn)
}

/// Everything observable about a store, for equality checks.
fn fingerprint(scn: &Scn) -> String {
    let mut out = String::new();
    for r in Rhythm::ALL {
        for b in 0..r.bins() {
            writeln!(out, "{r}{b}:{:?}", scn.query_bin(r, b).unwrap()).unwrap();
        }
    }
    writeln!(out, "{:?}\n{:?}", scn.ids(), scn.clusters()).unwrap();
    for i in scn.ids() {
        writeln!(out, "{i}:{:?}:{:?}", scn.signature(i), scn.registration(i)).unwrap();
    }
    writeln!(out, "{:?}\n{:?}", scn.stats(), scn.oscillator()).unwrap();
    out
}

// ----- signatures ------------------------------------------------------------------------

#[test]
fn run_vector_epoch_in_utc_is_thursday_midnight() {
    let sig = TemporalSignature::at(Timestamp::EPOCH, TimeZone::UTC);
    assert_eq!(sig.bins(), (0, 3, 0, 0));
    assert_eq!(sig.date(), (1970, 1, 1));
    assert_eq!(sig.circadian_phase(), 0.0);
    assert_eq!(sig.weekly_phase(), 3.0 / 7.0);
}

#[test]
fn hand_computed_dates() {
    // (timestamp, zone hours, date, hour, weekday, week of month, month, day of year)
    type Case = (i64, i32, (i64, u8, u8), u8, u8, u8, u8, u16);
    let cases: [Case; 10] = [
        (1_709_209_800, 0, (2024, 2, 29), 12, 3, 3, 1, 60), // leap day, a Thursday
        (1_704_067_199, 0, (2023, 12, 31), 23, 6, 3, 11, 365), // last second of 2023, a Sunday
        (1_735_668_000, 0, (2024, 12, 31), 18, 1, 3, 11, 366), // 31 Dec of a leap year
        (1_704_067_200, 0, (2024, 1, 1), 0, 0, 0, 0, 1),    // a Monday
        (1_704_069_000, -1, (2023, 12, 31), 23, 6, 3, 11, 365), // -1 h: back into 2023
        (1_704_052_800, 14, (2024, 1, 1), 10, 0, 0, 0, 1),  // +14 h: forward into 2024
        (1_709_284_500, 0, (2024, 3, 1), 9, 4, 0, 2, 61),   // 1 March: the month bin is March
        (951_804_000, 0, (2000, 2, 29), 6, 1, 3, 1, 60),    // 2000 is a leap year
        (-2_203_891_200, 0, (1900, 3, 1), 0, 3, 0, 2, 60),  // 1900 is not
        (1_709_209_800, -13, (2024, 2, 28), 23, 2, 3, 1, 59), // -13 h from the leap day
    ];
    for (secs, hours, date, hour, weekday, wom, month, doy) in cases {
        let sig = TemporalSignature::at(ts(secs), tz(hours));
        assert_eq!(sig.date(), date, "{secs} {hours}");
        assert_eq!(sig.bins(), (hour, weekday, wom, month), "{secs} {hours}");
        assert_eq!(sig.annual_phase(), f64::from(doy - 1) / 365.25, "{secs}");
        let (_, _, day) = date;
        assert_eq!(sig.monthly_phase(), f64::from(day - 1) / 31.0);
        let secs_of_day =
            f64::from(hour) * 3600.0 + ((secs + i64::from(hours) * 3600).rem_euclid(3600)) as f64;
        assert!((sig.circadian_phase() - secs_of_day / 86_400.0).abs() < 1e-12);
        let weekly = (f64::from(weekday) * 86_400.0 + secs_of_day) / 604_800.0;
        assert!((sig.weekly_phase() - weekly).abs() < 1e-12);
    }
}

#[test]
fn the_zone_is_a_setting_not_the_machine() {
    let at = ts(1_709_209_800);
    let (_, mut scn) = store(200);
    assert_eq!(scn.time_zone(), TimeZone::UTC);
    assert_eq!(scn.register(id(1), at, 0.5).unwrap().hour(), 12);
    let mut tokyo = Scn::builder().time_zone(tz(9)).build().unwrap();
    assert_eq!(tokyo.register(id(1), at, 0.5).unwrap().hour(), 21);
    assert!(TimeZone::from_offset_secs(18 * 3600 + 1).is_err());
    assert!(TimeZone::from_offset_secs(-18 * 3600 - 1).is_err());
}

// ----- bins ------------------------------------------------------------------------------

#[test]
fn a_full_bin_evicts_the_least_significant_of_its_older_half_only_for_a_stronger_newcomer() {
    let (_, mut scn) = store(6);
    // At 09:00 every eighth day from 1 January 1970, so that only the hour bin fills.
    let at = |n: i64| ts((n - 1) * 8 * 86_400 + 9 * 3600);
    for (n, s) in [(1, 0.3), (2, 0.1), (3, 0.5), (4, 0.05), (5, 0.4), (6, 0.6)] {
        scn.register(id(n), at(n as i64), s).unwrap();
    }
    assert_eq!(scn.query_hour(9).unwrap(), (1..=6).rev().map(id).collect::<Vec<_>>());
    // Newest-first positions 5 and 4 (ids 1 and 2) form the older half; id 2 is its weakest.
    // A newcomer no stronger than it is left out of the bin but kept in the map.
    scn.register(id(7), at(7), 0.1).unwrap();
    assert_eq!(scn.query_hour(9).unwrap(), (1..=6).rev().map(id).collect::<Vec<_>>());
    assert!(scn.contains(id(7)));
    assert_eq!((scn.stats().dropped, scn.stats().evicted), (1, 0));
    // A stronger one evicts id 2, not id 4 (the weakest of all, but in the newer half).
    scn.register(id(8), at(8), 0.15).unwrap();
    assert_eq!(scn.query_hour(9).unwrap(), [8, 6, 5, 4, 3, 1].map(id).to_vec());
    assert_eq!((scn.stats().dropped, scn.stats().evicted), (1, 1));
    // Id 2 is still in the map and its other bins.
    assert!(scn.contains(id(2)));
    assert!(scn.query_day(scn.signature(id(2)).unwrap().weekday()).unwrap().contains(&id(2)));
}

#[test]
fn equal_significances_evict_the_oldest_of_the_least() {
    let (_, mut scn) = store(5);
    for n in 1..=5 {
        scn.register(id(n), ts(n as i64 * 7 * 86_400), 0.2).unwrap();
    }
    scn.register(id(6), ts(6 * 7 * 86_400), 0.9).unwrap();
    // Same weekday and hour every time; the oldest (id 1) goes.
    assert_eq!(scn.query_hour(0).unwrap(), vec![id(6), id(5), id(4), id(3), id(2)]);
}

#[test]
fn remove_takes_an_id_out_of_every_bin_and_the_map() {
    let (_, mut scn) = store(200);
    let sig = scn.register(id(1), ts(1_709_209_800), 0.5).unwrap();
    scn.register(id(2), ts(1_709_209_800), 0.5).unwrap();
    assert!(scn.remove(id(1)).unwrap());
    assert!(!scn.remove(id(1)).unwrap());
    assert!(!scn.contains(id(1)) && scn.signature(id(1)).is_none());
    for r in Rhythm::ALL {
        assert_eq!(scn.query_bin(r, sig.bin(r)).unwrap(), vec![id(2)]);
    }
    assert_eq!(scn.cluster_size(id(2)), Some(1));
    assert_eq!(scn.stats().removed, 1);
    // The slot is reused.
    scn.register(id(3), ts(0), 0.5).unwrap();
    assert_eq!(scn.ids(), vec![id(2), id(3)]);
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (_, mut scn) = store(200);
    scn.register(id(1), ts(0), 0.5).unwrap();
    let before = fingerprint(&scn);
    for bad in [f64::NAN, f64::INFINITY, -0.1, 1.000_001] {
        assert!(matches!(
            scn.register(id(2), ts(0), bad),
            Err(Error::OutOfRange { field: "significance", .. })
        ));
    }
    assert!(matches!(scn.register(id(1), ts(99), 0.5), Err(Error::Duplicate { .. })));
    assert!(matches!(scn.apply(Op::Remove { id: id(9) }), Err(Error::NotFound { .. })));
    assert!(scn.observe_kind("", ts(0)).is_err());
    assert!(scn.observe_kind(&"x".repeat(257), ts(0)).is_err());
    assert!(matches!(scn.query_hour(24), Err(Error::OutOfRange { .. })));
    assert!(scn.query_day(7).is_err() && scn.query_week_of_month(4).is_err() && scn.query_month(12).is_err());
    assert!(scn.threshold_adjustment(24).is_err());
    assert!(scn.is_rhythmic_bin(Rhythm::Annual, 12).is_err());
    assert!(matches!(scn.query_intersection(&TimeQuery::default()), Err(Error::InvalidArgument { .. })));
    assert!(scn.query_intersection(&TimeQuery { hour: Some(25), ..TimeQuery::default() }).is_err());
    assert!(matches!(scn.is_sole_representative(id(9)), Err(Error::NotFound { .. })));
    assert!(scn.checkpoint().is_err(), "not on a directory");
    assert_eq!(fingerprint(&scn), before);
    // Bad settings.
    let mut config = ScnConfig::default();
    config.bin_capacity = 2;
    assert!(Scn::builder().config(config).build().is_err());
    let mut config = ScnConfig::default();
    config.quiet_adjustment = f64::NAN;
    assert!(Scn::builder().config(config).build().is_err());
    let mut config = ScnConfig::default();
    config.quiet_below = 60;
    assert!(config.validate().is_err());
    let mut config = ScnConfig::default();
    config.oscillator.coupling = -1.0;
    assert!(config.validate().is_err());
    let mut config = ScnConfig::default();
    config.oscillator.min_weight = 0.5;
    assert!(config.validate().is_err());
}

// ----- queries ---------------------------------------------------------------------------

#[test]
fn similar_time_wraps_around_midnight_nearest_hours_first() {
    let (_, mut scn) = store(200);
    let day = 1_704_067_200; // 2024-01-01 00:00 UTC
    for (n, hour) in [(1, 23), (2, 0), (3, 1), (4, 2), (5, 22), (6, 12)] {
        scn.register(id(n), ts(day + hour * 3600 + 60), 0.5).unwrap();
    }
    let midnight = TemporalSignature::at(ts(day), TimeZone::UTC);
    assert_eq!(scn.query_similar_time(&midnight, 0), vec![id(2)]);
    assert_eq!(scn.query_similar_time(&midnight, 1), vec![id(2), id(1), id(3)]);
    assert_eq!(scn.query_similar_time(&midnight, 2), vec![id(2), id(1), id(3), id(5), id(4)]);
    let all = scn.query_similar_time(&midnight, 200);
    assert_eq!(all.len(), 6, "a tolerance of 12 or more covers the day once");
    assert_eq!(all.last(), Some(&id(6)));
}

#[test]
fn intersection_rhythmic_patterns_thresholds_and_clusters() {
    let (_, mut scn) = store(200);
    let monday = 1_704_067_200; // 2024-01-01, a Monday
    // Six Mondays at 09:00, three Tuesdays at 09:00, one Monday at 15:00.
    for w in 0..6 {
        scn.register(id(w + 1), ts(monday + w as i64 * 7 * 86_400 + 9 * 3600), 0.5).unwrap();
    }
    for w in 0..3 {
        scn.register(id(w + 10), ts(monday + 86_400 + w as i64 * 7 * 86_400 + 9 * 3600), 0.5).unwrap();
    }
    scn.register(id(20), ts(monday + 15 * 3600), 0.5).unwrap();
    let q = TimeQuery { hour: Some(9), weekday: Some(0), ..TimeQuery::default() };
    assert_eq!(scn.query_intersection(&q).unwrap(), (1..=6).rev().map(id).collect::<Vec<_>>());
    let q = TimeQuery { hour: Some(9), weekday: Some(1), month: Some(0), ..TimeQuery::default() };
    // 2024-01-02, -09, -16 are all in January.
    assert_eq!(scn.query_intersection(&q).unwrap(), vec![id(12), id(11), id(10)]);

    let patterns = scn.find_rhythmic_patterns(6);
    // The 09:00 bin and January hold 9 each; equal counts go by rhythm.
    assert_eq!((patterns[0].rhythm, patterns[0].bin, patterns[0].count), (Rhythm::Circadian, 9, 9));
    assert_eq!((patterns[1].rhythm, patterns[1].bin, patterns[1].count), (Rhythm::Annual, 0, 9));
    assert!(patterns.iter().any(|p| p.rhythm == Rhythm::Circadian && p.bin == 9 && p.count == 9));
    assert!(patterns.iter().any(|p| p.rhythm == Rhythm::Weekly && p.bin == 0 && p.count == 7));
    assert!(patterns.iter().all(|p| p.count >= 6));
    assert!(patterns.windows(2).all(|w| w[0].count >= w[1].count));

    assert_eq!(scn.threshold_adjustment(15).unwrap(), 1.2, "one memory: quiet");
    assert_eq!(scn.threshold_adjustment(9).unwrap(), 1.0);
    assert!(scn.is_rhythmic_bin(Rhythm::Circadian, 9).unwrap());
    assert!(!scn.is_rhythmic_bin(Rhythm::Circadian, 15).unwrap());

    let clusters = scn.clusters();
    assert_eq!(clusters[&(9, 0)].len(), 6);
    assert_eq!(clusters[&(9, 1)], vec![id(12), id(11), id(10)]);
    assert_eq!(clusters[&(15, 0)], vec![id(20)]);
    assert!(scn.is_sole_representative(id(20)).unwrap());
    assert!(!scn.is_sole_representative(id(1)).unwrap());
    assert_eq!(scn.cluster_size(id(1)), Some(6));
    assert_eq!(scn.hour_bin_size(id(1)), Some(9));
    assert_ne!(scn.cluster_of(id(1)), scn.cluster_of(id(10)));
    assert_eq!(scn.cluster_of(id(99)), None);
}

#[test]
fn a_busy_hour_lowers_the_threshold() {
    let (_, mut scn) = store(200);
    for n in 0..51 {
        scn.register(id(n), ts(n as i64 * 86_400 + 8 * 3600), 0.5).unwrap();
    }
    assert_eq!(scn.threshold_adjustment(8).unwrap(), 0.9);
}

// ----- oscillator ------------------------------------------------------------------------

#[test]
fn coherence_rises_for_events_at_one_hour_and_stays_low_for_spread_ones() {
    let (_, mut punctual) = store(200);
    let (_, mut spread) = store(200);
    let mut rng = SplitMix64::new(7);
    let start = 1_704_067_200;
    for n in 0..200 {
        let day = start + n * 86_400;
        // Within a quarter of an hour of 18:00.
        let jitter = (rng.uniform() * 900.0) as i64;
        punctual.register(id(n as u128), ts(day + 18 * 3600 + jitter), 0.5).unwrap();
        let anywhere = (rng.uniform() * 86_400.0) as i64;
        spread.register(id(n as u128), ts(day + anywhere), 0.5).unwrap();
    }
    assert!(punctual.phase_coherence() > 0.95, "{}", punctual.phase_coherence());
    assert!(spread.phase_coherence() < 0.2, "{}", spread.phase_coherence());
    // The punctual oscillator expects 18:00 and finds 06:00 unusual.
    let expected = punctual.oscillator().expected_phase(Rhythm::Circadian);
    assert!((expected - 18.0 / 24.0).abs() < 0.02, "{expected}");
    let six_pm = punctual.signature_at(ts(start + 300 * 86_400 + 18 * 3600));
    let six_am = punctual.signature_at(ts(start + 300 * 86_400 + 6 * 3600));
    // The other rhythms have (almost) no structure, so they add little.
    assert!(punctual.temporal_anomaly_score(&six_pm) < 0.1, "{}", punctual.temporal_anomaly_score(&six_pm));
    assert!(punctual.temporal_anomaly_score(&six_am) > 0.9);
    // Without a rhythm, no time is unusual.
    assert!(spread.temporal_anomaly_score(&six_am) < 0.2);
}

#[test]
fn kinds_have_a_cold_start_and_an_imminence() {
    let (_, mut scn) = store(200);
    let start = 1_704_067_200;
    let evening = scn.signature_at(ts(start + 20 * 3600));
    let morning = scn.signature_at(ts(start + 8 * 3600));
    for d in 0..2 {
        scn.observe_kind("tool:navigate", ts(start + d * 86_400 + 20 * 3600)).unwrap();
    }
    assert_eq!(scn.oscillator().imminence("tool:navigate", &evening), 0.0, "2 observations: cold");
    scn.observe_kind("tool:navigate", ts(start + 2 * 86_400 + 20 * 3600)).unwrap();
    let near = scn.oscillator().imminence("tool:navigate", &evening);
    let far = scn.oscillator().imminence("tool:navigate", &morning);
    assert!(near > 0.99 && far < 0.01, "{near} {far}");
    assert_eq!(scn.oscillator().imminence("tool:unknown", &evening), 0.0);
    // Through the store, in its zone; a morning kind is anticipated in the morning only.
    for d in 0..4 {
        scn.observe_kind("tool:coffee", ts(start + d * 86_400 + 8 * 3600)).unwrap();
    }
    assert_eq!(scn.imminence("tool:navigate", ts(start + 9 * 86_400 + 20 * 3600)), near);
    let kinds = scn.anticipated_kinds(ts(start + 9 * 86_400 + 8 * 3600 + 600), 0.5);
    assert_eq!(kinds.len(), 1);
    assert_eq!(kinds[0].0, "tool:coffee");
    assert!(kinds[0].1 > 0.9);
    assert_eq!(scn.oscillator().kinds().collect::<Vec<_>>(), ["tool:navigate", "tool:coffee"]);
    assert_eq!(scn.stats().kind_observations, 7);
}

#[test]
fn the_oscillator_can_be_switched_off() {
    let mut config = ScnConfig::default();
    config.oscillator_enabled = false;
    let mut scn = Scn::builder().config(config).build().unwrap();
    for n in 0..10 {
        scn.register(id(n), ts(n as i64 * 86_400), 0.5).unwrap();
    }
    assert_eq!(scn.oscillator().observations(), 0);
    assert_eq!(scn.phase_coherence(), 0.0);
}

#[test]
fn the_oscillator_is_deterministic() {
    let run = || {
        let mut osc = Oscillator::new(OscillatorConfig::default()).unwrap();
        let mut rng = SplitMix64::new(3);
        for _ in 0..500 {
            let at = ts((rng.uniform() * 1e9) as i64);
            osc.observe(&TemporalSignature::at(at, TimeZone::UTC), at);
        }
        osc
    };
    assert_eq!(run(), run());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn oscillator_outputs_stay_in_their_ranges(
        times in prop::collection::vec(-4_000_000_000i64..4_000_000_000, 1..60),
        probe in -4_000_000_000i64..4_000_000_000,
        offset in -18 * 3600i32..=18 * 3600,
    ) {
        let zone = TimeZone::from_offset_secs(offset).unwrap();
        let mut osc = Oscillator::new(OscillatorConfig::default()).unwrap();
        for &t in &times {
            osc.observe(&TemporalSignature::at(ts(t), zone), ts(t));
            osc.observe_kind("k", &TemporalSignature::at(ts(t), zone));
        }
        let sig = TemporalSignature::at(ts(probe), zone);
        for r in Rhythm::ALL {
            let c = osc.coherence(r);
            prop_assert!((0.0..=1.0).contains(&c), "{} {}", r, c);
            let p = osc.expected_phase(r);
            prop_assert!((0.0..1.0).contains(&p));
            for q in Rhythm::ALL {
                prop_assert!((-0.5..=2.0).contains(&osc.coupling(r, q)));
            }
        }
        let a = osc.temporal_anomaly_score(&sig);
        prop_assert!((0.0..=1.0).contains(&a));
        let i = osc.imminence("k", &sig);
        prop_assert!((0.0..=1.0).contains(&i));
        prop_assert!((0.0..=1.0).contains(&osc.phase_coherence()));
    }
}

// ----- bins against a naive model ---------------------------------------------------------

/// The rule of §12.2 written literally: lists newest first, insert at the front, eviction
/// scan from the oldest end down to `len/2` exclusive.
#[derive(Default)]
struct Model {
    bins: BTreeMap<(usize, u8), Vec<(u128, f64)>>,
    map: BTreeMap<u128, TemporalSignature>,
}

impl Model {
    fn register(&mut self, n: u128, sig: TemporalSignature, s: f64, cap: usize) {
        if self.map.contains_key(&n) {
            return;
        }
        self.map.insert(n, sig);
        for r in Rhythm::ALL {
            let bin = self.bins.entry((r.index(), sig.bin(r))).or_default();
            if bin.iter().any(|e| e.0 == n) {
                continue;
            }
            if bin.len() < cap {
                bin.insert(0, (n, s));
                continue;
            }
            let len = bin.len();
            let mut least: Option<usize> = None;
            let mut i = len - 1;
            while i > len / 2 {
                if least.is_none_or(|l| bin[i].1 < bin[l].1) {
                    least = Some(i);
                }
                i -= 1;
            }
            if let Some(l) = least.filter(|&l| s > bin[l].1) {
                bin.remove(l);
                bin.insert(0, (n, s));
            }
        }
    }

    fn remove(&mut self, n: u128) {
        if self.map.remove(&n).is_some() {
            for bin in self.bins.values_mut() {
                bin.retain(|e| e.0 != n);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn bins_agree_with_the_naive_model(
        cap in 3usize..9,
        ops in prop::collection::vec((0u8..4, 0u128..40, 0u8..6, 0u8..3, 0u8..5), 1..200),
    ) {
        let (_, mut scn) = store(cap);
        let mut model = Model::default();
        for (kind, n, hour, day, s) in ops {
            let at = ts(1_704_067_200 + i64::from(day) * 86_400 + i64::from(hour) * 3600);
            let significance = f64::from(s) / 4.0;
            if kind == 0 {
                let held = model.map.contains_key(&n);
                prop_assert_eq!(scn.remove(id(n)).unwrap(), held);
                model.remove(n);
            } else {
                let result = scn.register(id(n), at, significance);
                prop_assert_eq!(result.is_ok(), !model.map.contains_key(&n));
                model.register(n, TemporalSignature::at(at, TimeZone::UTC), significance, cap);
            }
        }
        for r in Rhythm::ALL {
            for b in 0..r.bins() {
                let want: Vec<RecordId> = model.bins.get(&(r.index(), b)).map_or(vec![], |v| v.iter().map(|e| id(e.0)).collect());
                prop_assert_eq!(scn.query_bin(r, b).unwrap(), want, "{} {}", r, b);
            }
        }
        // Intersections: the smallest named bin (the first of equals), filtered by the others.
        let empty = Vec::new();
        for hour in 0..6u8 {
            for weekday in 0..4u8 {
                let named = [(0usize, hour), (1, weekday), (3, 0)];
                let bins: Vec<&Vec<(u128, f64)>> =
                    named.iter().map(|k| model.bins.get(k).unwrap_or(&empty)).collect();
                let (first, smallest) = bins.iter().enumerate().min_by_key(|(_, b)| b.len()).unwrap();
                let want: Vec<RecordId> = smallest
                    .iter()
                    .filter(|e| bins.iter().enumerate().all(|(i, b)| i == first || b.iter().any(|o| o.0 == e.0)))
                    .map(|e| id(e.0))
                    .collect();
                let q = TimeQuery { hour: Some(hour), weekday: Some(weekday), month: Some(0), ..TimeQuery::default() };
                prop_assert_eq!(scn.query_intersection(&q).unwrap(), want);
            }
        }
        prop_assert_eq!(scn.len(), model.map.len());
        for (&n, sig) in &model.map {
            prop_assert_eq!(scn.signature(id(n)), Some(sig));
        }
    }
}

// ----- persistence -----------------------------------------------------------------------

fn populated(clock: &ManualClock, zone: TimeZone) -> Scn {
    let mut config = ScnConfig::default();
    config.bin_capacity = 6;
    let mut scn = Scn::builder().clock(clock.shared()).config(config).time_zone(zone).build().unwrap();
    let mut rng = SplitMix64::new(11);
    for n in 0..80u128 {
        let at = ts(1_704_067_200 + (rng.uniform() * 90.0 * 86_400.0) as i64);
        scn.register(id(n), at, (rng.uniform() * 4.0).floor() / 4.0).unwrap();
        clock.advance(Duration::from_secs(60));
        if n % 7 == 3 {
            scn.remove(id(n - 2)).unwrap();
        }
        if n % 5 == 0 {
            scn.observe_kind(if n % 2 == 0 { "tool:a" } else { "tool:b" }, at).unwrap();
        }
    }
    scn
}

#[test]
fn save_and_load_round_trip() {
    let clock = ManualClock::new(ts(1_700_000_000));
    let scn = populated(&clock, tz(2));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scn.snap");
    scn.save(&path).unwrap();
    let mut config = ScnConfig::default();
    config.bin_capacity = 6;
    let mut fresh = Scn::builder().clock(clock.shared()).config(config).time_zone(tz(2)).build().unwrap();
    fresh.load(&path).unwrap();
    assert_eq!(fingerprint(&fresh), fingerprint(&scn));
    // The loaded store keeps working like the original.
    let mut a = scn;
    let mut b = fresh;
    for s in [&mut a, &mut b] {
        s.register(id(1000), ts(1_704_067_200), 0.9).unwrap();
        s.remove(id(10)).unwrap();
    }
    assert_eq!(fingerprint(&a), fingerprint(&b));
}

#[test]
fn a_damaged_file_is_refused_the_store_is_unchanged_and_the_backup_recovers() {
    let clock = ManualClock::new(ts(1_700_000_000));
    let mut scn = populated(&clock, TimeZone::UTC);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scn.snap");
    scn.save(&path).unwrap();
    let first = fingerprint(&scn);
    scn.register(id(5000), ts(0), 0.5).unwrap();
    scn.save(&path).unwrap(); // the first save is now the backup
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 5;
    bytes[at] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();

    let (_, mut other) = store(200);
    other.register(id(1), ts(0), 0.5).unwrap();
    let before = fingerprint(&other);
    let err = other.load(&path).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert_eq!(fingerprint(&other), before);

    std::fs::write(&path, &bytes).unwrap();
    let mut config = ScnConfig::default();
    config.bin_capacity = 6;
    let mut fresh = Scn::builder().clock(clock.shared()).config(config).build().unwrap();
    let outcome = fresh.load_with_recovery(&path).unwrap();
    assert!(matches!(outcome, LoadOutcome::FromBackup { .. }));
    assert_eq!(fingerprint(&fresh), first);
    let (_, mut empty) = store(200);
    assert!(matches!(empty.load_with_recovery(dir.path().join("none.snap")).unwrap(), LoadOutcome::Missing));
}

/// A record of the snapshot: id, time, registration time, significance, order.
type Row = (RecordId, Timestamp, Timestamp, f64, u64);

/// The snapshot layout, written by hand to forge files.
#[derive(serde::Serialize, Clone)]
struct Forged {
    schema: u16,
    journal_seq: u64,
    time_zone: i32,
    next_seq: u64,
    records: Vec<Row>,
    bins: Vec<Vec<u32>>,
    oscillator: ForgedOscillator,
    counters: Vec<(String, u64)>,
}

/// An event kind: phases, head, last seen.
type ForgedKind = (Vec<f64>, usize, u64);

#[derive(serde::Serialize, Clone, Default)]
struct ForgedOscillator {
    field: [[f64; 2]; 4],
    weight: f64,
    theta: [f64; 4],
    coupling: [[f64; 4]; 4],
    observations: u64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    kind_observations: u64,
    kinds: Vec<(String, ForgedKind)>,
}

fn forged() -> Forged {
    // Two records at the epoch (Thursday 1 January 1970, 00:00): bins hour 0, day 3, week 0,
    // month 0, at positions 0, 24 + 3, 31, 35.
    let mut bins = vec![Vec::new(); 47];
    for b in [0, 27, 31, 35] {
        bins[b] = vec![0, 1];
    }
    Forged {
        schema: 1,
        journal_seq: 0,
        time_zone: 0,
        next_seq: 2,
        records: vec![(id(1), ts(0), ts(5), 0.5, 0), (id(2), ts(60), ts(6), 0.25, 1)],
        bins,
        oscillator: ForgedOscillator::default(),
        counters: vec![("registered".into(), 2)],
    }
}

fn load_forged(f: &Forged) -> (Scn, String, Result<(), Error>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scn.snap");
    codec::save(&path, SNAPSHOT_KIND, f).unwrap();
    let (_, mut scn) = store(200);
    scn.register(id(77), ts(0), 0.5).unwrap();
    let before = fingerprint(&scn);
    let result = scn.load(&path);
    (scn, before, result)
}

#[test]
fn a_forged_file_that_holds_loads() {
    let (scn, _, result) = load_forged(&forged());
    result.unwrap();
    assert_eq!(scn.query_hour(0).unwrap(), vec![id(2), id(1)]);
    assert_eq!(scn.stats().registered, 2);
    assert!(!scn.contains(id(77)));
}

#[test]
fn bad_payloads_are_refused_and_change_nothing() {
    let mut cases: Vec<(&str, Forged)> = Vec::new();
    let mut f = forged();
    f.records[1].0 = id(1);
    cases.push(("twice", f));
    let mut f = forged();
    f.records[1].3 = f64::NAN;
    cases.push(("significance", f));
    let mut f = forged();
    f.records[1].4 = 0;
    cases.push(("order", f));
    let mut f = forged();
    f.time_zone = 20 * 3600;
    cases.push(("time_zone", f));
    let mut f = forged();
    f.bins[1] = vec![0];
    cases.push(("not its own", f));
    let mut f = forged();
    f.bins[0] = vec![0, 0];
    cases.push(("twice in the circadian", f));
    let mut f = forged();
    f.bins[0] = vec![5];
    cases.push(("names record 5", f));
    let mut f = forged();
    f.bins.pop();
    cases.push(("46 bins", f));
    let mut f = forged();
    f.oscillator.theta[0] = 7.0;
    cases.push(("phase", f));
    let mut f = forged();
    f.oscillator.coupling[0][1] = 3.0;
    cases.push(("coupling", f));
    let mut f = forged();
    f.oscillator.weight = f64::INFINITY;
    cases.push(("mean field", f));
    let mut f = forged();
    f.oscillator.kinds = vec![("a".into(), (vec![0.1], 0, 1)), ("a".into(), (vec![0.1], 0, 2))];
    cases.push(("appears twice", f));
    for (needle, f) in cases {
        let (scn, before, result) = load_forged(&f);
        match result {
            Err(Error::Corrupt { reason: CorruptReason::Payload(msg), .. }) => {
                assert!(msg.contains(needle), "{needle}: {msg}");
            }
            other => panic!("{needle}: expected a corrupt payload, got {other:?}"),
        }
        assert_eq!(fingerprint(&scn), before, "{needle}: the store changed");
    }
    let mut f = forged();
    f.schema = 2;
    let (_, _, result) = load_forged(&f);
    assert!(matches!(result, Err(Error::UnsupportedVersion { found: 2, .. })));
}

#[test]
fn a_snapshot_from_another_zone_is_rebinned() {
    let clock = ManualClock::new(ts(1_700_000_000));
    let utc = populated(&clock, TimeZone::UTC);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scn.snap");
    utc.save(&path).unwrap();
    let mut config = ScnConfig::default();
    config.bin_capacity = 6;
    let mut moved = Scn::builder().config(config.clone()).time_zone(tz(-5)).build().unwrap();
    moved.load(&path).unwrap();
    // The same as registering the held records, in order, in the new zone.
    let mut direct = Scn::builder().config(config).time_zone(tz(-5)).build().unwrap();
    for i in utc.ids() {
        let (at, s) = utc.registration(i).unwrap();
        direct.register(i, at, s).unwrap();
    }
    for r in Rhythm::ALL {
        for b in 0..r.bins() {
            assert_eq!(moved.query_bin(r, b).unwrap(), direct.query_bin(r, b).unwrap());
        }
    }
    assert_eq!(moved.phase_coherence(), direct.phase_coherence());
    let i = utc.ids()[0];
    assert_eq!(moved.signature(i).unwrap().hour(), (utc.signature(i).unwrap().hour() + 19) % 24);
    // The kinds moved with the zone.
    let (a, _) = utc.oscillator().kind_phase("tool:a").unwrap();
    let (b, _) = moved.oscillator().kind_phase("tool:a").unwrap();
    assert!(((a - 5.0 / 24.0 - b).rem_euclid(1.0)).min((b - a + 5.0 / 24.0).rem_euclid(1.0)) < 1e-9);
}

// ----- journal ---------------------------------------------------------------------------

#[test]
fn reopening_finds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(ts(1_700_000_000));
    let mut config = ScnConfig::default();
    config.bin_capacity = 5;
    let open = || {
        Scn::builder()
            .clock(clock.shared())
            .config(config.clone())
            .time_zone(tz(1))
            .sync_policy(SyncPolicy::Always)
            .open(dir.path())
            .unwrap()
    };
    let mut model =
        Scn::builder().clock(clock.shared()).config(config.clone()).time_zone(tz(1)).build().unwrap();
    let mut rng = SplitMix64::new(5);
    let mut scn = open();
    assert!(scn.is_journaled());
    for round in 0..3 {
        for n in 0..60u128 {
            let key = round * 100 + n;
            let at = ts(1_704_067_200 + (rng.uniform() * 30.0 * 86_400.0) as i64);
            let s = (rng.uniform() * 10.0).floor() / 10.0;
            clock.advance(Duration::from_secs(1));
            scn.register(id(key), at, s).unwrap();
            model.register(id(key), at, s).unwrap();
            if n % 4 == 0 {
                scn.remove(id(key / 2)).unwrap();
                model.remove(id(key / 2)).unwrap();
            }
            if n % 6 == 0 {
                scn.observe_kind("tool:x", at).unwrap();
                model.observe_kind("tool:x", at).unwrap();
            }
        }
        if round == 1 {
            scn.checkpoint().unwrap();
        }
        drop(scn);
        scn = open();
        assert_eq!(fingerprint(&scn), fingerprint(&model), "round {round}");
    }
    assert!(scn.load(dir.path().join("scn.snap")).is_err(), "a journaled store refuses a load");
    scn.sync().unwrap();
}

#[test]
fn a_directory_is_held_by_one_store() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Scn::builder().open(dir.path()).unwrap();
    assert!(matches!(Scn::builder().open(dir.path()), Err(Error::Locked { .. })));
}

#[test]
fn the_store_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Scn>();
    send_sync::<Oscillator>();
}
