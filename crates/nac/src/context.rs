//! Contexts: their stable hash (part of a link's key), their equality and their similarity.
//!
//! A context is a [`Map`] (`{"object": "mug", "mode": "explore"}`). Two contexts with the same
//! items in any order are the same context: the hash combines the items' hashes order-free and
//! equality compares them as sets (`spec/maxim-reference.md` §8.3 hashes the key-sorted items).
//! The hash is this crate's own, fixed 64-bit function, so link ids stay the same across
//! builds, platforms and versions of any hashing crate.
//!
//! ```
//! use maxim_core::value::{Map, Value};
//! use nac::context::{context_hash, context_similarity};
//! let a: Map = [("object", Value::from("mug")), ("mode", Value::from("explore"))].into_iter().collect();
//! let b: Map = [("mode", Value::from("explore")), ("object", Value::from("mug"))].into_iter().collect();
//! assert_eq!(context_hash(&a), context_hash(&b));
//! let c: Map = [("object", Value::from("MUG"))].into_iter().collect();
//! assert_eq!(context_similarity(&a, &c), 0.4); // "object" matches case-insensitively (0.8), of 2 keys
//! assert_eq!(context_similarity(&Map::new(), &c), 0.5);
//! ```

use maxim_core::value::{Map, Value};

use crate::error::{Error, Result};

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// What a hash of this module is fed: 64-bit words.
pub(crate) trait Words {
    /// Feeds one word.
    fn word(&mut self, w: u64);

    /// Feeds `b` as its length, then its bytes eight at a time (the last word padded with
    /// zeros).
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.word(b.len() as u64);
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(last));
        }
    }
}

/// A small, fixed, non-cryptographic 64-bit hasher (word-at-a-time multiply-rotate with a
/// SplitMix64 finaliser). Stable forever: link ids are derived from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StableHasher(u64);

impl StableHasher {
    pub(crate) const fn new(seed: u64) -> Self {
        Self(seed ^ 0x243F_6A88_85A3_08D3)
    }

    #[inline]
    pub(crate) fn finish(self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Words for StableHasher {
    #[inline]
    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(K);
    }
}

/// Two [`StableHasher`]s with different seeds fed the same words in one pass: the two
/// halves of a 128-bit hash. Each half equals the single hasher's result with its seed; the
/// two multiply chains are independent, so the processor runs them side by side and the
/// pair costs little more than one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairHasher(StableHasher, StableHasher);

impl PairHasher {
    pub(crate) const fn new(seed_a: u64, seed_b: u64) -> Self {
        Self(StableHasher::new(seed_a), StableHasher::new(seed_b))
    }

    /// Feeds `a` to the first half and `b` to the second.
    #[inline]
    pub(crate) fn words(&mut self, a: u64, b: u64) {
        self.0.word(a);
        self.1.word(b);
    }

    #[inline]
    pub(crate) fn finish(self) -> (u64, u64) {
        (self.0.finish(), self.1.finish())
    }
}

impl Words for PairHasher {
    #[inline]
    fn word(&mut self, w: u64) {
        self.words(w, w);
    }
}

/// The stable hash of one text (used to index links by event signature).
pub(crate) fn text_hash(text: &str) -> u64 {
    let mut h = StableHasher::new(1);
    h.bytes(text.as_bytes());
    h.finish()
}

fn hash_value(h: &mut impl Words, v: &Value) {
    match v {
        Value::Null => h.word(0),
        Value::Bool(b) => h.word(if *b { 0x11 } else { 0x10 }),
        Value::Int(i) => {
            h.word(2);
            h.word(*i as u64);
        }
        Value::Float(f) => {
            h.word(3);
            // 0.0 and -0.0 compare equal, so they hash equal.
            h.word(if *f == 0.0 { 0 } else { f.to_bits() });
        }
        Value::Text(s) => {
            h.word(4);
            h.bytes(s.as_bytes());
        }
        Value::List(items) => {
            h.word(5);
            h.word(items.len() as u64);
            for item in items {
                hash_value(h, item);
            }
        }
        Value::Map(map) => {
            h.word(6);
            h.word(map.len() as u64);
            for (k, v) in map.iter() {
                h.bytes(k.as_bytes());
                hash_value(h, v);
            }
        }
    }
}

/// The stable 64-bit hash of a context, independent of the order of its top-level items
/// (nested maps hash in order, as they compare). An empty context hashes to a fixed value.
pub fn context_hash(context: &Map) -> u64 {
    seeded_context_hash(context, 2, 3)
}

/// A second context hash, independent of [`context_hash`], for verifying link keys.
#[cfg(test)]
pub(crate) fn context_check_hash(context: &Map) -> u64 {
    seeded_context_hash(context, 12, 13)
}

fn seeded_context_hash(context: &Map, item_seed: u64, final_seed: u64) -> u64 {
    let mut sum = 0u64;
    for (k, v) in context.iter() {
        let mut h = StableHasher::new(item_seed);
        h.bytes(k.as_bytes());
        hash_value(&mut h, v);
        sum = sum.wrapping_add(h.finish());
    }
    let mut h = StableHasher::new(final_seed);
    h.word(context.len() as u64);
    h.word(sum);
    h.finish()
}

/// [`context_hash`] and the check hash of the context in one pass over it: the same two
/// values as the separate functions.
pub(crate) fn context_hash_pair(context: &Map) -> (u64, u64) {
    let (mut sum_a, mut sum_b) = (0u64, 0u64);
    for (k, v) in context.iter() {
        let mut h = PairHasher::new(2, 12);
        h.bytes(k.as_bytes());
        hash_value(&mut h, v);
        let (a, b) = h.finish();
        sum_a = sum_a.wrapping_add(a);
        sum_b = sum_b.wrapping_add(b);
    }
    let mut h = PairHasher::new(3, 13);
    h.word(context.len() as u64);
    h.words(sum_a, sum_b);
    h.finish()
}

/// Whether two contexts hold the same items, in any order.
pub fn same_context(a: &Map, b: &Map) -> bool {
    a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v))
}

/// How far the `query` context agrees with the `stored` one, in `[0, 1]`
/// (`spec/maxim-reference.md` §8.3, the newest, directional form).
///
/// Empty on either side gives 0.5. Otherwise each key of `stored` scores 1 when `query` holds
/// an equal value, 0.8 when both are texts equal up to case, 0 otherwise; the sum is divided
/// by the number of keys of `stored` (not of the union).
pub fn context_similarity(stored: &Map, query: &Map) -> f64 {
    if stored.is_empty() || query.is_empty() {
        return 0.5;
    }
    let mut score = 0.0;
    for (k, v) in stored.iter() {
        let Some(q) = query.get(k) else { continue };
        if q == v {
            score += 1.0;
        } else if let (Value::Text(a), Value::Text(b)) = (v, q)
            && a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
        {
            score += 0.8;
        }
    }
    score / stored.len() as f64
}

/// Refuses a context holding a NaN or infinite number (at any depth), so no link stores one.
pub(crate) fn check_context(field: &'static str, context: &Map) -> Result<()> {
    fn finite(v: &Value) -> Option<f64> {
        match v {
            Value::Float(f) if !f.is_finite() => Some(*f),
            Value::List(items) => items.iter().find_map(finite),
            Value::Map(map) => map.values().find_map(finite),
            _ => None,
        }
    }
    match context.values().find_map(finite) {
        Some(bad) => Err(Error::out_of_range(field, bad, "a context of finite numbers")),
        None => Ok(()),
    }
}

/// Refuses an empty (or blank) name, or one longer than [`MAX_NAME_BYTES`].
pub(crate) fn check_name(field: &'static str, name: &str) -> Result<()> {
    // Stops at the first character that is not whitespace: one step for a usual name.
    if name.chars().all(char::is_whitespace) {
        return Err(Error::invalid(field, "empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(field, format!("{} bytes, at most {MAX_NAME_BYTES} allowed", name.len())));
    }
    Ok(())
}

/// Longest event or outcome type or signature, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

#[cfg(test)]
mod tests {
    use proptest::prelude::Strategy;

    use super::*;

    fn map(items: &[(&str, Value)]) -> Map {
        items.iter().cloned().collect()
    }

    #[test]
    fn hash_is_order_free_and_tells_values_apart() {
        let a = map(&[("a", Value::Int(1)), ("b", Value::from("x"))]);
        let b = map(&[("b", Value::from("x")), ("a", Value::Int(1))]);
        assert_eq!(context_hash(&a), context_hash(&b));
        assert!(same_context(&a, &b));
        let c = map(&[("a", Value::Int(2)), ("b", Value::from("x"))]);
        assert_ne!(context_hash(&a), context_hash(&c));
        assert!(!same_context(&a, &c));
        let int = map(&[("a", Value::Int(1))]);
        let float = map(&[("a", Value::Float(1.0))]);
        assert_ne!(context_hash(&int), context_hash(&float));
        assert_ne!(context_hash(&Map::new()), context_hash(&int));
        assert_eq!(
            context_hash(&map(&[("z", Value::Float(0.0))])),
            context_hash(&map(&[("z", Value::Float(-0.0))]))
        );
    }

    #[test]
    fn hash_is_fixed_across_builds() {
        // Link ids are derived from this hash; a change would orphan every saved link id.
        assert_eq!(text_hash("tool:grasp"), GOLDEN_TEXT);
        assert_eq!(context_hash(&map(&[("mode", Value::from("explore"))])), GOLDEN_CONTEXT);
    }

    proptest::proptest! {
        #[test]
        fn the_pair_is_the_two_single_hashes(
            items in proptest::collection::vec(("[a-z]{0,12}", proptest::prop_oneof![
                "[a-zA-Z :]{0,30}".prop_map(Value::from),
                proptest::num::i64::ANY.prop_map(Value::Int),
                (-1e9f64..1e9).prop_map(Value::Float),
                proptest::bool::ANY.prop_map(Value::Bool),
            ]), 0..5)
        ) {
            let context: Map = items.into_iter().collect();
            proptest::prop_assert_eq!(context_hash_pair(&context), (context_hash(&context), context_check_hash(&context)));
        }
    }

    const GOLDEN_TEXT: u64 = 6_523_538_514_762_285_699;
    const GOLDEN_CONTEXT: u64 = 2_768_325_877_391_718_507;

    #[test]
    fn similarity_is_directional() {
        let stored = map(&[("object", Value::from("mug")), ("room", Value::from("kitchen"))]);
        let query = map(&[("object", Value::from("mug"))]);
        assert_eq!(context_similarity(&stored, &query), 0.5);
        assert_eq!(context_similarity(&query, &stored), 1.0);
        let other = map(&[("object", Value::from("box"))]);
        assert_eq!(context_similarity(&query, &other), 0.0);
        let caps = map(&[("object", Value::from("Mug"))]);
        assert!((context_similarity(&query, &caps) - 0.8).abs() < 1e-12);
        assert_eq!(context_similarity(&query, &Map::new()), 0.5);
    }

    #[test]
    fn non_finite_numbers_are_refused_at_any_depth() {
        let nested = Value::Map(map(&[("x", Value::List(vec![Value::Float(f64::NAN)]))]));
        assert!(check_context("context", &map(&[("deep", nested)])).is_err());
        assert!(check_context("context", &map(&[("x", Value::Float(f64::INFINITY))])).is_err());
        assert!(check_context("context", &map(&[("x", Value::Float(1.5))])).is_ok());
        assert!(check_name("event_signature", "  ").is_err());
        assert!(check_name("event_signature", &"x".repeat(MAX_NAME_BYTES + 1)).is_err());
    }
}
