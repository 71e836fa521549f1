//! [`CausalLink`]: what the store has learned about one event → outcome pair in one context,
//! and the Rescorla–Wagner update that learns it (`spec/maxim-reference.md` §8.1, §8.2).
//!
//! ```
//! use nac::{Valence, alpha};
//! // The learning rate folds novelty in: alpha = 0.05 + 0.45 · novelty · lr · 2.
//! assert!((alpha(0.2, 0.5) - 0.14).abs() < 1e-12);
//! assert!((alpha(0.05, 0.5) - 0.0725).abs() < 1e-12);
//! assert!((alpha(0.5, 0.5) - 0.275).abs() < 1e-12);
//! assert_eq!(Valence::Positive.reward(), 1.0);
//! assert_eq!("negative".parse::<Valence>()?, Valence::Negative);
//! assert!("great".parse::<Valence>().is_err());
//! # Ok::<(), nac::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use maxim_core::value::Map;
use maxim_core::{RecordId, Timestamp};
use serde::{Deserialize, Serialize};

use crate::context::{PairHasher, StableHasher, Words, context_hash, context_hash_pair};
use crate::error::Error;
use crate::ring::Ring;

/// The valence of an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Valence {
    /// A good outcome (reward 1).
    Positive,
    /// A bad outcome (reward 0).
    Negative,
    /// Neither (reward 0.5).
    Neutral,
    /// Not known (reward 0.5).
    Unknown,
}

impl Valence {
    /// The reward the Rescorla–Wagner update learns towards: 1, 0, 0.5, 0.5.
    pub const fn reward(self) -> f64 {
        match self {
            Self::Positive => 1.0,
            Self::Negative => 0.0,
            Self::Neutral | Self::Unknown => 0.5,
        }
    }

    /// The valence on the smoothing scale: +1, −1, 0, 0.
    pub const fn scale(self) -> f64 {
        match self {
            Self::Positive => 1.0,
            Self::Negative => -1.0,
            Self::Neutral | Self::Unknown => 0.0,
        }
    }

    /// The text form (`positive`, `negative`, `neutral`, `unknown`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Positive => "positive",
            Self::Negative => "negative",
            Self::Neutral => "neutral",
            Self::Unknown => "unknown",
        }
    }

    /// The valence a smoothed score stands for: above 0.3 positive, below −0.3 negative,
    /// neutral between.
    pub fn classify(score: f64) -> Self {
        if score > 0.3 {
            Self::Positive
        } else if score < -0.3 {
            Self::Negative
        } else {
            Self::Neutral
        }
    }
}

impl fmt::Display for Valence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Valence {
    type Err = Error;

    /// Parses the text form; anything else is an error (§8.1: a valence outside the enum is
    /// refused).
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "positive" => Ok(Self::Positive),
            "negative" => Ok(Self::Negative),
            "neutral" => Ok(Self::Neutral),
            "unknown" => Ok(Self::Unknown),
            other => Err(Error::invalid(
                "valence",
                format!("{other:?} is not positive, negative, neutral or unknown"),
            )),
        }
    }
}

/// The Rescorla–Wagner learning rate for a base `learning_rate` and a `novelty`, both in
/// `[0, 1]`: `0.05 + (0.5 − 0.05) · novelty · learning_rate · 2` (§8.2).
pub fn alpha(learning_rate: f64, novelty: f64) -> f64 {
    0.05 + (0.5 - 0.05) * novelty * learning_rate * 2.0
}

/// A link's id: a stable 64-bit hash of its key (event signature, outcome signature and
/// context), the same in every run and after a reload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct LinkId(u64);

impl LinkId {
    /// The id whose bits are `bits`.
    pub const fn from_u64(bits: u64) -> Self {
        Self(bits)
    }

    /// The id's bits.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// The id of the link keyed by `event_signature`, `outcome_signature` and `context`.
    ///
    /// ```
    /// use maxim_core::value::{Map, Value};
    /// use nac::LinkId;
    /// let mug: Map = [("object", Value::from("mug"))].into_iter().collect();
    /// let a = LinkId::of("tool:grasp", "tool:grasp:positive", &mug);
    /// assert_eq!(a, LinkId::of("tool:grasp", "tool:grasp:positive", &mug));
    /// assert_ne!(a, LinkId::of("tool:grasp", "tool:grasp:positive", &Map::new()));
    /// assert_eq!(a.to_string().len(), 16);
    /// ```
    pub fn of(event_signature: &str, outcome_signature: &str, context: &Map) -> Self {
        Self::from_parts(event_signature, outcome_signature, context_hash(context))
    }

    pub(crate) fn from_parts(event_signature: &str, outcome_signature: &str, context_hash: u64) -> Self {
        let mut h = StableHasher::new(4);
        h.bytes(event_signature.as_bytes());
        h.bytes(outcome_signature.as_bytes());
        h.word(context_hash);
        Self(h.finish())
    }

    /// The id of a key and a second, independent 64-bit hash of it that verifies the key
    /// (together 128 bits), so a lookup need not compare the stored strings.
    ///
    /// Both halves come from one pass over the key ([`PairHasher`]); each equals its own
    /// hash computed alone (the id [`LinkId::of`], the check seeded apart), so ids and the
    /// checks journals carry stay what they were.
    #[inline]
    pub(crate) fn with_check(event_signature: &str, outcome_signature: &str, context: &Map) -> (Self, u64) {
        let (context_id, context_check) = context_hash_pair(context);
        let mut h = PairHasher::new(4, 7);
        h.bytes(event_signature.as_bytes());
        h.bytes(outcome_signature.as_bytes());
        h.words(context_id, context_check);
        let (id, check) = h.finish();
        (Self(id), check)
    }
}

impl fmt::Display for LinkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// What the store has learned about one event → outcome pair in one context (§8.1).
///
/// The key is the event signature, the outcome signature and the event's context; its
/// [`LinkId`] is the key's hash. Unlike the original, a link also keeps the times of its last
/// observations ([`observed_at`](Self::observed_at)), which its promotion candidate carries so
/// the randomness gate can judge their timing without asking the episodic layer.
///
/// In memory a link is four cache lines: what an observation updates (the learned value, the
/// counts, the smoothed valence, the last time) in the first, its four histories' headers in
/// the next two, and the key (names, context, id, first time) behind one pointer, since an
/// observation of a known link never reads it. It serialises as one flat record of every
/// field, as it always has.
#[derive(Debug, Clone, PartialEq)]
#[repr(C, align(64))]
pub struct CausalLink {
    pub(crate) predicted_value: f64,
    pub(crate) last_rpe: f64,
    pub(crate) observation_count: u64,
    pub(crate) confidence: f64,
    pub(crate) valence_score: f64,
    pub(crate) last_observed: Timestamp,
    pub(crate) key: Box<LinkKey>,
    pub(crate) valence: Valence,
    pub(crate) history: Ring<f64>,
    pub(crate) delays: Ring<f64>,
    pub(crate) memory_ids: Ring<RecordId>,
    pub(crate) observed_at: Ring<Timestamp>,
}

/// What a link is about and when it began: read when it is created, found by name,
/// predicted from or offered for promotion, never by an observation of a known link.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinkKey {
    pub(crate) id: LinkId,
    pub(crate) event_type: String,
    pub(crate) event_signature: String,
    pub(crate) context: Map,
    pub(crate) outcome_type: String,
    pub(crate) outcome_signature: String,
    pub(crate) first_observed: Timestamp,
}

/// A link as it is written: every field in one flat record, in the order links have always
/// been saved and journaled, so the layout in memory is free to change.
#[derive(Serialize)]
#[serde(rename = "CausalLink")]
struct LinkOut<'a> {
    id: LinkId,
    event_type: &'a str,
    event_signature: &'a str,
    context: &'a Map,
    outcome_type: &'a str,
    outcome_signature: &'a str,
    valence: Valence,
    valence_score: f64,
    predicted_value: f64,
    last_rpe: f64,
    observation_count: u64,
    confidence: f64,
    first_observed: Timestamp,
    last_observed: Timestamp,
    history: &'a Ring<f64>,
    delays: &'a Ring<f64>,
    memory_ids: &'a Ring<RecordId>,
    observed_at: &'a Ring<Timestamp>,
}

/// A link as it is read: [`LinkOut`]'s record, owned.
#[derive(Deserialize)]
#[serde(rename = "CausalLink")]
struct LinkIn {
    id: LinkId,
    event_type: String,
    event_signature: String,
    context: Map,
    outcome_type: String,
    outcome_signature: String,
    valence: Valence,
    valence_score: f64,
    predicted_value: f64,
    last_rpe: f64,
    observation_count: u64,
    confidence: f64,
    first_observed: Timestamp,
    last_observed: Timestamp,
    history: Ring<f64>,
    delays: Ring<f64>,
    memory_ids: Ring<RecordId>,
    observed_at: Ring<Timestamp>,
}

impl Serialize for CausalLink {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let k = &*self.key;
        LinkOut {
            id: k.id,
            event_type: &k.event_type,
            event_signature: &k.event_signature,
            context: &k.context,
            outcome_type: &k.outcome_type,
            outcome_signature: &k.outcome_signature,
            valence: self.valence,
            valence_score: self.valence_score,
            predicted_value: self.predicted_value,
            last_rpe: self.last_rpe,
            observation_count: self.observation_count,
            confidence: self.confidence,
            first_observed: k.first_observed,
            last_observed: self.last_observed,
            history: &self.history,
            delays: &self.delays,
            memory_ids: &self.memory_ids,
            observed_at: &self.observed_at,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CausalLink {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let l = LinkIn::deserialize(deserializer)?;
        Ok(Self {
            predicted_value: l.predicted_value,
            last_rpe: l.last_rpe,
            observation_count: l.observation_count,
            confidence: l.confidence,
            valence_score: l.valence_score,
            last_observed: l.last_observed,
            key: Box::new(LinkKey {
                id: l.id,
                event_type: l.event_type,
                event_signature: l.event_signature,
                context: l.context,
                outcome_type: l.outcome_type,
                outcome_signature: l.outcome_signature,
                first_observed: l.first_observed,
            }),
            valence: l.valence,
            history: l.history,
            delays: l.delays,
            memory_ids: l.memory_ids,
            observed_at: l.observed_at,
        })
    }
}

/// The bounds of a link's histories.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) history: usize,
    pub(crate) delays: usize,
    pub(crate) memory_ids: usize,
    pub(crate) observed_at: usize,
}

impl CausalLink {
    /// A new link from its first observation: one observation, confidence 0.5, the valence
    /// as given, V 0.5 before the first update (which the caller applies).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: LinkId,
        event_type: &str,
        event_signature: &str,
        context: &Map,
        outcome_type: &str,
        outcome_signature: &str,
        valence: Valence,
        at: Timestamp,
        bounds: Bounds,
    ) -> Self {
        Self {
            key: Box::new(LinkKey {
                id,
                event_type: event_type.to_owned(),
                event_signature: event_signature.to_owned(),
                context: context.clone(),
                outcome_type: outcome_type.to_owned(),
                outcome_signature: outcome_signature.to_owned(),
                first_observed: at,
            }),
            valence,
            valence_score: valence.scale(),
            predicted_value: 0.5,
            last_rpe: 0.0,
            observation_count: 1,
            confidence: 0.5,
            last_observed: at,
            history: Ring::new(bounds.history),
            delays: Ring::new(bounds.delays),
            memory_ids: Ring::new(bounds.memory_ids),
            observed_at: Ring::new(bounds.observed_at),
        }
    }

    /// The first observation's delay, memory id and time (the count is already 1).
    pub(crate) fn first_observation(&mut self, delay: f64, memory_id: Option<RecordId>, at: Timestamp) {
        self.delays.push(delay);
        if let Some(m) = memory_id {
            self.memory_ids.push(m);
        }
        self.observed_at.push(at);
    }

    /// The Rescorla–Wagner update (§8.2): `err = R − V`, `V = clamp(V + α·err, 0, 1)`, the old
    /// V appended to the history. Returns the prediction error.
    #[inline]
    pub(crate) fn rescorla_wagner(&mut self, valence: Valence, alpha: f64) -> f64 {
        let old = self.predicted_value;
        let err = valence.reward() - old;
        self.last_rpe = err.abs();
        self.predicted_value = (old + alpha * err).clamp(0.0, 1.0);
        self.history.push(old);
        err
    }

    /// Records one more observation (§8.2 `record_observation`): the delay, the count and the
    /// confidence `min(0.99, 0.5 + 0.1·√count)`, the smoothed valence `0.8·score + 0.2·new`,
    /// the memory id (once), the time.
    #[inline]
    pub(crate) fn record_observation(
        &mut self,
        delay: f64,
        valence: Valence,
        memory_id: Option<RecordId>,
        at: Timestamp,
    ) {
        self.delays.push(delay);
        self.observation_count += 1;
        self.confidence = confidence_for(self.observation_count);
        self.valence_score = 0.8 * self.valence_score + 0.2 * valence.scale();
        self.valence = Valence::classify(self.valence_score);
        // An episode repeated back to back is kept once; the ring is not scanned (it would
        // read 50 ids on every observation).
        if let Some(m) = memory_id
            && self.memory_ids.newest() != Some(&m)
        {
            self.memory_ids.push(m);
        }
        self.observed_at.push(at);
        if at > self.last_observed {
            self.last_observed = at;
        }
    }

    /// The check hash of the link's key (see [`LinkId::with_check`]).
    pub(crate) fn key_check(&self) -> u64 {
        LinkId::with_check(&self.key.event_signature, &self.key.outcome_signature, &self.key.context).1
    }

    /// The link's id.
    pub fn id(&self) -> LinkId {
        self.key.id
    }

    /// The event's type (`tool`, `user_input`, `temporal`, `state_change`, ...).
    pub fn event_type(&self) -> &str {
        &self.key.event_type
    }

    /// The event's signature (`tool:grasp`).
    pub fn event_signature(&self) -> &str {
        &self.key.event_signature
    }

    /// The context the event happened in (part of the key).
    pub fn context(&self) -> &Map {
        &self.key.context
    }

    /// The outcome's type.
    pub fn outcome_type(&self) -> &str {
        &self.key.outcome_type
    }

    /// The outcome's signature (`tool:grasp:positive`).
    pub fn outcome_signature(&self) -> &str {
        &self.key.outcome_signature
    }

    /// The outcome's smoothed valence.
    pub fn valence(&self) -> Valence {
        self.valence
    }

    /// The smoothed valence score in `[-1, 1]` (`valence` classifies it).
    pub fn valence_score(&self) -> f64 {
        self.valence_score
    }

    /// The learned value V in `[0, 1]`: the expected reward of the outcome.
    pub fn predicted_value(&self) -> f64 {
        self.predicted_value
    }

    /// The size of the last prediction error, `|R − V|` before the update.
    pub fn last_rpe(&self) -> f64 {
        self.last_rpe
    }

    /// Observations counted.
    pub fn observation_count(&self) -> u64 {
        self.observation_count
    }

    /// Confidence in `[0, 0.99]`: `min(0.99, 0.5 + 0.1·√count)`, lowered by decay.
    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    /// When the link was first observed.
    pub fn first_observed(&self) -> Timestamp {
        self.key.first_observed
    }

    /// When it was last observed.
    pub fn last_observed(&self) -> Timestamp {
        self.last_observed
    }

    /// The values V held before each of the last updates, oldest first.
    pub fn history(&self) -> &Ring<f64> {
        &self.history
    }

    /// The last delays between event and outcome, in seconds, oldest first.
    pub fn delays(&self) -> &Ring<f64> {
        &self.delays
    }

    /// The episodes that contributed (the last ones; an episode repeated back to back once),
    /// oldest first.
    pub fn memory_ids(&self) -> &Ring<RecordId> {
        &self.memory_ids
    }

    /// The times of the last observations, in the order they were made.
    pub fn observed_at(&self) -> &Ring<Timestamp> {
        &self.observed_at
    }

    /// The mean of the kept delays, in seconds (`None` without one).
    pub fn mean_delay(&self) -> Option<f64> {
        if self.delays.is_empty() {
            None
        } else {
            Some(self.delays.iter().sum::<f64>() / self.delays.len() as f64)
        }
    }

    /// The pattern name of the link's promotion candidate: `"<event> → <outcome>"` (§8.4).
    pub fn pattern_name(&self) -> String {
        let mut name =
            String::with_capacity(self.key.event_signature.len() + self.key.outcome_signature.len() + 5);
        name.push_str(&self.key.event_signature);
        name.push_str(" \u{2192} ");
        name.push_str(&self.key.outcome_signature);
        name
    }

    /// Checks a link read from a file: names, finite numbers in range, consistent counts.
    pub(crate) fn validate(&self) -> Result<(), String> {
        for (field, name) in [
            ("event_type", &self.key.event_type),
            ("event_signature", &self.key.event_signature),
            ("outcome_type", &self.key.outcome_type),
            ("outcome_signature", &self.key.outcome_signature),
        ] {
            crate::context::check_name(field, name).map_err(|e| e.to_string())?;
        }
        crate::context::check_context("context", &self.key.context).map_err(|e| e.to_string())?;
        let unit = |field: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{field} {v} is not in [0, 1]"))
            }
        };
        unit("predicted value", self.predicted_value)?;
        unit("confidence", self.confidence)?;
        unit("last prediction error", self.last_rpe)?;
        if !(self.valence_score.is_finite() && (-1.0..=1.0).contains(&self.valence_score)) {
            return Err(format!("valence score {} is not in [-1, 1]", self.valence_score));
        }
        if self.observation_count == 0 {
            return Err("no observation counted".into());
        }
        if let Some(v) = self.history.iter().find(|v| !(v.is_finite() && (0.0..=1.0).contains(*v))) {
            return Err(format!("history value {v} is not in [0, 1]"));
        }
        if let Some(d) = self.delays.iter().find(|d| !(d.is_finite() && **d >= 0.0)) {
            return Err(format!("delay {d} is not a finite number >= 0"));
        }
        if self.key.first_observed > self.last_observed {
            return Err("first observed after last observed".into());
        }
        if LinkId::of(&self.key.event_signature, &self.key.outcome_signature, &self.key.context)
            != self.key.id
        {
            return Err("id does not match the link's key".into());
        }
        Ok(())
    }
}

/// `min(0.99, 0.5 + 0.1·√count)`.
pub(crate) fn confidence_for(count: u64) -> f64 {
    (0.5 + 0.1 * (count as f64).sqrt()).min(0.99)
}

#[cfg(test)]
mod tests {
    use maxim_core::value::Value;
    use proptest::prelude::*;

    use super::*;
    use crate::context::context_check_hash;

    /// The check hash as it was first defined: its own pass over the key.
    fn check_alone(event: &str, outcome: &str, context: &Map) -> u64 {
        let mut h = StableHasher::new(7);
        h.bytes(event.as_bytes());
        h.bytes(outcome.as_bytes());
        h.word(context_check_hash(context));
        h.finish()
    }

    proptest! {
        #[test]
        fn one_pass_gives_the_id_and_the_check_of_two(
            event in "[a-z:_]{1,40}",
            outcome in "[a-z:_]{1,40}",
            items in proptest::collection::vec(("[a-z]{1,8}", "[a-z]{0,20}"), 0..4),
        ) {
            let context: Map = items.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
            let (id, check) = LinkId::with_check(&event, &outcome, &context);
            prop_assert_eq!(id, LinkId::of(&event, &outcome, &context));
            prop_assert_eq!(check, check_alone(&event, &outcome, &context));
        }
    }

    #[test]
    fn ids_and_checks_are_fixed_across_builds() {
        // Journals carry both; a change would refuse every journaled link.
        let mug: Map = [("object", Value::from("mug"))].into_iter().collect();
        let (id, check) = LinkId::with_check("tool:grasp", "tool:grasp:positive", &mug);
        assert_eq!((id.as_u64(), check), (GOLDEN_ID, GOLDEN_CHECK));
    }

    #[test]
    fn a_link_is_written_as_the_flat_record_it_always_was() {
        // Snapshots written before the hot/cold layout must load, and new ones must read
        // the same: the record is every field in the original declaration order.
        let mug: Map = [("object", Value::from("mug"))].into_iter().collect();
        let at = Timestamp::from_secs(1_700_000_000);
        let bounds = Bounds { history: 3, delays: 3, memory_ids: 3, observed_at: 3 };
        let id = LinkId::of("tool:grasp", "ok", &mug);
        let mut link = CausalLink::new(
            id,
            "tool",
            "tool:grasp",
            &mug,
            "tool_result",
            "ok",
            Valence::Positive,
            at,
            bounds,
        );
        link.first_observation(1.5, Some(RecordId::from_u128(9)), at);
        link.rescorla_wagner(Valence::Positive, 0.14);
        let later = Timestamp::from_secs(1_700_000_060);
        link.rescorla_wagner(Valence::Negative, 0.14);
        link.record_observation(2.5, Valence::Negative, Some(RecordId::from_u128(10)), later);
        // Postcard writes a struct and nested tuples as their fields one after another.
        let flat = (
            (id, "tool", "tool:grasp", &mug, "tool_result", "ok", link.valence, link.valence_score),
            link.predicted_value,
            link.last_rpe,
            2u64,
            link.confidence,
            at,
            later,
            link.history.to_vec(),
            vec![1.5, 2.5],
            vec![RecordId::from_u128(9), RecordId::from_u128(10)],
            vec![at, later],
        );
        let bytes = postcard::to_stdvec(&link).unwrap();
        assert_eq!(bytes, postcard::to_stdvec(&flat).unwrap());
        // Read back, it is the same link (its rings' bounds are the loading store's to set).
        let back: CausalLink = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(postcard::to_stdvec(&back).unwrap(), bytes);
        assert!(back.validate().is_ok());
    }

    const GOLDEN_ID: u64 = 360_648_557_601_532_613;
    const GOLDEN_CHECK: u64 = 2_213_842_020_274_385_783;
}
