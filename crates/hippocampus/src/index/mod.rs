//! The context index (`spec/maxim-reference.md` §3.4): O(1) lookup of episodes by goal, tool,
//! success, mode, object and person.
//!
//! Keys are [`IndexKey`]s, written as the original wrote them (`goal:find mug`,
//! `tool:look`, `success:True`, `mode:observe`, `object:mug`, `person:Ana`). Inside the
//! layer each key is interned to a dense id and holds a *posting*: the slots of its
//! episodes, kept sorted by (timestamp, id), so "the newest ten with this goal" walks ten
//! entries from the end. Each slot keeps the ids of its keys (the reverse index), which
//! answers "does this episode have that key" in a few comparisons, cleans a removed
//! episode out of exactly its postings, and lets a multi-key recall walk the smallest
//! posting and check the others per candidate. A third structure, the *pair index*, lists
//! for every pair of object/person keys the episodes that hold both: association formation
//! and similarity recall find every episode sharing two or more objects with a new one from
//! it, without merging the large single-object postings.
//!
//! The pair index costs one entry per pair of an episode's object and person keys, which
//! grows with the square of their number; so only episodes with at most
//! [`PAIR_KEYS_MAX`] (8) such keys enter it, at most 28 entries each. A *wide* episode, with
//! more, is listed instead in a per-key list of wide episodes, one entry per key, and is
//! found from those lists. A query with many keys (a wide episode's own capture, a broad
//! `recall_similar`) costs as many pair lookups as it has pairs, so when the postings of its
//! keys are shorter than that, it counts shared keys along the postings instead. Both ways
//! give the same answer; the choice only bounds the work: linear in an episode's names at
//! capture, and at most the smaller of the two costs per query. The number of names an
//! episode may carry is bounded too ([`MAX_NAMES`](crate::episode::MAX_NAMES)).
//!
//! The keys themselves ([`IndexKey`], [`KeyKind`], [`IndexedKeys`]) are in a `key` submodule.

use maxim_core::RecordId;
use rustc_hash::FxHashMap;

/// Most object and person keys an episode may have and still enter the pair index (28
/// pairs); a *wide* episode with more is found through per-key lists instead (see the
/// [module docs](self)).
pub const PAIR_KEYS_MAX: usize = 8;

mod key;

pub(crate) use key::success_text;
pub use key::{IndexKey, IndexedKeys, KeyKind};

/// A slot: the dense position of a record inside the layer.
pub(crate) type Slot = u32;
/// A dense key id.
pub(crate) type KeyId = u32;

/// The ids of a slot's keys: inline up to seven, on the heap beyond.
#[derive(Debug, Clone)]
pub(crate) enum KeyList {
    Inline { len: u8, ids: [KeyId; 7] },
    Heap(Box<[KeyId]>),
}

impl Default for KeyList {
    fn default() -> Self {
        Self::Inline { len: 0, ids: [0; 7] }
    }
}

impl KeyList {
    fn from_slice(ids: &[KeyId]) -> Self {
        if ids.len() <= 7 {
            let mut inline = [0; 7];
            inline[..ids.len()].copy_from_slice(ids);
            Self::Inline { len: ids.len() as u8, ids: inline }
        } else {
            Self::Heap(ids.into())
        }
    }

    pub(crate) fn as_slice(&self) -> &[KeyId] {
        match self {
            Self::Inline { len, ids } => &ids[..usize::from(*len)],
            Self::Heap(ids) => ids,
        }
    }
}

/// The order of slots in postings: by timestamp, then by id.
#[derive(Clone, Copy)]
pub(crate) struct SlotOrder<'a> {
    pub(crate) ts: &'a [i64],
    pub(crate) ids: &'a [RecordId],
}

impl SlotOrder<'_> {
    #[inline]
    pub(crate) fn key(&self, s: Slot) -> (i64, RecordId) {
        (self.ts[s as usize], self.ids[s as usize])
    }

    /// The key of `s`, or `None` when `s` is past the table (for audits of damaged state).
    fn try_key(&self, s: Slot) -> Option<(i64, RecordId)> {
        Some((*self.ts.get(s as usize)?, *self.ids.get(s as usize)?))
    }
}

#[derive(Debug, Clone)]
struct KeyEntry {
    kind: KeyKind,
    text: Box<str>,
    postings: Vec<Slot>,
    /// The wide slots (more than [`PAIR_KEYS_MAX`] associative keys) holding this key, by
    /// slot number; empty for the kinds that are not associative.
    wide: Vec<Slot>,
    live: bool,
}

/// The context index itself; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextIndex {
    by_text: [FxHashMap<Box<str>, KeyId>; 6],
    keys: Vec<KeyEntry>,
    free_keys: Vec<KeyId>,
    n_live: usize,
    slot_keys: Vec<KeyList>,
    pairs: FxHashMap<(KeyId, KeyId), PairSlots>,
    order: Vec<Slot>,
    /// A buffer [`insert`](Self::insert) reuses for the key ids of a slot.
    scratch: Vec<KeyId>,
}

/// A candidate of [`ContextIndex::similar`]: a slot and the number of keys it shares.
pub(crate) type Scored = (Slot, u32);

/// Orders `best` by shared keys, most first, then newest first, and keeps the first `limit`.
fn keep_best(best: &mut Vec<Scored>, limit: usize, order: SlotOrder<'_>) {
    best.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| order.key(b.0).cmp(&order.key(a.0))));
    best.truncate(limit);
}

impl ContextIndex {
    /// Number of live keys.
    pub(crate) fn key_count(&self) -> usize {
        self.n_live
    }

    /// The id of the key `kind:text`, if it is live.
    #[inline]
    pub(crate) fn lookup(&self, kind: KeyKind, text: &str) -> Option<KeyId> {
        self.by_text[kind.slot()].get(text).copied()
    }

    /// The slots of key `k`, oldest first.
    #[inline]
    pub(crate) fn posting(&self, k: KeyId) -> &[Slot] {
        &self.keys[k as usize].postings
    }

    /// Every indexed slot, oldest first.
    #[inline]
    pub(crate) fn order(&self) -> &[Slot] {
        &self.order
    }

    /// The key ids of `slot`.
    #[inline]
    pub(crate) fn keys_of(&self, slot: Slot) -> &[KeyId] {
        self.slot_keys.get(slot as usize).map_or(&[], KeyList::as_slice)
    }

    /// Whether `slot` holds key `k`.
    #[inline]
    pub(crate) fn has_key(&self, slot: Slot, k: KeyId) -> bool {
        self.keys_of(slot).contains(&k)
    }

    /// The kind of key `k`.
    pub(crate) fn kind_of(&self, k: KeyId) -> KeyKind {
        self.keys[k as usize].kind
    }

    /// The text (after the colon) of key `k`.
    pub(crate) fn text_of(&self, k: KeyId) -> &str {
        &self.keys[k as usize].text
    }

    /// The live keys as `(id, kind, text)`, by id.
    pub(crate) fn live_keys(&self) -> impl Iterator<Item = (KeyId, KeyKind, &str)> + '_ {
        self.keys.iter().enumerate().filter(|(_, e)| e.live).map(|(i, e)| (i as KeyId, e.kind, &*e.text))
    }

    /// Indexes `slot` under `keys` (duplicates are ignored).
    pub(crate) fn insert(&mut self, slot: Slot, keys: &[(KeyKind, &str)], order: SlotOrder<'_>) {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        for &(kind, text) in keys {
            let k = self.intern(kind, text);
            if !ids.contains(&k) {
                ids.push(k);
            }
        }
        self.insert_ids(slot, &ids, order);
        self.scratch = ids;
    }

    /// Indexes `slot` under the live key ids `ids` (distinct).
    pub(crate) fn insert_ids(&mut self, slot: Slot, ids: &[KeyId], order: SlotOrder<'_>) {
        for &k in ids {
            insert_sorted(&mut self.keys[k as usize].postings, slot, order);
        }
        let si = slot as usize;
        if self.slot_keys.len() <= si {
            self.slot_keys.resize_with(si + 1, KeyList::default);
        }
        self.slot_keys[si] = KeyList::from_slice(ids);
        let keys = &mut self.keys;
        if is_wide(keys, ids) {
            for &k in ids {
                let entry = &mut keys[k as usize];
                if entry.kind.is_associative() {
                    let pos = entry.wide.partition_point(|&s| s < slot);
                    entry.wide.insert(pos, slot);
                }
            }
        } else {
            let pairs = &mut self.pairs;
            for_each_associative_pair(keys, ids, |p| match pairs.entry(p) {
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().push(slot),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(PairSlots::One(slot));
                }
            });
        }
        insert_sorted(&mut self.order, slot, order);
    }

    /// Removes `slot` from every posting, the pair index and the order, deleting keys left
    /// without episodes.
    pub(crate) fn remove(&mut self, slot: Slot, order: SlotOrder<'_>) {
        let ids = std::mem::take(&mut self.slot_keys[slot as usize]);
        let ids = ids.as_slice();
        for &k in ids {
            remove_sorted(&mut self.keys[k as usize].postings, slot, order);
        }
        if is_wide(&self.keys, ids) {
            for &k in ids {
                let wide = &mut self.keys[k as usize].wide;
                if let Ok(pos) = wide.binary_search(&slot) {
                    wide.remove(pos);
                }
            }
        } else {
            self.remove_pairs(slot, ids);
        }
        for &k in ids {
            if self.keys[k as usize].postings.is_empty() {
                self.delete_key(k);
            }
        }
        remove_sorted(&mut self.order, slot, order);
    }

    /// Removes every slot of `slots` (for which `dead[slot]` is true) in one pass per
    /// affected posting.
    pub(crate) fn remove_many(&mut self, slots: &[Slot], dead: &[bool]) {
        let mut affected = vec![false; self.keys.len()];
        for &s in slots {
            let ids = std::mem::take(&mut self.slot_keys[s as usize]);
            for &k in ids.as_slice() {
                affected[k as usize] = true;
            }
            if !is_wide(&self.keys, ids.as_slice()) {
                self.remove_pairs(s, ids.as_slice());
            }
        }
        for (k, hit) in affected.into_iter().enumerate() {
            if hit {
                let entry = &mut self.keys[k];
                entry.postings.retain(|&s| !dead[s as usize]);
                entry.wide.retain(|&s| !dead[s as usize]);
                if entry.postings.is_empty() {
                    self.delete_key(k as KeyId);
                }
            }
        }
        self.order.retain(|&s| !dead[s as usize]);
    }

    /// The slots sharing at least one of the associative keys `query` (distinct), each with
    /// the number of keys it shares, the best `limit` of them by (shared keys, timestamp, id)
    /// descending. `accept` filters candidates.
    ///
    /// Takes the cheaper of two exact ways (see the [module docs](self)): counting shared
    /// keys along the postings when they hold fewer entries than the query has pairs, else
    /// [`similar_by_pairs`](Self::similar_by_pairs).
    pub(crate) fn similar(
        &self,
        query: &[KeyId],
        limit: usize,
        order: SlotOrder<'_>,
        accept: impl Fn(Slot) -> bool,
    ) -> Vec<Scored> {
        if query.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n = query.len();
        let pair_cost =
            n * (n - 1) / 2 + query.iter().map(|&k| self.keys[k as usize].wide.len()).sum::<usize>();
        let count_cost: usize = query.iter().map(|&k| self.posting(k).len()).sum();
        if count_cost < pair_cost {
            self.similar_by_counting(query, limit, order, accept)
        } else {
            self.similar_by_pairs(query, limit, order, accept)
        }
    }

    /// [`similar`](Self::similar) by counting, for every slot of the query keys' postings,
    /// how many of them it holds.
    fn similar_by_counting(
        &self,
        query: &[KeyId],
        limit: usize,
        order: SlotOrder<'_>,
        accept: impl Fn(Slot) -> bool,
    ) -> Vec<Scored> {
        let mut counts: FxHashMap<Slot, u32> = FxHashMap::default();
        for &k in query {
            for &s in self.posting(k) {
                *counts.entry(s).or_insert(0) += 1;
            }
        }
        let mut best: Vec<Scored> = counts.into_iter().filter(|&(s, _)| accept(s)).collect();
        keep_best(&mut best, limit, order);
        best
    }

    /// [`similar`](Self::similar) through the pair index and the wide lists.
    ///
    /// Every narrow slot sharing two or more keys is in the pair index under one of the
    /// query's pairs, and every wide one is in the wide lists of the keys it shares, so the
    /// candidates sharing one key are only needed when fewer than `limit` share more; they
    /// are then taken newest first by merging the single-key postings from their ends, which
    /// stops as soon as `limit` are found.
    fn similar_by_pairs(
        &self,
        query: &[KeyId],
        limit: usize,
        order: SlotOrder<'_>,
        accept: impl Fn(Slot) -> bool,
    ) -> Vec<Scored> {
        // The shared keys are counted from the lists themselves, without reading each
        // candidate's keys (a cache miss per candidate in a large store): a narrow slot holding
        // `m` of the (distinct) query keys is listed under each of their `m (m - 1) / 2`
        // pairs, a wide one once per query key it holds.
        let mut high: Vec<Slot> = Vec::new();
        for_each_pair(query, |p| {
            if let Some(slots) = self.pairs.get(&p) {
                high.extend(slots.as_slice().iter().copied().filter(|&s| accept(s)));
            }
        });
        high.sort_unstable();
        let mut best: Vec<Scored> =
            high.chunk_by(|a, b| a == b).map(|run| (run[0], keys_for_pairs(run.len()))).collect();
        let mut wide: Vec<Slot> = Vec::new();
        for &k in query {
            wide.extend_from_slice(&self.keys[k as usize].wide);
        }
        if !wide.is_empty() {
            wide.sort_unstable();
            for run in wide.chunk_by(|a, b| a == b) {
                if run.len() >= 2 && accept(run[0]) {
                    best.push((run[0], run.len() as u32));
                }
            }
        }
        keep_best(&mut best, limit, order);
        if best.len() == limit {
            return best;
        }
        // Every accepted slot sharing two or more keys is in `best` now, so a slot of a
        // single-key posting that is not among them shares exactly one.
        let n_high = best.len();
        // Fill with the newest slots sharing exactly one key, walking each key's posting from
        // its end (`heads[i]` entries of key `i` are left; on the stack for small queries).
        let mut inline = [0usize; 16];
        let mut spilled = Vec::new();
        let heads: &mut [usize] = if query.len() <= inline.len() {
            &mut inline[..query.len()]
        } else {
            spilled.resize(query.len(), 0);
            &mut spilled
        };
        for (head, &k) in heads.iter_mut().zip(query) {
            *head = self.posting(k).len();
        }
        while best.len() < limit {
            let mut pick: Option<(usize, (i64, RecordId))> = None;
            for (i, &k) in query.iter().enumerate() {
                if heads[i] > 0 {
                    let key = order.key(self.posting(k)[heads[i] - 1]);
                    if pick.is_none_or(|(_, best_key)| key > best_key) {
                        pick = Some((i, key));
                    }
                }
            }
            let Some((i, _)) = pick else { break };
            heads[i] -= 1;
            let s = self.posting(query[i])[heads[i]];
            if accept(s) && !best[..n_high].iter().any(|&(h, _)| h == s) {
                best.push((s, 1));
            }
        }
        best
    }

    /// Drops everything.
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether every posting is sorted and lists only slots that list its key, every slot's
    /// keys list it back, the pair index matches the slots' keys, and the order lists exactly
    /// the slots `live` says are live. Returns the counts of entries found wrong.
    pub(crate) fn audit(&self, live: &[bool], order: SlotOrder<'_>) -> IndexAudit {
        let mut audit = IndexAudit::default();
        let is_live = |s: Slot| live.get(s as usize).copied().unwrap_or(false);
        for (k, entry) in self.keys.iter().enumerate() {
            if !entry.live {
                continue;
            }
            if entry.postings.is_empty() {
                audit.orphan_entries += 1;
            }
            if entry.postings.windows(2).any(|w| order.try_key(w[0]) >= order.try_key(w[1])) {
                audit.unsorted_postings += 1;
            }
            for &s in &entry.postings {
                if !is_live(s) || !self.has_key(s, k as KeyId) {
                    audit.orphan_entries += 1;
                }
            }
        }
        for (s, keys) in self.slot_keys.iter().enumerate() {
            if !is_live(s as Slot) {
                audit.orphan_entries += keys.as_slice().len();
                continue;
            }
            for &k in keys.as_slice() {
                let ok = self.keys.get(k as usize).is_some_and(|e| {
                    e.live
                        && e.postings
                            .binary_search_by(|&x| order.try_key(x).cmp(&order.try_key(s as Slot)))
                            .is_ok()
                });
                if !ok {
                    audit.missing_entries += 1;
                }
            }
            let assoc: Vec<KeyId> = keys
                .as_slice()
                .iter()
                .copied()
                .filter(|&k| self.keys.get(k as usize).is_some_and(|e| e.kind.is_associative()))
                .collect();
            if assoc.len() > PAIR_KEYS_MAX {
                for &k in &assoc {
                    if self.keys[k as usize].wide.binary_search(&(s as Slot)).is_err() {
                        audit.missing_entries += 1;
                    }
                }
            } else {
                for_each_pair(&assoc, |p| {
                    if !self.pairs.get(&p).is_some_and(|v| v.as_slice().contains(&(s as Slot))) {
                        audit.missing_entries += 1;
                    }
                });
            }
        }
        let slot_is_wide = |s: Slot| self.slot_keys.get(s as usize).is_some_and(|l| self.is_wide_slot(l));
        for (&(a, b), slots) in &self.pairs {
            for &s in slots.as_slice() {
                if !is_live(s) || !self.has_key(s, a) || !self.has_key(s, b) || slot_is_wide(s) {
                    audit.orphan_entries += 1;
                }
            }
        }
        for (k, entry) in self.keys.iter().enumerate() {
            if entry.wide.windows(2).any(|w| w[0] >= w[1]) {
                audit.unsorted_postings += 1;
            }
            for &s in &entry.wide {
                if !entry.live || !is_live(s) || !self.has_key(s, k as KeyId) || !slot_is_wide(s) {
                    audit.orphan_entries += 1;
                }
            }
        }
        let n_live = live.iter().filter(|&&l| l).count();
        if self.order.len() != n_live || self.order.iter().any(|&s| !is_live(s)) {
            audit.missing_entries += n_live.abs_diff(self.order.len()).max(1);
        }
        if self.order.windows(2).any(|w| order.try_key(w[0]) >= order.try_key(w[1])) {
            audit.unsorted_postings += 1;
        }
        audit
    }

    /// Whether the key list `l` makes its slot wide (with keys that may be damaged).
    fn is_wide_slot(&self, l: &KeyList) -> bool {
        l.as_slice()
            .iter()
            .filter(|&&k| self.keys.get(k as usize).is_some_and(|e| e.kind.is_associative()))
            .count()
            > PAIR_KEYS_MAX
    }

    #[cfg(test)]
    pub(crate) fn corrupt_for_test(&mut self, k: KeyId) {
        self.keys[k as usize].postings.push(u32::MAX - 1);
    }

    fn intern(&mut self, kind: KeyKind, text: &str) -> KeyId {
        if let Some(&k) = self.by_text[kind.slot()].get(text) {
            return k;
        }
        let entry = KeyEntry { kind, text: text.into(), postings: Vec::new(), wide: Vec::new(), live: true };
        let k = if let Some(k) = self.free_keys.pop() {
            self.keys[k as usize] = entry;
            k
        } else {
            self.keys.push(entry);
            (self.keys.len() - 1) as KeyId
        };
        self.by_text[kind.slot()].insert(text.into(), k);
        self.n_live += 1;
        k
    }

    /// Interns `kind:text` (for loading saved keys).
    pub(crate) fn intern_key(&mut self, kind: KeyKind, text: &str) -> KeyId {
        self.intern(kind, text)
    }

    fn delete_key(&mut self, k: KeyId) {
        let entry = &mut self.keys[k as usize];
        if !entry.live {
            return;
        }
        entry.live = false;
        entry.postings = Vec::new();
        entry.wide = Vec::new();
        let text = std::mem::take(&mut entry.text);
        self.by_text[entry.kind.slot()].remove(&text);
        self.free_keys.push(k);
        self.n_live -= 1;
    }

    /// Removes narrow `slot`, which holds `ids`, from the pair index.
    fn remove_pairs(&mut self, slot: Slot, ids: &[KeyId]) {
        let pairs = &mut self.pairs;
        for_each_associative_pair(&self.keys, ids, |p| {
            if pairs.get_mut(&p).is_some_and(|v| v.remove(slot)) {
                pairs.remove(&p);
            }
        });
    }
}

/// The slots of one pair of keys: most pairs hold one episode, which needs no allocation.
#[derive(Debug, Clone)]
enum PairSlots {
    One(Slot),
    Many(Vec<Slot>),
}

impl PairSlots {
    fn as_slice(&self) -> &[Slot] {
        match self {
            Self::One(s) => std::slice::from_ref(s),
            Self::Many(v) => v,
        }
    }

    fn push(&mut self, slot: Slot) {
        match self {
            Self::One(first) => *self = Self::Many(vec![*first, slot]),
            Self::Many(v) => v.push(slot),
        }
    }

    /// Removes `slot`; true when nothing is left.
    fn remove(&mut self, slot: Slot) -> bool {
        match self {
            Self::One(s) => *s == slot,
            Self::Many(v) => {
                if let Some(pos) = v.iter().position(|&s| s == slot) {
                    v.swap_remove(pos);
                }
                match v.len() {
                    0 => true,
                    1 => {
                        let only = v[0];
                        *self = Self::One(only);
                        false
                    }
                    _ => false,
                }
            }
        }
    }
}

/// What [`ContextIndex::audit`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IndexAudit {
    pub(crate) orphan_entries: usize,
    pub(crate) missing_entries: usize,
    pub(crate) unsorted_postings: usize,
}

/// Whether a slot holding `ids` is wide: more than [`PAIR_KEYS_MAX`] associative keys.
fn is_wide(keys: &[KeyEntry], ids: &[KeyId]) -> bool {
    ids.len() > PAIR_KEYS_MAX
        && ids.iter().filter(|&&k| keys[k as usize].kind.is_associative()).count() > PAIR_KEYS_MAX
}

/// Calls `f` with every unordered pair of the associative keys among `ids`, smaller id first.
fn for_each_associative_pair(keys: &[KeyEntry], ids: &[KeyId], mut f: impl FnMut((KeyId, KeyId))) {
    let assoc = |k: KeyId| keys[k as usize].kind.is_associative();
    for (i, &a) in ids.iter().enumerate() {
        if !assoc(a) {
            continue;
        }
        for &b in &ids[i + 1..] {
            if a != b && assoc(b) {
                f((a.min(b), a.max(b)));
            }
        }
    }
}

/// The number `m` of keys a narrow slot shares with a query when it is listed under
/// `pairs = m (m - 1) / 2` of the query's pairs.
fn keys_for_pairs(pairs: usize) -> u32 {
    let mut m = 2;
    while m * (m - 1) / 2 < pairs {
        m += 1;
    }
    m as u32
}

/// Calls `f` with every unordered pair of `ids`, smaller id first.
fn for_each_pair(ids: &[KeyId], mut f: impl FnMut((KeyId, KeyId))) {
    for (i, &a) in ids.iter().enumerate() {
        for &b in &ids[i + 1..] {
            if a != b {
                f((a.min(b), a.max(b)));
            }
        }
    }
}

/// Inserts `slot` into the sorted `v`; appending when it is the newest, as it nearly always is.
fn insert_sorted(v: &mut Vec<Slot>, slot: Slot, order: SlotOrder<'_>) {
    let key = order.key(slot);
    match v.last() {
        Some(&last) if order.key(last) > key => {
            let pos = v.partition_point(|&s| order.key(s) < key);
            v.insert(pos, slot);
        }
        _ => v.push(slot),
    }
}

/// Removes `slot` from the sorted `v` (searching linearly if the order was disturbed).
fn remove_sorted(v: &mut Vec<Slot>, slot: Slot, order: SlotOrder<'_>) {
    let key = order.key(slot);
    let pos = v.partition_point(|&s| order.key(s) < key);
    if v.get(pos) == Some(&slot) {
        v.remove(pos);
    } else if let Some(pos) = v.iter().position(|&s| s == slot) {
        v.remove(pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        ts: Vec<i64>,
        ids: Vec<RecordId>,
        index: ContextIndex,
        live: Vec<bool>,
    }

    impl Fixture {
        fn new() -> Self {
            Self { ts: Vec::new(), ids: Vec::new(), index: ContextIndex::default(), live: Vec::new() }
        }

        fn add(&mut self, ts: i64, keys: &[(KeyKind, &str)]) -> Slot {
            let s = self.ts.len() as Slot;
            self.ts.push(ts);
            self.ids.push(RecordId::from_u128(u128::from(s) + 1));
            self.live.push(true);
            let order = SlotOrder { ts: &self.ts, ids: &self.ids };
            self.index.insert(s, keys, order);
            s
        }

        fn order(&self) -> SlotOrder<'_> {
            SlotOrder { ts: &self.ts, ids: &self.ids }
        }
    }

    const O: KeyKind = KeyKind::Object;

    #[test]
    fn postings_stay_sorted_when_timestamps_arrive_out_of_order() {
        let mut f = Fixture::new();
        let a = f.add(30, &[(O, "mug")]);
        let b = f.add(10, &[(O, "mug")]);
        let c = f.add(20, &[(O, "mug"), (O, "mug")]);
        let k = f.index.lookup(O, "mug").unwrap();
        assert_eq!(f.index.posting(k), [b, c, a]);
        assert_eq!(f.index.order(), [b, c, a]);
        assert_eq!(f.index.keys_of(c), [k]);
        assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
        let order = SlotOrder { ts: &f.ts, ids: &f.ids };
        f.index.remove(c, order);
        f.live[c as usize] = false;
        assert_eq!(f.index.posting(k), [b, a]);
        assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
    }

    #[test]
    fn empty_keys_are_deleted_and_their_ids_reused() {
        let mut f = Fixture::new();
        let a = f.add(1, &[(O, "mug"), (KeyKind::Goal, "find mug")]);
        assert_eq!(f.index.key_count(), 2);
        let order = SlotOrder { ts: &f.ts, ids: &f.ids };
        f.index.remove(a, order);
        f.live[a as usize] = false;
        assert_eq!(f.index.key_count(), 0);
        assert!(f.index.lookup(O, "mug").is_none());
        f.add(2, &[(KeyKind::Tool, "look")]);
        assert_eq!(f.index.key_count(), 1);
        assert!(f.index.lookup(KeyKind::Tool, "look").unwrap() < 2, "a freed id is reused");
        assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
    }

    #[test]
    fn similar_ranks_by_shared_keys_then_recency() {
        let mut f = Fixture::new();
        let both_old = f.add(1, &[(O, "mug"), (O, "cup")]);
        let mug_new = f.add(5, &[(O, "mug")]);
        let cup_mid = f.add(3, &[(O, "cup"), (O, "box")]);
        let unrelated = f.add(6, &[(O, "box")]);
        let query = [f.index.lookup(O, "mug").unwrap(), f.index.lookup(O, "cup").unwrap()];
        let got = f.index.similar(&query, 5, f.order(), |_| true);
        assert_eq!(got, vec![(both_old, 2), (mug_new, 1), (cup_mid, 1)]);
        assert!(!got.iter().any(|&(s, _)| s == unrelated));
        let got = f.index.similar(&query, 2, f.order(), |s| s != both_old);
        assert_eq!(got, vec![(mug_new, 1), (cup_mid, 1)]);
    }

    #[test]
    fn batch_removal_matches_single_removals() {
        let mut f = Fixture::new();
        for i in 0..20 {
            let name = format!("o{}", i % 4);
            let other = format!("o{}", (i + 1) % 4);
            f.add(
                i64::from(i),
                &[(O, &name), (O, &other), (KeyKind::Success, if i % 2 == 0 { "True" } else { "False" })],
            );
        }
        let mut g = ContextIndex::clone(&f.index);
        let doomed: Vec<Slot> = (0..20).filter(|s| s % 3 == 0).collect();
        let mut dead = vec![false; 20];
        for &s in &doomed {
            dead[s as usize] = true;
        }
        f.index.remove_many(&doomed, &dead);
        let order = SlotOrder { ts: &f.ts, ids: &f.ids };
        for &s in &doomed {
            g.remove(s, order);
        }
        let live: Vec<bool> = dead.iter().map(|d| !d).collect();
        assert_eq!(f.index.audit(&live, f.order()), IndexAudit::default());
        assert_eq!(g.audit(&live, f.order()), IndexAudit::default());
        for (k, kind, text) in f.index.live_keys() {
            let other = g.lookup(kind, text).unwrap();
            assert_eq!(f.index.posting(k), g.posting(other));
        }
    }

    /// The naive answer of `similar`: every live slot sharing a key, by (shared, ts, id).
    fn naive_similar(f: &Fixture, query: &[KeyId], limit: usize) -> Vec<Scored> {
        let mut all: Vec<Scored> = (0..f.ts.len() as Slot)
            .filter(|&s| f.live[s as usize])
            .map(|s| (s, f.index.keys_of(s).iter().filter(|k| query.contains(k)).count() as u32))
            .filter(|&(_, n)| n > 0)
            .collect();
        all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| f.order().key(b.0).cmp(&f.order().key(a.0))));
        all.truncate(limit);
        all
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]

        /// Narrow and wide slots, single and batch removals: both ways of `similar` agree with
        /// the naive answer and the audit finds nothing.
        #[test]
        fn similar_agrees_with_a_naive_model_for_narrow_and_wide_slots(
            slots in proptest::collection::vec((proptest::collection::vec(0usize..14, 0..13), 0i64..6), 1..40),
            doomed in proptest::collection::vec(0usize..40, 0..12),
            batch in proptest::bool::ANY,
            query in proptest::collection::vec(0usize..14, 1..13),
            limit in 1usize..8,
        ) {
            let names: Vec<String> = (0..14).map(|i| format!("o{i}")).collect();
            let mut f = Fixture::new();
            for (objects, ts) in &slots {
                let mut keys: Vec<(KeyKind, &str)> = vec![(KeyKind::Goal, "g")];
                keys.extend(objects.iter().map(|&o| (O, names[o].as_str())));
                f.add(*ts, &keys);
            }
            let mut doomed: Vec<Slot> = doomed.into_iter().filter(|&d| d < slots.len()).map(|d| d as Slot).collect();
            doomed.sort_unstable();
            doomed.dedup();
            let mut dead = vec![false; slots.len()];
            for &d in &doomed {
                dead[d as usize] = true;
            }
            if batch {
                f.index.remove_many(&doomed, &dead);
            } else {
                let order = SlotOrder { ts: &f.ts, ids: &f.ids };
                for &d in &doomed {
                    f.index.remove(d, order);
                }
            }
            for &d in &doomed {
                f.live[d as usize] = false;
            }
            proptest::prop_assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
            let mut q: Vec<KeyId> = query.iter().filter_map(|&o| f.index.lookup(O, &names[o])).collect();
            q.sort_unstable();
            q.dedup();
            if !q.is_empty() {
                let expected = naive_similar(&f, &q, limit);
                proptest::prop_assert_eq!(&f.index.similar_by_pairs(&q, limit, f.order(), |_| true), &expected);
                proptest::prop_assert_eq!(&f.index.similar_by_counting(&q, limit, f.order(), |_| true), &expected);
                proptest::prop_assert_eq!(&f.index.similar(&q, limit, f.order(), |_| true), &expected);
            }
        }
    }

    #[test]
    fn wide_slots_stay_out_of_the_pair_index() {
        let names: Vec<String> = (0..200).map(|i| format!("o{i}")).collect();
        let mut f = Fixture::new();
        let many: Vec<(KeyKind, &str)> = names.iter().map(|n| (O, n.as_str())).collect();
        let a = f.add(1, &many);
        let b = f.add(2, &many);
        let narrow = f.add(3, &many[..PAIR_KEYS_MAX]);
        // Only the narrow slot has pairs: 8 · 7 / 2, not 2 · 200 · 199 / 2.
        assert_eq!(f.index.pairs.len(), PAIR_KEYS_MAX * (PAIR_KEYS_MAX - 1) / 2);
        let q: Vec<KeyId> = (0..200).map(|i| f.index.lookup(O, &names[i]).unwrap()).collect();
        assert_eq!(f.index.similar(&q, 5, f.order(), |s| s != b), vec![(a, 200), (narrow, 8)]);
        assert_eq!(f.index.similar(&q[..2], 5, f.order(), |_| true), vec![(narrow, 2), (b, 2), (a, 2)]);
        assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
        f.index.remove(a, SlotOrder { ts: &f.ts, ids: &f.ids });
        f.live[a as usize] = false;
        assert_eq!(f.index.audit(&f.live, f.order()), IndexAudit::default());
        assert!(f.index.keys.iter().all(|e| !e.wide.contains(&a)));
    }

    #[test]
    fn audit_finds_orphans() {
        let mut f = Fixture::new();
        f.add(1, &[(O, "mug")]);
        let k = f.index.lookup(O, "mug").unwrap();
        f.index.corrupt_for_test(k);
        assert!(f.index.audit(&f.live, f.order()).orphan_entries >= 1);
    }
}
