//! Adding, updating, querying and removing edges; the `CrossLinks` contract; stats; the
//! dangling check.

use std::path::Path;

use crossgraph::{Applied, CrossEdge, EdgeInsert, Metadata, Op};
use maxim_core::{
    ConsolidationReport, CrossEdgeKind, CrossLinks, GraphView, LayerKind, LayerRecord, LayerStats, LayerView,
    MetaValue, RecordId, RecordMeta,
};

use crate::common::{ag, atl, graph, hip};

#[test]
fn the_same_ends_and_type_update_instead_of_stacking() {
    let mut g = graph();
    assert_eq!(g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.3).unwrap(), EdgeInsert::Added);
    for w in [0.4, 0.9, 1.0] {
        let previous = g.edge(hip(1), atl(2), CrossEdgeKind::InstanceOf).unwrap().weight;
        assert_eq!(
            g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, w).unwrap(),
            EdgeInsert::Updated { previous_weight: previous }
        );
    }
    assert_eq!(g.edge_count(), 1);
    assert_eq!(g.linked(hip(1), None, None)[0].weight, 1.0);
    // Another type, or the other direction, is another edge.
    g.add_edge(hip(1), atl(2), CrossEdgeKind::Informs, 0.5).unwrap();
    g.add_edge(atl(2), hip(1), CrossEdgeKind::DerivedFrom, 0.5).unwrap();
    assert_eq!(g.edge_count(), 3);
    let stats = g.stats();
    assert_eq!((stats.edges, stats.records, stats.source_records, stats.target_records), (3, 2, 2, 2));
    assert_eq!(stats.counters["edges_added"], 3);
    assert_eq!(stats.counters["edges_updated"], 3);
    assert_eq!(stats.edges_by_kind["INSTANCE_OF"], 1);
    assert_eq!(stats.records_by_layer["atl"], 1);
}

#[test]
fn metadata_merges_key_by_key_and_goes_with_its_edge() {
    let mut g = graph();
    let m = |pairs: &[(&str, MetaValue)]| -> Metadata {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    };
    g.add_edge_with(
        ag(1),
        atl(2),
        CrossEdgeKind::Quantifies,
        1.0,
        m(&[("field", MetaValue::Text("rate".into()))]),
    )
    .unwrap();
    g.add_edge_with(ag(1), atl(2), CrossEdgeKind::Quantifies, 0.9, m(&[("n", MetaValue::Count(3))])).unwrap();
    g.add_edge(ag(1), atl(2), CrossEdgeKind::Quantifies, 0.8).unwrap();
    let got = g.metadata(ag(1), atl(2), CrossEdgeKind::Quantifies).unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got["field"], MetaValue::Text("rate".into()));
    g.add_edge_with(ag(1), atl(2), CrossEdgeKind::Quantifies, 0.8, m(&[("n", MetaValue::Count(4))])).unwrap();
    assert_eq!(g.metadata(ag(1), atl(2), CrossEdgeKind::Quantifies).unwrap()["n"], MetaValue::Count(4));
    // Empty metadata is no metadata.
    g.add_edge_with(ag(1), atl(3), CrossEdgeKind::Quantifies, 0.8, Metadata::new()).unwrap();
    assert_eq!(g.metadata(ag(1), atl(3), CrossEdgeKind::Quantifies), None);
    // Removing the edge removes its metadata; a new edge between the same records starts bare.
    assert!(g.remove_edge(ag(1), atl(2), CrossEdgeKind::Quantifies).unwrap().is_some());
    g.add_edge(ag(1), atl(2), CrossEdgeKind::Quantifies, 0.5).unwrap();
    assert_eq!(g.metadata(ag(1), atl(2), CrossEdgeKind::Quantifies), None);
}

#[test]
fn linked_and_incoming_filter_by_layer_and_type_in_a_stable_order() {
    let mut g = graph();
    let c = atl(100);
    for i in (1..=5).rev() {
        g.add_edge(hip(i), c, CrossEdgeKind::InstanceOf, 1.0).unwrap();
        g.add_edge(c, hip(i), CrossEdgeKind::DerivedFrom, 0.5).unwrap();
    }
    g.add_edge(ag(7), c, CrossEdgeKind::StatisticallyConfirms, 0.7).unwrap();
    g.add_edge(ag(8), c, CrossEdgeKind::Quantifies, 1.0).unwrap();
    g.add_edge(c, c, CrossEdgeKind::TemporallyCorrelates, 0.9).unwrap();
    let incoming = g.incoming(c, None, None);
    assert_eq!(incoming.len(), 8);
    assert!(incoming.windows(2).all(|w| (w[0].from, w[0].kind) <= (w[1].from, w[1].kind)));
    let from_ag = g.incoming(c, Some(LayerKind::AngularGyrus), None);
    assert_eq!(from_ag.iter().map(|e| e.from).collect::<Vec<_>>(), [ag(7), ag(8)]);
    assert_eq!(g.incoming(c, Some(LayerKind::AngularGyrus), Some(CrossEdgeKind::Quantifies)).len(), 1);
    assert_eq!(g.incoming(c, Some(LayerKind::Cerebellum), None), []);
    let linked = g.linked(c, Some(LayerKind::Hippocampus), Some(CrossEdgeKind::DerivedFrom));
    assert_eq!(linked.iter().map(|e| e.to).collect::<Vec<_>>(), (1..=5).map(hip).collect::<Vec<_>>());
    assert_eq!(
        g.linked(c, Some(LayerKind::Atl), None),
        [CrossEdge { from: c, to: c, kind: CrossEdgeKind::TemporallyCorrelates, weight: 0.9 }]
    );
    assert_eq!((g.out_degree(c), g.in_degree(c)), (6, 8));
    assert_eq!(g.linked(atl(999), None, None), []);
}

#[test]
fn remove_record_takes_every_edge_touching_it_and_frees_records_left_bare() {
    let mut g = graph();
    let c = atl(100);
    g.add_edge(hip(1), c, CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(c, hip(1), CrossEdgeKind::DerivedFrom, 0.5).unwrap();
    g.add_edge(hip(2), c, CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(c, c, CrossEdgeKind::TemporallyCorrelates, 0.9).unwrap();
    g.add_edge(hip(2), ag(3), CrossEdgeKind::Informs, 0.2).unwrap();
    assert_eq!(g.remove_record(c).unwrap(), 4);
    assert_eq!(g.edge_count(), 1);
    assert!(!g.contains_record(c) && !g.contains_record(hip(1)));
    assert_eq!(g.record_count(), 2);
    assert_eq!(g.remove_record(c).unwrap(), 0, "a record without edges is not an error");
    assert_eq!(g.remove_edge(hip(2), ag(3), CrossEdgeKind::Informs).unwrap().map(|e| e.weight), Some(0.2));
    assert!(g.is_empty() && g.record_count() == 0);
    assert_eq!(g.remove_edge(hip(2), ag(3), CrossEdgeKind::Informs).unwrap(), None);
    let stats = g.stats();
    assert_eq!(stats.counters["edges_removed"], 5);
    assert_eq!(stats.counters["records_removed"], 1);
}

#[test]
fn apply_replays_what_the_direct_calls_did() {
    let ops = [
        Op::Link { from: hip(1), to: atl(2), kind: CrossEdgeKind::InstanceOf, weight: 0.5, metadata: None },
        Op::Link { from: hip(1), to: atl(2), kind: CrossEdgeKind::InstanceOf, weight: 0.7, metadata: None },
        Op::Link { from: ag(3), to: atl(2), kind: CrossEdgeKind::Quantifies, weight: 1.0, metadata: None },
        Op::Unlink { from: ag(3), to: atl(2), kind: CrossEdgeKind::Quantifies },
        Op::RemoveRecord { record: hip(9) },
    ];
    let mut g = graph();
    let applied: Vec<Applied> = ops.iter().cloned().map(|op| g.apply(op).unwrap()).collect();
    assert_eq!(applied[1], Applied::Linked(EdgeInsert::Updated { previous_weight: 0.5 }));
    assert!(matches!(applied[3], Applied::Unlinked(Some(_))));
    assert_eq!(applied[4], Applied::Removed { edges: 0 });
    assert_eq!(g.linked(hip(1), None, None)[0].weight, 0.7);
    assert_eq!(g.edge_count(), 1);
}

#[test]
fn the_cross_links_contract_is_the_graph() {
    fn promote<C: CrossLinks>(
        links: &mut C,
        concept: LayerRecord,
        episodes: &[LayerRecord],
    ) -> Result<(), C::Error> {
        for &e in episodes {
            links.add_cross_edge(concept, e, CrossEdgeKind::DerivedFrom, 0.8)?;
            links.add_cross_edge(concept, e, CrossEdgeKind::DerivedFrom, 0.9)?;
        }
        Ok(())
    }
    let mut g = graph();
    promote(&mut g, atl(1), &[hip(2), hip(3)]).unwrap();
    assert_eq!(
        CrossLinks::cross_edges_from(&g, atl(1)),
        vec![(hip(2), CrossEdgeKind::DerivedFrom, 0.9), (hip(3), CrossEdgeKind::DerivedFrom, 0.9)]
    );
    assert!(CrossLinks::add_cross_edge(&mut g, atl(1), atl(1), CrossEdgeKind::DerivedFrom, 0.9).is_err());
    assert_eq!(CrossLinks::remove_cross_edges(&mut g, hip(2)), 1);
    assert_eq!(g.edge_count(), 1);
}

/// A layer that holds a fixed set of ids (enough of `LayerView` for the dangling check).
struct Holding {
    name: &'static str,
    ids: Vec<RecordId>,
    graph: maxim_core::graph::Graph,
}

impl LayerView for Holding {
    fn layer_name(&self) -> &'static str {
        self.name
    }
    fn record_count(&self) -> usize {
        self.ids.len()
    }
    fn contains(&self, id: RecordId) -> bool {
        self.ids.contains(&id)
    }
    fn record_meta(&self, _id: RecordId) -> Option<&RecordMeta> {
        None
    }
    fn describe(&self, _id: RecordId) -> Option<String> {
        None
    }
    fn record_ids(&self) -> Vec<RecordId> {
        self.ids.clone()
    }
    fn remove_by_id(&mut self, id: RecordId) -> maxim_core::Result<()> {
        Err(maxim_core::Error::NotFound { id })
    }
    fn layer_stats(&self) -> LayerStats {
        LayerStats::default()
    }
    fn graph_view(&self) -> &dyn GraphView {
        &self.graph
    }
    fn save_to(&self, _path: &Path) -> maxim_core::Result<()> {
        Ok(())
    }
    fn load_from(&mut self, _path: &Path) -> maxim_core::Result<()> {
        Ok(())
    }
    fn consolidate_layer(&mut self) -> maxim_core::Result<ConsolidationReport> {
        Ok(ConsolidationReport::default())
    }
    fn touch_ids(&mut self, _ids: &[RecordId]) -> usize {
        0
    }
}

#[test]
fn dangling_reports_records_no_layer_holds() {
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(hip(3), atl(2), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(ag(4), atl(2), CrossEdgeKind::Quantifies, 1.0).unwrap();
    let episodes = Holding {
        name: "hippocampus",
        ids: vec![hip(1).id, atl(2).id],
        graph: maxim_core::graph::Graph::new(),
    };
    let concepts = Holding { name: "atl", ids: vec![atl(2).id], graph: maxim_core::graph::Graph::new() };
    // hip(3) is missing from its layer; ag(4)'s layer was not given.
    assert_eq!(g.dangling_in(&[&episodes, &concepts]), vec![hip(3), ag(4)]);
    assert_eq!(g.dangling_in(&[]), vec![hip(1), hip(3), atl(2), ag(4)]);
    assert_eq!(g.dangling(|r| r.layer != LayerKind::Hippocampus), vec![hip(1), hip(3)]);
}
