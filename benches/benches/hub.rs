//! The `MemoryHub` (`maxim::hub`): what the wiring costs over the layers alone.
//!
//! - `hub/capture/10000` against `hub/hippocampus_capture/10000`: 10^4 episodes captured into
//!   a hub opened on a fresh directory (every store journaled, the default group-commit
//!   policy) and into a hippocampus opened the same way. Each episode names an object, a
//!   person, a room, a two-word goal and a tool, with a known outcome, so a hub capture makes
//!   or reinforces five concepts, five INSTANCE_OF edges, inline relationships, two NAc
//!   observations and two statistician events. Reported per episode (issue 13: the hub at
//!   most 3x the hippocampus).
//! - `hub/knowledge_context`: a context of 8 entries from 3 episode seeds, over a memory of
//!   10^4 episodes, about 10^3 concepts and 10^2 fitted patterns (issue 13: ≤ 50 µs).
//! - `hub/session_end/1000`: the session end of a day of 1,000 episodes on a hub that holds
//!   them (sleep, NAc decay, pattern fitting, promotion, consolidation, checkpoint of every
//!   store; issue 13: ≤ 50 ms).
//!
//! Each benchmark also prints the CPU time the benchmark's own thread spent per operation
//! (read from `/proc/thread-self/schedstat` on Linux): on the shared machine wall-clock
//! figures grow with the other processes' load, CPU time much less. (The journals' group
//! commit runs on background threads, and a wait for `fsync` is not CPU time: the session
//! end's wall time is the figure that counts there.)
//!
//! Run with `cargo bench -p maxim-benches --bench hub -- --warm-up-time 1 --measurement-time 3`.

use maxim_benches::cpu::thread_cpu_ns;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
use maxim::crossgraph::{CrossParams, LayerGraphs};
use maxim::hub::{KnowledgeQuery, MemoryHub};
use maxim_core::{
    ActivationParams, CrossEdgeKind, LayerKind, LayerRecord, ManualClock, RecordId, SplitMix64, Timestamp,
};

const T0: i64 = 1_700_006_400;
const OBJECTS: [&str; 40] = [
    "mug", "cup", "plate", "bowl", "fork", "knife", "spoon", "kettle", "toaster", "pan", "pot", "lid", "jar",
    "bottle", "glass", "napkin", "tray", "sponge", "towel", "bin", "chair", "table", "lamp", "book", "pen",
    "phone", "key", "bag", "box", "shoe", "sock", "hat", "coat", "door", "window", "plant", "clock", "radio",
    "remote", "cable",
];
const PEOPLE: [&str; 10] =
    ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"];
const ROOMS: [&str; 8] = ["kitchen", "hall", "study", "garage", "garden", "bedroom", "bathroom", "attic"];
const TOOLS: [&str; 8] = ["navigate", "grasp", "place", "open", "close", "push", "pull", "wave"];
const VERBS: [&str; 10] =
    ["fetch", "clean", "carry", "find", "move", "check", "sort", "stack", "wash", "dry"];

/// Episode `i` of the stream: everything drawn from `rng`.
fn episode(rng: &mut SplitMix64) -> NewEpisode {
    let pick = |rng: &mut SplitMix64, n: usize| (rng.next_u64() % n as u64) as usize;
    let mut e = NewEpisode::default();
    let object = OBJECTS[pick(rng, OBJECTS.len())];
    e.perception.detected_objects = vec![object.into()];
    e.perception.detected_people = vec![PEOPLE[pick(rng, PEOPLE.len())].into()];
    e.perception.observations.insert("room", ROOMS[pick(rng, ROOMS.len())].into());
    e.context.active_goal = Some(format!("{} the {object}", VERBS[pick(rng, VERBS.len())]).into());
    e.action.tool_name = TOOLS[pick(rng, TOOLS.len())].into();
    e.outcome.success = Some(rng.uniform() < 0.8);
    e
}

fn big_config(n: usize) -> HippocampusConfig {
    let mut config = HippocampusConfig::default();
    config.max_nodes = 2 * n;
    config
}

/// Prints the CPU time per operation of a run, beside its wall time.
fn print_cpu(what: &str, ops: u64, wall: Duration, cpu_ns: u64) {
    let ops = ops.max(1) as f64;
    eprintln!(
        "{what}: wall {:.2} µs/op, thread CPU {:.2} µs/op over {ops} ops",
        wall.as_secs_f64() * 1e6 / ops,
        cpu_ns as f64 / 1e3 / ops
    );
}

/// Seconds per capture of `n` episodes into whatever `capture` writes to, made fresh by `fresh`.
fn per_capture<S>(
    what: &str,
    n: usize,
    iters: u64,
    fresh: impl Fn(&tempfile::TempDir, &ManualClock) -> S,
    capture: impl Fn(&mut S, NewEpisode),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut cpu = 0;
    for _ in 0..iters.div_ceil(n as u64) {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(Timestamp::from_secs(T0));
        let mut store = fresh(&dir, &clock);
        let mut rng = SplitMix64::new(7);
        let episodes: Vec<NewEpisode> = (0..n).map(|_| episode(&mut rng)).collect();
        let start = Instant::now();
        let cpu_start = thread_cpu_ns();
        for (i, e) in episodes.into_iter().enumerate() {
            clock.set(Timestamp::from_secs(T0 + 60 * i as i64));
            capture(&mut store, e);
        }
        cpu += thread_cpu_ns() - cpu_start;
        total += start.elapsed();
    }
    print_cpu(what, iters.div_ceil(n as u64) * n as u64, total, cpu);
    // Criterion asked for `iters` captures; report that many captures' worth.
    total.mul_f64(iters as f64 / (iters.div_ceil(n as u64) * n as u64) as f64)
}

fn capture(c: &mut Criterion) {
    const N: usize = 10_000;
    let mut group = c.benchmark_group("hub");
    group.sample_size(10);
    group.bench_function("capture/10000", |b| {
        b.iter_custom(|iters| {
            per_capture(
                "hub/capture/10000",
                N,
                iters,
                |dir, clock| {
                    MemoryHub::builder()
                        .data_dir(dir.path())
                        .clock(clock.shared())
                        .hippocampus_config(big_config(N))
                        .id_seed(1)
                        .open()
                        .unwrap()
                },
                |hub, e| {
                    black_box(hub.capture(e).unwrap());
                },
            )
        });
    });
    group.bench_function("hippocampus_capture/10000", |b| {
        b.iter_custom(|iters| {
            per_capture(
                "hub/hippocampus_capture/10000",
                N,
                iters,
                |dir, clock| {
                    Hippocampus::builder()
                        .config(big_config(N))
                        .clock(clock.shared())
                        .id_seed(1)
                        .open(dir.path().join("hippocampus"))
                        .unwrap()
                },
                |h, e| {
                    black_box(h.capture(e).unwrap());
                },
            )
        });
    });
    group.finish();
}

/// The tools of the lived memory: each has its own planted trend and daily rhythm.
const LIVED_TOOLS: usize = 50;

/// Episode `k` of day `day` of the lived memory at `hour` of the day: [`episode`], with one
/// of [`LIVED_TOOLS`] tools whose success rate drifts over the days (up for even tools, down
/// for odd) and peaks at a tool's own hour, so that the session ends fit a trend and a
/// daily rhythm per tool: about 10^2 PATTERN records over ten days.
fn lived_episode(rng: &mut SplitMix64, tool: usize, day: i64, hour: f64) -> NewEpisode {
    let mut e = episode(rng);
    e.action.tool_name = format!("tool{tool:02}").into();
    let drift = if tool.is_multiple_of(2) { 0.06 } else { -0.06 } * (day as f64 - 4.5);
    let peak = (tool % 24) as f64;
    let rhythm = 0.3 * (std::f64::consts::TAU * (hour - peak) / 24.0).cos();
    e.outcome.success = Some(rng.uniform() < (0.5 + drift + rhythm).clamp(0.02, 0.98));
    e
}

/// A hub in memory holding `days` days of `per_day` episodes, each day a session; returns
/// the hub and the ids of the last day.
fn lived(days: i64, per_day: usize, clock: &ManualClock) -> (MemoryHub, Vec<RecordId>) {
    let mut hub = MemoryHub::builder()
        .clock(clock.shared())
        .hippocampus_config(big_config(days as usize * per_day))
        .id_seed(3)
        .build()
        .unwrap();
    let mut rng = SplitMix64::new(11);
    let mut last = Vec::new();
    for day in 0..days {
        hub.on_session_start();
        last.clear();
        for k in 0..per_day {
            // Round the clock, so that every tool is seen at every hour of the day.
            let second = (k as i64 * 86_400) / per_day as i64;
            clock.set(Timestamp::from_secs(T0 + day * 86_400 + second));
            let e = lived_episode(&mut rng, k % LIVED_TOOLS, day, second as f64 / 3_600.0);
            last.push(hub.capture(e).unwrap());
        }
        if day + 1 < days {
            hub.on_session_end();
        }
    }
    (hub, last)
}

fn knowledge_context(c: &mut Criterion) {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let (hub, last) = lived(10, 1_000, &clock);
    let stats = hub.stats();
    eprintln!(
        "knowledge_context memory: {} episodes, {} concepts, {} patterns",
        stats.episodes, stats.concepts, stats.patterns
    );
    // How far the knowledge context's spread reaches (knowledge only: no DERIVED_FROM
    // forward, no INSTANCE_OF backward), at its two hops and at the three of the hub's
    // other cross-layer queries.
    let layers = LayerGraphs::new()
        .with(LayerKind::Atl, hub.atl().concept_graph())
        .with(LayerKind::AngularGyrus, hub.angular_gyrus().math_graph())
        .with(LayerKind::Cerebellum, hub.skills().skill_graph());
    let seeds: Vec<LayerRecord> =
        last[..3].iter().map(|&id| LayerRecord::new(LayerKind::Hippocampus, id)).collect();
    for depth in [2, 3] {
        let mut params = CrossParams::new(ActivationParams::new(0.5, 0.01, depth).unwrap());
        params.forward = params.forward.without(CrossEdgeKind::DerivedFrom);
        params.backward = params.backward.without(CrossEdgeKind::InstanceOf);
        let reached = hub.cross_graph().activate_with(&seeds, &layers, &params);
        eprintln!("knowledge spread from 3 episodes, depth {depth}: {} records reached", reached.len());
    }
    let query = KnowledgeQuery::Seeds(last[..3].to_vec());
    let mut group = c.benchmark_group("hub");
    group.bench_function("knowledge_context", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let cpu_start = thread_cpu_ns();
            for _ in 0..iters {
                black_box(hub.knowledge_context(&query, 8).unwrap());
            }
            let cpu = thread_cpu_ns() - cpu_start;
            let wall = start.elapsed();
            if iters > 1_000 {
                print_cpu("hub/knowledge_context", iters, wall, cpu);
            }
            wall
        });
    });
    group.finish();
}

fn session_end(c: &mut Criterion) {
    let mut group = c.benchmark_group("hub");
    group.sample_size(10);
    group.bench_function("session_end/1000", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().unwrap();
                let clock = ManualClock::new(Timestamp::from_secs(T0));
                let mut hub = MemoryHub::builder()
                    .data_dir(dir.path())
                    .clock(clock.shared())
                    .hippocampus_config(big_config(1_000))
                    .id_seed(5)
                    .open()
                    .unwrap();
                let mut rng = SplitMix64::new(13);
                hub.on_session_start();
                for k in 0..1_000 {
                    clock.set(Timestamp::from_secs(T0 + 21_600 + 57 * k));
                    hub.capture(episode(&mut rng)).unwrap();
                }
                let start = Instant::now();
                let cpu_start = thread_cpu_ns();
                let report = black_box(hub.on_session_end());
                let cpu = thread_cpu_ns() - cpu_start;
                let wall = start.elapsed();
                total += wall;
                print_cpu("hub/session_end/1000", 1, wall, cpu);
                eprintln!("session end steps (ms): {:?}", report.step_millis);
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, capture, knowledge_context, session_end);
criterion_main!(benches);
