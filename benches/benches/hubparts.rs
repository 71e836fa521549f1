//! The hub's parts (`maxim::extract`, `maxim::context`) on the shared workload
//! (`shared/bench/WORKLOAD.md`, part a's episodes).
//!
//! - `extract/full`: concept extraction from 1,000 captured workload episodes (objects, goal
//!   tokens, tool; the inline relationships), reported per episode;
//! - `extract/compressed`: the same episodes compressed (goal and tool only);
//! - `context/rank_render/8`: 8 candidates, each with a definition of about 60 characters
//!   and three relationships, ranked and rendered into the fenced prompt text (the copy of the input is not timed);
//! - `context/rank/1000`: 1,000 candidates ranked down to 8 (no rendering; the copy of the input
//!   is not timed), the size of the hub's `knowledge_context` over 10^3 concepts;
//! - `context/select/1000`: the same ranking on bare numbers ([`Candidate`]s), the way a
//!   caller ranks many and builds full entries for the winners only.
//!
//! Run with `cargo bench -p maxim-benches --bench hubparts`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use maxim::context::{Candidate, ContextRelation, KnowledgeEntry, RankOptions, rank, select};
use maxim::extract::extract;
use maxim::hippocampus::{Episode, Hippocampus};
use maxim_benches::{T0_SECS, episode_input, episode_stream};
use maxim_core::{LayerKind, ManualClock, RecordId, SplitMix64, Timestamp, Trust};

const EPISODES: usize = 1_000;

/// The first [`EPISODES`] workload episodes, captured.
fn episodes() -> Vec<Episode> {
    let clock = ManualClock::new(Timestamp::from_secs(T0_SECS));
    let mut hippo = Hippocampus::builder().clock(clock.shared()).build().expect("default settings");
    let ids: Vec<RecordId> = episode_stream(EPISODES)
        .iter()
        .map(|e| hippo.capture(episode_input(e)).expect("a valid episode"))
        .collect();
    ids.iter().map(|id| hippo.peek(*id).expect("held").clone()).collect()
}

/// `n` candidates with seeded confidences, trusts and activations.
fn candidates(n: usize) -> Vec<KnowledgeEntry> {
    let mut rng = SplitMix64::new(13);
    (0..n)
        .map(|i| {
            let trust = Trust::new(0.3 + 0.7 * rng.uniform()).expect("in [0, 1]");
            KnowledgeEntry::new(
                RecordId::from_u128(i as u128 + 1),
                LayerKind::Atl,
                format!("concept_{i:05}"),
                rng.uniform(),
                trust,
            )
            .with_category("object")
            .with_definition(format!("object: a ceramic container <{i}> found in kitchens & offices"))
            .with_provenance("episodic")
            .with_activation(rng.uniform())
            .with_relationship(ContextRelation::new("IS_A", "container", 0.8))
            .with_relationship(ContextRelation::new("RELATED_TO", "kitchen", 0.5))
            .with_relationship(ContextRelation::new("PROPERTY_OF", "kitchen_area", 0.3))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let full = episodes();
    let compressed: Vec<Episode> =
        full.iter().map(|e| Episode::from(e.as_full().expect("full").compress(0))).collect();
    let mut group = c.benchmark_group("hubparts/extract");
    group.throughput(Throughput::Elements(EPISODES as u64));
    group.bench_function("full", |b| {
        b.iter(|| full.iter().map(|e| extract(black_box(e)).concepts.len()).sum::<usize>());
    });
    group.bench_function("compressed", |b| {
        b.iter(|| compressed.iter().map(|e| extract(black_box(e)).concepts.len()).sum::<usize>());
    });
    group.finish();

    let mut group = c.benchmark_group("hubparts/context");
    let eight = candidates(8);
    group.bench_function("rank_render/8", |b| {
        b.iter_batched(
            || eight.clone(),
            |input| rank(input, 8, 0.5).expect("valid numbers").render().len(),
            BatchSize::SmallInput,
        );
    });
    let thousand = candidates(1_000);
    group.bench_function("rank/1000", |b| {
        b.iter_batched(
            || thousand.clone(),
            |input| rank(input, 8, 0.5).expect("valid numbers").entries.len(),
            BatchSize::LargeInput,
        );
    });
    let bare: Vec<Candidate> = thousand.iter().map(Candidate::of).collect();
    group.bench_function("select/1000", |b| {
        b.iter(|| select(black_box(&bare), &RankOptions::default()).expect("valid numbers").entries.len());
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
