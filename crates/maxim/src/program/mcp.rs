//! `maxim mcp`: the memory as an MCP server over standard input and output.
//!
//! Opens the partition's memory through the hub (journaled; a directory another process
//! holds open is refused with exit 1), serves the tools of [`maxim::mcp`] until the client
//! closes standard input, then ends the session (promotion, consolidation, persistence,
//! journal compaction). Standard output carries the protocol only: the log goes to standard
//! error.

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
    let hub = MemoryHub::builder().data_dir(data).partition(partition.clone()).open().map_err(|e| {
        Failure::Data(format!("cannot open the memory of {partition} in {}: {e}", data.display()))
    })?;
    let report = serve_stdio(hub, config).map_err(Failure::data)?;
    tracing::info!(failures = report.failures.len(), "MCP session ended");
    for failure in &report.failures {
        tracing::warn!("session end: {failure}");
    }
    Ok(())
}
