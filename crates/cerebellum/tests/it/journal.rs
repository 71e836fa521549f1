//! A store opened on a directory: every acknowledged write survives a reopen, with and
//! without checkpoints.

use cerebellum::{Cerebellum, Outcome, RunTrace, SkillStatus, Step, Task};
use maxim_core::journal::SyncPolicy;
use maxim_core::{ManualClock, MemoryLayer, RecordId, Source, Timestamp, days};

fn open(clock: &ManualClock, dir: &std::path::Path) -> Cerebellum {
    Cerebellum::builder().clock(clock.shared()).id_seed(7).sync_policy(SyncPolicy::Always).open(dir).unwrap()
}

fn run(name: &str, goal: &str, source: Source, trust: f64, steps: &[Step]) -> RunTrace {
    let mut r = RunTrace::new(name, goal, source, trust).facts(["deploy:stuck"]);
    r.calls.extend(steps.iter().cloned());
    r
}

/// Every kind of journaled write, in order; returns the ids it made.
fn writes(cb: &mut Cerebellum, clock: &ManualClock) -> Vec<RecordId> {
    let ok = Outcome::verified(["verify(target)"]);
    let steps = [Step::read("inspect", "target"), Step::write("restart", "target")];
    let a = cb
        .distil(&run("r1", "reset a stuck deploy", Source::ToolResult, 0.8, &steps), &ok)
        .unwrap()
        .id()
        .unwrap();
    clock.advance(days(1));
    for success in [true, true, false, true] {
        cb.record_use(a, success).unwrap();
    }
    cb.confirm(a, "ops-lead").unwrap();
    assert_eq!(
        cb.distil(&run("r2", "reset a stuck deploy", Source::UserStated, 1.0, &steps), &ok).unwrap().id(),
        Some(a)
    );
    let evil = Source::Web("evil.example".into());
    let mut bad_steps = steps.to_vec();
    bad_steps.push(Step::write("wipe_volume", "db"));
    let b = cb
        .distil(&run("x", "reset a stuck deploy", evil.clone(), 0.3, &bad_steps), &ok)
        .unwrap()
        .id()
        .unwrap();
    let c = cb
        .distil(&run("r3", "restart a worker", Source::ToolResult, 0.8, &steps[..1]), &ok)
        .unwrap()
        .id()
        .unwrap();
    cb.link_sequence(a, c).unwrap();
    cb.revoke_source(&evil).unwrap();
    let d = cb
        .distil(&run("r4", "clean a disk", Source::ToolResult, 0.8, &[Step::write("rm", "tmp")]), &ok)
        .unwrap()
        .id()
        .unwrap();
    let e = cb
        .distil(&run("r5", "drain a node", Source::ToolResult, 0.8, &[Step::write("cordon", "node")]), &ok)
        .unwrap()
        .id()
        .unwrap();
    cb.remove(d).unwrap();
    cb.retire(e, "ann").unwrap();
    clock.advance(days(200));
    let report = cb.consolidate().unwrap();
    assert!(report.removed >= 1, "the retired skill e and the unused candidate c are forgotten");
    vec![a, b, c, d, e]
}

fn same(a: &Cerebellum, b: &Cerebellum, ids: &[RecordId]) {
    assert_eq!(a.len(), b.len());
    for &id in ids {
        assert_eq!(a.skill(id), b.skill(id), "skill {id}");
    }
    assert_eq!(a.skill_graph().edge_count(), b.skill_graph().edge_count());
    let task = Task::new("reset a stuck deploy", ["deploy:stuck"]);
    let plans = |cb: &Cerebellum| -> Vec<(RecordId, u64)> {
        cb.candidates(&task, 5).unwrap().iter().map(|p| (p.skill.meta.id, p.score.to_bits())).collect()
    };
    assert_eq!(plans(a), plans(b));
}

#[test]
fn reopening_finds_every_write() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let dir = tempfile::tempdir().unwrap();
    let mut cb = open(&clock, dir.path());
    assert!(cb.is_journaled());
    let ids = writes(&mut cb, &clock);
    let back = {
        let expected_len = cb.len();
        drop(cb); // no save, no checkpoint: the journal alone
        let back = open(&clock, dir.path());
        assert_eq!(back.len(), expected_len);
        back
    };
    // The same writes on a store in memory, with the same clock and id seed.
    let mut memory = Cerebellum::builder().clock(clock.shared()).id_seed(7).build().unwrap();
    clock.set(Timestamp::from_secs(1_700_000_000));
    assert_eq!(writes(&mut memory, &clock), ids);
    same(&back, &memory, &ids);
    assert_eq!(back.skill(ids[0]).unwrap().status, SkillStatus::Active);
    assert_eq!(back.skill(ids[0]).unwrap().confirmation.as_ref().unwrap().by, "ops-lead");
    assert_eq!(back.skill(ids[0]).unwrap().uses, 5);
    assert_eq!(back.stats().counters["revocations"], 1, "the revocation survives");
    assert!(back.skill(ids[3]).is_none(), "the removal survives");
    for id in [ids[1], ids[2], ids[4]] {
        assert!(back.skill(id).is_none(), "the consolidation survives: retired and unused skills went");
    }
    for counter in
        ["distilled", "reinforced", "uses", "confirmations", "retirements", "removals", "sequence_links"]
    {
        assert_eq!(back.stats().counters[counter], memory.stats().counters[counter], "{counter}");
    }
    assert_eq!(back.len(), memory.len());
}

#[test]
fn a_checkpoint_compacts_and_later_writes_are_journaled() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let dir = tempfile::tempdir().unwrap();
    let mut cb = open(&clock, dir.path());
    let ids = writes(&mut cb, &clock);
    cb.checkpoint().unwrap();
    let journal = dir.path().join("cerebellum.journal");
    let compacted = std::fs::metadata(&journal).unwrap().len();
    cb.record_use(ids[0], true).unwrap();
    let f = cb
        .distil(
            &run("r9", "restart a worker", Source::ToolResult, 0.9, &[Step::read("ping", "target")]),
            &Outcome::verified(["pong"]),
        )
        .unwrap()
        .id()
        .unwrap();
    assert!(std::fs::metadata(&journal).unwrap().len() > compacted);
    let mut all = ids.clone();
    all.push(f);
    let copy: Vec<_> = all.iter().map(|&id| cb.skill(id).cloned()).collect();
    drop(cb);
    let back = open(&clock, dir.path());
    let got: Vec<_> = all.iter().map(|&id| back.skill(id).cloned()).collect();
    assert_eq!(got, copy);
    // Reopening twice more (no writes in between) changes nothing.
    drop(back);
    let again = open(&clock, dir.path());
    let twice: Vec<_> = all.iter().map(|&id| again.skill(id).cloned()).collect();
    assert_eq!(twice, copy);
}

#[test]
fn one_directory_one_store_and_memory_stores_cannot_checkpoint() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let dir = tempfile::tempdir().unwrap();
    let _first = open(&clock, dir.path());
    let second = Cerebellum::builder().clock(clock.shared()).open(dir.path());
    assert!(second.is_err(), "the directory is locked");
    let mut memory = Cerebellum::builder().clock(clock.shared()).build().unwrap();
    assert!(!memory.is_journaled());
    assert!(memory.checkpoint().is_err());
}

#[test]
fn loading_into_an_open_store_makes_the_directory_hold_the_loaded_contents() {
    let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
    let elsewhere = tempfile::tempdir().unwrap();
    let mut other = Cerebellum::builder().clock(clock.shared()).id_seed(9).build().unwrap();
    let ok = Outcome::verified(["ok"]);
    let x = other
        .distil(&run("o1", "make tea", Source::UserStated, 1.0, &[Step::write("boil", "kettle")]), &ok)
        .unwrap();
    let snap = elsewhere.path().join("other.snap");
    other.save(&snap).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut cb = open(&clock, dir.path());
    let y = cb
        .distil(&run("r1", "make coffee", Source::UserStated, 1.0, &[Step::write("grind", "beans")]), &ok)
        .unwrap();
    cb.load(&snap).unwrap();
    let z = cb
        .distil(&run("r2", "make soup", Source::UserStated, 1.0, &[Step::write("stir", "pot")]), &ok)
        .unwrap();
    drop(cb);
    let back = open(&clock, dir.path());
    assert!(back.skill(x.id().unwrap()).is_some());
    assert!(back.skill(y.id().unwrap()).is_none(), "the load replaced it");
    assert!(back.skill(z.id().unwrap()).is_some());
    assert_eq!(back.len(), 2);
}
