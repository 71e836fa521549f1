//! The lex-memory test vectors (`tests/data/lex-memory-vectors.json`, a copy of
//! `spec/lex-memory-vectors.json`) run against the trace module, and its property tests.
//!
//! Every top-level key of the JSON is handled here or skipped with a reason
//! ([`every_key_of_the_vectors_is_handled`]). Numbers are read from the file, never retyped.
//! Where a vector pins a reference quirk that maxim changes on purpose, the test feeds the
//! vector's input and asserts maxim's documented outcome, naming the vector.
//!
//! In the reference a trace's strength is a stored field, set by decay cycles, independent of
//! its `last_reinforced`; in maxim it is [`TraceState::strength_at`], read on the curve of the
//! trace's peak from its decay origin. Vectors that give a strength and an age independently
//! (retrieval scores, tiers, RK1) are run under [`frozen`] parameters, whose one tick is longer
//! than any age in the file, so the strength at the query time is exactly the peak the test
//! sets.

use std::sync::OnceLock;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::error::Error;
use crate::id::{RecordId, SplitMix64};
use crate::record::Partition;
use crate::time::{Timestamp, days};

const VECTORS_JSON: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lex-memory-vectors.json"));

/// The fixed "now" of the store scenarios.
const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

fn vectors() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(VECTORS_JSON).expect("the vendored vectors parse"))
}

fn section(key: &str) -> &'static Value {
    vectors().get(key).unwrap_or_else(|| panic!("no key {key} in the vectors"))
}

fn rows(key: &str) -> &'static [Value] {
    section(key).as_array().unwrap_or_else(|| panic!("{key} is not a list"))
}

fn row(key: &str, id: &str) -> &'static Value {
    rows(key).iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no vector {id} in {key}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn count(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}")) as usize
}

fn kind_of(v: &Value) -> TraceKind {
    text(v).parse().unwrap()
}

/// Compares with the vector's tolerance: 0 means bit for bit.
fn check(name: &str, actual: f64, expected: f64, tolerance: f64) {
    if tolerance == 0.0 {
        assert!(actual == expected, "{name}: {actual:?} is not bit-equal to {expected:?}");
    } else {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{name}: {actual:?} vs {expected:?} (tol {tolerance})"
        );
    }
}

/// The numbers written in a prose field of a vector (its `setup`), in order.
fn numbers_in(prose: &str) -> Vec<f64> {
    prose
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter_map(|t| t.parse().ok())
        .collect()
}

fn rid(n: u128) -> RecordId {
    RecordId::from_u128(n)
}

fn params() -> TraceParams {
    TraceParams::default()
}

/// Parameters whose one tick (a year) is longer than any age in the vectors: under them, no
/// tick has elapsed since a trace's decay origin, so its strength is its peak.
fn frozen() -> TraceParams {
    TraceParams::new(days(365)).unwrap()
}

/// `n` ticks of the default length after `t`.
fn ticks_after(t: Timestamp, n: u64) -> Timestamp {
    t + params().tick() * u32::try_from(n).unwrap()
}

/// A state of `kind` whose curve starts at `at` with the peak `strength`, with `intensity`,
/// and last reinforced at `at`.
fn state_with(kind: TraceKind, strength: f64, intensity: f64, at: Timestamp) -> TraceState {
    TraceState::from_parts(TraceStateParts {
        kind,
        peak: strength,
        decay_origin: at,
        emotional_intensity: intensity,
        emotional_valence: 0.0,
        reinforcement_count: 0,
        last_reinforced: at,
    })
    .unwrap()
}

/// A state made at `now` whose peak is `strength`.
fn state_at_peak(kind: TraceKind, strength: f64, now: Timestamp) -> TraceState {
    let mut parts = TraceState::new(kind, now).to_parts();
    parts.peak = strength;
    TraceState::from_parts(parts).unwrap()
}

fn ago(now: Timestamp, secs: f64) -> Timestamp {
    Timestamp::from_micros(now.as_micros() - Timestamp::from_secs_f64(secs).unwrap().as_micros())
}

fn insert<P>(store: &mut TraceStore<P>, id: RecordId, state: TraceState, payload: P) {
    store.insert(TraceEntry::new(id, state, payload)).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping: every key, constants, kinds.

#[test]
fn every_key_of_the_vectors_is_handled() {
    let handled = [
        // Metadata: the schema version is checked below; the rest describes the source.
        "schema_version",
        "reference",
        "provenance",
        "conventions",
        "provenance_check",
        // Tested in this file.
        "constants",
        "trace_types",
        "decay",
        "decay_relations",
        "decay_grid",
        "decay_cycle",
        "reinforcement",
        "reinforcement_sequences",
        "reinforce_runner",
        "retrieval_score",
        "retrieval_score_relations",
        "ranking",
        "tiers",
        "migrate_tier",
        "hebbian",
        "walk_associations",
        "retrieve_and_reinforce",
        "erase",
        "new_trace_defaults",
        // Skipped: quotas belong to the v0.2.0 PersistentStore (§10), a separate DB-backed store
        // that maxim does not port; the layers' own persistence and capacity rules replace it.
        "quota",
    ];
    let keys = vectors().as_object().unwrap();
    for key in keys.keys() {
        assert!(handled.contains(&key.as_str()), "vector key {key} is neither tested nor skipped");
    }
    assert_eq!(keys.len(), handled.len());
    assert_eq!(section("schema_version"), 1);
}

#[test]
fn constants_match_the_reference() {
    for (name, value) in section("constants").as_object().unwrap() {
        let value = num(value);
        match name.as_str() {
            "E_WEIGHT" => assert_eq!(E_WEIGHT, value),
            "R_AMOUNT" => assert_eq!(R_AMOUNT, value),
            "IMPRINT_MULTIPLIER" => assert_eq!(IMPRINT_MULTIPLIER, value),
            "AUTO_FIRE_THRESHOLD" => assert_eq!(AUTO_FIRE_THRESHOLD, value),
            "ARCHIVE_THRESHOLD" => assert_eq!(ARCHIVE_THRESHOLD, value),
            "PRUNE_THRESHOLD" => assert_eq!(PRUNE_THRESHOLD, value),
            "HOT_TIER_WINDOW_S" => assert_eq!(HOT_TIER_WINDOW_SECS, value),
            "WARM_TIER_WINDOW_S" => assert_eq!(WARM_TIER_WINDOW_SECS, value),
            "RETRIEVAL_RECENCY_HALF_S" => assert_eq!(RETRIEVAL_RECENCY_HALF_SECS, value),
            "ASSOCIATION_BONUS" => assert_eq!(ASSOCIATION_BONUS, value),
            "MAX_ASSOCIATIONS" => assert_eq!(MAX_ASSOCIATIONS as f64, value),
            "COACTIVATION_THRESHOLD" => assert_eq!(f64::from(COACTIVATION_THRESHOLD), value),
            "RETRIEVE_AND_REINFORCE_MIN_STRENGTH" => assert_eq!(RETRIEVE_AND_REINFORCE_MIN_STRENGTH, value),
            // The decay actor's interval is maxim's default tick length.
            "DECAY_ACTOR_INTERVAL_S" => assert_eq!(DEFAULT_TICK.as_secs_f64(), value),
            // Not ported: maxim runs no actors (when to migrate tiers is the caller's schedule),
            // and neither the ErrorTracer (§7) nor the cache-backed store (§6.1).
            "TIER_MIGRATION_ACTOR_INTERVAL_S" | "ERROR_TRACER_DEBOUNCE_WINDOW_S" | "CACHE_TTL_S" => {}
            // Deliberately no cap: see erase_has_no_cap.
            "ERASE_BY_TYPE_LIMIT" => assert_eq!(value, 100_000.0),
            other => panic!("constant {other} is not handled"),
        }
    }
}

#[test]
fn kinds_have_the_reference_strengths_and_rates() {
    let types = section("trace_types").as_object().unwrap();
    assert_eq!(types.len(), TraceKind::ALL.len());
    for (i, (name, spec)) in types.iter().enumerate() {
        let kind: TraceKind = name.parse().unwrap();
        assert_eq!(kind.to_string(), *name);
        assert_eq!(kind.starting_strength(), num(&spec["starting_strength"]), "{name}");
        assert_eq!(kind.base_decay_rate(), num(&spec["base_decay_rate"]), "{name}");
        // `default_confidence` is not part of a trace in maxim: records carry their own trust.
        assert!(spec.get("default_confidence").is_some());
        // serde_json keeps the keys sorted, so compare the order through ALL instead.
        assert!(TraceKind::ALL.contains(&kind), "{i}");
    }
    let order: Vec<&str> = TraceKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(order, ["firmware", "identity", "procedural", "trust", "semantic", "episodic", "sensory"]);
}

// ---------------------------------------------------------------------------------------------
// Decay (§5.1, §5.2).

#[test]
fn decay_vectors() {
    for r in rows("decay") {
        let i = &r["inputs"];
        let got = compute_decay(
            num(&i["peak_strength"]),
            num(&i["base_decay_rate"]),
            num(&i["ticks_since_access"]),
            num(&i["emotional_intensity"]),
        );
        check(text(&r["id"]), got, num(&r["expected"]), num(&r["tolerance"]));
    }
}

fn decay_of(id: &str) -> f64 {
    let i = &row("decay", id)["inputs"];
    compute_decay(
        num(&i["peak_strength"]),
        num(&i["base_decay_rate"]),
        num(&i["ticks_since_access"]),
        num(&i["emotional_intensity"]),
    )
}

/// Evaluates a `{lhs, op, rhs}` relation whose sides are vector ids or numbers.
fn relation_holds(rel: &Value, value_of: impl Fn(&str) -> f64) -> bool {
    let side = |v: &Value| if let Some(id) = v.as_str() { value_of(id) } else { num(v) };
    let lhs = side(&rel["lhs"]);
    match text(&rel["op"]) {
        "<" => lhs < side(&rel["rhs"]),
        ">" => lhs > side(&rel["rhs"]),
        "between" => (num(&rel["rhs"][0])..=num(&rel["rhs"][1])).contains(&lhs),
        op => panic!("unknown relation {op}"),
    }
}

#[test]
fn decay_relations() {
    for rel in rows("decay_relations") {
        assert!(relation_holds(rel, decay_of), "{rel}");
    }
}

#[test]
fn decay_grid_through_the_formula_and_through_time() {
    let grid = section("decay_grid");
    let grid_rows = grid["rows"].as_array().unwrap();
    assert_eq!(grid_rows.len(), 147);
    let p = params();
    for (n, r) in grid_rows.iter().enumerate() {
        let kind = kind_of(&r["type"]);
        let (peak, rate) = (num(&r["peak_strength"]), num(&r["base_decay_rate"]));
        assert_eq!((peak, rate), (kind.starting_strength(), kind.base_decay_rate()), "row {n}");
        let ticks = r["ticks_since_access"].as_u64().unwrap();
        let e = num(&r["emotional_intensity"]);
        let expected = num(&r["expected"]);
        let tolerance = num(&r["tolerance"]);
        check(&format!("grid row {n}"), compute_decay(peak, rate, ticks as f64, e), expected, tolerance);
        // The same value from a trace of that kind reinforced at T0 and read `ticks` ticks later.
        let state = TraceState::with_emotion(kind, T0, e, 0.0).unwrap();
        let now = ticks_after(T0, ticks);
        check(&format!("grid row {n} in time"), state.strength_at(now, &p), expected, tolerance);
        // A few microseconds short of the next tick is still the same tick.
        let almost = ticks_after(T0, ticks + 1) - Duration::from_micros(1);
        check(&format!("grid row {n} end of tick"), state.strength_at(almost, &p), expected, tolerance);
    }
}

/// DC1-DC4 on the store, with ticks made explicit: a trace reinforced at T0 and decayed at
/// T0 + ticks * tick length. The reference decays every trace by one caller-given tick count;
/// in maxim the count is the ticks since each trace's last reinforcement.
#[test]
fn decay_cycle_dc1_and_dc2() {
    let dc1 = row("decay_cycle", "DC1");
    let mut store: TraceStore<()> = TraceStore::new(params());
    insert(&mut store, rid(1), TraceState::new(TraceKind::Semantic, T0), ());
    insert(&mut store, rid(2), TraceState::new(TraceKind::Firmware, T0), ());
    let ticks = dc1["call"]["tick_count"].as_u64().unwrap();
    let now = ticks_after(T0, ticks);
    let report = store.decay_cycle(now);
    let want = &dc1["expected_result"];
    assert_eq!((report.decayed, report.pruned), (count(&want["decayed"]), count(&want["pruned"])), "DC1");
    let tol = num(&dc1["tolerance"]);
    check(
        "DC1 semantic",
        store.get(rid(1)).unwrap().state.strength_at(now, &params()),
        num(&dc1["expected_strengths"]["semantic"]),
        tol,
    );
    check(
        "DC1 firmware",
        store.get(rid(2)).unwrap().state.strength_at(now, &params()),
        num(&dc1["expected_strengths"]["firmware"]),
        0.0,
    );

    // DC2: a sensory trace with strength = peak = 0.005 is pruned (D8 gives its decayed value).
    let dc2 = row("decay_cycle", "DC2");
    let d8 = &row("decay", "D8")["inputs"];
    let mut store: TraceStore<()> = TraceStore::new(params());
    insert(&mut store, rid(1), state_at_peak(TraceKind::Sensory, num(&d8["peak_strength"]), T0), ());
    let ticks = dc2["call"]["tick_count"].as_u64().unwrap();
    let now = ticks_after(T0, ticks);
    check(
        "D8 in time",
        store.get(rid(1)).unwrap().state.strength_at(now, &params()),
        num(&row("decay", "D8")["expected"]),
        1e-12,
    );
    let report = store.decay_cycle(now);
    let want = &dc2["expected_result"];
    assert_eq!((report.decayed, report.pruned), (count(&want["decayed"]), count(&want["pruned"])), "DC2");
    assert_eq!(store.len(), count(&dc2["expected_count_after"]));
}

#[test]
fn decay_cycle_dc3_is_not_cumulative() {
    let dc3 = row("decay_cycle", "DC3");
    let tol = num(&dc3["tolerance"]);
    let p = params();
    let mut store: TraceStore<&str> = TraceStore::new(p);
    let names = ["semantic", "firmware", "episodic", "sensory"];
    let intensity = [0.0, 0.0, 0.7, 0.0];
    for (n, (name, e)) in names.iter().zip(intensity).enumerate() {
        let state = TraceState::with_emotion(name.parse().unwrap(), T0, e, 0.0).unwrap();
        insert(&mut store, rid(n as u128 + 1), state, *name);
    }
    let id_of = |name: &str| rid(names.iter().position(|n| *n == name).unwrap() as u128 + 1);
    let steps = dc3["steps"].as_array().unwrap();
    // The strengths a cycle at `at` leaves: each trace's strength at `at`.
    let check_values = |store: &TraceStore<&str>, at: Timestamp, step: &Value, label: &str| {
        for (name, want) in step["expected"].as_object().unwrap() {
            let got = store.get(id_of(name)).unwrap().state.strength_at(at, &p);
            check(&format!("DC3 {label} {name}"), got, num(want), tol);
        }
    };
    let check_report = |report: DecayCycleReport, step: &Value| {
        let want = &step["expected_result"];
        assert_eq!((report.decayed, report.pruned), (count(&want["decayed"]), count(&want["pruned"])));
    };

    // Steps 1 and 2: decay_cycle(tick_count: 100) twice gives the same values; peaks stay.
    let at_100 = ticks_after(T0, steps[0]["call"]["decay_cycle"]["tick_count"].as_u64().unwrap());
    for (k, step) in steps[..2].iter().enumerate() {
        check_report(store.decay_cycle(at_100), step);
        check_values(&store, at_100, step, &format!("step {}", k + 1));
    }
    for (name, peak) in steps[0]["expected_peaks_unchanged"].as_object().unwrap() {
        assert_eq!(store.get(id_of(name)).unwrap().state.peak(), num(peak), "DC3 peak {name}");
    }
    // Step 3: the reference's default tick_count 1 raises strengths back to peak * 2^-eff. In
    // maxim a tick count is a time, so this is the cycle evaluated one tick after T0. No trace
    // has been reinforced yet (each curve starts at the creation), so the values are the
    // reference's.
    assert!(steps[2]["call"]["decay_cycle"].as_object().unwrap().is_empty(), "default tick_count");
    let at_1 = ticks_after(T0, 1);
    check_report(store.decay_cycle(at_1), &steps[2]);
    check_values(&store, at_1, &steps[2], "step 3");
    // Step 4: reinforcing at that time works on 0.49654...; + 0.1 passes the peak and raises it.
    let semantic = id_of("semantic");
    let ReinforceOutcome::Reinforced { new_strength } = store.reinforce(semantic, at_1) else {
        panic!("DC3 step 4 not reinforced")
    };
    check("DC3 step 4", new_strength, num(&steps[3]["expected"]["new_strength"]), tol);
    check(
        "DC3 step 4 peak",
        store.get(semantic).unwrap().state.peak(),
        num(&steps[3]["expected"]["peak_strength"]),
        tol,
    );
    // Step 5: two more reinforcements.
    for _ in 0..2 {
        store.reinforce(semantic, at_1);
    }
    let state = store.get(semantic).unwrap().state;
    check("DC3 step 5", state.strength_at(at_1, &p), num(&steps[4]["expected"]["strength"]), tol);
    check("DC3 step 5 peak", state.peak(), num(&steps[4]["expected"]["peak_strength"]), tol);
    // Step 6: one tick after that last reinforcement. Each reinforcement reached the peak, so
    // the curve restarted there: one tick on its strength is the reference's, peak * 2^-eff.
    assert_eq!(state.decay_origin(), at_1);
    assert_eq!(steps[5]["call"]["decay_cycle"]["tick_count"], 1);
    let at_2 = ticks_after(at_1, 1);
    check_report(store.decay_cycle(at_2), &steps[5]);
    check_values(&store, at_2, &steps[5], "step 6");
}

/// Where the reference and maxim part: a trace reinforced below its peak. The reference's next
/// decay cycle recomputes from the peak (DC3's "default tick_count = 1: strengths go back UP to
/// peak * 2^-eff" applied to a reinforced trace); maxim moves the trace back along the peak's
/// curve to where it had the reinforced strength, and decays on along that curve.
#[test]
fn decay_cycle_after_a_reinforcement_below_the_peak_follows_the_peak_curve() {
    let dc3 = row("decay_cycle", "DC3");
    let sensory_after_100 = num(&dc3["steps"][0]["expected"]["sensory"]);
    let p = params();
    let mut store: TraceStore<()> = TraceStore::new(p);
    insert(&mut store, rid(1), TraceState::new(TraceKind::Sensory, T0), ());
    let untouched = store.get(rid(1)).unwrap().state.clone();
    let at_100 = ticks_after(T0, 100);
    check("DC3 sensory", store.get(rid(1)).unwrap().state.strength_at(at_100, &p), sensory_after_100, 1e-12);
    let ReinforceOutcome::Reinforced { new_strength } = store.reinforce(rid(1), at_100) else {
        panic!("sensory reinforces")
    };
    assert_eq!(new_strength, compute_reinforcement(sensory_after_100, false));
    assert!(new_strength < TraceKind::Sensory.starting_strength(), "below the peak 0.4");
    // 0.4 * (t' + 1)^-0.1 = 0.35213 gives t' = 2.58 ticks: the curve's value at 2 whole ticks.
    let state = store.get(rid(1)).unwrap().state.clone();
    assert_eq!(state.peak(), TraceKind::Sensory.starting_strength());
    assert_eq!(p.ticks_between(state.decay_origin(), at_100), 2);
    assert_eq!(state.strength_at(at_100, &p), compute_decay(0.4, 0.1, 2.0, 0.0));
    assert!(state.strength_at(at_100, &p) >= new_strength);
    assert!(compute_decay(0.4, 0.1, 3.0, 0.0) < new_strength);
    let next = ticks_after(at_100, 1);
    assert_eq!(store.decay_cycle(next), DecayCycleReport { decayed: 1, pruned: 0 });
    let got = store.get(rid(1)).unwrap().state.strength_at(next, &p);
    assert_eq!(got, compute_decay(0.4, 0.1, 3.0, 0.0), "maxim: along the peak's curve");
    // The reference would give peak * 2^-0.1 = DC3 step 3's sensory value (0.37321...).
    let reference = num(&dc3["steps"][2]["expected"]["sensory"]);
    assert!(got < reference - 0.02, "not back up to the peak: {got} vs {reference}");
    // Restarting the power law at the reinforced strength (maxim's former model) would give
    // less than the curve does.
    assert!(compute_decay(new_strength, 0.1, 1.0, 0.0) < got);
    assert!(got > untouched.strength_at(next, &p) + 0.09);
}

#[test]
fn decay_cycle_dc4_prune_boundary() {
    let dc4 = row("decay_cycle", "DC4");
    // The setup is prose: "three sensory traces with strength = peak = 0.0101, 0.011, 0.02".
    let peaks = numbers_in(text(&dc4["setup"]));
    assert_eq!(peaks.len(), 3);
    let p = params();
    let mut store: TraceStore<()> = TraceStore::new(p);
    for (n, peak) in peaks.iter().enumerate() {
        insert(&mut store, rid(n as u128 + 1), state_at_peak(TraceKind::Sensory, *peak, T0), ());
    }
    let now = ticks_after(T0, dc4["call"]["tick_count"].as_u64().unwrap());
    let tol = num(&dc4["tolerance"]);
    let expected: Vec<f64> = dc4["decayed_values"].as_array().unwrap().iter().map(num).collect();
    for (n, want) in expected.iter().enumerate() {
        let got = store.get(rid(n as u128 + 1)).unwrap().state.strength_at(now, &p);
        check(&format!("DC4 value {n}"), got, *want, tol);
    }
    let report = store.decay_cycle(now);
    let want = &dc4["expected_result"];
    assert_eq!((report.decayed, report.pruned), (count(&want["decayed"]), count(&want["pruned"])), "DC4");
    assert!(!store.contains(rid(1)));
    for n in [2, 3] {
        check(
            &format!("DC4 kept {n}"),
            store.get(rid(n)).unwrap().state.strength_at(now, &p),
            expected[n as usize - 1],
            tol,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Reinforcement (§5.3).

#[test]
fn reinforcement_vectors_through_the_formula_and_the_state() {
    let imprint = params().with_imprint_start(T0);
    for r in rows("reinforcement") {
        let id = text(&r["id"]);
        let current = num(&r["inputs"]["current_strength"]);
        let active = r["inputs"]["imprint_active"].as_bool().unwrap();
        let expected = num(&r["expected"]);
        check(id, compute_reinforcement(current, active), expected, num(&r["tolerance"]));
        // Through a trace at that strength (RE1's -0.5 is not a valid strength: maxim refuses it).
        let mut parts = TraceState::new(TraceKind::Semantic, T0).to_parts();
        parts.peak = current;
        match TraceState::from_parts(parts) {
            Ok(mut state) => {
                let p = if active { imprint } else { params() };
                assert_eq!(state.reinforce(T0, &p), Ok(expected), "{id} through a state");
            }
            Err(Error::OutOfRange { field: "peak", .. }) => assert_eq!(id, "RE1"),
            Err(e) => panic!("{id}: {e}"),
        }
    }
    // R7 then R8 (client_spec.rb:34): one procedural trace reinforced twice, 0.4 -> 0.5 -> 0.6.
    // Each reaches the peak, so the curve restarts at the reinforced strength, bit for bit.
    let (r7, r8) = (row("reinforcement", "R7"), row("reinforcement", "R8"));
    assert_eq!(num(&r7["inputs"]["current_strength"]), TraceKind::Procedural.starting_strength());
    assert_eq!(num(&r8["inputs"]["current_strength"]), num(&r7["expected"]));
    let mut procedural = TraceState::new(TraceKind::Procedural, T0);
    for (r, at) in [(r7, T0), (r8, T0 + Duration::from_secs(30))] {
        let want = num(&r["expected"]);
        assert_eq!(procedural.reinforce(at, &params()), Ok(want), "{}", text(&r["id"]));
        assert_eq!((procedural.peak(), procedural.decay_origin()), (want, at), "{}", text(&r["id"]));
        assert_eq!(procedural.strength_at(at, &params()), want, "{}", text(&r["id"]));
    }
}

#[test]
fn reinforcement_sequences() {
    let rs1 = row("reinforcement_sequences", "RS1");
    let rs2 = row("reinforcement_sequences", "RS2");
    let rs3 = row("reinforcement_sequences", "RS3");
    let run = |kind: TraceKind, p: TraceParams, steps: usize| {
        let mut store: TraceStore<()> = TraceStore::new(p);
        insert(&mut store, rid(1), TraceState::new(kind, T0), ());
        let strengths: Vec<f64> = (0..steps)
            .map(|_| match store.reinforce(rid(1), T0) {
                ReinforceOutcome::Reinforced { new_strength } => new_strength,
                other => panic!("{other:?}"),
            })
            .collect();
        (strengths, store.get(rid(1)).unwrap().state.reinforcement_count())
    };
    let expect = |r: &Value| r["expected_strengths"].as_array().unwrap().iter().map(num).collect::<Vec<_>>();

    // RS1: a semantic trace reinforced ten times; the fifth step is 0.9999999999999999.
    let want = expect(rs1);
    let (got, _) = run(TraceKind::Semantic, params(), want.len());
    assert_eq!(got, want, "RS1");
    assert!(want[4] < 1.0, "RS1 needs exact float parsing");
    // RS2: three reinforcements count three.
    let want = expect(rs2);
    let (got, n) = run(TraceKind::Semantic, params(), want.len());
    assert_eq!((got, n as usize), (want, count(&rs2["expected_reinforcement_count"])), "RS2");
    // RS3: from 0.3 (a trust trace starts there) with the imprint window active.
    assert_eq!(numbers_in(text(&rs3["setup"]))[0], TraceKind::Trust.starting_strength());
    let want = expect(rs3);
    let (got, _) = run(TraceKind::Trust, params().with_imprint_start(T0), want.len());
    assert_eq!(got, want, "RS3");
}

#[test]
fn reinforce_runner_outcomes() {
    let mut store: TraceStore<()> = TraceStore::new(params());
    insert(&mut store, rid(1), TraceState::new(TraceKind::Firmware, T0), ());
    // RR1: firmware is refused by kind.
    let rr1 = &row("reinforce_runner", "RR1")["expected"];
    assert_eq!(
        (rr1["found"].as_bool(), rr1["reinforced"].as_bool(), text(&rr1["reason"])),
        (Some(true), Some(false), "firmware")
    );
    assert_eq!(store.reinforce(rid(1), T0), ReinforceOutcome::Firmware, "RR1");
    assert_eq!(store.get(rid(1)).unwrap().state.reinforcement_count(), 0);
    // RR2: an unknown id.
    assert_eq!(row("reinforce_runner", "RR2")["expected"]["found"], false);
    assert_eq!(store.reinforce(rid(2), T0), ReinforceOutcome::NotFound, "RR2");
    // RR3 (a nil id) has no counterpart: a RecordId cannot be null.
    assert_eq!(text(&row("reinforce_runner", "RR3")["call"]), "reinforce(trace_id: nil)");
}

// ---------------------------------------------------------------------------------------------
// Retrieval score and ranking (§5.4, §5.7).

fn score_of(r: &Value) -> f64 {
    let i = &r["inputs"];
    compute_retrieval_score(
        num(&i["strength"]),
        num(&i["emotional_intensity"]),
        num(&i["seconds_since_last_reinforced"]),
        i["associated"].as_bool().unwrap(),
    )
}

#[test]
fn retrieval_score_vectors_through_the_formula_and_the_state() {
    for r in rows("retrieval_score") {
        let id = text(&r["id"]);
        let expected = num(&r["expected"]);
        let tol = num(&r["tolerance"]);
        check(id, score_of(r), expected, tol);
        let i = &r["inputs"];
        let last = ago(T0, num(&i["seconds_since_last_reinforced"]));
        let state =
            state_with(TraceKind::Semantic, num(&i["strength"]), num(&i["emotional_intensity"]), last);
        check(
            &format!("{id} state"),
            state.retrieval_score(T0, i["associated"].as_bool().unwrap(), &frozen()),
            expected,
            tol,
        );
    }
}

#[test]
fn retrieval_score_relations() {
    for rel in rows("retrieval_score_relations") {
        assert!(relation_holds(rel, |id| score_of(row("retrieval_score", id))), "{rel}");
    }
}

#[test]
fn ranking_rk1() {
    let rk1 = row("ranking", "RK1");
    let tol = num(&rk1["tolerance"]);
    let letter = |name: &str| match name {
        "A" => rid(1),
        "B" => rid(2),
        "C" => rid(3),
        "D" => rid(4),
        "E" => rid(5),
        _ => rid(999), // not stored
    };
    // The vector's strengths are those at the query time: see `frozen`.
    let mut store: TraceStore<()> = TraceStore::new(frozen());
    for (name, t) in rk1["setup"]["traces"].as_object().unwrap() {
        let last = ago(T0, num(&t["seconds_since_last_reinforced"]));
        let state =
            state_with(kind_of(&t["type"]), num(&t["strength"]), num(&t["emotional_intensity"]), last);
        insert(&mut store, letter(name), state, ());
    }
    assert!(text(&rk1["setup"]["links"]).contains("x3"));
    for (a, b) in [("A", "C"), ("D", "E")] {
        for _ in 0..COACTIVATION_THRESHOLD {
            store.record_coactivation(letter(a), letter(b)).unwrap();
        }
    }
    for (n, call) in rk1["calls"].as_array().unwrap().iter().enumerate() {
        let ids: Vec<RecordId> =
            call["trace_ids"].as_array().unwrap().iter().map(|v| letter(text(v))).collect();
        let ranked = store.retrieve_ranked(&ids, T0);
        if let Some(empty) = call.get("expected") {
            assert_eq!(empty.as_array().unwrap().len(), 0);
            assert!(ranked.is_empty(), "RK1 call {n}");
            continue;
        }
        let order: Vec<RecordId> =
            call["expected_order"].as_array().unwrap().iter().map(|v| letter(text(v))).collect();
        assert_eq!(ranked.iter().map(|s| s.id).collect::<Vec<_>>(), order, "RK1 call {n}");
        for (name, want) in call["expected_scores"].as_object().unwrap() {
            let got = ranked.iter().find(|s| s.id == letter(name)).unwrap().score;
            check(&format!("RK1 call {n} {name}"), got, num(want), tol);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tiers (§5.5).

#[test]
fn tier_vectors_through_the_formula_and_the_state() {
    for r in rows("tiers") {
        let id = text(&r["id"]);
        let i = &r["inputs"];
        let (strength, secs) = (num(&i["strength"]), num(&i["seconds_since_last_reinforced"]));
        let expected = text(&r["expected"]);
        assert_eq!(compute_storage_tier(strength, secs).as_str(), expected, "{id}");
        let state = state_with(TraceKind::Semantic, strength, 0.0, ago(T0, secs));
        assert_eq!(state.tier(T0, &frozen()).as_str(), expected, "{id} state");
    }
}

#[test]
fn migrate_tier_mt1() {
    let mt1 = row("migrate_tier", "MT1");
    // The setup is prose: "semantic reinforced now / 30 d ago / 100 d ago / 50 d ago; semantic
    // with strength 0.005 (now); firmware reinforced 200 d ago".
    let setup = text(&mt1["setup"]);
    let [d1, d2, d3, faint, d4] = numbers_in(&setup[setup.find("now /").unwrap()..])[..] else {
        panic!("MT1 setup: {setup}")
    };
    let before = |d: f64| T0 - days(d as u64);
    let semantic = TraceKind::Semantic.starting_strength();
    let mut store: TraceStore<()> = TraceStore::new(params());
    let setups = [
        state_with(TraceKind::Semantic, semantic, 0.0, T0),
        state_with(TraceKind::Semantic, semantic, 0.0, before(d1)),
        state_with(TraceKind::Semantic, semantic, 0.0, before(d2)),
        state_with(TraceKind::Semantic, semantic, 0.0, before(d3)),
        state_with(TraceKind::Semantic, faint, 0.0, T0),
        TraceState::new(TraceKind::Firmware, before(d4)),
    ];
    for (n, s) in setups.into_iter().enumerate() {
        insert(&mut store, rid(n as u128 + 1), s, ());
    }
    assert!(store.iter().all(|t| t.tier == StorageTier::Hot));
    assert_eq!(store.migrate_tiers(T0), count(&mt1["expected_first"]["migrated"]), "MT1 first");
    let tiers: Vec<&str> = store.iter().map(|t| t.tier.as_str()).collect();
    let want: Vec<&str> = mt1["expected_tiers"].as_array().unwrap().iter().map(text).collect();
    assert_eq!(tiers, want, "MT1 tiers");
    assert_eq!(store.migrate_tiers(T0), count(&mt1["expected_second"]["migrated"]), "MT1 second");
    assert_eq!(store.len(), count(&mt1["expected_count_after"]), "erased is a label only");
}

// ---------------------------------------------------------------------------------------------
// Hebbian links (§5.6) and walks (§6.1).

fn hebbian_store(n: u128) -> TraceStore<()> {
    let mut store = TraceStore::new(params());
    for k in 1..=n {
        insert(&mut store, rid(k), TraceState::new(TraceKind::Semantic, T0), ());
    }
    store
}

#[test]
fn hebbian_h1_to_h7() {
    let (x, y) = (rid(1), rid(2));
    // H1: three co-activations link X and Y.
    let mut store = hebbian_store(2);
    for _ in 0..COACTIVATION_THRESHOLD {
        store.record_coactivation(x, y).unwrap();
    }
    let h1 = &row("hebbian", "H1")["expected"];
    let assoc = store.retrieve_associated(x, 0.0, MAX_ASSOCIATIONS, T0);
    assert_eq!(assoc.len(), count(&h1["retrieve_associated(X).size"]), "H1");
    assert_eq!(assoc[0].id, y, "H1 first");

    // H2: one co-activation links nothing.
    let mut store = hebbian_store(2);
    store.record_coactivation(x, y).unwrap();
    assert_eq!(
        store.retrieve_associated(x, 0.0, MAX_ASSOCIATIONS, T0).len(),
        count(&row("hebbian", "H2")["expected"]["retrieve_associated(X).size"]),
        "H2"
    );

    // H3 and H4: the reference answers `linked: true` to every call; maxim answers whether a
    // link exists, so false, false, then true from the third call on. Counts and links follow
    // the reference's progression.
    assert_eq!(row("hebbian", "H3")["expected"]["linked"], true);
    let mut store = hebbian_store(2);
    for step in row("hebbian", "H4")["expected_progression"].as_array().unwrap() {
        assert_eq!(step["returned"]["linked"], true, "the reference's answer");
        let linked = store.record_coactivation(x, y).unwrap();
        let call = count(&step["call"]);
        assert_eq!(linked, call >= COACTIVATION_THRESHOLD as usize, "H4 call {call}: maxim's answer");
        assert_eq!(store.coactivation_count(x, y) as usize, count(&step["count_xy"]), "H4 call {call}");
        assert_eq!(store.coactivation_count(y, x) as usize, count(&step["count_yx"]), "H4 call {call}");
        assert_eq!(store.associated(x).unwrap().len(), count(&step["x_links"]), "H4 call {call}");
        assert_eq!(store.associated(y).unwrap().len(), count(&step["y_links"]), "H4 call {call}");
    }

    // H5: a self pair records nothing (count 0, as in the reference) and answers false (the
    // reference answers `linked: true`).
    let h5 = row("hebbian", "H5");
    assert!(!store.record_coactivation(x, x).unwrap(), "H5");
    assert_eq!(store.coactivation_count(x, x) as usize, count(&h5["expected_count"]), "H5");

    // H6 (a nil id answers `missing_trace_ids`) has no counterpart: a RecordId cannot be null.
    assert_eq!(row("hebbian", "H6")["expected"]["reason"], "missing_trace_ids");

    // H7: the reference counts co-activations with an id it does not hold (count 3, no link).
    // maxim refuses an unknown id with NotFound and records nothing; X keeps its link to Y.
    let h7 = row("hebbian", "H7");
    assert_eq!(count(&h7["expected_count"]), 3);
    let ghost = rid(404);
    for _ in 0..3 {
        assert!(
            matches!(store.record_coactivation(x, ghost), Err(Error::NotFound { id }) if id == ghost),
            "H7"
        );
        assert!(matches!(store.record_coactivation(ghost, x), Err(Error::NotFound { .. })), "H7");
    }
    assert_eq!(store.coactivation_count(x, ghost), 0, "H7: nothing recorded");
    assert_eq!(store.associated(x).unwrap().len(), count(&h7["expected_x_links"]), "H7");
    assert_eq!(store.associated(x), Some(&[y][..]));
}

/// H8's setup: hub H and partners P1..P22, each co-activated with H three times in order.
fn h8_store() -> (TraceStore<()>, RecordId, Vec<RecordId>) {
    // The setup is prose: "hub trace H and 22 partners P1..P22; ...".
    let n = numbers_in(text(&row("hebbian", "H8")["setup"]))[0] as u128;
    assert!(n as usize > MAX_ASSOCIATIONS);
    let hub = rid(1_000);
    let partners: Vec<RecordId> = (1..=n).map(rid).collect();
    let mut store = hebbian_store(n);
    insert(&mut store, hub, TraceState::new(TraceKind::Semantic, T0), ());
    for &p in &partners {
        for _ in 0..COACTIVATION_THRESHOLD {
            store.record_coactivation(hub, p).unwrap();
        }
    }
    (store, hub, partners)
}

#[test]
fn hebbian_h8_link_cap_stays_symmetric() {
    let h8 = &row("hebbian", "H8")["expected"];
    let (mut store, hub, partners) = h8_store();
    // As in the reference: H keeps 20 links, P1..P20, and the count of (H, P21) is 3.
    assert_eq!(store.associated(hub).unwrap().len(), count(&h8["H.associated_traces.size"]));
    assert_eq!(h8["H.associated_traces == P1..P20"], true);
    assert_eq!(store.associated(hub).unwrap(), &partners[..20]);
    assert_eq!(store.coactivation_count(hub, partners[20]) as usize, count(&h8["count(H,P21)"]));
    // The reference links P21 -> H on P21's side only (`P21.associated_traces == [H]`). maxim
    // links both sides or neither: H is full and its weakest link (count 3) is not weaker than
    // the new pair (count 3), so neither P21 nor P22 is linked.
    assert_eq!(h8["P21.associated_traces == [H]"], true);
    assert_eq!(store.associated(partners[20]), Some(&[][..]), "H8: no one-sided link");
    assert_eq!(store.associated(partners[21]), Some(&[][..]));
    // A fourth co-activation makes (H, P21) strictly stronger than H's weakest, oldest link
    // (P1, count 3), which gives way on both sides.
    assert!(store.record_coactivation(hub, partners[20]).unwrap());
    assert_eq!(store.associated(hub).unwrap().len(), MAX_ASSOCIATIONS);
    assert!(!store.is_linked(hub, partners[0]) && !store.is_linked(partners[0], hub));
    assert_eq!(store.associated(hub).unwrap().last(), Some(&partners[20]));
    assert_eq!(store.associated(partners[20]), Some(&[hub][..]));
    // Now P21's link (count 4) is not the weakest: P22's fourth co-activation displaces P2.
    assert!(store.record_coactivation(hub, partners[21]).unwrap());
    assert!(!store.is_linked(hub, partners[1]), "P2 was the weakest, oldest link");
    assert!(store.is_linked(hub, partners[20]), "P21 (count 4) kept");
    // With every link at count 4, a pair at count 4 displaces nothing (strictly higher only).
    for p in &partners[2..20] {
        store.record_coactivation(hub, *p).unwrap();
    }
    assert!(!store.record_coactivation(hub, partners[1]).unwrap(), "count 4 does not beat count 4");
    assert!(store.record_coactivation(hub, partners[1]).unwrap(), "count 5 does");
}

#[test]
fn hebbian_h9_delete_leaves_no_dangling_id() {
    let h9 = &row("hebbian", "H9")["expected"];
    let (mut store, hub, partners) = h8_store();
    store.remove(partners[0]).unwrap();
    // The reference keeps P1 in H's list (size 20, a dead slot); maxim removes it (size 19).
    assert_eq!(count(&h9["H.associated_traces.size"]), 20);
    assert_eq!(h9["P1 still listed in H.associated_traces"], true);
    assert_eq!(store.associated(hub).unwrap().len(), 19, "H9: no dangling id");
    assert!(!store.associated(hub).unwrap().contains(&partners[0]));
    // What readers see is the same as in the reference: 19 live partners.
    assert_eq!(
        store.retrieve_associated(hub, 0.0, MAX_ASSOCIATIONS, T0).len(),
        count(&h9["retrieve_associated(H).count"])
    );
    // The counts with P1 are gone on both sides.
    assert_eq!(h9["co-activation row of P1 removed"], true);
    assert_eq!(h9["H's count entry for P1 present"], false);
    assert_eq!(store.coactivation_count(hub, partners[0]), 0);
    // The freed slot is taken by the next pair that reaches the threshold.
    assert!(store.record_coactivation(hub, partners[20]).unwrap(), "H9: freed slot reused");
    assert_eq!(store.associated(hub).unwrap().len(), MAX_ASSOCIATIONS);
}

#[test]
fn hebbian_h10_partner_sees_its_hub() {
    let (store, hub, partners) = h8_store();
    let found = store.retrieve_associated(partners[5], 0.0, MAX_ASSOCIATIONS, T0);
    assert_eq!(found.len(), count(&row("hebbian", "H10")["expected"]["count"]), "H10");
    assert_eq!(found[0].id, hub);
}

/// The chain a-b-c-d of W1-W9 (links both ways), all at strength 0.5, optionally with d-a.
fn chain(back_edge: bool) -> (TraceStore<()>, [RecordId; 4]) {
    let ids = [rid(1), rid(2), rid(3), rid(4)];
    let mut store = hebbian_store(4);
    let mut pairs = vec![(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[3])];
    if back_edge {
        pairs.push((ids[3], ids[0]));
    }
    for (a, b) in pairs {
        for _ in 0..COACTIVATION_THRESHOLD {
            store.record_coactivation(a, b).unwrap();
        }
    }
    (store, ids)
}

#[test]
fn walk_associations_w1_to_w9() {
    let name = |id: RecordId| ["a", "b", "c", "d"][id.as_u128() as usize - 1];
    let names = |v: &'static Value| v.as_array().unwrap().iter().map(text).collect::<Vec<_>>();
    let walk_defaults = |store: &TraceStore<()>, start| store.walk_associations(start, 12, 0.1, T0);
    let (store, [a, ..]) = chain(false);
    let walked = walk_defaults(&store, a);
    let found: Vec<&str> = walked.iter().map(|s| name(s.id)).collect();

    assert_eq!(found, names(&row("walk_associations", "W1")["expected"]["found"]), "W1");
    let hop1: Vec<&str> = store.walk_associations(a, 1, 0.1, T0).iter().map(|s| name(s.id)).collect();
    assert_eq!(hop1, names(&row("walk_associations", "W2")["expected"]["found"]), "W2");
    assert!(!found.contains(&text(&row("walk_associations", "W3")["expected"]["excludes"])), "W3");
    for (n, want) in row("walk_associations", "W5")["expected"]["depth"].as_object().unwrap() {
        let step = walked.iter().find(|s| name(s.id) == n).unwrap();
        assert_eq!(step.depth, count(want), "W5 {n}");
    }
    let to_d = walked.iter().find(|s| name(s.id) == "d").unwrap();
    let path: Vec<&str> = to_d.path.iter().map(|&id| name(id)).collect();
    assert_eq!(path, names(&row("walk_associations", "W6")["expected"]["path_to_d"]), "W6");

    // W4: with the back edge d-a, every trace is still reported once.
    assert_eq!(row("walk_associations", "W4")["expected"]["no_duplicates"], true);
    let (looped, [a, ..]) = chain(true);
    let mut seen: Vec<RecordId> = walk_defaults(&looped, a).iter().map(|s| s.id).collect();
    let total = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!((seen.len(), total), (3, 3), "W4");

    // W7: b weakened to 0.05 blocks the walk at min_strength 0.1.
    let [weak_strength] = numbers_in(text(&row("walk_associations", "W7")["setup"]))[..] else {
        panic!("W7")
    };
    let (mut weak, [a, b, ..]) = chain(false);
    *weak.state_mut(b).unwrap() = state_with(TraceKind::Semantic, weak_strength, 0.0, T0);
    assert_eq!(
        weak.walk_associations(a, 12, 0.1, T0).len(),
        names(&row("walk_associations", "W7")["expected"]["found"]).len(),
        "W7"
    );
    // The start's own strength is not checked.
    assert_eq!(weak.walk_associations(b, 12, 0.1, T0).len(), 3);

    // W8: a lone trace; W9: an unknown start.
    let lone = hebbian_store(1);
    assert_eq!(
        lone.walk_associations(rid(1), 12, 0.1, T0).len(),
        names(&row("walk_associations", "W8")["expected"]["found"]).len(),
        "W8"
    );
    assert_eq!(
        store.walk_associations(rid(77), 12, 0.1, T0).len(),
        names(&row("walk_associations", "W9")["expected"]["found"]).len(),
        "W9"
    );
    assert!(store.walk_associations(a, 0, 0.1, T0).is_empty(), "zero hops reach nothing");
}

// ---------------------------------------------------------------------------------------------
// retrieve_and_reinforce (§5.8) and erasure (§5.9).

#[test]
fn retrieve_and_reinforce_rar1() {
    let rar1 = row("retrieve_and_reinforce", "RAR1");
    // The setup is prose: "traces with strengths firmware 1.0, identity 1.0, ...; all
    // last_reinforced = T0". Read the kinds in that order and their strengths.
    let prose = text(&rar1["setup"]);
    let listed = &prose[prose.find("strengths ").unwrap() + "strengths ".len()..prose.find(';').unwrap()];
    let setup: Vec<(&str, f64)> = listed
        .split(", ")
        .map(|item| {
            let (kind, strength) = item.split_once(' ').unwrap();
            (kind, strength.parse().unwrap())
        })
        .collect();
    assert_eq!(setup.len(), 7);
    let mut store: TraceStore<()> = TraceStore::new(params());
    for (n, (kind, strength)) in setup.iter().enumerate() {
        let after = &rar1["expected_after"][kind];
        assert_eq!(num(&after["strength"]), *strength, "RAR1 setup {kind}");
        insert(&mut store, rid(n as u128 + 1), state_with(kind.parse().unwrap(), *strength, 0.0, T0), ());
    }
    let id_of = |kind: &str| rid(setup.iter().position(|(k, _)| *k == kind).unwrap() as u128 + 1);
    // The vector's strengths are those at the call: call within the first tick after T0, where
    // every strength is still its peak (a whole tick later sensory would be below 0.1).
    let later = T0 + params().tick() / 2;
    let untouched = store.clone();
    let got = store.retrieve_and_reinforce(count(&rar1["call"]["limit"]), later);
    assert_eq!(got.len(), count(&rar1["expected_count"]), "RAR1");
    // Firmware and identity tie at 1.0; the reference leaves their order open, maxim breaks
    // the tie by id (firmware was stored first here, so it has the smaller id).
    let order: Vec<RecordId> =
        rar1["expected_order"].as_array().unwrap().iter().map(|k| id_of(text(k))).collect();
    assert_eq!(got, order, "RAR1 order");
    for (kind, after) in rar1["expected_after"].as_object().unwrap() {
        let state = store.get(id_of(kind)).unwrap().state;
        let before = untouched.get(id_of(kind)).unwrap().state;
        assert_eq!(state.strength_at(later, &params()), num(&after["strength"]), "RAR1 {kind} strength");
        // The rehearsal changed no strength, now or later: decay goes on as before.
        for at in [later, T0 + days(1), T0 + days(100)] {
            assert_eq!(state.strength_at(at, &params()), before.strength_at(at, &params()), "RAR1 {kind}");
        }
        assert_eq!(state.reinforcement_count() as usize, count(&after["reinforcement_count"]), "RAR1 {kind}");
        assert_eq!(
            state.last_reinforced() == later,
            after["last_reinforced_changed"].as_bool().unwrap(),
            "RAR1 {kind}"
        );
    }
    // Then with the default limit: min strength 0.1 is inclusive (sensory yes, procedural no).
    assert_eq!(rar1["then"]["call"]["limit"], "default (10)");
    let again = store.retrieve_and_reinforce(10, later);
    assert_eq!(again.len(), count(&rar1["then"]["expected_count"]), "RAR1 then");
    assert!(again.contains(&id_of("sensory")) && !again.contains(&id_of("procedural")));
    // One tick on, the sensory trace (0.1 * 2^-0.1) has fallen below the minimum.
    assert!(!store.retrieve_and_reinforce(10, ticks_after(T0, 1)).contains(&id_of("sensory")));
}

#[test]
fn erase_e1_to_e6() {
    // E1: 2 sensory + 1 semantic, erase the sensory ones.
    let e1 = row("erase", "E1");
    let mut store: TraceStore<()> = TraceStore::new(params());
    for (n, kind) in [TraceKind::Sensory, TraceKind::Sensory, TraceKind::Semantic].into_iter().enumerate() {
        insert(&mut store, rid(n as u128 + 1), TraceState::new(kind, T0), ());
    }
    let kind = kind_of(&e1["expected"]["type"]);
    assert_eq!(store.erase_by_kind(kind), count(&e1["expected"]["erased"]), "E1");
    assert!(store.retrieve_by_kind(kind, 0.0, usize::MAX, T0).is_empty(), "E1 then");
    // E2: the kind by name ("semantic" parses like the reference's string type).
    let e2 = &row("erase", "E2")["expected"];
    assert_eq!(store.erase_by_kind(kind_of(&e2["type"])), count(&e2["erased"]), "E2");
    // E3: an unknown kind erases nothing in the reference; in maxim it cannot even be named.
    let e3 = &row("erase", "E3")["expected"];
    assert_eq!(count(&e3["erased"]), 0);
    assert!(matches!(text(&e3["type"]).parse::<TraceKind>(), Err(Error::InvalidArgument { .. })), "E3");

    // E4-E6: partitions.
    let mut store: TraceStore<()> = TraceStore::new(params());
    let agent1 = Partition::new("agent-1").unwrap();
    let agent2 = Partition::new("agent-2").unwrap();
    let parts = [Some(&agent1), Some(&agent1), Some(&agent2), None];
    for (n, p) in parts.into_iter().enumerate() {
        let mut entry = TraceEntry::new(rid(n as u128 + 1), TraceState::new(TraceKind::Episodic, T0), ());
        entry.partition = p.cloned();
        store.insert(entry).unwrap();
    }
    let e4 = &row("erase", "E4")["expected"];
    let p4 = Partition::new(text(&e4["partition_id"])).unwrap();
    assert_eq!(store.erase_by_partition(Some(&p4)), count(&e4["erased"]), "E4");
    let e5 = &row("erase", "E5")["expected"];
    assert!(e5["partition_id"].is_null());
    assert_eq!(store.erase_by_partition(None), count(&e5["erased"]), "E5: None matches the unpartitioned");
    let e6 = row("erase", "E6");
    let p6 = Partition::new(text(&e6["expected"]["partition_id"])).unwrap();
    assert_eq!(store.erase_by_partition(Some(&p6)), count(&e6["expected"]["erased"]), "E6");
    assert_eq!(store.len(), count(&e6["expected_count_after"]), "E6");
}

/// The reference erases at most ERASE_BY_TYPE_LIMIT traces of a type per call; maxim erases
/// them all.
#[test]
fn erase_has_no_cap() {
    let limit = num(&section("constants")["ERASE_BY_TYPE_LIMIT"]) as u128;
    let mut store: TraceStore<()> = TraceStore::new(params());
    for k in 0..=limit {
        insert(&mut store, rid(k + 1), TraceState::new(TraceKind::Sensory, T0), ());
    }
    insert(&mut store, rid(limit + 2), TraceState::new(TraceKind::Identity, T0), ());
    assert_eq!(store.erase_by_kind(TraceKind::Sensory), limit as usize + 1);
    assert_eq!(store.ids(), &[rid(limit + 2)]);
    assert_eq!(store.get(rid(limit + 2)).unwrap().state.kind(), TraceKind::Identity);
}

// ---------------------------------------------------------------------------------------------
// New traces (§4).

#[test]
fn new_trace_defaults_n1_to_n9() {
    for r in rows("new_trace_defaults") {
        let id = text(&r["id"]);
        let kind = kind_of(&r["type"]);
        let want = &r["expected"];
        let inputs = r.get("inputs");
        let intensity = inputs.and_then(|i| i.get("emotional_intensity")).map(num);
        let valence = inputs.and_then(|i| i.get("emotional_valence")).map(num);
        let imprint = inputs.and_then(|i| i.get("imprint_active")).and_then(Value::as_bool);
        if intensity.is_some() || valence.is_some() {
            // N4, N7, N8: the reference clamps out-of-range emotion; maxim refuses it.
            if let Some(e) = intensity {
                let err = TraceState::with_emotion(kind, T0, e, 0.0).unwrap_err();
                assert!(matches!(err, Error::OutOfRange { field: "emotional_intensity", .. }), "{id}");
            }
            if let Some(v) = valence {
                let err = TraceState::with_emotion(kind, T0, 0.0, v).unwrap_err();
                assert!(matches!(err, Error::OutOfRange { field: "emotional_valence", .. }), "{id}");
            }
            continue;
        }
        let state = if imprint == Some(true) {
            // N9: encoded in the imprint window, one reinforcement is counted, strength unchanged.
            TraceState::encoded(kind, T0, &params().with_imprint_start(T0))
        } else {
            TraceState::new(kind, T0)
        };
        let mut store: TraceStore<()> = TraceStore::new(params());
        let record_id = crate::id::IdGenerator::seeded(9).next_id(T0);
        insert(&mut store, record_id, state.clone(), ());
        for (field, value) in want.as_object().unwrap() {
            match field.as_str() {
                "strength" => {
                    assert_eq!(state.strength_at(T0, &params()), num(value), "{id}");
                    assert_eq!((state.peak(), state.decay_origin()), (num(value), T0), "{id}");
                }
                "base_decay_rate" => assert_eq!(state.base_decay_rate(), num(value), "{id}"),
                "reinforcement_count" => {
                    assert_eq!(state.reinforcement_count() as usize, count(value), "{id}");
                }
                "storage_tier" => {
                    assert_eq!(state.tier(T0, &params()).as_str(), text(value), "{id}");
                    assert_eq!(store.get(record_id).unwrap().tier.as_str(), text(value), "{id}");
                }
                "trace_id_pattern" => {
                    // ^[0-9a-f-]{36}$: a RecordId's text form has that shape.
                    assert_eq!(text(value), "^[0-9a-f-]{36}$");
                    let s = record_id.to_string();
                    assert!(
                        s.len() == 36
                            && s.bytes()
                                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                        "{id}: {s}"
                    );
                }
                other => panic!("{id}: field {other} is not handled"),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parallel decay and properties.

fn random_states(n: usize, seed: u64) -> Vec<TraceState> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let kind = TraceKind::ALL[rng.below(7) as usize];
            let peak = rng.uniform() * rng.uniform();
            let age = rng.below(200 * 86_400_000_000) as i64;
            let decay_origin = Timestamp::from_micros(T0.as_micros() - age);
            let rehearsed = rng.below(age as u64 + 1) as i64;
            TraceState::from_parts(TraceStateParts {
                kind,
                peak,
                decay_origin,
                emotional_intensity: rng.uniform(),
                emotional_valence: rng.uniform() * 2.0 - 1.0,
                reinforcement_count: 0,
                last_reinforced: Timestamp::from_micros(decay_origin.as_micros() + rehearsed),
            })
            .unwrap()
        })
        .collect()
}

/// `decay_all` writes `strength_at` bit for bit, counts like a per-state loop, and leaves the
/// states alone.
fn assert_decay_all_agrees(
    states: &[TraceState],
    now: Timestamp,
    p: &TraceParams,
) -> Result<(), TestCaseError> {
    let mut out = vec![f64::NAN; 3];
    let summary = decay_all(states, now, p, &mut out);
    prop_assert_eq!(out.len(), states.len());
    let mut want = DecaySummary::default();
    for (state, got) in states.iter().zip(&out) {
        let strength = state.strength_at(now, p);
        prop_assert_eq!(got.to_bits(), strength.to_bits());
        if state.base_decay_rate() == 0.0 {
            continue;
        }
        match state.disposition(now, p) {
            Disposition::Prune => want.prune_candidates += 1,
            Disposition::Archive => {
                want.decayed += 1;
                want.archive_candidates += 1;
            }
            Disposition::Active | Disposition::AutoFire => want.decayed += 1,
        }
    }
    prop_assert_eq!(summary, want);
    Ok(())
}

#[test]
fn parallel_decay_all_matches_per_state() {
    let n = PARALLEL_DECAY_MIN_LEN * 3 + 17;
    let states = random_states(n, 11);
    assert_decay_all_agrees(&states, T0, &params()).unwrap();
    let coarse = TraceParams::new(Duration::from_secs(3_600)).unwrap();
    assert_decay_all_agrees(&states, T0, &coarse).unwrap();
    let mut out = Vec::new();
    let summary = decay_all(&states, T0, &params(), &mut out);
    assert!(summary.prune_candidates > 0 && summary.archive_candidates > 0, "{summary:?}");
}

fn arb_state() -> impl Strategy<Value = TraceState> {
    (
        (0..7usize, 0.0..=1.0f64, 0.0..=1.0f64, -1.0..=1.0f64),
        (any::<u16>(), -(1i64 << 50)..(1i64 << 50), -(1i64 << 36)..(1i64 << 40)),
    )
        .prop_map(|((k, peak, e, v), (n, at, rehearsed))| {
            TraceState::from_parts(TraceStateParts {
                kind: TraceKind::ALL[k],
                peak,
                decay_origin: Timestamp::from_micros(at),
                emotional_intensity: e,
                emotional_valence: v,
                reinforcement_count: u32::from(n),
                // Mostly after the origin, as every operation keeps it; sometimes before.
                last_reinforced: Timestamp::from_micros(at + rehearsed),
            })
            .unwrap()
        })
}

fn arb_params() -> impl Strategy<Value = TraceParams> {
    (1u64..=86_400_000_000, proptest::option::of(-(1i64 << 50)..(1i64 << 50))).prop_map(|(tick, start)| {
        let p = TraceParams::new(Duration::from_micros(tick)).unwrap();
        match start {
            Some(s) => p.with_imprint_start(Timestamp::from_micros(s)),
            None => p,
        }
    })
}

/// One event of a trace's life, `gap` microseconds after the previous one.
#[derive(Debug, Clone, Copy)]
enum Event {
    Reinforce,
    Rehearse,
    Retrieve,
    Probe,
}

fn arb_events() -> impl Strategy<Value = Vec<(Event, i64)>> {
    let event =
        prop_oneof![Just(Event::Reinforce), Just(Event::Rehearse), Just(Event::Retrieve), Just(Event::Probe)];
    // Gaps from nothing to about 35 years, sometimes negative (a late report).
    let gap = prop_oneof![0i64..120_000_000, 0i64..(1i64 << 50), -(1i64 << 36)..0];
    proptest::collection::vec((event, gap), 1..40)
}

/// Offsets from a reinforcement's time to probe at: the next ticks, hours, days, years, and
/// the timestamp range's end.
fn arb_offsets() -> impl Strategy<Value = Vec<i64>> {
    let offset = prop_oneof![
        0i64..600_000_000,
        0i64..(1i64 << 40),
        0i64..(1i64 << 50),
        Just(i64::MAX),
        -(1i64 << 40)..0,
    ];
    proptest::collection::vec(offset, 1..12)
}

/// What one reinforcement at `now` must do to `before`, given that `after` is the state it
/// produced and `value` what it returned: the value is lex-memory's reinforcement of the
/// strength at `max(now, origin)`; the peak never falls and the origin never moves back or
/// past `max(now, origin)`; the strength at `now` is at least the value, exactly it when the
/// peak was reached, otherwise one more tick would take it below; and at every probe the
/// strength is at least what it was without the reinforcement.
fn check_reinforcement(
    before: &TraceState,
    after: &TraceState,
    value: f64,
    now: Timestamp,
    p: &TraceParams,
    offsets: &[i64],
) -> Result<(), TestCaseError> {
    let at = before.decay_origin().max(now);
    let s = before.strength_at(at, p);
    prop_assert_eq!(value.to_bits(), compute_reinforcement(s, p.imprint_active(now)).to_bits());
    prop_assert!((0.0..=1.0).contains(&value));
    prop_assert!(after.peak() >= before.peak() && after.peak() <= 1.0);
    prop_assert!(after.decay_origin() >= before.decay_origin(), "origin moved back");
    prop_assert!(after.decay_origin() <= at, "origin after now");
    let strength = after.strength_at(now, p);
    prop_assert!(strength >= value, "{} < returned {}", strength, value);
    prop_assert!(strength >= before.strength_at(now, p));
    if value >= before.peak() {
        prop_assert_eq!((after.peak(), after.decay_origin()), (value, at));
        prop_assert_eq!(strength, value);
    } else {
        prop_assert_eq!(after.peak(), before.peak());
        let k = p.ticks_between(after.decay_origin(), now);
        let one_more =
            compute_decay(after.peak(), after.base_decay_rate(), (k + 1) as f64, after.emotional_intensity());
        prop_assert!(one_more < value, "tick {} is not the last at or above {}", k, value);
    }
    prop_assert_eq!(after.last_reinforced(), before.last_reinforced().max(now));
    prop_assert_eq!(after.reinforcement_count(), before.reinforcement_count().saturating_add(1));
    for &offset in offsets {
        let t = Timestamp::from_micros(now.as_micros().saturating_add(offset));
        let (with, without) = (after.strength_at(t, p), before.strength_at(t, p));
        prop_assert!(with >= without, "at {}: {} < {} without the reinforcement", t, with, without);
        prop_assert!((0.0..=1.0).contains(&with));
    }
    Ok(())
}

proptest! {
    #[test]
    fn strength_at_stays_in_the_unit_interval(s in arb_state(), p in arb_params(), now in any::<i64>()) {
        let v = s.strength_at(Timestamp::from_micros(now), &p);
        prop_assert!((0.0..=1.0).contains(&v), "{}", v);
        prop_assert!(v <= s.peak());
    }

    #[test]
    fn decay_never_increases_with_time(
        s in arb_state(),
        p in arb_params(),
        now in -(1i64 << 52)..(1i64 << 52),
        more in 0i64..(1i64 << 52),
    ) {
        let early = s.strength_at(Timestamp::from_micros(now), &p);
        let late = s.strength_at(Timestamp::from_micros(now + more), &p);
        prop_assert!(late <= early, "{} then {}", early, late);
    }

    /// The guarantee of the effective-age model: a reinforcement never weakens a trace, at its
    /// own time or at any later (or earlier) time.
    #[test]
    fn reinforcement_never_weakens_a_trace_now_or_later(
        s in arb_state(),
        p in arb_params(),
        now in -(1i64 << 52)..(1i64 << 52),
        offsets in arb_offsets(),
    ) {
        let now = Timestamp::from_micros(now);
        let mut after = s.clone();
        match after.reinforce(now, &p) {
            Ok(value) => check_reinforcement(&s, &after, value, now, &p, &offsets)?,
            Err(ReinforceError::Firmware) => {
                prop_assert_eq!(s.kind(), TraceKind::Firmware);
                prop_assert_eq!(&after, &s);
            }
        }
    }

    /// A life of reinforcements, rehearsals and retrievals: between reinforcements the
    /// strength never rises (rehearsals and retrievals change nothing in it); every
    /// reinforcement passes [`check_reinforcement`]; the state always survives a round trip
    /// through its parts; tier and score always agree with `strength_at`.
    #[test]
    fn a_trace_life_keeps_strength_consistent(
        s in arb_state(),
        p in arb_params(),
        events in arb_events(),
        offsets in arb_offsets(),
    ) {
        let mut s = s;
        let mut now = s.last_reinforced();
        let mut last_probe: Option<(Timestamp, f64)> = None;
        for (event, gap) in events {
            now = Timestamp::from_micros(now.as_micros().saturating_add(gap));
            let before = s.clone();
            let strength = s.strength_at(now, &p);
            match event {
                Event::Reinforce => match s.reinforce(now, &p) {
                    Ok(v) => {
                        check_reinforcement(&before, &s, v, now, &p, &offsets)?;
                        last_probe = None;
                    }
                    Err(ReinforceError::Firmware) => {
                        prop_assert_eq!(s.kind(), TraceKind::Firmware);
                        prop_assert_eq!(&s, &before);
                    }
                },
                Event::Rehearse | Event::Retrieve => {
                    if matches!(event, Event::Rehearse) {
                        s.rehearse(now);
                    } else {
                        s.mark_retrieved(now);
                    }
                    prop_assert_eq!((s.peak(), s.decay_origin()), (before.peak(), before.decay_origin()));
                    prop_assert_eq!(s.last_reinforced(), before.last_reinforced().max(now));
                    for probe in [now, now + p.tick(), now + days(400)] {
                        prop_assert_eq!(s.strength_at(probe, &p), before.strength_at(probe, &p));
                    }
                }
                Event::Probe => {
                    if let Some((at, earlier)) = last_probe
                        && at <= now
                    {
                        prop_assert!(strength <= earlier, "rose from {} to {}", earlier, strength);
                    }
                    last_probe = Some((now, strength));
                }
            }
            prop_assert_eq!(TraceState::from_parts(s.to_parts()).ok(), Some(s.clone()), "round trip");
            let strength = s.strength_at(now, &p);
            prop_assert_eq!(
                s.tier(now, &p),
                compute_storage_tier(strength, now.secs_since(s.last_reinforced()))
            );
            prop_assert_eq!(
                s.retrieval_score(now, true, &p),
                compute_retrieval_score(
                    strength,
                    s.emotional_intensity(),
                    now.secs_since(s.last_reinforced()),
                    true
                )
            );
            prop_assert_eq!(s.disposition(now, &p), Disposition::of(strength));
        }
    }

    /// Reinforcing again and again at one time climbs to 1 and never goes down.
    #[test]
    fn repeated_reinforcement_never_lowers_strength_and_never_exceeds_one(
        s in arb_state(),
        p in arb_params(),
        now in -(1i64 << 52)..(1i64 << 52),
        n in 1usize..15,
    ) {
        let mut s = s;
        let now = Timestamp::from_micros(now);
        for _ in 0..n {
            let before = s.clone();
            match s.reinforce(now, &p) {
                Ok(v) => check_reinforcement(&before, &s, v, now, &p, &[0, 1, i64::MAX])?,
                Err(ReinforceError::Firmware) => prop_assert_eq!(s.kind(), TraceKind::Firmware),
            }
        }
    }

    #[test]
    fn reinforcement_formula_is_capped(x in -10.0..10.0f64, imprint in any::<bool>()) {
        let v = compute_reinforcement(x, imprint);
        prop_assert!((0.0..=1.0).contains(&v));
    }

    #[test]
    fn decay_all_agrees_with_strength_at(
        states in proptest::collection::vec(arb_state(), 0..64),
        p in arb_params(),
        now in -(1i64 << 52)..(1i64 << 52),
    ) {
        assert_decay_all_agrees(&states, Timestamp::from_micros(now), &p)?;
    }
}
