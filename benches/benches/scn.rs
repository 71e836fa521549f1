//! The SCN (`maxim::scn`): registration and the time-of-day query.
//!
//! The events: 10^5 ids at times drawn uniformly over one year from 2024-01-01 (seed 21) and
//! registered in time order, as an agent registers what happens (about five minutes apart,
//! so the oscillator integrates one step per event); significances drawn in `[0, 1]`
//! (seed 22); the UTC+1 zone. Drawn before anything is timed.
//!
//! - `register/oscillator/100000`: a fresh store with the default settings (bins of 200, the
//!   oscillator on) registering the 10^5 events: signature, four bounded bins (full after the
//!   first few thousand, so most registrations scan an older half for an eviction), cluster
//!   count and one oscillator step per event;
//! - `register/bins_only/100000`: the same without the oscillator;
//! - `query_similar_time/collect/T` for tolerance T = 1 and 3: the ids of the 2T + 1 hour bins
//!   around 18:00 collected into a vector (600 and 1,400 ids);
//! - `query_similar_time/visit/3`: the same bins walked by `for_each_similar`, without
//!   collecting.
//!
//! Run with `cargo bench -p maxim-benches --bench scn`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use maxim::maxim_core::{ManualClock, RecordId, SplitMix64, Timestamp};
use maxim::scn::{Scn, ScnConfig, TimeZone};

const N: usize = 100_000;
const START: i64 = 1_704_067_200; // 2024-01-01 00:00 UTC

fn events() -> Vec<(RecordId, Timestamp, f64)> {
    let mut times = SplitMix64::new(21);
    let mut sig = SplitMix64::new(22);
    let mut at: Vec<i64> = (0..N).map(|_| START + (times.uniform() * 365.0 * 86_400.0) as i64).collect();
    at.sort_unstable();
    at.into_iter()
        .enumerate()
        .map(|(n, at)| (RecordId::from_u128(n as u128 + 1), Timestamp::from_secs(at), sig.uniform()))
        .collect()
}

fn store(oscillator: bool) -> Scn {
    let clock = ManualClock::new(Timestamp::from_secs(START));
    let mut config = ScnConfig::default();
    config.oscillator_enabled = oscillator;
    Scn::builder()
        .clock(clock.shared())
        .config(config)
        .time_zone(TimeZone::from_offset_secs(3600).expect("a valid zone"))
        .build()
        .expect("valid settings")
}

fn register(c: &mut Criterion) {
    let events = events();
    let mut group = c.benchmark_group("register");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(10);
    for (name, oscillator) in [("oscillator", true), ("bins_only", false)] {
        group.bench_function(BenchmarkId::new(name, N), |b| {
            b.iter_batched(
                || store(oscillator),
                |mut scn| {
                    for &(id, at, s) in &events {
                        scn.register(id, at, s).expect("valid registration");
                    }
                    scn
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

fn query_similar_time(c: &mut Criterion) {
    let mut scn = store(true);
    for (id, at, s) in events() {
        scn.register(id, at, s).expect("valid registration");
    }
    let probe = scn.signature_at(Timestamp::from_secs(START + 400 * 86_400 + 17 * 3600));
    let mut group = c.benchmark_group("query_similar_time");
    for tolerance in [1u8, 3] {
        group.bench_function(BenchmarkId::new("collect", tolerance), |b| {
            b.iter(|| black_box(scn.query_similar_time(black_box(&probe), tolerance)));
        });
    }
    group.bench_function(BenchmarkId::new("visit", 3), |b| {
        b.iter(|| {
            let mut n = 0u128;
            scn.for_each_similar(black_box(&probe), 3, |id| n ^= id.as_u128());
            black_box(n)
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = register, query_similar_time
}
criterion_main!(benches);
