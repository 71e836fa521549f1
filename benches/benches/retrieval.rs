//! Retrieval over generated dialogues: maxim's retrievers beside tantivy's BM25.
//!
//! - `retrieval_ingest/{strategy}/{600,10000}`: a fresh retriever takes `n` turns of a
//!   seeded multi-session dialogue (`maxim_testkit::dialogue`), then commits; the throughput
//!   is in turns, so criterion's time per element is the cost of one ingested turn;
//! - `retrieval_query/{strategy}/{600,10000}`: one question (the dialogue's questions in
//!   turn) for the top 10 over those `n` turns: criterion's median is the query p50;
//! - `retrieval_query/{hub,tantivy BM25 (en_stem)}/100000`: the same at 10^5 turns for the hub's fused
//!   `recall(query)` (every layer) and tantivy only (ingesting 10^5 turns for every strategy
//!   would take the bench minutes of setup; the ingest cost per turn is the 10^4 figure).
//!
//! `RETRIEVAL_STRATEGIES=hub,tantivy` (the evaluation's keys) and `RETRIEVAL_SIZES=10000`
//! (comma lists) set up only those retrievers and sizes: the setup fills every retriever
//! whatever criterion's filter says.
//!
//! Before each query benchmark, the bench runs the questions in turn (at least
//! [`CPU_QUERIES`] queries) and prints the CPU time its own thread spent per query (mean) and
//! the wall-clock p50 and p90 of single queries: on a shared machine the CPU time is the
//! steady figure, the wall clock grows with the other processes' load.
//!
//! The strategies are those of `maxim_benches::eval::strategies` (the retrieval
//! evaluation's), so this measures the very code whose recall `cargo xtask eval retrieval`
//! reports. Run with `cargo bench -p maxim-benches --bench retrieval`.

use maxim_benches::cpu::thread_cpu_ns;
use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use maxim_benches::dialogue::{DialogueConfig, Question, Turn, generate};
use maxim_benches::eval::retrievers::Retriever;
use maxim_benches::eval::strategies;

/// The first `n` turns of one long conversation, and its questions.
fn dialogue(n: usize) -> (Vec<Turn>, Vec<Question>) {
    // About 22 turns per session: enough sessions for `n` turns.
    let config = DialogueConfig { conversations: 1, sessions: n / 20 + 1, ..DialogueConfig::full() };
    let conv = generate(&config).expect("a valid configuration").conversations.swap_remove(0);
    assert!(conv.turns.len() >= n, "{} turns for {n}", conv.turns.len());
    let mut turns = conv.turns;
    turns.truncate(n);
    (turns, conv.questions)
}

fn filled(make: &dyn Fn() -> Box<dyn Retriever>, turns: &[Turn]) -> Box<dyn Retriever> {
    let mut r = make();
    for t in turns {
        r.ingest(t).expect("ingest");
    }
    r.commit().expect("commit");
    r
}

fn retrieval(c: &mut Criterion) {
    let only = |var: &str| std::env::var(var).ok().map(|v| v.split(',').map(str::to_owned).collect());
    let (keys, sizes): (Option<Vec<String>>, Option<Vec<String>>) =
        (only("RETRIEVAL_STRATEGIES"), only("RETRIEVAL_SIZES"));
    for n in [600, 10_000, 100_000] {
        if sizes.as_ref().is_some_and(|s| !s.contains(&n.to_string())) {
            continue;
        }
        let (turns, questions) = dialogue(n);
        for strategy in strategies() {
            if keys.as_ref().is_some_and(|k| !k.iter().any(|k| k == strategy.key)) {
                continue;
            }
            let make = || strategy.make().expect("a retriever");
            let name = make().name();
            if n == 100_000 && name != "hub" && !name.starts_with("tantivy") {
                continue;
            }
            if n < 100_000 {
                ingest(c, &make, &name, &turns);
            }

            let r = filled(&make, &turns);
            print_cpu(&name, n, r.as_ref(), &questions);
            let mut i = 0;
            let mut group = c.benchmark_group("retrieval_query");
            group.bench_function(BenchmarkId::new(&name, n), |b| {
                b.iter(|| {
                    i = (i + 1) % questions.len();
                    r.query(black_box(&questions[i].text), 10).expect("query")
                });
            });
            group.finish();
        }
    }
}

/// Queries run for the printed CPU time per query.
const CPU_QUERIES: usize = 1_000;

/// Runs the questions in turn (at least [`CPU_QUERIES`] queries, top 10) and prints the
/// thread's CPU time per query and the wall-clock p50 and p90 of single queries.
fn print_cpu(name: &str, n: usize, r: &dyn Retriever, questions: &[Question]) {
    let runs = CPU_QUERIES.max(questions.len());
    let mut walls: Vec<f64> = Vec::with_capacity(runs);
    let cpu_start = thread_cpu_ns();
    for i in 0..runs {
        let start = Instant::now();
        black_box(r.query(black_box(&questions[i % questions.len()].text), 10).expect("query"));
        walls.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let cpu = (thread_cpu_ns() - cpu_start) as f64 / 1e3 / runs as f64;
    walls.sort_by(f64::total_cmp);
    eprintln!(
        "retrieval_query/{name}/{n}: thread CPU {cpu:.1} µs/query (mean of {runs}); \
         wall p50 {:.1} µs, p90 {:.1} µs",
        walls[runs / 2],
        walls[runs * 9 / 10]
    );
}

/// The ingest of `turns` into a fresh retriever, commit included, per turn.
fn ingest(c: &mut Criterion, make: &dyn Fn() -> Box<dyn Retriever>, name: &str, turns: &[Turn]) {
    let n = turns.len();
    let mut group = c.benchmark_group("retrieval_ingest");
    group.sample_size(10).throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter_batched(
            make,
            |mut r| {
                for t in turns {
                    r.ingest(black_box(t)).expect("ingest");
                }
                r.commit().expect("commit");
                r
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, retrieval);
criterion_main!(benches);
