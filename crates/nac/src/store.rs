//! [`Nac`]: the store of causal links, how it learns from observations and outcomes, and
//! how it predicts (`spec/maxim-reference.md` §8.2, §8.3).
//!
//! Links live in one flat vector; an open-addressed table from [`LinkId`] (the hash of the
//! link's key) to its position and check hash finds a link in one slot, one cache line, and a second map from the event signature's
//! hash lists the links of one event for prediction. An observation of a known link
//! allocates nothing once the link's bounded histories are full.
//!
//! Every mutation first checks everything, then builds an [`Op`] (a serialisable value with
//! its time and link ids resolved) and hands it to one `apply` function that cannot fail:
//! what a journal would append and replay.
//!
//! ```
//! use maxim_core::value::{Map, Value};
//! use maxim_core::{ManualClock, Timestamp};
//! use nac::{Nac, Observation, Valence};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut nac = Nac::builder().clock(clock.shared()).build()?;
//! let mug: Map = [("object", Value::from("mug"))].into_iter().collect();
//! for _ in 0..4 {
//!     nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "tool:grasp:positive", Valence::Positive)
//!         .delay(1.5)
//!         .context(&mug))?;
//! }
//! let link = nac.links().first().unwrap();
//! assert!((link.predicted_value() - (1.0 - 0.5 * 0.86f64.powi(4))).abs() < 1e-12); // 0.7265
//! assert!((link.confidence() - 0.7).abs() < 1e-12);
//! let p = nac.predict("tool", "tool:grasp", &mug).unwrap();
//! assert_eq!(p.valence, Valence::Positive);
//! assert_eq!(p.delay.unwrap().mean, 1.5);
//! # Ok::<(), nac::Error>(())
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use maxim_core::journal::{StoreDir, SyncPolicy};
use maxim_core::ownership::FileClaims;
use maxim_core::value::Map;
use maxim_core::{RecordId, SharedClock, SystemClock, Timestamp};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::config::NacConfig;
use crate::context::{check_context, check_name, context_similarity, same_context, text_hash};
use crate::error::{Error, Result};
use crate::keys::KeyTable;
use crate::link::{Bounds, CausalLink, LinkId, Valence};

/// The id of an event recorded with [`Nac::record_event`] and waiting for its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct EventId(u64);

impl EventId {
    /// The id with number `n`.
    pub const fn new(n: u64) -> Self {
        Self(n)
    }

    /// The id's number (ids are handed out 1, 2, 3, ... by one store).
    pub const fn index(self) -> u64 {
        self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event-{}", self.0)
    }
}

/// Fewest characters a keyword of [`Nac::search_links`] needs.
pub const MIN_KEYWORD_CHARS: usize = 3;

/// An empty context, for observations without one.
static NO_CONTEXT: Map = Map::new();

/// One observation of an event followed by an outcome, for [`Nac::observe`].
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The event's type (`tool`, `user_input`, `temporal`, `state_change`, ...).
    pub event_type: &'a str,
    /// The event's signature (`tool:grasp`): part of the link's key.
    pub event_signature: &'a str,
    /// The outcome's type (`tool_result`, ...).
    pub outcome_type: &'a str,
    /// The outcome's signature (`tool:grasp:positive`): part of the link's key.
    pub outcome_signature: &'a str,
    /// How good the outcome was.
    pub valence: Valence,
    /// Seconds from event to outcome (finite, not negative).
    pub delay_secs: f64,
    /// The event's context: part of the link's key.
    pub context: &'a Map,
    /// The episode that recorded it, if any.
    pub memory_id: Option<RecordId>,
}

impl<'a> Observation<'a> {
    /// An observation with no delay, an empty context and no episode.
    pub fn new(
        event_type: &'a str,
        event_signature: &'a str,
        outcome_type: &'a str,
        outcome_signature: &'a str,
        valence: Valence,
    ) -> Self {
        Self {
            event_type,
            event_signature,
            outcome_type,
            outcome_signature,
            valence,
            delay_secs: 0.0,
            context: &NO_CONTEXT,
            memory_id: None,
        }
    }

    /// With this delay in seconds.
    pub fn delay(mut self, secs: f64) -> Self {
        self.delay_secs = secs;
        self
    }

    /// With this context.
    pub fn context(mut self, context: &'a Map) -> Self {
        self.context = context;
        self
    }

    /// With this episode.
    pub fn memory(mut self, id: RecordId) -> Self {
        self.memory_id = Some(id);
        self
    }
}

/// What one observation did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    /// The link that learned from it.
    pub link: LinkId,
    /// Whether the link was created by it.
    pub created: bool,
    /// The prediction error `R − V` before the update.
    pub prediction_error: f64,
    /// The link evicted to make room, if the store was full.
    pub evicted: Option<LinkId>,
}

/// An event waiting for its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingEvent {
    /// Its id.
    pub id: EventId,
    /// When it was recorded.
    pub at: Timestamp,
    /// The event's type.
    pub event_type: String,
    /// The event's signature.
    pub signature: String,
    /// The context it happened in.
    pub context: Map,
    /// The episode that recorded it, if any.
    pub memory_id: Option<RecordId>,
}

/// Which pending events an outcome belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribution<'a> {
    /// The event with this id.
    Event(EventId),
    /// Every pending event with this signature.
    Signature(&'a str),
    /// Every pending event whose context is similar enough to the outcome's
    /// ([`NacConfig::attribution_similarity`]).
    Context,
}

/// An outcome, for [`Nac::record_outcome`].
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    /// The outcome's type (`tool_result`, ...).
    pub outcome_type: &'a str,
    /// Which pending events caused it.
    pub attribution: Attribution<'a>,
    /// The outcome's signature; `None` gives `"<event signature>:<valence>"` for each
    /// linked event (`tool:grasp:positive`), as the original does.
    pub outcome_signature: Option<&'a str>,
    /// How good it was.
    pub valence: Valence,
    /// The outcome's context (compared with the events' contexts under
    /// [`Attribution::Context`]).
    pub context: &'a Map,
    /// The episode that recorded it; when `None`, each link gets its event's episode.
    pub memory_id: Option<RecordId>,
}

impl<'a> Outcome<'a> {
    /// An outcome of the pending events with `signature`, with the default outcome
    /// signature, no context and no episode.
    pub fn of_signature(outcome_type: &'a str, signature: &'a str, valence: Valence) -> Self {
        Self {
            outcome_type,
            attribution: Attribution::Signature(signature),
            outcome_signature: None,
            valence,
            context: &NO_CONTEXT,
            memory_id: None,
        }
    }

    /// An outcome of the pending event `id`, otherwise as [`of_signature`](Self::of_signature).
    pub fn of_event(outcome_type: &'a str, id: EventId, valence: Valence) -> Self {
        Self { attribution: Attribution::Event(id), ..Self::of_signature(outcome_type, "", valence) }
    }
}

/// What [`Nac::record_outcome`] did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutcomeReport {
    /// One entry per pending event linked to the outcome (each event is linked once and
    /// then leaves the pending list).
    pub linked: Vec<(EventId, Observed)>,
    /// Pending events dropped because they were older than twice the temporal window.
    pub expired: usize,
}

/// The delays a prediction expects, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayEstimate {
    /// Mean of the link's kept delays.
    pub mean: f64,
    /// Lower bound of the central 80 % (10th percentile, linear interpolation).
    pub lower: f64,
    /// Upper bound of the central 80 % (90th percentile).
    pub upper: f64,
}

/// What [`Nac::predict`] expects an event to lead to.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The expected outcome's type and signature (`None` for a prediction from a prior).
    pub outcome: Option<(String, String)>,
    /// The expected outcome's valence.
    pub valence: Valence,
    /// The learned value V of the best link (or the prior's value).
    pub value: f64,
    /// The best link's score `confidence × (0.5 + 0.5 × context similarity)` (or the prior's
    /// confidence).
    pub confidence: f64,
    /// The expected delay (`None` for a prior).
    pub delay: Option<DelayEstimate>,
    /// The links that scored, best first, at most five (empty for a prior).
    pub links: Vec<LinkId>,
}

/// A prior belief about an event, used when no link predicts it ([`Nac::set_prior`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prior {
    /// Expected value in `[0, 1]`.
    pub value: f64,
    /// Confidence in `[0, 1]`.
    pub confidence: f64,
}

/// The store's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NacStats {
    /// Links held.
    pub links: usize,
    /// Events waiting for an outcome.
    pub pending_events: usize,
    /// Priors held.
    pub priors: usize,
    /// Observations learned from, in all (direct and through outcomes).
    pub total_observations: u64,
    /// Links created.
    pub links_created: u64,
    /// Links evicted at capacity.
    pub evictions: u64,
    /// Links removed on request.
    pub links_removed: u64,
    /// Events recorded.
    pub events_recorded: u64,
    /// Outcomes recorded.
    pub outcomes_recorded: u64,
    /// Pending events linked to an outcome.
    pub events_linked: u64,
    /// Pending events dropped unlinked (too old, or over the pending bound).
    pub events_dropped: u64,
}

/// The counters kept across saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Counters {
    pub(crate) total_observations: u64,
    pub(crate) links_created: u64,
    pub(crate) evictions: u64,
    pub(crate) links_removed: u64,
    pub(crate) events_recorded: u64,
    pub(crate) outcomes_recorded: u64,
    pub(crate) events_linked: u64,
    pub(crate) events_dropped: u64,
}

/// A direct observation, resolved: its link id is chosen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ObserveOp<'a> {
    pub(crate) link: LinkId,
    pub(crate) check: u64,
    pub(crate) event_type: Cow<'a, str>,
    pub(crate) event_signature: Cow<'a, str>,
    pub(crate) outcome_type: Cow<'a, str>,
    pub(crate) outcome_signature: Cow<'a, str>,
    pub(crate) valence: Valence,
    pub(crate) delay_secs: f64,
    pub(crate) context: Cow<'a, Map>,
    pub(crate) memory_id: Option<RecordId>,
}

/// One mutation of the store, with its time and ids resolved: what a journal appends and
/// replays. Applying an op cannot fail.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Op<'a> {
    Observe {
        at: Timestamp,
        obs: ObserveOp<'a>,
    },
    RecordEvent {
        at: Timestamp,
        event: Cow<'a, PendingEvent>,
    },
    RecordOutcome {
        at: Timestamp,
        /// The events linked, in pending order, each with the observation it makes.
        links: Vec<(EventId, ObserveOp<'a>)>,
    },
    DecayAll {
        factor: f64,
    },
    RemoveMemory {
        id: RecordId,
    },
    RemoveLink {
        id: LinkId,
    },
    SetPrior {
        key: Cow<'a, str>,
        prior: Prior,
    },
}

impl ObserveOp<'_> {
    fn to_static(&self) -> ObserveOp<'static> {
        ObserveOp {
            link: self.link,
            check: self.check,
            event_type: Cow::Owned(self.event_type.clone().into_owned()),
            event_signature: Cow::Owned(self.event_signature.clone().into_owned()),
            outcome_type: Cow::Owned(self.outcome_type.clone().into_owned()),
            outcome_signature: Cow::Owned(self.outcome_signature.clone().into_owned()),
            valence: self.valence,
            delay_secs: self.delay_secs,
            context: Cow::Owned(self.context.clone().into_owned()),
            memory_id: self.memory_id,
        }
    }
}

impl Op<'_> {
    /// The op owning all its data, for the journal.
    pub(crate) fn to_static(&self) -> Op<'static> {
        match self {
            Op::Observe { at, obs } => Op::Observe { at: *at, obs: obs.to_static() },
            Op::RecordEvent { at, event } => {
                Op::RecordEvent { at: *at, event: Cow::Owned(event.clone().into_owned()) }
            }
            Op::RecordOutcome { at, links } => {
                Op::RecordOutcome { at: *at, links: links.iter().map(|(e, o)| (*e, o.to_static())).collect() }
            }
            Op::DecayAll { factor } => Op::DecayAll { factor: *factor },
            Op::RemoveMemory { id } => Op::RemoveMemory { id: *id },
            Op::RemoveLink { id } => Op::RemoveLink { id: *id },
            Op::SetPrior { key, prior } => {
                Op::SetPrior { key: Cow::Owned(key.clone().into_owned()), prior: *prior }
            }
        }
    }
}

/// What applying an op did.
pub(crate) enum Applied {
    Observed(Observed),
    Outcome(OutcomeReport),
    Count(usize),
    Removed(Box<CausalLink>),
    Done,
}

/// The reward-learning store.
///
/// Links live in one flat vector; an open-addressed table from [`LinkId`] (the hash of the
/// link's key) to its position and check hash finds a link in one slot, one cache line, and a second map from the event signature's
/// hash lists the links of one event for prediction. An observation of a known link
/// allocates nothing once the link's bounded histories are full.
///
/// Every mutation first checks everything, then resolves into one serialisable operation
/// (time and link ids chosen) applied by one function that cannot fail, so a failed call
/// changes nothing and a journal can replay the operations exactly.
pub struct Nac {
    pub(crate) config: NacConfig,
    pub(crate) clock: SharedClock,
    pub(crate) alpha: f64,
    pub(crate) links: Vec<CausalLink>,
    /// Each link's position and the check hash of its key, in one slot (one cache line).
    pub(crate) by_id: KeyTable,
    pub(crate) by_event: FxHashMap<u64, Vec<u32>>,
    pub(crate) pending: VecDeque<PendingEvent>,
    pub(crate) next_event: u64,
    pub(crate) priors: BTreeMap<String, Prior>,
    pub(crate) counters: Counters,
    pub(crate) claims: FileClaims,
    /// The directory and its journal, when the store was opened on one.
    pub(crate) journal: Option<StoreDir<Op<'static>>>,
    /// The journal sequence number the last loaded snapshot recorded.
    pub(crate) loaded_journal_seq: u64,
}

impl fmt::Debug for Nac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nac")
            .field("config", &self.config)
            .field("links", &self.links.len())
            .field("pending", &self.pending.len())
            .field("priors", &self.priors.len())
            .finish_non_exhaustive()
    }
}

/// Assembles a [`Nac`]: `Nac::builder().config(..).clock(..).build()`.
#[derive(Debug, Default)]
pub struct NacBuilder {
    config: NacConfig,
    clock: Option<SharedClock>,
    sync_policy: SyncPolicy,
}

impl NacBuilder {
    /// The settings (default [`NacConfig::default`]).
    pub fn config(&mut self, config: NacConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// When journaled writes reach stable storage, for [`open`](Self::open) (default
    /// [`SyncPolicy::default`], a group commit once a second).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The store opened on the directory `dir` (created if missing): the snapshot `nac.snap`
    /// (or its backup) loaded and the journal `nac.journal` replayed, every later write
    /// journaled before it returns. Errors: the settings, another open store holding the
    /// directory ([`maxim_core::Error::Locked`]), damage the snapshot's backup does not cover.
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<Nac> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }

    /// The store in memory, once the settings are checked.
    pub fn build(&self) -> Result<Nac> {
        self.config.validate()?;
        Ok(Nac {
            alpha: self.config.alpha(),
            config: self.config.clone(),
            clock: self.clock.clone().unwrap_or_else(SystemClock::shared),
            links: Vec::new(),
            by_id: KeyTable::default(),
            by_event: FxHashMap::default(),
            pending: VecDeque::new(),
            next_event: 1,
            priors: BTreeMap::new(),
            counters: Counters::default(),
            claims: FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
        })
    }
}

fn check_delay(delay: f64) -> Result<f64> {
    Ok(maxim_core::check_non_negative("delay_secs", delay)?)
}

/// The key of a prior: `"<type>:<signature>"`.
fn prior_key(event_type: &str, signature: &str) -> String {
    format!("{event_type}:{signature}")
}

/// The `q`-quantile of sorted `values` by linear interpolation.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Nac {
    /// A builder with the default settings and the system clock.
    pub fn builder() -> NacBuilder {
        NacBuilder::default()
    }

    /// The settings.
    pub fn config(&self) -> &NacConfig {
        &self.config
    }

    /// The clock's current time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn bounds(&self) -> Bounds {
        Bounds {
            history: self.config.max_history,
            delays: self.config.max_delays,
            memory_ids: self.config.max_memory_ids,
            observed_at: self.config.max_observation_times,
        }
    }

    // ----- reads -----

    /// Links held.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// True when no link is held.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Every link, in no particular order.
    pub fn links(&self) -> &[CausalLink] {
        &self.links
    }

    /// The link `id`.
    pub fn link(&self, id: LinkId) -> Option<&CausalLink> {
        self.by_id.get(id).map(|(i, _)| &self.links[i as usize])
    }

    /// The link keyed by `event_signature`, `outcome_signature` and `context`.
    pub fn find_link(
        &self,
        event_signature: &str,
        outcome_signature: &str,
        context: &Map,
    ) -> Option<&CausalLink> {
        self.link(LinkId::of(event_signature, outcome_signature, context)).filter(|l| {
            l.key.event_signature == event_signature
                && l.key.outcome_signature == outcome_signature
                && same_context(&l.key.context, context)
        })
    }

    /// The links of the event `signature`, in no particular order.
    pub fn links_for_event<'s>(&'s self, signature: &'s str) -> impl Iterator<Item = &'s CausalLink> + 's {
        self.by_event
            .get(&text_hash(signature))
            .into_iter()
            .flatten()
            .map(|&i| &self.links[i as usize])
            .filter(move |l| l.key.event_signature == signature)
    }

    /// The links whose smoothed valence is `valence`.
    pub fn links_with_valence(&self, valence: Valence) -> impl Iterator<Item = &CausalLink> {
        self.links.iter().filter(move |l| l.valence == valence)
    }

    /// The links that keep the episode `id` among their memory ids.
    pub fn links_with_memory(&self, id: RecordId) -> impl Iterator<Item = &CausalLink> {
        self.links.iter().filter(move |l| l.memory_ids.contains(&id))
    }

    /// The links whose event or outcome signature contains any of `keywords` (ignoring
    /// case), with confidence at least `min_confidence`, most confident first (ties by id),
    /// each once. Keywords shorter than [`MIN_KEYWORD_CHARS`] characters are ignored, so a
    /// stray letter matches nothing.
    pub fn search_links(&self, keywords: &[&str], min_confidence: f64) -> Vec<&CausalLink> {
        let keys: Vec<String> = keywords
            .iter()
            .map(|k| k.trim().to_lowercase())
            .filter(|k| k.chars().count() >= MIN_KEYWORD_CHARS)
            .collect();
        if keys.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<&CausalLink> = self
            .links
            .iter()
            .filter(|l| l.confidence >= min_confidence)
            .filter(|l| {
                let event = l.key.event_signature.to_lowercase();
                let outcome = l.key.outcome_signature.to_lowercase();
                keys.iter().any(|k| event.contains(k.as_str()) || outcome.contains(k.as_str()))
            })
            .collect();
        found.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then_with(|| a.key.id.cmp(&b.key.id)));
        found
    }

    /// The events waiting for an outcome, oldest first.
    pub fn pending_events(&self) -> impl ExactSizeIterator<Item = &PendingEvent> {
        self.pending.iter()
    }

    /// The prior for `event_type` and `signature`, if one was set.
    pub fn prior(&self, event_type: &str, signature: &str) -> Option<Prior> {
        self.priors.get(&prior_key(event_type, signature)).copied()
    }

    /// Observations learned from, in all.
    pub fn total_observations(&self) -> u64 {
        self.counters.total_observations
    }

    /// The store's counters.
    pub fn stats(&self) -> NacStats {
        let c = self.counters;
        NacStats {
            links: self.links.len(),
            pending_events: self.pending.len(),
            priors: self.priors.len(),
            total_observations: c.total_observations,
            links_created: c.links_created,
            evictions: c.evictions,
            links_removed: c.links_removed,
            events_recorded: c.events_recorded,
            outcomes_recorded: c.outcomes_recorded,
            events_linked: c.events_linked,
            events_dropped: c.events_dropped,
        }
    }

    /// What the links of `signature` predict, best first: one prediction per link whose
    /// confidence reaches [`NacConfig::min_confidence_threshold`], scored
    /// `confidence × (0.5 + 0.5 × similarity(link context, context))`. The event type is
    /// not part of a link's key and does not filter.
    pub fn predict_all(&self, event_type: &str, signature: &str, context: &Map) -> Vec<Prediction> {
        let _ = event_type;
        let scored = self.scored_links(signature, context);
        scored
            .iter()
            .map(|&(score, i)| Self::prediction_of(&self.links[i], score, vec![self.links[i].key.id]))
            .collect()
    }

    fn scored_links(&self, signature: &str, context: &Map) -> Vec<(f64, usize)> {
        let threshold = self.config.min_confidence_threshold;
        let mut scored: Vec<(f64, usize)> = self
            .by_event
            .get(&text_hash(signature))
            .into_iter()
            .flatten()
            .map(|&i| i as usize)
            .filter(|&i| {
                let l = &self.links[i];
                l.key.event_signature == signature && l.confidence >= threshold
            })
            .map(|i| {
                let l = &self.links[i];
                (l.confidence * (0.5 + 0.5 * context_similarity(&l.key.context, context)), i)
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0).then_with(|| self.links[a.1].key.id.cmp(&self.links[b.1].key.id))
        });
        scored
    }

    fn prediction_of(link: &CausalLink, score: f64, links: Vec<LinkId>) -> Prediction {
        let delay = link.mean_delay().map(|mean| {
            let mut sorted: Vec<f64> = link.delays.iter().copied().collect();
            sorted.sort_by(f64::total_cmp);
            DelayEstimate { mean, lower: quantile(&sorted, 0.1), upper: quantile(&sorted, 0.9) }
        });
        Prediction {
            outcome: Some((link.key.outcome_type.clone(), link.key.outcome_signature.clone())),
            valence: link.valence,
            value: link.predicted_value,
            confidence: score,
            delay,
            links,
        }
    }

    /// What the event `signature` in `context` is expected to lead to (§8.3): the best
    /// scoring link of [`predict_all`](Self::predict_all), with up to five contributing
    /// links; when no link qualifies, the prior set for `event_type` and `signature`
    /// (valence positive when its value exceeds 0.6, neutral otherwise); `None` without
    /// either.
    pub fn predict(&self, event_type: &str, signature: &str, context: &Map) -> Option<Prediction> {
        let scored = self.scored_links(signature, context);
        if let Some(&(score, best)) = scored.first() {
            let links = scored.iter().take(5).map(|&(_, i)| self.links[i].key.id).collect();
            return Some(Self::prediction_of(&self.links[best], score, links));
        }
        let prior = self.prior(event_type, signature)?;
        Some(Prediction {
            outcome: None,
            valence: if prior.value > 0.6 { Valence::Positive } else { Valence::Neutral },
            value: prior.value,
            confidence: prior.confidence,
            delay: None,
            links: Vec::new(),
        })
    }

    // ----- writes -----

    /// Checks an observation: its names, delay and context, then its key, whose id and
    /// check hash it returns with the position of the link holding it, if any.
    #[inline]
    fn check_observation(&self, o: &Observation<'_>) -> Result<(LinkId, u64, Option<u32>)> {
        check_name("event_type", o.event_type)?;
        check_name("event_signature", o.event_signature)?;
        check_name("outcome_type", o.outcome_type)?;
        check_name("outcome_signature", o.outcome_signature)?;
        check_delay(o.delay_secs)?;
        check_context("context", o.context)?;
        let (link, check) = LinkId::with_check(o.event_signature, o.outcome_signature, o.context);
        match self.by_id.get(link) {
            Some((_, held)) if held != check => Err(Error::LinkIdCollision { id: link }),
            found => Ok((link, check, found.map(|(i, _)| i))),
        }
    }

    /// The op of a checked observation.
    fn observe_op<'o>(o: &Observation<'o>, link: LinkId, check: u64) -> ObserveOp<'o> {
        ObserveOp {
            link,
            check,
            event_type: Cow::Borrowed(o.event_type),
            event_signature: Cow::Borrowed(o.event_signature),
            outcome_type: Cow::Borrowed(o.outcome_type),
            outcome_signature: Cow::Borrowed(o.outcome_signature),
            valence: o.valence,
            delay_secs: o.delay_secs,
            context: Cow::Borrowed(o.context),
            memory_id: o.memory_id,
        }
    }

    /// Refuses a key whose id is held by a link of another key (their check hashes differ).
    fn check_collision(&self, id: LinkId, check: u64) -> Result<()> {
        match self.by_id.get(id) {
            Some((_, held)) if held != check => Err(Error::LinkIdCollision { id }),
            _ => Ok(()),
        }
    }

    /// Learns from one observation of an event followed by an outcome (§8.3 `observe`):
    /// a new link starts at one observation and confidence 0.5, an existing one counts one
    /// more; both take the Rescorla–Wagner update. A new link in a full store first evicts
    /// the least confident link (ties: the one observed longest ago, then the lowest id).
    ///
    /// Errors (nothing changes): an empty or over-long type or signature, a negative or
    /// non-finite delay, a context holding a non-finite number, a link-id collision.
    pub fn observe(&mut self, observation: &Observation<'_>) -> Result<Observed> {
        let _s = tracing::trace_span!("nac_observe").entered();
        let (link, check, found) = self.check_observation(observation)?;
        let at = self.clock.now();
        if let (Some(i), None) = (found, &self.journal) {
            // A known link and no journal: nothing to append, so no op to build. This is
            // the update `apply` makes of the same op, at the position just found.
            self.counters.total_observations += 1;
            return Ok(self.learn_at(
                i,
                link,
                observation.valence,
                observation.delay_secs,
                observation.memory_id,
                at,
            ));
        }
        match self.commit(Op::Observe { at, obs: Self::observe_op(observation, link, check) })? {
            Applied::Observed(o) => Ok(o),
            _ => unreachable!("an observe op reports an observation"),
        }
    }

    /// Records an event that may lead to an outcome later (§8.3 `record_event`). Events older
    /// than twice the temporal window are dropped first; beyond
    /// [`NacConfig::max_pending_events`] the oldest is dropped.
    pub fn record_event(
        &mut self,
        event_type: &str,
        signature: &str,
        context: &Map,
        memory_id: Option<RecordId>,
    ) -> Result<EventId> {
        let _s = tracing::debug_span!("nac_record_event", pending = self.pending.len()).entered();
        check_name("event_type", event_type)?;
        check_name("event_signature", signature)?;
        check_context("context", context)?;
        let id = EventId(self.next_event);
        let at = self.clock.now();
        let event = PendingEvent {
            id,
            at,
            event_type: event_type.to_owned(),
            signature: signature.to_owned(),
            context: context.clone(),
            memory_id,
        };
        self.commit(Op::RecordEvent { at, event: Cow::Owned(event) })?;
        Ok(id)
    }

    /// Whether the pending `event` belongs to `outcome` recorded at `at`.
    fn attributes(&self, event: &PendingEvent, outcome: &Outcome<'_>, at: Timestamp) -> bool {
        let age = at.secs_since(event.at);
        if !(0.0..=self.config.temporal_window_secs).contains(&age) {
            return false;
        }
        match outcome.attribution {
            Attribution::Event(id) => event.id == id,
            Attribution::Signature(sig) => event.signature == sig,
            Attribution::Context => {
                context_similarity(&event.context, outcome.context) >= self.config.attribution_similarity
            }
        }
    }

    /// Records an outcome and learns from it (§8.3 `record_outcome_full`): every pending event
    /// it is attributed to and that happened within the temporal window is observed as
    /// leading to it (delay = the time between them, context = the event's), then leaves the
    /// pending list. Events older than twice the window are dropped.
    ///
    /// Errors (nothing changes): empty names, a context with a non-finite number, an
    /// [`Attribution::Event`] naming no pending event ([`Error::UnknownEvent`]), a link-id
    /// collision.
    pub fn record_outcome(&mut self, outcome: &Outcome<'_>) -> Result<OutcomeReport> {
        let _s = tracing::debug_span!("nac_record_outcome", pending = self.pending.len()).entered();
        check_name("outcome_type", outcome.outcome_type)?;
        if let Some(sig) = outcome.outcome_signature {
            check_name("outcome_signature", sig)?;
        }
        match outcome.attribution {
            Attribution::Signature(sig) => check_name("event_signature", sig)?,
            Attribution::Event(id) if !self.pending.iter().any(|e| e.id == id) => {
                return Err(Error::UnknownEvent { id });
            }
            _ => {}
        }
        check_context("context", outcome.context)?;
        let at = self.clock.now();
        let mut links = Vec::new();
        for event in self.pending.iter().filter(|e| self.attributes(e, outcome, at)) {
            let outcome_signature = match outcome.outcome_signature {
                Some(sig) => Cow::Borrowed(sig),
                None => Cow::Owned(format!("{}:{}", event.signature, outcome.valence)),
            };
            check_name("outcome_signature", &outcome_signature)?;
            let (link, check) = LinkId::with_check(&event.signature, &outcome_signature, &event.context);
            self.check_collision(link, check)?;
            links.push((
                event.id,
                ObserveOp {
                    link,
                    check,
                    event_type: Cow::Owned(event.event_type.clone()),
                    event_signature: Cow::Owned(event.signature.clone()),
                    outcome_type: Cow::Borrowed(outcome.outcome_type),
                    outcome_signature,
                    valence: outcome.valence,
                    delay_secs: at.secs_since(event.at),
                    context: Cow::Owned(event.context.clone()),
                    memory_id: outcome.memory_id.or(event.memory_id),
                },
            ));
        }
        // Two events of one outcome may share a link, with a collision only between them.
        for (i, (_, a)) in links.iter().enumerate() {
            for (_, b) in &links[..i] {
                if a.link == b.link && a.check != b.check {
                    return Err(Error::LinkIdCollision { id: a.link });
                }
            }
        }
        match self.commit(Op::RecordOutcome { at, links })? {
            Applied::Outcome(report) => Ok(report),
            _ => unreachable!("an outcome op reports an outcome"),
        }
    }

    /// Multiplies every link's confidence by `factor` in `[0, 1]` (§8.3 `decay_all`; the hub
    /// calls it with 0.95 at session end). The next observation of a link sets its confidence
    /// from its count again.
    pub fn decay_all(&mut self, factor: f64) -> Result<()> {
        let _s = tracing::debug_span!("nac_decay_all", n_links = self.links.len()).entered();
        maxim_core::check_unit("factor", factor)?;
        self.commit(Op::DecayAll { factor })?;
        Ok(())
    }

    /// Forgets the episode `id` in every link that keeps it (registered as the episodic
    /// layer's deletion callback); returns how many links changed. An unknown id changes
    /// nothing. Fails only when the journal cannot be written.
    pub fn remove_memory(&mut self, id: RecordId) -> Result<usize> {
        let _s = tracing::debug_span!("nac_remove_memory", %id).entered();
        match self.commit(Op::RemoveMemory { id })? {
            Applied::Count(n) => Ok(n),
            _ => unreachable!("a remove-memory op reports a count"),
        }
    }

    /// Removes the link `id` and returns it.
    pub fn remove_link(&mut self, id: LinkId) -> Result<CausalLink> {
        let _s = tracing::debug_span!("nac_remove_link", %id).entered();
        if !self.by_id.contains(id) {
            return Err(Error::UnknownLink { id });
        }
        match self.commit(Op::RemoveLink { id })? {
            Applied::Removed(link) => Ok(*link),
            _ => unreachable!("a remove-link op reports the link"),
        }
    }

    /// Sets the prior belief about `event_type`/`signature` that [`predict`](Self::predict)
    /// falls back on: a `value` and a `confidence`, both in `[0, 1]`.
    pub fn set_prior(
        &mut self,
        event_type: &str,
        signature: &str,
        value: f64,
        confidence: f64,
    ) -> Result<()> {
        check_name("event_type", event_type)?;
        check_name("event_signature", signature)?;
        let prior = Prior {
            value: maxim_core::check_unit("value", value)?,
            confidence: maxim_core::check_unit("confidence", confidence)?,
        };
        self.commit(Op::SetPrior { key: Cow::Owned(prior_key(event_type, signature)), prior })?;
        Ok(())
    }

    // ----- the one place state changes -----

    /// Journals `op` when the store is open on a directory, then applies it.
    fn commit(&mut self, op: Op<'_>) -> Result<Applied> {
        if let Some(dir) = &mut self.journal {
            dir.append(&op.to_static())?;
        }
        Ok(self.apply(op))
    }

    /// Applies one resolved op. It cannot fail: everything was checked when it was built.
    pub(crate) fn apply(&mut self, op: Op<'_>) -> Applied {
        match op {
            Op::Observe { at, obs } => Applied::Observed(self.apply_observe(&obs, at)),
            Op::RecordEvent { at, event } => {
                self.expire(at);
                self.pending.push_back(event.into_owned());
                self.next_event = self.next_event.max(self.pending.back().map_or(0, |e| e.id.0) + 1);
                self.counters.events_recorded += 1;
                while self.pending.len() > self.config.max_pending_events {
                    self.pending.pop_front();
                    self.counters.events_dropped += 1;
                }
                Applied::Done
            }
            Op::RecordOutcome { at, links } => {
                let mut report = OutcomeReport { linked: Vec::with_capacity(links.len()), expired: 0 };
                for (event, obs) in &links {
                    let observed = self.apply_observe(obs, at);
                    report.linked.push((*event, observed));
                }
                self.pending.retain(|e| !links.iter().any(|(id, _)| *id == e.id));
                report.expired = self.expire(at);
                self.counters.outcomes_recorded += 1;
                self.counters.events_linked += links.len() as u64;
                Applied::Outcome(report)
            }
            Op::DecayAll { factor } => {
                for l in &mut self.links {
                    l.confidence *= factor;
                }
                Applied::Done
            }
            Op::RemoveMemory { id } => {
                let mut n = 0;
                for l in &mut self.links {
                    if l.memory_ids.contains(&id) {
                        l.memory_ids.retain(|m| *m != id);
                        n += 1;
                    }
                }
                Applied::Count(n)
            }
            Op::RemoveLink { id } => match self.by_id.get(id) {
                Some((i, _)) => {
                    self.counters.links_removed += 1;
                    Applied::Removed(Box::new(self.remove_at(i as usize)))
                }
                None => Applied::Done,
            },
            Op::SetPrior { key, prior } => {
                self.priors.insert(key.into_owned(), prior);
                Applied::Done
            }
        }
    }

    /// Drops pending events older than twice the window; returns how many.
    fn expire(&mut self, at: Timestamp) -> usize {
        let limit = 2.0 * self.config.temporal_window_secs;
        let before = self.pending.len();
        self.pending.retain(|e| at.secs_since(e.at) <= limit);
        let dropped = before - self.pending.len();
        self.counters.events_dropped += dropped as u64;
        dropped
    }

    #[inline]
    fn apply_observe(&mut self, o: &ObserveOp<'_>, at: Timestamp) -> Observed {
        self.counters.total_observations += 1;
        if let Some((i, _)) = self.by_id.get(o.link) {
            return self.learn_at(i, o.link, o.valence, o.delay_secs, o.memory_id, at);
        }
        let evicted = (self.links.len() >= self.config.max_links).then(|| self.evict_one());
        let mut link = CausalLink::new(
            o.link,
            &o.event_type,
            &o.event_signature,
            &o.context,
            &o.outcome_type,
            &o.outcome_signature,
            o.valence,
            at,
            self.bounds(),
        );
        link.first_observation(o.delay_secs, o.memory_id, at);
        let err = link.rescorla_wagner(o.valence, self.alpha);
        self.insert(link, o.check);
        self.counters.links_created += 1;
        Observed { link: o.link, created: true, prediction_error: err, evicted }
    }

    /// One more observation of the link `id` held at position `i`: the Rescorla–Wagner
    /// update and the observation's record (the caller counts it).
    #[inline]
    fn learn_at(
        &mut self,
        i: u32,
        id: LinkId,
        valence: Valence,
        delay_secs: f64,
        memory_id: Option<RecordId>,
        at: Timestamp,
    ) -> Observed {
        let link = &mut self.links[i as usize];
        let err = link.rescorla_wagner(valence, self.alpha);
        link.record_observation(delay_secs, valence, memory_id, at);
        Observed { link: id, created: false, prediction_error: err, evicted: None }
    }

    /// Adds `link` (its id is not held) to the vector and both indexes.
    pub(crate) fn insert(&mut self, link: CausalLink, check: u64) {
        let i = self.links.len() as u32;
        self.by_id.insert(link.key.id, check, i);
        self.by_event.entry(text_hash(&link.key.event_signature)).or_default().push(i);
        self.links.push(link);
    }

    /// Removes the link at `i` (the last link moves into its place).
    fn remove_at(&mut self, i: usize) -> CausalLink {
        let last = self.links.len() - 1;
        let removed = self.links.swap_remove(i);
        self.by_id.remove(removed.key.id);
        let key = text_hash(&removed.key.event_signature);
        if let Some(list) = self.by_event.get_mut(&key) {
            list.retain(|&j| j as usize != i);
            if list.is_empty() {
                self.by_event.remove(&key);
            }
        }
        if i != last {
            let moved = &self.links[i];
            self.by_id.set_pos(moved.key.id, i as u32);
            if let Some(list) = self.by_event.get_mut(&text_hash(&moved.key.event_signature))
                && let Some(slot) = list.iter_mut().find(|j| **j as usize == last)
            {
                *slot = i as u32;
            }
        }
        removed
    }

    /// Evicts the least confident link; returns its id.
    fn evict_one(&mut self) -> LinkId {
        let victim = self
            .links
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| {
                a.confidence
                    .total_cmp(&b.confidence)
                    .then(a.last_observed.cmp(&b.last_observed))
                    .then_with(|| a.key.id.cmp(&b.key.id))
            })
            .map(|(i, _)| i)
            .expect("a full store holds a link");
        self.counters.evictions += 1;
        self.remove_at(victim).key.id
    }
}

#[cfg(test)]
mod tests {
    use maxim_core::{ManualClock, Timestamp};

    use super::*;

    #[test]
    fn a_key_that_fails_its_check_is_refused_and_changes_nothing() {
        let mut nac = Nac::builder()
            .clock(ManualClock::new(Timestamp::from_secs(1)).shared())
            .build()
            .expect("the default settings are valid");
        let obs = Observation::new("tool", "tool:grasp", "r", "ok", Valence::Positive);
        let id = nac.observe(&obs).unwrap().link;
        // Pretend another key holds this id: its check hash differs.
        nac.by_id.corrupt_check(id, 1);
        let err = nac.observe(&obs).unwrap_err();
        assert!(matches!(err, Error::LinkIdCollision { id: got } if got == id));
        assert_eq!(nac.link(id).unwrap().observation_count(), 1);
        assert_eq!(nac.total_observations(), 1);
        nac.record_event("tool", "tool:grasp", &NO_CONTEXT, None).unwrap();
        let outcome = Outcome {
            outcome_signature: Some("ok"),
            ..Outcome::of_signature("r", "tool:grasp", Valence::Positive)
        };
        assert!(matches!(nac.record_outcome(&outcome), Err(Error::LinkIdCollision { .. })));
        assert_eq!(nac.pending_events().len(), 1);
    }
}
