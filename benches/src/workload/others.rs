//! Parts g (cross-layer graph), h (causal learner) and i (randomness assessment).

use crossgraph::{CrossLayerGraph, CrossParams, KindSet, LayerGraphs};
use ips_gate::assess_randomness;
use maxim_core::graph::ActivationParams;
use maxim_core::value::{Map, Value as MapValue};
use maxim_core::{CrossEdgeKind, LayerKind, LayerRecord, PatternType, RecordId};
use nac::{Nac, Observation, Valence};
use serde_json::{Value, json};

use super::stats::{Calls, block, median};
use super::{Options, mean3, round};
use crate::{
    CausalDraw, MODES, causal_signature, causal_stream, cross_layer_draws, episode_ids, randomness_series,
};

/// Part g: `N + C` edges into fresh graphs, cross-layer activation from 1,000 episodes, then
/// the removal of 1,000 episodes. `concepts` are part f's concept ids in creation order.
pub(super) fn cross_layer(n: usize, concepts: &[RecordId], opts: &Options) -> Value {
    eprintln!("workload n={n}: part g");
    let episodes: Vec<LayerRecord> =
        episode_ids(n).into_iter().map(|id| LayerRecord::new(LayerKind::Hippocampus, id)).collect();
    let concepts: Vec<LayerRecord> =
        concepts.iter().map(|&id| LayerRecord::new(LayerKind::Atl, id)).collect();
    let d = cross_layer_draws(n);
    let fill = |g: &mut CrossLayerGraph| {
        for (i, &j) in d.inst.iter().enumerate() {
            g.add_edge(episodes[i], concepts[j], CrossEdgeKind::InstanceOf, 1.0).expect("a valid edge");
        }
        for (j, &(e, w)) in d.derived.iter().enumerate() {
            g.add_edge(concepts[j], episodes[e], CrossEdgeKind::DerivedFrom, w).expect("a valid edge");
        }
    };
    let mut blocks = Vec::new();
    let mut last = None;
    for _ in 0..opts.reps.max(1) {
        let mut g = CrossLayerGraph::builder().build().expect("the default settings are valid");
        blocks.push(block(|| fill(&mut g)));
        last = Some(g);
    }
    let mut g = last.expect("at least one graph");
    let edges = g.edge_count();
    let none = LayerGraphs::new();
    // The workload's call: depth 3, decay 0.5; maxim follows every edge type both ways and
    // returns every record within 3 hops (threshold 0.01, the graph's default).
    let params = CrossParams::new(ActivationParams::new(0.5, 0.01, 3).expect("valid parameters"));
    // What the original computes for the same call: outgoing edges only, and its depth 3
    // returns records up to 2 hops away.
    let mut original = CrossParams::new(ActivationParams::new(0.5, 0.01, 2).expect("valid parameters"));
    original.backward = KindSet::NONE;
    let mut activation = Calls::new();
    let mut as_original = Calls::new();
    for (calls, p) in [(&mut activation, &params), (&mut as_original, &original)] {
        for _ in 0..opts.passes {
            calls.pass();
            for &s in &d.seeds {
                calls.time(|| g.activate_with(&[episodes[s]], &none, p).len());
            }
        }
    }
    let mut removals = Calls::new();
    removals.pass();
    let mut removed = 0;
    for &i in &d.removals {
        removals.time(|| {
            removed += g.remove_record(episodes[i]).expect("a valid record");
            0
        });
    }
    let mut as_original = as_original.to_json(true);
    as_original["note"] =
        "the original's work: outgoing edges only, records up to 2 hops (its max_depth 3)".into();
    let mut activation = activation.to_json(true);
    activation["note"] = "every edge type both ways, records up to 3 hops".into();
    let mut remove = removals.to_json(false);
    if let Some(o) = remove.as_object_mut() {
        o.remove("pass_medians_us");
    }
    json!({
        "edges": edges,
        "reps": blocks.len(),
        "add_edge_ops_per_s": round(edges as f64 / median(&blocks), 1),
        "cross_layer_activation_depth3": activation,
        "cross_layer_activation_as_original": as_original,
        "remove_record": remove,
        "remove_record_mean_edges_removed": mean3(removed, d.removals.len()),
    })
}

/// Part h: fresh learners fed the `10·N` observations of the workload, then the promotion
/// candidates of the last.
pub(super) fn causal(n: usize, opts: &Options) -> Value {
    eprintln!("workload n={n}: part h");
    let ids = episode_ids(n);
    let draws: Vec<CausalDraw> = causal_stream(n).take(10 * n).collect();
    let sigs: Vec<String> = (0..500).map(causal_signature).collect();
    let pos: Vec<String> = sigs.iter().map(|s| format!("{s}:positive")).collect();
    let neg: Vec<String> = sigs.iter().map(|s| format!("{s}:negative")).collect();
    let modes: Vec<Map> =
        MODES.iter().map(|m| [("mode", MapValue::from(*m))].into_iter().collect()).collect();
    let mut blocks = Vec::new();
    let mut last = None;
    for _ in 0..opts.reps.max(1) {
        let mut nac = Nac::builder().build().expect("the default settings are valid");
        blocks.push(block(|| {
            for d in &draws {
                let (outcome, valence) =
                    if d.positive { (&pos[d.k], Valence::Positive) } else { (&neg[d.k], Valence::Negative) };
                nac.observe(
                    &Observation::new("tool", &sigs[d.k], "tool_result", outcome, valence)
                        .delay(d.delta)
                        .context(&modes[d.mode])
                        .memory(ids[d.memory]),
                )
                .expect("a valid observation");
            }
        }));
        last = Some(nac);
        if blocks[0] > opts.causal_budget.as_secs_f64() {
            break;
        }
    }
    let nac = last.expect("at least one learner");
    // The candidates are timed as the promoter reads them: lent borrowed, in the order and
    // with the contents of the owned list (checked here, untimed), each one read.
    let owned = nac.get_promotion_candidates(0.6, 3).expect("valid thresholds");
    let mut lent = Vec::with_capacity(owned.len());
    nac.for_each_promotion_candidate(0.6, 3, |c| lent.push(c.to_candidate())).expect("valid thresholds");
    assert!(lent == owned, "the lent candidates are the owned ones, in order");
    let mut candidates = 0;
    let times: Vec<f64> = (0..opts.candidate_reps.max(1))
        .map(|_| {
            block(|| {
                let mut read = 0.0;
                candidates = nac
                    .for_each_promotion_candidate(0.6, 3, |c| {
                        read += c.confidence + c.observed_at.len() as f64 + c.pattern_name.len() as f64;
                    })
                    .expect("valid thresholds");
                std::hint::black_box(read);
            })
        })
        .collect();
    let owned_times: Vec<f64> = (0..opts.candidate_reps.max(1))
        .map(|_| {
            block(|| {
                std::hint::black_box(nac.get_promotion_candidates(0.6, 3).expect("valid thresholds"));
            })
        })
        .collect();
    let m = median(&blocks);
    json!({
        "observations": draws.len(),
        "reps": blocks.len(),
        "observe_per_s_median": round(draws.len() as f64 / m, 1),
        "us_per_observe_median": round(m * 1e6 / draws.len() as f64, 3),
        "links": nac.len(),
        "get_promotion_candidates_ms_median": round(median(&times) * 1e3, 3),
        "get_promotion_candidates_owned_ms_median": round(median(&owned_times) * 1e3, 3),
        "get_promotion_candidates_note": "lent borrowed (for_each_promotion_candidate), each candidate read; \
            the owned figure builds every candidate as a PromotionCandidate",
        "promotion_candidates": candidates,
    })
}

/// Part i: `assess_randomness` of the 10,000 series, each call timed, in passes; the counts of
/// the first pass.
pub fn run_ips(opts: &Options) -> Value {
    let series = randomness_series();
    let mut calls = Calls::new();
    let mut pass_us = Vec::new();
    let (mut random, mut kinds) = (0usize, [0usize; 4]);
    for pass in 0..opts.passes {
        calls.pass();
        let seconds = block(|| {
            for s in &series {
                let mut result = None;
                calls.time(|| {
                    result = Some(assess_randomness(s).expect("finite values"));
                    0
                });
                if pass == 0 {
                    let a = result.expect("assessed");
                    random += usize::from(a.is_random);
                    match a.pattern_type {
                        PatternType::Random => kinds[0] += 1,
                        PatternType::Trending => kinds[1] += 1,
                        PatternType::Cyclic => kinds[2] += 1,
                        PatternType::Clustering => kinds[3] += 1,
                        // 100 values are always enough; a change there shows up in the counts.
                        PatternType::InsufficientData => {}
                    }
                }
            }
        });
        pass_us.push(seconds * 1e6 / series.len() as f64);
    }
    let mut v = calls.to_json(false);
    v["series"] = series.len().into();
    v["length"] = 100.into();
    v["us_per_series_pass_median"] = round(median(&pass_us), 3).into();
    v["is_random_count"] = random.into();
    v["pattern_types"] =
        json!({"CLUSTERING": kinds[3], "CYCLIC": kinds[2], "RANDOM": kinds[0], "TRENDING": kinds[1]});
    v
}
