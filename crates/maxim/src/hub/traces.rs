//! Uses through the hub: the agent says which records it acted on, and their traces are
//! reinforced in whichever layer holds them.
//!
//! The hub's reads ([`recall`](MemoryHub::recall), [`knowledge_context`](MemoryHub::knowledge_context))
//! never write. What the agent *used* of an answer is its own call:
//! [`MemoryHub::mark_used`] records an access to each record and reinforces its trace, as the
//! layer's own `touch` does (0.1, or 0.3 in the layer's imprint window; see
//! `docs/decisions.md`, "Traces in the layers"). A used record then ranks higher in the next
//! hour's recalls and knowledge contexts (`1 + trace_score`), stays hot in its layer's
//! consolidation, and decays from a higher strength.
//!
//! ```
//! use maxim::MemoryHub;
//! use maxim::hippocampus::NewEpisode;
//! use maxim::maxim_core::{ManualClock, MemoryRecord, Timestamp};
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hub = MemoryHub::builder().clock(clock.shared()).id_seed(1).build()?;
//! let id = hub.capture(NewEpisode::default())?;
//! assert_eq!(hub.mark_used(&[id]), 1);
//! // One reinforcement for the use, one for the capture: a new memory is in its imprint
//! // window (`hub::birth`).
//! assert_eq!(hub.hippocampus().peek(id).unwrap().meta().trace.reinforcement_count(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use maxim_core::{LayerKind, MemoryLayer, RecordId};

use super::MemoryHub;

impl MemoryHub {
    /// Records a use of each of `ids` in the layer that holds it (an access and a
    /// reinforcement of its trace, see the [module docs](self)); ids no layer holds are
    /// skipped. Returns how many were used. Nothing else changes: no record is created,
    /// removed or moved.
    pub fn mark_used(&mut self, ids: &[RecordId]) -> usize {
        let mut by_layer: [Vec<RecordId>; 4] = Default::default();
        for &id in ids {
            let slot = match self.layer_of(id) {
                Some(LayerKind::Hippocampus) => 0,
                Some(LayerKind::Atl) => 1,
                Some(LayerKind::AngularGyrus) => 2,
                Some(LayerKind::Cerebellum) => 3,
                None => continue,
            };
            by_layer[slot].push(id);
        }
        let [episodes, concepts, math, skills] = by_layer;
        let mut used = 0;
        if !episodes.is_empty() {
            used += MemoryLayer::touch(&mut self.hippocampus, &episodes);
        }
        if !concepts.is_empty() {
            used += MemoryLayer::touch(&mut self.atl, &concepts);
        }
        if !math.is_empty() {
            used += MemoryLayer::touch(&mut self.angular_gyrus, &math);
        }
        if !skills.is_empty() {
            used += MemoryLayer::touch(&mut self.skills, &skills);
        }
        used
    }
}
