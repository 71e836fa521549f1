//! `recall(query)`: the one way to ask the memory a question.
//!
//! Evidence comes from up to five sources, each switchable in [`RecallOptions`]:
//! - **lexical**: BM25 over every text an episode holds (the hippocampus's incremental index)
//!   and over the knowledge records' names and definitions (the hub's own index of concepts,
//!   mathematical records and skills, kept in step with every write the hub makes);
//! - **semantic**: the episodic layer's embedder (the IDF-weighted hash embedder by default,
//!   or the user's model), when it has one, re-scoring the lexical shortlist (the best 200
//!   episodes by BM25), so a query's cost does not grow with the store;
//! - **entities**: structure that reaches across sessions — the concepts the best lexical hits
//!   are instances of, and the concepts the query names, lead to the other episodes that are
//!   instances of them (episode → INSTANCE_OF → concept ← INSTANCE_OF ← episode), each concept
//!   weighted by its rarity (a concept in more than a tenth of the episodes, such as the
//!   speaker of a conversation, says nothing and is not followed);
//! - **neighbours**: the episodes captured just before and after the best hits (the turns
//!   around a hit);
//! - **expansion**: the query again with the rarest words of the best hits added
//!   (pseudo-relevance feedback).
//!
//! The lists are fused by reciprocal rank (`Σ weight / (60 + rank)`, rank from 1), then each
//! record's fused score is multiplied by its memory factor `(0.5 + 0.5 trust) × (0.8 + 0.2
//! recency)` (recency halving every 30 days since last access): trust and recency reorder
//! near-ties but never bury old, well-matched evidence. Every hit says why it was found.

use std::collections::HashMap;

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
    /// The query expanded with the best hits' rarest words (default on).
    pub expansion: bool,
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
    /// It matched the expanded query.
    Expansion {
        /// The words added.
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

/// RRF's damping constant.
const RRF_K: f64 = 60.0;
/// Candidates taken from each list.
const DEPTH: usize = 50;
/// Best hits the structural sources start from.
const SEEDS: usize = 5;
/// Lexical candidates the embedder re-scores (the semantic evidence is found among them,
/// so its cost does not grow with the store).
const SHORTLIST: usize = 100;
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

/// Fused evidence for one record.
#[derive(Default)]
struct Fused {
    score: f64,
    why: Vec<(f64, Why)>,
}

impl Fused {
    fn add(&mut self, contribution: f64, why: Why) {
        self.score += contribution;
        self.why.push((contribution, why));
    }
}

impl MemoryHub {
    /// Asks the memory `query` (see the [module docs](self)): ranked hits over the layers the
    /// options name, each with its score and why it was found. A query with no content word
    /// finds nothing. Reads never write: no access is recorded.
    pub fn recall(&self, query: &str, options: &RecallOptions) -> Result<Vec<RecallHit>> {
        let _s = tracing::debug_span!("hub_recall", limit = options.limit).entered();
        maxim_core::check_unit("min_trust", options.min_trust)?;
        if options.limit == 0 {
            return Ok(Vec::new());
        }
        let episodes = options.layers.contains(&LayerKind::Hippocampus);
        let mut fused: HashMap<LayerRecord, Fused> = HashMap::with_capacity(4 * DEPTH);
        let mut best_episodes: Vec<RecordId> = Vec::new();

        let semantic = options.semantic && episodes && self.hippocampus.embedder().is_some();
        // The lexical shortlist: its first DEPTH are the lexical evidence, all of it the
        // candidates the embedder re-scores.
        let shortlist = if episodes && (options.lexical || semantic) {
            self.hippocampus.search_text(query, if semantic { SHORTLIST } else { DEPTH })
        } else {
            Vec::new()
        };
        if options.lexical {
            for (rank, &(id, score, terms)) in shortlist.iter().take(DEPTH).enumerate() {
                if best_episodes.len() < SEEDS {
                    best_episodes.push(id);
                }
                let why = Why::Lexical { rank: rank + 1, score, terms };
                fused.entry(episode(id)).or_default().add(rrf(rank, 1.0), why);
            }
            let hits =
                self.knowledge_index.search_filtered(query, DEPTH, |r| options.layers.contains(&r.layer));
            for (rank, h) in hits.into_iter().enumerate() {
                let why = Why::Lexical { rank: rank + 1, score: h.score, terms: h.matched_terms.len() };
                fused.entry(h.key).or_default().add(rrf(rank, 1.0), why);
            }
        }

        if semantic {
            let candidates: Vec<RecordId> = shortlist.iter().map(|s| s.0).collect();
            let similar = self.hippocampus.recall_similar_text_among(query, &candidates, DEPTH)?;
            for (rank, (e, similarity)) in similar.into_iter().enumerate() {
                if similarity <= 0.0 {
                    break;
                }
                let why = Why::Semantic { rank: rank + 1, similarity: f64::from(similarity) };
                fused.entry(episode(e.id())).or_default().add(rrf(rank, 0.7), why);
            }
        }

        if options.entities && episodes {
            self.entity_evidence(query, &best_episodes, &mut fused);
        }

        if options.neighbours && episodes {
            for &hit in best_episodes.iter().take(3) {
                for (i, id) in self.hippocampus.neighbours_in_time(hit, 1).into_iter().enumerate() {
                    fused
                        .entry(episode(id))
                        .or_default()
                        .add(rrf(i + SEEDS, 0.4), Why::Neighbour { of: hit });
                }
            }
        }

        if options.expansion && episodes && !best_episodes.is_empty() {
            let added = self.expansion_terms(query, &best_episodes);
            if !added.is_empty() {
                let expanded = format!("{query} {}", added.join(" "));
                for (rank, (id, _, _)) in
                    self.hippocampus.search_text(&expanded, DEPTH).into_iter().enumerate()
                {
                    let why = Why::Expansion { terms: added.clone() };
                    fused.entry(episode(id)).or_default().add(rrf(rank, 0.5), why);
                }
            }
        }

        let now = self.clock.now();
        let mut ranked: Vec<(LayerRecord, f64, Fused)> = fused
            .into_iter()
            .filter(|(record, _)| options.layers.contains(&record.layer))
            .filter_map(|(record, f)| {
                let meta = self.record_meta(record)?;
                if meta.trust.get() < options.min_trust
                    || options.since.is_some_and(|t| meta.timestamp < t)
                    || options.until.is_some_and(|t| meta.timestamp >= t)
                {
                    return None;
                }
                let recency = 0.5f64.powf(now.days_since(meta.accessed_at).max(0.0) / 30.0);
                let factor = (0.5 + 0.5 * meta.trust.get()) * (0.8 + 0.2 * recency);
                Some((record, f.score * factor, f))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(options.limit);
        // Names and reasons only for what is returned.
        Ok(ranked
            .into_iter()
            .map(|(record, score, f)| {
                let mut why = f.why;
                why.sort_by(|a, b| b.0.total_cmp(&a.0));
                RecallHit {
                    record,
                    score,
                    name: self.record_name(record),
                    why: why.into_iter().map(|w| w.1).collect(),
                }
            })
            .collect())
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
    fn entity_evidence(&self, query: &str, best: &[RecordId], fused: &mut HashMap<LayerRecord, Fused>) {
        let mut concepts: HashMap<RecordId, f64> = HashMap::new();
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
        let mut scored: HashMap<RecordId, (f64, RecordId)> = HashMap::new();
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
        for (rank, (id, _, concept)) in ranked.into_iter().take(DEPTH).enumerate() {
            let name = self.record_name(LayerRecord::new(LayerKind::Atl, concept));
            fused.entry(episode(id)).or_default().add(rrf(rank, 0.6), Why::Entity { concept: name });
        }
    }

    /// The rarest words of the best hits that the query does not hold: each word of the
    /// first three hits scored by its frequency there times its IDF, read from the lexical
    /// index's own term lists (words in one episode only are skipped: they lead nowhere).
    fn expansion_terms(&self, query: &str, best: &[RecordId]) -> Vec<String> {
        let mut asked: Vec<String> = Vec::new();
        maxim_core::text::for_each_search_token(query, |t| asked.push(t.to_owned()));
        let n = self.hippocampus.len().max(1) as f64;
        let mut words: HashMap<&str, f64> = HashMap::new();
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

fn rrf(rank: usize, weight: f64) -> f64 {
    weight / (RRF_K + rank as f64 + 1.0)
}
