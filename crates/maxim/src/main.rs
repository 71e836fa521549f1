//! The `maxim` program: a two-week agent you can watch, and a memory you can manage.
//!
//! `maxim demo` runs a house robot for simulated days against a memory directory (default
//! `./maxim-data`; running it again continues the same memory) and prints what the memory
//! learned; the other commands look into and manage a memory directory. `maxim --help` and
//! `maxim <command> --help` say the rest.
//!
//! Exit codes: 0 ok, 1 the data is damaged or not found (or cannot be written), 2 usage.
//!
//! The libraries log through `tracing` and never install a subscriber; this program does:
//! warnings and errors go to standard error, and `MAXIM_LOG` (an `EnvFilter` directive such
//! as `debug` or `hippocampus=trace`) asks for more.

mod program;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use program::{Failure, Outcome};

const EXIT_CODES: &str = "\
Exit codes:
  0  ok
  1  the data is damaged or not found (or cannot be written); the message names the path or id
  2  usage: an unknown command or option, a missing or malformed argument";

/// A memory that accumulates, for AI agents: run the demo, look into a memory, manage it.
#[derive(Debug, Parser)]
#[command(name = "maxim", version, about, after_help = EXIT_CODES, propagate_version = true)]
struct Cli {
    /// The memory directory.
    #[arg(long, global = true, value_name = "DIR", default_value = "./maxim-data")]
    data: PathBuf,
    /// The partition (an agent or a user) to work on; commands that read take every
    /// partition found when none is named, `demo` takes `robot`.
    #[arg(long, global = true, value_name = "P")]
    partition: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a house robot for simulated days (one session a day) and show what it learned.
    ///
    /// Captures the days' episodes through the memory hub, ends each day's session
    /// (promotion, consolidation, persistence), then prints the layer statistics, the
    /// promoted concepts, the patterns found, the contradiction, a cross-layer traversal,
    /// a recall and the knowledge context an LLM would receive, and writes an SVG of the
    /// navigate tool's success. Running it again on the same directory continues the memory
    /// with the following days.
    #[command(after_help = EXIT_CODES)]
    Demo(DemoArgs),
    /// Count what the memory holds, layer by layer.
    #[command(after_help = EXIT_CODES)]
    Stats(JsonArg),
    /// Ask the memory a question in words.
    #[command(after_help = EXIT_CODES)]
    Recall {
        /// The question.
        query: String,
        /// At most this many hits.
        #[arg(long, default_value_t = 8)]
        limit: usize,
        #[command(flatten)]
        json: JsonArg,
    },
    /// List the concepts the memory holds.
    #[command(after_help = EXIT_CODES)]
    Concepts {
        /// Only concepts of this category (object, person, location, goal, action, ...).
        #[arg(long)]
        category: Option<String>,
        #[command(flatten)]
        json: JsonArg,
    },
    /// Show one record, whatever its layer.
    #[command(after_help = EXIT_CODES)]
    Show {
        /// The record's id, as the other commands print it.
        id: String,
        #[command(flatten)]
        json: JsonArg,
    },
    /// The fenced knowledge context an LLM would receive for a query.
    #[command(after_help = EXIT_CODES)]
    Context {
        /// The query.
        query: String,
        /// At most this many entries.
        #[arg(long, default_value_t = 8)]
        limit: usize,
        #[command(flatten)]
        json: JsonArg,
    },
    /// End a session now: promotion, consolidation of every layer, persistence.
    #[command(after_help = EXIT_CODES)]
    Consolidate(JsonArg),
    /// Print everything the memory holds as JSON (about one partition with --partition P).
    #[command(after_help = EXIT_CODES)]
    Export,
    /// Delete a record, everything from a source, or a whole partition, in every layer.
    ///
    /// `forget <ID>` and `forget --source S` work on every partition unless --partition
    /// names one; `forget --partition P` alone deletes the whole partition. Prints what was
    /// removed. Asks for confirmation when standard input is a terminal, unless --yes.
    #[command(after_help = EXIT_CODES)]
    Forget(ForgetArgs),
    /// Describe snapshot files (kind, version, size, checksum), every one of them.
    ///
    /// Exits 0 when every file is an intact snapshot, 1 otherwise.
    #[command(after_help = EXIT_CODES)]
    Inspect {
        /// The files (any name the system allows, UTF-8 or not).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// The skill lab of procedural memory: runs with the gate on and off, and a chart.
    #[command(after_help = EXIT_CODES)]
    Lab {
        /// Where to write the chart.
        #[arg(long, value_name = "PATH", default_value = "target/lab.svg")]
        out: PathBuf,
        /// Tasks per arm.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// The seed of the tasks.
        #[arg(long, default_value_t = 29)]
        seed: u64,
    },
    /// List the crates of the workspace.
    Crates,
    /// Serve the memory to an MCP client over standard input and output (or HTTP).
    ///
    /// The reference memory server's nine tools (create_entities, create_relations,
    /// add_observations, delete_entities, delete_observations, delete_relations, read_graph,
    /// search_nodes, open_nodes) with the same arguments, and maxim's own (remember, recall,
    /// knowledge_context, forget, export, stats). Every write carries --source and --trust and
    /// lands in --partition (default `default`); a request naming another partition is
    /// refused. Serves until the client closes standard input (with --http: until ctrl-c or
    /// SIGTERM), then ends the session (consolidation, persistence, journal compaction). A
    /// directory another process holds open is refused (exit 1).
    #[cfg(feature = "mcp")]
    #[command(after_help = EXIT_CODES)]
    Mcp(McpArgs),
}

/// `maxim mcp`'s settings.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
struct McpArgs {
    /// The source of everything the server writes (`mcp`, `user_stated`, `web:DOMAIN`, any name).
    #[arg(long, default_value = maxim::mcp::DEFAULT_SOURCE)]
    source: String,
    /// The trust of everything the server writes, in [0, 1] (a user's own statement is 1).
    #[arg(long, default_value_t = maxim::mcp::DEFAULT_TRUST)]
    trust: f64,
    /// Items (entities, relations, observations, episodes) written a second, sustained; 0: no limit.
    #[arg(long, default_value_t = 200.0)]
    writes_per_second: f64,
    /// Items that may be written at once before the rate applies.
    #[arg(long, default_value_t = 2000.0)]
    write_burst: f64,
    /// Serve over streamable HTTP at http://ADDR/mcp instead of stdio, until ctrl-c or SIGTERM.
    /// ADDR is a loopback address and port: 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (port
    /// 0 picks a free one; the URL is printed on standard output). The server has NO
    /// authentication: any local process can read and write the memory, so other addresses
    /// are refused. Needs a maxim built with the `mcp-http` feature.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
}

/// `--json`, for commands a script would read.
#[derive(Debug, Args)]
struct JsonArg {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Simulated days to run (each one session).
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(1..=365))]
    days: u32,
    /// The seed of the simulation.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Where to write the SVG picture (default: navigate.svg in the memory directory).
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
}

/// `forget <ID>`, `forget --source S`, or `forget --partition P` alone (the whole partition).
#[derive(Debug, Args)]
struct ForgetArgs {
    /// The record to delete.
    #[arg(conflicts_with = "source")]
    id: Option<String>,
    /// Delete everything that came from this source (user_stated, tool_result, web:DOMAIN, ...).
    #[arg(long)]
    source: Option<String>,
    /// Do not ask for confirmation.
    #[arg(long, short)]
    yes: bool,
    #[command(flatten)]
    json: JsonArg,
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    install_log_subscriber();
    // `try_parse`, so that a usage error exits 2 and `--help` 0, whatever clap's defaults.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("maxim: {failure}");
            ExitCode::from(failure.code())
        }
    }
}

fn run(cli: Cli) -> Outcome {
    use program::memory;
    let (data, p) = (cli.data, cli.partition.as_deref());
    match cli.command {
        Command::Demo(args) => memory::demo(&data, args.days, args.seed, p, args.svg.as_deref()),
        Command::Stats(JsonArg { json }) => memory::stats(&data, p, json),
        Command::Recall { query, limit, json } => memory::recall(&data, p, &query, limit, json.json),
        Command::Concepts { category, json } => memory::concepts(&data, p, category.as_deref(), json.json),
        Command::Show { id, json } => memory::show(&data, p, &id, json.json),
        Command::Context { query, limit, json } => memory::context(&data, p, &query, limit, json.json),
        Command::Consolidate(JsonArg { json }) => memory::consolidate(&data, p, json),
        Command::Export => memory::export(&data, p),
        Command::Forget(args) => {
            let target = match (args.id, args.source) {
                (Some(id), None) => memory::ForgetTarget::Id(id),
                (None, Some(source)) => memory::ForgetTarget::Source(source),
                (None, None) if p.is_some() => memory::ForgetTarget::Partition,
                _ => return Err(Failure::Usage("forget takes <ID>, --source S or --partition P".into())),
            };
            memory::forget(&data, p, &target, args.yes, args.json.json)
        }
        Command::Inspect { files } => program::inspect(&files),
        Command::Lab { out, runs, seed } => program::lab(&out, runs, seed),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => program::mcp::serve(
            &data,
            p,
            &program::mcp::McpOptions {
                source: args.source,
                trust: args.trust,
                writes_per_second: args.writes_per_second,
                write_burst: args.write_burst,
                http: args.http,
            },
        ),
        Command::Crates => {
            program::print_crates();
            Ok(())
        }
    }
}

/// A reader that stops early (`maxim demo | head`) ends the program quietly (exit 0)
/// instead of with a panic's message: `println!` panics on a closed standard output.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Sends the libraries' `tracing` events to standard error: warnings and errors by default
/// (a failed callback or a recovered snapshot is worth seeing), more when `MAXIM_LOG` says so.
fn install_log_subscriber() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MAXIM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // A second subscriber cannot be installed; the first one stays, which is what we want.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true)
        .try_init();
}
