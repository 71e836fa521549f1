//! Trace dynamics (`maxim_core::trace`, after lex-memory).
//!
//! - `decay_all/{auto,one_thread}/1000000`: the strengths at one `now` of 10^6 trace states
//!   (the seven kinds cycled, intensities 0.0..1.0 cycled, ages spread over 90 days) written
//!   into a reused buffer, on rayon's default pool and on a one-thread pool (target for `auto`
//!   on 2 cores: < 20 ms);
//! - `store/*/100000`: the lex-memory baseline operations of `spec/lex-memory.md` §15 on a
//!   `TraceStore` of 10^5 traces: one `decay_cycle`, `migrate_tiers` when two thirds of the
//!   tiers change and when none does, `retrieve_ranked` of 1,000 ids (100 of them linked),
//!   10,000 `record_coactivation` calls (3,333 pairs x 3, links form), and
//!   `retrieve_by_kind` (the 10 strongest semantic traces: a query that evaluates the strength
//!   of every trace of the kind at its `now`, since no strength is stored);
//! - `reinforce/{to_peak,below_peak}/100000`: one `TraceState::reinforce` on each of 10^5
//!   episodic and sensory states, all fresh (the reinforcement reaches the peak and restarts
//!   the curve) or all ten years old (it falls short of the peak and moves the trace back
//!   along its curve: a closed form and a search over whole ticks).
//!
//! Run with `cargo bench -p maxim-benches --bench trace`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use maxim_benches::T0_SECS;
use maxim_core::trace::{
    TraceEntry, TraceKind, TraceParams, TraceState, TraceStateParts, TraceStore, decay_all,
};
use maxim_core::{Partition, RecordId, SplitMix64, Timestamp, days};

const NOW: Timestamp = Timestamp::from_secs(T0_SECS);

/// State `i` of the workload: kind `i mod 7`, intensity `(i mod 11) / 10`, made (its curve
/// started and last reinforced) a uniform time within the last 90 days (`age` overrides that),
/// at its kind's starting strength.
fn workload_state(i: usize, rng: &mut SplitMix64, age: Option<Duration>) -> TraceState {
    let kind = TraceKind::ALL[i % 7];
    let age = age.unwrap_or_else(|| Duration::from_micros(rng.below(days(90).as_micros() as u64)));
    let start = kind.starting_strength();
    TraceState::from_parts(TraceStateParts {
        kind,
        peak: start,
        decay_origin: NOW - age,
        emotional_intensity: (i % 11) as f64 / 10.0,
        emotional_valence: 0.0,
        reinforcement_count: 0,
        last_reinforced: NOW - age,
    })
    .expect("a valid workload state")
}

fn states(n: usize) -> Vec<TraceState> {
    let mut rng = SplitMix64::new(21);
    (0..n).map(|i| workload_state(i, &mut rng, None)).collect()
}

fn decay(c: &mut Criterion) {
    let params = TraceParams::default();
    let mut group = c.benchmark_group("decay_all");
    group.sample_size(30);
    let all = states(1_000_000);
    let mut strengths = Vec::new();
    let summary = decay_all(&all, NOW, &params, &mut strengths);
    assert_eq!(summary.decayed + summary.prune_candidates, 1_000_000 - 1_000_000 / 7 - 1);
    assert_eq!(strengths.len(), all.len());
    group.bench_function("auto/1000000", |b| {
        b.iter(|| decay_all(black_box(&all), NOW, &params, &mut strengths));
    });
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a one-thread pool");
    group.bench_function("one_thread/1000000", |b| {
        b.iter(|| one.install(|| decay_all(black_box(&all), NOW, &params, &mut strengths)));
    });
    group.finish();
}

const N_STORE: usize = 100_000;

/// The §15 store: 10^5 traces in 10 partitions; ages now / 30 d / 100 d in thirds when
/// `tiered`, otherwise spread over 90 days.
fn store(tiered: bool) -> TraceStore<u64> {
    let mut rng = SplitMix64::new(22);
    let partitions: Vec<Partition> =
        (0..10).map(|p| Partition::new(format!("agent-{p}")).expect("a valid name")).collect();
    let mut store = TraceStore::new(TraceParams::default());
    for i in 0..N_STORE {
        let age = tiered.then(|| [Duration::ZERO, days(30), days(100)][i % 3]);
        let entry = TraceEntry::new(id(i), workload_state(i, &mut rng, age), i as u64)
            .with_partition(partitions[i % 10].clone());
        store.insert(entry).expect("fresh ids");
    }
    store
}

fn id(i: usize) -> RecordId {
    RecordId::from_u128(i as u128 + 1)
}

fn store_ops(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");
    group.sample_size(30);

    let mut decaying = store(false);
    let first = decaying.decay_cycle(NOW);
    assert_eq!(first.pruned, 0, "the cycle is repeatable: nothing falls to the prune threshold");
    group.bench_function("decay_cycle/100000", |b| b.iter(|| decaying.decay_cycle(black_box(NOW))));

    let mut tiered = store(true);
    let later = NOW + days(200);
    assert_eq!(tiered.migrate_tiers(NOW), 2 * N_STORE / 3);
    let mut flip = false;
    group.bench_function("migrate_tiers_changing/100000", |b| {
        b.iter(|| {
            flip = !flip;
            tiered.migrate_tiers(if flip { later } else { NOW })
        });
    });
    tiered.migrate_tiers(NOW);
    group.bench_function("migrate_tiers_unchanged/100000", |b| {
        b.iter(|| tiered.migrate_tiers(black_box(NOW)));
    });

    // 1,000 requested ids, the first 100 linked in pairs.
    let mut ranked_store = store(false);
    let requested: Vec<RecordId> = (0..1_000).map(|k| id(k * 97 % N_STORE)).collect();
    for pair in requested[..100].chunks(2) {
        for _ in 0..3 {
            ranked_store.record_coactivation(pair[0], pair[1]).expect("stored ids");
        }
    }
    group.bench_function("retrieve_ranked/1000", |b| {
        b.iter(|| ranked_store.retrieve_ranked(black_box(&requested), NOW));
    });
    assert_eq!(ranked_store.retrieve_by_kind(TraceKind::Semantic, 0.0, 10, NOW).len(), 10);
    group.bench_function("retrieve_by_kind_top10/100000", |b| {
        b.iter(|| ranked_store.retrieve_by_kind(TraceKind::Semantic, black_box(0.1), 10, NOW).len());
    });

    // 10,000 co-activations: 3,333 pairs three times each, plus one (links form).
    let mut rng = SplitMix64::new(23);
    let calls: Vec<(RecordId, RecordId)> = {
        let pairs: Vec<(RecordId, RecordId)> = (0..3_333)
            .map(|_| {
                let a = rng.below(N_STORE as u64) as usize;
                let b = (a + 1 + rng.below(N_STORE as u64 - 1) as usize) % N_STORE;
                (id(a), id(b))
            })
            .collect();
        let mut calls: Vec<_> = (0..3).flat_map(|_| pairs.iter().copied()).collect();
        calls.push(pairs[0]);
        calls
    };
    let fresh = store(false);
    group.bench_function("record_coactivation_10000/100000", |b| {
        b.iter_batched_ref(
            || fresh.clone(),
            |s| {
                for &(x, y) in &calls {
                    s.record_coactivation(x, y).expect("stored ids");
                }
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

fn reinforce(c: &mut Criterion) {
    let params = TraceParams::default();
    let mut group = c.benchmark_group("reinforce");
    group.sample_size(30);
    let mut rng = SplitMix64::new(24);
    for (name, age) in [("to_peak", Duration::ZERO), ("below_peak", days(3_650))] {
        // Episodic and sensory states, alternately (indices 7j + 5 and 7j + 6).
        let states: Vec<TraceState> =
            (0..N_STORE).map(|j| workload_state(7 * (j / 2) + 5 + j % 2, &mut rng, Some(age))).collect();
        for s in &states[..22] {
            let mut s = s.clone();
            let new = s.reinforce(NOW, &params).expect("no firmware");
            assert_eq!(new < s.peak(), !age.is_zero(), "{name}: the intended case");
        }
        group.bench_function(format!("{name}/{N_STORE}"), |b| {
            b.iter_batched_ref(
                || states.clone(),
                |states| {
                    for s in states.iter_mut() {
                        black_box(s.reinforce(NOW, &params).expect("no firmware"));
                    }
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, decay, store_ops, reinforce);
criterion_main!(benches);
