//! Concept extraction: what an episode names, as concepts for the semantic layer
//! (`spec/maxim-reference.md` §13, the ConceptExtractor).
//!
//! [`extract`] reads one [`Episode`] and returns an [`Extraction`]: the concepts it names,
//! each an [`ExtractedConcept`] with a [`Category`] and the definition `"<category>: <name>"`,
//! and the inline relationships between them. The hub hands each concept to the ATL's
//! `find_or_create` (an exact or similar name reinforces the concept it finds), links the
//! episode to it by an INSTANCE_OF cross-layer edge of weight [`INSTANCE_OF_WEIGHT`], and
//! defines each relationship with weight [`INLINE_WEIGHT`] and confidence
//! [`INLINE_CONFIDENCE`] (an existing one gains [`INLINE_CONFIDENCE_STEP`]). Extraction itself
//! is pure: it reads the episode and touches no store, so it needs no lock and no clock.
//!
//! What is extracted, in this order (§13):
//!
//! 1. each detected object, lowercased, as an [`Category::Object`];
//! 2. each detected person, as a [`Category::Person`] (case kept, as the reference does);
//! 3. the observation `location`, else `room`, when it is text, lowercased, as a
//!    [`Category::Location`];
//! 4. each token of the active goal (else of the intent's goal) after
//!    [`normalize_tokens`](maxim_core::text::normalize_tokens), as a [`Category::Goal`];
//! 5. the tool name as a [`Category::Action`].
//!
//! Names are trimmed; a name without a letter or digit is skipped (the ATL refuses it), and
//! a name seen twice in one category (ignoring case) is kept once, at its first place. A
//! compressed episode keeps only its goal and its tool, so that is what it yields.
//!
//! **Inline relationships.** The concepts are paired in order (`i < j`, the first of the pair
//! is the source); a pair qualifies when one of the two is a goal or an action, or neither
//! is an object, and [`RelationKind::between`] names its type: goal with action →
//! `HAS_PART`; person with location, or action with object → `RELATED_TO`; any other
//! qualifying pair → `ASSOCIATES`. At most [`MAX_INLINE_RELATIONS`] pairs are returned, the
//! first ones in that order. (The reference's table also lists object–location,
//! person–object and object–object as `RELATED_TO`; those pairs never qualify, so they never
//! occur.)
//!
//! ```
//! use maxim::extract::{Category, RelationKind, extract};
//! use maxim::hippocampus::{Episode, EpisodicMemory};
//! use maxim::maxim_core::{RecordId, Timestamp};
//!
//! let mut m = EpisodicMemory::new(RecordId::from_u128(1), Timestamp::from_secs(0));
//! m.perception.detected_objects = vec!["Coffee_Mug".into(), "coffee_mug".into()];
//! m.context.active_goal = Some("navigate_to_kitchen".into());
//! m.action.tool_name = "navigate".into();
//! let found = extract(&Episode::from(m));
//!
//! let names: Vec<_> = found.concepts.iter().map(|c| (c.name.as_str(), c.category)).collect();
//! assert_eq!(names, [
//!     ("coffee_mug", Category::Object),
//!     ("navigate", Category::Goal),
//!     ("kitchen", Category::Goal),
//!     ("navigate", Category::Action),
//! ]);
//! assert_eq!(found.concepts[0].definition, "object: coffee_mug");
//! use RelationKind::{Associates, HasPart, RelatedTo};
//! assert_eq!(found.relations, [
//!     (0, 1, Associates), (0, 2, Associates), (0, 3, RelatedTo),
//!     (1, 2, Associates), (1, 3, HasPart), (2, 3, HasPart),
//! ]);
//! ```

use std::fmt;

use hippocampus::Episode;
use maxim_core::text::for_each_token;
use maxim_core::{ConceptProvenance, ConceptSpec, MemoryRecord, value::Value};

/// Most inline relationships one episode yields (§13: six, reinforcements included).
pub const MAX_INLINE_RELATIONS: usize = 6;
/// The weight of a new inline relationship (§13).
pub const INLINE_WEIGHT: f64 = 0.3;
/// The confidence of a new inline relationship (§13).
pub const INLINE_CONFIDENCE: f64 = 0.3;
/// What an inline relationship that already exists gains in confidence when an episode
/// names its two concepts again (§13).
pub const INLINE_CONFIDENCE_STEP: f64 = 0.05;
/// The weight of the INSTANCE_OF cross-layer edge from an episode to each of its concepts.
pub const INSTANCE_OF_WEIGHT: f64 = 1.0;

/// The category of an extracted concept, named as the ATL names it ([`Category::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// A detected object (`object`).
    Object,
    /// A detected person (`person`).
    Person,
    /// Where the episode happened (`location`).
    Location,
    /// A word of the goal (`goal`).
    Goal,
    /// The tool used (`action`).
    Action,
}

impl Category {
    /// Every category, in extraction order.
    pub const ALL: [Self; 5] = [Self::Object, Self::Person, Self::Location, Self::Goal, Self::Action];

    /// The category as the ATL stores it: `object`, `person`, `location`, `goal`, `action`.
    ///
    /// ```
    /// assert_eq!(maxim::extract::Category::Action.as_str(), "action");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Person => "person",
            Self::Location => "location",
            Self::Goal => "goal",
            Self::Action => "action",
        }
    }

    /// The category named `name` (as [`Category::as_str`] writes it), if it is one of these.
    ///
    /// ```
    /// use maxim::extract::Category;
    /// assert_eq!(Category::parse("goal"), Some(Category::Goal));
    /// assert_eq!(Category::parse("causal_pattern"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// True for a goal or an action: such a concept relates to every other concept of its
    /// episode.
    pub const fn is_goal_or_action(self) -> bool {
        matches!(self, Self::Goal | Self::Action)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The type of an inline relationship, named as the ATL's relationship registry names it
/// ([`RelationKind::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelationKind {
    /// A goal and the action taken for it (`HAS_PART`).
    HasPart,
    /// A person and a location, or an action and an object (`RELATED_TO`).
    RelatedTo,
    /// Any other pair that qualifies (`ASSOCIATES`).
    Associates,
}

impl RelationKind {
    /// The type's name in the ATL's registry: `HAS_PART`, `RELATED_TO`, `ASSOCIATES`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::HasPart => "HAS_PART",
            Self::RelatedTo => "RELATED_TO",
            Self::Associates => "ASSOCIATES",
        }
    }

    /// The type of the inline relationship between concepts of categories `a` and `b`
    /// (either order), or `None` when the pair does not qualify (neither is a goal or an
    /// action, and one is an object).
    ///
    /// ```
    /// use maxim::extract::{Category::*, RelationKind};
    /// assert_eq!(RelationKind::between(Goal, Action), Some(RelationKind::HasPart));
    /// assert_eq!(RelationKind::between(Location, Person), Some(RelationKind::RelatedTo));
    /// assert_eq!(RelationKind::between(Object, Action), Some(RelationKind::RelatedTo));
    /// assert_eq!(RelationKind::between(Goal, Goal), Some(RelationKind::Associates));
    /// assert_eq!(RelationKind::between(Object, Location), None);
    /// ```
    pub fn between(a: Category, b: Category) -> Option<Self> {
        use Category::{Action, Goal, Location, Object, Person};
        let qualifies = a.is_goal_or_action() || b.is_goal_or_action() || (a != Object && b != Object);
        if !qualifies {
            return None;
        }
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        Some(match (lo, hi) {
            (Goal, Action) => Self::HasPart,
            (Person, Location) | (Object, Action) => Self::RelatedTo,
            _ => Self::Associates,
        })
    }
}

impl fmt::Display for RelationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One concept an episode names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedConcept {
    /// The name (trimmed; lowercased for objects, locations and goal tokens).
    pub name: String,
    /// The category.
    pub category: Category,
    /// `"<category>: <name>"`.
    pub definition: String,
}

impl ExtractedConcept {
    /// A concept named `name` in `category`, with its definition.
    pub fn new(name: impl Into<String>, category: Category) -> Self {
        let name = name.into();
        let category_name = category.as_str();
        let mut definition = String::with_capacity(category_name.len() + 2 + name.len());
        definition.push_str(category_name);
        definition.push_str(": ");
        definition.push_str(&name);
        Self { name, category, definition }
    }

    /// What the ATL's `find_or_create` takes for this concept found in `episode`: formed by
    /// episodic consolidation, crediting the episode, with the episode's source and trust (a
    /// concept is no more trustworthy than what it was read from).
    ///
    /// ```
    /// use maxim::extract::{Category, ExtractedConcept};
    /// use maxim::hippocampus::{Episode, EpisodicMemory};
    /// use maxim::maxim_core::{RecordId, Timestamp};
    /// let episode = Episode::from(EpisodicMemory::new(RecordId::from_u128(7), Timestamp::from_secs(0)));
    /// let spec = ExtractedConcept::new("mug", Category::Object).spec(&episode);
    /// assert_eq!((spec.name.as_str(), spec.category.as_str()), ("mug", "object"));
    /// assert_eq!(spec.source_episode, Some(RecordId::from_u128(7)));
    /// assert_eq!(spec.trust, 0.6);
    /// ```
    pub fn spec(&self, episode: &Episode) -> ConceptSpec {
        let meta = MemoryRecord::meta(episode);
        ConceptSpec {
            name: self.name.clone(),
            category: self.category.as_str().to_owned(),
            definition: self.definition.clone(),
            provenance: ConceptProvenance::EpisodicConsolidation,
            source_episode: Some(meta.id),
            source: meta.source.clone(),
            trust: meta.trust.get(),
        }
    }
}

/// What one episode yields: its concepts and the inline relationships between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    /// The concepts, in extraction order, each (category, name) once.
    pub concepts: Vec<ExtractedConcept>,
    /// The inline relationships `(source, target, type)`, as indices into `concepts`
    /// (`source < target`), at most [`MAX_INLINE_RELATIONS`].
    pub relations: Vec<(usize, usize, RelationKind)>,
}

impl Extraction {
    /// True when the episode named nothing.
    pub fn is_empty(&self) -> bool {
        self.concepts.is_empty()
    }
}

/// The concepts and inline relationships of `episode` (see the [module docs](self)).
pub fn extract(episode: &Episode) -> Extraction {
    let mut out = Extraction::default();
    match episode {
        Episode::Full(m) => {
            let p = &m.perception;
            for o in &p.detected_objects {
                push_lower(&mut out.concepts, o, Category::Object);
            }
            for person in &p.detected_people {
                push(&mut out.concepts, person.trim(), Category::Person);
            }
            let place = p.observations.get("location").and_then(Value::as_str);
            if let Some(place) = place.or_else(|| p.observations.get("room").and_then(Value::as_str)) {
                push_lower(&mut out.concepts, place, Category::Location);
            }
            let intent_goal = m.decision.intent.get("goal").and_then(Value::as_str);
            if let Some(goal) = m.context.active_goal.as_deref().or(intent_goal) {
                push_goal_tokens(&mut out.concepts, goal);
            }
            push(&mut out.concepts, m.action.tool_name.trim(), Category::Action);
        }
        Episode::Compressed(c) => {
            if let Some(goal) = c.goal.as_deref() {
                push_goal_tokens(&mut out.concepts, goal);
            }
            push(&mut out.concepts, c.tool_name.trim(), Category::Action);
        }
    }
    out.relations = inline_relations(&out.concepts);
    out
}

/// The first [`MAX_INLINE_RELATIONS`] qualifying pairs of `concepts`, in order.
fn inline_relations(concepts: &[ExtractedConcept]) -> Vec<(usize, usize, RelationKind)> {
    let mut out = Vec::new();
    for (i, a) in concepts.iter().enumerate() {
        for (j, b) in concepts.iter().enumerate().skip(i + 1) {
            if let Some(kind) = RelationKind::between(a.category, b.category) {
                out.push((i, j, kind));
                if out.len() == MAX_INLINE_RELATIONS {
                    return out;
                }
            }
        }
    }
    out
}

/// Pushes the normalised tokens of `goal` as goal concepts.
fn push_goal_tokens(out: &mut Vec<ExtractedConcept>, goal: &str) {
    for_each_token(goal, |token| push(out, token, Category::Goal));
}

/// Pushes `name` trimmed and lowercased.
fn push_lower(out: &mut Vec<ExtractedConcept>, name: &str, category: Category) {
    let name = name.trim();
    if name.chars().any(char::is_uppercase) {
        push(out, &name.to_lowercase(), category);
    } else {
        push(out, name, category);
    }
}

/// Pushes `name` (already trimmed) unless it has no letter or digit or the same category
/// already holds it (ignoring case).
fn push(out: &mut Vec<ExtractedConcept>, name: &str, category: Category) {
    if !name.chars().any(char::is_alphanumeric) {
        return;
    }
    let seen = out.iter().any(|c| c.category == category && same_ignoring_case(&c.name, name));
    if !seen {
        out.push(ExtractedConcept::new(name, category));
    }
}

/// Whether `a` and `b` are equal ignoring case.
fn same_ignoring_case(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
    }
}

#[cfg(test)]
mod tests {
    use hippocampus::EpisodicMemory;
    use maxim_core::{RecordId, Source, Timestamp, Trust};

    use super::Category::{Action, Goal, Location, Object, Person};
    use super::RelationKind::{Associates, HasPart, RelatedTo};
    use super::*;

    fn episode() -> EpisodicMemory {
        EpisodicMemory::new(RecordId::from_u128(3), Timestamp::from_secs(1_700_000_000))
    }

    fn names(x: &Extraction) -> Vec<(&str, Category)> {
        x.concepts.iter().map(|c| (c.name.as_str(), c.category)).collect()
    }

    #[test]
    fn every_part_of_section_13_in_order() {
        let mut m = episode();
        m.perception.detected_objects = vec!["Mug".into(), " table ".into()];
        m.perception.detected_people = vec!["Alice".into()];
        m.perception.observations.insert("location", Value::from("Kitchen"));
        m.perception.observations.insert("room", Value::from("pantry"));
        m.context.active_goal = Some("grasping the mugs".into());
        m.action.tool_name = "grasp".into();
        let x = extract(&Episode::from(m));
        assert_eq!(
            names(&x),
            [
                ("mug", Object),
                ("table", Object),
                ("Alice", Person),
                ("kitchen", Location),
                ("grasp", Goal),
                ("mug", Goal),
                ("grasp", Action)
            ]
        );
        let defs: Vec<_> = x.concepts.iter().map(|c| c.definition.as_str()).collect();
        assert_eq!(defs[2], "person: Alice");
        assert_eq!(defs[3], "location: kitchen");
        assert_eq!(defs[6], "action: grasp");
        // Objects pair only with goals and actions; six pairs at most.
        assert_eq!(
            x.relations,
            [
                (0, 4, Associates),
                (0, 5, Associates),
                (0, 6, RelatedTo),
                (1, 4, Associates),
                (1, 5, Associates),
                (1, 6, RelatedTo)
            ]
        );
    }

    #[test]
    fn room_is_read_when_there_is_no_location_and_only_text_counts() {
        let mut m = episode();
        m.perception.observations.insert("room", Value::from("Garage"));
        m.perception.detected_people = vec!["bob".into()];
        let x = extract(&Episode::from(m.clone()));
        assert_eq!(names(&x), [("bob", Person), ("garage", Location)]);
        assert_eq!(x.relations, [(0, 1, RelatedTo)]);
        m.perception.observations.insert("location", Value::from(3i64));
        assert_eq!(names(&extract(&Episode::from(m))), [("bob", Person), ("garage", Location)]);
    }

    #[test]
    fn goal_tokens_are_normalised_and_the_intent_goal_is_the_fallback() {
        let mut m = episode();
        m.context.active_goal = Some("navigate_to_kitchen".into());
        assert_eq!(names(&extract(&Episode::from(m.clone()))), [("navigate", Goal), ("kitchen", Goal)]);
        m.context.active_goal = None;
        m.decision.intent.insert("goal", Value::from("carried batteries"));
        assert_eq!(names(&extract(&Episode::from(m))), [("carry", Goal), ("battery", Goal)]);
    }

    #[test]
    fn duplicates_and_nameless_names_are_skipped() {
        let mut m = episode();
        m.perception.detected_objects =
            vec!["MUG".into(), "mug".into(), "  ".into(), "--".into(), "Mug ".into()];
        m.perception.detected_people = vec!["Émile".into(), "émile".into()];
        m.context.active_goal = Some("mug mugs".into());
        m.action.tool_name = " ".into();
        let x = extract(&Episode::from(m));
        // The same name in another category is another concept.
        assert_eq!(names(&x), [("mug", Object), ("Émile", Person), ("mug", Goal)]);
        assert_eq!(x.relations, [(0, 2, Associates), (1, 2, Associates)]);
    }

    #[test]
    fn an_empty_episode_names_nothing() {
        let x = extract(&Episode::from(episode()));
        assert!(x.is_empty() && x.relations.is_empty());
    }

    #[test]
    fn compressed_episodes_yield_their_goal_and_tool() {
        let mut m = episode();
        m.perception.detected_objects = vec!["mug".into()];
        m.context.active_goal = Some("find mug".into());
        m.action.tool_name = "look_around".into();
        let c = Episode::from(m.compress(0));
        let x = extract(&c);
        assert_eq!(names(&x), [("find", Goal), ("mug", Goal), ("look_around", Action)]);
        assert_eq!(x.relations, [(0, 1, Associates), (0, 2, HasPart), (1, 2, HasPart)]);
    }

    #[test]
    fn the_type_table() {
        for a in Category::ALL {
            for b in Category::ALL {
                let kind = RelationKind::between(a, b);
                assert_eq!(kind, RelationKind::between(b, a), "{a} {b}");
                let expected = match (a, b) {
                    (Goal, Action) | (Action, Goal) => Some(HasPart),
                    (Person, Location) | (Location, Person) | (Action, Object) | (Object, Action) => {
                        Some(RelatedTo)
                    }
                    (Object, Object | Person | Location) | (Person | Location, Object) => None,
                    _ => Some(Associates),
                };
                assert_eq!(kind, expected, "{a} {b}");
            }
        }
        assert_eq!(HasPart.to_string(), "HAS_PART");
        assert_eq!(Category::parse("location"), Some(Location));
    }

    #[test]
    fn specs_carry_the_episode_and_its_source() {
        let mut m = episode();
        m.meta.source = Source::web("example.com").unwrap();
        m.meta.trust = Trust::new(0.3).unwrap();
        let e = Episode::from(m);
        let spec = ExtractedConcept::new("kitchen", Location).spec(&e);
        assert_eq!(spec.definition, "location: kitchen");
        assert_eq!(spec.source, Source::Web("example.com".into()));
        assert_eq!((spec.trust, spec.source_episode), (0.3, Some(RecordId::from_u128(3))));
        assert_eq!(spec.provenance, ConceptProvenance::EpisodicConsolidation);
    }
}
