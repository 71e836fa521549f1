//! FNV-1a, the one small non-cryptographic hash the workspace shares.
//!
//! The hash embedder hashes words and character n-grams with it, and the episodic layer names
//! state snapshots and queries by it. It is stable across processes, platforms and versions
//! (unlike the standard library's `DefaultHasher`), which is what stored hashes need; it is
//! not meant to resist an attacker.
//!
//! ```
//! use maxim_core::hash::{Fnv1a, fnv1a64};
//! assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
//! let mut h = Fnv1a::new();
//! h.write(b"foo");
//! h.write(b"bar");
//! assert_eq!(h.finish(), fnv1a64(b"foobar"));
//! ```

/// The FNV-1a 64 offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// The FNV-1a 64 prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`.
#[inline]
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}

/// An FNV-1a 64 state, for hashing a value piece by piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// A state at the offset basis.
    #[inline]
    pub const fn new() -> Self {
        Self(FNV_OFFSET)
    }

    /// A state continuing from `state` (a domain tag xor-ed into the basis, say).
    #[inline]
    pub const fn from_state(state: u64) -> Self {
        Self(state)
    }

    /// Hashes `bytes` into the state.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u8(b);
        }
    }

    /// Hashes one byte into the state.
    #[inline]
    pub fn write_u8(&mut self, byte: u8) {
        self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
    }

    /// The hash so far.
    #[inline]
    pub const fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        let mut h = Fnv1a::from_state(FNV_OFFSET);
        for b in *b"foobar" {
            h.write_u8(b);
        }
        assert_eq!(h.finish(), fnv1a64(b"foobar"));
    }
}
