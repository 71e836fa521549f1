//! The store's state: the skills in dense slots, their indexes and graph, the counters,
//! and [`Op`], the resolved mutation that [`State::apply`] applies and a journal replays.

use std::hash::{Hash, Hasher};

use maxim_core::graph::{EdgeKind, Graph};
use maxim_core::rank::RankConfig;
use maxim_core::trace::TraceParams;
use maxim_core::{RecordId, Source, Timestamp, Trust};
use rustc_hash::{FxHashMap, FxHasher};
use serde::{Deserialize, Serialize};

use crate::config::CerebellumConfig;
use crate::skill::{
    Confirmation, MAX_CHECKS, Origin, RetireReason, Retirement, Skill, SkillStatus, Step, sorted_intersection,
};

/// Named counters of a [`Cerebellum`], reported by [`stats`](maxim_core::MemoryLayer::stats).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counters {
    pub(crate) skills_stored: u64,
    pub(crate) distilled: u64,
    pub(crate) reinforced: u64,
    pub(crate) skipped_unverified: u64,
    pub(crate) skipped_low_trust: u64,
    pub(crate) skipped_retired: u64,
    pub(crate) uses: u64,
    pub(crate) successes: u64,
    pub(crate) failures: u64,
    pub(crate) promotions: u64,
    pub(crate) confirmations: u64,
    pub(crate) retirements: u64,
    pub(crate) revocations: u64,
    pub(crate) removals: u64,
    pub(crate) consolidations: u64,
    pub(crate) sequence_links: u64,
}

impl Counters {
    pub(crate) fn to_pairs(&self) -> [(&'static str, u64); 16] {
        [
            ("skills_stored", self.skills_stored),
            ("distilled", self.distilled),
            ("reinforced", self.reinforced),
            ("skipped_unverified", self.skipped_unverified),
            ("skipped_low_trust", self.skipped_low_trust),
            ("skipped_retired", self.skipped_retired),
            ("uses", self.uses),
            ("successes", self.successes),
            ("failures", self.failures),
            ("promotions", self.promotions),
            ("confirmations", self.confirmations),
            ("retirements", self.retirements),
            ("revocations", self.revocations),
            ("removals", self.removals),
            ("consolidations", self.consolidations),
            ("sequence_links", self.sequence_links),
        ]
    }
}

/// What the store keeps beside each held skill: its keys, and a compact copy of what
/// [`Cerebellum::candidates`] reads, so matching and ranking never touch the skill itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct SlotInfo {
    pub(crate) id: RecordId,
    pub(crate) goal: String,
    pub(crate) method: u64,
    pub(crate) tools: Vec<u32>,
    /// The preconditions as fact ids, sorted.
    pub(crate) pre: Vec<u32>,
    pub(crate) hot: Option<Hot>,
}

/// The inputs of a skill's rank score.
#[derive(Debug, Clone)]
pub(crate) struct Hot {
    pub(crate) retired: bool,
    pub(crate) relevance: f64,
    pub(crate) trust: f64,
    pub(crate) accessed_at: Timestamp,
    pub(crate) uses: u32,
    pub(crate) trace: maxim_core::TraceState,
}

impl Hot {
    pub(crate) fn of(skill: &Skill) -> Self {
        Self {
            retired: skill.is_retired(),
            relevance: skill.success_rate(),
            trust: skill.meta.trust.get(),
            accessed_at: skill.meta.accessed_at,
            uses: skill.meta.access_count.saturating_sub(1),
            trace: skill.meta.trace.clone(),
        }
    }

    /// Exactly [`final_score`](maxim_core::rank::final_score) of the skill (not associated),
    /// from the copy.
    pub(crate) fn score(&self, now: Timestamp, cfg: &RankConfig) -> f64 {
        let memory = maxim_core::rank::seed_score(
            self.trust,
            now.days_since(self.accessed_at),
            self.uses,
            cfg.half_life_days,
            cfg.use_bonus,
        );
        self.relevance.clamp(0.0, 1.0) * memory * (1.0 + self.trace.retrieval_score(now, false, &cfg.trace))
    }
}

/// The skills and every index over them; replaced whole by a load.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Dense slots (`None` for a free one) behind their ids.
    pub(crate) records: Vec<Option<Skill>>,
    pub(crate) info: Vec<SlotInfo>,
    pub(crate) free: Vec<u32>,
    pub(crate) slots: FxHashMap<RecordId, u32>,
    pub(crate) by_goal: FxHashMap<String, Vec<u32>>,
    pub(crate) by_method: FxHashMap<u64, Vec<u32>>,
    pub(crate) tool_ids: FxHashMap<String, u32>,
    pub(crate) by_tool: Vec<Vec<u32>>,
    pub(crate) fact_ids: FxHashMap<String, u32>,
    pub(crate) graph: Graph,
    pub(crate) counters: Counters,
}

impl State {
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn slot(&self, id: RecordId) -> Option<usize> {
        self.slots.get(&id).map(|&s| s as usize)
    }

    pub(crate) fn get(&self, id: RecordId) -> Option<&Skill> {
        self.slot(id).and_then(|s| self.records[s].as_ref())
    }

    pub(crate) fn get_mut(&mut self, id: RecordId) -> Option<&mut Skill> {
        let s = self.slot(id)?;
        self.records[s].as_mut()
    }

    /// Copies what ranking reads from the skill at `slot` into its [`SlotInfo`].
    pub(crate) fn refresh(&mut self, slot: usize) {
        let Some(skill) = self.records[slot].as_ref() else { return };
        let info = &mut self.info[slot];
        info.pre.clear();
        for p in &skill.preconditions {
            let id = if let Some(&f) = self.fact_ids.get(p) {
                f
            } else {
                let f = self.fact_ids.len() as u32;
                self.fact_ids.insert(p.clone(), f);
                f
            };
            info.pre.push(id);
        }
        info.pre.sort_unstable();
        info.hot = Some(Hot::of(skill));
    }

    /// [`refresh`](Self::refresh) of skill `id`.
    pub(crate) fn refresh_id(&mut self, id: RecordId) {
        if let Some(s) = self.slot(id) {
            self.refresh(s);
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Skill> + '_ {
        self.records.iter().flatten()
    }

    /// Places `skill` in a slot and indexes it (no graph edges).
    pub(crate) fn place(&mut self, skill: Skill) -> usize {
        let goal = skill.goal_key();
        let method = method_hash(&goal, &skill.steps);
        let mut tools: Vec<u32> =
            skill.steps.iter().map(|s| intern(&mut self.tool_ids, &mut self.by_tool, &s.tool)).collect();
        tools.sort_unstable();
        tools.dedup();
        let id = skill.meta.id;
        let slot = if let Some(s) = self.free.pop() {
            self.records[s as usize] = Some(skill);
            s
        } else {
            self.records.push(Some(skill));
            self.info.push(SlotInfo::default());
            (self.records.len() - 1) as u32
        };
        self.by_goal.entry(goal.clone()).or_default().push(slot);
        self.by_method.entry(method).or_default().push(slot);
        for &t in &tools {
            self.by_tool[t as usize].push(slot);
        }
        self.info[slot as usize] = SlotInfo { id, goal, method, tools, pre: Vec::new(), hot: None };
        self.slots.insert(id, slot);
        self.refresh(slot as usize);
        if let Err(err) = self.graph.add_node(id) {
            tracing::warn!(%id, error = %err, "skill graph refused a node");
        }
        slot as usize
    }

    /// Removes the skills `ids` (those held) from the slots, every index and the graph.
    pub(crate) fn take(&mut self, ids: &[RecordId]) -> Vec<Skill> {
        let mut doomed = vec![false; self.records.len()];
        let mut taken = Vec::with_capacity(ids.len());
        let mut goals = Vec::new();
        let mut methods = Vec::new();
        let mut tools = Vec::new();
        for id in ids {
            let Some(slot) = self.slots.remove(id) else { continue };
            let s = slot as usize;
            doomed[s] = true;
            if let Some(skill) = self.records[s].take() {
                taken.push(skill);
            }
            let info = std::mem::take(&mut self.info[s]);
            goals.push(info.goal);
            methods.push(info.method);
            tools.extend(info.tools);
            self.free.push(slot);
        }
        let keep = |v: &mut Vec<u32>| v.retain(|&s| !doomed[s as usize]);
        goals.sort_unstable();
        goals.dedup();
        for g in goals {
            if let Some(list) = self.by_goal.get_mut(&g) {
                keep(list);
                if list.is_empty() {
                    self.by_goal.remove(&g);
                }
            }
        }
        methods.sort_unstable();
        methods.dedup();
        for m in methods {
            if let Some(list) = self.by_method.get_mut(&m) {
                keep(list);
                if list.is_empty() {
                    self.by_method.remove(&m);
                }
            }
        }
        tools.sort_unstable();
        tools.dedup();
        for t in tools {
            keep(&mut self.by_tool[t as usize]);
        }
        let gone: Vec<RecordId> = taken.iter().map(|s| s.meta.id).collect();
        self.graph.remove_nodes(&gone);
        taken
    }

    /// The held skill with the same goal and steps, if any.
    pub(crate) fn find_method(&self, goal: &str, steps: &[Step]) -> Option<&Skill> {
        let list = self.by_method.get(&method_hash(goal, steps))?;
        list.iter()
            .filter_map(|&s| self.records[s as usize].as_ref().map(|r| (s, r)))
            .find_map(|(s, r)| (self.info[s as usize].goal == goal && r.steps == steps).then_some(r))
    }

    /// The skills a new skill with `steps` (and id `id`) is associated with: those sharing
    /// tools with a Jaccard similarity of at least the threshold, best first.
    pub(crate) fn associations(
        &self,
        id: RecordId,
        steps: &[Step],
        cfg: &CerebellumConfig,
    ) -> Vec<(RecordId, f64)> {
        if cfg.association_limit == 0 {
            return Vec::new();
        }
        let mut names: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let n_tools = names.len();
        let mut seen: Vec<u32> = Vec::new();
        for name in names {
            let Some(&t) = self.tool_ids.get(name) else { continue };
            let list = &self.by_tool[t as usize];
            seen.extend_from_slice(&list[list.len().saturating_sub(cfg.association_scan)..]);
        }
        seen.sort_unstable();
        let mut out: Vec<(RecordId, f64)> = seen
            .chunk_by(|a, b| a == b)
            .filter_map(|run| {
                let info = &self.info[run[0] as usize];
                let shared = run.len();
                let j = shared as f64 / (n_tools + info.tools.len() - shared) as f64;
                (info.id != id && j >= cfg.association_threshold && j > 0.0).then_some((info.id, j))
            })
            .collect();
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(cfg.association_limit);
        out
    }

    /// Applies `op`. Every check was made when `op` was built; this cannot fail.
    pub(crate) fn apply(&mut self, op: Op, trace: &TraceParams) {
        match op {
            Op::Insert { skill, links, distilled } => {
                let id = skill.meta.id;
                self.place(*skill);
                for (other, weight) in links {
                    if let Err(err) = self.graph.add_bidirectional(id, other, EdgeKind::Associates, weight) {
                        tracing::warn!(%id, %other, error = %err, "skill association refused");
                    }
                }
                self.counters.skills_stored += 1;
                self.counters.distilled += u64::from(distilled);
            }
            Op::Reinforce { id, run, source, trust, facts, checks, at, status, retirement } => {
                let Some(skill) = self.get_mut(id) else { return };
                skill.preconditions = sorted_intersection(&skill.preconditions, &facts);
                for c in checks {
                    if skill.checks.len() < MAX_CHECKS && !skill.checks.contains(&c) {
                        skill.checks.push(c);
                    }
                }
                match skill.origins.iter_mut().find(|o| o.source == source) {
                    Some(o) => {
                        o.runs = o.runs.saturating_add(1);
                        if trust > o.trust {
                            o.trust = trust;
                        }
                        o.last_run = run;
                        o.last_at = at;
                    }
                    None => skill.origins.push(Origin {
                        source,
                        trust,
                        runs: 1,
                        first_run: run.clone(),
                        last_run: run,
                        last_at: at,
                    }),
                }
                if trust > skill.meta.trust {
                    skill.meta.trust = trust;
                }
                let _ = skill.meta.trace.reinforce(at, trace);
                self.counters.reinforced += 1;
                self.record_outcome(id, true, at, status, retirement);
                self.refresh_id(id);
            }
            Op::Use { id, success, at, status, retirement } => {
                if let Some(skill) = self.get_mut(id).filter(|_| success) {
                    let _ = skill.meta.trace.reinforce(at, trace);
                }
                self.record_outcome(id, success, at, status, retirement);
                self.refresh_id(id);
            }
            Op::Confirm { id, by, at, status } => {
                let Some(skill) = self.get_mut(id) else { return };
                skill.confirmation = Some(Confirmation { by, at });
                let promoted = status == SkillStatus::Active && skill.status != SkillStatus::Active;
                skill.status = status;
                if promoted {
                    skill.meta.promote(at);
                }
                self.counters.confirmations += 1;
                self.counters.promotions += u64::from(promoted);
                self.refresh_id(id);
            }
            Op::Retire { ids, at, reason } => {
                let revoked = matches!(reason, RetireReason::Revoked { .. });
                for id in ids {
                    let Some(skill) = self.get_mut(id) else { continue };
                    skill.retirement =
                        Some(Retirement { at, reason: reason.clone(), previous: skill.status });
                    skill.status = SkillStatus::Retired;
                    self.counters.retirements += 1;
                    self.refresh_id(id);
                }
                self.counters.revocations += u64::from(revoked);
            }
            Op::Remove { ids, consolidation } => {
                let n = self.take(&ids).len();
                self.counters.removals += n as u64;
                self.counters.consolidations += u64::from(consolidation);
            }
            Op::Touch { ids, at } => {
                for id in ids {
                    if let Some(skill) = self.get_mut(id) {
                        // A read that counts as use: an access and a reinforcement.
                        skill.meta.touch(at);
                        let _ = skill.meta.trace.reinforce(at, trace);
                        self.refresh_id(id);
                    }
                }
            }
            Op::Link { from, to, weight } => {
                if let Err(err) = self.graph.add_edge(from, to, EdgeKind::Causes, weight, None) {
                    tracing::warn!(%from, %to, error = %err, "skill sequence link refused");
                }
                self.counters.sequence_links += 1;
            }
        }
    }

    pub(crate) fn record_outcome(
        &mut self,
        id: RecordId,
        success: bool,
        at: Timestamp,
        status: SkillStatus,
        retirement: Option<Retirement>,
    ) {
        let Some(skill) = self.get_mut(id) else { return };
        skill.uses = skill.uses.saturating_add(1);
        if success {
            skill.successes = skill.successes.saturating_add(1);
        } else {
            skill.failures = skill.failures.saturating_add(1);
        }
        skill.outcomes.push(success);
        skill.meta.touch(at);
        let promoted = matches!(status, SkillStatus::Active | SkillStatus::AwaitingConfirmation)
            && skill.status == SkillStatus::Candidate;
        if status == SkillStatus::Active {
            skill.meta.promote(at);
        }
        let retired = status == SkillStatus::Retired && skill.status != SkillStatus::Retired;
        skill.status = status;
        skill.retirement = retirement.or(skill.retirement.take());
        self.counters.uses += 1;
        if success {
            self.counters.successes += 1;
        } else {
            self.counters.failures += 1;
        }
        self.counters.promotions += u64::from(promoted);
        self.counters.retirements += u64::from(retired);
    }
}

fn intern(ids: &mut FxHashMap<String, u32>, postings: &mut Vec<Vec<u32>>, tool: &str) -> u32 {
    if let Some(&t) = ids.get(tool) {
        return t;
    }
    let t = postings.len() as u32;
    postings.push(Vec::new());
    ids.insert(tool.to_owned(), t);
    t
}

/// A hash of a method: the goal key and the steps.
pub(crate) fn method_hash(goal: &str, steps: &[Step]) -> u64 {
    let mut h = FxHasher::default();
    goal.hash(&mut h);
    steps.hash(&mut h);
    h.finish()
}

/// One resolved mutation of the store: ids, times and status changes chosen, every check
/// made. [`State::apply`] applies it and cannot fail, so a journal can append it before it
/// is applied and replay it exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Op {
    /// A new skill, with the skills it is associated with.
    Insert { skill: Box<Skill>, links: Vec<(RecordId, f64)>, distilled: bool },
    /// A run reinforced a skill's method.
    Reinforce {
        id: RecordId,
        run: String,
        source: Source,
        trust: Trust,
        facts: Vec<String>,
        checks: Vec<String>,
        at: Timestamp,
        status: SkillStatus,
        retirement: Option<Retirement>,
    },
    /// The outcome of a use.
    Use { id: RecordId, success: bool, at: Timestamp, status: SkillStatus, retirement: Option<Retirement> },
    /// A human's confirmation.
    Confirm { id: RecordId, by: String, at: Timestamp, status: SkillStatus },
    /// Retirements (by hand or by revocation).
    Retire { ids: Vec<RecordId>, at: Timestamp, reason: RetireReason },
    /// Removals.
    Remove { ids: Vec<RecordId>, consolidation: bool },
    /// Accesses.
    Touch { ids: Vec<RecordId>, at: Timestamp },
    /// `from` was followed by `to`.
    Link { from: RecordId, to: RecordId, weight: f64 },
}
