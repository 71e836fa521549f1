//! Error traces: the host program's own errors, remembered as episodes (seed 002's
//! ErrorTracer; `spec/lex-memory.md` §7).
//!
//! [`ErrorTraces`] is a [`tracing_subscriber::Layer`]. Installed in the host program's
//! subscriber, it turns each ERROR event (and each WARN event when
//! [`ErrorTracesConfig::include_warnings`] is set) into a [`NewEpisode`] and hands it to an
//! [`ErrorSink`] (the hub, or a channel to it), so an agent remembers its own failures. The
//! episode holds:
//!
//! - source [`PROGRAM_LOG_SOURCE`] (`program_log`, the program's own log) with the
//!   configured trust (default [`DEFAULT_TRUST`]);
//! - the event's target (its module) as the tool, and a failed outcome whose error is the
//!   message;
//! - as observations: `message`, `level`, `target`, `module`, `file`, `line`, `component`
//!   (the text inside a leading `[...]` of the message, else `unknown`, as the reference
//!   does), `tags` (`["error", component]` or `["warning", component]`), `unresolved: true`,
//!   and the event's other fields under `fields`;
//! - salience 0.7 for an error (the reference's intensity) and 0.5 for a warning;
//! - a felt trace ([`NewEpisode::emotion`]): intensity 0.7 and valence −0.6 for an error,
//!   0.9 and −0.8 for a fatal one (an ERROR event with a field `fatal = true`), 0.35 and
//!   −0.3 for a warning, so the agent's failures fade more slowly than its routine.
//!
//! **Debounce.** As the reference does: the key is the level and the first
//! [`DEBOUNCE_PREFIX_CHARS`] (101) characters of the message; an event whose key was
//! *recorded* less than [`DEBOUNCE_WINDOW`] (60 s) ago, on the configured clock, is skipped,
//! and a skipped event does not refresh the key, so a message that repeats constantly gives
//! one episode a minute. When more than [`DEBOUNCE_MAX_KEYS`] keys are held, those older
//! than the window are dropped.
//!
//! **It never breaks logging.** An event without a message falls back to its fields, and
//! is skipped when it has none; strings are cut at [`MAX_TEXT_CHARS`] characters and at most
//! [`MAX_FIELDS`] fields are kept; a non-finite number is kept as text. Events that the sink
//! itself emits (on the same thread, while it records) are ignored, so a sink that logs an
//! error never recurses; a sink that panics is caught. A sink must not block on a lock that
//! the code which logged may hold: the hub's sink queues (an [`mpsc::SyncSender`] is a
//! sink that drops what does not fit).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use maxim::error_traces::{ErrorSink, ErrorTraces};
//! use maxim::hippocampus::NewEpisode;
//! use maxim::maxim_core::{ManualClock, Timestamp};
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! #[derive(Default)]
//! struct Collect(Mutex<Vec<NewEpisode>>);
//! impl ErrorSink for Collect {
//!     fn record(&self, episode: NewEpisode) {
//!         self.0.lock().unwrap().push(episode);
//!     }
//! }
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
//! let sink = Arc::new(Collect::default());
//! let layer = ErrorTraces::builder(Arc::clone(&sink)).clock(clock.shared()).build()?;
//! let subscriber = tracing_subscriber::registry().with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     tracing::error!(disk = "sda", "[storage] write failed");
//!     tracing::error!(disk = "sda", "[storage] write failed"); // within 60 s: skipped
//!     tracing::info!("not an error");
//! });
//! let got = sink.0.lock().unwrap();
//! assert_eq!(got.len(), 1);
//! assert_eq!(got[0].outcome.error.as_deref(), Some("[storage] write failed"));
//! assert_eq!(got[0].perception.observations.get("component").and_then(|v| v.as_str()), Some("storage"));
//! # Ok::<(), maxim::maxim_core::Error>(())
//! ```

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use hippocampus::{Emotion, NewEpisode};
use maxim_core::value::{Map, Value};
use maxim_core::{Partition, Result, SharedClock, Source, SystemClock, Timestamp, Trust};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// The source of every error episode: the program's own log.
pub const PROGRAM_LOG_SOURCE: &str = "program_log";
/// The trust of an error episode unless configured: that of the agent's own episodes (the
/// log is the program's own, but a message may quote text from outside it).
pub const DEFAULT_TRUST: f64 = 0.6;
/// How long a recorded (level, message prefix) key suppresses its repeats (`spec/lex-memory.md` §7).
pub const DEBOUNCE_WINDOW: Duration = Duration::from_secs(60);
/// How many characters of the message the debounce key holds (§7: 101).
pub const DEBOUNCE_PREFIX_CHARS: usize = 101;
/// Keys held before the stale ones are dropped (§7: 500).
pub const DEBOUNCE_MAX_KEYS: usize = 500;
/// Longest message or field text kept, in characters.
pub const MAX_TEXT_CHARS: usize = 4096;
/// Most fields of one event kept (besides the message).
pub const MAX_FIELDS: usize = 32;
/// The salience of an error episode (the reference's intensity for errors).
pub const ERROR_SALIENCE: f64 = 0.7;
/// The salience of a warning episode.
pub const WARNING_SALIENCE: f64 = 0.5;
/// The feeling of an error episode's trace (§7: intensity 0.7, valence −0.6; the
/// intensity slows the trace's decay).
pub const ERROR_EMOTION: Emotion = Emotion { intensity: 0.7, valence: -0.6 };
/// The feeling of a fatal error's trace (§7: intensity 0.9, valence −0.8): an ERROR event
/// with a field `fatal = true`.
pub const FATAL_EMOTION: Emotion = Emotion { intensity: 0.9, valence: -0.8 };
/// The feeling of a warning episode's trace (a warning is below the reference's error: half
/// its strength).
pub const WARNING_EMOTION: Emotion = Emotion { intensity: 0.35, valence: -0.3 };

/// Where error episodes go: the hub, or a queue in front of it.
///
/// `record` is called on the thread that logged, inside the logging call: it must be quick,
/// must not block on a lock the logging code may hold, and should not log at ERROR itself
/// (such events are ignored, but they are lost).
pub trait ErrorSink: Send + Sync + 'static {
    /// Takes one error episode.
    fn record(&self, episode: NewEpisode);
}

impl<S: ErrorSink + ?Sized> ErrorSink for Arc<S> {
    fn record(&self, episode: NewEpisode) {
        (**self).record(episode);
    }
}

impl ErrorSink for mpsc::SyncSender<NewEpisode> {
    /// Queues the episode; drops it when the queue is full or closed (logging never waits).
    fn record(&self, episode: NewEpisode) {
        let _ = self.try_send(episode);
    }
}

impl ErrorSink for Mutex<mpsc::Sender<NewEpisode>> {
    /// Queues the episode; drops it when the receiver is gone.
    fn record(&self, episode: NewEpisode) {
        let _ = self.lock().unwrap_or_else(PoisonError::into_inner).send(episode);
    }
}

/// The settings of [`ErrorTraces`].
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorTracesConfig {
    /// Record WARN events too (default: ERROR only).
    pub include_warnings: bool,
    /// The trust of the episodes, in `[0, 1]` (default [`DEFAULT_TRUST`]).
    pub trust: f64,
    /// The partition the episodes go to (default: the sink's default).
    pub partition: Option<Partition>,
    /// The debounce window (default [`DEBOUNCE_WINDOW`]).
    pub debounce: Duration,
}

impl Default for ErrorTracesConfig {
    fn default() -> Self {
        Self { include_warnings: false, trust: DEFAULT_TRUST, partition: None, debounce: DEBOUNCE_WINDOW }
    }
}

/// Builds an [`ErrorTraces`] layer.
pub struct ErrorTracesBuilder<S> {
    sink: S,
    clock: Option<SharedClock>,
    config: ErrorTracesConfig,
}

impl<S: ErrorSink> ErrorTracesBuilder<S> {
    /// The clock the debounce and the episodes' timestamps read (default: the system clock).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// All settings at once.
    pub fn config(mut self, config: ErrorTracesConfig) -> Self {
        self.config = config;
        self
    }

    /// Record WARN events too.
    pub fn include_warnings(mut self, yes: bool) -> Self {
        self.config.include_warnings = yes;
        self
    }

    /// The trust of the episodes.
    pub fn trust(mut self, trust: f64) -> Self {
        self.config.trust = trust;
        self
    }

    /// The partition the episodes go to.
    pub fn partition(mut self, partition: Partition) -> Self {
        self.config.partition = Some(partition);
        self
    }

    /// The layer. Errors: a trust NaN or outside `[0, 1]`
    /// ([`maxim_core::Error::OutOfRange`]).
    pub fn build(self) -> Result<ErrorTraces<S>> {
        let trust = Trust::new(self.config.trust)?;
        Ok(ErrorTraces {
            sink: self.sink,
            clock: self.clock.unwrap_or_else(SystemClock::shared),
            trust,
            config: self.config,
            source: Source::Other(PROGRAM_LOG_SOURCE.to_owned()),
            recorded: Mutex::new(HashMap::new()),
        })
    }
}

/// The `tracing` layer that turns the host program's errors into episodes (see the
/// [module docs](self)).
pub struct ErrorTraces<S> {
    sink: S,
    clock: SharedClock,
    trust: Trust,
    config: ErrorTracesConfig,
    source: Source,
    /// When each debounce key was last recorded.
    recorded: Mutex<HashMap<(Level, String), Timestamp>>,
}

impl<S> fmt::Debug for ErrorTraces<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorTraces").field("config", &self.config).finish_non_exhaustive()
    }
}

std::thread_local! {
    /// Set while this thread is inside a sink's `record`.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Clears [`IN_SINK`] when dropped, even when the sink panics.
struct SinkGuard;

impl Drop for SinkGuard {
    fn drop(&mut self) {
        IN_SINK.with(|f| f.set(false));
    }
}

impl<S: ErrorSink> ErrorTraces<S> {
    /// A builder for a layer that hands its episodes to `sink`.
    pub fn builder(sink: S) -> ErrorTracesBuilder<S> {
        ErrorTracesBuilder { sink, clock: None, config: ErrorTracesConfig::default() }
    }

    /// A layer with the default settings on the system clock.
    pub fn new(sink: S) -> Self {
        ErrorTraces {
            sink,
            clock: SystemClock::shared(),
            trust: Trust::new(DEFAULT_TRUST).unwrap_or(Trust::FULL),
            config: ErrorTracesConfig::default(),
            source: Source::Other(PROGRAM_LOG_SOURCE.to_owned()),
            recorded: Mutex::new(HashMap::new()),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ErrorTracesConfig {
        &self.config
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// How many debounce keys are held.
    pub fn debounce_keys(&self) -> usize {
        self.recorded.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Records `message` at `level` as the layer records an event's message, through the
    /// debounce, with `target` as the tool; returns whether an episode went to the sink. For
    /// errors that do not pass through `tracing`.
    pub fn record_message(&self, level: Level, target: &str, message: &str) -> bool {
        let fields = Fields { message: Some(cut(message)), fields: Map::new() };
        self.record_fields(level, target, None, None, fields)
    }

    /// Whether the layer records events of `level`.
    fn wants(&self, level: Level) -> bool {
        level == Level::ERROR || (self.config.include_warnings && level == Level::WARN)
    }

    /// True when `key` may be recorded now (and then remembers it).
    fn admit(&self, level: Level, message: &str, now: Timestamp) -> bool {
        let prefix: String = message.chars().take(DEBOUNCE_PREFIX_CHARS).collect();
        let window = self.config.debounce.as_secs_f64();
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (level, prefix);
        if let Some(&at) = recorded.get(&key)
            && now.secs_since(at) < window
        {
            return false;
        }
        recorded.insert(key, now);
        if recorded.len() > DEBOUNCE_MAX_KEYS {
            recorded.retain(|_, at| now.secs_since(*at) <= window);
        }
        true
    }

    fn record_fields(
        &self,
        level: Level,
        target: &str,
        file: Option<&str>,
        line: Option<u32>,
        fields: Fields,
    ) -> bool {
        let Fields { message, fields, .. } = fields;
        let message = match message {
            Some(m) if !m.trim().is_empty() => m,
            _ if !fields.is_empty() => describe_fields(&fields),
            _ => return false,
        };
        let now = self.clock.now();
        if !self.admit(level, &message, now) {
            return false;
        }
        let episode = self.episode(level, target, file, line, message, fields, now);
        IN_SINK.with(|f| f.set(true));
        let _guard = SinkGuard;
        catch_unwind(AssertUnwindSafe(|| self.sink.record(episode))).is_ok()
    }

    #[expect(clippy::too_many_arguments, reason = "one private constructor of the episode")]
    fn episode(
        &self,
        level: Level,
        target: &str,
        file: Option<&str>,
        line: Option<u32>,
        message: String,
        fields: Map,
        now: Timestamp,
    ) -> NewEpisode {
        let is_error = level == Level::ERROR;
        let fatal = is_error && matches!(fields.get("fatal"), Some(Value::Bool(true)));
        let component = component_of(&message).map_or_else(|| "unknown".to_owned(), str::to_lowercase);
        let mut obs = Map::with_capacity(10);
        obs.insert("message", Value::Text(message.clone()));
        obs.insert("level", Value::from(if is_error { "error" } else { "warning" }));
        obs.insert("target", Value::Text(cut(target)));
        obs.insert("module", Value::Text(cut(target)));
        if let Some(file) = file {
            obs.insert("file", Value::Text(cut(file)));
        }
        if let Some(line) = line {
            obs.insert("line", Value::Int(i64::from(line)));
        }
        let tag = if is_error { "error" } else { "warning" };
        obs.insert("tags", Value::List(vec![Value::from(tag), Value::Text(component.clone())]));
        obs.insert("component", Value::Text(component));
        obs.insert("unresolved", Value::Bool(true));
        if !fields.is_empty() {
            obs.insert("fields", Value::Map(fields));
        }
        let emotion = match (is_error, fatal) {
            (true, true) => FATAL_EMOTION,
            (true, false) => ERROR_EMOTION,
            (false, _) => WARNING_EMOTION,
        };
        let mut e = NewEpisode { emotion: Some(emotion), ..NewEpisode::default() };
        e.perception.observations = obs;
        e.perception.salience = if is_error { ERROR_SALIENCE } else { WARNING_SALIENCE };
        e.action.tool_name = target.into();
        e.outcome.success = Some(false);
        e.outcome.error = Some(message);
        e.source = Some(self.source.clone());
        e.trust = Some(self.trust.get());
        e.partition.clone_from(&self.config.partition);
        e.timestamp = Some(now);
        e
    }
}

impl<S: ErrorSink, T: Subscriber> Layer<T> for ErrorTraces<S> {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, T>) {
        let meta = event.metadata();
        let level = *meta.level();
        if !self.wants(level) || IN_SINK.with(Cell::get) {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.record_fields(level, meta.target(), meta.file(), meta.line(), fields);
    }
}

/// The text inside a leading `[...]` of `message`.
fn component_of(message: &str) -> Option<&str> {
    let inner = message.strip_prefix('[')?;
    let end = inner.find(']')?;
    Some(&inner[..end]).filter(|c| !c.is_empty())
}

/// `fields` as `key=value` words, for an event without a message.
fn describe_fields(fields: &Map) -> String {
    let mut out = String::new();
    for (k, v) in fields.iter() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(k);
        out.push('=');
        let _ = match v {
            Value::Text(s) => write!(out, "{s}"),
            Value::Int(i) => write!(out, "{i}"),
            Value::Float(x) => write!(out, "{x}"),
            Value::Bool(b) => write!(out, "{b}"),
            other => write!(out, "{other:?}"),
        };
    }
    cut(&out)
}

/// `s` cut at [`MAX_TEXT_CHARS`] characters.
fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT_CHARS) {
        Some((at, _)) => s[..at].to_owned(),
        None => s.to_owned(),
    }
}

/// The message and fields of an event.
#[derive(Default)]
struct Fields {
    message: Option<String>,
    fields: Map,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(match value {
                Value::Text(s) => s,
                other => format!("{other:?}"),
            });
        } else if self.fields.len() < MAX_FIELDS && self.fields.get(field.name()).is_none() {
            self.fields.insert(field.name(), value);
        }
    }
}

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        let v = if value.is_finite() { Value::Float(value) } else { Value::Text(value.to_string()) };
        self.put(field, v);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        let v = i64::try_from(value).map_or_else(|_| Value::Text(value.to_string()), Value::Int);
        self.put(field, v);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::Text(cut(value)));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, Value::Text(cut(&value.to_string())));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, Value::Text(cut(&format!("{value:?}"))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_read_from_a_leading_bracket() {
        assert_eq!(component_of("[Storage] write failed"), Some("Storage"));
        assert_eq!(component_of("write [x] failed"), None);
        assert_eq!(component_of("[] empty"), None);
        assert_eq!(component_of("[unclosed"), None);
    }

    #[test]
    fn texts_are_cut_on_character_boundaries() {
        let s = "é".repeat(MAX_TEXT_CHARS + 3);
        assert_eq!(cut(&s).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn fields_describe_an_event_without_message() {
        let mut m = Map::new();
        m.insert("code", Value::Int(5));
        m.insert("path", Value::from("/tmp/x"));
        assert_eq!(describe_fields(&m), "code=5 path=/tmp/x");
    }
}
