//! Memory traces: how records strengthen and fade (`spec/lex-memory.md`).

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// The seven kinds of trace, each with its starting strength and base decay rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// Never decays: hard-coded values (starting strength 1.0, rate 0.0).
    Firmware,
    /// The self-model (1.0, 0.001).
    Identity,
    /// How-to knowledge, skills (0.4, 0.005).
    Procedural,
    /// Trust records (0.3, 0.008).
    Trust,
    /// Facts and concepts (0.5, 0.010).
    Semantic,
    /// Events, episodes (0.6, 0.020).
    Episodic,
    /// Transient perception (0.4, 0.100).
    Sensory,
}

impl TraceKind {
    /// Every kind, in the reference's order.
    pub const ALL: [Self; 7] = [
        Self::Firmware,
        Self::Identity,
        Self::Procedural,
        Self::Trust,
        Self::Semantic,
        Self::Episodic,
        Self::Sensory,
    ];

    /// Strength (and peak) of a new trace of this kind.
    pub const fn starting_strength(self) -> f64 {
        match self {
            Self::Firmware | Self::Identity => 1.0,
            Self::Procedural | Self::Sensory => 0.4,
            Self::Trust => 0.3,
            Self::Semantic => 0.5,
            Self::Episodic => 0.6,
        }
    }

    /// Base decay rate of this kind (the exponent of the power law before emotion).
    pub const fn base_decay_rate(self) -> f64 {
        match self {
            Self::Firmware => 0.0,
            Self::Identity => 0.001,
            Self::Procedural => 0.005,
            Self::Trust => 0.008,
            Self::Semantic => 0.010,
            Self::Episodic => 0.020,
            Self::Sensory => 0.100,
        }
    }
}

/// The trace state a record carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceState {
    kind: TraceKind,
    strength: f64,
    peak: f64,
    emotional_intensity: f64,
    emotional_valence: f64,
    reinforcement_count: u32,
    last_reinforced: Timestamp,
}

impl TraceState {
    /// A new trace of `kind` made at `now`: strength and peak at the kind's starting strength,
    /// no emotion, no reinforcements.
    pub fn new(kind: TraceKind, now: Timestamp) -> Self {
        let s = kind.starting_strength();
        Self {
            kind,
            strength: s,
            peak: s,
            emotional_intensity: 0.0,
            emotional_valence: 0.0,
            reinforcement_count: 0,
            last_reinforced: now,
        }
    }

    /// The kind.
    pub fn kind(&self) -> TraceKind {
        self.kind
    }

    /// The strength as last computed.
    pub fn strength(&self) -> f64 {
        self.strength
    }

    /// The highest strength reached.
    pub fn peak(&self) -> f64 {
        self.peak
    }

    /// Emotional intensity in `[0, 1]`; slows decay.
    pub fn emotional_intensity(&self) -> f64 {
        self.emotional_intensity
    }

    /// Emotional valence in `[-1, 1]`.
    pub fn emotional_valence(&self) -> f64 {
        self.emotional_valence
    }

    /// Reinforcements so far.
    pub fn reinforcement_count(&self) -> u32 {
        self.reinforcement_count
    }

    /// When the trace was last reinforced or rehearsed.
    pub fn last_reinforced(&self) -> Timestamp {
        self.last_reinforced
    }

    /// Records a retrieval: `last_reinforced = now`, strength and peak unchanged (the
    /// rehearsal of lex-memory's `retrieve_and_reinforce`). A retrieval keeps a trace hot.
    pub fn rehearse(&mut self, now: Timestamp) {
        self.last_reinforced = self.last_reinforced.max(now);
    }
}
