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

/// The edges of one `add_edges_from`: one journal record, replayed to the same graph as the
/// single calls make.
#[test]
fn a_batch_record_replays_to_the_graph_the_single_calls_make() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    let mut singles = crate::common::graph();
    write_some(&mut g, 0);
    write_some(&mut singles, 0);
    let targets = [atl(0), atl(50), atl(51), atl(50)];
    let journal = maxim_core::journal::journal_path(dir.path(), crossgraph::SNAPSHOT_KIND);
    g.sync().unwrap();
    let before = std::fs::metadata(&journal).unwrap().len();
    // One already linked, two new, one given twice (an update of the first).
    assert_eq!(g.add_edges_from(hip(0), &targets, CrossEdgeKind::InstanceOf, 0.6).unwrap(), 2);
    for t in targets {
        singles.add_edge(hip(0), t, CrossEdgeKind::InstanceOf, 0.6).unwrap();
    }
    assert_eq!(g.add_edges_from(hip(0), &[], CrossEdgeKind::InstanceOf, 0.6).unwrap(), 0);
    g.sync().unwrap();
    let after = std::fs::metadata(&journal).unwrap().len();
    assert_eq!(fingerprint(&g), fingerprint(&singles));
    assert_eq!(g.stats().counters, singles.stats().counters);
    let expected = fingerprint(&g);
    drop(g);
    // One record: the last entry of the journal is the batch.
    let mut ops = Vec::new();
    let sink =
        maxim_core::journal::FileSink::open(&journal, crossgraph::SNAPSHOT_KIND, SyncPolicy::Always).unwrap();
    maxim_core::journal::Journal::<crossgraph::Op>::open::<maxim_core::Error>(Box::new(sink), 0, |_, op| {
        ops.push(op);
        Ok(())
    })
    .unwrap();
    assert!(matches!(ops.last(), Some(crossgraph::Op::LinkMany { to, .. }) if to.len() == 4));
    let back = open(dir.path());
    assert_eq!(fingerprint(&back), expected);
    assert_eq!(back.stats().counters["edges_added"], singles.stats().counters["edges_added"]);
    assert!(after > before);
}

/// A crash in the middle of a batch record loses the batch whole and nothing before it: the
/// journal is cut at every byte of the record and the directory reopened.
#[test]
fn a_torn_batch_record_is_lost_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    write_some(&mut g, 0);
    let journal = maxim_core::journal::journal_path(dir.path(), crossgraph::SNAPSHOT_KIND);
    let start = usize::try_from(std::fs::metadata(&journal).unwrap().len()).unwrap();
    let acknowledged = fingerprint(&g);
    g.add_edges_from(hip(7), &[atl(1), atl(2), atl(3)], CrossEdgeKind::InstanceOf, 0.9).unwrap();
    let full = fingerprint(&g);
    drop(g);
    let bytes = std::fs::read(&journal).unwrap();
    let reopen = |len: usize| {
        let copy = tempfile::tempdir().unwrap();
        std::fs::write(
            maxim_core::journal::journal_path(copy.path(), crossgraph::SNAPSHOT_KIND),
            &bytes[..len],
        )
        .unwrap();
        fingerprint(&open(copy.path()))
    };
    assert_eq!(reopen(bytes.len()), full);
    for cut in start..bytes.len() {
        assert_eq!(reopen(cut), acknowledged, "cut at byte {cut} of the batch record");
    }
}

/// A batch with one bad target or a bad weight is refused whole: the graph and the journal
/// are as they were.
#[test]
fn a_bad_batch_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = open(dir.path());
    write_some(&mut g, 0);
    g.sync().unwrap();
    let journal = maxim_core::journal::journal_path(dir.path(), crossgraph::SNAPSHOT_KIND);
    let (before, len) = (fingerprint(&g), std::fs::metadata(&journal).unwrap().len());
    let kind = CrossEdgeKind::InstanceOf;
    let self_loop = g.add_edges_from(atl(5), &[atl(6), atl(5)], kind, 0.5).unwrap_err();
    assert!(matches!(self_loop, crossgraph::Error::SelfLoop { .. }), "{self_loop:?}");
    for w in [f64::NAN, -0.5, 1.5, f64::INFINITY] {
        assert!(g.add_edges_from(hip(5), &[atl(6), atl(7)], kind, w).is_err(), "{w}");
    }
    let op = crossgraph::Op::LinkMany { from: hip(5), to: vec![atl(6), hip(5)], kind, weight: 0.5 };
    assert!(g.apply(op).is_err());
    assert_eq!(fingerprint(&g), before);
    g.sync().unwrap();
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), len);
    drop(g);
    assert_eq!(fingerprint(&open(dir.path())), before);
    // TEMPORALLY_CORRELATES may join a record to itself, in a batch too.
    let mut g = open(dir.path());
    g.add_edges_from(atl(5), &[atl(5), atl(6)], CrossEdgeKind::TemporallyCorrelates, 0.5).unwrap();
    assert_eq!(g.edge_count(), before.len() + 2);
}
