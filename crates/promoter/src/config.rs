//! The promoter's settings.
//!
//! [`PromoterConfig`] holds numbers and flags only; the gate, the sources, the episode reader
//! and the clock go to the [`PromoterBuilder`](crate::PromoterBuilder). The defaults are the
//! original's `PromotionConfig` (§11: minimum confidence 0.6, minimum observations 3, gate on)
//! plus the settings of the steps the original left out (deduplication by similarity,
//! recurring elements, relationships).
//!
//! ```
//! use promoter::PromoterConfig;
//! let mut config = PromoterConfig::default();
//! assert_eq!((config.min_confidence, config.min_observations, config.gate_enabled), (0.6, 3, true));
//! config.dedup_threshold = 1.5;
//! assert!(config.validate().is_err());
//! ```

use maxim_core::{Error as CoreError, check_unit};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Settings of a [`SemanticPromoter`](crate::SemanticPromoter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromoterConfig {
    /// The confidence a source's candidate needs, in `[0, 1]` (default 0.6). Sources are asked
    /// for candidates at this level, and a candidate below it is rejected all the same.
    pub min_confidence: f64,
    /// The observations a candidate needs (default 3).
    pub min_observations: u32,
    /// Whether candidates go through the [`RandomnessGate`](maxim_core::RandomnessGate)
    /// (default true; building then needs a gate).
    pub gate_enabled: bool,
    /// The similarity in `[0, 1]` at which an existing concept found by
    /// [`similar_concepts`](maxim_core::ConceptStore::similar_concepts) is taken as the
    /// candidate's pattern (default 0.95). With the default hash embedder two patterns that
    /// differ only in a number (`tool:tool_3` and `tool:tool_4`) score 0.91, so the default
    /// merges only the same pattern written differently.
    pub dedup_threshold: f64,
    /// How many similar concepts to ask for (default 3, at least 1).
    pub dedup_candidates: usize,
    /// The share in `[0, 1]` of a concept's readable episodes an element must appear in to be
    /// recorded as recurring (default 0.5).
    pub recurrence_share: f64,
    /// The fewest episodes an element must appear in to be recurring (default 2, at least 1).
    pub min_recurrence: usize,
    /// How many of a concept's newest credited episodes are read for recurring elements
    /// (default 50, at least 1).
    pub max_episodes_read: usize,
    /// How many recurring elements of one kind are kept, most frequent first (default 8, at
    /// least 1).
    pub max_elements: usize,
    /// The phase coherence above which a TEMPORALLY_CORRELATES edge is made (default 0.7,
    /// in `[0, 1]`).
    pub phase_coherence_threshold: f64,
    /// Whether causal patterns relate their event concept to their outcome concept by CAUSES
    /// (default true).
    pub form_relationships: bool,
}

impl Default for PromoterConfig {
    fn default() -> Self {
        Self {
            min_confidence: 0.6,
            min_observations: 3,
            gate_enabled: true,
            dedup_threshold: 0.95,
            dedup_candidates: 3,
            recurrence_share: 0.5,
            min_recurrence: 2,
            max_episodes_read: 50,
            max_elements: 8,
            phase_coherence_threshold: 0.7,
            form_relationships: true,
        }
    }
}

impl PromoterConfig {
    /// Checks every setting: the shares and thresholds are finite numbers in `[0, 1]`, the
    /// counts of at least 1 are so.
    pub fn validate(&self) -> Result<()> {
        check_unit("min_confidence", self.min_confidence)?;
        check_unit("dedup_threshold", self.dedup_threshold)?;
        check_unit("recurrence_share", self.recurrence_share)?;
        check_unit("phase_coherence_threshold", self.phase_coherence_threshold)?;
        for (field, n) in [
            ("dedup_candidates", self.dedup_candidates),
            ("min_recurrence", self.min_recurrence),
            ("max_episodes_read", self.max_episodes_read),
            ("max_elements", self.max_elements),
        ] {
            if n == 0 {
                return Err(CoreError::invalid(field, "must be at least 1").into());
            }
        }
        Ok(())
    }
}
