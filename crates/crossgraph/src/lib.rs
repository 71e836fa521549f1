//! `crossgraph`: typed edges between records of different maxim layers, and cross-layer
//! spreading activation.
//!
//! Each memory layer has its own associative graph. The cross-layer graph connects records
//! across layers, so that one query can start from an episode and reach the concepts and
//! statistical patterns related to it (seed 000, "Cross-Layer Graph";
//! `spec/maxim-reference.md` §7). It depends on [`maxim_core`] alone and is not a memory
//! layer: it holds edges, not records.
//!
//! The principal types:
//!
//! - [`CrossLayerGraph`]: directed, weighted edges of seven types ([`CrossEdgeKind`]:
//!   DERIVED_FROM, INSTANCE_OF, STATISTICALLY_CONFIRMS, QUANTIFIES, TEMPORALLY_CORRELATES,
//!   COMPUTED_FROM, INFORMS) between `(layer, id)` pairs ([`LayerRecord`]), with metadata.
//!   Adding an edge that exists (same ends, same type) updates it instead of stacking a
//!   duplicate. [`linked`](CrossLayerGraph::linked) and
//!   [`incoming`](CrossLayerGraph::incoming) filter by layer and type;
//!   [`remove_record`](CrossLayerGraph::remove_record) removes every edge of a record (the
//!   hub's deletion callback); [`dangling`](CrossLayerGraph::dangling) reports records no
//!   layer holds. It implements the core [`CrossLinks`](maxim_core::CrossLinks) contract.
//! - [`activation`]: spreading activation from seeds in any layer over the cross-layer
//!   edges and each layer's own graph ([`LayerGraphs`] of [`GraphView`](maxim_core::GraphView)s),
//!   max combination, a depth that means what it says, results grouped by layer
//!   ([`CrossActivation`]); large levels expand on rayon with the same result.
//! - [`Op`]: every mutation as a serialisable value, applied by one function;
//!   [`persist`]: snapshots through the core codec; [`journal`]: the graph opened on a
//!   directory (`CrossLayerGraph::builder().open(dir)`), every write journaled before it
//!   returns, and [`checkpoint`](CrossLayerGraph::checkpoint).
//!
//! ```
//! use crossgraph::{CrossLayerGraph, LayerGraphs};
//! use maxim_core::graph::{EdgeKind, EdgeMeta, Graph};
//! use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, RecordId};
//!
//! // The seed's example: a failed navigate episode reaches a concept, the concept it IS_A,
//! // the AG pattern that confirms it, and the circadian record that pattern correlates with.
//! let [episode, reliability, capabilities, pattern, circadian] = [1, 2, 3, 4, 5].map(RecordId::from_u128);
//! let mut atl_graph = Graph::new();
//! atl_graph.add_edge(reliability, capabilities, EdgeKind::Associates, 0.9, Some(EdgeMeta::relation("IS_A")))?;
//!
//! let hip = |id| LayerRecord::new(LayerKind::Hippocampus, id);
//! let atl = |id| LayerRecord::new(LayerKind::Atl, id);
//! let ag = |id| LayerRecord::new(LayerKind::AngularGyrus, id);
//! let mut g = CrossLayerGraph::builder().build()?;
//! g.add_edge(hip(episode), atl(reliability), CrossEdgeKind::InstanceOf, 1.0)?;
//! g.add_edge(ag(pattern), atl(reliability), CrossEdgeKind::StatisticallyConfirms, 0.73)?;
//! g.add_edge(ag(pattern), ag(circadian), CrossEdgeKind::TemporallyCorrelates, 0.8)?;
//!
//! let layers = LayerGraphs::new().with(LayerKind::Atl, &atl_graph);
//! let act = g.activate(&[hip(episode)], &layers);
//! let order: Vec<LayerRecord> = act.ranked_all(None).into_iter().map(|(r, _)| r).collect();
//! assert_eq!(order, [atl(reliability), atl(capabilities), ag(pattern), ag(circadian)]);
//! assert_eq!(act.get(atl(capabilities)), Some(0.5 * 0.5 * 0.9));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! None: everything is always built.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod activation;
pub mod error;
pub mod journal;
pub mod kind;
pub mod persist;
pub mod store;

pub use activation::{CrossActivation, CrossParams, LayerGraph, LayerGraphs, PARALLEL_MIN_FRONTIER};
pub use error::{Error, Result};
pub use kind::{ALL_KINDS, KindSet, kind_name, parse_kind, parse_layer};
pub use maxim_core;
pub use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, MetaValue};
pub use persist::SCHEMA_VERSION;
pub use store::{
    Applied, CrossEdge, CrossGraphConfig, CrossGraphStats, CrossLayerGraph, CrossLayerGraphBuilder,
    EdgeInsert, MAX_EDGES, MAX_META_KEY_LEN, Metadata, Op,
};

/// The snapshot kind of the cross-layer graph's files (and its name in errors).
pub const SNAPSHOT_KIND: &str = "crossgraph";
