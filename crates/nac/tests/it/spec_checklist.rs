//! The behaviours of `tests/unit/test_nac.py` and the [run] vectors of §8 (§14 checklist).

use std::time::Duration;

use maxim_core::contracts::CAUSAL_PATTERN;
use maxim_core::value::Map;
use maxim_core::{MetaValue, PromotionSource, RecordId, Source, Timestamp};
use nac::{LinkId, Observation, Valence};

use crate::common::{T0, ctx, default_store, grasp, store};

#[test]
fn a_new_link_counts_one_observation_at_confidence_one_half() {
    let (mut nac, _) = default_store();
    let o = nac.observe(&grasp("success", Valence::Positive)).unwrap();
    assert!(o.created);
    let link = nac.link(o.link).unwrap();
    assert_eq!(link.observation_count(), 1);
    assert_eq!(link.confidence(), 0.5);
    assert_eq!(link.event_signature(), "tool:grasp");
    // Rescorla-Wagner runs on the first observation too (1.3.3): 0.5 + 0.14 * 0.5.
    assert!((link.predicted_value() - 0.57).abs() < 1e-12);
    assert!((o.prediction_error - 0.5).abs() < 1e-12);

    let again = nac.observe(&grasp("success", Valence::Positive)).unwrap();
    assert!(!again.created);
    assert_eq!(again.link, o.link);
    let link = nac.link(o.link).unwrap();
    assert_eq!(link.observation_count(), 2);
    assert!((link.confidence() - (0.5 + 0.1 * 2f64.sqrt())).abs() < 1e-12);
}

#[test]
fn four_positives_give_the_run_vector() {
    let (mut nac, _) = default_store();
    for _ in 0..4 {
        nac.observe(&grasp("tool:grasp:positive", Valence::Positive)).unwrap();
    }
    let link = &nac.links()[0];
    assert!((link.predicted_value() - 0.7265).abs() < 5e-5);
    assert!((link.predicted_value() - (1.0 - 0.5 * 0.86f64.powi(4))).abs() < 1e-12);
    assert!((link.confidence() - 0.7).abs() < 1e-12);
    let history: Vec<f64> = link.history().iter().copied().collect();
    assert_eq!(history.len(), 4);
    assert_eq!(history[0], 0.5);
    assert!((link.last_rpe() - (1.0 - history[3])).abs() < 1e-12);
}

#[test]
fn confidence_is_capped_at_0_99() {
    let (mut nac, _) = default_store();
    for _ in 0..30 {
        nac.observe(&grasp("s", Valence::Positive)).unwrap();
    }
    // 0.5 + 0.1 * sqrt(30) = 1.047 -> 0.99.
    assert_eq!(nac.links()[0].confidence(), 0.99);
}

#[test]
fn contexts_make_different_links() {
    let (mut nac, _) = default_store();
    let a = nac.observe(&grasp("s", Valence::Positive).context(&ctx(&[("object", "mug")]))).unwrap();
    let b = nac.observe(&grasp("s", Valence::Positive).context(&ctx(&[("object", "box")]))).unwrap();
    let c = nac.observe(&grasp("s", Valence::Positive)).unwrap();
    assert_ne!(a.link, b.link);
    assert_ne!(a.link, c.link);
    assert_eq!(nac.len(), 3);
    // The same items in another order are the same context.
    let ab = ctx(&[("object", "mug"), ("room", "kitchen")]);
    let ba = ctx(&[("room", "kitchen"), ("object", "mug")]);
    let x = nac.observe(&grasp("s", Valence::Positive).context(&ab)).unwrap();
    let y = nac.observe(&grasp("s", Valence::Positive).context(&ba)).unwrap();
    assert_eq!(x.link, y.link);
    assert_eq!(x.link, LinkId::of("tool:grasp", "s", &ba));
    assert!(nac.find_link("tool:grasp", "s", &ba).is_some());
    assert!(nac.find_link("tool:grasp", "t", &ba).is_none());
}

#[test]
fn delays_are_kept_per_observation() {
    let (mut nac, _) = default_store();
    nac.observe(&grasp("s", Valence::Positive).delay(5.0)).unwrap();
    nac.observe(&grasp("s", Valence::Positive).delay(3.0)).unwrap();
    let link = &nac.links()[0];
    assert_eq!(link.delays().len(), 2);
    assert_eq!(link.mean_delay(), Some(4.0));
}

#[test]
fn predictions_need_a_link_or_a_prior() {
    let (mut nac, _) = default_store();
    assert!(nac.predict("tool", "tool:unknown", &Map::new()).is_none());
    for _ in 0..3 {
        nac.observe(&grasp("s", Valence::Positive)).unwrap();
    }
    let p = nac.predict("tool", "tool:grasp", &Map::new()).unwrap();
    assert!(p.confidence > 0.3);
    assert_eq!(p.links.len(), 1);
    assert_eq!(nac.predict_all("tool", "tool:grasp", &Map::new()).len(), 1);

    nac.set_prior("tool", "tool:lift", 0.7, 0.3).unwrap();
    let prior = nac.predict("tool", "tool:lift", &Map::new()).unwrap();
    assert_eq!((prior.value, prior.confidence), (0.7, 0.3));
    assert_eq!(prior.valence, Valence::Positive);
    assert!(prior.outcome.is_none() && prior.links.is_empty());
    nac.set_prior("tool", "tool:lift", 0.6, 0.3).unwrap();
    assert_eq!(nac.predict("tool", "tool:lift", &Map::new()).unwrap().valence, Valence::Neutral);
    // A prior for another event type does not apply.
    assert!(nac.predict("user_input", "tool:lift", &Map::new()).is_none());
}

#[test]
fn the_best_outcome_wins_the_prediction() {
    let (mut nac, _) = default_store();
    for _ in 0..10 {
        nac.observe(&grasp("success", Valence::Positive)).unwrap();
    }
    nac.observe(&grasp("failure", Valence::Negative)).unwrap();
    let p = nac.predict("tool", "tool:grasp", &Map::new()).unwrap();
    assert!(p.value > 0.5);
    assert_eq!(p.outcome.as_ref().unwrap().1, "success");
    assert_eq!(p.links.len(), 2);
    let all = nac.predict_all("tool", "tool:grasp", &Map::new());
    assert_eq!(all.len(), 2);
    assert!(all[0].confidence >= all[1].confidence);
}

#[test]
fn a_high_confidence_threshold_silences_a_single_observation() {
    let (mut nac, _) = store(crate::common::with(|c| {
        c.min_confidence_threshold = 0.9;
    }));
    nac.observe(&grasp("s", Valence::Positive)).unwrap();
    assert!(nac.predict("tool", "tool:grasp", &Map::new()).is_none());
}

#[test]
fn context_similarity_scales_the_score() {
    let (mut nac, _) = default_store();
    let stored = ctx(&[("object", "mug"), ("room", "kitchen")]);
    for _ in 0..4 {
        nac.observe(&grasp("s", Valence::Positive).context(&stored)).unwrap();
    }
    let full = nac.predict("tool", "tool:grasp", &stored).unwrap().confidence;
    let half = nac.predict("tool", "tool:grasp", &ctx(&[("object", "mug")])).unwrap().confidence;
    let none = nac.predict("tool", "tool:grasp", &ctx(&[("object", "box")])).unwrap().confidence;
    assert!((full - 0.7).abs() < 1e-12);
    assert!((half - 0.7 * 0.75).abs() < 1e-12);
    assert!((none - 0.7 * 0.5).abs() < 1e-12);
}

#[test]
fn queries_by_event_valence_and_memory() {
    let (mut nac, _) = default_store();
    let m = RecordId::from_u128(42);
    nac.observe(&grasp("success", Valence::Positive).memory(m)).unwrap();
    nac.observe(&grasp("failure", Valence::Negative)).unwrap();
    nac.observe(&Observation::new("tool", "tool:lift", "tool_result", "ok", Valence::Positive).memory(m))
        .unwrap();
    assert_eq!(nac.links_for_event("tool:grasp").count(), 2);
    assert_eq!(nac.links_for_event("tool:lift").count(), 1);
    assert_eq!(nac.links_for_event("tool:none").count(), 0);
    assert_eq!(nac.links_with_valence(Valence::Positive).count(), 2);
    assert_eq!(nac.links_with_valence(Valence::Negative).count(), 1);
    assert_eq!(nac.links_with_memory(m).count(), 2);
    assert_eq!(nac.remove_memory(m).unwrap(), 2);
    assert_eq!(nac.links_with_memory(m).count(), 0);
    assert_eq!(nac.remove_memory(m).unwrap(), 0);
}

#[test]
fn memory_ids_are_kept_once_and_bounded() {
    let (mut nac, _) = store(crate::common::with(|c| {
        c.max_memory_ids = 3;
    }));
    for m in [1u128, 1, 2, 3, 4, 4] {
        nac.observe(&grasp("s", Valence::Positive).memory(RecordId::from_u128(m))).unwrap();
    }
    let ids: Vec<u128> = nac.links()[0].memory_ids().iter().map(|r| r.as_u128()).collect();
    assert_eq!(ids, vec![2, 3, 4]);
}

#[test]
fn capacity_evicts_the_least_confident() {
    let (mut nac, _) = store(crate::common::with(|c| {
        c.max_links = 5;
    }));
    // Event 0 is seen three times, so it is the most confident and survives.
    for _ in 0..3 {
        nac.observe(&Observation::new("tool", "tool:0", "r", "ok", Valence::Positive)).unwrap();
    }
    let mut evicted = 0;
    for e in 1..10 {
        let sig = format!("tool:{e}");
        if nac
            .observe(&Observation::new("tool", &sig, "r", "ok", Valence::Positive))
            .unwrap()
            .evicted
            .is_some()
        {
            evicted += 1;
        }
    }
    assert!(nac.len() <= 5);
    assert_eq!(evicted, 5);
    assert_eq!(nac.stats().evictions, 5);
    assert_eq!(nac.links_for_event("tool:0").count(), 1);
    // Every remaining link is findable through both indexes.
    for link in nac.links() {
        assert_eq!(nac.link(link.id()).unwrap().id(), link.id());
        assert_eq!(nac.links_for_event(link.event_signature()).count(), 1);
    }
}

#[test]
fn decay_all_scales_confidence_exactly() {
    let (mut nac, _) = default_store();
    for _ in 0..4 {
        nac.observe(&grasp("s", Valence::Positive)).unwrap();
    }
    let before = nac.links()[0].confidence();
    nac.decay_all(0.5).unwrap();
    assert_eq!(nac.links()[0].confidence(), before * 0.5);
    // The next observation sets the confidence from the count again.
    nac.observe(&grasp("s", Valence::Positive)).unwrap();
    assert!((nac.links()[0].confidence() - (0.5 + 0.1 * 5f64.sqrt())).abs() < 1e-12);
}

#[test]
fn remove_link_forgets_it_from_every_index() {
    let (mut nac, _) = default_store();
    let a = nac.observe(&grasp("a", Valence::Positive)).unwrap().link;
    let b = nac.observe(&grasp("b", Valence::Positive)).unwrap().link;
    let c = nac.observe(&grasp("c", Valence::Positive)).unwrap().link;
    let removed = nac.remove_link(a).unwrap();
    assert_eq!(removed.outcome_signature(), "a");
    assert!(nac.link(a).is_none());
    assert_eq!(nac.link(b).unwrap().outcome_signature(), "b");
    assert_eq!(nac.link(c).unwrap().outcome_signature(), "c");
    assert_eq!(nac.links_for_event("tool:grasp").count(), 2);
    let err = nac.remove_link(a).unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(nac.stats().links_removed, 1);
}

#[test]
fn promotion_candidates_follow_section_8_4() {
    let (mut nac, clock) = default_store();
    // 4 positives with episodes a minute apart: a candidate.
    for m in 0..4u128 {
        clock.advance(Duration::from_secs(60));
        nac.observe(&grasp("tool:grasp:positive", Valence::Positive).memory(RecordId::from_u128(m + 1)))
            .unwrap();
    }
    // 2 positives: too few observations (confidence 0.64, count 2).
    for _ in 0..2 {
        nac.observe(&Observation::new("tool", "tool:lift", "tool_result", "ok", Valence::Positive)).unwrap();
    }
    // 5 negatives: not positive.
    for _ in 0..5 {
        nac.observe(&grasp("tool:grasp:negative", Valence::Negative)).unwrap();
    }
    let candidates = nac.get_promotion_candidates(0.6, 3).unwrap();
    assert_eq!(candidates.len(), 1);
    let c = &candidates[0];
    assert_eq!(c.pattern_name, "tool:grasp \u{2192} tool:grasp:positive");
    assert_eq!(c.category, CAUSAL_PATTERN);
    assert!((c.confidence - 0.7).abs() < 1e-12);
    assert_eq!(c.observations, 4);
    assert_eq!(c.source, Source::Episodic);
    assert_eq!(c.source_memory_ids, (1..=4u128).map(RecordId::from_u128).collect::<Vec<_>>());
    let expected: Vec<Timestamp> = (1..=4).map(|i| Timestamp::from_secs(T0 + 60 * i)).collect();
    assert_eq!(c.observed_at, expected);
    assert_eq!(c.metadata["event_signature"], MetaValue::Text("tool:grasp".into()));
    assert_eq!(c.metadata["outcome_signature"], MetaValue::Text("tool:grasp:positive".into()));
    assert_eq!(c.metadata["valence"], MetaValue::Text("positive".into()));
    assert_eq!(c.metadata["observation_count"], MetaValue::Count(4));
    // Two observations qualify when asked for two.
    assert_eq!(nac.get_promotion_candidates(0.6, 2).unwrap().len(), 2);
    // The trait gives the same.
    assert_eq!(nac.promotion_candidates(0.6, 3).unwrap(), candidates);
    assert_eq!(nac.source_name(), "nac");
    assert_eq!(nac.candidate_links(0.6, 3).count(), 1);
    assert!(nac.get_promotion_candidates(f64::NAN, 3).is_err());
    assert!(nac.promotion_candidates(1.5, 3).is_err());
}

#[test]
fn observation_times_are_bounded_and_ordered() {
    let (mut nac, clock) = store(crate::common::with(|c| {
        c.max_observation_times = 5;
    }));
    for _ in 0..8 {
        clock.advance(Duration::from_secs(10));
        nac.observe(&grasp("s", Valence::Positive)).unwrap();
    }
    let times: Vec<Timestamp> = nac.links()[0].observed_at().iter().copied().collect();
    let expected: Vec<Timestamp> = (4..=8).map(|i| Timestamp::from_secs(T0 + 10 * i)).collect();
    assert_eq!(times, expected);
    assert_eq!(nac.links()[0].first_observed(), Timestamp::from_secs(T0 + 10));
    assert_eq!(nac.links()[0].last_observed(), Timestamp::from_secs(T0 + 80));
    let c = &nac.get_promotion_candidates(0.6, 3).unwrap()[0];
    assert_eq!(c.observed_at, expected);
    assert_eq!(c.observations, 8);
}

#[test]
fn alpha_follows_the_learning_rate() {
    for (lr, alpha) in [(0.2, 0.14), (0.05, 0.0725), (0.5, 0.275)] {
        assert!(
            (crate::common::with(|c| {
                c.learning_rate = lr;
            })
            .alpha()
                - alpha)
                .abs()
                < 1e-12
        );
    }
}

#[test]
fn stats_count_what_happened() {
    let (mut nac, _) = default_store();
    nac.observe(&grasp("s", Valence::Positive)).unwrap();
    nac.observe(&grasp("s", Valence::Positive)).unwrap();
    nac.set_prior("tool", "x", 0.5, 0.5).unwrap();
    let s = nac.stats();
    assert_eq!((s.links, s.total_observations, s.links_created, s.priors), (1, 2, 1, 1));
    assert_eq!(nac.total_observations(), 2);
}

#[test]
fn keyword_search_scans_signatures() {
    let (mut nac, _) = default_store();
    for _ in 0..4 {
        nac.observe(&Observation::new("tool", "tool:Grasp", "r", "grasp:ok", Valence::Positive)).unwrap();
    }
    nac.observe(&Observation::new("tool", "tool:lift", "r", "lift:ok", Valence::Positive)).unwrap();
    nac.observe(&Observation::new("tool", "tool:push", "r", "box:moved", Valence::Positive)).unwrap();
    let names = |found: Vec<&nac::CausalLink>| {
        found.iter().map(|l| l.event_signature().to_owned()).collect::<Vec<_>>()
    };
    // Case-insensitive substrings of either signature, each link once, most confident first.
    assert_eq!(names(nac.search_links(&["grasp", "GRASP", "lift"], 0.0)), vec!["tool:Grasp", "tool:lift"]);
    assert_eq!(names(nac.search_links(&["moved"], 0.0)), vec!["tool:push"]);
    // Short keywords are ignored; the confidence floor applies.
    assert!(nac.search_links(&["ok", "x"], 0.0).is_empty());
    assert_eq!(names(nac.search_links(&["tool"], 0.6)), vec!["tool:Grasp"]);
    assert!(nac.search_links(&[], 0.0).is_empty());
}

#[test]
fn lent_candidates_are_the_owned_ones_in_the_same_order() {
    // Rings that wrap, so episodes and times are lent as two halves.
    let (mut nac, clock) = store(crate::common::with(|c| {
        c.max_observation_times = 7;
        c.max_memory_ids = 5;
    }));
    for i in 0..120u128 {
        clock.advance(Duration::from_secs(5 + (i as u64 % 7) * 13));
        let sig = ["tool:grasp", "tool:lift", "tool:push"][(i % 3) as usize];
        let outcome = format!("{sig}:positive");
        let valence = if i % 11 == 0 { Valence::Negative } else { Valence::Positive };
        let mode = ctx(&[("mode", if i % 2 == 0 { "explore" } else { "exploit" })]);
        nac.observe(
            &Observation::new("tool", sig, "tool_result", &outcome, valence)
                .context(&mode)
                .memory(RecordId::from_u128(i / 2 + 1)),
        )
        .unwrap();
    }
    let owned = nac.get_promotion_candidates(0.6, 3).unwrap();
    assert!(owned.len() >= 4, "{} candidates", owned.len());
    assert!(owned.iter().all(|c| c.observed_at.len() == 7 && c.source_memory_ids.len() == 5));
    let mut lent = Vec::new();
    let n = nac.for_each_promotion_candidate(0.6, 3, |c| lent.push(c.to_candidate())).unwrap();
    assert_eq!((n, &lent), (owned.len(), &owned));
    // Through the core's contract, and field by field on the view itself.
    let mut through_trait = Vec::new();
    nac.for_each_candidate(0.6, 3, &mut |c| through_trait.push(c.to_candidate())).unwrap();
    assert_eq!(through_trait, owned);
    let mut i = 0;
    nac.for_each_promotion_candidate(0.6, 3, |c| {
        let o = &owned[i];
        assert_eq!(c.pattern_name, o.pattern_name);
        assert_eq!(c.observed_at.iter().copied().collect::<Vec<_>>(), o.observed_at);
        assert_eq!(c.source_memory_ids.to_vec(), o.source_memory_ids);
        assert_eq!(c.metadata.get("link_id"), Some(o.metadata["link_id"].as_view()));
        i += 1;
    })
    .unwrap();
    assert_eq!(i, owned.len());
    // Bad thresholds lend nothing.
    let mut visits = 0;
    assert!(nac.for_each_promotion_candidate(f64::NAN, 3, |_| visits += 1).is_err());
    assert!(nac.for_each_candidate(1.5, 3, &mut |_| visits += 1).is_err());
    assert_eq!(visits, 0);
}
