//! Collecting from every source (a failing one is reported and skipped), the thresholds and
//! the randomness gate.

use std::sync::Arc;

use maxim_core::{
    BoxError, ManualClock, MetaValueRef, MetadataRef, PromotionCandidate, PromotionCandidateRef,
    PromotionSource, SplitSlice,
};
use promoter::{Error, PromoterConfig, RejectedBy, SemanticPromoter, Stage};

use crate::common::{
    Broken, Concepts, Fixed, Links, NameGate, T0, causal, ep, eps, promoter, promoter_with, statistical,
};

#[test]
fn every_source_is_asked_in_order_and_a_failing_one_is_reported_and_skipped() {
    let mut p = promoter();
    let nac = Arc::new(Fixed::new("nac", vec![causal("tool:grasp", eps(0..4), 0.7)]));
    p.add_source(Arc::new(Broken));
    p.add_source(nac.clone());
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let report = p.scan(&mut concepts, &mut links);
    assert_eq!(report.failed.len(), 1);
    let failure = &report.failed[0];
    assert_eq!(
        (failure.source.as_str(), failure.pattern.as_deref(), failure.stage),
        ("broken", None, Stage::Source)
    );
    assert!(failure.error.contains("offline"));
    assert_eq!(report.promoted.len(), 1, "the source after the failing one still counts");
    assert_eq!(report.promoted[0].source, "nac");
    // Sources are asked at the configured minimums (§11: 0.6 and 3).
    assert_eq!(*nac.asked.lock().unwrap(), [(0.6, 3)]);
    assert_eq!(p.stats().counters["failed"], 1);
}

#[test]
fn lent_sources_are_asked_after_the_registered_ones() {
    let mut p = promoter();
    p.add_source(Arc::new(Fixed::new("registered", vec![causal("tool:a", eps(0..3), 0.7)])));
    let lent = Fixed::new("lent", vec![causal("tool:b", eps(10..13), 0.7)]);
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let report = p.scan_with(&[&lent as &dyn PromotionSource], None, &mut concepts, &mut links);
    let order: Vec<&str> = report.promoted.iter().map(|x| x.source.as_str()).collect();
    assert_eq!(order, ["registered", "lent"]);
}

#[test]
fn the_gate_rejects_noise_with_its_reason() {
    let gate = Arc::new(NameGate::default());
    let mut p =
        SemanticPromoter::builder().clock(ManualClock::new(T0).shared()).gate(gate.clone()).build().unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let candidates = [causal("tool:grasp", eps(0..4), 0.7), causal("tool:noise", eps(10..20), 0.9)];
    let report = p.promote_candidates("nac", &candidates, &mut concepts, &mut links);
    assert_eq!(report.promoted.len(), 1);
    let rejected: Vec<_> = report.rejected_by(RejectedBy::Gate).collect();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].pattern, "tool:noise → tool:noise:positive");
    assert_eq!(rejected[0].reason, "observation timing looks random");
    assert_eq!(*gate.calls.lock().unwrap(), 2);
    assert!(concepts.by_name("tool:noise → tool:noise:positive").is_none());
    assert!(concepts.by_name("tool:noise").is_none(), "a rejected pattern relates nothing");
    assert_eq!(links.edges.len(), 4);
    assert_eq!(p.stats().counters["rejected_gate"], 1);
}

#[test]
fn the_gate_is_on_by_default_and_must_be_given() {
    assert!(PromoterConfig::default().gate_enabled);
    assert!(matches!(SemanticPromoter::builder().build(), Err(Error::NoGate)));
    let mut config = PromoterConfig::default();
    config.gate_enabled = false;
    let mut p = SemanticPromoter::builder().config(config).build().unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let report =
        p.promote_candidates("nac", &[causal("tool:noise", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert_eq!(report.promoted.len(), 1, "without the gate noise passes, as in the original");
}

#[test]
fn a_disabled_gate_is_not_asked_even_when_given() {
    let gate = Arc::new(NameGate::default());
    let mut config = PromoterConfig::default();
    config.gate_enabled = false;
    let mut p = SemanticPromoter::builder().config(config).gate(gate.clone()).build().unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    p.promote_candidates("nac", &[causal("tool:noise", eps(0..4), 0.7)], &mut concepts, &mut links);
    assert_eq!(*gate.calls.lock().unwrap(), 0);
}

#[test]
fn candidates_below_the_minimums_are_rejected_before_the_gate() {
    let gate = Arc::new(NameGate::default());
    let mut p = SemanticPromoter::builder().gate(gate.clone()).build().unwrap();
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    let weak = causal("tool:weak", eps(0..4), 0.59);
    let rare = causal("tool:rare", eps(0..2), 0.9);
    let report = p.promote_candidates("sloppy source", &[weak, rare], &mut concepts, &mut links);
    let reasons: Vec<&str> = report.rejected_by(RejectedBy::Threshold).map(|r| r.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["confidence 0.59 below the minimum 0.6", "2 observations, fewer than the minimum 3"]
    );
    assert_eq!(*gate.calls.lock().unwrap(), 0);
    assert!(concepts.concepts.is_empty() && links.edges.is_empty());
}

#[test]
fn the_minimums_are_configurable() {
    let mut config = PromoterConfig::default();
    config.min_confidence = 0.5;
    config.min_observations = 2;
    let mut p = promoter_with(config);
    let nac = Arc::new(Fixed::new("nac", vec![causal("tool:rare", eps(0..2), 0.55)]));
    p.add_source(nac.clone());
    let (mut concepts, mut links) = (Concepts::default(), Links::default());
    assert_eq!(p.scan(&mut concepts, &mut links).promoted.len(), 1);
    assert_eq!(*nac.asked.lock().unwrap(), [(0.5, 2)]);
}

/// A source that lends its candidates borrowed: episodes and times split in two, metadata
/// as pairs, as the causal learner lends them.
struct Lending(Vec<PromotionCandidate>);

impl PromotionSource for Lending {
    #[allow(clippy::unnecessary_literal_bound, reason = "the trait's signature")]
    fn source_name(&self) -> &str {
        "lending"
    }

    fn promotion_candidates(&self, _: f64, _: u32) -> Result<Vec<PromotionCandidate>, BoxError> {
        Err("this source only lends".into())
    }

    fn for_each_candidate(
        &self,
        _: f64,
        _: u32,
        visit: &mut dyn FnMut(&PromotionCandidateRef<'_>),
    ) -> Result<usize, BoxError> {
        for c in &self.0 {
            let pairs: Vec<(&str, MetaValueRef<'_>)> =
                c.metadata.iter().map(|(k, v)| (k.as_str(), v.as_view())).collect();
            let (ids, times) = (&c.source_memory_ids, &c.observed_at);
            let view = PromotionCandidateRef {
                metadata: MetadataRef::Pairs(&pairs),
                source_memory_ids: SplitSlice::new(&ids[..ids.len() / 2], &ids[ids.len() / 2..]),
                observed_at: SplitSlice::new(&times[..times.len() / 3], &times[times.len() / 3..]),
                ..c.as_view()
            };
            visit(&view);
        }
        Ok(self.0.len())
    }
}

#[test]
fn a_lending_source_promotes_exactly_what_its_owned_candidates_do() {
    let candidates = vec![
        causal("tool:grasp", eps(0..5), 0.7),
        causal("tool:noise", eps(10..14), 0.9),
        causal("tool:weak", eps(20..24), 0.3),
        statistical("latency", ep(99), 0.8, 12),
    ];
    let scan = |source: &dyn PromotionSource| {
        let mut p = promoter();
        let (mut concepts, mut links) = (Concepts::default(), Links::default());
        let first = p.scan_with(&[source], None, &mut concepts, &mut links);
        let second = p.scan_with(&[source], None, &mut concepts, &mut links);
        (first, second, concepts.concepts, concepts.relations, links.edges)
    };
    let owned = scan(&Fixed::new("lending", candidates.clone()));
    let lent = scan(&Lending(candidates));
    assert_eq!(owned.0.promoted.len(), 2, "the causal and the statistical pattern");
    assert_eq!(owned.0.rejected.len(), 2, "the noise by the gate, the weak one by the threshold");
    assert_eq!(lent.0, owned.0);
    assert_eq!(lent.1, owned.1);
    assert_eq!((lent.2, lent.3, lent.4), (owned.2, owned.3, owned.4));
}
