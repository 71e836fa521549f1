//! Property tests against a naive model of the learning rule.

use maxim_core::value::{Map, Value};
use nac::{Observation, Valence};
use proptest::prelude::*;

use crate::common::store;

fn valence(i: u8) -> Valence {
    [Valence::Positive, Valence::Negative, Valence::Neutral, Valence::Unknown][i as usize % 4]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every link holds exactly what the naive rule gives for its own observations, and the
    /// indexes agree with a scan, through evictions and removals.
    #[test]
    fn links_match_a_naive_model(
        steps in proptest::collection::vec((0u8..4, 0u8..3, 0u8..4, 0u8..2, 0.0f64..10.0), 1..120),
        lr in 0.0f64..1.0,
        max_links in 1usize..8,
    ) {
        let (mut nac, _) = store(crate::common::with(|c| { c.learning_rate = lr; c.max_links = max_links; }));
        let contexts: Vec<Map> = (0..2).map(|i| [("k", Value::Int(i))].into_iter().collect()).collect();
        let alpha = 0.05 + 0.45 * 0.5 * lr * 2.0;
        // The model: per key, (V, count, score), reset when the link is evicted.
        let mut model: std::collections::HashMap<nac::LinkId, (f64, u64, f64)> = std::collections::HashMap::default();
        for &(e, o, v, c, delay) in &steps {
            let event = format!("tool:{e}");
            let outcome = format!("out:{o}");
            let val = valence(v);
            let obs = Observation::new("tool", &event, "r", &outcome, val).delay(delay).context(&contexts[c as usize]);
            let got = nac.observe(&obs).unwrap();
            if let Some(ev) = got.evicted {
                prop_assert!(model.remove(&ev).is_some());
            }
            let entry = model.entry(got.link).or_insert((0.5, 0, val.scale()));
            prop_assert_eq!(got.created, entry.1 == 0);
            if entry.1 > 0 {
                entry.2 = 0.8 * entry.2 + 0.2 * val.scale();
            }
            entry.1 += 1;
            entry.0 = (entry.0 + alpha * (val.reward() - entry.0)).clamp(0.0, 1.0);
            prop_assert!(nac.len() <= max_links);
        }
        prop_assert_eq!(nac.len(), model.len());
        for link in nac.links() {
            let &(v, count, score) = &model[&link.id()];
            prop_assert!((link.predicted_value() - v).abs() < 1e-12);
            prop_assert_eq!(link.observation_count(), count);
            prop_assert!((link.confidence() - (0.5 + 0.1 * (count as f64).sqrt()).min(0.99)).abs() < 1e-12 || count == 1);
            prop_assert!((link.valence_score() - score).abs() < 1e-12);
            prop_assert!((0.0..=1.0).contains(&link.predicted_value()));
            prop_assert!(nac.links_for_event(link.event_signature()).any(|l| l.id() == link.id()));
        }
        let indexed: usize = (0..4).map(|e| nac.links_for_event(&format!("tool:{e}")).count()).sum();
        prop_assert_eq!(indexed, nac.len());
    }
}
