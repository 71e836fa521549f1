//! What a memory hub needs of the ATL when an episode is forgotten: the episode leaves every
//! concept that names it, and concepts formed partly from forgotten evidence lose confidence.

use maxim_core::{LayerKind, RecordId, check_unit};

use crate::concept::SemanticRecord;
use crate::error::Result;
use crate::store::Atl;

impl Atl {
    /// Removes episode `episode` from concept `id`'s source episodes and memory references.
    /// Returns whether the concept named it. A compressed concept keeps no episode ids, so
    /// there is nothing to remove. Errors: an unknown concept.
    pub fn forget_episode(&mut self, id: RecordId, episode: RecordId) -> Result<bool> {
        let slot = self.state.require(id)?;
        let SemanticRecord::Full(c) = &mut self.state.records[slot] else { return Ok(false) };
        let before = c.source_episode_ids.len();
        c.source_episode_ids.retain(|&e| e != episode);
        let referenced = c.memory_refs.remove(LayerKind::Hippocampus, episode);
        Ok(referenced || c.source_episode_ids.len() != before)
    }

    /// Lowers concept `id`'s confidence to `confidence` (never raises it: a higher value
    /// changes nothing). Errors: an unknown concept, a confidence that is NaN or outside
    /// `[0, 1]`.
    pub fn weaken_concept(&mut self, id: RecordId, confidence: f64) -> Result<()> {
        let confidence = check_unit("confidence", confidence)?;
        let slot = self.state.require(id)?;
        match &mut self.state.records[slot] {
            SemanticRecord::Full(c) => c.confidence = c.confidence.min(confidence),
            SemanticRecord::Compressed(c) => c.confidence = c.confidence.min(confidence),
        }
        Ok(())
    }
}
