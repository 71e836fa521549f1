//! Embeddings: the [`Embedder`] trait, the default [`HashEmbedder`], the IDF-weighted
//! [`IdfHashEmbedder`] and the flat [`VectorIndex`] that finds the nearest vectors by
//! cosine similarity.
//!
//! The semantic layer embeds each concept's text once and keeps the vectors in a
//! [`VectorIndex`]; `recall_similar` embeds the query and asks the index for its
//! [`top_k`](VectorIndex::top_k). The [`HashEmbedder`] needs no model: it hashes the words and
//! character trigrams of the [normalised](crate::text) text into a fixed number of
//! dimensions, identically on every platform, so the vectors a snapshot holds stay valid.
//! Any other model plugs in through [`Embedder`]; its [`name`](Embedder::name) tells a
//! snapshot which model made its vectors.
//!
//! ```
//! use maxim_core::embed::{Embedder, HashEmbedder, VectorIndex};
//! use maxim_core::RecordId;
//! let embedder = HashEmbedder::default();
//! let mut index = VectorIndex::new(embedder.dim())?;
//! for (n, text) in ["coffee mug", "tea cup", "kitchen door"].into_iter().enumerate() {
//!     index.add(RecordId::from_u128(n as u128 + 1), &embedder.embed(text))?;
//! }
//! let best = index.top_k(&embedder.embed("coffee mugs"), 2)?;
//! assert_eq!(best[0].0, RecordId::from_u128(1));
//! assert!(best[0].1 > 0.99);
//! # Ok::<(), maxim_core::Error>(())
//! ```

mod idf;
mod vector;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::hash::{FNV_OFFSET, Fnv1a};
use crate::text::for_each_token;

pub use idf::{DEFAULT_DF_BITS, DF_BITS_RANGE, DocFrequencies, IdfHashEmbedder};
pub use vector::{PARALLEL_MIN_ROWS, Parallelism, VectorIndex};

/// Turns text into a fixed-dimension vector for similarity search.
pub trait Embedder: Send + Sync {
    /// A stable name for the model and its settings; snapshots record it so vectors made by
    /// different embedders are never mixed.
    fn name(&self) -> &str;

    /// The vectors' dimension.
    fn dim(&self) -> usize;

    /// Writes the embedding of `text` into `out` (of length [`dim`](Self::dim)), L2-normalised,
    /// or all zeros when the text has nothing to embed.
    fn embed_into(&self, text: &str, out: &mut [f32]);

    /// The embedding of `text` as a new vector.
    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0; self.dim()];
        self.embed_into(text, &mut v);
        v
    }

    /// Tells the embedder that `text` joined the collection it embeds for; a store calls it
    /// for each record's text before embedding it. An embedder whose weights depend on the
    /// collection ([`IdfHashEmbedder`] counts document frequencies) learns from it; the
    /// default does nothing, which is right for a model of fixed weights.
    fn observe_document(&self, text: &str) {
        let _ = text;
    }

    /// Tells the embedder that `text`, observed before, left the collection (the default
    /// does nothing).
    fn forget_document(&self, text: &str) {
        let _ = text;
    }
}

/// Forwards [`Embedder`] through a pointer type.
macro_rules! forward_embedder {
    ($($ptr:ty),+) => {$(
        impl<T: Embedder + ?Sized> Embedder for $ptr {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn embed_into(&self, text: &str, out: &mut [f32]) {
                (**self).embed_into(text, out);
            }
            fn observe_document(&self, text: &str) {
                (**self).observe_document(text);
            }
            fn forget_document(&self, text: &str) {
                (**self).forget_document(text);
            }
        }
    )+};
}

forward_embedder!(&T, Box<T>, Arc<T>);

/// The largest dimension a [`HashEmbedder`] or a [`VectorIndex`] accepts.
pub const MAX_DIM: usize = 1 << 16;

/// The longest character n-gram a [`HashEmbedder`] hashes.
pub const MAX_CHAR_NGRAM: usize = 8;

/// Settings of a [`HashEmbedder`].
///
/// ```
/// use maxim_core::embed::{Embedder, HashEmbedder, HashEmbedderConfig};
/// let config = HashEmbedderConfig { dim: 256, ..HashEmbedderConfig::default() };
/// let embedder = HashEmbedder::new(config)?;
/// assert_eq!(embedder.name(), "hash-v1-d256");
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HashEmbedderConfig {
    /// Dimension of the vectors, 1 to [`MAX_DIM`] (default 128).
    ///
    /// 128 keeps an index of 10^5 concepts at 10^5 × 128 × 4 bytes = 51 MB and a full scan
    /// of it within a few milliseconds, while a concept name (some 10 to 30 features) rarely
    /// has two features in one bucket. Long texts blur at this size; raise it for them.
    pub dim: usize,
    /// Length of the character n-grams taken from each word padded with `<` and `>`
    /// ("mug" gives `<mu`, `mug`, `ug>` for 3), 1 to [`MAX_CHAR_NGRAM`], or 0 for words only
    /// (default 3). They make "mug" and "mugs", or a typo, land close together.
    pub char_ngram: usize,
    /// Weight of a word feature (default 1.0).
    pub word_weight: f32,
    /// Weight of a character n-gram feature (default 0.5: a word has several n-grams and
    /// one unigram, so this keeps the exact word from being drowned out).
    pub char_weight: f32,
    /// Damp repeated features: each coordinate `x` becomes `sign(x) √|x|` before the vector
    /// is normalised, so a word said ten times weighs about three times one said once
    /// (default true).
    pub sublinear: bool,
}

impl Default for HashEmbedderConfig {
    fn default() -> Self {
        Self { dim: 128, char_ngram: 3, word_weight: 1.0, char_weight: 0.5, sublinear: true }
    }
}

/// The default embedder: signed feature hashing of words and character n-grams.
///
/// The text goes through [`for_each_token`] (lowercase, stop words dropped, lemmatised);
/// each token adds its word feature and its character n-grams. A feature's bytes are hashed
/// with FNV-1a 64 and a MurmurHash3 finaliser, both fixed, so a text has the same vector in
/// every process, on every platform and in every build: the high bits pick the coordinate,
/// the lowest bit a sign of +1 or -1, so features that share a coordinate cancel out on
/// average instead of piling up. The vector is then optionally damped
/// ([`sublinear`](HashEmbedderConfig::sublinear)) and L2-normalised; a text with no token
/// gives all zeros.
///
/// Its [`name`](Embedder::name) is `hash-v1-d{dim}`, followed by the other settings when
/// they differ from the defaults (`hash-v1-d128-n4-w1-c0.25-lin`); `v1` changes whenever
/// the vectors of some text would change.
///
/// ```
/// use maxim_core::embed::{Embedder, HashEmbedder};
/// let e = HashEmbedder::default();
/// assert_eq!(e.name(), "hash-v1-d128");
/// let (a, b, c) = (e.embed("red coffee mug"), e.embed("coffee mugs"), e.embed("garden hose"));
/// let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
/// assert!(cos(&a, &b) > cos(&a, &c));
/// assert!(e.embed("the of and").iter().all(|&x| x == 0.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HashEmbedder {
    config: HashEmbedderConfig,
    name: String,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::from_valid(HashEmbedderConfig::default())
    }
}

impl HashEmbedder {
    /// An embedder with these settings, once they are checked.
    ///
    /// Errors: a dimension outside 1..=[`MAX_DIM`] or an n-gram length above
    /// [`MAX_CHAR_NGRAM`] ([`Error::OutOfRange`]), a weight that is negative or not finite
    /// ([`Error::OutOfRange`]), or no feature with a positive weight
    /// ([`Error::InvalidArgument`]).
    pub fn new(config: HashEmbedderConfig) -> Result<Self> {
        check_config(&config)?;
        Ok(Self::from_valid(config))
    }

    /// The default embedder with another dimension.
    pub fn with_dim(dim: usize) -> Result<Self> {
        Self::new(HashEmbedderConfig { dim, ..HashEmbedderConfig::default() })
    }

    /// The settings.
    pub fn config(&self) -> &HashEmbedderConfig {
        &self.config
    }

    /// Writes the embedding of `text` into `out`, or fails when `out` does not have
    /// [`dim`](Embedder::dim) values (then `out` is left as it was).
    ///
    /// ```
    /// use maxim_core::embed::HashEmbedder;
    /// let e = HashEmbedder::default();
    /// let mut v = vec![0.0; 128];
    /// e.try_embed_into("open the door", &mut v)?;
    /// assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    /// assert!(e.try_embed_into("door", &mut [0.0; 3]).is_err());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn try_embed_into(&self, text: &str, out: &mut [f32]) -> Result<()> {
        if out.len() != self.config.dim {
            return Err(Error::invalid(
                "embedding buffer",
                format!("expected {} values, got {}", self.config.dim, out.len()),
            ));
        }
        self.fill(text, out);
        Ok(())
    }

    fn from_valid(config: HashEmbedderConfig) -> Self {
        let defaults = HashEmbedderConfig { dim: config.dim, ..HashEmbedderConfig::default() };
        let mut name = format!("hash-v1-d{}", config.dim);
        if config != defaults {
            let damping = if config.sublinear { "sub" } else { "lin" };
            name = format!(
                "{name}-n{}-w{}-c{}-{damping}",
                config.char_ngram, config.word_weight, config.char_weight
            );
        }
        Self { config, name }
    }

    fn fill(&self, text: &str, out: &mut [f32]) {
        out.fill(0.0);
        let HashEmbedderConfig { dim, char_ngram, word_weight, char_weight, sublinear } = self.config;
        for_each_token(text, |token| {
            if word_weight > 0.0 {
                add_feature(out, dim, fnv1a(FNV_OFFSET ^ u64::from(b'w'), token.as_bytes()), word_weight);
            }
            if char_ngram > 0 && char_weight > 0.0 {
                for_each_char_ngram(token, char_ngram, |h| add_feature(out, dim, h, char_weight));
            }
        });
        if sublinear {
            for x in out.iter_mut() {
                *x = x.abs().sqrt().copysign(*x);
            }
        }
        normalize_in_place(out);
    }
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.config.dim
    }

    /// Writes the embedding; an `out` of the wrong length is filled with zeros (use
    /// [`HashEmbedder::try_embed_into`] to get an error instead).
    fn embed_into(&self, text: &str, out: &mut [f32]) {
        if self.try_embed_into(text, out).is_err() {
            tracing::warn!(
                expected = self.config.dim,
                got = out.len(),
                "embedding buffer of the wrong length"
            );
            out.fill(0.0);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Internals.

/// FNV-1a 64 of `bytes`, continuing from the state `h`.
fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    let mut state = Fnv1a::from_state(h);
    state.write(bytes);
    state.finish()
}

/// MurmurHash3's 64-bit finaliser: spreads FNV's weak low bits over the whole word.
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// Adds `weight` times the sign of the hashed feature `h` to its coordinate.
fn add_feature(out: &mut [f32], dim: usize, h: u64, weight: f32) {
    let h = fmix64(h);
    let index = ((u128::from(h) * dim as u128) >> 64) as usize;
    out[index] += if h & 1 == 0 { weight } else { -weight };
}

/// Calls `f` with the FNV-1a hash of every `n`-gram of the characters of `<token>`, or of
/// the whole padded token when it is shorter than `n`.
fn for_each_char_ngram(token: &str, n: usize, mut f: impl FnMut(u64)) {
    let hash_window = |window: &[char]| {
        let mut h = FNV_OFFSET ^ u64::from(b'c');
        let mut utf8 = [0u8; 4];
        for c in window {
            h = fnv1a(h, c.encode_utf8(&mut utf8).as_bytes());
        }
        h
    };
    if token.is_ascii() {
        // The same hashes without decoding characters: an ASCII character is its one byte.
        let bytes = token.as_bytes();
        let padded_len = bytes.len() + 2;
        let byte_at = |i: usize| match i {
            0 => b'<',
            i if i == padded_len - 1 => b'>',
            i => bytes[i - 1],
        };
        let n = n.min(padded_len);
        for start in 0..=padded_len - n {
            let mut h = FNV_OFFSET ^ u64::from(b'c');
            for i in start..start + n {
                h = (h ^ u64::from(byte_at(i))).wrapping_mul(crate::hash::FNV_PRIME);
            }
            f(h);
        }
        return;
    }
    // The last `n` characters seen, oldest first, shifted along (n is at most 8).
    let mut window = ['\0'; MAX_CHAR_NGRAM];
    let mut seen = 0usize;
    for c in std::iter::once('<').chain(token.chars()).chain(std::iter::once('>')) {
        if seen < n {
            window[seen] = c;
        } else {
            window.copy_within(1..n, 0);
            window[n - 1] = c;
        }
        seen += 1;
        if seen >= n {
            f(hash_window(&window[..n]));
        }
    }
    if seen < n {
        f(hash_window(&window[..seen]));
    }
}

/// Scales `v` to unit L2 norm (accumulated in f64) and says whether it is non-zero; a zero
/// vector stays zero.
pub(crate) fn normalize_in_place(v: &mut [f32]) -> bool {
    let norm = sum_of_squares(v).sqrt();
    if norm == 0.0 {
        return false;
    }
    let inv = 1.0 / norm;
    for x in v.iter_mut() {
        *x = (f64::from(*x) * inv) as f32;
    }
    true
}

/// The sum of the squares of `v` in f64 (no overflow for any finite f32), in eight lanes
/// added in a fixed order: as fast as the hardware allows and the same on every platform.
pub(crate) fn sum_of_squares(v: &[f32]) -> f64 {
    const LANES: usize = 8;
    let mut acc = [0.0f64; LANES];
    let chunks = v.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += f64::from(x) * f64::from(x);
        }
    }
    let mut total = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for &x in tail {
        total += f64::from(x) * f64::from(x);
    }
    total
}

/// The checks of [`HashEmbedder::new`], shared with [`IdfHashEmbedder::new`].
fn check_config(config: &HashEmbedderConfig) -> Result<()> {
    check_dim(config.dim)?;
    if config.char_ngram > MAX_CHAR_NGRAM {
        return Err(Error::OutOfRange {
            field: "char_ngram",
            value: config.char_ngram as f64,
            expected: "at most 8",
        });
    }
    for (field, w) in [("word_weight", config.word_weight), ("char_weight", config.char_weight)] {
        if !(w.is_finite() && w >= 0.0) {
            return Err(Error::OutOfRange { field, value: f64::from(w), expected: "a finite number >= 0" });
        }
    }
    let chars_count = config.char_ngram > 0 && config.char_weight > 0.0;
    if config.word_weight == 0.0 && !chars_count {
        return Err(Error::invalid("hash embedder config", "no feature has a positive weight"));
    }
    Ok(())
}

pub(crate) fn check_dim(dim: usize) -> Result<()> {
    if (1..=MAX_DIM).contains(&dim) {
        Ok(())
    } else {
        Err(Error::OutOfRange { field: "dim", value: dim as f64, expected: "in 1..=65536" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    #[test]
    fn golden_embedding_of_a_concept_name() {
        // Two words of weight 1 and nine trigrams of weight 0.5, damped by the square root,
        // no two in one coordinate: 1/√6.5 and √0.5/√6.5. A change of hash, tokeniser or
        // platform moves these coordinates.
        let v = HashEmbedder::default().embed("Coffee mugs");
        let nonzero: Vec<(usize, f32)> = v.iter().copied().enumerate().filter(|&(_, x)| x != 0.0).collect();
        let (w, c) = (0.392_232_27_f32, 0.277_350_1_f32);
        assert_eq!(
            nonzero,
            [
                (4, -c),
                (6, c),
                (15, c),
                (29, -c),
                (34, -c),
                (43, -c),
                (62, w),
                (73, -c),
                (99, c),
                (100, c),
                (126, w)
            ]
        );
    }

    #[test]
    fn fixed_hash_vectors() {
        // FNV-1a 64 reference values.
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fmix64(0), 0);
        assert_ne!(fmix64(1), 1);
    }

    #[test]
    fn char_ngrams_cover_the_padded_word() {
        let count = |token: &str, n: usize| {
            let mut k = 0;
            for_each_char_ngram(token, n, |_| k += 1);
            k
        };
        assert_eq!(count("mug", 3), 3);
        assert_eq!(count("coffee", 3), 6);
        assert_eq!(count("mug", 1), 5);
        assert_eq!(count("mug", 5), 1);
        assert_eq!(count("mug", 8), 1); // shorter than n: the whole padded word
        assert_eq!(count("日本語", 3), 3);
        assert_eq!(count("日本語", 8), 1);
        // The ASCII fast path hashes exactly as the character path does: "é" shifts the
        // same window onto the character path.
        let hashes = |token: &str, n: usize| {
            let mut out = Vec::new();
            for_each_char_ngram(token, n, |h| out.push(h));
            out
        };
        for n in 1..=MAX_CHAR_NGRAM {
            let (ascii, wide) = (hashes("mugxe", n), hashes("mugxé", n));
            let shared = ascii.len().saturating_sub(2);
            assert_eq!(ascii[..shared], wide[..shared], "n = {n}");
            assert_eq!(ascii.len(), wide.len());
        }
        let mut a = Vec::new();
        let mut b = Vec::new();
        for_each_char_ngram("mugs", 3, |h| a.push(h));
        for_each_char_ngram("mug", 3, |h| b.push(h));
        assert_eq!(a[..2], b[..2]); // <mu and mug are shared
        assert_ne!(a[2], b[2]); // ugs vs ug>
    }

    #[test]
    fn same_text_same_bits() {
        let (e1, e2) = (HashEmbedder::default(), HashEmbedder::default());
        let text = "Navigate to the kitchen and grasp the red coffee mug, carefully.";
        let a = e1.embed(text);
        let b = e2.embed(text);
        assert_eq!(
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        let mut c = vec![7.0; 128];
        e1.embed_into(text, &mut c);
        assert_eq!(a, c);
    }

    #[test]
    fn embeddings_are_unit_or_zero() {
        let e = HashEmbedder::default();
        for text in [
            "mug",
            "coffee mug",
            "a much longer sentence about opening every door in the house",
            "日本語 テスト",
        ] {
            assert!((norm(&e.embed(text)) - 1.0).abs() < 1e-5, "{text}");
        }
        for text in ["", "   ", "the of and to", "a b c", "!!!"] {
            assert!(e.embed(text).iter().all(|&x| x == 0.0), "{text:?}");
        }
    }

    #[test]
    fn similar_texts_are_closer_than_unrelated_ones() {
        let e = HashEmbedder::default();
        let sim = |a: &str, b: &str| cos(&e.embed(a), &e.embed(b));
        assert!(sim("coffee mug", "coffee mugs") > 0.99);
        assert!(sim("red coffee mug", "coffee mug") > sim("red coffee mug", "garden hose"));
        assert!(sim("kitchen", "kitchn") > sim("kitchen", "garage"));
        assert!(sim("open the kitchen door", "opening kitchen doors") > 0.9);
        assert!(sim("open the kitchen door", "charge the battery") < 0.2);
    }

    #[test]
    fn config_is_checked_and_named() {
        let base = HashEmbedderConfig::default();
        assert_eq!(HashEmbedder::default().name(), "hash-v1-d128");
        assert_eq!(HashEmbedder::default().dim(), 128);
        assert_eq!(HashEmbedder::with_dim(64).unwrap().name(), "hash-v1-d64");
        let custom = HashEmbedder::new(HashEmbedderConfig {
            char_ngram: 4,
            char_weight: 0.25,
            sublinear: false,
            ..base.clone()
        })
        .unwrap();
        assert_eq!(custom.name(), "hash-v1-d128-n4-w1-c0.25-lin");
        assert_eq!(custom.config().char_ngram, 4);
        let bad = [
            HashEmbedderConfig { dim: 0, ..base.clone() },
            HashEmbedderConfig { dim: MAX_DIM + 1, ..base.clone() },
            HashEmbedderConfig { char_ngram: MAX_CHAR_NGRAM + 1, ..base.clone() },
            HashEmbedderConfig { word_weight: f32::NAN, ..base.clone() },
            HashEmbedderConfig { char_weight: -1.0, ..base.clone() },
            HashEmbedderConfig { word_weight: f32::INFINITY, ..base.clone() },
        ];
        for config in bad {
            assert!(matches!(HashEmbedder::new(config.clone()), Err(Error::OutOfRange { .. })), "{config:?}");
        }
        let silent = HashEmbedderConfig { word_weight: 0.0, char_ngram: 0, ..base.clone() };
        assert!(matches!(HashEmbedder::new(silent), Err(Error::InvalidArgument { .. })));
        let words_only = HashEmbedder::new(HashEmbedderConfig { char_ngram: 0, ..base }).unwrap();
        assert!(cos(&words_only.embed("mug"), &words_only.embed("mugs")) > 0.999);
        assert!(words_only.embed("kitchen").iter().filter(|&&x| x != 0.0).count() == 1);
    }

    #[test]
    fn wrong_buffer_length() {
        let e = HashEmbedder::default();
        let mut short = [5.0; 3];
        assert!(matches!(e.try_embed_into("mug", &mut short), Err(Error::InvalidArgument { .. })));
        assert_eq!(short, [5.0; 3]);
        e.embed_into("mug", &mut short);
        assert_eq!(short, [0.0; 3]);
    }

    #[test]
    fn embedder_through_pointers() {
        let e = HashEmbedder::default();
        let direct = e.embed("mug");
        let boxed: Box<dyn Embedder> = Box::new(e.clone());
        let shared: Arc<dyn Embedder> = Arc::new(e.clone());
        let by_ref: &dyn Embedder = &e;
        assert_eq!(boxed.embed("mug"), direct);
        assert_eq!(shared.embed("mug"), direct);
        assert_eq!((&by_ref).embed("mug"), direct);
        assert_eq!(shared.name(), "hash-v1-d128");
    }

    proptest! {

        #[test]
        fn embeddings_are_deterministic_and_never_panic(text in any::<String>()) {
            let e = HashEmbedder::default();
            let v = e.embed(&text);
            prop_assert_eq!(v.len(), 128);
            prop_assert!(v.iter().all(|x| x.is_finite()));
            let n = norm(&v);
            prop_assert!(n == 0.0 || (n - 1.0).abs() < 1e-5);
            prop_assert_eq!(v, e.embed(&text));
        }
    }
}
