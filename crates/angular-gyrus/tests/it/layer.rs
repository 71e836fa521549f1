//! The store: built-ins, typed recall, associations, consolidation and persistence.

use angular_gyrus::{
    AngularGyrus, AngularGyrusConfig, Error, MathCategory, MathEntry, MathFilter, MathRelation, Origin,
    built_in_id,
};
use maxim_core::{MemoryLayer, MemoryRecord, RecordId, TraceKind, days};

use crate::common::layer;

#[test]
fn the_built_ins_are_seeded_as_firmware() {
    let (_clock, ag) = layer();
    let names: Vec<&str> = {
        let mut v: Vec<&str> = ag.iter().map(MathEntry::name).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        names,
        [
            "e",
            "linear_regression",
            "mean",
            "median",
            "phi",
            "pi",
            "quadratic_fit",
            "standard_deviation",
            "variance"
        ]
    );
    let pi = ag.math_record(built_in_id("pi")).unwrap();
    assert_eq!(
        (pi.category, pi.domain.as_str(), pi.origin),
        (MathCategory::Constant, "geometry", Origin::BuiltIn)
    );
    assert_eq!(pi.output_f64("value"), Some(std::f64::consts::PI));
    assert!(pi.meta.long_term && pi.meta.trace.kind() == TraceKind::Firmware && pi.confidence == 1.0);
    let phi = ag.math_record(built_in_id("phi")).unwrap().output_f64("value").unwrap();
    assert!((phi - f64::midpoint(1.0, 5f64.sqrt())).abs() < 1e-15);
}

#[test]
fn built_ins_are_never_removed_replaced_or_forged() {
    let (clock, mut ag) = layer();
    let pi = built_in_id("pi");
    assert!(matches!(ag.remove_record(pi), Err(Error::BuiltIn { .. })));
    let mut forged = ag.math_record(pi).unwrap().clone();
    forged.confidence = 0.1;
    assert!(matches!(ag.replace(forged.clone()), Err(Error::BuiltIn { .. })));
    forged.meta.id = RecordId::from_u128(5);
    assert!(matches!(ag.insert(forged.into()), Err(Error::BuiltIn { .. })));
    clock.advance(days(5 * 365));
    let report = ag.consolidate().unwrap();
    assert_eq!((report.removed, report.compressed, report.preserved), (0, 0, 9));
    assert_eq!(ag.len(), 9);
}

#[test]
fn a_typed_category_matches() {
    let (_clock, ag) = layer();
    // [run] the original found 0 methods when given the enum and 6 when given "METHOD".
    assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Method), 10).len(), 6);
    assert_eq!(ag.recall(&MathFilter::new().category("METHOD".parse().unwrap()), 10).len(), 6);
    assert_eq!(ag.recall(&MathFilter::new().category(MathCategory::Constant), 10).len(), 3);
    let geometry = ag.recall(&MathFilter::new().category(MathCategory::Constant).domain("geometry"), 10);
    let mut names: Vec<&str> = geometry.iter().map(|e| e.name()).collect();
    names.sort_unstable();
    assert_eq!(names, ["phi", "pi"]);
    assert_eq!(ag.recall(&MathFilter::new().name("mean"), 10).len(), 1);
    assert_eq!(ag.recall(&MathFilter::new().name("mean").category(MathCategory::Constant), 10).len(), 0);
    assert_eq!(ag.recall(&MathFilter::new().domain("nowhere"), 10).len(), 0);
}

#[test]
fn recall_orders_by_access_then_confidence_and_only_the_touching_twin_touches() {
    let (_clock, mut ag) = layer();
    let mut ids = Vec::new();
    for (j, conf) in [0.2, 0.9, 0.5].into_iter().enumerate() {
        let mut r = ag.new_record(&format!("f{j}"), MathCategory::Fact, "order").unwrap();
        r.confidence = conf;
        ids.push(ag.insert(r.into()).unwrap());
    }
    let names = |ag: &AngularGyrus| -> Vec<String> {
        ag.recall_records(&MathFilter::new().domain("order"), 10)
            .iter()
            .map(|e| e.name().to_owned())
            .collect()
    };
    assert_eq!(names(&ag), ["f1", "f2", "f0"]);
    ag.get(ids[0]).unwrap();
    assert_eq!(names(&ag), ["f0", "f1", "f2"]);
    let before: Vec<u32> = ids.iter().map(|&id| ag.peek(id).unwrap().meta().access_count).collect();
    let got = ag.recall_touching(&MathFilter::new().domain("order").min_confidence(0.5), 10).len();
    assert_eq!(got, 2);
    let after: Vec<u32> = ids.iter().map(|&id| ag.peek(id).unwrap().meta().access_count).collect();
    assert_eq!(after, [before[0], before[1] + 1, before[2] + 1]);
}

#[test]
fn recall_associated_spreads_both_ways_and_stops_below_the_threshold() {
    let (_clock, mut ag) = layer();
    let mut chain = Vec::new();
    for j in 0..9 {
        let r = ag.new_record(&format!("n{j}"), MathCategory::Fact, "chain").unwrap();
        chain.push(ag.insert(r.into()).unwrap());
    }
    // n0 - n1 - ... - n8, each link weight 1: activation halves per hop.
    for w in chain.windows(2) {
        ag.link(w[0], w[1], MathRelation::Associates, 1.0).unwrap();
    }
    let from_middle = ag.associated(&[chain[4]], 20);
    let got: Vec<(String, f64)> = from_middle.iter().map(|(e, a)| (e.name().to_owned(), *a)).collect();
    // Depth 3 both ways: n1..n3 and n5..n7, seeds excluded, n0 and n8 too deep.
    assert_eq!(got.len(), 6, "{got:?}");
    for (name, a) in &got {
        let d = (name[1..].parse::<i32>().unwrap() - 4).abs();
        assert_eq!(*a, 0.5f64.powi(d), "{name}");
    }
    // A weak link stops the walk once activation falls below 0.01.
    let extra = ag.new_record("far", MathCategory::Fact, "chain").unwrap();
    let far = ag.insert(extra.into()).unwrap();
    ag.link(chain[4], far, MathRelation::Associates, 0.019).unwrap();
    assert!(ag.associated(&[chain[4]], 20).iter().all(|(e, _)| e.id() != far));
    ag.link(chain[4], far, MathRelation::Associates, 0.02).unwrap();
    assert!(ag.associated(&[chain[4]], 20).iter().any(|(e, a)| e.id() == far && (*a - 0.01).abs() < 1e-15));
    assert_eq!(ag.links_of(far), vec![(chain[4], MathRelation::Associates, 0.02)]);
}

#[test]
fn consolidation_compresses_the_middling_and_removes_the_stale() {
    let (clock, mut ag) = layer();
    let mut strong = ag.new_record("strong", MathCategory::Fact, "c").unwrap();
    strong.confidence = 1.0;
    let strong = ag.insert(strong.into()).unwrap();
    let mut middling = ag.new_record("middling", MathCategory::Fact, "c").unwrap();
    middling.confidence = 0.1;
    middling.verbal = "to be dropped by compression".into();
    let middling = ag.insert(middling.into()).unwrap();
    ag.link(strong, middling, MathRelation::Associates, 0.5).unwrap();
    // 60 days: recency 0.3 * (1/3) = 0.1; confidences 1.0 -> 0.5, 0.1 -> 0.14 (< 0.15 removed).
    clock.advance(days(60));
    ag.touch(&[strong]);
    let report = ag.consolidate().unwrap();
    assert_eq!(report.removed, 1);
    assert!(ag.peek(middling).is_none() && ag.links_of(strong).is_empty());
    // A record at 0.2 confidence scores 0.1 + 0.08 = 0.18 at 60 days: compressed.
    let mut mid = ag.new_record("mid", MathCategory::Fact, "c").unwrap();
    mid.confidence = 0.2;
    let mid = ag.insert(mid.into()).unwrap();
    clock.advance(days(60));
    let report = ag.consolidate().unwrap();
    assert_eq!((report.compressed, report.removed), (1, 0), "{report:?}");
    let entry = ag.peek(mid).unwrap();
    assert!(entry.is_compressed() && entry.name() == "mid");
    assert_eq!(ag.recall(&MathFilter::new().domain("c").include_compressed(false), 10).len(), 1);
    assert_eq!(ag.stats().compressed, 1);
}

#[test]
fn consolidation_removals_fire_the_deletion_callbacks() {
    let (clock, mut ag) = layer();
    let r = ag.new_record("stale", MathCategory::Fact, "c").unwrap();
    let id = ag.insert(r.into()).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    ag.on_delete(Box::new(move |id| {
        sink.lock().unwrap().push(id);
        Ok(())
    }));
    clock.advance(days(91));
    ag.consolidate().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![id]);
}

#[test]
fn persistence_keeps_records_graph_and_counters() {
    let (clock, mut ag) = layer();
    let r = ag.new_record("tau", MathCategory::Constant, "geometry").unwrap();
    let tau = ag.insert(r.into()).unwrap();
    let pi = built_in_id("pi");
    ag.link(tau, pi, MathRelation::DerivedFrom, 0.9).unwrap();
    clock.advance(days(200));
    ag.consolidate().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ag.snap");
    ag.save(&path).unwrap();
    let mut config = AngularGyrusConfig::default();
    config.seed_built_ins = false;
    let mut fresh = AngularGyrus::builder().clock(clock.shared()).config(config).build().unwrap();
    fresh.load(&path).unwrap();
    let mut a: Vec<&MathEntry> = ag.iter().collect();
    let mut b: Vec<&MathEntry> = fresh.iter().collect();
    a.sort_by_key(|e| e.id());
    b.sort_by_key(|e| e.id());
    assert_eq!(a, b);
    assert_eq!(fresh.links_of(pi), ag.links_of(pi));
    assert_eq!(fresh.stats(), ag.stats());
    assert_eq!(fresh.recall(&MathFilter::new().category(MathCategory::Method), 10).len(), 6);
    // A new record after a load never reuses an id.
    let r = fresh.new_record("later", MathCategory::Fact, "x").unwrap();
    assert!(fresh.peek(r.meta.id).is_none());
}

#[test]
fn load_with_recovery_falls_back_to_the_backup_and_reports_missing_files() {
    let (_clock, mut ag) = layer();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ag.snap");
    assert!(matches!(ag.load_with_recovery(&path).unwrap(), maxim_core::LoadOutcome::Missing));
    ag.save(&path).unwrap();
    let r = ag.new_record("second", MathCategory::Fact, "x").unwrap();
    ag.insert(r.into()).unwrap();
    ag.save(&path).unwrap(); // the first save is now the backup
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (_c, mut fresh) = layer();
    let outcome = fresh.load_with_recovery(&path).unwrap();
    assert!(matches!(outcome, maxim_core::LoadOutcome::FromBackup { .. }));
    assert_eq!(fresh.len(), 9);
}

/// A file the codec accepts but the layer's checks refuse (a graph node that is no record):
/// a plain load keeps it aside, and recovery keeps it aside and loads the backup.
#[test]
fn a_file_that_fails_the_layers_checks_is_kept_aside_and_recovery_loads_the_backup() {
    let (_clock, mut ag) = layer();
    let r = ag.new_record("tau", MathCategory::Constant, "geometry").unwrap();
    ag.insert(r.into()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ag.snap");
    ag.save(&path).unwrap();
    ag.save(&path).unwrap(); // the backup now holds a good snapshot too
    let mut graph = maxim_core::graph::Graph::new();
    graph.add_node(RecordId::from_u128(99)).unwrap();
    let no_records: Vec<MathEntry> = Vec::new();
    let counters: Vec<(String, u64)> = Vec::new();
    let payload = (angular_gyrus::SCHEMA_VERSION, 0u64, no_records, graph, counters);
    let forged = maxim_core::codec::encode(angular_gyrus::SNAPSHOT_KIND, &payload).unwrap();
    let kept_aside = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.contains(".corrupt-"))
            .count()
    };

    std::fs::write(&path, &forged).unwrap();
    let (_c, mut fresh) = layer();
    let err = fresh.load(&path).unwrap_err();
    assert!(matches!(err, Error::Core(maxim_core::Error::Corrupt { kept_aside: Some(_), .. })), "{err:?}");
    assert!(!path.exists(), "the refused file was moved aside");
    assert_eq!(kept_aside(dir.path()), 1);
    assert_eq!(fresh.len(), 9, "a failed load changes nothing");

    std::fs::write(&path, &forged).unwrap();
    match fresh.load_with_recovery(&path).unwrap() {
        maxim_core::LoadOutcome::FromBackup { primary_error, .. } => assert!(
            matches!(*primary_error, maxim_core::Error::Corrupt { kept_aside: Some(_), .. }),
            "{primary_error:?}"
        ),
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(fresh.len(), ag.len());
    assert_eq!(kept_aside(dir.path()), 2);
}

#[test]
fn a_full_store_refuses_records() {
    let mut config = AngularGyrusConfig::default();
    config.max_records = 10;
    let (_clock, mut ag) = crate::common::layer_with(config);
    let r = ag.new_record("tenth", MathCategory::Fact, "x").unwrap();
    ag.insert(r.into()).unwrap();
    let r = ag.new_record("eleventh", MathCategory::Fact, "x").unwrap();
    assert!(matches!(ag.insert(r.into()), Err(Error::Full { max: 10 })));
    assert_eq!(ag.len(), 10);
}
