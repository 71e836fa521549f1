//! What every record carries: [`RecordMeta`], its [`Source`] and [`Trust`], its
//! [`Partition`], and the checks that keep numbers in range.
//!
//! Seed 004: everything stored carries a source and a trust score in `[0, 1]`, so that when
//! something turns out to be wrong or hostile, everything else from the same source can be
//! found, and low-trust memories can inform but never authorise.
//!
//! ```
//! use maxim_core::{RecordMeta, RecordId, Source, Timestamp, TraceKind};
//! let now = Timestamp::from_secs(1_700_000_000);
//! let mut meta = RecordMeta::new(RecordId::from_u128(1), now, Source::Web("example.com".into()), 0.3, TraceKind::Episodic)?;
//! assert_eq!(meta.source.to_string(), "web:example.com");
//! assert_eq!(meta.access_count, 1);
//! meta.touch(now);
//! assert_eq!(meta.access_count, 2);
//! assert!(RecordMeta::new(RecordId::from_u128(2), now, Source::UserStated, f64::NAN, TraceKind::Semantic).is_err());
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::RecordId;
use crate::time::Timestamp;
use crate::trace::{TraceKind, TraceState};

/// Checks that `value` is a finite number in `[0, 1]`.
pub fn check_unit(field: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::OutOfRange { field, value, expected: "a finite number in [0, 1]" })
    }
}

/// Checks that `value` is a finite number in `[-1, 1]`.
pub fn check_signed_unit(field: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && (-1.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::OutOfRange { field, value, expected: "a finite number in [-1, 1]" })
    }
}

/// Checks that `value` is finite and not negative.
pub fn check_non_negative(field: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::OutOfRange { field, value, expected: "a finite number >= 0" })
    }
}

/// Checks that `value` is finite.
pub fn check_finite(field: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::OutOfRange { field, value, expected: "a finite number" })
    }
}

/// A trust score: a finite number in `[0, 1]`. 1 is user-confirmed; 0.3 is inferred from
/// untrusted text.
#[derive(Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Trust(f64);

impl Trust {
    /// Full trust (1.0).
    pub const FULL: Self = Self(1.0);

    /// The trust `value`; an error when it is NaN or outside `[0, 1]`.
    pub fn new(value: f64) -> Result<Self> {
        check_unit("trust", value).map(Self)
    }

    /// The number.
    pub const fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Trust {
    type Error = Error;
    fn try_from(value: f64) -> Result<Self> {
        Self::new(value)
    }
}

impl From<Trust> for f64 {
    fn from(t: Trust) -> f64 {
        t.0
    }
}

impl fmt::Debug for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Trust({})", self.0)
    }
}

/// Where a memory came from.
///
/// The text form (`Display`/`FromStr`, and serde in human-readable formats such as JSON) is
/// one of `user_stated`, `tool_result`, `web:<domain>`, `episodic`, `agent_inference`,
/// `direct_ingestion`, `built_in`, or any other non-empty name; parsing it validates and
/// normalises (domains are lowercased, names trimmed). Binary formats (the snapshot codec)
/// store the variant itself, so whatever was saved loads back exactly. Build the
/// text-carrying variants with [`Source::web`] and [`Source::other`] to get the same checks
/// as parsing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// The user said it.
    UserStated,
    /// A tool returned it.
    ToolResult,
    /// Read on the web, from this domain.
    Web(String),
    /// Formed from the agent's own episodes.
    Episodic,
    /// Inferred by the agent (for example by the statistician).
    AgentInference,
    /// Imported from documents (RAG ingestion).
    DirectIngestion,
    /// Shipped with the program (seeded constants, firmware).
    BuiltIn,
    /// Anything else, by name.
    Other(String),
}

impl Source {
    /// A web source for `domain` (trimmed, lowercased); an error when it is empty.
    pub fn web(domain: &str) -> Result<Self> {
        let domain = domain.trim();
        if domain.is_empty() {
            return Err(Error::invalid("source", "web source without a domain"));
        }
        Ok(Self::Web(domain.to_ascii_lowercase()))
    }

    /// A source named `name` (trimmed), parsed as the text form is: a built-in name gives its
    /// variant, `web:<domain>` a web source; an error when it is empty.
    pub fn other(name: &str) -> Result<Self> {
        name.parse()
    }

    /// The trust a record from this source gets when the caller has nothing better:
    /// user_stated and built_in 1.0, tool_result 0.8, direct_ingestion 0.7, episodic 0.6,
    /// agent_inference 0.5, web and other sources 0.3.
    pub fn default_trust(&self) -> Trust {
        Trust(match self {
            Self::UserStated | Self::BuiltIn => 1.0,
            Self::ToolResult => 0.8,
            Self::DirectIngestion => 0.7,
            Self::Episodic => 0.6,
            Self::AgentInference => 0.5,
            Self::Web(_) | Self::Other(_) => 0.3,
        })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UserStated => f.write_str("user_stated"),
            Self::ToolResult => f.write_str("tool_result"),
            Self::Web(domain) => write!(f, "web:{domain}"),
            Self::Episodic => f.write_str("episodic"),
            Self::AgentInference => f.write_str("agent_inference"),
            Self::DirectIngestion => f.write_str("direct_ingestion"),
            Self::BuiltIn => f.write_str("built_in"),
            Self::Other(name) => f.write_str(name),
        }
    }
}

impl FromStr for Source {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        Ok(match s {
            "" => return Err(Error::invalid("source", "empty")),
            "user_stated" => Self::UserStated,
            "tool_result" => Self::ToolResult,
            "episodic" => Self::Episodic,
            "agent_inference" => Self::AgentInference,
            "direct_ingestion" => Self::DirectIngestion,
            "built_in" => Self::BuiltIn,
            other => match other.strip_prefix("web:") {
                Some(domain) => Self::web(domain)?,
                None => Self::Other(other.to_owned()),
            },
        })
    }
}

/// The binary serde form of [`Source`]: the variant itself (the order of the variants is
/// the wire format; append, never reorder).
#[derive(Serialize)]
enum SourceRef<'a> {
    UserStated,
    ToolResult,
    Web(&'a str),
    Episodic,
    AgentInference,
    DirectIngestion,
    BuiltIn,
    Other(&'a str),
}

/// The owned twin of [`SourceRef`], for reading.
#[derive(Deserialize)]
enum SourceRepr {
    UserStated,
    ToolResult,
    Web(String),
    Episodic,
    AgentInference,
    DirectIngestion,
    BuiltIn,
    Other(String),
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return serializer.collect_str(self);
        }
        match self {
            Self::UserStated => SourceRef::UserStated,
            Self::ToolResult => SourceRef::ToolResult,
            Self::Web(domain) => SourceRef::Web(domain),
            Self::Episodic => SourceRef::Episodic,
            Self::AgentInference => SourceRef::AgentInference,
            Self::DirectIngestion => SourceRef::DirectIngestion,
            Self::BuiltIn => SourceRef::BuiltIn,
            Self::Other(name) => SourceRef::Other(name),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            return text.parse().map_err(serde::de::Error::custom);
        }
        Ok(match SourceRepr::deserialize(deserializer)? {
            SourceRepr::UserStated => Self::UserStated,
            SourceRepr::ToolResult => Self::ToolResult,
            SourceRepr::Web(domain) => Self::Web(domain),
            SourceRepr::Episodic => Self::Episodic,
            SourceRepr::AgentInference => Self::AgentInference,
            SourceRepr::DirectIngestion => Self::DirectIngestion,
            SourceRepr::BuiltIn => Self::BuiltIn,
            SourceRepr::Other(name) => Self::Other(name),
        })
    }
}

/// Whose memory a record belongs to (an agent or a user). Non-empty, at most 128 bytes, no
/// control characters. The default partition is `default`.
///
/// Cloning is a reference-count increment: every record of a partition shares one name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Partition(Arc<str>);

static DEFAULT_PARTITION: LazyLock<Partition> = LazyLock::new(|| Partition(Arc::from("default")));

impl Partition {
    /// The partition named `name`.
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
            return Err(Error::invalid(
                "partition",
                format!("{name:?} must be 1 to 128 bytes without control characters"),
            ));
        }
        Ok(Self(Arc::from(name)))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Partition {
    fn default() -> Self {
        DEFAULT_PARTITION.clone()
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Partition {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        Self::new(s)
    }
}

impl From<Partition> for String {
    fn from(p: Partition) -> String {
        p.0.to_string()
    }
}

/// The fields every record of every layer carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordMeta {
    /// The record's id.
    pub id: RecordId,
    /// Whose memory it is.
    pub partition: Partition,
    /// When the remembered thing happened.
    pub timestamp: Timestamp,
    /// When the record was made.
    pub created_at: Timestamp,
    /// When the record was last accessed (drives access-based decay).
    pub accessed_at: Timestamp,
    /// How many times it was accessed; a new record starts at 1.
    pub access_count: u32,
    /// Consolidated into long-term memory: resistant to decay, not immune.
    pub long_term: bool,
    /// When it was made long-term.
    pub consolidated_at: Option<Timestamp>,
    /// Where it came from.
    pub source: Source,
    /// How far it may be trusted.
    pub trust: Trust,
    /// Its memory trace (decay curve, emotion, reinforcements), after `spec/lex-memory.md`.
    pub trace: TraceState,
}

impl RecordMeta {
    /// A record made `now`, of `source` with `trust`, whose trace starts as `kind`.
    /// Event, creation and access times are all `now`; the access count is 1.
    pub fn new(id: RecordId, now: Timestamp, source: Source, trust: f64, kind: TraceKind) -> Result<Self> {
        Ok(Self {
            id,
            partition: Partition::default(),
            timestamp: now,
            created_at: now,
            accessed_at: now,
            access_count: 1,
            long_term: false,
            consolidated_at: None,
            source,
            trust: Trust::new(trust)?,
            trace: TraceState::new(kind, now),
        })
    }

    /// The same meta with the event time set to `at`.
    pub fn with_timestamp(mut self, at: Timestamp) -> Self {
        self.timestamp = at;
        self
    }

    /// The same meta in `partition`.
    pub fn with_partition(mut self, partition: Partition) -> Self {
        self.partition = partition;
        self
    }

    /// Records an access: `accessed_at = now`, `access_count + 1`, and a rehearsal of the
    /// trace ([`TraceState::rehearse`]): its `last_reinforced` moves up to `now`, which keeps it in
    /// the hot tier and makes its retrieval score recent. Neither its strength nor its decay
    /// changes: only a reinforcement does that.
    pub fn touch(&mut self, now: Timestamp) {
        self.accessed_at = now;
        self.access_count = self.access_count.saturating_add(1);
        self.trace.rehearse(now);
    }

    /// Marks the record long-term, consolidated `now`. Returns false if it already was.
    pub fn promote(&mut self, now: Timestamp) -> bool {
        if self.long_term {
            return false;
        }
        self.long_term = true;
        self.consolidated_at = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_checks_reject_nan_infinity_and_out_of_range() {
        for bad in [f64::NAN, f64::INFINITY, -0.01, 1.01] {
            assert!(check_unit("x", bad).is_err(), "{bad}");
        }
        assert_eq!(check_unit("x", 0.0).unwrap(), 0.0);
        assert_eq!(check_unit("x", 1.0).unwrap(), 1.0);
        assert!(check_signed_unit("v", -1.0).is_ok());
        assert!(check_signed_unit("v", -1.5).is_err());
        assert!(check_non_negative("w", -0.0).is_ok());
        assert!(check_non_negative("w", -1e-9).is_err());
        let err = check_unit("salience", 2.0).unwrap_err();
        assert_eq!(err.to_string(), "salience must be a finite number in [0, 1], got 2");
    }

    #[test]
    fn sources_round_trip_through_text() {
        for text in [
            "user_stated",
            "tool_result",
            "web:example.com",
            "episodic",
            "agent_inference",
            "direct_ingestion",
            "built_in",
            "sensor_array",
        ] {
            let s: Source = text.parse().unwrap();
            assert_eq!(s.to_string(), text);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Source>(&json).unwrap(), s);
        }
        assert_eq!("web:Example.COM".parse::<Source>().unwrap(), Source::Web("example.com".into()));
        assert!("".parse::<Source>().is_err());
        assert!("web:".parse::<Source>().is_err());
        assert!(Source::web("  ").is_err());
        assert_eq!(Source::web(" A.org ").unwrap(), Source::Web("a.org".into()));
        assert_eq!(Source::other("tool_result").unwrap(), Source::ToolResult);
        assert!(Source::other("").is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_source_survives_the_snapshot_codec_exactly(text in ".*", variant in 0..8u8) {
            let source = match variant {
                0 => Source::UserStated,
                1 => Source::ToolResult,
                2 => Source::Web(text),
                3 => Source::Episodic,
                4 => Source::AgentInference,
                5 => Source::DirectIngestion,
                6 => Source::BuiltIn,
                _ => Source::Other(text),
            };
            let bytes = postcard::to_stdvec(&source).unwrap();
            proptest::prop_assert_eq!(postcard::from_bytes::<Source>(&bytes).unwrap(), source);
        }
    }

    #[test]
    fn default_trust_orders_sources() {
        assert_eq!(Source::UserStated.default_trust().get(), 1.0);
        assert!(Source::ToolResult.default_trust() > Source::Web("x".into()).default_trust());
    }

    #[test]
    fn trust_refuses_bad_values_even_from_serde() {
        assert!(Trust::new(1.2).is_err());
        assert!(serde_json::from_str::<Trust>("1.5").is_err());
        assert_eq!(serde_json::from_str::<Trust>("0.25").unwrap().get(), 0.25);
    }

    #[test]
    fn partitions_are_validated() {
        assert_eq!(Partition::default().as_str(), "default");
        assert!(Partition::new("").is_err());
        assert!(Partition::new("a\nb").is_err());
        assert!(Partition::new("x".repeat(129)).is_err());
        assert!(serde_json::from_str::<Partition>("\"\"").is_err());
        assert_eq!(Partition::new("agent-7").unwrap().to_string(), "agent-7");
    }

    #[test]
    fn touch_and_promote_update_tracking() {
        let t0 = Timestamp::from_secs(10);
        let mut m =
            RecordMeta::new(RecordId::from_u128(1), t0, Source::Episodic, 0.6, TraceKind::Episodic).unwrap();
        assert_eq!((m.access_count, m.accessed_at), (1, t0));
        let t1 = Timestamp::from_secs(20);
        m.touch(t1);
        assert_eq!((m.access_count, m.accessed_at), (2, t1));
        assert!(m.promote(t1));
        assert!(!m.promote(Timestamp::from_secs(30)));
        assert_eq!(m.consolidated_at, Some(t1));
        assert_eq!(m.trace.last_reinforced(), t1);
    }
}
