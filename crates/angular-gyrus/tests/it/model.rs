//! Property tests: the store's indexed recall agrees with a naive scan, whatever sequence of
//! inserts, removals, links and accesses came before, and a save/load round trip keeps it all.

use angular_gyrus::{AngularGyrus, AngularGyrusConfig, MathCategory, MathEntry, MathFilter, MathRelation};
use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, RecordId};
use proptest::prelude::*;

use crate::common::T0;

#[derive(Debug, Clone)]
enum Step {
    Insert { name: u8, category: u8, domain: u8, confidence: u8 },
    Remove(usize),
    Link(usize, usize, u8),
    Touch(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..4u8, 0..6u8, 0..3u8, 0..=10u8).prop_map(|(name, category, domain, confidence)| Step::Insert { name, category, domain, confidence }),
        1 => any::<usize>().prop_map(Step::Remove),
        2 => (any::<usize>(), any::<usize>(), 1..=10u8).prop_map(|(a, b, w)| Step::Link(a, b, w)),
        2 => any::<usize>().prop_map(Step::Touch),
    ]
}

fn filter() -> impl Strategy<Value = MathFilter> {
    (
        proptest::option::of(0..4u8),
        proptest::option::of(0..6u8),
        proptest::option::of(0..3u8),
        proptest::option::of(0..=10u8),
        any::<bool>(),
    )
        .prop_map(|(name, category, domain, min, compressed)| {
            let mut f = MathFilter::new().include_compressed(compressed);
            if let Some(n) = name {
                f = f.name(format!("n{n}"));
            }
            if let Some(c) = category {
                f = f.category(MathCategory::ALL[usize::from(c)]);
            }
            if let Some(d) = domain {
                f = f.domain(format!("d{d}"));
            }
            if let Some(m) = min {
                f = f.min_confidence(f64::from(m) / 10.0);
            }
            f
        })
}

/// The recall a naive scan gives: every matching record, most accessed first, then most
/// confident, then oldest id.
fn naive<'a>(ag: &'a AngularGyrus, f: &MathFilter, limit: usize) -> Vec<&'a MathEntry> {
    let mut out: Vec<&MathEntry> = ag
        .iter()
        .filter(|e| {
            f.name.as_deref().is_none_or(|n| e.name() == n)
                && f.category.is_none_or(|c| e.category() == c)
                && f.domain.as_deref().is_none_or(|d| e.domain() == d)
                && f.min_confidence.is_none_or(|m| e.confidence() >= m)
                && (f.include_compressed || !e.is_compressed())
        })
        .collect();
    out.sort_by(|a, b| {
        b.meta()
            .access_count
            .cmp(&a.meta().access_count)
            .then(b.confidence().total_cmp(&a.confidence()))
            .then(a.id().cmp(&b.id()))
    });
    out.truncate(limit);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn recall_agrees_with_a_naive_scan(steps in proptest::collection::vec(step(), 1..60), filters in proptest::collection::vec(filter(), 1..6), limit in 1..12usize) {
        let clock = ManualClock::new(T0);
        let mut config = AngularGyrusConfig::default();
        config.seed_built_ins = false;
        let mut ag = AngularGyrus::builder().clock(clock.shared()).config(config).id_seed(5).build().unwrap();
        let mut ids: Vec<RecordId> = Vec::new();
        for s in steps {
            clock.advance(std::time::Duration::from_secs(1));
            match s {
                Step::Insert { name, category, domain, confidence } => {
                    let mut r = ag.new_record(&format!("n{name}"), MathCategory::ALL[usize::from(category)], &format!("d{domain}")).unwrap();
                    r.confidence = f64::from(confidence) / 10.0;
                    ids.push(ag.insert(r.into()).unwrap());
                }
                Step::Remove(k) if !ids.is_empty() => {
                    let id = ids.swap_remove(k % ids.len());
                    ag.remove(id).unwrap();
                }
                Step::Link(a, b, w) if ids.len() >= 2 => {
                    let (a, b) = (ids[a % ids.len()], ids[b % ids.len()]);
                    if a != b {
                        ag.link(a, b, MathRelation::Associates, f64::from(w) / 10.0).unwrap();
                    }
                }
                Step::Touch(k) if !ids.is_empty() => {
                    ag.touch(&[ids[k % ids.len()]]);
                }
                _ => {}
            }
        }
        prop_assert_eq!(ag.len(), ids.len());
        // Every edge joins two held records and has its reverse.
        for e in ag.math_graph().edges() {
            prop_assert!(ag.peek(e.source).is_some() && ag.peek(e.target).is_some());
            prop_assert!(ag.math_graph().find_edge(e.target, e.source, Some(e.kind), e.relation()).is_some());
        }
        for f in &filters {
            let got: Vec<RecordId> = ag.recall(f, limit).iter().map(|e| e.id()).collect();
            let want: Vec<RecordId> = naive(&ag, f, limit).iter().map(|e| e.id()).collect();
            prop_assert_eq!(got, want);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ag.snap");
        ag.save(&path).unwrap();
        let mut config = AngularGyrusConfig::default();
        config.seed_built_ins = false;
        let mut fresh = AngularGyrus::builder().clock(clock.shared()).config(config).build().unwrap();
        fresh.load(&path).unwrap();
        for f in &filters {
            let a: Vec<&MathEntry> = ag.recall(f, limit);
            let b: Vec<&MathEntry> = fresh.recall(f, limit);
            prop_assert_eq!(a, b);
        }
        prop_assert_eq!(fresh.math_graph().edge_count(), ag.math_graph().edge_count());
    }
}
