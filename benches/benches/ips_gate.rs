//! The randomness gate (`ips-gate`) on the shared workload (`shared/bench/WORKLOAD.md`, part i).
//!
//! - `assess/100`: `assess_randomness` of one 100-value series of part i (seed 9; the four
//!   kinds in turn: uniform, drifting, periodic, exponential), cycling through the 10^4
//!   series; `assess/pass_10000`: the whole pass over the 10^4 series;
//! - `gate_batch/sequential/10000` and `gate_batch/parallel/10000`: 10^4 promotion
//!   candidates judged on one thread and spread over rayon's threads. Three in four are causal
//!   candidates with 100 observation times (random, bursty or slowing timing), one in four a
//!   statistical candidate judged on its confidence.
//!
//! Before the criterion groups, the bench prints the thread CPU time per series (from
//! `/proc/thread-self/schedstat` on Linux) and, for the batch, the wall time of the
//! sequential and the parallel judging side by side with their ratio, the process's CPU
//! time (from `/proc/self/stat`) and the load average: on the shared machine the parallel
//! speed-up depends on how many cores the other processes leave free.
//!
//! Run with `cargo bench -p maxim-benches --bench ips_gate`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ips_gate::{IpsGate, assess_randomness};
use maxim_core::contracts::{CAUSAL_PATTERN, OPERATIONAL_PATTERN};
use maxim_core::{PromotionCandidate, Source, SplitMix64, Timestamp};

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

/// The CPU time this thread has run, in nanoseconds (Linux; 0 elsewhere).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The CPU time of the whole process (every thread), in clock ticks (Linux; 0 elsewhere).
fn process_cpu_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            // The fields after the command's closing parenthesis; utime and stime are the
            // 12th and 13th of them.
            let rest = stat.rsplit_once(')')?.1;
            let mut fields = rest.split_whitespace().skip(11);
            let user: u64 = fields.next()?.parse().ok()?;
            let system: u64 = fields.next()?.parse().ok()?;
            Some(user + system)
        })
        .unwrap_or(0)
}

/// The load averages (Linux; empty elsewhere).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
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

fn gate_batch(crit: &mut Criterion) {
    let mut rng = SplitMix64::new(12);
    let candidates: Vec<PromotionCandidate> = (0..10_000).map(|i| candidate(i, &mut rng)).collect();
    let gate = IpsGate::default();
    let admitted = gate.judge_batch(&candidates).iter().filter(|j| j.admitted).count();
    println!(
        "ips gate: {admitted} of {} candidates admitted; {} threads",
        candidates.len(),
        rayon::current_num_threads()
    );
    // Sequential and parallel side by side, alternating, ten rounds each.
    let (mut seq, mut par) = (Duration::ZERO, Duration::ZERO);
    let (mut seq_ticks, mut par_ticks) = (0, 0);
    for _ in 0..10 {
        let (t, c) = (Instant::now(), process_cpu_ticks());
        black_box(gate.judge_batch_sequential(black_box(&candidates)));
        seq += t.elapsed();
        seq_ticks += process_cpu_ticks() - c;
        let (t, c) = (Instant::now(), process_cpu_ticks());
        black_box(gate.judge_batch(black_box(&candidates)));
        par += t.elapsed();
        par_ticks += process_cpu_ticks() - c;
    }
    println!(
        "gate_batch 10^4: sequential {:.2} ms, parallel {:.2} ms per batch (wall), speed-up {:.2}x; \
         process CPU {} / {} ticks; {} rayon threads; load {}",
        seq.as_secs_f64() * 1e3 / 10.0,
        par.as_secs_f64() * 1e3 / 10.0,
        seq.as_secs_f64() / par.as_secs_f64(),
        seq_ticks,
        par_ticks,
        rayon::current_num_threads(),
        load()
    );
    let mut group = crit.benchmark_group("gate_batch");
    group.throughput(Throughput::Elements(candidates.len() as u64));
    group.bench_function(BenchmarkId::new("sequential", candidates.len()), |b| {
        b.iter(|| black_box(gate.judge_batch_sequential(black_box(&candidates))));
    });
    group.bench_function(BenchmarkId::new("parallel", candidates.len()), |b| {
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
