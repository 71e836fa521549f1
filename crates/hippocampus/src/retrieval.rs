//! Retrieval (`spec/maxim-reference.md` §3.6).
//!
//! - [`Hippocampus::recall`]: up to `limit` episodes matching a [`RecallFilter`] (goal, tool,
//!   success, object, person, mode, a time window, compressed or not), newest first, or by
//!   keyword relevance when the filter has a query. Records no access.
//! - [`Hippocampus::recall_touching`]: the same, recording an access to every episode
//!   returned and scoring use-based promotion pressure when there is a query, as the
//!   original's `recall` (1.3.3) did.
//! - [`Hippocampus::recall_similar`]: episodes sharing objects and people with a
//!   perception; [`Hippocampus::recall_similar_text`]: episodes whose text is closest to a
//!   text, through the configured [`Embedder`](maxim_core::embed::Embedder) (the original's
//!   EC similarity matching).
//! - [`Hippocampus::recall_associated`]: spreading activation over the associations.
//! - [`Hippocampus::search_by_content`]: substring search in observations, results and
//!   reasoning.
//!
//! A filtered recall walks the smallest posting among its keys from the newest end and
//! checks the other keys per candidate, stopping at `limit`: its cost depends on the result,
//! not on the store.
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
use maxim_core::text::{for_each_token, normalize_tokens};
use maxim_core::{RecordId, Timestamp};

use crate::episode::{Episode, Perception};
use crate::error::{Error, Result};
use crate::index::{IndexKey, KeyId, KeyKind, Slot, success_text};
use crate::store::Hippocampus;

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

/// Buffers a query recall reuses for every candidate it scores.
struct Relevance {
    /// The distinct normalised query tokens, sorted.
    terms: Vec<String>,
    /// The candidate's relevance text, its pieces joined by spaces.
    text: String,
    /// Which terms the candidate holds.
    found: Vec<bool>,
}

impl Relevance {
    fn new(query: &str) -> Self {
        let mut terms = normalize_tokens(query);
        terms.sort_unstable();
        terms.dedup();
        let found = vec![false; terms.len()];
        Self { terms, text: String::new(), found }
    }

    /// The fraction of the terms found among `rec`'s tokens.
    ///
    /// The pieces of text are joined by a space, a token separator, so tokenising the whole
    /// once gives the tokens of each piece (and allocates once, not once per piece).
    fn of(&mut self, rec: &Episode) -> f64 {
        if self.terms.is_empty() {
            return 0.0;
        }
        let text = &mut self.text;
        text.clear();
        rec.for_each_relevance_text(&mut |piece| {
            text.push(' ');
            text.push_str(piece);
        });
        self.found.fill(false);
        let (terms, found) = (&self.terms, &mut self.found);
        for_each_token(text, |t| {
            if let Ok(i) = terms.binary_search_by(|q| q.as_str().cmp(t)) {
                found[i] = true;
            }
        });
        found.iter().filter(|&&f| f).count() as f64 / terms.len() as f64
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
                let mut relevance = Relevance::new(query);
                let order = self.slots.order();
                let mut scored: Vec<(f64, Slot)> = window
                    .iter()
                    .copied()
                    .filter(|&s| accept(s))
                    .filter_map(|s| self.slots.get(s).map(|r| (relevance.of(r), s)))
                    .collect();
                scored.sort_unstable_by(|a, b| {
                    b.0.total_cmp(&a.0).then_with(|| order.key(b.1).cmp(&order.key(a.1)))
                });
                scored.into_iter().take(limit).for_each(|(_, s)| emit(s));
            }
        }
    }

    /// Up to `limit` episodes matching `filter`: newest first, or by keyword relevance (the
    /// fraction of the query's normalised words found in the goal, tool, objects, people,
    /// observation text and rationale; newest first among equals) when it has a query.
    /// Records no access (see [`recall_touching`](Self::recall_touching)).
    pub fn recall(&self, filter: &RecallFilter, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_recall", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        let mut found = Vec::new();
        self.select_each(filter, limit, |s| found.extend(self.slots.get(s)));
        found
    }

    /// [`recall`](Self::recall), then records an access to every episode returned and, when
    /// the filter has a query, scores use-based promotion pressure on those that are not
    /// long-term (§3.8): the reference's `recall`.
    pub fn recall_touching(&mut self, filter: &RecallFilter, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_recall_touch", limit).entered();
        self.queries.fetch_add(1, Ordering::Relaxed);
        let slots = self.select(filter, limit);
        let now = self.clock.now();
        for &s in &slots {
            if let Some(rec) = self.slots.get_mut(s) {
                rec.meta_mut().touch(now);
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

    /// Up to `limit` full episodes whose observations (keys and text), result text or
    /// reasoning contain `query`, ignoring case, newest first. A linear scan.
    pub fn search_by_content(&self, query: &str, limit: usize) -> Vec<&Episode> {
        let _s = tracing::debug_span!("hippocampus_search", limit).entered();
        let needle = query.to_lowercase();
        self.index
            .order()
            .iter()
            .rev()
            .filter_map(|&s| self.slots.get(s))
            .filter(|r| r.contains_text(&needle))
            .take(limit)
            .collect()
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
    use crate::episode::EpisodicMemory;
    use maxim_core::value::Value;

    /// Relevance as first written: each piece of text tokenised on its own.
    fn per_piece(rec: &Episode, query: &str) -> f64 {
        let mut terms = normalize_tokens(query);
        terms.sort_unstable();
        terms.dedup();
        if terms.is_empty() {
            return 0.0;
        }
        let mut found = vec![false; terms.len()];
        rec.for_each_relevance_text(&mut |text| {
            for_each_token(text, |t| {
                if let Some(i) = terms.iter().position(|q| q == t) {
                    found[i] = true;
                }
            });
        });
        found.iter().filter(|&&f| f).count() as f64 / terms.len() as f64
    }

    #[test]
    fn joined_text_scores_as_its_pieces_do() {
        let mut m = EpisodicMemory::new(RecordId::from_u128(1), Timestamp::from_secs(1));
        m.context.active_goal = Some("carry the robot's mugs".into());
        m.action.tool_name = "grasp_handle".into();
        m.perception.detected_objects = vec!["Kettle".into(), "".into(), "door'".into()];
        m.perception.observations.insert("room", Value::from("kitchen's  corner"));
        m.perception.observations.insert("items", Value::List(vec!["batteries".into(), Value::from(3i64)]));
        m.perception.decision_rationale = "'it was running'".into();
        let rec = Episode::from(m);
        let mut relevance = Relevance::new("");
        assert_eq!(relevance.of(&rec), 0.0);
        for query in [
            "mug",
            "robot mugs kettles",
            "grasp handle door",
            "kitchen corner battery run",
            "the a an",
            "garage mug Robots' carried",
        ] {
            let mut relevance = Relevance::new(query);
            assert_eq!(relevance.of(&rec), per_piece(&rec, query), "{query}");
            assert_eq!(relevance.of(&rec), per_piece(&rec, query), "{query}: buffers reused");
        }
        assert_eq!(Relevance::new("kitchen garage").of(&rec), 0.5);
    }
}
