//! The one error type of the `nac` crate.
//!
//! Every fallible call returns [`Result`]. Errors carry their context as fields (the link id,
//! the field name), and a failed call changes nothing. Errors of `maxim-core` (out-of-range
//! numbers, malformed arguments, corrupt snapshots) arrive wrapped in [`Error::Core`].
//!
//! ```
//! use nac::{Error, LinkId};
//! let err = Error::UnknownLink { id: LinkId::from_u64(0xab) };
//! assert_eq!(err.to_string(), "no causal link with id 00000000000000ab");
//! assert!(err.is_not_found());
//! let core: Error = maxim_core::Error::invalid("event_signature", "empty").into();
//! assert!(matches!(core, Error::Core(maxim_core::Error::InvalidArgument { .. })));
//! ```

use crate::link::LinkId;
use crate::store::EventId;

/// Errors of the reward-learning store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core`: a number out of range, a malformed argument, an I/O failure,
    /// a corrupt snapshot, ...
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// No causal link with this id is held.
    #[error("no causal link with id {id}")]
    UnknownLink {
        /// The id asked for.
        id: LinkId,
    },
    /// No pending event with this id is held (it was never recorded, was already linked to an
    /// outcome, or aged out of the temporal window).
    #[error("no pending event with id {id}")]
    UnknownEvent {
        /// The id asked for.
        id: EventId,
    },
    /// Two different link keys hash to the same 64-bit link id. The observation is refused
    /// rather than merged into the wrong link.
    #[error("link key collides with link {id} held for another key")]
    LinkIdCollision {
        /// The id both keys hash to.
        id: LinkId,
    },
}

impl Error {
    /// Whether the error says that an id is unknown ([`Error::UnknownLink`],
    /// [`Error::UnknownEvent`] or a core [`maxim_core::Error::NotFound`]).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::UnknownLink { .. }
                | Self::UnknownEvent { .. }
                | Self::Core(maxim_core::Error::NotFound { .. })
        )
    }

    /// An [`Error::Core`] wrapping [`maxim_core::Error::OutOfRange`].
    pub(crate) fn out_of_range(field: &'static str, value: f64, expected: &'static str) -> Self {
        Self::Core(maxim_core::Error::OutOfRange { field, value, expected })
    }

    /// An [`Error::Core`] wrapping [`maxim_core::Error::InvalidArgument`].
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Core(maxim_core::Error::invalid(field, reason))
    }
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself; the store's own errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "nac", source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
