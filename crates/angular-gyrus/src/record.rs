//! The records of the mathematical layer (`spec/maxim-reference.md` §6.1): a full
//! [`MathRecord`], the [`CompressedMathRecord`] consolidation leaves, and [`MathEntry`], the
//! one the layer stores.
//!
//! A record has a [`MathCategory`] (FACT, FORMULA, METHOD, CONSTANT, PATTERN, RELATIONSHIP),
//! a domain, a verbal and a code form, named typed inputs and outputs ([`Map`] of
//! [`Value`]s: a fitted PATTERN keeps its parameters in `inputs`), an [`Origin`], a
//! confidence in `[0, 1]` and an observation count.
//!
//! ```
//! use angular_gyrus::{MathCategory, MathRecord};
//! use maxim_core::{RecordId, Timestamp, Value};
//! let mut r = MathRecord::new(RecordId::from_u128(1), "pi", MathCategory::Constant, "geometry", Timestamp::from_secs(0))?;
//! r.outputs.insert("value", Value::from(std::f64::consts::PI));
//! assert_eq!(r.output_f64("value"), Some(std::f64::consts::PI));
//! assert_eq!("PATTERN".parse::<MathCategory>()?, MathCategory::Pattern);
//! assert!("pattern ".parse::<MathCategory>().is_ok()); // trimmed, any case
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use maxim_core::value::{Map, Value};
use maxim_core::{MemoryRecord, RecordId, RecordMeta, Source, Timestamp, TraceKind, check_unit};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Longest record name, domain or metric name, in bytes.
pub const MAX_NAME_LEN: usize = 256;

/// What kind of mathematical knowledge a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MathCategory {
    /// A fact ("there are 24 hours in a day").
    Fact,
    /// A formula (an expression with named inputs).
    Formula,
    /// A method (mean, linear regression, ...).
    Method,
    /// A constant (pi, e, phi).
    Constant,
    /// A statistical pattern fitted to the agent's own metrics.
    Pattern,
    /// A relationship between quantities (a correlation, a phase-locking).
    Relationship,
}

impl MathCategory {
    /// Every category, in declaration order.
    pub const ALL: [Self; 6] =
        [Self::Fact, Self::Formula, Self::Method, Self::Constant, Self::Pattern, Self::Relationship];

    /// The upper-case name (`PATTERN`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Fact => "FACT",
            Self::Formula => "FORMULA",
            Self::Method => "METHOD",
            Self::Constant => "CONSTANT",
            Self::Pattern => "PATTERN",
            Self::Relationship => "RELATIONSHIP",
        }
    }

    /// The category's position in [`MathCategory::ALL`].
    pub(crate) const fn slot(self) -> usize {
        self as usize
    }
}

impl fmt::Display for MathCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MathCategory {
    type Err = Error;
    /// Parses a name in any case, trimmed; an unknown name is [`Error::Unknown`] (never a
    /// silent FACT, as the original's loader did).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(t))
            .ok_or_else(|| Error::Unknown { kind: "category", name: s.to_owned() })
    }
}

/// Where a record's content came from (§6.1 `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Shipped with the program: a firmware trace, never decays, never removed.
    BuiltIn,
    /// Learned from observations (fitted patterns).
    Learned,
    /// Derived from other records.
    Derived,
}

impl Origin {
    /// The lower-case name (`built_in`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BuiltIn => "built_in",
            Self::Learned => "learned",
            Self::Derived => "derived",
        }
    }
}

/// A mathematical record in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MathRecord {
    /// The shared fields.
    pub meta: RecordMeta,
    /// The record's name (`pi`, `linear_regression`, `trend:tool:navigate:success`).
    pub name: String,
    /// Its category.
    pub category: MathCategory,
    /// Its domain (`geometry`, `statistics`, `operational_statistics`, ...).
    pub domain: String,
    /// What it says, in words.
    pub verbal: String,
    /// Its code form.
    pub code: String,
    /// Named inputs (a fitted pattern's parameters).
    pub inputs: Map,
    /// Named outputs (a constant's value).
    pub outputs: Map,
    /// Where the content came from.
    pub origin: Origin,
    /// Confidence in `[0, 1]` (a fitted pattern's R²).
    pub confidence: f64,
    /// How many times it was observed or confirmed.
    pub observation_count: u32,
}

impl MathRecord {
    /// A learned record `name` of `category` in `domain`, made `now`, confidence 1, no
    /// observations, from agent inference with its default trust, on a semantic trace.
    /// Errors: an empty or overlong name or domain.
    pub fn new(
        id: RecordId,
        name: &str,
        category: MathCategory,
        domain: &str,
        now: Timestamp,
    ) -> Result<Self> {
        let name = check_name("name", name)?;
        let domain = check_name("domain", domain)?;
        let source = Source::AgentInference;
        let trust = source.default_trust().get();
        Ok(Self {
            meta: RecordMeta::new(id, now, source, trust, TraceKind::Semantic)?,
            name: name.to_owned(),
            category,
            domain: domain.to_owned(),
            verbal: String::new(),
            code: String::new(),
            inputs: Map::new(),
            outputs: Map::new(),
            origin: Origin::Learned,
            confidence: 1.0,
            observation_count: 0,
        })
    }

    /// The number under input `key`.
    pub fn input_f64(&self, key: &str) -> Option<f64> {
        self.inputs.get(key).and_then(Value::as_f64)
    }

    /// The number under output `key`.
    pub fn output_f64(&self, key: &str) -> Option<f64> {
        self.outputs.get(key).and_then(Value::as_f64)
    }

    /// The line a knowledge context shows for the record (seed 000):
    /// `"<name>" (math:<CATEGORY>, confidence=<c>): <verbal>`, the confidence to two decimals,
    /// the verbal form omitted when empty.
    ///
    /// ```
    /// use angular_gyrus::{MathCategory, MathRecord};
    /// use maxim_core::{RecordId, Timestamp};
    /// let mut r = MathRecord::new(RecordId::from_u128(1), "trend:tool:navigate:success", MathCategory::Pattern, "operational_statistics", Timestamp::from_secs(0))?;
    /// r.confidence = 0.73;
    /// r.verbal = "tool:navigate:success shows trend (R²=0.73, slope=-0.02/day)".into();
    /// assert_eq!(r.context_line(), "\"trend:tool:navigate:success\" (math:PATTERN, confidence=0.73): tool:navigate:success shows trend (R²=0.73, slope=-0.02/day)");
    /// # Ok::<(), angular_gyrus::Error>(())
    /// ```
    pub fn context_line(&self) -> String {
        let head = format!("\"{}\" (math:{}, confidence={:.2})", self.name, self.category, self.confidence);
        if self.verbal.is_empty() { head } else { format!("{head}: {}", self.verbal) }
    }

    /// Checks the record: names, confidence in `[0, 1]`, and no NaN or infinity anywhere in
    /// its inputs or outputs.
    pub fn validate(&self) -> Result<()> {
        check_name("name", &self.name)?;
        check_name("domain", &self.domain)?;
        check_unit("confidence", self.confidence)?;
        for (_, v) in self.inputs.iter().chain(self.outputs.iter()) {
            check_value(v)?;
        }
        Ok(())
    }

    /// The compressed form: name, category, domain, confidence and `edge_count` kept.
    pub fn compress(&self, edge_count: u32) -> CompressedMathRecord {
        CompressedMathRecord {
            meta: self.meta.clone(),
            name: self.name.clone(),
            category: self.category,
            domain: self.domain.clone(),
            origin: self.origin,
            confidence: self.confidence,
            edge_count,
        }
    }
}

/// What consolidation keeps of a [`MathRecord`]: the verbal and code forms, inputs and outputs
/// are dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressedMathRecord {
    /// The shared fields.
    pub meta: RecordMeta,
    /// The name.
    pub name: String,
    /// The category.
    pub category: MathCategory,
    /// The domain.
    pub domain: String,
    /// Where the content came from.
    pub origin: Origin,
    /// Confidence in `[0, 1]`.
    pub confidence: f64,
    /// Outgoing edges the record had when compressed.
    pub edge_count: u32,
}

/// A record as the layer holds it: full or compressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MathEntry {
    /// A full record.
    Full(MathRecord),
    /// A compressed record.
    Compressed(CompressedMathRecord),
}

impl MathEntry {
    /// The name.
    pub fn name(&self) -> &str {
        match self {
            Self::Full(r) => &r.name,
            Self::Compressed(c) => &c.name,
        }
    }

    /// The category.
    pub fn category(&self) -> MathCategory {
        match self {
            Self::Full(r) => r.category,
            Self::Compressed(c) => c.category,
        }
    }

    /// The domain.
    pub fn domain(&self) -> &str {
        match self {
            Self::Full(r) => &r.domain,
            Self::Compressed(c) => &c.domain,
        }
    }

    /// The origin.
    pub fn origin(&self) -> Origin {
        match self {
            Self::Full(r) => r.origin,
            Self::Compressed(c) => c.origin,
        }
    }

    /// The confidence.
    pub fn confidence(&self) -> f64 {
        match self {
            Self::Full(r) => r.confidence,
            Self::Compressed(c) => c.confidence,
        }
    }

    /// The full record, unless compressed.
    pub fn as_full(&self) -> Option<&MathRecord> {
        match self {
            Self::Full(r) => Some(r),
            Self::Compressed(_) => None,
        }
    }

    /// True for a built-in (firmware) record.
    pub fn is_built_in(&self) -> bool {
        self.origin() == Origin::BuiltIn
    }

    /// Checks the entry as [`MathRecord::validate`] does.
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Full(r) => r.validate(),
            Self::Compressed(c) => {
                check_name("name", &c.name)?;
                check_name("domain", &c.domain)?;
                check_unit("confidence", c.confidence)?;
                Ok(())
            }
        }
    }
}

impl From<MathRecord> for MathEntry {
    fn from(r: MathRecord) -> Self {
        Self::Full(r)
    }
}

impl MemoryRecord for MathEntry {
    fn meta(&self) -> &RecordMeta {
        match self {
            Self::Full(r) => &r.meta,
            Self::Compressed(c) => &c.meta,
        }
    }

    fn meta_mut(&mut self) -> &mut RecordMeta {
        match self {
            Self::Full(r) => &mut r.meta,
            Self::Compressed(c) => &mut c.meta,
        }
    }

    fn is_compressed(&self) -> bool {
        matches!(self, Self::Compressed(_))
    }

    fn describe(&self) -> String {
        format!("{} ({}, {})", self.name(), self.category(), self.domain())
    }
}

/// Checks a name: trimmed, 1 to [`MAX_NAME_LEN`] bytes; returns it trimmed.
pub(crate) fn check_name<'a>(field: &'static str, name: &'a str) -> Result<&'a str> {
    let t = name.trim();
    if t.is_empty() || t.len() > MAX_NAME_LEN {
        return Err(Error::BadName { field, max: MAX_NAME_LEN, len: t.len() });
    }
    Ok(t)
}

/// Refuses a NaN or an infinity anywhere in `v`.
pub(crate) fn check_value(v: &Value) -> Result<()> {
    match v {
        Value::Float(f) if !f.is_finite() => Err(Error::out_of_range("value", *f, "a finite number")),
        Value::List(items) => items.iter().try_for_each(check_value),
        Value::Map(m) => m.values().try_for_each(check_value),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_parse_and_print() {
        for c in MathCategory::ALL {
            assert_eq!(c.as_str().parse::<MathCategory>().unwrap(), c);
            assert_eq!(c.to_string(), c.as_str());
        }
        assert!(matches!("FORMULAS".parse::<MathCategory>(), Err(Error::Unknown { .. })));
    }

    #[test]
    fn validation_refuses_nan_anywhere() {
        let mut r =
            MathRecord::new(RecordId::from_u128(1), "x", MathCategory::Fact, "d", Timestamp::from_secs(0))
                .unwrap();
        assert!(r.validate().is_ok());
        let mut nested = Map::new();
        nested.insert("deep", Value::List(vec![Value::Float(f64::NAN)]));
        r.inputs.insert("m", Value::Map(nested));
        assert!(r.validate().is_err());
        r.inputs = Map::new();
        r.confidence = 1.5;
        assert!(r.validate().is_err());
        assert!(
            MathRecord::new(RecordId::from_u128(1), "  ", MathCategory::Fact, "d", Timestamp::from_secs(0))
                .is_err()
        );
    }

    #[test]
    fn compression_keeps_the_identity() {
        let r = MathRecord::new(
            RecordId::from_u128(9),
            "mean",
            MathCategory::Method,
            "statistics",
            Timestamp::from_secs(5),
        )
        .unwrap();
        let c = MathEntry::Compressed(r.compress(3));
        assert_eq!((c.name(), c.category(), c.domain()), ("mean", MathCategory::Method, "statistics"));
        assert!(c.is_compressed() && c.as_full().is_none());
        assert_eq!(c.describe(), "mean (METHOD, statistics)");
    }
}
