//! What the promoter reads from a [`PromotionCandidate`]: its kind, its episodes, its event and
//! outcome, the angular-gyrus record behind it, its phase coherence, and the concept it
//! becomes (name, definition, provenance).
//!
//! ```
//! use promoter::pattern::{PatternKind, definition};
//! use maxim_core::{PromotionCandidate, Source};
//! use maxim_core::contracts::CAUSAL_PATTERN;
//! let candidate = PromotionCandidate {
//!     pattern_name: "tool:grasp → tool:grasp:positive".into(),
//!     category: CAUSAL_PATTERN.into(),
//!     confidence: 0.7,
//!     observations: 4,
//!     source_memory_ids: vec![],
//!     observed_at: vec![],
//!     source: Source::Episodic,
//!     metadata: Default::default(),
//! };
//! assert_eq!(PatternKind::of(&candidate), PatternKind::Causal);
//! assert_eq!(
//!     definition(&candidate),
//!     "Pattern: tool:grasp → tool:grasp:positive. Causal: tool:grasp leads to tool:grasp:positive"
//! );
//! ```

use std::fmt::Write as _;

use maxim_core::contracts::{CAUSAL_PATTERN, OPERATIONAL_PATTERN};
use maxim_core::{
    ConceptProvenance, Error as CoreError, MetaValueRef, PromotionCandidate, PromotionCandidateRef, RecordId,
    check_unit,
};
use serde::{Deserialize, Serialize};

/// The arrow between event and outcome in a causal pattern's name (U+2192).
pub const ARROW: &str = "→";

/// The category of the event concepts causal patterns relate.
pub const EVENT_CATEGORY: &str = "event";
/// The category of the outcome concepts causal patterns relate.
pub const OUTCOME_CATEGORY: &str = "outcome";
/// The relationship from an event concept to its outcome concept.
pub const CAUSES: &str = "CAUSES";

/// What kind of evidence a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PatternKind {
    /// A causal pattern from reward learning ([`CAUSAL_PATTERN`]).
    Causal,
    /// A confirmed operational pattern from the statistician ([`OPERATIONAL_PATTERN`]).
    Statistical,
    /// Any other category (a communication bridge, ...).
    Other,
}

impl PatternKind {
    /// The kind of `candidate`, by its category.
    pub fn of(candidate: &PromotionCandidate) -> Self {
        Self::of_view(&candidate.as_view())
    }

    /// The kind of a borrowed candidate, by its category.
    pub fn of_view(candidate: &PromotionCandidateRef<'_>) -> Self {
        match candidate.category.trim() {
            CAUSAL_PATTERN => Self::Causal,
            OPERATIONAL_PATTERN => Self::Statistical,
            _ => Self::Other,
        }
    }
}

/// Evidence from episodes (causal patterns, and other patterns that name episodes).
pub(crate) const EPISODIC: u8 = 1;
/// Evidence inferred by the agent (statistical patterns, and other patterns without episodes).
pub(crate) const INFERRED: u8 = 2;

/// The evidence bits of a candidate of `kind` with or without episodes.
pub(crate) fn evidence_bits(kind: PatternKind, has_episodes: bool) -> u8 {
    match kind {
        PatternKind::Causal => EPISODIC,
        PatternKind::Other if has_episodes => EPISODIC,
        PatternKind::Statistical | PatternKind::Other => INFERRED,
    }
}

/// The provenance of a concept supported by the evidence `bits`: episodic consolidation,
/// agent inference, or hybrid when both kinds agree on it.
pub fn provenance_of_bits(bits: u8) -> ConceptProvenance {
    match bits & (EPISODIC | INFERRED) {
        INFERRED => ConceptProvenance::AgentInference,
        b if b == EPISODIC | INFERRED => ConceptProvenance::Hybrid,
        _ => ConceptProvenance::EpisodicConsolidation,
    }
}

/// The concept's definition: `Pattern: <name>`, then for a causal pattern
/// `. Causal: <event> leads to <outcome>` (when both are known) and for an operational one
/// `. Type: <pattern_type>` (when given).
///
/// Unlike the original, the definition holds no counts (`Observed n times`, `R²=…`): a
/// definition is written once, when the concept is made, and a count in it would soon be
/// wrong; the counts stay with the source's record.
pub fn definition(candidate: &PromotionCandidate) -> String {
    definition_of_view(&candidate.as_view())
}

/// [`definition`] of a borrowed candidate.
pub fn definition_of_view(candidate: &PromotionCandidateRef<'_>) -> String {
    let name = candidate.pattern_name.trim();
    let mut out = format!("Pattern: {name}");
    match PatternKind::of_view(candidate) {
        PatternKind::Causal => {
            if let (Some(event), Some(outcome)) = event_and_outcome_of_view(candidate) {
                let _ = write!(out, ". Causal: {event} leads to {outcome}");
            }
        }
        PatternKind::Statistical => {
            if let Some(MetaValueRef::Text(t)) = candidate.metadata.get("pattern_type")
                && !t.trim().is_empty()
            {
                let _ = write!(out, ". Type: {}", t.trim());
            }
        }
        PatternKind::Other => {}
    }
    out
}

/// The event and outcome signatures of a causal candidate: the metadata's `event_signature`
/// and `outcome_signature`, else the two sides of the name's arrow.
pub fn event_and_outcome(candidate: &PromotionCandidate) -> (Option<&str>, Option<&str>) {
    event_and_outcome_of_view(&candidate.as_view())
}

/// [`event_and_outcome`] of a borrowed candidate.
pub fn event_and_outcome_of_view<'a>(
    candidate: &PromotionCandidateRef<'a>,
) -> (Option<&'a str>, Option<&'a str>) {
    let text = |key: &str| match candidate.metadata.get(key) {
        Some(MetaValueRef::Text(t)) if !t.trim().is_empty() => Some(t.trim()),
        _ => None,
    };
    let split = candidate.pattern_name.split_once(ARROW).map(|(e, o)| (e.trim(), o.trim()));
    let event = split.map(|(e, _)| e).filter(|s| !s.is_empty());
    let outcome = split.map(|(_, o)| o).filter(|s| !s.is_empty());
    (text("event_signature").or(event), text("outcome_signature").or(outcome))
}

/// A candidate checked and read once.
#[derive(Debug, Clone)]
pub(crate) struct Analysed<'a> {
    pub(crate) kind: PatternKind,
    /// `category \u{1f} name`, both trimmed: the ledger's key of the pattern.
    pub(crate) key: String,
    pub(crate) name: &'a str,
    pub(crate) category: &'a str,
    /// The source episodes, each once, in the candidate's order.
    pub(crate) episodes: Vec<RecordId>,
    pub(crate) bits: u8,
    pub(crate) event: Option<&'a str>,
    pub(crate) outcome: Option<&'a str>,
    pub(crate) ag_record: Option<RecordId>,
    pub(crate) phase_coherence: Option<f64>,
}

/// Checks `candidate` (name and category not blank, confidence and phase coherence finite in
/// `[0, 1]`, an AG record id that parses) and reads it.
pub(crate) fn analyse<'a>(candidate: &PromotionCandidateRef<'a>) -> Result<Analysed<'a>, CoreError> {
    let name = candidate.pattern_name.trim();
    if name.is_empty() {
        return Err(CoreError::invalid("pattern_name", "empty"));
    }
    let category = candidate.category.trim();
    if category.is_empty() {
        return Err(CoreError::invalid("category", "empty"));
    }
    check_unit("confidence", candidate.confidence)?;
    let phase_coherence = match candidate.metadata.get("phase_coherence") {
        None => None,
        Some(MetaValueRef::Number(x)) => Some(check_unit("phase_coherence", x)?),
        Some(_) => return Err(CoreError::invalid("phase_coherence", "not a number")),
    };
    let ag_record = match candidate.metadata.get("ag_memory_id") {
        None => None,
        Some(MetaValueRef::Id(id)) => Some(id),
        Some(MetaValueRef::Text(t)) if t.trim().is_empty() => None,
        Some(MetaValueRef::Text(t)) => Some(
            t.trim()
                .parse::<RecordId>()
                .map_err(|_| CoreError::invalid("ag_memory_id", "not a record id"))?,
        ),
        Some(_) => return Err(CoreError::invalid("ag_memory_id", "not a record id")),
    };
    let ids = candidate.source_memory_ids;
    let mut episodes = Vec::with_capacity(ids.len());
    if ids.len() <= 32 {
        for &id in ids {
            if !episodes.contains(&id) {
                episodes.push(id);
            }
        }
    } else {
        let mut seen = rustc_hash::FxHashSet::default();
        episodes.extend(ids.iter().copied().filter(|&id| seen.insert(id)));
    }
    let kind = PatternKind::of_view(candidate);
    let (event, outcome) =
        if kind == PatternKind::Causal { event_and_outcome_of_view(candidate) } else { (None, None) };
    Ok(Analysed {
        kind,
        key: format!("{category}\u{1f}{name}"),
        name,
        category,
        bits: evidence_bits(kind, !episodes.is_empty()),
        episodes,
        event,
        outcome,
        ag_record,
        phase_coherence,
    })
}
