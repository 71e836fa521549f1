//! Helpers shared by the integration tests.

use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
use maxim_core::value::Value;
use maxim_core::{ManualClock, Timestamp};

/// The start of every test clock.
pub(crate) const T0: Timestamp = Timestamp::from_secs(1_700_000_000);

/// A layer with the default settings, seeded ids and a manual clock at `T0`. Auto-save after
/// sleep is on by default, but the default names no persistence path, so nothing is written.
pub(crate) fn layer() -> (ManualClock, Hippocampus) {
    layer_with(HippocampusConfig::default())
}

/// A layer with `config`, seeded ids and a manual clock at `T0`.
pub(crate) fn layer_with(config: HippocampusConfig) -> (ManualClock, Hippocampus) {
    let clock = ManualClock::new(T0);
    let hippo =
        Hippocampus::builder().config(config).clock(clock.shared()).id_seed(7).build().expect("valid config");
    (clock, hippo)
}

/// An episode with these objects, active goal (also the intent's goal), tool and success.
pub(crate) fn episode(objects: &[&str], goal: &str, tool: &str, success: Option<bool>) -> NewEpisode {
    let mut e = NewEpisode::default();
    e.perception.detected_objects = objects.iter().map(|&o| o.into()).collect();
    if !goal.is_empty() {
        e.context.active_goal = Some(goal.into());
        e.decision.intent.insert("goal", Value::from(goal));
    }
    e.action.tool_name = tool.into();
    e.outcome.success = success;
    e
}
