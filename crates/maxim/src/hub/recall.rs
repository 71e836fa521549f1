//! `recall(query)`: the one way to ask the memory a question.
//!
//! Evidence comes from up to five sources, each switchable in [`RecallOptions`]:
//! - **lexical**: BM25 over every text an episode holds (the hippocampus's incremental index)
//!   and over the knowledge records' names and definitions (the hub's own index of concepts,
//!   mathematical records and skills, kept in step with every write the hub makes);
//! - **semantic**: the episodic layer's embedder (the IDF-weighted hash embedder by default,
//!   or the user's model), when it has one, re-scoring the lexical shortlist (the best 50
//!   episodes by BM25), so a query's cost does not grow with the store;
//! - **entities**: structure that reaches across sessions — the concepts the best lexical hits
//!   are instances of, and the concepts the query names, lead to the other episodes that are
//!   instances of them (episode → INSTANCE_OF → concept ← INSTANCE_OF ← episode), each concept
//!   weighted by its rarity (a concept in more than a tenth of the episodes, such as the
//!   speaker of a conversation, says nothing and is not followed);
//! - **neighbours**: the episodes captured just before and after the best hits (the turns
//!   around a hit);
//! - **expansion**: the rarest words of the best hits, searched on their own
//!   (pseudo-relevance feedback: the records that share them with the best hits).
//!
//! The sources are fused by their calibrated scores: each list's score over its best one's
//! (so every source speaks in `[0, 1]`), summed with weights (lexical 1, plus the share of
//! the query's distinct words the hit holds with weight 1, semantic 0.1 by default
//! ([`RecallOptions::semantic_weight`]: the default embedder hashes words BM25 already
//! weighs, and more weight only reorders the lexical evidence worse), entities 0.3,
//! expansion 0.3, a neighbour 0.2 times its hit's lexical strength). Reciprocal-rank fusion
//! was measured first and dropped: it flattens the gaps between scores, so the memory
//! factor reordered everything (see `docs/retrieval.md`). Each record's fused score is then
//! multiplied by its memory factor `(0.5 + 0.5 trust) × (0.95 + 0.05 recency) × (1 + 0.1
//! trace)` (recency halving every 30 days since last access; `trace` is
//! `maxim_core::rank::trace_score`: the trace's strength now, times a recency halving every
//! hour since its last reinforcement, times `1 + emotional intensity`): trust, recency and
//! use reorder near-ties but never bury old, well-matched evidence. Every hit says why it
//! was found, spelled out for the returned hits only.

use rustc_hash::FxHashMap;

use maxim_core::lexical::LexicalIndex;
use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, MemoryLayer, MemoryRecord, RecordId, Timestamp};

use super::{MemoryHub, Result};

/// How [`MemoryHub::recall`] searches.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecallOptions {
    /// The layers searched (default: all four).
    pub layers: Vec<LayerKind>,
    /// Only records whose event time is at or after this.
    pub since: Option<Timestamp>,
    /// Only records whose event time is before this.
    pub until: Option<Timestamp>,
    /// Least trust of a hit (default 0).
    pub min_trust: f64,
    /// Most hits (default 10).
    pub limit: usize,
    /// BM25 over the records' text (default on).
    pub lexical: bool,
    /// The embedder's similarity (default on, when the hippocampus has an embedder).
    pub semantic: bool,
    /// Episodes sharing rare concepts with the best hits or named by the query (default on).
    pub entities: bool,
    /// Episodes captured next to the best hits (default on).
    pub neighbours: bool,
    /// The best hits' rarest words, searched on their own (default on).
    pub expansion: bool,
    /// How many of the best lexical candidates the embedder re-scores (default 50): the
    /// semantic evidence is found among them, so its cost follows this, not the store.
    pub semantic_candidates: usize,
    /// What the best semantic match weighs against the best lexical one's 1, in `[0, 1]`
    /// (default 0.1, right for the default hash embedder, whose features are the words
    /// BM25 already weighs; an embedder that knows meaning, such as a sentence model,
    /// deserves more; 0 skips the embedder, as `semantic: false` does).
    pub semantic_weight: f64,
}

impl Default for RecallOptions {
    fn default() -> Self {
        Self {
            layers: LayerKind::ALL.to_vec(),
            since: None,
            until: None,
            min_trust: 0.0,
            limit: 10,
            lexical: true,
            semantic: true,
            entities: true,
            neighbours: true,
            expansion: true,
            semantic_candidates: SHORTLIST,
            semantic_weight: W_SEMANTIC,
        }
    }
}

impl RecallOptions {
    /// Only lexical evidence (the baseline the other switches are measured against).
    pub fn lexical_only() -> Self {
        Self { semantic: false, entities: false, neighbours: false, expansion: false, ..Self::default() }
    }

    /// At most `limit` hits.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Only these layers.
    #[must_use]
    pub fn layers(mut self, layers: &[LayerKind]) -> Self {
        self.layers = layers.to_vec();
        self
    }
}

/// Why a record was found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub enum Why {
    /// It holds query words: its rank in the lexical list, its BM25 score, how many words.
    Lexical {
        /// Rank, from 1.
        rank: usize,
        /// BM25 score.
        score: f64,
        /// Query terms held.
        terms: usize,
    },
    /// The embedder finds it similar.
    Semantic {
        /// Rank, from 1.
        rank: usize,
        /// Cosine similarity.
        similarity: f64,
    },
    /// It is an instance of a concept a best hit or the query names.
    Entity {
        /// The concept's name.
        concept: String,
    },
    /// It was captured next to a best hit.
    Neighbour {
        /// The hit.
        of: RecordId,
    },
    /// It holds words the best hits share (pseudo-relevance feedback).
    Expansion {
        /// The words searched.
        terms: Vec<String>,
    },
}

/// One answer of [`MemoryHub::recall`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecallHit {
    /// The record.
    pub record: LayerRecord,
    /// Its fused score times its memory factor (comparable within one answer only).
    pub score: f64,
    /// What a person would recognise it by.
    pub name: String,
    /// Why it was found, strongest evidence first.
    pub why: Vec<Why>,
}

/// Candidates taken from each list.
const DEPTH: usize = 50;
/// Best hits the structural sources start from.
const SEEDS: usize = 5;
/// Lexical candidates the embedder re-scores (the semantic evidence is found among them,
/// so its cost does not grow with the store).
const SHORTLIST: usize = 50;
/// A concept instanced by more episodes than this leads nowhere (a speaker, a room).
const MAX_ENTITY_DEGREE: usize = 400;
/// Nor does one instanced by more than this share of all episodes (when it has more than
/// [`MIN_COMMON_DEGREE`] of them): its rarity, `ln(1 / share)`, is then below 2.3, and its
/// episodes would crowd out the evidence (the speaker of half a conversation).
const MAX_ENTITY_SHARE: f64 = 0.1;
/// Below this many episodes a concept is never too common to follow.
const MIN_COMMON_DEGREE: usize = 20;
/// Words added by expansion.
const EXPANSION_TERMS: usize = 4;

/// Weight of the share of the query's distinct words a lexical hit holds, beside its
/// BM25 score over the best one's (both in `[0, 1]`: equal weights).
const W_COVERAGE: f64 = 1.0;
/// Default weight of the embedder's similarity over the best one's (see
/// `docs/decisions.md`, "Function words in the lexical index, and a lighter semantic weight").
const W_SEMANTIC: f64 = 0.1;
/// Weight of the entity evidence over the best one's.
const W_ENTITY: f64 = 0.3;
/// Weight of a time neighbour, times its hit's lexical strength.
const W_NEIGHBOUR: f64 = 0.2;
/// Weight of the expansion words' BM25 score over its best one's.
const W_EXPANSION: f64 = 0.3;
/// Share of the memory factor that recency moves (`1 − r + r · recency`).
const RECENCY_SHARE: f64 = 0.05;
/// How much the trace score lifts (`1 + t · trace`).
const TRACE_SHARE: f64 = 0.1;
/// The largest trace score (strength ≤ 1 times recency ≤ 1 times `1 + intensity` ≤ 2;
/// clamped to it, so the bound below holds whatever a layer reports).
const MAX_TRACE: f64 = 2.0;
/// The largest memory factor: trust 1, recency 1, the largest trace (rounded up).
const MAX_FACTOR: f64 = 1.0 * 1.0 * (1.0 + TRACE_SHARE * MAX_TRACE) + 1e-9;

/// The sources of evidence, each with its slot in [`Fused`].
#[derive(Clone, Copy)]
enum Source {
    Lexical = 0,
    Semantic = 1,
    Entity = 2,
    Neighbour = 3,
    Expansion = 4,
}

/// One piece of evidence, before it is spelled out as a [`Why`] (for returned hits only).
#[derive(Clone, Copy)]
enum Evidence {
    Lexical { rank: usize, score: f64, terms: usize },
    Semantic { rank: usize, similarity: f64 },
    Entity { concept: RecordId },
    Neighbour { of: RecordId },
    Expansion,
}

/// Fused evidence for one record: its score and the strongest evidence of each source.
#[derive(Default)]
struct Fused {
    score: f64,
    evidence: [Option<(f64, Evidence)>; 5],
}

impl Fused {
    fn add(&mut self, source: Source, contribution: f64, evidence: Evidence) {
        self.score += contribution;
        let slot = &mut self.evidence[source as usize];
        if slot.is_none_or(|(c, _)| contribution > c) {
            *slot = Some((contribution, evidence));
        }
    }
}

impl MemoryHub {
    /// Asks the memory `query` (see the [module docs](self)): ranked hits over the layers the
    /// options name, each with its score and why it was found. A query with no content word
    /// finds nothing. Reads never write: no access is recorded.
    pub fn recall(&self, query: &str, options: &RecallOptions) -> Result<Vec<RecallHit>> {
        let _s = tracing::debug_span!("hub_recall", limit = options.limit).entered();
        maxim_core::check_unit("min_trust", options.min_trust)?;
        maxim_core::check_unit("semantic_weight", options.semantic_weight)?;
        if options.limit == 0 {
            return Ok(Vec::new());
        }
        let episodes = options.layers.contains(&LayerKind::Hippocampus);
        let mut fused: FxHashMap<LayerRecord, Fused> = FxHashMap::default();
        fused.reserve(4 * DEPTH);
        let mut best_episodes: Vec<(RecordId, f64)> = Vec::new();
        let n_terms = {
            let mut distinct: Vec<String> = Vec::new();
            maxim_core::text::for_each_search_token(query, |t| {
                if !distinct.iter().any(|d| d == t) {
                    distinct.push(t.to_owned());
                }
            });
            distinct.len().max(1) as f64
        };

        let semantic = options.semantic
            && options.semantic_weight > 0.0
            && episodes
            && self.hippocampus.embedder().is_some();
        // The lexical shortlist: its first DEPTH are the lexical evidence, all of it the
        // candidates the embedder re-scores.
        let shortlist = if episodes && (options.lexical || semantic) {
            self.hippocampus
                .search_text(query, if semantic { options.semantic_candidates.max(DEPTH) } else { DEPTH })
        } else {
            Vec::new()
        };
        if options.lexical {
            let top = shortlist.first().map_or(1.0, |s| s.1);
            for (rank, &(id, score, terms)) in shortlist.iter().take(DEPTH).enumerate() {
                let strength = score / top;
                if best_episodes.len() < SEEDS {
                    best_episodes.push((id, strength));
                }
                let coverage = terms as f64 / n_terms;
                let evidence = Evidence::Lexical { rank: rank + 1, score, terms };
                fused.entry(episode(id)).or_default().add(
                    Source::Lexical,
                    strength + W_COVERAGE * coverage,
                    evidence,
                );
            }
            // The knowledge records, unless only episodes are asked for.
            let knowledge = options.layers.iter().any(|&l| l != LayerKind::Hippocampus);
            let hits = if knowledge {
                self.knowledge_index.search_filtered(query, DEPTH, |r| options.layers.contains(&r.layer))
            } else {
                Vec::new()
            };
            let top = hits.first().map_or(1.0, |h| h.score);
            for (rank, h) in hits.into_iter().enumerate() {
                let terms = h.matched_terms.len();
                let evidence = Evidence::Lexical { rank: rank + 1, score: h.score, terms };
                let coverage = terms as f64 / n_terms;
                fused.entry(h.key).or_default().add(
                    Source::Lexical,
                    h.score / top + W_COVERAGE * coverage,
                    evidence,
                );
            }
        }

        if semantic {
            let candidates: Vec<RecordId> =
                shortlist.iter().take(options.semantic_candidates).map(|s| s.0).collect();
            let similar = self.hippocampus.recall_similar_text_among(query, &candidates, DEPTH)?;
            let top = similar.first().map_or(1.0, |s| f64::from(s.1));
            for (rank, (e, similarity)) in similar.into_iter().enumerate() {
                if similarity <= 0.0 {
                    break;
                }
                let similarity = f64::from(similarity);
                let evidence = Evidence::Semantic { rank: rank + 1, similarity };
                fused.entry(episode(e.id())).or_default().add(
                    Source::Semantic,
                    options.semantic_weight * similarity / top,
                    evidence,
                );
            }
        }

        if options.entities && episodes {
            let seeds: Vec<RecordId> = best_episodes.iter().map(|b| b.0).collect();
            self.entity_evidence(query, &seeds, &mut fused);
        }

        if options.neighbours && episodes {
            for &(hit, strength) in best_episodes.iter().take(3) {
                for id in self.hippocampus.neighbours_in_time(hit, 1) {
                    fused.entry(episode(id)).or_default().add(
                        Source::Neighbour,
                        W_NEIGHBOUR * strength,
                        Evidence::Neighbour { of: hit },
                    );
                }
            }
        }

        let mut added: Vec<String> = Vec::new();
        if options.expansion && episodes && !best_episodes.is_empty() {
            let seeds: Vec<RecordId> = best_episodes.iter().map(|b| b.0).collect();
            added = self.expansion_terms(query, &seeds);
            if !added.is_empty() {
                // The added words alone: the query's own match is the lexical evidence
                // already, so this source says only that a record shares the best hits'
                // rare words (and does not walk the query's postings a second time).
                let expanded = added.join(" ");
                let hits = self.hippocampus.search_text(&expanded, DEPTH);
                let top = hits.first().map_or(1.0, |h| h.1);
                for (id, score, _) in hits {
                    fused.entry(episode(id)).or_default().add(
                        Source::Expansion,
                        W_EXPANSION * score / top,
                        Evidence::Expansion,
                    );
                }
            }
        }

        let ranked = self.rank_by_memory(fused, options);
        // Names and reasons only for what is returned.
        Ok(ranked
            .into_iter()
            .map(|(record, score, f)| {
                let mut evidence: Vec<(f64, Evidence)> = f.evidence.into_iter().flatten().collect();
                evidence.sort_by(|a, b| b.0.total_cmp(&a.0));
                let why = evidence.into_iter().map(|(_, e)| self.spell_out(e, &added)).collect();
                RecallHit { record, score, name: self.record_name(record), why }
            })
            .collect())
    }

    /// The best `options.limit` of `fused` that pass the options' layers, trust and time
    /// window, by fused score times memory factor (ties by record), best first.
    ///
    /// The factor lies in `(0, MAX_FACTOR]`, so the candidates are read by fused score, best
    /// first, and the reading stops once `limit` are kept and the next one's fused score
    /// times the largest factor falls clearly below the `limit`-th best: exactly the ranking
    /// of scoring them all, with the metadata, recency and trace read for a few only.
    fn rank_by_memory(
        &self,
        fused: FxHashMap<LayerRecord, Fused>,
        options: &RecallOptions,
    ) -> Vec<(LayerRecord, f64, Fused)> {
        let now = self.clock.now();
        let mut candidates: Vec<(LayerRecord, Fused)> =
            fused.into_iter().filter(|(record, _)| options.layers.contains(&record.layer)).collect();
        candidates.sort_unstable_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
        let limit = options.limit;
        // The `limit` best final scores so far, as a min-heap (non-negative: bits order).
        let mut kept: std::collections::BinaryHeap<std::cmp::Reverse<u64>> =
            std::collections::BinaryHeap::with_capacity(limit + 1);
        let mut ranked: Vec<(LayerRecord, f64, Fused)> = Vec::new();
        for (record, f) in candidates {
            if kept.len() == limit {
                let kth = f64::from_bits(kept.peek().expect("limit > 0").0);
                if f.score * MAX_FACTOR < kth * (1.0 - 1e-12) {
                    break;
                }
            }
            let Some(meta) = self.record_meta(record) else { continue };
            if meta.trust.get() < options.min_trust
                || options.since.is_some_and(|t| meta.timestamp < t)
                || options.until.is_some_and(|t| meta.timestamp >= t)
            {
                continue;
            }
            let score = f.score * self.memory_factor(meta, record.layer, now);
            if kept.len() < limit {
                kept.push(std::cmp::Reverse(score.max(0.0).to_bits()));
            } else if score > f64::from_bits(kept.peek().expect("limit > 0").0) {
                kept.pop();
                kept.push(std::cmp::Reverse(score.max(0.0).to_bits()));
            }
            ranked.push((record, score, f));
        }
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked
    }

    /// The memory factor of a record of `layer` with metadata `meta` at `now`, in
    /// `(0, MAX_FACTOR]` (see the module docs).
    fn memory_factor(&self, meta: &maxim_core::RecordMeta, layer: LayerKind, now: Timestamp) -> f64 {
        let recency = 0.5f64.powf(now.days_since(meta.accessed_at).max(0.0) / 30.0);
        let trace =
            maxim_core::rank::trace_score(meta, now, false, &self.trace_params(layer)).clamp(0.0, MAX_TRACE);
        (0.5 + 0.5 * meta.trust.get())
            * (1.0 - RECENCY_SHARE + RECENCY_SHARE * recency)
            * (1.0 + TRACE_SHARE * trace)
    }

    /// `evidence` as the [`Why`] a caller reads.
    fn spell_out(&self, evidence: Evidence, added: &[String]) -> Why {
        match evidence {
            Evidence::Lexical { rank, score, terms } => Why::Lexical { rank, score, terms },
            Evidence::Semantic { rank, similarity } => Why::Semantic { rank, similarity },
            Evidence::Entity { concept } => {
                Why::Entity { concept: self.record_name(LayerRecord::new(LayerKind::Atl, concept)) }
            }
            Evidence::Neighbour { of } => Why::Neighbour { of },
            Evidence::Expansion => Why::Expansion { terms: added.to_vec() },
        }
    }

    /// The trace settings of `layer` (how its records' traces decay and reinforce).
    pub(super) fn trace_params(&self, layer: LayerKind) -> maxim_core::trace::TraceParams {
        match layer {
            LayerKind::Hippocampus => self.hippocampus.config().trace,
            LayerKind::Atl => self.atl.config().trace,
            LayerKind::AngularGyrus => self.angular_gyrus.config().trace,
            LayerKind::Cerebellum => self.skills.config().rank.trace,
        }
    }

    /// The metadata of `record`, when its layer holds it.
    fn record_meta(&self, record: LayerRecord) -> Option<&maxim_core::RecordMeta> {
        match record.layer {
            LayerKind::Hippocampus => self.hippocampus.peek(record.id).map(MemoryRecord::meta),
            LayerKind::Atl => self.atl.record(record.id).map(MemoryRecord::meta),
            LayerKind::AngularGyrus => self.angular_gyrus.record(record.id).map(MemoryRecord::meta),
            LayerKind::Cerebellum => self.skills.skill(record.id).map(|s| &s.meta),
        }
    }

    /// Episodes that are instances of the concepts the best hits are instances of, or that
    /// the query names, weighted by the concepts' rarity.
    fn entity_evidence(&self, query: &str, best: &[RecordId], fused: &mut FxHashMap<LayerRecord, Fused>) {
        let mut concepts: FxHashMap<RecordId, f64> = FxHashMap::default();
        for (i, &hit) in best.iter().enumerate() {
            let weight = 1.0 / (1.0 + i as f64);
            for edge in self.graph.linked(episode(hit), Some(LayerKind::Atl), Some(CrossEdgeKind::InstanceOf))
            {
                *concepts.entry(edge.to.id).or_default() += weight;
            }
        }
        for h in self.knowledge_index.search_filtered(query, SEEDS, |r| r.layer == LayerKind::Atl) {
            *concepts.entry(h.key.id).or_default() += 1.0;
        }
        let n = self.hippocampus.len().max(1) as f64;
        let mut scored: FxHashMap<RecordId, (f64, RecordId)> = FxHashMap::default();
        for (&concept, &weight) in &concepts {
            let record = LayerRecord::new(LayerKind::Atl, concept);
            let degree = self.graph.in_degree(record);
            if degree == 0
                || degree > MAX_ENTITY_DEGREE
                || (degree > MIN_COMMON_DEGREE && degree as f64 > n * MAX_ENTITY_SHARE)
            {
                continue;
            }
            let rarity = (n / degree as f64).ln().max(0.0);
            for edge in
                self.graph.incoming(record, Some(LayerKind::Hippocampus), Some(CrossEdgeKind::InstanceOf))
            {
                let slot = scored.entry(edge.from.id).or_insert((0.0, concept));
                if weight * rarity > slot.0 {
                    slot.1 = concept;
                }
                slot.0 += weight * rarity;
            }
        }
        let mut ranked: Vec<(RecordId, f64, RecordId)> =
            scored.into_iter().map(|(id, (s, c))| (id, s, c)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // A concept every episode holds has rarity 0: it says nothing (and 0 / 0 is no score).
        ranked.retain(|r| r.1 > 0.0);
        let top = ranked.first().map_or(1.0, |r| r.1);
        for (id, score, concept) in ranked.into_iter().take(DEPTH) {
            fused.entry(episode(id)).or_default().add(
                Source::Entity,
                W_ENTITY * score / top,
                Evidence::Entity { concept },
            );
        }
    }

    /// The rarest words of the best hits that the query does not hold: each word of the
    /// first three hits scored by its frequency there times its IDF, read from the lexical
    /// index's own term lists (words in one episode only are skipped: they lead nowhere).
    fn expansion_terms(&self, query: &str, best: &[RecordId]) -> Vec<String> {
        let mut asked: Vec<String> = Vec::new();
        maxim_core::text::for_each_search_token(query, |t| asked.push(t.to_owned()));
        let n = self.hippocampus.len().max(1) as f64;
        let mut words: FxHashMap<&str, f64> = FxHashMap::default();
        for &id in best.iter().take(3) {
            self.hippocampus.for_each_search_term(id, |term, tf, df| {
                if df > 1 && !asked.iter().any(|a| a == term) {
                    *words.entry(term).or_default() += f64::from(tf) * (n / df as f64).ln();
                }
            });
        }
        let mut scored: Vec<(f64, &str)> = words.into_iter().map(|(w, s)| (s, w)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.into_iter().take(EXPANSION_TERMS).map(|s| s.1.to_owned()).collect()
    }

    /// Puts the knowledge record `record` into the hub's lexical index (or takes it out when
    /// no layer holds it).
    pub(super) fn index_knowledge(&mut self, record: LayerRecord) {
        let text = match record.layer {
            LayerKind::Hippocampus => return,
            LayerKind::Atl => self.atl.record(record.id).map(|r| {
                let definition = r.as_concept().map(|c| c.definition.clone()).unwrap_or_default();
                (r.name().to_owned(), format!("{} {definition} {}", r.category(), r.aliases().join(" ")))
            }),
            LayerKind::AngularGyrus => self
                .angular_gyrus
                .record(record.id)
                .filter(|r| !r.is_built_in())
                .map(|r| (r.name().to_owned(), r.as_full().map(|f| f.verbal.clone()).unwrap_or_default())),
            LayerKind::Cerebellum => self.skills.skill(record.id).map(|s| {
                let steps: Vec<&str> = s.steps.iter().map(|st| st.tool.as_str()).collect();
                (s.name.clone(), format!("{} {}", s.preconditions.join(" "), steps.join(" ")))
            }),
        };
        match text {
            Some((name, body)) => {
                let _ = self.knowledge_index.insert(record, &[(&name, 2.0), (&body, 1.0)]);
            }
            None => {
                self.knowledge_index.remove(&record);
            }
        }
    }

    /// Rebuilds the hub's lexical index of knowledge records from the layers.
    pub(super) fn reindex_knowledge(&mut self) {
        self.knowledge_index = LexicalIndex::new();
        let mut records: Vec<LayerRecord> =
            MemoryLayer::iter(&self.atl).map(|r| LayerRecord::new(LayerKind::Atl, r.id())).collect();
        records.extend(
            MemoryLayer::iter(&self.angular_gyrus).map(|r| LayerRecord::new(LayerKind::AngularGyrus, r.id())),
        );
        records.extend(
            MemoryLayer::iter(&self.skills).map(|s| LayerRecord::new(LayerKind::Cerebellum, s.meta.id)),
        );
        for r in records {
            self.index_knowledge(r);
        }
    }
}

fn episode(id: RecordId) -> LayerRecord {
    LayerRecord::new(LayerKind::Hippocampus, id)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hippocampus::NewEpisode;
    use maxim_core::{ManualClock, Timestamp};
    use proptest::prelude::*;

    use super::*;

    /// What [`MemoryHub::rank_by_memory`] must return: every candidate scored, then sorted.
    fn rank_all(
        hub: &MemoryHub,
        fused: &FxHashMap<LayerRecord, f64>,
        options: &RecallOptions,
    ) -> Vec<(LayerRecord, f64)> {
        let now = hub.clock.now();
        let mut all: Vec<(LayerRecord, f64)> = fused
            .iter()
            .filter(|(r, _)| options.layers.contains(&r.layer))
            .filter_map(|(&r, &score)| {
                let meta = hub.record_meta(r)?;
                (meta.trust.get() >= options.min_trust)
                    .then(|| (r, score * hub.memory_factor(meta, r.layer, now)))
            })
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(options.limit);
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// The early stop of the memory ranking (read by fused score, stop when the best
        /// factor cannot lift the next one in) ranks exactly as scoring every candidate,
        /// ties, trust filters and equal fused scores included.
        #[test]
        fn pruned_memory_ranking_equals_scoring_every_candidate(
            trusts in proptest::collection::vec(0.0f64..=1.0, 24),
            gaps in proptest::collection::vec(0u64..90, 24),
            scores in proptest::collection::vec(prop_oneof![Just(1.0f64), 0.01f64..5.0], 24),
            limit in 1usize..12,
            min_trust in prop_oneof![Just(0.0f64), 0.0f64..0.8],
        ) {
            let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
            let mut hub = MemoryHub::builder().clock(clock.shared()).build().unwrap();
            let mut fused: FxHashMap<LayerRecord, f64> = FxHashMap::default();
            for (i, ((&trust, &gap), &score)) in trusts.iter().zip(&gaps).zip(&scores).enumerate() {
                let mut e = NewEpisode::default();
                e.perception.transcript = Some(format!("turn {i}"));
                e.trust = Some(trust);
                let id = hub.capture(e).unwrap();
                fused.insert(episode(id), score);
                clock.advance(Duration::from_secs(gap * 86_400));
            }
            let options = RecallOptions { min_trust, ..RecallOptions::default() }.limit(limit);
            let pruned: FxHashMap<LayerRecord, Fused> = fused
                .iter()
                .map(|(&r, &score)| (r, Fused { score, evidence: [None; 5] }))
                .collect();
            let got: Vec<(LayerRecord, f64)> =
                hub.rank_by_memory(pruned, &options).into_iter().map(|(r, s, _)| (r, s)).collect();
            prop_assert_eq!(got, rank_all(&hub, &fused, &options));
        }
    }
}
