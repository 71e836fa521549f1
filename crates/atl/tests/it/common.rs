//! Helpers shared by the test modules.

use atl::{Atl, AtlConfig, SemanticRecord};
use maxim_core::{ManualClock, MemoryLayer, MemoryRecord, Timestamp};

/// The start of every test clock.
pub(crate) const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

/// A layer on a manual clock with reproducible ids.
pub(crate) fn layer() -> (ManualClock, Atl) {
    layer_with(AtlConfig::default())
}

/// [`layer`] with `config`.
pub(crate) fn layer_with(config: AtlConfig) -> (ManualClock, Atl) {
    let clock = ManualClock::new(T0);
    let atl =
        Atl::builder().clock(clock.shared()).config(config).id_seed(17).build().expect("valid settings");
    (clock, atl)
}

/// Everything observable about a layer, in a canonical order: records, edges with their
/// metadata, relationship types, stats except the query counter.
pub(crate) fn fingerprint(atl: &Atl) -> String {
    let mut records: Vec<&SemanticRecord> = atl.iter().collect();
    records.sort_by_key(|r| r.id());
    let mut edges: Vec<String> = atl
        .concept_graph()
        .edges()
        .map(|e| format!("{} {} {} {} {:?}", e.source, e.target, e.kind, e.weight, e.meta))
        .collect();
    edges.sort();
    let types: Vec<String> = atl.registry().iter().map(|t| format!("{t:?}")).collect();
    let mut stats = atl.stats();
    stats.counters.remove("queries");
    format!("{records:?}\n{edges:?}\n{types:?}\n{stats:?}")
}
