//! The procedural layer (`cerebellum`): distillation and candidate plans at 10^3 and 10^4
//! skills.
//!
//! For N = 10^3 and 10^4 a store is filled, before anything is timed, by distilling N
//! verified runs (seed 12): goals `goal 0` ... `goal 99` in turn, four steps each drawn from
//! forty tools (one in three writes), two facts each from a pool of twenty, trust 0.8. Each
//! insert associates the new skill with up to five skills sharing its tools. Then:
//!
//! - `distil/new/N`: a run with a method never seen (a tool named for the iteration), which
//!   creates a skill (matching, association, insert); the skill is removed again outside the
//!   timed section, so the store stays at N;
//! - `distil/reinforce/N`: the run of a held skill again, which reinforces it;
//! - `candidates/N`: the plans for a task of one goal with five facts, limit 5 (about N/100
//!   skills share the goal and are matched and ranked);
//! - `candidates/one_goal/N`: the same on a store whose N skills all have one goal, so every
//!   skill is matched and ranked.
//!
//! Run with `cargo bench -p maxim-benches --bench cerebellum`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cerebellum::{Cerebellum, Outcome, RunTrace, Step, Task};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_core::{ManualClock, MemoryLayer, Source, SplitMix64, Timestamp};

const SIZES: [usize; 2] = [1_000, 10_000];
const T0_SECS: i64 = 1_700_000_000;

fn run(rng: &mut SplitMix64, n: usize, goals: usize) -> RunTrace {
    let mut r = RunTrace::new(format!("run-{n}"), format!("goal {}", n % goals), Source::ToolResult, 0.8)
        .facts([format!("fact {}", rng.below(20)), format!("fact {}", rng.below(20))]);
    for _ in 0..4 {
        let t = rng.below(40);
        let tool = format!("tool{t}");
        r = r.call(if t.is_multiple_of(3) {
            Step::write(tool, "target")
        } else {
            Step::read(tool, "target")
        });
    }
    r
}

fn build(n: usize, goals: usize) -> (Cerebellum, Vec<RunTrace>) {
    let clock = ManualClock::new(Timestamp::from_secs(T0_SECS));
    let mut cb = Cerebellum::builder().clock(clock.shared()).id_seed(12).build().expect("valid settings");
    let mut rng = SplitMix64::new(12);
    let ok = Outcome::verified(["verified"]);
    let start = Instant::now();
    let runs: Vec<RunTrace> = (0..n).map(|i| run(&mut rng, i, goals)).collect();
    for r in &runs {
        cb.distil(r, &ok).expect("a valid run");
    }
    eprintln!(
        "cerebellum: {n} runs, {goals} goals -> {} skills, {} edges in {:?}",
        cb.len(),
        cb.skill_graph().edge_count(),
        start.elapsed()
    );
    (cb, runs)
}

fn task(goal: usize) -> Task {
    Task::new(format!("goal {goal}"), (0..5).map(|f| format!("fact {}", f * 4)))
}

fn bench(c: &mut Criterion) {
    let ok = Outcome::verified(["verified"]);
    let mut group = c.benchmark_group("cerebellum");
    for n in SIZES {
        let (mut cb, runs) = build(n, 100);
        group.bench_function(BenchmarkId::new("distil/new", n), |b| {
            let mut i = 0usize;
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    i += 1;
                    let r = RunTrace::new(
                        format!("new-{i}"),
                        format!("goal {}", i % 100),
                        Source::ToolResult,
                        0.8,
                    )
                    .facts(["fact 4"])
                    .call(Step::read("tool1", "target"))
                    .call(Step::write(format!("fresh{i}"), "target"));
                    let start = Instant::now();
                    let out = cb.distil(black_box(&r), &ok).expect("a valid run");
                    total += start.elapsed();
                    cb.remove(out.id().expect("created")).expect("held");
                }
                total
            });
        });
        let mut k = 0usize;
        group.bench_function(BenchmarkId::new("distil/reinforce", n), |b| {
            b.iter(|| {
                k = (k + 1) % runs.len();
                black_box(cb.distil(&runs[k], &ok).expect("a valid run"))
            });
        });
        let mut g = 0usize;
        group.bench_function(BenchmarkId::new("candidates", n), |b| {
            b.iter(|| {
                g = (g + 1) % 100;
                black_box(cb.candidates(&task(g), 5).expect("a valid task").len())
            });
        });
        let (one, _) = build(n, 1);
        group.bench_function(BenchmarkId::new("candidates/one_goal", n), |b| {
            b.iter(|| black_box(one.candidates(&task(0), 5).expect("a valid task").len()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
