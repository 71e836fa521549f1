//! Sessions: what the hub does when an agent starts and ends a stretch of work.
//!
//! [`MemoryHub::on_session_end`] runs the seed's consolidation cycle, in this order (each
//! step on its own: a failure is logged and reported, and the next step runs):
//! 1. **sleep** of the episodic layer (compression and forgetting by its strategy; what it
//!    removes is removed everywhere);
//! 2. **NAc decay** (factor 0.95, §12.1);
//! 3. **patterns**: the statistician steps every metric through the randomness gate, and
//!    the hub fits each metric's trend and daily rhythm over its whole series; confirmed fits
//!    become PATTERN records of the angular gyrus that STATISTICALLY_CONFIRMS (trend) or
//!    TEMPORALLY_CORRELATES (rhythm) the tool's concept;
//! 4. **promotion** of NAc's and the statistician's candidates through the IPS gate into the
//!    ATL and the cross-layer graph (before consolidation, so the episodes still exist when
//!    the edges form);
//! 5. **consolidation** of the ATL, the angular gyrus and the skills (removals cascade);
//! 6. **persist**: every store's journal is made durable (`fsync`); a store whose journal
//!    has grown to [`HubConfig::compact_growth`] times its snapshot, and to at least
//!    [`HubConfig::compact_min_bytes`], is compacted: checkpointed, its snapshot saved and
//!    its journal started afresh. The statistician and the metric series are saved. The
//!    stores are persisted side by side, on a thread each, so their `fsync`s overlap.
//!
//! Nothing waits for a session end to be durable: every write was journaled when it was
//! acknowledged. Compaction bounds how much journal the next open replays, as Redis
//! rewrites its append-only file when it has grown by a percentage: rewriting every
//! snapshot at every session end costs a full save of every store (four `fsync`s each)
//! for journals that may hold a few kilobytes. [`MemoryHub::checkpoint`] compacts every
//! store now. What a layer does not journal (access bookkeeping, counters) reaches the
//! disk when that layer is compacted.
//!
//! [`HubConfig::compact_growth`]: super::HubConfig::compact_growth
//! [`HubConfig::compact_min_bytes`]: super::HubConfig::compact_min_bytes

use std::fmt;
use std::path::Path;

use angular_gyrus::fit::{CosinorFit, FitConfig, Period, TrendFit};
use angular_gyrus::patterns::{cosinor_name, trend_name};
use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, PromotionSource, RecordId, Timestamp};
use promoter::{EpisodeElements, PromotionReport};

use super::{METRICS_FILE, MemoryHub, Result, STATISTICIAN_FILE};

/// What [`MemoryHub::on_session_start`] found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct SessionStart {
    /// True when a session was already open (nothing was done).
    pub already_active: bool,
    /// When the session started.
    pub started_at: Timestamp,
    /// Episodes held.
    pub episodes: usize,
    /// Concepts held.
    pub concepts: usize,
    /// Records of the angular gyrus.
    pub math_records: usize,
    /// Cross-layer edges.
    pub cross_edges: usize,
    /// Skills held.
    pub skills: usize,
}

/// One step of a session end that failed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepFailure {
    /// The step (`sleep`, `nac_decay`, `patterns`, `promotion`, `consolidation`, `persist`).
    pub step: &'static str,
    /// What went wrong.
    pub error: String,
}

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.step, self.error)
    }
}

/// What a session end did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct SessionReport {
    /// False when no session was open (nothing was done).
    pub was_active: bool,
    /// Episodes compressed by sleep.
    pub episodes_compressed: usize,
    /// Episodes removed by sleep.
    pub episodes_removed: usize,
    /// Episodes made long-term.
    pub episodes_promoted: usize,
    /// Metric state changes of the statistician.
    pub metric_transitions: usize,
    /// PATTERN records stored or refitted this session: `(id, name)`.
    pub patterns: Vec<(RecordId, String)>,
    /// Concepts created by promotion.
    pub concepts_promoted: usize,
    /// Concepts reinforced by promotion.
    pub concepts_reinforced: usize,
    /// Candidates the randomness gate or the thresholds turned away.
    pub candidates_rejected: usize,
    /// Concepts compressed by the ATL's consolidation.
    pub concepts_compressed: usize,
    /// Concepts removed by it.
    pub concepts_removed: usize,
    /// Records of the angular gyrus compressed or removed by its consolidation.
    pub math_consolidated: usize,
    /// Skills retired or removed by their consolidation.
    pub skills_consolidated: usize,
    /// Records removed anywhere, cascaded to every layer.
    pub cascaded: usize,
    /// Whether every store was persisted (its journal made durable, compacted when due)
    /// and the statistician and the metric series saved.
    pub persisted: bool,
    /// The stores whose journals were compacted into a fresh snapshot (`hippocampus`,
    /// `atl`, `angular_gyrus`, `crossgraph`, `nac`, `promoter`, `cerebellum`, `scn`).
    pub compacted: Vec<&'static str>,
    /// Steps that failed; the others ran.
    pub failures: Vec<StepFailure>,
    /// Seconds the session lasted (by the hub's clock).
    pub duration_secs: f64,
    /// Wall-clock milliseconds each step of the cycle took, in order.
    pub step_millis: Vec<(&'static str, f64)>,
}

impl MemoryHub {
    /// Opens a session (idempotent: a second call reports `already_active` and does nothing).
    pub fn on_session_start(&mut self) -> SessionStart {
        self.drain_error_traces();
        let already_active = self.session.is_some();
        let started_at = *self.session.get_or_insert_with(|| self.clock.now());
        if !already_active {
            tracing::info!(partition = self.partition.as_str(), "session started");
        }
        SessionStart {
            already_active,
            started_at,
            episodes: self.hippocampus.len(),
            concepts: self.atl.concept_count(),
            math_records: self.angular_gyrus.len_records(),
            cross_edges: self.graph.edge_count(),
            skills: maxim_core::MemoryLayer::len(&self.skills),
        }
    }

    /// Whether a session is open.
    pub fn session_active(&self) -> bool {
        self.session.is_some()
    }

    /// Ends the session: the consolidation cycle of the [module docs](self). Without an open
    /// session nothing happens (`was_active` is false).
    pub fn on_session_end(&mut self) -> SessionReport {
        self.drain_error_traces(); // the session's errors are consolidated with it
        let Some(started) = self.session.take() else {
            tracing::warn!("session end without an open session");
            return SessionReport::default();
        };
        let _s = tracing::info_span!("hub_session_end", partition = self.partition.as_str()).entered();
        let mut report = SessionReport { was_active: true, ..SessionReport::default() };
        self.consolidation_cycle(&mut report);
        report.duration_secs = (self.clock.now().as_secs_f64() - started.as_secs_f64()).max(0.0);
        tracing::info!(
            patterns = report.patterns.len(),
            promoted = report.concepts_promoted,
            failures = report.failures.len(),
            "session ended"
        );
        report
    }

    /// Runs the consolidation cycle now, session or not (what `maxim consolidate` does).
    pub fn consolidate(&mut self) -> SessionReport {
        let mut report = SessionReport::default();
        self.consolidation_cycle(&mut report);
        report
    }

    fn consolidation_cycle(&mut self, report: &mut SessionReport) {
        let mut lap = std::time::Instant::now();
        let mut time = |report: &mut SessionReport, step: &'static str| {
            let now = std::time::Instant::now();
            report.step_millis.push((step, (now - lap).as_secs_f64() * 1e3));
            lap = now;
        };
        // 1. Sleep (it ends with a checkpoint of the episodic layer: when that fails, the
        // layer refuses writes until one succeeds, so the persist step compacts it).
        let failed_checkpoints = self.hippocampus.counters().checkpoint_failures;
        let sleep = self.hippocampus.sleep();
        let episodic_behind = self.hippocampus.counters().checkpoint_failures > failed_checkpoints;
        report.episodes_compressed = sleep.compressed;
        report.episodes_removed = sleep.removed;
        report.episodes_promoted = sleep.promoted;
        self.cascade_step("sleep", report);
        time(report, "sleep");

        // 2. NAc decay.
        if let Err(e) = self.nac.decay_all(self.config.nac_decay) {
            fail(report, "nac_decay", e);
        }
        time(report, "nac_decay");

        // 3. Patterns.
        let transitions = self.statistician.step(self.gate.as_ref(), Some(&mut self.angular_gyrus));
        report.metric_transitions = transitions.len();
        if let Err(e) = self.fit_metric_patterns(report) {
            fail(report, "patterns", e);
        }
        time(report, "patterns");

        // 4. Promotion.
        let promotion = self.promote();
        report.concepts_promoted = promotion.promoted.len();
        report.concepts_reinforced = promotion.reinforced.len();
        report.candidates_rejected = promotion.rejected.len();
        for failure in &promotion.failed {
            fail(report, "promotion", format!("{failure:?}"));
        }
        time(report, "promotion");

        // 5. Consolidation.
        match self.atl.consolidate_now() {
            Ok(r) => {
                report.concepts_compressed = r.compressed;
                report.concepts_removed = r.removed;
            }
            Err(e) => fail(report, "consolidation", e),
        }
        match self.angular_gyrus.consolidate_now() {
            Ok(r) => report.math_consolidated = r.compressed + r.removed,
            Err(e) => fail(report, "consolidation", e),
        }
        match self.skills.consolidate_now() {
            Ok(r) => report.skills_consolidated = r.compressed + r.removed,
            Err(e) => fail(report, "consolidation", e),
        }
        self.cascade_step("consolidation", report);
        time(report, "consolidation");

        self.reindex_knowledge();

        // 6. Persist.
        let persisted = self.persist(false, episodic_behind);
        report.persisted = persisted.failures.is_empty();
        report.compacted = persisted.compacted;
        report.failures.extend(persisted.failures);
        time(report, "persist");
    }

    fn cascade_step(&mut self, step: &'static str, report: &mut SessionReport) {
        let mut failures = Vec::new();
        report.cascaded += self.cascade_removed(&mut failures).len();
        for f in failures {
            fail(report, step, f);
        }
    }

    /// NAc's and the statistician's candidates through the gate into the ATL and the graph.
    fn promote(&mut self) -> PromotionReport {
        let hippocampus = &self.hippocampus;
        let reader = |id: RecordId| -> Option<EpisodeElements> {
            let e = hippocampus.peek(id)?;
            let full = e.as_full();
            Some(EpisodeElements {
                objects: full
                    .map(|f| f.perception.detected_objects.iter().map(ToString::to_string).collect())
                    .unwrap_or_default(),
                tools: Some(e.tool_name().to_owned()).filter(|t| !t.is_empty()).into_iter().collect(),
                goals: e.goal().map(str::to_owned).into_iter().collect(),
                outcome: e.success().map(|s| if s { "success" } else { "failure" }.to_owned()),
            })
        };
        let sources: [&dyn PromotionSource; 2] = [&self.nac, &self.statistician];
        self.promoter.scan_with(&sources, Some(&reader), &mut self.atl, &mut self.graph)
    }

    /// Fits every metric with enough events and stores the confirmed fits (module docs, 3).
    fn fit_metric_patterns(&mut self, report: &mut SessionReport) -> Result<()> {
        let config = FitConfig::default();
        let fits: Vec<(String, Option<TrendFit>, Option<CosinorFit>)> = self
            .metrics
            .iter()
            .filter(|(_, s)| s.len() >= self.config.min_fit_events)
            .map(|(name, s)| (name.to_owned(), s.fit_trend(self.config.min_fit_days), s.fit_daily_rhythm()))
            .collect();
        for (metric, trend, rhythm) in fits {
            let mut stored = Vec::new();
            if let Some(fit) = trend
                && let Some(id) = self.angular_gyrus.store_trend(&metric, &fit, &config)?
            {
                stored.push((id, trend_name(&metric), CrossEdgeKind::StatisticallyConfirms, fit.r_squared));
            }
            if let Some(fit) = rhythm
                && let Some(id) = self.angular_gyrus.store_cosinor(&metric, &fit, &config)?
            {
                let name = cosinor_name(&metric, Period::DAILY);
                stored.push((id, name, CrossEdgeKind::TemporallyCorrelates, fit.r_squared));
            }
            if stored.is_empty() {
                continue;
            }
            let concept = self.metric_concept(&metric)?;
            for (id, name, kind, r_squared) in stored {
                if let Some(concept) = concept {
                    let from = LayerRecord::new(LayerKind::AngularGyrus, id);
                    let to = LayerRecord::new(LayerKind::Atl, concept);
                    self.graph.add_edge(from, to, kind, r_squared.clamp(0.05, 1.0))?;
                }
                report.patterns.push((id, name));
            }
        }
        Ok(())
    }

    /// The concept a metric is about: the action concept of `tool:<name>:success`, the
    /// goal concept of `goal:<key>:success` (created when missing, tied to the tool
    /// capability category), or `None` for other metrics.
    fn metric_concept(&mut self, metric: &str) -> Result<Option<RecordId>> {
        let Some(rest) = metric.strip_suffix(":success") else { return Ok(None) };
        let (name, category) = if let Some(tool) = rest.strip_prefix("tool:") {
            (tool, "action")
        } else if let Some(goal) = rest.strip_prefix("goal:") {
            (goal, "goal")
        } else {
            return Ok(None);
        };
        let mut spec = atl::spec(name, category);
        spec.definition = format!("{category}: {name}");
        spec.source = maxim_core::Source::AgentInference;
        spec.trust = 0.9;
        let id = self.atl.find_or_create(&spec)?.id;
        if category == "action" {
            self.link_tool_capability(id)?;
        }
        Ok(Some(id))
    }

    /// Checkpoints every store and saves the statistician and the metric series; returns the
    /// failures (the other stores are still checkpointed). An in-memory hub has nothing to do.
    pub(super) fn checkpoint_all(&mut self) -> Vec<StepFailure> {
        self.persist(true, true).failures
    }

    /// The persist step (module docs, 6): every store synced, and compacted when `all` or
    /// when its journal is due (the episodic layer also when `episodic_behind`); the
    /// statistician and the metric series saved. The stores are independent, so each is
    /// persisted on a thread of its own.
    fn persist(&mut self, all: bool, episodic_behind: bool) -> Persisted {
        let Some(dir) = self.dir.clone() else { return Persisted::default() };
        let policy =
            Compaction { all, growth: self.config.compact_growth, min_bytes: self.config.compact_min_bytes };
        let hub = dir.join("hub");
        let Self {
            hippocampus,
            atl,
            angular_gyrus,
            graph,
            nac,
            promoter,
            skills,
            scn,
            statistician,
            metrics,
            ..
        } = self;
        let (dir, hub) = (&dir, &hub);
        let episodic = Compaction { all: all || episodic_behind, ..policy };
        let outcomes: Vec<(&'static str, std::thread::Result<Result<bool, String>>)> =
            std::thread::scope(|s| {
                let handles = [
                    (
                        "hippocampus",
                        s.spawn(move || {
                            persist_store(dir, hippocampus::SNAPSHOT_KIND, hippocampus, episodic)
                        }),
                    ),
                    ("atl", s.spawn(move || persist_store(dir, atl::LAYER_NAME, atl, policy))),
                    (
                        "angular_gyrus",
                        s.spawn(move || {
                            persist_store(dir, angular_gyrus::SNAPSHOT_KIND, angular_gyrus, policy)
                        }),
                    ),
                    (
                        "crossgraph",
                        s.spawn(move || persist_store(dir, crossgraph::SNAPSHOT_KIND, graph, policy)),
                    ),
                    ("nac", s.spawn(move || persist_store(dir, nac::SNAPSHOT_KIND, nac, policy))),
                    (
                        "promoter",
                        s.spawn(move || persist_store(dir, promoter::SNAPSHOT_KIND, promoter, policy)),
                    ),
                    (
                        "cerebellum",
                        s.spawn(move || persist_store(dir, cerebellum::SNAPSHOT_KIND, skills, policy)),
                    ),
                    ("scn", s.spawn(move || persist_store(dir, crate::scn::SNAPSHOT_KIND, scn, policy))),
                    (
                        "statistician",
                        s.spawn(move || {
                            statistician
                                .save(hub.join(STATISTICIAN_FILE))
                                .map(|()| false)
                                .map_err(|e| e.to_string())
                        }),
                    ),
                    (
                        "metric series",
                        s.spawn(move || {
                            metrics.save(&hub.join(METRICS_FILE)).map(|()| false).map_err(|e| e.to_string())
                        }),
                    ),
                ];
                // Every thread is joined before any outcome is looked at.
                handles.map(|(name, h)| (name, h.join())).into_iter().collect()
            });
        let mut out = Persisted::default();
        for (name, outcome) in outcomes {
            match outcome {
                Ok(Ok(true)) => out.compacted.push(name),
                Ok(Ok(false)) => {}
                Ok(Err(e)) => {
                    out.failures.push(StepFailure { step: "persist", error: format!("{name}: {e}") });
                }
                Err(_) => {
                    out.failures.push(StepFailure { step: "persist", error: format!("{name}: panicked") });
                }
            }
        }
        out
    }
    /// Checkpoints every store now (what a session end's last step does).
    pub fn checkpoint(&mut self) -> Result<(), Vec<StepFailure>> {
        let failures = self.checkpoint_all();
        if failures.is_empty() { Ok(()) } else { Err(failures) }
    }
}

fn fail(report: &mut SessionReport, step: &'static str, error: impl fmt::Display) {
    let error = error.to_string();
    tracing::warn!(step, %error, "session end step failed");
    report.failures.push(StepFailure { step, error });
}

/// What the persist step did.
#[derive(Debug, Default)]
struct Persisted {
    compacted: Vec<&'static str>,
    failures: Vec<StepFailure>,
}

/// When the persist step compacts a store.
#[derive(Debug, Clone, Copy)]
struct Compaction {
    /// Every store, whatever its journal's size (a checkpoint).
    all: bool,
    /// [`HubConfig::compact_growth`](super::HubConfig::compact_growth).
    growth: f64,
    /// [`HubConfig::compact_min_bytes`](super::HubConfig::compact_min_bytes).
    min_bytes: u64,
}

impl Compaction {
    /// Whether a journal of `journal` bytes of entries after a snapshot of `snapshot` bytes
    /// is due for compaction: at least `growth` times the snapshot, and at least `min_bytes`
    /// (so growth 0 and no minimum compact every store, even one with an empty journal).
    fn due(self, journal: u64, snapshot: u64) -> bool {
        let grown = journal as f64 >= self.growth * snapshot as f64;
        self.all || (journal >= self.min_bytes && grown)
    }
}

/// A journaled store as the persist step sees it.
trait Durable: Send {
    /// Makes every journaled write durable now.
    fn sync_journal(&mut self) -> Result<(), String>;
    /// Writes a snapshot and starts a fresh journal.
    fn compact(&mut self) -> Result<(), String>;
}

macro_rules! durable {
    ($($store:ty),*) => {$(
        impl Durable for $store {
            fn sync_journal(&mut self) -> Result<(), String> {
                self.sync().map_err(|e| e.to_string())
            }
            fn compact(&mut self) -> Result<(), String> {
                self.checkpoint().map_err(|e| e.to_string())
            }
        }
    )*};
}

durable!(
    hippocampus::Hippocampus,
    atl::Atl,
    angular_gyrus::AngularGyrus,
    crossgraph::CrossLayerGraph,
    nac::Nac,
    promoter::SemanticPromoter,
    cerebellum::Cerebellum,
    crate::scn::Scn
);

/// Syncs the store of `kind` (in `dir/<kind>/`) and compacts it when `policy` says it is
/// due; returns whether it was compacted.
fn persist_store(
    dir: &Path,
    kind: &str,
    store: &mut dyn Durable,
    policy: Compaction,
) -> Result<bool, String> {
    if !policy.all {
        store.sync_journal()?;
        let sub = dir.join(kind);
        let journal = file_len(&maxim_core::journal::journal_path(&sub, kind))
            .saturating_sub(maxim_core::journal::JOURNAL_HEADER_LEN as u64);
        let snapshot = file_len(&maxim_core::journal::snapshot_path(&sub, kind));
        if !policy.due(journal, snapshot) {
            return Ok(false);
        }
    }
    store.compact()?;
    Ok(true)
}

/// The length of the file at `path` (0 when it cannot be read: a missing snapshot).
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::Compaction;

    #[test]
    fn a_journal_is_due_when_it_has_grown_past_both_bounds() {
        let c = Compaction { all: false, growth: 1.0, min_bytes: 1_000 };
        assert!(!c.due(999, 0), "under the minimum");
        assert!(c.due(1_000, 0), "at the minimum, no snapshot");
        assert!(!c.due(4_000, 4_001), "under the snapshot's size");
        assert!(c.due(4_001, 4_001));
        let half = Compaction { growth: 0.5, ..c };
        assert!(half.due(2_001, 4_001) && !half.due(1_999, 4_001));
        assert!(Compaction { all: true, ..c }.due(0, 1 << 30), "a checkpoint compacts all");
        assert!(Compaction { all: false, growth: 0.0, min_bytes: 0 }.due(0, 1 << 30), "growth 0, no minimum");
    }
}
