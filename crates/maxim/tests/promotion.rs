//! The promotion pipeline end to end with the real crates: NAc observations with structured
//! and random timings, the IPS randomness gate, the semantic promoter and the ATL.
//!
//! Three causal patterns are learned from episodes on a manual clock: `tool:grasp` observed
//! on a schedule that slows down (structured timing), `tool:wave` observed at exponentially
//! distributed, seeded random moments (noise), and `tool:nod` observed only five times (too
//! few to judge). The gate must reject the noise and let the others through; the promoter
//! must create their concepts, relate their events to their outcomes, link them to their
//! episodes, change nothing on a second scan, and credit new evidence once.

use std::collections::HashMap;
use std::sync::Arc;

use maxim::atl::{Atl, Direction};
use maxim::ips_gate::IpsGate;
use maxim::maxim_core::{
    ConceptProvenance, CrossEdgeKind, CrossLinks, LayerKind, LayerRecord, ManualClock, MemoryLayer,
    MemoryRecord, PromotionSource, RecordId, SplitMix64, Timestamp,
};
use maxim::nac::{Nac, Observation, Valence};
use maxim::promoter::{RejectedBy, SemanticPromoter};

const T0: i64 = 1_700_000_000;

/// Cross-layer edges, one per (from, to, kind), updated in place.
#[derive(Debug, Default, Clone, PartialEq)]
struct Links(HashMap<LayerRecord, Vec<(LayerRecord, CrossEdgeKind, f64)>>);

impl Links {
    fn count(&self) -> usize {
        self.0.values().map(Vec::len).sum()
    }
}

impl CrossLinks for Links {
    type Error = std::convert::Infallible;

    fn add_cross_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<(), Self::Error> {
        let out = self.0.entry(from).or_default();
        match out.iter_mut().find(|e| (e.0, e.1) == (to, kind)) {
            Some(e) => e.2 = weight,
            None => out.push((to, kind, weight)),
        }
        Ok(())
    }

    fn remove_cross_edges(&mut self, record: LayerRecord) -> usize {
        let mut n = self.0.remove(&record).map_or(0, |v| v.len());
        for out in self.0.values_mut() {
            let before = out.len();
            out.retain(|e| e.0 != record);
            n += before - out.len();
        }
        n
    }

    fn cross_edges_from(&self, from: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> {
        self.0.get(&from).cloned().unwrap_or_default()
    }
}

/// One observation to make: when, which tool, which episode.
struct Event {
    at: i64,
    tool: &'static str,
    episode: RecordId,
}

/// The three patterns' observations, in time order.
fn events() -> Vec<Event> {
    let mut out = Vec::new();
    let mut episode = 0u128;
    let mut next = || {
        episode += 1;
        RecordId::from_u128(episode)
    };
    // Structured: the i-th observation at i² minutes.
    for i in 0..20i64 {
        out.push(Event { at: T0 + i * i * 60, tool: "tool:grasp", episode: next() });
    }
    // Noise: exponential gaps with a mean of an hour.
    let mut rng = SplitMix64::new(11);
    let mut t = 0.0f64;
    for _ in 0..20 {
        t += -(1.0 - rng.uniform()).ln() * 3600.0;
        out.push(Event { at: T0 + t as i64, tool: "tool:wave", episode: next() });
    }
    // A small sample, also at random moments.
    for _ in 0..5 {
        t += -(1.0 - rng.uniform()).ln() * 3600.0;
        out.push(Event { at: T0 + t as i64, tool: "tool:nod", episode: next() });
    }
    out.sort_by_key(|e| e.at);
    out
}

fn observe(nac: &mut Nac, clock: &ManualClock, e: &Event) {
    clock.set(Timestamp::from_secs(e.at));
    let outcome = format!("{}:positive", e.tool);
    nac.observe(
        &Observation::new("tool", e.tool, "tool_result", &outcome, Valence::Positive).memory(e.episode),
    )
    .expect("a valid observation");
}

/// Everything observable of the concepts: name, category, provenance, count, confidence,
/// source episodes, properties, and the relationships.
fn snapshot(atl: &Atl) -> Vec<String> {
    let mut out: Vec<String> = atl
        .iter()
        .filter_map(|r| atl.concept(r.id()))
        .map(|c| {
            let rels = atl.find_relationships(c.meta.id, None, Direction::Outgoing, 100).unwrap_or_default();
            format!(
                "{} {} {:?} {} {} {:?} {:?} {:?}",
                c.name,
                c.category,
                c.provenance,
                c.reinforcement_count,
                c.confidence,
                c.source_episode_ids,
                c.properties,
                rels
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn structured_patterns_are_promoted_noise_rejected_small_samples_let_through() {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut nac = Nac::builder().clock(clock.shared()).build().expect("the default settings are valid");
    let events = events();
    for e in &events {
        observe(&mut nac, &clock, e);
    }
    let mut atl = Atl::builder().clock(clock.shared()).id_seed(3).build().unwrap();
    let mut links = Links::default();
    let mut promoter =
        SemanticPromoter::builder().clock(clock.shared()).gate(Arc::new(IpsGate::default())).build().unwrap();

    let candidates = nac.promotion_candidates(0.6, 3).unwrap();
    assert_eq!(candidates.len(), 3);
    // The small sample passes the gate because it is too small to judge, not on its timing.
    let nod = candidates.iter().find(|c| c.pattern_name.starts_with("tool:nod")).unwrap();
    let decision = maxim::maxim_core::RandomnessGate::admits(&IpsGate::default(), nod);
    assert!(decision.admitted && decision.reason.contains("too few"), "{}", decision.reason);
    let report = promoter.scan_with(&[&nac as &dyn PromotionSource], None, &mut atl, &mut links);
    assert!(report.failed.is_empty(), "{:?}", report.failed);

    // The gate rejected the noise, and said why.
    let rejected: Vec<_> = report.rejected_by(RejectedBy::Gate).collect();
    assert_eq!(rejected.len(), 1, "{report:#?}");
    assert_eq!(rejected[0].pattern, "tool:wave → tool:wave:positive");
    assert!(rejected[0].reason.contains("random"), "{}", rejected[0].reason);
    assert!(atl.iter().all(|r| !r.name().contains("wave")), "nothing of the noise reached the ATL");

    // The structured pattern and the small sample were promoted.
    let mut promoted: Vec<&str> = report.promoted.iter().map(|p| p.pattern.as_str()).collect();
    promoted.sort_unstable();
    assert_eq!(promoted, ["tool:grasp → tool:grasp:positive", "tool:nod → tool:nod:positive"]);
    let grasp = promoter.concept_of("causal_pattern", "tool:grasp → tool:grasp:positive").unwrap();
    let concept = atl.concept(grasp).unwrap();
    assert_eq!(
        (concept.category.as_str(), concept.provenance),
        ("causal_pattern", ConceptProvenance::EpisodicConsolidation)
    );
    assert_eq!(concept.reinforcement_count, 20, "one per episode");
    assert_eq!(concept.source_episode_ids.len(), 20);
    assert_eq!(
        concept.definition,
        "Pattern: tool:grasp → tool:grasp:positive. Causal: tool:grasp leads to tool:grasp:positive"
    );

    // CAUSES from the event to the outcome, with the link's confidence.
    let event = atl.iter().find(|r| r.name() == "tool:grasp" && r.category() == "event").unwrap().id();
    let causes = atl.find_relationships(event, Some("CAUSES"), Direction::Outgoing, 10).unwrap();
    assert_eq!(causes.len(), 1);
    assert_eq!(atl.concept(causes[0].target).unwrap().name, "tool:grasp:positive");
    // Two patterns, two events, two outcomes.
    assert_eq!(atl.len(), 6);

    // DERIVED_FROM to each of the 25 episodes.
    let derived = |links: &Links, id: RecordId| {
        links
            .cross_edges_from(LayerRecord::new(LayerKind::Atl, id))
            .iter()
            .filter(|e| e.1 == CrossEdgeKind::DerivedFrom && e.0.layer == LayerKind::Hippocampus)
            .count()
    };
    assert_eq!(derived(&links, grasp), 20);
    assert_eq!(links.count(), 25);

    // A second scan over the same evidence changes nothing.
    let (before, edges) = (snapshot(&atl), links.clone());
    let again = promoter.scan_with(&[&nac as &dyn PromotionSource], None, &mut atl, &mut links);
    assert!(again.is_quiet(), "{again:#?}");
    assert_eq!((again.unchanged.len(), again.rejected.len()), (2, 1));
    assert_eq!(snapshot(&atl), before);
    assert_eq!(links, edges);

    // New evidence on the schedule reinforces once, with one more edge.
    observe(
        &mut nac,
        &clock,
        &Event { at: T0 + 20 * 20 * 60, tool: "tool:grasp", episode: RecordId::from_u128(999) },
    );
    let more = promoter.scan_with(&[&nac as &dyn PromotionSource], None, &mut atl, &mut links);
    assert_eq!(more.reinforced.len(), 1, "{more:#?}");
    assert_eq!(more.reinforced[0].reinforcements, 1);
    assert_eq!(atl.concept(grasp).unwrap().reinforcement_count, 21);
    assert_eq!(derived(&links, grasp), 21);
}

/// §11's [run] vector, as maxim answers it: a link with four positive observations on
/// episodes m0..m3. The original made the concept with m0 (reinforcement 1, one source
/// episode, four DERIVED_FROM edges of weight 0.7) and on a second scan reinforced it five
/// times more and stacked four more edges (8). Here each episode is credited once, at the
/// first scan, and the second scan changes nothing.
#[test]
fn the_reference_vector_credits_each_episode_once() {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut nac = Nac::builder().clock(clock.shared()).build().expect("the default settings are valid");
    for m in 0..4u128 {
        clock.advance(std::time::Duration::from_secs(60));
        nac.observe(
            &Observation::new("tool", "tool:grasp", "tool_result", "tool:grasp:positive", Valence::Positive)
                .memory(RecordId::from_u128(m + 1)),
        )
        .unwrap();
    }
    let mut atl = Atl::builder().clock(clock.shared()).id_seed(4).build().unwrap();
    let mut links = Links::default();
    let mut promoter =
        SemanticPromoter::builder().clock(clock.shared()).gate(Arc::new(IpsGate::default())).build().unwrap();
    let first = promoter.scan_with(&[&nac as &dyn PromotionSource], None, &mut atl, &mut links);
    let id = first.promoted[0].concept;
    let concept = atl.concept(id).unwrap();
    assert_eq!(concept.name, "tool:grasp → tool:grasp:positive");
    assert_eq!(concept.reinforcement_count, 4);
    assert_eq!(concept.source_episode_ids, (1..=4).map(RecordId::from_u128).collect::<Vec<_>>());
    let edges = links.cross_edges_from(LayerRecord::new(LayerKind::Atl, id));
    assert_eq!(edges.len(), 4);
    assert!(edges.iter().all(|e| e.1 == CrossEdgeKind::DerivedFrom && (e.2 - 0.7).abs() < 1e-12));

    let second = promoter.scan_with(&[&nac as &dyn PromotionSource], None, &mut atl, &mut links);
    assert_eq!(second.unchanged[0].concept, id);
    assert_eq!(atl.concept(id).unwrap().reinforcement_count, 4);
    assert_eq!(links.cross_edges_from(LayerRecord::new(LayerKind::Atl, id)).len(), 4);
}

/// The recurring elements come from the real episodic layer: episodes captured in the
/// hippocampus, learned from by NAc under their ids, read back by the promoter through a
/// closure over `Hippocampus::peek` (which records no access).
#[test]
fn recurring_elements_of_hippocampus_episodes_become_atl_properties() {
    use maxim::hippocampus::{Episode, Hippocampus, NewEpisode};
    use maxim::maxim_core::Value;
    use maxim::promoter::EpisodeElements;

    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hippo = Hippocampus::builder().clock(clock.shared()).id_seed(8).build().unwrap();
    let mut nac = Nac::builder().clock(clock.shared()).build().expect("the default settings are valid");
    for i in 0..6 {
        clock.advance(std::time::Duration::from_secs(600));
        let mut e = NewEpisode::default();
        e.perception.detected_objects =
            if i < 4 { vec!["mug".into(), "table".into()] } else { vec!["box".into()] };
        e.action.tool_name = "grasp".into();
        e.context.active_goal = Some("make coffee".into());
        e.outcome.success = Some(i != 5);
        let id = hippo.capture(e).unwrap();
        nac.observe(
            &Observation::new("tool", "tool:grasp", "tool_result", "tool:grasp:positive", Valence::Positive)
                .memory(id),
        )
        .unwrap();
    }
    let read = |id: RecordId| -> Option<EpisodeElements> {
        match hippo.peek(id)? {
            Episode::Full(m) => Some(EpisodeElements {
                objects: m.perception.detected_objects.iter().map(ToString::to_string).collect(),
                tools: vec![m.action.tool_name.to_string()],
                goals: m.goal().map(str::to_owned).into_iter().collect(),
                outcome: m.outcome.success.map(|ok| if ok { "success" } else { "failure" }.to_owned()),
            }),
            Episode::Compressed(_) => None,
        }
    };
    let mut atl = Atl::builder().clock(clock.shared()).id_seed(5).build().unwrap();
    let mut links = Links::default();
    let mut promoter =
        SemanticPromoter::builder().clock(clock.shared()).gate(Arc::new(IpsGate::default())).build().unwrap();
    let report = promoter.scan_with(&[&nac as &dyn PromotionSource], Some(&read), &mut atl, &mut links);
    assert_eq!(report.promoted[0].properties_written, 4, "{report:#?}");
    let id = report.promoted[0].concept;
    let texts = |v: &[&str]| Value::List(v.iter().map(|s| Value::Text((*s).to_owned())).collect());
    assert_eq!(atl.property(id, "recurring_objects"), Some(&texts(&["mug", "table"])));
    assert_eq!(atl.property(id, "recurring_tools"), Some(&texts(&["grasp"])));
    assert_eq!(atl.property(id, "recurring_goals"), Some(&texts(&["make coffee"])));
    assert_eq!(atl.property(id, "typical_outcome"), Some(&Value::Text("success".into())));
    let again = promoter.scan_with(&[&nac as &dyn PromotionSource], Some(&read), &mut atl, &mut links);
    assert!(again.is_quiet());
}
