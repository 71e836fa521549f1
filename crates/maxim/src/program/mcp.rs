//! `maxim mcp`: the memory as an MCP server over standard input and output, or over
//! streamable HTTP on a loopback address (`--http`, feature `mcp-http`).
//!
//! Opens the partition's memory through the hub (journaled; a directory another process
//! holds open is refused with exit 1), serves the tools of [`maxim::mcp`] until the client
//! closes standard input (over HTTP: until ctrl-c or SIGTERM), then ends the session
//! (promotion, consolidation, persistence, journal compaction). Over stdio, standard output
//! carries the protocol only; over HTTP it carries the server's URL, one line. The log goes
//! to standard error.

use std::path::Path;

use maxim::hub::MemoryHub;
use maxim::maxim_core::{Partition, Source};
use maxim::mcp::{McpConfig, serve_stdio};

use super::{Failure, Outcome};

/// The settings of `maxim mcp` beyond the data directory and the partition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpOptions {
    /// The source of every write.
    pub(crate) source: String,
    /// The trust of every write.
    pub(crate) trust: f64,
    /// Items written a second (0: no limit).
    pub(crate) writes_per_second: f64,
    /// Items written at once before the rate applies.
    pub(crate) write_burst: f64,
    /// Serve over streamable HTTP at this loopback address instead of stdio.
    pub(crate) http: Option<String>,
}

/// `maxim mcp`.
pub(crate) fn serve(data: &Path, named: Option<&str>, options: &McpOptions) -> Outcome {
    let partition = match named {
        Some(name) => Partition::new(name).map_err(|e| Failure::Usage(format!("partition {name:?}: {e}")))?,
        None => Partition::default(),
    };
    let source = Source::other(&options.source)
        .map_err(|e| Failure::Usage(format!("--source {:?}: {e}", options.source)))?;
    let rate = (options.writes_per_second > 0.0).then_some(options.writes_per_second);
    let config =
        McpConfig::default().with_source(source, options.trust).with_write_budget(rate, options.write_burst);
    config.validate().map_err(|e| Failure::Usage(e.to_string()))?;
    // The address is checked and bound before the memory is opened: a refused address or a
    // taken port touches nothing.
    let listener = options.http.as_deref().map(listen).transpose()?;
    let hub = MemoryHub::builder().data_dir(data).partition(partition.clone()).open().map_err(|e| {
        Failure::Data(format!("cannot open the memory of {partition} in {}: {e}", data.display()))
    })?;
    let report = match listener {
        None => serve_stdio(hub, config),
        Some(listener) => serve_http(hub, config, listener, &partition),
    }
    .map_err(Failure::data)?;
    tracing::info!(failures = report.failures.len(), "MCP session ended");
    for failure in &report.failures {
        tracing::warn!("session end: {failure}");
    }
    Ok(())
}

#[cfg(feature = "mcp-http")]
type Listener = maxim::mcp::HttpListener;
#[cfg(not(feature = "mcp-http"))]
type Listener = std::convert::Infallible;

/// Binds `--http ADDR`: a malformed or non-loopback address is a usage error (exit 2), a
/// port that cannot be bound a data error (exit 1).
#[cfg(feature = "mcp-http")]
fn listen(addr: &str) -> Result<Listener, Failure> {
    use maxim::mcp::ServeError;
    Listener::bind(addr).map_err(|e| match e {
        ServeError::Bind { .. } => Failure::Data(e.to_string()),
        other => Failure::Usage(other.to_string()),
    })
}

/// `--http` in a program built without the `mcp-http` feature: a usage error that says how
/// to get it.
#[cfg(not(feature = "mcp-http"))]
fn listen(_addr: &str) -> Result<Listener, Failure> {
    Err(Failure::Usage(
        "--http: this maxim was built without the `mcp-http` feature; build it with \
         `cargo install maxim --features mcp-http` (or use stdio)"
            .into(),
    ))
}

/// Serves over HTTP until ctrl-c or SIGTERM; prints the URL on standard output once the
/// server accepts connections and the signal handlers are in place.
#[cfg(feature = "mcp-http")]
fn serve_http(
    hub: MemoryHub,
    config: McpConfig,
    listener: Listener,
    partition: &Partition,
) -> Result<maxim::hub::SessionReport, maxim::mcp::ServeError> {
    use std::io::Write as _;
    maxim::mcp::serve_http(hub, config, listener, maxim::mcp::shutdown_signal(), |url| {
        eprintln!(
            "maxim mcp: serving {partition} at {url} (no authentication: this machine only); \
             ctrl-c or SIGTERM ends the session"
        );
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{url}");
        let _ = stdout.flush();
    })
}

#[cfg(not(feature = "mcp-http"))]
fn serve_http(
    _hub: MemoryHub,
    _config: McpConfig,
    listener: Listener,
    _partition: &Partition,
) -> Result<maxim::hub::SessionReport, maxim::mcp::ServeError> {
    match listener {}
}
