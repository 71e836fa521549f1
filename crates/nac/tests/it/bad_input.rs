//! Bad input gets a typed error and changes nothing.

use maxim_core::value::{Map, Value};
use nac::{Attribution, Nac, Observation, Outcome, Valence};

use crate::common::{ctx, default_store, grasp};

fn unchanged(nac: &Nac) -> (usize, u64, usize) {
    (nac.len(), nac.total_observations(), nac.pending_events().len())
}

#[test]
fn bad_observations_are_refused() {
    let (mut nac, _) = default_store();
    nac.observe(&grasp("s", Valence::Positive)).unwrap();
    let before = unchanged(&nac);
    let nan_ctx: Map = [("x", Value::Float(f64::NAN))].into_iter().collect();
    let long = "x".repeat(nac::context::MAX_NAME_BYTES + 1);
    let bad = [
        Observation::new("", "tool:grasp", "r", "s", Valence::Positive),
        Observation::new("tool", " ", "r", "s", Valence::Positive),
        Observation::new("tool", "tool:grasp", "", "s", Valence::Positive),
        Observation::new("tool", "tool:grasp", "r", "", Valence::Positive),
        Observation::new("tool", &long, "r", "s", Valence::Positive),
        grasp("s", Valence::Positive).delay(-1.0),
        grasp("s", Valence::Positive).delay(f64::NAN),
        grasp("s", Valence::Positive).delay(f64::INFINITY),
        grasp("s", Valence::Positive).context(&nan_ctx),
    ];
    for o in &bad {
        let err = nac.observe(o).unwrap_err();
        assert!(matches!(err, nac::Error::Core(_)), "{err}");
    }
    assert_eq!(unchanged(&nac), before);
    let link = &nac.links()[0];
    assert_eq!(link.observation_count(), 1);
}

#[test]
fn bad_events_outcomes_and_settings_are_refused() {
    let (mut nac, _) = default_store();
    assert!(nac.record_event("", "tool:grasp", &ctx(&[]), None).is_err());
    assert!(nac.record_event("tool", "", &ctx(&[]), None).is_err());
    let inf: Map = [("x", Value::Float(f64::INFINITY))].into_iter().collect();
    assert!(nac.record_event("tool", "tool:grasp", &inf, None).is_err());
    nac.record_event("tool", "tool:grasp", &ctx(&[]), None).unwrap();
    let before = unchanged(&nac);
    assert!(nac.record_outcome(&Outcome::of_signature("", "tool:grasp", Valence::Positive)).is_err());
    assert!(nac.record_outcome(&Outcome::of_signature("r", "", Valence::Positive)).is_err());
    let with_bad_sig = Outcome {
        outcome_signature: Some(" "),
        ..Outcome::of_signature("r", "tool:grasp", Valence::Positive)
    };
    assert!(nac.record_outcome(&with_bad_sig).is_err());
    let with_bad_ctx = Outcome {
        attribution: Attribution::Context,
        context: &inf,
        ..Outcome::of_signature("r", "x", Valence::Positive)
    };
    assert!(nac.record_outcome(&with_bad_ctx).is_err());
    assert!(nac.record_outcome(&Outcome::of_event("r", nac::EventId::new(999), Valence::Positive)).is_err());
    assert_eq!(unchanged(&nac), before);

    for f in [-0.1, 1.1, f64::NAN] {
        assert!(nac.decay_all(f).is_err());
    }
    for (v, c) in [(1.5, 0.5), (0.5, -0.1), (f64::NAN, 0.5)] {
        assert!(nac.set_prior("tool", "x", v, c).is_err());
    }
    assert!(nac.set_prior("", "x", 0.5, 0.5).is_err());
    assert!(nac.prior("tool", "x").is_none());
    assert!("sideways".parse::<Valence>().is_err());

    for config in [
        crate::common::with(|c| {
            c.learning_rate = 1.5;
        }),
        crate::common::with(|c| {
            c.novelty = f64::NAN;
        }),
        crate::common::with(|c| {
            c.max_links = 0;
        }),
        crate::common::with(|c| {
            c.max_pending_events = 0;
        }),
        crate::common::with(|c| {
            c.temporal_window_secs = 0.0;
        }),
        crate::common::with(|c| {
            c.max_delays = 0;
        }),
        crate::common::with(|c| {
            c.max_observation_times = 1_000_000;
        }),
        crate::common::with(|c| {
            c.min_confidence_threshold = -0.5;
        }),
    ] {
        assert!(Nac::builder().config(config).build().is_err());
    }
}
