//! Helpers shared by the test modules.

use crossgraph::{CrossLayerGraph, CrossParams};
use maxim_core::graph::ActivationParams;
use maxim_core::{LayerKind, LayerRecord, RecordId};

/// Record `i` of the hippocampus.
pub(crate) fn hip(i: u128) -> LayerRecord {
    LayerRecord::new(LayerKind::Hippocampus, RecordId::from_u128(i))
}

/// Record `i` of the ATL.
pub(crate) fn atl(i: u128) -> LayerRecord {
    LayerRecord::new(LayerKind::Atl, RecordId::from_u128(i))
}

/// Record `i` of the angular gyrus.
pub(crate) fn ag(i: u128) -> LayerRecord {
    LayerRecord::new(LayerKind::AngularGyrus, RecordId::from_u128(i))
}

/// An empty graph with the default settings.
pub(crate) fn graph() -> CrossLayerGraph {
    CrossLayerGraph::builder().build().expect("the default settings are valid")
}

/// Spread parameters: `decay`, `threshold`, `max_depth`, every type both ways.
pub(crate) fn params(decay: f64, threshold: f64, max_depth: u32) -> CrossParams {
    CrossParams::new(ActivationParams::new(decay, threshold, max_depth).expect("valid parameters"))
}

/// Everything observable about a graph's contents, in a canonical order: every edge with its
/// weight bits and metadata.
pub(crate) fn fingerprint(g: &CrossLayerGraph) -> Vec<String> {
    let mut out: Vec<String> = g
        .edges()
        .map(|e| {
            format!(
                "{} -> {} {:?} {:#x} {:?}",
                e.from,
                e.to,
                e.kind,
                e.weight.to_bits(),
                g.metadata(e.from, e.to, e.kind)
            )
        })
        .collect();
    out.sort();
    out
}
