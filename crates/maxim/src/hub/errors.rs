//! The hub remembers its own errors: the queue between the [`ErrorTraces`] layer and the hub.
//!
//! [`MemoryHub::error_traces`] returns an [`ErrorTraces`] layer to add to the host program's
//! `tracing_subscriber` registry. Its sink is the hub's [`ErrorQueue`], shared by the layer
//! and the hub: the layer only *queues* (a short lock on the queue alone, never a hub lock,
//! never a call into the hub), so an error logged by the hub itself, while it or a
//! [`SharedHub`](super::SharedHub) lock is held, cannot deadlock. The hub *drains* the queue
//! at its boundaries: before each [`capture`](MemoryHub::capture), at
//! [`on_session_start`](MemoryHub::on_session_start) and at the start of
//! [`on_session_end`](MemoryHub::on_session_end) (so the session's errors are consolidated
//! and checkpointed with it), and on [`drain_error_traces`](MemoryHub::drain_error_traces).
//! Each queued error becomes an episode captured like any other (source `program_log`, the
//! configured trust, a failed outcome whose error is the message), after the layer's
//! 60-second debounce per level and message prefix (`spec/lex-memory.md` §7).
//!
//! The queue is bounded ([`ErrorQueue::DEFAULT_CAPACITY`]): when the hub does not drain for a
//! long time, further errors are dropped and counted, never blocking the program.
//!
//! ```
//! use maxim::MemoryHub;
//! use maxim::hub::RecallOptions;
//! use maxim::maxim_core::{ManualClock, Timestamp};
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hub = MemoryHub::builder().clock(clock.shared()).id_seed(1).build()?;
//! let subscriber = tracing_subscriber::registry().with(hub.error_traces()?);
//! tracing::subscriber::with_default(subscriber, || {
//!     tracing::error!("[planner] no route to the kitchen");
//!     tracing::error!("[planner] no route to the kitchen"); // debounced
//! });
//! assert_eq!(hub.drain_error_traces(), 1);
//! let hits = hub.recall("route kitchen", &RecallOptions::default())?;
//! assert_eq!(hits.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hippocampus::NewEpisode;

use super::{MemoryHub, Result};
use crate::error_traces::{ErrorSink, ErrorTraces, ErrorTracesConfig};

/// The bounded queue of error episodes between an [`ErrorTraces`] layer and the hub (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct ErrorQueue {
    queue: Mutex<VecDeque<NewEpisode>>,
    /// Episodes waiting, read without the lock (a capture checks it on every call).
    pending: AtomicUsize,
    /// Episodes dropped because the queue was full.
    dropped: AtomicU64,
    /// Set while the hub drains, so that a capture inside the drain does not drain again.
    draining: AtomicBool,
    capacity: usize,
}

impl ErrorQueue {
    /// Episodes held before further ones are dropped, by default.
    pub const DEFAULT_CAPACITY: usize = 1024;

    /// An empty queue holding at most `capacity` episodes (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            pending: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            draining: AtomicBool::new(false),
            capacity: capacity.max(1),
        }
    }

    /// Episodes waiting for the hub.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Episodes dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Takes every waiting episode, oldest first.
    fn take(&self) -> VecDeque<NewEpisode> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        self.pending.store(0, Ordering::Release);
        std::mem::take(&mut *queue)
    }
}

impl Default for ErrorQueue {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl ErrorSink for ErrorQueue {
    /// Queues the episode, or drops and counts it when the queue is full. Holds only the
    /// queue's own lock, for a push.
    fn record(&self, episode: NewEpisode) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.len() >= self.capacity {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        queue.push_back(episode);
        self.pending.store(queue.len(), Ordering::Release);
    }
}

impl MemoryHub {
    /// The `tracing` layer that turns the host program's ERROR events into episodes of this
    /// hub's memory: add it to a `tracing_subscriber` registry (see the [module
    /// docs](self)). It reads the hub's clock (for the debounce and the episodes' times),
    /// records into the hub's partition, and takes the rest of its settings from
    /// [`HubBuilder::error_traces`](super::HubBuilder::error_traces) (default: errors only,
    /// trust 0.6, 60-second debounce). Any number of layers may be made; they share the
    /// queue, each with its own debounce.
    ///
    /// Errors: a configured trust NaN or outside `[0, 1]`.
    pub fn error_traces(&self) -> Result<ErrorTraces<Arc<ErrorQueue>>> {
        let mut config = self.error_config.clone();
        config.partition = Some(self.partition.clone());
        Ok(ErrorTraces::builder(Arc::clone(&self.errors)).clock(self.clock.clone()).config(config).build()?)
    }

    /// The queue the hub's error layers fill.
    pub fn error_queue(&self) -> &Arc<ErrorQueue> {
        &self.errors
    }

    /// Captures every queued error episode now, oldest first; returns how many were stored.
    /// A refused episode is logged (at WARN) and dropped. Nothing happens inside another
    /// drain.
    pub fn drain_error_traces(&mut self) -> usize {
        if self.errors.pending() == 0 || self.errors.draining.swap(true, Ordering::AcqRel) {
            return 0;
        }
        let _draining = Draining(Arc::clone(&self.errors));
        let mut stored = 0;
        for episode in self.errors.take() {
            match self.capture(episode) {
                Ok(_) => stored += 1,
                Err(e) => tracing::warn!(error = %e, "an error trace was refused"),
            }
        }
        stored
    }
}

/// Ends a drain when dropped, even when a capture panics.
struct Draining(Arc<ErrorQueue>);

impl Drop for Draining {
    fn drop(&mut self) {
        self.0.draining.store(false, Ordering::Release);
    }
}

/// The default settings of the hub's error layers.
pub(super) fn default_config() -> ErrorTracesConfig {
    ErrorTracesConfig::default()
}
