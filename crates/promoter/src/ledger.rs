//! The promoter's memory of what it has already promoted, so that a second scan over the same
//! evidence changes nothing and new evidence is credited exactly once.
//!
//! The core contracts let the promoter write to a concept store but not read a concept back,
//! so the promoter keeps, per pattern, the concept it became and the evidence already
//! credited (observations, confidence, when its CAUSES relationship was last formed), and
//! per concept the episodes credited to it, the kinds of evidence behind it (for its
//! provenance), the properties it wrote and the name the store knows it by.
//!
//! Every change is an [`Op`] (ids and times already chosen, serialisable) applied by
//! [`Ledger::apply`], which cannot fail, so a journal can log an operation before applying it
//! and replay it exactly.
//!
//! ```
//! use promoter::ledger::{Ledger, Op};
//! use promoter::pattern::PatternKind;
//! use maxim_core::{RecordId, Timestamp};
//! let (concept, episode) = (RecordId::from_u128(1), RecordId::from_u128(9));
//! let mut ledger = Ledger::default();
//! ledger.apply(Op::Bind {
//!     pattern: "causal_pattern\u{1f}a → b".into(),
//!     concept,
//!     kind: PatternKind::Causal,
//!     evidence: 1,
//!     known_as: None,
//!     at: Timestamp::from_secs(0),
//! });
//! ledger.apply(Op::Credit { concept, episode });
//! assert!(ledger.concept(concept).unwrap().is_credited(episode));
//! assert_eq!(ledger.pattern("causal_pattern\u{1f}a → b").unwrap().concept, concept);
//! ledger.apply(Op::ForgetConcept { concept });
//! assert!(ledger.is_empty());
//! ```

use maxim_core::{RecordId, Timestamp, Value};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::pattern::PatternKind;

/// The most episodes remembered as credited per concept; beyond it the oldest (smallest id,
/// ids being time-ordered) are forgotten. Sources keep fewer (NAc keeps 50 per link), so an
/// episode forgotten here is no longer named by any source.
pub const MAX_CREDITED_EPISODES: usize = 1_000;

/// What the promoter remembers of one pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternEntry {
    /// The concept it was promoted into.
    pub concept: RecordId,
    /// Its kind.
    pub kind: PatternKind,
    /// The most observations credited.
    pub observations: u32,
    /// The source's confidence last seen.
    pub confidence: f64,
    /// The observations when its CAUSES relationship was last formed (`None`: never).
    pub related_at: Option<u32>,
    /// When it was first promoted.
    pub first_promoted: Timestamp,
    /// When its evidence last changed.
    pub last_changed: Timestamp,
}

/// What the promoter remembers of one concept it promoted into.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConceptEntry {
    /// The kinds of evidence behind it (bit 1 episodic, bit 2 inferred).
    pub evidence: u8,
    /// The episodes credited to it, ascending (oldest first).
    pub episodes: Vec<RecordId>,
    /// How many episodes were ever credited (keeps counting past the cap).
    pub credits: u64,
    /// `credits` when its recurring elements were last written (`None`: never).
    pub extracted_at: Option<u64>,
    /// The properties the promoter wrote, by key (ascending).
    pub properties: Vec<(String, Value)>,
    /// The name and category the store created or found it by, when the promoter knows them
    /// (not when it was found by similarity).
    pub known_as: Option<(String, String)>,
}

impl ConceptEntry {
    /// Whether `episode` was credited.
    pub fn is_credited(&self, episode: RecordId) -> bool {
        self.episodes.binary_search(&episode).is_ok()
    }

    /// The value the promoter last wrote for property `key`.
    pub fn property(&self, key: &str) -> Option<&Value> {
        self.properties.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|i| &self.properties[i].1)
    }
}

/// One change of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// Pattern `pattern` is promoted into `concept`, which gains the `evidence` bits and, if it
    /// has none yet, the name `known_as`. A binding to another concept is replaced (with fresh
    /// evidence); a binding to the same concept keeps its evidence.
    Bind {
        /// The pattern's key (`category \u{1f} name`).
        pattern: String,
        /// The concept.
        concept: RecordId,
        /// The pattern's kind.
        kind: PatternKind,
        /// The evidence bits the pattern brings.
        evidence: u8,
        /// The name and category the store knows the concept by, when known.
        known_as: Option<(String, String)>,
        /// When.
        at: Timestamp,
    },
    /// `episode` was credited to `concept`.
    Credit {
        /// The concept.
        concept: RecordId,
        /// The episode.
        episode: RecordId,
    },
    /// The pattern's evidence as last credited.
    Evidence {
        /// The pattern's key.
        pattern: String,
        /// Its observations.
        observations: u32,
        /// Its confidence.
        confidence: f64,
        /// When.
        at: Timestamp,
    },
    /// The pattern's CAUSES relationship was formed at `observations`.
    Related {
        /// The pattern's key.
        pattern: String,
        /// The observations then.
        observations: u32,
    },
    /// The promoter wrote property `key` = `value` on `concept`.
    Property {
        /// The concept.
        concept: RecordId,
        /// The key.
        key: String,
        /// The value.
        value: Value,
    },
    /// The recurring elements of `concept` were written with every credit so far.
    Extracted {
        /// The concept.
        concept: RecordId,
    },
    /// Forget `concept` and every pattern promoted into it (the concept was deleted).
    ForgetConcept {
        /// The concept.
        concept: RecordId,
    },
    /// Forget that `episode` was credited to any concept (the episode was deleted); the
    /// credit counts stay, the id goes.
    ForgetEpisode {
        /// The episode.
        episode: RecordId,
    },
}

/// The ledger borrowed as sorted lists of patterns and concepts.
pub(crate) type Parts<'a> = (Vec<(&'a String, &'a PatternEntry)>, Vec<(&'a RecordId, &'a ConceptEntry)>);

/// The promoter's record of what it promoted (see the [module docs](self)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    patterns: FxHashMap<String, PatternEntry>,
    concepts: FxHashMap<RecordId, ConceptEntry>,
}

impl Ledger {
    /// The entry of the pattern with key `key` (`category \u{1f} name`).
    pub fn pattern(&self, key: &str) -> Option<&PatternEntry> {
        self.patterns.get(key)
    }

    /// The entry of concept `id`.
    pub fn concept(&self, id: RecordId) -> Option<&ConceptEntry> {
        self.concepts.get(&id)
    }

    /// Number of patterns promoted.
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Number of concepts promoted into.
    pub fn concept_count(&self) -> usize {
        self.concepts.len()
    }

    /// True when nothing was promoted.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty() && self.concepts.is_empty()
    }

    /// Every pattern, by key (ascending).
    pub fn patterns(&self) -> Vec<(&str, &PatternEntry)> {
        let mut out: Vec<(&str, &PatternEntry)> =
            self.patterns.iter().map(|(k, v)| (k.as_str(), v)).collect();
        out.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out
    }

    /// Every concept, by id (ascending).
    pub fn concepts(&self) -> Vec<(RecordId, &ConceptEntry)> {
        let mut out: Vec<(RecordId, &ConceptEntry)> = self.concepts.iter().map(|(k, v)| (*k, v)).collect();
        out.sort_unstable_by_key(|&(id, _)| id);
        out
    }

    /// Applies `op`. Never fails: an operation on a pattern or concept the ledger does not
    /// hold changes nothing.
    pub fn apply(&mut self, op: Op) {
        match op {
            Op::Bind { pattern, concept, kind, evidence, known_as, at } => {
                let entry = self.concepts.entry(concept).or_default();
                entry.evidence |= evidence;
                if entry.known_as.is_none() {
                    entry.known_as = known_as;
                }
                match self.patterns.get_mut(&pattern) {
                    Some(p) if p.concept == concept => p.kind = kind,
                    _ => {
                        let entry = PatternEntry {
                            concept,
                            kind,
                            observations: 0,
                            confidence: 0.0,
                            related_at: None,
                            first_promoted: at,
                            last_changed: at,
                        };
                        if let Some(old) = self.patterns.insert(pattern, entry) {
                            self.drop_if_orphan(old.concept);
                        }
                    }
                }
            }
            Op::ForgetEpisode { episode } => {
                for entry in self.concepts.values_mut() {
                    if let Ok(at) = entry.episodes.binary_search(&episode) {
                        entry.episodes.remove(at);
                    }
                }
            }
            Op::Credit { concept, episode } => {
                if let Some(entry) = self.concepts.get_mut(&concept)
                    && let Err(at) = entry.episodes.binary_search(&episode)
                {
                    entry.episodes.insert(at, episode);
                    if entry.episodes.len() > MAX_CREDITED_EPISODES {
                        let extra = entry.episodes.len() - MAX_CREDITED_EPISODES;
                        entry.episodes.drain(..extra);
                    }
                    entry.credits += 1;
                }
            }
            Op::Evidence { pattern, observations, confidence, at } => {
                if let Some(p) = self.patterns.get_mut(&pattern) {
                    p.observations = observations;
                    p.confidence = confidence;
                    p.last_changed = at;
                }
            }
            Op::Related { pattern, observations } => {
                if let Some(p) = self.patterns.get_mut(&pattern) {
                    p.related_at = Some(observations);
                }
            }
            Op::Property { concept, key, value } => {
                if let Some(entry) = self.concepts.get_mut(&concept) {
                    match entry.properties.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
                        Ok(i) => entry.properties[i].1 = value,
                        Err(i) => entry.properties.insert(i, (key, value)),
                    }
                }
            }
            Op::Extracted { concept } => {
                if let Some(entry) = self.concepts.get_mut(&concept) {
                    entry.extracted_at = Some(entry.credits);
                }
            }
            Op::ForgetConcept { concept } => {
                self.concepts.remove(&concept);
                self.patterns.retain(|_, p| p.concept != concept);
            }
        }
    }

    /// Forgets concept `id` when no pattern is bound to it any more.
    fn drop_if_orphan(&mut self, id: RecordId) {
        if !self.patterns.values().any(|p| p.concept == id) {
            self.concepts.remove(&id);
        }
    }

    /// The ledger's parts, for a snapshot: patterns and concepts, each sorted by key.
    pub(crate) fn to_parts(&self) -> Parts<'_> {
        let mut patterns: Vec<_> = self.patterns.iter().collect();
        patterns.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut concepts: Vec<_> = self.concepts.iter().collect();
        concepts.sort_unstable_by_key(|(id, _)| **id);
        (patterns, concepts)
    }

    /// A ledger from a snapshot's parts, once they are checked: every pattern's concept is
    /// held, keys and ids are distinct, confidences are finite in `[0, 1]`, evidence bits are
    /// known, episodes and property keys strictly ascending, property values finite.
    pub(crate) fn from_parts(
        patterns: Vec<(String, PatternEntry)>,
        concepts: Vec<(RecordId, ConceptEntry)>,
    ) -> Result<Self, String> {
        let mut ledger = Self::default();
        for (id, entry) in concepts {
            if entry.evidence == 0 || entry.evidence > 3 {
                return Err(format!("concept {id} has unknown evidence bits {}", entry.evidence));
            }
            if entry.episodes.windows(2).any(|w| w[0] >= w[1]) || entry.episodes.len() > MAX_CREDITED_EPISODES
            {
                return Err(format!("concept {id} has unordered or too many episodes"));
            }
            if entry.properties.windows(2).any(|w| w[0].0 >= w[1].0) {
                return Err(format!("concept {id} has unordered property keys"));
            }
            if entry.properties.iter().any(|(_, v)| !finite(v)) {
                return Err(format!("concept {id} has a property that is not finite"));
            }
            if ledger.concepts.insert(id, entry).is_some() {
                return Err(format!("concept {id} appears twice"));
            }
        }
        for (key, entry) in patterns {
            if !ledger.concepts.contains_key(&entry.concept) {
                return Err(format!("pattern {key:?} names concept {} that is not held", entry.concept));
            }
            if !(entry.confidence.is_finite() && (0.0..=1.0).contains(&entry.confidence)) {
                return Err(format!("pattern {key:?} has confidence {}", entry.confidence));
            }
            if ledger.patterns.insert(key.clone(), entry).is_some() {
                return Err(format!("pattern {key:?} appears twice"));
            }
        }
        Ok(ledger)
    }
}

/// True when `value` holds no NaN or infinity anywhere.
fn finite(value: &Value) -> bool {
    match value {
        Value::Float(x) => x.is_finite(),
        Value::List(items) => items.iter().all(finite),
        Value::Map(map) => map.values().all(finite),
        _ => true,
    }
}
