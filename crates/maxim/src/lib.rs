//! `maxim`: a memory that accumulates, for AI agents.
//!
//! The facade over every maxim crate. It re-exports each layer (and `maxim-core` as
//! [`core`]) and will wire them into a `MemoryHub`; the `maxim` program runs a demo and looks
//! into memory directories (`cargo run --release -p maxim -- demo`).
//!
//! ```
//! use maxim::atl::{Atl, spec};
//! use maxim::core::{ManualClock, Timestamp};
//! use maxim::hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut episodes = Hippocampus::builder().clock(clock.shared()).build()?;
//! let mut concepts = Atl::builder().clock(clock.shared()).build()?;
//! let mut seen = NewEpisode::default();
//! seen.perception.detected_objects = vec!["coffee_mug".into()];
//! let episode = episodes.capture(seen)?;
//! let mut mug = spec("Coffee Mugs", "object");
//! mug.source_episode = Some(episode);
//! let first = concepts.find_or_create(&mug)?;
//! assert_eq!(concepts.find_or_create(&spec("coffee mug", "object"))?.id, first.id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use angular_gyrus;
pub use atl;
pub use cerebellum;
pub use crossgraph;
pub use hippocampus;
pub use ips_gate;
pub use maxim_core as core;
pub use nac;
pub use promoter;
