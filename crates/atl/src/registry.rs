//! The [`RelationshipRegistry`]: which relationship types exist and how they behave (§5.1).
//!
//! Fifteen types are built in, in the original's order, five of them symmetric. Agents may
//! propose more at run time; a proposed type is marked as not built-in and is saved with the
//! layer. Loading a saved registry adds only the names not known already, so a file can never
//! redefine a built-in type.
//!
//! Each type also says whether a concept may stand in it to itself. No built-in type allows it
//! (a mug is not a part, a cause, an alias or a correlate of itself); a proposed type may.
//!
//! ```
//! use atl::RelationshipRegistry;
//! let mut reg = RelationshipRegistry::new();
//! assert_eq!(reg.len(), 15);
//! assert!(reg.get("RELATED_TO").unwrap().symmetric);
//! assert!(!reg.get("IS_A").unwrap().symmetric);
//! assert!(reg.propose("CONTRADICTS", "the two claim opposite things", true)?);
//! assert!(!reg.propose("IS_A", "redefined", true)?); // built-ins are never replaced
//! let proposed = reg.get("CONTRADICTS").unwrap();
//! assert!(proposed.symmetric && !proposed.builtin);
//! assert!(reg.propose("not a name", "", false).is_err());
//! # Ok::<(), atl::Error>(())
//! ```

use maxim_core::EdgeKind;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The built-in relationship types: name, symmetric, description.
pub const BUILTIN_TYPES: [(&str, bool, &str); 15] = [
    ("IS_A", false, "the source is a kind of the target"),
    ("HAS_PART", false, "the target is a part of the source"),
    ("CAUSES", false, "the source causes the target"),
    ("PROPERTY_OF", false, "the source is a property of the target"),
    ("RELATED_TO", true, "the two are related"),
    ("ASSOCIATES", true, "the two are associated"),
    ("EXECUTES_WITH", false, "the source is carried out with the target"),
    ("ALIAS_OF", false, "the source is another name of the target"),
    ("IS_PROPORTIONAL_TO", true, "the two grow together in proportion"),
    ("CORRELATES_WITH", true, "the two are statistically correlated"),
    ("IS_INVERSE_OF", true, "each undoes the other"),
    ("TRANSFORMS_TO", false, "the source turns into the target"),
    ("TRENDS_WITH", true, "the two trend together over time"),
    ("PHASE_LOCKED_TO", false, "the source keeps a fixed phase to the target's cycle"),
    ("PREDICTS", false, "the source predicts the target"),
];

/// The longest relationship type name, in bytes.
pub const MAX_TYPE_NAME_LEN: usize = 64;

/// One relationship type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelationshipType {
    /// The name (`IS_A`): upper-case ASCII letters, digits and underscores.
    pub name: String,
    /// What it means.
    pub description: String,
    /// True when `a → b` implies `b → a` (defined, updated and removed in both directions).
    pub symmetric: bool,
    /// True for the fifteen built-in types.
    pub builtin: bool,
    /// True when a concept may stand in this relationship to itself.
    pub reflexive: bool,
}

impl RelationshipType {
    /// The graph edge kind that carries this type: CAUSES for `CAUSES`, ASSOCIATES otherwise.
    pub fn edge_kind(&self) -> EdgeKind {
        edge_kind_of(&self.name)
    }
}

/// The graph edge kind that carries relationship type `name` (§5.2).
pub fn edge_kind_of(name: &str) -> EdgeKind {
    if name == "CAUSES" { EdgeKind::Causes } else { EdgeKind::Associates }
}

/// The relationship types known to a layer; see the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct RelationshipRegistry {
    types: Vec<RelationshipType>,
    by_name: FxHashMap<Box<str>, usize>,
}

impl Default for RelationshipRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl RelationshipRegistry {
    /// The fifteen built-in types.
    pub fn new() -> Self {
        let mut reg = Self { types: Vec::with_capacity(BUILTIN_TYPES.len()), by_name: FxHashMap::default() };
        for (name, symmetric, description) in BUILTIN_TYPES {
            reg.insert(RelationshipType {
                name: name.to_owned(),
                description: description.to_owned(),
                symmetric,
                builtin: true,
                reflexive: false,
            });
        }
        reg
    }

    /// Number of types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Always false: the built-in types are always there.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The type named `name` (exactly).
    pub fn get(&self, name: &str) -> Option<&RelationshipType> {
        self.by_name.get(name).map(|&i| &self.types[i])
    }

    /// True when `name` is a known type.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The type named `name`, or [`Error::UnknownRelationship`].
    pub fn require(&self, name: &str) -> Result<&RelationshipType> {
        self.get(name).ok_or_else(|| Error::UnknownRelationship { name: name.to_owned() })
    }

    /// True when `name` is known and symmetric (false for unknown names, as in the original).
    pub fn is_symmetric(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.symmetric)
    }

    /// Every type: the built-ins in their order, then the proposed ones in the order proposed.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &RelationshipType> {
        self.types.iter()
    }

    /// Registers a new type proposed at run time (not built-in, not reflexive); false when the
    /// name is already known (nothing changes).
    ///
    /// Errors: a name that is not 1 to 64 bytes of `[A-Z0-9_]` starting with a letter
    /// ([`Error::InvalidRelationshipName`]).
    pub fn propose(&mut self, name: &str, description: &str, symmetric: bool) -> Result<bool> {
        self.propose_type(name, description, symmetric, false)
    }

    /// [`propose`](Self::propose) with the choice of allowing self-relationships.
    pub fn propose_type(
        &mut self,
        name: &str,
        description: &str,
        symmetric: bool,
        reflexive: bool,
    ) -> Result<bool> {
        check_type_name(name)?;
        if self.contains(name) {
            return Ok(false);
        }
        self.insert(RelationshipType {
            name: name.to_owned(),
            description: description.to_owned(),
            symmetric,
            builtin: false,
            reflexive,
        });
        Ok(true)
    }

    /// The proposed (not built-in) types, for saving.
    pub fn proposed(&self) -> impl Iterator<Item = &RelationshipType> {
        self.types.iter().filter(|t| !t.builtin)
    }

    /// Adds the types of `saved` whose names are not known yet, as not built-in; returns how
    /// many were added. Names already known (every built-in among them) are left as they are;
    /// malformed names are skipped.
    pub fn merge_saved(&mut self, saved: &[RelationshipType]) -> usize {
        let mut added = 0;
        for t in saved {
            if check_type_name(&t.name).is_ok() && !self.contains(&t.name) {
                self.insert(RelationshipType { builtin: false, ..t.clone() });
                added += 1;
            }
        }
        added
    }

    fn insert(&mut self, t: RelationshipType) {
        self.by_name.insert(t.name.clone().into_boxed_str(), self.types.len());
        self.types.push(t);
    }
}

/// Checks a relationship type name: 1 to 64 bytes of `[A-Z0-9_]`, starting with a letter.
pub fn check_type_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() || name.len() > MAX_TYPE_NAME_LEN {
        "must be 1 to 64 bytes"
    } else if !name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        "must be upper-case ASCII letters, digits and underscores"
    } else if !name.as_bytes()[0].is_ascii_uppercase() {
        "must start with a letter"
    } else {
        return Ok(());
    };
    Err(Error::InvalidRelationshipName { name: name.to_owned(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_in_order_with_their_symmetry() {
        let reg = RelationshipRegistry::new();
        let names: Vec<&str> = reg.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "IS_A",
                "HAS_PART",
                "CAUSES",
                "PROPERTY_OF",
                "RELATED_TO",
                "ASSOCIATES",
                "EXECUTES_WITH",
                "ALIAS_OF",
                "IS_PROPORTIONAL_TO",
                "CORRELATES_WITH",
                "IS_INVERSE_OF",
                "TRANSFORMS_TO",
                "TRENDS_WITH",
                "PHASE_LOCKED_TO",
                "PREDICTS"
            ]
        );
        let symmetric: Vec<&str> = reg.iter().filter(|t| t.symmetric).map(|t| t.name.as_str()).collect();
        assert_eq!(
            symmetric,
            [
                "RELATED_TO",
                "ASSOCIATES",
                "IS_PROPORTIONAL_TO",
                "CORRELATES_WITH",
                "IS_INVERSE_OF",
                "TRENDS_WITH"
            ]
        );
        assert!(reg.iter().all(|t| t.builtin && !t.reflexive));
        assert!(!reg.is_symmetric("UNKNOWN"));
        assert_eq!(reg.get("CAUSES").unwrap().edge_kind(), EdgeKind::Causes);
        assert_eq!(reg.get("IS_A").unwrap().edge_kind(), EdgeKind::Associates);
        assert!(matches!(reg.require("is_a"), Err(Error::UnknownRelationship { .. })));
    }

    #[test]
    fn loaded_types_never_override_builtins() {
        let mut reg = RelationshipRegistry::new();
        let saved = vec![
            RelationshipType {
                name: "IS_A".into(),
                description: "hijacked".into(),
                symmetric: true,
                builtin: true,
                reflexive: true,
            },
            RelationshipType {
                name: "SUPPORTS".into(),
                description: "evidence".into(),
                symmetric: false,
                builtin: true,
                reflexive: false,
            },
            RelationshipType {
                name: "bad name".into(),
                description: String::new(),
                symmetric: false,
                builtin: false,
                reflexive: false,
            },
        ];
        assert_eq!(reg.merge_saved(&saved), 1);
        let is_a = reg.get("IS_A").unwrap();
        assert!(!is_a.symmetric && is_a.description != "hijacked");
        assert!(!reg.get("SUPPORTS").unwrap().builtin, "a loaded type is never built-in");
        assert_eq!(reg.proposed().count(), 1);
        assert_eq!(reg.len(), 16);
    }

    #[test]
    fn names_are_checked() {
        let mut reg = RelationshipRegistry::new();
        for bad in ["", "lower", "1ST", "WITH SPACE", &"X".repeat(65)] {
            assert!(
                matches!(reg.propose(bad, "", false), Err(Error::InvalidRelationshipName { .. })),
                "{bad}"
            );
        }
        assert_eq!(reg.len(), 15);
        assert!(reg.propose_type("SIMILAR_TO_2", "", true, true).unwrap());
        assert!(reg.get("SIMILAR_TO_2").unwrap().reflexive);
    }
}
