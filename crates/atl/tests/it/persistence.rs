//! Persistence (§4.7): round trips, failed loads, and files that try to redefine built-ins.
//!
//! The crafted files mirror the snapshot payload (schema, records, graph, proposed types,
//! counters) so that the checks a load makes on a well-formed but wrong file can be tested.

use atl::{Atl, RelationshipType, SemanticRecord, spec};
use maxim_core::graph::{EdgeMeta, Graph};
use maxim_core::{EdgeKind, MemoryLayer, MemoryRecord, RecordId, codec};
use serde::Serialize;

use crate::common::{fingerprint, layer};

#[derive(Serialize)]
struct Crafted {
    schema: u16,
    records: Vec<SemanticRecord>,
    graph: Graph,
    relationship_types: Vec<RelationshipType>,
    counters: Vec<(String, u64)>,
}

fn two_concepts(atl: &mut Atl) -> (Vec<SemanticRecord>, [RecordId; 2]) {
    let a = atl.new_concept("mug", "object").unwrap();
    let b = atl.new_concept("cup", "object").unwrap();
    let ids = [a.meta.id, b.meta.id];
    (vec![a.into(), b.into()], ids)
}

fn write(crafted: &Crafted) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    codec::save(&path, "atl", crafted).unwrap();
    (dir, path)
}

#[test]
fn a_file_cannot_redefine_a_builtin_type() {
    let (_clock, mut atl) = layer();
    let (records, [a, b]) = two_concepts(&mut atl);
    let hijack = |name: &str| RelationshipType {
        name: name.into(),
        description: "hijacked".into(),
        symmetric: true,
        builtin: true,
        reflexive: true,
    };
    let mut graph = Graph::new();
    graph
        .add_edge(a, b, EdgeKind::Associates, 0.5, Some(EdgeMeta::relation("IS_A").with_confidence(0.5)))
        .unwrap();
    let crafted = Crafted {
        schema: 1,
        records,
        graph,
        relationship_types: vec![hijack("IS_A"), hijack("CAUSES"), hijack("MIRRORS")],
        counters: vec![("concepts_stored".into(), 2), ("unknown_counter".into(), 5)],
    };
    let (_dir, path) = write(&crafted);
    let (_clock, mut fresh) = layer();
    fresh.load(&path).unwrap();
    let is_a = fresh.registry().get("IS_A").unwrap();
    assert!(is_a.builtin && !is_a.symmetric && !is_a.reflexive && is_a.description != "hijacked");
    assert!(!fresh.registry().get("CAUSES").unwrap().symmetric);
    let mirrors = fresh.registry().get("MIRRORS").unwrap();
    assert!(!mirrors.builtin && mirrors.symmetric, "new names load, never as built-in");
    assert_eq!(fresh.stats().counters["concepts_stored"], 2);
    assert_eq!(fresh.concept_graph().edge_count(), 1);
}

#[test]
fn well_formed_but_wrong_files_are_refused_and_change_nothing() {
    let (_clock, mut source) = layer();
    let (records, [a, b]) = two_concepts(&mut source);
    let ghost = RecordId::from_u128(0xdead);
    let edge = |kind, rel: Option<&str>, w| {
        let mut g = Graph::new();
        g.add_edge(a, b, kind, w, rel.map(|r| EdgeMeta::relation(r).with_confidence(0.5))).unwrap();
        g
    };
    let mut dangling = Graph::new();
    dangling.add_node(ghost).unwrap();
    let mut duplicate = records.clone();
    duplicate.push(records[0].clone());
    let mut bad_record = records.clone();
    if let SemanticRecord::Full(c) = &mut bad_record[1] {
        c.confidence = 7.0;
    }
    let plain = |records: Vec<SemanticRecord>, graph: Graph| Crafted {
        schema: 1,
        records,
        graph,
        relationship_types: vec![],
        counters: vec![],
    };
    let mut self_loop = Graph::new();
    self_loop.add_edge(a, a, EdgeKind::Associates, 0.5, Some(EdgeMeta::relation("IS_A"))).unwrap();
    let future = Crafted { schema: 2, ..plain(records.clone(), Graph::new()) };
    let cases: Vec<(&str, Crafted)> = vec![
        ("node without concept", plain(records.clone(), dangling)),
        ("unlabelled edge", plain(records.clone(), edge(EdgeKind::Associates, None, 0.5))),
        ("unknown type", plain(records.clone(), edge(EdgeKind::Associates, Some("LIKES"), 0.5))),
        ("wrong kind", plain(records.clone(), edge(EdgeKind::Associates, Some("CAUSES"), 0.5))),
        ("heavy edge", plain(records.clone(), edge(EdgeKind::Associates, Some("IS_A"), 3.0))),
        ("self relationship", plain(records.clone(), self_loop)),
        ("duplicate record", plain(duplicate, Graph::new())),
        ("invalid record", plain(bad_record, Graph::new())),
        ("future schema", future),
    ];
    let (_clock, mut target) = layer();
    let kept = target.find_or_create(&spec("kept", "object")).unwrap().id;
    let before = fingerprint(&target);
    for (what, crafted) in cases {
        let (_dir, path) = write(&crafted);
        assert!(target.load(&path).is_err(), "{what} must be refused");
        assert_eq!(fingerprint(&target), before, "{what}: nothing changes");
    }
    assert!(target.peek(kept).is_some());
    assert_eq!(target.recall_similar("kept", 1)[0].0, kept);
}

#[test]
fn a_full_layer_round_trips() {
    let (clock, mut atl) = layer();
    let ids: Vec<RecordId> =
        (0..50).map(|j| atl.find_or_create(&spec(&format!("thing {j}"), "object")).unwrap().id).collect();
    assert_eq!(atl.find_or_create(&spec("thingg 7", "object")).unwrap().id, ids[7]);
    for w in ids.windows(2) {
        atl.define_relationship(w[0], w[1], "RELATED_TO", 0.5, 0.5).unwrap();
    }
    atl.define_relationship(ids[0], ids[9], "CAUSES", 0.9, 0.7).unwrap();
    atl.set_property(ids[3], "size", 3i64, maxim_core::Source::UserStated, 1.0).unwrap();
    clock.advance(maxim_core::days(20));
    atl.consolidate().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    atl.save(&path).unwrap();
    let mut fresh = Atl::builder().clock(clock.shared()).id_seed(99).build().unwrap();
    fresh.load(&path).unwrap();
    assert_eq!(fingerprint(&fresh), fingerprint(&atl));
    assert_eq!(fresh.concept_graph(), atl.concept_graph());
    assert_eq!(fresh.lookup("thingg 7", "object").map(|m| m.0), Some(ids[7]));
    assert_eq!(fresh.recall_associated(&[ids[0]], 10).len(), atl.recall_associated(&[ids[0]], 10).len());
    let next = fresh.find_or_create(&spec("brand new", "object")).unwrap().id;
    assert!(ids.iter().all(|&id| next > id), "ids after a load sort after the loaded ones");
    // Saving again over the same file keeps the previous one as a backup.
    fresh.save(&path).unwrap();
    assert!(codec::backup_path(&path).unwrap().exists());
    assert!(fresh.iter().any(|r| r.id() == next));
}

#[test]
fn a_store_overwrites_only_files_it_created_or_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    let (_c, mut first) = layer();
    first.find_or_create(&spec("mug", "object")).unwrap();
    first.save(&path).unwrap();
    first.save(&path).unwrap(); // its own file
    let saved = std::fs::read(&path).unwrap();

    let (_c2, stranger) = layer();
    let err = stranger.save(&path).unwrap_err();
    assert!(matches!(&err, atl::Error::Core(maxim_core::Error::OverwriteRefused { path: p }) if p == &path));
    assert_eq!(std::fs::read(&path).unwrap(), saved, "nothing is written");
    // Through the core's view too: the hub sees the core's typed error.
    assert!(matches!(maxim_core::Error::from(err), maxim_core::Error::OverwriteRefused { .. }));

    let (_c3, mut reader) = layer();
    reader.load(&path).unwrap();
    assert_eq!(reader.len(), 1);
    reader.save(&path).unwrap();
    stranger.allow_overwrite(true);
    stranger.save(&path).unwrap();
    assert!(stranger.file_claims().owns(&path));
}

/// Issue 15, defect 5: a file that passes the codec but fails the layer's checks is kept
/// aside and the intact backup is loaded; the ATL has `load_with_recovery` like every layer.
#[test]
fn recovery_loads_the_backup_when_the_main_file_fails_the_layers_checks() {
    let (_clock, mut atl) = layer();
    let (records, _) = two_concepts(&mut atl);
    for r in records {
        atl.insert(r).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atl.snap");
    atl.save(&path).unwrap();
    atl.save(&path).unwrap(); // the backup holds a good snapshot
    let mut orphan = Graph::new();
    orphan.add_node(RecordId::from_u128(77)).unwrap();
    let crafted =
        Crafted { schema: 1, records: vec![], graph: orphan, relationship_types: vec![], counters: vec![] };
    let bad = codec::encode("atl", &crafted).unwrap();
    std::fs::write(&path, &bad).unwrap();
    let (_c, mut fresh) = layer();
    match fresh.load_with_recovery(&path).unwrap() {
        maxim_core::LoadOutcome::FromBackup { primary_error, .. } => {
            assert!(
                matches!(*primary_error, maxim_core::Error::Corrupt { kept_aside: Some(_), .. }),
                "{primary_error:?}"
            );
        }
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(fingerprint(&fresh), fingerprint(&atl));
    assert!(!path.exists());
    let (_c, mut empty) = layer();
    assert!(matches!(
        empty.load_with_recovery(dir.path().join("none.snap")).unwrap(),
        maxim_core::LoadOutcome::Missing
    ));
}

/// Issue 15, defects 3 and 4: metadata the loader would refuse is refused at insert, even
/// 200,000 levels deep, without exhausting the stack.
#[test]
fn metadata_nested_too_deep_is_refused_at_insert() {
    use maxim_core::value::{MAX_DEPTH, Value};
    fn nested(depth: usize) -> Value {
        let mut v = Value::Null;
        for _ in 0..depth {
            v = Value::List(vec![v]);
        }
        v
    }
    let run = || {
        let (_clock, mut atl) = layer();
        for depth in [MAX_DEPTH as usize + 1, 200_000] {
            let mut c = atl.new_concept("mug", "object").unwrap();
            c.metadata.insert("deep", nested(depth));
            let err = atl.insert(c.into()).unwrap_err();
            assert!(matches!(err, atl::Error::Core(maxim_core::Error::InvalidArgument { .. })), "{err:?}");
        }
        let mut c = atl.new_concept("cup", "object").unwrap();
        c.metadata.insert("ok", nested(MAX_DEPTH as usize));
        atl.insert(c.into()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("atl.snap");
        atl.save(&path).unwrap();
        let (_c, mut back) = layer();
        back.load(&path).unwrap();
        assert_eq!(back.len(), 1);
    };
    std::thread::Builder::new().stack_size(1 << 20).spawn(run).unwrap().join().unwrap();
}
