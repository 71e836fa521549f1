//! The layer on a directory: journaled writes, checkpoints, the lock, and the regression
//! tests of the values a capture takes (issue 15, defects 3 and 4).

use std::path::Path;
use std::time::Duration;

use hippocampus::{Hippocampus, HippocampusConfig, LoopStep, NewEpisode};
use maxim_core::journal::SyncPolicy;
use maxim_core::value::{MAX_DEPTH, Map, Value};
use maxim_core::{EdgeKind, ManualClock, RecordId, Timestamp};

use crate::common::{episode, layer};

fn open(dir: &Path, clock: &ManualClock) -> Hippocampus {
    Hippocampus::builder().clock(clock.shared()).id_seed(7).sync_policy(SyncPolicy::Always).open(dir).unwrap()
}

fn nested(depth: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..depth {
        v = Value::List(vec![v]);
    }
    v
}

/// Everything the layer holds, as bytes (equal contents encode equally).
fn contents(h: &Hippocampus) -> Vec<u8> {
    h.to_snapshot_bytes().unwrap()[40..].to_vec()
}

#[test]
fn every_journaled_write_is_there_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut h = open(dir.path(), &clock);
    let mut ids = Vec::new();
    for i in 0..8 {
        let mut e =
            episode(&["mug", if i % 2 == 0 { "cup" } else { "box" }], "find mug", "look", Some(i % 3 == 0));
        e.state_snapshot = Some(Value::from(i64::from(i)));
        ids.push(h.capture(e).unwrap());
        clock.advance(Duration::from_secs(60));
    }
    h.link(ids[0], ids[7], EdgeKind::Causes, 0.7).unwrap();
    h.associate(ids[1], ids[6], 0.4).unwrap();
    h.compress(ids[2]).unwrap();
    h.remove(ids[3]).unwrap();
    let record = {
        let mut r = hippocampus::EpisodicMemory::new(RecordId::from_u128(42), clock.now());
        r.run_id = "imported".into();
        r
    };
    h.capture_record(record).unwrap();
    let expected = contents(&h);
    drop(h);
    let back = open(dir.path(), &clock);
    assert_eq!(contents(&back), expected);
    assert!(back.peek(ids[2]).unwrap().is_compressed());
    assert!(back.peek(ids[3]).is_none());
    assert!(back.check_consistency().is_consistent());
}

#[test]
fn a_sleep_on_a_directory_checkpoints_and_the_journal_starts_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut h = open(dir.path(), &clock);
    for _ in 0..5 {
        h.capture(episode(&["mug"], "g", "t", None)).unwrap();
    }
    clock.advance(Duration::from_secs(30 * 86_400));
    let report = h.sleep();
    assert!(report.removed + report.compressed > 0, "{report:?}");
    let journal = dir.path().join("hippocampus.journal");
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), 40, "the checkpoint emptied the journal");
    let after_sleep = h.len();
    let late = h.capture(episode(&["cup"], "g", "t", None)).unwrap();
    let expected = contents(&h);
    drop(h);
    let back = open(dir.path(), &clock);
    assert!(back.peek(late).is_some());
    assert_eq!(back.len(), after_sleep + 1);
    assert_eq!(contents(&back), expected);
    assert_eq!(back.counters().checkpoint_failures, 0);
}

#[test]
fn checkpoint_then_more_writes_reopen_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let mut h = open(dir.path(), &clock);
    h.capture(episode(&["mug"], "g", "t", Some(true))).unwrap();
    h.checkpoint().unwrap();
    h.capture(episode(&["mug", "cup"], "g", "t", Some(false))).unwrap();
    let expected = contents(&h);
    drop(h);
    assert_eq!(contents(&open(dir.path(), &clock)), expected);
    // In memory only, there is nothing to checkpoint.
    let (_c, mut plain) = layer();
    assert!(plain.checkpoint().is_err());
    assert!(!plain.is_journaled());
}

#[test]
fn a_second_open_of_one_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let first = open(dir.path(), &clock);
    let err = Hippocampus::builder().open(dir.path()).unwrap_err();
    assert!(matches!(err, hippocampus::Error::Core(maxim_core::Error::Locked { .. })), "{err:?}");
    drop(first);
    assert!(Hippocampus::builder().open(dir.path()).is_ok());
}

#[test]
fn a_strangers_file_in_the_directory_is_kept_aside_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hippocampus.snap"), b"someone else's notes").unwrap();
    assert!(Hippocampus::builder().open(dir.path()).is_err());
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(std::fs::read(kept[0].path()).unwrap(), b"someone else's notes");
}

/// Defect 3: a value the loader would refuse is refused at capture, so a save always loads.
#[test]
fn values_nested_deeper_than_the_loader_reads_are_refused_at_capture() {
    let (clock, mut h) = layer();
    let mut ok = NewEpisode::default();
    ok.perception.observations.insert("deep", nested(MAX_DEPTH as usize));
    ok.state_snapshot = Some(nested(MAX_DEPTH as usize));
    h.capture(ok).unwrap();
    for field in ["observations", "result", "intent", "state_snapshot", "tool_params"] {
        let mut e = NewEpisode::default();
        let deep = nested(MAX_DEPTH as usize + 1);
        match field {
            "observations" => {
                e.perception.observations.insert("deep", deep);
            }
            "result" => e.outcome.result = deep,
            "intent" => {
                e.decision.intent.insert("deep", deep);
            }
            "tool_params" => {
                e.action.tool_params.insert("deep", deep);
            }
            _ => e.state_snapshot = Some(deep),
        }
        let err = h.capture(e).unwrap_err();
        assert!(
            matches!(&err, hippocampus::Error::Core(maxim_core::Error::InvalidArgument { .. })),
            "{field}: {err:?}"
        );
    }
    assert_eq!(h.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.snap");
    h.save(&path).unwrap();
    let mut back =
        Hippocampus::builder().config(HippocampusConfig::default()).clock(clock.shared()).build().unwrap();
    back.load(&path).unwrap();
    assert_eq!(back.len(), 1);
}

/// Defect 4: a value 200,000 levels deep is refused without exhausting the stack, through
/// every capture entry point.
#[test]
fn a_value_two_hundred_thousand_levels_deep_does_not_abort_a_capture() {
    let run = || {
        let (_clock, mut h) = layer();
        let mut e = NewEpisode::default();
        e.outcome.result = nested(200_000);
        assert!(h.capture(e).is_err());
        let step = LoopStep { state: Some(nested(200_000)), ..LoopStep::default() };
        assert!(h.capture_from_loop(step).is_err());
        let mut deep_map = Map::new();
        deep_map.insert("x", nested(200_000));
        let step = LoopStep { observation: deep_map, ..LoopStep::default() };
        assert!(h.capture_from_loop(step).is_err());
        let mut record = hippocampus::EpisodicMemory::new(RecordId::from_u128(5), Timestamp::from_secs(1));
        record.outcome.result = nested(200_000);
        assert!(h.capture_record(record).is_err());
        assert!(h.is_empty());
    };
    std::thread::Builder::new().stack_size(1 << 20).spawn(run).unwrap().join().unwrap();
}

/// The concurrency test (issue 15): threads saving one layer to one path while another
/// thread reads the live path; every read is a whole snapshot that loads.
#[test]
fn saves_from_several_threads_never_expose_a_partial_file_to_a_reader() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_clock, mut h) = layer();
    for i in 0..20 {
        h.capture(episode(&["mug", if i % 2 == 0 { "cup" } else { "box" }], "g", "t", None)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.snap");
    h.save(&path).unwrap();
    let done = AtomicBool::new(false);
    let (reads, bad) = std::thread::scope(|s| {
        let savers: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..60 {
                        h.save(&path).unwrap();
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let (mut reads, mut bad) = (0usize, 0usize);
            let mut probe = Hippocampus::builder().build().unwrap();
            while !done.load(Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&path) {
                    reads += 1;
                    if probe.load_from_bytes(&path, &bytes).is_err() || probe.len() != 20 {
                        bad += 1;
                    }
                }
            }
            (reads, bad)
        });
        // Stop the reader however the savers end, then report a saver's failure.
        let saved: Vec<_> = savers.into_iter().map(std::thread::ScopedJoinHandle::join).collect();
        done.store(true, Ordering::Relaxed);
        let read = reader.join().unwrap();
        for result in saved {
            result.unwrap();
        }
        read
    });
    assert_eq!(bad, 0, "{bad} of {reads} reads were not whole snapshots");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
}
