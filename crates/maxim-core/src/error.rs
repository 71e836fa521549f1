//! The one error type of `maxim-core`.
//!
//! Every fallible call in this crate returns [`Result`]. Errors carry their context as
//! fields (the path, the id, the field name), never as formatted strings, so a caller can
//! match on them. Leaf crates define their own error enums and wrap this one.

use std::path::PathBuf;

use crate::id::RecordId;

/// Why a snapshot file was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptReason {
    /// The file is shorter than the header or than the length the header declares.
    Truncated {
        /// Bytes the header (or the header itself) needs.
        expected: u64,
        /// Bytes the file holds.
        found: u64,
    },
    /// The file is longer than the header declares.
    TrailingBytes {
        /// Bytes the header declares.
        expected: u64,
        /// Bytes the file holds.
        found: u64,
    },
    /// The file does not start with the maxim snapshot magic.
    BadMagic,
    /// The checksum stored in the header does not match the file's contents.
    ChecksumMismatch {
        /// Checksum in the header.
        stored: u32,
        /// Checksum computed over the file.
        computed: u32,
    },
    /// The checksum holds but the header sets flags this build does not know.
    UnknownFlags {
        /// The flags field of the header.
        flags: u16,
    },
    /// The header is intact but the payload could not be decoded.
    Payload(String),
}

impl std::fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated { expected, found } => {
                write!(f, "truncated: {found} bytes where {expected} are needed")
            }
            Self::TrailingBytes { expected, found } => {
                write!(f, "{found} bytes where the header declares {expected}")
            }
            Self::BadMagic => f.write_str("not a maxim snapshot (bad magic)"),
            Self::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            Self::UnknownFlags { flags } => {
                write!(f, "the header sets flags {flags:#06x} that this build does not know")
            }
            Self::Payload(msg) => write!(f, "payload does not decode: {msg}"),
        }
    }
}

/// Errors of `maxim-core`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A number is NaN, infinite or outside its allowed range.
    #[error("{field} must be {expected}, got {value}")]
    OutOfRange {
        /// Name of the field or argument.
        field: &'static str,
        /// The value that was given.
        value: f64,
        /// The allowed range, in words (for example "in [0, 1]").
        expected: &'static str,
    },
    /// An argument is malformed (an empty name, an unparsable id, ...).
    #[error("invalid {field}: {reason}")]
    InvalidArgument {
        /// Name of the field or argument.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// No record with this id is held.
    #[error("no record with id {id}")]
    NotFound {
        /// The id that was asked for.
        id: RecordId,
    },
    /// A record with this id is already held.
    #[error("a record with id {id} is already stored")]
    Duplicate {
        /// The id given twice.
        id: RecordId,
    },
    /// An edge would close a cycle of REQUIRES/ENABLES dependencies.
    #[error("a {kind} edge {source_id} -> {target_id} would close a dependency cycle")]
    DependencyCycle {
        /// Source of the refused edge.
        source_id: RecordId,
        /// Target of the refused edge.
        target_id: RecordId,
        /// Edge kind (REQUIRES or ENABLES).
        kind: &'static str,
    },
    /// A file operation failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A snapshot file is damaged; it was moved aside when that was possible.
    #[error("snapshot {path} is corrupt ({reason}){}", kept_aside_note(kept_aside.as_ref()))]
    Corrupt {
        /// The file that was read.
        path: PathBuf,
        /// What is wrong with it.
        reason: CorruptReason,
        /// Where the bad file now lies, if it could be moved aside.
        kept_aside: Option<PathBuf>,
    },
    /// A snapshot file holds another kind of state than the one asked for.
    #[error("snapshot {path} holds {found:?}, expected {expected:?}{}", kept_aside_note(kept_aside.as_ref()))]
    WrongKind {
        /// The file that was read.
        path: PathBuf,
        /// The kind the caller asked for.
        expected: String,
        /// The kind in the file's header.
        found: String,
        /// Where the file now lies, if it could be moved aside.
        kept_aside: Option<PathBuf>,
    },
    /// A snapshot file was written by a newer (or unknown) format version.
    #[error("snapshot {path} has format version {found}, this build reads up to {supported}{}", kept_aside_note(kept_aside.as_ref()))]
    UnsupportedVersion {
        /// The file that was read.
        path: PathBuf,
        /// Version in the file's header.
        found: u16,
        /// Newest version this build reads.
        supported: u16,
        /// Where the file now lies, if it could be moved aside.
        kept_aside: Option<PathBuf>,
    },
    /// A save would overwrite a file this store neither created nor read (see
    /// [`ownership`](crate::ownership)); nothing was written.
    #[error(
        "refusing to overwrite {path}: this store neither created nor read it (load it first, or allow overwriting)"
    )]
    OverwriteRefused {
        /// The existing file.
        path: PathBuf,
    },
    /// Another open store holds the lock of this store directory (a second process, or a
    /// second open in this one).
    #[error("the store directory is in use: another open store holds {path}")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The journal starts after operations that the snapshot does not hold (for example
    /// because the snapshot came from an older backup): the state cannot be brought up to
    /// date. Nothing is moved; the files stay for a person to look at.
    #[error(
        "journal {path} follows operation {journal_base} but the snapshot holds operations up to {snapshot_seq} only: operations {} to {journal_base} are missing",
        snapshot_seq + 1
    )]
    JournalGap {
        /// The journal.
        path: PathBuf,
        /// The last operation the snapshot holds.
        snapshot_seq: u64,
        /// The operation the journal's first entry follows.
        journal_base: u64,
    },
    /// State could not be encoded for saving.
    #[error("cannot encode {kind} snapshot: {reason}")]
    Encode {
        /// Snapshot kind.
        kind: String,
        /// Encoder message.
        reason: String,
    },
    /// A layer-specific error, seen through the object-safe [`LayerView`](crate::layer::LayerView).
    #[error("{layer}: {source}")]
    Layer {
        /// The layer's name.
        layer: &'static str,
        /// The layer's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

fn kept_aside_note(kept: Option<&PathBuf>) -> String {
    kept.map(|p| format!("; the file was moved to {}", p.display())).unwrap_or_default()
}

/// `Result` with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// Builds an [`Error::InvalidArgument`].
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument { field, reason: reason.into() }
    }
}
