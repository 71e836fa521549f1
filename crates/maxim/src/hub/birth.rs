//! The memory's birth, and the agent's imprint window that starts with it.
//!
//! Seed 002 (lex-memory §5.3): during an agent's first seven days, its *imprint window*,
//! reinforcements count three times (0.3 instead of 0.1) and a new trace starts with one
//! reinforcement. lex-memory only receives the flag; the window belongs to whoever knows
//! when the agent was born. In maxim that is the hub: a memory is born when its directory is
//! first opened (or when an in-memory hub is built), the time is kept in
//! `hub/birth.snap`, and every layer's trace settings get the same window
//! ([`HubConfig::imprint_window`](super::HubConfig::imprint_window), on by default), so a
//! reopened memory keeps its window and the layers never disagree on it.
//!
//! A directory that already held a memory before births were recorded is taken as born at
//! the epoch: its window closed long ago.
//!
//! ```
//! use maxim::MemoryHub;
//! use maxim::maxim_core::{ManualClock, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let dir = tempfile::tempdir()?;
//! let hub = MemoryHub::builder().data_dir(dir.path()).clock(clock.shared()).open()?;
//! assert_eq!(hub.born(), Timestamp::from_secs(1_700_000_000));
//! assert!(hub.imprint_active());
//! drop(hub);
//! clock.advance(maxim::maxim_core::days(8));
//! let hub = MemoryHub::builder().data_dir(dir.path()).clock(clock.shared()).open()?;
//! assert_eq!(hub.born(), Timestamp::from_secs(1_700_000_000), "a reopened memory keeps its birth");
//! assert!(!hub.imprint_active());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use maxim_core::Timestamp;
use maxim_core::trace::TraceParams;
use serde::{Deserialize, Serialize};

use super::{MemoryHub, Result};

/// The birth file, in the partition's `hub/` directory.
pub(super) const BIRTH_FILE: &str = "birth.snap";
const KIND: &str = "hub-birth";
/// The layer directories whose presence shows a memory older than its birth file.
const LAYER_DIRS: [&str; 3] = ["hippocampus", "atl", "crossgraph"];

#[derive(Debug, Serialize, Deserialize)]
struct Birth {
    schema: u32,
    born: Timestamp,
}

/// When the memory in the partition directory `dir` was born: read from `hub/birth.snap`,
/// or `now` for a fresh directory (saved before any layer is opened, so a crash cannot leave
/// a memory without it), or the epoch for a memory made before births were recorded.
pub(super) fn born(dir: &Path, now: Timestamp) -> Result<Timestamp> {
    let path = dir.join("hub").join(BIRTH_FILE);
    match maxim_core::codec::load_with_recovery::<Birth>(&path, KIND) {
        Ok((birth, recovery)) => {
            if recovery.used_backup() {
                tracing::warn!(path = %path.display(), "the memory's birth came from the backup");
            }
            return Ok(birth.born);
        }
        Err(e) if maxim_core::codec::is_missing(&e) => {}
        Err(e) => return Err(e.into()),
    }
    let older = LAYER_DIRS.iter().any(|d| dir.join(d).exists());
    let born = if older { Timestamp::EPOCH } else { now };
    let hub = dir.join("hub");
    std::fs::create_dir_all(&hub).map_err(|e| super::Error::io(&hub, e))?;
    maxim_core::codec::save(&path, KIND, &Birth { schema: 1, born })?;
    Ok(born)
}

/// `trace` with the imprint window starting at `born`, unless it names a window of its own.
pub(super) fn with_window(trace: TraceParams, born: Timestamp) -> TraceParams {
    if trace.imprint_started_at().is_some() { trace } else { trace.with_imprint_start(born) }
}

impl MemoryHub {
    /// When this memory was born: its directory first opened, or this in-memory hub built
    /// (see the [module docs](self)).
    pub fn born(&self) -> Timestamp {
        self.born
    }

    /// Whether the agent's imprint window is open now: the hub's window is on
    /// ([`HubConfig::imprint_window`](super::HubConfig::imprint_window)) and the memory is
    /// less than seven days old.
    pub fn imprint_active(&self) -> bool {
        self.config.imprint_window
            && TraceParams::default().with_imprint_start(self.born).imprint_active(self.clock.now())
    }
}
