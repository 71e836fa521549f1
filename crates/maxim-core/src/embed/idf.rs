//! [`IdfHashEmbedder`]: the hashed features of [`HashEmbedder`](super::HashEmbedder),
//! weighted by sublinear term frequency and inverse document frequency, with the document
//! frequencies counted in a [`DocFrequencies`] table as a store adds and removes texts.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::{
    Embedder, HashEmbedderConfig, add_feature, check_config, fmix64, fnv1a, for_each_char_ngram,
    normalize_in_place,
};
use crate::error::{Error, Result};
use crate::hash::FNV_OFFSET;
use crate::text::for_each_token;

/// The fewest and most bits of a [`DocFrequencies`] table (2^8 to 2^24 buckets).
pub const DF_BITS_RANGE: std::ops::RangeInclusive<u32> = 8..=24;

/// Mixed into a feature's hash before it picks a bucket, so the bucket does not follow
/// the coordinate the feature lands on.
const BUCKET_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// Document frequencies of hashed features, shared by an [`IdfHashEmbedder`] and whoever
/// feeds it.
///
/// A table of `2^bits` counters; a feature (a word or a character n-gram of the
/// normalised text, hashed as [`HashEmbedder`](super::HashEmbedder) hashes it) counts in
/// one bucket, once per document that holds it. Features that share a bucket share a
/// count, which can only raise it: a rare word in a bucket with a common one looks less
/// rare. Updates are atomic, so the table is read and written through `&self` from any
/// thread.
///
/// ```
/// use maxim_core::embed::DocFrequencies;
/// let df = DocFrequencies::new(16)?;
/// df.observe("Ana: the garden is dry");
/// df.observe("Ana: the kitten is hungry");
/// assert_eq!(df.documents(), 2);
/// assert_eq!(df.word_count("ana"), 2);
/// assert_eq!(df.word_count("kitten"), 1);
/// assert!(df.word_idf("kitten") > df.word_idf("ana"));
/// df.forget("Ana: the garden is dry");
/// assert_eq!(df.word_count("ana"), 1);
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub struct DocFrequencies {
    bits: u32,
    char_ngram: usize,
    counts: Box<[AtomicU32]>,
    documents: AtomicU64,
}

impl std::fmt::Debug for DocFrequencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocFrequencies")
            .field("bits", &self.bits)
            .field("char_ngram", &self.char_ngram)
            .field("documents", &self.documents())
            .finish_non_exhaustive()
    }
}

impl DocFrequencies {
    /// An empty table of `2^bits` buckets counting words and character trigrams (the
    /// default embedder's features). [`Error::OutOfRange`] for `bits` outside
    /// [`DF_BITS_RANGE`].
    pub fn new(bits: u32) -> Result<Self> {
        Self::with_ngram(bits, HashEmbedderConfig::default().char_ngram)
    }

    fn with_ngram(bits: u32, char_ngram: usize) -> Result<Self> {
        if !DF_BITS_RANGE.contains(&bits) {
            return Err(Error::OutOfRange { field: "bits", value: f64::from(bits), expected: "in 8..=24" });
        }
        let counts = (0..1usize << bits).map(|_| AtomicU32::new(0)).collect();
        Ok(Self { bits, char_ngram, counts, documents: AtomicU64::new(0) })
    }

    /// Number of documents observed and not forgotten.
    pub fn documents(&self) -> u64 {
        self.documents.load(Ordering::Relaxed)
    }

    /// Counts `text` as one more document.
    pub fn observe(&self, text: &str) {
        for b in self.buckets_of(text) {
            self.counts[b as usize].fetch_add(1, Ordering::Relaxed);
        }
        self.documents.fetch_add(1, Ordering::Relaxed);
    }

    /// Uncounts `text`, a document observed before (counts never go below zero).
    pub fn forget(&self, text: &str) {
        for b in self.buckets_of(text) {
            let _ = self.counts[b as usize]
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| c.checked_sub(1));
        }
        let _ = self.documents.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// The count of the bucket of the word feature `word` (a normalised token).
    pub fn word_count(&self, word: &str) -> u32 {
        self.count(word_hash(word))
    }

    /// The IDF of the word feature `word`: `ln(1 + (N − df + 0.5) / (df + 0.5))`.
    pub fn word_idf(&self, word: &str) -> f32 {
        self.idf(word_hash(word))
    }

    fn bucket(&self, h: u64) -> u32 {
        (fmix64(h ^ BUCKET_SALT) >> (64 - self.bits)) as u32
    }

    fn count(&self, h: u64) -> u32 {
        self.counts[self.bucket(h) as usize].load(Ordering::Relaxed)
    }

    fn idf(&self, h: u64) -> f32 {
        let n = self.documents() as f64;
        let df = f64::from(self.count(h)).min(n);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
    }

    /// The distinct buckets of `text`'s features.
    fn buckets_of(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for_each_token(text, |token| {
            out.push(self.bucket(word_hash(token)));
            if self.char_ngram > 0 {
                for_each_char_ngram(token, self.char_ngram, |h| out.push(self.bucket(h)));
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The hash of a word feature, as the hash embedder computes it.
fn word_hash(token: &str) -> u64 {
    fnv1a(FNV_OFFSET ^ u64::from(b'w'), token.as_bytes())
}

/// An embedder that weights hashed words and character n-grams by IDF.
///
/// Each feature of the normalised text (as [`HashEmbedder`](super::HashEmbedder) finds and
/// hashes them) gets `(1 + ln tf) × weight × idf`, the IDF read from its
/// [`DocFrequencies`] at the time of the call; the vector is then L2-normalised. A word in
/// every document (a speaker's name, "said") weighs little; a rare content word weighs
/// much. With no document observed every feature has the same IDF, and the ranking is
/// that of plain hashing with sublinear frequencies.
///
/// A store feeds the table through [`Embedder::observe_document`] and
/// [`Embedder::forget_document`] (the hippocampus does on every capture, compression and
/// removal). A vector made earlier keeps the IDF of its time: the weights settle once the
/// collection holds a few hundred documents, and a store that wants exact weights
/// re-embeds.
///
/// Its [`name`](Embedder::name) is `idf-hash-v1-d{dim}`, followed by the other settings
/// when they differ from the defaults, as the hash embedder's is.
///
/// ```
/// use maxim_core::embed::{Embedder, HashEmbedder, IdfHashEmbedder};
/// let idf = IdfHashEmbedder::default();
/// assert_eq!(idf.name(), "idf-hash-v1-d256");
/// for text in ["Ana: the garden is dry", "Ana: I need a nap", "Ana: we adopted a kitten", "Ana: hello"] {
///     idf.observe_document(text);
/// }
/// let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
/// let query = idf.embed("Ana kitten");
/// // The rare word decides, not the name every document holds.
/// assert!(cos(&query, &idf.embed("Ana: we adopted a kitten")) > cos(&query, &idf.embed("Ana: hello")) + 0.2);
/// ```
#[derive(Debug, Clone)]
pub struct IdfHashEmbedder {
    config: HashEmbedderConfig,
    name: String,
    freqs: Arc<DocFrequencies>,
}

/// Bits of the document-frequency table of [`IdfHashEmbedder::default`] and
/// [`IdfHashEmbedder::new`]: 2^18 buckets, 1 MiB.
pub const DEFAULT_DF_BITS: u32 = 18;

impl Default for IdfHashEmbedder {
    /// 256 dimensions (IDF makes the extra dimensions pay: the hashed features of a long
    /// text collide less), trigrams, a table of 2^18 buckets.
    fn default() -> Self {
        Self::new(HashEmbedderConfig { dim: 256, ..HashEmbedderConfig::default() })
            .expect("the default settings are valid")
    }
}

impl IdfHashEmbedder {
    /// An embedder with these settings and an empty table of 2^[`DEFAULT_DF_BITS`] buckets.
    /// Errors: as [`HashEmbedder::new`](super::HashEmbedder::new).
    pub fn new(config: HashEmbedderConfig) -> Result<Self> {
        check_config(&config)?;
        let freqs = Arc::new(DocFrequencies::with_ngram(DEFAULT_DF_BITS, config.char_ngram)?);
        Ok(Self::from_parts(config, freqs))
    }

    /// An embedder with these settings and a table of `2^df_bits` buckets.
    pub fn with_table_bits(config: HashEmbedderConfig, df_bits: u32) -> Result<Self> {
        check_config(&config)?;
        let freqs = Arc::new(DocFrequencies::with_ngram(df_bits, config.char_ngram)?);
        Ok(Self::from_parts(config, freqs))
    }

    fn from_parts(config: HashEmbedderConfig, freqs: Arc<DocFrequencies>) -> Self {
        let defaults = HashEmbedderConfig { dim: config.dim, ..HashEmbedderConfig::default() };
        let mut name = format!("idf-hash-v1-d{}", config.dim);
        if config != defaults {
            let damping = if config.sublinear { "sub" } else { "lin" };
            name = format!(
                "{name}-n{}-w{}-c{}-{damping}",
                config.char_ngram, config.word_weight, config.char_weight
            );
        }
        Self { config, name, freqs }
    }

    /// The settings.
    pub fn config(&self) -> &HashEmbedderConfig {
        &self.config
    }

    /// The document-frequency table (shared by the clones of this embedder).
    pub fn frequencies(&self) -> &Arc<DocFrequencies> {
        &self.freqs
    }

    fn fill(&self, text: &str, out: &mut [f32]) {
        out.fill(0.0);
        let HashEmbedderConfig { dim, char_ngram, word_weight, char_weight, sublinear } = self.config;
        // Every feature with its base weight, then merged by hash for its frequency.
        let mut features: Vec<(u64, f32)> = Vec::new();
        for_each_token(text, |token| {
            if word_weight > 0.0 {
                features.push((word_hash(token), word_weight));
            }
            if char_ngram > 0 && char_weight > 0.0 {
                for_each_char_ngram(token, char_ngram, |h| features.push((h, char_weight)));
            }
        });
        features.sort_unstable_by_key(|&(h, _)| h);
        let mut i = 0;
        while i < features.len() {
            let (h, weight) = features[i];
            let mut tf = 0u32;
            while i < features.len() && features[i].0 == h {
                tf += 1;
                i += 1;
            }
            let tf = if sublinear { 1.0 + (tf as f32).ln() } else { tf as f32 };
            add_feature(out, dim, h, tf * weight * self.freqs.idf(h));
        }
        normalize_in_place(out);
    }
}

impl Embedder for IdfHashEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.config.dim
    }

    /// Writes the embedding; an `out` of the wrong length is filled with zeros.
    fn embed_into(&self, text: &str, out: &mut [f32]) {
        if out.len() == self.config.dim {
            self.fill(text, out);
        } else {
            tracing::warn!(
                expected = self.config.dim,
                got = out.len(),
                "embedding buffer of the wrong length"
            );
            out.fill(0.0);
        }
    }

    fn observe_document(&self, text: &str) {
        self.freqs.observe(text);
    }

    fn forget_document(&self, text: &str) {
        self.freqs.forget(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;
    use crate::embed::HashEmbedder;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// A seeded corpus in the shape of a long conversation: every turn names its speaker
    /// (one of two), holds several of 40 common words and two of 600 topic words; each
    /// query names the speaker, two common words and one topic word of a turn.
    /// Returns the mean reciprocal rank of the first turn holding the query's topic word.
    fn mrr(embedder: &dyn Embedder, seed: u64) -> f64 {
        let mut rng = SplitMix64::new(seed);
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        let common: Vec<String> = (0..40).map(|i| format!("common{i}")).collect();
        let topics: Vec<String> = (0..600).map(|i| format!("topic{i}")).collect();
        let speakers = ["Caroline", "Melanie"];
        let mut docs: Vec<(String, Vec<usize>)> = Vec::new();
        for _ in 0..400 {
            let mut words = vec![speakers[pick(2)].to_owned()];
            for _ in 0..8 {
                words.push(common[pick(40)].clone());
            }
            let t = vec![pick(600), pick(600)];
            words.extend(t.iter().map(|&i| topics[i].clone()));
            docs.push((words.join(" "), t));
        }
        for (text, _) in &docs {
            embedder.observe_document(text);
        }
        let vectors: Vec<Vec<f32>> = docs.iter().map(|(t, _)| embedder.embed(t)).collect();
        let mut total = 0.0;
        let n_queries = 100;
        for _ in 0..n_queries {
            let target = pick(docs.len());
            let topic = docs[target].1[0];
            let query =
                format!("{} {} {} {}", speakers[pick(2)], common[pick(40)], common[pick(40)], topics[topic]);
            let q = embedder.embed(&query);
            let mut ranked: Vec<(f32, usize)> = vectors.iter().map(|v| cos(&q, v)).zip(0..).collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let rank =
                ranked.iter().position(|&(_, d)| docs[d].1.contains(&topic)).expect("the target holds it");
            total += 1.0 / (rank + 1) as f64;
        }
        total / f64::from(n_queries)
    }

    #[test]
    fn idf_ranks_relevant_documents_higher_than_plain_hashing() {
        let config = HashEmbedderConfig { dim: 256, ..HashEmbedderConfig::default() };
        for seed in [1, 2, 3] {
            let plain = mrr(&HashEmbedder::new(config.clone()).unwrap(), seed);
            let idf = mrr(&IdfHashEmbedder::new(config.clone()).unwrap(), seed);
            eprintln!("seed {seed}: mean reciprocal rank {idf:.3} with IDF, {plain:.3} without");
            assert!(idf > plain + 0.15, "seed {seed}: idf {idf:.3}, plain {plain:.3}");
            assert!(idf > 0.8, "seed {seed}: idf {idf:.3}");
        }
    }

    #[test]
    fn without_documents_it_ranks_as_plain_hashing() {
        let e = IdfHashEmbedder::default();
        assert_eq!(e.frequencies().documents(), 0);
        let (a, b, c) = (e.embed("red coffee mug"), e.embed("coffee mugs"), e.embed("garden hose"));
        assert!(cos(&a, &b) > cos(&a, &c));
        assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
        assert!(e.embed("the of and").iter().all(|&x| x == 0.0));
    }

    #[test]
    fn counts_follow_observe_and_forget_and_never_go_negative() {
        let e = IdfHashEmbedder::default();
        let shared = e.clone();
        e.observe_document("kitten kitten garden");
        assert_eq!(shared.frequencies().word_count("kitten"), 1, "once per document, shared by clones");
        shared.forget_document("kitten garden");
        shared.forget_document("kitten garden");
        assert_eq!(e.frequencies().word_count("kitten"), 0);
        assert_eq!(e.frequencies().documents(), 0);
        assert!(e.frequencies().word_idf("kitten").is_finite());
    }

    #[test]
    fn settings_are_checked_and_named() {
        assert!(
            IdfHashEmbedder::new(HashEmbedderConfig { dim: 0, ..HashEmbedderConfig::default() }).is_err()
        );
        assert!(
            IdfHashEmbedder::new(HashEmbedderConfig {
                word_weight: f32::NAN,
                ..HashEmbedderConfig::default()
            })
            .is_err()
        );
        assert!(IdfHashEmbedder::with_table_bits(HashEmbedderConfig::default(), 30).is_err());
        assert!(DocFrequencies::new(4).is_err());
        let e = IdfHashEmbedder::with_table_bits(HashEmbedderConfig::default(), 10).unwrap();
        assert_eq!(e.name(), "idf-hash-v1-d128");
        let lin =
            IdfHashEmbedder::new(HashEmbedderConfig { sublinear: false, ..HashEmbedderConfig::default() })
                .unwrap();
        assert_eq!(lin.name(), "idf-hash-v1-d128-n3-w1-c0.5-lin");
        let mut short = [3.0; 5];
        e.embed_into("mug", &mut short);
        assert_eq!(short, [0.0; 5]);
    }

    proptest::proptest! {
        #[test]
        fn embeddings_are_unit_or_zero_and_deterministic(text in proptest::prelude::any::<String>()) {
            let e = IdfHashEmbedder::default();
            e.observe_document("a kitten in the garden");
            let v = e.embed(&text);
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            proptest::prop_assert!(v.iter().all(|x| x.is_finite()));
            proptest::prop_assert!(norm == 0.0 || (norm - 1.0).abs() < 1e-4);
            proptest::prop_assert_eq!(v, e.embed(&text));
        }
    }
}
