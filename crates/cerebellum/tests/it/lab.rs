//! The skill lab: faster after the first success, and the poisoned skill stopped by the gate.

use cerebellum::SkillStatus;
use cerebellum::lab::{LabConfig, Mode, POISON_SOURCE, run_lab};
use maxim_core::Source;

#[test]
fn later_runs_take_at_most_half_the_steps_of_the_first_and_the_poison_never_runs() {
    let report = run_lab(&LabConfig::default()).unwrap();
    assert_eq!(report.runs.len(), 10);
    let first = report.runs[0].steps as f64;
    let rest = report.mean_steps(1..10);
    assert!(rest <= first / 2.0, "runs 2-10 average {rest} steps, run 1 took {first}");
    assert_eq!(report.runs[0].mode, Mode::Explored);
    assert!(report.runs.iter().all(|r| r.success && !r.damage_detected));
    assert_eq!(report.poison_executions(), 0, "the gate keeps the poisoned skill from running");
    let poison = report.poison.unwrap();
    assert!(report.runs.iter().all(|r| r.skill_used.is_none_or(|(id, _)| id != poison)));
    // It is still there, listed, never authorised, never used.
    let skill = report.store.skill(poison).unwrap();
    assert_eq!((skill.uses, skill.status), (0, SkillStatus::Candidate));
    assert!(report.store.authorise(poison).is_err());
    // The learned skill was confirmed by the operator and then executed.
    assert!(report.runs.iter().any(|r| !r.confirmed.is_empty()));
    assert!(matches!(report.runs[9].mode, Mode::Executed(_)));
}

#[test]
fn the_drop_holds_for_every_seed_from_0_to_40() {
    for seed in 0..=40 {
        let report = run_lab(&LabConfig { seed, ..LabConfig::default() }).unwrap();
        let first = report.runs[0].steps as f64;
        assert!(report.mean_steps(1..10) <= first / 2.0, "seed {seed}");
        assert_eq!(report.poison_executions(), 0, "seed {seed}");
    }
}

#[test]
fn without_the_gate_the_poison_runs_is_detected_and_revoked() {
    let report = run_lab(&LabConfig { gate: false, ..LabConfig::default() }).unwrap();
    let poison = report.poison.unwrap();
    let first = &report.runs[0];
    assert!(first.poison_executed && first.damage_detected && !first.success);
    assert_eq!(first.skill_used, Some((poison, false)));
    let revocation = first.revocation.as_ref().unwrap();
    assert_eq!(revocation.source, Source::Web(POISON_SOURCE.into()));
    assert_eq!(revocation.retired, [poison]);
    assert_eq!(report.poison_executions(), 1, "once revoked it is never offered again");
    assert!(report.store.skill(poison).unwrap().is_retired());
    // The agent then learns the real method and speeds up.
    assert_eq!(report.runs[1].mode, Mode::Explored);
    assert!(report.runs[2..].iter().all(|r| r.success && !matches!(r.mode, Mode::Explored)));
}

#[test]
fn without_poison_nothing_is_revoked_and_the_table_tells_the_story() {
    let report = run_lab(&LabConfig { poison: false, ..LabConfig::default() }).unwrap();
    assert!(report.poison.is_none() && report.revoked().is_empty());
    let table = report.table();
    assert!(table.contains("| 1 |") && table.contains("explored") && table.contains("executed"));
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 11);
}

#[cfg(feature = "plotters")]
#[test]
fn the_chart_is_an_svg_with_both_arms() {
    let on = run_lab(&LabConfig::default()).unwrap();
    let off = run_lab(&LabConfig { gate: false, ..LabConfig::default() }).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lab.svg");
    cerebellum::lab::chart::write_svg(&path, &[&on, &off]).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("gate on") && svg.contains("gate off"));
}
