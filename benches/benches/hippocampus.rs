//! The episodic layer (`hippocampus`) on the shared workload (`shared/bench/WORKLOAD.md`).
//!
//! For N = 10^4 and 10^5 a store of capacity 2N captures the first N episodes of the
//! workload stream on the virtual clock (capture i at `T0 + 60 i`), then:
//!
//! - `capture/N`: one capture per call on the store of N episodes, with indexing and
//!   association formation, input built from the episodes after the first N (part a's
//!   inputs with their names shared, so building them is timed as the workload times it). Each captured episode is
//!   removed again outside the timed section, so the store stays at N;
//! - `capture_at_capacity/10000`: captures into a store of capacity N = 10^4 that holds
//!   N episodes, so every capture finds it full and makes room (default settings otherwise);
//!   nothing is removed by hand, the clock moves on a minute per capture. Every 4,096
//!   captures the store starts again from a copy of the same full store (not timed): long-term
//!   episodes are never evicted, so a store that kept capturing would end up all long-term,
//!   which is not the workload's mix (about one in ten);
//! - `recall_{goal,tool_success,object}/N`: part b's queries, limit 10, touching the results
//!   as the workload does (`recall_touching`), clock at the last capture;
//!   `recall_goal_plain/N` is the trait's `recall`, which records no access;
//!   `recall_query/N` is the goal filter with a query of the object and tool names, ranked
//!   by keyword relevance (plain `recall`);
//! - `recall_associated/N`: part c's seeds, defaults (limit 10, decay 0.5, depth 3,
//!   threshold 0.05);
//! - `sleep/N`: one `sleep()` five days after the last capture, on a fresh copy of the
//!   store each time (the copy is not timed);
//! - `save/N`, `load/N`: the whole store to and from a snapshot file (load into an empty
//!   store; dropping the result is not timed).
//!
//! Before the benchmarks of each size, a fresh process (this binary, started again with
//! `MAXIM_HIPPO_RSS=N`) captures the N episodes and prints the growth of its resident set
//! per episode, as the workload's part j measures it in a process of its own; the
//! benchmark process prints the snapshot's bytes per episode.
//!
//! Run with `cargo bench -p maxim-benches --bench hippocampus`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group};
use hippocampus::{Hippocampus, HippocampusConfig, RecallFilter};
use maxim_benches::{
    EpisodeDraw, EpisodeNames, GOALS, associative_seeds, capture_time, episode_input_named, episode_names,
    episode_stream, object, recall_queries, rss_kib, tool,
};
use maxim_core::{ManualClock, RecordId};

const SIZES: [usize; 2] = [10_000, 100_000];
/// Episodes drawn after the first N, cycled through by the capture benchmark.
const EXTRA: usize = 4096;

fn config(n: usize) -> HippocampusConfig {
    let mut c = HippocampusConfig::default();
    c.max_nodes = 2 * n;
    c
}

/// A store that captured `draws` on the virtual clock, with the ids in capture order.
fn build(clock: &ManualClock, n: usize, draws: &[EpisodeDraw]) -> (Hippocampus, Vec<RecordId>) {
    build_with(clock, config(n), draws, &episode_names(draws))
}

/// [`build`] with `config` and the draws' shared `names`.
fn build_with(
    clock: &ManualClock,
    config: HippocampusConfig,
    draws: &[EpisodeDraw],
    names: &[EpisodeNames],
) -> (Hippocampus, Vec<RecordId>) {
    let mut hippo = Hippocampus::builder()
        .config(config)
        .clock(clock.shared())
        .id_seed(1)
        .build()
        .expect("a valid config");
    let ids = draws
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, (e, names))| {
            clock.set(capture_time(i));
            hippo.capture(episode_input_named(e, names)).expect("a valid episode")
        })
        .collect();
    (hippo, ids)
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("maxim-bench-hippocampus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir.join(name)
}

fn hippocampus(c: &mut Criterion) {
    for n in SIZES {
        report_rss(n);
        let draws = episode_stream(n + EXTRA);
        let clock = ManualClock::new(capture_time(0));
        let (mut hippo, ids) = build(&clock, n, &draws[..n]);
        let path = temp_path(&format!("hippocampus-{n}.snap"));
        hippo.save(&path).expect("save");
        let file_bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        eprintln!(
            "hippocampus N={n}: snapshot {file_bytes} bytes = {:.0} bytes/episode; {} directed edges",
            file_bytes as f64 / n as f64,
            hippo.associative_graph().edge_count(),
        );

        let mut group = c.benchmark_group("hippocampus");
        group.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

        let extra = &draws[n..];
        let extra_names = episode_names(extra);
        let mut next = 0usize;
        group.bench_function(BenchmarkId::new("capture", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let k = next;
                    next += 1;
                    clock.set(capture_time(n + k));
                    let start = Instant::now();
                    let (e, names) = (&extra[k % extra.len()], &extra_names[k % extra.len()]);
                    let id = hippo.capture(episode_input_named(e, names)).expect("a valid episode");
                    total += start.elapsed();
                    hippo.remove(id).expect("just captured");
                }
                total
            });
        });
        assert_eq!(hippo.len(), n);

        if n == SIZES[0] {
            let full_clock = ManualClock::new(capture_time(0));
            let full_config = {
                let mut c = HippocampusConfig::default();
                c.max_nodes = n;
                c
            };
            let (template, _) =
                build_with(&full_clock, full_config, &draws[..n], &episode_names(&draws[..n]));
            let mut full = template.clone_without_callbacks();
            let mut next = 0usize;
            group.bench_function(BenchmarkId::new("capture_at_capacity", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let k = next % extra.len();
                        next += 1;
                        if k == 0 {
                            full = template.clone_without_callbacks();
                        }
                        full_clock.set(capture_time(n + k));
                        let input = episode_input_named(&extra[k], &extra_names[k]);
                        let start = Instant::now();
                        black_box(full.capture(input).expect("a valid episode"));
                        total += start.elapsed();
                    }
                    total
                });
            });
            assert!(full.len() <= n);
        }

        clock.set(capture_time(n - 1));
        let queries = recall_queries();
        let goal_filters: Vec<RecallFilter> =
            queries.iter().map(|q| RecallFilter::new().goal(GOALS[q.goal].as_str())).collect();
        let tool_filters: Vec<RecallFilter> =
            queries.iter().map(|q| RecallFilter::new().tool(tool(q.tool)).success(q.success)).collect();
        let object_filters: Vec<RecallFilter> =
            queries.iter().map(|q| RecallFilter::new().object(object(q.object))).collect();
        for (label, filters) in [
            ("recall_goal", &goal_filters),
            ("recall_tool_success", &tool_filters),
            ("recall_object", &object_filters),
        ] {
            let mut q = 0usize;
            group.bench_function(BenchmarkId::new(label, n), |b| {
                b.iter(|| {
                    q = (q + 1) % filters.len();
                    hippo.recall_touching(&filters[q], 10).len()
                });
            });
        }
        let query_filters: Vec<RecallFilter> = queries
            .iter()
            .map(|q| {
                RecallFilter::new().goal(GOALS[q.goal].as_str()).query(format!(
                    "{} {}",
                    object(q.object),
                    tool(q.tool)
                ))
            })
            .collect();
        let mut q = 0usize;
        group.bench_function(BenchmarkId::new("recall_query", n), |b| {
            b.iter(|| {
                q = (q + 1) % query_filters.len();
                hippo.recall(&query_filters[q], 10).len()
            });
        });
        let mut q = 0usize;
        group.bench_function(BenchmarkId::new("recall_goal_plain", n), |b| {
            b.iter(|| {
                q = (q + 1) % goal_filters.len();
                hippo.recall(&goal_filters[q], 10).len()
            });
        });

        let seeds: Vec<RecordId> = associative_seeds(n).into_iter().map(|x| ids[x]).collect();
        let mut q = 0usize;
        group.bench_function(BenchmarkId::new("recall_associated", n), |b| {
            b.iter(|| {
                q = (q + 1) % seeds.len();
                hippo.recall_associated(black_box(&seeds[q..=q]), 10).len()
            });
        });

        group.sample_size(10).measurement_time(Duration::from_secs(if n >= 100_000 { 8 } else { 3 }));
        clock.set(capture_time(n - 1) + std::time::Duration::from_secs(432_000));
        group.bench_function(BenchmarkId::new("sleep", n), |b| {
            b.iter_batched(
                || hippo.clone_without_callbacks(),
                |mut h| {
                    let report = h.sleep();
                    (h, report)
                },
                BatchSize::LargeInput,
            );
        });
        clock.set(capture_time(n - 1));
        group.bench_function(BenchmarkId::new("save", n), |b| b.iter(|| hippo.save(&path).expect("save")));
        group.bench_function(BenchmarkId::new("encode", n), |b| {
            b.iter(|| hippo.to_snapshot_bytes().expect("encode").len());
        });
        let bytes = std::fs::read(&path).expect("the saved snapshot");
        group.bench_function(BenchmarkId::new("decode", n), |b| {
            b.iter_batched(
                || {
                    Hippocampus::builder()
                        .config(config(n))
                        .clock(clock.shared())
                        .build()
                        .expect("a valid config")
                },
                |mut fresh| {
                    fresh.load_from_bytes(&path, &bytes).expect("decode");
                    fresh
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_function(BenchmarkId::new("load", n), |b| {
            b.iter_batched(
                || {
                    Hippocampus::builder()
                        .config(config(n))
                        .clock(clock.shared())
                        .build()
                        .expect("a valid config")
                },
                |mut fresh| {
                    fresh.load(&path).expect("load");
                    fresh
                },
                BatchSize::LargeInput,
            );
        });
        group.finish();
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(maxim_core::codec::backup_path(&path).expect("a file name"));
    }
}

/// The resident-set growth of capturing `n` episodes, measured in a fresh process.
fn report_rss(n: usize) {
    let Ok(exe) = std::env::current_exe() else { return };
    match std::process::Command::new(exe).env(RSS_VAR, n.to_string()).output() {
        Ok(out) if out.status.success() => eprint!("{}", String::from_utf8_lossy(&out.stderr)),
        Ok(out) => eprintln!(
            "hippocampus N={n}: the resident-set probe failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!("hippocampus N={n}: cannot start the resident-set probe: {e}"),
    }
}

/// The probe's side of [`report_rss`]: generate the stream, read the resident set, capture,
/// read it again.
fn rss_probe(n: usize) {
    let draws = episode_stream(n);
    let names = episode_names(&draws);
    let clock = ManualClock::new(capture_time(0));
    let before = rss_kib();
    let started = Instant::now();
    let (hippo, _ids) = build_with(&clock, config(n), &draws, &names);
    let secs = started.elapsed().as_secs_f64();
    let after = rss_kib();
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!(
            "hippocampus N={n}: capture loop {secs:.3} s ({:.2} µs/capture); resident growth {} KiB = {:.0} bytes/episode (fresh process)",
            secs * 1e6 / n as f64,
            a.saturating_sub(b),
            a.saturating_sub(b) as f64 * 1024.0 / n as f64,
        );
    }
    drop(black_box(hippo));
}

const RSS_VAR: &str = "MAXIM_HIPPO_RSS";

criterion_group!(benches, hippocampus);

fn main() {
    if let Some(n) = std::env::var(RSS_VAR).ok().and_then(|v| v.parse().ok()) {
        rss_probe(n);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
