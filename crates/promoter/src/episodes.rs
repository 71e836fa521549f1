//! Read access to source episodes, and the recurring elements found in them.
//!
//! The promoter knows no episodic layer (a leaf crate depends on `maxim-core` alone), so it
//! reads episodes through the small [`EpisodeReader`] trait defined here. A closure
//! `Fn(RecordId) -> Option<EpisodeElements>` is a reader, so the hub wires the hippocampus in
//! one line. The trait lives in this crate, not in `maxim-core`, because the promoter is its
//! only user; it would move to the core contracts when a second crate needs it.
//!
//! A reader must not record an access (it peeks): promotion is bookkeeping, not recall.
//!
//! [`recurring`] keeps the elements that appear in at least a share of the readable
//! episodes, most frequent first:
//!
//! ```
//! use promoter::{EpisodeElements, recurring};
//! let ep = |objects: &[&str], tool: &str, success: bool| EpisodeElements {
//!     objects: objects.iter().map(|s| s.to_string()).collect(),
//!     tools: vec![tool.to_string()],
//!     goals: vec!["make coffee".into()],
//!     outcome: Some(if success { "success" } else { "failure" }.into()),
//! };
//! let episodes = [
//!     ep(&["mug", "kettle"], "grasp", true),
//!     ep(&["mug"], "grasp", true),
//!     ep(&["spoon"], "grasp", false),
//! ];
//! let found = recurring(&episodes, 0.5, 2, 8);
//! assert_eq!(found.objects, ["mug"]);
//! assert_eq!(found.tools, ["grasp"]);
//! assert_eq!(found.goals, ["make coffee"]);
//! assert_eq!(found.outcome.as_deref(), Some("success"));
//! ```

use maxim_core::{RecordId, Value};
use rustc_hash::FxHashMap;

/// What the promoter reads of one episode: the elements that may recur across episodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpisodeElements {
    /// Objects the episode involved (seen, used, handled).
    pub objects: Vec<String>,
    /// Tools it used.
    pub tools: Vec<String>,
    /// Goals it pursued.
    pub goals: Vec<String>,
    /// Its outcome in a word (`success`, `failure`, ...), if known.
    pub outcome: Option<String>,
}

/// Read access to episodes by id, for the recurring elements of a pattern's episodes.
pub trait EpisodeReader: Send + Sync {
    /// The elements of episode `id`, or `None` when it is not held (deleted, compressed past
    /// reading). Must not record an access.
    fn read_episode(&self, id: RecordId) -> Option<EpisodeElements>;
}

impl<F> EpisodeReader for F
where
    F: Fn(RecordId) -> Option<EpisodeElements> + Send + Sync,
{
    fn read_episode(&self, id: RecordId) -> Option<EpisodeElements> {
        self(id)
    }
}

/// The elements that recur across a set of episodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecurringElements {
    /// Recurring objects, most frequent first (ties by name).
    pub objects: Vec<String>,
    /// Recurring tools.
    pub tools: Vec<String>,
    /// Recurring goals.
    pub goals: Vec<String>,
    /// The most frequent outcome, when it recurs.
    pub outcome: Option<String>,
}

/// Property key of the recurring objects.
pub const OBJECTS_KEY: &str = "recurring_objects";
/// Property key of the recurring tools.
pub const TOOLS_KEY: &str = "recurring_tools";
/// Property key of the recurring goals.
pub const GOALS_KEY: &str = "recurring_goals";
/// Property key of the typical outcome.
pub const OUTCOME_KEY: &str = "typical_outcome";

impl RecurringElements {
    /// True when nothing recurs.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.tools.is_empty() && self.goals.is_empty() && self.outcome.is_none()
    }

    /// The concept properties they become, by key: each non-empty list as a list of texts, the
    /// outcome as a text.
    pub fn properties(&self) -> Vec<(&'static str, Value)> {
        let list = |items: &[String]| Value::List(items.iter().cloned().map(Value::Text).collect());
        let mut out = Vec::with_capacity(4);
        for (key, items) in [(OBJECTS_KEY, &self.objects), (TOOLS_KEY, &self.tools), (GOALS_KEY, &self.goals)]
        {
            if !items.is_empty() {
                out.push((key, list(items)));
            }
        }
        if let Some(outcome) = &self.outcome {
            out.push((OUTCOME_KEY, Value::Text(outcome.clone())));
        }
        out
    }
}

/// The elements that appear in at least `max(min_count, ⌈share × n⌉)` of the `n` episodes,
/// each counted once per episode (compared after trimming; blank ones ignored), most frequent
/// first then by name, at most `max_elements` of each kind. The outcome is the most frequent
/// recurring one.
pub fn recurring(
    episodes: &[EpisodeElements],
    share: f64,
    min_count: usize,
    max_elements: usize,
) -> RecurringElements {
    let n = episodes.len();
    if n == 0 {
        return RecurringElements::default();
    }
    let need = ((share * n as f64).ceil() as usize).max(min_count).max(1);
    let pick = |field: fn(&EpisodeElements) -> Vec<&str>| -> Vec<String> {
        let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
        for ep in episodes {
            let mut seen: Vec<&str> =
                field(ep).into_iter().map(str::trim).filter(|s| !s.is_empty()).collect();
            seen.sort_unstable();
            seen.dedup();
            for s in seen {
                *counts.entry(s).or_default() += 1;
            }
        }
        let mut kept: Vec<(&str, usize)> = counts.into_iter().filter(|&(_, c)| c >= need).collect();
        kept.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        kept.into_iter().take(max_elements).map(|(s, _)| s.to_owned()).collect()
    };
    RecurringElements {
        objects: pick(|e| e.objects.iter().map(String::as_str).collect()),
        tools: pick(|e| e.tools.iter().map(String::as_str).collect()),
        goals: pick(|e| e.goals.iter().map(String::as_str).collect()),
        outcome: pick(|e| e.outcome.iter().map(String::as_str).collect()).into_iter().next(),
    }
}
