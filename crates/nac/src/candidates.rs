//! Promotion candidates (`spec/maxim-reference.md` §8.4): the links confident, frequent and
//! positive enough to become concepts, offered to the promoter through
//! [`maxim_core::PromotionSource`].
//!
//! Each candidate carries the link's episodes and, unlike the original, the times of its
//! last observations (`observed_at`, oldest first), so the randomness gate can judge their
//! timing without reading the episodic layer.
//!
//! A candidate is built owned ([`Nac::get_promotion_candidates`], a dozen allocations each)
//! or lent borrowed from its link ([`Nac::for_each_promotion_candidate`], the core's
//! [`PromotionSource::for_each_candidate`]): the promoter reads the lent form.
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
//! // The same candidates lent borrowed, without building them:
//! let mut lent = Vec::new();
//! assert_eq!(nac.for_each_promotion_candidate(0.6, 3, |c| lent.push(c.to_candidate()))?, 1);
//! assert_eq!(lent, candidates);
//! # Ok::<(), maxim_core::BoxError>(())
//! ```

use std::collections::BTreeMap;

use maxim_core::contracts::CAUSAL_PATTERN;
use maxim_core::{
    BoxError, MetaValue, MetaValueRef, MetadataRef, PromotionCandidate, PromotionCandidateRef,
    PromotionSource, Source,
};

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
        metadata.insert("event_signature".to_owned(), MetaValue::Text(self.key.event_signature.clone()));
        metadata.insert("outcome_signature".to_owned(), MetaValue::Text(self.key.outcome_signature.clone()));
        metadata.insert("valence".to_owned(), MetaValue::Text(self.valence.as_str().to_owned()));
        metadata.insert("observation_count".to_owned(), MetaValue::Count(self.observation_count));
        metadata.insert("link_id".to_owned(), MetaValue::Count(self.key.id.as_u64()));
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

/// The source of every NAc candidate.
static EPISODIC: Source = Source::Episodic;

impl CausalLink {
    /// Lends the link's promotion candidate to `f`, borrowed: the same candidate as
    /// [`to_candidate`](Self::to_candidate) builds, with the pattern name written into
    /// `name` (cleared first; reuse it across links and nothing is allocated once it is
    /// long enough), the metadata as pairs on the stack and the episodes and observation
    /// times lent from the link's rings.
    pub fn lend_candidate<R>(&self, name: &mut String, f: impl FnOnce(&PromotionCandidateRef<'_>) -> R) -> R {
        name.clear();
        name.push_str(&self.key.event_signature);
        name.push_str(" \u{2192} ");
        name.push_str(&self.key.outcome_signature);
        let metadata = [
            ("event_signature", MetaValueRef::Text(&self.key.event_signature)),
            ("outcome_signature", MetaValueRef::Text(&self.key.outcome_signature)),
            ("valence", MetaValueRef::Text(self.valence.as_str())),
            ("observation_count", MetaValueRef::Count(self.observation_count)),
            ("link_id", MetaValueRef::Count(self.key.id.as_u64())),
        ];
        f(&PromotionCandidateRef {
            pattern_name: name,
            category: CAUSAL_PATTERN,
            confidence: self.confidence,
            observations: u32::try_from(self.observation_count).unwrap_or(u32::MAX),
            source_memory_ids: self.memory_ids.as_split(),
            observed_at: self.observed_at.as_split(),
            source: &EPISODIC,
            metadata: MetadataRef::Pairs(&metadata),
        })
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

    /// Lends each promotion candidate of
    /// [`get_promotion_candidates`](Self::get_promotion_candidates) to `visit`, borrowed
    /// ([`CausalLink::lend_candidate`]), in the same order; returns how many. Allocates
    /// nothing but one buffer for the pattern names. `min_confidence` must be a finite number
    /// in `[0, 1]` (checked before any candidate is lent).
    pub fn for_each_promotion_candidate(
        &self,
        min_confidence: f64,
        min_observations: u32,
        mut visit: impl FnMut(&PromotionCandidateRef<'_>),
    ) -> Result<usize> {
        let _s = tracing::debug_span!("nac_lend_candidates", n_links = self.links.len()).entered();
        maxim_core::check_unit("min_confidence", min_confidence)?;
        let mut name = String::new();
        let mut n = 0;
        for link in self.candidate_links(min_confidence, u64::from(min_observations)) {
            link.lend_candidate(&mut name, &mut visit);
            n += 1;
        }
        Ok(n)
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

    fn for_each_candidate(
        &self,
        min_confidence: f64,
        min_observations: u32,
        visit: &mut dyn FnMut(&PromotionCandidateRef<'_>),
    ) -> std::result::Result<usize, BoxError> {
        self.for_each_promotion_candidate(min_confidence, min_observations, visit)
            .map_err(|e| Box::new(e) as BoxError)
    }
}
