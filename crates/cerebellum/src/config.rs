//! [`CerebellumConfig`], the store's settings, and [`CerebellumBuilder`], which assembles a
//! [`Cerebellum`] in memory or opens one on a directory.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use maxim_core::graph::ActivationParams;
use maxim_core::journal::SyncPolicy;
use maxim_core::layer::Callbacks;
use maxim_core::rank::RankConfig;
use maxim_core::{IdGenerator, SharedClock, SystemClock, check_unit, days};

use crate::error::{Error, Result};
use crate::skill::MAX_WINDOW;
use crate::state::State;
use crate::store::{Cerebellum, LAYER_NAME};

/// Settings of a [`Cerebellum`]. Set fields by assignment on [`Default::default`];
/// [`validate`](Self::validate) checks them (the builder does).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CerebellumConfig {
    /// A run trusted less than this yields no skill (default 0.2: a web page's 0.3 still
    /// yields one, to be listed and never authorised).
    pub distil_min_trust: f64,
    /// A skill trusted less than this is never executed, only listed (default 0.5, the
    /// seed's `min_trust`). 0 switches the trust gate off (the lab's unsafe arm).
    pub authorise_min_trust: f64,
    /// Whether a skill with a write step needs a human's [`confirm`](Cerebellum::confirm)
    /// before it becomes active (default true; false is the lab's unsafe arm).
    pub require_confirmation: bool,
    /// Successes after which a candidate is promoted (default 3; at least 1).
    pub promote_after: u32,
    /// How many of the latest uses the retirement rule looks at (default 10; 1 to 32).
    pub retire_window: u32,
    /// Uses the window must hold before the rule may retire (default 5; 1 to `retire_window`).
    pub retire_min_uses: u32,
    /// A skill whose success rate over the window falls below this is retired (default 0.5).
    pub retire_below: f64,
    /// Ranking of [`candidates`](Cerebellum::candidates) (the core's defaults; its
    /// `min_trust` is not used to drop anything: low-trust plans are listed).
    pub rank: RankConfig,
    /// Most skills a new skill is associated with through shared tools (default 5).
    pub association_limit: usize,
    /// Least Jaccard similarity of two skills' tool sets for an association (default 0.5).
    pub association_threshold: f64,
    /// How many of the latest skills using each tool an insert compares (default 64), which
    /// bounds the cost of an insert.
    pub association_scan: usize,
    /// Spreading activation of [`recall_associated`](maxim_core::MemoryLayer::recall_associated).
    pub activation: ActivationParams,
    /// Consolidation forgets an unpromoted skill whose memory score (trust × recency × uses)
    /// has fallen below this (default 0.05: a never-used skill of trust 0.8 after about four
    /// months).
    pub forget_below: f64,
    /// Consolidation removes a retired skill this long after its retirement (default 90
    /// days); until then it stays for inspection.
    pub retired_retention: Duration,
}

impl Default for CerebellumConfig {
    fn default() -> Self {
        Self {
            distil_min_trust: 0.2,
            authorise_min_trust: 0.5,
            require_confirmation: true,
            promote_after: 3,
            retire_window: 10,
            retire_min_uses: 5,
            retire_below: 0.5,
            rank: RankConfig::default(),
            association_limit: 5,
            association_threshold: 0.5,
            association_scan: 64,
            activation: ActivationParams::DEFAULT,
            forget_below: 0.05,
            retired_retention: days(90),
        }
    }
}

impl CerebellumConfig {
    /// Checks the settings: trusts, thresholds and rates in `[0, 1]`, `promote_after` at
    /// least 1, a window of 1 to 32 uses with `retire_min_uses` in `1..=retire_window`, a
    /// valid ranking.
    pub fn validate(&self) -> Result<()> {
        check_unit("distil_min_trust", self.distil_min_trust)?;
        check_unit("authorise_min_trust", self.authorise_min_trust)?;
        check_unit("retire_below", self.retire_below)?;
        check_unit("association_threshold", self.association_threshold)?;
        check_unit("forget_below", self.forget_below)?;
        if self.promote_after == 0 {
            return Err(Error::invalid("promote_after", "must be at least 1"));
        }
        if self.retire_window == 0 || self.retire_window > MAX_WINDOW {
            return Err(Error::invalid("retire_window", format!("must be 1 to {MAX_WINDOW}")));
        }
        if self.retire_min_uses == 0 || self.retire_min_uses > self.retire_window {
            return Err(Error::invalid("retire_min_uses", "must be 1 to retire_window"));
        }
        self.rank.validate()?;
        Ok(())
    }
}

/// Assembles a [`Cerebellum`].
///
/// ```
/// use cerebellum::{Cerebellum, CerebellumConfig};
/// let mut config = CerebellumConfig::default();
/// config.promote_after = 5;
/// let cb = Cerebellum::builder().config(config).id_seed(7).build()?;
/// assert_eq!(cb.config().promote_after, 5);
/// let mut bad = CerebellumConfig::default();
/// bad.retire_window = 0;
/// assert!(Cerebellum::builder().config(bad).build().is_err());
/// # Ok::<(), cerebellum::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct CerebellumBuilder {
    config: CerebellumConfig,
    clock: Option<SharedClock>,
    id_seed: Option<u64>,
    sync_policy: SyncPolicy,
}

impl CerebellumBuilder {
    /// The settings (default [`CerebellumConfig::default`]).
    pub fn config(&mut self, config: CerebellumConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// Seeds the id generator, for deterministic ids (default: entropy).
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

    /// The store, empty, in memory. Errors: invalid settings.
    pub fn build(&self) -> Result<Cerebellum> {
        self.config.validate()?;
        Ok(Cerebellum {
            config: self.config.clone(),
            clock: self.clock.clone().unwrap_or_else(SystemClock::shared),
            ids: self.id_seed.map_or_else(IdGenerator::from_entropy, IdGenerator::seeded),
            state: State::default(),
            callbacks: Callbacks::new(LAYER_NAME),
            queries: AtomicU64::new(0),
            claims: maxim_core::ownership::FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
        })
    }

    /// The store opened on the directory `dir` (created if missing): the snapshot
    /// `cerebellum.snap` (or its backup) loaded and the journal replayed, every later write
    /// journaled before it returns (see [`Cerebellum::checkpoint`]). Errors: the settings,
    /// another open store holding the directory ([`maxim_core::Error::Locked`]), or damage
    /// that the snapshot's backup does not cover.
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<Cerebellum> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }
}

impl std::fmt::Debug for CerebellumBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CerebellumBuilder")
            .field("config", &self.config)
            .field("id_seed", &self.id_seed)
            .field("sync_policy", &self.sync_policy)
            .finish_non_exhaustive()
    }
}
