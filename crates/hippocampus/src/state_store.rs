//! [`StateStore`]: content-addressed, LRU-bounded snapshots of agent state
//! (`spec/maxim-reference.md` §3.12).
//!
//! An episode does not carry the agent's state snapshot itself, only its [`StateRef`]: the
//! hash of the snapshot's canonical form ([`value_hash`](crate::hash::value_hash)). Equal
//! snapshots share one entry. A hit on a reference is checked against the value held, so
//! two different snapshots whose 64-bit hashes collide never share a reference: the second
//! takes the first free reference after its hash. The store keeps at most `max_entries` snapshots and drops the
//! least recently used one when a new snapshot arrives at capacity; [`StateStore::get`]
//! refreshes recency, [`StateStore::peek`] does not.
//!
//! ```
//! use hippocampus::StateStore;
//! use maxim_core::value::{Map, Value};
//! let mut store = StateStore::new(2)?;
//! let snapshot = |room: &str| Value::Map([("room", Value::from(room))].into_iter().collect::<Map>());
//! let kitchen = store.store(snapshot("kitchen"));
//! assert_eq!(store.store(snapshot("kitchen")), kitchen); // duplicates share one entry
//! let hall = store.store(snapshot("hall"));
//! store.get(kitchen); // kitchen is now the most recently used
//! store.store(snapshot("attic")); // evicts hall
//! assert!(store.peek(hall).is_none());
//! assert_eq!(store.peek(kitchen), Some(&snapshot("kitchen")));
//! assert_eq!(store.stats().utilization, 1.0);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use maxim_core::value::Value;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::hash::{StateRef, same_value};

/// Counts that describe a [`StateStore`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StateStoreStats {
    /// Snapshots held.
    pub entries: usize,
    /// Most snapshots held.
    pub max_entries: usize,
    /// `entries / max_entries`.
    pub utilization: f64,
}

/// Content-addressed, LRU-bounded snapshots of agent state; see the [module docs](self).
///
/// Eviction scans the entries for the least recently used one, which costs a microsecond at
/// the default capacity of 1,000 and keeps the store to one map.
#[derive(Debug, Clone)]
pub struct StateStore {
    max_entries: usize,
    entries: FxHashMap<StateRef, Entry>,
    tick: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    value: Value,
    used: u64,
}

impl StateStore {
    /// An empty store holding at most `max_entries` snapshots (at least 1).
    pub fn new(max_entries: usize) -> maxim_core::Result<Self> {
        if max_entries == 0 {
            return Err(maxim_core::Error::invalid("state_store_max_entries", "must be at least 1"));
        }
        Ok(Self { max_entries, entries: FxHashMap::default(), tick: 0 })
    }

    /// Stores `snapshot` (or refreshes the equal snapshot already held) and returns its
    /// reference; evicts the least recently used snapshot when the store is full.
    ///
    /// The reference is the snapshot's hash or, when another snapshot holds that (a 64-bit
    /// collision, which takes some 2^32 snapshots to expect once), the first reference past
    /// it that is free or holds an equal snapshot. At most `max_entries` references are held,
    /// so one of the `max_entries + 1` from the hash on is always free.
    pub fn store(&mut self, snapshot: Value) -> StateRef {
        let hash = StateRef::of(&snapshot);
        self.store_at(snapshot, hash)
    }

    /// [`store`](Self::store), probing from `hash`.
    fn store_at(&mut self, snapshot: Value, hash: StateRef) -> StateRef {
        self.tick += 1;
        let mut free = None;
        for r in probes(hash, self.max_entries) {
            match self.entries.get_mut(&r) {
                Some(e) if same_value(&e.value, &snapshot) => {
                    e.used = self.tick;
                    return r;
                }
                Some(_) => {}
                None => {
                    free = Some(r);
                    break;
                }
            }
        }
        let r = free.expect("at most max_entries references are held, so one of max_entries + 1 is free");
        if self.entries.len() >= self.max_entries {
            self.evict_lru();
        }
        self.entries.insert(r, Entry { value: snapshot, used: self.tick });
        r
    }

    /// The snapshot `r`, marking it the most recently used.
    pub fn get(&mut self, r: StateRef) -> Option<&Value> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(&r).map(|e| {
            e.used = tick;
            &e.value
        })
    }

    /// The snapshot `r`, without changing recency.
    pub fn peek(&self, r: StateRef) -> Option<&Value> {
        self.entries.get(&r).map(|e| &e.value)
    }

    /// True when `r` is held.
    pub fn contains(&self, r: StateRef) -> bool {
        self.entries.contains_key(&r)
    }

    /// Number of snapshots held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no snapshot is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Most snapshots held.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// Counts: entries, capacity and their ratio.
    pub fn stats(&self) -> StateStoreStats {
        StateStoreStats {
            entries: self.len(),
            max_entries: self.max_entries,
            utilization: self.len() as f64 / self.max_entries as f64,
        }
    }

    /// The snapshots from least to most recently used, for saving.
    pub(crate) fn lru_order(&self) -> Vec<(StateRef, &Value)> {
        let mut all: Vec<(u64, StateRef, &Value)> =
            self.entries.iter().map(|(&r, e)| (e.used, r, &e.value)).collect();
        all.sort_unstable_by_key(|&(used, r, _)| (used, r));
        all.into_iter().map(|(_, r, v)| (r, v)).collect()
    }

    /// A store of capacity `max_entries` holding `snapshots`, given least recently used
    /// first (as [`lru_order`](Self::lru_order) gives them). A snapshot whose reference is
    /// neither its hash nor a reference [`store`](Self::store) could have probed to from it,
    /// and a reference given twice, are refused.
    pub(crate) fn from_lru_order(
        max_entries: usize,
        snapshots: Vec<(StateRef, Value)>,
    ) -> maxim_core::Result<Self> {
        Self::from_lru_order_with(max_entries, snapshots, StateRef::of)
    }

    fn from_lru_order_with(
        max_entries: usize,
        snapshots: Vec<(StateRef, Value)>,
        hash: impl Fn(&Value) -> StateRef,
    ) -> maxim_core::Result<Self> {
        let refused =
            |r: StateRef, why: &str| maxim_core::Error::invalid("state store", format!("snapshot {r} {why}"));
        let mut store = Self::new(max_entries)?;
        // The saving store held at most as many snapshots as it probed past: the file's,
        // or at most this store's capacity.
        let reach = max_entries.max(snapshots.len());
        for (r, value) in snapshots {
            if r.as_u64().wrapping_sub(hash(&value).as_u64()) > reach as u64 {
                return Err(refused(r, "does not match its content"));
            }
            if store.entries.contains_key(&r) {
                return Err(refused(r, "is given twice"));
            }
            if store.entries.len() >= store.max_entries {
                store.evict_lru();
            }
            store.tick += 1;
            store.entries.insert(r, Entry { value, used: store.tick });
        }
        Ok(store)
    }

    /// The least recently used snapshot goes.
    fn evict_lru(&mut self) {
        if let Some((&victim, _)) = self.entries.iter().min_by_key(|(r, e)| (e.used, **r)) {
            self.entries.remove(&victim);
        }
    }
}

/// The `reach + 1` references a snapshot hashing to `hash` may take, in order.
fn probes(hash: StateRef, reach: usize) -> impl Iterator<Item = StateRef> {
    (0..=reach as u64).map(move |i| StateRef::from_u64(hash.as_u64().wrapping_add(i)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(n: i64) -> Value {
        Value::List(vec![Value::from(n)])
    }

    #[test]
    fn capacity_is_respected_and_lru_goes_first() {
        let mut s = StateStore::new(3).unwrap();
        let refs: Vec<StateRef> = (0..3).map(|n| s.store(snap(n))).collect();
        assert!(s.get(refs[0]).is_some());
        s.store(snap(3));
        assert_eq!(s.len(), 3);
        assert!(s.peek(refs[1]).is_none(), "the least recently used snapshot is evicted");
        assert!(s.contains(refs[0]) && s.contains(refs[2]));
        let stats = s.stats();
        assert_eq!((stats.entries, stats.max_entries), (3, 3));
    }

    #[test]
    fn peek_does_not_refresh() {
        let mut s = StateStore::new(2).unwrap();
        let a = s.store(snap(1));
        let b = s.store(snap(2));
        assert!(s.peek(a).is_some());
        s.store(snap(3));
        assert!(!s.contains(a));
        assert!(s.contains(b));
    }

    #[test]
    fn colliding_snapshots_get_their_own_references() {
        let mut s = StateStore::new(8).unwrap();
        let clash = StateRef::from_u64(u64::MAX);
        let a = s.store_at(snap(1), clash);
        let b = s.store_at(snap(2), clash);
        let c = s.store_at(snap(3), clash);
        assert_eq!((a, b, c), (clash, StateRef::from_u64(0), StateRef::from_u64(1)), "probing wraps");
        assert_eq!(s.store_at(snap(2), clash), b, "an equal snapshot finds its reference");
        assert_eq!((s.peek(a), s.peek(b), s.peek(c)), (Some(&snap(1)), Some(&snap(2)), Some(&snap(3))));
        assert_eq!(s.len(), 3);
        // Saved and loaded with the same (colliding) hash, the references hold.
        let order: Vec<(StateRef, Value)> = s.lru_order().into_iter().map(|(r, v)| (r, v.clone())).collect();
        let back = StateStore::from_lru_order_with(8, order.clone(), |_| clash).unwrap();
        assert_eq!(back.peek(b), Some(&snap(2)));
        // A reference too far from its hash, or given twice: refused.
        assert!(StateStore::from_lru_order_with(8, order.clone(), |_| StateRef::from_u64(7)).is_err());
        assert!(StateStore::from_lru_order_with(8, order.clone(), |_| StateRef::from_u64(2)).is_err());
        let twice_ref = vec![(clash, snap(1)), (clash, snap(2))];
        assert!(StateStore::from_lru_order_with(8, twice_ref, |_| clash).is_err());
        // A full store whose every reference collides: one reference is always free.
        let mut full = StateStore::new(3).unwrap();
        let refs: Vec<StateRef> = (0..6).map(|n| full.store_at(snap(n), clash)).collect();
        assert_eq!(full.len(), 3);
        for (n, r) in refs.iter().enumerate().skip(3) {
            assert_eq!(full.peek(*r), Some(&snap(n as i64)), "{n}");
        }
    }

    #[test]
    fn zero_capacity_is_refused() {
        assert!(StateStore::new(0).is_err());
    }

    #[test]
    fn lru_order_round_trips() {
        let mut s = StateStore::new(4).unwrap();
        let a = s.store(snap(1));
        let b = s.store(snap(2));
        s.get(a);
        let order: Vec<(StateRef, Value)> = s.lru_order().into_iter().map(|(r, v)| (r, v.clone())).collect();
        assert_eq!(order.iter().map(|e| e.0).collect::<Vec<_>>(), [b, a]);
        let back = StateStore::from_lru_order(4, order.clone()).unwrap();
        let again: Vec<StateRef> = back.lru_order().into_iter().map(|e| e.0).collect();
        assert_eq!(again, [b, a]);
        let mut forged = order;
        forged[0].0 = StateRef::from_u64(42);
        assert!(StateStore::from_lru_order(4, forged).is_err());
    }
}
