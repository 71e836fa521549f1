//! The SCN (suprachiasmatic nucleus): when things happen (`spec/maxim-reference.md` §12.2).
//!
//! Every event the memory registers gets a [`TemporalSignature`]: its phase and bin in four
//! rhythms (the day, the week, the month, the year), computed in a [`TimeZone`] that is a
//! setting, never the machine's. The [`Scn`] store keeps the signature of every registered
//! id and four bounded rhythm indices (24 hour bins, 7 day bins, 4 week-of-month bins,
//! 12 month bins) that answer "what happened around this time of day", "on Mondays", "in
//! March"; it finds the rhythmic bins, adjusts significance thresholds by how busy an hour
//! is, and groups ids by (hour, weekday) cluster for the hippocampus's sleep. Its
//! [`Oscillator`] (coupled Kuramoto oscillators) learns how strongly the events lock to each
//! rhythm ([`Scn::phase_coherence`]), how unusual a moment is
//! ([`Scn::temporal_anomaly_score`]) and the usual time of day of each kind of event.
//!
//! Principal types:
//! - [`Scn`], the store (built with [`Scn::builder`], configured by [`ScnConfig`]; in memory
//!   or journaled on a directory, see [`journal`]);
//! - [`TemporalSignature`], [`TimeZone`] and [`Rhythm`];
//! - [`Oscillator`] and its [`OscillatorConfig`].
//!
//! Errors are [`maxim_core::Error`]s: every failure of the SCN is one the core names (a
//! number out of range, an invalid argument, an unknown or duplicate id, a file refused), so
//! the module has no error enum of its own.
//!
//! ```
//! use maxim::maxim_core::{ManualClock, RecordId, Timestamp};
//! use maxim::scn::{Scn, TimeZone};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut scn = Scn::builder().clock(clock.shared()).time_zone(TimeZone::from_offset_secs(3600)?).build()?;
//! // 2023-11-14 was a Tuesday; 22:13:20 UTC is 23:13:20 at UTC+1.
//! let sig = scn.register(RecordId::from_u128(1), Timestamp::from_secs(1_700_000_000), 0.5)?;
//! assert_eq!(sig.bins(), (23, 1, 1, 10));
//! assert_eq!(scn.query_hour(23)?, vec![RecordId::from_u128(1)]);
//! assert!(scn.is_sole_representative(RecordId::from_u128(1))?);
//! // Forty evenings at 23:00 make a rhythm.
//! for day in 1..=40u128 {
//!     let at = Timestamp::from_secs(1_700_000_000 + day as i64 * 86_400);
//!     scn.register(RecordId::from_u128(1 + day), at, 0.5)?;
//! }
//! assert!(scn.phase_coherence() > 0.99);
//! assert!(scn.is_rhythmic_bin(maxim::scn::Rhythm::Circadian, 23)?);
//! assert!(scn.remove(RecordId::from_u128(1))?);
//! assert_eq!(scn.len(), 40);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod calendar;
pub mod journal;
pub mod oscillator;
pub mod persist;
pub mod store;

pub use calendar::{MAX_OFFSET_SECS, Rhythm, TemporalSignature, TimeZone, civil_from_days, is_leap_year};
pub use oscillator::{Oscillator, OscillatorConfig};
pub use persist::{SCHEMA_VERSION, SNAPSHOT_KIND};
pub use store::{MAX_BIN_CAPACITY, Op, RhythmicBin, Scn, ScnBuilder, ScnConfig, ScnStats, TimeQuery};

/// `Result` with [`maxim_core::Error`] as the default error.
pub type Result<T, E = maxim_core::Error> = std::result::Result<T, E>;
