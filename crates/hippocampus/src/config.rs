//! [`HippocampusConfig`]: the layer's settings, with the original's defaults
//! (`spec/maxim-reference.md` §3.1), and [`HippocampusBuilder`], which assembles a layer
//! from them, a clock, an optional embedder and an id seed.
//!
//! ```
//! use hippocampus::{HippocampusConfig, StrategyKind};
//! let mut config = HippocampusConfig::default();
//! config.max_nodes = 20_000;
//! assert_eq!(config.association_limit, 5);
//! assert_eq!(config.memory_strategy, StrategyKind::AccessBased);
//! assert!(config.validate().is_ok());
//! config.association_threshold = f64::NAN;
//! assert!(config.validate().is_err());
//! ```

use std::time::Duration;

use std::sync::Arc;

use maxim_core::embed::Embedder;
use maxim_core::graph::ActivationParams;
use maxim_core::journal::SyncPolicy;
use maxim_core::trace::TraceParams;
use maxim_core::{IdGenerator, SharedClock, Source, SystemClock, check_non_negative, check_unit, days};

use crate::index::IndexedKeys;
use crate::store::Hippocampus;

/// Which retention strategy sleep and eviction use (§3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StrategyKind {
    /// Recency of access, access count and centrality (the default).
    #[default]
    AccessBased,
    /// Age, success, novelty and user input.
    ImportanceBased,
    /// Access-based 0.6 and importance-based 0.4.
    Composite,
}

/// The layer's settings; see the [module docs](self). Every field is public: start from
/// [`HippocampusConfig::default`], assign the fields to change, and check with
/// [`validate`](Self::validate) (the layer's builder does). New fields may be added in a
/// minor release, so the struct cannot be built with a literal outside this crate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HippocampusConfig {
    /// Most records held (default 10,000). A capture that finds the store full first evicts
    /// the [`eviction_fraction`](Self::eviction_fraction) of it with the lowest retention
    /// scores, never a long-term record (see eviction in `docs/hippocampus.md`).
    pub max_nodes: usize,
    /// The share of `max_nodes` one eviction removes, rounded up, at least one record
    /// (default 0.01: 100 of 10,000). 0 evicts one record at a time, as the original did, at
    /// the cost of scoring every record on every capture at capacity.
    pub eviction_fraction: f64,
    /// Most state snapshots held (default 1,000).
    pub state_store_max_entries: usize,
    /// Which kinds of key the context index holds (default all six).
    pub indexed_keys: IndexedKeys,
    /// Whether sleep does anything (default true).
    pub enable_sleep_consolidation: bool,
    /// Access-based retention: time without access after which recency is 0 (default 7 days).
    pub max_age_without_access: Duration,
    /// Access-based retention: age before which an episode is never compressed (default 1 day).
    pub compression_age: Duration,
    /// Score below which sleep removes a record (default 0.3).
    pub retention_threshold: f64,
    /// Score below which sleep compresses a full record that may be compressed (default 0.6).
    pub compression_threshold: f64,
    /// The retention strategy (default access-based).
    pub memory_strategy: StrategyKind,
    /// Whether sleep first promotes queued candidates to long-term (default true).
    pub consolidate_during_sleep: bool,
    /// Length of the consolidation-candidate queue; the oldest rotates out (default 500).
    pub max_consolidation_candidates: usize,
    /// Most promotions per consolidation (default 100).
    pub max_promotions: usize,
    /// Salience at or above which a capture is long-term at once (default 0.95).
    pub immediate_promotion_salience: f64,
    /// Novelty at or above which a capture is long-term at once (default 0.95).
    pub immediate_promotion_novelty: f64,
    /// Factor on a long-term record's retention score, capped at 1 (default 2.0).
    pub long_term_retention_boost: f64,
    /// Whether captures form associations (default true).
    pub enable_associative_graph: bool,
    /// Most associations a capture forms (default 5).
    pub association_limit: usize,
    /// Normalised overlap at or above which a candidate is associated (default 0.5).
    pub association_threshold: f64,
    /// Spreading activation for `recall_associated` (default decay 0.5, threshold 0.05,
    /// max depth 3).
    pub spreading_activation: ActivationParams,
    /// Where captured episodes come from, unless the capture says otherwise (default
    /// [`Source::Episodic`]).
    pub default_source: Source,
    /// Their trust, unless the capture says otherwise (default: the source's default trust).
    pub default_trust: Option<f64>,
    /// How the episodes' traces decay and reinforce: the tick and the agent's imprint window
    /// (default [`TraceParams::default`]: 60-second ticks, no imprint window). Reads that
    /// count as use (`get`, `touch`, `recall_touching`) reinforce with it.
    pub trace: TraceParams,
    /// Sleep also follows each trace's storage tier (default on; see [`crate::sleep`]): a hot
    /// trace is never removed, a cold one is compressed when the strategy allows it, and an
    /// erased one of low retention score is removed. Off: the strategy's thresholds alone.
    pub trace_tiers: bool,
}

impl Default for HippocampusConfig {
    fn default() -> Self {
        Self {
            max_nodes: 10_000,
            eviction_fraction: 0.01,
            state_store_max_entries: 1_000,
            indexed_keys: IndexedKeys::default(),
            enable_sleep_consolidation: true,
            max_age_without_access: days(7),
            compression_age: days(1),
            retention_threshold: 0.3,
            compression_threshold: 0.6,
            memory_strategy: StrategyKind::AccessBased,
            consolidate_during_sleep: true,
            max_consolidation_candidates: 500,
            max_promotions: 100,
            immediate_promotion_salience: 0.95,
            immediate_promotion_novelty: 0.95,
            long_term_retention_boost: 2.0,
            enable_associative_graph: true,
            association_limit: 5,
            association_threshold: 0.5,
            spreading_activation: ActivationParams::new(0.5, 0.05, 3)
                .expect("the reference parameters are valid"),
            default_source: Source::Episodic,
            default_trust: None,
            trace: TraceParams::default(),
            trace_tiers: true,
        }
    }
}

impl HippocampusConfig {
    /// Checks the settings: capacities at least 1, the eviction fraction, thresholds and
    /// promotion levels in `[0, 1]`, the boost finite and not negative, ages at least a microsecond, and a
    /// default trust (when given) in `[0, 1]`.
    pub fn validate(&self) -> crate::Result<()> {
        let at_least_one = |field: &'static str, v: usize| {
            if v == 0 { Err(maxim_core::Error::invalid(field, "must be at least 1")) } else { Ok(()) }
        };
        at_least_one("max_nodes", self.max_nodes)?;
        at_least_one("state_store_max_entries", self.state_store_max_entries)?;
        check_unit("eviction_fraction", self.eviction_fraction)?;
        check_unit("retention_threshold", self.retention_threshold)?;
        check_unit("compression_threshold", self.compression_threshold)?;
        check_unit("immediate_promotion_salience", self.immediate_promotion_salience)?;
        check_unit("immediate_promotion_novelty", self.immediate_promotion_novelty)?;
        check_unit("association_threshold", self.association_threshold)?;
        check_non_negative("long_term_retention_boost", self.long_term_retention_boost)?;
        if let Some(t) = self.default_trust {
            check_unit("default_trust", t)?;
        }
        for (field, d) in [
            ("max_age_without_access", self.max_age_without_access),
            ("compression_age", self.compression_age),
        ] {
            if d.as_micros() == 0 {
                return Err(maxim_core::Error::invalid(field, "must be at least one microsecond").into());
            }
        }
        Ok(())
    }

    /// How many records one eviction removes: `eviction_fraction` of `max_nodes`, rounded
    /// up, at least one.
    pub(crate) fn eviction_batch(&self) -> usize {
        ((self.eviction_fraction * self.max_nodes as f64).ceil() as usize).max(1)
    }

    /// The trust of a capture that names none.
    pub(crate) fn trust_for(&self, source: &Source) -> f64 {
        self.default_trust.unwrap_or_else(|| source.default_trust().get())
    }
}

/// Assembles a [`Hippocampus`]: settings, clock, embedder and id seed, each with a default.
///
/// ```
/// use std::sync::Arc;
/// use hippocampus::{Hippocampus, HippocampusConfig};
/// use maxim_core::embed::HashEmbedder;
/// use maxim_core::{ManualClock, Timestamp};
/// let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
/// let mut config = HippocampusConfig::default();
/// config.max_nodes = 100;
/// let hippo = Hippocampus::builder()
///     .config(config)
///     .clock(clock.shared())
///     .embedder(Arc::new(HashEmbedder::with_dim(64)?))
///     .id_seed(7)
///     .build()?;
/// assert_eq!(hippo.config().max_nodes, 100);
/// assert!(hippo.embedder().is_some());
/// # Ok::<(), hippocampus::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct HippocampusBuilder {
    config: HippocampusConfig,
    clock: Option<SharedClock>,
    embedder: Option<Arc<dyn Embedder>>,
    id_seed: Option<u64>,
    sync_policy: SyncPolicy,
}

impl std::fmt::Debug for HippocampusBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HippocampusBuilder")
            .field("config", &self.config)
            .field("embedder", &self.embedder.as_ref().map(|e| e.name().to_owned()))
            .field("id_seed", &self.id_seed)
            .finish_non_exhaustive()
    }
}

impl HippocampusBuilder {
    /// The settings (default [`HippocampusConfig::default`]).
    pub fn config(&mut self, config: HippocampusConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// The embedder of text similarity ([`recall_similar_text`](Hippocampus::recall_similar_text));
    /// none by default, because each episode then carries a vector (512 bytes at the default
    /// 128 dimensions) and each capture embeds its text: with the default `HashEmbedder` a
    /// workload episode costs about 0.6 KB more resident and a capture about a microsecond
    /// more, and `recall_similar_text` scans every vector (about 0.3 ms at 10^4 episodes).
    /// Vectors are not saved: a load embeds the records again.
    pub fn embedder(&mut self, embedder: Arc<dyn Embedder>) -> &mut Self {
        self.embedder = Some(embedder);
        self
    }

    /// Seeds the id generator, for reproducible ids (default: seeded from entropy).
    pub fn id_seed(&mut self, seed: u64) -> &mut Self {
        self.id_seed = Some(seed);
        self
    }

    /// When [`open`](Self::open) makes journaled writes durable (default
    /// [`SyncPolicy::default`]: group commit once a second).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The layer opened on the directory `dir` (created if missing): the snapshot
    /// `hippocampus.snap` (or its backup) loaded and the journal replayed, every later write
    /// journaled before it returns. Errors: the settings, another open layer holding the
    /// directory ([`maxim_core::Error::Locked`]), or damage that the snapshot's backup does
    /// not cover. See [`crate::journal`].
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> crate::Result<Hippocampus> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }

    /// The layer in memory, once the settings are checked.
    pub fn build(&self) -> crate::Result<Hippocampus> {
        Hippocampus::from_parts(
            self.config.clone(),
            self.clock.clone().unwrap_or_else(SystemClock::shared),
            self.id_seed.map_or_else(IdGenerator::from_entropy, IdGenerator::seeded),
            self.embedder.clone(),
        )
    }
}
