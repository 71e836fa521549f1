//! The journal: an append-only, checksummed log of a store's operations, and the directory
//! helper that pairs it with a snapshot.
//!
//! A store opened on a directory writes every mutation as an *operation* (its own serde type,
//! with ids, timestamps and values already resolved, so that replay is deterministic) to the
//! journal before the call returns. Opening the directory loads the latest snapshot and
//! replays the operations written after it. `docs/durability.md` describes the file byte by
//! byte.
//!
//! - [`Sink`] is the small interface a journal writes through (append, sync, read from a
//!   position, restart); [`FileSink`] keeps the entries in one file. Another sink (a database
//!   table) can carry the same entries.
//! - [`SyncPolicy`] says when appended entries reach stable storage: [`SyncPolicy::Always`]
//!   before each append returns, [`SyncPolicy::Interval`] by a background group commit (the
//!   default, once a second: at most one interval of acknowledged work is lost to a crash
//!   or a power cut), or [`SyncPolicy::Never`] (written at once, synced when the operating
//!   system likes).
//! - [`Journal`] encodes an operation type `Op` and numbers its entries 1, 2, 3, ...
//! - [`StoreDir`] is what a layer crate uses: it locks the directory against a second
//!   process, cleans its own stale temporaries, loads the snapshot, replays the journal,
//!   appends, and compacts (`checkpoint`: a snapshot that records the last sequence number,
//!   then a fresh journal; a crash at any instant opens to exactly the acknowledged writes).
//!
//! A layer wires `open(dir)` and `checkpoint()` like this (a toy store of numbers whose only
//! operation is "push"):
//!
//! ```
//! use std::path::Path;
//! use maxim_core::journal::{StoreDir, SyncPolicy};
//! use maxim_core::{codec, Result};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! enum Op { Push(u64) }
//!
//! #[derive(Default, Serialize, Deserialize)]
//! struct State { journal_seq: u64, items: Vec<u64> }
//!
//! struct Store { state: State, dir: StoreDir<Op> }
//!
//! impl Store {
//!     fn open(dir: &Path) -> Result<Self> {
//!         let mut dir = StoreDir::open(dir, "numbers", SyncPolicy::Always)?; // lock, clean up
//!         let snap = dir.snapshot_path();
//!         let mut state = if snap.exists() { codec::load(&snap, "numbers")? } else { State::default() };
//!         dir.replay(state.journal_seq, |op| { apply(&mut state, op); Ok::<_, maxim_core::Error>(()) })?;
//!         Ok(Self { state, dir })
//!     }
//!     fn push(&mut self, n: u64) -> Result<()> {
//!         let op = Op::Push(n);          // validate, then resolve the operation
//!         self.dir.append(&op)?;        // journal it (durable per the policy)
//!         apply(&mut self.state, op);   // then apply it; this cannot fail
//!         Ok(())
//!     }
//!     fn checkpoint(&mut self) -> Result<()> {
//!         let state = &mut self.state;
//!         self.dir.checkpoint(|path, seq| {
//!             state.journal_seq = seq;
//!             codec::save(path, "numbers", &*state).map(drop)
//!         })
//!     }
//! }
//!
//! fn apply(state: &mut State, op: Op) { match op { Op::Push(n) => state.items.push(n) } }
//!
//! let tmp = tempfile::tempdir()?;
//! let mut store = Store::open(tmp.path())?;
//! store.push(1)?;
//! store.checkpoint()?;
//! store.push(2)?;
//! drop(store); // or a crash: every acknowledged push is in the journal
//! let store = Store::open(tmp.path())?;
//! assert_eq!(store.state.items, [1, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec;
use crate::error::{CorruptReason, Error, Result};
use crate::time::{Clock, SystemClock};

/// The eight bytes every journal file starts with.
pub const JOURNAL_MAGIC: [u8; 8] = *b"MAXIMJNL";
/// The journal format version this build writes and reads.
pub const JOURNAL_VERSION: u16 = 1;
/// Size of the journal file's header in bytes; the first entry starts at this offset.
pub const JOURNAL_HEADER_LEN: usize = 40;
/// Size of an entry's header (length, checksum, sequence number) in bytes.
pub const ENTRY_HEADER_LEN: usize = 16;
/// Largest entry payload in bytes (64 MiB); a longer declared length is damage.
pub const MAX_ENTRY_LEN: u32 = 64 << 20;
/// The interval of the default [`SyncPolicy`].
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// Suffix of a store directory's snapshot file (`<kind>.snap`).
pub const SNAPSHOT_SUFFIX: &str = ".snap";
/// Suffix of a store directory's journal file (`<kind>.journal`).
pub const JOURNAL_SUFFIX: &str = ".journal";
/// Suffix of a store directory's lock file (`<kind>.lock`).
pub const LOCK_SUFFIX: &str = ".lock";

const VERSION_AT: usize = 8;
const FLAGS_AT: usize = 10;
const KIND_AT: usize = 12;
const BASE_AT: usize = 28;
const CRC_AT: usize = 36;

/// When appended entries are made durable (`fsync`), like Redis's `appendfsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// `fsync` before each append returns: nothing acknowledged is ever lost. Costs one
    /// `fsync` per write (bound by the disk: tens of microseconds to milliseconds).
    Always,
    /// Group commit: appended entries are gathered in memory and a background thread writes
    /// and `fdatasync`s them once per interval (and writes them at once when a megabyte has
    /// gathered). A crash of the process or a power cut loses at most the writes of the last
    /// interval (plus the time one write and `fsync` take). The default, with
    /// [`DEFAULT_SYNC_INTERVAL`].
    Interval(Duration),
    /// Each entry is written to the operating system before the append returns (a killed
    /// process loses nothing) but never `fsync`ed; the operating system writes it back when
    /// it likes (on Linux, within about 30 seconds). Checkpoints are still durable.
    Never,
}

impl Default for SyncPolicy {
    fn default() -> Self {
        Self::Interval(DEFAULT_SYNC_INTERVAL)
    }
}

/// What reading a journal found, besides its entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadReport {
    /// Sequence number of the last intact entry (the base when there is none).
    pub last_seq: u64,
    /// Entries read (including those at or below the requested position).
    pub entries: u64,
    /// Bytes of a torn tail (a crash during an append) that were cut off; 0 when none.
    pub torn_bytes: u64,
}

/// Where a journal's entries live: the interface the [`Journal`] writes through.
///
/// An entry is an opaque payload with a sequence number; the entries of one sink are
/// numbered `base + 1, base + 2, ...` without gaps, where `base` is the number its last
/// [`restart`](Sink::restart) gave. A sink checks its entries (the file sink with CRC-32) and
/// reports damage as a typed error.
pub trait Sink: Send + Sync + fmt::Debug {
    /// Appends one entry, durable as the sink's [`SyncPolicy`] says before this returns.
    fn append(&mut self, seq: u64, payload: &[u8]) -> Result<()>;
    /// Makes every appended entry durable now.
    fn sync(&mut self) -> Result<()>;
    /// The sequence number the entries follow (0 for a journal never restarted).
    fn base(&self) -> u64;
    /// Where the entries live (a file's path), to name them in errors.
    fn location(&self) -> &Path;
    /// Calls `visit` with each entry whose sequence number is above `after`, in order, and
    /// reports the last intact entry. A torn tail is cut off (and reported); damage before
    /// the end is an error.
    fn read_from(
        &mut self,
        after: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<ReadReport>;
    /// Replaces every entry with an empty journal whose entries will follow `base`,
    /// atomically: a crash leaves either the old entries or none.
    fn restart(&mut self, base: u64) -> Result<()>;
}

// ---------------------------------------------------------------------------------------
// The file sink.

/// A [`Sink`] that keeps the entries in one file (layout in `docs/durability.md`).
///
/// Opening checks the header; the first [`read_from`](Sink::read_from) checks every entry
/// and cuts a torn tail; an append before any read reads (and checks) the file first, so an
/// entry is never written after damage.
///
/// Under [`SyncPolicy::Interval`] appended entries are gathered in memory and a background
/// thread writes and `fdatasync`s them once per interval (group commit); an append that
/// gathers a megabyte wakes it to write them at once (and writes them itself past four
/// megabytes); [`sync`](Sink::sync), a restart and dropping the sink write them too. Under [`SyncPolicy::Always`] and [`SyncPolicy::Never`] each append is written
/// before it returns.
pub struct FileSink {
    path: PathBuf,
    kind: String,
    shared: Arc<FlushShared>,
    base: u64,
    /// End of the last intact entry, gathered ones included, once the file has been read;
    /// `None` before.
    end: Option<u64>,
    policy: SyncPolicy,
    entry: Vec<u8>,
    flusher: Option<Flusher>,
}

impl fmt::Debug for FileSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileSink")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("base", &self.base)
            .field("end", &self.end)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Gathered entries written at once when they reach this many bytes.
const GATHER_MAX: usize = 1 << 20;
/// Gathered entries the appending thread writes itself, without waiting for the background
/// thread it woke.
const GATHER_WAKE_MAX: usize = 4 * GATHER_MAX;

/// A spare gathering buffer keeps at most this many bytes of capacity between flushes.
const SPARE_MAX: usize = 2 * GATHER_MAX;

/// The file, shared with the background thread; whoever holds it writes.
struct FileIo {
    file: File,
    /// End of what has been written to the file.
    written: u64,
    /// Whether something was written since the last `fdatasync`.
    dirty: bool,
    /// The buffer a flush swaps in for the gathered entries, empty and kept with its
    /// capacity: appends gather into a buffer that is already grown instead of a new one
    /// (growing a megabyte buffer from nothing costs copies and fresh pages every time).
    spare: Vec<u8>,
}

impl FileIo {
    fn new(file: File) -> Self {
        Self { file, written: JOURNAL_HEADER_LEN as u64, dirty: false, spare: Vec::new() }
    }

    /// Writes the entries gathered so far (swapped out of `gathered`, whose lock is held only
    /// for that), then `fdatasync`s when `sync` and something is unsynced. Appends go on
    /// gathering meanwhile. A failed write is cut back off the file.
    fn flush(&mut self, gathered: &Mutex<Vec<u8>>, sync: bool) -> io::Result<()> {
        debug_assert!(self.spare.is_empty());
        std::mem::swap(&mut *gathered.lock().unwrap_or_else(PoisonError::into_inner), &mut self.spare);
        if !self.spare.is_empty() {
            let at = self.written;
            let wrote = self.file.seek(SeekFrom::Start(at)).and_then(|_| self.file.write_all(&self.spare));
            let n = self.spare.len() as u64;
            self.recycle_spare();
            if let Err(e) = wrote {
                let _ = self.file.set_len(at);
                return Err(e);
            }
            self.written += n;
            self.dirty = true;
        }
        if sync && self.dirty {
            self.file.sync_data()?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Empties the spare buffer for the next flush, cutting an outsized one (an entry far
    /// above [`GATHER_MAX`], or a background thread that fell behind while appends gathered
    /// up to [`GATHER_WAKE_MAX`]) back to [`GATHER_MAX`] rather than dropping it: the next
    /// gathering starts grown either way.
    fn recycle_spare(&mut self) {
        self.spare.clear();
        if self.spare.capacity() > SPARE_MAX {
            self.spare.shrink_to(GATHER_MAX);
        }
    }
}

/// The background group commit of [`SyncPolicy::Interval`]: it writes and syncs what
/// gathered once per interval, and writes it (without a sync) when an append wakes it because
/// a megabyte has gathered. Dropping the sender stops it.
struct Flusher {
    wake: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

struct FlushShared {
    io: Mutex<FileIo>,
    /// Entries appended but not yet written (group commit). Lock order: `io`, then this.
    gathered: Mutex<Vec<u8>>,
    failed: AtomicBool,
    /// Whether the background thread has been woken to write what gathered and has not yet
    /// taken it.
    woken: AtomicBool,
}

impl FlushShared {
    fn io(&self) -> std::sync::MutexGuard<'_, FileIo> {
        self.io.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn gathered(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.gathered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes and syncs what is gathered; a failure is logged and remembered.
    fn flush(&self, path: &Path, sync: bool) -> io::Result<()> {
        let flushed = self.io().flush(&self.gathered, sync);
        if let Err(e) = &flushed {
            self.failed.store(true, Ordering::Release);
            tracing::error!(path = %path.display(), error = %e, "journal write or fsync failed");
        }
        flushed
    }
}

impl Flusher {
    fn start(shared: &Arc<FlushShared>, interval: Duration, path: &Path) -> io::Result<Self> {
        let (wake, woken) = mpsc::channel::<()>();
        let inner = Arc::clone(shared);
        let path = path.to_path_buf();
        let thread = std::thread::Builder::new().name("maxim-journal-sync".into()).spawn(move || {
            let mut next_sync = Instant::now() + interval;
            loop {
                match woken.recv_timeout(next_sync.saturating_duration_since(Instant::now())) {
                    Ok(()) => {
                        // Cleared first: entries gathered while this writes may wake it again.
                        inner.woken.store(false, Ordering::Release);
                        // An append may have woken it again for the megabyte the last write
                        // took (between the clear and the take): nothing is due then.
                        if inner.gathered().len() >= GATHER_MAX {
                            let _ = inner.flush(&path, false);
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let _ = inner.flush(&path, true);
                        next_sync = Instant::now() + interval;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        })?;
        Ok(Self { wake: Some(wake), thread: Some(thread) })
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        drop(self.wake.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        drop(self.flusher.take());
        if matches!(self.policy, SyncPolicy::Interval(_)) {
            let _ = self.shared.flush(&self.path, true);
        }
    }
}

impl FileSink {
    /// Opens the journal file at `path` for `kind`, creating an empty one (base 0) when it
    /// does not exist. A header that does not verify is a rejection ([`Error::Corrupt`],
    /// [`Error::WrongKind`] or [`Error::UnsupportedVersion`]) and the file is moved aside
    /// (`<name>.corrupt-<stamp>`), as the codec does with a snapshot.
    pub fn open(path: impl AsRef<Path>, kind: &str, policy: SyncPolicy) -> Result<Self> {
        codec::check_kind(kind)?;
        if let SyncPolicy::Interval(d) = policy
            && d.is_zero()
        {
            return Err(Error::invalid("sync policy", "the interval must be longer than zero"));
        }
        let path = path.as_ref().to_path_buf();
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => {
                let source = io::Error::new(io::ErrorKind::InvalidInput, "the journal is not a regular file");
                return Err(Error::io(&path, source));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => write_fresh(&path, kind, 0)?,
            Err(e) => return Err(Error::io(&path, e)),
        }
        let mut file =
            OpenOptions::new().read(true).write(true).open(&path).map_err(|e| Error::io(&path, e))?;
        let mut header = [0u8; JOURNAL_HEADER_LEN];
        let got = codec::read_up_to(&mut file, &mut header).map_err(|e| Error::io(&path, e))?;
        let base = match check_header(&header[..got], kind) {
            Ok(base) => base,
            Err(rejection) => {
                drop(file);
                let kept = codec::keep_aside(&path, SystemClock.now());
                return Err(rejection.into_error(path, kept));
            }
        };
        let io = FileIo::new(file);
        let shared = Arc::new(FlushShared {
            io: Mutex::new(io),
            gathered: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
            woken: AtomicBool::new(false),
        });
        let flusher = match policy {
            SyncPolicy::Interval(d) => {
                Some(Flusher::start(&shared, d, &path).map_err(|e| Error::io(&path, e))?)
            }
            _ => None,
        };
        Ok(Self { path, kind: kind.to_owned(), shared, base, end: None, policy, entry: Vec::new(), flusher })
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sync policy.
    pub fn policy(&self) -> SyncPolicy {
        self.policy
    }

    /// Size of the intact journal in bytes, header and gathered entries included (`None`
    /// before it was read).
    pub fn intact_len(&self) -> Option<u64> {
        self.end
    }

    /// Wakes the background thread to write what has gathered (once until it takes it);
    /// false when there is no background thread to wake.
    fn wake_flusher(&self) -> bool {
        let Some(wake) = self.flusher.as_ref().and_then(|f| f.wake.as_ref()) else { return false };
        if self.shared.woken.swap(true, Ordering::AcqRel) {
            return true; // woken already
        }
        if wake.send(()).is_err() {
            self.shared.woken.store(false, Ordering::Release);
            return false;
        }
        true
    }

    fn check_failed(&self) -> Result<()> {
        if self.shared.failed.load(Ordering::Acquire) {
            return Err(Error::io(
                &self.path,
                io::Error::other(
                    "a background write or fsync of the journal failed; acknowledged writes may be lost",
                ),
            ));
        }
        Ok(())
    }
}

impl Sink for FileSink {
    fn append(&mut self, seq: u64, payload: &[u8]) -> Result<()> {
        self.check_failed()?;
        let len = u32::try_from(payload.len()).ok().filter(|&n| n <= MAX_ENTRY_LEN).ok_or_else(|| {
            Error::invalid("journal entry", format!("{} bytes exceed {MAX_ENTRY_LEN}", payload.len()))
        })?;
        if self.end.is_none() {
            self.read_from(u64::MAX, &mut |_, _| Ok(()))?;
        }
        let end = self.end.unwrap_or(JOURNAL_HEADER_LEN as u64);
        self.entry.clear();
        self.entry.extend_from_slice(&entry_header(len, seq, payload));
        self.entry.extend_from_slice(payload);
        let flushed = if let SyncPolicy::Interval(_) = self.policy {
            // Group commit: only the gathering lock, held for a copy.
            let mut gathered = self.shared.gathered();
            gathered.extend_from_slice(&self.entry);
            let n_gathered = gathered.len();
            drop(gathered);
            // A megabyte gathered is written at once: by the background thread, woken for it,
            // or past `GATHER_WAKE_MAX` (it is behind) by this thread, unless the background
            // thread holds the file (it is writing and syncing): then it goes on gathering.
            let full = n_gathered >= GATHER_MAX && (n_gathered >= GATHER_WAKE_MAX || !self.wake_flusher());
            // The file's lock is tried only then: an append that only gathers takes one lock.
            if full {
                match self.shared.io.try_lock() {
                    Ok(mut io) => io.flush(&self.shared.gathered, false),
                    Err(std::sync::TryLockError::Poisoned(p)) => {
                        p.into_inner().flush(&self.shared.gathered, false)
                    }
                    Err(std::sync::TryLockError::WouldBlock) => Ok(()),
                }
            } else {
                Ok(())
            }
        } else {
            let mut io = self.shared.io();
            self.shared.gathered().extend_from_slice(&self.entry);
            io.flush(&self.shared.gathered, self.policy == SyncPolicy::Always)
        };
        if let Err(e) = flushed {
            // Nothing of this entry (or of those gathered with it) stays in the file.
            if matches!(self.policy, SyncPolicy::Interval(_)) {
                // Entries acknowledged earlier were gathered with it and are lost.
                self.shared.failed.store(true, Ordering::Release);
                self.end = None;
            }
            return Err(Error::io(&self.path, e));
        }
        self.end = Some(end + self.entry.len() as u64);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.check_failed()?;
        self.shared.flush(&self.path, true).map_err(|e| Error::io(&self.path, e))
    }

    fn base(&self) -> u64 {
        self.base
    }

    fn location(&self) -> &Path {
        &self.path
    }

    fn read_from(
        &mut self,
        after: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<ReadReport> {
        let shared = Arc::clone(&self.shared);
        let mut io = shared.io();
        io.flush(&shared.gathered, false).map_err(|e| Error::io(&self.path, e))?;
        let file = &mut io.file;
        let file_len = file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        file.seek(SeekFrom::Start(JOURNAL_HEADER_LEN as u64)).map_err(|e| Error::io(&self.path, e))?;
        let mut reader = BufReader::with_capacity(1 << 16, &mut *file);
        let mut at = JOURNAL_HEADER_LEN as u64;
        let mut report = ReadReport { last_seq: self.base, ..ReadReport::default() };
        let mut payload = Vec::new();
        let damage = loop {
            let remaining = file_len - at;
            if remaining == 0 {
                break None;
            }
            if remaining < ENTRY_HEADER_LEN as u64 {
                break Some("a partial entry header".to_owned());
            }
            let mut head = [0u8; ENTRY_HEADER_LEN];
            reader.read_exact(&mut head).map_err(|e| Error::io(&self.path, e))?;
            let (len, crc, seq) = parse_entry_header(&head);
            if len > MAX_ENTRY_LEN || u64::from(len) > remaining - ENTRY_HEADER_LEN as u64 {
                break Some(format!("an entry of {len} bytes where {remaining} remain"));
            }
            payload.resize(len as usize, 0);
            reader.read_exact(&mut payload).map_err(|e| Error::io(&self.path, e))?;
            if entry_crc(len, seq, &payload) != crc {
                break Some("a checksum mismatch".to_owned());
            }
            if seq != report.last_seq + 1 {
                break Some(format!("sequence number {seq} where {} was due", report.last_seq + 1));
            }
            if seq > after {
                visit(seq, &payload).map_err(|e| bad_entry(&self.path, at, &format!("entry {seq}: {e}")))?;
            }
            report.last_seq = seq;
            report.entries += 1;
            at += ENTRY_HEADER_LEN as u64 + u64::from(len);
        };
        drop(reader);
        if let Some(what) = damage {
            // Damage at the end is a torn append; damage followed by an intact entry is not.
            if let Some(later) = intact_entry_after(file, &self.path, at, file_len, report.last_seq)? {
                let detail = format!("{what} at byte {at}; an intact entry follows at byte {later}");
                drop(io);
                drop(self.flusher.take());
                let kept = codec::keep_aside(&self.path, SystemClock.now());
                return Err(Error::Corrupt {
                    path: self.path.clone(),
                    reason: CorruptReason::Payload(format!("journal entry damaged: {detail}")),
                    kept_aside: kept,
                });
            }
            report.torn_bytes = file_len - at;
            tracing::warn!(path = %self.path.display(), offset = at, bytes = report.torn_bytes, what = %what, "cutting a torn journal tail");
            file.set_len(at).and_then(|()| file.sync_all()).map_err(|e| Error::io(&self.path, e))?;
        }
        io.written = at;
        drop(io);
        self.end = Some(at);
        Ok(report)
    }

    fn restart(&mut self, base: u64) -> Result<()> {
        self.check_failed()?;
        write_fresh(&self.path, &self.kind, base)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        // Gathered entries are all in the snapshot that preceded this restart: drop them.
        let mut io = self.shared.io();
        self.shared.gathered().clear();
        *io = FileIo::new(file);
        drop(io);
        self.base = base;
        self.end = Some(JOURNAL_HEADER_LEN as u64);
        Ok(())
    }
}

/// Looks for an intact entry (length in bounds, a sequence number above `last_seq` and a
/// matching checksum) at any offset after `from`: proof that damage at `from` is not a torn
/// tail.
fn intact_entry_after(
    file: &mut File,
    path: &Path,
    from: u64,
    file_len: u64,
    last_seq: u64,
) -> Result<Option<u64>> {
    let mut rest = Vec::new();
    file.seek(SeekFrom::Start(from))
        .and_then(|_| file.take(file_len - from).read_to_end(&mut rest))
        .map_err(|e| Error::io(path, e))?;
    // A later entry's number is at most one per entry header that fits in the rest.
    let max_seq = last_seq.saturating_add(1 + (rest.len() / ENTRY_HEADER_LEN) as u64);
    for p in 1..rest.len().saturating_sub(ENTRY_HEADER_LEN - 1) {
        let mut head = [0u8; ENTRY_HEADER_LEN];
        head.copy_from_slice(&rest[p..p + ENTRY_HEADER_LEN]);
        let (len, crc, seq) = parse_entry_header(&head);
        if seq <= last_seq || seq > max_seq || len > MAX_ENTRY_LEN {
            continue;
        }
        let start = p + ENTRY_HEADER_LEN;
        let Some(body) = rest.get(start..start + len as usize) else { continue };
        if entry_crc(len, seq, body) == crc {
            return Ok(Some(from + p as u64));
        }
    }
    Ok(None)
}

fn bad_entry(path: &Path, at: u64, detail: &str) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        reason: CorruptReason::Payload(format!("journal entry at byte {at}: {detail}")),
        kept_aside: None,
    }
}

/// The 40-byte header of a journal whose entries follow `base`.
fn journal_header(kind: &str, base: u64) -> [u8; JOURNAL_HEADER_LEN] {
    let mut h = [0u8; JOURNAL_HEADER_LEN];
    h[..VERSION_AT].copy_from_slice(&JOURNAL_MAGIC);
    h[VERSION_AT..FLAGS_AT].copy_from_slice(&JOURNAL_VERSION.to_le_bytes());
    h[KIND_AT..KIND_AT + kind.len()].copy_from_slice(kind.as_bytes());
    h[BASE_AT..CRC_AT].copy_from_slice(&base.to_le_bytes());
    let crc = crc32fast::hash(&h[..CRC_AT]);
    h[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Why a journal header was refused.
enum HeaderRejection {
    Corrupt(CorruptReason),
    Version(u16),
    WrongKind { expected: String, found: String },
}

impl HeaderRejection {
    fn into_error(self, path: PathBuf, kept_aside: Option<PathBuf>) -> Error {
        match self {
            Self::Corrupt(reason) => Error::Corrupt { path, reason, kept_aside },
            Self::Version(found) => {
                Error::UnsupportedVersion { path, found, supported: JOURNAL_VERSION, kept_aside }
            }
            Self::WrongKind { expected, found } => Error::WrongKind { path, expected, found, kept_aside },
        }
    }
}

/// Checks a journal header (magic, version, checksum, flags, kind); gives the base.
fn check_header(h: &[u8], kind: &str) -> std::result::Result<u64, HeaderRejection> {
    let seen = h.len().min(JOURNAL_MAGIC.len());
    if h[..seen] != JOURNAL_MAGIC[..seen] {
        return Err(HeaderRejection::Corrupt(CorruptReason::BadMagic));
    }
    if h.len() < JOURNAL_HEADER_LEN {
        return Err(HeaderRejection::Corrupt(CorruptReason::Truncated {
            expected: JOURNAL_HEADER_LEN as u64,
            found: h.len() as u64,
        }));
    }
    let version = u16::from_le_bytes([h[VERSION_AT], h[VERSION_AT + 1]]);
    if version != JOURNAL_VERSION {
        return Err(HeaderRejection::Version(version));
    }
    let stored = u32::from_le_bytes([h[CRC_AT], h[CRC_AT + 1], h[CRC_AT + 2], h[CRC_AT + 3]]);
    let computed = crc32fast::hash(&h[..CRC_AT]);
    if stored != computed {
        return Err(HeaderRejection::Corrupt(CorruptReason::ChecksumMismatch { stored, computed }));
    }
    let flags = u16::from_le_bytes([h[FLAGS_AT], h[FLAGS_AT + 1]]);
    if flags != 0 {
        return Err(HeaderRejection::Corrupt(CorruptReason::UnknownFlags { flags }));
    }
    let field = &h[KIND_AT..BASE_AT];
    let mut expected = [0u8; codec::MAX_KIND_LEN];
    expected[..kind.len()].copy_from_slice(kind.as_bytes());
    if field != expected {
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        let found = field[..end].escape_ascii().to_string();
        return Err(HeaderRejection::WrongKind { expected: kind.to_owned(), found });
    }
    let mut base = [0u8; 8];
    base.copy_from_slice(&h[BASE_AT..CRC_AT]);
    Ok(u64::from_le_bytes(base))
}

fn entry_crc(len: u32, seq: u64, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&len.to_le_bytes());
    hasher.update(&seq.to_le_bytes());
    hasher.update(payload);
    hasher.finalize()
}

fn entry_header(len: u32, seq: u64, payload: &[u8]) -> [u8; ENTRY_HEADER_LEN] {
    let mut h = [0u8; ENTRY_HEADER_LEN];
    h[..4].copy_from_slice(&len.to_le_bytes());
    h[4..8].copy_from_slice(&entry_crc(len, seq, payload).to_le_bytes());
    h[8..].copy_from_slice(&seq.to_le_bytes());
    h
}

fn parse_entry_header(h: &[u8; ENTRY_HEADER_LEN]) -> (u32, u32, u64) {
    let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&h[8..]);
    (len, crc, u64::from_le_bytes(seq))
}

/// Replaces the file at `path` with an empty journal following `base`, atomically: a
/// temporary in the same directory, `fsync`, `rename`, `fsync` of the directory.
fn write_fresh(path: &Path, kind: &str, base: u64) -> Result<()> {
    let dir = codec::parent_dir(path);
    let temp = codec::unique_temp(path)?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut f| {
        f.write_all(&journal_header(kind, base))?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| fs::rename(&temp, path)) {
        let _ = fs::remove_file(&temp);
        return Err(Error::io(path, e));
    }
    codec::sync_dir(dir).map_err(|e| Error::io(dir, e))
}

// ---------------------------------------------------------------------------------------
// The typed journal.

/// A journal of operations of type `Op` over a [`Sink`], numbering entries without gaps.
pub struct Journal<Op> {
    sink: Box<dyn Sink>,
    last_seq: u64,
    buf: Vec<u8>,
    _op: PhantomData<fn(&Op) -> Op>,
}

impl<Op> fmt::Debug for Journal<Op> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("sink", &self.sink)
            .field("last_seq", &self.last_seq)
            .finish_non_exhaustive()
    }
}

impl<Op: Serialize + DeserializeOwned> Journal<Op> {
    /// Reads `sink` and calls `apply` with every operation numbered above `after` (the
    /// sequence number a snapshot holds), in order; then the journal is ready for appends.
    ///
    /// When the sink's entries end before `after` (a snapshot newer than the journal, for
    /// example after a checkpoint whose journal restart was lost), the sink is restarted at
    /// `after`. When the sink starts after `after` (entries `after + 1 ..= base` are missing,
    /// for example because the snapshot came from its backup), the journal cannot bring the
    /// state up to date and the open is refused with [`Error::Corrupt`] naming the gap.
    pub fn open<E: From<Error>>(
        mut sink: Box<dyn Sink>,
        after: u64,
        mut apply: impl FnMut(u64, Op) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Self, ReadReport), E> {
        let base = sink.base();
        if base > after {
            return Err(Error::JournalGap {
                path: sink.location().to_path_buf(),
                snapshot_seq: after,
                journal_base: base,
            }
            .into());
        }
        let mut failure: Option<E> = None;
        let report = sink.read_from(after, &mut |seq, bytes| {
            let op: Op = postcard::from_bytes(bytes)
                .map_err(|e| Error::invalid("journal entry", format!("does not decode: {e}")))?;
            apply(seq, op).map_err(|e| {
                failure = Some(e);
                Error::invalid("journal entry", "the operation does not apply")
            })
        });
        let report = match (report, failure) {
            (_, Some(e)) => return Err(e),
            (r, None) => r?,
        };
        let mut last_seq = report.last_seq;
        if last_seq < after {
            sink.restart(after)?;
            last_seq = after;
        }
        Ok((Self { sink, last_seq, buf: Vec::with_capacity(256), _op: PhantomData }, report))
    }

    /// Appends `op` as the next entry and returns its sequence number; when this returns the
    /// entry is as durable as the sink's policy promises.
    pub fn append(&mut self, op: &Op) -> Result<u64> {
        let seq = self.last_seq + 1;
        // Encoded into a reused buffer (grown when an operation does not fit).
        if self.buf.len() < 512 {
            self.buf.resize(512, 0);
        }
        let n = loop {
            let len = self.buf.len();
            match postcard::to_slice(op, &mut self.buf).map(|used| used.len()) {
                Ok(n) => break n,
                Err(postcard::Error::SerializeBufferFull) if len <= MAX_ENTRY_LEN as usize => {
                    self.buf.resize(len * 2, 0);
                }
                Err(e) => {
                    return Err(Error::Encode { kind: "journal entry".to_owned(), reason: e.to_string() });
                }
            }
        };
        self.sink.append(seq, &self.buf[..n])?;
        self.last_seq = seq;
        Ok(seq)
    }

    /// Sequence number of the last entry (or of the snapshot the journal follows).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Makes every appended entry durable now.
    pub fn sync(&mut self) -> Result<()> {
        self.sink.sync()
    }

    /// Drops every entry: the journal now follows `base` (the sequence number a snapshot
    /// that holds them all records).
    pub fn restart(&mut self, base: u64) -> Result<()> {
        self.sink.restart(base)?;
        self.last_seq = base;
        Ok(())
    }

    /// The sink.
    pub fn sink(&self) -> &dyn Sink {
        &*self.sink
    }
}

// ---------------------------------------------------------------------------------------
// The directory lock.

/// How long [`DirLock::acquire`] keeps trying a lock it finds held (see [`DirLock`]).
pub const LOCK_PATIENCE: Duration = Duration::from_millis(500);

/// An exclusive lock on a store directory, held until dropped.
///
/// It is an advisory `flock` on `<dir>/<kind>.lock`, so it binds maxim processes (and other
/// opens in the same process), not other programs; the operating system releases it when the
/// process dies, so a crash never leaves a stale lock. On platforms other than Unix there is
/// no lock (documented in `docs/durability.md`).
///
/// A lock found held is tried again for up to [`LOCK_PATIENCE`] before the open is refused:
/// a `flock` belongs to the open file, and a child process that another thread of this
/// process forks holds a copy of every descriptor until it executes its program (descriptors
/// are closed on exec, not on fork). A store dropped and reopened while a thread spawns a
/// process would otherwise find its own released lock still held, for the microseconds to
/// milliseconds between the fork and the exec. (Found by a test that failed once in a loaded
/// CI run, while the crash tests of the same binary were spawning children.)
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    _file: File,
}

impl DirLock {
    /// Takes the lock of `kind` in `dir` (created if missing), or fails with
    /// [`Error::Locked`] when another open store still holds it after [`LOCK_PATIENCE`].
    pub fn acquire(dir: impl AsRef<Path>, kind: &str) -> Result<Self> {
        codec::check_kind(kind)?;
        let dir = dir.as_ref();
        codec::create_dirs(dir)?;
        let path = dir.join(format!("{kind}{LOCK_SUFFIX}"));
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|e| Error::io(&path, e))?;
        #[cfg(unix)]
        {
            let start = std::time::Instant::now();
            let mut pause = Duration::from_micros(200);
            loop {
                match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                    Ok(()) => break,
                    Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                        if start.elapsed() >= LOCK_PATIENCE {
                            return Err(Error::Locked { path });
                        }
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_millis(50));
                    }
                    Err(e) => return Err(Error::io(&path, e.into())),
                }
            }
        }
        Ok(Self { path, _file: file })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

// ---------------------------------------------------------------------------------------
// The store directory.

/// What [`StoreDir::open`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenReport {
    /// The sequence number the snapshot recorded (0 without a snapshot).
    pub snapshot_seq: u64,
    /// Operations replayed from the journal.
    pub replayed: u64,
    /// Bytes of a torn journal tail that were cut off (0 when none).
    pub torn_bytes: u64,
    /// Stale temporary files of earlier, crashed saves that were removed.
    pub stale_removed: usize,
}

/// A store's directory: its lock, snapshot (`<kind>.snap`) and journal (`<kind>.journal`).
///
/// Opening takes two steps, so that the layer's state is borrowed by one closure at a time:
/// [`StoreDir::open`] locks the directory and cleans up, the layer loads the snapshot at
/// [`snapshot_path`](StoreDir::snapshot_path) itself, and [`StoreDir::replay`] replays the
/// journal after the sequence number the snapshot recorded. See the [module docs](self).
#[derive(Debug)]
pub struct StoreDir<Op> {
    dir: PathBuf,
    kind: String,
    policy: SyncPolicy,
    journal: Option<Journal<Op>>,
    stale_removed: usize,
    _lock: DirLock,
}

impl<Op: Serialize + DeserializeOwned> StoreDir<Op> {
    /// Opens (or creates) the directory of the store of `kind`: creates `dir` if missing,
    /// takes the directory lock ([`Error::Locked`] when another open store holds it) and
    /// removes stale temporaries of this kind's files left by crashed saves (safe: the lock
    /// says that no other writer is at work). The journal is read by [`replay`](Self::replay).
    pub fn open(dir: impl AsRef<Path>, kind: &str, policy: SyncPolicy) -> Result<Self> {
        codec::check_kind(kind)?;
        let dir = dir.as_ref().to_path_buf();
        let _span = tracing::debug_span!("store_dir_open", kind, dir = %dir.display()).entered();
        let lock = DirLock::acquire(&dir, kind)?;
        let stale_removed = remove_stale_temporaries(&dir, kind)?;
        Ok(Self { dir, kind: kind.to_owned(), policy, journal: None, stale_removed, _lock: lock })
    }

    /// Replays the journal: calls `apply` with every operation after `snapshot_seq` (the
    /// sequence number the loaded snapshot recorded, 0 without one), in order, cutting a
    /// torn tail. Damage in the journal, a gap between the snapshot and the journal
    /// ([`Error::JournalGap`]) or an error from `apply` fails it. Call it once, after loading
    /// the snapshot; appends are refused before it.
    pub fn replay<E: From<Error>>(
        &mut self,
        snapshot_seq: u64,
        mut apply: impl FnMut(Op) -> std::result::Result<(), E>,
    ) -> std::result::Result<OpenReport, E> {
        if self.journal.is_some() {
            return Err(Error::invalid("replay", "the journal was replayed already").into());
        }
        let sink = FileSink::open(journal_path(&self.dir, &self.kind), &self.kind, self.policy)?;
        let (journal, read) = Journal::open(Box::new(sink), snapshot_seq, |_, op| apply(op))?;
        let report = OpenReport {
            snapshot_seq,
            replayed: journal.last_seq().saturating_sub(snapshot_seq),
            torn_bytes: read.torn_bytes,
            stale_removed: self.stale_removed,
        };
        tracing::debug!(?report, "journal replayed");
        self.journal = Some(journal);
        Ok(report)
    }

    fn journal_mut(&mut self) -> Result<&mut Journal<Op>> {
        self.journal.as_mut().ok_or_else(|| Error::invalid("journal", "replay the journal before writing"))
    }

    /// Journals `op` and returns its sequence number: when this returns, the operation is as
    /// durable as the policy says. Call it after validating, before applying.
    pub fn append(&mut self, op: &Op) -> Result<u64> {
        self.journal_mut()?.append(op)
    }

    /// Compacts: `save` writes the snapshot to the path it is given, recording the sequence
    /// number it is given (every operation up to it is in the snapshot); then the journal
    /// restarts empty after that number. A crash between the two leaves a snapshot and a
    /// journal whose entries it already holds, which the next open skips.
    pub fn checkpoint<E: From<Error>>(
        &mut self,
        save: impl FnOnce(&Path, u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let path = self.snapshot_path();
        let journal = self.journal_mut()?;
        let seq = journal.last_seq();
        let _span = tracing::debug_span!("store_dir_checkpoint", seq).entered();
        save(&path, seq)?;
        journal.restart(seq)?;
        Ok(())
    }

    /// Makes every journaled operation durable now, whatever the policy.
    pub fn sync(&mut self) -> Result<()> {
        self.journal_mut()?.sync()
    }

    /// Sequence number of the last journaled operation (0 before [`replay`](Self::replay)).
    pub fn last_seq(&self) -> u64 {
        self.journal.as_ref().map_or(0, Journal::last_seq)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The snapshot file, `<dir>/<kind>.snap`.
    pub fn snapshot_path(&self) -> PathBuf {
        snapshot_path(&self.dir, &self.kind)
    }

    /// The sync policy.
    pub fn policy(&self) -> SyncPolicy {
        self.policy
    }
}

/// The snapshot file of `kind` in `dir`.
pub fn snapshot_path(dir: &Path, kind: &str) -> PathBuf {
    dir.join(format!("{kind}{SNAPSHOT_SUFFIX}"))
}

/// The journal file of `kind` in `dir`.
pub fn journal_path(dir: &Path, kind: &str) -> PathBuf {
    dir.join(format!("{kind}{JOURNAL_SUFFIX}"))
}

/// Removes the temporaries that saves of `kind`'s snapshot and journal leave when they
/// crash: `.<kind>.snap.tmp-*`, `.<kind>.snap.backup.tmp-*` and `.<kind>.journal.tmp-*`.
/// Only call it while holding the directory's lock.
fn remove_stale_temporaries(dir: &Path, kind: &str) -> Result<usize> {
    let prefixes = [
        format!(".{kind}{SNAPSHOT_SUFFIX}.tmp-"),
        format!(".{kind}{SNAPSHOT_SUFFIX}{}.tmp-", codec::BACKUP_SUFFIX),
        format!(".{kind}{JOURNAL_SUFFIX}.tmp-"),
    ];
    let mut removed = 0;
    for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if prefixes.iter().any(|p| name.starts_with(p.as_str()))
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let path = entry.path();
            match fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
    }
    if removed > 0 {
        tracing::info!(dir = %dir.display(), removed, "removed stale temporaries of crashed saves");
    }
    Ok(removed)
}

#[cfg(test)]
mod tests;
