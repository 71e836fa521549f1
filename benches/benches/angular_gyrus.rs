//! The mathematical layer (`angular-gyrus`): pattern fitting over many series, sequential
//! versus rayon.
//!
//! The series are generated before anything is timed, from SplitMix64 seed 9: every series
//! has 10^3 hourly points (about six weeks) holding a small trend, a daily rhythm of a
//! random phase and Gaussian noise (Box–Muller), so the fits do real work on realistic data.
//!
//! - `fit_trend_cosinor/{sequential,parallel}/10000`: a trend and a 24 h cosinor fitted to
//!   each of 10^4 series on one time grid (`fit::fit_many`: the grid's design is computed
//!   once, then each series costs two passes over its values);
//! - `correlate_all/{sequential,parallel}/200`: Pearson r, p-values and Benjamini–Hochberg
//!   over the 19,900 pairs of 200 series (`fit::correlate_all`). Before it, a probe runs the
//!   two alternately (so both see the same load) and prints their median wall times, the
//!   sequential calls' thread CPU time, the parallel calls' process CPU time and the load.
//!
//! Run with `cargo bench -p maxim-benches --bench angular_gyrus`.

use maxim_benches::cpu::{load, process_cpu_ticks, thread_cpu_ns};
use std::hint::black_box;
use std::time::Instant;

use angular_gyrus::fit::{self, FitConfig, Grid};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_core::{Parallelism, SplitMix64};
use ndarray::Array2;

const POINTS: usize = 1_000;
const T0: f64 = 1_699_920_000.0;

/// `k` series of [`POINTS`] hourly points, row-major.
fn series(k: usize) -> Array2<f64> {
    let mut rng = SplitMix64::new(9);
    let mut normal = move || {
        let u1 = rng.uniform().max(1e-300);
        let u2 = rng.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let mut rows = Array2::<f64>::zeros((k, POINTS));
    for mut row in rows.rows_mut() {
        let slope = 0.01 * normal();
        let phase = normal().rem_euclid(1.0);
        for (j, v) in row.iter_mut().enumerate() {
            let day = j as f64 / 24.0;
            *v = 1.0 + slope * day + 0.3 * (std::f64::consts::TAU * (day - phase)).cos() + 0.5 * normal();
        }
    }
    rows
}

fn bench_fits(c: &mut Criterion) {
    let times: Vec<f64> = (0..POINTS).map(|j| T0 + j as f64 * 3600.0).collect();
    let grid = Grid::new(&times).expect("valid times");
    let config = FitConfig::default();
    let mut group = c.benchmark_group("fit_trend_cosinor");
    group.sample_size(10);
    let rows = series(10_000);
    for (name, par) in [("sequential", Parallelism::Sequential), ("parallel", Parallelism::Parallel)] {
        group.bench_with_input(BenchmarkId::new(name, rows.nrows()), &rows, |b, rows| {
            b.iter(|| black_box(fit::fit_many(&grid, rows.view(), &config, par)));
        });
    }
    group.finish();
}

/// Sequential and parallel `correlate_all` alternately, 15 rounds, so both see the same
/// load: the median wall time of each, the calling thread's CPU time of the sequential
/// calls and the whole process's CPU time of the parallel ones.
fn probe_correlations(rows: &Array2<f64>) {
    let rounds = 15;
    let (mut seq, mut par) = (Vec::new(), Vec::new());
    let (mut seq_cpu_ns, mut par_ticks) = (0, 0);
    for _ in 0..rounds {
        let (cpu, start) = (thread_cpu_ns(), Instant::now());
        black_box(fit::correlate_all(rows.view(), Parallelism::Sequential).expect("finite rows"));
        seq.push(start.elapsed().as_secs_f64() * 1e3);
        seq_cpu_ns += thread_cpu_ns() - cpu;
        let (ticks, start) = (process_cpu_ticks(), Instant::now());
        black_box(fit::correlate_all(rows.view(), Parallelism::Parallel).expect("finite rows"));
        par.push(start.elapsed().as_secs_f64() * 1e3);
        par_ticks += process_cpu_ticks() - ticks;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (s, p) = (median(&mut seq), median(&mut par));
    println!(
        "correlate_all {}x{POINTS}, {rounds} alternating rounds: sequential wall {s:.2} ms (thread CPU {:.2} ms), \
         parallel wall {p:.2} ms (process CPU {:.1} ms), wall speed-up {:.2}x, {} rayon threads, load {}",
        rows.nrows(),
        seq_cpu_ns as f64 / 1e6 / f64::from(rounds),
        par_ticks as f64 * 10.0 / f64::from(rounds),
        s / p,
        rayon::current_num_threads(),
        load()
    );
}

fn bench_correlations(c: &mut Criterion) {
    let mut group = c.benchmark_group("correlate_all");
    group.sample_size(10);
    let rows = series(200);
    probe_correlations(&rows);
    for (name, par) in [("sequential", Parallelism::Sequential), ("parallel", Parallelism::Parallel)] {
        group.bench_with_input(BenchmarkId::new(name, rows.nrows()), &rows, |b, rows| {
            b.iter(|| black_box(fit::correlate_all(rows.view(), par).expect("finite rows")));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_fits, bench_correlations);
criterion_main!(benches);
