//! The `MemoryHub`: one memory for an agent, every layer wired together.
//!
//! A hub holds one *partition* (an agent's or a user's memory) of a data directory: the
//! episodic layer, the concepts, the mathematical layer and its statistician, the cross-layer
//! graph, reward learning, the promoter and the skills, each journaled in its own
//! subdirectory, so nothing acknowledged is lost between sessions.
//!
//! ```text
//! maxim-data/
//!   <partition>/              one directory per partition (name escaped when not plain)
//!     hippocampus/ atl/ angular_gyrus/ crossgraph/ nac/ promoter/ cerebellum/
//!     hub/                    the memory's birth, the statistician and the hub's metric series
//! ```
//!
//! What the hub adds to the layers:
//! - **capture feeds everything** ([`MemoryHub::capture`]): the episode goes to the
//!   hippocampus; its objects, people, place, goal words and tool become ATL concepts linked
//!   to it (INSTANCE_OF) and to each other; its tool and goal outcomes teach NAc and the
//!   statistician;
//! - **deletion cascades**: whatever removes a record anywhere (a forget, sleep, eviction,
//!   consolidation) removes its edges, its causal evidence and the references to it;
//! - **sessions** ([`MemoryHub::on_session_end`]): promotion through the randomness gate,
//!   pattern fitting, consolidation of every layer, the journals synced and those that have
//!   grown past their snapshots compacted, each step reported and none stopping the others;
//! - **queries** across layers ([`MemoryHub::recall_with_knowledge`],
//!   [`MemoryHub::knowledge_context`]) and the seed-004 rules as calls
//!   ([`MemoryHub::forget`], [`MemoryHub::export`]);
//! - **traces** ([`traces`]): [`MemoryHub::mark_used`] reinforces what the agent acted on,
//!   and rankings multiply by `1 + trace_score`;
//! - **its own errors** ([`errors`]): [`MemoryHub::error_traces`] is a `tracing` layer whose
//!   ERROR events the hub drains into episodes at capture and session boundaries.
//!
//! Partitions never mix: each has its own stores, so no recall, context, export or
//! activation of one can return a record of another.

pub mod birth;
pub mod capture;
pub mod claims;
pub mod edit;
mod error;
pub mod errors;
pub mod forget;
pub mod metrics;
pub mod query;
pub mod recall;
pub mod session;
pub mod shared;
pub mod traces;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use angular_gyrus::{AngularGyrus, AngularGyrusConfig, Statistician, StatisticianConfig};
use atl::{Atl, AtlConfig};
use cerebellum::{Cerebellum, CerebellumConfig};
use crossgraph::{CrossGraphConfig, CrossLayerGraph};
use hippocampus::{Hippocampus, HippocampusConfig};
use ips_gate::IpsGate;
use maxim_core::journal::{DirLock, SyncPolicy};
use maxim_core::{
    Embedder, LayerKind, LayerRecord, MemoryLayer, Partition, RecordId, SharedClock, SystemClock, Timestamp,
};
use nac::{Nac, NacConfig};
use promoter::{PromoterConfig, SemanticPromoter};

pub use capture::Captured;
pub use error::{Error, Result};
pub use errors::ErrorQueue;
pub use forget::{Forget, ForgetReport, OpenReport};
pub use metrics::MetricSeries;
pub use query::{KnowledgeQuery, Traversal, TraversalStep, episode_line};
pub use recall::{RecallHit, RecallOptions, Why};
pub use session::{SessionReport, SessionStart, StepFailure};
pub use shared::SharedHub;

use metrics::MetricLog;

/// The data directory used when none is given.
pub const DEFAULT_DATA_DIR: &str = "./maxim-data";

/// Settings of a [`MemoryHub`] beyond the layers' own.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HubConfig {
    /// NAc's decay factor at each session end (default 0.95, §12.1).
    pub nac_decay: f64,
    /// Least confidence of a NAc link offered for promotion (default 0.6).
    pub promotion_min_confidence: f64,
    /// Least observations of a NAc link offered for promotion (default 3).
    pub promotion_min_observations: u32,
    /// Least trust of an entry in a knowledge context (default 0.3); entries below it are
    /// listed apart as low trust, never as knowledge to act on.
    pub min_context_trust: f64,
    /// Least events of a metric before the session end fits it (default 30).
    pub min_fit_events: usize,
    /// Least calendar days a metric must span before its trend is fitted (default 4).
    pub min_fit_days: usize,
    /// Most events kept per metric series (default 20,000; the oldest go first).
    pub max_metric_events: usize,
    /// A session end compacts a store (snapshot saved, journal started afresh) when its
    /// journal holds at least this many times its snapshot's bytes (default 1.0: the
    /// journal has doubled what the store holds, as Redis's `auto-aof-rewrite-percentage`
    /// 100); other stores only have their journal synced. 0 with `compact_min_bytes` 0
    /// compacts every store at every session end. Finite, not negative.
    pub compact_growth: f64,
    /// ... and at least this many bytes (default 1 MiB, so that small stores are not
    /// rewritten for a few entries; Redis's `auto-aof-rewrite-min-size`).
    pub compact_min_bytes: u64,
    /// The agent's imprint window (seed 002): for the seven days after the memory was born,
    /// reinforcements in every layer count three times and new records start with one
    /// reinforcement ([`birth`]). A layer config whose `trace` names a window of its own
    /// keeps it. Default true.
    pub imprint_window: bool,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            nac_decay: 0.95,
            promotion_min_confidence: 0.6,
            promotion_min_observations: 3,
            min_context_trust: 0.3,
            min_fit_events: 30,
            min_fit_days: 4,
            max_metric_events: 20_000,
            compact_growth: 1.0,
            compact_min_bytes: 1 << 20,
            imprint_window: true,
        }
    }
}

impl HubConfig {
    /// Checks every setting.
    pub fn validate(&self) -> Result<()> {
        maxim_core::check_unit("nac_decay", self.nac_decay)?;
        maxim_core::check_unit("promotion_min_confidence", self.promotion_min_confidence)?;
        maxim_core::check_unit("min_context_trust", self.min_context_trust)?;
        maxim_core::check_finite("compact_growth", self.compact_growth)?;
        maxim_core::check_non_negative("compact_growth", self.compact_growth)?;
        if self.min_fit_events < 3 {
            return Err(
                maxim_core::Error::invalid("min_fit_events", "at least 3 events are needed to fit").into()
            );
        }
        if self.max_metric_events < self.min_fit_events {
            return Err(maxim_core::Error::invalid("max_metric_events", "below min_fit_events").into());
        }
        Ok(())
    }
}

/// Builds a [`MemoryHub`]: [`open`](HubBuilder::open) on a data directory (journaled), or
/// [`build`](HubBuilder::build) in memory.
#[derive(Clone)]
pub struct HubBuilder {
    data_dir: PathBuf,
    partition: Partition,
    clock: Option<SharedClock>,
    embedder: Option<Arc<dyn Embedder>>,
    sync_policy: SyncPolicy,
    config: HubConfig,
    hippocampus: HippocampusConfig,
    atl: AtlConfig,
    angular_gyrus: AngularGyrusConfig,
    statistician: StatisticianConfig,
    crossgraph: CrossGraphConfig,
    nac: NacConfig,
    promoter: PromoterConfig,
    cerebellum: CerebellumConfig,
    id_seed: Option<u64>,
    time_zone: crate::scn::TimeZone,
    error_traces: crate::error_traces::ErrorTracesConfig,
}

impl std::fmt::Debug for HubBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubBuilder")
            .field("data_dir", &self.data_dir)
            .field("partition", &self.partition)
            .field("sync_policy", &self.sync_policy)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Default for HubBuilder {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            partition: Partition::default(),
            clock: None,
            embedder: None,
            sync_policy: SyncPolicy::default(),
            config: HubConfig::default(),
            hippocampus: HippocampusConfig::default(),
            atl: AtlConfig::default(),
            angular_gyrus: AngularGyrusConfig::default(),
            statistician: StatisticianConfig::default(),
            crossgraph: CrossGraphConfig::default(),
            nac: NacConfig::default(),
            promoter: PromoterConfig::default(),
            cerebellum: CerebellumConfig::default(),
            id_seed: None,
            time_zone: crate::scn::TimeZone::UTC,
            error_traces: errors::default_config(),
        }
    }
}

impl HubBuilder {
    /// The data directory (default [`DEFAULT_DATA_DIR`]).
    pub fn data_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.data_dir = dir.into();
        self
    }

    /// Whose memory this is (default `default`).
    pub fn partition(&mut self, partition: Partition) -> &mut Self {
        self.partition = partition;
        self
    }

    /// The clock every layer reads (default: the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// The embedder of the episodic and semantic layers (default: their own).
    pub fn embedder(&mut self, embedder: Arc<dyn Embedder>) -> &mut Self {
        self.embedder = Some(embedder);
        self
    }

    /// When journal entries reach the disk (default: [`SyncPolicy::default`]).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The hub's own settings.
    pub fn config(&mut self, config: HubConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The episodic layer's settings.
    pub fn hippocampus_config(&mut self, config: HippocampusConfig) -> &mut Self {
        self.hippocampus = config;
        self
    }

    /// The semantic layer's settings.
    pub fn atl_config(&mut self, config: AtlConfig) -> &mut Self {
        self.atl = config;
        self
    }

    /// The mathematical layer's settings.
    pub fn angular_gyrus_config(&mut self, config: AngularGyrusConfig) -> &mut Self {
        self.angular_gyrus = config;
        self
    }

    /// The statistician's settings.
    pub fn statistician_config(&mut self, config: StatisticianConfig) -> &mut Self {
        self.statistician = config;
        self
    }

    /// The cross-layer graph's settings.
    pub fn crossgraph_config(&mut self, config: CrossGraphConfig) -> &mut Self {
        self.crossgraph = config;
        self
    }

    /// Reward learning's settings.
    pub fn nac_config(&mut self, config: NacConfig) -> &mut Self {
        self.nac = config;
        self
    }

    /// The promoter's settings.
    pub fn promoter_config(&mut self, config: PromoterConfig) -> &mut Self {
        self.promoter = config;
        self
    }

    /// Procedural memory's settings.
    pub fn cerebellum_config(&mut self, config: CerebellumConfig) -> &mut Self {
        self.cerebellum = config;
        self
    }

    /// The time zone of the temporal bins (default UTC; never the machine's own).
    pub fn time_zone(&mut self, tz: crate::scn::TimeZone) -> &mut Self {
        self.time_zone = tz;
        self
    }

    /// The settings of the hub's error layers ([`MemoryHub::error_traces`]): warnings too or
    /// not, the episodes' trust, the debounce window (the partition is always the hub's).
    pub fn error_traces(&mut self, config: crate::error_traces::ErrorTracesConfig) -> &mut Self {
        self.error_traces = config;
        self
    }

    /// Seeds the layers' id generators (deterministic ids for tests and demos).
    pub fn id_seed(&mut self, seed: u64) -> &mut Self {
        self.id_seed = Some(seed);
        self
    }

    /// A hub in memory only: nothing is written anywhere.
    pub fn build(&self) -> Result<MemoryHub> {
        self.make(None)
    }

    /// Opens (or creates) the partition's memory in the data directory, continuing whatever
    /// it holds; every store is journaled. Refused with [`Error::InUse`] while another hub
    /// has it open.
    pub fn open(&self) -> Result<MemoryHub> {
        let dir = partition_dir(&self.data_dir, &self.partition);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        self.make(Some(dir))
    }

    fn make(&self, dir: Option<PathBuf>) -> Result<MemoryHub> {
        let _s = tracing::info_span!("hub_open", partition = self.partition.as_str()).entered();
        self.config.validate()?;
        maxim_core::Trust::new(self.error_traces.trust)?;
        let lock = match &dir {
            Some(d) => Some(DirLock::acquire(d, "hub").map_err(|e| match e {
                maxim_core::Error::Locked { .. } => Error::InUse { path: d.clone() },
                e => e.into(),
            })?),
            None => None,
        };
        let clock = self.clock.clone().unwrap_or_else(|| SystemClock::shared());
        let seed = |salt: u64| self.id_seed.map(|s| s.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt);
        let sub = |name: &str| dir.as_ref().map(|d| d.join(name));
        let born = match &dir {
            Some(d) => birth::born(d, clock.now())?,
            None => clock.now(),
        };
        // Every layer's traces share the memory's imprint window (`birth`).
        let window = |trace| if self.config.imprint_window { birth::with_window(trace, born) } else { trace };

        let mut h = Hippocampus::builder();
        let mut config = self.hippocampus.clone();
        config.trace = window(config.trace);
        h.config(config).clock(clock.clone()).sync_policy(self.sync_policy);
        if let Some(e) = &self.embedder {
            h.embedder(e.clone());
        }
        if let Some(s) = seed(1) {
            h.id_seed(s);
        }
        let hippocampus = match sub("hippocampus") {
            Some(d) => h.open(d)?,
            None => h.build()?,
        };

        let mut a = Atl::builder();
        let mut config = self.atl.clone();
        config.trace = window(config.trace);
        a.config(config).clock(clock.clone()).sync_policy(self.sync_policy);
        if let Some(e) = &self.embedder {
            a.embedder(e.clone());
        }
        if let Some(s) = seed(2) {
            a.id_seed(s);
        }
        let atl = match sub("atl") {
            Some(d) => a.open(d)?,
            None => a.build()?,
        };

        let mut g = AngularGyrus::builder();
        let mut config = self.angular_gyrus.clone();
        config.trace = window(config.trace);
        g.config(config).clock(clock.clone()).sync_policy(self.sync_policy);
        if let Some(s) = seed(3) {
            g.id_seed(s);
        }
        let angular_gyrus = match sub("angular_gyrus") {
            Some(d) => g.open(d)?,
            None => g.build()?,
        };

        let mut x = CrossLayerGraph::builder();
        x.config(self.crossgraph.clone()).sync_policy(self.sync_policy);
        let graph = match sub("crossgraph") {
            Some(d) => x.open(d)?,
            None => x.build()?,
        };

        let mut n = Nac::builder();
        n.config(self.nac.clone()).clock(clock.clone()).sync_policy(self.sync_policy);
        let nac = match sub("nac") {
            Some(d) => n.open(d)?,
            None => n.build()?,
        };

        let gate = Arc::new(IpsGate::default());
        let mut p = SemanticPromoter::builder();
        p.config(self.promoter.clone()).clock(clock.clone()).gate(gate.clone()).sync_policy(self.sync_policy);
        let promoter = match sub("promoter") {
            Some(d) => p.open(d)?,
            None => p.build()?,
        };

        let mut c = Cerebellum::builder();
        let mut config = self.cerebellum.clone();
        config.rank.trace = window(config.rank.trace);
        c.config(config).clock(clock.clone()).sync_policy(self.sync_policy);
        if let Some(s) = seed(4) {
            c.id_seed(s);
        }
        let skills = match sub("cerebellum") {
            Some(d) => c.open(d)?,
            None => c.build()?,
        };

        let mut t = crate::scn::Scn::builder();
        t.clock(clock.clone()).time_zone(self.time_zone).sync_policy(self.sync_policy);
        let scn = match sub("scn") {
            Some(d) => t.open(d)?,
            None => t.build()?,
        };

        let mut statistician = Statistician::new(self.statistician.clone())?;
        let mut metrics = MetricLog::new(self.config.max_metric_events);
        if let Some(d) = sub("hub") {
            std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
            // The statistician's series are rebuilt from the episodes anyway: a damaged file
            // falls back to its backup, and is kept aside rather than stopping the open.
            statistician.load_with_recovery(d.join(STATISTICIAN_FILE))?;
            metrics = MetricLog::open(&d.join(METRICS_FILE), self.config.max_metric_events)?;
        }

        let mut hub = MemoryHub {
            _lock: lock,
            dir,
            partition: self.partition.clone(),
            clock,
            config: self.config.clone(),
            hippocampus,
            atl,
            angular_gyrus,
            statistician,
            graph,
            nac,
            gate,
            promoter,
            skills,
            scn,
            metrics,
            removed: Arc::default(),
            session: None,
            opened_at: Timestamp::EPOCH,
            born,
            tools_linked: std::collections::HashSet::new(),
            knowledge_index: maxim_core::lexical::LexicalIndex::new(),
            errors: Arc::default(),
            error_config: self.error_traces.clone(),
            open_report: OpenReport::default(),
        };
        hub.opened_at = hub.clock.now();
        hub.wire_callbacks();
        hub.open_report = hub.mend_dangling();
        hub.catch_up_metrics();
        hub.reindex_knowledge();
        tracing::info!(
            episodes = hub.hippocampus.len(),
            concepts = hub.atl.concept_count(),
            edges = hub.graph.edge_count(),
            "memory opened"
        );
        Ok(hub)
    }
}

const STATISTICIAN_FILE: &str = "statistician.snap";
const METRICS_FILE: &str = "metrics.snap";

/// The directory of `partition` under `data_dir`: the name itself when it is plain (ASCII
/// letters, digits, `-`, `_`, not starting with `-`), else `x-` and its bytes in hex, so no
/// name can climb out of the data directory or collide with another.
pub fn partition_dir(data_dir: &Path, partition: &Partition) -> PathBuf {
    let name = partition.as_str();
    let plain = !name.starts_with('-')
        && !name.starts_with("x-")
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        data_dir.join(name)
    } else {
        let mut hex = String::with_capacity(2 * name.len());
        for b in name.bytes() {
            let _ = write!(hex, "{b:02x}");
        }
        data_dir.join(format!("x-{hex}"))
    }
}

/// Records removed by a layer on its own (eviction, sleep), waiting for the hub to cascade.
type Removed = Arc<Mutex<Vec<(LayerKind, RecordId)>>>;

/// One memory for an agent: every layer, wired (see the [module docs](self)).
pub struct MemoryHub {
    /// Held while the hub is open: a second hub on the partition is refused.
    _lock: Option<DirLock>,
    dir: Option<PathBuf>,
    partition: Partition,
    clock: SharedClock,
    config: HubConfig,
    hippocampus: Hippocampus,
    atl: Atl,
    angular_gyrus: AngularGyrus,
    statistician: Statistician,
    graph: CrossLayerGraph,
    nac: Nac,
    gate: Arc<IpsGate>,
    promoter: SemanticPromoter,
    skills: Cerebellum,
    scn: crate::scn::Scn,
    metrics: MetricLog,
    removed: Removed,
    session: Option<Timestamp>,
    opened_at: Timestamp,
    /// When the memory was born (`birth`).
    born: Timestamp,
    /// Tool concepts known to be related IS_A "tool capability".
    tools_linked: std::collections::HashSet<RecordId>,
    /// BM25 over the knowledge records' names and definitions (concepts, mathematical
    /// records, skills), for `recall`.
    knowledge_index: maxim_core::lexical::LexicalIndex<LayerRecord>,
    /// Error episodes queued by the hub's error layers, drained at its boundaries.
    errors: Arc<ErrorQueue>,
    /// The settings of the hub's error layers.
    error_config: crate::error_traces::ErrorTracesConfig,
    /// What opening found and mended.
    open_report: OpenReport,
}

impl std::fmt::Debug for MemoryHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryHub")
            .field("dir", &self.dir)
            .field("partition", &self.partition)
            .field("episodes", &self.hippocampus.len())
            .field("concepts", &self.atl.concept_count())
            .field("math_records", &self.angular_gyrus.len_records())
            .field("cross_edges", &self.graph.edge_count())
            .finish_non_exhaustive()
    }
}

/// Counts across the layers, for a status line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct HubStats {
    /// The partition.
    pub partition: String,
    /// Its directory, when on disk.
    pub dir: Option<PathBuf>,
    /// Episodes held (full and compressed).
    pub episodes: usize,
    /// Concepts held.
    pub concepts: usize,
    /// Records of the mathematical layer (built-ins included).
    pub math_records: usize,
    /// PATTERN records fitted from the agent's own metrics.
    pub patterns: usize,
    /// Skills held.
    pub skills: usize,
    /// Cross-layer edges.
    pub cross_edges: usize,
    /// NAc causal links.
    pub causal_links: usize,
    /// Metric series the hub keeps.
    pub metrics: usize,
    /// Whether a session is open.
    pub session_active: bool,
}

impl MemoryHub {
    /// A builder.
    pub fn builder() -> HubBuilder {
        HubBuilder::default()
    }

    /// The partition this hub holds.
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The partition's directory, when the hub is on disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The hub's clock.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// The hub's settings.
    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    /// The episodic layer (read-only: writes go through the hub so they cascade).
    pub fn hippocampus(&self) -> &Hippocampus {
        &self.hippocampus
    }

    /// The semantic layer.
    pub fn atl(&self) -> &Atl {
        &self.atl
    }

    /// The mathematical layer.
    pub fn angular_gyrus(&self) -> &AngularGyrus {
        &self.angular_gyrus
    }

    /// The statistician.
    pub fn statistician(&self) -> &Statistician {
        &self.statistician
    }

    /// The cross-layer graph.
    pub fn cross_graph(&self) -> &CrossLayerGraph {
        &self.graph
    }

    /// Reward learning.
    pub fn nac(&self) -> &Nac {
        &self.nac
    }

    /// The promoter.
    pub fn promoter(&self) -> &SemanticPromoter {
        &self.promoter
    }

    /// Procedural memory.
    pub fn skills(&self) -> &Cerebellum {
        &self.skills
    }

    /// Procedural memory, to distil runs and record uses (skills hold no cross-layer state
    /// the hub must keep in step, except on deletion: use [`forget`](Self::forget)).
    pub fn skills_mut(&mut self) -> &mut Cerebellum {
        &mut self.skills
    }

    /// The temporal bins (SCN): when things happened, and what recurs at an hour of day.
    pub fn scn(&self) -> &crate::scn::Scn {
        &self.scn
    }

    /// The metric series the hub keeps (tool and goal success over time).
    pub fn metric(&self, name: &str) -> Option<&MetricSeries> {
        self.metrics.get(name)
    }

    /// What opening the memory found and mended: records the cross-layer graph named that
    /// no layer held (see [`OpenReport`]). Empty for a consistent memory.
    pub fn open_report(&self) -> &OpenReport {
        &self.open_report
    }

    /// Counts across the layers.
    pub fn stats(&self) -> HubStats {
        HubStats {
            partition: self.partition.as_str().to_owned(),
            dir: self.dir.clone(),
            episodes: self.hippocampus.len(),
            concepts: self.atl.concept_count(),
            math_records: self.angular_gyrus.len_records(),
            patterns: self.angular_gyrus.patterns().len(),
            skills: self.skills.len(),
            cross_edges: self.graph.edge_count(),
            causal_links: self.nac.links().len(),
            metrics: self.metrics.len(),
            session_active: self.session.is_some(),
        }
    }

    /// The layer holding `id`, if any.
    pub fn layer_of(&self, id: RecordId) -> Option<LayerKind> {
        if self.hippocampus.contains(id) {
            Some(LayerKind::Hippocampus)
        } else if self.atl.record(id).is_some() {
            Some(LayerKind::Atl)
        } else if self.angular_gyrus.record(id).is_some() {
            Some(LayerKind::AngularGyrus)
        } else if self.skills.skill(id).is_some() {
            Some(LayerKind::Cerebellum)
        } else {
            None
        }
    }

    /// Registers the deletion callbacks that tell the hub what a layer removed on its own.
    fn wire_callbacks(&mut self) {
        let callback = |layer: LayerKind, removed: &Removed| -> maxim_core::layer::DeleteCallback {
            let removed = removed.clone();
            Box::new(move |id| {
                removed.lock().unwrap_or_else(PoisonError::into_inner).push((layer, id));
                Ok(())
            })
        };
        MemoryLayer::on_delete(&mut self.hippocampus, callback(LayerKind::Hippocampus, &self.removed));
        MemoryLayer::on_delete(&mut self.atl, callback(LayerKind::Atl, &self.removed));
        MemoryLayer::on_delete(&mut self.angular_gyrus, callback(LayerKind::AngularGyrus, &self.removed));
        MemoryLayer::on_delete(&mut self.skills, callback(LayerKind::Cerebellum, &self.removed));
    }

    /// Takes the records the layers removed since the last call.
    fn take_removed(&self) -> Vec<(LayerKind, RecordId)> {
        std::mem::take(&mut *self.removed.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
