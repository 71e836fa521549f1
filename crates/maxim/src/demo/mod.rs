//! The demo's world: a robot in a house, day after day, as a deterministic scenario.
//!
//! A [`Scenario`] (a seed and a number of days) produces, for each simulated day, the
//! episodes a house robot lives through, each with the time it is captured, its [`Source`]
//! and its trust. The `maxim` program's `demo` drives a memory with them on a
//! [`ManualClock`](maxim_core::ManualClock) (one day is one session), and the hub's
//! integration test drives the same days. What is planted, and can be recovered from the
//! data alone:
//!
//! - **Navigation declines.** The `navigate` tool is tried every half hour, day and night;
//!   it succeeds with probability [`navigate_success_probability`]: a base rate falling by
//!   [`DECLINE_PER_DAY`] (2 %) a day, plus a daily cosine of amplitude [`AMPLITUDE`] peaking
//!   at [`PEAK_PHASE`] of the day (07:12 UTC), so it is worst in the evening (19:12 UTC,
//!   phase 0.8).
//! - **Grasping mugs mostly succeeds** ([`MUG_GRASP_SUCCESS`]); other objects a little less.
//! - **A contradiction.** On day 0, Alice tells the robot that the blue mug is dishwasher
//!   safe ([`Source::UserStated`], trust 0.9); that evening a web page says it is not
//!   ([`Source::Web`], trust 0.3). Both episodes carry a [`Claim`].
//! - **A skill.** On day 0, a verified multi-step run ("make tea") whose
//!   [`RunTrace`] and verified [`Outcome`] the cerebellum distils into a skill
//!   ([`SkillRun`]).
//!
//! Days are numbered from [`START`] (a Monday, 00:00 UTC); [`Scenario::day`] makes any day on
//! its own, so a second run can continue where a memory left off. Everything is drawn from a
//! seeded [`SplitMix64`] per day: the same seed gives the same days, bit for bit.
//!
//! ```
//! use maxim::demo::{Scenario, SuccessSeries};
//! let scenario = Scenario { seed: 7, days: 14 };
//! let days: Vec<_> = scenario.days().collect();
//! assert_eq!(days.len(), 14);
//! assert!(days[0].events.iter().any(|e| e.claim.is_some()));
//! assert!(days[0].skill_run.is_some());
//! // The navigate tool's daily success falls by about 2 % a day.
//! let series = SuccessSeries::from_outcomes(days.iter().flat_map(|d| d.navigate_outcomes()));
//! let first = series.by_day.first().unwrap().rate;
//! let last = series.by_day.last().unwrap().rate;
//! assert!(first - last > 0.15);
//! ```

mod series;
#[cfg(test)]
mod tests;

use std::time::Duration;

use cerebellum::{Outcome, RunTrace, Step};
use hippocampus::NewEpisode;
use maxim_core::{Map, Source, SplitMix64, Timestamp, Value};

pub use series::{Point, SuccessSeries};

/// Day 0 of every scenario: Monday 5 January 2026, 00:00 UTC.
pub const START: Timestamp = Timestamp::from_secs(1_767_571_200);
/// Seconds in a day.
pub const DAY_SECS: i64 = 86_400;
/// The navigate tool's success at the start, averaged over the day.
pub const BASE_SUCCESS: f64 = 0.85;
/// How much the navigate tool's success falls per day.
pub const DECLINE_PER_DAY: f64 = 0.02;
/// The amplitude of its daily rhythm.
pub const AMPLITUDE: f64 = 0.12;
/// Where in the day (UTC) its success peaks, as a phase in `[0, 1)`: 0.3 is 07:12; the
/// trough is half a day later, at phase 0.8 (19:12, the evening).
pub const PEAK_PHASE: f64 = 0.3;
/// How often grasping a mug succeeds.
pub const MUG_GRASP_SUCCESS: f64 = 0.93;
/// How often grasping anything else succeeds.
pub const OTHER_GRASP_SUCCESS: f64 = 0.8;
/// Navigation attempts per day (one every half hour).
pub const NAVIGATIONS_PER_DAY: usize = 48;
/// Grasps per day.
pub const GRASPS_PER_DAY: usize = 12;
/// Looks around per day.
pub const LOOKS_PER_DAY: usize = 6;
/// The navigate tool's name.
pub const NAVIGATE: &str = "navigate";
/// The grasp tool's name.
pub const GRASP: &str = "grasp";
/// The domain of the web page that contradicts Alice.
pub const WEB_DOMAIN: &str = "kitchenware.example";
/// The goal of the day-0 skill run.
pub const TEA_GOAL: &str = "make tea";

/// The rooms of the house, with the objects each holds.
pub const ROOMS: [(&str, &[&str]); 6] = [
    ("kitchen", &["mug", "kettle", "plate"]),
    ("living room", &["remote", "book", "lamp"]),
    ("bedroom", &["pillow", "alarm clock"]),
    ("hallway", &["keys", "umbrella"]),
    ("office", &["laptop", "charger"]),
    ("garage", &["toolbox", "bicycle"]),
];
/// The people in the house.
pub const PEOPLE: [&str; 2] = ["alice", "bob"];
/// What a failed navigation runs into.
pub const OBSTACLES: [&str; 4] = ["chair", "shoes", "closed door", "laundry basket"];

/// A seeded run of days in the house.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// The seed of every draw.
    pub seed: u64,
    /// How many days [`days`](Self::days) yields.
    pub days: u32,
}

impl Default for Scenario {
    /// Two weeks with seed 7.
    fn default() -> Self {
        Self { seed: 7, days: 14 }
    }
}

/// One simulated day: a session of the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Day {
    /// The day's number, counted from [`START`].
    pub index: u32,
    /// Its midnight (UTC).
    pub start: Timestamp,
    /// Its episodes in the order they are captured (times never decrease).
    pub events: Vec<Event>,
    /// The verified multi-step run of the day, if there is one.
    pub skill_run: Option<SkillRun>,
}

/// One episode and the time it is captured.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When it is captured (set the clock to it, then capture).
    pub at: Timestamp,
    /// The episode; its source and trust are set.
    pub episode: NewEpisode,
    /// The fact it states, if it states one.
    pub claim: Option<Claim>,
}

/// A fact an episode states about a thing: `subject.key = value`, from the episode's source.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// What the fact is about (a concept's name).
    pub subject: &'static str,
    /// The property.
    pub key: &'static str,
    /// Its value.
    pub value: &'static str,
    /// Who says so.
    pub source: Source,
    /// How far they are trusted.
    pub trust: f64,
}

/// A verified run to distil a skill from: the cerebellum's trace and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRun {
    /// When the run ended.
    pub at: Timestamp,
    /// What was done.
    pub trace: RunTrace,
    /// How it ended (verified).
    pub outcome: Outcome,
}

impl Scenario {
    /// Days `0..self.days`.
    pub fn days(&self) -> impl Iterator<Item = Day> + '_ {
        (0..self.days).map(|d| self.day(d))
    }

    /// Days `first..first + self.days`: the days a run continuing a memory lives through.
    pub fn days_from(&self, first: u32) -> impl Iterator<Item = Day> + '_ {
        (first..first.saturating_add(self.days)).map(|d| self.day(d))
    }

    /// Day `index` on its own (the same whichever days were made before).
    pub fn day(&self, index: u32) -> Day {
        let mut rng = SplitMix64::new(self.seed ^ (u64::from(index) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let start = day_start(index);
        let mut events = Vec::with_capacity(NAVIGATIONS_PER_DAY + GRASPS_PER_DAY + LOOKS_PER_DAY + 16);
        let run_id = format!("day-{index}");
        let mut room = 0usize;
        // Navigation: every half hour, day and night (the robot patrols), with up to 20
        // minutes of jitter, so each hour of the day gets two attempts.
        for slot in 0..NAVIGATIONS_PER_DAY {
            let secs = slot as i64 * 1800 + rng.below(1200) as i64;
            let at = start + Duration::from_secs(secs as u64);
            let hour = secs as f64 / 3600.0;
            let to = (room + 1 + rng.below(ROOMS.len() as u64 - 1) as usize) % ROOMS.len();
            let success = rng.uniform() < navigate_success_probability(index, hour);
            let obstacle = OBSTACLES[rng.below(OBSTACLES.len() as u64) as usize];
            events.push(Event { at, episode: navigate(&run_id, room, to, success, obstacle), claim: None });
            if success {
                room = to;
            }
        }
        // Grasps while people are up (07:00 to 22:00): mostly mugs.
        for _ in 0..GRASPS_PER_DAY {
            let at = start + Duration::from_secs(7 * 3600 + rng.below(15 * 3600));
            let (where_, object) = if rng.uniform() < 2.0 / 3.0 {
                (0, "mug")
            } else {
                let r = rng.below(ROOMS.len() as u64) as usize;
                (r, ROOMS[r].1[rng.below(ROOMS[r].1.len() as u64) as usize])
            };
            let p = if object == "mug" { MUG_GRASP_SUCCESS } else { OTHER_GRASP_SUCCESS };
            let success = rng.uniform() < p;
            events.push(Event { at, episode: grasp(&run_id, where_, object, success), claim: None });
        }
        // Looks around a room: sees what is there.
        for _ in 0..LOOKS_PER_DAY {
            let at = start + Duration::from_secs(6 * 3600 + rng.below(17 * 3600));
            let r = rng.below(ROOMS.len() as u64) as usize;
            events.push(Event { at, episode: look_around(&run_id, r), claim: None });
        }
        // Someone talks to the robot.
        for (i, person) in PEOPLE.iter().enumerate() {
            let at = start + Duration::from_secs((8 + 10 * i as u64) * 3600 + rng.below(3600));
            events.push(Event { at, episode: greeting(&run_id, person), claim: None });
        }
        let mut skill_run = None;
        if index == 0 {
            events.extend(contradiction(&run_id, start));
            let (run_events, run) = tea_run(start);
            events.extend(run_events);
            skill_run = Some(run);
        }
        events.sort_by_key(|e| e.at);
        Day { index, start, events, skill_run }
    }
}

impl Day {
    /// The capture times and outcomes of the day's navigate episodes.
    pub fn navigate_outcomes(&self) -> impl Iterator<Item = (Timestamp, bool)> + '_ {
        self.tool_outcomes(NAVIGATE)
    }

    /// The capture times and outcomes of the day's episodes using `tool`.
    pub fn tool_outcomes<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = (Timestamp, bool)> + 'a {
        self.events.iter().filter(move |e| &*e.episode.action.tool_name == tool).filter_map(|e| {
            let success = e.episode.outcome.success?;
            Some((e.at, success))
        })
    }

    /// The day's claims, in order.
    pub fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.events.iter().filter_map(|e| e.claim.as_ref())
    }
}

/// The planted probability that navigating succeeds on day `day` at `hour_of_day` (UTC):
/// `BASE_SUCCESS - DECLINE_PER_DAY * day + AMPLITUDE * cos(2π (hour / 24 - PEAK_PHASE))`,
/// kept within `[0.02, 0.98]`.
pub fn navigate_success_probability(day: u32, hour_of_day: f64) -> f64 {
    let rhythm = AMPLITUDE * (std::f64::consts::TAU * (hour_of_day / 24.0 - PEAK_PHASE)).cos();
    (BASE_SUCCESS - DECLINE_PER_DAY * f64::from(day) + rhythm).clamp(0.02, 0.98)
}

/// Midnight (UTC) of day `index`.
pub fn day_start(index: u32) -> Timestamp {
    Timestamp::from_secs(START.as_micros() / 1_000_000 + i64::from(index) * DAY_SECS)
}

/// The day (counted from [`START`]) that `at` falls in; negative before it.
pub fn day_of(at: Timestamp) -> i64 {
    (at.as_micros() - START.as_micros()).div_euclid(DAY_SECS * 1_000_000)
}

/// The robot's own doing: a tool result, trusted 0.8.
fn own(mut episode: NewEpisode, run_id: &str) -> NewEpisode {
    run_id.clone_into(&mut episode.run_id);
    episode.source = Some(Source::ToolResult);
    episode.trust = Some(0.8);
    episode
}

fn in_room(episode: &mut NewEpisode, room: usize) {
    episode.perception.observations.insert("room", Value::Text(ROOMS[room].0.to_owned()));
}

fn navigate(run_id: &str, from: usize, to: usize, success: bool, obstacle: &str) -> NewEpisode {
    let mut ep = NewEpisode::default();
    in_room(&mut ep, from);
    ep.context.active_goal = Some(format!("go to the {}", ROOMS[to].0).into());
    ep.context.active_mode = "act".into();
    ep.action.tool_name = NAVIGATE.into();
    let mut params = Map::new();
    params.insert("to", Value::Text(ROOMS[to].0.to_owned()));
    ep.action.tool_params = params;
    ep.outcome.success = Some(success);
    if success {
        ep.perception.salience = 0.4;
    } else {
        ep.perception.detected_objects = vec![obstacle.into()];
        ep.perception.salience = 0.7;
        ep.outcome.error = Some(format!("navigation failed: blocked by the {obstacle}"));
    }
    own(ep, run_id)
}

fn grasp(run_id: &str, room: usize, object: &str, success: bool) -> NewEpisode {
    let mut ep = NewEpisode::default();
    in_room(&mut ep, room);
    ep.perception.detected_objects = vec![object.into()];
    ep.context.active_goal = Some(format!("fetch the {object}").into());
    ep.context.active_mode = "act".into();
    ep.action.tool_name = GRASP.into();
    ep.outcome.success = Some(success);
    if !success {
        ep.perception.salience = 0.6;
        ep.outcome.error = Some(format!("the {object} slipped"));
    }
    own(ep, run_id)
}

fn look_around(run_id: &str, room: usize) -> NewEpisode {
    let mut ep = NewEpisode::default();
    in_room(&mut ep, room);
    ep.perception.detected_objects = ROOMS[room].1.iter().map(|&o| o.into()).collect();
    ep.context.active_goal = Some(format!("check the {}", ROOMS[room].0).into());
    ep.action.tool_name = "look_around".into();
    ep.outcome.success = Some(true);
    ep.perception.salience = 0.3;
    own(ep, run_id)
}

fn greeting(run_id: &str, person: &str) -> NewEpisode {
    let mut ep = NewEpisode::default();
    in_room(&mut ep, 1);
    ep.perception.detected_people = vec![person.into()];
    ep.perception.transcript = Some(format!("{person}: good morning, robot"));
    ep.context.active_goal = Some("greet people".into());
    ep.action.tool_name = "speak".into();
    ep.outcome.success = Some(true);
    own(ep, run_id)
}

/// Alice's statement (morning) and the web page that contradicts it (evening).
fn contradiction(run_id: &str, start: Timestamp) -> [Event; 2] {
    let mut said = NewEpisode::default();
    in_room(&mut said, 0);
    said.perception.detected_people = vec!["alice".into()];
    said.perception.detected_objects = vec!["mug".into()];
    said.perception.transcript = Some("alice: the blue mug is dishwasher safe".into());
    said.perception.salience = 0.8;
    said.context.active_goal = Some("learn about the mug".into());
    said.action.tool_name = "listen".into();
    said.outcome.success = Some(true);
    run_id.clone_into(&mut said.run_id);
    said.source = Some(Source::UserStated);
    said.trust = Some(0.9);
    let mut read = NewEpisode::default();
    in_room(&mut read, 4);
    read.perception.detected_objects = vec!["mug".into()];
    read.perception.observations.insert("url", Value::Text(format!("https://{WEB_DOMAIN}/blue-mug")));
    read.perception
        .observations
        .insert("page", Value::Text("blue mug: hand wash only, not dishwasher safe".into()));
    read.perception.salience = 0.6;
    read.context.active_goal = Some("learn about the mug".into());
    read.action.tool_name = "web_search".into();
    read.outcome.success = Some(true);
    run_id.clone_into(&mut read.run_id);
    let web = Source::Web(WEB_DOMAIN.to_owned());
    read.source = Some(web.clone());
    read.trust = Some(0.3);
    let claim = |value, source, trust| Claim { subject: "mug", key: "dishwasher_safe", value, source, trust };
    [
        Event {
            at: start + Duration::from_secs(9 * 3600 + 5 * 60),
            episode: said,
            claim: Some(claim("yes", Source::UserStated, 0.9)),
        },
        Event {
            at: start + Duration::from_secs(20 * 3600 + 40 * 60),
            episode: read,
            claim: Some(claim("no", web, 0.3)),
        },
    ]
}

/// The verified run: Alice asks for tea; five steps in the kitchen, verified.
fn tea_run(start: Timestamp) -> (Vec<Event>, SkillRun) {
    const RUN: &str = "tea-run-1";
    let steps = [
        (Step::read("look_around", "kitchen"), "kettle"),
        (Step::write("grasp", "kettle"), "kettle"),
        (Step::write("fill", "kettle"), "kettle"),
        (Step::write("switch_on", "kettle"), "kettle"),
        (Step::write("pour", "mug"), "mug"),
    ];
    let mut at = start + Duration::from_secs(16 * 3600);
    let mut trace =
        RunTrace::new(RUN, TEA_GOAL, Source::UserStated, 0.9).facts(["in kitchen", "kettle present"]);
    let mut events = Vec::with_capacity(steps.len());
    for (step, object) in steps {
        let mut ep = NewEpisode::default();
        in_room(&mut ep, 0);
        ep.perception.detected_objects = vec![object.into()];
        ep.perception.detected_people = vec!["alice".into()];
        ep.context.active_goal = Some(TEA_GOAL.into());
        ep.context.active_mode = "act".into();
        ep.action.tool_name = step.tool.as_str().into();
        let mut params = Map::new();
        params.insert("target", Value::Text(step.arg_shape.clone()));
        ep.action.tool_params = params;
        ep.outcome.success = Some(true);
        RUN.clone_into(&mut ep.run_id);
        ep.source = Some(Source::UserStated);
        ep.trust = Some(0.9);
        events.push(Event { at, episode: ep, claim: None });
        trace = trace.call(step);
        at = at + Duration::from_secs(90);
    }
    let run = SkillRun { at, trace, outcome: Outcome::verified(["verify(tea_ready)"]) };
    (events, run)
}
