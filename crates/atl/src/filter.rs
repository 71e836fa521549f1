//! [`ConceptFilter`]: what a recall of concepts matches (§4.5).

use maxim_core::Source;
use maxim_core::value::Value;

use crate::names::name_key;

/// The recall filter of §4.5; every field set must match (AND). The default matches every
/// record, compressed ones included.
///
/// Names and categories compare by [`name_key`] (a concept's aliases count as names);
/// `property_value` compares with the property's current value.
///
/// ```
/// use atl::ConceptFilter;
/// let f = ConceptFilter::new().category("object").min_confidence(0.7).property("color", "blue");
/// assert_eq!(f.category.as_deref(), Some("object"));
/// assert!(f.include_compressed);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptFilter {
    /// The name (or an alias).
    pub name: Option<String>,
    /// The category.
    pub category: Option<String>,
    /// Lowest confidence.
    pub min_confidence: Option<f64>,
    /// A property the concept has.
    pub property_key: Option<String>,
    /// The current value of `property_key` (ignored without it).
    pub property_value: Option<Value>,
    /// Whether compressed concepts may match (default true).
    pub include_compressed: bool,
    /// The substrate modality.
    pub substrate_modality: Option<String>,
    /// The source.
    pub source: Option<Source>,
    /// Only contested concepts (`Some(true)`) or only uncontested ones (`Some(false)`).
    pub contested: Option<bool>,
}

impl Default for ConceptFilter {
    fn default() -> Self {
        Self {
            name: None,
            category: None,
            min_confidence: None,
            property_key: None,
            property_value: None,
            include_compressed: true,
            substrate_modality: None,
            source: None,
            contested: None,
        }
    }
}

impl ConceptFilter {
    /// The filter that matches everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also by name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Also by category.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Also by lowest confidence.
    pub fn min_confidence(mut self, min: f64) -> Self {
        self.min_confidence = Some(min);
        self
    }

    /// Also by property key.
    pub fn property_key(mut self, key: impl Into<String>) -> Self {
        self.property_key = Some(key.into());
        self
    }

    /// Also by property key and current value.
    pub fn property(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.property_key = Some(key.into());
        self.property_value = Some(value.into());
        self
    }

    /// Whether compressed concepts may match.
    pub fn include_compressed(mut self, include: bool) -> Self {
        self.include_compressed = include;
        self
    }

    /// Also by substrate modality.
    pub fn substrate_modality(mut self, modality: impl Into<String>) -> Self {
        self.substrate_modality = Some(modality.into());
        self
    }

    /// Also by source.
    pub fn source(mut self, source: Source) -> Self {
        self.source = Some(source);
        self
    }

    /// Also by whether the concept is contested.
    pub fn contested(mut self, contested: bool) -> Self {
        self.contested = Some(contested);
        self
    }
}

/// A filter's keys, computed once per recall.
pub(crate) struct Prepared<'f> {
    pub(crate) name: Option<String>,
    pub(crate) category: Option<String>,
    pub(crate) property_key: Option<&'f str>,
}

impl<'f> Prepared<'f> {
    pub(crate) fn new(filter: &'f ConceptFilter) -> Self {
        Self {
            name: filter.name.as_deref().map(name_key),
            category: filter.category.as_deref().map(name_key),
            property_key: filter.property_key.as_deref().map(str::trim),
        }
    }
}
