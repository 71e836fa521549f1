//! Part h of the shared workload (`shared/bench/WORKLOAD.md`): the causal learner reproduces
//! the reference's link and candidate counts exactly.

use maxim_core::value::{Map, Value};
use maxim_testkit::{MODES, causal_signature, causal_stream, episode_ids};
use nac::{Nac, Observation, Valence};

/// Feeds the `10·n` observations of part h (from `maxim-testkit`) into `nac`.
fn run(nac: &mut Nac, n: usize) {
    let ids = episode_ids(n);
    let modes: Vec<Map> = MODES.iter().map(|m| [("mode", Value::from(*m))].into_iter().collect()).collect();
    let sigs: Vec<String> = (0..500).map(causal_signature).collect();
    let pos: Vec<String> = sigs.iter().map(|s| format!("{s}:positive")).collect();
    let neg: Vec<String> = sigs.iter().map(|s| format!("{s}:negative")).collect();
    for d in causal_stream(n).take(10 * n) {
        let (outcome, valence) =
            if d.positive { (&pos[d.k], Valence::Positive) } else { (&neg[d.k], Valence::Negative) };
        nac.observe(
            &Observation::new("tool", &sigs[d.k], "tool_result", outcome, valence)
                .delay(d.delta)
                .context(&modes[d.mode])
                .memory(ids[d.memory]),
        )
        .unwrap();
    }
}

#[test]
fn episode_ids_match_the_workload_vectors() {
    let ids = episode_ids(2);
    assert_eq!(ids[0].to_string(), "088712be-8a58-4fca-bbff-7c596e26ce46");
    assert_eq!(ids[1].to_string(), "21876e7a-2aec-4a3d-977e-91a249eb9308");
}

#[test]
fn counts_match_the_reference_at_1000_and_10000() {
    for (n, links, candidates) in [(1_000, 2553, 829), (10_000, 2941, 1420)] {
        let mut nac = Nac::builder()
            .clock(maxim_core::ManualClock::new(maxim_core::Timestamp::from_secs(1_700_000_000)).shared())
            .build()
            .expect("the default settings are valid");
        run(&mut nac, n);
        assert_eq!(nac.len(), links, "links at N = {n}");
        assert_eq!(nac.get_promotion_candidates(0.6, 3).unwrap().len(), candidates, "candidates at N = {n}");
        assert_eq!(nac.total_observations(), 10 * n as u64);
    }
}
