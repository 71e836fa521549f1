//! The one error type of the `atl` crate.
//!
//! Every fallible call returns [`Result`]. Errors carry their context as fields (the id, the
//! relationship name, the property key), never as formatted strings, and a failed call changes
//! nothing. Errors of `maxim-core` (out-of-range numbers, unknown ids, corrupt snapshots) arrive
//! wrapped in [`Error::Core`].
//!
//! ```
//! use atl::Error;
//! use maxim_core::RecordId;
//! let err: Error = maxim_core::Error::NotFound { id: RecordId::from_u128(7) }.into();
//! assert!(err.is_not_found());
//! assert_eq!(err.to_string(), "no record with id 00000000-0000-0000-0000-000000000007");
//! let core: Error = maxim_core::Error::invalid("name", "empty").into();
//! assert!(matches!(core, Error::Core(maxim_core::Error::InvalidArgument { .. })));
//! ```

use maxim_core::RecordId;

/// Errors of the semantic layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core`: a number out of range, an unknown record, an I/O failure, a
    /// corrupt snapshot, ...
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// A concept name (or category, alias, property key) is empty once normalised: it holds no
    /// letter and no digit.
    #[error("{field} must contain a letter or a digit, got {value:?}")]
    EmptyName {
        /// Which name it was (`name`, `category`, `alias`, `property key`, ...).
        field: &'static str,
        /// The value given.
        value: String,
    },
    /// The operation needs the full concept, and this one was compressed by consolidation.
    #[error("concept {id} is compressed and no longer holds {what}")]
    Compressed {
        /// The concept.
        id: RecordId,
        /// What the operation needed (`properties`, `memory references`, ...).
        what: &'static str,
    },
    /// The relationship type is not registered.
    #[error("unknown relationship type {name:?}")]
    UnknownRelationship {
        /// The name given.
        name: String,
    },
    /// A proposed relationship type name is malformed.
    #[error("invalid relationship type name {name:?}: {reason}")]
    InvalidRelationshipName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A concept may not stand in this relationship to itself.
    #[error("concept {id} cannot be {relationship} of itself")]
    SelfRelationship {
        /// The concept at both ends.
        id: RecordId,
        /// The relationship type.
        relationship: String,
    },
    /// The concept holds no claim for this property (or none with the given value or source).
    #[error("concept {id} has no matching claim for property {key:?}")]
    NoSuchClaim {
        /// The concept.
        id: RecordId,
        /// The property key.
        key: String,
    },
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself (so a hub sees the same typed errors, `NotFound`,
    /// `Duplicate`, ..., whatever layer it asked); the ATL's other errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "atl", source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True when the error says that a record id is unknown ([`maxim_core::Error::NotFound`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }

    /// True when the error says that an id is already stored ([`maxim_core::Error::Duplicate`]).
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::Duplicate { .. }))
    }

    /// The [`maxim_core::Error::NotFound`] error for `id`.
    pub(crate) fn not_found(id: RecordId) -> Self {
        Self::Core(maxim_core::Error::NotFound { id })
    }

    /// An [`Error::Core`] wrapping [`maxim_core::Error::OutOfRange`].
    pub(crate) fn out_of_range(field: &'static str, value: f64, expected: &'static str) -> Self {
        Self::Core(maxim_core::Error::OutOfRange { field, value, expected })
    }
}
