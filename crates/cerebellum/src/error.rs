//! The one error type of the `cerebellum` crate.
//!
//! Every fallible call returns [`Result`]. Errors carry their context as fields (the skill's
//! id, its status, the refusal), and a failed call changes nothing. Errors of `maxim-core`
//! (out-of-range numbers, unknown ids, duplicate ids, corrupt snapshots) arrive wrapped in
//! [`Error::Core`]: an unknown skill is always `Error::Core(maxim_core::Error::NotFound { id })`.
//!
//! ```
//! use cerebellum::{Error, SkillStatus};
//! use maxim_core::RecordId;
//! let id = RecordId::from_u128(7);
//! let err = Error::InvalidStatus { id, status: SkillStatus::Retired, action: "record a use of" };
//! assert_eq!(err.to_string(), "skill 00000000-0000-0000-0000-000000000007 is retired: cannot record a use of it");
//! let missing: Error = maxim_core::Error::NotFound { id }.into();
//! assert!(missing.is_not_found());
//! assert!(matches!(maxim_core::Error::from(missing), maxim_core::Error::NotFound { .. }));
//! ```

use maxim_core::RecordId;

use crate::skill::{Refusal, SkillStatus};

/// The layer's name, as errors seen through the core name it.
const LAYER: &str = "cerebellum";

/// Errors of the procedural layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core`: a number out of range, an empty name, an unknown or duplicate
    /// id, an I/O failure, a corrupt snapshot, ...
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// The skill's status does not allow the operation (a retired skill cannot be used,
    /// confirmed or retired again).
    #[error("skill {id} is {status}: cannot {action} it")]
    InvalidStatus {
        /// The skill.
        id: RecordId,
        /// Its status.
        status: SkillStatus,
        /// What was asked (`record a use of`, `confirm`, ...).
        action: &'static str,
    },
    /// `confirm` of a skill that has no write step: only write skills need a human.
    #[error("skill {id} has no write step: there is nothing to confirm")]
    NothingToConfirm {
        /// The skill.
        id: RecordId,
    },
    /// `confirm` of a skill a human already confirmed.
    #[error("skill {id} was already confirmed by {by:?}")]
    AlreadyConfirmed {
        /// The skill.
        id: RecordId,
        /// Who confirmed it.
        by: String,
    },
    /// A skill may not be executed automatically (see [`Cerebellum::authorise`](crate::Cerebellum::authorise)).
    #[error("skill {id} is not authorised: {reason}")]
    NotAuthorised {
        /// The skill.
        id: RecordId,
        /// Why not.
        reason: Refusal,
    },
    /// A stored record claims a status the gate forbids: an active skill with a write step
    /// and no human confirmation, while confirmation is required.
    #[error("skill {id} has a write step and no confirmation: it cannot be active")]
    ConfirmationRequired {
        /// The skill.
        id: RecordId,
    },
}

impl Error {
    /// True for an unknown id (`Error::Core(maxim_core::Error::NotFound { .. })`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }

    /// An [`Error::Core`] wrapping [`maxim_core::Error::InvalidArgument`].
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Core(maxim_core::Error::invalid(field, reason))
    }

    /// An [`Error::Core`] wrapping [`maxim_core::Error::NotFound`].
    pub(crate) fn not_found(id: RecordId) -> Self {
        Self::Core(maxim_core::Error::NotFound { id })
    }
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself (so a hub sees `NotFound`, `Duplicate`, `Corrupt`,
    /// ... whatever layer it asked); the layer's own errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: LAYER, source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
