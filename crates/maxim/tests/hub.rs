//! The `MemoryHub` end to end: a two-week agent on a manual clock, through the hub.
//!
//! A robot grasps mugs (mostly successfully) and navigates between rooms; the navigate
//! tool's success falls about 2% a day and is worse in the evening. Each simulated day is a
//! session. The memory must find the trend and the rhythm as PATTERN records reachable from
//! a failed navigate episode, promote concepts with provenance, give a fenced context with a
//! concept and a pattern, forget without residue, keep partitions apart and continue the
//! same memory when reopened.

use std::path::Path;
use std::time::Duration;

use maxim::hippocampus::NewEpisode;
use maxim::hub::{Forget, KnowledgeQuery, MemoryHub};
use maxim::maxim_core::{LayerKind, ManualClock, Partition, RecordId, Source, SplitMix64, Timestamp};

/// Midnight UTC, 2023-11-15.
const T0: i64 = 1_700_006_400;

fn episode(
    tool: &str,
    goal: &str,
    objects: &[&str],
    people: &[&str],
    room: &str,
    success: bool,
) -> NewEpisode {
    let mut e = NewEpisode::default();
    e.action.tool_name = tool.into();
    e.context.active_goal = Some(goal.into());
    e.perception.detected_objects = objects.iter().map(|&o| o.into()).collect();
    e.perception.detected_people = people.iter().map(|&p| p.into()).collect();
    e.perception.observations.insert("room", room.into());
    e.outcome.success = Some(success);
    e.source = Some(Source::ToolResult);
    e.trust = Some(0.8);
    e
}

/// One simulated day: 40 navigations spread over 06:00–22:00 and 10 grasps.
fn live_day(
    hub: &mut MemoryHub,
    clock: &ManualClock,
    rng: &mut SplitMix64,
    day: i64,
) -> Vec<(RecordId, bool)> {
    let rooms = ["kitchen", "hall", "living room", "study"];
    let mut navigations = Vec::new();
    hub.on_session_start();
    for k in 0..50 {
        let hour = 6.0 + 16.0 * (f64::from(k) + rng.uniform()) / 50.0;
        clock.set(Timestamp::from_secs(T0 + day * 86_400 + (hour * 3600.0) as i64));
        if k % 5 == 4 {
            let ok = rng.uniform() < 0.9;
            hub.capture(episode("grasp", "fetch the mug", &["mug"], &["alice"], "kitchen", ok)).unwrap();
        } else {
            let rhythm = 0.15 * (2.0 * std::f64::consts::PI * (hour - 8.0) / 24.0).cos();
            let p = (0.85 - 0.02 * day as f64 + rhythm).clamp(0.0, 1.0);
            let ok = rng.uniform() < p;
            let room = rooms[(rng.next_u64() % 4) as usize];
            let id = hub.capture(episode("navigate", "go to the kitchen", &[], &[], room, ok)).unwrap();
            navigations.push((id, ok));
        }
    }
    clock.advance(Duration::from_secs(60));
    let report = hub.on_session_end();
    assert!(report.failures.is_empty(), "day {day}: {:?}", report.failures);
    assert!(report.persisted);
    navigations
}

fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                hits.push(path.display().to_string());
            }
        }
    }
    hits
}

#[test]
fn a_two_week_agent_through_the_hub() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let open = || {
        MemoryHub::builder()
            .data_dir(dir.path())
            .clock(clock.shared())
            .partition(Partition::new("robot").unwrap())
            .id_seed(42)
            .open()
            .unwrap()
    };
    let mut hub = open();
    let mut rng = SplitMix64::new(2026);
    let mut last_day = Vec::new();
    for day in 0..14 {
        last_day = live_day(&mut hub, &clock, &mut rng, day);
    }

    // The planted trend and rhythm are PATTERN records.
    let patterns = hub.angular_gyrus().patterns();
    let trend =
        patterns.iter().find(|p| p.name.contains("navigate") && p.input_f64("slope_per_day").is_some());
    let trend = trend.unwrap_or_else(|| {
        panic!("no navigate trend in {:?}", patterns.iter().map(|p| &p.name).collect::<Vec<_>>())
    });
    let slope = trend.input_f64("slope_per_day").unwrap();
    assert!((slope + 0.02).abs() < 0.01, "slope {slope}/day");
    let rhythm = patterns
        .iter()
        .find(|p| p.name.contains("navigate") && p.input_f64("acrophase_hours").is_some())
        .expect("a daily rhythm of navigate");
    let peak = rhythm.input_f64("acrophase_hours").unwrap();
    assert!((4.0..=12.0).contains(&peak), "best in the morning, worst in the evening: peak at {peak} h");

    // Concepts promoted with provenance.
    let promoted = hub.promoter().ledger().concepts();
    assert!(!promoted.is_empty(), "promotion made concepts");
    for (id, _) in &promoted {
        assert!(hub.promoter().provenance_of(*id).is_some());
    }

    // The seed's traversal from a failed navigate episode.
    let failed = last_day.iter().find(|(_, ok)| !ok).expect("a failed navigation on the last day").0;
    let walk = hub.traversal(failed, 4).unwrap();
    let names: Vec<(String, String)> = walk.steps.iter().map(|s| (s.via.clone(), s.name.clone())).collect();
    let reached = |name: &str| walk.steps.iter().any(|s| s.name == name);
    assert!(reached("navigate"), "{names:?}");
    assert!(walk.steps.iter().any(|s| s.via == "IS_A" && s.name == "tool capability"), "{names:?}");
    assert!(walk.steps.iter().any(|s| s.record.id == trend.meta.id), "trend reached: {names:?}");
    assert!(walk.steps.iter().any(|s| s.record.id == rhythm.meta.id), "rhythm reached: {names:?}");
    let activation = hub.recall_with_knowledge(&[failed]);
    assert!(
        activation.get(maxim::maxim_core::LayerRecord::new(LayerKind::AngularGyrus, trend.meta.id)).is_some()
    );

    // A fenced context with at least one concept and one pattern.
    let context = hub.knowledge_context(&KnowledgeQuery::from("navigate kitchen"), 8).unwrap();
    assert!(context.entries.iter().any(|e| e.layer == LayerKind::Atl), "{context:#?}");
    assert!(context.entries.iter().any(|e| e.layer == LayerKind::AngularGyrus), "{context:#?}");
    let rendered = context.render();
    assert_eq!(rendered.matches("<retrieved_memory>").count(), 1, "{rendered}");
    assert_eq!(rendered.matches("</retrieved_memory>").count(), 1, "{rendered}");

    // The question every user asks.
    let hits = hub.recall("why does navigation fail?", &maxim::hub::RecallOptions::default()).unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().take(5).any(|h| h.name.contains("navigate")), "{hits:#?}");

    // Reopening continues the same memory.
    let (episodes, concepts, edges) =
        (hub.hippocampus().len(), hub.atl().concept_count(), hub.cross_graph().edge_count());
    let trend_id = trend.meta.id;
    drop(hub);
    let mut hub = open();
    assert_eq!(
        (hub.hippocampus().len(), hub.atl().concept_count(), hub.cross_graph().edge_count()),
        (episodes, concepts, edges)
    );
    assert!(hub.angular_gyrus().record(trend_id).is_some());
    assert_eq!(hub.metric("tool:navigate:success").map(maxim::hub::MetricSeries::len), Some(14 * 40));

    // Forget one episode: nothing names it anymore, in memory or on disk.
    let mut marked = episode("navigate", "go to the kitchen", &["zebra-striped-teapot"], &[], "attic", false);
    marked.perception.transcript = Some("the unmistakable phrase quokka-lantern-7".into());
    let id = hub.capture(marked).unwrap();
    hub.checkpoint().unwrap();
    assert!(!files_containing(dir.path(), b"quokka-lantern-7").is_empty(), "the text reached the disk");
    let report = hub.forget(&Forget::Id(id)).unwrap();
    assert!(report.files_rewritten, "{report:?}");
    assert!(report.removed.contains(&(LayerKind::Hippocampus, id)));
    assert!(hub.layer_of(id).is_none());
    assert!(hub.cross_graph().records().all(|r| r.id != id));
    assert!(hub.nac().links_with_memory(id).next().is_none());
    let export = hub.export().to_string();
    assert!(!export.contains(&id.to_string()) && !export.contains("quokka-lantern-7"));
    for c in maxim::maxim_core::MemoryLayer::iter(hub.atl()) {
        if let Some(c) = c.as_concept() {
            assert!(!c.source_episode_ids.contains(&id), "{}", c.name);
            assert!(!c.memory_refs.get(LayerKind::Hippocampus).contains(&id), "{}", c.name);
        }
    }
    assert!(hub.promoter().ledger().concepts().iter().all(|(_, c)| !c.is_credited(id)));
    let hits = files_containing(dir.path(), b"quokka-lantern-7");
    assert!(hits.is_empty(), "files still holding the forgotten text: {hits:?}");
    let hits = files_containing(dir.path(), &id.as_u128().to_le_bytes());
    assert!(hits.is_empty(), "files still holding the forgotten id: {hits:?}");
}

#[test]
fn two_partitions_never_mix() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let open = |name: &str| {
        MemoryHub::builder()
            .data_dir(dir.path())
            .clock(clock.shared())
            .partition(Partition::new(name).unwrap())
            .open()
            .unwrap()
    };
    let mut alice = open("alice");
    let mut bob = open("bob/../../etc");
    let a =
        alice.capture(episode("paint", "paint the fence", &["brush"], &["carol"], "garden", true)).unwrap();
    let b = bob.capture(episode("cook", "bake bread", &["toaster"], &["dave"], "kitchen", false)).unwrap();
    for (hub, mine, theirs, word) in [(&alice, a, b, "toaster"), (&bob, b, a, "brush")] {
        assert!(hub.layer_of(mine).is_some() && hub.layer_of(theirs).is_none());
        let export = hub.export().to_string();
        assert!(!export.contains(&theirs.to_string()) && !export.contains(word), "{export}");
        let context = hub.knowledge_context(&KnowledgeQuery::from(word), 8).unwrap();
        assert!(context.entries.iter().all(|e| e.name != word));
        assert!(hub.recall_with_knowledge(&[theirs]).iter().next().is_none());
    }
    // A record of one partition is refused by the other's hub.
    let mut stray = episode("cook", "bake bread", &[], &[], "kitchen", true);
    stray.partition = Some(Partition::new("alice").unwrap());
    assert!(matches!(bob.capture(stray), Err(maxim::hub::Error::PartitionMismatch { .. })));
    // The odd name stayed inside the data directory.
    let bob_dir = bob.dir().unwrap().to_path_buf();
    assert!(bob_dir.starts_with(dir.path()) && bob_dir.parent() == Some(dir.path()), "{bob_dir:?}");
    // A second hub on an open partition is refused.
    let again = MemoryHub::builder().data_dir(dir.path()).partition(Partition::new("alice").unwrap()).open();
    assert!(matches!(again, Err(maxim::hub::Error::InUse { .. })), "{again:?}");
    // Forgetting a partition removes its directory and nothing else.
    let report = bob.forget_partition().unwrap();
    assert_eq!(report.removed_from(LayerKind::Hippocampus), 1);
    assert!(!bob_dir.exists());
    assert!(alice.layer_of(a).is_some());
    alice.on_session_start();
    assert!(alice.on_session_end().failures.is_empty());
}

#[test]
fn a_shared_hub_records_from_several_threads() {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let hub = MemoryHub::builder().clock(clock.shared()).build().unwrap().into_shared();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let hub = hub.clone();
                s.spawn(move || {
                    for i in 0..25 {
                        let ok = (i + t) % 3 != 0;
                        hub.capture(episode("wave", "greet people", &["hand"], &["erin"], "hall", ok))
                            .unwrap();
                    }
                })
            })
            .collect();
        handles.into_iter().map(std::thread::ScopedJoinHandle::join).collect()
    });
    for r in results {
        r.unwrap();
    }
    let hub = hub.lock();
    assert_eq!(hub.hippocampus().len(), 100);
    assert_eq!(hub.metric("tool:wave:success").map(maxim::hub::MetricSeries::len), Some(100));
    let wave = hub.atl().lookup("wave", "action").expect("the tool's concept").0;
    assert_eq!(
        hub.cross_graph()
            .incoming(maxim::maxim_core::LayerRecord::new(LayerKind::Atl, wave), None, None)
            .len(),
        100
    );
}

#[test]
fn recall_finds_what_was_said_and_says_why() {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hub = MemoryHub::builder().clock(clock.shared()).id_seed(9).build().unwrap();
    let say = |hub: &mut MemoryHub, clock: &ManualClock, at: i64, speaker: &str, text: &str| {
        clock.set(Timestamp::from_secs(T0 + at));
        let mut e = NewEpisode::default();
        e.perception.detected_people = vec![speaker.into()];
        e.perception.transcript = Some(text.into());
        hub.capture(e).unwrap()
    };
    let sister = say(&mut hub, &clock, 0, "ana", "My sister Lena just moved to Porto for work");
    for (i, filler) in ["The weather is grey again", "I baked bread this morning", "Traffic was awful today"]
        .iter()
        .enumerate()
    {
        say(&mut hub, &clock, 60 * (i as i64 + 1), "ana", filler);
    }
    let city = say(&mut hub, &clock, 86_400 * 30, "ana", "Lena says Porto has wonderful tiles");
    let hits =
        hub.recall("Where did Ana's sister Lena move?", &maxim::hub::RecallOptions::default()).unwrap();
    assert_eq!(hits[0].record.id, sister, "{hits:#?}");
    assert!(matches!(hits[0].why[0], maxim::hub::Why::Lexical { .. }));
    assert!(hits.iter().any(|h| h.record.id == city));
    // Only stop words: nothing.
    assert!(hub.recall("the of and", &maxim::hub::RecallOptions::default()).unwrap().is_empty());
    // A layer filter keeps to its layer; a limit of zero finds nothing; a bad trust is refused.
    let concepts = maxim::hub::RecallOptions::default().layers(&[LayerKind::Atl]);
    assert!(hub.recall("ana", &concepts).unwrap().iter().all(|h| h.record.layer == LayerKind::Atl));
    assert!(hub.recall("Lena", &maxim::hub::RecallOptions::default().limit(0)).unwrap().is_empty());
    let mut bad = maxim::hub::RecallOptions::default();
    bad.min_trust = f64::NAN;
    assert!(hub.recall("Lena", &bad).is_err());
    for w in [f64::NAN, -0.1, 1.5] {
        let mut bad = maxim::hub::RecallOptions::default();
        bad.semantic_weight = w;
        assert!(matches!(
            hub.recall("Lena", &bad),
            Err(maxim::hub::Error::Core(maxim_core::Error::OutOfRange { field: "semantic_weight", .. }))
        ));
    }
    // Forgotten records are not found.
    hub.forget(&Forget::Id(sister)).unwrap();
    assert!(
        hub.recall("sister moved", &maxim::hub::RecallOptions::default())
            .unwrap()
            .iter()
            .all(|h| h.record.id != sister)
    );
}

#[test]
fn a_question_that_shares_only_the_name_and_function_words_finds_its_answer() {
    // "Where is Ivan from?" holds one content word, the speaker's name, which every one of
    // his turns holds; "where" and "from" must decide, and the shorter small talk must not.
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hub = MemoryHub::builder().clock(clock.shared()).id_seed(11).build().unwrap();
    let mut said = Vec::new();
    let lines = [
        ("ivan", "That's lovely to hear."),
        ("nadia", "Where did you two meet, by the way?"),
        ("ivan", "Back in Tallinn, where I'm from, everyone knows everyone."),
        ("ivan", "Good for you, honestly."),
        ("nadia", "I'm from up north, it is always cold there."),
        ("ivan", "Any plans for the weekend?"),
    ];
    for (i, (speaker, text)) in lines.iter().enumerate() {
        clock.set(Timestamp::from_secs(T0 + 60 * i as i64));
        let mut e = NewEpisode::default();
        e.perception.detected_people = vec![(*speaker).into()];
        e.perception.transcript = Some((*text).into());
        said.push(hub.capture(e).unwrap());
    }
    let episodes = maxim::hub::RecallOptions::default().layers(&[LayerKind::Hippocampus]);
    let hits = hub.recall("Where is Ivan from?", &episodes).unwrap();
    assert_eq!(hits[0].record.id, said[2], "{hits:#?}");
    // A function word finds nothing by itself: a question of function words alone (Nadia's
    // turns hold both) finds nothing at all.
    let hits = hub.recall("where from", &episodes).unwrap();
    assert!(hits.is_empty(), "{hits:#?}");
}

/// The journal and snapshot files of `store` under the partition directory `dir`.
fn store_files(dir: &Path, store: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let sub = dir.join(store);
    (sub.join(format!("{store}.journal")), sub.join(format!("{store}.snap")))
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

const STORES: [&str; 8] =
    ["hippocampus", "atl", "angular_gyrus", "crossgraph", "nac", "promoter", "cerebellum", "scn"];
/// Bytes of a journal file's header.
const HEADER: u64 = maxim::maxim_core::journal::JOURNAL_HEADER_LEN as u64;

fn config(min_bytes: u64, growth: f64) -> maxim::HubConfig {
    let mut config = maxim::HubConfig::default();
    config.compact_min_bytes = min_bytes;
    config.compact_growth = growth;
    config
}

/// A hub whose journals write every entry at once, so their file sizes are exact.
fn open_hub(data: &Path, clock: &ManualClock, config: maxim::HubConfig) -> MemoryHub {
    MemoryHub::builder()
        .data_dir(data)
        .clock(clock.shared())
        .config(config)
        .sync_policy(maxim::maxim_core::journal::SyncPolicy::Never)
        .id_seed(21)
        .open()
        .unwrap()
}

/// 50 captures of day `day`, in a session left open.
fn capture_day(hub: &mut MemoryHub, clock: &ManualClock, day: i64) {
    hub.on_session_start();
    for k in 0..50 {
        clock.set(Timestamp::from_secs(T0 + day * 86_400 + 21_600 + 1_000 * k));
        let room = ["kitchen", "hall", "study"][(k % 3) as usize];
        hub.capture(episode("navigate", "go to the kitchen", &["mug"], &["bob"], room, k % 4 != 0)).unwrap();
    }
}

#[test]
fn a_session_end_compacts_only_the_journals_past_the_threshold() {
    let data = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    let dir = hub.dir().unwrap().to_path_buf();
    hub.checkpoint().unwrap();
    let snapshots: Vec<Vec<u8>> =
        STORES.iter().map(|s| std::fs::read(store_files(&dir, s).1).unwrap()).collect();

    // A day of 50 episodes journals far less than the default 1 MiB: no store but the
    // episodic one (which its own sleep checkpoints) has its snapshot rewritten.
    capture_day(&mut hub, &clock, 0);
    let report = hub.on_session_end();
    assert!(report.persisted, "{:?}", report.failures);
    assert!(report.compacted.is_empty(), "{:?}", report.compacted);
    for (store, before) in STORES.iter().zip(&snapshots).skip(1) {
        let (journal, snapshot) = store_files(&dir, store);
        assert_eq!(&std::fs::read(snapshot).unwrap(), before, "{store} was rewritten");
        assert!(file_len(&journal) >= HEADER, "{store}");
    }
    assert!(file_len(&store_files(&dir, "atl").0) > 1_000, "the day is in the ATL's journal");
    drop(hub);

    // A threshold of 2 KiB: the stores whose journals grew past it (and past their
    // snapshots) are compacted, the others are not.
    let mut hub = open_hub(data.path(), &clock, config(2_048, 1.0));
    capture_day(&mut hub, &clock, 1);
    let before: Vec<(u64, u64)> = STORES
        .iter()
        .map(|s| {
            let (j, n) = store_files(&dir, s);
            (file_len(&j) - HEADER, file_len(&n))
        })
        .collect();
    let report = hub.on_session_end();
    assert!(report.persisted, "{:?}", report.failures);
    assert!(report.compacted.contains(&"atl") && report.compacted.contains(&"crossgraph"), "{report:?}");
    assert!(!report.compacted.contains(&"cerebellum"), "no skill was written: {report:?}");
    for (store, (journal, snapshot)) in STORES.iter().zip(before) {
        let (j, n) = store_files(&dir, store);
        if report.compacted.contains(store) {
            assert_eq!(file_len(&j), HEADER, "{store}: a compacted journal is its header");
        } else {
            // Not compacted: at the persist step (after what the cycle itself journaled)
            // the journal was within the threshold, and the snapshot is the old one.
            let entries = file_len(&j) - HEADER;
            assert!(entries < 2_048 || entries < file_len(&n), "{store}: {entries} bytes ({journal} before)");
            if *store != "hippocampus" {
                assert_eq!(file_len(&n), snapshot, "{store}");
            }
        }
    }
    drop(hub);

    // Growth 0 and no minimum: every store, at every session end.
    let mut hub = open_hub(data.path(), &clock, config(0, 0.0));
    hub.on_session_start();
    let report = hub.on_session_end();
    assert_eq!(report.compacted.len(), 8, "{report:?}");
    for store in STORES {
        assert_eq!(file_len(&store_files(&dir, store).0), HEADER, "{store}");
    }
}

#[test]
fn a_reopen_after_session_ends_without_compaction_loses_nothing() {
    let data = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut rng = SplitMix64::new(9);
    let mut hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    for day in 0..5 {
        live_day(&mut hub, &clock, &mut rng, day);
    }
    capture_day(&mut hub, &clock, 5);
    let report = hub.on_session_end();
    assert!(report.persisted && report.compacted.is_empty(), "{report:?}");
    assert!(!hub.angular_gyrus().patterns().is_empty(), "the days fitted patterns");
    let before = hub.export();
    let stats = hub.stats();
    drop(hub);
    let hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    assert_eq!(hub.stats(), stats);
    // The same records, whatever order the reopened stores list them in.
    let sorted = |v: &serde_json::Value| -> Vec<String> {
        let mut items: Vec<String> = v.as_array().unwrap().iter().map(ToString::to_string).collect();
        items.sort();
        items
    };
    let after = hub.export();
    for (key, value) in before.as_object().unwrap() {
        if value.is_array() {
            assert_eq!(sorted(value), sorted(&after[key]), "{key}");
        } else {
            assert_eq!(value, &after[key], "{key}");
        }
    }
}

#[test]
fn the_compaction_settings_are_checked() {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    for growth in [-1.0, f64::NAN, f64::INFINITY] {
        let err = MemoryHub::builder().clock(clock.shared()).config(config(0, growth)).build().unwrap_err();
        assert!(err.to_string().contains("compact_growth"), "{err}");
    }
}

#[test]
fn opening_mends_cross_layer_edges_to_records_no_layer_holds() {
    let data = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    capture_day(&mut hub, &clock, 0);
    hub.on_session_end();
    let victim = hub.hippocampus().iter().next().unwrap().id();
    let record = maxim::maxim_core::LayerRecord::new(LayerKind::Hippocampus, victim);
    let edges = hub.cross_graph().linked(record, None, None).len();
    assert!(edges > 0, "a captured episode has INSTANCE_OF edges");
    assert!(hub.open_report().dangling.is_empty());
    let partition_dir = hub.dir().unwrap().to_path_buf();
    drop(hub);

    // A crash between the episode's removal and the rest of its cascade: the episodic
    // store alone forgets it.
    let mut alone = maxim::hippocampus::Hippocampus::builder()
        .clock(clock.shared())
        .open(partition_dir.join("hippocampus"))
        .unwrap();
    alone.remove(victim).unwrap();
    drop(alone);

    let hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    let report = hub.open_report();
    assert_eq!(report.dangling, vec![record]);
    assert_eq!(report.edges_removed, edges);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert!(!hub.cross_graph().contains_record(record));
    assert!(hub.nac().links().iter().all(|l| !l.memory_ids().contains(&victim)));
    drop(hub);

    // What was mended stays mended.
    let hub = open_hub(data.path(), &clock, maxim::HubConfig::default());
    assert_eq!(hub.open_report(), &maxim::hub::OpenReport::default());
}

/// A capture writes its concepts, their references to the episode and the inline
/// relationships as ATL journal records of the episode, never as single writes, and as one
/// record once its concepts are known; reopened, the memory holds all of it.
#[test]
fn a_capture_is_one_atl_record_and_a_reopen_holds_all_of_it() {
    use maxim::atl::Op;
    use maxim::maxim_core::MemoryLayer;
    use maxim::maxim_core::journal::{StoreDir, SyncPolicy};
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut hub = open_hub(tmp.path(), &clock, maxim::HubConfig::default());
    let mut captured = Vec::new();
    for k in 0..20 {
        clock.set(Timestamp::from_secs(T0 + 60 * k));
        let room = ["kitchen", "hall"][(k % 2) as usize];
        let e = episode("navigate", "go to the kitchen", &["mug"], &["bob"], room, k % 3 != 0);
        let c = hub.capture_detailed(e).unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let named = maxim::extract::extract(hub.hippocampus().peek(c.id).unwrap());
        assert!(named.concepts.len() >= 5, "object, person, room, goal words, tool");
        assert_eq!(c.concepts.len(), named.concepts.len());
        assert_eq!(c.relationships, named.relations.len());
        for &concept in &c.concepts {
            let held = hub.atl().concept(concept).unwrap();
            assert!(held.memory_refs.get(LayerKind::Hippocampus).contains(&c.id));
            assert!(held.source_episode_ids.contains(&c.id));
        }
        captured.push(c);
    }
    let state = |hub: &MemoryHub| {
        let mut records: Vec<String> = hub.atl().iter().map(|r| format!("{r:?}")).collect();
        records.sort();
        (records, hub.atl().concept_graph().edge_count())
    };
    let live = state(&hub);
    drop(hub);
    let mut records_of = vec![0usize; captured.len()];
    let mut single = Vec::new();
    let mut dir =
        StoreDir::<Op>::open(tmp.path().join("default").join("atl"), "atl", SyncPolicy::Never).unwrap();
    dir.replay(0, |op| {
        match op {
            Op::Episode { episode, .. } => {
                let k = captured.iter().position(|c| c.id == episode).expect("a captured episode");
                records_of[k] += 1;
            }
            Op::Hit { .. } | Op::AddRef { .. } => single.push(format!("{op:?}")),
            _ => {}
        }
        Ok::<_, maxim::maxim_core::Error>(())
    })
    .unwrap();
    drop(dir);
    assert!(single.is_empty(), "single writes: {single:?}");
    assert!(records_of[0] >= 1);
    assert!(records_of[1..].iter().all(|&n| n == 1), "{records_of:?}");
    let back = open_hub(tmp.path(), &clock, maxim::HubConfig::default());
    assert_eq!(state(&back), live);
    assert_eq!(back.hippocampus().len(), captured.len());
    let mug = back.atl().concept(captured[0].concepts[0]).unwrap();
    assert_eq!(mug.memory_refs.get(LayerKind::Hippocampus).len(), captured.len());
}
