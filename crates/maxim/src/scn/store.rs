//! [`Scn`]: the store of temporal bins, its [`ScnConfig`] and [`ScnBuilder`], the mutations
//! (as [`Op`]s) and the queries.
//!
//! # Layout
//!
//! Every registered id gets a dense `u32` slot (one `FxHashMap` lookup) holding its time,
//! signature and significance; freed slots are reused. The 47 bins (24 hours, 7 weekdays,
//! 4 weeks of the month, 12 months) are flat vectors of (slot, significance), oldest first,
//! so a registration appends and an eviction scans at most the capacity (200) in one
//! cache-friendly run. A 24 × 7 table counts the ids of every (hour, weekday) cluster over the
//! whole map, so [`Scn::cluster_size`] is O(1).
//!
//! # Bins
//!
//! A bin holds at most [`ScnConfig::bin_capacity`] ids, newest first. When it is full, the
//! least significant entry of its older half (from the oldest down to position `len/2`
//! counted from the newest, exclusive; among equals the oldest) is evicted **only if** the
//! newcomer is more significant; otherwise the newcomer is left out of that bin (it stays in
//! the map and in its other bins). An id is registered once: registering it again is
//! [`maxim_core::Error::Duplicate`].

use std::collections::BTreeMap;

use maxim_core::journal::{StoreDir, SyncPolicy};
use maxim_core::ownership::FileClaims;
use maxim_core::{RecordId, SharedClock, SystemClock, Timestamp};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::Result;
use super::calendar::{Rhythm, TemporalSignature, TimeZone};
use super::oscillator::{Oscillator, OscillatorConfig};

/// Bins of all four rhythms together (24 + 7 + 4 + 12).
pub(crate) const N_BINS: usize = 47;
/// Largest bin capacity a configuration may ask for.
pub const MAX_BIN_CAPACITY: usize = 1 << 20;

/// Position of the first bin of `rhythm` in the flat bin table.
pub(crate) const fn bin_base(rhythm: Rhythm) -> usize {
    match rhythm {
        Rhythm::Circadian => 0,
        Rhythm::Weekly => 24,
        Rhythm::Monthly => 31,
        Rhythm::Annual => 35,
    }
}

/// Settings of an [`Scn`]: numbers and flags only; set fields by assignment on a default.
///
/// ```
/// use maxim::scn::ScnConfig;
/// let mut config = ScnConfig::default();
/// assert_eq!(config.bin_capacity, 200);
/// config.bin_capacity = 2; // its older half would be empty: nothing could ever be evicted
/// assert!(config.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScnConfig {
    /// Most ids one bin holds, 3 to 2^20 (default 200).
    pub bin_capacity: usize,
    /// Ids a bin needs to count as rhythmic ([`Scn::is_rhythmic_bin`]; default 5).
    pub rhythmic_min: usize,
    /// An hour bin with fewer ids than this is quiet ([`Scn::threshold_adjustment`]; default 5).
    pub quiet_below: usize,
    /// An hour bin with more ids than this is busy (default 50).
    pub busy_above: usize,
    /// Threshold factor of a quiet hour, finite and > 0 (default 1.2).
    pub quiet_adjustment: f64,
    /// Threshold factor of a busy hour, finite and > 0 (default 0.9).
    pub busy_adjustment: f64,
    /// Whether registrations feed the [`Oscillator`] (default true).
    pub oscillator_enabled: bool,
    /// The oscillator's settings.
    pub oscillator: OscillatorConfig,
}

impl Default for ScnConfig {
    fn default() -> Self {
        Self {
            bin_capacity: 200,
            rhythmic_min: 5,
            quiet_below: 5,
            busy_above: 50,
            quiet_adjustment: 1.2,
            busy_adjustment: 0.9,
            oscillator_enabled: true,
            oscillator: OscillatorConfig::default(),
        }
    }
}

impl ScnConfig {
    /// Checks every setting: the capacity between 3 (below, the older half of a full bin is
    /// empty) and 2^20, `quiet_below <= busy_above`, the factors finite and positive, and the
    /// oscillator's settings.
    pub fn validate(&self) -> Result<()> {
        let out = |field, value: f64, expected| Err(maxim_core::Error::OutOfRange { field, value, expected });
        if !(3..=MAX_BIN_CAPACITY).contains(&self.bin_capacity) {
            return out("bin_capacity", self.bin_capacity as f64, "between 3 and 2^20");
        }
        if self.quiet_below > self.busy_above {
            return out("quiet_below", self.quiet_below as f64, "at most busy_above");
        }
        for (field, v) in
            [("quiet_adjustment", self.quiet_adjustment), ("busy_adjustment", self.busy_adjustment)]
        {
            if !(v.is_finite() && v > 0.0) {
                return out(field, v, "a finite number > 0");
            }
        }
        self.oscillator.validate()
    }
}

/// Assembles an [`Scn`].
///
/// ```
/// use maxim::maxim_core::{ManualClock, Timestamp};
/// use maxim::scn::{Scn, TimeZone};
/// let clock = ManualClock::new(Timestamp::from_secs(0));
/// let scn = Scn::builder().clock(clock.shared()).time_zone(TimeZone::from_offset_secs(3600)?).build()?;
/// assert_eq!(scn.time_zone().offset_secs(), 3600);
/// # Ok::<(), maxim::maxim_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScnBuilder {
    config: ScnConfig,
    clock: Option<SharedClock>,
    time_zone: TimeZone,
    sync_policy: SyncPolicy,
}

impl ScnBuilder {
    /// The settings (default [`ScnConfig::default`]).
    pub fn config(&mut self, config: ScnConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock that stamps registrations (default the system clock).
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// The time zone signatures are computed in (default UTC; never the machine's).
    pub fn time_zone(&mut self, tz: TimeZone) -> &mut Self {
        self.time_zone = tz;
        self
    }

    /// When journaled writes reach stable storage, for a store opened on a directory
    /// (default [`SyncPolicy::Interval`] of one second).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// An empty store in memory; fails when the settings are invalid.
    pub fn build(&self) -> Result<Scn> {
        self.config.validate()?;
        Ok(Scn {
            oscillator: Oscillator::new(self.config.oscillator.clone())?,
            config: self.config.clone(),
            clock: self.clock.clone().unwrap_or_else(SystemClock::shared),
            tz: self.time_zone,
            slots: Vec::new(),
            free: Vec::new(),
            index: FxHashMap::default(),
            bins: std::array::from_fn(|_| Vec::new()),
            clusters: [0; 168],
            next_seq: 0,
            counters: Counters::default(),
            claims: FileClaims::new(),
            loaded_journal_seq: 0,
            journal: None,
        })
    }

    /// The store opened on the directory `dir` (created if missing): the snapshot `scn.snap`
    /// (or its backup) loaded and the journal replayed, every later write journaled before it
    /// returns. Errors: the settings, another open store holding the directory
    /// ([`maxim_core::Error::Locked`]), or damage the snapshot's backup does not cover. See
    /// [`crate::scn::journal`].
    pub fn open(&self, dir: impl AsRef<std::path::Path>) -> Result<Scn> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }
}

/// One mutation of the store, with everything resolved: what the journal records and
/// replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// Register `id`, which happened at `at`, with a significance in `[0, 1]`.
    Register {
        /// The id.
        id: RecordId,
        /// When the event happened (its signature is computed from it).
        at: Timestamp,
        /// Its significance, finite in `[0, 1]`.
        significance: f64,
        /// When it was registered (the clock's time).
        registered_at: Timestamp,
    },
    /// Remove `id` from every bin and the map.
    Remove {
        /// The id.
        id: RecordId,
    },
    /// An event of `kind` happened at `at` (per-kind phase tracking).
    ObserveKind {
        /// The event kind.
        kind: String,
        /// When.
        at: Timestamp,
    },
}

/// A bin that holds at least some number of ids ([`Scn::find_rhythmic_patterns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RhythmicBin {
    /// The rhythm.
    pub rhythm: Rhythm,
    /// The bin (hour, weekday, week of month or month).
    pub bin: u8,
    /// Ids it holds.
    pub count: usize,
}

/// Bins to intersect ([`Scn::query_intersection`]); `None` leaves a rhythm free.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeQuery {
    /// Hour of the day, 0–23.
    pub hour: Option<u8>,
    /// Day of the week, 0–6, Monday = 0.
    pub weekday: Option<u8>,
    /// Week of the month, 0–3.
    pub week_of_month: Option<u8>,
    /// Month, 0–11.
    pub month: Option<u8>,
}

impl TimeQuery {
    fn bins(self) -> [(Rhythm, Option<u8>); 4] {
        [
            (Rhythm::Circadian, self.hour),
            (Rhythm::Weekly, self.weekday),
            (Rhythm::Monthly, self.week_of_month),
            (Rhythm::Annual, self.month),
        ]
    }
}

/// Counters and sizes of an [`Scn`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScnStats {
    /// Ids in the signature map.
    pub records: usize,
    /// Entries over all 47 bins.
    pub bin_entries: usize,
    /// Registrations since the store began (saved with it).
    pub registered: u64,
    /// Removals of held ids.
    pub removed: u64,
    /// Bin entries evicted by a more significant newcomer.
    pub evicted: u64,
    /// Newcomers left out of a full bin.
    pub dropped: u64,
    /// Event-kind observations.
    pub kind_observations: u64,
    /// Events the oscillator has seen.
    pub oscillator_observations: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) registered: u64,
    pub(crate) removed: u64,
    pub(crate) evicted: u64,
    pub(crate) dropped: u64,
    pub(crate) kind_observations: u64,
}

impl Counters {
    pub(crate) const NAMES: [&'static str; 5] =
        ["registered", "removed", "evicted", "dropped", "kind_observations"];

    pub(crate) fn values(self) -> [u64; 5] {
        [self.registered, self.removed, self.evicted, self.dropped, self.kind_observations]
    }

    pub(crate) fn set(&mut self, name: &str, value: u64) {
        match name {
            "registered" => self.registered = value,
            "removed" => self.removed = value,
            "evicted" => self.evicted = value,
            "dropped" => self.dropped = value,
            "kind_observations" => self.kind_observations = value,
            _ => {}
        }
    }
}

/// A registered id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub(crate) id: RecordId,
    pub(crate) at: Timestamp,
    pub(crate) registered_at: Timestamp,
    pub(crate) significance: f64,
    /// Registration order.
    pub(crate) seq: u64,
    pub(crate) sig: TemporalSignature,
    pub(crate) live: bool,
}

/// One entry of a bin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Entry {
    pub(crate) slot: u32,
    pub(crate) significance: f64,
}

/// The suprachiasmatic nucleus: temporal signatures, the four rhythm indices and the
/// oscillator (see the [module docs](self)).
pub struct Scn {
    pub(crate) config: ScnConfig,
    pub(crate) clock: SharedClock,
    pub(crate) tz: TimeZone,
    pub(crate) slots: Vec<Slot>,
    pub(crate) free: Vec<u32>,
    pub(crate) index: FxHashMap<RecordId, u32>,
    /// Oldest first.
    pub(crate) bins: [Vec<Entry>; N_BINS],
    pub(crate) clusters: [u32; 168],
    pub(crate) oscillator: Oscillator,
    pub(crate) next_seq: u64,
    pub(crate) counters: Counters,
    pub(crate) claims: FileClaims,
    pub(crate) loaded_journal_seq: u64,
    pub(crate) journal: Option<StoreDir<Op>>,
}

impl std::fmt::Debug for Scn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scn")
            .field("time_zone", &self.tz)
            .field("records", &self.index.len())
            .field("journaled", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

fn check_bin(rhythm: Rhythm, bin: u8) -> Result<()> {
    if bin >= rhythm.bins() {
        return Err(maxim_core::Error::OutOfRange {
            field: rhythm.as_str(),
            value: f64::from(bin),
            expected: match rhythm {
                Rhythm::Circadian => "an hour in 0..=23",
                Rhythm::Weekly => "a weekday in 0..=6",
                Rhythm::Monthly => "a week of the month in 0..=3",
                Rhythm::Annual => "a month in 0..=11",
            },
        });
    }
    Ok(())
}

impl Scn {
    /// A builder with the default settings, the system clock and UTC.
    pub fn builder() -> ScnBuilder {
        ScnBuilder {
            config: ScnConfig::default(),
            clock: None,
            time_zone: TimeZone::UTC,
            sync_policy: SyncPolicy::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ScnConfig {
        &self.config
    }

    /// The time zone signatures are computed in.
    pub fn time_zone(&self) -> TimeZone {
        self.tz
    }

    /// The signature of `at` in the store's time zone.
    pub fn signature_at(&self, at: Timestamp) -> TemporalSignature {
        TemporalSignature::at(at, self.tz)
    }

    // ----- mutations ---------------------------------------------------------------------

    /// Registers `id`, an event that happened at `at`, with `significance` (finite, in
    /// `[0, 1]`; the original's default is 0.5): it joins the signature map, its four bins
    /// (as the [module docs](self) say) and feeds the oscillator. Returns its signature.
    /// Errors: a bad significance ([`maxim_core::Error::OutOfRange`]), an id already
    /// registered ([`maxim_core::Error::Duplicate`]), a journal that cannot be written.
    pub fn register(&mut self, id: RecordId, at: Timestamp, significance: f64) -> Result<TemporalSignature> {
        let _s = tracing::debug_span!("scn_register", %id).entered();
        let op = Op::Register { id, at, significance, registered_at: self.clock.now() };
        self.apply(op)?;
        Ok(self.slots[self.index[&id] as usize].sig)
    }

    /// Removes `id` from every bin and the map; false when it was not registered (nothing is
    /// journaled then). Errors: only a journal that cannot be written.
    pub fn remove(&mut self, id: RecordId) -> Result<bool> {
        let _s = tracing::debug_span!("scn_remove", %id).entered();
        if !self.index.contains_key(&id) {
            return Ok(false);
        }
        self.apply(Op::Remove { id })?;
        Ok(true)
    }

    /// Records that an event of `kind` (`tool:navigate`, ...) happened at `at`, for the
    /// oscillator's per-kind phase tracking ([`Oscillator::imminence`]). Errors: an empty
    /// kind or one over 256 bytes ([`maxim_core::Error::InvalidArgument`]).
    pub fn observe_kind(&mut self, kind: &str, at: Timestamp) -> Result<()> {
        let _s = tracing::debug_span!("scn_observe_kind").entered();
        self.apply(Op::ObserveKind { kind: kind.to_owned(), at })
    }

    /// Validates `op` as the direct calls do, journals it when the store is open on a
    /// directory, then applies it.
    pub fn apply(&mut self, op: Op) -> Result<()> {
        self.validate(&op)?;
        if let Some(journal) = &mut self.journal {
            journal.append(&op)?;
        }
        self.apply_valid(op);
        Ok(())
    }

    /// Checks `op` against the store.
    pub(crate) fn validate(&self, op: &Op) -> Result<()> {
        match op {
            Op::Register { id, significance, .. } => {
                maxim_core::check_unit("significance", *significance)?;
                if self.index.contains_key(id) {
                    return Err(maxim_core::Error::Duplicate { id: *id });
                }
                if self.index.len() >= u32::MAX as usize {
                    return Err(maxim_core::Error::invalid("register", "the store holds 2^32 - 1 ids"));
                }
            }
            Op::Remove { id } => {
                if !self.index.contains_key(id) {
                    return Err(maxim_core::Error::NotFound { id: *id });
                }
            }
            Op::ObserveKind { kind, .. } => {
                if kind.is_empty() || kind.len() > 256 {
                    return Err(maxim_core::Error::invalid("kind", "must be 1 to 256 bytes"));
                }
            }
        }
        Ok(())
    }

    /// Applies a validated op; cannot fail.
    pub(crate) fn apply_valid(&mut self, op: Op) {
        match op {
            Op::Register { id, at, significance, registered_at } => {
                let sig = TemporalSignature::at(at, self.tz);
                let seq = self.next_seq;
                self.next_seq += 1;
                let slot =
                    Slot { id, at, registered_at, significance: significance.abs(), seq, sig, live: true };
                let s = if let Some(s) = self.free.pop() {
                    self.slots[s as usize] = slot;
                    s
                } else {
                    self.slots.push(slot);
                    (self.slots.len() - 1) as u32
                };
                self.index.insert(id, s);
                for r in Rhythm::ALL {
                    self.insert_in_bin(
                        bin_base(r) + usize::from(sig.bin(r)),
                        Entry { slot: s, significance: slot.significance },
                    );
                }
                self.clusters[cluster_key(&sig)] += 1;
                if self.config.oscillator_enabled {
                    self.oscillator.observe(&sig, at);
                }
                self.counters.registered += 1;
            }
            Op::Remove { id } => {
                let Some(s) = self.index.remove(&id) else { return };
                let slot = &mut self.slots[s as usize];
                slot.live = false;
                let sig = slot.sig;
                for r in Rhythm::ALL {
                    let bin = &mut self.bins[bin_base(r) + usize::from(sig.bin(r))];
                    if let Some(pos) = bin.iter().position(|e| e.slot == s) {
                        bin.remove(pos);
                    }
                }
                self.clusters[cluster_key(&sig)] -= 1;
                self.free.push(s);
                self.counters.removed += 1;
            }
            Op::ObserveKind { kind, at } => {
                let sig = TemporalSignature::at(at, self.tz);
                self.oscillator.observe_kind(&kind, &sig);
                self.counters.kind_observations += 1;
            }
        }
    }

    /// Adds `entry` to the bin at `b` under the bounded-bin rule.
    fn insert_in_bin(&mut self, b: usize, entry: Entry) {
        let cap = self.config.bin_capacity;
        let bin = &mut self.bins[b];
        if bin.len() < cap {
            bin.push(entry);
            return;
        }
        // Newest-first positions (len/2, len-1] are oldest-first positions [0, len-1-len/2).
        let len = bin.len();
        let end = len - 1 - len / 2;
        let mut least: Option<usize> = None;
        for (j, e) in bin[..end].iter().enumerate() {
            if least.is_none_or(|l| e.significance < bin[l].significance) {
                least = Some(j);
            }
        }
        match least {
            Some(j) if entry.significance > bin[j].significance => {
                bin.remove(j);
                bin.push(entry);
                self.counters.evicted += 1;
            }
            _ => self.counters.dropped += 1,
        }
    }

    // ----- reads -------------------------------------------------------------------------

    /// Ids registered.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no id is registered.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether `id` is registered.
    pub fn contains(&self, id: RecordId) -> bool {
        self.index.contains_key(&id)
    }

    fn slot(&self, id: RecordId) -> Option<&Slot> {
        self.index.get(&id).map(|&s| &self.slots[s as usize])
    }

    /// The signature of `id`, `None` when it is not registered.
    pub fn signature(&self, id: RecordId) -> Option<&TemporalSignature> {
        self.slot(id).map(|s| &s.sig)
    }

    /// The time `id` happened at and its significance, `None` when it is not registered.
    pub fn registration(&self, id: RecordId) -> Option<(Timestamp, f64)> {
        self.slot(id).map(|s| (s.at, s.significance))
    }

    /// Every registered id, in registration order.
    pub fn ids(&self) -> Vec<RecordId> {
        let mut live: Vec<&Slot> = self.slots.iter().filter(|s| s.live).collect();
        live.sort_unstable_by_key(|s| s.seq);
        live.into_iter().map(|s| s.id).collect()
    }

    fn bin_ids(&self, b: usize) -> impl Iterator<Item = RecordId> + '_ {
        self.bins[b].iter().rev().map(|e| self.slots[e.slot as usize].id)
    }

    /// The ids of one bin, newest first. Errors: a bin out of range
    /// ([`maxim_core::Error::OutOfRange`]).
    pub fn query_bin(&self, rhythm: Rhythm, bin: u8) -> Result<Vec<RecordId>> {
        check_bin(rhythm, bin)?;
        Ok(self.bin_ids(bin_base(rhythm) + usize::from(bin)).collect())
    }

    /// Ids in the bin of `rhythm` (at most the capacity).
    pub fn bin_len(&self, rhythm: Rhythm, bin: u8) -> Result<usize> {
        check_bin(rhythm, bin)?;
        Ok(self.bins[bin_base(rhythm) + usize::from(bin)].len())
    }

    /// The ids of the hour bin `hour` (0–23), newest first.
    pub fn query_hour(&self, hour: u8) -> Result<Vec<RecordId>> {
        self.query_bin(Rhythm::Circadian, hour)
    }

    /// The ids of the day bin `weekday` (0–6, Monday = 0), newest first.
    pub fn query_day(&self, weekday: u8) -> Result<Vec<RecordId>> {
        self.query_bin(Rhythm::Weekly, weekday)
    }

    /// The ids of the week-of-month bin `week` (0–3), newest first.
    pub fn query_week_of_month(&self, week: u8) -> Result<Vec<RecordId>> {
        self.query_bin(Rhythm::Monthly, week)
    }

    /// The ids of the month bin `month` (0–11, January = 0), newest first.
    pub fn query_month(&self, month: u8) -> Result<Vec<RecordId>> {
        self.query_bin(Rhythm::Annual, month)
    }

    /// The ids of the hour bins within `tolerance` hours of `sig`'s hour, wrapping around
    /// midnight (a tolerance of 12 or more covers the day): its own hour first, then one
    /// hour before and after, then two, ...; each bin newest first.
    pub fn query_similar_time(&self, sig: &TemporalSignature, tolerance: u8) -> Vec<RecordId> {
        let mut out = Vec::new();
        self.for_each_similar(sig, tolerance, |id| out.push(id));
        out
    }

    /// [`query_similar_time`](Self::query_similar_time) without collecting: calls `f` with
    /// every id in the same order.
    pub fn for_each_similar(&self, sig: &TemporalSignature, tolerance: u8, mut f: impl FnMut(RecordId)) {
        let hour = i32::from(sig.hour());
        let tolerance = i32::from(tolerance.min(12));
        for d in 0..=tolerance {
            let before = (hour - d).rem_euclid(24);
            let after = (hour + d).rem_euclid(24);
            self.bin_ids(before as usize).for_each(&mut f);
            if after != before {
                self.bin_ids(after as usize).for_each(&mut f);
            }
        }
    }

    /// The ids held in every bin `query` names, newest first (in the order of the smallest
    /// named bin; the others are sorted once and searched, so the cost is about
    /// `n log n` for bins of `n`). Errors: a query that names no bin ([`maxim_core::Error::InvalidArgument`])
    /// or a bin out of range.
    pub fn query_intersection(&self, query: &TimeQuery) -> Result<Vec<RecordId>> {
        let _s = tracing::debug_span!("scn_query_intersection").entered();
        let mut named = Vec::with_capacity(4);
        for (r, bin) in query.bins() {
            if let Some(b) = bin {
                check_bin(r, b)?;
                named.push(bin_base(r) + usize::from(b));
            }
        }
        let Some(&smallest) = named.iter().min_by_key(|&&b| self.bins[b].len()) else {
            return Err(maxim_core::Error::invalid("query", "names no bin"));
        };
        // The other bins' slots, sorted for binary search.
        let others: Vec<Vec<u32>> = named
            .iter()
            .filter(|&&b| b != smallest)
            .map(|&b| {
                let mut slots: Vec<u32> = self.bins[b].iter().map(|e| e.slot).collect();
                slots.sort_unstable();
                slots
            })
            .collect();
        Ok(self.bins[smallest]
            .iter()
            .rev()
            .filter(|e| others.iter().all(|o| o.binary_search(&e.slot).is_ok()))
            .map(|e| self.slots[e.slot as usize].id)
            .collect())
    }

    /// The bins holding at least `min_occurrences` ids, most populated first (then by rhythm
    /// and bin).
    pub fn find_rhythmic_patterns(&self, min_occurrences: usize) -> Vec<RhythmicBin> {
        let mut out = Vec::new();
        for r in Rhythm::ALL {
            for bin in 0..r.bins() {
                let count = self.bins[bin_base(r) + usize::from(bin)].len();
                if count >= min_occurrences.max(1) {
                    out.push(RhythmicBin { rhythm: r, bin, count });
                }
            }
        }
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.rhythm.cmp(&b.rhythm)).then(a.bin.cmp(&b.bin)));
        out
    }

    /// The factor for significance thresholds at `hour`: 1.2 when its bin holds fewer than
    /// 5 ids (a quiet hour: be more selective), 0.9 above 50 (a busy hour), else 1.0 (the
    /// numbers are [`ScnConfig`]'s).
    pub fn threshold_adjustment(&self, hour: u8) -> Result<f64> {
        let n = self.bin_len(Rhythm::Circadian, hour)?;
        Ok(if n < self.config.quiet_below {
            self.config.quiet_adjustment
        } else if n > self.config.busy_above {
            self.config.busy_adjustment
        } else {
            1.0
        })
    }

    /// Every registered id by its (hour, weekday) cluster, each list in registration order,
    /// newest first. Built from the signature map, so bin evictions do not hide an id.
    pub fn clusters(&self) -> BTreeMap<(u8, u8), Vec<RecordId>> {
        let mut live: Vec<&Slot> = self.slots.iter().filter(|s| s.live).collect();
        live.sort_unstable_by_key(|s| std::cmp::Reverse(s.seq));
        let mut out: BTreeMap<(u8, u8), Vec<RecordId>> = BTreeMap::new();
        for s in live {
            out.entry((s.sig.hour(), s.sig.weekday())).or_default().push(s.id);
        }
        out
    }

    /// Ids registered in the (hour, weekday) cluster of `id`; `None` when it is not
    /// registered.
    pub fn cluster_size(&self, id: RecordId) -> Option<usize> {
        self.slot(id).map(|s| self.clusters[cluster_key(&s.sig)] as usize)
    }

    /// The (hour, weekday) cluster of `id` as a key `hour · 7 + weekday`; `None` when it is
    /// not registered.
    pub fn cluster_of(&self, id: RecordId) -> Option<u64> {
        self.slot(id).map(|s| cluster_key(&s.sig) as u64)
    }

    /// Ids in the hour bin of `id`; `None` when it is not registered.
    pub fn hour_bin_size(&self, id: RecordId) -> Option<usize> {
        self.slot(id).map(|s| self.bins[usize::from(s.sig.hour())].len())
    }

    /// Whether `id` is the only id of its (hour, weekday) cluster. Errors: an id not
    /// registered ([`maxim_core::Error::NotFound`]).
    pub fn is_sole_representative(&self, id: RecordId) -> Result<bool> {
        self.cluster_size(id).map(|n| n == 1).ok_or(maxim_core::Error::NotFound { id })
    }

    /// Whether the bin holds at least [`ScnConfig::rhythmic_min`] (5) ids.
    pub fn is_rhythmic_bin(&self, rhythm: Rhythm, bin: u8) -> Result<bool> {
        Ok(self.bin_len(rhythm, bin)? >= self.config.rhythmic_min)
    }

    /// The oscillator.
    pub fn oscillator(&self) -> &Oscillator {
        &self.oscillator
    }

    /// The oscillator's circadian coherence ([`Oscillator::phase_coherence`]).
    pub fn phase_coherence(&self) -> f64 {
        self.oscillator.phase_coherence()
    }

    /// How unusual `sig` is for the events registered ([`Oscillator::temporal_anomaly_score`]).
    pub fn temporal_anomaly_score(&self, sig: &TemporalSignature) -> f64 {
        self.oscillator.temporal_anomaly_score(sig)
    }

    /// How close `at` is to the usual time of day of `kind`, in the store's time zone
    /// ([`Oscillator::imminence`]; 0 below 3 observations of the kind).
    pub fn imminence(&self, kind: &str, at: Timestamp) -> f64 {
        self.oscillator.imminence(kind, &self.signature_at(at))
    }

    /// The event kinds whose imminence at `at` is at least `min`, most imminent first
    /// ([`Oscillator::anticipated_kinds`]).
    pub fn anticipated_kinds(&self, at: Timestamp, min: f64) -> Vec<(&str, f64)> {
        self.oscillator.anticipated_kinds(&self.signature_at(at), min)
    }

    /// Counters and sizes.
    pub fn stats(&self) -> ScnStats {
        ScnStats {
            records: self.index.len(),
            bin_entries: self.bins.iter().map(Vec::len).sum(),
            registered: self.counters.registered,
            removed: self.counters.removed,
            evicted: self.counters.evicted,
            dropped: self.counters.dropped,
            kind_observations: self.counters.kind_observations,
            oscillator_observations: self.oscillator.observations(),
        }
    }
}

/// The (hour, weekday) cluster of a signature as a position in the 24 × 7 table.
pub(crate) fn cluster_key(sig: &TemporalSignature) -> usize {
    usize::from(sig.hour()) * 7 + usize::from(sig.weekday())
}
