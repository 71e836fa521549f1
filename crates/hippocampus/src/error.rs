//! The one error type of the `hippocampus` crate.
//!
//! Most failures are the core's ([`maxim_core::Error`]: an out-of-range number, an unknown
//! id, a corrupt snapshot) and arrive wrapped in [`Error::Core`]; the few that only the
//! episodic layer knows have their own variants. Every error leaves the layer as it was.
//!
//! ```
//! use hippocampus::{Error, Hippocampus};
//! use maxim_core::{ManualClock, RecordId, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let err = hippo.remove(RecordId::from_u128(7)).unwrap_err();
//! assert!(err.is_not_found());
//! assert!(matches!(err, Error::Core(maxim_core::Error::NotFound { .. })));
//! # Ok::<(), hippocampus::Error>(())
//! ```

use maxim_core::RecordId;

use crate::hash::StateRef;

/// Errors of the episodic layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A core error: a number out of range, an unknown id, a corrupt or unreadable snapshot.
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// A compressed record was offered to `store`; compressed records only arise from sleep
    /// (or a snapshot).
    #[error("record {id} is compressed; only full episodes can be stored")]
    CompressedStore {
        /// The record's id.
        id: RecordId,
    },
    /// No state snapshot with this reference is held (it was never stored or was evicted).
    #[error("no state snapshot {state_ref}")]
    StateNotFound {
        /// The reference asked for.
        state_ref: StateRef,
    },
    /// Text similarity was asked for, but the configuration names no embedder.
    #[error("text similarity needs an embedder; the configuration has none")]
    NoEmbedder,
    /// A sleep by temporal cluster was asked for, but no temporal context (the SCN) is
    /// connected.
    #[error("sleeping by temporal cluster needs a temporal context; none is connected")]
    NoTemporalContext,
    /// A write to a layer open on a directory, while the layer is ahead of its files: the
    /// checkpoint after a consolidation failed.
    #[error(
        "the layer is ahead of its directory (a checkpoint after a consolidation failed: {reason}); call checkpoint() before writing"
    )]
    CheckpointNeeded {
        /// Why the checkpoint failed.
        reason: String,
    },
}

impl Error {
    /// True when the error says that a record id is unknown ([`maxim_core::Error::NotFound`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }

    /// True when the error says that an id is already stored ([`maxim_core::Error::Duplicate`]).
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::Duplicate { .. }))
    }
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself (so a hub sees `NotFound`, `Corrupt`, ... whatever
    /// layer it asked); the episodic layer's own errors arrive as [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "hippocampus", source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
