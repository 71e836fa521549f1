//! The causal learner (`nac`) on the shared workload (`shared/bench/WORKLOAD.md`, part h).
//!
//! The observations are part h's: 500 tool signatures, each with its own chance of a positive
//! outcome, three modes as contexts, a delay and an episode id per observation (seed 8; the
//! episode ids of seed 10). Drawn before anything is timed.
//!
//! - `observe/workload_h/N`: a fresh learner fed the `10·N` observations of part h in order
//!   (N = 10^3 gives 2,553 links, N = 10^4 2,941), as the workload's block figure does;
//! - `observe/warm_3000_links`: 10^4 further observations into the learner of N = 10^4
//!   (2,941 links, every link known): the steady state of a learner that has seen its tools;
//! - `promotion_candidates/owned/2941`: `get_promotion_candidates(0.6, 3)` over that learner
//!   (1,420 candidates, each built as the core's owned `PromotionCandidate` with its episodes,
//!   observation times and metadata);
//! - `promotion_candidates/select/2941`: the same selection through `candidate_links`,
//!   without building the owned candidates;
//! - `promotion_candidates/lent/2941`: the same candidates lent borrowed through
//!   `for_each_promotion_candidate` (what the promoter reads; the target, ≤ 100 µs),
//!   each visit reading the candidate's confidence and the length of its observation times.
//!
//! Before the criterion groups, the bench prints the CPU time of its own thread per
//! observation (over the 2,941 links, and over 30 links that stay in cache, which shows
//! what of the first figure is cache misses) and per call (from `/proc/thread-self/schedstat` on Linux), beside the wall
//! time and the load average: on the shared machine wall-clock figures grow with the other
//! processes' load, CPU time much less.
//!
//! Run with `cargo bench -p maxim-benches --bench nac`.

use maxim_benches::cpu::{load, thread_cpu_ns};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use maxim_core::value::{Map, Value};
use maxim_core::{ManualClock, RecordId, Timestamp};
use nac::{Nac, Observation, Valence};

/// One drawn observation: signature index, positive or not, mode, delay, episode.
#[derive(Clone, Copy)]
struct Draw {
    k: usize,
    positive: bool,
    mode: usize,
    delta: f64,
    memory: RecordId,
}

/// The names and contexts every observation borrows.
struct Names {
    sigs: Vec<String>,
    pos: Vec<String>,
    neg: Vec<String>,
    modes: Vec<Map>,
}

fn names() -> Names {
    let sigs: Vec<String> = (0..500).map(maxim_benches::causal_signature).collect();
    Names {
        pos: sigs.iter().map(|s| format!("{s}:positive")).collect(),
        neg: sigs.iter().map(|s| format!("{s}:negative")).collect(),
        modes: maxim_benches::MODES
            .iter()
            .map(|m| [("mode", Value::from(*m))].into_iter().collect())
            .collect(),
        sigs,
    }
}

/// The `count` observations of part h for size `n` (seed 8), continuing the stream when
/// `skip` observations were drawn before.
fn draws(n: usize, skip: usize, count: usize) -> Vec<Draw> {
    let ids = maxim_benches::episode_ids(n);
    maxim_benches::causal_stream(n)
        .skip(skip)
        .take(count)
        .map(|d| Draw { k: d.k, positive: d.positive, mode: d.mode, delta: d.delta, memory: ids[d.memory] })
        .collect()
}

fn feed(nac: &mut Nac, names: &Names, draws: &[Draw]) {
    for d in draws {
        let (outcome, valence) = if d.positive {
            (&names.pos[d.k], Valence::Positive)
        } else {
            (&names.neg[d.k], Valence::Negative)
        };
        let obs = Observation::new("tool", &names.sigs[d.k], "tool_result", outcome, valence)
            .delay(d.delta)
            .context(&names.modes[d.mode])
            .memory(d.memory);
        black_box(nac.observe(black_box(&obs)).expect("a valid observation"));
    }
}

/// Runs `f` (which does `ops` operations) `rounds` times and prints the wall and thread CPU
/// time per operation.
fn print_cpu(what: &str, rounds: usize, ops: u64, mut f: impl FnMut()) {
    let start = Instant::now();
    let cpu_start = thread_cpu_ns();
    for _ in 0..rounds {
        f();
    }
    let cpu = thread_cpu_ns() - cpu_start;
    let wall = start.elapsed();
    let n = (rounds as u64 * ops).max(1) as f64;
    println!(
        "{what}: wall {:.3} µs/op, thread CPU {:.3} µs/op ({:.2} M ops/s of CPU) over {n} ops, load {}",
        wall.as_secs_f64() * 1e6 / n,
        cpu as f64 / 1e3 / n,
        n * 1e3 / cpu.max(1) as f64,
        load()
    );
}

/// Every candidate lent once, each visit reading the candidate.
fn lend(nac: &Nac) -> (usize, f64) {
    let mut sum = 0.0;
    let n = nac
        .for_each_promotion_candidate(black_box(0.6), black_box(3), |c| {
            sum += c.confidence + c.observed_at.len() as f64;
        })
        .expect("valid thresholds");
    (n, sum)
}

fn learner() -> Nac {
    Nac::builder()
        .clock(ManualClock::new(Timestamp::from_secs(1_700_000_000)).shared())
        .build()
        .expect("the default settings are valid")
}

fn observe(crit: &mut Criterion) {
    let names = names();
    let mut group = crit.benchmark_group("observe");
    for n in [1_000, 10_000] {
        let all = draws(n, 0, 10 * n);
        group.throughput(Throughput::Elements(all.len() as u64));
        group.bench_function(BenchmarkId::new("workload_h", n), |b| {
            b.iter_batched(learner, |mut nac| feed(&mut nac, &names, &all), BatchSize::LargeInput);
        });
    }
    let n = 10_000;
    let mut nac = learner();
    feed(&mut nac, &names, &draws(n, 0, 10 * n));
    println!("nac: {} links after the 10^5 observations of N = 10^4", nac.len());
    let more = draws(n, 10 * n, 10_000);
    print_cpu("nac observe, warm 3000 links", 20, more.len() as u64, || feed(&mut nac, &names, &more));
    // The same observations over 5 signatures (30 links, every byte in cache): the part of
    // the figure above that is not cache misses.
    let few = |ds: &[Draw]| ds.iter().map(|d| Draw { k: d.k % 5, ..*d }).collect::<Vec<_>>();
    let mut small = learner();
    feed(&mut small, &names, &few(&draws(n, 0, 10_000)));
    let more_few = few(&more);
    print_cpu("nac observe, warm 30 links (in cache)", 20, more_few.len() as u64, || {
        feed(&mut small, &names, &more_few);
    });
    group.throughput(Throughput::Elements(more.len() as u64));
    group.bench_function("warm_3000_links", |b| b.iter(|| feed(&mut nac, &names, &more)));
    group.finish();

    let mut group = crit.benchmark_group("promotion_candidates");
    let mut nac = learner();
    feed(&mut nac, &names, &draws(n, 0, 10 * n));
    let links = nac.len();
    println!("nac: {} candidates over {links} links", nac.get_promotion_candidates(0.6, 3).unwrap().len());
    print_cpu("nac get_promotion_candidates (owned)", 20, 1, || {
        black_box(nac.get_promotion_candidates(0.6, 3).expect("valid thresholds"));
    });
    print_cpu("nac for_each_promotion_candidate (lent)", 2_000, 1, || {
        black_box(lend(&nac));
    });
    print_cpu("nac candidate_links (select)", 2_000, 1, || {
        black_box(nac.candidate_links(black_box(0.6), black_box(3)).count());
    });
    group.bench_function(BenchmarkId::new("owned", links), |b| {
        b.iter(|| {
            black_box(nac.get_promotion_candidates(black_box(0.6), black_box(3)).expect("valid thresholds"))
        });
    });
    group.bench_function(BenchmarkId::new("lent", links), |b| {
        b.iter(|| black_box(lend(&nac)));
    });
    group.bench_function(BenchmarkId::new("select", links), |b| {
        b.iter(|| black_box(nac.candidate_links(black_box(0.6), black_box(3)).count()));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = observe
}
criterion_main!(benches);
