//! The promotion, confirmation and retirement rules against a naive model, under random
//! sequences of uses and confirmations.

use cerebellum::{Cerebellum, Outcome, RunTrace, SkillStatus, Step};
use maxim_core::{ManualClock, Source, Timestamp};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Action {
    Use(bool),
    Confirm,
}

/// The rules as the issue states them, written out plainly.
#[derive(Debug)]
struct Model {
    writes: bool,
    outcomes: Vec<bool>,
    confirmed: bool,
    status: SkillStatus,
}

impl Model {
    fn successes(&self) -> usize {
        self.outcomes.iter().filter(|&&s| s).count()
    }

    /// Ok(new status) or Err(()) when the store must refuse.
    fn step(&mut self, action: Action) -> Result<SkillStatus, ()> {
        if self.status == SkillStatus::Retired {
            return Err(());
        }
        match action {
            Action::Use(success) => {
                self.outcomes.push(success);
                let window: Vec<bool> = self.outcomes.iter().rev().take(10).copied().collect();
                let rate = window.iter().filter(|&&s| s).count() as f64 / window.len() as f64;
                if window.len() >= 5 && rate < 0.5 {
                    self.status = SkillStatus::Retired;
                } else if self.status == SkillStatus::Candidate && self.successes() >= 3 {
                    self.status = if self.writes && !self.confirmed {
                        SkillStatus::AwaitingConfirmation
                    } else {
                        SkillStatus::Active
                    };
                }
            }
            Action::Confirm => {
                if !self.writes || self.confirmed {
                    return Err(());
                }
                self.confirmed = true;
                if self.status == SkillStatus::AwaitingConfirmation
                    || (self.status == SkillStatus::Candidate && self.successes() >= 3)
                {
                    self.status = SkillStatus::Active;
                }
            }
        }
        Ok(self.status)
    }
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![8 => any::<bool>().prop_map(Action::Use), 1 => Just(Action::Confirm)]
}

proptest! {
    #[test]
    fn status_follows_the_model(writes in any::<bool>(), actions in proptest::collection::vec(action(), 0..60)) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(1).build().unwrap();
        let step = if writes { Step::write("restart", "target") } else { Step::read("inspect", "target") };
        let run = RunTrace::new("r", "fix it", Source::ToolResult, 0.8).call(step);
        let id = cb.distil(&run, &Outcome::verified(["checked"])).unwrap().id().unwrap();
        let mut model = Model { writes, outcomes: Vec::new(), confirmed: false, status: SkillStatus::Candidate };
        for a in actions {
            let before = cb.skill(id).unwrap().clone();
            let expected = model.step(a);
            let got = match a {
                Action::Use(success) => cb.record_use(id, success).map(|o| o.status),
                Action::Confirm => cb.confirm(id, "ann"),
            };
            if let Ok(status) = expected {
                prop_assert_eq!(got.unwrap(), status);
                prop_assert_eq!(cb.skill(id).unwrap().status, status);
            } else {
                prop_assert!(got.is_err());
                prop_assert_eq!(cb.skill(id).unwrap(), &before, "a refused call changes nothing");
            }
            let skill = cb.skill(id).unwrap();
            prop_assert_eq!(skill.uses as usize, model.outcomes.len());
            prop_assert_eq!(skill.successes as usize, model.successes());
            prop_assert_eq!(skill.confirmation.is_some(), model.confirmed);
            // The gate: a write skill is never authorised without a confirmation.
            if writes && !model.confirmed {
                prop_assert!(cb.authorise(id).is_err());
            }
            prop_assert_eq!(cb.authorise(id).is_ok(), model.status == SkillStatus::Active);
        }
    }
}

#[derive(Debug, Clone)]
enum Event {
    Distil { goal: u8, tools: Vec<u8>, facts: Vec<u8>, trust: u8 },
    Use { pick: usize, success: bool },
    Touch { pick: usize },
    Revoke { source: u8 },
    Advance { hours: u16 },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (0..3u8, proptest::collection::vec(0..5u8, 1..4), proptest::collection::vec(0..5u8, 0..3), 0..4u8)
            .prop_map(|(goal, tools, facts, trust)| Event::Distil { goal, tools, facts, trust }),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(pick, success)| Event::Use { pick, success }),
        1 => any::<usize>().prop_map(|pick| Event::Touch { pick }),
        1 => (0..4u8).prop_map(|source| Event::Revoke { source }),
        2 => (0..2000u16).prop_map(|hours| Event::Advance { hours }),
    ]
}

proptest! {
    /// `candidates` against a naive model: every skill of the goal that is not retired and
    /// whose preconditions the task holds, scored by the core's `final_score`, sorted, cut.
    #[test]
    fn candidates_follow_the_naive_ranking(
        events in proptest::collection::vec(event(), 1..80),
        task_facts in proptest::collection::vec(0..5u8, 0..5),
        limit in 0..6usize,
    ) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(2).build().unwrap();
        let mut ids = Vec::new();
        for (n, e) in events.into_iter().enumerate() {
            match e {
                Event::Distil { goal, tools, facts, trust } => {
                    let mut run = RunTrace::new(
                        format!("r{n}"),
                        format!("goal {goal}"),
                        Source::Other(format!("source {trust}")),
                        0.25 + f64::from(trust) * 0.25,
                    )
                    .facts(facts.iter().map(|f| format!("fact {f}")));
                    for t in tools {
                        run = run.call(Step::read(format!("tool{t}"), "target"));
                    }
                    if let Some(id) = cb.distil(&run, &Outcome::verified(["ok"])).unwrap().id()
                        && !ids.contains(&id) {
                            ids.push(id);
                        }
                }
                Event::Use { pick, success } if !ids.is_empty() => {
                    let id = ids[pick % ids.len()];
                    let _ = cb.record_use(id, success);
                }
                Event::Touch { pick } if !ids.is_empty() => {
                    cb.touch(&[ids[pick % ids.len()]]);
                }
                Event::Revoke { source } => {
                    cb.revoke_source(&Source::Other(format!("source {source}"))).unwrap();
                }
                Event::Advance { hours } => clock.advance(std::time::Duration::from_secs(u64::from(hours) * 3600)),
                _ => {}
            }
        }
        let facts: Vec<String> = task_facts.iter().map(|f| format!("fact {f}")).collect();
        let now = clock.now();
        let rank = cb.config().rank;
        for goal in 0..3u8 {
            let task = cerebellum::Task::new(format!("goal {goal}"), facts.clone());
            let got: Vec<_> =
                cb.candidates(&task, limit).unwrap().iter().map(|p| (p.skill.meta.id, p.score.to_bits())).collect();
            let mut normalised = cerebellum::normalise_facts(facts.iter().map(String::as_str)).unwrap();
            normalised.dedup();
            let mut expected: Vec<_> = ids
                .iter()
                .filter_map(|&id| cb.skill(id))
                .filter(|s| s.name == format!("goal {goal}") && !s.is_retired() && s.applies_to(&normalised))
                .map(|s| {
                    let score = maxim_core::rank::final_score(s.success_rate(), &s.meta, now, false, &rank).unwrap();
                    (s.meta.id, score)
                })
                .collect();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            expected.truncate(limit);
            let expected: Vec<_> = expected.into_iter().map(|(id, s)| (id, s.to_bits())).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
