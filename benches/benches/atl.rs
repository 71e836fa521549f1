//! The semantic layer (`atl`) on the shared workload (`shared/bench/WORKLOAD.md`, part f).
//!
//! For C = 10^4 and 10^5 concepts a store holds the workload's concepts (`concept_00000` ...,
//! categories cycling through the five of the workload) and the `5·C` relationships drawn with
//! seed 6, built before anything is timed, then saved and loaded again (the state an agent's
//! store is in after a restart; the build, save and load times are printed). Then:
//!
//! - `find_or_create/hit/C`: a known name, found by its normalised key (one hash lookup), no
//!   episode, cycling through every concept;
//! - `find_or_create/miss/C`: a new name (`control_04242` in the category of `concept_04242`)
//!   that shares a number, a category and a word prefix with a concept held, so the
//!   similarity check scores it against that concept before the new concept is created (and
//!   embedded). Each created concept is removed again outside the timed section, so the
//!   store stays at C;
//! - `find_or_create/miss_at_capacity/C`: the same store built with `max_concepts = C`, so
//!   that every miss (a name never seen, `fresh 17`) first evicts the lowest-scored concept;
//!   the store stays full, and its concepts are gradually replaced by the new ones;
//! - `define_relationship/new/C`: a PREDICTS relationship between two random concepts (none
//!   exists before: the workload draws no PREDICTS), removed again outside the timed section;
//!   `define_relationship/again/C`: the workload's draws defined again, each one merging into
//!   its existing edge;
//! - `find/C`: the outgoing relationships of the workload's seeds (limit 20);
//! - `recall_associated/C`: the workload's 1,000 seeds, defaults (limit 10, decay 0.5, depth
//!   3, threshold 0.1), no access recorded;
//! - `recall_similar/100000`: the top 10 by the default embedder over the 10^5 concepts;
//! - `find_or_create_journaled/{hit,miss}/{memory,never,interval}/10000`: the hit and the
//!   miss above on a store of 10^4 concepts in memory, and on one opened on a directory
//!   (`Atl::builder().open`, after a checkpoint) whose journal is written at once and never
//!   synced (`SyncPolicy::Never`) or gathered and synced once a second (`Interval`, the
//!   default): what journaling a write costs.
//!
//! Run with `cargo bench -p maxim-benches --bench atl` (only the journaled ones:
//! `... --bench atl -- find_or_create_journaled`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use atl::{Atl, AtlConfig, Direction, spec};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_benches::{CATEGORIES, RELATIONSHIP_TYPES, T0_SECS, concept, semantic_draws};
use maxim_core::graph::ActivationParams;
use maxim_core::journal::SyncPolicy;
use maxim_core::{ConceptSpec, ManualClock, MemoryLayer, RecordId, SplitMix64, Timestamp};

const SIZES: [usize; 2] = [10_000, 100_000];

/// A store of `c` workload concepts with the workload's relationships.
struct Store {
    atl: Atl,
    ids: Vec<RecordId>,
    seeds: Vec<usize>,
}

/// A store of `c` workload concepts holding at most `max_concepts`.
fn build(c: usize, max_concepts: usize) -> Store {
    let clock = ManualClock::new(Timestamp::from_secs(T0_SECS));
    let config = {
        let mut c = AtlConfig::default();
        c.max_concepts = max_concepts;
        c
    };
    let mut builder = Atl::builder();
    builder.clock(clock.shared()).config(config).id_seed(6);
    let mut atl = builder.build().expect("valid settings");
    let start = Instant::now();
    let ids: Vec<RecordId> = (0..c)
        .map(|j| {
            let (name, category) = concept(j);
            atl.find_or_create(&spec(&name, category)).expect("a valid name").id
        })
        .collect();
    let (rels, seeds) = semantic_draws(c);
    for r in &rels {
        atl.define_relationship(ids[r.source], ids[r.target], RELATIONSHIP_TYPES[r.kind], r.weight, 0.5)
            .expect("both ends are held");
    }
    println!("atl store: {c} concepts and {} definitions took {:?}", rels.len(), start.elapsed());
    // Save and load: the benchmarks run on the store as an agent has it after a restart.
    let path = std::env::temp_dir().join(format!("maxim-bench-atl-{}-{c}.snap", std::process::id()));
    let start = Instant::now();
    atl.save(&path).expect("a writable temporary directory");
    let saved = start.elapsed();
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let mut loaded = builder.build().expect("valid settings");
    let start = Instant::now();
    loaded.load(&path).expect("the file just saved");
    println!("atl store: save {saved:?}, load {:?} (re-embedding included), {bytes} bytes", start.elapsed());
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(maxim_core::codec::backup_path(&path).unwrap_or_default());
    assert_eq!(loaded.len(), c);
    Store { atl: loaded, ids, seeds }
}

fn specs(c: usize, name: impl Fn(usize) -> String) -> Vec<ConceptSpec> {
    (0..c).map(|j| spec(&name(j), CATEGORIES[j % 5])).collect()
}

fn bench_size(crit: &mut Criterion, c: usize) {
    let mut store = build(c, 2 * c);
    let Store { atl, ids, seeds } = &mut store;
    let n_edges = atl.concept_graph().edge_count();
    println!("atl store: {c} concepts, {n_edges} directed edges");

    let mut group = crit.benchmark_group("find_or_create");
    let hits = specs(c, |j| concept(j).0);
    let mut i = 0;
    group.bench_function(BenchmarkId::new("hit", c), |b| {
        b.iter(|| {
            i = (i + 1) % c;
            let found = atl.find_or_create(black_box(&hits[i])).expect("a valid name");
            debug_assert!(!found.created);
            found.id
        });
    });
    let misses = specs(c, |j| format!("control_{j:05}"));
    let before = atl.stats().counters;
    let mut i = 0;
    group.bench_function(BenchmarkId::new("miss", c), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                i = (i + 1) % c;
                let start = Instant::now();
                let made = atl.find_or_create(black_box(&misses[i])).expect("a valid name");
                timed += start.elapsed();
                assert!(made.created, "a miss creates");
                atl.remove(made.id).expect("just created");
            }
            timed
        });
    });
    group.finish();
    let after = atl.stats().counters;
    let delta = |k: &str| after[k] - before[k];
    println!(
        "atl store: {} similarity comparisons over {} misses",
        delta("similarity_comparisons"),
        delta("concepts_created")
    );

    let mut group = crit.benchmark_group("define_relationship");
    let mut rng = SplitMix64::new(42);
    group.bench_function(BenchmarkId::new("new", c), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let s = ids[rng.below(c as u64) as usize];
                let t = ids[rng.below(c as u64) as usize];
                if s == t {
                    continue;
                }
                let start = Instant::now();
                let outcome = atl.define_relationship(black_box(s), black_box(t), "PREDICTS", 0.7, 0.5);
                timed += start.elapsed();
                outcome.expect("both ends are held");
                atl.remove_relationship(s, t, Some("PREDICTS")).expect("both ends are held");
            }
            timed
        });
    });
    let (rels, _) = semantic_draws(c);
    let mut i = 0;
    group.bench_function(BenchmarkId::new("again", c), |b| {
        b.iter(|| {
            i = (i + 1) % rels.len();
            let r = &rels[i];
            atl.define_relationship(ids[r.source], ids[r.target], RELATIONSHIP_TYPES[r.kind], r.weight, 0.5)
                .expect("both ends are held")
        });
    });
    group.finish();
    assert_eq!(atl.concept_graph().edge_count(), n_edges, "the benchmarks left the graph as it was");

    let mut group = crit.benchmark_group("find");
    let mut i = 0;
    group.bench_function(BenchmarkId::from_parameter(c), |b| {
        b.iter(|| {
            i = (i + 1) % seeds.len();
            atl.find_relationships(ids[seeds[i]], None, Direction::Outgoing, 20).expect("held").len()
        });
    });
    group.finish();

    let mut group = crit.benchmark_group("recall_associated");
    let mut i = 0;
    group.bench_function(BenchmarkId::from_parameter(c), |b| {
        b.iter(|| {
            i = (i + 1) % seeds.len();
            atl.recall_associated(black_box(&[ids[seeds[i]]]), 10).len()
        });
    });
    // The core spread alone, for reference: what the layer adds is ranking and the lookup of
    // the records.
    let params = ActivationParams::default();
    let mut i = 0;
    group.bench_function(BenchmarkId::new("graph_spread_only", c), |b| {
        b.iter(|| {
            i = (i + 1) % seeds.len();
            atl.concept_graph().spread(black_box(&[ids[seeds[i]]]), &params).len()
        });
    });
    group.finish();

    if c == 100_000 {
        let mut group = crit.benchmark_group("recall_similar");
        group.sample_size(30);
        let queries: Vec<String> = seeds.iter().take(64).map(|&s| concept(s).0.replace('_', " ")).collect();
        let mut i = 0;
        group.bench_function(BenchmarkId::from_parameter(c), |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                atl.recall_similar(black_box(&queries[i]), 10)
            });
        });
        group.finish();
    }
}

/// `find_or_create/miss_at_capacity/C` (see the crate docs).
fn bench_miss_at_capacity(crit: &mut Criterion, c: usize) {
    let Store { mut atl, .. } = build(c, c);
    let before = atl.stats().counters;
    let mut group = crit.benchmark_group("find_or_create");
    let mut k = 0usize;
    group.bench_function(BenchmarkId::new("miss_at_capacity", c), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                k += 1;
                let fresh = spec(&format!("fresh {k}"), CATEGORIES[k % 5]);
                let start = Instant::now();
                let made = atl.find_or_create(black_box(&fresh)).expect("a valid name");
                timed += start.elapsed();
                assert!(made.created, "a miss creates");
            }
            timed
        });
    });
    group.finish();
    assert_eq!(atl.len(), c, "the store stays full");
    let after = atl.stats().counters;
    println!(
        "atl store at capacity: {} misses, {} evictions",
        after["concepts_created"] - before["concepts_created"],
        after["evictions"] - before["evictions"]
    );
}

/// `find_or_create_journaled/...` (see the crate docs).
fn bench_journaled(crit: &mut Criterion) {
    const C: usize = 10_000;
    let mut group = crit.benchmark_group("find_or_create_journaled");
    let hits = specs(C, |j| concept(j).0);
    let misses = specs(C, |j| format!("control_{j:05}"));
    for (name, policy) in
        [("memory", None), ("never", Some(SyncPolicy::Never)), ("interval", Some(SyncPolicy::default()))]
    {
        let dir = std::env::temp_dir().join(format!("maxim-bench-atl-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let clock = ManualClock::new(Timestamp::from_secs(T0_SECS));
        let mut builder = Atl::builder();
        let mut config = AtlConfig::default();
        config.max_concepts = 2 * C;
        builder.clock(clock.shared()).config(config).id_seed(6);
        let mut atl = match policy {
            Some(p) => builder.sync_policy(p).open(&dir).expect("a writable temporary directory"),
            None => builder.build().expect("valid settings"),
        };
        for h in &hits {
            atl.find_or_create(h).expect("a valid name");
        }
        if policy.is_some() {
            atl.checkpoint().expect("a writable temporary directory");
        }
        let mut i = 0;
        group.bench_function(BenchmarkId::new(format!("hit/{name}"), C), |b| {
            b.iter(|| {
                i = (i + 1) % C;
                atl.find_or_create(black_box(&hits[i])).expect("a valid name").id
            });
        });
        let mut i = 0;
        group.bench_function(BenchmarkId::new(format!("miss/{name}"), C), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    i = (i + 1) % C;
                    let start = Instant::now();
                    let made = atl.find_or_create(black_box(&misses[i])).expect("a valid name");
                    timed += start.elapsed();
                    atl.remove(made.id).expect("just created");
                }
                timed
            });
        });
        drop(atl);
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

fn semantic(c: &mut Criterion) {
    for n in SIZES {
        bench_size(c, n);
        bench_miss_at_capacity(c, n);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench_journaled, semantic
}
criterion_main!(benches);
