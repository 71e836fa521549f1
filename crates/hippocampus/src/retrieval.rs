//! Retrieval (`spec/maxim-reference.md` §3.6).
//!
//! - [`Hippocampus::recall`]: up to `limit` episodes matching a [`RecallFilter`] (goal, tool,
//!   success, object, person, mode, a time window, compressed or not), newest first, or by
//!   BM25 keyword relevance when the filter has a query. Records no access.
//! - [`Hippocampus::recall_touching`]: the same, recording an access to every episode
//!   returned and scoring use-based promotion pressure when there is a query, as the
//!   original's `recall` (1.3.3) did.
//! - [`Hippocampus::recall_similar`]: episodes sharing objects and people with a
//!   perception; [`Hippocampus::recall_similar_text`]: episodes whose text is closest to a
//!   text, through the configured [`Embedder`](maxim_core::embed::Embedder) (the original's
//!   EC similarity matching).
//! - [`Hippocampus::recall_associated`]: spreading activation over the associations.
//! - [`Hippocampus::search_by_content`]: the full episodes holding words of a query, most
//!   words first, then newest first.
//!
//! A filtered recall walks the smallest posting among its keys from the newest end and
//! checks the other keys per candidate, stopping at `limit`: its cost depends on the result,
//! not on the store. Keyword recall and content search read the episodes' text through a
//! [`LexicalIndex`](maxim_core::lexical::LexicalIndex) kept in step with every capture,
//! compression, removal and load: a query looks up its words' postings and never scans the
//! records or tokenises their text again. Every text recall reads the same fields
//! ([`TextField`](crate::TextField)).
//!
//! ```
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode, RecallFilter};
//! use maxim_core::{ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! for (goal, ok) in [("find mug", true), ("find mug", false), ("open door", true)] {
//!     let mut e = NewEpisode::default();
//!     e.context.active_goal = Some(goal.into());
//!     e.outcome.success = Some(ok);
//!     hippo.capture(e)?;
//!     clock.advance(std::time::Duration::from_secs(60));
//! }
//! let found = hippo.recall(&RecallFilter::new().goal("find mug").success(true), 10);
//! assert_eq!(found.len(), 1);
//! assert_eq!(hippo.recall(&RecallFilter::new().success(false), 10).len(), 1);
//! let newest = hippo.recall(&RecallFilter::new(), 2);
//! assert_eq!(newest[0].goal(), Some("open door"));
//! # Ok::<(), hippocampus::Error>(())
//! ```

use std::sync::atomic::Ordering;

use maxim_core::graph::{ActivationParams, EdgeKind};
use maxim_core::{RecordId, Timestamp};

use crate::episode::{Episode, Perception};
use crate::error::{Error, Result};
use crate::index::{IndexKey, KeyId, KeyKind, Slot, success_text};
use crate::store::Hippocampus;

/// How [`Hippocampus::search_by_content`] orders a match: by the query words it holds,
/// then by (time, id), both descending.
type ContentRank = std::cmp::Reverse<(usize, (i64, RecordId))>;

/// What [`Hippocampus::recall`] matches; the default matches every episode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallFilter {
    /// The active goal (`goal:` key).
    pub goal: Option<String>,
    /// The tool.
    pub tool: Option<String>,
    /// Success.
    pub success: Option<bool>,
    /// A detected object.
    pub object: Option<String>,
    /// A detected person.
    pub person: Option<String>,
    /// The active mode.
    pub mode: Option<String>,
    /// Only episodes that happened at or after this time.
    pub time_after: Option<Timestamp>,
    /// Only episodes that happened at or before this time.
    pub time_before: Option<Timestamp>,
    /// Leave compressed episodes out (they are included by default).
    pub exclude_compressed: bool,
    /// Rank by keyword relevance to this query instead of by recency.
    pub query: Option<String>,
}

impl RecallFilter {
    /// The filter that matches every episode.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only episodes with this active goal.
    pub fn goal(mut self, goal: impl Into<String>) -> Self {
        self.goal = Some(goal.into());
        self
    }

    /// Only episodes with this tool.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Only episodes that succeeded (`true`) or failed (`false`).
    pub fn success(mut self, success: bool) -> Self {
        self.success = Some(success);
        self
    }

    /// Only episodes where this object was seen.
    pub fn object(mut self, object: impl Into<String>) -> Self {
        self.object = Some(object.into());
        self
    }

    /// Only episodes where this person was seen.
    pub fn person(mut self, person: impl Into<String>) -> Self {
        self.person = Some(person.into());
        self
    }

    /// Only episodes in this mode.
    pub fn mode(mut self, mode: impl Into<String>) -> Self {
        self.mode = Some(mode.into());
        self
    }

    /// Only episodes between `after` and `before`, both inclusive (either may be open).
    pub fn between(mut self, after: Option<Timestamp>, before: Option<Timestamp>) -> Self {
        self.time_after = after;
        self.time_before = before;
        self
    }

    /// Leave compressed episodes out.
    pub fn full_only(mut self) -> Self {
        self.exclude_compressed = true;
        self
    }

    /// Rank by keyword relevance to `query` (and score use-based promotion in
    /// [`Hippocampus::recall_touching`]).
    pub fn query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    fn terms(&self) -> impl Iterator<Item = (KeyKind, &str)> + '_ {
        [
            (KeyKind::Goal, self.goal.as_deref()),
            (KeyKind::Tool, self.tool.as_deref()),
            (KeyKind::Success, self.success.map(|b| success_text(Some(b)))),
            (KeyKind::Mode, self.mode.as_deref()),
            (KeyKind::Object, self.object.as_deref()),
            (KeyKind::Person, self.person.as_deref()),
        ]
        .into_iter()
        .filter_map(|(k, t)| t.map(|t| (k, t)))
    }
}

/// Whether a record's own fields match `kind:text` (for kinds the index does not hold).
fn field_matches(rec: &Episode, kind: KeyKind, text: &str) -> bool {
    match (kind, rec) {
        (KeyKind::Goal, Episode::Full(m)) => m.context.active_goal.as_deref() == Some(text),
        (KeyKind::Goal, Episode::Compressed(c)) => c.goal.as_deref() == Some(text),
        (KeyKind::Tool, r) => r.tool_name() == text,
        (KeyKind::Success, r) => success_text(r.success()) == text,
        (KeyKind::Mode, Episode::Full(m)) => &*m.context.active_mode == text,
        (KeyKind::Object, Episode::Full(m)) => m.perception.detected_objects.iter().any(|o| &**o == text),
        (KeyKind::Person, Episode::Full(m)) => m.perception.detected_people.iter().any(|p| &**p == text),
        _ => false,
    }
}

impl Hippocampus {
    /// The slots of up to `limit` records matching `f`, in recall order.
    pub(crate) fn select(&self, f: &RecallFilter, limit: usize) -> Vec<Slot> {
        let mut out = Vec::new();
        self.select_each(f, limit, |s| out.push(s));
        out
    }

    /// Calls `emit` with the slots of up to `limit` records matching `f`, in recall order.
    fn select_each(&self, f: &RecallFilter, limit: usize, mut emit: impl FnMut(Slot)) {
        if limit == 0 {
            return;
        }
        let indexed = self.config.indexed_keys;
        // A filter names at most one key of each of the six kinds.
        let mut keys = [0 as KeyId; KeyKind::ALL.len()];
        let mut n_keys = 0;
        let mut unindexed = [(KeyKind::Goal, ""); KeyKind::ALL.len()];
        let mut n_unindexed = 0;
        for (kind, text) in f.terms() {
            if indexed.contains(kind) {
                match self.index.lookup(kind, text) {
                    Some(k) => {
                        keys[n_keys] = k;
                        n_keys += 1;
                    }
                    None => return,
                }
            } else {
                unindexed[n_unindexed] = (kind, text);
                n_unindexed += 1;
            }
        }
        let (keys, unindexed) = (&keys[..n_keys], &unindexed[..n_unindexed]);
        let source: &[Slot] = match keys.iter().min_by_key(|&&k| self.index.posting(k).len()) {
            Some(&k) => self.index.posting(k),
            None => self.index.order(),
        };
        let ts = &self.slots.ts;
        let lo = f.time_after.map_or(0, |t| source.partition_point(|&s| ts[s as usize] < t.as_micros()));
        let hi = f
            .time_before
            .map_or(source.len(), |t| source.partition_point(|&s| ts[s as usize] <= t.as_micros()));
        let window = if lo < hi { &source[lo..hi] } else { &[][..] };
        let accept = |s: Slot| -> bool {
            let Some(rec) = self.slots.get(s) else { return false };
            (!f.exclude_compressed || !rec.is_compressed())
                && keys.iter().all(|&k| self.index.has_key(s, k))
                && unindexed.iter().all(|&(kind, text)| field_matches(rec, kind, text))
        };
        match f.query.as_deref() {
            None => window.iter().rev().copied().filter(|&s| accept(s)).take(limit).for_each(emit),
            Some(query) => {
                let ts = &self.slots.ts;
                let (after, before) =
                    (f.time_after.map(Timestamp::as_micros), f.time_before.map(Timestamp::as_micros));
                let in_window = |s: Slot| {
                    let t = ts[s as usize];
                    after.is_none_or(|a| t >= a) && before.is_none_or(|b| t <= b)
                };
                let order = self.slots.order();
                let hits = self.lexical.search_with(
                    query,
                    limit,
                    |&s| in_window(s) && accept(s),
                    |&a, &b| order.key(b).cmp(&order.key(a)),
                );
                let mut found: Vec<Slot> = hits.into_iter().map(|h| h.key).collect();
                let n_found = found.len();
                found.iter().copied().for_each(&mut emit);
                if n_found < limit {
                    // Then the matching episodes the query does not reach, newest first.
                    found.sort_unstable();
                    window
                        .iter()
                        .rev()
                        .copied()
                        .filter(|&s| accept(s) && found.binary_search(&s).is_err())
                        .take(limit - n_found)
                        .for_each(emit);
                }
            }
        }
    }

    /// Up to `limit` episodes matching `filter`: newest first, or, when it has a query, by
    /// the BM25 relevance of the query's normalised words to the episode's text (every
    /// [`TextField`](crate::TextField), weighted; newest first among equals), followed by
    /// the matching episodes that hold none of the words, newest first.
    /// Records no access (see [`recall_touching`](Self::recall_touching)).
    pub fn recall(&self, filter: &RecallFilter, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_recall", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        let mut found = Vec::new();
        self.select_each(filter, limit, |s| found.extend(self.slots.get(s)));
        found
    }

    /// [`recall`](Self::recall), then records a use of every episode returned (an access and
    /// a reinforcement of its trace, as [`get`](Self::get) does) and, when
    /// the filter has a query, scores use-based promotion pressure on those that are not
    /// long-term (§3.8): the reference's `recall`.
    pub fn recall_touching(&mut self, filter: &RecallFilter, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_recall_touch", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        let slots = self.select(filter, limit);
        let now = self.clock.now();
        let params = self.config.trace;
        for &s in &slots {
            if let Some(rec) = self.slots.get_mut(s) {
                rec.use_at(now, &params);
            }
        }
        if let Some(query) = filter.query.as_deref() {
            self.score_use(&slots, query, now);
        }
        slots.into_iter().filter_map(|s| self.slots.get(s)).collect()
    }

    /// Up to `limit` episodes sharing objects or people with `perception`, each with the
    /// number it shares, by that number then newest first.
    pub fn recall_similar(
        &self,
        perception: &Perception,
        limit: usize,
        include_compressed: bool,
    ) -> Vec<(&Episode, u32)> {
        let _s = tracing::debug_span!("hippocampus_recall_similar", limit).entered();
        let mut query: Vec<KeyId> = Vec::new();
        let kinds =
            [(KeyKind::Object, &perception.detected_objects), (KeyKind::Person, &perception.detected_people)];
        for (kind, names) in kinds {
            for name in names {
                if let Some(k) = self.index.lookup(kind, name)
                    && !query.contains(&k)
                {
                    query.push(k);
                }
            }
        }
        let accept = |s: Slot| include_compressed || self.slots.get(s).is_some_and(|r| !r.is_compressed());
        self.index
            .similar(&query, limit, self.slots.order(), accept)
            .into_iter()
            .filter_map(|(s, n)| self.slots.get(s).map(|r| (r, n)))
            .collect()
    }

    /// Up to `limit` episodes whose text (goal, tool, objects, people, the user's input,
    /// transcript, reasoning, rationale) is closest to `text` by cosine similarity of their
    /// embeddings, best first. [`Error::NoEmbedder`] when the configuration has none.
    pub fn recall_similar_text(&self, text: &str, limit: usize) -> Result<Vec<(&Episode, f32)>> {
        let _s = tracing::debug_span!("hippocampus_recall_similar_text", limit).entered();
        let (Some(embedder), Some(vectors)) = (&self.embedder, &self.vectors) else {
            return Err(Error::NoEmbedder);
        };
        let hits = vectors.top_k(&embedder.embed(text), limit)?;
        Ok(hits.into_iter().filter_map(|(id, score)| self.peek(id).map(|r| (r, score))).collect())
    }

    /// [`recall_similar_text`](Self::recall_similar_text) among `candidates` only: the
    /// `limit` of them most similar to `text` through the embedder, best first (ties by id),
    /// as [`VectorIndex::top_k_among`](maxim_core::embed::VectorIndex::top_k_among) scores
    /// them. Its cost follows the candidates, not the store: the way to re-score a shortlist.
    /// Unknown ids and compressed episodes (which keep no vector) are skipped.
    ///
    /// Errors: [`Error::NoEmbedder`] when the layer has no embedder.
    pub fn recall_similar_text_among(
        &self,
        text: &str,
        candidates: &[RecordId],
        limit: usize,
    ) -> Result<Vec<(&Episode, f32)>> {
        let (Some(embedder), Some(vectors)) = (&self.embedder, &self.vectors) else {
            return Err(Error::NoEmbedder);
        };
        if limit == 0 || candidates.is_empty() {
            return Ok(Vec::new());
        }
        let hits = vectors.top_k_among(&embedder.embed(text), limit, candidates)?;
        Ok(hits.into_iter().filter_map(|(id, score)| self.peek(id).map(|r| (r, score))).collect())
    }

    /// Spreading activation from `seeds` with the configured parameters (decay 0.5,
    /// threshold 0.05, depth 3): up to `limit` episodes (seeds excluded, compressed included)
    /// with their activation, strongest first. Records no access.
    pub fn recall_associated(&self, seeds: &[RecordId], limit: usize) -> Vec<(&Episode, f64)> {
        let params = self.config.spreading_activation;
        self.recall_associated_with(seeds, limit, &params, true)
    }

    /// [`recall_associated`](Self::recall_associated) with explicit parameters.
    pub fn recall_associated_with(
        &self,
        seeds: &[RecordId],
        limit: usize,
        params: &ActivationParams,
        include_compressed: bool,
    ) -> Vec<(&Episode, f64)> {
        let _s =
            tracing::debug_span!("hippocampus_recall_associated", n_seeds = seeds.len(), limit).entered();
        if limit == 0 {
            return Vec::new();
        }
        let act = self.graph.spread(seeds, params);
        if include_compressed {
            act.ranked(Some(limit)).into_iter().filter_map(|(id, a)| self.peek(id).map(|r| (r, a))).collect()
        } else {
            act.ranked(None)
                .into_iter()
                .filter_map(|(id, a)| self.peek(id).filter(|r| !r.is_compressed()).map(|r| (r, a)))
                .take(limit)
                .collect()
        }
    }

    /// The targets of `id`'s outgoing ASSOCIATES and CAUSES edges with their weights, by
    /// target id (one hop).
    pub fn associated_ids(&self, id: RecordId) -> Vec<(RecordId, f64)> {
        self.graph.associated(id, &[EdgeKind::Associates, EdgeKind::Causes])
    }

    /// Number of `id`'s outgoing ASSOCIATES and CAUSES edges.
    pub fn edge_count(&self, id: RecordId) -> usize {
        self.graph.out_degree(id, Some(EdgeKind::Associates))
            + self.graph.out_degree(id, Some(EdgeKind::Causes))
    }

    /// Calls `f(term, weighted frequency, number of episodes holding it)` for each distinct
    /// search term of episode `id` (as the lexical index holds them); nothing when `id` is
    /// not held. No text is tokenised again.
    pub fn for_each_search_term<'a>(&'a self, id: RecordId, f: impl FnMut(&'a str, f32, usize)) {
        if let Some(slot) = self.slots.slot_of(id) {
            self.lexical.for_each_term_of(&slot, f);
        }
    }

    /// How many episodes hold the search term `term` (as the lexical index normalises it).
    pub fn lexical_doc_freq(&self, term: &str) -> usize {
        self.lexical.doc_freq(term)
    }

    /// The `k` episodes captured just before episode `id` and the `k` just after, by event
    /// time (then id), nearest first within each side: the turns around a hit. Empty when
    /// `id` is not held. Two binary searches in the time-ordered index, then `2k` steps.
    pub fn neighbours_in_time(&self, id: RecordId, k: usize) -> Vec<RecordId> {
        let Some(at) = self.slots.slot_of(id) else { return Vec::new() };
        if k == 0 {
            return Vec::new();
        }
        let order = self.slots.order();
        let key = order.key(at);
        let by_time = self.index.order();
        let lo = by_time.partition_point(|&s| order.key(s) < key);
        let hi = by_time.partition_point(|&s| order.key(s) <= key);
        by_time[..lo]
            .iter()
            .rev()
            .take(k)
            .chain(by_time[hi..].iter().take(k))
            .map(|&s| self.slots.ids[s as usize])
            .collect()
    }

    /// The `limit` episodes that best match `query` by BM25 over every text they hold, best
    /// first: `(id, score, how many of the query's terms the episode holds)`. Compressed
    /// episodes are included (they keep their summary text). Reads the lexical index: no
    /// scan of the records, no access recorded.
    pub fn search_text(&self, query: &str, limit: usize) -> Vec<(RecordId, f64, usize)> {
        let _s = tracing::debug_span!("hippocampus_search_text", limit).entered();
        self.lexical
            .search_counted(query, limit, Ord::cmp)
            .into_iter()
            .filter_map(|(s, score, held)| {
                let id = *self.slots.ids.get(s as usize)?;
                self.slots.get(s).is_some().then_some((id, score, held))
            })
            .collect()
    }

    /// Up to `limit` full episodes whose text (any [`TextField`](crate::TextField)) holds
    /// words of `query`: those holding the most of its distinct words first, newest first
    /// among equals. Words are compared normalised, as keyword recall compares them (case,
    /// stop words and word endings aside: "Mugs" finds "mug"), so a question finds the
    /// episodes that hold its content words. A query without a content word finds nothing.
    /// Reads the lexical index: no scan of the records.
    ///
    /// (The original matched the whole query as one substring of the observations, result
    /// and reasoning, so a question matched nothing; see `docs/decisions.md`, section
    /// "lexical".)
    pub fn search_by_content(&self, query: &str, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_search", limit).entered();
        if limit == 0 {
            return Vec::new();
        }
        let order = self.slots.order();
        // Sorted ascending on (words held, (time, id)) reversed: most words, then newest.
        let mut found: Vec<(ContentRank, Slot)> = Vec::new();
        self.lexical.for_each_match(query, |&s, _, n_terms| {
            if self.slots.get(s).is_some_and(|r| !r.is_compressed()) {
                found.push((std::cmp::Reverse((n_terms, order.key(s))), s));
            }
        });
        if found.len() > limit {
            found.select_nth_unstable(limit - 1);
            found.truncate(limit);
        }
        found.sort_unstable();
        found.into_iter().filter_map(|(_, s)| self.slots.get(s)).collect()
    }

    /// The ids of the episodes under `key`, newest first (empty for an unknown key).
    pub fn memories_by_index(&self, key: &IndexKey) -> Vec<RecordId> {
        match self.index.lookup(key.kind(), key.text()) {
            Some(k) => self.index.posting(k).iter().rev().map(|&s| self.slots.ids[s as usize]).collect(),
            None => Vec::new(),
        }
    }

    /// Every key of the context index, sorted by its text form.
    pub fn index_keys(&self) -> Vec<IndexKey> {
        let mut keys: Vec<IndexKey> =
            self.index.live_keys().filter_map(|(_, kind, text)| IndexKey::new(kind, text).ok()).collect();
        keys.sort_unstable_by_key(ToString::to_string);
        keys
    }

    /// The index keys of episode `id`, sorted by text form (empty for an unknown id).
    pub fn keys_of(&self, id: RecordId) -> Vec<IndexKey> {
        let Some(s) = self.slots.slot_of(id) else { return Vec::new() };
        let mut keys: Vec<IndexKey> = self
            .index
            .keys_of(s)
            .iter()
            .filter_map(|&k| IndexKey::new(self.index.kind_of(k), self.index.text_of(k)).ok())
            .collect();
        keys.sort_unstable_by_key(ToString::to_string);
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::NewEpisode;
    use maxim_core::ManualClock;

    #[test]
    fn the_lexical_index_follows_captures_compressions_removals_and_loads() {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut h = Hippocampus::builder().clock(clock.shared()).build().unwrap();
        let mut ids = Vec::new();
        for (goal, said) in [("water plants", "the garden is dry"), ("feed cat", "the kitten is hungry")] {
            let mut e = NewEpisode::default();
            e.context.active_goal = Some(goal.into());
            e.perception.transcript = Some(said.into());
            ids.push(h.capture(e).unwrap());
            clock.advance(std::time::Duration::from_secs(60));
        }
        assert_eq!(h.lexical.len(), 2);
        let top = |h: &Hippocampus, q: &str| h.recall(&RecallFilter::new().query(q), 1)[0].id();
        assert_eq!(top(&h, "garden"), ids[0]);
        assert_eq!(top(&h, "hungry kittens"), ids[1]);
        h.compress(ids[1]).unwrap();
        // A compressed episode keeps its goal and tool only.
        assert_eq!(top(&h, "hungry kittens"), ids[1], "no match: the newest comes first");
        assert_eq!(h.lexical.search("kitten", 5).len(), 0);
        assert_eq!(h.lexical.search("cat", 5).len(), 1);
        let bytes = h.to_snapshot_bytes().unwrap();
        h.remove(ids[0]).unwrap();
        assert!(h.lexical.search("garden", 5).is_empty());
        assert_eq!(h.lexical.len(), 1);
        let mut loaded = Hippocampus::builder().clock(clock.shared()).build().unwrap();
        loaded.load_from_bytes("mem.snap", &bytes).unwrap();
        assert_eq!(loaded.lexical.len(), 2);
        assert_eq!(top(&loaded, "garden"), ids[0]);
    }
}
