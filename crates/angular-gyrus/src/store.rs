//! [`AngularGyrus`]: the mathematical layer's store, its [`AngularGyrusConfig`] and
//! [`AngularGyrusBuilder`], the built-in records, filtered [`recall`](AngularGyrus::recall_records),
//! associations and spreading activation.
//!
//! Records live in a dense vector; a `RecordId → slot` map finds them and a removal swaps the
//! last record into the hole. Three indexes (name, category, domain) hold ids. Every mutation
//! validates first, then resolves to an [`Op`] (ids and times chosen) that one infallible
//! function applies, so a journal can log the operation and replay it exactly.
//!
//! ```
//! use angular_gyrus::{AngularGyrus, MathCategory, MathFilter, MathRelation};
//! use maxim_core::{ManualClock, Timestamp};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ag = AngularGyrus::builder().clock(clock.shared()).id_seed(1).build()?;
//! assert_eq!(ag.len_records(), 9); // pi, e, phi and six statistics methods
//! let methods = ag.recall_records(&MathFilter::new().category(MathCategory::Method), 10);
//! assert_eq!(methods.len(), 6);
//! let pi = ag.find_by_name("pi")[0];
//! let fact = ag.new_record("circle_area", MathCategory::Formula, "geometry")?;
//! let area = ag.insert(fact.into())?;
//! ag.link(area, pi, MathRelation::DerivedFrom, 1.0)?;
//! assert_eq!(ag.associated(&[area], 5)[0].0.name(), "pi");
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use maxim_core::graph::{ActivationParams, EdgeKind, EdgeMetaRef, Graph};
use maxim_core::layer::Callbacks;
use maxim_core::trace::TraceParams;
use maxim_core::value::{Map, Value};
use maxim_core::{
    IdGenerator, MemoryRecord, RecordId, RecordMeta, SharedClock, Source, SystemClock, Timestamp, TraceKind,
    check_unit, days,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::{MathCategory, MathEntry, MathRecord, Origin, check_name};

/// The layer's name.
pub const LAYER_NAME: &str = "angular_gyrus";

/// Settings of an [`AngularGyrus`]; the defaults are the original's (§6.2, §6.3, §1.2).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AngularGyrusConfig {
    /// Most records held; storing one more is refused with [`Error::Full`] (default 5,000).
    pub max_records: usize,
    /// Consolidation removes records scoring below this (default 0.15).
    pub retention_threshold: f64,
    /// Consolidation compresses full records scoring below this (default 0.3).
    pub compression_threshold: f64,
    /// After this long without access, recency counts nothing, and a record accessed fewer
    /// than three times scores 0 (default 90 days).
    pub max_age_without_access: Duration,
    /// Seed the built-in constants and methods into an empty store (default true).
    pub seed_built_ins: bool,
    /// Spreading activation of `recall_associated` (default decay 0.5, threshold 0.01,
    /// depth 3: the original's stop below 0.01).
    pub activation: ActivationParams,
    /// How records' traces decay and reinforce: the tick and the agent's imprint window
    /// (default [`TraceParams::default`]). Reads that count as use (`get`, `touch`,
    /// `recall_touching`, `recall_associated_touching`) reinforce with it; built-in
    /// constants carry firmware traces, which are never reinforced.
    pub trace: TraceParams,
}

impl Default for AngularGyrusConfig {
    fn default() -> Self {
        Self {
            max_records: 5_000,
            retention_threshold: 0.15,
            compression_threshold: 0.3,
            max_age_without_access: days(90),
            seed_built_ins: true,
            activation: ActivationParams::new(0.5, 0.01, 3).expect("valid constants"),
            trace: TraceParams::default(),
        }
    }
}

impl AngularGyrusConfig {
    /// Checks the settings: room for the built-ins, thresholds in `[0, 1]` with retention at
    /// most compression, a non-zero maximum age.
    pub fn validate(&self) -> Result<()> {
        if self.max_records < BUILT_INS.len() {
            return Err(Error::out_of_range("max_records", self.max_records as f64, "at least 9"));
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
        Ok(())
    }
}

/// Assembles an [`AngularGyrus`].
///
/// ```
/// use angular_gyrus::{AngularGyrus, AngularGyrusConfig};
/// let mut config = AngularGyrusConfig::default();
/// config.seed_built_ins = false;
/// let ag = AngularGyrus::builder().config(config).id_seed(7).build()?;
/// assert_eq!(ag.len_records(), 0);
/// # Ok::<(), angular_gyrus::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct AngularGyrusBuilder {
    config: AngularGyrusConfig,
    clock: Option<SharedClock>,
    id_seed: Option<u64>,
    sync_policy: maxim_core::journal::SyncPolicy,
}

impl AngularGyrusBuilder {
    /// The settings (default [`AngularGyrusConfig::default`]).
    pub fn config(&mut self, config: AngularGyrusConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// Seeds the id generator, for reproducible ids (default: seeded from entropy).
    pub fn id_seed(&mut self, seed: u64) -> &mut Self {
        self.id_seed = Some(seed);
        self
    }

    /// When journaled writes reach stable storage, for a layer [`open`](Self::open)ed on a
    /// directory (default: group commit once a second).
    pub fn sync_policy(&mut self, policy: maxim_core::journal::SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The layer opened on the directory `dir` (created if missing): the snapshot
    /// `angular_gyrus.snap` (or its backup) loaded and the journal replayed, every later write
    /// journaled before it returns. Errors: the settings, another open layer holding the
    /// directory ([`maxim_core::Error::Locked`]), damage the snapshot's backup does not cover.
    /// See [`crate::journal`].
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<AngularGyrus> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }

    /// The layer in memory, once the settings are checked; seeded with the built-ins when the
    /// settings say so.
    pub fn build(&self) -> Result<AngularGyrus> {
        self.config.validate()?;
        let mut ag = AngularGyrus {
            config: self.config.clone(),
            clock: self.clock.clone().unwrap_or_else(SystemClock::shared),
            ids: self.id_seed.map_or_else(IdGenerator::from_entropy, IdGenerator::seeded),
            state: State::default(),
            callbacks: Callbacks::new(LAYER_NAME),
            queries: AtomicU64::new(0),
            claims: maxim_core::ownership::FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
        };
        if ag.config.seed_built_ins {
            let now = ag.clock.now();
            for entry in built_ins(now)? {
                ag.apply(Op::Insert { entry });
            }
        }
        Ok(ag)
    }
}

/// The relation an association edge carries. Every association is stored in both
/// directions, so spreading activation walks it either way (§6.3: the AG spreads over
/// outgoing and incoming edges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MathRelation {
    /// Generic association.
    Associates,
    /// The two quantities correlate (a confirmed cross-metric correlation).
    CorrelatesWith,
    /// A metric's pattern is locked to a cycle (a confirmed cosinor fit).
    PhaseLockedTo,
    /// One record was derived from the other.
    DerivedFrom,
}

impl MathRelation {
    /// Every relation.
    pub const ALL: [Self; 4] =
        [Self::Associates, Self::CorrelatesWith, Self::PhaseLockedTo, Self::DerivedFrom];

    /// The label stored on the edge (`CORRELATES_WITH`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Associates => "ASSOCIATES",
            Self::CorrelatesWith => "CORRELATES_WITH",
            Self::PhaseLockedTo => "PHASE_LOCKED_TO",
            Self::DerivedFrom => "DERIVED_FROM",
        }
    }

    /// The relation labelled `label`.
    pub fn from_label(label: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == label)
    }
}

/// The recall filter of §6.3; every field set must match (AND). The default matches every
/// record, compressed ones included.
///
/// The category is a typed [`MathCategory`]: the original formatted whatever it was given
/// into the index key, so passing the enum instead of its name silently matched nothing.
///
/// ```
/// use angular_gyrus::{MathCategory, MathFilter};
/// let f = MathFilter::new().category(MathCategory::Pattern).domain("operational_statistics").min_confidence(0.5);
/// assert_eq!(f.category, Some(MathCategory::Pattern));
/// assert!(f.include_compressed);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MathFilter {
    /// The name, exactly (trimmed).
    pub name: Option<String>,
    /// The category.
    pub category: Option<MathCategory>,
    /// The domain, exactly (trimmed).
    pub domain: Option<String>,
    /// Lowest confidence.
    pub min_confidence: Option<f64>,
    /// The origin.
    pub origin: Option<Origin>,
    /// Whether compressed records may match (default true).
    pub include_compressed: bool,
}

impl Default for MathFilter {
    fn default() -> Self {
        Self {
            name: None,
            category: None,
            domain: None,
            min_confidence: None,
            origin: None,
            include_compressed: true,
        }
    }
}

impl MathFilter {
    /// The filter that matches everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also by name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Also by category.
    pub fn category(mut self, category: MathCategory) -> Self {
        self.category = Some(category);
        self
    }

    /// Also by domain.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Also by lowest confidence.
    pub fn min_confidence(mut self, min: f64) -> Self {
        self.min_confidence = Some(min);
        self
    }

    /// Also by origin.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Whether compressed records may match.
    pub fn include_compressed(mut self, include: bool) -> Self {
        self.include_compressed = include;
        self
    }

    fn matches(&self, e: &MathEntry) -> bool {
        self.name.as_deref().is_none_or(|n| e.name() == n.trim())
            && self.category.is_none_or(|c| e.category() == c)
            && self.domain.as_deref().is_none_or(|d| e.domain() == d.trim())
            && self.min_confidence.is_none_or(|m| e.confidence() >= m)
            && self.origin.is_none_or(|o| e.origin() == o)
            && (self.include_compressed || !e.is_compressed())
    }
}

/// One mutation of the store, with every id and time already chosen: what a journal logs and
/// replays. [`AngularGyrus`] applies each through one function that cannot fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// Adds a validated record whose id is new.
    Insert {
        /// The record.
        entry: MathEntry,
    },
    /// Replaces the held record with the same id (a refitted pattern, a compression); its
    /// edges stay.
    Replace {
        /// The new content.
        entry: MathEntry,
    },
    /// Removes a held record, its index entries, its node and every incident edge.
    Remove {
        /// The record.
        id: RecordId,
    },
    /// Records an access to each held id at `at`.
    Touch {
        /// The records.
        ids: Vec<RecordId>,
        /// The access time.
        at: Timestamp,
    },
    /// One consolidation pass: the compressed forms that replace full records (their edges
    /// stay) and the records removed.
    Consolidate {
        /// Compressed forms, each replacing the full record with its id.
        compressed: Vec<crate::record::CompressedMathRecord>,
        /// Records removed.
        removed: Vec<RecordId>,
    },
    /// Adds (or re-weights) the association `a ↔ b`, both directions.
    Link {
        /// One end.
        a: RecordId,
        /// The other end.
        b: RecordId,
        /// The relation.
        relation: MathRelation,
        /// Its weight in `[0, 1]`.
        weight: f64,
    },
}

/// Declares [`Counters`] from one list of documented names.
macro_rules! counters {
    ($($(#[doc = $doc:literal])+ $name:ident,)+) => {
        /// Counts kept by the layer (reported by `stats`, saved with it).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub(crate) struct Counters {
            $($(#[doc = $doc])+ pub(crate) $name: u64,)+
        }

        impl Counters {
            /// Every counter with its name, in declaration order.
            pub(crate) fn to_pairs(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)+]
            }

            /// Sets the counter called `name`; unknown names (of a newer build) are ignored.
            pub(crate) fn set(&mut self, name: &str, value: u64) {
                match name {
                    $(stringify!($name) => self.$name = value,)+
                    _ => {}
                }
            }
        }
    };
}

counters! {
    /// Records stored (built-ins excluded).
    total_stores,
    /// Records replaced (refitted patterns).
    replacements,
    /// Records removed (by `remove` or consolidation).
    removals,
    /// Records compressed by consolidation.
    compressions,
    /// Consolidation passes.
    consolidations,
    /// Associations added or re-weighted.
    links,
}

/// Everything a snapshot replaces.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub(crate) records: Vec<MathEntry>,
    pub(crate) slots: FxHashMap<RecordId, u32>,
    by_name: FxHashMap<String, Vec<RecordId>>,
    by_domain: FxHashMap<String, Vec<RecordId>>,
    by_category: [Vec<RecordId>; 6],
    pub(crate) graph: Graph,
    pub(crate) counters: Counters,
}

impl State {
    pub(crate) fn slot(&self, id: RecordId) -> Option<usize> {
        self.slots.get(&id).map(|&s| s as usize)
    }

    pub(crate) fn record(&self, id: RecordId) -> Option<&MathEntry> {
        self.slot(id).map(|s| &self.records[s])
    }

    fn index(&mut self, e: &MathEntry) {
        let id = e.id();
        self.by_name.entry(e.name().to_owned()).or_default().push(id);
        self.by_domain.entry(e.domain().to_owned()).or_default().push(id);
        self.by_category[e.category().slot()].push(id);
    }

    fn unindex(&mut self, e: &MathEntry) {
        let id = e.id();
        unpost(&mut self.by_name, e.name(), id);
        unpost(&mut self.by_domain, e.domain(), id);
        let list = &mut self.by_category[e.category().slot()];
        if let Some(p) = list.iter().position(|&x| x == id) {
            list.swap_remove(p);
        }
    }

    /// Adds a validated record whose id is new.
    pub(crate) fn push(&mut self, entry: MathEntry) {
        let id = entry.id();
        // Fails only past u32::MAX - 1 nodes, far beyond any `max_records`.
        let _ = self.graph.add_node(id);
        self.index(&entry);
        self.slots.insert(id, self.records.len() as u32);
        self.records.push(entry);
    }

    /// Replaces the held record with `entry`'s id, keeping the indexes right; false when
    /// there is none.
    fn replace(&mut self, entry: MathEntry) -> bool {
        let Some(slot) = self.slot(entry.id()) else { return false };
        let old = std::mem::replace(&mut self.records[slot], entry);
        self.unindex(&old);
        let new = self.records[slot].clone();
        self.index(&new);
        true
    }

    fn take(&mut self, slot: usize) -> MathEntry {
        let id = self.records[slot].id();
        let entry = self.records.swap_remove(slot);
        self.unindex(&entry);
        self.graph.remove_node(id);
        self.slots.remove(&id);
        if slot < self.records.len() {
            self.slots.insert(self.records[slot].id(), slot as u32);
        }
        entry
    }

    /// The ids under the filter's most selective index, or `None` for a scan of everything.
    fn candidates(&self, filter: &MathFilter) -> Option<&[RecordId]> {
        const EMPTY: &[RecordId] = &[];
        let lists: [Option<&[RecordId]>; 3] = [
            filter.name.as_deref().map(|n| self.by_name.get(n.trim()).map_or(EMPTY, Vec::as_slice)),
            filter.domain.as_deref().map(|d| self.by_domain.get(d.trim()).map_or(EMPTY, Vec::as_slice)),
            filter.category.map(|c| self.by_category[c.slot()].as_slice()),
        ];
        lists.into_iter().flatten().min_by_key(|l| l.len())
    }
}

fn unpost(map: &mut FxHashMap<String, Vec<RecordId>>, key: &str, id: RecordId) {
    if let Some(list) = map.get_mut(key) {
        if let Some(p) = list.iter().position(|&x| x == id) {
            list.swap_remove(p);
        }
        if list.is_empty() {
            map.remove(key);
        }
    }
}

/// The mathematical layer (see the [crate docs](crate)).
pub struct AngularGyrus {
    pub(crate) config: AngularGyrusConfig,
    pub(crate) clock: SharedClock,
    pub(crate) ids: IdGenerator,
    pub(crate) state: State,
    pub(crate) callbacks: Callbacks<MathEntry>,
    pub(crate) queries: AtomicU64,
    pub(crate) claims: maxim_core::ownership::FileClaims,
    /// The directory and journal, when the layer was opened on one.
    pub(crate) journal: Option<crate::journal::Journaled>,
    /// The journal sequence number the last loaded snapshot recorded.
    pub(crate) loaded_journal_seq: u64,
}

impl std::fmt::Debug for AngularGyrus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AngularGyrus")
            .field("records", &self.state.records.len())
            .field("edges", &self.state.graph.edge_count())
            .finish_non_exhaustive()
    }
}

impl AngularGyrus {
    /// A builder with the default settings.
    pub fn builder() -> AngularGyrusBuilder {
        AngularGyrusBuilder::default()
    }

    /// The settings.
    pub fn config(&self) -> &AngularGyrusConfig {
        &self.config
    }

    /// The clock.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Number of records, full and compressed.
    pub fn len_records(&self) -> usize {
        self.state.records.len()
    }

    /// The record `id`, without recording an access.
    pub fn record(&self, id: RecordId) -> Option<&MathEntry> {
        self.state.record(id)
    }

    /// The full record `id`, unless unknown or compressed.
    pub fn math_record(&self, id: RecordId) -> Option<&MathRecord> {
        self.record(id).and_then(MathEntry::as_full)
    }

    /// The record `id`, recording a use: an access and a reinforcement of its trace under
    /// [`AngularGyrusConfig::trace`]. Unknown: `NotFound`.
    pub fn get(&mut self, id: RecordId) -> Result<&MathEntry> {
        let slot = self.state.slot(id).ok_or_else(|| Error::not_found(id))?;
        let at = self.clock.now();
        self.apply(Op::Touch { ids: vec![id], at });
        self.queries.fetch_add(1, Ordering::Relaxed);
        Ok(&self.state.records[slot])
    }

    /// Records a use of each of `ids` that is held (as [`get`](Self::get) does); returns how
    /// many.
    pub fn touch(&mut self, ids: &[RecordId]) -> usize {
        let held: Vec<RecordId> = ids.iter().copied().filter(|&id| self.state.slot(id).is_some()).collect();
        let n = held.len();
        if n > 0 {
            let at = self.clock.now();
            self.apply(Op::Touch { ids: held, at });
        }
        n
    }

    /// The ids of the records named `name` (trimmed), oldest first.
    pub fn find_by_name(&self, name: &str) -> Vec<RecordId> {
        let mut ids = self.state.by_name.get(name.trim()).cloned().unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// A new learned record with a fresh id made now (not stored yet).
    pub fn new_record(&mut self, name: &str, category: MathCategory, domain: &str) -> Result<MathRecord> {
        let now = self.clock.now();
        MathRecord::new(self.ids.next_id(now), name, category, domain, now)
    }

    /// Stores `entry` and runs the capture callbacks. Errors (nothing changes): an invalid
    /// record, an id already held (`Duplicate`), a full store ([`Error::Full`]), a built-in
    /// offered from outside ([`Error::BuiltIn`]: built-ins come only from the seeding).
    pub fn insert(&mut self, entry: MathEntry) -> Result<RecordId> {
        let _s = tracing::debug_span!("ag_insert").entered();
        entry.validate()?;
        let id = entry.id();
        if self.state.slot(id).is_some() {
            return Err(Error::Core(maxim_core::Error::Duplicate { id }));
        }
        if entry.is_built_in() {
            return Err(Error::BuiltIn { id });
        }
        if self.state.records.len() >= self.config.max_records {
            tracing::warn!(max = self.config.max_records, "angular gyrus full: record refused");
            return Err(Error::Full { max: self.config.max_records });
        }
        self.ids.observe(id);
        self.journal_and_apply(Op::Insert { entry })?;
        let slot = self.state.slot(id).expect("just inserted");
        self.callbacks.fire_capture(id, &self.state.records[slot]);
        Ok(id)
    }

    /// Replaces the full record with `record.meta.id` (same id; a built-in may not be
    /// replaced). Its access history is kept from the held record.
    pub fn replace(&mut self, mut record: MathRecord) -> Result<()> {
        let id = record.meta.id;
        let held = self.state.record(id).ok_or_else(|| Error::not_found(id))?;
        if held.is_built_in() || record.origin == Origin::BuiltIn {
            return Err(Error::BuiltIn { id });
        }
        record.validate()?;
        let old = held.meta();
        record.meta.created_at = old.created_at;
        record.meta.accessed_at = old.accessed_at;
        record.meta.access_count = old.access_count;
        self.journal_and_apply(Op::Replace { entry: MathEntry::Full(record) })
    }

    /// Removes record `id` from the records, the indexes and the graph, then runs the deletion
    /// callbacks. Errors: unknown (`NotFound`), built-in ([`Error::BuiltIn`]).
    pub fn remove_record(&mut self, id: RecordId) -> Result<MathEntry> {
        let _s = tracing::debug_span!("ag_remove", %id).entered();
        let slot = self.state.slot(id).ok_or_else(|| Error::not_found(id))?;
        if self.state.records[slot].is_built_in() {
            return Err(Error::BuiltIn { id });
        }
        let entry = self.state.records[slot].clone();
        self.journal_and_apply(Op::Remove { id })?;
        self.callbacks.fire_delete(id);
        Ok(entry)
    }

    /// Associates `a` and `b` by `relation` with `weight` in `[0, 1]`, in both directions
    /// (again: the weight is replaced). Errors: an unknown id, a self-link, a bad weight.
    pub fn link(&mut self, a: RecordId, b: RecordId, relation: MathRelation, weight: f64) -> Result<()> {
        for id in [a, b] {
            if self.state.slot(id).is_none() {
                return Err(Error::not_found(id));
            }
        }
        if a == b {
            return Err(Error::Core(maxim_core::Error::invalid(
                "link",
                "a record cannot be linked to itself",
            )));
        }
        check_unit("weight", weight)?;
        self.journal_and_apply(Op::Link { a, b, relation, weight })
    }

    /// The records associated with `a` (either direction), with relation and weight, sorted
    /// by id.
    pub fn links_of(&self, a: RecordId) -> Vec<(RecordId, MathRelation, f64)> {
        let mut out: Vec<(RecordId, MathRelation, f64)> = self
            .state
            .graph
            .outgoing(a)
            .filter_map(|e| Some((e.target, MathRelation::from_label(e.relation()?)?, e.weight)))
            .collect();
        out.sort_unstable_by(|x, y| (x.0, x.1.as_str()).cmp(&(y.0, y.1.as_str())));
        out
    }

    /// Up to `limit` records matching `filter`, most accessed first, then most confident,
    /// then oldest id. No access is recorded (see [`recall_touching`](Self::recall_touching)).
    pub fn recall_records(&self, filter: &MathFilter, limit: usize) -> Vec<&MathEntry> {
        let _s = tracing::debug_span!("ag_recall", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        if limit == 0 {
            return Vec::new();
        }
        let mut found: Vec<&MathEntry> = match self.state.candidates(filter) {
            Some(ids) => {
                ids.iter().filter_map(|&id| self.state.record(id)).filter(|e| filter.matches(e)).collect()
            }
            None => self.state.records.iter().filter(|e| filter.matches(e)).collect(),
        };
        let key = |e: &&MathEntry| (std::cmp::Reverse(e.meta().access_count), e.id());
        found.sort_unstable_by(|a, b| {
            key(a).0.cmp(&key(b).0).then(b.confidence().total_cmp(&a.confidence())).then(a.id().cmp(&b.id()))
        });
        found.truncate(limit);
        found
    }

    /// [`recall_records`](Self::recall_records), recording an access to each record returned
    /// (the original's recall touches).
    pub fn recall_touching(&mut self, filter: &MathFilter, limit: usize) -> Vec<&MathEntry> {
        let ids: Vec<RecordId> = self.recall_records(filter, limit).iter().map(|e| e.id()).collect();
        self.touch(&ids);
        ids.iter().filter_map(|&id| self.state.record(id)).collect()
    }

    /// Spreading activation from `seeds` over the associations (both directions, decay 0.5,
    /// stop below 0.01, depth 3 by default): up to `limit` records with their activation,
    /// strongest first, seeds excluded. No access is recorded.
    pub fn associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&MathEntry, f64)> {
        let _s = tracing::debug_span!("ag_recall_associated", n_seeds = seeds.len(), limit).entered();
        if limit == 0 {
            return Vec::new();
        }
        let act = self.state.graph.spread(seeds, &self.config.activation);
        act.ranked(Some(limit)).into_iter().filter_map(|(id, a)| Some((self.state.record(id)?, a))).collect()
    }

    /// [`associated`](Self::associated), recording an access to each record returned (the
    /// original's `recall_associated` touches).
    pub fn recall_associated_touching(&mut self, seeds: &[RecordId], limit: usize) -> Vec<(&MathEntry, f64)> {
        let found: Vec<(RecordId, f64)> =
            self.associated(seeds, limit).iter().map(|(e, a)| (e.id(), *a)).collect();
        let ids: Vec<RecordId> = found.iter().map(|(id, _)| *id).collect();
        self.touch(&ids);
        found.into_iter().filter_map(|(id, a)| Some((self.state.record(id)?, a))).collect()
    }

    /// The associative graph.
    pub fn math_graph(&self) -> &Graph {
        &self.state.graph
    }

    /// Applies one validated operation. Never fails: every check was made when the operation
    /// was built (a journal replays operations that were checked when first applied).
    pub(crate) fn apply(&mut self, op: Op) {
        match op {
            Op::Insert { entry } => {
                if self.state.slot(entry.id()).is_none() {
                    self.ids.observe(entry.id());
                    if !entry.is_built_in() {
                        self.state.counters.total_stores += 1;
                    }
                    self.state.push(entry);
                }
            }
            Op::Replace { entry } => {
                if self.state.replace(entry) {
                    self.state.counters.replacements += 1;
                }
            }
            Op::Remove { id } => {
                if let Some(slot) = self.state.slot(id) {
                    self.state.take(slot);
                    self.state.counters.removals += 1;
                }
            }
            Op::Consolidate { compressed, removed } => {
                for c in compressed {
                    if self.state.replace(MathEntry::Compressed(c)) {
                        self.state.counters.compressions += 1;
                    }
                }
                for id in removed {
                    if let Some(slot) = self.state.slot(id) {
                        self.state.take(slot);
                        self.state.counters.removals += 1;
                    }
                }
                self.state.counters.consolidations += 1;
            }
            Op::Touch { ids, at } => {
                let params = self.config.trace;
                for id in ids {
                    if let Some(slot) = self.state.slot(id) {
                        let meta = self.state.records[slot].meta_mut();
                        meta.touch(at);
                        // A use reinforces the trace; a firmware trace (a built-in) refuses it.
                        let _ = meta.trace.reinforce(at, &params);
                    }
                }
            }
            Op::Link { a, b, relation, weight } => {
                if self.state.slot(a).is_none() || self.state.slot(b).is_none() {
                    return;
                }
                self.state.counters.links += 1;
                let meta = EdgeMetaRef::relation(relation.as_str());
                // Both ends are held and the weight was checked, so neither insert can fail.
                let _ = self.state.graph.add_edge_ref(a, b, EdgeKind::Associates, weight, meta);
                let _ = self.state.graph.add_edge_ref(b, a, EdgeKind::Associates, weight, meta);
            }
        }
    }
}

/// The id of built-in `name`: the same in every run and every store.
pub fn built_in_id(name: &str) -> RecordId {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    RecordId::from_parts(Timestamp::EPOCH, h)
}

/// A built-in: name, category, domain, verbal, code, value (constants).
type BuiltIn = (&'static str, MathCategory, &'static str, &'static str, &'static str, Option<f64>);

/// The built-ins of §6.2.
const BUILT_INS: [BuiltIn; 9] = [
    (
        "pi",
        MathCategory::Constant,
        "geometry",
        "ratio of a circle's circumference to its diameter",
        "std::f64::consts::PI",
        Some(std::f64::consts::PI),
    ),
    (
        "e",
        MathCategory::Constant,
        "calculus",
        "base of the natural logarithm",
        "std::f64::consts::E",
        Some(std::f64::consts::E),
    ),
    (
        "phi",
        MathCategory::Constant,
        "geometry",
        "golden ratio, (1 + sqrt 5) / 2",
        "(1.0 + 5f64.sqrt()) / 2.0",
        Some(1.618_033_988_749_895),
    ),
    (
        "mean",
        MathCategory::Method,
        "statistics",
        "arithmetic mean: the sum of the values divided by their count",
        "sum(x) / n",
        None,
    ),
    (
        "median",
        MathCategory::Method,
        "statistics",
        "middle value of the sorted values (mean of the two middle ones for an even count)",
        "sorted(x)[n / 2]",
        None,
    ),
    (
        "variance",
        MathCategory::Method,
        "statistics",
        "sample variance: the sum of squared deviations from the mean divided by n - 1",
        "sum((x - mean)^2) / (n - 1)",
        None,
    ),
    (
        "standard_deviation",
        MathCategory::Method,
        "statistics",
        "square root of the sample variance",
        "sqrt(variance(x))",
        None,
    ),
    (
        "linear_regression",
        MathCategory::Method,
        "statistics",
        "least squares line through the values against their index",
        "slope = Sxy / Sxx; intercept = mean(y) - slope * mean(x)",
        None,
    ),
    (
        "quadratic_fit",
        MathCategory::Method,
        "statistics",
        "least squares parabola through the values against their index",
        "solve the 3x3 normal equations",
        None,
    ),
];

/// The nine built-in records made `now`: long-term firmware traces from a built-in source.
fn built_ins(now: Timestamp) -> Result<Vec<MathEntry>> {
    BUILT_INS
        .iter()
        .map(|&(name, category, domain, verbal, code, value)| {
            let id = built_in_id(name);
            let mut meta = RecordMeta::new(id, now, Source::BuiltIn, 1.0, TraceKind::Firmware)?;
            meta.promote(now);
            let mut outputs = Map::new();
            if let Some(v) = value {
                outputs.insert("value", Value::Float(v));
            }
            check_name("name", name)?;
            Ok(MathEntry::Full(MathRecord {
                meta,
                name: name.to_owned(),
                category,
                domain: domain.to_owned(),
                verbal: verbal.to_owned(),
                code: code.to_owned(),
                inputs: Map::new(),
                outputs,
                origin: Origin::BuiltIn,
                confidence: 1.0,
                observation_count: 0,
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use maxim_core::ManualClock;

    fn layer() -> (ManualClock, AngularGyrus) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let ag = AngularGyrus::builder().clock(clock.shared()).id_seed(3).build().unwrap();
        (clock, ag)
    }

    #[test]
    fn the_layer_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<AngularGyrus>();
        assert_send_sync::<MathEntry>();
    }

    #[test]
    fn config_is_checked() {
        let mut bad = Vec::new();
        for f in [
            |c: &mut AngularGyrusConfig| c.max_records = 3,
            |c: &mut AngularGyrusConfig| c.retention_threshold = f64::NAN,
            |c: &mut AngularGyrusConfig| c.retention_threshold = 0.5,
            |c: &mut AngularGyrusConfig| c.compression_threshold = 1.5,
            |c: &mut AngularGyrusConfig| c.max_age_without_access = Duration::ZERO,
        ] {
            let mut c = AngularGyrusConfig::default();
            f(&mut c);
            bad.push(c);
        }
        for config in bad {
            assert!(AngularGyrus::builder().config(config.clone()).build().is_err(), "{config:?}");
        }
    }

    #[test]
    fn slots_and_indexes_stay_aligned_through_removals() {
        let (_clock, mut ag) = layer();
        let ids: Vec<RecordId> = (0..20)
            .map(|j| {
                let r = ag
                    .new_record(
                        &format!("fact {j}"),
                        MathCategory::Fact,
                        if j % 2 == 0 { "even" } else { "odd" },
                    )
                    .unwrap();
                ag.insert(r.into()).unwrap()
            })
            .collect();
        for &id in ids.iter().step_by(3) {
            ag.remove_record(id).unwrap();
        }
        for (slot, record) in ag.state.records.iter().enumerate() {
            assert_eq!(ag.state.slot(record.id()), Some(slot));
            assert!(ag.state.by_name[record.name()].contains(&record.id()));
            assert!(ag.state.by_category[record.category().slot()].contains(&record.id()));
        }
        let listed: usize = ag.state.by_category.iter().map(Vec::len).sum();
        assert_eq!(listed, ag.len_records());
        assert_eq!(ag.state.graph.node_count(), ag.len_records());
        assert_eq!(ag.recall_records(&MathFilter::new().domain("even"), 100).len(), 6);
    }

    #[test]
    fn built_in_ids_are_stable_and_distinct() {
        let ids: std::collections::BTreeSet<RecordId> = BUILT_INS.iter().map(|b| built_in_id(b.0)).collect();
        assert_eq!(ids.len(), 9);
        assert_eq!(built_in_id("pi"), built_in_id("pi"));
    }

    #[test]
    fn operations_replay_exactly_after_a_round_trip_through_bytes() {
        let (clock, mut ag) = layer();
        let mut ops = Vec::new();
        let mut ids = Vec::new();
        for j in 0..4 {
            let mut r = ag.new_record(&format!("r{j}"), MathCategory::Fact, "replay").unwrap();
            r.inputs.insert("x", Value::Float(f64::from(j) / 3.0));
            ids.push(r.meta.id);
            ops.push(Op::Insert { entry: r.into() });
        }
        ops.push(Op::Link { a: ids[0], b: ids[1], relation: MathRelation::CorrelatesWith, weight: 0.7 });
        ops.push(Op::Touch { ids: vec![ids[2], ids[3]], at: clock.now() + days(1) });
        let mut changed = match &ops[1] {
            Op::Insert { entry: MathEntry::Full(r) } => r.clone(),
            _ => unreachable!("the second op inserts a full record"),
        };
        changed.confidence = 0.25;
        ops.push(Op::Replace { entry: MathEntry::Compressed(changed.compress(2)) });
        ops.push(Op::Remove { id: ids[3] });
        let bytes = postcard::to_stdvec(&ops).unwrap();
        let decoded: Vec<Op> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, ops);
        let (_c, mut replayed) = layer();
        for op in ops {
            ag.apply(op);
        }
        for op in decoded {
            replayed.apply(op);
        }
        let mut a: Vec<&MathEntry> = ag.state.records.iter().collect();
        let mut b: Vec<&MathEntry> = replayed.state.records.iter().collect();
        a.sort_by_key(|e| e.id());
        b.sort_by_key(|e| e.id());
        assert_eq!(a, b);
        assert_eq!(ag.links_of(ids[0]), replayed.links_of(ids[0]));
        assert_eq!(ag.recall_records(&MathFilter::new().domain("replay"), 10).len(), 3);
        assert!(ag.record(ids[1]).unwrap().is_compressed());
    }

    #[test]
    fn counters_are_read_and_written_by_the_same_names() {
        let mut counters = Counters::default();
        let names: Vec<&str> = counters.to_pairs().into_iter().map(|(n, _)| n).collect();
        for (i, name) in names.iter().enumerate() {
            counters.set(name, i as u64 + 1);
        }
        counters.set("no_such_counter", 99);
        assert!(counters.to_pairs().iter().enumerate().all(|(i, &(_, v))| v == i as u64 + 1));
    }
}
