//! [`KeyTable`]: the index from a link's id to its position, open-addressed so that a lookup
//! reads one slot holding everything it needs.
//!
//! A slot holds the link id, the check hash of its key and the link's position in the store's
//! vector (24 bytes): the id is itself a well-mixed 64-bit hash, so its low bits pick the
//! first slot and linear probing walks on from there. A lookup of a held key usually reads
//! one slot, so one cache line, where a general hash map reads its control bytes and then
//! its bucket (two dependent misses on a table larger than the cache). The table keeps at
//! most half its slots full; removal shifts the following slots of the run back (no
//! tombstones), so lookups never slow down with churn.
//!
//! The table is private to the crate; the store keeps it in step with its link vector.

use crate::link::LinkId;

/// Marks a free slot (positions are below `u32::MAX`: `NacConfig::max_links` is).
const FREE: u32 = u32::MAX;

/// Fewest slots a table with links has.
const MIN_SLOTS: usize = 16;

/// One slot: a link id, the check hash of its key and its position (`FREE` when empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    id: u64,
    check: u64,
    pos: u32,
}

const EMPTY: Slot = Slot { id: 0, check: 0, pos: FREE };

/// An open-addressed map from [`LinkId`] to (position, check hash); see the module docs.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyTable {
    slots: Vec<Slot>,
    len: usize,
}

impl KeyTable {
    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Removes every entry (keeps the slots).
    pub(crate) fn clear(&mut self) {
        self.slots.fill(EMPTY);
        self.len = 0;
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The index of the slot holding `id`, if any.
    #[inline]
    fn find(&self, id: LinkId) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.mask();
        let id = id.as_u64();
        // Truncation is intended: the low bits pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let mut i = id as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.pos == FREE {
                return None;
            }
            if s.id == id {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The position and check hash of the link `id`.
    #[inline]
    pub(crate) fn get(&self, id: LinkId) -> Option<(u32, u64)> {
        self.find(id).map(|i| (self.slots[i].pos, self.slots[i].check))
    }

    /// Whether `id` is held.
    pub(crate) fn contains(&self, id: LinkId) -> bool {
        self.find(id).is_some()
    }

    /// Moves the link `id` to position `pos` (no-op when `id` is not held).
    pub(crate) fn set_pos(&mut self, id: LinkId, pos: u32) {
        if let Some(i) = self.find(id) {
            self.slots[i].pos = pos;
        }
    }

    /// The check hash of `id` flipped by `bits`, for a test that fakes a collision.
    #[cfg(test)]
    pub(crate) fn corrupt_check(&mut self, id: LinkId, bits: u64) {
        if let Some(i) = self.find(id) {
            self.slots[i].check ^= bits;
        }
    }

    /// Holds `id` at `pos` with `check`; `id` must not be held (the store checks first).
    pub(crate) fn insert(&mut self, id: LinkId, check: u64, pos: u32) {
        debug_assert!(pos != FREE, "a position below u32::MAX");
        debug_assert!(self.find(id).is_none(), "an id not held");
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        self.place(Slot { id: id.as_u64(), check, pos });
        self.len += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.mask();
        #[allow(clippy::cast_possible_truncation)]
        let mut i = slot.id as usize & mask;
        while self.slots[i].pos != FREE {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n]);
        for s in old.into_iter().filter(|s| s.pos != FREE) {
            self.place(s);
        }
    }

    /// Makes room for `n` entries in all without growing again.
    pub(crate) fn reserve(&mut self, n: usize) {
        while 2 * n > self.slots.len() {
            self.grow();
        }
    }

    /// Removes `id`; returns whether it was held. The slots after it in its run shift back
    /// where their home slot allows, so no slot is left marked deleted.
    pub(crate) fn remove(&mut self, id: LinkId) -> bool {
        let Some(mut hole) = self.find(id) else { return false };
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s.pos == FREE {
                break;
            }
            #[allow(clippy::cast_possible_truncation)]
            let home = s.id as usize & mask;
            // `s` may fill the hole when its home is not cyclically within (hole, j].
            let dist_home = j.wrapping_sub(home) & mask;
            let dist_hole = j.wrapping_sub(hole) & mask;
            if dist_home >= dist_hole {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = EMPTY;
        self.len -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Step {
        Insert(u64),
        Remove(u64),
        Move(u64, u32),
    }

    fn step() -> impl Strategy<Value = Step> {
        // Few distinct ids, many sharing low bits, so runs collide, wrap and shift.
        let id = (0u64..40).prop_map(|k| (k % 8) | (k / 8) << 60 | if k % 3 == 0 { 15 } else { 0 });
        prop_oneof![
            id.clone().prop_map(Step::Insert),
            id.clone().prop_map(Step::Remove),
            (id, 0u32..1000).prop_map(|(k, p)| Step::Move(k, p)),
        ]
    }

    proptest! {
        #[test]
        fn agrees_with_a_hash_map(steps in proptest::collection::vec(step(), 0..200)) {
            let mut table = KeyTable::default();
            let mut model: HashMap<u64, (u32, u64)> = HashMap::new();
            for (n, s) in steps.into_iter().enumerate() {
                let n = n as u32;
                match s {
                    Step::Insert(id) => {
                        if let std::collections::hash_map::Entry::Vacant(e) = model.entry(id) {
                            table.insert(LinkId::from_u64(id), id ^ 0xabc, n);
                            e.insert((n, id ^ 0xabc));
                        }
                    }
                    Step::Remove(id) => {
                        prop_assert_eq!(table.remove(LinkId::from_u64(id)), model.remove(&id).is_some());
                    }
                    Step::Move(id, p) => {
                        table.set_pos(LinkId::from_u64(id), p);
                        if let Some(e) = model.get_mut(&id) {
                            e.0 = p;
                        }
                    }
                }
                prop_assert_eq!(table.len(), model.len());
                for k in 0u64..40 {
                    let id = (k % 8) | (k / 8) << 60 | if k % 3 == 0 { 15 } else { 0 };
                    prop_assert_eq!(table.get(LinkId::from_u64(id)), model.get(&id).copied());
                    prop_assert_eq!(table.contains(LinkId::from_u64(id)), model.contains_key(&id));
                }
            }
            table.clear();
            prop_assert_eq!(table.len(), 0);
            prop_assert_eq!(table.get(LinkId::from_u64(15)), None);
        }
    }

    #[test]
    fn keeps_at_least_half_its_slots_free() {
        let mut table = KeyTable::default();
        assert_eq!(table.get(LinkId::from_u64(1)), None);
        for i in 0..1000u32 {
            table.insert(LinkId::from_u64(u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15)), 7, i);
            assert!(2 * table.len() <= table.slots.len());
        }
        table.reserve(5000);
        assert!(table.slots.len() >= 10_000);
        for i in 0..1000u32 {
            assert_eq!(
                table.get(LinkId::from_u64(u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15))),
                Some((i, 7))
            );
        }
    }
}
