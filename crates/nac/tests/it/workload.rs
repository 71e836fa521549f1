//! Part h of the shared workload (`shared/bench/WORKLOAD.md`): the causal learner reproduces
//! the reference's link and candidate counts exactly.

use maxim_core::value::{Map, Value};
use maxim_core::{RecordId, SplitMix64};
use nac::{Nac, Observation, Valence};

/// The workload's episode ids (stream 10) as record ids: two draws, big-endian, UUID-v4 bits.
pub(crate) fn episode_ids(n: usize) -> Vec<RecordId> {
    let mut rng = SplitMix64::new(10);
    (0..n)
        .map(|_| {
            let hi = rng.next_u64();
            let lo = rng.next_u64();
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(&hi.to_be_bytes());
            bytes[8..].copy_from_slice(&lo.to_be_bytes());
            bytes[6] = (bytes[6] & 0x0F) | 0x40;
            bytes[8] = (bytes[8] & 0x3F) | 0x80;
            RecordId::from_u128(u128::from_be_bytes(bytes))
        })
        .collect()
}

/// Feeds the `10·n` observations of part h into `nac`.
fn run(nac: &mut Nac, n: usize) {
    let ids = episode_ids(n);
    let modes: Vec<Map> = ["explore", "exploit", "idle"]
        .iter()
        .map(|m| [("mode", Value::from(*m))].into_iter().collect())
        .collect();
    let sigs: Vec<String> = (0..500).map(|k| format!("tool:tool_{k:03}")).collect();
    let pos: Vec<String> = sigs.iter().map(|s| format!("{s}:positive")).collect();
    let neg: Vec<String> = sigs.iter().map(|s| format!("{s}:negative")).collect();
    let mut rng = SplitMix64::new(8);
    let p_pos: Vec<f64> = (0..500).map(|_| rng.uniform()).collect();
    for _ in 0..10 * n {
        let k = rng.below(500) as usize;
        let positive = rng.uniform() < p_pos[k];
        let mode = &modes[rng.below(3) as usize];
        let delta = 0.1 + 4.9 * rng.uniform();
        let m = ids[rng.below(n as u64) as usize];
        let (outcome, valence) =
            if positive { (&pos[k], Valence::Positive) } else { (&neg[k], Valence::Negative) };
        nac.observe(
            &Observation::new("tool", &sigs[k], "tool_result", outcome, valence)
                .delay(delta)
                .context(mode)
                .memory(m),
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
        let mut nac = Nac::with_clock(
            maxim_core::ManualClock::new(maxim_core::Timestamp::from_secs(1_700_000_000)).shared(),
        );
        run(&mut nac, n);
        assert_eq!(nac.len(), links, "links at N = {n}");
        assert_eq!(nac.get_promotion_candidates(0.6, 3).unwrap().len(), candidates, "candidates at N = {n}");
        assert_eq!(nac.total_observations(), 10 * n as u64);
    }
}
