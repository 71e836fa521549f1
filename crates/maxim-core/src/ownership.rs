//! The store-ownership guard: a store overwrites only the files it created or read.
//!
//! A new, empty store saved to the path of an existing snapshot would replace months of
//! memory with nothing. So each layer keeps [`FileClaims`]: a save to a file that already
//! exists is refused with [`Error::OverwriteRefused`] unless this store created the file
//! (an earlier save) or read it (a load), or the store was told to overwrite
//! ([`FileClaims::allow_overwrite`]).
//!
//! A claim names the *file*, not just the path: the path (resolved through symbolic links
//! and `..`, so two spellings of one file are one claim) together with the identity of the
//! file found there when it was claimed (on Unix its device, inode, size and modification
//! time). A file that later appears at a claimed path (someone's notes, another store's
//! snapshot) is a different file and is not overwritten. Each save replaces the file, so a
//! layer claims the path again after every save and load.
//!
//! A store saves through [`FileClaims::save`], which checks, writes and claims as one step:
//! saves through one store's claims are serialised, so a save from one thread never finds
//! the file another thread's save of the same store has just written and not yet claimed
//! (checking, writing and claiming separately refused such saves as overwrites of a
//! stranger's file).
//!
//! ```
//! use maxim_core::ownership::FileClaims;
//! use maxim_core::Error;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("atl.snap");
//! let ours = FileClaims::new();
//! ours.check_writable(&path)?; // no file yet: anyone may create it
//! std::fs::write(&path, b"saved")?;
//! ours.claim(&path);
//! ours.check_writable(&path)?; // ours: we created it
//!
//! // Someone replaces it with another file: no longer ours.
//! std::fs::remove_file(&path)?;
//! std::fs::write(&path, b"someone's notes, a little longer")?;
//! assert!(matches!(ours.check_writable(&path), Err(Error::OverwriteRefused { .. })));
//! ours.claim(&path); // (a load would claim what it read)
//!
//! let stranger = FileClaims::new();
//! assert!(matches!(stranger.check_writable(&path), Err(Error::OverwriteRefused { .. })));
//! stranger.allow_overwrite(true);
//! stranger.check_writable(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use crate::codec::{self, SaveReport};
use crate::error::{Error, Result};

/// The files one store may overwrite; see the [module docs](self).
///
/// Claims are kept behind a lock so that a save through `&self` can record the file it
/// created. A clone holds the same claims (it holds the same contents).
#[derive(Debug, Default)]
pub struct FileClaims {
    claimed: Mutex<Vec<(PathBuf, Option<Identity>)>>,
    overwrite: AtomicBool,
    /// Held from the check to the claim of one save, so saves do not interleave.
    saving: Mutex<()>,
}

/// What tells one file from another at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

/// The identity of the file at `path`, `None` when there is none (or it cannot be read).
fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (dev, ino) = {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let (dev, ino) = (0, 0);
    Some(Identity { dev, ino, len: meta.len(), modified: meta.modified().ok() })
}

impl Clone for FileClaims {
    fn clone(&self) -> Self {
        let claimed = self.claimed.lock().unwrap_or_else(PoisonError::into_inner).clone();
        Self {
            claimed: Mutex::new(claimed),
            overwrite: AtomicBool::new(self.allows_overwrite()),
            saving: Mutex::new(()),
        }
    }
}

impl FileClaims {
    /// No claims; overwriting refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ok when `path` may be written: no file is there, the file there is the one this store
    /// created or read, or overwriting is allowed. Otherwise [`Error::OverwriteRefused`]
    /// naming the path.
    pub fn check_writable(&self, path: &Path) -> Result<()> {
        if self.allows_overwrite() || !matches!(path.try_exists(), Ok(true)) {
            return Ok(());
        }
        if self.owns(path) { Ok(()) } else { Err(Error::OverwriteRefused { path: path.to_path_buf() }) }
    }

    /// Saves `value` to `path` through [`codec::save`] under the guard: refused with
    /// [`Error::OverwriteRefused`] when [`check_writable`](Self::check_writable) refuses,
    /// claimed when written. Saves through one set of claims run one at a time.
    pub fn save<T: Serialize + ?Sized>(&self, path: &Path, kind: &str, value: &T) -> Result<SaveReport> {
        let _one_at_a_time = self.saving.lock().unwrap_or_else(PoisonError::into_inner);
        self.check_writable(path)?;
        let report = codec::save(path, kind, value)?;
        self.claim(path);
        Ok(report)
    }

    /// Records that this store created or read the file now at `path` (replacing an earlier
    /// claim of the same path).
    pub fn claim(&self, path: &Path) {
        let resolved = resolve(path);
        let id = identity(path);
        let mut claimed = self.claimed.lock().unwrap_or_else(PoisonError::into_inner);
        match claimed.iter_mut().find(|(p, _)| *p == resolved) {
            Some(entry) => entry.1 = id,
            None => claimed.push((resolved, id)),
        }
    }

    /// True when the file now at `path` is one this store created or read (or, when no file
    /// is there, when this store claimed the path while it was empty too).
    pub fn owns(&self, path: &Path) -> bool {
        let resolved = resolve(path);
        let id = identity(path);
        self.claimed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|(p, i)| *p == resolved && *i == id)
    }

    /// Lets this store overwrite any file (`true`), or only its own again (`false`, the
    /// default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.overwrite.store(allow, Ordering::Relaxed);
    }

    /// Whether this store may overwrite any file.
    pub fn allows_overwrite(&self) -> bool {
        self.overwrite.load(Ordering::Relaxed)
    }

    /// The claimed paths, resolved, in the order they were first claimed.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.claimed.lock().unwrap_or_else(PoisonError::into_inner).iter().map(|(p, _)| p.clone()).collect()
    }
}

/// `path` with symbolic links and `..` resolved as far as it exists: the whole path for an
/// existing file, the directory plus the file name for a file not yet written.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(parent), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_made_before_the_file_exists_does_not_cover_a_file_that_appears_later() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        let claims = FileClaims::new();
        claims.claim(&path);
        claims.check_writable(&path).unwrap();
        std::fs::write(&path, b"x").unwrap();
        assert!(claims.check_writable(&path).is_err());
        claims.claim(&path);
        claims.check_writable(&path).unwrap();
        assert_eq!(claims.paths(), vec![std::fs::canonicalize(&path).unwrap()]);
    }

    /// Defect 6: a file that replaces a claimed one is not the store's to overwrite.
    #[test]
    fn a_different_file_at_a_claimed_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        crate::codec::save(&path, "test", &1u8).unwrap();
        let claims = FileClaims::new();
        claims.claim(&path);
        claims.check_writable(&path).unwrap();
        // Replaced by rename (a new inode) and by delete-and-create.
        let other = dir.path().join("other");
        std::fs::write(&other, b"notes").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(matches!(claims.check_writable(&path), Err(Error::OverwriteRefused { .. })));
        assert!(!claims.owns(&path));
        std::fs::remove_file(&path).unwrap();
        claims.check_writable(&path).unwrap(); // nothing there: nothing to destroy
        std::fs::write(&path, b"more notes of another length").unwrap();
        assert!(claims.check_writable(&path).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"more notes of another length");
    }

    #[test]
    fn two_spellings_of_one_file_are_one_claim() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let path = dir.path().join("h.snap");
        std::fs::write(&path, b"x").unwrap();
        let claims = FileClaims::new();
        claims.claim(&path);
        claims.claim(&dir.path().join("sub").join("..").join("h.snap"));
        assert_eq!(claims.paths().len(), 1);
        assert!(claims.owns(&dir.path().join("sub/../h.snap")));
    }

    #[test]
    fn strangers_are_refused_and_the_error_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        std::fs::write(&path, b"x").unwrap();
        let claims = FileClaims::new();
        let err = claims.check_writable(&path).unwrap_err();
        assert!(matches!(&err, Error::OverwriteRefused { path: p } if p == &path));
        assert!(err.to_string().contains("h.snap"));
        let copy = claims.clone();
        claims.allow_overwrite(true);
        assert!(claims.check_writable(&path).is_ok());
        assert!(copy.check_writable(&path).is_err(), "a clone keeps the setting it had");
        claims.allow_overwrite(false);
        assert!(claims.check_writable(&path).is_err());
    }

    /// The race that hung CI: with check, write and claim as separate steps, a thread
    /// found the file another thread of the same store had just renamed into place (and
    /// not yet claimed) and was refused. Through `save` every one of these saves succeeds.
    #[test]
    fn saves_of_one_store_from_several_threads_are_never_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        let claims = FileClaims::new();
        claims.save(&path, "test", &0u64).unwrap();
        let refused = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (claims, path, refused) = (&claims, &path, &refused);
                s.spawn(move || {
                    for i in 0..40 {
                        if claims.save(path, "test", &(t * 100 + i)).is_err() {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(refused.load(Ordering::Relaxed), 0);
        assert!(claims.owns(&path));
        let stranger = FileClaims::new();
        let err = stranger.save(&path, "test", &1u64).unwrap_err();
        assert!(matches!(err, Error::OverwriteRefused { .. }));
        assert!(codec::load::<u64>(&path, "test").is_ok(), "a refused save leaves the file whole");
    }
}
