//! The records of the episodic layer (`spec/maxim-reference.md` §3.2, §3.10).
//!
//! An [`EpisodicMemory`] is one observe → decide → act → evaluate cycle of an agent: what it
//! perceived ([`Perception`]), the situation it was in ([`EpisodeContext`]), what it decided
//! ([`Decision`]), what it did ([`Action`]) and what came of it ([`Outcome`]), with the
//! [`RecordMeta`] every record carries (source, trust, partition, access tracking and a
//! trace of kind [`TraceKind::Episodic`]). Sleep replaces old, little-used episodes by a
//! [`CompressedMemory`] that keeps only what consolidation needs. An [`Episode`] is either.
//!
//! ```
//! use hippocampus::{Episode, EpisodicMemory};
//! use maxim_core::value::Value;
//! use maxim_core::{RecordId, Timestamp};
//! let now = Timestamp::from_secs(1_700_000_000);
//! let mut m = EpisodicMemory::new(RecordId::from_u128(1), now);
//! m.perception.detected_objects = vec!["Mug".into(), "table".into()];
//! m.context.active_goal = Some("find the mug".into());
//! m.decision.intent.insert("goal", Value::from("grab mug"));
//! m.action.tool_name = "Look".into();
//! assert_eq!(m.goal(), Some("grab mug")); // the intent's goal comes first
//! assert_eq!(m.keywords(), ["grab", "look", "mug", "table"]);
//! let c = m.compress(4);
//! assert_eq!((c.goal.as_deref(), c.object_count, c.edge_count), (Some("grab mug"), 2, 4));
//! assert!(Episode::from(c).is_compressed());
//! ```

use std::sync::{Arc, LazyLock};

use maxim_core::trace::TraceParams;
use maxim_core::value::{Map, Value};
use maxim_core::{
    MemoryRecord, RecordId, RecordMeta, Source, Timestamp, TraceKind, check_finite, check_unit,
};
use serde::{Deserialize, Serialize};

use crate::hash::StateRef;

/// A shared, immutable name: an object, a person, a goal, a mode, a tool.
///
/// The layer interns names, so the thousands of episodes that saw `mug` or pursued
/// `find mug` share one allocation each (build one with `"mug".into()`).
pub type Name = Arc<str>;

static OBSERVE: LazyLock<Name> = LazyLock::new(|| Name::from(DEFAULT_MODE));
static EMPTY: LazyLock<Name> = LazyLock::new(|| Name::from(""));

/// The empty name (shared, allocates nothing).
pub fn empty_name() -> Name {
    Arc::clone(&EMPTY)
}

/// The default salience and novelty of a perception.
pub const DEFAULT_SALIENCE: f64 = 0.5;
/// The default active mode.
pub const DEFAULT_MODE: &str = "observe";
/// Most names (detected objects and people together, repeats counted) one episode may carry.
///
/// Each name is an index key, and association formation compares an episode's names with
/// those of the episodes already held; the bound keeps the work of one capture small
/// (`spec/maxim-reference.md` sets none; the original accepted any number). A capture with
/// more is refused with [`maxim_core::Error::OutOfRange`] on the field
/// `detected_objects + detected_people`.
pub const MAX_NAMES: usize = 128;

/// What the agent perceived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Perception {
    /// Free-form observations.
    pub observations: Map,
    /// What the user typed, if anything.
    pub cli_input: Option<String>,
    /// What was said, if anything.
    pub transcript: Option<String>,
    /// Objects seen (index keys `object:<o>`, case preserved).
    #[serde(with = "names_serde")]
    pub detected_objects: Vec<Name>,
    /// People seen (index keys `person:<p>`).
    #[serde(with = "names_serde")]
    pub detected_people: Vec<Name>,
    /// How much this stood out, in `[0, 1]` (default 0.5).
    pub salience: f64,
    /// How new this was, in `[0, 1]` (default 0.5).
    pub novelty: f64,
    /// Why the agent chose what it did, in its own words.
    pub decision_rationale: String,
    /// Tools it considered.
    pub tool_alternatives: Vec<String>,
}

impl Default for Perception {
    fn default() -> Self {
        Self {
            observations: Map::new(),
            cli_input: None,
            transcript: None,
            detected_objects: Vec::new(),
            detected_people: Vec::new(),
            salience: DEFAULT_SALIENCE,
            novelty: DEFAULT_SALIENCE,
            decision_rationale: String::new(),
            tool_alternatives: Vec::new(),
        }
    }
}

impl Perception {
    /// True when the user spoke or typed (`cli_input` or `transcript` is set and not empty).
    pub fn had_user_input(&self) -> bool {
        self.cli_input.as_deref().is_some_and(|s| !s.is_empty())
            || self.transcript.as_deref().is_some_and(|s| !s.is_empty())
    }
}

/// The situation the agent was in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeContext {
    /// The agent's state snapshot, by reference into the [`StateStore`](crate::StateStore).
    pub state_ref: Option<StateRef>,
    /// The goal it was pursuing (index key `goal:<g>`).
    #[serde(with = "opt_name_serde")]
    pub active_goal: Option<Name>,
    /// Its mode (default `observe`; index key `mode:<m>`).
    #[serde(with = "name_serde")]
    pub active_mode: Name,
    /// Memory it had in view.
    pub memory_context: Option<String>,
    /// Fear level, in `[0, 1]` (default 0).
    pub fear_level: f64,
}

impl Default for EpisodeContext {
    fn default() -> Self {
        Self {
            state_ref: None,
            active_goal: None,
            active_mode: Arc::clone(&OBSERVE),
            memory_context: None,
            fear_level: 0.0,
        }
    }
}

/// What the agent decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The intent, for example `{"goal": "find mug", "confidence": 0.8}`.
    pub intent: Map,
    /// Its reasoning.
    pub reasoning: Option<String>,
    /// The alternatives it weighed.
    pub alternatives_considered: Vec<Map>,
    /// Its plan, if it made one.
    pub plan: Option<Vec<Map>>,
    /// Its confidence, in `[0, 1]` (default 1).
    pub confidence: f64,
}

impl Default for Decision {
    fn default() -> Self {
        Self {
            intent: Map::new(),
            reasoning: None,
            alternatives_considered: Vec::new(),
            plan: None,
            confidence: 1.0,
        }
    }
}

/// What the agent did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// The tool it used (index key `tool:<t>` when not empty).
    #[serde(with = "name_serde")]
    pub tool_name: Name,
    /// The tool's parameters.
    pub tool_params: Map,
    /// When the tool started.
    pub execution_start: Option<Timestamp>,
    /// When the tool finished.
    pub execution_end: Option<Timestamp>,
}

impl Default for Action {
    fn default() -> Self {
        Self { tool_name: empty_name(), tool_params: Map::new(), execution_start: None, execution_end: None }
    }
}

impl Action {
    /// `(end − start) × 1000`, 0 when either is unknown.
    pub fn execution_time_ms(&self) -> f64 {
        match (self.execution_start, self.execution_end) {
            (Some(start), Some(end)) => end.secs_since(start) * 1000.0,
            _ => 0.0,
        }
    }
}

/// What came of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Whether the action succeeded; `None` when this was not an action outcome (index key
    /// `success:True`, `success:False` or `success:None`).
    pub success: Option<bool>,
    /// The result.
    pub result: Value,
    /// The error, if there was one.
    pub error: Option<String>,
    /// Evaluations of the outcome.
    pub evaluations: Vec<Map>,
}

/// Use-based promotion pressure (§3.8): built up by recalls with distinct queries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsePressure {
    /// The pressure; at 3.0 the record is promoted to long-term.
    pub pressure: f64,
    /// When the pressure was last scored.
    pub last_scored_at: Option<Timestamp>,
    /// Signatures of the last (at most 10) distinct queries that scored it
    /// ([`query_signature`](crate::hash::query_signature)).
    pub access_contexts: Vec<u64>,
}

/// One observe → decide → act → evaluate cycle; see the [module docs](self).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodicMemory {
    /// The fields every record carries.
    pub meta: RecordMeta,
    /// The run it belongs to (empty when none).
    pub run_id: String,
    /// What the agent perceived.
    pub perception: Perception,
    /// The situation.
    pub context: EpisodeContext,
    /// What it decided.
    pub decision: Decision,
    /// What it did.
    pub action: Action,
    /// What came of it.
    pub outcome: Outcome,
    /// Use-based promotion pressure, once a recall with a query has scored it.
    pub usage: Option<Box<UsePressure>>,
}

impl EpisodicMemory {
    /// An episode `id` made `now`, from [`Source::Episodic`] with that source's default
    /// trust, every part at its default.
    pub fn new(id: RecordId, now: Timestamp) -> Self {
        let source = Source::Episodic;
        let meta = RecordMeta {
            id,
            partition: maxim_core::Partition::default(),
            timestamp: now,
            created_at: now,
            accessed_at: now,
            access_count: 1,
            long_term: false,
            consolidated_at: None,
            trust: source.default_trust(),
            source,
            trace: maxim_core::TraceState::new(TraceKind::Episodic, now),
        };
        Self::with_meta(meta)
    }

    /// An episode with `meta` and every part at its default.
    pub fn with_meta(meta: RecordMeta) -> Self {
        Self {
            meta,
            run_id: String::new(),
            perception: Perception::default(),
            context: EpisodeContext::default(),
            decision: Decision::default(),
            action: Action::default(),
            outcome: Outcome::default(),
            usage: None,
        }
    }

    /// The episode's goal: the intent's `goal` when it is text, else the active goal.
    pub fn goal(&self) -> Option<&str> {
        self.decision.intent.get("goal").and_then(Value::as_str).or(self.context.active_goal.as_deref())
    }

    /// The goal a compressed form keeps, sharing the active goal when it is the same text.
    pub(crate) fn compressed_goal(&self) -> Option<Name> {
        match self.decision.intent.get("goal").and_then(Value::as_str) {
            Some(g) if self.context.active_goal.as_deref() != Some(g) => Some(Name::from(g)),
            _ => self.context.active_goal.clone(),
        }
    }

    /// `duration_ms`: the action's execution time.
    pub fn duration_ms(&self) -> f64 {
        self.action.execution_time_ms()
    }

    /// The keywords of §3.2, sorted and distinct: the lowercased objects and people, the
    /// words of the goal longer than two characters (lowercased), the lowercased tool name,
    /// and the words of the user's input longer than two characters (lowercased).
    pub fn keywords(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for o in self.perception.detected_objects.iter().chain(&self.perception.detected_people) {
            out.push(o.to_lowercase());
        }
        push_long_words(&mut out, self.goal());
        if !self.action.tool_name.is_empty() {
            out.push(self.action.tool_name.to_lowercase());
        }
        push_long_words(&mut out, self.perception.cli_input.as_deref());
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Checks every number the layer relies on: salience, novelty, fear level and confidence
    /// in `[0, 1]`; a use pressure finite and not negative; at most [`MAX_NAMES`] detected
    /// objects and people together. Trust is checked by its type.
    pub fn validate(&self) -> maxim_core::Result<()> {
        let names = self.perception.detected_objects.len() + self.perception.detected_people.len();
        if names > MAX_NAMES {
            return Err(maxim_core::Error::OutOfRange {
                field: "detected_objects + detected_people",
                value: names as f64,
                expected: "at most 128 names",
            });
        }
        check_unit("salience", self.perception.salience)?;
        check_unit("novelty", self.perception.novelty)?;
        check_unit("fear_level", self.context.fear_level)?;
        check_unit("confidence", self.decision.confidence)?;
        if let Some(u) = &self.usage {
            maxim_core::check_non_negative("promotion_pressure", u.pressure)?;
        }
        // The values a capture takes and a load reads pass one check, so nothing is stored
        // that cannot be read back.
        self.perception.observations.check("observations")?;
        self.decision.intent.check("intent")?;
        self.action.tool_params.check("tool_params")?;
        self.outcome.result.check("result")
    }

    /// Drops the episode, taking its free-form values apart without recursion (for a refused
    /// episode, whose values may nest arbitrarily deep).
    pub(crate) fn dispose_values(self) {
        use maxim_core::value::{Value, dispose};
        let Self { perception, decision, action, outcome, .. } = self;
        dispose(Value::Map(perception.observations));
        dispose(Value::Map(decision.intent));
        dispose(Value::Map(action.tool_params));
        dispose(outcome.result);
    }

    /// The compressed form of this episode, with `edge_count` outgoing associations.
    pub fn compress(&self, edge_count: u32) -> CompressedMemory {
        CompressedMemory::from_episodic(self, edge_count)
    }

    /// The summary the original called `to_context_dict`.
    pub fn summary(&self) -> EpisodeSummary {
        EpisodeSummary {
            id: self.meta.id,
            compressed: false,
            detected_objects: self.perception.detected_objects.iter().map(ToString::to_string).collect(),
            detected_people: self.perception.detected_people.iter().map(ToString::to_string).collect(),
            goal: self.goal().map(str::to_owned),
            tool: self.action.tool_name.to_string(),
            success: self.outcome.success,
            salience: self.perception.salience,
            novelty: self.perception.novelty,
            cli_input: self.perception.cli_input.clone(),
        }
    }
}

/// What a compressed episode keeps (§3.10): about 150 bytes encoded instead of the full
/// episode's several hundred (see the crate docs for the measured sizes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressedMemory {
    /// The fields every record carries.
    pub meta: RecordMeta,
    /// The run it belonged to.
    pub run_id: String,
    /// The episode's goal (the intent's, else the active goal).
    #[serde(with = "opt_name_serde")]
    pub goal: Option<Name>,
    /// The tool used.
    #[serde(with = "name_serde")]
    pub tool_name: Name,
    /// Whether it succeeded.
    pub success: Option<bool>,
    /// Whether the user spoke or typed.
    pub had_user_input: bool,
    /// How many objects were seen.
    pub object_count: u32,
    /// Novelty, in `[0, 1]`.
    pub novelty: f64,
    /// Salience, in `[0, 1]`.
    pub salience: f64,
    /// Outgoing associations when it was compressed (the retention strategies' degree).
    pub edge_count: u32,
    /// Use-based promotion pressure, carried over.
    pub usage: Option<Box<UsePressure>>,
}

impl CompressedMemory {
    /// The compressed form of `m`, which had `edge_count` outgoing associations.
    pub fn from_episodic(m: &EpisodicMemory, edge_count: u32) -> Self {
        Self {
            meta: m.meta.clone(),
            run_id: m.run_id.clone(),
            goal: m.compressed_goal(),
            tool_name: Arc::clone(&m.action.tool_name),
            success: m.outcome.success,
            had_user_input: m.perception.had_user_input(),
            object_count: u32::try_from(m.perception.detected_objects.len()).unwrap_or(u32::MAX),
            novelty: m.perception.novelty,
            salience: m.perception.salience,
            edge_count,
            usage: m.usage.clone(),
        }
    }

    /// The keywords: the goal's words longer than two characters and the tool, lowercased.
    pub fn keywords(&self) -> Vec<String> {
        let mut out = Vec::new();
        push_long_words(&mut out, self.goal.as_deref());
        if !self.tool_name.is_empty() {
            out.push(self.tool_name.to_lowercase());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Checks salience, novelty and the use pressure as [`EpisodicMemory::validate`] does.
    pub fn validate(&self) -> maxim_core::Result<()> {
        check_unit("salience", self.salience)?;
        check_unit("novelty", self.novelty)?;
        if let Some(u) = &self.usage {
            maxim_core::check_non_negative("promotion_pressure", u.pressure)?;
        }
        Ok(())
    }

    /// The summary the original called `to_context_dict` (type `compressed_episodic`).
    pub fn summary(&self) -> EpisodeSummary {
        EpisodeSummary {
            id: self.meta.id,
            compressed: true,
            detected_objects: Vec::new(),
            detected_people: Vec::new(),
            goal: self.goal.as_deref().map(str::to_owned),
            tool: self.tool_name.to_string(),
            success: self.success,
            salience: self.salience,
            novelty: self.novelty,
            cli_input: None,
        }
    }
}

/// A short description of an episode, for prompts and inspection (`to_context_dict`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeSummary {
    /// The record's id.
    pub id: RecordId,
    /// True for a compressed episode (`compressed_episodic`), false for a full one
    /// (`episodic`).
    pub compressed: bool,
    /// Objects seen (empty once compressed).
    pub detected_objects: Vec<String>,
    /// People seen (empty once compressed).
    pub detected_people: Vec<String>,
    /// The goal.
    pub goal: Option<String>,
    /// The tool.
    pub tool: String,
    /// Whether it succeeded.
    pub success: Option<bool>,
    /// Salience.
    pub salience: f64,
    /// Novelty.
    pub novelty: f64,
    /// The user's input (none once compressed).
    pub cli_input: Option<String>,
}

/// A record of the episodic layer: a full episode or its compressed form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Episode {
    /// A full episode.
    Full(Box<EpisodicMemory>),
    /// A compressed episode.
    Compressed(Box<CompressedMemory>),
}

impl From<EpisodicMemory> for Episode {
    fn from(m: EpisodicMemory) -> Self {
        Self::Full(Box::new(m))
    }
}

impl From<CompressedMemory> for Episode {
    fn from(c: CompressedMemory) -> Self {
        Self::Compressed(Box::new(c))
    }
}

impl Episode {
    /// The shared fields.
    pub fn meta(&self) -> &RecordMeta {
        match self {
            Self::Full(m) => &m.meta,
            Self::Compressed(c) => &c.meta,
        }
    }

    pub(crate) fn meta_mut(&mut self) -> &mut RecordMeta {
        match self {
            Self::Full(m) => &mut m.meta,
            Self::Compressed(c) => &mut c.meta,
        }
    }

    /// A read that counts as use at `now`: an access ([`RecordMeta::touch`]) and a
    /// reinforcement of the trace with `params` (0.1, or 0.3 in the imprint window). Never
    /// allocates.
    pub(crate) fn use_at(&mut self, now: Timestamp, params: &TraceParams) {
        let meta = self.meta_mut();
        meta.touch(now);
        // Episodic traces are never firmware: the reinforcement cannot be refused.
        let _ = meta.trace.reinforce(now, params);
    }

    /// The record's id.
    pub fn id(&self) -> RecordId {
        self.meta().id
    }

    /// The full episode, if this is one.
    pub fn as_full(&self) -> Option<&EpisodicMemory> {
        match self {
            Self::Full(m) => Some(m),
            Self::Compressed(_) => None,
        }
    }

    /// The compressed episode, if this is one.
    pub fn as_compressed(&self) -> Option<&CompressedMemory> {
        match self {
            Self::Full(_) => None,
            Self::Compressed(c) => Some(c),
        }
    }

    /// True for a compressed episode.
    pub fn is_compressed(&self) -> bool {
        matches!(self, Self::Compressed(_))
    }

    /// The goal (the intent's, else the active goal).
    pub fn goal(&self) -> Option<&str> {
        match self {
            Self::Full(m) => m.goal(),
            Self::Compressed(c) => c.goal.as_deref(),
        }
    }

    /// The goal the association weights compare: the active goal of a full episode (as the
    /// original does), the stored goal of a compressed one.
    pub(crate) fn association_goal(&self) -> Option<&Name> {
        match self {
            Self::Full(m) => m.context.active_goal.as_ref(),
            Self::Compressed(c) => c.goal.as_ref(),
        }
    }

    /// The tool used.
    pub fn tool_name(&self) -> &str {
        match self {
            Self::Full(m) => &m.action.tool_name,
            Self::Compressed(c) => &c.tool_name,
        }
    }

    /// Calls `f` with every interned name of the record, for the layer's name table.
    pub(crate) fn for_each_name_mut(&mut self, f: &mut dyn FnMut(&mut Name)) {
        match self {
            Self::Full(m) => {
                m.perception.detected_objects.iter_mut().for_each(&mut *f);
                m.perception.detected_people.iter_mut().for_each(&mut *f);
                m.context.active_goal.iter_mut().for_each(&mut *f);
                f(&mut m.context.active_mode);
                f(&mut m.action.tool_name);
            }
            Self::Compressed(c) => {
                c.goal.iter_mut().for_each(&mut *f);
                f(&mut c.tool_name);
            }
        }
    }

    /// Whether it succeeded.
    pub fn success(&self) -> Option<bool> {
        match self {
            Self::Full(m) => m.outcome.success,
            Self::Compressed(c) => c.success,
        }
    }

    /// Salience.
    pub fn salience(&self) -> f64 {
        match self {
            Self::Full(m) => m.perception.salience,
            Self::Compressed(c) => c.salience,
        }
    }

    /// Novelty.
    pub fn novelty(&self) -> f64 {
        match self {
            Self::Full(m) => m.perception.novelty,
            Self::Compressed(c) => c.novelty,
        }
    }

    /// Whether the user spoke or typed.
    pub fn had_user_input(&self) -> bool {
        match self {
            Self::Full(m) => m.perception.had_user_input(),
            Self::Compressed(c) => c.had_user_input,
        }
    }

    /// The use-based promotion pressure (0 when never scored).
    pub fn promotion_pressure(&self) -> f64 {
        self.usage().map_or(0.0, |u| u.pressure)
    }

    /// The use-based promotion state, once scored.
    pub fn usage(&self) -> Option<&UsePressure> {
        match self {
            Self::Full(m) => m.usage.as_deref(),
            Self::Compressed(c) => c.usage.as_deref(),
        }
    }

    pub(crate) fn usage_mut(&mut self) -> &mut Option<Box<UsePressure>> {
        match self {
            Self::Full(m) => &mut m.usage,
            Self::Compressed(c) => &mut c.usage,
        }
    }

    /// The keywords (see [`EpisodicMemory::keywords`] and [`CompressedMemory::keywords`]).
    pub fn keywords(&self) -> Vec<String> {
        match self {
            Self::Full(m) => m.keywords(),
            Self::Compressed(c) => c.keywords(),
        }
    }

    /// The summary (`to_context_dict`).
    pub fn summary(&self) -> EpisodeSummary {
        match self {
            Self::Full(m) => m.summary(),
            Self::Compressed(c) => c.summary(),
        }
    }

    /// Checks the numbers (see [`EpisodicMemory::validate`]).
    pub fn validate(&self) -> maxim_core::Result<()> {
        match self {
            Self::Full(m) => m.validate(),
            Self::Compressed(c) => c.validate(),
        }?;
        check_finite("trust", self.meta().trust.get()).map(drop)
    }

    /// Calls `visit` with each piece of text the episode holds, field by field, in the
    /// order of [`TextField::ALL`] (goal and tool only once compressed). Keyword recall,
    /// [`Hippocampus::search_by_content`](crate::Hippocampus::search_by_content) and the
    /// embedder all read the episode through this one walk.
    ///
    /// ```
    /// use hippocampus::{Episode, EpisodicMemory, TextField};
    /// use maxim_core::{RecordId, Timestamp};
    /// let mut m = EpisodicMemory::new(RecordId::from_u128(1), Timestamp::from_secs(1));
    /// m.perception.transcript = Some("we adopted a kitten".into());
    /// m.action.tool_name = "say".into();
    /// let mut seen = Vec::new();
    /// Episode::from(m).for_each_field_text(&mut |field, text| seen.push((field, text.to_owned())));
    /// assert_eq!(seen, [(TextField::Tool, "say".into()), (TextField::Transcript, "we adopted a kitten".into())]);
    /// ```
    pub fn for_each_field_text<'a>(&'a self, visit: &mut dyn FnMut(TextField, &'a str)) {
        let mut put = |field: TextField, text: &'a str| {
            if !text.is_empty() {
                visit(field, text);
            }
        };
        match self {
            Self::Full(m) => {
                let p = &m.perception;
                let goal = m.goal();
                if let Some(g) = goal {
                    put(TextField::Goal, g);
                }
                if let Some(active) = m.context.active_goal.as_deref()
                    && goal != Some(active)
                {
                    put(TextField::Goal, active);
                }
                for (k, v) in m.decision.intent.iter() {
                    if k != "goal" {
                        v.for_each_text(&mut |t| put(TextField::Goal, t));
                    }
                }
                put(TextField::Tool, &m.action.tool_name);
                p.detected_objects.iter().for_each(|o| put(TextField::Objects, o));
                p.detected_people.iter().for_each(|o| put(TextField::People, o));
                for said in [&p.cli_input, &p.transcript].into_iter().flatten() {
                    put(TextField::Transcript, said);
                }
                for (k, v) in p.observations.iter() {
                    put(TextField::Observations, k);
                    v.for_each_text(&mut |t| {
                        // A loop step keeps its input and transcript in the observations too.
                        if p.cli_input.as_deref() != Some(t) && p.transcript.as_deref() != Some(t) {
                            put(TextField::Observations, t);
                        }
                    });
                }
                m.outcome.result.for_each_text(&mut |t| put(TextField::Result, t));
                m.outcome.error.iter().for_each(|e| put(TextField::Result, e));
                m.decision.reasoning.iter().for_each(|r| put(TextField::Reasoning, r));
                put(TextField::Reasoning, &p.decision_rationale);
                put(TextField::Result, outcome_words(m.outcome.success));
            }
            Self::Compressed(c) => {
                c.goal.as_deref().into_iter().for_each(|g| put(TextField::Goal, g));
                put(TextField::Tool, &c.tool_name);
                put(TextField::Result, outcome_words(self.success()));
            }
        }
    }

    /// Calls `visit` with each piece of text of [`for_each_field_text`](Self::for_each_field_text),
    /// without its field.
    pub fn for_each_text<'a>(&'a self, visit: &mut dyn FnMut(&'a str)) {
        self.for_each_field_text(&mut |_, text| visit(text));
    }

    /// The text and weight of every field piece, as the lexical index takes them.
    pub(crate) fn lexical_fields(&self) -> Vec<(&str, f32)> {
        let mut out = Vec::with_capacity(12);
        self.for_each_field_text(&mut |field, text| out.push((text, field.weight())));
        out
    }
}

/// The outcome in words, so that "what failed?" finds the failures: `failed` or
/// `succeeded`, nothing when unknown.
fn outcome_words(success: Option<bool>) -> &'static str {
    match success {
        Some(true) => "succeeded",
        Some(false) => "failed",
        None => "",
    }
}

/// The fields of an episode that hold text, declared once: keyword recall, content search
/// and the embedder read the same ones ([`Episode::for_each_field_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TextField {
    /// The goal: the intent's goal, the active goal when it differs, the intent's other
    /// text values.
    Goal,
    /// The tool's name.
    Tool,
    /// The detected objects.
    Objects,
    /// The detected people.
    People,
    /// What the user typed (`cli_input`) and what was said (`transcript`).
    Transcript,
    /// The observations: keys and text values.
    Observations,
    /// The outcome's result (text values) and error.
    Result,
    /// The decision's reasoning and the rationale.
    Reasoning,
}

impl TextField {
    /// Every field, in the order [`Episode::for_each_field_text`] visits them.
    pub const ALL: [Self; 8] = [
        Self::Goal,
        Self::Tool,
        Self::Objects,
        Self::People,
        Self::Transcript,
        Self::Observations,
        Self::Result,
        Self::Reasoning,
    ];

    /// The field's weight in keyword recall (BM25 term frequency and length): 1.5 for the
    /// goal and the objects, which name what the episode is about, 1 for the rest.
    ///
    /// ```
    /// use hippocampus::TextField;
    /// assert_eq!(TextField::Goal.weight(), 1.5);
    /// assert_eq!(TextField::Transcript.weight(), 1.0);
    /// ```
    pub fn weight(self) -> f32 {
        match self {
            Self::Goal | Self::Objects => 1.5,
            _ => 1.0,
        }
    }

    /// The field's name, lowercase.
    pub fn name(self) -> &'static str {
        match self {
            Self::Goal => "goal",
            Self::Tool => "tool",
            Self::Objects => "objects",
            Self::People => "people",
            Self::Transcript => "transcript",
            Self::Observations => "observations",
            Self::Result => "result",
            Self::Reasoning => "reasoning",
        }
    }
}

impl MemoryRecord for Episode {
    fn meta(&self) -> &RecordMeta {
        Episode::meta(self)
    }

    fn meta_mut(&mut self) -> &mut RecordMeta {
        Episode::meta_mut(self)
    }

    fn is_compressed(&self) -> bool {
        Episode::is_compressed(self)
    }

    fn describe(&self) -> String {
        match (self.goal(), self.tool_name()) {
            (Some(g), _) => g.to_owned(),
            (None, t) if !t.is_empty() => t.to_owned(),
            _ => "(episode without goal)".to_owned(),
        }
    }
}

/// Serde for a [`Name`]: as text.
mod name_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Name;

    pub(super) fn serialize<S: Serializer>(name: &Name, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(name)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        String::deserialize(d).map(Name::from)
    }
}

/// Serde for an optional [`Name`].
mod opt_name_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Name;

    #[expect(clippy::ref_option, reason = "serde's `with` passes a reference to the field")]
    pub(super) fn serialize<S: Serializer>(name: &Option<Name>, s: S) -> Result<S::Ok, S::Error> {
        name.as_deref().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Name>, D::Error> {
        Option::<String>::deserialize(d).map(|n| n.map(Name::from))
    }
}

/// Serde for a list of [`Name`]s.
mod names_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Name;

    pub(super) fn serialize<S: Serializer>(names: &[Name], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(names.iter().map(|n| &**n))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Name>, D::Error> {
        Vec::<String>::deserialize(d).map(|v| v.into_iter().map(Name::from).collect())
    }
}

/// Pushes the lowercased whitespace-separated words of `text` longer than two characters.
fn push_long_words(out: &mut Vec<String>, text: Option<&str>) {
    for word in text.unwrap_or_default().split_whitespace() {
        if word.chars().count() > 2 {
            out.push(word.to_lowercase());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> EpisodicMemory {
        let mut m = EpisodicMemory::new(RecordId::from_u128(9), Timestamp::from_secs(100));
        m.perception.detected_objects = vec!["mug".into(), "table".into()];
        m.perception.cli_input = Some("find the mug".into());
        m.context.active_goal = Some("find mug".into());
        m.action.tool_name = "look_around".into();
        m.outcome.success = Some(true);
        m
    }

    #[test]
    fn defaults_follow_the_reference() {
        let m = EpisodicMemory::new(RecordId::from_u128(1), Timestamp::from_secs(5));
        assert_eq!((m.perception.salience, m.perception.novelty), (0.5, 0.5));
        assert_eq!(&*m.context.active_mode, "observe");
        assert_eq!(m.decision.confidence, 1.0);
        assert_eq!(m.meta.access_count, 1);
        assert_eq!(m.meta.trace.kind(), TraceKind::Episodic);
        assert_eq!(m.meta.source, Source::Episodic);
        assert_eq!(m.outcome.success, None);
        assert_eq!(m.duration_ms(), 0.0);
    }

    #[test]
    fn goal_prefers_the_intent_and_ignores_non_text() {
        let mut m = sample();
        assert_eq!(m.goal(), Some("find mug"));
        m.decision.intent.insert("goal", Value::from(3i64));
        assert_eq!(m.goal(), Some("find mug"));
        m.decision.intent.insert("goal", Value::from("grab mug"));
        assert_eq!(m.goal(), Some("grab mug"));
    }

    #[test]
    fn keywords_and_summary() {
        let m = sample();
        assert_eq!(m.keywords(), ["find", "look_around", "mug", "table", "the"]);
        let s = m.summary();
        assert_eq!(s.goal.as_deref(), Some("find mug"));
        assert!(!s.compressed);
        let c = Episode::from(m.compress(2));
        assert_eq!(c.keywords(), ["find", "look_around", "mug"]);
        assert!(c.summary().compressed);
        assert!(c.had_user_input());
        assert_eq!(c.describe(), "find mug");
    }

    #[test]
    fn execution_time_is_derived() {
        let mut m = sample();
        m.action.execution_start = Some(Timestamp::from_secs(10));
        m.action.execution_end = Some(Timestamp::from_micros(10_250_000));
        assert_eq!(m.duration_ms(), 250.0);
    }

    #[test]
    fn validation_refuses_bad_numbers() {
        for f in [
            |m: &mut EpisodicMemory| m.perception.salience = f64::NAN,
            |m: &mut EpisodicMemory| m.perception.novelty = 1.5,
            |m: &mut EpisodicMemory| m.context.fear_level = -0.1,
            |m: &mut EpisodicMemory| m.decision.confidence = f64::INFINITY,
        ] {
            let mut m = sample();
            f(&mut m);
            assert!(m.validate().is_err());
        }
        assert!(sample().validate().is_ok());
    }

    #[test]
    fn every_field_is_walked_once() {
        let mut m = sample();
        m.perception.observations.insert("Room", Value::from("Kitchen"));
        m.perception.observations.insert("said", Value::from("find the mug"));
        m.perception.transcript = Some("hello there".into());
        m.perception.detected_people = vec!["Ana".into()];
        m.decision.intent.insert("goal", Value::from("find mug"));
        m.decision.intent.insert("target", Value::from("blue mug"));
        m.outcome.result = Value::Map([("found", Value::from("Blue MUG"))].into_iter().collect());
        m.outcome.error = Some("slipped".into());
        m.decision.reasoning = Some("it was dark".into());
        m.perception.decision_rationale = "closest".into();
        let e = Episode::from(m);
        let mut seen = Vec::new();
        e.for_each_field_text(&mut |f, t| seen.push((f.name(), t.to_owned())));
        let want = [
            ("goal", "find mug"),
            ("goal", "blue mug"),
            ("tool", "look_around"),
            ("objects", "mug"),
            ("objects", "table"),
            ("people", "Ana"),
            ("transcript", "find the mug"),
            ("transcript", "hello there"),
            ("observations", "Room"),
            ("observations", "Kitchen"),
            ("observations", "said"),
            ("result", "Blue MUG"),
            ("result", "slipped"),
            ("reasoning", "it was dark"),
            ("reasoning", "closest"),
            ("result", "succeeded"),
        ];
        assert_eq!(seen, want.map(|(f, t)| (f, t.to_owned())));
        let fields = e.lexical_fields();
        assert_eq!(fields.len(), want.len());
        assert_eq!(fields[0], ("find mug", 1.5));
        let mut texts = Vec::new();
        Episode::from(sample().compress(0)).for_each_field_text(&mut |f, t| texts.push((f, t.to_owned())));
        let want = [
            (TextField::Goal, "find mug".into()),
            (TextField::Tool, "look_around".into()),
            (TextField::Result, "succeeded".into()),
        ];
        assert_eq!(texts, want);
    }
}
