//! Serde for [`Graph`]: a compact, canonical form that keeps every edge kind and all metadata.
//!
//! The form is `{ nodes: [id, ...], edges: [{ source, target, kind, weight, meta }, ...] }`
//! where `source` and `target` are positions in `nodes`. Nodes are written sorted by id and
//! edges sorted by `(source, target, kind, relation)`, so equal graphs give equal bytes
//! whatever their history. Reading validates everything (weights, metadata, positions,
//! dependency cycles) and merges duplicate edges as [`Graph::add_edge`] does; bad input is a
//! deserialization error, never a panic. (The original wrote ids and kind names and lost
//! CAUSES edges on reload; this form loses nothing.)
//!
//! ```
//! use maxim_core::graph::{EdgeKind, EdgeMeta, Graph};
//! use maxim_core::RecordId;
//!
//! let [a, b] = [1, 2].map(RecordId::from_u128);
//! let mut g = Graph::new();
//! g.add_edge(a, b, EdgeKind::Causes, 0.7, Some(EdgeMeta::relation("CAUSES").with_confidence(0.6)))?;
//! let bytes = postcard::to_stdvec(&g).unwrap();
//! let back: Graph = postcard::from_bytes(&bytes).unwrap();
//! assert_eq!(back, g);
//! assert_eq!(back.find_edge(a, b, Some(EdgeKind::Causes), None).unwrap().confidence(), Some(0.6));
//! # Ok::<(), maxim_core::Error>(())
//! ```

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef as _, IntoEdgeReferences as _, NodeIndexable as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::EdgeKind;
use super::store::{EdgeMeta, Graph, Ix, checked_meta, checked_weight, cycle_error};
use crate::error::{Error, Result};
use crate::id::RecordId;

#[derive(Serialize)]
struct GraphOut<'a> {
    nodes: Vec<RecordId>,
    edges: Vec<EdgeOut<'a>>,
}

#[derive(Serialize)]
struct EdgeOut<'a> {
    source: u32,
    target: u32,
    kind: EdgeKind,
    weight: f64,
    meta: Option<&'a EdgeMeta>,
}

#[derive(Deserialize)]
struct GraphIn {
    nodes: Vec<RecordId>,
    edges: Vec<EdgeIn>,
}

#[derive(Deserialize)]
struct EdgeIn {
    source: u32,
    target: u32,
    kind: EdgeKind,
    weight: f64,
    meta: Option<EdgeMeta>,
}

impl<'a> EdgeOut<'a> {
    fn relation(&self) -> Option<&'a str> {
        self.meta.and_then(|m| m.relation.as_deref())
    }
}

impl Serialize for Graph {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let g = &self.inner;
        let mut nodes: Vec<(RecordId, NodeIndex<Ix>)> =
            g.node_indices().map(|n| (self.id_of(n), n)).collect();
        nodes.sort_unstable();
        let mut position = vec![0u32; g.node_bound()];
        for (i, &(_, n)) in nodes.iter().enumerate() {
            position[n.index()] = i as u32;
        }
        let mut edges: Vec<EdgeOut<'_>> = g
            .edge_references()
            .map(|e| {
                let d = e.weight();
                EdgeOut {
                    source: position[e.source().index()],
                    target: position[e.target().index()],
                    kind: d.kind,
                    weight: d.weight,
                    meta: d.meta.as_deref(),
                }
            })
            .collect();
        edges.sort_unstable_by(|x, y| {
            (x.source, x.target, x.kind, x.relation()).cmp(&(y.source, y.target, y.kind, y.relation()))
        });
        GraphOut { nodes: nodes.into_iter().map(|(id, _)| id).collect(), edges }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Graph {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let raw = GraphIn::deserialize(deserializer)?;
        Graph::from_raw(raw).map_err(serde::de::Error::custom)
    }
}

impl Graph {
    fn from_raw(raw: GraphIn) -> Result<Self> {
        let _s = tracing::debug_span!("graph_from_raw", n_nodes = raw.nodes.len(), n_edges = raw.edges.len())
            .entered();
        let mut g = Graph::with_capacity(raw.nodes.len(), raw.edges.len());
        g.ensure_room(raw.nodes.len(), raw.edges.len())?;
        let nodes: Vec<NodeIndex<Ix>> = raw.nodes.iter().map(|&id| g.intern(id)).collect::<Result<_>>()?;
        let node_at = |position: u32, end: &'static str| {
            nodes.get(position as usize).copied().ok_or_else(|| {
                Error::invalid(end, format!("position {position} is past the {} nodes", nodes.len()))
            })
        };
        for e in raw.edges {
            let s = node_at(e.source, "edge source")?;
            let t = node_at(e.target, "edge target")?;
            let weight = checked_weight(e.weight)?;
            let meta = checked_meta(e.meta)?;
            if e.kind.is_dependency() && s == t {
                return Err(cycle_error(g.id_of(s), g.id_of(t), e.kind));
            }
            g.upsert(s, t, e.kind, weight, meta)?;
        }
        if let Some(cycle) = g.cycles().first() {
            return Err(g.cycle_edge(cycle));
        }
        Ok(g)
    }

    /// The error naming one dependency edge inside the strongly connected component `cycle`.
    fn cycle_edge(&self, cycle: &[RecordId]) -> Error {
        let first = cycle[0];
        self.outgoing(first)
            .find(|e| e.kind.is_dependency() && cycle.binary_search(&e.target).is_ok())
            .map_or_else(
                || Error::invalid("edges", "dependency cycle"),
                |e| cycle_error(e.source, e.target, e.kind),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct RawOut {
        nodes: Vec<RecordId>,
        edges: Vec<(u32, u32, EdgeKind, f64, Option<EdgeMeta>)>,
    }

    fn decode(raw: &RawOut) -> std::result::Result<Graph, postcard::Error> {
        // Tuples and structs share postcard's encoding, so `RawOut` writes what `GraphIn` reads.
        postcard::from_bytes(&postcard::to_stdvec(raw).unwrap())
    }

    fn ids(n: u128) -> Vec<RecordId> {
        (1..=n).map(RecordId::from_u128).collect()
    }

    #[test]
    fn bad_payloads_are_errors() {
        let nodes = ids(3);
        let bad_edges = [
            (0, 1, EdgeKind::Associates, f64::NAN, None),
            (0, 1, EdgeKind::Associates, -1.0, None),
            (0, 3, EdgeKind::Associates, 1.0, None),
            (7, 0, EdgeKind::Associates, 1.0, None),
            (0, 1, EdgeKind::Associates, 1.0, Some(EdgeMeta::default().with_valence(2.0))),
            (2, 2, EdgeKind::Requires, 1.0, None),
        ];
        for edge in bad_edges {
            let raw = RawOut { nodes: nodes.clone(), edges: vec![edge.clone()] };
            assert!(decode(&raw).is_err(), "{edge:?} was accepted");
        }
        let cycle = RawOut {
            nodes: nodes.clone(),
            edges: vec![
                (0, 1, EdgeKind::Requires, 1.0, None),
                (1, 2, EdgeKind::Enables, 1.0, None),
                (2, 0, EdgeKind::Requires, 1.0, None),
            ],
        };
        assert!(decode(&cycle).is_err());
        let cycle = serde_json::json!({
            "nodes": [nodes[0], nodes[1]],
            "edges": [
                {"source": 0, "target": 1, "kind": "ENABLES", "weight": 1.0, "meta": null},
                {"source": 1, "target": 0, "kind": "REQUIRES", "weight": 1.0, "meta": null},
            ],
        });
        let err = serde_json::from_value::<Graph>(cycle).unwrap_err();
        assert!(err.to_string().contains("dependency cycle"), "{err}");
    }

    #[test]
    fn duplicates_merge_on_read() {
        let nodes = ids(2);
        let raw = RawOut {
            nodes: vec![nodes[0], nodes[1], nodes[0]],
            edges: vec![
                (0, 1, EdgeKind::Associates, 0.2, Some(EdgeMeta::default().with_confidence(0.4))),
                (2, 1, EdgeKind::Associates, 0.9, Some(EdgeMeta::default().with_valence(-0.5))),
            ],
        };
        let g = decode(&raw).unwrap();
        assert_eq!((g.node_count(), g.edge_count()), (2, 1));
        let e = g.find_edge(nodes[0], nodes[1], None, None).unwrap();
        assert_eq!((e.weight, e.confidence(), e.valence()), (0.9, Some(0.4), Some(-0.5)));
    }

    #[test]
    fn json_form_is_positional_and_canonical() {
        let [a, b] = [2, 1].map(RecordId::from_u128);
        let mut g = Graph::new();
        g.add_edge(a, b, EdgeKind::Causes, 0.5, None).unwrap();
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "nodes": [b, a],
                "edges": [{"source": 1, "target": 0, "kind": "CAUSES", "weight": 0.5, "meta": null}],
            })
        );
    }
}
