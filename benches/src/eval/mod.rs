//! The retrieval evaluation behind `cargo xtask eval retrieval`: seeded multi-session
//! dialogues ([`maxim_testkit::dialogue`]), every [`retrievers::Retriever`] fed
//! each conversation turn by turn, every question asked, and the [`metrics`] averaged per
//! question kind and overall, with query and ingest latencies.
//!
//! Each conversation goes into a fresh retriever (as a user's memory of one relationship),
//! and its questions are asked of that retriever alone; the top 20 of each answer are
//! scored. [`run`] returns a [`Report`], which renders as JSON ([`Report::to_json`]) and as
//! Markdown tables ([`Report::to_markdown`]).
//!
//! ```
//! use maxim_benches::eval::{Strategy, run};
//! use maxim_benches::eval::retrievers::{Retriever, Tantivy};
//! use maxim_benches::dialogue::DialogueConfig;
//! let strategies = [Strategy::new("tantivy", || Ok(Box::new(Tantivy::new()?) as Box<dyn Retriever>))];
//! let config = DialogueConfig { conversations: 1, ..DialogueConfig::quick() };
//! let report = run(&config, &strategies)?;
//! let overall = &report.strategies[0].overall;
//! assert!(overall.recall_all_10 > 0.0 && overall.recall_all_10 <= overall.recall_all_20);
//! assert!(report.to_markdown().contains("| tantivy BM25 (en_stem) |"));
//! # Ok::<(), maxim_benches::eval::retrievers::BoxError>(())
//! ```

pub mod metrics;
pub mod retrievers;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use maxim_testkit::dialogue::{self, DialogueConfig, QuestionKind};
use serde_json::{Value as Json, json};

use retrievers::{Result, Retriever};

/// How many results of each answer are scored.
pub const DEPTH: usize = 20;

/// A named way to make a fresh retriever for each conversation.
pub struct Strategy {
    /// Its key on the command line (`--only KEY`).
    pub key: &'static str,
    make: Box<dyn Fn() -> Result<Box<dyn Retriever>>>,
}

impl Strategy {
    /// A strategy that builds its retriever with `make`.
    pub fn new(key: &'static str, make: impl Fn() -> Result<Box<dyn Retriever>> + 'static) -> Self {
        Self { key, make: Box::new(make) }
    }

    /// A fresh retriever.
    pub fn make(&self) -> Result<Box<dyn Retriever>> {
        (self.make)()
    }
}

/// Every retriever on this branch: tantivy, then the maxim calls.
pub fn strategies() -> Vec<Strategy> {
    use maxim::hub::RecallOptions;
    use retrievers::{HippoAssociated, HippoEmbed, HippoRecall, HubRecall, Tantivy};
    let hub = |key: &'static str, options: RecallOptions| {
        Strategy::new(key, move || Ok(Box::new(HubRecall::new(key, options.clone())?)))
    };
    let without = |f: fn(&mut RecallOptions)| {
        let mut o = RecallOptions::default();
        f(&mut o);
        o
    };
    vec![
        hub("hub", RecallOptions::default()),
        hub("hub-lexical", RecallOptions::lexical_only()),
        hub("hub-no-semantic", without(|o| o.semantic = false)),
        hub("hub-no-entities", without(|o| o.entities = false)),
        hub("hub-no-neighbours", without(|o| o.neighbours = false)),
        hub("hub-no-expansion", without(|o| o.expansion = false)),
        hub("hub-sem100", without(|o| o.semantic_candidates = 100)),
        hub("hub-sem-weight-0.5", without(|o| o.semantic_weight = 0.5)),
        Strategy::new("tantivy", || Ok(Box::new(Tantivy::new()?))),
        Strategy::new("recall", || Ok(Box::new(HippoRecall::new()?))),
        Strategy::new("recall+assoc", || Ok(Box::new(HippoAssociated::new()?))),
        Strategy::new("embed128", || Ok(Box::new(HippoEmbed::new(128)?))),
        Strategy::new("embed1024", || Ok(Box::new(HippoEmbed::new(1024)?))),
    ]
}

/// Metric means over a set of questions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scores {
    /// Questions scored.
    pub questions: usize,
    /// Mean recall_all@5.
    pub recall_all_5: f64,
    /// Mean recall_all@10.
    pub recall_all_10: f64,
    /// Mean recall_all@20.
    pub recall_all_20: f64,
    /// Mean recall_any@10.
    pub recall_any_10: f64,
    /// Mean nDCG@10.
    pub ndcg_10: f64,
}

impl Scores {
    fn add(&mut self, ranking: &[dialogue::TurnId], evidence: &[dialogue::TurnId]) {
        use metrics::{ndcg, recall_all, recall_any};
        self.questions += 1;
        self.recall_all_5 += recall_all(ranking, evidence, 5);
        self.recall_all_10 += recall_all(ranking, evidence, 10);
        self.recall_all_20 += recall_all(ranking, evidence, 20);
        self.recall_any_10 += recall_any(ranking, evidence, 10);
        self.ndcg_10 += ndcg(ranking, evidence, 10);
    }

    fn mean(mut self) -> Self {
        let n = self.questions.max(1) as f64;
        for v in [
            &mut self.recall_all_5,
            &mut self.recall_all_10,
            &mut self.recall_all_20,
            &mut self.recall_any_10,
            &mut self.ndcg_10,
        ] {
            *v /= n;
        }
        self
    }

    fn to_json(self) -> Json {
        json!({
            "questions": self.questions,
            "recall_all@5": self.recall_all_5,
            "recall_all@10": self.recall_all_10,
            "recall_all@20": self.recall_all_20,
            "recall_any@10": self.recall_any_10,
            "ndcg@10": self.ndcg_10,
        })
    }
}

/// Latency percentiles, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// Mean (for ingest: every turn's capture plus the commit, over the turns).
    pub mean_us: f64,
}

impl Latency {
    fn of(samples: &mut [f64], total_us: f64) -> Self {
        let n = samples.len().max(1) as f64;
        Self {
            p50_us: metrics::percentile(samples, 50.0).unwrap_or(0.0),
            p95_us: metrics::percentile(samples, 95.0).unwrap_or(0.0),
            mean_us: total_us / n,
        }
    }

    fn to_json(self) -> Json {
        json!({ "p50_us": self.p50_us, "p95_us": self.p95_us, "mean_us": self.mean_us })
    }
}

/// One strategy's results.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyReport {
    /// The retriever's name.
    pub name: String,
    /// Over every question.
    pub overall: Scores,
    /// Per question kind.
    pub by_kind: BTreeMap<QuestionKind, Scores>,
    /// Per query.
    pub query: Latency,
    /// Per ingested turn.
    pub ingest: Latency,
}

/// What [`run`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The corpus.
    pub config: DialogueConfig,
    /// Turns in the corpus.
    pub turns: usize,
    /// Mean turns per conversation.
    pub turns_per_conversation: f64,
    /// Questions per kind.
    pub questions: BTreeMap<QuestionKind, usize>,
    /// One per strategy, in the order given.
    pub strategies: Vec<StrategyReport>,
}

/// A metric's name in reports and how to read it from [`Scores`].
type Metric = (&'static str, fn(&Scores) -> f64);

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

/// Generates the corpus `config` describes and evaluates every strategy on it.
pub fn run(config: &DialogueConfig, strategies: &[Strategy]) -> Result<Report> {
    let corpus = dialogue::generate(config)?;
    let turns = corpus.turns().count();
    let mut questions = BTreeMap::new();
    for q in corpus.questions() {
        *questions.entry(q.kind).or_insert(0) += 1;
    }
    let mut reports = Vec::with_capacity(strategies.len());
    for strategy in strategies {
        let mut name = String::new();
        let mut overall = Scores::default();
        let mut by_kind: BTreeMap<QuestionKind, Scores> = BTreeMap::new();
        let (mut ingest, mut ingest_total) = (Vec::with_capacity(turns), 0.0);
        let (mut query, mut query_total) = (Vec::new(), 0.0);
        for conv in &corpus.conversations {
            let mut retriever = strategy.make()?;
            name = retriever.name();
            for turn in &conv.turns {
                let t = Instant::now();
                retriever.ingest(turn)?;
                let us = micros(t);
                ingest.push(us);
                ingest_total += us;
            }
            let t = Instant::now();
            retriever.commit()?;
            ingest_total += micros(t);
            for q in &conv.questions {
                let t = Instant::now();
                let ranking = retriever.query(&q.text, DEPTH)?;
                let us = micros(t);
                query.push(us);
                query_total += us;
                overall.add(&ranking, &q.evidence);
                by_kind.entry(q.kind).or_default().add(&ranking, &q.evidence);
            }
        }
        reports.push(StrategyReport {
            name,
            overall: overall.mean(),
            by_kind: by_kind.into_iter().map(|(k, s)| (k, s.mean())).collect(),
            query: Latency::of(&mut query, query_total),
            ingest: Latency::of(&mut ingest, ingest_total),
        });
    }
    Ok(Report {
        config: *config,
        turns,
        turns_per_conversation: turns as f64 / config.conversations as f64,
        questions,
        strategies: reports,
    })
}

impl Report {
    /// The report as JSON: the corpus, then each strategy's scores (overall and per kind)
    /// and latencies.
    pub fn to_json(&self) -> Json {
        let c = &self.config;
        json!({
            "corpus": {
                "seed": c.seed,
                "conversations": c.conversations,
                "sessions_per_conversation": c.sessions,
                "turns_per_session": [c.min_turns, c.max_turns],
                "turns": self.turns,
                "turns_per_conversation": self.turns_per_conversation,
                "questions": self.questions.iter().map(|(k, n)| (k.as_str().to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
            },
            "depth": DEPTH,
            "strategies": self.strategies.iter().map(|s| json!({
                "name": s.name,
                "overall": s.overall.to_json(),
                "by_kind": s.by_kind.iter().map(|(k, v)| (k.as_str().to_owned(), v.to_json())).collect::<serde_json::Map<_, _>>(),
                "query_latency": s.query.to_json(),
                "ingest_latency_per_turn": s.ingest.to_json(),
            })).collect::<Vec<_>>(),
        })
    }

    /// The report as Markdown: the corpus in one line, a table of every metric and latency
    /// over all questions, then one table per metric with a column per question kind.
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut md = String::new();
        let kinds: Vec<String> = self.questions.iter().map(|(k, n)| format!("{} {n}", k.as_str())).collect();
        let _ = writeln!(
            md,
            "Corpus: seed {}, {} conversations × {} sessions, {} turns ({:.0} per conversation), {} questions ({}).\n",
            c.seed,
            c.conversations,
            c.sessions,
            self.turns,
            self.turns_per_conversation,
            self.questions.values().sum::<usize>(),
            kinds.join(", "),
        );
        md.push_str("| strategy | R_all@5 | R_all@10 | R_all@20 | R_any@10 | nDCG@10 | query p50 µs | query p95 µs | ingest µs/turn (p50 / mean) |\n");
        md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &self.strategies {
            let o = &s.overall;
            let _ = writeln!(
                md,
                "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} | {:.1} / {:.1} |",
                s.name,
                o.recall_all_5,
                o.recall_all_10,
                o.recall_all_20,
                o.recall_any_10,
                o.ndcg_10,
                s.query.p50_us,
                s.query.p95_us,
                s.ingest.p50_us,
                s.ingest.mean_us,
            );
        }
        let metrics: [Metric; 5] = [
            ("recall_all@10", |s| s.recall_all_10),
            ("recall_all@5", |s| s.recall_all_5),
            ("recall_all@20", |s| s.recall_all_20),
            ("recall_any@10", |s| s.recall_any_10),
            ("nDCG@10", |s| s.ndcg_10),
        ];
        for (metric, get) in metrics {
            let _ = write!(md, "\n{metric} by question type:\n\n| strategy |");
            for k in self.questions.keys() {
                let _ = write!(md, " {} |", k.as_str());
            }
            md.push_str(" all |\n|---|");
            md.push_str(&"---:|".repeat(self.questions.len() + 1));
            md.push('\n');
            for s in &self.strategies {
                let _ = write!(md, "| {} |", s.name);
                for k in self.questions.keys() {
                    let _ = write!(md, " {:.3} |", s.by_kind.get(k).map_or(0.0, get));
                }
                let _ = writeln!(md, " {:.3} |", get(&s.overall));
            }
        }
        md
    }
}
