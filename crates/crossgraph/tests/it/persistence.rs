//! Snapshots: round trips, refused files (unknown edge types among them), the ownership
//! guard and recovery from the backup.

use crossgraph::{CrossLayerGraph, Error, LayerGraphs, Metadata, SCHEMA_VERSION, SNAPSHOT_KIND};
use maxim_core::{CorruptReason, CrossEdgeKind, LoadOutcome, MetaValue, RecordId, codec};
use serde::Serialize;

use crate::common::{ag, atl, fingerprint, graph, hip};

fn populated() -> CrossLayerGraph {
    let mut g = graph();
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.add_edge(atl(2), hip(1), CrossEdgeKind::DerivedFrom, 0.64).unwrap();
    let meta: Metadata = [("field".to_owned(), MetaValue::Text("success_rate".into()))].into();
    g.add_edge_with(ag(3), atl(2), CrossEdgeKind::Quantifies, 1.0, meta).unwrap();
    let meta: Metadata = [("phase_coherence".to_owned(), MetaValue::Number(0.83))].into();
    g.add_edge_with(atl(2), atl(2), CrossEdgeKind::TemporallyCorrelates, 0.83, meta).unwrap();
    g.add_edge(hip(4), atl(2), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    g.remove_record(hip(4)).unwrap();
    g
}

#[test]
fn a_saved_graph_loads_back_whole() {
    let g = populated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossgraph.snap");
    g.save(&path).unwrap();
    let mut back = graph();
    back.add_edge(hip(9), atl(9), CrossEdgeKind::Informs, 0.1).unwrap(); // replaced by the load
    back.load(&path).unwrap();
    assert_eq!(fingerprint(&back), fingerprint(&g));
    assert_eq!(back.stats(), g.stats());
    let none = LayerGraphs::new();
    assert_eq!(back.activate(&[hip(1)], &none), g.activate(&[hip(1)], &none));
    // The loaded graph owns its file: it may save over it.
    back.save(&path).unwrap();
    assert_eq!(codec::inspect(&path).unwrap().kind, SNAPSHOT_KIND);
}

/// The snapshot layout, forged by hand.
#[derive(Serialize, Clone)]
struct Forged {
    schema: u16,
    journal_seq: u64,
    layers: Vec<String>,
    kinds: Vec<String>,
    records: Vec<(u8, RecordId)>,
    edges: Vec<(u32, u32, u8, f64)>,
    metadata: Vec<(u32, Metadata)>,
    counters: Vec<(String, u64)>,
}

fn forged() -> Forged {
    Forged {
        schema: SCHEMA_VERSION,
        journal_seq: 0,
        layers: vec!["hippocampus".into(), "atl".into()],
        kinds: vec!["INSTANCE_OF".into(), "DERIVED_FROM".into()],
        records: vec![(0, hip(1).id), (1, atl(2).id)],
        edges: vec![(0, 1, 0, 1.0), (1, 0, 1, 0.5)],
        metadata: vec![],
        counters: vec![("edges_added".into(), 2)],
    }
}

fn load_forged(f: &Forged) -> (CrossLayerGraph, Result<(), Error>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossgraph.snap");
    codec::save(&path, SNAPSHOT_KIND, f).unwrap();
    let mut g = populated();
    let result = g.load(&path);
    (g, result)
}

#[test]
fn a_forged_file_that_holds_loads() {
    let (g, result) = load_forged(&forged());
    result.unwrap();
    assert_eq!(g.edge_count(), 2);
    assert_eq!(g.stats().counters["edges_added"], 2);
}

#[test]
fn unknown_edge_types_and_other_bad_payloads_are_refused_and_change_nothing() {
    let expected = fingerprint(&populated());
    let mut cases: Vec<(&str, Forged)> = Vec::new();
    let mut f = forged();
    f.kinds[1] = "CORRELATES_WITH".into();
    cases.push(("CORRELATES_WITH", f));
    let mut f = forged();
    f.layers[1] = "cortex".into();
    cases.push(("cortex", f));
    let mut f = forged();
    f.edges[0].3 = f64::NAN;
    cases.push(("weight", f));
    let mut f = forged();
    f.edges[0].3 = 1.5;
    cases.push(("weight", f));
    let mut f = forged();
    f.edges[0].1 = 0; // a self-loop of INSTANCE_OF
    cases.push(("itself", f));
    let mut f = forged();
    f.edges.push((0, 1, 0, 0.3));
    cases.push(("twice", f));
    let mut f = forged();
    f.edges[1].0 = 7;
    cases.push(("source 7", f));
    let mut f = forged();
    f.edges[1].2 = 5;
    cases.push(("type 5", f));
    let mut f = forged();
    f.records[1].0 = 4;
    cases.push(("layer 4", f));
    let mut f = forged();
    f.records.push((0, hip(1).id));
    cases.push(("twice", f));
    let mut f = forged();
    f.records.push((0, hip(77).id));
    cases.push(("no edge", f));
    let mut f = forged();
    f.metadata.push((9, Metadata::new()));
    cases.push(("edge 9", f));
    let mut f = forged();
    f.metadata.push((0, [("x".to_owned(), MetaValue::Number(f64::INFINITY))].into()));
    cases.push(("metadata number", f));
    for (needle, f) in cases {
        let (g, result) = load_forged(&f);
        match result {
            Err(Error::Core(maxim_core::Error::Corrupt { reason: CorruptReason::Payload(msg), .. })) => {
                assert!(msg.contains(needle), "{needle}: {msg}");
            }
            other => panic!("{needle}: expected a corrupt payload, got {other:?}"),
        }
        assert_eq!(fingerprint(&g), expected, "{needle}: the graph changed");
    }
    let mut f = forged();
    f.schema = 2;
    let (g, result) = load_forged(&f);
    assert!(matches!(result, Err(Error::Core(maxim_core::Error::UnsupportedVersion { found: 2, .. }))));
    assert_eq!(fingerprint(&g), expected);
}

#[test]
fn a_damaged_file_is_refused_and_kept_aside() {
    let g = populated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossgraph.snap");
    g.save(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let mut other = graph();
    other.add_edge(hip(5), atl(6), CrossEdgeKind::InstanceOf, 0.5).unwrap();
    let before = fingerprint(&other);
    let err = other.load(&path).unwrap_err();
    assert!(matches!(err, Error::Core(maxim_core::Error::Corrupt { kept_aside: Some(_), .. })), "{err:?}");
    assert_eq!(fingerprint(&other), before);
    let wrong = dir.path().join("atl.snap");
    codec::save(&wrong, "atl", &1u8).unwrap();
    assert!(matches!(other.load(&wrong), Err(Error::Core(maxim_core::Error::WrongKind { .. }))));
}

#[test]
fn a_graph_saves_only_over_files_it_created_or_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossgraph.snap");
    populated().save(&path).unwrap();
    let stranger = graph();
    assert!(matches!(stranger.save(&path), Err(Error::Core(maxim_core::Error::OverwriteRefused { .. }))));
    let mut back = graph();
    back.load(&path).unwrap();
    assert_eq!(back.edge_count(), 4, "the refused save wrote nothing");
    stranger.allow_overwrite(true);
    stranger.save(&path).unwrap();
    assert!(stranger.file_claims().owns(&path));
}

#[test]
fn recovery_falls_back_to_the_backup_and_a_missing_file_is_a_fresh_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossgraph.snap");
    let mut g = graph();
    assert!(matches!(g.load_with_recovery(&path).unwrap(), LoadOutcome::Missing));
    let first = populated();
    first.save(&path).unwrap();
    let mut second = populated();
    second.allow_overwrite(true);
    second.add_edge(hip(8), atl(8), CrossEdgeKind::InstanceOf, 0.5).unwrap();
    second.save(&path).unwrap();
    std::fs::write(&path, b"torn").unwrap();
    match g.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { .. } => {}
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(fingerprint(&g), fingerprint(&first));
    g.save(&path).unwrap();
    let mut again = graph();
    assert!(matches!(again.load_with_recovery(&path).unwrap(), LoadOutcome::Loaded));
}
