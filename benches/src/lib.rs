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

pub mod cpu;
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

/// The names of one drawn episode as the layer's shared [`hippocampus::Name`]s (see
/// [`episode_names`]).
#[derive(Debug, Clone)]
pub struct EpisodeNames {
    objects: Vec<hippocampus::Name>,
    goal: hippocampus::Name,
    tool: hippocampus::Name,
}

/// The names of `draws`, one shared [`hippocampus::Name`] per distinct object, goal and tool,
/// made with the draws (outside any timing), as an agent holds its vocabulary and as the
/// original's workload hands the same string objects to every episode.
pub fn episode_names(draws: &[EpisodeDraw]) -> Vec<EpisodeNames> {
    let mut shared: std::collections::HashMap<String, hippocampus::Name> = std::collections::HashMap::new();
    let mut name = |s: &str| -> hippocampus::Name {
        if let Some(n) = shared.get(s) {
            return n.clone();
        }
        let n = hippocampus::Name::from(s);
        shared.insert(s.to_owned(), n.clone());
        n
    };
    draws
        .iter()
        .map(|e| EpisodeNames {
            objects: e.objects.iter().map(|o| name(o)).collect(),
            goal: name(e.goal_text()),
            tool: name(&e.tool),
        })
        .collect()
}

/// [`episode_input`] with the episode's names shared from `names` (its entry of
/// [`episode_names`]) instead of allocated: the same episode.
///
/// ```
/// use maxim_benches::{episode_input, episode_input_named, episode_names, episode_stream};
/// let draws = episode_stream(3);
/// let names = episode_names(&draws);
/// assert_eq!(episode_input_named(&draws[2], &names[2]), episode_input(&draws[2]));
/// ```
pub fn episode_input_named(e: &EpisodeDraw, names: &EpisodeNames) -> hippocampus::NewEpisode {
    let mut n = hippocampus::NewEpisode::default();
    n.perception.detected_objects.clone_from(&names.objects);
    n.perception.salience = e.salience;
    n.perception.novelty = e.novelty;
    n.context.active_goal = Some(names.goal.clone());
    n.decision.intent.insert("goal", maxim_core::Value::from(e.goal_text()));
    n.action.tool_name = names.tool.clone();
    n.outcome.success = Some(e.success);
    n
}

pub mod eval;
