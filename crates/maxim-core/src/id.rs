//! Record ids: 128-bit, time-ordered, globally unique.
//!
//! A [`RecordId`] holds the microsecond timestamp of its creation in its high 64 bits and
//! 64 random bits in its low half, so ids sort by creation time and two ids made in the same
//! microsecond by different generators differ with overwhelming probability.
//! An [`IdGenerator`] draws the random half from a seedable [`SplitMix64`] stream, which
//! makes tests and simulations deterministic, and never hands out the same or a smaller id
//! twice.
//!
//! ```
//! use maxim_core::{IdGenerator, ManualClock, RecordId, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut ids = IdGenerator::seeded(7);
//! let a = ids.next_id(clock.now());
//! let b = ids.next_id(clock.now());
//! assert!(a < b);
//! assert_eq!(a.created_at(), Timestamp::from_secs(1_700_000_000));
//! let text = a.to_string();
//! assert_eq!(text.parse::<RecordId>()?, a);
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;
use crate::time::Timestamp;

/// A record's id: 128 bits, time-ordered, `Copy`, stable across save and load.
///
/// The text form is 32 lowercase hex digits grouped 8-4-4-4-12 like a UUID; it sorts in the
/// same order as the ids. Human-readable serde formats (JSON) carry the text form, binary
/// formats (the snapshot codec) the 16 raw bytes.
///
/// The two halves are kept as `u64`s, so an id is 8-byte aligned: a `(RecordId, u32)` entry
/// of a hash index takes 24 bytes and a `LayerRecord` 24, where a `u128` (16-byte aligned)
/// made them 32. Order, equality and hashing are those of the `u128`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RecordId {
    // Declared high half first: the derived order is the `u128`'s.
    hi: u64,
    lo: u64,
}

const _: () = assert!(std::mem::size_of::<(RecordId, u32)>() == 24 && std::mem::align_of::<RecordId>() == 8);

impl std::hash::Hash for RecordId {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u128(self.as_u128());
    }
}

impl RecordId {
    /// The id whose bits are `bits`.
    pub const fn from_u128(bits: u128) -> Self {
        Self { hi: (bits >> 64) as u64, lo: bits as u64 }
    }

    /// The id's 128 bits.
    pub const fn as_u128(self) -> u128 {
        ((self.hi as u128) << 64) | self.lo as u128
    }

    /// The id made at `at` with `random` as its low half.
    pub fn from_parts(at: Timestamp, random: u64) -> Self {
        let micros = u64::try_from(at.as_micros()).unwrap_or(0);
        Self { hi: micros, lo: random }
    }

    /// The creation time held in the id's high half.
    pub fn created_at(self) -> Timestamp {
        Timestamp::from_micros(i64::try_from(self.hi).unwrap_or(i64::MAX))
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.as_u128();
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v & 0xFFFF_FFFF_FFFF
        )
    }
}

impl fmt::Debug for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordId({self})")
    }
}

impl FromStr for RecordId {
    type Err = Error;

    /// Parses the canonical 8-4-4-4-12 form or 32 bare hex digits (either case).
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = |reason: &str| Error::invalid("record id", format!("{reason} in {s:?}"));
        let dashed = s.len() == 36;
        if !dashed && s.len() != 32 {
            return Err(bad("expected 32 hex digits, optionally grouped 8-4-4-4-12"));
        }
        let mut bits: u128 = 0;
        for (i, byte) in s.bytes().enumerate() {
            if dashed && matches!(i, 8 | 13 | 18 | 23) {
                if byte != b'-' {
                    return Err(bad("misplaced group separator"));
                }
                continue;
            }
            let digit = char::from(byte).to_digit(16).ok_or_else(|| bad("non-hex character"))?;
            bits = (bits << 4) | u128::from(digit);
        }
        Ok(Self::from_u128(bits))
    }
}

impl Serialize for RecordId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            serializer.serialize_bytes(&self.as_u128().to_be_bytes())
        }
    }
}

impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RecordId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a record id (text or 16 bytes)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RecordId, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<RecordId, E> {
                let bytes: [u8; 16] = v.try_into().map_err(|_| E::invalid_length(v.len(), &"16 bytes"))?;
                Ok(RecordId::from_u128(u128::from_be_bytes(bytes)))
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(Visitor)
        } else {
            deserializer.deserialize_bytes(Visitor)
        }
    }
}

/// The SplitMix64 generator (Steele, Lea and Flood), as `shared/bench/WORKLOAD.md` defines it.
///
/// Small, fast, seedable and identical on every platform. It is not cryptographic.
///
/// ```
/// use maxim_core::SplitMix64;
/// let mut rng = SplitMix64::new(1);
/// assert_eq!(rng.next_u64(), 0x910a_2dec_8902_5cc1);
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream starting from `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A stream seeded from the process's hash randomness (different in every process).
    pub fn from_entropy() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
        );
        Self::new(hasher.finish())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float uniform in `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in `[0, n)` (`next_u64() mod n`, as the workload defines it); 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }
}

/// Hands out [`RecordId`]s: the clock's time in the high half, a [`SplitMix64`] draw in the
/// low half, and never an id less than or equal to the previous one.
#[derive(Debug, Clone)]
pub struct IdGenerator {
    rng: SplitMix64,
    last: u128,
}

impl IdGenerator {
    /// A generator whose random halves come from `seed`: the same seed and the same times
    /// give the same ids.
    pub fn seeded(seed: u64) -> Self {
        Self { rng: SplitMix64::new(seed), last: 0 }
    }

    /// A generator seeded differently in every process.
    pub fn from_entropy() -> Self {
        Self { rng: SplitMix64::from_entropy(), last: 0 }
    }

    /// The next id, made at `now`. Strictly greater than every id this generator made before,
    /// even if the clock stands still or steps back (until the 128-bit space is exhausted,
    /// which no clock reaches: the last id then repeats).
    pub fn next_id(&mut self, now: Timestamp) -> RecordId {
        let candidate = RecordId::from_parts(now, self.rng.next_u64()).as_u128();
        let id = if candidate > self.last { candidate } else { self.last.saturating_add(1) };
        self.last = id;
        RecordId::from_u128(id)
    }

    /// Makes sure later ids sort after `id` (call it for ids loaded from disk).
    pub fn observe(&mut self, id: RecordId) {
        self.last = self.last.max(id.as_u128());
    }
}

impl Default for IdGenerator {
    fn default() -> Self {
        Self::from_entropy()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn splitmix_matches_the_workload_vectors() {
        let mut rng = SplitMix64::new(1);
        assert_eq!(rng.next_u64(), 0x910a_2dec_8902_5cc1);
        assert_eq!(rng.next_u64(), 0xbeeb_8da1_658e_ec67);
        assert_eq!(rng.next_u64(), 0xf893_a2ee_fb32_555e);
    }

    #[test]
    fn below_zero_is_zero_rather_than_a_panic() {
        assert_eq!(SplitMix64::new(4).below(0), 0);
    }

    #[test]
    fn text_form_is_grouped_lowercase_hex() {
        let id = RecordId::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(id.to_string(), "01234567-89ab-cdef-0011-223344556677");
        assert_eq!("0123456789ABCDEF0011223344556677".parse::<RecordId>().unwrap(), id);
    }

    #[test]
    fn malformed_text_is_a_typed_error() {
        for bad in ["", "xyz", "01234567-89ab-cdef-0011-22334455667g", "01234567089ab-cdef-0011-223344556677"]
        {
            assert!(matches!(bad.parse::<RecordId>(), Err(Error::InvalidArgument { .. })), "{bad}");
        }
    }

    #[test]
    fn ids_carry_their_time_and_never_repeat_when_the_clock_stalls() {
        let t = Timestamp::from_secs(1_700_000_000);
        let mut g = IdGenerator::seeded(3);
        let ids: Vec<_> = (0..1000).map(|_| g.next_id(t)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids[0].created_at(), t);
        let back = g.next_id(Timestamp::from_secs(1));
        assert!(back > ids[999]);
    }

    #[test]
    fn seeded_generators_are_deterministic() {
        let t = Timestamp::from_secs(5);
        let a: Vec<_> = (0..4)
            .map({
                let mut g = IdGenerator::seeded(9);
                move |_| g.next_id(t)
            })
            .collect();
        let b: Vec<_> = (0..4)
            .map({
                let mut g = IdGenerator::seeded(9);
                move |_| g.next_id(t)
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn serde_is_text_for_json_and_bytes_for_postcard() {
        let id = RecordId::from_u128(42);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"00000000-0000-0000-0000-00000000002a\"");
        assert_eq!(serde_json::from_str::<RecordId>(&json).unwrap(), id);
        let bin = postcard::to_stdvec(&id).unwrap();
        assert_eq!(bin.len(), 17);
        assert_eq!(postcard::from_bytes::<RecordId>(&bin).unwrap(), id);
    }

    proptest! {

    /// The two-word id orders, compares and hashes exactly as its `u128` does.
    #[test]
    fn two_words_order_and_hash_as_the_u128(a in any::<u128>(), b in any::<u128>(), hi in any::<u64>()) {
        use std::hash::{BuildHasher, BuildHasherDefault};
        // Ids sharing their high half order by the low one.
        let (x, y) = ((u128::from(hi) << 64) | (a & u128::from(u64::MAX)), (u128::from(hi) << 64) | (b & u128::from(u64::MAX)));
        for (p, q) in [(a, b), (x, y), (a, a)] {
            let (ip, iq) = (RecordId::from_u128(p), RecordId::from_u128(q));
            prop_assert_eq!(ip.as_u128(), p);
            prop_assert_eq!(ip.cmp(&iq), p.cmp(&q));
            prop_assert_eq!(ip == iq, p == q);
            let fx = BuildHasherDefault::<rustc_hash::FxHasher>::default();
            prop_assert_eq!(fx.hash_one(ip), fx.hash_one(p));
        }
    }
        #[test]
        fn text_round_trips_and_preserves_order(a: u128, b: u128) {
            let (ia, ib) = (RecordId::from_u128(a), RecordId::from_u128(b));
            let (sa, sb) = (ia.to_string(), ib.to_string());
            prop_assert_eq!(sa.parse::<RecordId>().unwrap(), ia);
            prop_assert_eq!(sa.cmp(&sb), ia.cmp(&ib));
        }

        #[test]
        fn generated_ids_are_strictly_increasing(seed: u64, steps in proptest::collection::vec(-5_000i64..5_000, 1..64)) {
            let mut g = IdGenerator::seeded(seed);
            let mut t = 1_700_000_000_000_000i64;
            let mut prev = RecordId::default();
            for s in steps {
                t += s;
                let id = g.next_id(Timestamp::from_micros(t));
                prop_assert!(id > prev);
                prev = id;
            }
        }

        #[test]
        fn serde_round_trips(bits: u128) {
            let id = RecordId::from_u128(bits);
            let bin = postcard::to_stdvec(&id).unwrap();
            prop_assert_eq!(postcard::from_bytes::<RecordId>(&bin).unwrap(), id);
            let json = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(serde_json::from_str::<RecordId>(&json).unwrap(), id);
        }
    }
}
