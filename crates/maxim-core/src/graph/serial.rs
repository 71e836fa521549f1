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
//! Both directions stream: writing sorts the edges per source (a counting sort by source, then
//! each node's few edges) and serializes them without building a list of edge records;
//! reading adds each edge to the graph as it is decoded, borrowing relation labels from the
//! input where the format allows. While the edges arrive in canonical order (strictly
//! increasing identity), no duplicate can occur and each is appended without a lookup; the
//! Tarjan pass for dependency cycles runs only when a REQUIRES or ENABLES edge was read.
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

use std::cmp::Ordering;
use std::fmt;

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef as _, IntoEdgeReferences as _, NodeIndexable as _};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeStruct as _, Serializer};
use serde::{Deserialize, Deserializer, Serialize};

use super::meta::{Label, NO_EXTRA};
use super::store::{EdgeData, Graph, Ix, checked_weight, cycle_error};
use super::{EdgeKind, EdgeMetaRef};
use crate::error::{Error, Result};
use crate::id::RecordId;

/// Most edges reserved up front from a length the input announces (it may lie).
const MAX_RESERVE: usize = 1 << 20;

/// One edge as written (the field order and names are the form's).
#[derive(Serialize)]
#[serde(rename = "EdgeOut")]
struct EdgeOut<'a> {
    source: u32,
    target: u32,
    kind: EdgeKind,
    weight: f64,
    meta: Option<MetaOut<'a>>,
}

/// Metadata as written: the fields of [`EdgeMeta`](super::EdgeMeta), borrowed.
#[derive(Serialize)]
#[serde(rename = "EdgeMeta")]
struct MetaOut<'a> {
    relation: Option<&'a str>,
    confidence: Option<f64>,
    valence: Option<f64>,
}

/// The sorted nodes, written as a sequence of ids.
struct NodesOut<'a>(&'a [(RecordId, u32)]);

impl Serialize for NodesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|e| e.0))
    }
}

/// The edges grouped by source position, each group sorted: `(target position, data)`.
struct EdgesOut<'a> {
    graph: &'a Graph,
    starts: &'a [u32],
    edges: &'a [(u32, EdgeData)],
}

impl Serialize for EdgesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let edges = self.starts.windows(2).enumerate().flat_map(|(source, w)| {
            self.edges[w[0] as usize..w[1] as usize].iter().map(move |&(target, d)| {
                let meta = self.graph.meta_of(&d);
                EdgeOut {
                    source: source as u32,
                    target,
                    kind: d.kind,
                    weight: d.weight,
                    meta: (!meta.is_empty()).then_some(MetaOut {
                        relation: meta.relation,
                        confidence: meta.confidence,
                        valence: meta.valence,
                    }),
                }
            })
        });
        serializer.collect_seq(ExactLen { inner: edges, len: self.edges.len() })
    }
}

/// An iterator that knows its length (so that formats which write the length first get it).
struct ExactLen<I> {
    inner: I,
    len: usize,
}

impl<I: Iterator> Iterator for ExactLen<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.len -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl Serialize for Graph {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let g = &self.inner;
        let mut nodes: Vec<(RecordId, u32)> =
            g.node_indices().map(|n| (self.id_of(n), n.index() as u32)).collect();
        nodes.sort_unstable_by_key(|e| e.0);
        let mut position = vec![0u32; g.node_bound()];
        for (i, &(_, n)) in nodes.iter().enumerate() {
            position[n as usize] = i as u32;
        }
        // A counting sort by source position, then each source's edges by the rest of the key.
        let mut starts = vec![0u32; nodes.len() + 1];
        for e in g.edge_references() {
            starts[position[e.source().index()] as usize + 1] += 1;
        }
        for i in 0..nodes.len() {
            starts[i + 1] += starts[i];
        }
        let filler = (0, EdgeData { weight: 0.0, extra: NO_EXTRA, label: None, kind: EdgeKind::Associates });
        let mut edges = vec![filler; g.edge_count()];
        let mut cursor = starts.clone();
        for e in g.edge_references() {
            let c = &mut cursor[position[e.source().index()] as usize];
            edges[*c as usize] = (position[e.target().index()], *e.weight());
            *c += 1;
        }
        drop(cursor);
        for w in starts.windows(2) {
            edges[w[0] as usize..w[1] as usize].sort_unstable_by(|x, y| self.edge_order(x, y));
        }
        let mut out = serializer.serialize_struct("GraphOut", 2)?;
        out.serialize_field("nodes", &NodesOut(&nodes))?;
        out.serialize_field("edges", &EdgesOut { graph: self, starts: &starts, edges: &edges })?;
        out.end()
    }
}

impl Graph {
    /// The canonical order of two edges of one source: target, kind, relation.
    fn edge_order(&self, x: &(u32, EdgeData), y: &(u32, EdgeData)) -> Ordering {
        (x.0, x.1.kind).cmp(&(y.0, y.1.kind)).then_with(|| self.label_order(x.1.label, y.1.label))
    }

    fn label_order(&self, x: Option<Label>, y: Option<Label>) -> Ordering {
        if x == y { Ordering::Equal } else { self.labels.name_of(x).cmp(&self.labels.name_of(y)) }
    }
}

/// A string from the input, borrowed when the format can lend it.
enum StrIn<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl StrIn<'_> {
    fn as_str(&self) -> &str {
        match self {
            Self::Borrowed(s) => s,
            Self::Owned(s) => s,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for StrIn<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct StrVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for StrVisitor<'a> {
            type Value = StrIn<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a relation label")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(StrIn::Borrowed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(StrIn::Owned(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> std::result::Result<Self::Value, E> {
                Ok(StrIn::Owned(v))
            }
        }
        deserializer.deserialize_str(StrVisitor(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct MetaIn<'a> {
    #[serde(borrow)]
    relation: Option<StrIn<'a>>,
    confidence: Option<f64>,
    valence: Option<f64>,
}

#[derive(Deserialize)]
struct EdgeIn<'a> {
    source: u32,
    target: u32,
    kind: EdgeKind,
    weight: f64,
    #[serde(borrow)]
    meta: Option<MetaIn<'a>>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Nodes,
    Edges,
    #[serde(other)]
    Other,
}

/// The graph being read: its nodes (by position) and how its edges have arrived so far.
struct Builder {
    graph: Graph,
    nodes: Vec<NodeIndex<Ix>>,
    /// The identity of the last edge read (node indices, kind, label).
    last: Option<(u32, u32, EdgeKind, Option<Label>)>,
    /// True while every edge came in strictly increasing identity order, so that none can
    /// repeat an earlier one; once one does not, each edge is merged as `add_edge` does.
    in_order: bool,
}

impl Builder {
    fn new(ids: &[RecordId]) -> Result<Self> {
        let mut graph = Graph::with_capacity(ids.len(), 0);
        graph.ensure_room(ids.len(), 0)?;
        let nodes = ids.iter().map(|&id| graph.intern(id)).collect::<Result<_>>()?;
        Ok(Self { graph, nodes, last: None, in_order: true })
    }

    fn reserve(&mut self, edges: usize) {
        let edges = edges.min(MAX_RESERVE);
        self.graph.inner.reserve_edges(edges);
        self.graph.arena.reserve(edges);
    }

    fn node_at(&self, position: u32, end: &'static str) -> Result<NodeIndex<Ix>> {
        self.nodes.get(position as usize).copied().ok_or_else(|| {
            Error::invalid(end, format!("position {position} is past the {} nodes", self.nodes.len()))
        })
    }

    fn add(&mut self, e: &EdgeIn<'_>) -> Result<()> {
        let s = self.node_at(e.source, "edge source")?;
        let t = self.node_at(e.target, "edge target")?;
        let weight = checked_weight(e.weight)?;
        let meta = e.meta.as_ref().map_or(EdgeMetaRef::EMPTY, |m| EdgeMetaRef {
            relation: m.relation.as_ref().map(StrIn::as_str),
            confidence: m.confidence,
            valence: m.valence,
        });
        meta.validate()?;
        if e.kind.is_dependency() && s == t {
            return Err(cycle_error(self.graph.id_of(s), self.graph.id_of(t), e.kind));
        }
        let g = &mut self.graph;
        g.ensure_room(0, 1)?;
        let label = meta.relation.map(|r| g.labels.intern(r)).transpose()?;
        let key = (s.index() as u32, t.index() as u32, e.kind, label);
        if self.in_order {
            self.in_order = self.last.is_none_or(|last| {
                (last.0, last.1, last.2)
                    .cmp(&(key.0, key.1, key.2))
                    .then_with(|| g.label_order(last.3, label))
                    == Ordering::Less
            });
            self.last = Some(key);
        }
        if self.in_order {
            let data = EdgeData { weight, extra: NO_EXTRA, label, kind: e.kind };
            g.insert_edge(s, t, data, meta)?;
        } else {
            g.upsert(s, t, e.kind, weight, label, meta)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<Graph> {
        let g = self.graph;
        if let Some(cycle) = g.cycles().first() {
            return Err(g.cycle_edge(cycle));
        }
        Ok(g)
    }
}

/// Reads the edge sequence straight into a [`Builder`].
struct EdgesSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for EdgesSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EdgesSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of edges")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.0.reserve(seq.size_hint().unwrap_or(0));
        while let Some(e) = seq.next_element::<EdgeIn<'de>>()? {
            self.0.add(&e).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

struct GraphVisitor;

impl<'de> Visitor<'de> for GraphVisitor {
    type Value = Graph;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a graph of nodes and edges")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Graph, A::Error> {
        use serde::de::Error as _;
        let nodes: Vec<RecordId> = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
        let mut builder = Builder::new(&nodes).map_err(A::Error::custom)?;
        seq.next_element_seed(EdgesSeed(&mut builder))?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
        builder.finish().map_err(A::Error::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Graph, A::Error> {
        use serde::de::Error as _;
        let mut builder: Option<Builder> = None;
        let mut early_edges: Option<Vec<EdgeIn<'de>>> = None;
        let mut edges_seen = false;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Nodes => {
                    if builder.is_some() {
                        return Err(A::Error::duplicate_field("nodes"));
                    }
                    let nodes: Vec<RecordId> = map.next_value()?;
                    builder = Some(Builder::new(&nodes).map_err(A::Error::custom)?);
                }
                Field::Edges => {
                    if edges_seen {
                        return Err(A::Error::duplicate_field("edges"));
                    }
                    edges_seen = true;
                    match builder.as_mut() {
                        Some(b) => map.next_value_seed(EdgesSeed(b))?,
                        None => early_edges = Some(map.next_value()?),
                    }
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let mut builder = builder.ok_or_else(|| A::Error::missing_field("nodes"))?;
        if !edges_seen {
            return Err(A::Error::missing_field("edges"));
        }
        for e in early_edges.iter().flatten() {
            builder.add(e).map_err(A::Error::custom)?;
        }
        builder.finish().map_err(A::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Graph {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_struct("GraphIn", &["nodes", "edges"], GraphVisitor)
    }
}

impl Graph {
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
    use crate::graph::EdgeMeta;

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

    /// A graph with every kind, labels, confidences, valences, removed nodes and pruned edges.
    fn varied_graph() -> Graph {
        let mut rng = crate::id::SplitMix64::new(77);
        let n = 40u64;
        let ids: Vec<RecordId> = (0..n).map(|i| RecordId::from_u128(u128::from(i * 7919 % 97) + 1)).collect();
        let mut g = Graph::new();
        for _ in 0..n * 8 {
            let (s, t) = (ids[rng.below(n) as usize], ids[rng.below(n) as usize]);
            let kind = EdgeKind::ALL[rng.below(5) as usize];
            let meta = match rng.below(5) {
                0 => None,
                1 => Some(EdgeMeta::relation(["IS_A", "HAS_PART", "B"][rng.below(3) as usize])),
                2 => Some(EdgeMeta::default().with_valence(rng.uniform() - 0.5)),
                3 => Some(EdgeMeta::relation("IS_A").with_confidence(rng.uniform()).with_valence(0.25)),
                _ => Some(EdgeMeta::default()),
            };
            let _ = g.add_edge(s, t, kind, rng.uniform() * 2.0, meta);
        }
        for &id in ids.iter().step_by(5) {
            g.remove_node(id);
        }
        g.decay_edges(0.5, &[EdgeKind::Causes], 0.1, true).unwrap();
        g
    }

    #[test]
    fn canonical_bytes_are_those_of_the_first_format() {
        // Length and CRC-32 of both forms as the first implementation (boxed metadata, one
        // global sort of the edges) wrote them for this graph.
        let g = varied_graph();
        let bytes = postcard::to_stdvec(&g).unwrap();
        assert_eq!((bytes.len(), crc32fast::hash(&bytes)), (4453, 0xe1e1_bb2f));
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!((json.len(), crc32fast::hash(json.as_bytes())), (23081, 0xf90f_5231));
        let back: Graph = postcard::from_bytes(&bytes).unwrap();
        back.check_invariants();
        assert_eq!(back, g);
        assert_eq!(postcard::to_stdvec(&back).unwrap(), bytes);
        let back: Graph = serde_json::from_str(&json).unwrap();
        assert_eq!(back, g);
    }

    #[test]
    fn edges_out_of_order_merge_and_json_fields_come_in_any_order() {
        let nodes = ids(3);
        let raw = RawOut {
            nodes: nodes.clone(),
            edges: vec![
                (0, 1, EdgeKind::Associates, 0.2, Some(EdgeMeta::relation("IS_A"))),
                (1, 2, EdgeKind::Causes, 0.3, None),
                (0, 2, EdgeKind::Associates, 0.4, None), // out of order: merging from here on
                (0, 1, EdgeKind::Associates, 0.9, Some(EdgeMeta::relation("IS_A").with_confidence(0.5))),
                (0, 1, EdgeKind::Associates, 0.7, None),
            ],
        };
        let g = decode(&raw).unwrap();
        g.check_invariants();
        assert_eq!(g.edge_count(), 4);
        let e = g.find_edge(nodes[0], nodes[1], None, Some("IS_A")).unwrap();
        assert_eq!((e.weight, e.confidence()), (0.9, Some(0.5)));
        let json = serde_json::json!({
            "edges": [{"source": 1, "target": 0, "kind": "CAUSES", "weight": 0.5,
                       "meta": {"relation": "WHY", "confidence": null, "valence": 0.5}}],
            "comment": "ignored",
            "nodes": [nodes[0], nodes[1]],
        });
        let g: Graph = serde_json::from_value(json).unwrap();
        g.check_invariants();
        assert_eq!(g.find_edge(nodes[1], nodes[0], None, Some("WHY")).unwrap().valence(), Some(0.5));
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Graph>(&json).unwrap(), g);
        for bad in [
            serde_json::json!({"nodes": []}),
            serde_json::json!({"edges": []}),
            serde_json::json!({"nodes": [nodes[0]], "edges": [{"source": 0, "target": 0, "kind": "REQUIRES", "weight": 1.0, "meta": null}]}),
        ] {
            assert!(serde_json::from_value::<Graph>(bad.clone()).is_err(), "{bad}");
        }
        for dup in
            [r#"{"nodes": [], "edges": [], "edges": []}"#, r#"{"nodes": [], "nodes": [], "edges": []}"#]
        {
            assert!(serde_json::from_str::<Graph>(dup).is_err(), "{dup}");
        }
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
