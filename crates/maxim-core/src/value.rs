//! [`Value`]: structured, JSON-like data a record carries (observations, tool parameters,
//! results, concept properties).
//!
//! Unlike `serde_json::Value`, a [`Value`] encodes with the binary snapshot codec (it never
//! needs a self-describing format), and its maps are small ordered vectors rather than trees,
//! because a record's maps hold a handful of keys and a B-tree node costs hundreds of bytes.
//!
//! ```
//! use maxim_core::value::{Map, Value};
//! let mut intent = Map::new();
//! intent.insert("goal", Value::from("find mug"));
//! intent.insert("confidence", Value::from(0.8));
//! assert_eq!(intent.get("goal").and_then(Value::as_str), Some("find mug"));
//! assert!(intent.insert("goal", "grab mug".into()).is_some());
//! assert_eq!(intent.len(), 2);
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// How deeply lists and maps may nest in a [`Value`] that is read from bytes. Deeper input is
/// refused with a decode error instead of exhausting the stack.
pub const MAX_DEPTH: u32 = 64;

/// Most values (the value itself and everything inside it, map keys not counted) that one
/// [`Value`] or [`Map`] may hold; [`Value::check`] refuses more.
pub const MAX_VALUES: usize = 1 << 20;

/// A JSON-like value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub enum Value {
    /// Nothing.
    #[default]
    Null,
    /// A flag.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Text(String),
    /// A list.
    List(#[serde(deserialize_with = "nested")] Vec<Value>),
    /// A map with text keys.
    Map(#[serde(deserialize_with = "nested")] Map),
}

std::thread_local! {
    static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Counts one level of nesting while `T` is read; refuses more than [`MAX_DEPTH`] levels.
fn nested<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Level;
    impl Drop for Level {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let depth = DEPTH.with(|d| {
        let next = d.get() + 1;
        d.set(next);
        next
    });
    let _level = Level;
    if depth > MAX_DEPTH {
        return Err(serde::de::Error::custom(format_args!("values nest deeper than {MAX_DEPTH} levels")));
    }
    T::deserialize(deserializer)
}

/// Checks values, iteratively: at most [`MAX_DEPTH`] nested lists and maps, at most
/// [`MAX_VALUES`] values in all, and no key twice in one map. The roots count as
/// level 0, as a value or the values of a map field do when they are decoded.
fn check_values<'a>(roots: impl Iterator<Item = &'a Value>, field: &'static str) -> crate::Result<()> {
    let mut stack: Vec<(&Value, u32)> = roots.map(|v| (v, 0)).collect();
    let mut count = 0usize;
    while let Some((v, depth)) = stack.pop() {
        count += 1;
        if count > MAX_VALUES {
            return Err(crate::Error::invalid(field, format!("holds more than {MAX_VALUES} values")));
        }
        let children: &mut dyn Iterator<Item = &Value> = match v {
            Value::List(items) => &mut items.iter(),
            Value::Map(m) => {
                m.check_keys(field)?;
                &mut m.values()
            }
            _ => continue,
        };
        if depth + 1 > MAX_DEPTH {
            return Err(crate::Error::invalid(
                field,
                format!("nests lists and maps deeper than {MAX_DEPTH} levels"),
            ));
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// Shrinks the lists and maps of `nested` and everything in them, without recursion.
fn shrink_nested(mut nested: Vec<&mut Value>) {
    while let Some(v) = nested.pop() {
        match v {
            Value::List(items) => {
                items.shrink_to_fit();
                for item in items {
                    shrink_or_defer(item, &mut nested);
                }
            }
            Value::Map(m) => shrink_entries(&mut m.0, &mut nested),
            Value::Text(s) => s.shrink_to_fit(),
            _ => {}
        }
    }
}

/// Shrinks the entries of a map and their text values; lists and maps go to `nested`.
fn shrink_entries<'a>(entries: &'a mut Vec<(String, Value)>, nested: &mut Vec<&'a mut Value>) {
    entries.shrink_to_fit();
    for (k, v) in entries {
        k.shrink_to_fit();
        shrink_or_defer(v, nested);
    }
}

/// Shrinks text at once; a list or a map goes to `nested`.
fn shrink_or_defer<'a>(v: &'a mut Value, nested: &mut Vec<&'a mut Value>) {
    match v {
        Value::Text(s) => s.shrink_to_fit(),
        Value::List(_) | Value::Map(_) => nested.push(v),
        _ => {}
    }
}

/// Drops `value` without recursion, however deeply it nests (dropping a value nested 200,000
/// levels deep the ordinary way exhausts the stack). A store calls it on values it refuses.
pub fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::List(items) => stack.append(items),
            Value::Map(m) => stack.extend(m.0.drain(..).map(|(_, v)| v)),
            _ => {}
        }
    }
}

impl Value {
    /// Checks that this value can be stored and read back: at most [`MAX_DEPTH`] nested
    /// lists and maps (what the decoder reads), at most [`MAX_VALUES`] values, no key twice
    /// in a map. Iterative, so any input is safe. Every store runs it on the values it
    /// accepts and on the values it loads, so nothing is stored that cannot be read back.
    /// Errors are [`crate::Error::InvalidArgument`] naming `field`.
    ///
    /// ```
    /// use maxim_core::value::{Value, MAX_DEPTH};
    /// let mut v = Value::Null;
    /// for _ in 0..MAX_DEPTH { v = Value::List(vec![v]); }
    /// assert!(v.check("result").is_ok());
    /// assert!(Value::List(vec![v]).check("result").is_err());
    /// ```
    pub fn check(&self, field: &'static str) -> crate::Result<()> {
        check_values(std::iter::once(self), field)
    }

    /// Releases the room held beyond their contents by this value and everything in it, as
    /// [`Map::shrink_to_fit_deep`] does.
    pub fn shrink_to_fit_deep(&mut self) {
        shrink_nested(vec![self]);
    }

    /// The text, if this is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is an integer or a float.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Self::Int(i) => Some(i as f64),
            Self::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The flag, if this is a flag.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Self::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The map, if this is a map.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Self::Map(m) => Some(m),
            _ => None,
        }
    }

    /// True for [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// Calls `visit` on every text value inside this one (map keys excluded), depth first.
    pub fn for_each_text<'a>(&'a self, visit: &mut dyn FnMut(&'a str)) {
        match self {
            Self::Text(s) => visit(s),
            Self::List(items) => items.iter().for_each(|v| v.for_each_text(visit)),
            Self::Map(m) => m.values().for_each(|v| v.for_each_text(visit)),
            _ => {}
        }
    }
}

impl fmt::Display for Value {
    /// A compact JSON-like rendering (text is quoted and escaped).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x}"),
            Self::Text(s) => write!(f, "{s:?}"),
            Self::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Self::Map(m) => write!(f, "{m}"),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Self::Int(i)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Self::Float(x)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Self::Map(m)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Self::List(items)
    }
}

/// A small map from text keys to [`Value`]s, kept in insertion order.
///
/// Lookups are linear, which beats hashing and trees for the handful of keys a record holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Map(Vec<(String, Value)>);

impl Map {
    /// An empty map (allocates nothing).
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// An empty map with room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// Releases the room the map holds beyond its keys (records keep their maps for long).
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }

    /// Releases the room held beyond their contents by the map, its keys and every value in
    /// it, at any depth, without recursion; what is already tight is left as it is (no
    /// allocation, unlike a clone, which allocates everything again).
    ///
    /// ```
    /// use maxim_core::value::{Map, Value};
    /// let mut m = Map::new();
    /// m.insert("goal", Value::List(vec![Value::from("find mug")]));
    /// m.shrink_to_fit_deep();
    /// assert_eq!(m.get("goal"), Some(&Value::List(vec![Value::from("find mug")])));
    /// ```
    pub fn shrink_to_fit_deep(&mut self) {
        let mut nested: Vec<&mut Value> = Vec::new();
        shrink_entries(&mut self.0, &mut nested);
        shrink_nested(nested);
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key` to `value`; returns the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        let key = key.into();
        if let Some((_, slot)) = self.0.iter_mut().find(|(k, _)| *k == key) {
            return Some(std::mem::replace(slot, value));
        }
        self.0.push((key, value));
        None
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(pos).1)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values, in insertion order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Checks the map's values as [`Value::check`] does (a map field's values may nest
    /// [`MAX_DEPTH`] levels) and that no key appears twice.
    pub fn check(&self, field: &'static str) -> crate::Result<()> {
        self.check_keys(field)?;
        check_values(self.values(), field)
    }

    fn check_keys(&self, field: &'static str) -> crate::Result<()> {
        let twice = if self.0.len() <= SMALL_MAP {
            self.0.iter().enumerate().any(|(i, (k, _))| self.0[..i].iter().any(|(j, _)| j == k))
        } else {
            let mut seen = rustc_hash::FxHashSet::default();
            !self.0.iter().all(|(k, _)| seen.insert(k.as_str()))
        };
        if twice { Err(crate::Error::invalid(field, "a map holds a key twice")) } else { Ok(()) }
    }
}

/// Up to this many keys, maps are built and checked by linear scans.
const SMALL_MAP: usize = 16;

impl<K: Into<String>> FromIterator<(K, Value)> for Map {
    /// Later duplicates of a key replace earlier ones, in the place of the first. Linear in
    /// the number of entries (a hash of the keys for more than a few).
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let pairs: Vec<(String, Value)> = iter.into_iter().map(|(k, v)| (k.into(), v)).collect();
        if pairs.len() <= SMALL_MAP {
            let mut map = Self::with_capacity(pairs.len());
            for (k, v) in pairs {
                map.insert(k, v);
            }
            return map;
        }
        // For each key in order of first appearance: where it first appears, where it last does.
        let plan: Vec<(usize, usize)> = {
            let mut last: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
            last.reserve(pairs.len());
            for (i, (k, _)) in pairs.iter().enumerate() {
                last.insert(k, i);
            }
            if last.len() == pairs.len() {
                Vec::new()
            } else {
                let mut seen = rustc_hash::FxHashSet::default();
                pairs
                    .iter()
                    .enumerate()
                    .filter(|(_, (k, _))| seen.insert(k.as_str()))
                    .map(|(i, (k, _))| (i, last[k.as_str()]))
                    .collect()
            }
        };
        if plan.is_empty() {
            return Self(pairs);
        }
        let mut slots: Vec<Option<(String, Value)>> = pairs.into_iter().map(Some).collect();
        let mut entries = Vec::with_capacity(plan.len());
        for (first, last) in plan {
            let Some((key, value)) = slots[first].take() else { continue };
            let value = if last == first { value } else { slots[last].take().map_or(value, |(_, v)| v) };
            entries.push((key, value));
        }
        Self(entries)
    }
}

impl fmt::Display for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k:?}: {v}")?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        let inner: Map = [("found", Value::from(true)), ("object", Value::from("mug"))].into_iter().collect();
        Value::List(vec![Value::Null, Value::Int(-3), Value::Float(0.5), Value::Map(inner)])
    }

    #[test]
    fn postcard_round_trips_every_variant() {
        let v = sample();
        let bytes = postcard::to_stdvec(&v).unwrap();
        assert_eq!(postcard::from_bytes::<Value>(&bytes).unwrap(), v);
    }

    #[test]
    fn deep_nesting_is_refused_without_exhausting_the_stack() {
        let mut ok = Value::Null;
        for _ in 0..MAX_DEPTH {
            ok = Value::List(vec![ok]);
        }
        let bytes = postcard::to_stdvec(&ok).unwrap();
        assert_eq!(postcard::from_bytes::<Value>(&bytes).unwrap(), ok);
        let too_deep = Value::List(vec![ok.clone()]);
        assert!(postcard::from_bytes::<Value>(&postcard::to_stdvec(&too_deep).unwrap()).is_err());
        // A crafted payload of 200,000 nested lists: variant 5 (List) with one element, repeated.
        let mut crafted = [5u8, 1].repeat(200_000);
        crafted.push(0);
        assert!(postcard::from_bytes::<Value>(&crafted).is_err());
        // The depth counter is back to zero after errors.
        assert_eq!(postcard::from_bytes::<Value>(&bytes).unwrap(), ok);
    }

    #[test]
    fn display_is_json_like() {
        assert_eq!(sample().to_string(), r#"[null, -3, 0.5, {"found": true, "object": "mug"}]"#);
    }

    #[test]
    fn map_keeps_insertion_order_and_replaces_in_place() {
        let mut m = Map::new();
        m.insert("b", 1i64.into());
        m.insert("a", 2i64.into());
        assert_eq!(m.insert("b", 3i64.into()), Some(Value::Int(1)));
        assert_eq!(m.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(m.remove("b"), Some(Value::Int(3)));
        assert_eq!(m.remove("b"), None);
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn texts_are_visited_depth_first() {
        let value = sample();
        let mut seen = Vec::new();
        value.for_each_text(&mut |s| seen.push(s));
        assert_eq!(seen, ["mug"]);
        assert_eq!(Value::from(3i64).as_f64(), Some(3.0));
        assert!(Value::Null.is_null());
    }
}

#[cfg(test)]
mod limits {
    use super::*;

    fn nested_lists(depth: usize) -> Value {
        let mut v = Value::Null;
        for _ in 0..depth {
            v = Value::List(vec![v]);
        }
        v
    }

    /// Defect 3: what `check` accepts is exactly what the loader reads back.
    #[test]
    fn check_accepts_exactly_what_decodes() {
        for depth in [0, 1, 63, 64, 65, 80] {
            let v = nested_lists(depth);
            let decodes = postcard::from_bytes::<Value>(&postcard::to_stdvec(&v).unwrap()).is_ok();
            assert_eq!(v.check("v").is_ok(), decodes, "depth {depth}");
            assert_eq!(decodes, depth <= MAX_DEPTH as usize, "depth {depth}");
            // A map field holds values that nest as deep as a value may.
            let map: Map = [("k", v.clone())].into_iter().collect();
            let decodes = postcard::from_bytes::<Map>(&postcard::to_stdvec(&map).unwrap()).is_ok();
            assert_eq!(map.check("m").is_ok(), decodes, "map, depth {depth}");
        }
        let err = nested_lists(65).check("observations").unwrap_err();
        assert!(matches!(err, crate::Error::InvalidArgument { field: "observations", .. }), "{err:?}");
    }

    /// Defect 4: a value 200,000 levels deep is refused and disposed of without recursion.
    #[test]
    fn a_very_deep_value_is_refused_and_dropped_without_exhausting_the_stack() {
        let run = || {
            let deep = nested_lists(200_000);
            assert!(deep.check("v").is_err());
            dispose(deep);
            let mut map = Map::new();
            map.insert("k", nested_lists(200_000));
            assert!(map.check("m").is_err());
            dispose(Value::Map(map));
        };
        // A small stack, as a test thread or an async task may have.
        std::thread::Builder::new().stack_size(256 << 10).spawn(run).unwrap().join().unwrap();
    }

    #[test]
    fn too_many_values_and_duplicate_keys_are_refused() {
        let wide = Value::List(vec![Value::Null; MAX_VALUES]);
        assert!(wide.check("v").is_err());
        let fits = Value::List(vec![Value::Null; MAX_VALUES - 1]);
        assert!(fits.check("v").is_ok());
        // A map with a key twice can only come from bytes.
        let bytes = postcard::to_stdvec(&vec![("a", Value::Null), ("a", Value::Int(1))]).unwrap();
        let twice: Map = postcard::from_bytes(&bytes).unwrap();
        assert!(twice.check("m").is_err());
        assert!(Value::Map(twice).check("v").is_err());
    }

    /// Defect 9: building a map of 10^5 keys is not quadratic (it took about 20 s).
    #[test]
    fn building_a_large_map_is_fast_and_later_duplicates_win() {
        let start = std::time::Instant::now();
        let map: Map = (0..100_000i64).map(|i| (format!("key-{i}"), Value::Int(i))).collect();
        assert_eq!(map.len(), 100_000);
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
        assert_eq!(map.get("key-99999"), Some(&Value::Int(99_999)));
        let dup: Map =
            [("a", Value::Int(1)), ("b", Value::Int(2)), ("a", Value::Int(3))].into_iter().collect();
        assert_eq!(dup.iter().collect::<Vec<_>>(), [("a", &Value::Int(3)), ("b", &Value::Int(2))]);
        let many_dups: Map = (0..100_000i64).map(|i| (format!("k{}", i % 7), Value::Int(i))).collect();
        assert_eq!(many_dups.len(), 7);
        assert_eq!(many_dups.get("k0"), Some(&Value::Int(99_995)));
        assert_eq!(
            many_dups.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["k0", "k1", "k2", "k3", "k4", "k5", "k6"]
        );
    }
}
