//! Saving and loading: everything survives, bad files change nothing, the backup recovers.

use cerebellum::{Cerebellum, Outcome, RunTrace, SkillStatus, Step, Task};
use maxim_core::{LoadOutcome, ManualClock, MemoryLayer, RecordId, Source, Timestamp};

fn populated(clock: &ManualClock) -> (Cerebellum, Vec<RecordId>) {
    let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(5).build().unwrap();
    let ok = Outcome::verified(["verify(target)"]);
    let steps = [Step::read("inspect", "target"), Step::write("restart", "target")];
    let mut run =
        RunTrace::new("r1", "reset a stuck deploy", Source::ToolResult, 0.8).facts(["deploy:stuck"]);
    run.calls.extend(steps.iter().cloned());
    let a = cb.distil(&run, &ok).unwrap().id().unwrap();
    for _ in 0..3 {
        cb.record_use(a, true).unwrap();
    }
    cb.confirm(a, "ops-lead").unwrap();
    let mut poison = run.clone();
    poison.run = "x".into();
    poison.source = Source::Web("evil.example".into());
    poison.trust = 0.3;
    poison.calls.push(Step::write("wipe_volume", "db"));
    let b = cb.distil(&poison, &ok).unwrap().id().unwrap();
    let mut other = run.clone();
    other.goal = "restart a worker".into();
    other.calls.truncate(1);
    let c = cb.distil(&other, &ok).unwrap().id().unwrap();
    cb.link_sequence(a, c).unwrap();
    cb.revoke_source(&Source::Web("evil.example".into())).unwrap();
    (cb, vec![a, b, c])
}

#[test]
fn everything_survives_a_save_and_load() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let (cb, ids) = populated(&clock);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cerebellum.snap");
    cb.save(&path).unwrap();
    let mut fresh = Cerebellum::builder().clock(clock.shared()).id_seed(5).build().unwrap();
    fresh.load(&path).unwrap();
    assert_eq!(fresh.len(), 3);
    for &id in &ids {
        assert_eq!(fresh.skill(id), cb.skill(id), "skill {id}");
    }
    assert_eq!(fresh.skill(ids[0]).unwrap().status, SkillStatus::Active);
    assert_eq!(fresh.skill(ids[1]).unwrap().status, SkillStatus::Retired);
    assert_eq!(fresh.skill_graph().edge_count(), cb.skill_graph().edge_count());
    assert_eq!(fresh.stats().counters, cb.stats().counters);
    let task = Task::new("reset a stuck deploy", ["deploy:stuck"]);
    let before: Vec<_> =
        cb.candidates(&task, 5).unwrap().iter().map(|p| (p.skill.meta.id, p.score)).collect();
    let after: Vec<_> =
        fresh.candidates(&task, 5).unwrap().iter().map(|p| (p.skill.meta.id, p.score)).collect();
    assert_eq!(before, after);
    assert!(fresh.authorise(ids[0]).is_ok());
    // The reloaded store finds the method again: a matching run reinforces.
    let mut run = RunTrace::new("r9", "restart a worker", Source::ToolResult, 0.8).facts(["deploy:stuck"]);
    run.calls.push(Step::read("inspect", "target"));
    let out = fresh.distil(&run, &Outcome::verified(["ok"])).unwrap();
    assert_eq!(out, cerebellum::Distilled::Reinforced(ids[2]));
    // New ids come after the loaded ones.
    let new = fresh.new_skill("anything", vec![Step::read("x", "")], &[]).unwrap();
    assert!(ids.iter().all(|&id| new.meta.id > id));
}

#[test]
fn a_bad_file_changes_nothing_and_the_backup_recovers() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let (mut cb, ids) = populated(&clock);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cerebellum.snap");
    cb.save(&path).unwrap();
    cb.record_use(ids[0], true).unwrap();
    cb.save(&path).unwrap(); // the first save is now the backup
    let uses = cb.skill(ids[0]).unwrap().uses;
    std::fs::write(&path, b"torn write").unwrap();
    let mut fresh = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    assert!(fresh.load(&path).is_err());
    assert!(fresh.is_empty(), "a failed load changes nothing");
    match fresh.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { .. } => {}
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(fresh.skill(ids[0]).unwrap().uses, uses - 1, "the backup is the previous save");
    let mut empty = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    assert!(matches!(empty.load_with_recovery(dir.path().join("none.snap")).unwrap(), LoadOutcome::Missing));
    // A snapshot of another kind is refused.
    let other = dir.path().join("other.snap");
    maxim_core::codec::save(&other, "atl", &1u8).unwrap();
    assert!(matches!(
        empty.load(&other).unwrap_err(),
        cerebellum::Error::Core(maxim_core::Error::WrongKind { .. })
    ));
}

#[test]
fn saves_overwrite_only_their_own_files() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let (cb, _) = populated(&clock);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cerebellum.snap");
    cb.save(&path).unwrap();
    let stranger = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    assert!(matches!(
        stranger.save(&path).unwrap_err(),
        cerebellum::Error::Core(maxim_core::Error::OverwriteRefused { .. })
    ));
    stranger.allow_overwrite(true);
    stranger.save(&path).unwrap();
    assert!(stranger.file_claims().owns(&path));
}

/// The payload layout of a snapshot, rebuilt by hand to write inconsistent files.
#[derive(serde::Serialize)]
struct Payload {
    schema: u16,
    journal_seq: u64,
    skills: Vec<cerebellum::Skill>,
    graph: maxim_core::graph::Graph,
    counters: [u64; 16],
    queries: u64,
}

#[test]
fn an_inconsistent_file_is_refused_and_changes_nothing() {
    use maxim_core::graph::{EdgeKind, Graph};
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let (cb, ids) = populated(&clock);
    let skills: Vec<cerebellum::Skill> = ids.iter().map(|&id| cb.skill(id).unwrap().clone()).collect();
    let dir = tempfile::tempdir().unwrap();
    let good = Payload {
        schema: 1,
        journal_seq: 0,
        skills: skills.clone(),
        graph: Graph::new(),
        counters: [0; 16],
        queries: 0,
    };
    let path = dir.path().join("good.snap");
    maxim_core::codec::save(&path, cerebellum::SNAPSHOT_KIND, &good).unwrap();
    let mut target = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    target.load(&path).unwrap();
    assert_eq!(target.len(), 3, "the hand-made layout is the real one");

    let mut twice = skills.clone();
    twice.push(skills[0].clone());
    let mut stray = Graph::new();
    stray.add_node(RecordId::from_u128(99)).unwrap();
    let mut dependency = Graph::new();
    dependency.add_edge(ids[0], ids[2], EdgeKind::Requires, 0.5, None).unwrap();
    let mut heavy = Graph::new();
    heavy.add_edge(ids[0], ids[2], EdgeKind::Causes, 3.0, None).unwrap();
    let mut invalid = skills.clone();
    invalid[0].uses += 1; // successes and failures no longer add up
    let cases = [
        (
            "future",
            Payload {
                schema: 2,
                journal_seq: 0,
                skills: skills.clone(),
                graph: Graph::new(),
                counters: [0; 16],
                queries: 0,
            },
        ),
        (
            "twice",
            Payload {
                schema: 1,
                journal_seq: 0,
                skills: twice,
                graph: Graph::new(),
                counters: [0; 16],
                queries: 0,
            },
        ),
        (
            "stray",
            Payload {
                schema: 1,
                journal_seq: 0,
                skills: skills.clone(),
                graph: stray,
                counters: [0; 16],
                queries: 0,
            },
        ),
        (
            "dependency",
            Payload {
                schema: 1,
                journal_seq: 0,
                skills: skills.clone(),
                graph: dependency,
                counters: [0; 16],
                queries: 0,
            },
        ),
        (
            "heavy",
            Payload {
                schema: 1,
                journal_seq: 0,
                skills: skills.clone(),
                graph: heavy,
                counters: [0; 16],
                queries: 0,
            },
        ),
        (
            "invalid",
            Payload {
                schema: 1,
                journal_seq: 0,
                skills: invalid,
                graph: Graph::new(),
                counters: [0; 16],
                queries: 0,
            },
        ),
    ];
    let (mut fresh, _) = populated(&clock);
    let before: Vec<_> = fresh.iter().cloned().collect();
    for (name, payload) in cases {
        let path = dir.path().join(format!("{name}.snap"));
        maxim_core::codec::save(&path, cerebellum::SNAPSHOT_KIND, &payload).unwrap();
        let err = fresh.load(&path).expect_err(name);
        // Refused by the layer's checks, the file is moved aside as one the codec refuses.
        assert!(
            matches!(
                err,
                cerebellum::Error::Core(
                    maxim_core::Error::Corrupt { kept_aside: Some(_), .. }
                        | maxim_core::Error::UnsupportedVersion { kept_aside: Some(_), .. }
                )
            ),
            "{name}: {err}"
        );
        assert!(!path.exists(), "{name}: the refused file is kept aside");
        assert_eq!(fresh.iter().cloned().collect::<Vec<_>>(), before, "{name}: nothing changes");
    }

    // Recovery falls back to the backup when the main file fails the layer's checks.
    let path = dir.path().join("main.snap");
    maxim_core::codec::save(&path, cerebellum::SNAPSHOT_KIND, &good).unwrap();
    maxim_core::codec::save(&path, cerebellum::SNAPSHOT_KIND, &good).unwrap(); // and the backup
    let mut stray = Graph::new();
    stray.add_node(RecordId::from_u128(99)).unwrap();
    let bad = Payload { graph: stray, ..good };
    std::fs::write(&path, maxim_core::codec::encode(cerebellum::SNAPSHOT_KIND, &bad).unwrap()).unwrap();
    let mut target = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    match target.load_with_recovery(&path).unwrap() {
        LoadOutcome::FromBackup { primary_error, .. } => assert!(
            matches!(*primary_error, maxim_core::Error::Corrupt { kept_aside: Some(_), .. }),
            "{primary_error:?}"
        ),
        other => panic!("expected the backup, got {other:?}"),
    }
    assert_eq!(target.len(), 3);
}
