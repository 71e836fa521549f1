//! The randomness gate (`ips-gate`) on the shared workload (`shared/bench/WORKLOAD.md`, part i).
//!
//! - `assess/100`: `assess_randomness` of one 100-value series of part i (seed 9; the four
//!   kinds in turn: uniform, drifting, periodic, exponential), cycling through the 10^4
//!   series; `assess/pass_10000`: the whole pass over the 10^4 series;
//! - `gate_batch/sequential/10000` and `gate_batch/parallel/10000`: 10^4 promotion
//!   candidates, borrowed (`IpsGate::judge_views`), judged on one thread and spread over
//!   rayon's threads; `gate_batch/owned_parallel/10000` the owned candidates in parallel
//!   (`judge_batch`). Three in four are causal candidates with 100 observation times
//!   (random, bursty or slowing timing), one in four a statistical candidate judged on its
//!   confidence.
//!
//! Before the criterion groups, the bench prints the thread CPU time per series (from
//! `/proc/thread-self/schedstat` on Linux) and, for the batch, the sequential and the
//! parallel judging side by side: wall time, CPU time of every thread (from
//! `/proc/self/task/*/schedstat`) and of the busiest thread, and the two speed-ups (wall;
//! sequential CPU over the busiest thread's CPU). On a shared machine the wall speed-up
//! depends on how many cores the other processes leave free; the CPU one does not.
//!
//! Run with `cargo bench -p maxim-benches --bench ips_gate`.

use maxim_benches::cpu::{load, thread_cpu_ns};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ips_gate::{IpsGate, assess_randomness};
use maxim_core::contracts::{CAUSAL_PATTERN, OPERATIONAL_PATTERN};
use maxim_core::{PromotionCandidate, PromotionCandidateRef, Source, SplitMix64, Timestamp};

fn candidate(i: usize, rng: &mut SplitMix64) -> PromotionCandidate {
    let mut t = 1_700_000_000.0;
    let (category, confidence, times) = match i % 4 {
        0 => (OPERATIONAL_PATTERN, rng.uniform(), Vec::new()),
        kind => {
            let times = (0..100)
                .map(|k| {
                    t += match kind {
                        1 => -(1.0 - rng.uniform()).ln() * 3600.0,
                        2 => {
                            if k % 5 == 0 {
                                86_400.0
                            } else {
                                60.0 * rng.uniform()
                            }
                        }
                        _ => 60.0 * f64::from(k) + rng.uniform(),
                    };
                    Timestamp::from_secs_f64(t).expect("a time in range")
                })
                .collect();
            (CAUSAL_PATTERN, 0.8, times)
        }
    };
    PromotionCandidate {
        pattern_name: format!("pattern {i}"),
        category: category.into(),
        confidence,
        observations: times.len() as u32,
        source_memory_ids: Vec::new(),
        observed_at: times,
        source: Source::Episodic,
        metadata: BTreeMap::new(),
    }
}

fn assess(crit: &mut Criterion) {
    let all = maxim_benches::randomness_series();
    let start = Instant::now();
    let cpu_start = thread_cpu_ns();
    let passes = 10;
    for _ in 0..passes {
        black_box(all.iter().filter(|s| assess_randomness(s).expect("finite values").is_random).count());
    }
    let cpu = thread_cpu_ns() - cpu_start;
    let n = (passes * all.len()) as f64;
    println!(
        "assess_randomness, 100 values: wall {:.3} µs, thread CPU {:.3} µs per series over {n} series, load {}",
        start.elapsed().as_secs_f64() * 1e6 / n,
        cpu as f64 / 1e3 / n,
        load()
    );
    let mut group = crit.benchmark_group("assess");
    let mut i = 0;
    group.bench_function(BenchmarkId::new("series", 100), |b| {
        b.iter(|| {
            i = (i + 1) % all.len();
            black_box(assess_randomness(black_box(&all[i])).expect("finite values"))
        });
    });
    group.throughput(Throughput::Elements(all.len() as u64));
    group.bench_function("pass_10000", |b| {
        b.iter(|| all.iter().filter(|s| assess_randomness(s).expect("finite values").is_random).count());
    });
    group.finish();
}

/// The CPU time each thread of the process has run so far, in nanoseconds, by thread id
/// (`/proc/self/task/*/schedstat` on Linux; empty elsewhere).
fn threads_cpu_ns() -> BTreeMap<u64, u64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return BTreeMap::new() };
    tasks
        .filter_map(|t| {
            let t = t.ok()?;
            let tid = t.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
            Some((tid, stat.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// What a run of `f` cost: wall time, CPU of every thread in all, CPU of the busiest thread.
fn cost(f: impl FnOnce()) -> (Duration, u64, u64) {
    let before = threads_cpu_ns();
    let start = Instant::now();
    f();
    let wall = start.elapsed();
    let after = threads_cpu_ns();
    let used = after.iter().map(|(tid, ns)| ns - before.get(tid).copied().unwrap_or(0));
    let (total, busiest) = used.fold((0, 0), |(t, b), u| (t + u, b.max(u)));
    (wall, total, busiest)
}

fn gate_batch(crit: &mut Criterion) {
    let mut rng = SplitMix64::new(12);
    let candidates: Vec<PromotionCandidate> = (0..10_000).map(|i| candidate(i, &mut rng)).collect();
    let views: Vec<PromotionCandidateRef<'_>> = candidates.iter().map(PromotionCandidate::as_view).collect();
    let gate = IpsGate::default();
    let admitted = gate.judge_views(&views).iter().filter(|j| j.admitted).count();
    println!(
        "ips gate: {admitted} of {} candidates admitted; {} rayon threads",
        candidates.len(),
        rayon::current_num_threads()
    );
    // Sequential and parallel side by side, alternating, ten rounds each, the candidates
    // borrowed. The CPU columns do not depend on how busy the machine is: the parallel
    // batch's speed-up in CPU terms is the sequential thread's CPU over the busiest thread's
    // (the longest chain of work any thread ran); the wall ratio is what a caller waits for,
    // and needs free cores.
    let rounds = 10u32;
    let (mut seq, mut par) = ((Duration::ZERO, 0, 0), (Duration::ZERO, 0, 0));
    for _ in 0..rounds {
        let c = cost(|| {
            black_box(gate.judge_views_sequential(black_box(&views)));
        });
        seq = (seq.0 + c.0, seq.1 + c.1, seq.2 + c.2);
        let c = cost(|| {
            black_box(gate.judge_views(black_box(&views)));
        });
        par = (par.0 + c.0, par.1 + c.1, par.2 + c.2);
    }
    let ms = |ns: u64| ns as f64 / 1e6 / f64::from(rounds);
    println!(
        "gate_batch 10^4 (lent): sequential wall {:.2} ms, CPU {:.2} ms | parallel wall {:.2} ms, \
         CPU {:.2} ms over all threads, busiest thread {:.2} ms | speed-up: wall {:.2}x, CPU (sequential / \
         busiest thread) {:.2}x | {} rayon threads, load {}",
        seq.0.as_secs_f64() * 1e3 / f64::from(rounds),
        ms(seq.1),
        par.0.as_secs_f64() * 1e3 / f64::from(rounds),
        ms(par.1),
        ms(par.2),
        seq.0.as_secs_f64() / par.0.as_secs_f64(),
        seq.1 as f64 / par.2.max(1) as f64,
        rayon::current_num_threads(),
        load()
    );
    let mut group = crit.benchmark_group("gate_batch");
    group.throughput(Throughput::Elements(candidates.len() as u64));
    group.bench_function(BenchmarkId::new("sequential", candidates.len()), |b| {
        b.iter(|| black_box(gate.judge_views_sequential(black_box(&views))));
    });
    group.bench_function(BenchmarkId::new("parallel", candidates.len()), |b| {
        b.iter(|| black_box(gate.judge_views(black_box(&views))));
    });
    group.bench_function(BenchmarkId::new("owned_parallel", candidates.len()), |b| {
        b.iter(|| black_box(gate.judge_batch(black_box(&candidates))));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = assess, gate_batch
}
criterion_main!(benches);
