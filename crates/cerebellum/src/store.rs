//! [`Cerebellum`]: the skill store (assembled by [`CerebellumBuilder`] with a
//! [`CerebellumConfig`]), and every rule of seed 004's procedural memory.
//!
//! - [`distil`](Cerebellum::distil): only a verified success (a success with at least one
//!   check) from a run trusted at least [`distil_min_trust`](CerebellumConfig::distil_min_trust)
//!   yields a skill; a run whose method (goal and steps) matches a held skill reinforces it
//!   instead: one more successful use, one more origin, its preconditions narrowed to the
//!   facts both runs held.
//! - [`candidates`](Cerebellum::candidates): the skills whose goal and preconditions match a
//!   task, ranked by the core's [`final_score`](maxim_core::rank::final_score) with the
//!   skill's success rate as relevance (trust and recency come in through the memory score),
//!   each with its [`Authorisation`]. Retired skills are never offered.
//! - [`record_use`](Cerebellum::record_use): after
//!   [`promote_after`](CerebellumConfig::promote_after) successes a candidate is promoted
//!   (to active, or, with a write step and no confirmation, to awaiting confirmation); when
//!   the success rate over the last [`retire_window`](CerebellumConfig::retire_window) uses
//!   falls below [`retire_below`](CerebellumConfig::retire_below), it is retired.
//! - [`confirm`](Cerebellum::confirm): a human's confirmation, recorded, without which a
//!   skill with a write step never becomes active.
//! - [`authorise`](Cerebellum::authorise): only an active skill trusted at least
//!   [`authorise_min_trust`](CerebellumConfig::authorise_min_trust) may run unsupervised; a
//!   low-trust skill is listed but never authorised.
//! - [`revoke_source`](Cerebellum::revoke_source): retires everything distilled from a source
//!   at once and reports it.
//!
//! Every mutation validates first, then resolves to an operation (ids, times and status
//! changes already chosen) that one infallible function applies, so a journal can log the
//! operation and replay it exactly.
//!
//! ```
//! use cerebellum::{Cerebellum, Distilled, Outcome, RunTrace, SkillStatus, Step, Task};
//! use maxim_core::{ManualClock, Source, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(1).build()?;
//! let run = RunTrace::new("run-1", "reset a stuck deploy", Source::ToolResult, 0.8)
//!     .facts(["deploy:stuck"])
//!     .call(Step::read("inspect", "target"))
//!     .call(Step::write("restart", "target"));
//! let ok = Outcome::verified(["verify(target)"]);
//! let Distilled::Created(id) = cb.distil(&run, &ok)? else { panic!("a verified run yields a skill") };
//! assert!(matches!(cb.distil(&run, &Outcome::failed())?, Distilled::Skipped(_)));
//! for _ in 0..3 {
//!     cb.record_use(id, true)?;
//! }
//! assert_eq!(cb.skill(id).unwrap().status, SkillStatus::AwaitingConfirmation); // it writes
//! cb.confirm(id, "ops-lead")?;
//! let plans = cb.candidates(&Task::new("Reset a stuck deploy", ["deploy:stuck", "env:prod"]), 5)?;
//! assert_eq!(plans[0].skill.meta.id, id);
//! assert!(cb.authorise(id).is_ok());
//! # Ok::<(), cerebellum::Error>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use maxim_core::graph::{ActivationParams, EdgeKind, Graph};
use maxim_core::journal::StoreDir;
use maxim_core::layer::Callbacks;
use maxim_core::{IdGenerator, RecordId, RecordMeta, SharedClock, Source, Timestamp, TraceKind, Trust};
use serde::{Deserialize, Serialize};

use crate::config::{CerebellumBuilder, CerebellumConfig};
use crate::error::{Error, Result};
use crate::skill::{
    Authorisation, MAX_CHECKS, MAX_ORIGINS, MAX_STEPS, Origin, Refusal, RetireReason, Retirement, Skill,
    SkillStatus, Step, check_text, goal_key, is_sorted_subset, normalise_facts,
};
use crate::state::{Op, State};

/// The layer's name.
pub const LAYER_NAME: &str = "cerebellum";

/// The trace of a run, as [`distil`](Cerebellum::distil) takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunTrace {
    /// The run's id (any text, for provenance).
    pub run: String,
    /// What the run set out to do; becomes the skill's name.
    pub goal: String,
    /// What held when it ran; become the skill's preconditions.
    pub facts: Vec<String>,
    /// The tool calls that did the work, in order; become the skill's steps.
    pub calls: Vec<Step>,
    /// Where the run's instructions and inputs came from.
    pub source: Source,
    /// How far the run is trusted, in `[0, 1]`.
    pub trust: f64,
}

impl RunTrace {
    /// A run with no facts and no calls yet.
    pub fn new(run: impl Into<String>, goal: impl Into<String>, source: Source, trust: f64) -> Self {
        Self { run: run.into(), goal: goal.into(), facts: Vec::new(), calls: Vec::new(), source, trust }
    }

    /// The same run with `facts` added.
    pub fn facts<S: Into<String>>(mut self, facts: impl IntoIterator<Item = S>) -> Self {
        self.facts.extend(facts.into_iter().map(Into::into));
        self
    }

    /// The same run with one more call.
    pub fn call(mut self, step: Step) -> Self {
        self.calls.push(step);
        self
    }
}

/// How a run ended, as [`distil`](Cerebellum::distil) takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Whether the run's checks verified success.
    pub verified_success: bool,
    /// The checks that verified it (a success without checks is not verified).
    pub checks: Vec<String>,
}

impl Outcome {
    /// A success verified by `checks`.
    pub fn verified<S: Into<String>>(checks: impl IntoIterator<Item = S>) -> Self {
        Self { verified_success: true, checks: checks.into_iter().map(Into::into).collect() }
    }

    /// A failure (or an unverified end).
    pub fn failed() -> Self {
        Self { verified_success: false, checks: Vec::new() }
    }
}

/// What [`distil`](Cerebellum::distil) did.
#[derive(Debug, Clone, PartialEq)]
pub enum Distilled {
    /// A new candidate skill.
    Created(RecordId),
    /// The method matched this skill, which was reinforced.
    Reinforced(RecordId),
    /// No skill was made or changed.
    Skipped(Skip),
}

impl Distilled {
    /// The skill made or reinforced.
    pub fn id(&self) -> Option<RecordId> {
        match self {
            Self::Created(id) | Self::Reinforced(id) => Some(*id),
            Self::Skipped(_) => None,
        }
    }
}

/// Why [`distil`](Cerebellum::distil) made nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Skip {
    /// The run did not end in a verified success.
    NotVerified,
    /// The run's trust is below [`distil_min_trust`](CerebellumConfig::distil_min_trust).
    BelowTrustFloor {
        /// The run's trust.
        trust: f64,
        /// The floor.
        floor: f64,
    },
    /// The method matches a retired skill, which is not learned again (remove the record to
    /// allow it).
    MatchesRetired {
        /// The retired skill.
        id: RecordId,
    },
    /// The method matches a skill that already remembers [`MAX_ORIGINS`] sources.
    OriginsFull {
        /// The skill.
        id: RecordId,
    },
}

/// A task, as [`candidates`](Cerebellum::candidates) matches skills against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// What is to be done; matched with skill names by [`goal_key`].
    pub goal: String,
    /// What holds; a skill applies when its preconditions are among them.
    pub facts: Vec<String>,
}

impl Task {
    /// A task with its goal and facts.
    pub fn new<S: Into<String>>(goal: impl Into<String>, facts: impl IntoIterator<Item = S>) -> Self {
        Self { goal: goal.into(), facts: facts.into_iter().map(Into::into).collect() }
    }
}

/// A candidate plan: a skill, its score and whether it may run.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The skill.
    pub skill: &'a Skill,
    /// Its rank score (higher first).
    pub score: f64,
    /// Whether it may be executed, tried, or only read.
    pub authorisation: Authorisation,
}

/// What [`record_use`](Cerebellum::record_use) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UseOutcome {
    /// The status before.
    pub previous: SkillStatus,
    /// The status after.
    pub status: SkillStatus,
}

impl UseOutcome {
    /// True when the use promoted the skill (to active or awaiting confirmation).
    pub fn promoted(&self) -> bool {
        self.previous == SkillStatus::Candidate
            && self.status != self.previous
            && self.status != SkillStatus::Retired
    }

    /// True when the use retired the skill.
    pub fn retired(&self) -> bool {
        self.status == SkillStatus::Retired && self.previous != SkillStatus::Retired
    }
}

/// What [`revoke_source`](Cerebellum::revoke_source) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevocationReport {
    /// The revoked source.
    pub source: Source,
    /// Skills distilled (in part) from it that this call retired, by id.
    pub retired: Vec<RecordId>,
    /// Skills from it that were retired already, by id.
    pub already_retired: Vec<RecordId>,
}

impl RevocationReport {
    /// Every skill that came from the source.
    pub fn all(&self) -> impl Iterator<Item = RecordId> + '_ {
        self.retired.iter().chain(&self.already_retired).copied()
    }
}

/// Which recorded skills [`recall`](maxim_core::MemoryLayer::recall) returns; the default
/// matches every skill.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillFilter {
    /// Only skills for this goal (compared by [`goal_key`]).
    pub goal: Option<String>,
    /// Only skills with this status.
    pub status: Option<SkillStatus>,
    /// Only skills with an origin from this source.
    pub source: Option<Source>,
    /// Only skills that write (`true`) or only read (`false`).
    pub writes: Option<bool>,
}

impl SkillFilter {
    /// A filter matching everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only skills for `goal`.
    pub fn goal(mut self, goal: impl Into<String>) -> Self {
        self.goal = Some(goal.into());
        self
    }

    /// Only skills with `status`.
    pub fn status(mut self, status: SkillStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Only skills from `source`.
    pub fn source(mut self, source: Source) -> Self {
        self.source = Some(source);
        self
    }

    /// Only skills that write (or only those that do not).
    pub fn writes(mut self, writes: bool) -> Self {
        self.writes = Some(writes);
        self
    }

    fn matches(&self, skill: &Skill) -> bool {
        self.status.is_none_or(|s| skill.status == s)
            && self.source.as_ref().is_none_or(|s| skill.came_from(s))
            && self.writes.is_none_or(|w| skill.writes() == w)
    }
}

/// Procedural memory: skills distilled from verified runs. See the [crate docs](crate) and
/// the [module docs](self).
pub struct Cerebellum {
    pub(crate) config: CerebellumConfig,
    pub(crate) clock: SharedClock,
    pub(crate) ids: IdGenerator,
    pub(crate) state: State,
    pub(crate) callbacks: Callbacks<Skill>,
    pub(crate) queries: AtomicU64,
    pub(crate) claims: maxim_core::ownership::FileClaims,
    /// The directory's journal, when the store is open on one.
    pub(crate) journal: Option<StoreDir<Op>>,
    /// The journal sequence number the loaded snapshot recorded.
    pub(crate) loaded_journal_seq: u64,
}

impl std::fmt::Debug for Cerebellum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cerebellum")
            .field("skills", &self.state.len())
            .field("graph_edges", &self.state.graph.edge_count())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Cerebellum {
    /// A builder with every default.
    pub fn builder() -> CerebellumBuilder {
        CerebellumBuilder::default()
    }

    /// The settings.
    pub fn config(&self) -> &CerebellumConfig {
        &self.config
    }

    /// The clock's current time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The skill `id`, without recording an access.
    pub fn skill(&self, id: RecordId) -> Option<&Skill> {
        self.state.get(id)
    }

    /// The skill graph: ASSOCIATES edges between skills that share tools, CAUSES edges from
    /// a skill to the one that followed it ([`link_sequence`](Self::link_sequence)).
    pub fn skill_graph(&self) -> &Graph {
        &self.state.graph
    }

    /// A new candidate skill for `goal` with `steps`, a fresh id made now, and the source
    /// [`Source::AgentInference`] with its default trust, ready for
    /// [`store`](maxim_core::MemoryLayer::store) (see [`Skill::new`]).
    pub fn new_skill(&mut self, goal: &str, steps: Vec<Step>, checks: &[&str]) -> Result<Skill> {
        let now = self.clock.now();
        let source = Source::AgentInference;
        let trust = source.default_trust().get();
        let meta = RecordMeta::new(self.ids.next_id(now), now, source, trust, TraceKind::Procedural)?;
        Skill::new(meta, goal, &[], steps, checks)
    }

    /// Stores `skill` as it is (no matching with held methods; see [`distil`](Self::distil)),
    /// associates it with skills sharing its tools, then runs the capture callbacks.
    ///
    /// Errors (nothing changes): an invalid record ([`Skill::validate`]), an id already held
    /// ([`maxim_core::Error::Duplicate`]), an active skill with a write step and no
    /// confirmation while confirmation is required ([`Error::ConfirmationRequired`]).
    pub fn insert(&mut self, skill: Skill) -> Result<RecordId> {
        let id = skill.meta.id;
        let _s = tracing::debug_span!("cerebellum_store", %id, n_skills = self.state.len()).entered();
        skill.validate()?;
        if self.state.slots.contains_key(&id) {
            return Err(maxim_core::Error::Duplicate { id }.into());
        }
        if self.config.require_confirmation
            && skill.status == SkillStatus::Active
            && skill.writes()
            && skill.confirmation.is_none()
        {
            return Err(Error::ConfirmationRequired { id });
        }
        let links = self.state.associations(id, &skill.steps, &self.config);
        self.ids.observe(id);
        self.commit(Op::Insert { skill: Box::new(skill), links, distilled: false })?;
        self.fire_capture(id);
        Ok(id)
    }

    /// Keeps the method of a run (seed 004's `distil_skill`); see the [module docs](self).
    ///
    /// A verified success (`outcome.verified_success` and at least one check) of a run
    /// trusted at least `distil_min_trust` creates a candidate skill: the goal as its name,
    /// the facts as preconditions, the calls as steps, the outcome's checks, the run's
    /// source and trust, a procedural trace, and no uses yet. When a held skill has the same
    /// method (goal key and steps), that skill is reinforced instead: one more successful use
    /// (which may promote it), its trace reinforced, the run added to its origins (its trust
    /// rises to the run's if that is higher), its preconditions narrowed to the facts both
    /// share, new checks added. Anything else makes nothing and says why
    /// ([`Distilled::Skipped`]).
    ///
    /// Errors (nothing changes): a blank or overlong run id, goal, fact, check or step; no
    /// call or more than [`MAX_STEPS`]; more than [`MAX_CHECKS`] checks; a trust that is NaN
    /// or outside `[0, 1]`.
    pub fn distil(&mut self, trace: &RunTrace, outcome: &Outcome) -> Result<Distilled> {
        let _s = tracing::debug_span!(
            "cerebellum_distil",
            n_calls = trace.calls.len(),
            n_skills = self.state.len()
        )
        .entered();
        check_text("run", &trace.run, false)?;
        check_text("goal", &trace.goal, false)?;
        let goal = goal_key(&trace.goal);
        if goal.is_empty() {
            return Err(Error::invalid("goal", "must contain a letter or a digit"));
        }
        if trace.calls.is_empty() || trace.calls.len() > MAX_STEPS {
            return Err(Error::invalid(
                "calls",
                format!("{} calls, expected 1 to {MAX_STEPS}", trace.calls.len()),
            ));
        }
        for call in &trace.calls {
            call.validate()?;
        }
        let facts = normalise_facts(trace.facts.iter().map(String::as_str))?;
        let trust = Trust::new(trace.trust)?;
        if outcome.checks.len() > MAX_CHECKS {
            return Err(Error::invalid(
                "checks",
                format!("{} checks, at most {MAX_CHECKS}", outcome.checks.len()),
            ));
        }
        let mut checks: Vec<String> = Vec::with_capacity(outcome.checks.len());
        for c in &outcome.checks {
            check_text("check", c, false)?;
            let c = c.trim().to_owned();
            if !checks.contains(&c) {
                checks.push(c);
            }
        }
        if !outcome.verified_success || checks.is_empty() {
            self.state.counters.skipped_unverified += 1;
            return Ok(Distilled::Skipped(Skip::NotVerified));
        }
        if trust.get() < self.config.distil_min_trust {
            self.state.counters.skipped_low_trust += 1;
            let floor = self.config.distil_min_trust;
            return Ok(Distilled::Skipped(Skip::BelowTrustFloor { trust: trust.get(), floor }));
        }
        let now = self.clock.now();
        if let Some(skill) = self.state.find_method(&goal, &trace.calls) {
            let id = skill.meta.id;
            if skill.is_retired() {
                self.state.counters.skipped_retired += 1;
                return Ok(Distilled::Skipped(Skip::MatchesRetired { id }));
            }
            if skill.origins.len() >= MAX_ORIGINS && !skill.came_from(&trace.source) {
                return Ok(Distilled::Skipped(Skip::OriginsFull { id }));
            }
            // A success can still retire: the window may hold too many failures before it.
            let (status, retirement) = self.transition(skill, true, now);
            self.commit(Op::Reinforce {
                id,
                run: trace.run.clone(),
                source: trace.source.clone(),
                trust,
                facts,
                checks,
                at: now,
                status,
                retirement,
            })?;
            return Ok(Distilled::Reinforced(id));
        }
        let id = self.ids.next_id(now);
        let meta = RecordMeta::new(id, now, trace.source.clone(), trust.get(), TraceKind::Procedural)?;
        let skill = Skill {
            meta,
            name: trace.goal.trim().to_owned(),
            preconditions: facts,
            steps: trace.calls.clone(),
            checks,
            uses: 0,
            successes: 0,
            failures: 0,
            outcomes: crate::skill::Outcomes::default(),
            status: SkillStatus::Candidate,
            confirmation: None,
            retirement: None,
            origins: vec![Origin {
                source: trace.source.clone(),
                trust,
                runs: 1,
                first_run: trace.run.clone(),
                last_run: trace.run.clone(),
                last_at: now,
            }],
        };
        skill.validate()?;
        let links = self.state.associations(id, &skill.steps, &self.config);
        self.commit(Op::Insert { skill: Box::new(skill), links, distilled: true })?;
        self.fire_capture(id);
        Ok(Distilled::Created(id))
    }

    /// The skills that match `task`, best first, at most `limit`; see the
    /// [module docs](self). A skill matches when its name has the goal's [`goal_key`], it is
    /// not retired, and each of its preconditions is among the task's facts. The score is
    /// [`final_score`](maxim_core::rank::final_score) with the skill's [`success_rate`](Skill::success_rate) as relevance
    /// (so trust, recency of use and uses weigh in through the memory score); ties go to the
    /// smaller id. Low-trust skills are listed, marked [`Authorisation::InformOnly`]. Records
    /// no access.
    ///
    /// Errors: a goal without a letter or digit; a malformed fact or too many facts.
    pub fn candidates(&self, task: &Task, limit: usize) -> Result<Vec<Plan<'_>>> {
        let _s = tracing::debug_span!("cerebellum_candidates", n_facts = task.facts.len(), limit).entered();
        check_text("goal", &task.goal, false)?;
        let goal = goal_key(&task.goal);
        if goal.is_empty() {
            return Err(Error::invalid("goal", "must contain a letter or a digit"));
        }
        let facts = normalise_facts(task.facts.iter().map(String::as_str))?;
        self.queries.fetch_add(1, Ordering::Relaxed);
        let now = self.clock.now();
        let Some(list) = self.state.by_goal.get(&goal).filter(|_| limit > 0) else { return Ok(Vec::new()) };
        let mut fact_ids: Vec<u32> =
            facts.iter().filter_map(|f| self.state.fact_ids.get(f).copied()).collect();
        fact_ids.sort_unstable();
        let mut scored: Vec<(f64, RecordId, u32)> = Vec::new();
        for &s in list {
            let info = &self.state.info[s as usize];
            let Some(hot) = info.hot.as_ref().filter(|h| !h.retired) else { continue };
            if is_sorted_subset(&info.pre, &fact_ids) {
                scored.push((hot.score(now, &self.config.rank), info.id, s));
            }
        }
        let order =
            |a: &(f64, RecordId, u32), b: &(f64, RecordId, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if limit < scored.len() {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_unstable_by(order);
        Ok(scored
            .into_iter()
            .filter_map(|(score, _, s)| {
                let skill = self.state.records[s as usize].as_ref()?;
                Some(Plan { skill, score, authorisation: self.authorisation_of(skill) })
            })
            .collect())
    }

    /// How skill `id` may be used now (see [`Authorisation`]). Errors: an unknown id.
    pub fn authorisation(&self, id: RecordId) -> Result<Authorisation> {
        self.state.get(id).map(|s| self.authorisation_of(s)).ok_or_else(|| Error::not_found(id))
    }

    /// The skill `id` when it may be executed automatically: active and trusted at least
    /// [`authorise_min_trust`](CerebellumConfig::authorise_min_trust) (low-trust memories
    /// inform, never authorise). Otherwise [`Error::NotAuthorised`] with the reason, or an
    /// unknown id.
    pub fn authorise(&self, id: RecordId) -> Result<&Skill> {
        let skill = self.state.get(id).ok_or_else(|| Error::not_found(id))?;
        match self.authorisation_of(skill) {
            Authorisation::Execute => Ok(skill),
            Authorisation::Trial => {
                Err(Error::NotAuthorised { id, reason: Refusal::NotActive { status: skill.status } })
            }
            Authorisation::InformOnly(reason) => Err(Error::NotAuthorised { id, reason }),
        }
    }

    fn authorisation_of(&self, skill: &Skill) -> Authorisation {
        let trust = skill.meta.trust.get();
        if skill.is_retired() {
            return Authorisation::InformOnly(Refusal::Retired);
        }
        if trust < self.config.authorise_min_trust {
            return Authorisation::InformOnly(Refusal::LowTrust {
                trust,
                floor: self.config.authorise_min_trust,
            });
        }
        let unconfirmed_write =
            self.config.require_confirmation && skill.writes() && skill.confirmation.is_none();
        if skill.status == SkillStatus::Active && !unconfirmed_write {
            Authorisation::Execute
        } else {
            Authorisation::Trial
        }
    }

    /// Records the outcome of a use of skill `id` (an execution or a trial) and applies the
    /// promotion and retirement rules (see the [module docs](self)). The use counts as an
    /// access, and a success reinforces the skill's procedural trace.
    ///
    /// Errors (nothing changes): an unknown id; a retired skill ([`Error::InvalidStatus`]).
    pub fn record_use(&mut self, id: RecordId, success: bool) -> Result<UseOutcome> {
        let _s = tracing::debug_span!("cerebellum_record_use", %id, success).entered();
        let skill = self.state.get(id).ok_or_else(|| Error::not_found(id))?;
        if skill.is_retired() {
            return Err(Error::InvalidStatus { id, status: skill.status, action: "record a use of" });
        }
        let previous = skill.status;
        let now = self.clock.now();
        let (status, retirement) = self.transition(skill, success, now);
        self.commit(Op::Use { id, success, at: now, status, retirement })?;
        Ok(UseOutcome { previous, status })
    }

    /// The status `skill` takes after one more outcome, and its retirement if it is retired.
    fn transition(&self, skill: &Skill, success: bool, now: Timestamp) -> (SkillStatus, Option<Retirement>) {
        let cfg = &self.config;
        let mut outcomes = skill.outcomes;
        outcomes.push(success);
        let (ok, n) = outcomes.latest(cfg.retire_window);
        let rate = f64::from(ok) / f64::from(n.max(1));
        if n >= cfg.retire_min_uses && rate < cfg.retire_below {
            let reason = RetireReason::LowSuccessRate { rate, window: n };
            return (SkillStatus::Retired, Some(Retirement { at: now, reason, previous: skill.status }));
        }
        let successes = skill.successes.saturating_add(u32::from(success));
        let needs_human = cfg.require_confirmation && skill.writes() && skill.confirmation.is_none();
        let status = match skill.status {
            SkillStatus::Candidate if successes >= cfg.promote_after => {
                if needs_human {
                    SkillStatus::AwaitingConfirmation
                } else {
                    SkillStatus::Active
                }
            }
            SkillStatus::AwaitingConfirmation if !needs_human => SkillStatus::Active,
            other => other,
        };
        (status, None)
    }

    /// Records a human's confirmation of skill `id`, which has a write step: `by` names who.
    /// A skill awaiting confirmation becomes active; a candidate keeps its status and is
    /// promoted straight to active once it has its successes.
    ///
    /// Errors (nothing changes): an unknown id; a blank `by`; a retired skill
    /// ([`Error::InvalidStatus`]); a skill without a write step ([`Error::NothingToConfirm`]);
    /// a skill confirmed already ([`Error::AlreadyConfirmed`]).
    pub fn confirm(&mut self, id: RecordId, by: &str) -> Result<SkillStatus> {
        let _s = tracing::debug_span!("cerebellum_confirm", %id).entered();
        check_text("confirmed by", by, false)?;
        let skill = self.state.get(id).ok_or_else(|| Error::not_found(id))?;
        if skill.is_retired() {
            return Err(Error::InvalidStatus { id, status: skill.status, action: "confirm" });
        }
        if !skill.writes() {
            return Err(Error::NothingToConfirm { id });
        }
        if let Some(c) = &skill.confirmation {
            return Err(Error::AlreadyConfirmed { id, by: c.by.clone() });
        }
        let status = match skill.status {
            SkillStatus::AwaitingConfirmation => SkillStatus::Active,
            SkillStatus::Candidate if skill.successes >= self.config.promote_after => SkillStatus::Active,
            other => other,
        };
        let at = self.clock.now();
        self.commit(Op::Confirm { id, by: by.trim().to_owned(), at, status })?;
        Ok(status)
    }

    /// Retires skill `id` by hand (`by` names who): it is no longer offered.
    ///
    /// Errors (nothing changes): an unknown id, a blank `by`, a skill retired already.
    pub fn retire(&mut self, id: RecordId, by: &str) -> Result<()> {
        let _s = tracing::debug_span!("cerebellum_retire", %id).entered();
        check_text("retired by", by, false)?;
        let skill = self.state.get(id).ok_or_else(|| Error::not_found(id))?;
        if skill.is_retired() {
            return Err(Error::InvalidStatus { id, status: skill.status, action: "retire" });
        }
        let at = self.clock.now();
        self.commit(Op::Retire {
            ids: vec![id],
            at,
            reason: RetireReason::Manual { by: by.trim().to_owned() },
        })?;
        Ok(())
    }

    /// Retires, at once, every skill with an origin from `source` (distilled from it, or
    /// reinforced by it), and reports them all, including those retired before (seed 004:
    /// when a source turns out to be hostile, find what else came from it). To revoke a
    /// single run, give each run its own source. Errors: only the journal's, when the store
    /// is open on a directory (nothing changes then).
    pub fn revoke_source(&mut self, source: &Source) -> Result<RevocationReport> {
        let _s = tracing::debug_span!("cerebellum_revoke_source").entered();
        let mut retired = Vec::new();
        let mut already_retired = Vec::new();
        for skill in self.state.iter().filter(|s| s.came_from(source)) {
            if skill.is_retired() { &mut already_retired } else { &mut retired }.push(skill.meta.id);
        }
        retired.sort_unstable();
        already_retired.sort_unstable();
        let at = self.clock.now();
        tracing::info!(source = %source, n_retired = retired.len(), n_already = already_retired.len(), "source revoked");
        self.commit(Op::Retire {
            ids: retired.clone(),
            at,
            reason: RetireReason::Revoked { source: source.clone() },
        })?;
        Ok(RevocationReport { source: source.clone(), retired, already_retired })
    }

    /// Records that skill `to` followed skill `from` in one piece of work: the CAUSES edge
    /// `from -> to` is created with weight 0.5 or strengthened by 0.1 (at most 1), so
    /// activation from a skill reaches the ones that usually come next.
    ///
    /// Errors (nothing changes): an unknown id; `from == to`.
    pub fn link_sequence(&mut self, from: RecordId, to: RecordId) -> Result<f64> {
        let _s = tracing::debug_span!("cerebellum_link_sequence", %from, %to).entered();
        for id in [from, to] {
            if self.state.get(id).is_none() {
                return Err(Error::not_found(id));
            }
        }
        if from == to {
            return Err(Error::invalid("to", "a skill cannot follow itself"));
        }
        let current =
            self.state.graph.associated(from, &[EdgeKind::Causes]).into_iter().find(|(t, _)| *t == to);
        let weight = current.map_or(0.5, |(_, w)| (w + 0.1).min(1.0));
        self.commit(Op::Link { from, to, weight })?;
        Ok(weight)
    }

    /// The skill `id`, recording a use: an access and a reinforcement of its trace under
    /// the ranking's [`TraceParams`](maxim_core::trace::TraceParams). Errors: an unknown id.
    pub fn get(&mut self, id: RecordId) -> Result<&Skill> {
        let _s = tracing::debug_span!("cerebellum_get", %id).entered();
        if self.state.get(id).is_none() {
            return Err(Error::not_found(id));
        }
        let at = self.clock.now();
        self.apply_unjournaled(Op::Touch { ids: vec![id], at });
        self.state.get(id).ok_or_else(|| Error::not_found(id))
    }

    /// Records a use of each of `ids` that is held (as [`get`](Self::get) does); returns how
    /// many.
    pub fn touch(&mut self, ids: &[RecordId]) -> usize {
        let _s = tracing::debug_span!("cerebellum_touch", n_ids = ids.len()).entered();
        let held: Vec<RecordId> = ids.iter().copied().filter(|&id| self.state.get(id).is_some()).collect();
        let n = held.len();
        if n > 0 {
            let at = self.clock.now();
            self.apply_unjournaled(Op::Touch { ids: held, at });
        }
        n
    }

    /// Removes skill `id` from the store, every index and the graph, then runs the deletion
    /// callbacks. Errors: an unknown id.
    pub fn remove_skill(&mut self, id: RecordId) -> Result<Skill> {
        let _s = tracing::debug_span!("cerebellum_remove", %id).entered();
        let skill = self.state.get(id).ok_or_else(|| Error::not_found(id))?.clone();
        self.commit(Op::Remove { ids: vec![id], consolidation: false })?;
        self.callbacks.fire_delete(id);
        Ok(skill)
    }

    /// Skills matching `filter`, most recently used first (then by id), at most `limit`.
    /// Records no access.
    pub fn recall_skills(&self, filter: &SkillFilter, limit: usize) -> Vec<&Skill> {
        let _s = tracing::debug_span!("cerebellum_recall", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        if limit == 0 {
            return Vec::new();
        }
        let mut found: Vec<&Skill> = match &filter.goal {
            Some(goal) => self
                .state
                .by_goal
                .get(&goal_key(goal))
                .into_iter()
                .flatten()
                .filter_map(|&s| self.state.records[s as usize].as_ref())
                .filter(|s| filter.matches(s))
                .collect(),
            None => self.state.iter().filter(|s| filter.matches(s)).collect(),
        };
        found.sort_unstable_by(|a, b| {
            b.meta.accessed_at.cmp(&a.meta.accessed_at).then(a.meta.id.cmp(&b.meta.id))
        });
        found.truncate(limit);
        found
    }

    /// Skills reached from `seeds` by spreading activation with `params`, strongest first,
    /// seeds excluded, at most `limit`. Records no access.
    pub fn recall_associated_with(
        &self,
        seeds: &[RecordId],
        limit: usize,
        params: &ActivationParams,
    ) -> Vec<(&Skill, f64)> {
        let _s = tracing::debug_span!("cerebellum_recall_associated", n_seeds = seeds.len(), limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        if limit == 0 {
            return Vec::new();
        }
        let activation = self.state.graph.spread(seeds, params);
        activation
            .ranked(Some(limit))
            .into_iter()
            .filter_map(|(id, a)| self.state.get(id).map(|s| (s, a)))
            .collect()
    }

    /// One maintenance pass: forgets unpromoted skills whose memory score fell below
    /// [`forget_below`](CerebellumConfig::forget_below), and retired skills retired longer
    /// than [`retired_retention`](CerebellumConfig::retired_retention) ago. Active skills are
    /// long-term and kept. The deletion callbacks run for each removed skill. Errors: only
    /// the journal's, when the store is open on a directory (nothing changes then).
    pub fn consolidate_now(&mut self) -> Result<maxim_core::layer::ConsolidationReport> {
        let _s = tracing::debug_span!("cerebellum_consolidate", n_skills = self.state.len()).entered();
        let now = self.clock.now();
        let cfg = &self.config;
        let mut doomed: Vec<RecordId> = self
            .state
            .iter()
            .filter(|s| match s.status {
                SkillStatus::Active => false,
                SkillStatus::Retired => s
                    .retirement
                    .as_ref()
                    .is_some_and(|r| now.secs_since(r.at) >= cfg.retired_retention.as_secs_f64()),
                SkillStatus::Candidate | SkillStatus::AwaitingConfirmation => {
                    maxim_core::rank::memory_score(&s.meta, now, &cfg.rank) < cfg.forget_below
                }
            })
            .map(|s| s.meta.id)
            .collect();
        doomed.sort_unstable();
        let removed = doomed.len();
        let preserved = self.state.len() - removed;
        self.commit(Op::Remove { ids: doomed.clone(), consolidation: true })?;
        for id in doomed {
            self.callbacks.fire_delete(id);
        }
        Ok(maxim_core::layer::ConsolidationReport { promoted: 0, compressed: 0, removed, preserved })
    }

    /// Number of skills held.
    pub fn skill_count(&self) -> usize {
        self.state.len()
    }

    pub(crate) fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    /// Journals `op` when the store is open on a directory, then applies it. Only the
    /// journal can fail, and then nothing changes.
    fn commit(&mut self, op: Op) -> Result<()> {
        if let Some(journal) = &mut self.journal {
            journal.append(&op)?;
        }
        self.state.apply(op, &self.config.rank.trace);
        Ok(())
    }

    /// Applies `op` without journaling it: access bookkeeping, which reaches the disk with
    /// the next save or checkpoint.
    fn apply_unjournaled(&mut self, op: Op) {
        self.state.apply(op, &self.config.rank.trace);
    }

    fn fire_capture(&self, id: RecordId) {
        if let Some(skill) = self.state.get(id) {
            self.callbacks.fire_capture(id, skill);
        }
    }
}
