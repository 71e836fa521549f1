//! The hub's error: one enum over every layer's error, plus what only the hub can get wrong.

use std::path::PathBuf;

use maxim_core::RecordId;

/// What can go wrong in a [`MemoryHub`](super::MemoryHub) call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A core contract error (bad argument, unknown id, a file that does not load, ...).
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// The episodic layer refused.
    #[error(transparent)]
    Hippocampus(#[from] hippocampus::Error),
    /// The semantic layer refused.
    #[error(transparent)]
    Atl(#[from] atl::Error),
    /// The mathematical layer refused.
    #[error(transparent)]
    AngularGyrus(#[from] angular_gyrus::Error),
    /// The cross-layer graph refused.
    #[error(transparent)]
    CrossGraph(#[from] crossgraph::Error),
    /// Reward learning refused.
    #[error(transparent)]
    Nac(#[from] nac::Error),
    /// The promoter refused.
    #[error(transparent)]
    Promoter(#[from] promoter::Error),
    /// Procedural memory refused.
    #[error(transparent)]
    Cerebellum(#[from] cerebellum::Error),
    /// A record given to the hub belongs to another partition than the hub's.
    #[error("record of partition {given:?} given to the memory of partition {hub:?}")]
    PartitionMismatch {
        /// The hub's partition.
        hub: String,
        /// The record's.
        given: String,
    },
    /// No layer holds this record.
    #[error("no layer holds record {id}")]
    UnknownRecord {
        /// The id asked for.
        id: RecordId,
    },
    /// A file or directory of the memory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Another hub (in this or another process) has this partition open.
    #[error("the memory at {path} is open elsewhere; close it first")]
    InUse {
        /// The partition's directory.
        path: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// True when the error says an id is unknown, in whichever layer.
    pub fn is_not_found(&self) -> bool {
        match self {
            Self::UnknownRecord { .. } => true,
            Self::Core(e) => matches!(e, maxim_core::Error::NotFound { .. }),
            Self::Hippocampus(e) => e.is_not_found(),
            Self::Atl(e) => e.is_not_found(),
            Self::AngularGyrus(e) => e.is_not_found(),
            Self::CrossGraph(e) => e.is_not_found(),
            Self::Nac(e) => e.is_not_found(),
            Self::Promoter(e) => e.is_not_found(),
            Self::Cerebellum(e) => e.is_not_found(),
            _ => false,
        }
    }
}

/// The hub's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
