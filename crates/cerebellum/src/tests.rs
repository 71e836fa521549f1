//! Unit tests of the store's rules: one test (at least) per rule of seed 004's procedural
//! memory as issue 12 lists them.

use std::time::Duration;

use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, RecordId, Source, Timestamp, days};

use crate::config::CerebellumConfig;
use crate::skill::{Authorisation, Refusal, RetireReason, SkillStatus, Step};
use crate::store::{Cerebellum, Distilled, Outcome, RunTrace, Skip, Task};
use crate::{Error, MAX_ORIGINS};

const T0: Timestamp = Timestamp::from_secs(1_700_000_000);
const GOAL: &str = "reset a stuck deploy";

fn store_with(config: CerebellumConfig) -> (ManualClock, Cerebellum) {
    let clock = ManualClock::new(T0);
    let cb = Cerebellum::builder().config(config).clock(clock.shared()).id_seed(3).build().unwrap();
    (clock, cb)
}

fn store() -> (ManualClock, Cerebellum) {
    store_with(CerebellumConfig::default())
}

fn run(name: &str, source: Source, trust: f64, steps: &[Step]) -> RunTrace {
    let mut r = RunTrace::new(name, GOAL, source, trust).facts(["deploy:stuck", "cluster:lab"]);
    r.calls.extend(steps.iter().cloned());
    r
}

fn reads() -> Vec<Step> {
    vec![Step::read("inspect", "target"), Step::read("logs", "target")]
}

fn writes() -> Vec<Step> {
    vec![Step::write("drain", "target"), Step::write("restart", "target")]
}

fn ok() -> Outcome {
    Outcome::verified(["verify(target)"])
}

fn task() -> Task {
    Task::new(GOAL, ["deploy:stuck", "cluster:lab", "region:eu"])
}

fn distil_new(cb: &mut Cerebellum, steps: &[Step]) -> RecordId {
    match cb.distil(&run("r1", Source::ToolResult, 0.8, steps), &ok()).unwrap() {
        Distilled::Created(id) => id,
        other => panic!("expected a new skill, got {other:?}"),
    }
}

#[test]
fn only_a_verified_success_yields_a_skill() {
    let (_c, mut cb) = store();
    let r = run("r1", Source::ToolResult, 0.8, &reads());
    assert_eq!(cb.distil(&r, &Outcome::failed()).unwrap(), Distilled::Skipped(Skip::NotVerified));
    let unverified = Outcome { verified_success: true, checks: vec![] };
    assert_eq!(cb.distil(&r, &unverified).unwrap(), Distilled::Skipped(Skip::NotVerified));
    let failed_with_checks = Outcome { verified_success: false, checks: vec!["verify".into()] };
    assert_eq!(cb.distil(&r, &failed_with_checks).unwrap(), Distilled::Skipped(Skip::NotVerified));
    assert_eq!(cb.len(), 0);
    let id = cb.distil(&r, &ok()).unwrap().id().unwrap();
    let skill = cb.skill(id).unwrap();
    assert_eq!(skill.name, GOAL);
    assert_eq!(skill.preconditions, ["cluster:lab", "deploy:stuck"]);
    assert_eq!(skill.steps, reads());
    assert_eq!(skill.checks, ["verify(target)"]);
    assert_eq!((skill.uses, skill.successes, skill.failures), (0, 0, 0));
    assert_eq!(skill.status, SkillStatus::Candidate);
    assert_eq!(skill.meta.trace.kind(), maxim_core::TraceKind::Procedural);
    assert_eq!((skill.meta.source.clone(), skill.meta.trust.get()), (Source::ToolResult, 0.8));
    assert_eq!(skill.origins[0].first_run, "r1");
    assert_eq!(cb.stats().counters["skipped_unverified"], 3);
}

#[test]
fn a_run_below_the_trust_floor_yields_nothing() {
    let (_c, mut cb) = store();
    let r = run("r1", Source::Web("evil.example".into()), 0.1, &reads());
    assert_eq!(
        cb.distil(&r, &ok()).unwrap(),
        Distilled::Skipped(Skip::BelowTrustFloor { trust: 0.1, floor: 0.2 })
    );
    assert!(cb.is_empty());
    // At the floor a skill is made.
    let r = run("r2", Source::Web("evil.example".into()), 0.2, &reads());
    assert!(matches!(cb.distil(&r, &ok()).unwrap(), Distilled::Created(_)));
}

#[test]
fn a_matching_method_reinforces_the_held_skill() {
    let (clock, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    let strength_before = cb.skill(id).unwrap().meta.trace.peak();
    clock.advance(Duration::from_secs(60));
    let mut again = run("r2", Source::UserStated, 1.0, &reads());
    again.goal = "Reset a stuck deploy ".into(); // the same goal key
    again.facts = vec!["deploy:stuck".into(), "region:eu".into()];
    let out = cb.distil(&again, &Outcome::verified(["verify(target)", "audit()"])).unwrap();
    assert_eq!(out, Distilled::Reinforced(id));
    assert_eq!(cb.len(), 1);
    let skill = cb.skill(id).unwrap();
    assert_eq!((skill.uses, skill.successes), (1, 1), "a reinforcing run is a verified success");
    assert_eq!(skill.preconditions, ["deploy:stuck"], "narrowed to the facts both runs held");
    assert_eq!(skill.checks, ["verify(target)", "audit()"]);
    assert_eq!(skill.origins.len(), 2);
    assert_eq!(skill.meta.trust.get(), 1.0, "a more trusted run raises trust");
    assert!(skill.meta.trace.peak() > strength_before || skill.meta.trace.reinforcement_count() > 0);
    assert_eq!(skill.meta.accessed_at, clock.now());
    // The same source again adds a run to its origin, not a new origin.
    cb.distil(&run("r3", Source::UserStated, 0.4, &reads()), &ok()).unwrap();
    let skill = cb.skill(id).unwrap();
    assert_eq!(skill.origins.len(), 2);
    assert_eq!((skill.origins[1].runs, skill.origins[1].last_run.as_str()), (2, "r3"));
    assert_eq!(skill.origins[1].trust.get(), 1.0);
    // Other steps, or another goal, are another method.
    let mut other = run("r4", Source::ToolResult, 0.8, &reads());
    other.calls.reverse();
    assert!(matches!(cb.distil(&other, &ok()).unwrap(), Distilled::Created(_)));
    let mut other = run("r5", Source::ToolResult, 0.8, &reads());
    other.goal = "restart a worker".into();
    assert!(matches!(cb.distil(&other, &ok()).unwrap(), Distilled::Created(_)));
    assert_eq!(cb.len(), 3);
}

#[test]
fn a_retired_method_is_not_learned_again_and_origins_are_bounded() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    for n in 1..MAX_ORIGINS {
        let r = run(&format!("r{n}"), Source::Other(format!("src-{n}")), 0.5, &reads());
        assert_eq!(cb.distil(&r, &ok()).unwrap(), Distilled::Reinforced(id));
    }
    let full = run("rx", Source::Other("one-too-many".into()), 0.5, &reads());
    assert_eq!(cb.distil(&full, &ok()).unwrap(), Distilled::Skipped(Skip::OriginsFull { id }));
    cb.retire(id, "ann").unwrap();
    assert_eq!(
        cb.distil(&run("ry", Source::ToolResult, 0.8, &reads()), &ok()).unwrap(),
        Distilled::Skipped(Skip::MatchesRetired { id })
    );
}

#[test]
fn promotion_after_the_configured_successes() {
    let (_c, mut cb) = store_with(CerebellumConfig { promote_after: 2, ..CerebellumConfig::default() });
    let id = distil_new(&mut cb, &reads());
    let first = cb.record_use(id, true).unwrap();
    assert_eq!(
        (first.previous, first.status, first.promoted()),
        (SkillStatus::Candidate, SkillStatus::Candidate, false)
    );
    assert_eq!(cb.authorisation(id).unwrap(), Authorisation::Trial);
    let second = cb.record_use(id, true).unwrap();
    assert!(second.promoted());
    assert_eq!(second.status, SkillStatus::Active, "a read-only skill needs no human");
    assert_eq!(cb.authorisation(id).unwrap(), Authorisation::Execute);
    assert!(cb.skill(id).unwrap().meta.long_term, "an active skill is long-term");
    assert_eq!(cb.stats().counters["promotions"], 1);
}

#[test]
fn write_steps_need_a_recorded_confirmation() {
    let (clock, mut cb) = store();
    let id = distil_new(&mut cb, &writes());
    for _ in 0..5 {
        cb.record_use(id, true).unwrap();
    }
    assert_eq!(cb.skill(id).unwrap().status, SkillStatus::AwaitingConfirmation);
    assert_eq!(cb.authorisation(id).unwrap(), Authorisation::Trial);
    let err = cb.authorise(id).unwrap_err();
    assert!(matches!(
        err,
        Error::NotAuthorised { reason: Refusal::NotActive { status: SkillStatus::AwaitingConfirmation }, .. }
    ));
    clock.advance(Duration::from_secs(5));
    assert!(cb.confirm(id, "  ").is_err(), "a confirmation names who");
    assert_eq!(cb.confirm(id, "ops-lead").unwrap(), SkillStatus::Active);
    let skill = cb.skill(id).unwrap();
    let c = skill.confirmation.as_ref().unwrap();
    assert_eq!((c.by.as_str(), c.at), ("ops-lead", clock.now()));
    assert!(cb.authorise(id).is_ok());
    assert!(matches!(cb.confirm(id, "bob"), Err(Error::AlreadyConfirmed { ref by, .. }) if by == "ops-lead"));
    // A read-only skill has nothing to confirm.
    let read = distil_new(&mut cb, &reads());
    assert!(matches!(cb.confirm(read, "ops-lead"), Err(Error::NothingToConfirm { .. })));
}

#[test]
fn a_confirmation_given_early_promotes_straight_to_active() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &writes());
    assert_eq!(cb.confirm(id, "ann").unwrap(), SkillStatus::Candidate);
    for _ in 0..3 {
        cb.record_use(id, true).unwrap();
    }
    assert_eq!(cb.skill(id).unwrap().status, SkillStatus::Active);
}

#[test]
fn without_the_gate_write_skills_are_promoted_alone() {
    let (_c, mut cb) =
        store_with(CerebellumConfig { require_confirmation: false, ..CerebellumConfig::default() });
    let id = distil_new(&mut cb, &writes());
    for _ in 0..3 {
        cb.record_use(id, true).unwrap();
    }
    assert_eq!(cb.skill(id).unwrap().status, SkillStatus::Active);
    assert!(cb.authorise(id).is_ok());
}

#[test]
fn an_active_unconfirmed_write_skill_cannot_be_stored_with_the_gate_on() {
    let (_c, mut cb) = store();
    let mut skill = cb.new_skill(GOAL, writes(), &["verify"]).unwrap();
    skill.status = SkillStatus::Active;
    let id = skill.meta.id;
    assert!(matches!(cb.store(skill.clone()), Err(Error::ConfirmationRequired { id: got }) if got == id));
    assert!(cb.is_empty());
    skill.confirmation = Some(crate::Confirmation { by: "ann".into(), at: T0 });
    assert_eq!(cb.store(skill).unwrap(), id);
}

#[test]
fn retirement_when_the_windowed_success_rate_falls() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    for _ in 0..6 {
        cb.record_use(id, true).unwrap();
    }
    assert_eq!(cb.skill(id).unwrap().status, SkillStatus::Active);
    // Window 10, at least 5 uses, below 0.5: six successes then failures. After five
    // failures the last ten hold 5/10 = 0.5 (kept); the sixth makes it 4/10.
    for n in 0..5 {
        let out = cb.record_use(id, false).unwrap();
        assert_eq!(out.status, SkillStatus::Active, "failure {n}");
    }
    let out = cb.record_use(id, false).unwrap();
    assert!(out.retired());
    let skill = cb.skill(id).unwrap();
    let r = skill.retirement.as_ref().unwrap();
    assert_eq!(r.previous, SkillStatus::Active);
    assert!(
        matches!(r.reason, RetireReason::LowSuccessRate { rate, window: 10 } if (rate - 0.4).abs() < 1e-12)
    );
    assert_eq!((skill.uses, skill.successes, skill.failures), (12, 6, 6));
    // Retired skills are not offered and cannot be used or confirmed.
    assert!(cb.candidates(&task(), 10).unwrap().is_empty());
    assert!(matches!(
        cb.record_use(id, true),
        Err(Error::InvalidStatus { status: SkillStatus::Retired, .. })
    ));
    assert!(matches!(cb.authorise(id), Err(Error::NotAuthorised { reason: Refusal::Retired, .. })));
    assert_eq!(cb.stats().counters["retirements"], 1);
}

#[test]
fn a_new_skill_is_not_retired_before_the_window_has_enough_uses() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    for _ in 0..4 {
        assert_eq!(cb.record_use(id, false).unwrap().status, SkillStatus::Candidate);
    }
    assert!(cb.record_use(id, false).unwrap().retired());
}

#[test]
fn low_trust_skills_inform_but_never_authorise() {
    let (_c, mut cb) = store();
    let web = Source::Web("paste.example".into());
    let id = cb.distil(&run("rx", web, 0.3, &reads()), &ok()).unwrap().id().unwrap();
    for _ in 0..3 {
        cb.record_use(id, true).unwrap();
    }
    assert_eq!(cb.skill(id).unwrap().status, SkillStatus::Active);
    let plans = cb.candidates(&task(), 10).unwrap();
    assert_eq!(plans.len(), 1, "a low-trust skill is listed");
    let expected = Authorisation::InformOnly(Refusal::LowTrust { trust: 0.3, floor: 0.5 });
    assert_eq!(plans[0].authorisation, expected);
    assert!(!plans[0].authorisation.may_execute());
    assert!(matches!(cb.authorise(id), Err(Error::NotAuthorised { reason: Refusal::LowTrust { .. }, .. })));
}

#[test]
fn candidates_match_goal_and_preconditions_and_rank_by_success_trust_and_recency() {
    let (clock, mut cb) = store();
    let proven = distil_new(&mut cb, &reads());
    let fresh = distil_new(&mut cb, &writes());
    let mut narrow = run("r3", Source::ToolResult, 0.8, &[Step::read("ping", "target")]);
    narrow.facts.push("os:windows".into());
    let narrow = cb.distil(&narrow, &ok()).unwrap().id().unwrap();
    let mut elsewhere = run("r4", Source::ToolResult, 0.8, &reads());
    elsewhere.goal = "rotate the logs".into();
    cb.distil(&elsewhere, &ok()).unwrap();
    for _ in 0..3 {
        cb.record_use(proven, true).unwrap();
    }
    let plans = cb.candidates(&task(), 10).unwrap();
    let ids: Vec<RecordId> = plans.iter().map(|p| p.skill.meta.id).collect();
    assert_eq!(ids, [proven, fresh], "preconditions and goal filter; success ranks");
    assert!(plans[0].score > plans[1].score);
    assert!(!ids.contains(&narrow));
    assert_eq!(cb.candidates(&task(), 1).unwrap().len(), 1);
    // Recency: a month without use halves the memory score.
    let before = plans[1].score;
    clock.advance(days(30));
    let later = cb.candidates(&task(), 10).unwrap();
    let fresh_later = later.iter().find(|p| p.skill.meta.id == fresh).unwrap().score;
    assert!(fresh_later < before * 0.6, "{fresh_later} vs {before}");
    // Trust: the same record with less trust ranks lower.
    let (_c2, mut other) = store();
    let high = other.distil(&run("a", Source::ToolResult, 0.9, &reads()), &ok()).unwrap().id().unwrap();
    let low = other.distil(&run("b", Source::ToolResult, 0.6, &writes()), &ok()).unwrap().id().unwrap();
    let order: Vec<RecordId> =
        other.candidates(&task(), 10).unwrap().iter().map(|p| p.skill.meta.id).collect();
    assert_eq!(order, [high, low]);
    // Reads record no access.
    let accessed = cb.skill(proven).unwrap().meta.access_count;
    let _ = cb.candidates(&task(), 10).unwrap();
    assert_eq!(cb.skill(proven).unwrap().meta.access_count, accessed);
}

#[test]
fn revoke_source_retires_and_reports_everything_from_it() {
    let (_c, mut cb) = store();
    let evil = Source::Web("evil.example".into());
    let own = distil_new(&mut cb, &reads());
    let bad = cb.distil(&run("x1", evil.clone(), 0.3, &writes()), &ok()).unwrap().id().unwrap();
    // The hostile source also reinforced a good skill: that one goes too.
    assert_eq!(
        cb.distil(&run("x2", evil.clone(), 0.3, &reads()), &ok()).unwrap(),
        Distilled::Reinforced(own)
    );
    let mut third = run("x3", evil.clone(), 0.3, &[Step::write("wipe", "db")]);
    third.goal = "free disk space".into();
    let old = cb.distil(&third, &ok()).unwrap().id().unwrap();
    cb.retire(old, "ann").unwrap();
    let clean = cb.distil(&run("r9", Source::ToolResult, 0.8, &[Step::read("ping", "x")]), &ok()).unwrap();
    let report = cb.revoke_source(&evil).unwrap();
    let mut expected = vec![own, bad];
    expected.sort_unstable();
    assert_eq!(report.retired, expected);
    assert_eq!(report.already_retired, [old]);
    assert_eq!(report.all().count(), 3);
    for id in [own, bad] {
        let skill = cb.skill(id).unwrap();
        assert!(skill.is_retired());
        assert!(
            matches!(&skill.retirement.as_ref().unwrap().reason, RetireReason::Revoked { source } if *source == evil)
        );
    }
    assert!(!cb.skill(clean.id().unwrap()).unwrap().is_retired());
    let offered: Vec<RecordId> =
        cb.candidates(&task(), 10).unwrap().iter().map(|p| p.skill.meta.id).collect();
    assert_eq!(offered, [clean.id().unwrap()]);
    // Revoking again retires nothing new and still reports everything.
    let again = cb.revoke_source(&evil).unwrap();
    assert!(again.retired.is_empty());
    assert_eq!(again.already_retired.len(), 3);
    assert_eq!(cb.stats().counters["revocations"], 2);
}

#[test]
fn sequence_links_and_shared_tools_form_the_graph() {
    let (_c, mut cb) = store();
    let a = distil_new(&mut cb, &reads());
    let mut other = run("r2", Source::ToolResult, 0.8, &reads());
    other.goal = "diagnose a slow service".into();
    let b = cb.distil(&other, &ok()).unwrap().id().unwrap();
    let c = distil_new(&mut cb, &[Step::write("format", "disk")]);
    // a and b share every tool: associated both ways.
    assert_eq!(cb.skill_graph().associated(a, &[maxim_core::EdgeKind::Associates]), [(b, 1.0)]);
    assert!(cb.skill_graph().associated(c, &[maxim_core::EdgeKind::Associates]).is_empty());
    assert_eq!(cb.link_sequence(b, c).unwrap(), 0.5);
    assert!((cb.link_sequence(b, c).unwrap() - 0.6).abs() < 1e-12);
    let reached: Vec<RecordId> = cb.recall_associated(&[a], 10).iter().map(|(s, _)| s.id()).collect();
    assert_eq!(reached, [b, c], "a -> b (shared tools) -> c (followed)");
    assert!(cb.link_sequence(a, a).is_err());
    assert!(cb.link_sequence(a, RecordId::from_u128(5)).unwrap_err().is_not_found());
}

#[test]
fn consolidation_forgets_unused_candidates_and_old_retired_skills_and_keeps_active_ones() {
    let (clock, mut cb) = store();
    let active = distil_new(&mut cb, &reads());
    for _ in 0..3 {
        cb.record_use(active, true).unwrap();
    }
    let unused = distil_new(&mut cb, &writes());
    let retired = distil_new(&mut cb, &[Step::read("ping", "x")]);
    cb.retire(retired, "ann").unwrap();
    let report = cb.consolidate().unwrap();
    assert_eq!((report.removed, report.preserved), (0, 3));
    clock.advance(days(200));
    let report = cb.consolidate().unwrap();
    assert_eq!((report.removed, report.preserved), (2, 1));
    assert!(cb.skill(active).is_some());
    assert!(cb.skill(unused).is_none() && cb.skill(retired).is_none());
    assert_eq!(cb.stats().counters["consolidations"], 2);
}

#[test]
fn failed_calls_change_nothing() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    let before = cb.skill(id).unwrap().clone();
    let unknown = RecordId::from_u128(77);
    assert!(cb.record_use(unknown, true).unwrap_err().is_not_found());
    assert!(cb.confirm(unknown, "ann").unwrap_err().is_not_found());
    assert!(cb.retire(unknown, "ann").unwrap_err().is_not_found());
    assert!(cb.authorise(unknown).unwrap_err().is_not_found());
    assert!(cb.revoke_source(&Source::Other("nobody".into())).unwrap().retired.is_empty());
    let mut bad = run("r", Source::ToolResult, f64::NAN, &reads());
    assert!(cb.distil(&bad, &ok()).is_err());
    bad.trust = 0.8;
    bad.calls.clear();
    assert!(cb.distil(&bad, &ok()).is_err());
    bad.calls = vec![Step::read("bad\ntool", "x")];
    assert!(cb.distil(&bad, &ok()).is_err());
    bad.calls = reads();
    bad.goal = "!!".into();
    assert!(cb.distil(&bad, &ok()).is_err());
    assert!(cb.candidates(&Task::new("  ", ["x"]), 5).is_err());
    assert!(cb.candidates(&Task::new(GOAL, [" "]), 5).is_err());
    assert_eq!(cb.skill(id).unwrap(), &before);
    assert_eq!(cb.len(), 1);
}

#[test]
fn the_compact_score_is_the_core_final_score() {
    let (clock, mut cb) = store();
    let a = distil_new(&mut cb, &reads());
    let b = cb.distil(&run("r2", Source::UserStated, 0.95, &writes()), &ok()).unwrap().id().unwrap();
    cb.record_use(a, true).unwrap();
    clock.advance(Duration::from_secs(5_000));
    cb.record_use(b, false).unwrap();
    cb.touch(&[a]);
    clock.advance(days(3));
    let now = clock.now();
    for plan in cb.candidates(&task(), 10).unwrap() {
        let s = plan.skill;
        let expected =
            maxim_core::rank::final_score(s.success_rate(), &s.meta, now, false, &cb.config().rank).unwrap();
        assert_eq!(plan.score.to_bits(), expected.to_bits());
    }
}

#[test]
fn a_success_retires_when_the_window_still_holds_too_many_failures() {
    let (_c, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    for _ in 0..4 {
        cb.record_use(id, false).unwrap();
    }
    // Five uses, one success: 0.2 < 0.5. The same holds for a reinforcing distillation.
    let again = cb.distil(&run("r2", Source::ToolResult, 0.8, &reads()), &ok()).unwrap();
    assert_eq!(again, Distilled::Reinforced(id));
    let skill = cb.skill(id).unwrap();
    assert!(skill.is_retired());
    assert!(matches!(
        skill.retirement.as_ref().unwrap().reason,
        RetireReason::LowSuccessRate { window: 5, .. }
    ));
}

#[test]
fn reads_that_count_as_use_reinforce_the_trace_and_plain_reads_do_not() {
    let (clock, mut cb) = store();
    let id = distil_new(&mut cb, &reads());
    let count = |cb: &Cerebellum| cb.skill(id).unwrap().meta.trace.reinforcement_count();
    let base = count(&cb);
    clock.advance(days(10));
    let _ = cb.skill(id);
    let _ = cb.candidates(&task(), 5).unwrap();
    assert_eq!(count(&cb), base, "plain reads record nothing");
    let params = cb.config().rank.trace;
    let now = clock.now();
    let before = cb.skill(id).unwrap().meta.trace.strength_at(now, &params);
    cb.get(id).unwrap();
    assert_eq!(count(&cb), base + 1);
    let after = cb.skill(id).unwrap().meta.trace.strength_at(now, &params);
    assert!(after >= before + 0.1 - 1e-12 && after < before + 0.105, "{before} -> {after}");
    assert_eq!(cb.touch(&[id, RecordId::from_u128(77)]), 1);
    assert_eq!(count(&cb), base + 2);
    assert_eq!(cb.skill(id).unwrap().meta.trace.last_reinforced(), now);
}
