//! Bad input gets a typed error and changes nothing.

use crossgraph::{CrossGraphConfig, CrossLayerGraph, Error, Metadata, Op};
use maxim_core::{CrossEdgeKind, MetaValue};

use crate::common::{ag, atl, fingerprint, graph, hip};

fn populated() -> CrossLayerGraph {
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.5).unwrap();
    g.add_edge(ag(3), atl(2), CrossEdgeKind::StatisticallyConfirms, 0.7).unwrap();
    g
}

#[test]
fn nan_infinite_negative_and_too_large_weights_are_refused() {
    let mut g = populated();
    let before = fingerprint(&g);
    for w in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1, 1.000_001, 7.0] {
        for (from, to) in [(hip(1), atl(2)), (hip(5), atl(6))] {
            let err = g.add_edge(from, to, CrossEdgeKind::InstanceOf, w).unwrap_err();
            assert!(
                matches!(err, Error::Core(maxim_core::Error::OutOfRange { field: "weight", .. })),
                "{w}: {err:?}"
            );
        }
    }
    assert_eq!(fingerprint(&g), before);
    assert_eq!(g.record_count(), 3);
    // -0.0 is zero, stored as +0.0.
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, -0.0).unwrap();
    assert_eq!(g.edge(hip(1), atl(2), CrossEdgeKind::InstanceOf).unwrap().weight.to_bits(), 0);
}

#[test]
fn self_loops_are_refused_except_temporal_correlation() {
    let mut g = populated();
    let before = fingerprint(&g);
    for kind in crossgraph::ALL_KINDS {
        let result = g.add_edge(atl(2), atl(2), kind, 0.9);
        if kind == CrossEdgeKind::TemporallyCorrelates {
            result.unwrap();
        } else {
            assert!(
                matches!(result, Err(Error::SelfLoop { record, kind: k }) if record == atl(2) && k == kind)
            );
        }
    }
    assert_eq!(g.edge_count(), 3);
    g.remove_edge(atl(2), atl(2), CrossEdgeKind::TemporallyCorrelates).unwrap().unwrap();
    assert_eq!(fingerprint(&g), before);
    // The same id in two layers is two records.
    assert!(g.add_edge(hip(2), atl(2), CrossEdgeKind::InstanceOf, 1.0).is_ok());
}

#[test]
fn bad_metadata_is_refused_whole() {
    let mut g = populated();
    let before = fingerprint(&g);
    let bad: [Metadata; 3] = [
        [("r2".to_owned(), MetaValue::Number(f64::NAN))].into(),
        [("ok".to_owned(), MetaValue::Count(1)), (String::new(), MetaValue::Flag(true))].into(),
        [("k".repeat(257), MetaValue::Flag(true))].into(),
    ];
    for m in bad {
        assert!(g.add_edge_with(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.9, m.clone()).is_err());
        assert!(g.add_edge_with(hip(7), atl(8), CrossEdgeKind::InstanceOf, 0.9, m).is_err());
    }
    assert_eq!(fingerprint(&g), before);
    assert_eq!(g.metadata(hip(1), atl(2), CrossEdgeKind::InstanceOf), None);
}

#[test]
fn an_invalid_op_is_refused_by_apply() {
    let mut g = populated();
    let before = fingerprint(&g);
    let op = Op::Link {
        from: hip(1),
        to: atl(2),
        kind: CrossEdgeKind::InstanceOf,
        weight: f64::NAN,
        metadata: None,
    };
    assert!(g.apply(op).is_err());
    let op = Op::Link { from: hip(1), to: hip(1), kind: CrossEdgeKind::Informs, weight: 0.5, metadata: None };
    assert!(g.apply(op).is_err());
    assert_eq!(fingerprint(&g), before);
    assert_eq!(g.stats().counters["edges_added"], 2);
}

#[test]
fn invalid_settings_are_refused_by_the_builder() {
    for (decay, threshold) in [(0.0, 0.01), (1.5, 0.01), (f64::NAN, 0.01), (0.5, -0.1), (0.5, f64::NAN)] {
        let mut config = CrossGraphConfig::default();
        config.decay = decay;
        config.threshold = threshold;
        assert!(config.validate().is_err());
        assert!(matches!(
            CrossLayerGraph::builder().config(config).build(),
            Err(Error::Core(maxim_core::Error::OutOfRange { .. }))
        ));
    }
}

#[test]
fn errors_reach_the_core_type_unwrapped_or_as_the_layer_error() {
    let mut g = graph();
    let err = g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, f64::NAN).unwrap_err();
    assert!(matches!(maxim_core::Error::from(err), maxim_core::Error::OutOfRange { .. }));
    let err = g.add_edge(hip(1), hip(1), CrossEdgeKind::InstanceOf, 0.5).unwrap_err();
    assert!(!err.is_not_found());
    assert!(matches!(maxim_core::Error::from(err), maxim_core::Error::Layer { layer: "crossgraph", .. }));
    assert!(matches!(crossgraph::parse_kind("IS_A"), Err(Error::UnknownEdgeKind { name }) if name == "IS_A"));
}
