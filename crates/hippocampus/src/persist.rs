//! Persistence (`spec/maxim-reference.md` §3.13) through the core snapshot codec.
//!
//! A snapshot of kind `hippocampus` holds everything: the records (full and compressed,
//! oldest first), the index keys of each compressed record (it no longer holds the objects
//! its keys came from; a full record's keys are derived again from its fields on load, for
//! the kinds the loading layer indexes), the graph with every edge and its kind
//! (the original kept only ASSOCIATES edges), the consolidation queue, the state
//! snapshots in LRU order, and the counters. Writes are atomic with a backup
//! ([`maxim_core::codec::save`]). A load decodes and checks the whole file and builds the new
//! state aside; only when everything holds does it replace the layer's contents, so a failed
//! load leaves the layer as it was. The configuration, callbacks, clock and temporal
//! context are the layer's, not the file's.
//!
//! ```
//! use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
//! use maxim_core::{ManualClock, Timestamp};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("hippocampus.snap");
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
//! let mut e = NewEpisode::default();
//! e.perception.detected_objects = vec!["mug".into()];
//! let a = hippo.capture(e.clone())?;
//! hippo.capture(e)?; // associated with `a`
//! hippo.compress(a)?;
//! hippo.save(&path)?;
//! let mut fresh = Hippocampus::builder().clock(clock.shared()).build()?;
//! fresh.load(&path)?;
//! assert!(fresh.peek(a).unwrap().is_compressed());
//! assert_eq!(fresh.associated_ids(a), hippo.associated_ids(a));
//! assert_eq!(fresh.keys_of(a), hippo.keys_of(a)); // object:mug survives compression and reload
//! assert!(fresh.load(dir.path().join("missing.snap")).is_err());
//! assert_eq!(fresh.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;
use std::path::Path;

use maxim_core::codec::{self, Recovery};
use maxim_core::embed::VectorIndex;
use maxim_core::graph::Graph;
use maxim_core::lexical::LexicalIndex;
use maxim_core::value::Value;
use maxim_core::{CorruptReason, RecordId, Timestamp};
use rustc_hash::FxHashSet;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};

use crate::episode::{Episode, MAX_NAMES, Name};
use crate::error::{Error, Result};
use crate::hash::StateRef;
use crate::index::{ContextIndex, IndexKey, KeyId, KeyKind, Slot};
use crate::state_store::StateStore;
use crate::store::{Counters, Hippocampus, Slots, derive_keys, intern_into, lexical_of};

/// The snapshot kind of the episodic layer.
pub const SNAPSHOT_KIND: &str = "hippocampus";

/// The version of the snapshot's payload layout this build writes and reads (the first
/// field of every payload; `docs/durability.md` says how a later version migrates).
pub const SCHEMA_VERSION: u16 = 1;

pub use maxim_core::codec::LoadOutcome;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    schema: u16,
    journal_seq: u64,
    saved_at: Timestamp,
    keys: Vec<(KeyKind, &'a str)>,
    records: RecordsOut<'a>,
    graph: &'a Graph,
    candidates: Vec<RecordId>,
    states: Vec<(StateRef, &'a Value)>,
    counters: &'a Counters,
    queries: u64,
}

#[derive(Deserialize)]
struct SnapshotIn {
    schema: u16,
    journal_seq: u64,
    saved_at: Timestamp,
    keys: Vec<(KeyKind, String)>,
    records: Vec<RecordIn>,
    graph: Graph,
    candidates: Vec<RecordId>,
    states: Vec<(StateRef, Value)>,
    counters: Counters,
    queries: u64,
}

#[derive(Deserialize)]
struct RecordIn {
    record: Episode,
    keys: Vec<u32>,
}

/// The records, oldest first, each compressed one with its keys as positions in the key
/// table (a full record lists none).
struct RecordsOut<'a> {
    hippo: &'a Hippocampus,
    position: Vec<u32>,
}

#[derive(Serialize)]
struct RecordOut<'a> {
    record: &'a Episode,
    keys: KeysOut<'a>,
}

struct KeysOut<'a> {
    ids: &'a [KeyId],
    position: &'a [u32],
}

impl Serialize for KeysOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.ids.len()))?;
        for &k in self.ids {
            seq.serialize_element(&self.position[k as usize])?;
        }
        seq.end()
    }
}

impl Serialize for RecordsOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let h = self.hippo;
        let order = h.index.order();
        let mut seq = serializer.serialize_seq(Some(order.len()))?;
        for &s in order {
            if let Some(record) = h.slots.get(s) {
                let ids = if record.is_compressed() { h.index.keys_of(s) } else { &[] };
                let keys = KeysOut { ids, position: &self.position };
                seq.serialize_element(&RecordOut { record, keys })?;
            }
        }
        seq.end()
    }
}

/// Records at which a load builds the context index and the lexical index side by side.
const PARALLEL_INDEX_MIN: usize = 4096;

/// The contents a snapshot rebuilds, before they replace the layer's.
struct Rebuilt {
    slots: Slots,
    index: ContextIndex,
    lexical: LexicalIndex<Slot>,
    graph: Graph,
    candidates: VecDeque<RecordId>,
    states: StateStore,
    counters: Counters,
    queries: u64,
    vectors: Option<VectorIndex>,
    max_id: Option<RecordId>,
    names: FxHashSet<Name>,
    saved_at: Timestamp,
    journal_seq: u64,
}

/// Most keys a record of a snapshot may list: the four single keys and [`MAX_NAMES`] names.
const MAX_RECORD_KEYS: usize = 4 + MAX_NAMES;

/// Whether the listed keys (`None`: a kind this layer does not index) are exactly `derived`,
/// as sets.
fn same_keys(index: &ContextIndex, listed: &[Option<KeyId>], derived: &[(KeyKind, &str)]) -> bool {
    let mut listed: Vec<(KeyKind, &str)> = match listed
        .iter()
        .map(|k| k.map(|k| (index.kind_of(k), index.text_of(k))))
        .collect::<Option<Vec<_>>>()
    {
        Some(keys) => keys,
        None => return false,
    };
    let mut derived = derived.to_vec();
    for keys in [&mut listed, &mut derived] {
        keys.sort_unstable();
        keys.dedup();
    }
    listed == derived
}

fn corrupt(path: &Path, reason: String) -> Error {
    maxim_core::Error::Corrupt {
        path: path.to_path_buf(),
        reason: CorruptReason::Payload(reason),
        kept_aside: None,
    }
    .into()
}

impl Hippocampus {
    /// Encodes the whole layer as snapshot bytes (header and payload), as [`save`] writes
    /// them. Equal contents encode to equal bytes.
    ///
    /// [`save`]: Self::save
    pub fn to_snapshot_bytes(&self) -> Result<Vec<u8>> {
        Ok(codec::encode(SNAPSHOT_KIND, &self.snapshot_out(self.journal_seq()))?)
    }

    /// The journal sequence number a snapshot of the current contents records.
    fn journal_seq(&self) -> u64 {
        self.journal.as_ref().map_or(self.loaded_journal_seq, |j| j.dir.last_seq())
    }

    fn snapshot_out(&self, journal_seq: u64) -> SnapshotOut<'_> {
        // The key table holds the keys of compressed records only, by key id.
        let n_ids = self.index.live_keys().last().map_or(0, |k| k.0 as usize + 1);
        let mut used = vec![false; n_ids];
        for (s, rec) in self.slots.iter() {
            if rec.is_compressed() {
                for &k in self.index.keys_of(s) {
                    if let Some(u) = used.get_mut(k as usize) {
                        *u = true;
                    }
                }
            }
        }
        let mut position = vec![u32::MAX; n_ids];
        let mut keys = Vec::new();
        for (k, kind, text) in self.index.live_keys().filter(|&(k, _, _)| used[k as usize]) {
            position[k as usize] = keys.len() as u32;
            keys.push((kind, text));
        }
        SnapshotOut {
            schema: SCHEMA_VERSION,
            journal_seq,
            saved_at: self.clock.now(),
            keys,
            records: RecordsOut { hippo: self, position },
            graph: &self.graph,
            candidates: self.candidates.iter().copied().collect(),
            states: self.states.lru_order(),
            counters: &self.counters,
            queries: self.queries(),
        }
    }

    /// Saves the whole layer to `path` atomically (the previous file is kept as
    /// `<path>.backup`).
    ///
    /// A file that already exists is overwritten only when this layer created it (an
    /// earlier save) or read it (a load), or after
    /// [`allow_overwrite`](Self::allow_overwrite); otherwise
    /// [`maxim_core::Error::OverwriteRefused`] and nothing is written (see
    /// [`maxim_core::ownership`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("hippocampus_save", n_records = self.len()).entered();
        self.save_recording(path, self.journal_seq())
    }

    /// Saves to `path` under the ownership guard, recording `journal_seq` as the last
    /// journaled operation the snapshot holds.
    pub(crate) fn save_recording(&self, path: &Path, journal_seq: u64) -> Result<()> {
        self.claims.save(path, SNAPSHOT_KIND, &self.snapshot_out(journal_seq))?;
        Ok(())
    }

    /// Lets [`save`](Self::save) overwrite files this layer neither created nor read
    /// (`true`), or only its own (`false`, the default).
    pub fn allow_overwrite(&self, allow: bool) {
        self.claims.allow_overwrite(allow);
    }

    /// The files this layer created or read, which its saves may overwrite.
    pub fn file_claims(&self) -> &maxim_core::ownership::FileClaims {
        &self.claims
    }

    /// Replaces the layer's contents with the snapshot at `path`. A missing, unreadable,
    /// corrupt or inconsistent file is an error and changes nothing (a file the codec
    /// rejects is moved aside, see [`maxim_core::codec::load`]).
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("hippocampus_load").entered();
        let rebuilt = codec::load_checked(path, SNAPSHOT_KIND, |p, snapshot: SnapshotIn| {
            self.rebuild(p, snapshot).map_err(maxim_core::Error::from)
        })?;
        self.install(rebuilt);
        self.claims.claim(path);
        Ok(())
    }

    /// Replaces the layer's contents with the snapshot `bytes` (as
    /// [`to_snapshot_bytes`](Self::to_snapshot_bytes) makes them); `path` only names them in
    /// errors.
    pub fn load_from_bytes(&mut self, path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
        let path = path.as_ref();
        let snapshot: SnapshotIn = codec::decode(path, SNAPSHOT_KIND, bytes)?;
        let rebuilt = self.rebuild(path, snapshot)?;
        self.install(rebuilt);
        Ok(())
    }

    /// Loads `path`, or its backup when `path` is missing or rejected; when neither exists
    /// the layer stays as it is and the outcome says [`LoadOutcome::Missing`].
    pub fn load_with_recovery(&mut self, path: impl AsRef<Path>) -> Result<LoadOutcome> {
        let path = path.as_ref();
        let _s = tracing::debug_span!("hippocampus_load_with_recovery").entered();
        let checked = codec::load_with_recovery_checked(path, SNAPSHOT_KIND, |p, snapshot: SnapshotIn| {
            self.rebuild(p, snapshot).map_err(maxim_core::Error::from)
        });
        let (rebuilt, recovery) = match checked {
            Ok(found) => found,
            Err(e) if codec::is_missing(&e) => return Ok(LoadOutcome::Missing),
            Err(e) => return Err(e.into()),
        };
        let outcome = if let Recovery::Backup { path: backup, primary_error } = recovery {
            tracing::warn!(path = %path.display(), backup = %backup.display(), error = %primary_error, "loaded the backup");
            LoadOutcome::FromBackup { path: backup, primary_error }
        } else {
            LoadOutcome::Loaded
        };
        self.install(rebuilt);
        // The main file was read, or was rejected and moved aside for the backup.
        self.claims.claim(path);
        Ok(outcome)
    }

    /// Builds the layer's contents from a decoded snapshot, checking that they hold
    /// together. A full record is indexed under the keys its fields give (for the kinds this
    /// layer indexes); a file that lists other keys for it is refused. A compressed record
    /// keeps the keys the file gives it, of the kinds this layer indexes.
    fn rebuild(&self, path: &Path, snap: SnapshotIn) -> Result<Rebuilt> {
        if snap.schema != SCHEMA_VERSION {
            return Err(maxim_core::Error::UnsupportedVersion {
                path: path.to_path_buf(),
                found: snap.schema,
                supported: SCHEMA_VERSION,
                kept_aside: None,
            }
            .into());
        }
        snap.counters.check().map_err(|e| corrupt(path, e))?;
        for (_, state) in &snap.states {
            state.check("state snapshot").map_err(|e| corrupt(path, e.to_string()))?;
        }
        let indexed = self.config.indexed_keys;
        let mut index = ContextIndex::default();
        // The table's keys, `None` for kinds this layer does not index.
        let mut key_ids: Vec<Option<KeyId>> = Vec::with_capacity(snap.keys.len());
        for (kind, text) in &snap.keys {
            IndexKey::new(*kind, text).map_err(|e| corrupt(path, e.to_string()))?;
            key_ids.push(indexed.contains(*kind).then(|| index.intern_key(*kind, text)));
        }
        let mut slots = Slots::default();
        let mut names = FxHashSet::default();
        let mut max_id = None;
        // Every record is checked and stored first (a full one with the keys its fields give,
        // a compressed one with the keys it lists); the two indexes are then built from them.
        let mut compressed_keys: Vec<(Slot, Vec<KeyId>)> = Vec::new();
        for RecordIn { mut record, keys } in snap.records {
            record.validate().map_err(|e| corrupt(path, format!("record {}: {e}", record.id())))?;
            let id = record.id();
            if slots.slot_of(id).is_some() {
                return Err(corrupt(path, format!("record {id} appears twice")));
            }
            if keys.len() > MAX_RECORD_KEYS {
                return Err(corrupt(path, format!("record {id} lists {} keys", keys.len())));
            }
            let mut listed: Vec<Option<KeyId>> = Vec::with_capacity(keys.len());
            for p in keys {
                let k = *key_ids.get(p as usize).ok_or_else(|| {
                    corrupt(path, format!("record {id} names key {p} of {}", snap.keys.len()))
                })?;
                if !listed.contains(&k) {
                    listed.push(k);
                }
            }
            max_id = max_id.max(Some(id));
            intern_into(&mut names, &mut record);
            let s = slots.insert(record);
            if let Some(Episode::Full(m)) = slots.get(s) {
                if !listed.is_empty() && !same_keys(&index, &listed, &derive_keys(m, indexed)) {
                    return Err(corrupt(
                        path,
                        format!("record {id} lists index keys that its fields do not give"),
                    ));
                }
            } else {
                compressed_keys.push((s, listed.into_iter().flatten().collect()));
            }
        }
        let build_index = |mut index: ContextIndex| {
            let mut compressed = compressed_keys.iter().peekable();
            for (s, rec) in slots.iter() {
                if let Episode::Full(m) = rec {
                    index.insert(s, &derive_keys(m, indexed), slots.order());
                } else if let Some((_, ids)) = compressed.next_if(|(c, _)| *c == s) {
                    index.insert_ids(s, ids, slots.order());
                }
            }
            index
        };
        let (index, lexical) = if slots.len() >= PARALLEL_INDEX_MIN && rayon::current_num_threads() > 1 {
            rayon::join(|| build_index(index), || lexical_of(&slots))
        } else {
            (build_index(index), lexical_of(&slots))
        };
        if let Some((k, kind, text)) = index.live_keys().find(|&(k, _, _)| index.posting(k).is_empty()) {
            return Err(corrupt(path, format!("key {} ({k}) holds no record", IndexKey::new(kind, text)?)));
        }
        if let Some(id) = snap.graph.nodes().find(|id| slots.slot_of(*id).is_none()) {
            return Err(corrupt(path, format!("graph node {id} has no record")));
        }
        let candidates: VecDeque<RecordId> =
            snap.candidates.into_iter().filter(|id| slots.slot_of(*id).is_some()).collect();
        let states = StateStore::from_lru_order(self.config.state_store_max_entries, snap.states)
            .map_err(|e| corrupt(path, e.to_string()))?;
        let vectors = match &self.embedder {
            Some(embedder) => {
                // The embedder learns the whole collection first (an IDF embedder then
                // weighs every vector alike), and unlearns it if the vectors fail.
                let texts: Vec<String> =
                    slots.iter().map(|(_, rec)| crate::capture::episode_text(rec)).collect();
                for t in &texts {
                    embedder.observe_document(t);
                }
                let mut v = VectorIndex::with_capacity(embedder.dim(), slots.len())?;
                let added: Result<()> = slots
                    .iter()
                    .zip(&texts)
                    .try_for_each(|((_, rec), t)| Ok(v.add(rec.id(), &embedder.embed(t))?));
                if let Err(e) = added {
                    for t in &texts {
                        embedder.forget_document(t);
                    }
                    return Err(e);
                }
                Some(v)
            }
            None => None,
        };
        Ok(Rebuilt {
            slots,
            index,
            lexical,
            graph: snap.graph,
            candidates,
            states,
            counters: snap.counters,
            queries: snap.queries,
            vectors,
            max_id,
            names,
            saved_at: snap.saved_at,
            journal_seq: snap.journal_seq,
        })
    }

    fn install(&mut self, r: Rebuilt) {
        if let Some(embedder) = &self.embedder {
            // The records replaced leave the embedder's collection.
            for (_, rec) in self.slots.iter() {
                embedder.forget_document(&crate::capture::episode_text(rec));
            }
        }
        self.slots = r.slots;
        self.index = r.index;
        self.graph = r.graph;
        self.candidates = r.candidates;
        self.states = r.states;
        self.counters = r.counters;
        self.queries.store(r.queries, std::sync::atomic::Ordering::Relaxed);
        self.vectors = r.vectors;
        self.names = r.names;
        self.evict_pool.reset();
        self.lexical = r.lexical;
        self.loaded_journal_seq = r.journal_seq;
        if let Some(id) = r.max_id {
            self.ids.observe(id);
        }
        tracing::debug!(
            n_records = self.len(),
            n_edges = self.graph.edge_count(),
            saved_at = %r.saved_at,
            "loaded"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::NewEpisode;

    use maxim_core::{ManualClock, Timestamp};

    /// Two full records and a compressed one, all seeing `mug`, with goals and tools.
    fn store() -> Hippocampus {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut h = Hippocampus::builder().clock(clock.shared()).build().unwrap();
        let mut e = NewEpisode::default();
        e.perception.detected_objects = vec!["mug".into(), "cup".into()];
        e.context.active_goal = Some("find mug".into());
        e.action.tool_name = "look".into();
        let old = h.capture(e.clone()).unwrap();
        h.capture(e.clone()).unwrap();
        e.perception.detected_objects.pop();
        h.capture(e).unwrap();
        h.compress(old).unwrap();
        h
    }

    fn encode_with<'a>(h: &'a Hippocampus, edit: impl FnOnce(&mut SnapshotOut<'a>)) -> Vec<u8> {
        let mut out = h.snapshot_out(0);
        edit(&mut out);
        codec::encode(SNAPSHOT_KIND, &out).unwrap()
    }

    /// A snapshot as the first writer made them: every live key in the table and every
    /// record listing its keys, which `edit` may change.
    fn listing_every_key(
        h: &Hippocampus,
        edit: impl FnOnce(&mut Vec<(KeyKind, &str)>, &mut [Vec<u32>]),
    ) -> Vec<u8> {
        #[derive(Serialize)]
        struct Raw<'a> {
            schema: u16,
            journal_seq: u64,
            saved_at: Timestamp,
            keys: Vec<(KeyKind, &'a str)>,
            records: Vec<(&'a Episode, Vec<u32>)>,
            graph: &'a Graph,
            candidates: Vec<RecordId>,
            states: Vec<(StateRef, &'a Value)>,
            counters: &'a Counters,
            queries: u64,
        }
        let live: Vec<(KeyId, KeyKind, &str)> = h.index.live_keys().collect();
        let position = |k: KeyId| live.iter().position(|e| e.0 == k).unwrap() as u32;
        let mut keys: Vec<(KeyKind, &str)> = live.iter().map(|&(_, kind, text)| (kind, text)).collect();
        let order = h.index.order();
        let mut lists: Vec<Vec<u32>> =
            order.iter().map(|&s| h.index.keys_of(s).iter().map(|&k| position(k)).collect()).collect();
        edit(&mut keys, &mut lists);
        let out = h.snapshot_out(0);
        let raw = Raw {
            schema: SCHEMA_VERSION,
            journal_seq: 0,
            saved_at: out.saved_at,
            keys,
            records: order.iter().map(|&s| h.slots.get(s).unwrap()).zip(lists).collect(),
            graph: out.graph,
            candidates: out.candidates,
            states: out.states,
            counters: out.counters,
            queries: out.queries,
        };
        codec::encode(SNAPSHOT_KIND, &raw).unwrap()
    }

    fn is_corrupt(err: &Error) -> bool {
        matches!(err, Error::Core(maxim_core::Error::Corrupt { .. }))
    }

    #[test]
    fn inconsistent_payloads_are_refused_and_change_nothing() {
        let h = store();
        let mut target = store();
        let before = target.to_snapshot_bytes().unwrap();
        let mut graph = h.graph.clone();
        graph.add_node(RecordId::from_u128(99)).unwrap();
        let orphan_node = encode_with(&h, |o| o.graph = &graph);
        let dangling_key = encode_with(&h, |o| o.keys.push((KeyKind::Tool, "unused")));
        let bad_success = encode_with(&h, |o| o.keys[0] = (KeyKind::Success, "maybe"));
        let bad_state = encode_with(&h, |o| o.states.push((StateRef::from_u64(1), &Value::Null)));
        for (name, bytes) in [
            ("orphan", orphan_node),
            ("dangling", dangling_key),
            ("success", bad_success),
            ("state", bad_state),
        ] {
            let err = target.load_from_bytes(name, &bytes).unwrap_err();
            assert!(is_corrupt(&err), "{name}: {err}");
            assert_eq!(target.to_snapshot_bytes().unwrap(), before, "{name}");
        }
    }

    #[test]
    fn full_records_are_indexed_from_their_fields() {
        let h = store();
        let bytes = h.to_snapshot_bytes().unwrap();
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let mut back = Hippocampus::builder().clock(clock.shared()).build().unwrap();
        back.load_from_bytes("derived", &bytes).unwrap();
        for rec in h.iter() {
            assert_eq!(back.keys_of(rec.id()), h.keys_of(rec.id()), "{}", rec.id());
        }
        assert!(back.check_consistency().is_consistent());
        assert_eq!(back.to_snapshot_bytes().unwrap(), bytes);
        // Only the compressed record's keys are written: goal, tool, success, mode, 2 objects.
        let snap: SnapshotIn = codec::decode(Path::new("x"), SNAPSHOT_KIND, &bytes).unwrap();
        assert_eq!(snap.keys.len(), 6);
        assert_eq!(snap.records.iter().map(|r| r.keys.len()).collect::<Vec<_>>(), [6, 0, 0]);
    }

    #[test]
    fn a_file_listing_other_keys_for_a_full_record_is_refused() {
        let h = store();
        let mut target = store();
        let before = target.to_snapshot_bytes().unwrap();
        // As listed by the first writer, the keys agree with the fields: accepted.
        let as_listed = listing_every_key(&h, |_, _| {});
        let mut copy = store();
        copy.load_from_bytes("listed", &as_listed).unwrap();
        assert_eq!(copy.to_snapshot_bytes().unwrap(), h.to_snapshot_bytes().unwrap());
        // A key dropped from the newest (full) record, or a key's text changed.
        let dropped = listing_every_key(&h, |_, lists| {
            lists.last_mut().unwrap().pop();
        });
        let renamed = listing_every_key(&h, |keys, _| {
            let cup = keys.iter().position(|k| *k == (KeyKind::Object, "cup")).unwrap();
            keys[cup] = (KeyKind::Object, "plate");
        });
        for (name, bytes) in [("dropped", dropped), ("renamed", renamed)] {
            let err = target.load_from_bytes(name, &bytes).unwrap_err();
            assert!(is_corrupt(&err), "{name}: {err}");
            assert_eq!(target.to_snapshot_bytes().unwrap(), before, "{name}");
        }
    }

    #[test]
    fn a_record_naming_a_missing_key_is_refused() {
        let h = store();
        let mut bytes_ok = h.to_snapshot_bytes().unwrap();
        let mut target = store();
        assert!(target.load_from_bytes("ok", &bytes_ok).is_ok());
        let before = target.to_snapshot_bytes().unwrap();
        // Drop the key table: the compressed record then names keys that do not exist.
        let no_keys = encode_with(&h, |o| o.keys.clear());
        assert!(is_corrupt(&target.load_from_bytes("nokeys", &no_keys).unwrap_err()));
        bytes_ok.truncate(bytes_ok.len() - 1);
        assert!(target.load_from_bytes("short", &bytes_ok).is_err());
        assert_eq!(target.to_snapshot_bytes().unwrap(), before);
    }

    /// Defect 5: a main file that passes the codec but fails the layer's own checks is kept
    /// aside and the intact backup is loaded.
    #[test]
    fn recovery_tries_the_backup_when_the_main_file_fails_the_layers_checks() {
        let h = store();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.snap");
        h.save(&path).unwrap();
        h.save(&path).unwrap(); // the backup now holds a good snapshot
        let mut graph = h.graph.clone();
        graph.add_node(RecordId::from_u128(99)).unwrap();
        let orphan = encode_with(&h, |o| o.graph = &graph);
        std::fs::write(&path, &orphan).unwrap();
        let mut target = Hippocampus::builder().build().unwrap();
        match target.load_with_recovery(&path).unwrap() {
            LoadOutcome::FromBackup { primary_error, .. } => {
                assert!(
                    matches!(*primary_error, maxim_core::Error::Corrupt { kept_aside: Some(_), .. }),
                    "{primary_error:?}"
                );
            }
            other => panic!("expected the backup, got {other:?}"),
        }
        assert_eq!(target.len(), h.len());
        assert!(!path.exists(), "the bad main file was moved aside");
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.contains(".corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(std::fs::read(dir.path().join(&aside[0])).unwrap(), orphan);
        // A plain load keeps a file that fails the layer's checks aside too.
        std::fs::write(&path, &orphan).unwrap();
        let err = target.load(&path).unwrap_err();
        assert!(
            matches!(err, Error::Core(maxim_core::Error::Corrupt { kept_aside: Some(_), .. })),
            "{err:?}"
        );
    }

    /// Defect 8: counters that contradict each other are refused; counters at `u64::MAX`
    /// saturate instead of overflowing.
    #[test]
    fn counters_are_validated_on_load_and_saturate() {
        let h = store();
        let mut target = store();
        let mut overflowing = h.counters.clone();
        overflowing.successful = u64::MAX;
        overflowing.failed = 1;
        let bad = encode_with(&h, |o| o.counters = &overflowing);
        assert!(is_corrupt(&target.load_from_bytes("bad", &bad).unwrap_err()));
        let mut full = h.counters.clone();
        full.memories_captured = u64::MAX;
        full.successful = u64::MAX;
        full.removals = u64::MAX;
        full.edges_formed = u64::MAX;
        let at_max = encode_with(&h, |o| o.counters = &full);
        target.load_from_bytes("max", &at_max).unwrap();
        let mut e = NewEpisode::default();
        e.perception.detected_objects = vec!["mug".into()];
        e.outcome.success = Some(true);
        let id = target.capture(e).unwrap();
        target.remove(id).unwrap();
        assert_eq!(target.counters().memories_captured, u64::MAX);
        assert_eq!(target.counters().successful, u64::MAX);
        assert_eq!(target.counters().removals, u64::MAX);
    }

    /// Every payload starts with its schema version; another version is refused.
    #[test]
    fn a_payload_of_another_schema_version_is_refused() {
        let h = store();
        let mut target = store();
        let other = encode_with(&h, |o| o.schema = SCHEMA_VERSION + 1);
        let err = target.load_from_bytes("v2", &other).unwrap_err();
        assert!(
            matches!(err, Error::Core(maxim_core::Error::UnsupportedVersion { found: 2, .. })),
            "{err:?}"
        );
    }
}
