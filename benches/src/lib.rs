//! The benchmarks' shared inputs: the workload generators of `maxim-testkit`, plus the
//! inputs that need a layer crate (which the test kit, depending on `maxim-core` alone,
//! cannot name), and the workload runner ([`workload`]) behind the `workload` binary.
//!
//! ```
//! use maxim_benches::{episode_input, episode_stream};
//! let first = episode_input(&episode_stream(1)[0]);
//! assert_eq!(first.action.tool_name.as_ref(), "tool_08");
//! ```

pub use maxim_testkit::*;

pub mod workload;

/// Part a's capture input for one drawn episode: its objects, salience and novelty; the goal
/// as active goal and as the intent's `goal`; the tool; the outcome.
pub fn episode_input(e: &EpisodeDraw) -> hippocampus::NewEpisode {
    let mut n = hippocampus::NewEpisode::default();
    n.perception.detected_objects = e.objects.iter().map(|o| o.as_str().into()).collect();
    n.perception.salience = e.salience;
    n.perception.novelty = e.novelty;
    n.context.active_goal = Some(e.goal_text().into());
    n.decision.intent.insert("goal", maxim_core::Value::from(e.goal_text()));
    n.action.tool_name = e.tool.as_str().into();
    n.outcome.success = Some(e.success);
    n
}

pub mod eval;
