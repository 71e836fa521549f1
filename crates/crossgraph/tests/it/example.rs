//! The seed's example traversal and the depth, threshold, seed and direction rules of
//! cross-layer activation, on hand-built layers (`maxim_core::Graph` as each layer's graph).

use crossgraph::{CrossLayerGraph, KindSet, LayerGraphs};
use maxim_core::graph::{EdgeKind, EdgeMeta, Graph};
use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};

use crate::common::{ag, atl, graph, hip, params};

/// The example of seed 000 ("Example Traversal"): records and layers.
struct Example {
    failed: LayerRecord,
    similar: [LayerRecord; 2],
    reliability: LayerRecord,
    capabilities: LayerRecord,
    pattern: LayerRecord,
    circadian: LayerRecord,
    episodes: Graph,
    concepts: Graph,
    math: Graph,
    cross: CrossLayerGraph,
}

fn example() -> Example {
    let failed = hip(1);
    let similar = [hip(2), hip(3)];
    let reliability = atl(10);
    let capabilities = atl(11);
    let pattern = ag(20);
    let circadian = ag(21);
    // 1. Similar failure episodes, in the hippocampus's associative graph.
    let mut episodes = Graph::new();
    episodes.add_bidirectional(failed.id, similar[0].id, EdgeKind::Associates, 0.8).unwrap();
    episodes.add_bidirectional(failed.id, similar[1].id, EdgeKind::Associates, 0.6).unwrap();
    // 3. ATL: navigate_tool_reliability IS_A tool_capabilities (an ASSOCIATES edge labelled
    // IS_A, as the ATL stores relationships).
    let mut concepts = Graph::new();
    let is_a = Some(EdgeMeta::relation("IS_A").with_confidence(0.9));
    concepts.add_edge(reliability.id, capabilities.id, EdgeKind::Associates, 0.9, is_a).unwrap();
    // A dependency edge of the AG graph, which carries no activation.
    let mut math = Graph::new();
    math.add_edge(pattern.id, RecordId::from_u128(99), EdgeKind::Requires, 1.0, None).unwrap();
    let mut cross = graph();
    // 2. INSTANCE_OF: the episode (and its similar ones) are instances of the concept
    // (confidence 0.73 of the concept is its own; the extractor's edge weighs 1.0).
    cross.add_edge(failed, reliability, CrossEdgeKind::InstanceOf, 1.0).unwrap();
    cross.add_edge(similar[0], reliability, CrossEdgeKind::InstanceOf, 1.0).unwrap();
    // 4. The AG PATTERN (R² = 0.73, slope -0.02/day) statistically confirms the concept; the
    // promoter makes this edge from the pattern to the concept, weight = confidence.
    cross.add_edge(pattern, reliability, CrossEdgeKind::StatisticallyConfirms, 0.73).unwrap();
    // 5. The pattern correlates in time with the circadian record (phase 0.8, evening).
    let mut meta = crossgraph::Metadata::new();
    meta.insert("phase_coherence".into(), maxim_core::MetaValue::Number(0.8));
    cross.add_edge_with(pattern, circadian, CrossEdgeKind::TemporallyCorrelates, 0.8, meta).unwrap();
    Example {
        failed,
        similar,
        reliability,
        capabilities,
        pattern,
        circadian,
        episodes,
        concepts,
        math,
        cross,
    }
}

impl Example {
    fn layers(&self) -> LayerGraphs<'_> {
        LayerGraphs::new()
            .with(LayerKind::Hippocampus, &self.episodes)
            .with(LayerKind::Atl, &self.concepts)
            .with(LayerKind::AngularGyrus, &self.math)
    }
}

#[test]
fn the_seed_example_reaches_concept_category_pattern_and_circadian_record_in_order() {
    let ex = example();
    let act = ex.cross.activate(&[ex.failed], &ex.layers());
    // Step 1: the similar failure episodes, through the hippocampus's graph.
    assert_eq!(
        act.ranked(LayerKind::Hippocampus, None),
        vec![(ex.similar[0].id, 0.4), (ex.similar[1].id, 0.3)]
    );
    // Steps 2 to 5, in this order of activation.
    let ranked: Vec<(LayerRecord, f64)> =
        act.ranked_all(None).into_iter().filter(|(r, _)| r.layer != LayerKind::Hippocampus).collect();
    assert_eq!(
        ranked,
        vec![
            (ex.reliability, 0.5),
            (ex.capabilities, 0.5 * 0.5 * 0.9),
            (ex.pattern, 0.5 * 0.5 * 0.73),
            (ex.circadian, 0.5 * 0.5 * 0.73 * 0.5 * 0.8),
        ]
    );
    // Grouped by layer, as the seed returns it.
    let by_layer = act.by_layer(None);
    assert_eq!(
        by_layer.keys().copied().collect::<Vec<_>>(),
        [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus]
    );
    assert_eq!(
        by_layer[&LayerKind::AngularGyrus],
        vec![(ex.pattern.id, 0.5 * 0.5 * 0.73), (ex.circadian.id, 0.5 * 0.5 * 0.73 * 0.5 * 0.8)]
    );
    // The seed is not returned; the REQUIRES edge carried nothing.
    assert_eq!(act.get(ex.failed), None);
    assert_eq!(act.len(), 6);
    assert_eq!(ex.cross.stats().counters["activations"], 1);
}

#[test]
fn a_record_d_hops_away_is_returned_exactly_when_d_is_at_most_max_depth() {
    let ex = example();
    let layers = ex.layers();
    let reached = |depth| {
        let act = ex.cross.activate_with(&[ex.failed], &layers, &params(0.5, 0.01, depth));
        [ex.reliability, ex.capabilities, ex.pattern, ex.circadian].map(|r| act.get(r).is_some())
    };
    assert_eq!(reached(0), [false; 4]);
    assert_eq!(reached(1), [true, false, false, false]);
    assert_eq!(reached(2), [true, true, true, false]);
    assert_eq!(reached(3), [true; 4]);
}

#[test]
fn the_reference_vector_of_section_7_with_the_depth_fixed() {
    // episode -> concept (1.0) -> AG record (1.0): the original's depth 2 gave only the
    // concept and its depth 3 added the AG record; here depth 1 and depth 2 do.
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(atl(2), ag(3), CrossEdgeKind::Informs, 1.0).unwrap();
    let none = LayerGraphs::new();
    let one = g.activate_with(&[hip(1)], &none, &params(0.5, 0.01, 1)).by_layer(None);
    assert_eq!(one.len(), 1);
    assert_eq!(one[&LayerKind::Atl], vec![(atl(2).id, 0.5)]);
    let two = g.activate_with(&[hip(1)], &none, &params(0.5, 0.01, 2)).by_layer(None);
    assert_eq!(two[&LayerKind::Atl], vec![(atl(2).id, 0.5)]);
    assert_eq!(two[&LayerKind::AngularGyrus], vec![(ag(3).id, 0.25)]);
    let from = g.activate_from(LayerKind::Hippocampus, &[hip(1).id], &none);
    assert_eq!(from.len(), 2);
}

#[test]
fn outgoing_only_reproduces_the_originals_reach_and_misses_the_confirming_pattern() {
    let ex = example();
    let mut p = params(0.5, 0.01, 3);
    p.backward = KindSet::NONE;
    let act = ex.cross.activate_with(&[ex.failed], &ex.layers(), &p);
    assert!(act.get(ex.reliability).is_some() && act.get(ex.capabilities).is_some());
    assert_eq!(act.get(ex.pattern), None, "STATISTICALLY_CONFIRMS points from the pattern to the concept");
    // Only the confirming type backwards is enough for the seed's traversal.
    p.backward = KindSet::of(&[CrossEdgeKind::StatisticallyConfirms]);
    let act = ex.cross.activate_with(&[ex.failed], &ex.layers(), &p);
    assert_eq!(act.get(ex.circadian), Some(0.5 * 0.5 * 0.73 * 0.5 * 0.8));
    // And no type forwards reaches only what the layers' graphs reach.
    p.forward = KindSet::NONE;
    p.backward = KindSet::NONE;
    let act = ex.cross.activate_with(&[ex.failed], &ex.layers(), &p);
    assert_eq!(act.len(), 2);
}

#[test]
fn the_threshold_keeps_an_equal_value_and_drops_a_smaller_one() {
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.5).unwrap(); // 0.25
    g.add_edge(hip(1), atl(3), CrossEdgeKind::InstanceOf, 0.4).unwrap(); // 0.2
    let none = LayerGraphs::new();
    let act = g.activate_with(&[hip(1)], &none, &params(0.5, 0.25, 3));
    assert_eq!(act.ranked_all(None), vec![(atl(2), 0.25)]);
    // A record below the threshold does not spread either.
    g.add_edge(atl(3), ag(4), CrossEdgeKind::Informs, 1.0).unwrap();
    let act = g.activate_with(&[hip(1)], &none, &params(0.5, 0.15, 3));
    assert_eq!(act.get(ag(4)), None);
    assert_eq!(act.get(atl(3)), Some(0.2));
}

#[test]
fn paths_combine_by_max_and_an_improved_record_spreads_again() {
    // hip1 -> atl2 (0.2) -> ag3 (1.0); hip1 -> ag4 (1.0) -> atl2 (1.0): atl2 is first reached
    // at 0.1, improved to 0.25 at depth 2, and must pass the better value on to ag3.
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.2).unwrap();
    g.add_edge(atl(2), ag(3), CrossEdgeKind::Informs, 1.0).unwrap();
    g.add_edge(hip(1), ag(4), CrossEdgeKind::Informs, 1.0).unwrap();
    g.add_edge(ag(4), atl(2), CrossEdgeKind::Informs, 1.0).unwrap();
    let mut p = params(0.5, 0.0, 3);
    p.backward = KindSet::NONE;
    let act = g.activate_with(&[hip(1)], &LayerGraphs::new(), &p);
    assert_eq!(act.get(atl(2)), Some(0.25));
    assert_eq!(act.get(ag(3)), Some(0.125));
    assert_eq!(act.get(ag(4)), Some(0.5));
    // Never a sum: two equal paths give the value of one.
    g.add_edge(hip(1), ag(5), CrossEdgeKind::Informs, 1.0).unwrap();
    g.add_edge(ag(5), atl(2), CrossEdgeKind::Informs, 1.0).unwrap();
    let act = g.activate_with(&[hip(1)], &LayerGraphs::new(), &p);
    assert_eq!(act.get(atl(2)), Some(0.25));
}

#[test]
fn seeds_in_several_layers_are_never_returned_and_unknown_seeds_reach_nothing() {
    let ex = example();
    let act = ex.cross.activate(&[ex.failed, ex.pattern, ex.failed], &ex.layers());
    assert_eq!(act.get(ex.failed), None);
    assert_eq!(act.get(ex.pattern), None);
    // The circadian record is one hop from the pattern seed now.
    assert_eq!(act.get(ex.circadian), Some(0.4));
    let act = ex.cross.activate(&[atl(12345)], &ex.layers());
    assert!(act.is_empty());
    assert!(ex.cross.activate(&[], &ex.layers()).is_empty());
}

#[test]
fn the_parallel_path_returns_what_the_sequential_one_returns() {
    let ex = example();
    let layers = ex.layers();
    for depth in 0..5 {
        let mut seq = params(0.5, 0.0, depth);
        seq.parallel_min_frontier = usize::MAX;
        let mut par = seq;
        par.parallel_min_frontier = 1;
        let seeds = [ex.failed, ex.similar[1]];
        assert_eq!(
            ex.cross.activate_with(&seeds, &layers, &seq),
            ex.cross.activate_with(&seeds, &layers, &par)
        );
    }
}

/// A spread whose last level brings tens of thousands of neighbours: on rayon that level is
/// merged by partition (many partitions here), sequentially it is offered record by record.
/// Both give the same activations, and so does the default switch between them.
#[test]
fn a_large_last_level_merged_by_partition_matches_the_sequential_spread() {
    use maxim_core::SplitMix64;

    const N: u64 = 2_000;
    let layers_of = [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus];
    let id = |l: usize, i: u64| RecordId::from_u128(((l as u128 + 1) << 64) | u128::from(i));
    let mut rng = SplitMix64::new(7);
    let graphs: Vec<Graph> = (0..3)
        .map(|l| {
            let mut g = Graph::new();
            for s in 0..N {
                for _ in 0..4 {
                    let t = rng.below(N);
                    if t != s {
                        g.add_edge(id(l, s), id(l, t), EdgeKind::Associates, 0.2 + 0.8 * rng.uniform(), None)
                            .unwrap();
                    }
                }
            }
            g
        })
        .collect();
    let mut cross = CrossLayerGraph::builder().build().unwrap();
    for _ in 0..20_000 {
        let a = rng.below(3) as usize;
        let b = (a + 1 + rng.below(2) as usize) % 3;
        let from = LayerRecord::new(layers_of[a], id(a, rng.below(N)));
        let to = LayerRecord::new(layers_of[b], id(b, rng.below(N)));
        let kind = crossgraph::ALL_KINDS[rng.below(7) as usize];
        cross.add_edge(from, to, kind, 0.2 + 0.8 * rng.uniform()).unwrap();
    }
    let layers = LayerGraphs::new()
        .with(layers_of[0], &graphs[0])
        .with(layers_of[1], &graphs[1])
        .with(layers_of[2], &graphs[2]);
    let seeds: Vec<LayerRecord> =
        (0..64).map(|_| LayerRecord::new(LayerKind::Hippocampus, id(0, rng.below(N)))).collect();
    for (threshold, depth) in [(0.0, 3), (0.001, 3), (0.0, 2), (0.01, 4)] {
        let mut seq = params(0.5, threshold, depth);
        seq.parallel_min_frontier = usize::MAX;
        let mut par = seq;
        par.parallel_min_frontier = 1;
        let mut default = seq;
        default.parallel_min_frontier = crossgraph::PARALLEL_MIN_FRONTIER;
        let expected = cross.activate_with(&seeds, &layers, &seq);
        assert!(expected.len() > 1_000, "the spread reaches {} records", expected.len());
        assert_eq!(
            cross.activate_with(&seeds, &layers, &par),
            expected,
            "threshold {threshold}, depth {depth}"
        );
        assert_eq!(
            cross.activate_with(&seeds, &layers, &default),
            expected,
            "threshold {threshold}, depth {depth}"
        );
        assert!(seeds.iter().all(|&s| expected.get(s).is_none()));
    }
}
