//! [`VectorIndex`]: the flat index of embeddings, searched by cosine similarity, scored in
//! blocks as ndarray matrix-vector products and across rayon's pool when it is large.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use ndarray::{ArrayView1, ArrayView2, ArrayViewMut1};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize, Serializer};

use super::{check_dim, normalize_in_place, sum_of_squares};
use crate::error::{Error, Result};
use crate::id::RecordId;

/// How [`VectorIndex::top_k_with`] spreads the scoring over threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parallelism {
    /// In parallel from [`PARALLEL_MIN_ROWS`] rows on, when rayon has more than one thread.
    #[default]
    Auto,
    /// On the calling thread.
    Sequential,
    /// On rayon's pool, whatever the size.
    Parallel,
}

/// The row count from which [`Parallelism::Auto`] scores in parallel.
///
/// Measured with `cargo bench -p maxim-benches --bench embed` (`vector_top10`, dimension 128,
/// two cores): a row costs 24 to 30 ns to score, and waking rayon's pool costs the parallel
/// path some 140 µs, so at 10^4 rows it is slower than the sequential one (262 vs 244 µs),
/// at 3·10^4 it starts to win (545 vs 763 µs) and at 10^5 it takes half the time (1.36 vs
/// 2.61 ms).
pub const PARALLEL_MIN_ROWS: usize = 32_768;

/// Rows scored as one block (one gemv, one bounded heap): a block's scores stay in L1.
const BLOCK_ROWS: usize = 1024;

/// A flat index of `(RecordId → vector)` rows of one dimension, searched by cosine
/// similarity.
///
/// Rows live in one `Vec<f32>` (row-major, L2-normalised when added), scored as an ndarray
/// matrix-vector product in blocks of rows, each block keeping its best `k` in a bounded
/// heap; above [`PARALLEL_MIN_ROWS`] rows the blocks are scored on rayon's pool. The result
/// does not depend on the path: every row's score is computed the same way and the order
/// (score descending, then id ascending) is total. Adding an existing id replaces its row;
/// removing swaps the last row into the hole (O(1)), so row order is not insertion order.
///
/// Inputs are checked: a vector of the wrong length or with a non-finite value is refused
/// and the index is left as it was. A zero vector may be stored (a text with no features);
/// it is never returned by a search.
///
/// Serde writes `{dim, ids, rows}` and checks on load that the sizes agree, the ids are
/// distinct and every row is finite and of norm 0 or 1.
///
/// ```
/// use maxim_core::embed::VectorIndex;
/// use maxim_core::RecordId;
/// let id = |n| RecordId::from_u128(n);
/// let mut index = VectorIndex::new(2)?;
/// index.add(id(1), &[1.0, 0.0])?;
/// index.add(id(2), &[3.0, 3.0])?; // stored normalised
/// index.add(id(3), &[0.0, -1.0])?;
/// let hits = index.top_k(&[1.0, 0.1], 2)?;
/// assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [id(1), id(2)]);
/// index.remove(id(1))?;
/// assert_eq!(index.len(), 2);
/// assert!(index.add(id(4), &[f32::NAN, 0.0]).is_err());
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "IndexData")]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<RecordId>,
    rows: Vec<f32>,
    /// Whether each row is non-zero (zero rows are never returned).
    live: Vec<bool>,
    slot_of: FxHashMap<RecordId, usize>,
}

impl VectorIndex {
    /// An empty index of vectors of `dim` values (1 to [`MAX_DIM`](super::MAX_DIM)).
    pub fn new(dim: usize) -> Result<Self> {
        Self::with_capacity(dim, 0)
    }

    /// An empty index with room for `rows` vectors.
    pub fn with_capacity(dim: usize, rows: usize) -> Result<Self> {
        check_dim(dim)?;
        let mut slot_of = FxHashMap::default();
        slot_of.reserve(rows);
        Ok(Self {
            dim,
            ids: Vec::with_capacity(rows),
            rows: Vec::with_capacity(rows.saturating_mul(dim)),
            live: Vec::with_capacity(rows),
            slot_of,
        })
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index holds no row.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` has a row.
    pub fn contains(&self, id: RecordId) -> bool {
        self.slot_of.contains_key(&id)
    }

    /// The stored (L2-normalised) vector of `id`.
    pub fn get(&self, id: RecordId) -> Option<&[f32]> {
        self.slot_of.get(&id).map(|&slot| self.row(slot))
    }

    /// The ids, in row order (which removals change).
    pub fn ids(&self) -> &[RecordId] {
        &self.ids
    }

    /// The `(id, stored vector)` rows, in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (RecordId, &[f32])> + '_ {
        self.ids.iter().copied().zip(self.rows.chunks_exact(self.dim))
    }

    /// Stores `vector`, L2-normalised, as the row of `id`, replacing the row `id` had.
    ///
    /// Errors: `vector` does not have [`dim`](Self::dim) values ([`Error::InvalidArgument`])
    /// or holds a NaN or an infinity ([`Error::OutOfRange`]); the index is then unchanged.
    pub fn add(&mut self, id: RecordId, vector: &[f32]) -> Result<()> {
        check_vector("vector", vector, self.dim)?;
        let slot = if let Some(&slot) = self.slot_of.get(&id) {
            slot
        } else {
            let slot = self.ids.len();
            self.ids.push(id);
            self.rows.resize(self.rows.len() + self.dim, 0.0);
            self.live.push(false);
            self.slot_of.insert(id, slot);
            slot
        };
        let row = &mut self.rows[slot * self.dim..(slot + 1) * self.dim];
        row.copy_from_slice(vector);
        self.live[slot] = normalize_in_place(row);
        Ok(())
    }

    /// Removes the row of `id`, moving the last row into its place.
    ///
    /// Errors: [`Error::NotFound`] when `id` has no row.
    pub fn remove(&mut self, id: RecordId) -> Result<()> {
        let slot = self.slot_of.remove(&id).ok_or(Error::NotFound { id })?;
        let last = self.ids.len() - 1;
        if slot != last {
            let moved = self.ids[last];
            self.ids[slot] = moved;
            self.live[slot] = self.live[last];
            self.rows.copy_within(last * self.dim..(last + 1) * self.dim, slot * self.dim);
            self.slot_of.insert(moved, slot);
        }
        self.ids.pop();
        self.live.pop();
        self.rows.truncate(last * self.dim);
        Ok(())
    }

    /// Removes every row.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.rows.clear();
        self.live.clear();
        self.slot_of.clear();
    }

    /// The `k` rows most similar to `query` by cosine, best first, ties by id ascending.
    ///
    /// Zero rows are skipped, and a zero query matches nothing (the result is empty).
    /// Scores are in `[-1, 1]`. Errors: as for [`add`](Self::add).
    pub fn top_k(&self, query: &[f32], k: usize) -> Result<Vec<(RecordId, f32)>> {
        self.top_k_with(query, k, Parallelism::Auto, |_| true)
    }

    /// [`top_k`](Self::top_k) among the ids for which `filter` is true.
    ///
    /// `filter` is asked only about rows that would enter the current best `k`, possibly from
    /// several threads, in no particular order.
    ///
    /// ```
    /// use maxim_core::embed::VectorIndex;
    /// use maxim_core::RecordId;
    /// let mut index = VectorIndex::new(2)?;
    /// for n in 1..=4u128 {
    ///     index.add(RecordId::from_u128(n), &[1.0, n as f32])?;
    /// }
    /// let odd = index.top_k_filtered(&[1.0, 0.0], 10, |id| id.as_u128() % 2 == 1)?;
    /// assert_eq!(odd.iter().map(|h| h.0.as_u128()).collect::<Vec<_>>(), [1, 3]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn top_k_filtered<F>(&self, query: &[f32], k: usize, filter: F) -> Result<Vec<(RecordId, f32)>>
    where
        F: Fn(RecordId) -> bool + Sync,
    {
        self.top_k_with(query, k, Parallelism::Auto, filter)
    }

    /// [`top_k_filtered`](Self::top_k_filtered) with the choice of [`Parallelism`]; every
    /// choice returns the same result.
    pub fn top_k_with<F>(
        &self,
        query: &[f32],
        k: usize,
        parallelism: Parallelism,
        filter: F,
    ) -> Result<Vec<(RecordId, f32)>>
    where
        F: Fn(RecordId) -> bool + Sync,
    {
        check_vector("query", query, self.dim)?;
        let _span = tracing::debug_span!("vector_top_k", rows = self.len(), k).entered();
        let mut q = query.to_vec();
        if k == 0 || self.is_empty() || !normalize_in_place(&mut q) {
            return Ok(Vec::new());
        }
        let parallel = match parallelism {
            Parallelism::Auto => self.len() >= PARALLEL_MIN_ROWS && rayon::current_num_threads() > 1,
            Parallelism::Sequential => false,
            Parallelism::Parallel => true,
        };
        let k = k.min(self.len());
        let n_blocks = self.len().div_ceil(BLOCK_ROWS);
        let best = if parallel {
            (0..n_blocks)
                .into_par_iter()
                .fold(
                    || (BestK::new(k), vec![0.0; BLOCK_ROWS]),
                    |(mut best, mut scores), block| {
                        self.score_block(block, &q, &mut scores, &mut best, &filter);
                        (best, scores)
                    },
                )
                .map(|(best, _)| best)
                .reduce(|| BestK::new(k), BestK::merge)
        } else {
            let mut best = BestK::new(k);
            let mut scores = vec![0.0; BLOCK_ROWS];
            for block in 0..n_blocks {
                self.score_block(block, &q, &mut scores, &mut best, &filter);
            }
            best
        };
        Ok(best.into_sorted())
    }

    /// [`top_k`](Self::top_k) among `candidates` only: the `k` of them most similar to
    /// `query` by cosine, best first, ties by id ascending; ids without a row, zero rows and
    /// repeated ids are skipped. Its cost follows the candidates, not the index, which
    /// makes it the way to re-score a shortlist (the hub's recall scores its lexical
    /// candidates so, whatever the size of the store).
    ///
    /// ```
    /// use maxim_core::embed::VectorIndex;
    /// use maxim_core::RecordId;
    /// let mut index = VectorIndex::new(2)?;
    /// for n in 1..=4u128 {
    ///     index.add(RecordId::from_u128(n), &[1.0, n as f32])?;
    /// }
    /// let ids = [4u128, 2, 9, 2].map(RecordId::from_u128);
    /// let hits = index.top_k_among(&[0.0, 1.0], 10, &ids)?;
    /// assert_eq!(hits.iter().map(|h| h.0.as_u128()).collect::<Vec<_>>(), [4, 2]);
    /// assert_eq!(hits, index.top_k_filtered(&[0.0, 1.0], 10, |id| ids.contains(&id))?);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    ///
    /// Errors: as for [`add`](Self::add), about the query.
    pub fn top_k_among(
        &self,
        query: &[f32],
        k: usize,
        candidates: &[RecordId],
    ) -> Result<Vec<(RecordId, f32)>> {
        check_vector("query", query, self.dim)?;
        let mut q = query.to_vec();
        if k == 0 || candidates.is_empty() || !normalize_in_place(&mut q) {
            return Ok(Vec::new());
        }
        let mut best = BestK::new(k.min(candidates.len()));
        let mut seen = rustc_hash::FxHashSet::default();
        seen.reserve(candidates.len());
        for &id in candidates {
            let Some(&slot) = self.slot_of.get(&id) else { continue };
            if !self.live[slot] || !seen.insert(slot) {
                continue;
            }
            let score = ArrayView1::from(self.row(slot)).dot(&ArrayView1::from(q.as_slice()));
            let cand = Scored { score: score.clamp(-1.0, 1.0), id };
            if best.admits(&cand) {
                best.push(cand);
            }
        }
        Ok(best.into_sorted())
    }

    fn row(&self, slot: usize) -> &[f32] {
        &self.rows[slot * self.dim..(slot + 1) * self.dim]
    }

    /// Scores the rows of block `block` against the normalised `q` and offers them to `best`.
    fn score_block<F>(&self, block: usize, q: &[f32], scores: &mut [f32], best: &mut BestK, filter: &F)
    where
        F: Fn(RecordId) -> bool,
    {
        let lo = block * BLOCK_ROWS;
        let hi = (lo + BLOCK_ROWS).min(self.len());
        let n = hi - lo;
        let matrix = ArrayView2::from_shape((n, self.dim), &self.rows[lo * self.dim..hi * self.dim])
            .expect("a block holds rows × dim values");
        let mut out = ArrayViewMut1::from(&mut scores[..n]);
        ndarray::linalg::general_mat_vec_mul(1.0, &matrix, &ArrayView1::from(q), 0.0, &mut out);
        for (i, &score) in scores[..n].iter().enumerate() {
            let slot = lo + i;
            if !self.live[slot] {
                continue;
            }
            let cand = Scored { score: score.clamp(-1.0, 1.0), id: self.ids[slot] };
            if best.admits(&cand) && filter(cand.id) {
                best.push(cand);
            }
        }
    }
}

/// The serialised form of a [`VectorIndex`], as read.
#[derive(Deserialize)]
struct IndexData {
    dim: usize,
    ids: Vec<RecordId>,
    rows: Vec<f32>,
}

/// The serialised form of a [`VectorIndex`], as written (borrowed: no copy of the rows).
#[derive(Serialize)]
struct IndexDataRef<'a> {
    dim: usize,
    ids: &'a [RecordId],
    rows: &'a [f32],
}

impl Serialize for VectorIndex {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        IndexDataRef { dim: self.dim, ids: &self.ids, rows: &self.rows }.serialize(serializer)
    }
}

impl TryFrom<IndexData> for VectorIndex {
    type Error = Error;

    fn try_from(data: IndexData) -> Result<Self> {
        let bad = |reason: String| Error::invalid("vector index", reason);
        check_dim(data.dim)?;
        let expected = data.ids.len().checked_mul(data.dim);
        if expected != Some(data.rows.len()) {
            return Err(bad(format!(
                "{} rows of {} values need {} values, found {}",
                data.ids.len(),
                data.dim,
                data.ids.len().saturating_mul(data.dim),
                data.rows.len()
            )));
        }
        let mut slot_of = FxHashMap::default();
        slot_of.reserve(data.ids.len());
        let mut live = Vec::with_capacity(data.ids.len());
        for (slot, (&id, row)) in data.ids.iter().zip(data.rows.chunks_exact(data.dim)).enumerate() {
            if slot_of.insert(id, slot).is_some() {
                return Err(bad(format!("id {id} has two rows")));
            }
            if let Some(&x) = row.iter().find(|x| !x.is_finite()) {
                return Err(Error::OutOfRange {
                    field: "vector index row",
                    value: f64::from(x),
                    expected: "finite",
                });
            }
            let norm = sum_of_squares(row).sqrt();
            if norm != 0.0 && (norm - 1.0).abs() > 1e-3 {
                return Err(bad(format!("row of id {id} has norm {norm}, not 0 or 1")));
            }
            live.push(norm != 0.0);
        }
        Ok(Self { dim: data.dim, ids: data.ids, rows: data.rows, live, slot_of })
    }
}

// ---------------------------------------------------------------------------------------------
// Internals.

fn check_vector(field: &'static str, v: &[f32], dim: usize) -> Result<()> {
    if v.len() != dim {
        return Err(Error::invalid(field, format!("expected {dim} values, got {}", v.len())));
    }
    match v.iter().find(|x| !x.is_finite()) {
        Some(&x) => Err(Error::OutOfRange { field, value: f64::from(x), expected: "finite" }),
        None => Ok(()),
    }
}

/// A scored row, ordered so that the *worse* row is the greater: a max-heap of them keeps
/// the worst of the best `k` on top.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f32,
    id: RecordId,
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then(self.id.cmp(&other.id))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

/// The best `k` rows seen so far.
struct BestK {
    k: usize,
    heap: BinaryHeap<Scored>,
}

impl BestK {
    fn new(k: usize) -> Self {
        Self { k, heap: BinaryHeap::with_capacity(k + 1) }
    }

    /// Whether `cand` would enter the best `k`.
    fn admits(&self, cand: &Scored) -> bool {
        self.heap.len() < self.k || self.heap.peek().is_some_and(|worst| cand < worst)
    }

    fn push(&mut self, cand: Scored) {
        if self.heap.len() < self.k {
            self.heap.push(cand);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && cand < *worst
        {
            *worst = cand;
        }
    }

    fn merge(mut self, other: Self) -> Self {
        for cand in other.heap {
            if self.admits(&cand) {
                self.push(cand);
            }
        }
        self
    }

    fn into_sorted(self) -> Vec<(RecordId, f32)> {
        self.heap.into_sorted_vec().into_iter().map(|s| (s.id, s.score)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::MAX_DIM;
    use proptest::prelude::*;

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    fn id(n: u128) -> RecordId {
        RecordId::from_u128(n)
    }

    #[test]
    fn index_add_get_replace_remove() {
        let mut index = VectorIndex::new(3).unwrap();
        assert!(index.is_empty());
        index.add(id(1), &[3.0, 0.0, 4.0]).unwrap();
        index.add(id(2), &[0.0, 2.0, 0.0]).unwrap();
        index.add(id(3), &[0.0, 0.0, 0.0]).unwrap();
        assert_eq!((index.len(), index.dim()), (3, 3));
        assert_eq!(index.get(id(1)).unwrap(), [0.6, 0.0, 0.8]);
        assert_eq!(index.get(id(3)).unwrap(), [0.0; 3]);
        assert!(index.get(id(9)).is_none());
        index.add(id(1), &[0.0, 0.0, -1.0]).unwrap();
        assert_eq!(index.len(), 3);
        assert_eq!(index.get(id(1)).unwrap(), [0.0, 0.0, -1.0]);
        index.remove(id(1)).unwrap();
        assert!(!index.contains(id(1)));
        assert_eq!(index.get(id(2)).unwrap(), [0.0, 1.0, 0.0]);
        assert_eq!(index.get(id(3)).unwrap(), [0.0; 3]);
        assert_eq!(index.ids(), [id(3), id(2)]);
        assert_eq!(index.iter().count(), 2);
        assert!(matches!(index.remove(id(1)), Err(Error::NotFound { .. })));
        index.remove(id(2)).unwrap();
        index.remove(id(3)).unwrap();
        assert!(index.is_empty());
        index.add(id(4), &[1.0, 1.0, 1.0]).unwrap();
        index.clear();
        assert!(index.is_empty() && !index.contains(id(4)));
    }

    #[test]
    fn bad_input_leaves_the_index_unchanged() {
        assert!(matches!(VectorIndex::new(0), Err(Error::OutOfRange { .. })));
        assert!(matches!(VectorIndex::new(MAX_DIM + 1), Err(Error::OutOfRange { .. })));
        let mut index = VectorIndex::new(2).unwrap();
        index.add(id(1), &[1.0, 2.0]).unwrap();
        let before = index.clone();
        assert!(matches!(index.add(id(1), &[1.0]), Err(Error::InvalidArgument { .. })));
        assert!(matches!(index.add(id(2), &[1.0, 2.0, 3.0]), Err(Error::InvalidArgument { .. })));
        assert!(matches!(index.add(id(1), &[f32::NAN, 0.0]), Err(Error::OutOfRange { .. })));
        assert!(matches!(index.add(id(2), &[0.0, f32::NEG_INFINITY]), Err(Error::OutOfRange { .. })));
        assert_eq!(index, before);
        assert!(matches!(index.top_k(&[1.0], 3), Err(Error::InvalidArgument { .. })));
        assert!(matches!(index.top_k(&[f32::NAN, 1.0], 3), Err(Error::OutOfRange { .. })));
        // Huge but finite values normalise without overflowing.
        index.add(id(3), &[f32::MAX, f32::MAX]).unwrap();
        let v = index.get(id(3)).unwrap();
        assert!((v[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn top_k_order_ties_and_zero_rows() {
        let mut index = VectorIndex::new(2).unwrap();
        index.add(id(5), &[1.0, 1.0]).unwrap();
        index.add(id(3), &[2.0, 2.0]).unwrap(); // same direction as 5: a tie
        index.add(id(4), &[1.0, 0.0]).unwrap();
        index.add(id(1), &[0.0, 0.0]).unwrap(); // zero: never returned
        index.add(id(2), &[-1.0, -1.0]).unwrap();
        let hits = index.top_k(&[1.0, 1.0], 10).unwrap();
        let ids: Vec<u128> = hits.iter().map(|h| h.0.as_u128()).collect();
        assert_eq!(ids, [3, 5, 4, 2]);
        assert!((hits[0].1 - 1.0).abs() < 1e-6 && hits[0].1 <= 1.0);
        assert!((hits[2].1 - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((hits[3].1 + 1.0).abs() < 1e-6 && hits[3].1 >= -1.0);
        assert_eq!(index.top_k(&[1.0, 1.0], 1).unwrap()[0].0, id(3));
        assert!(index.top_k(&[1.0, 1.0], 0).unwrap().is_empty());
        assert!(index.top_k(&[0.0, 0.0], 3).unwrap().is_empty());
        assert!(VectorIndex::new(2).unwrap().top_k(&[1.0, 0.0], 3).unwrap().is_empty());
        let filtered = index.top_k_filtered(&[1.0, 1.0], 2, |i| i != id(3)).unwrap();
        assert_eq!(filtered.iter().map(|h| h.0).collect::<Vec<_>>(), [id(5), id(4)]);
        assert!(index.top_k_filtered(&[1.0, 1.0], 2, |_| false).unwrap().is_empty());
    }

    /// A deterministic index of `n` rows with repeated directions (ties) and zero rows.
    fn sample_index(n: usize, dim: usize, seed: u64) -> VectorIndex {
        let mut rng = crate::id::SplitMix64::new(seed);
        let mut index = VectorIndex::with_capacity(dim, n).unwrap();
        let mut v = vec![0.0f32; dim];
        for i in 0..n {
            match i % 10 {
                0 => v.fill(0.0),
                4 | 5 => {} // repeat the previous (random) direction
                _ => v.iter_mut().for_each(|x| *x = rng.uniform() as f32 - 0.5),
            }
            index.add(RecordId::from_u128(rng.next_u64().into()), &v).unwrap();
        }
        index
    }

    #[test]
    fn parallel_and_sequential_paths_agree() {
        let index = sample_index(5000, 16, 11);
        let mut rng = crate::id::SplitMix64::new(5);
        for k in [1, 10, 100, 6000] {
            let q: Vec<f32> = (0..16).map(|_| rng.uniform() as f32 - 0.5).collect();
            let seq = index.top_k_with(&q, k, Parallelism::Sequential, |_| true).unwrap();
            let par = index.top_k_with(&q, k, Parallelism::Parallel, |_| true).unwrap();
            let auto = index.top_k(&q, k).unwrap();
            assert_eq!(seq, par);
            assert_eq!(seq, auto);
            assert_eq!(seq.len(), k.min(4500));
            let even = |i: RecordId| i.as_u128().is_multiple_of(2);
            assert_eq!(
                index.top_k_with(&q, k, Parallelism::Sequential, even).unwrap(),
                index.top_k_with(&q, k, Parallelism::Parallel, even).unwrap()
            );
        }
    }

    #[derive(Serialize)]
    struct Raw {
        dim: usize,
        ids: Vec<RecordId>,
        rows: Vec<f32>,
    }

    #[test]
    fn serde_round_trips_and_validates() {
        let index = sample_index(50, 8, 3);
        let bin = postcard::to_stdvec(&index).unwrap();
        assert!(bin.len() < 50 * (8 * 4 + 17) + 16, "{} bytes", bin.len());
        let back: VectorIndex = postcard::from_bytes(&bin).unwrap();
        assert_eq!(back, index);
        let q = [0.3, -0.1, 0.2, 0.0, 0.5, 0.1, -0.4, 0.2];
        assert_eq!(back.top_k(&q, 7).unwrap(), index.top_k(&q, 7).unwrap());
        let json = serde_json::to_string(&index).unwrap();
        assert_eq!(serde_json::from_str::<VectorIndex>(&json).unwrap(), index);
        let load = |raw: Raw| postcard::from_bytes::<VectorIndex>(&postcard::to_stdvec(&raw).unwrap());
        assert!(load(Raw { dim: 2, ids: vec![id(1)], rows: vec![1.0, 0.0] }).is_ok());
        let bad = [
            Raw { dim: 2, ids: vec![id(1)], rows: vec![1.0] },
            Raw { dim: 2, ids: vec![id(1), id(1)], rows: vec![1.0, 0.0, 0.0, 1.0] },
            Raw { dim: 2, ids: vec![id(1)], rows: vec![3.0, 4.0] },
            Raw { dim: 2, ids: vec![id(1)], rows: vec![f32::NAN, 0.0] },
            Raw { dim: 0, ids: vec![], rows: vec![] },
            Raw { dim: usize::MAX, ids: vec![id(1), id(2)], rows: vec![] },
        ];
        for raw in bad {
            assert!(load(raw).is_err());
        }
        assert!(postcard::from_bytes::<VectorIndex>(&bin[..bin.len() - 3]).is_err());
    }

    /// The brute-force model: score every live row the same way, sort, cut.
    fn brute_force(
        index: &VectorIndex,
        query: &[f32],
        k: usize,
        keep: impl Fn(RecordId) -> bool,
    ) -> Vec<(RecordId, f32)> {
        let mut q = query.to_vec();
        if !normalize_in_place(&mut q) {
            return Vec::new();
        }
        let q = ArrayView1::from(&q[..]);
        let mut all: Vec<(RecordId, f32)> = index
            .iter()
            .filter(|(i, row)| row.iter().any(|&x| x != 0.0) && keep(*i))
            .map(|(i, row)| (i, ArrayView1::from(row).dot(&q).clamp(-1.0, 1.0)))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }

    fn small_vector(dim: usize) -> impl Strategy<Value = Vec<f32>> {
        prop::collection::vec(prop_oneof![Just(0.0f32), Just(1.0f32), -4.0f32..4.0], dim)
    }

    proptest! {
        #[test]
        fn top_k_agrees_with_brute_force(
            rows in prop::collection::vec((0u128..64, small_vector(4)), 0..80),
            query in small_vector(4),
            k in 0usize..20,
            modulus in 1u128..4,
        ) {
            let mut index = VectorIndex::new(4).unwrap();
            for (i, v) in &rows {
                index.add(id(*i), v).unwrap();
            }
            let got = index.top_k_with(&query, k, Parallelism::Sequential, |_| true).unwrap();
            prop_assert_eq!(&got, &brute_force(&index, &query, k, |_| true));
            prop_assert_eq!(&got, &index.top_k_with(&query, k, Parallelism::Parallel, |_| true).unwrap());
            let keep = |i: RecordId| i.as_u128().is_multiple_of(modulus);
            let filtered = index.top_k_filtered(&query, k, keep).unwrap();
            prop_assert_eq!(&filtered, &brute_force(&index, &query, k, keep));
            // The same shortlist given as candidates (unknown and repeated ids among them).
            let mut candidates: Vec<RecordId> = (0u128..80).map(id).filter(|&i| keep(i)).collect();
            candidates.extend(candidates.clone().into_iter().rev().take(3));
            prop_assert_eq!(index.top_k_among(&query, k, &candidates).unwrap(), filtered);
            // Cosines agree with a plain f64 computation.
            for (i, score) in got {
                let row = rows.iter().rev().find(|(j, _)| id(*j) == i).map(|(_, v)| v).unwrap();
                let dot: f64 = row.iter().zip(&query).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
                let norms = f64::from(norm(row)) * f64::from(norm(&query));
                prop_assert!((f64::from(score) - dot / norms).abs() < 1e-5);
            }
        }

        #[test]
        fn add_and_remove_follow_a_map_model(
            ops in prop::collection::vec((any::<bool>(), 0u128..16, small_vector(3)), 0..60),
        ) {
            let mut index = VectorIndex::new(3).unwrap();
            let mut model = std::collections::HashMap::new();
            for (add, i, v) in ops {
                if add {
                    index.add(id(i), &v).unwrap();
                    let mut n = v.clone();
                    normalize_in_place(&mut n);
                    model.insert(i, n);
                } else {
                    prop_assert_eq!(index.remove(id(i)).is_ok(), model.remove(&i).is_some());
                }
            }
            prop_assert_eq!(index.len(), model.len());
            for (i, v) in &model {
                prop_assert_eq!(index.get(id(*i)).unwrap(), v.as_slice());
            }
        }
    }
}
