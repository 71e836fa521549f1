//! Skill records: [`Skill`] and what it is made of ([`Step`], [`SkillStatus`], [`Origin`],
//! [`Confirmation`], [`Retirement`], [`Outcomes`]), and how a plan may be used
//! ([`Authorisation`], [`Refusal`]).
//!
//! A skill is the method of a verified-successful run, not its answer (seed 004): a name (the
//! summarised goal), preconditions (when it applies), steps (tool and argument shape, each
//! saying whether it writes), checks (how success was verified), counts of uses, successes and
//! failures, a status, the runs and sources it was distilled from, and a [`RecordMeta`] whose
//! trace is procedural.
//!
//! ```
//! use cerebellum::{Skill, SkillStatus, Step};
//! use maxim_core::{RecordId, RecordMeta, Source, Timestamp, TraceKind};
//! let now = Timestamp::from_secs(1_700_000_000);
//! let meta = RecordMeta::new(RecordId::from_u128(1), now, Source::ToolResult, 0.8, TraceKind::Procedural)?;
//! let skill = Skill::new(
//!     meta,
//!     "Reset a stuck deploy",
//!     &["deploy: STUCK ", "cluster:lab"],
//!     vec![Step::read("inspect", "target"), Step::write("restart", "target")],
//!     &["verify(target)"],
//! )?;
//! assert_eq!(skill.preconditions, ["cluster:lab", "deploy: stuck"]); // trimmed, lowercased, sorted
//! assert!(skill.writes());
//! assert_eq!(skill.status, SkillStatus::Candidate);
//! assert_eq!(skill.success_rate(), 0.5); // (0 + 1) / (0 + 2): nothing known yet
//! assert!(Skill::new(skill.meta.clone(), " ", &[], vec![], &[]).is_err());
//! # Ok::<(), cerebellum::Error>(())
//! ```

use std::fmt;

use maxim_core::text::{punctuation_bounds, push_lowercase};
use maxim_core::{MemoryRecord, RecordId, RecordMeta, Source, Timestamp, TraceKind, Trust};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The most steps a skill may have.
pub const MAX_STEPS: usize = 64;
/// The most checks a skill keeps.
pub const MAX_CHECKS: usize = 16;
/// The most preconditions a skill (or a task) may name.
pub const MAX_PRECONDITIONS: usize = 32;
/// The most distinct sources a skill remembers; a reinforcement from one more is not taken.
pub const MAX_ORIGINS: usize = 64;
/// The longest text (a name, a tool, an argument shape, a check, a fact, a run id), in bytes.
pub const MAX_TEXT: usize = 256;
/// The most outcomes a skill's window remembers.
pub const MAX_WINDOW: u32 = 32;

/// One step of a skill: a tool and the shape of its arguments (not their values).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Step {
    /// The tool called (`inspect`, `restart`, ...).
    pub tool: String,
    /// The shape of its arguments: placeholders for what varies from task to task
    /// (`target`), literals for what does not (`db`). May be empty.
    pub arg_shape: String,
    /// Whether the step changes the world (a write action).
    pub writes: bool,
}

impl Step {
    /// A step that only reads.
    pub fn read(tool: impl Into<String>, arg_shape: impl Into<String>) -> Self {
        Self { tool: tool.into(), arg_shape: arg_shape.into(), writes: false }
    }

    /// A step that writes.
    pub fn write(tool: impl Into<String>, arg_shape: impl Into<String>) -> Self {
        Self { tool: tool.into(), arg_shape: arg_shape.into(), writes: true }
    }

    /// Checks the step: a tool with a non-blank name, both texts at most [`MAX_TEXT`] bytes
    /// without control characters.
    pub fn validate(&self) -> Result<()> {
        check_text("tool", &self.tool, false)?;
        check_text("arg_shape", &self.arg_shape, true)
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.tool, self.arg_shape)?;
        if self.writes {
            f.write_str(" [writes]")?;
        }
        Ok(())
    }
}

/// Where a skill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SkillStatus {
    /// Distilled, not yet proven: offered as a plan, tried under supervision.
    Candidate,
    /// Proven, with a write step, waiting for a human's [`confirm`](crate::Cerebellum::confirm).
    AwaitingConfirmation,
    /// Promoted: may be executed automatically (when trusted enough).
    Active,
    /// No longer offered: it stopped succeeding, its source was revoked, or someone retired it.
    Retired,
}

impl fmt::Display for SkillStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Candidate => "candidate",
            Self::AwaitingConfirmation => "awaiting confirmation",
            Self::Active => "active",
            Self::Retired => "retired",
        })
    }
}

/// A human's confirmation of a skill with a write step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// Who confirmed it.
    pub by: String,
    /// When.
    pub at: Timestamp,
}

/// Why a skill was retired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RetireReason {
    /// Its success rate over the window fell below the threshold.
    LowSuccessRate {
        /// The rate over the window.
        rate: f64,
        /// Outcomes in the window.
        window: u32,
    },
    /// A source it was distilled from was revoked.
    Revoked {
        /// The revoked source.
        source: Source,
    },
    /// Someone retired it by hand.
    Manual {
        /// Who.
        by: String,
    },
}

/// When and why a skill was retired, and what it was before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retirement {
    /// When.
    pub at: Timestamp,
    /// Why.
    pub reason: RetireReason,
    /// Its status before.
    pub previous: SkillStatus,
}

/// One source a skill was distilled from, with the runs of that source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The source of the runs.
    pub source: Source,
    /// The highest trust of its runs.
    pub trust: Trust,
    /// How many of its runs distilled this method.
    pub runs: u32,
    /// The first of them.
    pub first_run: String,
    /// The latest of them.
    pub last_run: String,
    /// When the latest was distilled.
    pub last_at: Timestamp,
}

/// The latest outcomes of a skill's uses, newest in the lowest bit, at most [`MAX_WINDOW`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    bits: u32,
    len: u8,
}

impl Outcomes {
    /// Remembers one more outcome (the oldest beyond [`MAX_WINDOW`] is forgotten).
    pub fn push(&mut self, success: bool) {
        self.bits = (self.bits << 1) | u32::from(success);
        self.len = (self.len + 1).min(MAX_WINDOW as u8);
    }

    /// Outcomes remembered.
    pub fn len(&self) -> u32 {
        u32::from(self.len)
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `(successes, outcomes)` among the latest `window` outcomes.
    pub fn latest(&self, window: u32) -> (u32, u32) {
        let n = window.min(self.len());
        let mask = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        ((self.bits & mask).count_ones(), n)
    }

    fn validate(self) -> Result<()> {
        if u32::from(self.len) > MAX_WINDOW {
            return Err(Error::invalid("outcomes", format!("{} outcomes, at most {MAX_WINDOW}", self.len)));
        }
        if self.len < 32 && self.bits >> self.len != 0 {
            return Err(Error::invalid("outcomes", "bits beyond the remembered outcomes"));
        }
        Ok(())
    }
}

/// A skill: the method of a verified-successful run. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Id, timestamps, access tracking, source (of the first run) and trust, and a procedural
    /// trace.
    pub meta: RecordMeta,
    /// The summarised goal ("reset a stuck deploy"); skills are found by its [`goal_key`].
    pub name: String,
    /// When it applies: facts a task must hold (normalised: trimmed, lowercased, inner
    /// whitespace single; sorted, distinct).
    pub preconditions: Vec<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// How success was verified.
    pub checks: Vec<String>,
    /// Uses recorded (outcomes of executions, and reinforcing distillations).
    pub uses: u32,
    /// Successful uses.
    pub successes: u32,
    /// Failed uses.
    pub failures: u32,
    /// The latest outcomes, for the retirement window.
    pub outcomes: Outcomes,
    /// Where it stands.
    pub status: SkillStatus,
    /// A human's confirmation (only a skill with a write step has one).
    pub confirmation: Option<Confirmation>,
    /// Set when it is retired.
    pub retirement: Option<Retirement>,
    /// The sources (and runs) it was distilled from; the first is the one of `meta.source`.
    pub origins: Vec<Origin>,
}

impl Skill {
    /// A new candidate skill with `meta` (its trace is made procedural), checked and
    /// normalised: the name trimmed, the preconditions normalised, sorted and deduplicated.
    /// Its only origin is `meta.source` with `meta.trust` (run name `"-"`).
    ///
    /// Errors: a blank or overlong name, precondition, check or step text; no step; more than
    /// [`MAX_STEPS`] steps, [`MAX_PRECONDITIONS`] preconditions or [`MAX_CHECKS`] checks.
    pub fn new(
        meta: RecordMeta,
        name: &str,
        preconditions: &[&str],
        steps: Vec<Step>,
        checks: &[&str],
    ) -> Result<Self> {
        let mut meta = meta;
        if meta.trace.kind() != TraceKind::Procedural {
            meta.trace = maxim_core::TraceState::new(TraceKind::Procedural, meta.created_at);
        }
        let origin = Origin {
            source: meta.source.clone(),
            trust: meta.trust,
            runs: 1,
            first_run: "-".into(),
            last_run: "-".into(),
            last_at: meta.created_at,
        };
        let skill = Self {
            meta,
            name: name.trim().to_owned(),
            preconditions: normalise_facts(preconditions.iter().copied())?,
            steps,
            checks: checks.iter().map(|c| c.trim().to_owned()).collect(),
            uses: 0,
            successes: 0,
            failures: 0,
            outcomes: Outcomes::default(),
            status: SkillStatus::Candidate,
            confirmation: None,
            retirement: None,
            origins: vec![origin],
        };
        skill.validate()?;
        Ok(skill)
    }

    /// Whether any step writes.
    pub fn writes(&self) -> bool {
        self.steps.iter().any(|s| s.writes)
    }

    /// The success rate with one imagined success and one imagined failure (Laplace):
    /// `(successes + 1) / (uses + 2)`, so a new skill has 0.5 and evidence moves it.
    pub fn success_rate(&self) -> f64 {
        (f64::from(self.successes) + 1.0) / (f64::from(self.uses) + 2.0)
    }

    /// The key skills are found by: the [`goal_key`] of the name.
    pub fn goal_key(&self) -> String {
        goal_key(&self.name)
    }

    /// True once retired.
    pub fn is_retired(&self) -> bool {
        self.status == SkillStatus::Retired
    }

    /// True when one of its origins is `source`.
    pub fn came_from(&self, source: &Source) -> bool {
        self.origins.iter().any(|o| &o.source == source)
    }

    /// Whether a task holding the normalised, sorted `facts` meets every precondition.
    pub fn applies_to(&self, facts: &[String]) -> bool {
        is_sorted_subset(&self.preconditions, facts)
    }

    /// Checks the record: the texts (see [`Skill::new`]), counts that add up
    /// (`successes + failures == uses`), a window of at most [`MAX_WINDOW`], a confirmation
    /// only on a skill that writes, a retirement exactly when retired, between one and
    /// [`MAX_ORIGINS`] origins, and a procedural trace.
    pub fn validate(&self) -> Result<()> {
        check_text("name", &self.name, false)?;
        if goal_key(&self.name).is_empty() {
            return Err(Error::invalid("name", "must contain a letter or a digit"));
        }
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err(Error::invalid(
                "steps",
                format!("{} steps, expected 1 to {MAX_STEPS}", self.steps.len()),
            ));
        }
        for step in &self.steps {
            step.validate()?;
        }
        if self.checks.len() > MAX_CHECKS {
            return Err(Error::invalid(
                "checks",
                format!("{} checks, at most {MAX_CHECKS}", self.checks.len()),
            ));
        }
        for check in &self.checks {
            check_text("check", check, false)?;
        }
        if self.preconditions.len() > MAX_PRECONDITIONS {
            return Err(Error::invalid(
                "preconditions",
                format!("{} preconditions, at most {MAX_PRECONDITIONS}", self.preconditions.len()),
            ));
        }
        for p in &self.preconditions {
            if normalise_fact(p)? != *p {
                return Err(Error::invalid("preconditions", format!("{p:?} is not normalised")));
            }
        }
        if self.preconditions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::invalid("preconditions", "not sorted and distinct"));
        }
        if u64::from(self.successes) + u64::from(self.failures) != u64::from(self.uses) {
            return Err(Error::invalid("uses", "successes and failures do not add up to uses"));
        }
        self.outcomes.validate()?;
        let (window_successes, window_len) = self.outcomes.latest(MAX_WINDOW);
        if window_len > self.uses
            || window_successes > self.successes
            || window_len - window_successes > self.failures
        {
            return Err(Error::invalid("outcomes", "the window holds more outcomes than the counts"));
        }
        if let Some(c) = &self.confirmation {
            if !self.writes() {
                return Err(Error::invalid("confirmation", "a skill without a write step needs none"));
            }
            check_text("confirmed by", &c.by, false)?;
        }
        if self.is_retired() != self.retirement.is_some() {
            return Err(Error::invalid("retirement", "set exactly when the skill is retired"));
        }
        if self.origins.is_empty() || self.origins.len() > MAX_ORIGINS {
            return Err(Error::invalid(
                "origins",
                format!("{} origins, expected 1 to {MAX_ORIGINS}", self.origins.len()),
            ));
        }
        for o in &self.origins {
            check_text("run", &o.first_run, false)?;
            check_text("run", &o.last_run, false)?;
        }
        if self.meta.trace.kind() != TraceKind::Procedural {
            return Err(Error::invalid("trace", "a skill's trace is procedural"));
        }
        Ok(())
    }
}

impl MemoryRecord for Skill {
    fn meta(&self) -> &RecordMeta {
        &self.meta
    }

    fn meta_mut(&mut self) -> &mut RecordMeta {
        &mut self.meta
    }

    fn is_compressed(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!("{} ({}, {} steps)", self.name, self.status, self.steps.len())
    }

    fn id(&self) -> RecordId {
        self.meta.id
    }
}

/// How a plan may be used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Authorisation {
    /// An active, trusted skill: it may be executed automatically.
    Execute,
    /// A trusted skill not yet promoted: it may be tried under supervision, and its outcome
    /// recorded, which is how it earns promotion.
    Trial,
    /// It may inform (be listed, be read) but never be executed: the reason says why.
    InformOnly(Refusal),
}

impl Authorisation {
    /// True for [`Execute`](Self::Execute) and [`Trial`](Self::Trial).
    pub fn may_execute(self) -> bool {
        !matches!(self, Self::InformOnly(_))
    }
}

/// Why a skill may not be executed automatically.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Refusal {
    /// Its trust is below the floor for authorising: low-trust memories inform, never
    /// authorise.
    LowTrust {
        /// The skill's trust.
        trust: f64,
        /// The floor.
        floor: f64,
    },
    /// It is not active (a candidate, or awaiting a human's confirmation).
    NotActive {
        /// Its status.
        status: SkillStatus,
    },
    /// It is retired.
    Retired,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LowTrust { trust, floor } => write!(f, "trust {trust} is below the floor {floor}"),
            Self::NotActive { status } => write!(f, "it is {status}, not active"),
            Self::Retired => f.write_str("it is retired"),
        }
    }
}

/// Checks a text field: at most [`MAX_TEXT`] bytes, no control characters, and not blank
/// unless `may_be_empty`.
pub(crate) fn check_text(field: &'static str, text: &str, may_be_empty: bool) -> Result<()> {
    if !may_be_empty && text.trim().is_empty() {
        return Err(Error::invalid(field, "must not be blank"));
    }
    if text.len() > MAX_TEXT {
        return Err(Error::invalid(field, format!("{} bytes, at most {MAX_TEXT}", text.len())));
    }
    if text.chars().any(char::is_control) {
        return Err(Error::invalid(field, "must not hold control characters"));
    }
    Ok(())
}

/// A fact in its normal form: trimmed, lowercased, inner whitespace runs as one space.
/// Errors: blank, too long, control characters.
pub fn normalise_fact(fact: &str) -> Result<String> {
    check_text("fact", fact, false)?;
    let mut out = String::with_capacity(fact.len());
    for word in fact.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    Ok(out)
}

/// Facts in normal form, sorted and distinct; at most [`MAX_PRECONDITIONS`].
pub fn normalise_facts<'a>(facts: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for f in facts {
        out.push(normalise_fact(f)?);
        if out.len() > MAX_PRECONDITIONS {
            return Err(Error::invalid("facts", format!("more than {MAX_PRECONDITIONS} facts")));
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The key a goal is matched by: lowercased, split on whitespace, underscores, hyphens and
/// dots, the punctuation around each word stripped, words joined by one space. Empty when
/// the goal holds no letter or digit.
///
/// ```
/// use cerebellum::skill::goal_key;
/// assert_eq!(goal_key("Reset a STUCK_deploy!"), "reset a stuck deploy");
/// assert_eq!(goal_key("reset-a-stuck deploy"), "reset a stuck deploy");
/// assert_eq!(goal_key(" ?! "), "");
/// ```
pub fn goal_key(goal: &str) -> String {
    let mut key = String::with_capacity(goal.len());
    for word in goal.split(|c: char| c.is_whitespace() || matches!(c, '_' | '-' | '.')) {
        let (start, end) = punctuation_bounds(word);
        let word = &word[start..end];
        if word.chars().any(char::is_alphanumeric) {
            if !key.is_empty() {
                key.push(' ');
            }
            push_lowercase(&mut key, word);
        }
    }
    key
}

/// Whether sorted `small` is a subset of sorted `big`.
pub(crate) fn is_sorted_subset<T: Ord>(small: &[T], big: &[T]) -> bool {
    let mut it = big.iter();
    'outer: for s in small {
        for b in it.by_ref() {
            match b.cmp(s) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => continue 'outer,
                std::cmp::Ordering::Greater => return false,
            }
        }
        return false;
    }
    true
}

/// The facts both sorted lists hold, sorted.
pub(crate) fn sorted_intersection(a: &[String], b: &[String]) -> Vec<String> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn outcomes_keep_the_latest_window() {
        let mut o = Outcomes::default();
        for success in [true, true, false, false, false] {
            o.push(success);
        }
        assert_eq!(o.latest(3), (0, 3));
        assert_eq!(o.latest(5), (2, 5));
        assert_eq!(o.latest(100), (2, 5));
        for _ in 0..40 {
            o.push(true);
        }
        assert_eq!(o.len(), MAX_WINDOW);
        assert_eq!(o.latest(32), (32, 32));
        assert!(o.validate().is_ok());
        assert!(Outcomes { bits: 0b100, len: 2 }.validate().is_err());
        assert!(Outcomes { bits: 0, len: 33 }.validate().is_err());
    }

    #[test]
    fn facts_normalise_and_subsets_and_intersections_work() {
        assert_eq!(normalise_fact("  Deploy   STUCK ").unwrap(), "deploy stuck");
        assert!(normalise_fact(" ").is_err());
        assert!(normalise_fact("a\u{7}b").is_err());
        assert!(normalise_fact(&"x".repeat(MAX_TEXT + 1)).is_err());
        assert_eq!(normalise_facts(["b", "a", "B "]).unwrap(), s(&["a", "b"]));
        let many: Vec<String> = (0..=MAX_PRECONDITIONS).map(|i| format!("f{i}")).collect();
        assert!(normalise_facts(many.iter().map(String::as_str)).is_err());
        assert!(is_sorted_subset(&s(&[]), &s(&["a"])));
        assert!(is_sorted_subset(&s(&["a", "c"]), &s(&["a", "b", "c"])));
        assert!(!is_sorted_subset(&s(&["a", "d"]), &s(&["a", "b", "c"])));
        assert!(!is_sorted_subset(&s(&["a"]), &s(&[])));
        assert_eq!(sorted_intersection(&s(&["a", "b", "d"]), &s(&["b", "c", "d"])), s(&["b", "d"]));
    }

    #[test]
    fn validate_refuses_inconsistent_records() {
        let now = Timestamp::from_secs(100);
        let meta = RecordMeta::new(RecordId::from_u128(1), now, Source::ToolResult, 0.8, TraceKind::Episodic)
            .unwrap();
        let good = Skill::new(meta, "fix it", &[], vec![Step::read("look", "")], &["ok"]).unwrap();
        assert_eq!(good.meta.trace.kind(), TraceKind::Procedural);
        let mut bad = good.clone();
        bad.uses = 3;
        assert!(bad.validate().is_err());
        let mut bad = good.clone();
        bad.confirmation = Some(Confirmation { by: "ann".into(), at: now });
        assert!(bad.validate().is_err(), "a read-only skill needs no confirmation");
        let mut bad = good.clone();
        bad.status = SkillStatus::Retired;
        assert!(bad.validate().is_err(), "retired without a retirement");
        let mut bad = good.clone();
        bad.preconditions = s(&["b", "a"]);
        assert!(bad.validate().is_err());
        let mut bad = good.clone();
        bad.preconditions = s(&["A"]);
        assert!(bad.validate().is_err());
        let mut bad = good.clone();
        bad.steps = vec![Step::read("", "x")];
        assert!(bad.validate().is_err());
        let mut bad = good.clone();
        bad.steps = vec![Step::read("t", ""); MAX_STEPS + 1];
        assert!(bad.validate().is_err());
        let mut bad = good.clone();
        bad.outcomes.push(true);
        assert!(bad.validate().is_err(), "a window outcome without a use");
        let mut bad = good.clone();
        bad.origins.clear();
        assert!(bad.validate().is_err());
        let mut bad = good;
        bad.name = "!!!".into();
        assert!(bad.validate().is_err());
    }
}
