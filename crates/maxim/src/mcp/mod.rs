//! The memory as an MCP server: `maxim mcp` (feature `mcp`, on by default).
//!
//! [`McpMemory`] maps the tools onto a [`SharedHub`] with no process and no
//! runtime, so every tool is unit-testable; [`serve_stdio`] puts it behind
//! [rmcp](https://docs.rs/rmcp)'s stdio transport on a single-threaded tokio runtime, and
//! `serve_http` (feature `mcp-http`, off by default) behind its streamable HTTP transport on
//! a loopback address, one hub shared by every HTTP session. Both end the session the same
//! way when they stop.
//!
//! **The reference server's nine tools** (`@modelcontextprotocol/server-memory`), with its
//! names, argument shapes (`entities`, `relations`, `observations` with `entityName` and
//! `contents`, `entityNames`, `deletions`, `query`, `names`) and result shapes, so a client
//! configured for it works unchanged:
//!
//! | reference            | maxim                                                              |
//! |----------------------|--------------------------------------------------------------------|
//! | entity               | an ATL concept: `name`, `entityType` = its category                |
//! | observation          | an episode (the text as its transcript) linked INSTANCE_OF to it   |
//! | relation             | an ATL relationship; a type that is not built in is proposed       |
//! | `search_nodes`       | [`MemoryHub::recall`](crate::MemoryHub::recall), not substring match |
//!
//! **maxim's own six tools:** `remember`, `recall`, `knowledge_context`, `forget`, `export`,
//! `stats` ([`TOOL_NAMES`]).
//!
//! **Provenance and scope.** Every write carries the server's source (default `mcp`) and
//! trust (default [`DEFAULT_TRUST`], below a user's own statement), and lands in the
//! partition the server was opened on. Every tool takes an optional `partition` argument: a
//! request naming another partition gets an error, never an empty success.
//!
//! **Bad input** gets a protocol error (JSON-RPC `-32602`, invalid params) and changes
//! nothing: an unknown tool, an argument of the wrong type, an unknown argument, a string or
//! list over its limit, arguments over [`McpConfig::max_argument_bytes`] (1 MiB by default).
//! A write beyond the write budget ([`McpConfig::write_rate`] items a second, bursts of
//! [`McpConfig::write_burst`]) gets `-32000` and a retry delay. A failure a caller can act on
//! (an unknown entity or id) is a tool result with `isError`, as in the reference server.
//!
//! ```
//! use maxim::MemoryHub;
//! use maxim::mcp::{McpConfig, McpMemory};
//! use serde_json::json;
//!
//! let memory = McpMemory::new(MemoryHub::builder().build()?.into_shared(), McpConfig::default())?;
//! let created = memory.call("create_entities", json!({ "entities": [
//!     { "name": "Ada", "entityType": "person", "observations": ["writes the analytical engine's programs"] },
//! ]}))?;
//! assert_eq!(created.structured["entities"][0]["name"], "Ada");
//! let found = memory.call("search_nodes", json!({ "query": "analytical engine" }))?;
//! assert_eq!(found.structured["entities"][0]["name"], "Ada");
//! // Another partition is out of reach, and says so.
//! assert!(memory.call("read_graph", json!({ "partition": "someone-else" })).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod graph;
#[cfg(feature = "mcp-http")]
mod http;
mod limits;
mod server;
mod tools;

use std::sync::Mutex;

use maxim_core::{Source, Timestamp};
use serde_json::Value as Json;

use crate::SharedHub;
pub use graph::{OBSERVATION_RUN, TYPE_PREFIX};
#[cfg(feature = "mcp-http")]
pub use http::{HttpListener, MCP_PATH, loopback_address, serve_http, shutdown_signal};
pub use server::{INSTRUCTIONS, MaximServer, ServeError, serve_stdio};
pub use tools::{DATA_NOT_INSTRUCTIONS, ToolSpec, tool_specs};

use limits::WriteBudget;

/// The trust of what the server writes, by default: an agent relaying what it was told is
/// below the user's own statement (1.0) and a tool's result (0.8), level with the agent's
/// own inference (0.5).
pub const DEFAULT_TRUST: f64 = 0.5;
/// The source of what the server writes, by default.
pub const DEFAULT_SOURCE: &str = "mcp";
/// Longest arguments of one tool call, serialised, by default (1 MiB).
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;
/// Longest line the transport reads (8 MiB): a longer one is dropped unread, with no reply
/// (it is not parsed, so it has no id to answer).
pub const MAX_LINE_BYTES: usize = 8 << 20;
/// Longest entity name, relation type or entity type, in characters.
pub const MAX_NAME_CHARS: usize = 256;
/// Longest observation or remembered text, in characters.
pub const MAX_TEXT_CHARS: usize = 16 * 1024;
/// Longest query, in characters (the reference server's limit).
pub const MAX_QUERY_CHARS: usize = 2048;
/// Most items (entities, relations, observations, names) in one call.
pub const MAX_ITEMS: usize = 1000;

/// Every tool the server offers: the reference server's nine, then maxim's six.
pub const TOOL_NAMES: [&str; 15] = [
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
    "remember",
    "recall",
    "knowledge_context",
    "forget",
    "export",
    "stats",
];

/// How the server writes and what it accepts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpConfig {
    /// The source of every write (default `mcp`).
    pub source: Source,
    /// The trust of every write, in `[0, 1]` (default [`DEFAULT_TRUST`]).
    pub trust: f64,
    /// Longest arguments of one call, serialised (default [`DEFAULT_MAX_ARGUMENT_BYTES`]).
    pub max_argument_bytes: usize,
    /// Items written a second, sustained (default 200; `None`: no limit).
    pub write_rate: Option<f64>,
    /// Items that may be written at once before the rate applies (default 2,000).
    pub write_burst: f64,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            source: Source::Other(DEFAULT_SOURCE.to_owned()),
            trust: DEFAULT_TRUST,
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            write_rate: Some(200.0),
            write_burst: 2000.0,
        }
    }
}

impl McpConfig {
    /// Checks every setting.
    pub fn validate(&self) -> maxim_core::Result<()> {
        maxim_core::Trust::new(self.trust)?;
        if self.max_argument_bytes == 0 {
            return Err(maxim_core::Error::invalid("max_argument_bytes", "must be at least 1"));
        }
        if let Some(rate) = self.write_rate {
            maxim_core::check_finite("write_rate", rate)?;
            if rate <= 0.0 {
                return Err(maxim_core::Error::invalid("write_rate", "must be positive (or no limit)"));
            }
        }
        maxim_core::check_finite("write_burst", self.write_burst)?;
        if self.write_burst < 1.0 {
            return Err(maxim_core::Error::invalid("write_burst", "must be at least 1"));
        }
        Ok(())
    }

    /// The same settings from `source` with `trust`.
    #[must_use]
    pub fn with_source(mut self, source: Source, trust: f64) -> Self {
        self.source = source;
        self.trust = trust;
        self
    }

    /// The same settings with a write budget of `rate` items a second in bursts of `burst`
    /// (`None`: no limit).
    #[must_use]
    pub fn with_write_budget(mut self, rate: Option<f64>, burst: f64) -> Self {
        self.write_rate = rate;
        self.write_burst = burst;
        self
    }
}

/// Why a tool call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The call is malformed: an unknown tool, a wrong argument, a limit exceeded, another
    /// partition named (a protocol error, `-32602`).
    #[error("{0}")]
    InvalidParams(String),
    /// Too many writes: wait `retry_after_secs` (a protocol error, `-32000`).
    #[error("write budget exhausted ({limit}); retry in {retry_after_secs:.2} s")]
    RateLimited {
        /// The budget, in words.
        limit: String,
        /// Seconds until the call would fit.
        retry_after_secs: f64,
    },
    /// The tool ran and failed in a way the caller can fix (an unknown entity or id): a
    /// tool result with `isError`.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// The JSON-RPC error code of a protocol error; `None` for [`ToolError::Failed`], which
    /// is a tool result.
    pub fn code(&self) -> Option<i32> {
        match self {
            Self::InvalidParams(_) => Some(-32602),
            Self::RateLimited { .. } => Some(-32000),
            Self::Failed(_) => None,
        }
    }
}

/// What a tool returns: the text a model reads and the structured result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text content.
    pub text: String,
    /// The structured content.
    pub structured: Json,
}

impl ToolOutput {
    /// An output whose text is `structured` pretty-printed (as the reference server does).
    fn json(structured: Json) -> Self {
        Self { text: serde_json::to_string_pretty(&structured).unwrap_or_default(), structured }
    }
}

/// The server's tools over one hub (see the [module docs](self)).
#[derive(Debug)]
pub struct McpMemory {
    hub: SharedHub,
    config: McpConfig,
    partition: String,
    budget: Mutex<WriteBudget>,
}

impl McpMemory {
    /// The tools over `hub` with `config`. Errors: a setting out of range.
    pub fn new(hub: SharedHub, config: McpConfig) -> maxim_core::Result<Self> {
        config.validate()?;
        let (partition, now) = {
            let h = hub.lock();
            (h.partition().as_str().to_owned(), h.clock().now())
        };
        let budget = Mutex::new(WriteBudget::new(config.write_rate, config.write_burst, now));
        Ok(Self { hub, config, partition, budget })
    }

    /// The hub.
    pub fn hub(&self) -> &SharedHub {
        &self.hub
    }

    /// The settings.
    pub fn config(&self) -> &McpConfig {
        &self.config
    }

    /// The partition every call reads and writes.
    pub fn partition(&self) -> &str {
        &self.partition
    }

    /// Calls tool `name` with `arguments` (a JSON object, or null for none).
    ///
    /// Errors: see [`ToolError`]; a refused call changes nothing.
    pub fn call(&self, name: &str, arguments: Json) -> Result<ToolOutput, ToolError> {
        let mut arguments = match arguments {
            Json::Null => serde_json::Map::new(),
            Json::Object(map) => map,
            other => {
                return Err(ToolError::InvalidParams(format!(
                    "{name}: arguments must be a JSON object, not {}",
                    json_kind(&other)
                )));
            }
        };
        let size = serde_json::to_vec(&arguments).map_or(usize::MAX, |v| v.len());
        if size > self.config.max_argument_bytes {
            return Err(ToolError::InvalidParams(format!(
                "{name}: arguments of {size} bytes exceed the limit of {} bytes",
                self.config.max_argument_bytes
            )));
        }
        // The scope first: a request naming another partition hears so, whatever else is
        // wrong with it. Every tool takes `partition` (its schema says so); checked here, it
        // is no tool's business after.
        match arguments.remove("partition") {
            None | Some(Json::Null) => {}
            Some(Json::String(p)) => self.check_partition(&p)?,
            Some(other) => {
                return Err(ToolError::InvalidParams(format!(
                    "{name}: partition must be a string, not {}",
                    json_kind(&other)
                )));
            }
        }
        let Some(tool) = tools::TOOLS.iter().find(|t| t.spec.name == name) else {
            return Err(ToolError::InvalidParams(format!(
                "unknown tool {name:?}; the tools are {}",
                TOOL_NAMES.join(", ")
            )));
        };
        let _s = tracing::debug_span!("mcp_call", tool = name).entered();
        (tool.run)(self, arguments)
    }

    /// Refuses a request that names another partition than the server's.
    fn check_partition(&self, p: &str) -> Result<(), ToolError> {
        if p == self.partition {
            return Ok(());
        }
        Err(ToolError::InvalidParams(format!(
            "this server serves partition {:?} only; partition {p:?} is out of its reach \
             (start a server with --partition {p:?} for it)",
            self.partition
        )))
    }

    /// Takes `items` writes from the budget, or refuses the call.
    fn spend(&self, items: usize, now: Timestamp) -> Result<(), ToolError> {
        let mut budget = self.budget.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        budget.take(items, now)
    }
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Parses the arguments of tool `tool` into `T`, naming the tool in the error.
fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: serde_json::Map<String, Json>,
) -> Result<T, ToolError> {
    serde_json::from_value(Json::Object(arguments))
        .map_err(|e| ToolError::InvalidParams(format!("{tool}: invalid arguments: {e}")))
}

/// Checks that `text` (field `field` of tool `tool`) is at most `max` characters.
fn check_len(tool: &str, field: &str, text: &str, max: usize) -> Result<(), ToolError> {
    let n = text.chars().count();
    if n > max {
        return Err(ToolError::InvalidParams(format!("{tool}: {field} of {n} characters exceeds {max}")));
    }
    Ok(())
}

/// Checks that a list (field `field` of tool `tool`) has at most [`MAX_ITEMS`] items.
fn check_items(tool: &str, field: &str, n: usize) -> Result<(), ToolError> {
    if n > MAX_ITEMS {
        return Err(ToolError::InvalidParams(format!(
            "{tool}: {field} holds {n} items, more than {MAX_ITEMS}"
        )));
    }
    Ok(())
}

/// Checks a name (entity, entity type, relation type): not blank, holds a letter or digit,
/// at most [`MAX_NAME_CHARS`].
fn check_name(tool: &str, field: &str, name: &str) -> Result<(), ToolError> {
    check_len(tool, field, name, MAX_NAME_CHARS)?;
    if !name.chars().any(char::is_alphanumeric) {
        return Err(ToolError::InvalidParams(format!("{tool}: {field} {name:?} holds no letter or digit")));
    }
    Ok(())
}

/// A hub error as a tool failure.
fn failed(e: &crate::hub::Error) -> ToolError {
    ToolError::Failed(e.to_string())
}

#[cfg(test)]
mod tests {
    use maxim_core::{ManualClock, Timestamp, days};
    use serde_json::json;

    use super::*;
    use crate::MemoryHub;

    fn memory(config: McpConfig) -> (McpMemory, ManualClock) {
        let clock = ManualClock::new(Timestamp::from_secs(1_700_000_000));
        let hub = MemoryHub::builder().clock(clock.shared()).id_seed(7).build().unwrap().into_shared();
        (McpMemory::new(hub, config).unwrap(), clock)
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        let hub = || MemoryHub::builder().build().unwrap().into_shared();
        for config in [
            McpConfig::default().with_source(Source::UserStated, 1.5),
            McpConfig::default().with_source(Source::UserStated, f64::NAN),
            McpConfig::default().with_write_budget(Some(0.0), 10.0),
            McpConfig::default().with_write_budget(Some(f64::INFINITY), 10.0),
            McpConfig::default().with_write_budget(None, 0.5),
        ] {
            assert!(McpMemory::new(hub(), config).is_err());
        }
    }

    #[test]
    fn every_tool_is_listed_once_with_an_object_schema() {
        let specs = tool_specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        assert_eq!(names, TOOL_NAMES);
        for s in &specs {
            assert_eq!(s.input_schema.get("type"), Some(&json!("object")), "{}", s.name);
            // Every tool takes the optional partition, and nothing it does not know.
            assert_eq!(
                s.input_schema["properties"]["partition"]["type"],
                json!(["string", "null"]),
                "{}",
                s.name
            );
            assert_eq!(s.input_schema["additionalProperties"], json!(false), "{}", s.name);
            let required = s.input_schema.get("required").and_then(Json::as_array);
            assert!(!required.is_some_and(|r| r.contains(&json!("partition"))), "{}", s.name);
            assert!(!(s.read_only && s.destructive), "{}", s.name);
        }
    }

    #[test]
    fn observations_and_entities_outlive_a_month_of_sessions() {
        let (m, clock) = memory(McpConfig::default());
        m.call(
            "create_entities",
            json!({ "entities": [
            { "name": "Grace", "entityType": "person", "observations": ["wrote the first compiler"] } ]}),
        )
        .unwrap();
        m.call(
            "create_relations",
            json!({ "relations": [
            { "from": "Grace", "to": "Grace", "relationType": "is" } ]}),
        )
        .unwrap_err();
        for _ in 0..30 {
            clock.advance(days(1));
            let report = m.hub().on_session_end();
            assert!(report.failures.is_empty(), "{:?}", report.failures);
        }
        let graph = m.call("read_graph", json!({})).unwrap().structured;
        assert_eq!(
            graph["entities"],
            json!([{ "name": "Grace", "entityType": "person", "observations": ["wrote the first compiler"] }])
        );
    }

    #[test]
    fn writes_carry_the_servers_source_and_trust() {
        let config = McpConfig::default().with_source(Source::other("assistant").unwrap(), 0.4);
        let (m, _) = memory(config);
        let out = m
            .call(
                "create_entities",
                json!({ "entities": [
                { "name": "Tea", "entityType": "drink", "observations": ["the user drinks it at four"] } ]}),
            )
            .unwrap();
        assert_eq!(out.structured["entities"][0]["name"], "Tea");
        let id = m.call("remember", json!({ "text": "made tea" })).unwrap().structured["id"].clone();
        let hub = m.hub().lock();
        for e in hub.hippocampus().iter() {
            assert_eq!((e.meta().source.to_string(), e.meta().trust.get()), ("assistant".to_owned(), 0.4));
        }
        assert_eq!(hub.hippocampus().len(), 2);
        assert!(hub.hippocampus().iter().any(|e| json!(e.id().to_string()) == id));
        let tea = graph::find_entity(&hub, "Tea").unwrap();
        let concept = hub.atl().concept(tea).unwrap();
        assert_eq!(
            (concept.meta.source.to_string(), concept.meta.trust.get()),
            ("assistant".to_owned(), 0.4)
        );
        assert_eq!(concept.definition, "the user drinks it at four");
    }

    #[test]
    fn a_flood_is_refused_until_the_budget_refills() {
        let (m, clock) = memory(McpConfig::default().with_write_budget(Some(2.0), 4.0));
        for i in 0..4 {
            m.call("remember", json!({ "text": format!("note {i}") })).unwrap();
        }
        let err = m.call("remember", json!({ "text": "one too many" })).unwrap_err();
        assert_eq!(err.code(), Some(-32000));
        assert_eq!(m.hub().lock().hippocampus().len(), 4);
        clock.advance(std::time::Duration::from_millis(500));
        m.call("remember", json!({ "text": "after a pause" })).unwrap();
        assert!(m.call("remember", json!({ "text": "and again" })).is_err());
    }

    #[test]
    fn another_partition_is_refused_and_the_own_is_accepted() {
        let (m, _) = memory(McpConfig::default());
        assert_eq!(m.partition(), "default");
        for tool in TOOL_NAMES {
            let err = m.call(tool, json!({ "partition": "other" })).unwrap_err();
            assert_eq!(err.code(), Some(-32602), "{tool}");
            assert!(err.to_string().contains("\"other\""), "{tool}: {err}");
        }
        assert!(m.call("stats", json!({ "partition": "default" })).is_ok());
        assert!(m.call("stats", json!(null)).is_ok());
        assert!(m.call("stats", json!([1])).is_err());
    }

    #[test]
    fn similar_names_stay_apart_and_normalised_names_meet() {
        let (m, _) = memory(McpConfig::default());
        let out = m
            .call(
                "create_entities",
                json!({ "entities": [
                { "name": "John Smith", "entityType": "person", "observations": [] },
                { "name": "John Smyth", "entityType": "person", "observations": [] },
                { "name": "john_smith", "entityType": "person", "observations": [] } ]}),
            )
            .unwrap();
        let names: Vec<&str> = out.structured["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["John Smith", "John Smyth"]);
        let added = m
            .call(
                "add_observations",
                json!({ "observations": [
                { "entityName": "john_smith", "contents": ["plays chess"] } ]}),
            )
            .unwrap();
        assert_eq!(added.structured["results"][0]["addedObservations"], json!(["plays chess"]));
        let opened = m.call("open_nodes", json!({ "names": ["John Smith"] })).unwrap().structured;
        assert_eq!(opened["entities"][0]["observations"], json!(["plays chess"]));
    }
}
