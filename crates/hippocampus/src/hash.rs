//! The fixed 64-bit hash of the episodic layer, and [`StateRef`], the reference of a state
//! snapshot.
//!
//! The original hashed state snapshots (key-sorted JSON) and recall queries with SHA-256 and
//! kept the first 16 or 12 hex digits. maxim uses 64-bit FNV-1a over a canonical byte form
//! instead: the references only need to be stable across runs and platforms and to collide
//! rarely among a few thousand snapshots, not to resist an attacker, and FNV-1a needs no
//! dependency. A [`StateRef`] prints as 16 lowercase hex digits, as the original's did.
//!
//! ```
//! use hippocampus::hash::{fnv1a64, StateRef};
//! assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
//! assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
//! let r = StateRef::from_u64(0xaf63_dc4c_8601_ec8c);
//! assert_eq!(r.to_string(), "af63dc4c8601ec8c");
//! assert_eq!("af63dc4c8601ec8c".parse::<StateRef>()?, r);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use maxim_core::value::{Map, Value};
use serde::{Deserialize, Serialize};

use maxim_core::hash::Fnv1a as Fnv;
pub use maxim_core::hash::fnv1a64;

/// The canonical hash of a [`Value`]: map keys sorted, every value tagged with its type,
/// lengths written before contents, floats by their bits (so `1` and `1.0` differ, as the
/// original's JSON text did).
///
/// ```
/// use hippocampus::hash::value_hash;
/// use maxim_core::value::{Map, Value};
/// let a: Map = [("x", Value::from(1i64)), ("y", Value::from("mug"))].into_iter().collect();
/// let b: Map = [("y", Value::from("mug")), ("x", Value::from(1i64))].into_iter().collect();
/// assert_eq!(value_hash(&Value::Map(a)), value_hash(&Value::Map(b)));
/// assert_ne!(value_hash(&Value::from(1i64)), value_hash(&Value::from(1.0)));
/// ```
pub fn value_hash(value: &Value) -> u64 {
    let mut h = Fnv::new();
    hash_value(&mut h, value);
    h.finish()
}

fn hash_value(h: &mut Fnv, value: &Value) {
    match value {
        Value::Null => h.write(&[0]),
        Value::Bool(b) => h.write(&[1, u8::from(*b)]),
        Value::Int(i) => {
            h.write(&[2]);
            h.write(&i.to_le_bytes());
        }
        Value::Float(x) => {
            h.write(&[3]);
            h.write(&x.to_bits().to_le_bytes());
        }
        Value::Text(s) => {
            h.write(&[4]);
            hash_str(h, s);
        }
        Value::List(items) => {
            h.write(&[5]);
            h.write(&(items.len() as u64).to_le_bytes());
            for item in items {
                hash_value(h, item);
            }
        }
        Value::Map(m) => hash_map(h, m),
    }
}

/// Whether `a` and `b` are the same value as [`value_hash`] reads them: floats by their
/// bits (so a NaN equals itself), maps whatever the order of their entries.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Text(x), Value::Text(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => false,
    }
}

fn hash_map(h: &mut Fnv, map: &Map) {
    let mut entries: Vec<(&str, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    h.write(&[6]);
    h.write(&(entries.len() as u64).to_le_bytes());
    for (k, v) in entries {
        hash_str(h, k);
        hash_value(h, v);
    }
}

fn hash_str(h: &mut Fnv, s: &str) {
    h.write(&(s.len() as u64).to_le_bytes());
    h.write(s.as_bytes());
}

/// The reference of a state snapshot in the [`StateStore`](crate::StateStore): the
/// [`value_hash`] of the snapshot, printed as 16 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct StateRef(u64);

impl StateRef {
    /// The reference with these bits.
    pub const fn from_u64(bits: u64) -> Self {
        Self(bits)
    }

    /// The bits.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// The reference of `snapshot`.
    pub fn of(snapshot: &Value) -> Self {
        Self(value_hash(snapshot))
    }
}

impl fmt::Display for StateRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for StateRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateRef({self})")
    }
}

impl FromStr for StateRef {
    type Err = maxim_core::Error;

    /// Parses exactly 16 hex digits (no sign).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(maxim_core::Error::invalid("state ref", format!("{s:?} is not 16 hex digits")));
        }
        u64::from_str_radix(s, 16)
            .map(Self)
            .map_err(|_| maxim_core::Error::invalid("state ref", format!("{s:?} is not 16 hex digits")))
    }
}

/// The signature of a recall query for use-based promotion: the query lowercased with its
/// whitespace collapsed, hashed with FNV-1a (the original kept 12 hex digits of SHA-256).
///
/// ```
/// use hippocampus::hash::query_signature;
/// assert_eq!(query_signature("Find  the MUG "), query_signature("find the mug"));
/// assert_ne!(query_signature("find the mug"), query_signature("find a mug"));
/// ```
pub fn query_signature(query: &str) -> u64 {
    let mut h = Fnv::new();
    let mut first = true;
    for word in query.split_whitespace() {
        if !first {
            h.write(b" ");
        }
        first = false;
        for c in word.chars().flat_map(char::to_lowercase) {
            let mut buf = [0u8; 4];
            h.write(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_published_vectors() {
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn same_value_agrees_with_the_hash() {
        let a: Map =
            [("x", Value::from(f64::NAN)), ("y", Value::List(vec![1i64.into()]))].into_iter().collect();
        let b: Map =
            [("y", Value::List(vec![1i64.into()])), ("x", Value::from(f64::NAN))].into_iter().collect();
        assert!(same_value(&Value::Map(a.clone()), &Value::Map(b)));
        assert!(!same_value(&Value::from(0.0), &Value::from(-0.0)));
        assert!(!same_value(&Value::from(1i64), &Value::from(1.0)));
        let c: Map = [("x", Value::from(f64::NAN))].into_iter().collect();
        assert!(!same_value(&Value::Map(a), &Value::Map(c)));
    }

    #[test]
    fn nested_maps_hash_independently_of_key_order() {
        let inner1: Map = [("b", Value::from(2i64)), ("a", Value::Null)].into_iter().collect();
        let inner2: Map = [("a", Value::Null), ("b", Value::from(2i64))].into_iter().collect();
        let v1 = Value::List(vec![Value::Map(inner1), Value::from(true)]);
        let v2 = Value::List(vec![Value::Map(inner2), Value::from(true)]);
        assert_eq!(value_hash(&v1), value_hash(&v2));
        assert_ne!(value_hash(&Value::from("ab")), value_hash(&Value::List(vec!["a".into(), "b".into()])));
    }

    #[test]
    fn state_ref_text_is_strict() {
        assert!("abc".parse::<StateRef>().is_err());
        assert!("zzzzzzzzzzzzzzzz".parse::<StateRef>().is_err());
        assert!("+000000000000001".parse::<StateRef>().is_err(), "no sign");
        assert!("-000000000000001".parse::<StateRef>().is_err());
        assert!(" 000000000000001".parse::<StateRef>().is_err());
        assert_eq!("00000000000000Ff".parse::<StateRef>().unwrap(), StateRef::from_u64(255));
        assert_eq!(StateRef::from_u64(1).to_string(), "0000000000000001");
    }
}
