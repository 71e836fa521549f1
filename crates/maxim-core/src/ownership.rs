//! The store-ownership guard: a store overwrites only the files it created or read.
//!
//! A new, empty store saved to the path of an existing snapshot would replace months of
//! memory with nothing. So each layer keeps [`FileClaims`]: a save to a file that already
//! exists is refused with [`Error::OverwriteRefused`] unless this store created the file
//! (an earlier save) or read it (a load), or the store was told to overwrite
//! ([`FileClaims::allow_overwrite`]). Paths are compared after resolving symbolic links and
//! `..`, so two spellings of one file are one claim.
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
//! let stranger = FileClaims::new();
//! assert!(matches!(stranger.check_writable(&path), Err(Error::OverwriteRefused { .. })));
//! stranger.allow_overwrite(true);
//! stranger.check_writable(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};

/// The files one store may overwrite; see the [module docs](self).
///
/// Claims are kept behind a lock so that a save through `&self` can record the file it
/// created. A clone holds the same claims (it holds the same contents).
#[derive(Debug, Default)]
pub struct FileClaims {
    claimed: Mutex<Vec<PathBuf>>,
    overwrite: AtomicBool,
}

impl Clone for FileClaims {
    fn clone(&self) -> Self {
        Self { claimed: Mutex::new(self.paths()), overwrite: AtomicBool::new(self.allows_overwrite()) }
    }
}

impl FileClaims {
    /// No claims; overwriting refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ok when `path` may be written: it does not exist, this store created or read it, or
    /// overwriting is allowed. Otherwise [`Error::OverwriteRefused`] naming the path.
    pub fn check_writable(&self, path: &Path) -> Result<()> {
        if self.allows_overwrite() || !matches!(path.try_exists(), Ok(true)) {
            return Ok(());
        }
        if self.owns(path) { Ok(()) } else { Err(Error::OverwriteRefused { path: path.to_path_buf() }) }
    }

    /// Records that this store created or read `path`.
    pub fn claim(&self, path: &Path) {
        let resolved = resolve(path);
        let mut claimed = self.claimed.lock().unwrap_or_else(PoisonError::into_inner);
        if !claimed.contains(&resolved) {
            claimed.push(resolved);
        }
    }

    /// True when this store created or read `path`.
    pub fn owns(&self, path: &Path) -> bool {
        let resolved = resolve(path);
        self.claimed.lock().unwrap_or_else(PoisonError::into_inner).contains(&resolved)
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

    /// The claimed files, resolved, in the order they were claimed.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.claimed.lock().unwrap_or_else(PoisonError::into_inner).clone()
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
    fn a_claim_made_before_the_file_exists_holds_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        let claims = FileClaims::new();
        claims.claim(&path);
        std::fs::write(&path, b"x").unwrap();
        claims.check_writable(&path).unwrap();
        assert_eq!(claims.paths(), vec![std::fs::canonicalize(&path).unwrap()]);
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
}
