//! A thread-safe handle on a hub, for agents that record from several threads.
//!
//! [`SharedHub`] is `Clone + Send + Sync`: every clone reaches the same memory, and each call
//! holds the hub's lock for its duration, so writes from several threads are serialised in
//! the order they take the lock and every read sees whole writes. A thread that panics while
//! holding the lock does not poison the memory for the others: each write is validated before
//! it changes anything, so the state a panic leaves is a whole state.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hippocampus::NewEpisode;
use maxim_core::RecordId;

use super::{Captured, Forget, ForgetReport, KnowledgeQuery, MemoryHub, Result, SessionReport, SessionStart};
use crate::context::KnowledgeContext;

/// A `Clone + Send + Sync` handle on one [`MemoryHub`].
#[derive(Debug, Clone)]
pub struct SharedHub {
    inner: Arc<Mutex<MemoryHub>>,
}

impl From<MemoryHub> for SharedHub {
    fn from(hub: MemoryHub) -> Self {
        Self { inner: Arc::new(Mutex::new(hub)) }
    }
}

impl MemoryHub {
    /// This hub behind a thread-safe handle.
    pub fn into_shared(self) -> SharedHub {
        SharedHub::from(self)
    }
}

impl SharedHub {
    /// The hub itself, locked for as long as the guard lives (for any call the handle does
    /// not forward).
    pub fn lock(&self) -> MutexGuard<'_, MemoryHub> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`MemoryHub::capture`].
    pub fn capture(&self, episode: NewEpisode) -> Result<RecordId> {
        self.lock().capture(episode)
    }

    /// [`MemoryHub::capture_detailed`].
    pub fn capture_detailed(&self, episode: NewEpisode) -> Result<Captured> {
        self.lock().capture_detailed(episode)
    }

    /// [`MemoryHub::on_session_start`].
    pub fn on_session_start(&self) -> SessionStart {
        self.lock().on_session_start()
    }

    /// [`MemoryHub::on_session_end`].
    pub fn on_session_end(&self) -> SessionReport {
        self.lock().on_session_end()
    }

    /// [`MemoryHub::knowledge_context`].
    pub fn knowledge_context(&self, query: &KnowledgeQuery, limit: usize) -> Result<KnowledgeContext> {
        self.lock().knowledge_context(query, limit)
    }

    /// [`MemoryHub::forget`].
    pub fn forget(&self, what: &Forget) -> Result<ForgetReport> {
        self.lock().forget(what)
    }

    /// [`MemoryHub::export`].
    pub fn export(&self) -> serde_json::Value {
        self.lock().export()
    }

    /// The hub back, when this is the last handle (else the handle itself).
    pub fn into_inner(self) -> std::result::Result<MemoryHub, Self> {
        match Arc::try_unwrap(self.inner) {
            Ok(m) => Ok(m.into_inner().unwrap_or_else(PoisonError::into_inner)),
            Err(inner) => Err(Self { inner }),
        }
    }
}
