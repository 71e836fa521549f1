//! The context index (§4.5): constant-time lookup of concepts by name, category, property key,
//! property key and value, and substrate modality.
//!
//! Names and categories are indexed by their [`name_key`](crate::names::name_key), so a
//! lookup of "Coffee Mugs" finds "coffee_mug"; aliases are indexed as names. Properties are
//! indexed by key and by key with the *current* value (see
//! [`Property::current`](crate::properties::Property::current)). Each entry is a set of ids that
//! stays a small vector while it is small and becomes a hash set when it grows, so that
//! removing a concept from a category of 10^4 members is still O(1).

use maxim_core::RecordId;
use maxim_core::value::Value;
use rustc_hash::{FxHashMap, FxHashSet};

/// Above this many members a set switches from a vector to a hash set.
const SMALL_SET: usize = 16;

/// A set of ids: a vector while small, a hash set beyond [`SMALL_SET`].
#[derive(Debug, Clone)]
pub(crate) enum IdSet {
    Small(Vec<RecordId>),
    Large(FxHashSet<RecordId>),
}

impl IdSet {
    fn insert(&mut self, id: RecordId) {
        match self {
            Self::Small(v) => {
                if v.contains(&id) {
                    return;
                }
                if v.len() < SMALL_SET {
                    v.push(id);
                } else {
                    let mut set: FxHashSet<RecordId> = v.drain(..).collect();
                    set.insert(id);
                    *self = Self::Large(set);
                }
            }
            Self::Large(s) => {
                s.insert(id);
            }
        }
    }

    /// Removes `id`; true when the set is then empty.
    fn remove(&mut self, id: RecordId) -> bool {
        match self {
            Self::Small(v) => {
                if let Some(pos) = v.iter().position(|&x| x == id) {
                    v.swap_remove(pos);
                }
                v.is_empty()
            }
            Self::Large(s) => {
                s.remove(&id);
                s.is_empty()
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Small(v) => v.len(),
            Self::Large(s) => s.len(),
        }
    }

    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = RecordId> + '_> {
        match self {
            Self::Small(v) => Box::new(v.iter().copied()),
            Self::Large(s) => Box::new(s.iter().copied()),
        }
    }
}

/// One map from text keys to id sets.
#[derive(Debug, Clone, Default)]
pub(crate) struct Postings(FxHashMap<Box<str>, IdSet>);

impl Postings {
    pub(crate) fn insert(&mut self, key: &str, id: RecordId) {
        match self.0.get_mut(key) {
            Some(set) => set.insert(id),
            None => {
                self.0.insert(key.into(), IdSet::Small(vec![id]));
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &str, id: RecordId) {
        if let Some(set) = self.0.get_mut(key)
            && set.remove(id)
        {
            self.0.remove(key);
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&IdSet> {
        self.0.get(key)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// The key of a (property key, value) entry: unambiguous, and equal for values that are
/// [`same_value`](crate::properties::same_value) (numbers print by value, a zero without its
/// sign); values that print alike share an entry, and readers re-check the value itself.
pub(crate) fn property_value_key(key: &str, value: &Value) -> String {
    let mut out = format!("{}:{key}", key.len());
    write_value(&mut out, value);
    out
}

/// Writes `value` as its `Display` does, with `-0.0` as `0` (so that it meets `Int(0)`).
fn write_value(out: &mut String, value: &Value) {
    use std::fmt::Write as _;
    match value {
        Value::Float(x) if *x == 0.0 => out.push('0'),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{k:?}: ");
                write_value(out, v);
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Every lookup of §4.5.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextIndex {
    pub(crate) names: Postings,
    pub(crate) categories: Postings,
    pub(crate) property_keys: Postings,
    pub(crate) property_values: Postings,
    pub(crate) modalities: Postings,
}

impl Postings {
    /// Every key with its ids, sorted (for comparing indexes built in different orders).
    #[cfg(test)]
    pub(crate) fn canonical(&self) -> Vec<(String, Vec<RecordId>)> {
        let mut out: Vec<(String, Vec<RecordId>)> = self
            .0
            .iter()
            .map(|(k, set)| {
                let mut ids: Vec<RecordId> = set.iter().collect();
                ids.sort_unstable();
                (k.to_string(), ids)
            })
            .collect();
        out.sort();
        out
    }
}

impl ContextIndex {
    /// Every lookup, sorted (for comparing indexes built in different orders).
    #[cfg(test)]
    pub(crate) fn canonical(&self) -> String {
        let all =
            [&self.names, &self.categories, &self.property_keys, &self.property_values, &self.modalities];
        format!("{:?}", all.map(Postings::canonical))
    }

    /// Number of distinct keys over every lookup (the original's `index_keys`).
    pub(crate) fn key_count(&self) -> usize {
        self.names.len()
            + self.categories.len()
            + self.property_keys.len()
            + self.property_values.len()
            + self.modalities.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_grow_and_shrink() {
        let mut p = Postings::default();
        for n in 0..40u128 {
            p.insert("object", RecordId::from_u128(n));
            p.insert("object", RecordId::from_u128(n));
        }
        let set = p.get("object").unwrap();
        assert!(matches!(set, IdSet::Large(_)));
        assert_eq!(set.len(), 40);
        for n in 0..40u128 {
            p.remove("object", RecordId::from_u128(n));
        }
        assert!(p.get("object").is_none() && p.len() == 0);
        p.insert("a", RecordId::from_u128(1));
        p.remove("a", RecordId::from_u128(2));
        assert_eq!(p.get("a").unwrap().iter().collect::<Vec<_>>(), [RecordId::from_u128(1)]);
    }

    #[test]
    fn value_keys_are_unambiguous() {
        assert_ne!(property_value_key("ab", &Value::from("c")), property_value_key("a", &Value::from("bc")));
        let same = [
            (Value::Int(1), Value::Float(1.0)),
            (Value::Int(0), Value::Float(-0.0)),
            (
                Value::List(vec![Value::Int(2), Value::Float(-0.0)]),
                Value::List(vec![Value::Float(2.0), Value::Int(0)]),
            ),
        ];
        for (a, b) in same {
            assert!(crate::properties::same_value(&a, &b));
            assert_eq!(property_value_key("n", &a), property_value_key("n", &b), "{a} / {b}");
        }
        let map: maxim_core::value::Map = [("k", Value::Float(-0.0))].into_iter().collect();
        assert_eq!(property_value_key("n", &Value::Map(map)), "1:n{\"k\": 0}");
    }
}
