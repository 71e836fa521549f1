//! The graph opened on a directory: every write journaled, replayed on the next open, and
//! compacted by a checkpoint.

use crossgraph::{CrossLayerGraph, Metadata};
use maxim_core::journal::SyncPolicy;
use maxim_core::{CrossEdgeKind, MetaValue};

use crate::common::{ag, atl, fingerprint, hip};

fn open(dir: &std::path::Path) -> CrossLayerGraph {
    CrossLayerGraph::builder().sync_policy(SyncPolicy::Always).open(dir).expect("the directory opens")
}

/// Writes of every kind: adds, an update with metadata, an unlink, a record removal.
fn write_some(g: &mut CrossLayerGraph, base: u128) {
    for i in 0..20 {
        g.add_edge(hip(base + i), atl(base + i % 3), CrossEdgeKind::InstanceOf, 1.0).unwrap();
    }
    let meta: Metadata = [("phase_coherence".to_owned(), MetaValue::Number(0.8))].into();
    g.add_edge_with(ag(base), atl(base), CrossEdgeKind::StatisticallyConfirms, 0.4, meta).unwrap();
    g.add_edge(ag(base), atl(base), CrossEdgeKind::StatisticallyConfirms, 0.7).unwrap();
    assert!(g.remove_edge(hip(base + 1), atl(base + 1), CrossEdgeKind::InstanceOf).unwrap().is_some());
    assert_eq!(g.remove_record(hip(base + 2)).unwrap(), 1);
    // No-ops are not journaled but still answer.
    assert_eq!(g.remove_record(hip(base + 999)).unwrap(), 0);
}

#[test]
fn a_reopened_directory_holds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    assert!(g.is_journaled());
    write_some(&mut g, 0);
    let expected = fingerprint(&g);
    drop(g);
    let back = open(dir.path());
    assert_eq!(fingerprint(&back), expected);
    assert_eq!(back.stats().counters["edges_added"], 21);
}

#[test]
fn a_checkpoint_compacts_and_later_writes_follow_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    write_some(&mut g, 0);
    g.checkpoint().unwrap();
    let journal = maxim_core::journal::journal_path(dir.path(), crossgraph::SNAPSHOT_KIND);
    let compacted = std::fs::metadata(&journal).unwrap().len();
    write_some(&mut g, 100);
    assert!(std::fs::metadata(&journal).unwrap().len() > compacted);
    g.sync().unwrap();
    let expected = fingerprint(&g);
    drop(g);
    let mut back = open(dir.path());
    assert_eq!(fingerprint(&back), expected);
    // Again after a second checkpoint, with nothing left to replay.
    back.checkpoint().unwrap();
    drop(back);
    assert_eq!(fingerprint(&open(dir.path())), expected);
}

#[test]
fn a_directory_is_held_by_one_open_graph() {
    let dir = tempfile::tempdir().unwrap();
    let g = open(dir.path());
    let second = CrossLayerGraph::builder().open(dir.path());
    assert!(matches!(second, Err(crossgraph::Error::Core(maxim_core::Error::Locked { .. }))));
    drop(g);
    assert!(CrossLayerGraph::builder().open(dir.path()).is_ok());
}

#[test]
fn a_journaled_graph_refuses_to_load_and_an_in_memory_one_to_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    write_some(&mut g, 0);
    let elsewhere = dir.path().join("copy.snap");
    g.save(&elsewhere).unwrap();
    assert!(g.load(&elsewhere).is_err());
    assert!(g.load_with_recovery(&elsewhere).is_err());
    let mut memory = crate::common::graph();
    assert!(memory.checkpoint().is_err());
    memory.load(&elsewhere).unwrap();
    assert_eq!(fingerprint(&memory), fingerprint(&g));
}

#[test]
fn invalid_writes_never_reach_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, 0.5).unwrap();
    assert!(g.add_edge(hip(1), atl(2), CrossEdgeKind::InstanceOf, f64::NAN).is_err());
    assert!(g.add_edge(atl(2), atl(2), CrossEdgeKind::InstanceOf, 0.5).is_err());
    drop(g);
    let back = open(dir.path());
    assert_eq!(back.edge_count(), 1);
    assert_eq!(back.edge(hip(1), atl(2), CrossEdgeKind::InstanceOf).map(|e| e.weight), Some(0.5));
}
