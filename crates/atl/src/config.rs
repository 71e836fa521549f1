//! [`AtlConfig`], the semantic layer's settings with the original's defaults, and
//! [`AtlBuilder`], which assembles an [`Atl`] from them, a clock, an embedder and an id seed.

use std::sync::Arc;
use std::time::Duration;

use maxim_core::embed::{Embedder, HashEmbedder};
use maxim_core::graph::ActivationParams;
use maxim_core::journal::SyncPolicy;
use maxim_core::trace::TraceParams;
use maxim_core::{IdGenerator, SharedClock, SystemClock, check_unit, days};

use crate::concept::MAX_REFS_PER_LAYER;
use crate::error::{Error, Result};
use crate::store::Atl;

/// Settings of an [`Atl`]; the defaults are the original's (§4.5, §4.6, §1.2). Start from
/// [`AtlConfig::default`] and assign the fields to change; new fields may be added in a minor
/// release, so the struct cannot be built with a literal outside this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AtlConfig {
    /// Most concepts held; storing one more evicts the lowest-ranked (default 10,000; see
    /// [Eviction at capacity](crate::consolidate#eviction-at-capacity)).
    pub max_concepts: usize,
    /// Names scoring at least this by [`name_similarity`](crate::names::name_similarity)
    /// denote the same concept, in `(0, 1]` (default 0.8; 1.0 merges only equal word sets).
    pub name_similarity_threshold: f64,
    /// Consolidation removes concepts scoring below this (default 0.2).
    pub retention_threshold: f64,
    /// Consolidation compresses concepts scoring below this (default 0.4).
    pub compression_threshold: f64,
    /// After this long without access, recency counts nothing (default 30 days).
    pub max_age_without_access: Duration,
    /// Concepts younger than this are never compressed (default 7 days).
    pub compression_age: Duration,
    /// Spreading activation of [`recall_associated`](maxim_core::MemoryLayer::recall_associated)
    /// (default decay 0.5, threshold 0.1, depth 3).
    pub activation: ActivationParams,
    /// Cap of each concept's references per layer (default 200).
    pub max_refs_per_layer: usize,
    /// How concepts' traces decay and reinforce: the tick and the agent's imprint window
    /// (default [`TraceParams::default`]: 60-second ticks, no imprint window). Reads that
    /// count as use (`get`, `touch`, `recall_associated_touching`) and confirmations
    /// reinforce with it.
    pub trace: TraceParams,
}

impl Default for AtlConfig {
    fn default() -> Self {
        Self {
            max_concepts: 10_000,
            name_similarity_threshold: 0.8,
            retention_threshold: 0.2,
            compression_threshold: 0.4,
            max_age_without_access: days(30),
            compression_age: days(7),
            activation: ActivationParams::DEFAULT,
            max_refs_per_layer: MAX_REFS_PER_LAYER,
            trace: TraceParams::default(),
        }
    }
}

impl AtlConfig {
    /// Checks the settings: at least one concept, thresholds in range with retention at most
    /// compression, a non-zero maximum age, at least one reference per layer.
    pub fn validate(&self) -> Result<()> {
        if self.max_concepts == 0 {
            return Err(Error::out_of_range("max_concepts", 0.0, "at least 1"));
        }
        let t = self.name_similarity_threshold;
        if !(t > 0.0 && t <= 1.0) {
            return Err(Error::out_of_range("name_similarity_threshold", t, "a number in (0, 1]"));
        }
        check_unit("retention_threshold", self.retention_threshold)?;
        check_unit("compression_threshold", self.compression_threshold)?;
        if self.retention_threshold > self.compression_threshold {
            return Err(Error::out_of_range(
                "retention_threshold",
                self.retention_threshold,
                "at most compression_threshold",
            ));
        }
        if self.max_age_without_access.is_zero() {
            return Err(Error::out_of_range("max_age_without_access", 0.0, "longer than zero"));
        }
        if self.max_refs_per_layer == 0 {
            return Err(Error::out_of_range("max_refs_per_layer", 0.0, "at least 1"));
        }
        Ok(())
    }
}

/// Assembles an [`Atl`].
///
/// ```
/// use std::sync::Arc;
/// use atl::{Atl, AtlConfig};
/// use maxim_core::embed::HashEmbedder;
/// let mut config = AtlConfig::default();
/// config.max_concepts = 100;
/// let atl = Atl::builder()
///     .config(config)
///     .embedder(Arc::new(HashEmbedder::with_dim(64)?))
///     .id_seed(7)
///     .build()?;
/// assert_eq!(atl.config().max_concepts, 100);
/// assert_eq!(atl.embedder().dim(), 64);
/// # Ok::<(), atl::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct AtlBuilder {
    config: AtlConfig,
    clock: Option<SharedClock>,
    embedder: Option<Arc<dyn Embedder>>,
    id_seed: Option<u64>,
    sync_policy: SyncPolicy,
}

impl std::fmt::Debug for AtlBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtlBuilder")
            .field("config", &self.config)
            .field("embedder", &self.embedder.as_ref().map(|e| e.name().to_owned()))
            .field("id_seed", &self.id_seed)
            .field("sync_policy", &self.sync_policy)
            .finish_non_exhaustive()
    }
}

impl AtlBuilder {
    /// The settings (default [`AtlConfig::default`]).
    pub fn config(&mut self, config: AtlConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// The embedder of [`recall_similar`](Atl::recall_similar) (default [`HashEmbedder`]).
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
    /// [`SyncPolicy::Interval`] of one second; see [`maxim_core::journal`]).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The layer opened on directory `dir` (created if missing): `atl.snap` (or its backup)
    /// loaded and the journal replayed, every later write journaled before it returns.
    /// Errors: the settings, another open layer holding the directory
    /// ([`maxim_core::Error::Locked`]), a snapshot or journal that cannot be read, or damage
    /// the journal's recovery does not cover. See [`crate::journal`].
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<Atl> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }

    /// The layer, in memory, once the settings are checked.
    pub fn build(&self) -> Result<Atl> {
        Atl::from_parts(
            self.config.clone(),
            self.clock.clone().unwrap_or_else(SystemClock::shared),
            self.id_seed.map_or_else(IdGenerator::from_entropy, IdGenerator::seeded),
            self.embedder.clone().unwrap_or_else(|| Arc::new(HashEmbedder::default())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked() {
        let bad = [
            AtlConfig { max_concepts: 0, ..AtlConfig::default() },
            AtlConfig { name_similarity_threshold: f64::NAN, ..AtlConfig::default() },
            AtlConfig { name_similarity_threshold: 0.0, ..AtlConfig::default() },
            AtlConfig { retention_threshold: 0.5, compression_threshold: 0.4, ..AtlConfig::default() },
            AtlConfig { compression_threshold: 1.5, ..AtlConfig::default() },
            AtlConfig { max_age_without_access: Duration::ZERO, ..AtlConfig::default() },
            AtlConfig { max_refs_per_layer: 0, ..AtlConfig::default() },
        ];
        for config in bad {
            assert!(Atl::builder().config(config.clone()).build().is_err(), "{config:?}");
        }
    }
}
