//! The one error type of the `crossgraph` crate.
//!
//! Every fallible call returns [`Result`]. Errors carry their context as fields, and a failed
//! call changes nothing. Errors of `maxim-core` (a NaN or negative weight, a corrupt snapshot,
//! an I/O failure) arrive wrapped in [`Error::Core`].
//!
//! ```
//! use crossgraph::Error;
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//! let record = LayerRecord::new(LayerKind::Atl, RecordId::from_u128(7));
//! let err = Error::SelfLoop { record, kind: CrossEdgeKind::InstanceOf };
//! assert_eq!(
//!     err.to_string(),
//!     "a INSTANCE_OF edge may not join atl:00000000-0000-0000-0000-000000000007 to itself"
//! );
//! let core: maxim_core::Error = err.into();
//! assert!(matches!(core, maxim_core::Error::Layer { layer: "crossgraph", .. }));
//! ```

use maxim_core::{CrossEdgeKind, LayerRecord};

use crate::kind::kind_name;

/// Errors of the cross-layer graph.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core`: a weight or metadata number out of range, an invalid
    /// argument, an I/O failure, a corrupt snapshot, ...
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// An edge from a record to itself, of a kind other than TEMPORALLY_CORRELATES.
    #[error("a {} edge may not join {record} to itself", kind_name(*kind))]
    SelfLoop {
        /// The record at both ends.
        record: LayerRecord,
        /// The edge's kind.
        kind: CrossEdgeKind,
    },
    /// A name that is not one of the seven edge types.
    #[error("unknown cross-layer edge type {name:?}")]
    UnknownEdgeKind {
        /// The name given.
        name: String,
    },
    /// A name that is not one of the layers.
    #[error("unknown layer {name:?}")]
    UnknownLayer {
        /// The name given.
        name: String,
    },
    /// The graph holds as many edges or records as it can index.
    #[error("the cross-layer graph is full: at most {limit} {what}")]
    Full {
        /// What ran out (`edges` or `records`).
        what: &'static str,
        /// The limit.
        limit: usize,
    },
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself; the graph's own errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: crate::SNAPSHOT_KIND, source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True when the error is [`maxim_core::Error::NotFound`] (inside [`Error::Core`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }
}
