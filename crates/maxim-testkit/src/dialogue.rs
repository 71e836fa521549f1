//! Seeded long multi-session dialogues with turn-level evidence, for the retrieval
//! evaluation (`cargo xtask eval retrieval`).
//!
//! A [`Corpus`] holds several [`Conversation`]s between two named people. Each conversation
//! runs over many dated sessions of 15–30 turns (by default 20 sessions, about 600 turns)
//! and plants facts about both speakers (a job, a home town, a pet, a new hobby, travel
//! plans, relatives and friends), restates some of them later in other words, updates some
//! (a new job, changed plans), and surrounds them with small talk and with distractor turns
//! on the same topics (someone else's job, a pet next door, a city seen in a film). Every
//! [`Question`] has its [`QuestionKind`], its answer and the ids of the turns that hold the
//! evidence:
//!
//! - [`QuestionKind::SingleHop`]: one fact, stated in one turn and perhaps restated later
//!   (every statement is evidence);
//! - [`QuestionKind::Update`]: a fact that changed; the evidence is the turn with the new
//!   value;
//! - [`QuestionKind::Temporal`]: when something happened; the answer is the date of the
//!   session where the speaker said it happened that day ([`date_text`]);
//! - [`QuestionKind::MultiHop`]: a chain across sessions: the speaker names a relative in
//!   one session and says something about that person, by name only, sessions later
//!   ("which city does Ana's sister live in?").
//!
//! Nothing is keyed to one template: every fact, distractor, filler line and question is
//! drawn from several phrasings, and questions mostly use other words than the turns that
//! answer them. As in real transcripts, the speaker's name is the speaker of each of their
//! turns (not part of the text) and appears in every question.
//!
//! The generator is exact and seeded ([`SplitMix64`]); conversation `c` depends on the seed
//! and on `c` only, not on how many conversations are drawn.
//!
//! ```
//! use maxim_testkit::dialogue::{DialogueConfig, QuestionKind, generate};
//! let corpus = generate(&DialogueConfig::quick())?;
//! assert_eq!(corpus, generate(&DialogueConfig::quick())?);
//! let q = &corpus.conversations[0].questions[0];
//! let speaker = &corpus.turn(q.evidence[0]).unwrap().speaker;
//! assert!(q.text.contains(speaker.as_str()));
//! assert!(corpus.questions().any(|q| q.kind == QuestionKind::MultiHop));
//! # Ok::<(), maxim_core::Error>(())
//! ```

use maxim_core::{Error, Result, SplitMix64, Timestamp};

/// A turn's id: its position in the corpus, over all conversations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TurnId(pub u32);

/// One line of a dialogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Its id.
    pub id: TurnId,
    /// The conversation it belongs to.
    pub conversation: u32,
    /// The session within the conversation, from 0.
    pub session: u32,
    /// Who said it.
    pub speaker: String,
    /// What was said.
    pub text: String,
    /// When it was said: the session's date and time, a minute per turn.
    pub time: Timestamp,
}

/// What a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuestionKind {
    /// One fact, stated (and perhaps restated) by the speaker.
    SingleHop,
    /// A fact that changed: the newest value.
    Update,
    /// The date something happened.
    Temporal,
    /// A chain over two sessions: a relative named in one, their fact in a later one.
    MultiHop,
}

impl QuestionKind {
    /// Every kind, in report order.
    pub const ALL: [Self; 4] = [Self::SingleHop, Self::Update, Self::Temporal, Self::MultiHop];

    /// The kind's name in reports: `single-hop`, `update`, `temporal`, `multi-hop`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SingleHop => "single-hop",
            Self::Update => "update",
            Self::Temporal => "temporal",
            Self::MultiHop => "multi-hop",
        }
    }
}

/// A question about one conversation, with its answer and evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The conversation it asks about.
    pub conversation: u32,
    /// What it asks for.
    pub kind: QuestionKind,
    /// The question.
    pub text: String,
    /// The answer: a phrase of the last evidence turn, or (temporal) its [`date_text`].
    pub answer: String,
    /// The turns that hold the evidence, in dialogue order; a retriever should return all.
    pub evidence: Vec<TurnId>,
}

/// Two people talking over many sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// The two speakers.
    pub speakers: [String; 2],
    /// Every turn, in order (ids contiguous).
    pub turns: Vec<Turn>,
    /// The questions about it.
    pub questions: Vec<Question>,
}

/// Generated conversations; see the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// The conversations, in order.
    pub conversations: Vec<Conversation>,
}

impl Corpus {
    /// The turn with this id.
    pub fn turn(&self, id: TurnId) -> Option<&Turn> {
        let c = self.conversations.partition_point(|c| c.turns.first().is_some_and(|t| t.id <= id));
        let conv = self.conversations.get(c.checked_sub(1)?)?;
        let first = conv.turns.first()?.id.0;
        conv.turns.get((id.0 - first) as usize)
    }

    /// Every turn, in order.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> + '_ {
        self.conversations.iter().flat_map(|c| &c.turns)
    }

    /// Every question, conversation by conversation.
    pub fn questions(&self) -> impl Iterator<Item = &Question> + '_ {
        self.conversations.iter().flat_map(|c| &c.questions)
    }
}

/// How much dialogue to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DialogueConfig {
    /// The seed.
    pub seed: u64,
    /// Conversations (at least 1).
    pub conversations: usize,
    /// Sessions per conversation (at least 6).
    pub sessions: usize,
    /// Fewest turns a session draws (at least 4; a session with many planted facts gets more).
    pub min_turns: usize,
    /// Most turns a session draws (at least `min_turns`).
    pub max_turns: usize,
}

impl DialogueConfig {
    /// The evaluation's corpus: 10 conversations of 20 sessions of 15–30 turns (about 450
    /// turns each, 4,500 in all).
    pub fn full() -> Self {
        Self { seed: 18, conversations: 10, sessions: 20, min_turns: 15, max_turns: 30 }
    }

    /// A CI-sized corpus: 3 conversations of 8 sessions.
    pub fn quick() -> Self {
        Self { conversations: 3, sessions: 8, ..Self::full() }
    }

    /// Checks the sizes.
    pub fn validate(&self) -> Result<()> {
        let bad =
            |field, value: usize, expected| Err(Error::OutOfRange { field, value: value as f64, expected });
        if self.conversations == 0 {
            return bad("conversations", self.conversations, "at least 1");
        }
        if self.sessions < 6 {
            return bad("sessions", self.sessions, "at least 6");
        }
        if self.min_turns < 4 {
            return bad("min_turns", self.min_turns, "at least 4");
        }
        if self.max_turns < self.min_turns {
            return bad("max_turns", self.max_turns, "at least min_turns");
        }
        // Turn ids are u32: about 60 turns per session at most, with facts added.
        let most = self.conversations.saturating_mul(self.sessions).saturating_mul(self.max_turns + 64);
        if most > u32::MAX as usize {
            return bad("conversations × sessions × max_turns", most, "below 2^32 turns");
        }
        Ok(())
    }
}

/// The first day a conversation may start: 2022-01-03, in seconds since the epoch.
const EPOCH_START_SECS: i64 = 1_641_168_000;
const DAY_SECS: i64 = 86_400;

/// The corpus `config` describes; an error when its sizes are out of range.
pub fn generate(config: &DialogueConfig) -> Result<Corpus> {
    config.validate()?;
    let mut conversations = Vec::with_capacity(config.conversations);
    let mut next_id = 0u32;
    for c in 0..config.conversations {
        let conv = ConversationBuilder::new(config, c as u32, next_id).build();
        next_id += conv.turns.len() as u32;
        conversations.push(conv);
    }
    Ok(Corpus { conversations })
}

/// `t`'s calendar date in UTC, as `7 May 2023`.
pub fn date_text(t: Timestamp) -> String {
    let days = t.as_micros().div_euclid(1_000_000 * DAY_SECS);
    let (y, m, d) = civil_from_days(days);
    format!("{d} {} {y}", MONTHS[(m - 1) as usize])
}

/// Year, month (1–12) and day of the `days`-th day since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const NAMES: &[&str] = &[
    "Ana", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonah", "Keiko", "Luca",
    "Maren", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wes", "Ximena",
    "Yusuf", "Zoe", "Aidan", "Bianca", "Caleb", "Dalia", "Emeka", "Freya", "Gideon", "Hana", "Ivan", "Jade",
    "Kofi", "Leila", "Mateo", "Nadia", "Oscar", "Priya", "Rafael", "Sofia", "Tobias", "Yara",
];

const OTHER_NAMES: &[&str] = &[
    "Marta", "Felix", "Noor", "Stefan", "Lena", "Diego", "Amara", "Viktor", "Iris", "Teo", "Selma", "Ravi",
    "Clara", "Jonas", "Mira", "Pablo", "Ayla", "Ruben", "Elif", "Nils", "Carmen", "Otto", "Lina", "Arjun",
    "Greta", "Milo", "Sana", "Bram", "Talia", "Hector", "Ingrid", "Kenji",
];

const CITIES: &[&str] = &[
    "Lisbon", "Porto", "Krakow", "Leeds", "Valencia", "Bergen", "Utrecht", "Tampere", "Graz", "Lyon",
    "Dublin", "Seville", "Tallinn", "Ghent", "Bologna", "Bristol", "Aarhus", "Malmo", "Brno", "Cork",
    "Quebec", "Halifax", "Denver", "Austin", "Osaka", "Busan", "Perth", "Hobart", "Nairobi", "Accra",
    "Cusco", "Mendoza",
];

/// Jobs with their article.
const JOBS: &[&str] = &[
    "a nurse",
    "a carpenter",
    "an architect",
    "a paramedic",
    "a pastry chef",
    "a librarian",
    "a data analyst",
    "a veterinarian",
    "a high school teacher",
    "an electrician",
    "a translator",
    "a pharmacist",
    "a landscape gardener",
    "a sound engineer",
    "a physiotherapist",
    "an accountant",
    "a journalist",
    "a bus driver",
    "a marine biologist",
    "a software tester",
    "a florist",
    "a dental hygienist",
    "a park ranger",
    "a tattoo artist",
];

const SPECIES: &[&str] =
    &["dog", "cat", "rabbit", "parrot", "tortoise", "hamster", "ferret", "guinea pig", "gecko", "puppy"];

const PET_NAMES: &[&str] = &[
    "Biscuit",
    "Pepper",
    "Mochi",
    "Ziggy",
    "Waffles",
    "Juniper",
    "Noodle",
    "Pickle",
    "Olive",
    "Pretzel",
    "Sprout",
    "Tofu",
    "Maple",
    "Clementine",
    "Boomer",
    "Nacho",
    "Pumpkin",
    "Ginger",
    "Kiwi",
    "Dumpling",
];

const HOBBIES: &[&str] = &[
    "pottery",
    "the cello",
    "rock climbing",
    "Portuguese",
    "salsa dancing",
    "watercolour painting",
    "archery",
    "woodturning",
    "the ukulele",
    "beekeeping",
    "fencing",
    "sourdough baking",
    "chess",
    "kayaking",
    "calligraphy",
    "improv theatre",
];

const PLACES: &[&str] = &[
    "Iceland",
    "Japan",
    "Morocco",
    "Patagonia",
    "Vietnam",
    "the Scottish Highlands",
    "Sicily",
    "New Zealand",
    "Peru",
    "Norway",
    "Croatia",
    "Jordan",
    "Sri Lanka",
    "the Azores",
];

const RELATIONS: &[&str] = &[
    "sister",
    "brother",
    "cousin",
    "best friend",
    "neighbour",
    "aunt",
    "uncle",
    "old roommate",
    "college friend",
    "coworker",
    "godmother",
    "stepbrother",
    "childhood friend",
    "flatmate",
    "niece",
    "nephew",
    "mentor",
    "grandmother",
];

const FOODS: &[&str] = &[
    "lentil soup",
    "tacos",
    "a mushroom risotto",
    "ramen",
    "banana bread",
    "dumplings",
    "a huge salad",
    "curry",
    "pancakes",
    "shakshuka",
];

const SHOWS: &[&str] = &[
    "that new detective series",
    "the baking competition",
    "a documentary about octopuses",
    "the space drama everyone talks about",
    "an old sitcom",
    "the cooking show with the twins",
];

const WEATHER: &[&str] = &["grey and drizzly", "weirdly warm", "freezing", "windy", "sunny but cold"];

const DAYS: &[&str] =
    &["Saturday", "Sunday", "the weekend", "Friday night", "my day off", "the long weekend"];

const ACTIVITIES: &[&str] = &[
    "cleaning the whole flat",
    "doing absolutely nothing",
    "walking by the river",
    "fixing my bike",
    "reorganising my closet",
    "trying a new recipe",
    "at the farmers market",
    "catching up on sleep",
];

const BOOKS: &[&str] = &[
    "a thick fantasy novel",
    "a memoir by a chef",
    "a book about memory",
    "a short story collection",
    "a history of maps",
];

const FILLER: &[&str] = &[
    "I made {food} for dinner and it actually turned out well.",
    "Have you watched {show}? Everyone keeps recommending it.",
    "The weather here has been {weather} all week.",
    "I spent {day} {activity}, and it was exactly what I needed.",
    "My phone died right in the middle of {activity}, typical.",
    "I'm trying to read more; I'm halfway through {book}.",
    "Traffic this morning was unreal, I sat there for forty minutes.",
    "I slept ten hours on {day} and I regret nothing.",
    "Any plans for {day}?",
    "Sorry I took so long to reply, it's been a hectic few days.",
    "I finally finished {show}. The ending was strange.",
    "Do you want the recipe for {food}? It's really easy.",
    "I keep forgetting to drink water when it's {weather} like this.",
    "How have you been? It feels like ages.",
    "I bought a plant and I'm already worried I'll kill it.",
    "We should get coffee when things calm down.",
    "I started {book} on the train and missed my stop.",
    "Honestly I just want a quiet week for once.",
    "My landlord finally fixed the heating, only took three months.",
    "I went for a run and it was miserable, but I feel better now.",
    "I can't believe it's already the end of the month.",
    "The neighbours were playing music until two in the morning.",
    "I tried meditating before bed, not sure it's working yet.",
    "Remind me to send you that podcast episode.",
];

const REACTIONS: &[&str] = &[
    "Oh wow, that's big news!",
    "That's wonderful, I'm really happy for you.",
    "Wait, really? Tell me more.",
    "Ha, that sounds just like you.",
    "I had no idea! How do you feel about it?",
    "That's lovely to hear.",
    "Oh no, that sounds like a lot.",
    "Nice! Keep me posted.",
    "Good for you, honestly.",
    "Hmm, I didn't see that coming.",
];

/// Turns on a fact's topic that state no fact about a speaker.
const DISTRACTORS: &[&str] = &[
    "A friend of a friend works as {job} and says the hours are brutal.",
    "I read an article about how hard it is to find {job} these days.",
    "If I weren't so squeamish I might have become {job}.",
    "Our new manager used to be {job}, weirdly enough.",
    "Work has been exhausting, some days are just long.",
    "I saw a documentary about {city} last night, it looked gorgeous.",
    "{city} has been on my list forever, maybe one day.",
    "Someone at the gym just got back from {city} and won't stop talking about it.",
    "Do you ever miss the place you grew up? I go back and forth.",
    "The {species} next door barked half the night.",
    "I could never own a {species}, way too much work.",
    "Saw the cutest {species} at the park today, I almost stole it.",
    "Vet bills are outrageous, I don't know how people manage.",
    "I tried {hobby} years ago and gave up after a week.",
    "A coworker is obsessed with {hobby}, she talks about nothing else.",
    "I keep seeing ads for {hobby} classes everywhere.",
    "Flights to {place} are so expensive right now.",
    "I'd love to travel more this year, if money allows.",
    "A documentary about {place} made me want to pack a bag.",
    "Family dinners are always chaotic, aren't they?",
    "My {relation} never answers texts, it drives me mad.",
    "Everyone's {relation} seems to be moving abroad lately.",
    "I should call my {relation} more often, honestly.",
    "Someone I know just started working as {job} in {city}.",
];

const JOB_PLANT: &[&str] = &[
    "I finally got the offer, I start as {job} at a place downtown next month.",
    "These days I work as {job}, mostly long shifts.",
    "Being {job} pays the bills, but the hours are rough.",
    "My work as {job} keeps me busier than I expected.",
    "I've been {job} for about three years now and I still like it.",
];

const JOB_RESTATE: &[&str] = &[
    "Long day at work again; that's life as {job}, I guess.",
    "People hear I'm {job} and ask me for free advice all the time.",
    "As {job}, I never know when I'll get home.",
    "Some days being {job} is the best thing in the world.",
];

const JOB_UPDATE: &[&str] = &[
    "Big news: I quit and I'm working as {job} now.",
    "I changed careers, no more old routine, I'm {job} these days.",
    "Started my new position as {job} this week, a completely different world.",
    "Remember my old job? I left it. I retrained and now I'm {job}.",
];

const HOME_PLANT: &[&str] = &[
    "I grew up in {city}, so this weather is nothing to me.",
    "Back in {city}, where I'm from, everyone knows everyone.",
    "My parents still live in {city}, the town I was raised in.",
    "Being from {city} means I have strong opinions about bread.",
];

const HOME_RESTATE: &[&str] = &[
    "I'm flying home to {city} for the holidays, my mum is already cooking.",
    "Nothing beats the harbour walk in {city}, I miss it from here.",
    "Whenever I visit {city} I feel like a teenager again.",
];

const PET_PLANT: &[&str] = &[
    "We adopted a {species} today! The name is {pet}.",
    "Meet {pet}, the {species} I brought home from the shelter this morning.",
    "I finally did it, I got a {species} today and named it {pet}.",
    "Guess who has a {species} now? Picked up little {pet} this afternoon.",
];

const PET_RESTATE: &[&str] = &[
    "{pet} chewed through another charger, what a menace.",
    "Taking {pet} to the vet tomorrow, just a checkup.",
    "{pet} slept on my feet all night, I couldn't move.",
];

const HOBBY_PLANT: &[&str] = &[
    "I signed up for {hobby} classes and the first one was tonight.",
    "Started learning {hobby} today, my hands hurt already.",
    "I've taken up {hobby}; I had my first lesson this afternoon.",
    "Today was day one of {hobby}, the teacher was very patient with me.",
];

const PLAN_PLANT: &[&str] = &[
    "We're planning a trip to {place} in {month}.",
    "I booked flights to {place} for {month}, I can't wait!",
    "Thinking of spending {month} in {place}, finally taking real time off.",
    "The big holiday this year is {place}, we're going in {month}.",
];

const PLAN_UPDATE: &[&str] = &[
    "Change of plans, we're going to {place} instead.",
    "We cancelled the first trip; it's going to be {place} this year.",
    "Prices went crazy so we switched, now the holiday is {place}.",
];

/// Things that happened on the day they were told, and a question about each in other words.
const HAPPENINGS: &[(&str, &str)] = &[
    ("I ran my first half marathon today, my legs are jelly.", "When did {who} run a half marathon?"),
    ("We moved into the new flat today, boxes everywhere.", "When did {who} move house?"),
    ("I passed my driving test this morning!", "When did {who} get a driving licence?"),
    (
        "Gave my first conference talk today, terrifying but it went fine.",
        "When did {who} present at a conference?",
    ),
    ("Had my wisdom teeth out today, living on soup now.", "When did {who} have dental surgery?"),
    ("I volunteered at the food bank for the first time today.", "When did {who} begin volunteering?"),
    (
        "Our band played its first gig tonight, only twelve people came but still.",
        "When did {who}'s band perform live for the first time?",
    ),
    ("I finally paid off my student loan today.", "When did {who} finish paying off the student debt?"),
    ("Got my first tattoo this afternoon, a tiny fern on my wrist.", "When did {who} get inked?"),
    ("I proposed tonight and the answer was yes!", "When did {who} get engaged?"),
];

const REL_PLANT: &[&str] = &[
    "My {relation} {name} is staying with me this week.",
    "{name}, my {relation}, just had a birthday, we went out for dinner.",
    "I had dinner with my {relation} {name} last night.",
    "Talked to my {relation} for hours; {name} always knows what to say.",
];

const REL_CITY: &[&str] = &[
    "{name} finally moved to {city}, new apartment and everything.",
    "Visited {name} in {city}; the place is tiny but lovely.",
    "{name} says {city} is freezing this time of year, the flat is right by the river.",
];

const REL_JOB: &[&str] = &[
    "{name} got hired as {job}, can you believe it?",
    "{name} is working as {job} now and loves it.",
    "{name} just finished training to be {job}.",
];

const REL_PET: &[&str] =
    &["{name} adopted a {species} called {pet}.", "{name} sent me photos of {pet}, the new {species}."];

const Q_JOB: &[&str] = &[
    "What does {who} do for a living?",
    "What is {who}'s profession?",
    "What kind of work does {who} do?",
    "Which occupation does {who} have?",
];
const Q_JOB_OLD: &[&str] = &[
    "What did {who} work as before changing careers?",
    "What was {who}'s previous occupation?",
    "Which job did {who} leave?",
];
const Q_JOB_NOW: &[&str] = &[
    "What is {who}'s current job?",
    "What does {who} do for work after switching careers?",
    "Which profession did {who} move into?",
];
const Q_HOME: &[&str] = &[
    "Where did {who} grow up?",
    "What is {who}'s home town?",
    "Which city is {who} originally from?",
    "Where is {who} from?",
];
const Q_PET: &[&str] = &[
    "What is the name of {who}'s {species}?",
    "What did {who} call the {species}?",
    "What is {who}'s pet called?",
];
const Q_PET_WHEN: &[&str] = &[
    "When did {who} adopt {pet}?",
    "When did {who} get the {species}?",
    "On what date did {who} bring {pet} home?",
];
const Q_HOBBY: &[&str] = &[
    "What new hobby did {who} take up?",
    "What is {who} learning these days?",
    "Which class did {who} join?",
];
const Q_HOBBY_WHEN: &[&str] = &[
    "When did {who} start {hobby}?",
    "When was {who}'s first {hobby} lesson?",
    "On which day did {who} begin learning {hobby}?",
];
const Q_PLAN: &[&str] = &[
    "Where is {who} planning to travel?",
    "Which destination is {who} going to visit?",
    "Where is {who}'s holiday this year?",
];
const Q_PLAN_NOW: &[&str] = &[
    "Where is {who} going after changing travel plans?",
    "Which destination did {who} switch the trip to?",
    "What is {who}'s new holiday destination?",
];
const Q_REL_CITY: &[&str] = &[
    "Which city does {who}'s {relation} live in?",
    "Where does {who}'s {relation} live now?",
    "In what city is {who}'s {relation} based?",
];
const Q_REL_JOB: &[&str] = &[
    "What does {who}'s {relation} do for work?",
    "What is the occupation of {who}'s {relation}?",
    "Which job did {who}'s {relation} get?",
];
const Q_REL_PET: &[&str] = &[
    "What is the name of the pet {who}'s {relation} adopted?",
    "What is the pet of {who}'s {relation} called?",
];

/// A planted turn: spoken by `speaker` (0 or 1) in session `session`.
struct Event {
    session: usize,
    speaker: usize,
    text: String,
}

/// A question whose evidence is a list of events, resolved to turn ids once placed.
struct PendingQuestion {
    kind: QuestionKind,
    text: String,
    /// The answer, or `None` for a temporal question (the date of the first event).
    answer: Option<String>,
    events: Vec<usize>,
}

struct ConversationBuilder<'a> {
    config: &'a DialogueConfig,
    index: u32,
    first_id: u32,
    rng: SplitMix64,
    speakers: [String; 2],
    events: Vec<Event>,
    questions: Vec<PendingQuestion>,
    /// Values already planted in this conversation, never drawn twice.
    used: Vec<&'static str>,
}

fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (k, v) in slots {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// `text` with its first letter upper-cased (a name-less template may open with a value).
fn capitalised(text: String) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if c.is_lowercase() => c.to_uppercase().chain(chars).collect(),
        _ => text,
    }
}

impl<'a> ConversationBuilder<'a> {
    fn new(config: &'a DialogueConfig, index: u32, first_id: u32) -> Self {
        let seed = config.seed ^ u64::from(index).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = SplitMix64::new(seed);
        let a = rng.below(NAMES.len() as u64) as usize;
        let mut b = rng.below(NAMES.len() as u64 - 1) as usize;
        if b >= a {
            b += 1;
        }
        Self {
            config,
            index,
            first_id,
            rng,
            speakers: [NAMES[a].to_owned(), NAMES[b].to_owned()],
            events: Vec::new(),
            questions: Vec::new(),
            used: Vec::new(),
        }
    }

    fn pick(&mut self, list: &[&'static str]) -> &'static str {
        list[self.rng.below(list.len() as u64) as usize]
    }

    /// A value of `list` not yet planted in this conversation (any value once all are used).
    fn fresh(&mut self, list: &[&'static str]) -> &'static str {
        for _ in 0..16 {
            let v = self.pick(list);
            if !self.used.contains(&v) {
                self.used.push(v);
                return v;
            }
        }
        self.pick(list)
    }

    /// A session in `[lo, hi)` (clamped to the last session).
    fn session_in(&mut self, lo: usize, hi: usize) -> usize {
        let last = self.config.sessions - 1;
        let (lo, hi) = (lo.min(last), hi.min(self.config.sessions).max(lo.min(last) + 1));
        lo + self.rng.below((hi - lo) as u64) as usize
    }

    fn event(&mut self, session: usize, speaker: usize, template: &str, slots: &[(&str, &str)]) -> usize {
        self.events.push(Event { session, speaker, text: capitalised(fill(template, slots)) });
        self.events.len() - 1
    }

    fn ask(
        &mut self,
        kind: QuestionKind,
        list: &[&str],
        slots: &[(&str, &str)],
        answer: Option<&str>,
        events: Vec<usize>,
    ) {
        let text = fill(self.pick_str(list), slots);
        self.questions.push(PendingQuestion { kind, text, answer: answer.map(str::to_owned), events });
    }

    fn pick_str<'b>(&mut self, list: &[&'b str]) -> &'b str {
        list[self.rng.below(list.len() as u64) as usize]
    }

    /// Plants one speaker's facts and the questions about them.
    fn plant(&mut self, who: usize) {
        let s = self.config.sessions;
        let name = self.speakers[who].clone();
        let name = name.as_str();

        // Job: stated, perhaps restated, perhaps changed.
        let job = self.fresh(JOBS);
        let at = self.session_in(0, s / 2);
        let t = self.pick(JOB_PLANT);
        let mut evs = vec![self.event(at, who, t, &[("job", job)])];
        if self.rng.uniform() < 0.6 {
            let later = self.session_in(at + 1, s);
            let t = self.pick(JOB_RESTATE);
            evs.push(self.event(later, who, t, &[("job", job)]));
        }
        if self.rng.uniform() < 0.5 {
            let new_job = self.fresh(JOBS);
            let last = evs.iter().map(|&e| self.events[e].session).max().unwrap_or(at);
            let later = self.session_in(last + 1, s);
            let t = self.pick(JOB_UPDATE);
            let up = self.event(later, who, t, &[("job", new_job)]);
            self.ask(QuestionKind::Update, Q_JOB_NOW, &[("who", name)], Some(new_job), vec![up]);
            self.ask(QuestionKind::SingleHop, Q_JOB_OLD, &[("who", name)], Some(job), evs);
        } else {
            self.ask(QuestionKind::SingleHop, Q_JOB, &[("who", name)], Some(job), evs);
        }

        // Home town.
        let city = self.fresh(CITIES);
        let at = self.session_in(0, s);
        let t = self.pick(HOME_PLANT);
        let mut evs = vec![self.event(at, who, t, &[("city", city)])];
        if self.rng.uniform() < 0.5 {
            let later = self.session_in(at + 1, s);
            let t = self.pick(HOME_RESTATE);
            evs.push(self.event(later, who, t, &[("city", city)]));
        }
        self.ask(QuestionKind::SingleHop, Q_HOME, &[("who", name)], Some(city), evs);

        // A pet, adopted on a known day.
        let species = self.fresh(SPECIES);
        let pet = self.fresh(PET_NAMES);
        let at = self.session_in(0, s * 2 / 3);
        let t = self.pick(PET_PLANT);
        let adopted = self.event(at, who, t, &[("species", species), ("pet", pet)]);
        let mut evs = vec![adopted];
        if self.rng.uniform() < 0.5 {
            let later = self.session_in(at + 1, s);
            let t = self.pick(PET_RESTATE);
            evs.push(self.event(later, who, t, &[("pet", pet)]));
        }
        let slots = [("who", name), ("species", species), ("pet", pet)];
        self.ask(QuestionKind::SingleHop, Q_PET, &slots, Some(pet), vec![adopted]);
        self.ask(QuestionKind::Temporal, Q_PET_WHEN, &slots, None, vec![adopted]);

        // A hobby, started on a known day.
        let hobby = self.fresh(HOBBIES);
        let at = self.session_in(0, s);
        let t = self.pick(HOBBY_PLANT);
        let started = self.event(at, who, t, &[("hobby", hobby)]);
        let slots = [("who", name), ("hobby", hobby)];
        if self.rng.uniform() < 0.5 {
            self.ask(QuestionKind::SingleHop, Q_HOBBY, &slots, Some(hobby), vec![started]);
        } else {
            self.ask(QuestionKind::Temporal, Q_HOBBY_WHEN, &slots, None, vec![started]);
        }

        // Travel plans, perhaps changed.
        let place = self.fresh(PLACES);
        let month = self.pick(&MONTHS);
        let at = self.session_in(0, s * 2 / 3);
        let t = self.pick(PLAN_PLANT);
        let planned = self.event(at, who, t, &[("place", place), ("month", month)]);
        if self.rng.uniform() < 0.5 {
            let new_place = self.fresh(PLACES);
            let later = self.session_in(at + 1, s);
            let t = self.pick(PLAN_UPDATE);
            let up = self.event(later, who, t, &[("place", new_place)]);
            self.ask(QuestionKind::Update, Q_PLAN_NOW, &[("who", name)], Some(new_place), vec![up]);
        } else {
            self.ask(QuestionKind::SingleHop, Q_PLAN, &[("who", name)], Some(place), vec![planned]);
        }

        // Two things that happened on a known day.
        for _ in 0..2 {
            let (said, asked) = HAPPENINGS[self.rng.below(HAPPENINGS.len() as u64) as usize];
            if self.used.contains(&said) {
                continue;
            }
            self.used.push(said);
            let at = self.session_in(0, s);
            let e = self.event(at, who, said, &[]);
            self.ask(QuestionKind::Temporal, &[asked], &[("who", name)], None, vec![e]);
        }

        // Five people close to the speaker, each named in one session and described, by
        // name only, at least two sessions later.
        for _ in 0..5 {
            let relation = self.fresh(RELATIONS);
            let other = self.fresh(OTHER_NAMES);
            let at = self.session_in(0, s - 2);
            let t = self.pick(REL_PLANT);
            let named = self.event(at, who, t, &[("relation", relation), ("name", other)]);
            let later = self.session_in(at + 2, s);
            let slots = [("who", name), ("relation", relation)];
            let (fact, answer, qs) = match self.rng.below(3) {
                0 => {
                    let city = self.fresh(CITIES);
                    let t = self.pick(REL_CITY);
                    (self.event(later, who, t, &[("name", other), ("city", city)]), city, Q_REL_CITY)
                }
                1 => {
                    let job = self.fresh(JOBS);
                    let t = self.pick(REL_JOB);
                    (self.event(later, who, t, &[("name", other), ("job", job)]), job, Q_REL_JOB)
                }
                _ => {
                    let species = self.pick(SPECIES);
                    let pet = self.fresh(PET_NAMES);
                    let t = self.pick(REL_PET);
                    let e = self.event(later, who, t, &[("name", other), ("species", species), ("pet", pet)]);
                    (e, pet, Q_REL_PET)
                }
            };
            self.ask(QuestionKind::MultiHop, qs, &slots, Some(answer), vec![named, fact]);
        }
    }

    /// A turn that plants nothing: small talk, a reaction or a distractor on a fact's topic.
    fn filler(&mut self, after_event: bool) -> String {
        let roll = self.rng.uniform();
        let template = if after_event && roll < 0.6 {
            self.pick(REACTIONS)
        } else if roll < 0.35 {
            self.pick(DISTRACTORS)
        } else {
            self.pick(FILLER)
        };
        let slots = [
            ("food", self.pick(FOODS)),
            ("show", self.pick(SHOWS)),
            ("weather", self.pick(WEATHER)),
            ("day", self.pick(DAYS)),
            ("activity", self.pick(ACTIVITIES)),
            ("book", self.pick(BOOKS)),
            ("job", self.pick(JOBS)),
            ("city", self.pick(CITIES)),
            ("species", self.pick(SPECIES)),
            ("hobby", self.pick(HOBBIES)),
            ("place", self.pick(PLACES)),
            ("relation", self.pick(RELATIONS)),
        ];
        capitalised(fill(template, &slots))
    }

    fn build(mut self) -> Conversation {
        let first = self.rng.below(2) as usize;
        self.plant(first);
        self.plant(1 - first);

        let sessions = self.config.sessions;
        let mut by_session: Vec<Vec<usize>> = vec![Vec::new(); sessions];
        for (i, e) in self.events.iter().enumerate() {
            by_session[e.session].push(i);
        }
        let mut event_turn = vec![TurnId(0); self.events.len()];
        let mut turns = Vec::new();
        let mut day = EPOCH_START_SECS + DAY_SECS * self.rng.below(700) as i64;
        let span = (self.config.max_turns - self.config.min_turns + 1) as u64;
        for (session, planted) in by_session.iter().enumerate() {
            let hour = 8 + self.rng.below(13) as i64;
            let start = day + 3600 * hour;
            let opener = self.rng.below(2) as usize;
            let need = [0, 1].map(|w| planted.iter().filter(|&&e| self.events[e].speaker == w).count());
            let drawn = self.config.min_turns + self.rng.below(span) as usize;
            let n = drawn.max(2 * need[0].max(need[1]) + 2);
            // Place each speaker's events, in order, on distinct turns of theirs.
            let mut slots: Vec<Option<usize>> = vec![None; n];
            for w in 0..2 {
                let mine: Vec<usize> = (0..n).filter(|&i| (i + opener) % 2 == w).collect();
                let events: Vec<usize> =
                    planted.iter().copied().filter(|&e| self.events[e].speaker == w).collect();
                let mut chosen: Vec<usize> = Vec::new();
                while chosen.len() < events.len() {
                    let p = mine[self.rng.below(mine.len() as u64) as usize];
                    if !chosen.contains(&p) {
                        chosen.push(p);
                    }
                }
                chosen.sort_unstable();
                for (p, e) in chosen.into_iter().zip(events) {
                    slots[p] = Some(e);
                }
            }
            for (i, slot) in slots.iter().enumerate() {
                let speaker = (i + opener) % 2;
                let id = TurnId(self.first_id + turns.len() as u32);
                let text = if let Some(e) = *slot {
                    event_turn[e] = id;
                    self.events[e].text.clone()
                } else {
                    let after_event = i > 0 && slots[i - 1].is_some();
                    self.filler(after_event)
                };
                turns.push(Turn {
                    id,
                    conversation: self.index,
                    session: session as u32,
                    speaker: self.speakers[speaker].clone(),
                    text,
                    time: Timestamp::from_secs(start + 60 * i as i64),
                });
            }
            day += DAY_SECS * (2 + self.rng.below(20) as i64);
        }

        let first_id = self.first_id;
        let questions = self
            .questions
            .into_iter()
            .map(|q| {
                let mut evidence: Vec<TurnId> = q.events.iter().map(|&e| event_turn[e]).collect();
                let answer =
                    q.answer.unwrap_or_else(|| date_text(turns[(evidence[0].0 - first_id) as usize].time));
                evidence.sort_unstable();
                Question { conversation: self.index, kind: q.kind, text: q.text, answer, evidence }
            })
            .collect();
        Conversation { speakers: self.speakers, turns, questions }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_dates() {
        assert_eq!(date_text(Timestamp::from_secs(0)), "1 January 1970");
        assert_eq!(date_text(Timestamp::from_secs(EPOCH_START_SECS)), "3 January 2022");
        assert_eq!(date_text(Timestamp::from_secs(951_782_400)), "29 February 2000");
        assert_eq!(date_text(Timestamp::from_secs(1_700_000_000)), "14 November 2023");
    }

    #[test]
    fn templates_fill_every_slot() {
        assert_eq!(fill("{a} and {b}", &[("a", "x"), ("b", "y")]), "x and y");
        assert_eq!(capitalised("an architect".to_owned()), "An architect");
    }

    #[test]
    fn bad_sizes_are_refused() {
        for config in [
            DialogueConfig { conversations: 0, ..DialogueConfig::quick() },
            DialogueConfig { sessions: 5, ..DialogueConfig::quick() },
            DialogueConfig { min_turns: 3, ..DialogueConfig::quick() },
            DialogueConfig { max_turns: 10, min_turns: 11, ..DialogueConfig::quick() },
            DialogueConfig { conversations: usize::MAX, ..DialogueConfig::quick() },
        ] {
            assert!(matches!(generate(&config), Err(Error::OutOfRange { .. })), "{config:?}");
        }
    }

    #[test]
    fn the_generator_is_deterministic_and_seeded() {
        let config = DialogueConfig::quick();
        assert_eq!(generate(&config).unwrap(), generate(&config).unwrap());
        let other = generate(&DialogueConfig { seed: 19, ..config }).unwrap();
        assert_ne!(generate(&config).unwrap(), other);
    }

    #[test]
    fn a_conversation_does_not_depend_on_how_many_are_drawn() {
        let two = generate(&DialogueConfig { conversations: 2, ..DialogueConfig::quick() }).unwrap();
        let three = generate(&DialogueConfig::quick()).unwrap();
        assert_eq!(two.conversations[1].questions, three.conversations[1].questions);
        assert_eq!(two.conversations[..], three.conversations[..2]);
    }

    #[test]
    fn every_question_has_evidence_that_holds_its_answer() {
        for config in [DialogueConfig::quick(), DialogueConfig::full()] {
            let corpus = generate(&config).unwrap();
            let mut kinds = std::collections::BTreeMap::new();
            for (c, conv) in corpus.conversations.iter().enumerate() {
                for q in &conv.questions {
                    *kinds.entry(q.kind).or_insert(0) += 1;
                    assert_eq!(q.conversation as usize, c);
                    assert!(!q.evidence.is_empty(), "{q:?}");
                    assert!(q.evidence.windows(2).all(|w| w[0] < w[1]), "{q:?}");
                    let turns: Vec<&Turn> = q.evidence.iter().map(|&id| corpus.turn(id).unwrap()).collect();
                    for t in &turns {
                        assert_eq!(t.conversation as usize, c);
                        assert!(q.text.contains(t.speaker.as_str()), "{q:?} / {t:?}");
                    }
                    let last = turns.last().unwrap();
                    if q.kind == QuestionKind::Temporal {
                        assert_eq!(q.answer, date_text(turns[0].time), "{q:?}");
                    } else {
                        assert!(last.text.contains(q.answer.as_str()), "{q:?} / {last:?}");
                    }
                    if q.kind == QuestionKind::MultiHop {
                        assert_eq!(turns.len(), 2);
                        assert!(turns[1].session >= turns[0].session + 2, "{q:?}");
                        // The first turn ties the relation to a name; the second names the
                        // person only.
                        let relation =
                            RELATIONS.iter().filter(|r| q.text.contains(*r)).max_by_key(|r| r.len());
                        let relation = relation.unwrap();
                        let named = OTHER_NAMES.iter().find(|n| turns[1].text.contains(*n)).unwrap();
                        assert!(turns[0].text.contains(named) && turns[0].text.contains(relation), "{q:?}");
                        assert!(!turns[1].text.contains(relation), "{q:?}");
                    }
                }
            }
            assert_eq!(kinds.len(), QuestionKind::ALL.len(), "{kinds:?}");
        }
    }

    #[test]
    fn turns_are_ordered_dated_and_found_by_id() {
        let corpus = generate(&DialogueConfig::full()).unwrap();
        let turns: Vec<&Turn> = corpus.turns().collect();
        assert!(turns.len() > 3_000, "{}", turns.len());
        for (i, t) in turns.iter().enumerate() {
            assert_eq!(t.id, TurnId(i as u32));
            assert_eq!(corpus.turn(t.id), Some(*t));
        }
        assert_eq!(corpus.turn(TurnId(turns.len() as u32)), None);
        for conv in &corpus.conversations {
            assert!(conv.turns.windows(2).all(|w| w[0].time < w[1].time && w[0].session <= w[1].session));
            for t in &conv.turns {
                assert!(conv.speakers.contains(&t.speaker));
                assert!(!t.text.is_empty() && !t.text.contains('{'), "{t:?}");
            }
            let sessions = conv.turns.last().unwrap().session as usize + 1;
            assert_eq!(sessions, 20);
            for s in 0..sessions as u32 {
                let n = conv.turns.iter().filter(|t| t.session == s).count();
                assert!((15..=64).contains(&n), "{n}");
            }
        }
    }
}
