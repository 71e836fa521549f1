//! The lexical index (`maxim_core::lexical::LexicalIndex`) on a seeded corpus of
//! episode-sized documents.
//!
//! Each document is one turn of a conversation: a speaker's name (one of two) and 29 words
//! drawn from a Zipf distribution (exponent 1) over 20,000 pseudo-words, some of them
//! inflected ("-s", "-ing", "-ed") so the lemmatiser works as it does on text. For
//! N = 10^3, 10^4 and 10^5 documents:
//!
//! - `insert/N`: the upkeep of one more document (tokenise, intern, append postings) into
//!   an index of N; the document is removed again outside the timed section;
//! - `insert_remove/N`: an insert and its removal, both timed (the removal marks postings
//!   dead and compacts a quarter at a time);
//! - `query10/N`: a search for a 10-word query drawn from the same distribution, top 10;
//! - before the benchmarks of each size, the index's heap bytes per document (the sum of
//!   its vectors' and tables' capacities, `LexicalIndex::stats`) are printed, with the CPU
//!   time this thread spent building the index and answering 1,000 queries (read from
//!   `/proc/thread-self/schedstat` on Linux): on a shared machine, wall-clock figures grow
//!   with the other processes' load, CPU time much less.
//!
//! Run with `cargo bench -p maxim-benches --bench lexical`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_core::SplitMix64;
use maxim_core::lexical::LexicalIndex;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const VOCABULARY: usize = 20_000;
const WORDS_PER_DOC: usize = 30;
/// Documents drawn after the first N, cycled through by the insert benchmarks.
const EXTRA: usize = 2_048;

/// A seeded stream of documents and queries.
struct Corpus {
    rng: SplitMix64,
    words: Vec<String>,
    /// Cumulative Zipf weights of the words, by rank.
    cumulative: Vec<f64>,
}

impl Corpus {
    fn new(seed: u64) -> Self {
        const SYLLABLES: [&str; 16] =
            ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pe", "da", "gu", "ri", "so", "ba", "te", "fi"];
        const ENDINGS: [&str; 8] = ["", "", "", "", "s", "ing", "ed", "er"];
        let words = (0..VOCABULARY)
            .map(|i| {
                let mut w = String::new();
                let mut k = i;
                loop {
                    w.push_str(SYLLABLES[k % 16]);
                    k /= 16;
                    if k == 0 {
                        break;
                    }
                }
                w.push_str(ENDINGS[(i / 7) % 8]);
                w
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (0..VOCABULARY)
            .map(|r| {
                total += 1.0 / (r as f64 + 1.0);
                total
            })
            .collect();
        Self { rng: SplitMix64::new(seed), words, cumulative }
    }

    fn word(&mut self) -> &str {
        let total = *self.cumulative.last().expect("a vocabulary");
        let x = self.rng.uniform() * total;
        let r = self.cumulative.partition_point(|&c| c < x).min(VOCABULARY - 1);
        &self.words[r]
    }

    fn text(&mut self, n_words: usize) -> String {
        let mut text = String::new();
        for _ in 0..n_words {
            let w = self.word().to_owned();
            text.push_str(&w);
            text.push(' ');
        }
        text
    }

    fn document(&mut self) -> String {
        let speaker = if self.rng.next_u64().is_multiple_of(2) { "Caroline:" } else { "Melanie:" };
        format!("{speaker} {}", self.text(WORDS_PER_DOC - 1))
    }
}

/// The CPU time this thread has run, in nanoseconds (Linux; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn lexical(c: &mut Criterion) {
    let mut group = c.benchmark_group("lexical");
    group.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for n in SIZES {
        let mut corpus = Corpus::new(42);
        let docs: Vec<String> = (0..n + EXTRA).map(|_| corpus.document()).collect();
        let queries: Vec<String> = (0..256).map(|_| corpus.text(10)).collect();
        let mut index = LexicalIndex::new();
        let start = Instant::now();
        let cpu_start = thread_cpu_ns();
        for (k, d) in docs[..n].iter().enumerate() {
            index.insert(k as u32, &[(d.as_str(), 1.0)]).expect("a valid weight");
        }
        let build_cpu = cpu_start.zip(thread_cpu_ns()).map(|(a, b)| (b - a) as f64 / n as f64 / 1e3);
        let wall = start.elapsed();
        let cpu_start = thread_cpu_ns();
        let mut found = 0usize;
        for i in 0..1_000 {
            found += index.search(&queries[i % queries.len()], 10).len();
        }
        let query_cpu = cpu_start.zip(thread_cpu_ns()).map(|(a, b)| (b - a) as f64 / 1_000.0 / 1e3);
        assert!(found > 0);
        let stats = index.stats();
        eprintln!(
            "lexical N={n}: built in {:.1} ms ({:.2} us/doc wall, {build_cpu:.2?} us/doc CPU); \
             query10 {query_cpu:.1?} us CPU; {} terms, {} postings; heap {} bytes = {:.0} bytes/doc",
            wall.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e6 / n as f64,
            stats.terms,
            stats.postings,
            stats.heap_bytes,
            stats.heap_bytes as f64 / n as f64
        );

        let extra = &docs[n..];
        let mut next = 0usize;
        group.bench_function(BenchmarkId::new("insert", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let k = next % extra.len();
                    next += 1;
                    let key = (n + k) as u32;
                    let start = Instant::now();
                    index.insert(key, &[(extra[k].as_str(), 1.0)]).expect("a valid weight");
                    total += start.elapsed();
                    index.remove(&key);
                }
                total
            });
        });
        group.bench_function(BenchmarkId::new("insert_remove", n), |b| {
            b.iter(|| {
                let k = next % extra.len();
                next += 1;
                let key = (n + k) as u32;
                index.insert(key, &[(extra[k].as_str(), 1.0)]).expect("a valid weight");
                index.remove(&key)
            });
        });
        assert_eq!(index.len(), n);
        let mut q = 0usize;
        group.bench_function(BenchmarkId::new("query10", n), |b| {
            b.iter(|| {
                q = (q + 1) % queries.len();
                black_box(index.search(&queries[q], 10)).len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, lexical);
criterion_main!(benches);
