//! The retrievers the evaluation compares, each behind the one small [`Retriever`] trait.
//!
//! Every maxim retriever stores a turn the way a new user would: one hippocampus episode
//! per turn, the speaker as a detected person, the text as the transcript and as the
//! observation `text` (so each text recall sees it, whichever field it reads), and the
//! session's date and time as the clock's time (a [`ManualClock`] set before each capture).
//! The layer holds up to [`MAX_EPISODES`], so nothing is evicted.
//!
//! - [`Tantivy`]: tantivy's BM25 with the English stemmer, in RAM: the engine a Rust
//!   developer would pick instead;
//! - [`HippoRecall`]: `Hippocampus::recall` with a `RecallFilter` query;
//! - [`HippoAssociated`]: the same, then `recall_associated` from its top 5 hits;
//! - [`HippoEmbed`]: `Hippocampus::recall_similar_text` through a `HashEmbedder` (the
//!   default 128 dimensions, or more).
//!
//! ```
//! use maxim_benches::eval::retrievers::{HippoRecall, Retriever, Tantivy};
//! use maxim_benches::dialogue::{DialogueConfig, generate};
//! let corpus = generate(&DialogueConfig::quick())?;
//! let conv = &corpus.conversations[0];
//! let mut bm25 = Tantivy::new()?;
//! for turn in &conv.turns {
//!     bm25.ingest(turn)?;
//! }
//! bm25.commit()?;
//! let hits = bm25.query(&conv.questions[0].text, 10)?;
//! assert_eq!(hits.len(), 10);
//! assert!(hits.iter().all(|id| corpus.turn(*id).is_some()));
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use hippocampus::{Episode, Hippocampus, HippocampusConfig, NewEpisode, RecallFilter};
use maxim_core::{HashEmbedder, ManualClock, RecordId, Timestamp, Value};
use maxim_testkit::dialogue::{Turn, TurnId};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{Index, IndexReader, IndexWriter, TantivyDocument};

/// The error of an evaluation step.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the evaluation's steps return.
pub type Result<T, E = BoxError> = std::result::Result<T, E>;

/// Most episodes a hippocampus retriever holds (the default, 10,000, would evict in the
/// 10^4-turn benchmark).
pub const MAX_EPISODES: usize = 1_000_000;

/// Something that takes turns one by one and answers a question with ranked turn ids.
pub trait Retriever {
    /// Its name in reports.
    fn name(&self) -> String;

    /// Stores one turn.
    fn ingest(&mut self, turn: &Turn) -> Result<()>;

    /// Makes every ingested turn searchable (tantivy's commit; nothing for the others). The
    /// evaluation counts its time as ingest time.
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    /// Up to `k` turns for `question`, best first.
    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>>;
}

/// tantivy's BM25 over the speaker and the text, both tokenised with `en_stem` (lower
/// case, English Snowball stemmer), in a RAM index written by one thread; the question
/// goes through tantivy's `QueryParser` (lenient: a question is not query syntax), so its
/// words are OR-ed.
pub struct Tantivy {
    writer: IndexWriter,
    reader: IndexReader,
    parser: QueryParser,
    id: Field,
    speaker: Field,
    text: Field,
}

impl Tantivy {
    /// An empty index.
    pub fn new() -> Result<Self> {
        let mut schema = Schema::builder();
        let stemmed = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("en_stem")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let id = schema.add_u64_field("id", FAST);
        let speaker = schema.add_text_field("speaker", stemmed.clone());
        let text = schema.add_text_field("text", stemmed);
        let index = Index::create_in_ram(schema.build());
        let writer = index.writer_with_num_threads(1, 15_000_000)?;
        let reader = index.reader()?;
        let parser = QueryParser::for_index(&index, vec![speaker, text]);
        Ok(Self { writer, reader, parser, id, speaker, text })
    }
}

impl Retriever for Tantivy {
    fn name(&self) -> String {
        "tantivy BM25 (en_stem)".into()
    }

    fn ingest(&mut self, turn: &Turn) -> Result<()> {
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.id, u64::from(turn.id.0));
        doc.add_text(self.speaker, &turn.speaker);
        doc.add_text(self.text, &turn.text);
        self.writer.add_document(doc)?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.writer.commit()?;
        self.reader.reload()?;
        Ok(())
    }

    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let (query, _ignored) = self.parser.parse_query_lenient(question);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (_score, addr) in top {
            let ids = searcher.segment_reader(addr.segment_ord).fast_fields().u64("id")?;
            let id = ids.first(addr.doc_id).ok_or("a tantivy document without its turn id")?;
            out.push(TurnId(u32::try_from(id)?));
        }
        Ok(out)
    }
}

/// A hippocampus on a manual clock, with the turn behind each episode.
pub struct HippoStore {
    hippo: Hippocampus,
    clock: ManualClock,
    turns: HashMap<RecordId, TurnId>,
}

impl HippoStore {
    /// An empty layer (default settings but [`MAX_EPISODES`]), with `embedder` if given.
    pub fn new(embedder: Option<HashEmbedder>) -> Result<Self> {
        let clock = ManualClock::new(Timestamp::from_secs(0));
        let mut config = HippocampusConfig::default();
        config.max_nodes = MAX_EPISODES;
        let mut builder = Hippocampus::builder();
        builder.config(config).clock(clock.shared()).id_seed(18);
        if let Some(e) = embedder {
            builder.embedder(Arc::new(e));
        }
        Ok(Self { hippo: builder.build()?, clock, turns: HashMap::new() })
    }

    /// The layer.
    pub fn hippocampus(&self) -> &Hippocampus {
        &self.hippo
    }

    /// Captures `turn` as a new user would (see the [module docs](self)).
    pub fn ingest(&mut self, turn: &Turn) -> Result<()> {
        self.clock.set(turn.time);
        let mut e = NewEpisode::default();
        e.perception.detected_people = vec![turn.speaker.as_str().into()];
        e.perception.transcript = Some(turn.text.clone());
        e.perception.observations.insert("text", Value::from(turn.text.as_str()));
        let id = self.hippo.capture(e)?;
        self.turns.insert(id, turn.id);
        Ok(())
    }

    /// The turn behind episode `id`.
    pub fn turn_of(&self, id: RecordId) -> Option<TurnId> {
        self.turns.get(&id).copied()
    }
}

/// `Hippocampus::recall` with `RecallFilter::new().query(question)`.
pub struct HippoRecall(pub HippoStore);

impl HippoRecall {
    /// An empty layer.
    pub fn new() -> Result<Self> {
        Ok(Self(HippoStore::new(None)?))
    }
}

impl Retriever for HippoRecall {
    fn name(&self) -> String {
        "hippocampus recall(query)".into()
    }

    fn ingest(&mut self, turn: &Turn) -> Result<()> {
        self.0.ingest(turn)
    }

    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>> {
        let filter = RecallFilter::new().query(question);
        Ok(self.0.hippo.recall(&filter, k).into_iter().filter_map(|e| self.0.turn_of(e.id())).collect())
    }
}

/// [`HippoRecall`]'s ranking, with the episodes `recall_associated` reaches from its top 5
/// hits placed after those 5 (strongest activation first), then the rest of the recall.
pub struct HippoAssociated(pub HippoStore);

impl HippoAssociated {
    /// How many of the recall's hits seed the spreading activation.
    pub const SEEDS: usize = 5;

    /// An empty layer.
    pub fn new() -> Result<Self> {
        Ok(Self(HippoStore::new(None)?))
    }
}

impl Retriever for HippoAssociated {
    fn name(&self) -> String {
        "hippocampus recall + recall_associated(top 5)".into()
    }

    fn ingest(&mut self, turn: &Turn) -> Result<()> {
        self.0.ingest(turn)
    }

    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>> {
        let hippo = &self.0.hippo;
        let hits: Vec<RecordId> =
            hippo.recall(&RecallFilter::new().query(question), k).into_iter().map(Episode::id).collect();
        let seeds = &hits[..hits.len().min(Self::SEEDS)];
        let associated = hippo.recall_associated(seeds, k);
        let mut ranked: Vec<RecordId> = seeds.to_vec();
        for id in associated.iter().map(|(e, _)| e.id()).chain(hits[seeds.len()..].iter().copied()) {
            if ranked.len() == k {
                break;
            }
            if !ranked.contains(&id) {
                ranked.push(id);
            }
        }
        Ok(ranked.into_iter().filter_map(|id| self.0.turn_of(id)).collect())
    }
}

/// `Hippocampus::recall_similar_text` through a `HashEmbedder` of `dim` dimensions.
pub struct HippoEmbed {
    store: HippoStore,
    dim: usize,
}

impl HippoEmbed {
    /// An empty layer with a `HashEmbedder` of `dim` dimensions (128 is the default).
    pub fn new(dim: usize) -> Result<Self> {
        Ok(Self { store: HippoStore::new(Some(HashEmbedder::with_dim(dim)?))?, dim })
    }
}

impl Retriever for HippoEmbed {
    fn name(&self) -> String {
        format!("hippocampus recall_similar_text (HashEmbedder d{})", self.dim)
    }

    fn ingest(&mut self, turn: &Turn) -> Result<()> {
        self.store.ingest(turn)
    }

    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>> {
        let hits = self.store.hippo.recall_similar_text(question, k)?;
        Ok(hits.into_iter().filter_map(|(e, _)| self.store.turn_of(e.id())).collect())
    }
}

/// `MemoryHub::recall(question)` with the given switches: each turn captured through the hub
/// (speaker as a person, text as the transcript, the session's date on the clock), so the
/// turns also feed the ATL (the speaker and the people named as concepts) that the entity
/// evidence follows. The hub uses the IDF-weighted hash embedder.
pub struct HubRecall {
    hub: maxim::hub::MemoryHub,
    clock: ManualClock,
    options: maxim::hub::RecallOptions,
    label: String,
    turns: HashMap<RecordId, TurnId>,
}

impl HubRecall {
    /// An empty in-memory hub answering with `options`, reported as `label`.
    pub fn new(label: &str, options: maxim::hub::RecallOptions) -> Result<Self> {
        let clock = ManualClock::new(Timestamp::from_secs(0));
        let mut config = HippocampusConfig::default();
        config.max_nodes = MAX_EPISODES;
        let embedder = maxim_core::embed::IdfHashEmbedder::default();
        let hub = maxim::hub::MemoryHub::builder()
            .clock(clock.shared())
            .hippocampus_config(config)
            .embedder(Arc::new(embedder))
            .id_seed(18)
            .build()?;
        Ok(Self { hub, clock, options, label: label.to_owned(), turns: HashMap::new() })
    }
}

impl Retriever for HubRecall {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn ingest(&mut self, turn: &Turn) -> Result<()> {
        self.clock.set(turn.time);
        let mut e = NewEpisode::default();
        e.perception.detected_people = vec![turn.speaker.as_str().into()];
        e.perception.transcript = Some(turn.text.clone());
        let id = self.hub.capture(e)?;
        self.turns.insert(id, turn.id);
        Ok(())
    }

    fn query(&self, question: &str, k: usize) -> Result<Vec<TurnId>> {
        let options = self.options.clone().limit(k).layers(&[maxim_core::LayerKind::Hippocampus]);
        let hits = self.hub.recall(question, &options)?;
        Ok(hits.into_iter().filter_map(|h| self.turns.get(&h.record.id).copied()).collect())
    }
}
