//! Promotion candidates (`spec/maxim-reference.md` §8.4): the links confident, frequent and
//! positive enough to become concepts, offered to the promoter through
//! [`maxim_core::PromotionSource`].
//!
//! Each candidate carries the link's episodes and, unlike the original, the times of its
//! last observations (`observed_at`, oldest first), so the randomness gate can judge their
//! timing without reading the episodic layer.
//!
//! ```
//! use maxim_core::contracts::CAUSAL_PATTERN;
//! use maxim_core::{ManualClock, PromotionSource, RecordId, Timestamp};
//! use nac::{Nac, Observation, Valence};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut nac = Nac::builder().clock(clock.shared()).build()?;
//! for m in 0..4u128 {
//!     clock.advance(std::time::Duration::from_secs(60));
//!     nac.observe(&Observation::new("tool", "tool:grasp", "tool_result", "tool:grasp:positive", Valence::Positive)
//!         .memory(RecordId::from_u128(m + 1)))?;
//! }
//! let candidates = nac.get_promotion_candidates(0.6, 3)?;
//! assert_eq!(candidates.len(), 1);
//! let c = &candidates[0];
//! assert_eq!(c.pattern_name, "tool:grasp \u{2192} tool:grasp:positive");
//! assert_eq!(c.category, CAUSAL_PATTERN);
//! assert_eq!((c.confidence, c.observations), (0.7, 4));
//! assert_eq!(c.source_memory_ids.len(), 4);
//! assert_eq!(c.observed_at.len(), 4);
//! assert_eq!(nac.promotion_candidates(0.6, 5)?.len(), 0); // the contract, through the trait
//! # Ok::<(), maxim_core::BoxError>(())
//! ```

use std::collections::BTreeMap;

use maxim_core::contracts::CAUSAL_PATTERN;
use maxim_core::{BoxError, MetaValue, PromotionCandidate, PromotionSource, Source};

use crate::error::Result;
use crate::link::{CausalLink, Valence};
use crate::store::Nac;

impl CausalLink {
    /// The link as a promotion candidate: pattern name `"<event> → <outcome>"`, category
    /// `causal_pattern`, the link's confidence and count, its episodes and observation times
    /// (oldest first), source episodic, and metadata `event_signature`, `outcome_signature`,
    /// `valence`, `observation_count` (as in the original) and `link_id` (the id's bits).
    pub fn to_candidate(&self) -> PromotionCandidate {
        let mut metadata = BTreeMap::new();
        metadata.insert("event_signature".to_owned(), MetaValue::Text(self.event_signature.clone()));
        metadata.insert("outcome_signature".to_owned(), MetaValue::Text(self.outcome_signature.clone()));
        metadata.insert("valence".to_owned(), MetaValue::Text(self.valence.as_str().to_owned()));
        metadata.insert("observation_count".to_owned(), MetaValue::Count(self.observation_count));
        metadata.insert("link_id".to_owned(), MetaValue::Count(self.id.as_u64()));
        PromotionCandidate {
            pattern_name: self.pattern_name(),
            category: CAUSAL_PATTERN.to_owned(),
            confidence: self.confidence,
            observations: u32::try_from(self.observation_count).unwrap_or(u32::MAX),
            source_memory_ids: self.memory_ids.to_vec(),
            observed_at: self.observed_at.to_vec(),
            source: Source::Episodic,
            metadata,
        }
    }
}

impl Nac {
    /// The links that qualify for promotion, without building candidates: confidence at
    /// least `min_confidence`, at least `min_observations` observations, valence positive.
    /// Cheap (a scan of the flat link vector); [`CausalLink::to_candidate`] builds each
    /// candidate.
    pub fn candidate_links(
        &self,
        min_confidence: f64,
        min_observations: u64,
    ) -> impl Iterator<Item = &CausalLink> {
        self.links.iter().filter(move |l| {
            l.confidence >= min_confidence
                && l.observation_count >= min_observations
                && l.valence == Valence::Positive
        })
    }

    /// The promotion candidates (§8.4; the original's defaults are 0.6 and 3): every link of
    /// [`candidate_links`](Self::candidate_links), as [`CausalLink::to_candidate`] makes it,
    /// in the store's order. `min_confidence` must be a finite number in `[0, 1]`.
    pub fn get_promotion_candidates(
        &self,
        min_confidence: f64,
        min_observations: u32,
    ) -> Result<Vec<PromotionCandidate>> {
        let _s = tracing::debug_span!("nac_promotion_candidates", n_links = self.links.len()).entered();
        maxim_core::check_unit("min_confidence", min_confidence)?;
        Ok(self
            .candidate_links(min_confidence, u64::from(min_observations))
            .map(CausalLink::to_candidate)
            .collect())
    }
}

impl PromotionSource for Nac {
    fn source_name(&self) -> &'static str {
        "nac"
    }

    fn promotion_candidates(
        &self,
        min_confidence: f64,
        min_observations: u32,
    ) -> std::result::Result<Vec<PromotionCandidate>, BoxError> {
        self.get_promotion_candidates(min_confidence, min_observations).map_err(|e| Box::new(e) as BoxError)
    }
}
