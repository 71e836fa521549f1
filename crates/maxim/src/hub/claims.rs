//! Facts stated about things: a property claim on the concept a name stands for.
//!
//! A person says the blue mug is dishwasher safe, a web page says it is not: each is a claim
//! on the `mug` concept's `dishwasher_safe` property, kept with its source and trust. The ATL
//! keeps differing claims side by side and reports the contradiction rather than overwrite
//! one with the other; [`Forget::Source`](super::Forget::Source) retracts a source's claims.

use atl::PropertyWrite;
use maxim_core::{ConceptSpec, Source, Value};

use super::{MemoryHub, Result};

impl MemoryHub {
    /// Records that `source`, trusted `trust`, states `key = value` about the concept
    /// `concept` names (found by the ATL's name matching in its category without reinforcing
    /// it, or created from the spec, with its source episode). Returns the ATL's write, with
    /// the open contradiction when another source claims a different value.
    ///
    /// ```
    /// use maxim::MemoryHub;
    /// use maxim::maxim_core::Source;
    /// let mut hub = MemoryHub::builder().build()?;
    /// let mug = maxim::atl::spec("mug", "object");
    /// hub.state_property(&mug, "dishwasher_safe", "yes", Source::UserStated, 0.9)?;
    /// let web = Source::web("kitchenware.example")?;
    /// let write = hub.state_property(&mug, "dishwasher_safe", "no", web, 0.3)?;
    /// assert_eq!(write.contradiction.expect("both claims kept").claims.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors (nothing changes): an empty name or category, a key without a letter or digit,
    /// a trust outside `[0, 1]`, a value with a NaN, a compressed concept.
    pub fn state_property(
        &mut self,
        concept: &ConceptSpec,
        key: &str,
        value: impl Into<Value>,
        source: Source,
        trust: f64,
    ) -> Result<PropertyWrite> {
        let _s = tracing::debug_span!("hub_state_property", episode = ?concept.source_episode).entered();
        // Check what the concept creation would not, so that a refused claim creates nothing.
        maxim_core::Trust::new(trust)?;
        let value = value.into();
        let id = match self.atl.lookup(&concept.name, &concept.category) {
            Some((id, _)) => id,
            None => self.atl.find_or_create(concept)?.id,
        };
        Ok(self.atl.set_property(id, key, value, source, trust)?)
    }
}
