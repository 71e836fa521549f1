//! Lexical search: [`LexicalIndex`], an inverted index ranked by BM25 and kept up to date
//! one document at a time.
//!
//! A caller inserts each record under its own key `K` (a `RecordId`, a slot, a
//! `(layer, id)` pair) as a few fields of text, each with a weight, and removes it when the
//! record goes; [`search`](LexicalIndex::search) ranks the documents holding any of a
//! query's words by BM25 (`k1 = 1.2`, `b = 0.75`, Lucene's smoothed IDF
//! `ln(1 + (N − df + 0.5) / (df + 0.5))`). Text goes through
//! [`crate::text::for_each_index_token`]: lowercase, the light lemmatiser ("navigating" and
//! "navigate", "mugs" and "mug" meet), numbers kept.
//!
//! **Function words.** Stop words and words shorter than three characters ("where", "from",
//! "up") are indexed too, but a query's function word weighs a tenth of a content word of
//! the same rarity ([`Bm25Params::function_weight`]), and only documents holding one of the
//! query's content words are found: the function words order those documents ("Where is
//! Ivan from?" puts "Back in Tallinn, where I'm from" above Ivan's other turns) without
//! letting "the" find anything. A query without a content word finds nothing, and the
//! matched terms, the conjunctive match and the term lists a caller reads are content
//! words only.
//!
//! ```
//! use maxim_core::lexical::LexicalIndex;
//! let mut index = LexicalIndex::new();
//! index.insert(1u32, &[("Ana: we adopted two kittens last May", 1.0)])?;
//! index.insert(2u32, &[("Ana: the garden needs watering every day", 1.0), ("watering can", 0.5)])?;
//! index.insert(3u32, &[("Ben: my kitten chewed the cable", 1.0)])?;
//! let hits = index.search("When did Ana adopt the kittens?", 10);
//! assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), [1, 3, 2]);
//! assert_eq!(hits[0].matched_terms.len(), 3); // ana, adopt, kitten
//! assert!(index.remove(&1));
//! assert_eq!(index.search("adopted", 10).len(), 0);
//! assert!(index.search("the of and", 10).is_empty()); // only function words
//! # Ok::<(), maxim_core::Error>(())
//! ```
//!
//! # How it is kept
//!
//! Documents get dense `u32` numbers (reused through a free list); each term, interned
//! once, has a flat posting vector of `(document, weighted term frequency)`; each document
//! keeps its list of `(term, frequency)`, so a removal knows which postings to visit. A
//! removal only marks its postings' entries dead: a posting is compacted when its dead
//! entries reach a quarter of it, and a document number returns to the free list once no
//! posting holds it any more. A query looks up its terms, adds each term's contribution
//! to an accumulator per document (term at a time, no scan of the documents, no text read
//! again) and keeps the best `limit` in a bounded heap. Contributions are summed in fixed
//! point, so a score does not depend on the order its terms were added in. An index built
//! by inserts, replacements and removals ranks every query exactly as one built from the
//! surviving documents (a property test holds it to 1e-9 against a naive BM25).
//!
//! The index is not serialised: it is rebuilt from the records it indexes (a few
//! microseconds per record), so it can never disagree with them after a load.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::hash::Hash;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::text::for_each_index_token;

/// The largest field weight [`LexicalIndex::insert`] accepts.
pub const MAX_FIELD_WEIGHT: f32 = 1000.0;

/// A posting is compacted when its dead entries reach `1 / COMPACT_DIVISOR` of it.
const COMPACT_DIVISOR: usize = 4;

/// A term left once the candidates are known has its posting walked (adding to the
/// candidates only) when it is at most this many times as long as the candidates;
/// otherwise each candidate looks it up in its own term list. A look-up costs a cache miss
/// on the candidate's list (about 100 ns, shared by the terms looked up) and a binary
/// search; a walk reads the posting in order, a nanosecond or two an entry. (16 and 64
/// measured alike over 10^4 turns; 64 was 10–20% faster over 10^5.)
const CANDIDATE_WALK_RATIO: usize = 64;

/// The BM25 parameters.
///
/// ```
/// use maxim_core::lexical::{Bm25Params, LexicalIndex};
/// let params = Bm25Params { k1: 0.9, b: 0.4, ..Bm25Params::default() };
/// let index = LexicalIndex::<u32>::with_params(params)?;
/// assert_eq!(index.params(), params);
/// assert!(LexicalIndex::<u32>::with_params(Bm25Params { b: 1.5, ..params }).is_err());
/// assert!(LexicalIndex::<u32>::with_params(Bm25Params { function_weight: 2.0, ..params }).is_err());
/// # Ok::<(), maxim_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation, finite and in `[0, 100]` (default 1.2).
    pub k1: f64,
    /// Length normalisation, in `[0, 1]` (default 0.75).
    pub b: f64,
    /// What a query's [function word](crate::text::is_function_word) weighs against a
    /// content word of the same rarity, in `[0, 1]` (default 0.1; 0 lets them count only
    /// in the documents' lengths).
    pub function_weight: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75, function_weight: 0.1 }
    }
}

impl Bm25Params {
    /// Checks the ranges; [`Error::OutOfRange`] names the first parameter outside its own.
    pub fn validate(&self) -> Result<()> {
        if !(self.k1.is_finite() && (0.0..=100.0).contains(&self.k1)) {
            return Err(Error::OutOfRange { field: "k1", value: self.k1, expected: "in [0, 100]" });
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(Error::OutOfRange { field: "b", value: self.b, expected: "in [0, 1]" });
        }
        if !(self.function_weight.is_finite() && (0.0..=1.0).contains(&self.function_weight)) {
            return Err(Error::OutOfRange {
                field: "function_weight",
                value: self.function_weight,
                expected: "in [0, 1]",
            });
        }
        Ok(())
    }
}

/// One document found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<K> {
    /// The document's key.
    pub key: K,
    /// Its BM25 score (> 0).
    pub score: f64,
    /// The query's content words it holds, in the order of the query (normalised forms;
    /// never empty).
    pub matched_terms: Vec<Arc<str>>,
}

/// Counts describing a [`LexicalIndex`], from [`LexicalIndex::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LexicalStats {
    /// Documents held.
    pub documents: usize,
    /// Distinct terms with at least one posting entry.
    pub terms: usize,
    /// Posting entries, dead ones included.
    pub postings: usize,
    /// Posting entries of removed documents not compacted yet.
    pub dead_postings: usize,
    /// Document numbers allocated (live, waiting for compaction, or free).
    pub doc_slots: usize,
    /// Heap bytes held, by summing the capacities of its vectors and tables (an estimate
    /// for the hash tables: buckets of key and value plus one control byte each).
    pub heap_bytes: usize,
}

/// An incrementally maintained BM25 index over documents keyed by `K`; see the
/// [module docs](self).
#[derive(Debug, Clone)]
pub struct LexicalIndex<K> {
    params: Bm25Params,
    /// Term text → term number.
    term_ids: FxHashMap<Arc<str>, u32>,
    /// By term number.
    terms: Vec<Term>,
    /// Term numbers whose postings emptied, for reuse.
    free_terms: Vec<u32>,
    /// By document number: the weighted length of a live document, or a negative value for
    /// a number that holds no live document (the hot array of a search).
    doc_len: Vec<f32>,
    /// By document number.
    docs: Vec<DocSlot<K>>,
    /// Document numbers no posting holds any more, for reuse.
    free_docs: Vec<u32>,
    by_key: FxHashMap<K, u32>,
    /// Sum of the live documents' lengths.
    total_len: f64,
}

#[derive(Debug, Clone)]
struct Term {
    text: Option<Arc<str>>,
    /// Whether the text is a [function word](crate::text::is_function_word).
    function: bool,
    postings: Vec<Posting>,
    /// Entries of `postings` whose document was removed.
    dead: u32,
    /// The largest frequency in `postings` (removed documents' entries may count: the
    /// bound stays valid, only looser, until the posting is compacted).
    max_tf: f32,
    /// The shortest length of a document in `postings` (likewise).
    min_dl: f32,
}

impl Default for Term {
    fn default() -> Self {
        Self {
            text: None,
            function: false,
            postings: Vec::new(),
            dead: 0,
            max_tf: 0.0,
            min_dl: f32::INFINITY,
        }
    }
}

impl Term {
    /// Live documents holding the term.
    fn df(&self) -> usize {
        self.postings.len() - self.dead as usize
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: f32,
}

#[derive(Debug, Clone)]
enum DocSlot<K> {
    Live {
        key: K,
        /// `(term, weighted frequency)`, by term number.
        terms: Box<[(u32, f32)]>,
    },
    /// Removed; `pending` postings still hold an entry for it.
    Dead { pending: u32 },
    /// Free for reuse.
    Free,
}

impl<K> Default for LexicalIndex<K> {
    fn default() -> Self {
        Self {
            params: Bm25Params::default(),
            term_ids: FxHashMap::default(),
            terms: Vec::new(),
            free_terms: Vec::new(),
            doc_len: Vec::new(),
            docs: Vec::new(),
            free_docs: Vec::new(),
            by_key: FxHashMap::default(),
            total_len: 0.0,
        }
    }
}

impl<K: Clone + Eq + Hash> LexicalIndex<K> {
    /// An empty index with the default [`Bm25Params`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty index with `params`, once they are checked.
    pub fn with_params(params: Bm25Params) -> Result<Self> {
        params.validate()?;
        Ok(Self { params, ..Self::default() })
    }

    /// The BM25 parameters.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when no document is held.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Whether a document is held under `key`.
    pub fn contains(&self, key: &K) -> bool {
        self.by_key.contains_key(key)
    }

    /// Number of documents holding `term` (a normalised token: "mug", not "Mugs").
    pub fn doc_freq(&self, term: &str) -> usize {
        self.term_ids.get(term).map_or(0, |&t| self.terms[t as usize].df())
    }

    /// Calls `f(term, weighted frequency, document frequency)` for each distinct content word
    /// of the document held under `key` (function words left out), by term number; nothing
    /// when no document is held under it.
    /// Reads the index's own lists: no text is tokenised again and nothing is allocated (how
    /// the hub picks expansion words from its best hits).
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// index.insert(1u32, &[("Mugs and more mugs", 1.0)])?; // "and", "more": function words
    /// index.insert(2u32, &[("a mug of tea", 1.0)])?;
    /// let mut terms = Vec::new();
    /// index.for_each_term_of(&1, |term, tf, df| terms.push((term.to_owned(), tf, df)));
    /// assert_eq!(terms, [("mug".to_owned(), 2.0, 2)]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn for_each_term_of<'a>(&'a self, key: &K, mut f: impl FnMut(&'a str, f32, usize)) {
        let Some(&d) = self.by_key.get(key) else { return };
        let DocSlot::Live { terms, .. } = &self.docs[d as usize] else { return };
        for &(t, tf) in &**terms {
            let term = &self.terms[t as usize];
            if let Some(text) = &term.text
                && !term.function
            {
                f(text, tf, term.df());
            }
        }
    }

    /// The mean weighted length of the documents (0 when there are none).
    pub fn average_len(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.total_len / self.len() as f64 }
    }

    /// Removes every document (keeping the parameters).
    pub fn clear(&mut self) {
        *self = Self { params: self.params, ..Self::default() };
    }

    /// Indexes `fields` (text and weight) under `key`, replacing the document already held
    /// under it. A term's frequency in the document is the sum of the weights of the fields
    /// it occurs in, once per occurrence; the document's length is the weighted count of
    /// its tokens, function words included. A field of weight 0 is skipped. A document
    /// without a content word is held (it counts in the collection) and matches nothing.
    ///
    /// Errors (nothing changes): a weight that is not finite, negative or above
    /// [`MAX_FIELD_WEIGHT`] ([`Error::OutOfRange`]).
    pub fn insert(&mut self, key: K, fields: &[(&str, f32)]) -> Result<()> {
        for &(_, w) in fields {
            check_weight(w)?;
        }
        self.remove(&key);
        let mut occurrences: Vec<(u32, f32)> = Vec::new();
        let mut len = 0.0f64;
        for &(text, w) in fields {
            if w == 0.0 {
                continue;
            }
            for_each_index_token(text, |token, function| {
                occurrences.push((self.intern(token, function), w));
                len += f64::from(w);
            });
        }
        occurrences.sort_unstable_by_key(|&(t, _)| t);
        // Sums in f64 are exact for any likely number of f32 weights, so a document's
        // frequencies do not depend on the order of its occurrences.
        let mut sums: Vec<(u32, f64)> = Vec::with_capacity(occurrences.len());
        for (t, w) in occurrences {
            match sums.last_mut() {
                Some(last) if last.0 == t => last.1 += f64::from(w),
                _ => sums.push((t, f64::from(w))),
            }
        }
        let terms: Vec<(u32, f32)> = sums.into_iter().map(|(t, w)| (t, w as f32)).collect();
        let len = len as f32;
        let doc = if let Some(d) = self.free_docs.pop() {
            d
        } else {
            self.docs.push(DocSlot::Free);
            self.doc_len.push(-1.0);
            (self.docs.len() - 1) as u32
        };
        for &(t, tf) in &terms {
            let term = &mut self.terms[t as usize];
            term.postings.push(Posting { doc, tf });
            term.max_tf = term.max_tf.max(tf);
            term.min_dl = term.min_dl.min(len);
        }
        self.docs[doc as usize] = DocSlot::Live { key: key.clone(), terms: terms.into_boxed_slice() };
        self.doc_len[doc as usize] = len;
        self.total_len += f64::from(len);
        self.by_key.insert(key, doc);
        Ok(())
    }

    /// Removes the document under `key`; false when there is none.
    pub fn remove(&mut self, key: &K) -> bool {
        let Some(doc) = self.by_key.remove(key) else { return false };
        let d = doc as usize;
        let slot = std::mem::replace(&mut self.docs[d], DocSlot::Free);
        let DocSlot::Live { terms, .. } = slot else { unreachable!("a key maps to a live document") };
        self.total_len -= f64::from(self.doc_len[d]);
        if self.by_key.is_empty() {
            // Exactly zero, whatever rounding the sums collected.
            self.total_len = 0.0;
        }
        self.doc_len[d] = -1.0;
        if terms.is_empty() {
            self.free_docs.push(doc);
            return true;
        }
        self.docs[d] = DocSlot::Dead { pending: terms.len() as u32 };
        for &(t, _) in &terms {
            let term = &mut self.terms[t as usize];
            term.dead += 1;
            if term.dead as usize * COMPACT_DIVISOR >= term.postings.len() {
                self.compact(t);
            }
        }
        true
    }

    /// Up to `limit` documents holding any of `query`'s content words, best first (the
    /// query's function words adding their small share), ties by key. An empty query, one
    /// of function words only, or one whose content words no document holds gives nothing.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit<K>>
    where
        K: Ord,
    {
        let _s = tracing::trace_span!("lexical_search", limit, n_docs = self.len()).entered();
        let query_terms = self.query_terms(query);
        let best = self.top_k(&query_terms, limit, None, Ord::cmp);
        self.hits(&query_terms, best)
    }

    /// [`search`](Self::search) among the documents whose key `keep` accepts.
    pub fn search_filtered(&self, query: &str, limit: usize, keep: impl FnMut(&K) -> bool) -> Vec<Hit<K>>
    where
        K: Ord,
    {
        self.search_with(query, limit, keep, Ord::cmp)
    }

    /// Up to `limit` documents accepted by `keep` and holding any of `query`'s content
    /// words, by score, then by `tie` between keys (`Less` ranks first).
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// for key in 1..=4u32 {
    ///     index.insert(key, &[("the red mug", 1.0)])?;
    /// }
    /// // Equal scores: the highest key first, and key 4 left out.
    /// let hits = index.search_with("mug", 2, |&k| k != 4, |a, b| b.cmp(a));
    /// assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), [3, 2]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        keep: impl FnMut(&K) -> bool,
        tie: impl FnMut(&K, &K) -> Ordering,
    ) -> Vec<Hit<K>> {
        let _s = tracing::trace_span!("lexical_search", limit, n_docs = self.len()).entered();
        let query_terms = self.query_terms(query);
        let mut keep = keep;
        let best = self.top_k(&query_terms, limit, Some(&mut keep), tie);
        self.hits(&query_terms, best)
    }

    /// The hits of a search for `query_terms` that found `best`.
    fn hits(&self, query_terms: &[u32], best: Vec<(f64, u32)>) -> Vec<Hit<K>> {
        best.into_iter()
            .map(|(score, d)| {
                let DocSlot::Live { key, terms } = &self.docs[d as usize] else {
                    unreachable!("hits are live documents")
                };
                let matched_terms = query_terms
                    .iter()
                    .filter(|&&t| self.holds_content(terms, t))
                    .filter_map(|&t| self.terms[t as usize].text.clone())
                    .collect();
                Hit { key: key.clone(), score, matched_terms }
            })
            .collect()
    }

    /// [`search_with`](Self::search_with) without the matched terms' text: each hit as its
    /// key, its score and the number of the query's distinct content words it holds, so a
    /// search allocates nothing per hit.
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// index.insert(1u32, &[("Ana adopted a kitten", 1.0)])?;
    /// index.insert(2u32, &[("Ana watered the garden", 1.0)])?;
    /// let hits = index.search_counted_with("Ana's kitten", 10, |_| true, Ord::cmp);
    /// assert_eq!(hits.iter().map(|h| (h.0, h.2)).collect::<Vec<_>>(), [(1, 2), (2, 1)]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn search_counted_with(
        &self,
        query: &str,
        limit: usize,
        keep: impl FnMut(&K) -> bool,
        tie: impl FnMut(&K, &K) -> Ordering,
    ) -> Vec<(K, f64, usize)> {
        let _s = tracing::trace_span!("lexical_search", limit, n_docs = self.len()).entered();
        let query_terms = self.query_terms(query);
        let mut keep = keep;
        let best = self.top_k(&query_terms, limit, Some(&mut keep), tie);
        self.counted(&query_terms, best)
    }

    /// [`search_counted_with`](Self::search_counted_with) over every document: with no
    /// filter to ask, a candidate's record is not read until it is a hit.
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// index.insert(1u32, &[("Ana adopted a kitten", 1.0)])?;
    /// index.insert(2u32, &[("Ana watered the garden", 1.0)])?;
    /// let all = index.search_counted("Ana's kitten", 10, Ord::cmp);
    /// assert_eq!(all, index.search_counted_with("Ana's kitten", 10, |_| true, Ord::cmp));
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn search_counted(
        &self,
        query: &str,
        limit: usize,
        tie: impl FnMut(&K, &K) -> Ordering,
    ) -> Vec<(K, f64, usize)> {
        let _s = tracing::trace_span!("lexical_search", limit, n_docs = self.len()).entered();
        let query_terms = self.query_terms(query);
        let best = self.top_k(&query_terms, limit, None, tie);
        self.counted(&query_terms, best)
    }

    /// Each document of `best` as its key, its score and the number of `query_terms`'
    /// content words it holds.
    fn counted(&self, query_terms: &[u32], best: Vec<(f64, u32)>) -> Vec<(K, f64, usize)> {
        best.into_iter()
            .map(|(score, d)| {
                let DocSlot::Live { key, terms } = &self.docs[d as usize] else {
                    unreachable!("hits are live documents")
                };
                let held = query_terms.iter().filter(|&&t| self.holds_content(terms, t)).count();
                (key.clone(), score, held)
            })
            .collect()
    }

    /// Calls `f` with the key, the BM25 score and the number of the query's distinct content
    /// words held, of every document holding any of `query`'s content words, in no
    /// particular order: for a caller that ranks by more than the score.
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// index.insert("a", &[("red coffee mug", 1.0)])?;
    /// index.insert("b", &[("garden hose", 1.0)])?;
    /// index.insert("c", &[("coffee beans", 1.0)])?;
    /// let mut seen = Vec::new();
    /// index.for_each_match("mugs of coffee", |k, score, n_terms| seen.push((*k, score > 0.0, n_terms)));
    /// seen.sort_unstable_by_key(|&(k, ..)| k);
    /// assert_eq!(seen, [("a", true, 2), ("c", true, 1)]);
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn for_each_match(&self, query: &str, mut f: impl FnMut(&K, f64, usize)) {
        if self.is_empty() {
            return;
        }
        let query_terms = self.query_terms(query);
        if query_terms.is_empty() {
            return;
        }
        with_scratch(|scratch| {
            self.accumulate(&query_terms, scratch);
            for &d in &scratch.touched {
                if let DocSlot::Live { key, terms } = &self.docs[d as usize] {
                    let n_terms = query_terms.iter().filter(|&&t| self.holds_content(terms, t)).count();
                    f(key, from_fixed(scratch.acc[d as usize]), n_terms);
                }
            }
        });
    }

    /// The keys of the documents holding every content word of `query` (its function words
    /// aside), in no particular order (none for a query without a content word). Walks the
    /// posting of the query's rarest word and checks the others in each document's term
    /// list.
    ///
    /// ```
    /// use maxim_core::lexical::LexicalIndex;
    /// let mut index = LexicalIndex::new();
    /// index.insert(1u32, &[("the kitchen light", 1.0)])?;
    /// index.insert(2u32, &[("kitchen", 1.0), ("lights off", 1.0)])?;
    /// index.insert(3u32, &[("garden light", 1.0)])?;
    /// let mut keys = index.with_all_terms("Kitchen lights?");
    /// keys.sort_unstable();
    /// assert_eq!(keys, [1, 2]);
    /// assert!(index.with_all_terms("kitchen garage").is_empty());
    /// assert!(index.with_all_terms("to the").is_empty());
    /// # Ok::<(), maxim_core::Error>(())
    /// ```
    pub fn with_all_terms(&self, query: &str) -> Vec<K> {
        let mut wanted: Vec<u32> = Vec::new();
        let mut unknown = false;
        for_each_index_token(query, |token, function| match self.term_ids.get(token) {
            _ if function => {}
            Some(&t) if self.terms[t as usize].df() > 0 => {
                if !wanted.contains(&t) {
                    wanted.push(t);
                }
            }
            _ => unknown = true,
        });
        if unknown || wanted.is_empty() {
            return Vec::new();
        }
        wanted.sort_unstable_by_key(|&t| self.terms[t as usize].df());
        let (rarest, others) = wanted.split_first().expect("not empty");
        self.terms[*rarest as usize]
            .postings
            .iter()
            .filter_map(|p| match &self.docs[p.doc as usize] {
                DocSlot::Live { key, terms } => others
                    .iter()
                    .all(|&t| terms.binary_search_by_key(&t, |&(dt, _)| dt).is_ok())
                    .then(|| key.clone()),
                _ => None,
            })
            .collect()
    }

    /// Counts describing the index, its memory included.
    pub fn stats(&self) -> LexicalStats {
        let postings: usize = self.terms.iter().map(|t| t.postings.len()).sum();
        let dead: usize = self.terms.iter().map(|t| t.dead as usize).sum();
        let mut heap = self.terms.capacity() * size_of::<Term>()
            + self.free_terms.capacity() * 4
            + self.doc_len.capacity() * 4
            + self.docs.capacity() * size_of::<DocSlot<K>>()
            + self.free_docs.capacity() * 4
            + self.term_ids.capacity() * (size_of::<Arc<str>>() + 4 + 1)
            + self.by_key.capacity() * (size_of::<K>() + 4 + 1);
        for t in &self.terms {
            heap += t.postings.capacity() * size_of::<Posting>();
            // The interned text and its two reference counts.
            heap += t.text.as_ref().map_or(0, |s| s.len() + 16);
        }
        for d in &self.docs {
            if let DocSlot::Live { terms, .. } = d {
                heap += terms.len() * size_of::<(u32, f32)>();
            }
        }
        LexicalStats {
            documents: self.len(),
            terms: self.term_ids.len(),
            postings,
            dead_postings: dead,
            doc_slots: self.docs.len(),
            heap_bytes: heap,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Internals.

    fn key_of(&self, doc: u32) -> &K {
        match &self.docs[doc as usize] {
            DocSlot::Live { key, .. } => key,
            _ => unreachable!("only live documents are ranked"),
        }
    }

    /// The term number of `token`, interning it when new.
    fn intern(&mut self, token: &str, function: bool) -> u32 {
        if let Some(&t) = self.term_ids.get(token) {
            return t;
        }
        let text: Arc<str> = Arc::from(token);
        let t = if let Some(t) = self.free_terms.pop() {
            let term = &mut self.terms[t as usize];
            (term.text, term.function) = (Some(Arc::clone(&text)), function);
            t
        } else {
            self.terms.push(Term { text: Some(Arc::clone(&text)), function, ..Term::default() });
            (self.terms.len() - 1) as u32
        };
        self.term_ids.insert(text, t);
        t
    }

    /// Drops the dead entries of term `t`'s posting, frees the documents no posting holds
    /// any more, and frees the term when its posting is empty.
    fn compact(&mut self, t: u32) {
        let Self { terms, docs, doc_len, free_docs, term_ids, free_terms, .. } = self;
        let term = &mut terms[t as usize];
        let (mut max_tf, mut min_dl) = (0.0f32, f32::INFINITY);
        term.postings.retain(|p| {
            let dl = doc_len[p.doc as usize];
            if dl >= 0.0 {
                max_tf = max_tf.max(p.tf);
                min_dl = min_dl.min(dl);
                return true;
            }
            if let DocSlot::Dead { pending } = &mut docs[p.doc as usize] {
                *pending -= 1;
                if *pending == 0 {
                    docs[p.doc as usize] = DocSlot::Free;
                    free_docs.push(p.doc);
                }
            }
            false
        });
        term.dead = 0;
        (term.max_tf, term.min_dl) = (max_tf, min_dl);
        if term.postings.is_empty() {
            term.postings = Vec::new();
            if let Some(text) = term.text.take() {
                term_ids.remove(&*text);
            }
            free_terms.push(t);
        } else if term.postings.capacity() > 2 * term.postings.len() + 8 {
            term.postings.shrink_to(term.postings.len() + term.postings.len() / 4);
        }
    }

    /// The distinct known terms of `query` held by some document, in the query's order;
    /// none when no content word of it is.
    fn query_terms(&self, query: &str) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let mut content = false;
        for_each_index_token(query, |token, function| {
            if let Some(&t) = self.term_ids.get(token)
                && self.terms[t as usize].df() > 0
                && !out.contains(&t)
            {
                out.push(t);
                content |= !function;
            }
        });
        if !content {
            out.clear();
        }
        out
    }

    /// Whether a document's term list `held` holds term `t` and `t` is a content word.
    fn holds_content(&self, held: &[(u32, f32)], t: u32) -> bool {
        !self.terms[t as usize].function && held.binary_search_by_key(&t, |&(dt, _)| dt).is_ok()
    }

    /// `(k1 (1 − b), k1 b / avgdl)`: a document of length `dl` has the norm
    /// `base + per_len · dl` in BM25's denominator.
    fn norm_parts(&self) -> (f64, f64) {
        let Bm25Params { k1, b, .. } = self.params;
        let avg = self.average_len();
        (k1 * (1.0 - b), if avg > 0.0 { k1 * b / avg } else { 0.0 })
    }

    /// A query term as a search reads it: its number, its weight `idf · (k1 + 1)` (times
    /// the function weight for a function word) and the most it adds to a document's score.
    fn query_term(&self, t: u32, base: f64, per_len: f64) -> QueryTerm {
        let k1 = self.params.k1;
        let n = self.len() as f64;
        let term = &self.terms[t as usize];
        let df = term.df() as f64;
        let mut weight = (1.0 + (n - df + 0.5) / (df + 0.5)).ln() * (k1 + 1.0);
        if term.function {
            weight *= self.params.function_weight;
        }
        // BM25's saturation grows with the frequency and falls with the length, so the
        // largest frequency over the shortest length bounds every document of the posting.
        let tf = f64::from(term.max_tf);
        let bound = if tf > 0.0 { weight * tf / (tf + base + per_len * f64::from(term.min_dl)) } else { 0.0 };
        // Rounded up past any difference of a last bit in the quotient, and past the
        // smallest contribution a content word adds.
        let bound = to_fixed(bound * (1.0 + 1e-12)) + 1;
        QueryTerm { term: t, weight, bound, function: term.function }
    }

    /// What term `q` adds to a document holding it `tf` times with length `dl`, in fixed
    /// point: at least 1 for a content word, so a document it touches is told apart.
    fn contribution(q: &QueryTerm, tf: f32, dl: f32, base: f64, per_len: f64) -> u64 {
        let tf = f64::from(tf);
        let c = to_fixed(q.weight * tf / (tf + base + per_len * f64::from(dl)));
        if q.function { c } else { c.max(1) }
    }

    /// Adds content word `q`'s contribution to every live document of its posting.
    fn walk_posting(&self, q: QueryTerm, base: f64, per_len: f64, acc: &mut [u64], touched: &mut Vec<u32>) {
        let postings = &self.terms[q.term as usize].postings;
        #[cfg(test)]
        tests::WALKED.with(|w| w.set(w.get() + postings.len()));
        for p in postings {
            let dl = self.doc_len[p.doc as usize];
            if dl < 0.0 {
                continue;
            }
            let slot = &mut acc[p.doc as usize];
            if *slot == 0 {
                touched.push(p.doc);
            }
            *slot = slot.saturating_add(Self::contribution(&q, p.tf, dl, base, per_len));
        }
    }

    /// Adds term `q`'s contribution to the documents of its posting that are already
    /// candidates (those whose accumulator is not zero), touching no other.
    fn walk_candidates(&self, q: QueryTerm, base: f64, per_len: f64, acc: &mut [u64]) {
        let postings = &self.terms[q.term as usize].postings;
        #[cfg(test)]
        tests::WALKED.with(|w| w.set(w.get() + postings.len()));
        for p in postings {
            let slot = &mut acc[p.doc as usize];
            // A dead document's accumulator is zero: no walk touched it.
            if *slot != 0 {
                *slot = slot.saturating_add(Self::contribution(
                    &q,
                    p.tf,
                    self.doc_len[p.doc as usize],
                    base,
                    per_len,
                ));
            }
        }
    }

    /// Whether touched document `d` is accepted: by every search without a filter, and by
    /// `keep` (asked once per search) otherwise. A touched document is live.
    fn kept(&self, status: &mut [u8], d: u32, keep: &mut Option<&mut dyn FnMut(&K) -> bool>) -> bool {
        let Some(keep) = keep else { return true };
        match status[d as usize] {
            KEPT => true,
            REJECTED => false,
            _ => {
                let ok = matches!(&self.docs[d as usize], DocSlot::Live { key, .. } if keep(key));
                status[d as usize] = if ok { KEPT } else { REJECTED };
                ok
            }
        }
    }

    /// The `limit`-th best partial score among the touched documents `keep` accepts, when
    /// there are that many.
    fn kth_kept(
        &self,
        scratch: &mut Scratch,
        limit: usize,
        keep: &mut Option<&mut dyn FnMut(&K) -> bool>,
    ) -> Option<u64> {
        if scratch.touched.len() < limit {
            return None;
        }
        let Scratch { acc, touched, status, buf } = scratch;
        buf.clear();
        for &d in touched.iter() {
            if self.kept(status, d, keep) {
                buf.push(acc[d as usize]);
            }
        }
        if buf.len() < limit {
            return None;
        }
        buf.select_nth_unstable_by(limit - 1, |a, b| b.cmp(a));
        Some(buf[limit - 1])
    }

    /// The best `limit` documents for `query_terms` that `keep` accepts, by score then by
    /// `tie`, as `(score, document)`: exactly what scoring every document holding a query
    /// term gives, found with MaxScore pruning.
    ///
    /// Each term's contribution to any document is bounded by its weight at its posting's
    /// largest frequency and shortest length. The content words are walked from the largest
    /// bound down; once `limit` accepted documents have partial scores above what all the
    /// terms not yet walked could add together, no document outside those already touched
    /// can enter. Function words never touch a document. Each term left then adds to the
    /// candidates only: its posting is walked when it is not much longer than they are, and
    /// otherwise it is looked up in the candidates' own term lists, only for those that can
    /// still reach the best `limit`. Scores are sums in fixed point, the same whatever
    /// order the terms were added in, so pruning changes no score and no tie.
    fn top_k(
        &self,
        query_terms: &[u32],
        limit: usize,
        mut keep: Option<&mut dyn FnMut(&K) -> bool>,
        mut tie: impl FnMut(&K, &K) -> Ordering,
    ) -> Vec<(f64, u32)> {
        let filtered = keep.is_some();
        if limit == 0 || self.is_empty() || query_terms.is_empty() {
            return Vec::new();
        }
        let (base, per_len) = self.norm_parts();
        let terms: Vec<QueryTerm> = query_terms.iter().map(|&t| self.query_term(t, base, per_len)).collect();
        // Content words first, each kind from the largest bound down.
        let mut walk: Vec<usize> = (0..terms.len()).collect();
        walk.sort_by(|&a, &b| {
            (terms[a].function.cmp(&terms[b].function))
                .then(terms[b].bound.cmp(&terms[a].bound))
                .then(a.cmp(&b))
        });
        let content = walk.iter().filter(|&&i| !terms[i].function).count();
        // rest[i]: the most the terms walk[i..] add to any document together.
        let mut rest = vec![0u64; walk.len() + 1];
        for i in (0..walk.len()).rev() {
            rest[i] = rest[i + 1].saturating_add(terms[walk[i]].bound);
        }
        let mut best: Vec<(u64, u32)> = Vec::new();
        with_scratch(|scratch| {
            scratch.prepare(self.docs.len());
            let mut walked = 0;
            // The `limit`-th best partial score when the walk stopped early: at least `limit`
            // accepted documents score that much in the end, so one that cannot reach it
            // is out.
            let mut floor = 0;
            while walked < content {
                self.walk_posting(terms[walk[walked]], base, per_len, &mut scratch.acc, &mut scratch.touched);
                walked += 1;
                if walked == content {
                    break;
                }
                // Stopping pays when the postings left are longer than the candidates.
                let left: usize = walk[walked..content]
                    .iter()
                    .map(|&i| self.terms[terms[i].term as usize].postings.len())
                    .sum();
                if left > scratch.touched.len()
                    && let Some(kth) = self.kth_kept(scratch, limit, &mut keep)
                    && kth > rest[walked]
                {
                    floor = kth;
                    break;
                }
            }
            // The candidates are known: every term left (the function words, and the content
            // words after an early stop) only adds to them, walked or looked up.
            let mut unwalked: Vec<usize> = walk[walked..].to_vec();
            unwalked.retain(|&i| {
                let long = self.terms[terms[i].term as usize].postings.len();
                let walk_it = long <= CANDIDATE_WALK_RATIO * scratch.touched.len();
                if walk_it {
                    self.walk_candidates(terms[i], base, per_len, &mut scratch.acc);
                }
                !walk_it
            });
            let rest_bound: u64 = unwalked.iter().fold(0u64, |sum, &i| sum.saturating_add(terms[i].bound));
            let unwalked = &unwalked[..];
            let Scratch { acc, touched, status, .. } = scratch;
            let mut heap = BoundedHeap::new(limit);
            let by_score = &mut |a: &(u64, u32), b: &(u64, u32)| b.0.cmp(&a.0);
            for &d in touched.iter() {
                let mut score = acc[d as usize];
                if !unwalked.is_empty() {
                    let cut = if heap.is_full() { heap.worst().max(floor) } else { floor };
                    if score.saturating_add(rest_bound) < cut {
                        // Out: even with every term left it stays below `limit` documents'
                        // scores. Its partial score stays in the accumulator, below the cut.
                        continue;
                    }
                    if !self.kept(status, d, &mut keep) {
                        continue;
                    }
                    let DocSlot::Live { terms: held, .. } = &self.docs[d as usize] else { continue };
                    let dl = self.doc_len[d as usize];
                    for &j in unwalked {
                        if let Ok(i) = held.binary_search_by_key(&terms[j].term, |&(t, _)| t) {
                            score = score
                                .saturating_add(Self::contribution(&terms[j], held[i].1, dl, base, per_len));
                        }
                    }
                    acc[d as usize] = score;
                } else if !self.kept(status, d, &mut keep) {
                    continue;
                }
                heap.push((score, d), by_score);
            }
            // The `limit`-th best score decides; the documents tied with it are all kept
            // for the tie-break.
            let cut = if heap.is_full() { heap.worst() } else { 0 };
            for &d in touched.iter() {
                if acc[d as usize] >= cut && (!filtered || status[d as usize] == KEPT) {
                    best.push((acc[d as usize], d));
                }
            }
        });
        let mut order = |a: &(u64, u32), b: &(u64, u32)| {
            b.0.cmp(&a.0).then_with(|| tie(self.key_of(a.1), self.key_of(b.1)))
        };
        if best.len() > limit {
            best.select_nth_unstable_by(limit - 1, &mut order);
            best.truncate(limit);
        }
        best.sort_by(&mut order);
        best.into_iter().map(|(s, d)| (from_fixed(s), d)).collect()
    }

    /// [`top_k`](Self::top_k) by scoring every document holding a query term: the
    /// reference the pruned search is tested against.
    #[cfg(test)]
    fn exhaustive_top_k(
        &self,
        query: &str,
        limit: usize,
        mut keep: impl FnMut(&K) -> bool,
        mut tie: impl FnMut(&K, &K) -> Ordering,
    ) -> Vec<(K, f64)> {
        let query_terms = self.query_terms(query);
        if limit == 0 || self.is_empty() || query_terms.is_empty() {
            return Vec::new();
        }
        let mut best: Vec<(u64, u32)> = Vec::new();
        with_scratch(|scratch| {
            self.accumulate(&query_terms, scratch);
            for &d in &scratch.touched {
                if let DocSlot::Live { key, .. } = &self.docs[d as usize]
                    && keep(key)
                {
                    best.push((scratch.acc[d as usize], d));
                }
            }
        });
        best.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| tie(self.key_of(a.1), self.key_of(b.1))));
        best.truncate(limit);
        best.into_iter().map(|(s, d)| (self.key_of(d).clone(), from_fixed(s))).collect()
    }

    /// Adds every query term's BM25 contribution to the documents of its posting: the
    /// content words', then the function words' to the documents the content words
    /// touched.
    fn accumulate(&self, query_terms: &[u32], scratch: &mut Scratch) {
        let (base, per_len) = self.norm_parts();
        scratch.prepare(self.docs.len());
        let terms = query_terms.iter().map(|&t| self.query_term(t, base, per_len));
        for q in terms.clone().filter(|q| !q.function) {
            self.walk_posting(q, base, per_len, &mut scratch.acc, &mut scratch.touched);
        }
        for q in terms.filter(|q| q.function) {
            self.walk_candidates(q, base, per_len, &mut scratch.acc);
        }
    }
}

/// A query term as a search reads it.
#[derive(Debug, Clone, Copy)]
struct QueryTerm {
    term: u32,
    /// A function word: never walked, only added to documents a content word found.
    function: bool,
    /// `idf · (k1 + 1)`.
    weight: f64,
    /// The most it adds to a live document's score, in fixed point.
    bound: u64,
}

/// Fixed-point units per score unit. Each term's contribution is rounded to a multiple of
/// `2^-40` (about 1e-12, far below any difference BM25 makes between documents) and the
/// contributions are summed as integers, so a document's score is the same bits whatever
/// order its terms were added in: a pruned search, an exhaustive one and an index rebuilt
/// in another order agree exactly, with no second scoring pass. Sums saturate (a score
/// past 2^64 units would need thousands of the rarest terms in one document at `k1 = 100`):
/// a pathological query ranks its ties by key instead of overflowing.
const FIXED_ONE: f64 = (1u64 << 40) as f64;

/// `x ≥ 0` in fixed point, to the nearest unit (halves up; `f64::round` is a library call
/// on the baseline x86-64 target, a tenth of a search's time).
fn to_fixed(x: f64) -> u64 {
    (x * FIXED_ONE + 0.5) as u64
}

/// A fixed-point score as a number.
fn from_fixed(v: u64) -> f64 {
    v as f64 / FIXED_ONE
}

/// A document's state in [`Scratch::status`]: `keep` not asked yet, accepted, refused (or
/// not live).
const UNKNOWN: u8 = 0;
const KEPT: u8 = 1;
const REJECTED: u8 = 2;

/// The weight check of [`LexicalIndex::insert`].
fn check_weight(w: f32) -> Result<()> {
    if w.is_finite() && (0.0..=MAX_FIELD_WEIGHT).contains(&w) {
        Ok(())
    } else {
        Err(Error::OutOfRange { field: "field weight", value: f64::from(w), expected: "in [0, 1000]" })
    }
}

/// A search's accumulator: scores by document number, and the numbers it touched. Every
/// entry not listed in `touched` is zero.
#[derive(Default)]
struct Scratch {
    /// Scores in fixed point ([`FIXED_ONE`]).
    acc: Vec<u64>,
    touched: Vec<u32>,
    /// By document number: whether the search's filter accepts it ([`UNKNOWN`] unless
    /// listed in `touched`).
    status: Vec<u8>,
    /// Partial scores, for [`LexicalIndex::top_k`]'s threshold.
    buf: Vec<u64>,
}

impl Scratch {
    /// Room for `docs` document numbers.
    fn prepare(&mut self, docs: usize) {
        if self.acc.len() < docs {
            self.acc.resize(docs, 0);
            self.status.resize(docs, UNKNOWN);
        }
    }

    fn reset(&mut self) {
        for &d in &self.touched {
            self.acc[d as usize] = 0;
            self.status[d as usize] = UNKNOWN;
        }
        self.touched.clear();
    }
}

thread_local! {
    /// One accumulator per thread, so a search allocates nothing in steady state.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's accumulator, clean (or a fresh one when a callback of a
/// search on this thread searches again).
fn with_scratch(f: impl FnOnce(&mut Scratch)) {
    SCRATCH.with(|cell| {
        if let Ok(mut scratch) = cell.try_borrow_mut() {
            // Clean even after a search whose callback panicked.
            scratch.reset();
            f(&mut scratch);
            scratch.reset();
        } else {
            f(&mut Scratch::default());
        }
    });
}

/// The best `k` items seen, under an order given per call (`Less` = better): a binary
/// heap with the worst kept item on top.
struct BoundedHeap<T> {
    k: usize,
    items: Vec<T>,
}

impl BoundedHeap<(u64, u32)> {
    fn new(k: usize) -> Self {
        Self { k, items: Vec::with_capacity(k.min(1024)) }
    }

    /// Whether it holds `k` items.
    fn is_full(&self) -> bool {
        self.items.len() == self.k
    }

    /// The score of the worst item kept (call only when it holds one).
    fn worst(&self) -> u64 {
        self.items[0].0
    }

    fn push(&mut self, item: (u64, u32), better: &mut impl FnMut(&(u64, u32), &(u64, u32)) -> Ordering) {
        // `worse(a, b)`: a ranks after b, so it belongs nearer the top.
        let mut worse = |a: &(u64, u32), b: &(u64, u32)| better(a, b) == Ordering::Greater;
        if self.items.len() < self.k {
            self.items.push(item);
            let mut i = self.items.len() - 1;
            while i > 0 {
                let parent = (i - 1) / 2;
                if worse(&self.items[i], &self.items[parent]) {
                    self.items.swap(i, parent);
                    i = parent;
                } else {
                    break;
                }
            }
            return;
        }
        if !worse(&self.items[0], &item) {
            return;
        }
        self.items[0] = item;
        let n = self.items.len();
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut top = i;
            if l < n && worse(&self.items[l], &self.items[top]) {
                top = l;
            }
            if r < n && worse(&self.items[r], &self.items[top]) {
                top = r;
            }
            if top == i {
                break;
            }
            self.items.swap(i, top);
            i = top;
        }
    }
}

#[cfg(test)]
mod tests;
