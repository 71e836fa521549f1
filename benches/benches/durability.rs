//! The journal's cost (issue 15) on the shared workload (`shared/bench/WORKLOAD.md`).
//!
//! - `capture/{plain,interval,always}/10000`: one capture per call into a store of N = 10^4
//!   episodes (capacity 2N), as `hippocampus/capture/N` measures it: in memory only
//!   (`plain`), opened on a directory with the default policy (`interval`: group commit
//!   once a second) and with `SyncPolicy::Always` (an `fdatasync` per capture: bound by the
//!   disk). Each captured episode is removed again outside the timed section (journaled
//!   too on a directory), so the store stays at N. The target: `interval` at most 1.5x
//!   `plain`.
//! - `open/{plain_load,journal_replay}/100000`: 10^5 captures brought back into a fresh
//!   store: `plain_load` loads a snapshot of them (`build` + `load`), `journal_replay` opens a
//!   directory whose journal holds all 10^5 captures and no snapshot (`open`: lock, load
//!   nothing, replay). The target: `journal_replay` at most 2x `plain_load`.
//!
//! Run with `cargo bench -p maxim-benches --bench durability`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use hippocampus::{Hippocampus, HippocampusConfig};
use maxim_benches::{capture_time, episode_input, episode_stream};
use maxim_core::ManualClock;
use maxim_core::journal::SyncPolicy;

const N: usize = 10_000;
const OPEN_N: usize = 100_000;
const EXTRA: usize = 4096;

fn config(n: usize) -> HippocampusConfig {
    let mut c = HippocampusConfig::default();
    c.max_nodes = 2 * n;
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("maxim-bench-durability-{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// A store of `n` captures, in memory or opened on `dir` with `policy`.
fn store(clock: &ManualClock, n: usize, dir: Option<(&Path, SyncPolicy)>) -> Hippocampus {
    let mut b = Hippocampus::builder();
    b.config(config(n)).clock(clock.shared()).id_seed(1);
    let mut h = match dir {
        Some((dir, policy)) => b.sync_policy(policy).open(dir).expect("open"),
        None => b.build().expect("build"),
    };
    for (i, e) in episode_stream(n).iter().enumerate() {
        clock.set(capture_time(i));
        h.capture(episode_input(e)).expect("a valid episode");
    }
    h
}

fn capture(c: &mut Criterion) {
    let draws = episode_stream(N + EXTRA);
    let extra = &draws[N..];
    let mut group = c.benchmark_group("durability");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (name, policy) in
        [("plain", None), ("interval", Some(SyncPolicy::default())), ("always", Some(SyncPolicy::Always))]
    {
        let dir = scratch(name);
        let clock = ManualClock::new(capture_time(0));
        let mut h = store(&clock, N, policy.map(|p| (dir.as_path(), p)));
        if policy.is_some() {
            h.checkpoint().expect("checkpoint");
        }
        let mut next = 0usize;
        group.bench_function(BenchmarkId::new(format!("capture/{name}"), N), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let k = next;
                    next += 1;
                    clock.set(capture_time(N + k));
                    let start = Instant::now();
                    let id = h.capture(episode_input(&extra[k % extra.len()])).expect("a valid episode");
                    total += start.elapsed();
                    h.remove(id).expect("just captured");
                }
                total
            });
        });
        drop(h);
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

fn open(c: &mut Criterion) {
    let clock = ManualClock::new(capture_time(0));
    let journaled = scratch("journaled");
    let h = store(&clock, OPEN_N, Some((&journaled, SyncPolicy::Never)));
    let snapshot = scratch("plain").join("hippocampus.snap");
    h.save(&snapshot).expect("save");
    let journal_bytes = std::fs::metadata(journaled.join("hippocampus.journal")).map_or(0, |m| m.len());
    eprintln!(
        "durability: journal of {OPEN_N} captures {journal_bytes} bytes ({:.0} per capture), snapshot {} bytes",
        journal_bytes as f64 / OPEN_N as f64,
        std::fs::metadata(&snapshot).map_or(0, |m| m.len())
    );
    drop(h);
    let mut group = c.benchmark_group("durability");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    group.bench_function(BenchmarkId::new("open/plain_load", OPEN_N), |b| {
        b.iter_with_large_drop(|| {
            let mut h =
                Hippocampus::builder().config(config(OPEN_N)).clock(clock.shared()).build().expect("build");
            h.load(black_box(&snapshot)).expect("load");
            h
        });
    });
    group.bench_function(BenchmarkId::new("open/journal_replay", OPEN_N), |b| {
        // One open at a time: the directory's lock is held until the store is dropped
        // (outside the timed section).
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let h = Hippocampus::builder()
                    .config(config(OPEN_N))
                    .clock(clock.shared())
                    .sync_policy(SyncPolicy::Never)
                    .open(black_box(&journaled))
                    .expect("open");
                total += start.elapsed();
                drop(h);
            }
            total
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(journaled.parent().expect("a parent"));
}

criterion_group!(benches, capture, open);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
