//! [`StateStore`]: content-addressed, LRU-bounded snapshots of agent state
//! (`spec/maxim-reference.md` §3.12).
//!
//! An episode does not carry the agent's state snapshot itself, only its [`StateRef`]: the
//! hash of the snapshot's canonical form ([`value_hash`](crate::hash::value_hash)). Equal
//! snapshots share one entry. The store keeps at most `max_entries` snapshots and drops the
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

use crate::hash::StateRef;

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
    pub fn store(&mut self, snapshot: Value) -> StateRef {
        let r = StateRef::of(&snapshot);
        self.tick += 1;
        if let Some(e) = self.entries.get_mut(&r) {
            e.used = self.tick;
            return r;
        }
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
    /// first (as [`lru_order`](Self::lru_order) gives them). A snapshot whose reference does
    /// not match its content is refused.
    pub(crate) fn from_lru_order(
        max_entries: usize,
        snapshots: Vec<(StateRef, Value)>,
    ) -> maxim_core::Result<Self> {
        let mut store = Self::new(max_entries)?;
        for (r, value) in snapshots {
            if StateRef::of(&value) != r {
                return Err(maxim_core::Error::invalid(
                    "state store",
                    format!("snapshot {r} does not match its content"),
                ));
            }
            store.store(value);
        }
        Ok(store)
    }

    fn evict_lru(&mut self) {
        if let Some((&victim, _)) = self.entries.iter().min_by_key(|(r, e)| (e.used, **r)) {
            self.entries.remove(&victim);
        }
    }
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
