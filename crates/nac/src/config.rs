//! [`NacConfig`]: the settings of the reward-learning store (`spec/maxim-reference.md` §8).
//!
//! ```
//! use nac::NacConfig;
//! let mut config = NacConfig::default();
//! config.learning_rate = 0.5;
//! assert!(config.validate().is_ok());
//! assert!((config.alpha() - 0.275).abs() < 1e-12);
//! config.max_links = 0;
//! assert!(config.validate().is_err());
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Longest history a link may be configured to keep.
pub const MAX_HISTORY_BOUND: usize = 100_000;

/// The settings of a [`Nac`](crate::Nac). Numbers and flags only; set fields by assignment on
/// a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NacConfig {
    /// Base learning rate in `[0, 1]` (default 0.2, the original's `base_learning_rate`).
    pub learning_rate: f64,
    /// Novelty in `[0, 1]` folded into the rate (default 0.5).
    pub novelty: f64,
    /// Most links held; a new link at capacity evicts the least confident (default 10,000).
    pub max_links: usize,
    /// Seconds within which an outcome is linked to a pending event (default 300). Events
    /// older than twice the window are dropped.
    pub temporal_window_secs: f64,
    /// Most pending events kept; the oldest is dropped beyond (default 100).
    pub max_pending_events: usize,
    /// Context similarity from which an unattributed outcome is linked to a pending event
    /// (default 0.5).
    pub attribution_similarity: f64,
    /// Confidence a link needs to take part in a prediction (default 0.3).
    pub min_confidence_threshold: f64,
    /// Delays kept per link (default 100).
    pub max_delays: usize,
    /// Past values V kept per link (default 50).
    pub max_history: usize,
    /// Memory ids kept per link (default 50; the oldest is dropped).
    pub max_memory_ids: usize,
    /// Observation times kept per link, which its promotion candidate carries (default 100).
    pub max_observation_times: usize,
}

impl Default for NacConfig {
    fn default() -> Self {
        Self {
            learning_rate: 0.2,
            novelty: 0.5,
            max_links: 10_000,
            temporal_window_secs: 300.0,
            max_pending_events: 100,
            attribution_similarity: 0.5,
            min_confidence_threshold: 0.3,
            max_delays: 100,
            max_history: 50,
            max_memory_ids: 50,
            max_observation_times: 100,
        }
    }
}

impl NacConfig {
    /// Checks every setting: rates and thresholds finite in `[0, 1]`, the window finite and
    /// positive, every bound between 1 and [`MAX_HISTORY_BOUND`] (`max_links` and
    /// `max_pending_events` at least 1).
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("learning_rate", self.learning_rate),
            ("novelty", self.novelty),
            ("attribution_similarity", self.attribution_similarity),
            ("min_confidence_threshold", self.min_confidence_threshold),
        ] {
            maxim_core::check_unit(field, v)?;
        }
        if !(self.temporal_window_secs.is_finite() && self.temporal_window_secs > 0.0) {
            return Err(Error::out_of_range(
                "temporal_window_secs",
                self.temporal_window_secs,
                "a finite number > 0",
            ));
        }
        for (field, v) in [("max_links", self.max_links), ("max_pending_events", self.max_pending_events)] {
            if v == 0 || v > u32::MAX as usize {
                return Err(Error::out_of_range(field, v as f64, "between 1 and 2^32 - 1"));
            }
        }
        for (field, v) in [
            ("max_delays", self.max_delays),
            ("max_history", self.max_history),
            ("max_memory_ids", self.max_memory_ids),
            ("max_observation_times", self.max_observation_times),
        ] {
            if v == 0 || v > MAX_HISTORY_BOUND {
                return Err(Error::out_of_range(field, v as f64, "between 1 and 100000"));
            }
        }
        Ok(())
    }

    /// The Rescorla–Wagner rate these settings give (see [`alpha`](crate::alpha)).
    pub fn alpha(&self) -> f64 {
        crate::link::alpha(self.learning_rate, self.novelty)
    }
}
