//! Properties of the recurring-element extraction, and the ledger's operations as data.

use maxim_core::{RecordId, Timestamp, Value, codec};
use promoter::pattern::PatternKind;
use promoter::{EpisodeElements, Ledger, Op, recurring};
use proptest::prelude::*;

fn episode() -> impl Strategy<Value = EpisodeElements> {
    let word = prop::sample::select(vec!["mug", "cup", " mug ", "kettle", "", "spoon"]);
    (
        prop::collection::vec(word.clone(), 0..4),
        prop::collection::vec(word.clone(), 0..2),
        prop::collection::vec(word.clone(), 0..2),
        prop::option::of(word),
    )
        .prop_map(|(o, t, g, out)| EpisodeElements {
            objects: o.into_iter().map(str::to_owned).collect(),
            tools: t.into_iter().map(str::to_owned).collect(),
            goals: g.into_iter().map(str::to_owned).collect(),
            outcome: out.map(str::to_owned),
        })
}

/// Picks one kind of element of an episode.
type Field = fn(&EpisodeElements) -> Vec<String>;

/// In how many episodes `item` appears among the elements `field` picks.
fn count(episodes: &[EpisodeElements], field: Field, item: &str) -> usize {
    episodes.iter().filter(|e| field(e).iter().any(|s| s.trim() == item)).count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Each kept element appears in at least the needed number of episodes, most frequent
    /// first, once; an element that qualifies and is missing was cut by `max_elements`.
    #[test]
    fn recurring_keeps_exactly_the_frequent_elements(
        episodes in prop::collection::vec(episode(), 0..12),
        share in 0.0f64..=1.0,
        min_count in 1usize..4,
        max in 1usize..4,
    ) {
        let found = recurring(&episodes, share, min_count, max);
        let need = ((share * episodes.len() as f64).ceil() as usize).max(min_count).max(1);
        let fields: [(Vec<String>, Field); 3] = [
            (found.objects.clone(), |e| e.objects.clone()),
            (found.tools.clone(), |e| e.tools.clone()),
            (found.goals.clone(), |e| e.goals.clone()),
        ];
        for (kept, field) in fields {
            prop_assert!(kept.len() <= max);
            let counts: Vec<usize> = kept.iter().map(|k| count(&episodes, field, k)).collect();
            prop_assert!(counts.iter().all(|&c| c >= need));
            prop_assert!(counts.windows(2).all(|w| w[0] >= w[1]));
            prop_assert!(kept.iter().all(|k| !k.is_empty() && k.trim() == k));
            let mut unique = kept.clone();
            unique.sort();
            unique.dedup();
            prop_assert_eq!(unique.len(), kept.len());
            for e in &episodes {
                for item in field(e) {
                    let item = item.trim();
                    let c = count(&episodes, field, item);
                    if !item.is_empty() && c >= need && !kept.iter().any(|k| k == item) {
                        prop_assert!(kept.len() == max && counts[max - 1] >= c);
                    }
                }
            }
        }
        if let Some(outcome) = &found.outcome {
            prop_assert!(count(&episodes, |e| e.outcome.iter().cloned().collect(), outcome) >= need);
        }
    }
}

#[test]
fn ledger_operations_are_data_that_replay_exactly() {
    let (concept, other) = (RecordId::from_u128(1), RecordId::from_u128(2));
    let key = "causal_pattern\u{1f}a → b".to_owned();
    let ops = vec![
        Op::Bind {
            pattern: key.clone(),
            concept,
            kind: PatternKind::Causal,
            evidence: 1,
            known_as: Some(("a → b".into(), "causal_pattern".into())),
            at: Timestamp::from_secs(5),
        },
        Op::Credit { concept, episode: RecordId::from_u128(30) },
        Op::Credit { concept, episode: RecordId::from_u128(20) },
        Op::Credit { concept, episode: RecordId::from_u128(30) },
        Op::Evidence { pattern: key.clone(), observations: 4, confidence: 0.7, at: Timestamp::from_secs(6) },
        Op::Related { pattern: key.clone(), observations: 4 },
        Op::Property { concept, key: "typical_outcome".into(), value: Value::Text("success".into()) },
        Op::Extracted { concept },
        // Moving the pattern to another concept leaves the first one orphaned, so it goes.
        Op::Bind {
            pattern: key.clone(),
            concept: other,
            kind: PatternKind::Causal,
            evidence: 1,
            known_as: None,
            at: Timestamp::from_secs(7),
        },
    ];
    let bytes = codec::encode("promoter-ops", &ops).unwrap();
    let decoded: Vec<Op> = codec::decode("ops", "promoter-ops", &bytes).unwrap();
    assert_eq!(decoded, ops);

    let (mut a, mut b) = (Ledger::default(), Ledger::default());
    for op in ops.iter().take(8).cloned() {
        a.apply(op);
    }
    let entry = a.concept(concept).unwrap();
    assert_eq!(entry.episodes, [RecordId::from_u128(20), RecordId::from_u128(30)]);
    assert_eq!((entry.credits, entry.extracted_at), (2, Some(2)));
    assert_eq!(entry.property("typical_outcome"), Some(&Value::Text("success".into())));
    assert_eq!(a.pattern(&key).unwrap().related_at, Some(4));
    for op in decoded {
        b.apply(op);
    }
    assert!(b.concept(concept).is_none());
    assert_eq!(b.pattern(&key).unwrap().concept, other);
    assert_eq!(b.pattern(&key).unwrap().observations, 0, "a new binding starts its evidence afresh");
}

#[test]
fn credited_episodes_keep_the_newest_up_to_the_cap() {
    let concept = RecordId::from_u128(1);
    let mut ledger = Ledger::default();
    ledger.apply(Op::Bind {
        pattern: "p".into(),
        concept,
        kind: PatternKind::Other,
        evidence: 1,
        known_as: None,
        at: Timestamp::from_secs(0),
    });
    let cap = promoter::ledger::MAX_CREDITED_EPISODES as u128;
    for n in 0..cap + 5 {
        ledger.apply(Op::Credit { concept, episode: RecordId::from_u128(100 + n) });
    }
    let entry = ledger.concept(concept).unwrap();
    assert_eq!(entry.episodes.len() as u128, cap);
    assert_eq!(entry.episodes[0], RecordId::from_u128(105));
    assert_eq!(u128::from(entry.credits), cap + 5);
}
