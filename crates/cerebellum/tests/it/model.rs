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
