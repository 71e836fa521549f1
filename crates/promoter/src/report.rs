//! What a scan did: which patterns were promoted, reinforced or left as they were, which the
//! thresholds or the gate rejected and why, and what failed.
//!
//! ```
//! use promoter::{PromotionReport, Rejection, RejectedBy};
//! let mut report = PromotionReport::default();
//! assert!(report.is_quiet());
//! report.rejected.push(Rejection {
//!     source: "nac".into(),
//!     pattern: "tool:x → tool:x:positive".into(),
//!     by: RejectedBy::Gate,
//!     reason: "observation timing looks random".into(),
//! });
//! assert_eq!(report.rejected_by(RejectedBy::Gate).count(), 1);
//! ```

use maxim_core::{ConceptProvenance, RecordId};
use serde::{Deserialize, Serialize};

/// How a candidate found its concept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Matched {
    /// The store created the concept.
    Created,
    /// The store found a concept by the pattern's name (its own deduplication).
    Found,
    /// An existing concept was similar enough (the promoter's deduplication).
    Similar {
        /// The similarity.
        score: f64,
    },
    /// The promoter had promoted the pattern into this concept before.
    Known,
}

/// One candidate that reached its concept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Promotion {
    /// The source that proposed it.
    pub source: String,
    /// The pattern's name.
    pub pattern: String,
    /// Its category.
    pub category: String,
    /// The concept.
    pub concept: RecordId,
    /// How the concept was found.
    pub matched: Matched,
    /// The concept's provenance as the promoter knows it (hybrid once causal and statistical
    /// evidence agree on it).
    pub provenance: ConceptProvenance,
    /// Reinforcements sent to the store: one per newly credited episode (a lookup that finds
    /// an existing concept with the first episode counts as one), or one for new evidence
    /// without episodes. A creation is not counted.
    pub reinforcements: u32,
    /// Properties written (recurring elements).
    pub properties_written: u32,
    /// Relationships formed or reinforced.
    pub relationships: u32,
    /// Cross-layer edges added or strengthened.
    pub edges_added: u32,
}

/// Who rejected a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectedBy {
    /// Its confidence or observations are below the configured minimum.
    Threshold,
    /// The randomness gate.
    Gate,
}

/// A candidate that was not promoted, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    /// The source that proposed it.
    pub source: String,
    /// The pattern's name.
    pub pattern: String,
    /// Who rejected it.
    pub by: RejectedBy,
    /// Why, in a few words.
    pub reason: String,
}

/// The step at which something failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Asking the source for its candidates.
    Source,
    /// Checking the candidate (blank name, confidence out of range, ...).
    Validate,
    /// Finding or creating its concept.
    Resolve,
    /// Reinforcing the concept.
    Reinforce,
    /// Writing the recurring elements as properties.
    Properties,
    /// Forming the CAUSES relationship.
    Relationships,
    /// Adding cross-layer edges.
    Edges,
    /// Journaling what was done (a promoter open on a directory). The write that the journal
    /// refused was not applied to the ledger either.
    Journal,
}

/// Something that failed; the scan went on without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The source concerned.
    pub source: String,
    /// The pattern concerned (`None` when the source itself failed).
    pub pattern: Option<String>,
    /// The step that failed. The steps before it took effect and are remembered, so the next
    /// scan completes the candidate without repeating them.
    pub stage: Stage,
    /// The error, as text.
    pub error: String,
}

/// What one scan did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PromotionReport {
    /// Candidates the sources proposed.
    pub candidates: usize,
    /// Candidates that became a new concept.
    pub promoted: Vec<Promotion>,
    /// Candidates that reinforced an existing concept with new evidence.
    pub reinforced: Vec<Promotion>,
    /// Candidates already promoted, with no new evidence (the concept was left as it was; a
    /// cross-layer edge missing since is added again and counted).
    pub unchanged: Vec<Promotion>,
    /// Candidates rejected by a threshold or the gate.
    pub rejected: Vec<Rejection>,
    /// Sources or candidates that failed.
    pub failed: Vec<Failure>,
}

impl PromotionReport {
    /// The rejections by `by`.
    pub fn rejected_by(&self, by: RejectedBy) -> impl Iterator<Item = &Rejection> {
        self.rejected.iter().filter(move |r| r.by == by)
    }

    /// The concepts promoted or reinforced, in scan order.
    pub fn concept_ids(&self) -> Vec<RecordId> {
        self.promoted.iter().chain(&self.reinforced).map(|p| p.concept).collect()
    }

    /// True when the scan changed nothing: no promotion, no reinforcement, no edge repaired,
    /// no failure.
    pub fn is_quiet(&self) -> bool {
        self.promoted.is_empty()
            && self.reinforced.is_empty()
            && self.failed.is_empty()
            && self
                .unchanged
                .iter()
                .all(|p| p.edges_added == 0 && p.properties_written == 0 && p.relationships == 0)
    }
}
