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
//! ```
//! use hippocampus::IndexKey;
//! let key: IndexKey = "goal:find mug".parse()?;
//! assert_eq!(key, IndexKey::Goal("find mug".into()));
//! assert_eq!(IndexKey::Success(Some(true)).to_string(), "success:True");
//! assert_eq!("success:None".parse::<IndexKey>()?, IndexKey::Success(None));
//! assert!("colour:red".parse::<IndexKey>().is_err());
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use maxim_core::RecordId;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A slot: the dense position of a record inside the layer.
pub(crate) type Slot = u32;
/// A dense key id.
pub(crate) type KeyId = u32;

/// The six kinds of index key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KeyKind {
    /// `goal:<active goal>`.
    Goal,
    /// `tool:<tool name>`.
    Tool,
    /// `success:True|False|None`.
    Success,
    /// `mode:<active mode>`.
    Mode,
    /// `object:<detected object>`.
    Object,
    /// `person:<detected person>`.
    Person,
}

impl KeyKind {
    /// Every kind.
    pub const ALL: [Self; 6] =
        [Self::Goal, Self::Tool, Self::Success, Self::Mode, Self::Object, Self::Person];

    /// The prefix before the colon.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::Goal => "goal",
            Self::Tool => "tool",
            Self::Success => "success",
            Self::Mode => "mode",
            Self::Object => "object",
            Self::Person => "person",
        }
    }

    /// True for the kinds association formation and similarity recall compare (objects and
    /// people).
    pub const fn is_associative(self) -> bool {
        matches!(self, Self::Object | Self::Person)
    }

    const fn slot(self) -> usize {
        self as usize
    }
}

/// A key of the context index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexKey {
    /// `goal:<g>`: the active goal.
    Goal(String),
    /// `tool:<t>`: the tool.
    Tool(String),
    /// `success:True`, `success:False` or `success:None`.
    Success(Option<bool>),
    /// `mode:<m>`: the active mode.
    Mode(String),
    /// `object:<o>`: a detected object (case preserved).
    Object(String),
    /// `person:<p>`: a detected person.
    Person(String),
}

impl IndexKey {
    /// The key's kind.
    pub fn kind(&self) -> KeyKind {
        match self {
            Self::Goal(_) => KeyKind::Goal,
            Self::Tool(_) => KeyKind::Tool,
            Self::Success(_) => KeyKind::Success,
            Self::Mode(_) => KeyKind::Mode,
            Self::Object(_) => KeyKind::Object,
            Self::Person(_) => KeyKind::Person,
        }
    }

    /// The text after the colon.
    pub fn text(&self) -> &str {
        match self {
            Self::Goal(s) | Self::Tool(s) | Self::Mode(s) | Self::Object(s) | Self::Person(s) => s,
            Self::Success(v) => success_text(*v),
        }
    }

    /// The key of `kind` with the text `text`; `success` texts must be `True`, `False` or
    /// `None`.
    pub fn new(kind: KeyKind, text: &str) -> maxim_core::Result<Self> {
        Ok(match kind {
            KeyKind::Goal => Self::Goal(text.to_owned()),
            KeyKind::Tool => Self::Tool(text.to_owned()),
            KeyKind::Mode => Self::Mode(text.to_owned()),
            KeyKind::Object => Self::Object(text.to_owned()),
            KeyKind::Person => Self::Person(text.to_owned()),
            KeyKind::Success => Self::Success(match text {
                "True" => Some(true),
                "False" => Some(false),
                "None" => None,
                other => {
                    return Err(maxim_core::Error::invalid(
                        "index key",
                        format!("success:{other} is not success:True, success:False or success:None"),
                    ));
                }
            }),
        })
    }
}

/// The text of a success key: Python's spelling of the tri-state flag.
pub(crate) const fn success_text(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "None",
    }
}

impl fmt::Display for IndexKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind().prefix(), self.text())
    }
}

impl FromStr for IndexKey {
    type Err = maxim_core::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (prefix, text) = s
            .split_once(':')
            .ok_or_else(|| maxim_core::Error::invalid("index key", format!("{s:?} has no `kind:` prefix")))?;
        let kind = KeyKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .ok_or_else(|| maxim_core::Error::invalid("index key", format!("unknown key kind {prefix:?}")))?;
        Self::new(kind, text)
    }
}

/// Which kinds of key the layer indexes (default: all six, as the original's
/// `indexed_keys`). A recall filter on a kind that is not indexed scans every episode;
/// without object and person keys no associations form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedKeys {
    /// Index `goal:` keys.
    pub goal: bool,
    /// Index `tool:` keys.
    pub tool: bool,
    /// Index `success:` keys.
    pub success: bool,
    /// Index `mode:` keys.
    pub mode: bool,
    /// Index `object:` keys.
    pub object: bool,
    /// Index `person:` keys.
    pub person: bool,
}

impl Default for IndexedKeys {
    fn default() -> Self {
        Self { goal: true, tool: true, success: true, mode: true, object: true, person: true }
    }
}

impl IndexedKeys {
    /// Whether `kind` is indexed.
    pub const fn contains(&self, kind: KeyKind) -> bool {
        match kind {
            KeyKind::Goal => self.goal,
            KeyKind::Tool => self.tool,
            KeyKind::Success => self.success,
            KeyKind::Mode => self.mode,
            KeyKind::Object => self.object,
            KeyKind::Person => self.person,
        }
    }
}

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
}

/// A candidate of [`ContextIndex::similar`]: a slot and the number of keys it shares.
pub(crate) type Scored = (Slot, u32);

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
        let mut ids: Vec<KeyId> = Vec::with_capacity(keys.len());
        for &(kind, text) in keys {
            let k = self.intern(kind, text);
            if !ids.contains(&k) {
                ids.push(k);
            }
        }
        self.insert_ids(slot, &ids, order);
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
        let assoc: Vec<KeyId> = ids.iter().copied().filter(|&k| self.kind_of(k).is_associative()).collect();
        for_each_pair(&assoc, |p| match self.pairs.entry(p) {
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().push(slot),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(PairSlots::One(slot));
            }
        });
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
        self.remove_pairs(slot, ids);
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
            self.remove_pairs(s, ids.as_slice());
        }
        for (k, hit) in affected.into_iter().enumerate() {
            if hit {
                let postings = &mut self.keys[k].postings;
                postings.retain(|&s| !dead[s as usize]);
                if postings.is_empty() {
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
    /// Every slot sharing two or more keys is in the pair index, so the candidates sharing
    /// one key are only needed when fewer than `limit` share more; they are then taken newest
    /// first by merging the single-key postings from their ends, which stops as soon as
    /// `limit` are found.
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
        let shared = |s: Slot| self.keys_of(s).iter().filter(|k| query.contains(k)).count() as u32;
        let mut high: Vec<Slot> = Vec::new();
        for_each_pair(query, |p| {
            if let Some(slots) = self.pairs.get(&p) {
                high.extend(slots.as_slice().iter().copied().filter(|&s| accept(s)));
            }
        });
        high.sort_unstable();
        high.dedup();
        let mut best: Vec<Scored> = high.into_iter().map(|s| (s, shared(s))).collect();
        best.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| order.key(b.0).cmp(&order.key(a.0))));
        best.truncate(limit);
        if best.len() == limit {
            return best;
        }
        // Fill with the newest slots sharing exactly one key.
        let postings: Vec<&[Slot]> = query.iter().map(|&k| self.posting(k)).collect();
        let mut heads: Vec<usize> = postings.iter().map(|p| p.len()).collect();
        while best.len() < limit {
            let mut pick: Option<(usize, (i64, RecordId))> = None;
            for (i, p) in postings.iter().enumerate() {
                if heads[i] > 0 {
                    let key = order.key(p[heads[i] - 1]);
                    if pick.is_none_or(|(_, k)| key > k) {
                        pick = Some((i, key));
                    }
                }
            }
            let Some((i, _)) = pick else { break };
            heads[i] -= 1;
            let s = postings[i][heads[i]];
            if accept(s) && shared(s) == 1 {
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
            for_each_pair(&assoc, |p| {
                if !self.pairs.get(&p).is_some_and(|v| v.as_slice().contains(&(s as Slot))) {
                    audit.missing_entries += 1;
                }
            });
        }
        for (&(a, b), slots) in &self.pairs {
            for &s in slots.as_slice() {
                if !is_live(s) || !self.has_key(s, a) || !self.has_key(s, b) {
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

    #[cfg(test)]
    pub(crate) fn corrupt_for_test(&mut self, k: KeyId) {
        self.keys[k as usize].postings.push(u32::MAX - 1);
    }

    fn intern(&mut self, kind: KeyKind, text: &str) -> KeyId {
        if let Some(&k) = self.by_text[kind.slot()].get(text) {
            return k;
        }
        let entry = KeyEntry { kind, text: text.into(), postings: Vec::new(), live: true };
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
        let text = std::mem::take(&mut entry.text);
        self.by_text[entry.kind.slot()].remove(&text);
        self.free_keys.push(k);
        self.n_live -= 1;
    }

    fn remove_pairs(&mut self, slot: Slot, ids: &[KeyId]) {
        let assoc: Vec<KeyId> = ids
            .iter()
            .copied()
            .filter(|&k| self.keys.get(k as usize).is_some_and(|e| e.kind.is_associative()))
            .collect();
        for_each_pair(&assoc, |p| {
            if self.pairs.get_mut(&p).is_some_and(|v| v.remove(slot)) {
                self.pairs.remove(&p);
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

    #[test]
    fn audit_finds_orphans() {
        let mut f = Fixture::new();
        f.add(1, &[(O, "mug")]);
        let k = f.index.lookup(O, "mug").unwrap();
        f.index.corrupt_for_test(k);
        assert!(f.index.audit(&f.live, f.order()).orphan_entries >= 1);
    }

    #[test]
    fn keys_parse_and_print() {
        for text in
            ["goal:find mug", "tool:look", "success:False", "mode:observe", "object:Mug", "person:Ana"]
        {
            assert_eq!(text.parse::<IndexKey>().unwrap().to_string(), text);
        }
        assert!("success:yes".parse::<IndexKey>().is_err());
        assert!("nokind".parse::<IndexKey>().is_err());
        assert!(KeyKind::Person.is_associative() && !KeyKind::Goal.is_associative());
    }
}
