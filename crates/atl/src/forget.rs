//! What a memory hub needs of the ATL when an episode is forgotten: the episode leaves every
//! concept that names it, and concepts formed partly from forgotten evidence lose confidence.
//! Both are journaled like every other write.

use maxim_core::{LayerKind, RecordId, check_unit};

use crate::concept::SemanticRecord;
use crate::error::Result;
use crate::journal::{Applied, Op};
use crate::store::Atl;

impl Atl {
    /// Removes episode `episode` from concept `id`'s source episodes and memory references.
    /// Returns whether the concept named it (a compressed concept keeps no episode ids, so
    /// there is nothing to remove). Errors: an unknown concept; the journal refused the write
    /// (nothing changed).
    pub fn forget_episode(&mut self, id: RecordId, episode: RecordId) -> Result<bool> {
        let slot = self.state.require(id)?;
        let SemanticRecord::Full(c) = &self.state.records[slot] else { return Ok(false) };
        if !c.source_episode_ids.contains(&episode)
            && !c.memory_refs.get(LayerKind::Hippocampus).contains(&episode)
        {
            return Ok(false);
        }
        Ok(matches!(self.commit(Op::ForgetEpisode { id, episode })?, Applied::Flag(true)))
    }

    /// Lowers concept `id`'s confidence to `confidence` (never raises it: a higher value
    /// changes nothing and writes nothing). Errors: an unknown concept, a confidence that is
    /// NaN or outside `[0, 1]`, the journal refused the write.
    pub fn weaken_concept(&mut self, id: RecordId, confidence: f64) -> Result<()> {
        let confidence = check_unit("confidence", confidence)?;
        let slot = self.state.require(id)?;
        if self.state.records[slot].confidence() <= confidence {
            return Ok(());
        }
        self.commit(Op::Weaken { id, confidence })?;
        Ok(())
    }
}
