//! The semantic promoter (`promoter`) over 1,000 causal candidates into the real ATL.
//!
//! The candidates are shaped like the causal learner's (`shared/bench/WORKLOAD.md`, part h):
//! `tool:tool_<k> → tool:tool_<k>:positive` for k = 0 … 999, confidence 0.7, five source
//! episodes each (ids drawn with seed 10), category `causal_pattern`. The gate admits every
//! candidate (the randomness test has its own bench in `ips-gate`), no episode reader is set,
//! and the cross-layer edges go to a plain in-bench map. Then:
//!
//! - `promoter/rescan/1000`: the scan an agent runs at every session end once the patterns
//!   are known: every candidate is found in the ledger with no new evidence, its edges are
//!   checked and nothing is written (the target: ≤ 10 ms);
//! - `promoter/first_scan/1000`: the first scan into an empty ATL: each candidate is compared
//!   with the concepts already made (`recall_similar`, top 3), created, reinforced by its four
//!   other episodes, its event and outcome concepts created and related by CAUSES, and five
//!   DERIVED_FROM edges added (3,000 concepts and 5,000 edges in all; the set-up of a fresh
//!   ATL is outside the timed section);
//! - `promoter/new_evidence/1000`: a rescan where every pattern brings one new episode (one
//!   reinforcement, one edge and one CAUSES reinforcement each).
//!
//! Before the criterion group, the bench prints the thread CPU time of a rescan (from
//! `/proc/thread-self/schedstat` on Linux) beside its wall time and the load average.
//!
//! Run with `cargo bench -p maxim-benches --bench promoter`.

use maxim_benches::cpu::thread_cpu_ns;
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use atl::Atl;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use maxim_benches::{T0_SECS, seeds};
use maxim_core::contracts::CAUSAL_PATTERN;
use maxim_core::{
    CrossEdgeKind, CrossLinks, GateDecision, LayerRecord, ManualClock, MemoryLayer, MetaValue,
    PromotionCandidate, PromotionCandidateRef, RandomnessAssessment, RandomnessGate, RecordId, Source,
    SplitMix64, Timestamp,
};
use promoter::SemanticPromoter;

const N: usize = 1_000;

/// Cross-layer edges in a map from source record, one per (target, kind).
#[derive(Default)]
struct Edges(HashMap<LayerRecord, Vec<(LayerRecord, CrossEdgeKind, f64)>>);

impl CrossLinks for Edges {
    type Error = Infallible;

    fn add_cross_edge(
        &mut self,
        from: LayerRecord,
        to: LayerRecord,
        kind: CrossEdgeKind,
        weight: f64,
    ) -> Result<(), Infallible> {
        let out = self.0.entry(from).or_default();
        match out.iter_mut().find(|e| (e.0, e.1) == (to, kind)) {
            Some(e) => e.2 = weight,
            None => out.push((to, kind, weight)),
        }
        Ok(())
    }

    fn remove_cross_edges(&mut self, record: LayerRecord) -> usize {
        let mut n = self.0.remove(&record).map_or(0, |v| v.len());
        for out in self.0.values_mut() {
            let before = out.len();
            out.retain(|e| e.0 != record);
            n += before - out.len();
        }
        n
    }

    fn cross_edges_from(&self, from: LayerRecord) -> Vec<(LayerRecord, CrossEdgeKind, f64)> {
        self.0.get(&from).cloned().unwrap_or_default()
    }
}

/// Admits everything.
struct Open;

impl RandomnessGate for Open {
    fn assess(&self, values: &[f64]) -> RandomnessAssessment {
        RandomnessAssessment::insufficient(values.len())
    }

    fn admits(&self, _: &PromotionCandidate) -> GateDecision {
        GateDecision { admitted: true, reason: String::new() }
    }

    fn admits_view(&self, _: &PromotionCandidateRef<'_>) -> GateDecision {
        GateDecision { admitted: true, reason: String::new() }
    }
}

/// The 1,000 candidates with `per` source episodes each.
fn candidates(per: usize) -> Vec<PromotionCandidate> {
    let mut rng = SplitMix64::new(seeds::EPISODE_IDS);
    let ids: Vec<Vec<RecordId>> = (0..N)
        .map(|_| (0..per).map(|_| RecordId::from_u128(u128::from(rng.next_u64()) << 64 | 1)).collect())
        .collect();
    (0..N)
        .map(|k| {
            let event = format!("tool:tool_{k:03}");
            let outcome = format!("{event}:positive");
            let mut metadata = BTreeMap::new();
            metadata.insert("event_signature".into(), MetaValue::Text(event.clone()));
            metadata.insert("outcome_signature".into(), MetaValue::Text(outcome.clone()));
            PromotionCandidate {
                pattern_name: format!("{event} → {outcome}"),
                category: CAUSAL_PATTERN.into(),
                confidence: 0.7,
                observations: per as u32,
                source_memory_ids: ids[k].clone(),
                observed_at: Vec::new(),
                source: Source::Episodic,
                metadata,
            }
        })
        .collect()
}

fn fresh() -> (SemanticPromoter, Atl, Edges) {
    let clock = ManualClock::new(Timestamp::from_secs(T0_SECS));
    let promoter =
        SemanticPromoter::builder().clock(clock.shared()).gate(Arc::new(Open)).build().expect("valid");
    let atl = Atl::builder().clock(clock.shared()).id_seed(11).build().expect("valid");
    (promoter, atl, Edges::default())
}

fn bench(c: &mut Criterion) {
    let five = candidates(5);
    let six = candidates(6);
    let mut group = c.benchmark_group("promoter");
    group.sample_size(20);

    let (mut promoter, mut atl, mut edges) = fresh();
    let first = promoter.promote_candidates("nac", &five, &mut atl, &mut edges);
    assert_eq!((first.promoted.len(), atl.len()), (N, 3 * N), "every pattern is promoted");
    let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
    for _ in 0..20 {
        black_box(promoter.promote_candidates("nac", black_box(&five), &mut atl, &mut edges));
    }
    println!(
        "promoter rescan of {N}: wall {:.3} ms, thread CPU {:.3} ms per scan, load {}",
        start.elapsed().as_secs_f64() * 1e3 / 20.0,
        (thread_cpu_ns() - cpu_start) as f64 / 1e6 / 20.0,
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    group.bench_function("rescan/1000", |b| {
        b.iter(|| {
            let report = promoter.promote_candidates("nac", black_box(&five), &mut atl, &mut edges);
            debug_assert!(report.is_quiet());
            black_box(report)
        });
    });

    group.bench_function("first_scan/1000", |b| {
        b.iter_batched(
            fresh,
            |(mut promoter, mut atl, mut edges)| {
                black_box(promoter.promote_candidates("nac", black_box(&five), &mut atl, &mut edges));
                (promoter, atl, edges)
            },
            BatchSize::PerIteration,
        );
    });

    group.bench_function("new_evidence/1000", |b| {
        b.iter_batched(
            || {
                let (mut promoter, mut atl, mut edges) = fresh();
                promoter.promote_candidates("nac", &five, &mut atl, &mut edges);
                (promoter, atl, edges)
            },
            |(mut promoter, mut atl, mut edges)| {
                let report = promoter.promote_candidates("nac", black_box(&six), &mut atl, &mut edges);
                debug_assert_eq!(report.reinforced.len(), N);
                (promoter, atl, edges, report)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
