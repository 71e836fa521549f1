//! The keys of the context index: [`IndexKey`], written as the original wrote them
//! (`goal:find mug`, `tool:look`, `success:True`, `mode:observe`, `object:mug`,
//! `person:Ana`), their [`KeyKind`]s, and [`IndexedKeys`], which kinds a layer indexes.
//!
//! ```
//! use hippocampus::IndexKey;
//! let key: IndexKey = "goal:find mug".parse()?;
//! assert_eq!(key, IndexKey::Goal("find mug".into()));
//! assert_eq!(IndexKey::Success(Some(true)).to_string(), "success:True");
//! assert_eq!("success:None".parse::<IndexKey>()?, IndexKey::Success(None));
//! assert!("colour:red".parse::<IndexKey>().is_err());
//! # Ok::<(), maxim_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The six kinds of index key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KeyKind {
    /// `goal:<active goal>`.
    Goal,
    /// `tool:<tool name>`.
    Tool,
    /// `success:True|False|None`.
    Success,
    /// `mode:<active mode>`.
    Mode,
    /// `object:<detected object>`.
    Object,
    /// `person:<detected person>`.
    Person,
}

impl KeyKind {
    /// Every kind.
    pub const ALL: [Self; 6] =
        [Self::Goal, Self::Tool, Self::Success, Self::Mode, Self::Object, Self::Person];

    /// The prefix before the colon.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::Goal => "goal",
            Self::Tool => "tool",
            Self::Success => "success",
            Self::Mode => "mode",
            Self::Object => "object",
            Self::Person => "person",
        }
    }

    /// True for the kinds association formation and similarity recall compare (objects and
    /// people).
    pub const fn is_associative(self) -> bool {
        matches!(self, Self::Object | Self::Person)
    }

    pub(crate) const fn slot(self) -> usize {
        self as usize
    }
}

/// A key of the context index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexKey {
    /// `goal:<g>`: the active goal.
    Goal(String),
    /// `tool:<t>`: the tool.
    Tool(String),
    /// `success:True`, `success:False` or `success:None`.
    Success(Option<bool>),
    /// `mode:<m>`: the active mode.
    Mode(String),
    /// `object:<o>`: a detected object (case preserved).
    Object(String),
    /// `person:<p>`: a detected person.
    Person(String),
}

impl IndexKey {
    /// The key's kind.
    pub fn kind(&self) -> KeyKind {
        match self {
            Self::Goal(_) => KeyKind::Goal,
            Self::Tool(_) => KeyKind::Tool,
            Self::Success(_) => KeyKind::Success,
            Self::Mode(_) => KeyKind::Mode,
            Self::Object(_) => KeyKind::Object,
            Self::Person(_) => KeyKind::Person,
        }
    }

    /// The text after the colon.
    pub fn text(&self) -> &str {
        match self {
            Self::Goal(s) | Self::Tool(s) | Self::Mode(s) | Self::Object(s) | Self::Person(s) => s,
            Self::Success(v) => success_text(*v),
        }
    }

    /// The key of `kind` with the text `text`; `success` texts must be `True`, `False` or
    /// `None`.
    pub fn new(kind: KeyKind, text: &str) -> maxim_core::Result<Self> {
        Ok(match kind {
            KeyKind::Goal => Self::Goal(text.to_owned()),
            KeyKind::Tool => Self::Tool(text.to_owned()),
            KeyKind::Mode => Self::Mode(text.to_owned()),
            KeyKind::Object => Self::Object(text.to_owned()),
            KeyKind::Person => Self::Person(text.to_owned()),
            KeyKind::Success => Self::Success(match text {
                "True" => Some(true),
                "False" => Some(false),
                "None" => None,
                other => {
                    return Err(maxim_core::Error::invalid(
                        "index key",
                        format!("success:{other} is not success:True, success:False or success:None"),
                    ));
                }
            }),
        })
    }
}

/// The text of a success key: Python's spelling of the tri-state flag.
pub(crate) const fn success_text(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "None",
    }
}

impl fmt::Display for IndexKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind().prefix(), self.text())
    }
}

impl FromStr for IndexKey {
    type Err = maxim_core::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (prefix, text) = s
            .split_once(':')
            .ok_or_else(|| maxim_core::Error::invalid("index key", format!("{s:?} has no `kind:` prefix")))?;
        let kind = KeyKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .ok_or_else(|| maxim_core::Error::invalid("index key", format!("unknown key kind {prefix:?}")))?;
        Self::new(kind, text)
    }
}

/// Which kinds of key the layer indexes (default: all six, as the original's
/// `indexed_keys`). A recall filter on a kind that is not indexed scans every episode;
/// without object and person keys no associations form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedKeys {
    /// Index `goal:` keys.
    pub goal: bool,
    /// Index `tool:` keys.
    pub tool: bool,
    /// Index `success:` keys.
    pub success: bool,
    /// Index `mode:` keys.
    pub mode: bool,
    /// Index `object:` keys.
    pub object: bool,
    /// Index `person:` keys.
    pub person: bool,
}

impl Default for IndexedKeys {
    fn default() -> Self {
        Self { goal: true, tool: true, success: true, mode: true, object: true, person: true }
    }
}

impl IndexedKeys {
    /// Whether `kind` is indexed.
    pub const fn contains(&self, kind: KeyKind) -> bool {
        match kind {
            KeyKind::Goal => self.goal,
            KeyKind::Tool => self.tool,
            KeyKind::Success => self.success,
            KeyKind::Mode => self.mode,
            KeyKind::Object => self.object,
            KeyKind::Person => self.person,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print() {
        for text in
            ["goal:find mug", "tool:look", "success:False", "mode:observe", "object:Mug", "person:Ana"]
        {
            assert_eq!(text.parse::<IndexKey>().unwrap().to_string(), text);
        }
        assert!("success:yes".parse::<IndexKey>().is_err());
        assert!("nokind".parse::<IndexKey>().is_err());
        assert!(KeyKind::Person.is_associative() && !KeyKind::Goal.is_associative());
    }
}
