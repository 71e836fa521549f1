//! The snapshot codec: one file format and one commit protocol for every piece of saved state.
//!
//! Every layer, the cross-layer graph, NAc, the statistician, the SCN and the skill store save
//! through this module. A snapshot file is a fixed 40-byte header (magic, format version,
//! flags, kind, payload length, CRC-32) followed by the state encoded with `postcard`.
//! `docs/durability.md` gives the byte layout and the commit protocol in full.
//!
//! - [`save`] writes atomically: a temporary file in the same directory, `fsync`, the
//!   previous file kept as `<name>.backup`, `rename` over the target, `fsync` of the
//!   directory. A failed save leaves the old file as it was.
//! - [`load`] verifies the length, the checksum, the version and the kind before it decodes,
//!   and returns a value only when everything holds. A rejected file is moved aside to
//!   `<name>.corrupt-<UTC stamp>` and the typed error says where it went.
//! - [`load_with_recovery`] falls back to `<name>.backup` when the main file is rejected.
//! - [`encode`] and [`decode`] do the same on bytes; [`inspect`] describes a file without
//!   decoding its payload.
//!
//! ```
//! use maxim_core::codec;
//! use maxim_core::{CorruptReason, Error};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("scn.snap");
//! let state: Vec<(u64, String)> = vec![(1, "mug".into()), (2, "kitchen".into())];
//! let report = codec::save(&path, "scn", &state)?;
//! assert_eq!(report.backup, None);
//! assert_eq!(codec::load::<Vec<(u64, String)>>(&path, "scn")?, state);
//!
//! // Flip one bit of the payload: the load is refused and the file is moved aside.
//! let mut bytes = std::fs::read(&path)?;
//! *bytes.last_mut().unwrap() ^= 0x04;
//! std::fs::write(&path, &bytes)?;
//! match codec::load::<Vec<(u64, String)>>(&path, "scn") {
//!     Err(Error::Corrupt { reason: CorruptReason::ChecksumMismatch { .. }, kept_aside: Some(aside), .. }) => {
//!         assert!(aside.exists() && !path.exists());
//!     }
//!     other => panic!("expected a checksum mismatch, got {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{CorruptReason, Error, Result};
use crate::time::{Clock, SystemClock, Timestamp};

/// The eight bytes every snapshot file starts with.
pub const MAGIC: [u8; 8] = *b"MAXIMSNP";
/// The format version this build writes.
pub const CURRENT_VERSION: u16 = 1;
/// The oldest format version this build reads.
pub const OLDEST_SUPPORTED_VERSION: u16 = 1;
/// Size of the header in bytes; the payload starts at this offset.
pub const HEADER_LEN: usize = 40;
/// Longest kind name in bytes (the size of the header's kind field).
pub const MAX_KIND_LEN: usize = 16;
/// Suffix of the file that holds the previous good snapshot.
pub const BACKUP_SUFFIX: &str = ".backup";
/// What separates a file's name from the stamp of its kept-aside copy.
pub const CORRUPT_INFIX: &str = ".corrupt-";

const VERSION_AT: usize = 8;
const FLAGS_AT: usize = 10;
const KIND_AT: usize = 12;
const LEN_AT: usize = 28;
const CRC_AT: usize = 36;
/// How many counter suffixes a kept-aside name may try before giving up.
const MAX_ASIDE_ATTEMPTS: u32 = 1000;
/// How many temporary names a save may try before giving up.
const MAX_TEMP_ATTEMPTS: u32 = 100;

/// Checks that `kind` is a valid snapshot kind: 1 to 16 bytes of `[a-z0-9_-]`.
///
/// ```
/// use maxim_core::codec::check_kind;
/// assert!(check_kind("hippocampus").is_ok());
/// assert!(check_kind("Hippocampus").is_err());
/// assert!(check_kind("").is_err());
/// ```
pub fn check_kind(kind: &str) -> Result<()> {
    if kind.is_empty() || kind.len() > MAX_KIND_LEN || !kind.bytes().all(is_kind_byte) {
        return Err(Error::invalid("kind", format!("{kind:?} is not 1 to 16 bytes of [a-z0-9_-]")));
    }
    Ok(())
}

/// Encodes `value` as a complete snapshot file of `kind`: header and payload.
///
/// ```
/// use maxim_core::codec::{self, HEADER_LEN, MAGIC};
/// let bytes = codec::encode("nac", &(7u32, "reward"))?;
/// assert_eq!(&bytes[..8], &MAGIC);
/// assert_eq!(codec::decode::<(u32, String)>("mem.snap", "nac", &bytes)?, (7, "reward".to_string()));
/// assert!(bytes.len() > HEADER_LEN);
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn encode<T: Serialize + ?Sized>(kind: &str, value: &T) -> Result<Vec<u8>> {
    check_kind(kind)?;
    let mut buf = Vec::with_capacity(HEADER_LEN + 1024);
    buf.resize(HEADER_LEN, 0);
    let mut buf = postcard::to_extend(value, buf)
        .map_err(|e| Error::Encode { kind: kind.to_owned(), reason: e.to_string() })?;
    let payload_len = (buf.len() - HEADER_LEN) as u64;
    buf[..VERSION_AT].copy_from_slice(&MAGIC);
    buf[VERSION_AT..FLAGS_AT].copy_from_slice(&CURRENT_VERSION.to_le_bytes());
    buf[FLAGS_AT..KIND_AT].copy_from_slice(&0u16.to_le_bytes());
    buf[KIND_AT..KIND_AT + kind.len()].copy_from_slice(kind.as_bytes());
    buf[LEN_AT..CRC_AT].copy_from_slice(&payload_len.to_le_bytes());
    let crc = checksum(&buf[..CRC_AT], &buf[HEADER_LEN..]);
    buf[CRC_AT..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    Ok(buf)
}

/// Decodes a snapshot of `kind` from `bytes`, checking everything first; `path` only names
/// the file in errors (nothing is read or moved).
///
/// The checks run in this order, and the first that fails decides the error:
/// the magic (a short file whose bytes match the magic so far is [`CorruptReason::Truncated`]),
/// the header length, the version ([`Error::UnsupportedVersion`]), the declared payload
/// length against the bytes present ([`CorruptReason::Truncated`] /
/// [`CorruptReason::TrailingBytes`]), the checksum, the reserved flags, the kind
/// ([`Error::WrongKind`]) and last the payload itself ([`CorruptReason::Payload`], also when
/// bytes are left over after the value).
///
/// ```
/// use maxim_core::{codec, CorruptReason, Error};
/// let bytes = codec::encode("atl", &vec![1u16, 2, 3])?;
/// let err = codec::decode::<Vec<u16>>("atl.snap", "atl", &bytes[..bytes.len() - 1]).unwrap_err();
/// assert!(matches!(err, Error::Corrupt { reason: CorruptReason::Truncated { .. }, kept_aside: None, .. }));
/// assert!(matches!(codec::decode::<Vec<u16>>("atl.snap", "nac", &bytes), Err(Error::WrongKind { .. })));
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn decode<T: DeserializeOwned>(path: impl AsRef<Path>, kind: &str, bytes: &[u8]) -> Result<T> {
    check_kind(kind)?;
    decode_checked(kind, bytes).map_err(|r| r.into_error(path.as_ref().to_path_buf(), None))
}

/// What a successful [`save`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SaveReport {
    /// The file that now holds the snapshot.
    pub path: PathBuf,
    /// Size of the file in bytes, header included.
    pub bytes: u64,
    /// The CRC-32 stored in the header.
    pub checksum: u32,
    /// Where the previous snapshot now lies, when there was one and it could be kept.
    pub backup: Option<PathBuf>,
}

/// Saves `value` as a snapshot of `kind` at `path`, atomically.
///
/// The protocol (see `docs/durability.md`): encode in memory; create missing parent
/// directories; write a temporary file `.<name>.tmp-<pid>-<n>` in the target's directory and
/// `fsync` it; link (or, failing that, copy) the current file to `<name>.backup`; `rename` the
/// temporary over `path`; `fsync` the directory (Unix). A reader sees the old file or the new
/// one, never a mix. On an error before the rename the temporary is removed and the old
/// file is untouched. Only the directory `fsync` runs after the rename: when it fails the
/// new file is in place but its durability is not confirmed, and the error says so by being
/// returned. A backup that cannot be made is logged and reported as `backup: None`; it does
/// not fail the save.
///
/// The target must be a regular file or absent: a directory or a symbolic link there is
/// refused with an [`Error::Io`] of kind `InvalidInput`. On Unix a new file is created with
/// mode `0600`, and a replaced file's permissions carry over to its successor.
///
/// ```
/// use maxim_core::codec;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("state").join("nac.snap");
/// codec::save(&path, "nac", &1u8)?;
/// let second = codec::save(&path, "nac", &2u8)?;
/// assert_eq!(second.backup, Some(codec::backup_path(&path)?));
/// assert_eq!(codec::load::<u8>(codec::backup_path(&path)?, "nac")?, 1);
/// assert_eq!(codec::load::<u8>(&path, "nac")?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save<T: Serialize + ?Sized>(path: impl AsRef<Path>, kind: &str, value: &T) -> Result<SaveReport> {
    save_hooked(path.as_ref(), kind, value, &mut no_faults)
}

/// Loads the snapshot of `kind` at `path`, verifying everything before returning anything.
///
/// A missing file gives [`Error::Io`] whose source has [`io::ErrorKind::NotFound`] (see
/// [`is_missing`]); each caller decides whether that means "start empty". A file that fails
/// any check gives [`Error::Corrupt`], [`Error::WrongKind`] or [`Error::UnsupportedVersion`]
/// naming `path`, and is renamed to `<name>.corrupt-<UTC stamp>` (with `-1`, `-2`, ... added
/// when that name is taken); `kept_aside` holds the new name, or `None` when the rename
/// failed and the file stayed where it was. An invalid `kind` argument is an
/// [`Error::InvalidArgument`] and touches nothing.
///
/// ```
/// use maxim_core::codec;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("atl.snap");
/// let err = codec::load::<u8>(&path, "atl").unwrap_err();
/// assert!(codec::is_missing(&err));
/// codec::save(&path, "atl", &9u8)?;
/// assert_eq!(codec::load::<u8>(&path, "atl")?, 9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load<T: DeserializeOwned>(path: impl AsRef<Path>, kind: &str) -> Result<T> {
    check_kind(kind)?;
    load_hooked(path.as_ref(), kind, SystemClock.now(), &mut no_faults)
}

/// Which file [`load_with_recovery`] took the state from.
#[derive(Debug)]
#[non_exhaustive]
pub enum Recovery {
    /// The main file was intact.
    Primary,
    /// The main file was missing or rejected; the state comes from its backup.
    Backup {
        /// The backup file that was loaded.
        path: PathBuf,
        /// Why the main file was not used (with where it was moved, if it was rejected).
        primary_error: Box<Error>,
    },
}

impl Recovery {
    /// Whether the state came from the backup.
    pub fn used_backup(&self) -> bool {
        matches!(self, Self::Backup { .. })
    }
}

/// Where a layer's `load_with_recovery` took its state from (every layer returns this).
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadOutcome {
    /// The file was intact and is loaded.
    Loaded,
    /// The file was missing or rejected; its backup is loaded.
    FromBackup {
        /// The backup that was loaded.
        path: PathBuf,
        /// Why the main file was not used.
        primary_error: Box<Error>,
    },
    /// Neither the file nor a backup exists: the layer is unchanged (a fresh start).
    Missing,
}

/// Loads like [`load`], and when the main file is missing or rejected, loads
/// `<name>.backup` instead, saying so in the returned [`Recovery`].
///
/// A rejected main file is moved aside as by [`load`]. When the backup is also missing or
/// rejected (a rejected backup is moved aside too), the main file's error is returned.
/// Other I/O errors on the main file (permission denied, ...) are returned as they are,
/// without trying the backup, because the main file may be fine. A main file that is
/// missing while a backup exists is treated as lost, not as "start empty": that state arises
/// when an earlier run moved a corrupt file aside and stopped before saving again.
///
/// ```
/// use maxim_core::codec::{self, Recovery};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("hippocampus.snap");
/// codec::save(&path, "hippocampus", &"first")?;
/// codec::save(&path, "hippocampus", &"second")?;
/// std::fs::write(&path, b"torn")?; // a disk that lied about a write
/// let (state, recovery) = codec::load_with_recovery::<String>(&path, "hippocampus")?;
/// assert_eq!(state, "first");
/// assert!(recovery.used_backup());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_with_recovery<T: DeserializeOwned>(path: impl AsRef<Path>, kind: &str) -> Result<(T, Recovery)> {
    load_with_recovery_checked(path, kind, |_, value| Ok(value))
}

/// Loads like [`load`], then runs the caller's own checks (`check` turns the decoded value
/// into the caller's state, or refuses it). A file that `check` refuses with a rejection
/// ([`Error::Corrupt`], [`Error::WrongKind`], [`Error::UnsupportedVersion`]) is moved aside
/// like a file the codec rejects, and the error's `kept_aside` says where; any other error
/// from `check` is returned as it is and moves nothing.
///
/// ```
/// use maxim_core::{codec, CorruptReason, Error};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("nac.snap");
/// codec::save(&path, "nac", &vec![3u8, 1])?;
/// let sorted = |p: &std::path::Path, v: Vec<u8>| {
///     if v.is_sorted() { Ok(v) } else {
///         Err(Error::Corrupt { path: p.into(), reason: CorruptReason::Payload("unsorted".into()), kept_aside: None })
///     }
/// };
/// let err = codec::load_checked(&path, "nac", sorted).unwrap_err();
/// assert!(matches!(err, Error::Corrupt { kept_aside: Some(_), .. }) && !path.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_checked<T: DeserializeOwned, U>(
    path: impl AsRef<Path>,
    kind: &str,
    mut check: impl FnMut(&Path, T) -> Result<U>,
) -> Result<U> {
    check_kind(kind)?;
    load_checked_hooked(path.as_ref(), kind, SystemClock.now(), &mut check, &mut no_faults)
}

/// [`load_with_recovery`] with the caller's own checks, as [`load_checked`] runs them: a
/// main file that passes the codec but fails `check` is moved aside and the backup is tried
/// (with the same checks), so a file that is whole but wrong never stops a recovery.
///
/// ```
/// use maxim_core::codec;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("scn.snap");
/// codec::save(&path, "scn", &1u32)?;
/// codec::save(&path, "scn", &99u32)?; // whole, but the layer allows at most 10
/// let at_most_ten = |p: &std::path::Path, v: u32| {
///     if v <= 10 { Ok(v) } else { Err(maxim_core::Error::Corrupt {
///         path: p.into(), reason: maxim_core::CorruptReason::Payload("above 10".into()), kept_aside: None }) }
/// };
/// let (value, recovery) = codec::load_with_recovery_checked(&path, "scn", at_most_ten)?;
/// assert_eq!(value, 1);
/// assert!(recovery.used_backup());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_with_recovery_checked<T: DeserializeOwned, U>(
    path: impl AsRef<Path>,
    kind: &str,
    mut check: impl FnMut(&Path, T) -> Result<U>,
) -> Result<(U, Recovery)> {
    check_kind(kind)?;
    recovery_hooked(path.as_ref(), kind, SystemClock.now(), &mut check, &mut no_faults)
}

fn load_checked_hooked<T: DeserializeOwned, U>(
    path: &Path,
    kind: &str,
    now: Timestamp,
    check: &mut dyn FnMut(&Path, T) -> Result<U>,
    hook: &mut Hook<'_>,
) -> Result<U> {
    let value = load_hooked(path, kind, now, hook)?;
    match check(path, value) {
        Err(err) if is_rejection(&err) => {
            let kept = keep_aside_hooked(path, now, hook);
            tracing::warn!(error = %err, "snapshot refused by its reader");
            Err(with_kept_aside(err, kept))
        }
        other => other,
    }
}

/// `err` with its `kept_aside` set to `kept` (rejections only).
fn with_kept_aside(err: Error, kept: Option<PathBuf>) -> Error {
    match err {
        Error::Corrupt { path, reason, .. } => Error::Corrupt { path, reason, kept_aside: kept },
        Error::WrongKind { path, expected, found, .. } => {
            Error::WrongKind { path, expected, found, kept_aside: kept }
        }
        Error::UnsupportedVersion { path, found, supported, .. } => {
            Error::UnsupportedVersion { path, found, supported, kept_aside: kept }
        }
        other => other,
    }
}

/// Whether `err` says that a file does not exist ([`Error::Io`] with `NotFound`).
///
/// ```
/// use maxim_core::codec;
/// let err = codec::load::<u8>("/nonexistent/maxim/x.snap", "scn").unwrap_err();
/// assert!(codec::is_missing(&err));
/// ```
pub fn is_missing(err: &Error) -> bool {
    matches!(err, Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
}

/// Whether `err` is a rejection of a file's contents: [`Error::Corrupt`],
/// [`Error::WrongKind`] or [`Error::UnsupportedVersion`].
///
/// ```
/// use maxim_core::codec;
/// let err = codec::decode::<u8>("x.snap", "scn", b"garbage").unwrap_err();
/// assert!(codec::is_rejection(&err));
/// ```
pub fn is_rejection(err: &Error) -> bool {
    matches!(err, Error::Corrupt { .. } | Error::WrongKind { .. } | Error::UnsupportedVersion { .. })
}

/// The name of the file that keeps the snapshot before the last save: `<path>.backup`.
///
/// ```
/// use std::path::Path;
/// assert_eq!(maxim_core::codec::backup_path("data/atl.snap")?, Path::new("data/atl.snap.backup"));
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn backup_path(path: impl AsRef<Path>) -> Result<PathBuf> {
    let path = path.as_ref();
    let mut name = file_name(path)?.to_os_string();
    name.push(BACKUP_SUFFIX);
    Ok(path.with_file_name(name))
}

/// What a snapshot file's header says, for describing files (the `maxim` program's
/// `inspect`). The payload is not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotInfo {
    /// The file described.
    pub path: PathBuf,
    /// Format version in the header.
    pub version: u16,
    /// Flags field in the header (0 in every file this build writes).
    pub flags: u16,
    /// Kind in the header; bytes that a kind may not hold are shown escaped.
    pub kind: String,
    /// Payload length the header declares.
    pub payload_len: u64,
    /// Size of the file.
    pub file_len: u64,
    /// CRC-32 stored in the header.
    pub stored_checksum: u32,
    /// CRC-32 computed over the header fields and the bytes after the header, as found.
    pub computed_checksum: u32,
    kind_valid: bool,
}

impl SnapshotInfo {
    /// Whether this build reads the file's format version.
    pub fn version_supported(&self) -> bool {
        (OLDEST_SUPPORTED_VERSION..=CURRENT_VERSION).contains(&self.version)
    }

    /// Whether the file is exactly as long as its header declares.
    pub fn length_ok(&self) -> bool {
        (HEADER_LEN as u64).checked_add(self.payload_len) == Some(self.file_len)
    }

    /// Whether the stored checksum matches the file (and the length is right).
    pub fn checksum_ok(&self) -> bool {
        self.length_ok() && self.stored_checksum == self.computed_checksum
    }

    /// Whether the kind field holds a valid kind name padded with NULs.
    pub fn kind_valid(&self) -> bool {
        self.kind_valid
    }

    /// Whether every header check passes: version, length, checksum, flags and kind.
    /// The payload may still fail to decode into a given type.
    pub fn is_intact(&self) -> bool {
        self.version_supported() && self.checksum_ok() && self.flags == 0 && self.kind_valid
    }
}

impl fmt::Display for SnapshotInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: kind {}, format version {}, {} payload bytes, checksum {:#010x}",
            self.path.display(),
            self.kind,
            self.version,
            self.payload_len,
            self.stored_checksum
        )?;
        let mut problems = Vec::new();
        if !self.version_supported() {
            problems.push(format!(
                "version unsupported (this build reads {OLDEST_SUPPORTED_VERSION}..={CURRENT_VERSION})"
            ));
        }
        if !self.length_ok() {
            problems.push(format!("file holds {} bytes", self.file_len));
        } else if !self.checksum_ok() {
            problems.push(format!("checksum mismatch (computed {:#010x})", self.computed_checksum));
        }
        if self.flags != 0 {
            problems.push(format!("unknown flags {:#06x}", self.flags));
        }
        if !self.kind_valid {
            problems.push("invalid kind".to_owned());
        }
        if problems.is_empty() { f.write_str(", intact") } else { write!(f, "; {}", problems.join("; ")) }
    }
}

/// Describes the snapshot file at `path` without decoding its payload or moving anything.
///
/// A file too short for a header or without the magic is an [`Error::Corrupt`] with
/// `kept_aside: None`; every other finding is reported in the [`SnapshotInfo`].
///
/// ```
/// use maxim_core::codec;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("scn.snap");
/// codec::save(&path, "scn", &vec![1u8, 2, 3])?;
/// let info = codec::inspect(&path)?;
/// assert_eq!((info.kind.as_str(), info.version, info.payload_len), ("scn", 1, 4));
/// assert!(info.is_intact());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(path: impl AsRef<Path>) -> Result<SnapshotInfo> {
    let path = path.as_ref();
    let (mut file, file_len) = open_regular(path)?;
    let mut head = [0u8; HEADER_LEN];
    let got = read_up_to(&mut file, &mut head).map_err(|e| Error::io(path, e))?;
    let header = read_header(&head[..got]).map_err(|r| r.into_error(path.to_path_buf(), None))?;
    // The checksum runs over whatever follows the header, streamed: nothing is held.
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&head[..CRC_AT]);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => hasher.update(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let (kind, kind_valid) = kind_text(&header.kind);
    Ok(SnapshotInfo {
        path: path.to_path_buf(),
        version: header.version,
        flags: header.flags,
        kind,
        kind_valid,
        payload_len: header.payload_len,
        file_len,
        stored_checksum: header.checksum,
        computed_checksum: hasher.finalize(),
    })
}

/// Describes snapshot `bytes` like [`inspect`]; `path` only names them.
///
/// ```
/// use maxim_core::codec;
/// let mut bytes = codec::encode("nac", &42u64)?;
/// bytes[40] ^= 1;
/// let info = codec::inspect_bytes("nac.snap", &bytes)?;
/// assert!(info.length_ok() && !info.checksum_ok());
/// # Ok::<(), maxim_core::Error>(())
/// ```
pub fn inspect_bytes(path: impl AsRef<Path>, bytes: &[u8]) -> Result<SnapshotInfo> {
    let path = path.as_ref();
    let header = read_header(bytes).map_err(|r| r.into_error(path.to_path_buf(), None))?;
    let (kind, kind_valid) = kind_text(&header.kind);
    Ok(SnapshotInfo {
        path: path.to_path_buf(),
        version: header.version,
        flags: header.flags,
        kind,
        kind_valid,
        payload_len: header.payload_len,
        file_len: bytes.len() as u64,
        stored_checksum: header.checksum,
        computed_checksum: checksum(&bytes[..CRC_AT], &bytes[HEADER_LEN..]),
    })
}

// ---------------------------------------------------------------------------------------
// Internals.

/// The fixed header fields after the magic.
struct Header {
    version: u16,
    flags: u16,
    kind: [u8; MAX_KIND_LEN],
    payload_len: u64,
    checksum: u32,
}

/// Why bytes were rejected, before a path and a kept-aside location are attached.
#[derive(Debug)]
enum Rejection {
    Corrupt(CorruptReason),
    WrongKind { expected: String, found: String },
    Version(u16),
}

impl Rejection {
    fn into_error(self, path: PathBuf, kept_aside: Option<PathBuf>) -> Error {
        match self {
            Self::Corrupt(reason) => Error::Corrupt { path, reason, kept_aside },
            Self::WrongKind { expected, found } => Error::WrongKind { path, expected, found, kept_aside },
            Self::Version(found) => {
                Error::UnsupportedVersion { path, found, supported: CURRENT_VERSION, kept_aside }
            }
        }
    }
}

/// The steps of a save or a load at which tests inject failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    CreateTemp,
    Write,
    SyncFile,
    LinkBackup,
    CopyBackup,
    RenameBackup,
    Rename,
    SyncDir,
    KeepAside,
}

type Hook<'a> = dyn FnMut(Step) -> io::Result<()> + 'a;

#[expect(clippy::unnecessary_wraps, reason = "it is a Hook, which may fail")]
fn no_faults(_: Step) -> io::Result<()> {
    Ok(())
}

fn is_kind_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
}

fn checksum(header_fields: &[u8], payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(header_fields);
    hasher.update(payload);
    hasher.finalize()
}

/// The kind field as text, and whether it is a valid kind padded with NULs.
fn kind_text(field: &[u8; MAX_KIND_LEN]) -> (String, bool) {
    let end = field.iter().position(|&b| b == 0).unwrap_or(MAX_KIND_LEN);
    let (name, pad) = field.split_at(end);
    let valid = end > 0 && name.iter().all(|&b| is_kind_byte(b)) && pad.iter().all(|&b| b == 0);
    if valid {
        (String::from_utf8_lossy(name).into_owned(), true)
    } else {
        let shown = if pad.iter().all(|&b| b == 0) { name } else { &field[..] };
        (shown.escape_ascii().to_string(), false)
    }
}

/// Checks the magic and the header's length and parses its fields.
fn read_header(bytes: &[u8]) -> Result<Header, Rejection> {
    let seen = bytes.len().min(MAGIC.len());
    if bytes[..seen] != MAGIC[..seen] {
        return Err(Rejection::Corrupt(CorruptReason::BadMagic));
    }
    if bytes.len() < HEADER_LEN {
        return Err(Rejection::Corrupt(CorruptReason::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        }));
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let mut kind = [0u8; MAX_KIND_LEN];
    kind.copy_from_slice(&bytes[KIND_AT..LEN_AT]);
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[LEN_AT..CRC_AT]);
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&bytes[CRC_AT..HEADER_LEN]);
    Ok(Header {
        version: u16_at(VERSION_AT),
        flags: u16_at(FLAGS_AT),
        kind,
        payload_len: u64::from_le_bytes(len),
        checksum: u32::from_le_bytes(crc),
    })
}

/// Every check of [`decode`], in its documented order, then the payload decode.
fn decode_checked<T: DeserializeOwned>(kind: &str, bytes: &[u8]) -> Result<T, Rejection> {
    let header = read_header(bytes)?;
    if !(OLDEST_SUPPORTED_VERSION..=CURRENT_VERSION).contains(&header.version) {
        return Err(Rejection::Version(header.version));
    }
    let found = bytes.len() as u64;
    let expected = (HEADER_LEN as u64).saturating_add(header.payload_len);
    if found < expected {
        return Err(Rejection::Corrupt(CorruptReason::Truncated { expected, found }));
    }
    if found > expected {
        return Err(Rejection::Corrupt(CorruptReason::TrailingBytes { expected, found }));
    }
    let computed = checksum(&bytes[..CRC_AT], &bytes[HEADER_LEN..]);
    if computed != header.checksum {
        return Err(Rejection::Corrupt(CorruptReason::ChecksumMismatch {
            stored: header.checksum,
            computed,
        }));
    }
    if header.flags != 0 {
        return Err(Rejection::Corrupt(CorruptReason::UnknownFlags { flags: header.flags }));
    }
    let (found_kind, _) = kind_text(&header.kind);
    if found_kind != kind {
        return Err(Rejection::WrongKind { expected: kind.to_owned(), found: found_kind });
    }
    match postcard::take_from_bytes::<T>(&bytes[HEADER_LEN..]) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(Rejection::Corrupt(CorruptReason::Payload(format!(
            "{} bytes left over after the value",
            rest.len()
        )))),
        Err(e) => Err(Rejection::Corrupt(CorruptReason::Payload(e.to_string()))),
    }
}

fn file_name(path: &Path) -> Result<&std::ffi::OsStr> {
    path.file_name().ok_or_else(|| Error::invalid("path", format!("{} does not name a file", path.display())))
}

/// The directory that holds `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn save_hooked<T: Serialize + ?Sized>(
    path: &Path,
    kind: &str,
    value: &T,
    hook: &mut Hook<'_>,
) -> Result<SaveReport> {
    let bytes = encode(kind, value)?;
    let _span = tracing::debug_span!("codec_save", kind, n_bytes = bytes.len()).entered();
    file_name(path)?;
    let dir = parent_dir(path);
    create_dirs(dir)?;
    let previous = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Some(meta),
        Ok(_) => {
            let source = io::Error::new(io::ErrorKind::InvalidInput, "the target is not a regular file");
            return Err(Error::io(path, source));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    let (temp, file) = create_temp(path, hook)?;
    let committed = write_and_commit(path, &temp, file, &bytes, previous.as_ref(), hook);
    let backup = match committed {
        Ok(backup) => backup,
        Err(err) => {
            // The rename did not happen: the old file is untouched; drop the temporary.
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
    };
    hook(Step::SyncDir).and_then(|()| sync_dir(dir)).map_err(|e| Error::io(dir, e))?;
    let checksum =
        u32::from_le_bytes([bytes[CRC_AT], bytes[CRC_AT + 1], bytes[CRC_AT + 2], bytes[CRC_AT + 3]]);
    tracing::debug!(backup = backup.is_some(), "snapshot saved");
    Ok(SaveReport { path: path.to_path_buf(), bytes: bytes.len() as u64, checksum, backup })
}

/// Writes and syncs the temporary, keeps the backup and renames the temporary over `path`.
fn write_and_commit(
    path: &Path,
    temp: &Path,
    mut file: File,
    bytes: &[u8],
    previous: Option<&fs::Metadata>,
    hook: &mut Hook<'_>,
) -> Result<Option<PathBuf>> {
    hook(Step::Write).and_then(|()| file.write_all(bytes)).map_err(|e| Error::io(temp, e))?;
    if let Some(meta) = previous {
        file.set_permissions(meta.permissions()).map_err(|e| Error::io(temp, e))?;
    }
    hook(Step::SyncFile).and_then(|()| file.sync_all()).map_err(|e| Error::io(temp, e))?;
    drop(file);
    let backup = if previous.is_some() { keep_backup(path, hook) } else { None };
    hook(Step::Rename).and_then(|()| fs::rename(temp, path)).map_err(|e| Error::io(path, e))?;
    Ok(backup)
}

/// Creates a fresh temporary file next to the target.
fn create_temp(path: &Path, hook: &mut Hook<'_>) -> Result<(PathBuf, File)> {
    let mut last_err = io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name");
    let mut last_temp = path.to_path_buf();
    for _ in 0..MAX_TEMP_ATTEMPTS {
        let temp = unique_temp(path)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match hook(Step::CreateTemp).and_then(|()| options.open(&temp)) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (last_temp, last_err) = (temp, e),
            Err(e) => return Err(Error::io(temp, e)),
        }
    }
    Err(Error::io(last_temp, last_err))
}

/// A temporary name `.<name>.tmp-<pid>-<n>` beside `path`, unique within this process (and,
/// by the process id, among live processes).
pub(crate) fn unique_temp(path: &Path) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut temp = OsString::from(".");
    temp.push(file_name(path)?);
    temp.push(format!(".tmp-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    Ok(path.with_file_name(temp))
}

/// Creates `dir` and its missing ancestors, syncing each parent that gained an entry.
pub(crate) fn create_dirs(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d);
        cur = d.parent();
    }
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for d in missing.iter().rev() {
        let parent = parent_dir(d);
        sync_dir(parent).map_err(|e| Error::io(parent, e))?;
    }
    Ok(())
}

/// Makes `<path>.backup` hold the current file, if the current file is an intact snapshot:
/// a hard link (or a synced copy) under a temporary name, renamed over the old backup, so
/// the old backup survives any failure. Failures are logged and give `None`; the save goes on.
fn keep_backup(path: &Path, hook: &mut Hook<'_>) -> Option<PathBuf> {
    let backup = backup_path(path).ok()?;
    match inspect(path) {
        Ok(info) if info.is_intact() => {}
        Ok(_) | Err(_) => {
            tracing::warn!(path = %path.display(), "the file being replaced does not verify; the old backup is kept");
            return None;
        }
    }
    // A name no other save uses (this process's id and counter), so no other save's link
    // can be found there and the copy below never opens an existing file.
    let temp = unique_temp(&backup).ok()?;
    let made = hook(Step::LinkBackup)
        .and_then(|()| fs::hard_link(path, &temp))
        .or_else(|_| hook(Step::CopyBackup).and_then(|()| copy_synced(path, &temp)))
        .and_then(|()| hook(Step::RenameBackup))
        .and_then(|()| fs::rename(&temp, &backup));
    // When the backup already was a link to the current file, POSIX rename does nothing
    // and succeeds, leaving the temporary: remove it (the name is ours alone).
    let _ = fs::remove_file(&temp);
    match made {
        Ok(()) => Some(backup),
        Err(e) => {
            let _ = fs::remove_file(&temp);
            tracing::warn!(backup = %backup.display(), error = %e, "cannot refresh the backup; the old one is kept");
            None
        }
    }
}

fn copy_synced(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut dst = options.open(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.set_permissions(src.metadata()?.permissions())?;
    dst.sync_all()
}

/// Makes the directory's entries durable (Unix); elsewhere the file system's own ordering of
/// metadata updates is relied on.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn load_hooked<T: DeserializeOwned>(
    path: &Path,
    kind: &str,
    now: Timestamp,
    hook: &mut Hook<'_>,
) -> Result<T> {
    let _span = tracing::debug_span!("codec_load", kind).entered();
    let checked = read_file(path)?.and_then(|bytes| decode_checked(kind, &bytes));
    checked.map_err(|rejection| {
        let kept_aside = keep_aside_hooked(path, now, hook);
        let err = rejection.into_error(path.to_path_buf(), kept_aside);
        tracing::warn!(error = %err, "snapshot rejected");
        err
    })
}

/// Opens `path` for reading if it is a regular file (following symbolic links), checked
/// before opening (a FIFO would block the open) and again on the open file; gives its length.
fn open_regular(path: &Path) -> Result<(File, u64)> {
    let not_regular = || Error::io(path, io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    let meta = fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta.len()))
}

pub(crate) fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads a snapshot file header first: the header is checked (magic, length, version) and
/// compared with the file's size before exactly the declared payload is read, so a junk or
/// lying file costs a header read, not its size. The outer error is I/O, the inner a
/// rejection of the contents.
fn read_file(path: &Path) -> Result<Result<Vec<u8>, Rejection>> {
    let (mut file, file_len) = open_regular(path)?;
    let mut head = [0u8; HEADER_LEN];
    let got = read_up_to(&mut file, &mut head).map_err(|e| Error::io(path, e))?;
    let header = match read_header(&head[..got]) {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    if !(OLDEST_SUPPORTED_VERSION..=CURRENT_VERSION).contains(&header.version) {
        return Ok(Err(Rejection::Version(header.version)));
    }
    let expected = (HEADER_LEN as u64).saturating_add(header.payload_len);
    if file_len < expected {
        return Ok(Err(Rejection::Corrupt(CorruptReason::Truncated { expected, found: file_len })));
    }
    if file_len > expected {
        return Ok(Err(Rejection::Corrupt(CorruptReason::TrailingBytes { expected, found: file_len })));
    }
    let mut bytes = Vec::new();
    let total = usize::try_from(expected).map_err(|_| Error::io(path, io::ErrorKind::OutOfMemory.into()))?;
    bytes.try_reserve_exact(total).map_err(|_| Error::io(path, io::ErrorKind::OutOfMemory.into()))?;
    bytes.extend_from_slice(&head);
    (&mut file).take(header.payload_len).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    Ok(Ok(bytes))
}

#[cfg(test)]
fn load_with_recovery_hooked<T: DeserializeOwned>(
    path: &Path,
    kind: &str,
    now: Timestamp,
    hook: &mut Hook<'_>,
) -> Result<(T, Recovery)> {
    recovery_hooked(path, kind, now, &mut |_, v| Ok(v), hook)
}

fn recovery_hooked<T: DeserializeOwned, U>(
    path: &Path,
    kind: &str,
    now: Timestamp,
    check: &mut dyn FnMut(&Path, T) -> Result<U>,
    hook: &mut Hook<'_>,
) -> Result<(U, Recovery)> {
    let primary_error = match load_checked_hooked(path, kind, now, check, hook) {
        Ok(value) => return Ok((value, Recovery::Primary)),
        Err(e) if is_missing(&e) || is_rejection(&e) => e,
        Err(e) => return Err(e),
    };
    let backup = backup_path(path)?;
    match load_checked_hooked(&backup, kind, now, check, hook) {
        Ok(value) => {
            tracing::warn!(backup = %backup.display(), "main snapshot unusable; loaded its backup");
            Ok((value, Recovery::Backup { path: backup, primary_error: Box::new(primary_error) }))
        }
        Err(backup_error) => {
            if !is_missing(&backup_error) {
                tracing::warn!(error = %backup_error, "the backup is unusable too");
            }
            Err(primary_error)
        }
    }
}

/// Renames a rejected file to `<name>.corrupt-<stamp>[-n]`; `None` when that fails.
pub(crate) fn keep_aside(path: &Path, now: Timestamp) -> Option<PathBuf> {
    keep_aside_hooked(path, now, &mut no_faults)
}

fn keep_aside_hooked(path: &Path, now: Timestamp, hook: &mut Hook<'_>) -> Option<PathBuf> {
    let name = path.file_name()?;
    let stem = format!("{CORRUPT_INFIX}{}", now.file_stamp());
    for n in 0..MAX_ASIDE_ATTEMPTS {
        let mut aside_name = name.to_os_string();
        aside_name.push(&stem);
        if n > 0 {
            aside_name.push(format!("-{n}"));
        }
        let aside = path.with_file_name(aside_name);
        match fs::symlink_metadata(&aside) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            _ => continue,
        }
        return match hook(Step::KeepAside).and_then(|()| fs::rename(path, &aside)) {
            Ok(()) => {
                let _ = sync_dir(parent_dir(path));
                Some(aside)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot move the rejected file aside");
                None
            }
        };
    }
    None
}

#[cfg(test)]
mod tests;
