//! [`Ring`]: a bounded history that keeps the newest values and forgets the oldest.
//!
//! A link keeps its last delays, predictions, memory ids and observation times in rings. A
//! ring that is full overwrites its oldest slot in place, so a busy link stops allocating
//! once its rings are full. It serialises as the plain sequence of its values, oldest first.
//!
//! ```
//! use nac::Ring;
//! let mut r = Ring::new(3);
//! for v in 1..=5 {
//!     r.push(v);
//! }
//! assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
//! assert_eq!(r.newest(), Some(&5));
//! assert_eq!(r.len(), 3);
//! ```

use maxim_core::SplitSlice;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A bounded history, oldest first: a full ring overwrites its oldest value in place, so it
/// stops allocating; it serialises as its values, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring<T> {
    buf: Vec<T>,
    /// Position of the oldest value once the ring is full (0 before).
    head: u32,
    /// Most values kept (the header is 32 bytes, so a link's four rings fill two cache lines).
    cap: u32,
}

/// A bound as the ring keeps it: at least one, at most `u32::MAX`.
fn bound(cap: usize) -> u32 {
    u32::try_from(cap.max(1)).unwrap_or(u32::MAX)
}

impl<T: Clone> Ring<T> {
    /// An empty ring keeping at most `cap` values (at least one).
    pub fn new(cap: usize) -> Self {
        Self { buf: Vec::new(), head: 0, cap: bound(cap) }
    }

    /// Appends `value`, forgetting the oldest when the ring is full.
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.buf.len() < self.cap as usize {
            self.buf.push(value);
        } else {
            self.buf[self.head as usize] = value;
            self.head += 1;
            if self.head == self.cap {
                self.head = 0;
            }
        }
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when no value is held.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Most values kept.
    pub fn capacity(&self) -> usize {
        self.cap as usize
    }

    /// The values, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone {
        let (newer, older) = self.buf.split_at(self.head as usize);
        older.iter().chain(newer.iter())
    }

    /// The newest value.
    pub fn newest(&self) -> Option<&T> {
        if self.buf.is_empty() {
            None
        } else if self.head == 0 {
            self.buf.last()
        } else {
            self.buf.get(self.head as usize - 1)
        }
    }

    /// The values, oldest first, lent as the ring's two halves (no copy).
    pub fn as_split(&self) -> SplitSlice<'_, T> {
        let (newer, older) = self.buf.split_at(self.head as usize);
        SplitSlice::new(older, newer)
    }

    /// The values, oldest first, as a new vector (two slice copies).
    pub fn to_vec(&self) -> Vec<T> {
        let (newer, older) = self.buf.split_at(self.head as usize);
        let mut out = Vec::with_capacity(self.buf.len());
        out.extend_from_slice(older);
        out.extend_from_slice(newer);
        out
    }

    /// Keeps the values `keep` accepts, in order; returns how many were dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) -> usize {
        let before = self.buf.len();
        let kept: Vec<T> = self.iter().filter(|v| keep(v)).cloned().collect();
        self.buf = kept;
        self.head = 0;
        before - self.buf.len()
    }

    /// Changes the bound to `cap` (at least one), keeping the newest values.
    pub fn set_capacity(&mut self, cap: usize) {
        let cap = bound(cap);
        let mut values = self.to_vec();
        if values.len() > cap as usize {
            values.drain(..values.len() - cap as usize);
        }
        self.buf = values;
        self.head = 0;
        self.cap = cap;
    }

    /// A ring of bound `cap` holding the newest values of `values` (oldest first).
    pub(crate) fn from_vec(mut values: Vec<T>, cap: usize) -> Self {
        let cap = bound(cap);
        if values.len() > cap as usize {
            values.drain(..values.len() - cap as usize);
        }
        Self { buf: values, head: 0, cap }
    }
}

impl<T: Clone + PartialEq> Ring<T> {
    /// Whether `value` is held.
    pub fn contains(&self, value: &T) -> bool {
        self.buf.contains(value)
    }
}

impl<T: Serialize + Clone> Serialize for Ring<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.buf.len()))?;
        for v in self.iter() {
            seq.serialize_element(v)?;
        }
        seq.end()
    }
}

impl<'de, T: Deserialize<'de> + Clone> Deserialize<'de> for Ring<T> {
    /// The bound is the number of values read; the loading store sets its own.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let values = Vec::<T>::deserialize(deserializer)?;
        let cap = values.len();
        Ok(Self::from_vec(values, cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn keeps_the_newest_cap_values(cap in 1usize..8, values in proptest::collection::vec(0u32..100, 0..40)) {
            let mut ring = Ring::new(cap);
            for &v in &values {
                ring.push(v);
            }
            let start = values.len().saturating_sub(cap);
            prop_assert_eq!(ring.to_vec(), values[start..].to_vec());
            prop_assert_eq!(ring.as_split().to_vec(), values[start..].to_vec());
            prop_assert_eq!(ring.newest(), values.last());
            let bytes = postcard::to_stdvec(&ring).unwrap();
            let back: Ring<u32> = postcard::from_bytes(&bytes).unwrap();
            prop_assert_eq!(back.to_vec(), ring.to_vec());
        }

        #[test]
        fn retain_and_resize_keep_order(cap in 1usize..8, new_cap in 1usize..8, values in proptest::collection::vec(0u32..10, 0..30)) {
            let mut ring = Ring::new(cap);
            for &v in &values {
                ring.push(v);
            }
            let mut model = ring.to_vec();
            let dropped = ring.retain(|v| v % 2 == 0);
            let before = model.len();
            model.retain(|v| v % 2 == 0);
            prop_assert_eq!(dropped, before - model.len());
            prop_assert_eq!(ring.to_vec(), model.clone());
            ring.set_capacity(new_cap);
            let start = model.len().saturating_sub(new_cap);
            prop_assert_eq!(ring.to_vec(), model[start..].to_vec());
            ring.push(99);
            prop_assert_eq!(ring.newest(), Some(&99));
            prop_assert!(ring.len() <= new_cap);
        }
    }
}
