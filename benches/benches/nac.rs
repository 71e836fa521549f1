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
//!   without building the owned candidates.
//!
//! Run with `cargo bench -p maxim-benches --bench nac`.

use std::hint::black_box;
use std::time::Duration;

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
    group.throughput(Throughput::Elements(more.len() as u64));
    group.bench_function("warm_3000_links", |b| b.iter(|| feed(&mut nac, &names, &more)));
    group.finish();

    let mut group = crit.benchmark_group("promotion_candidates");
    let mut nac = learner();
    feed(&mut nac, &names, &draws(n, 0, 10 * n));
    let links = nac.len();
    println!("nac: {} candidates over {links} links", nac.get_promotion_candidates(0.6, 3).unwrap().len());
    group.bench_function(BenchmarkId::new("owned", links), |b| {
        b.iter(|| {
            black_box(nac.get_promotion_candidates(black_box(0.6), black_box(3)).expect("valid thresholds"))
        });
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
