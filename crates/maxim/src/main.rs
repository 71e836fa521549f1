//! The `maxim` program: a demo of the memory, and a look into a memory directory.
//!
//! ```text
//! maxim demo [--dir DIR]   run a short agent session through the episodic and semantic
//!                          layers and save them to DIR (default: a new temporary directory)
//! maxim inspect FILE...    describe snapshot files (kind, version, size, checksum); exits
//!                          0 when every file is an intact snapshot, 1 otherwise
//! maxim crates             list the crates of the workspace
//! maxim --version
//! ```
//!
//! The libraries log through `tracing` and never install a subscriber; this program does:
//! warnings and errors go to standard error, and `MAXIM_LOG` (an `EnvFilter` directive such
//! as `debug` or `hippocampus=trace`) asks for more.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use maxim::atl::{self, Atl};
use maxim::hippocampus::{Hippocampus, NewEpisode, RecallFilter};
use maxim::maxim_core::{Clock, ManualClock, MemoryLayer, RecordId, Source, SystemClock, codec, days};

const CRATES: &[(&str, &str)] = &[
    (
        "maxim-core",
        "contracts: ids, time, records, MemoryLayer, graph, traces, ranking, text, embeddings, codec",
    ),
    ("hippocampus", "episodic layer: what happened"),
    ("atl", "semantic layer: what things mean"),
    ("angular-gyrus", "mathematical layer: what the numbers say"),
    ("crossgraph", "edges between layers, cross-layer activation"),
    ("nac", "reward learning (Rescorla-Wagner)"),
    ("ips-gate", "randomness gate for promotion"),
    ("promoter", "patterns into concepts"),
    ("cerebellum", "procedural memory: skills"),
    ("maxim", "the facade and this program"),
];

const USAGE: &str = "usage: maxim demo [--dir DIR] | maxim inspect FILE... | maxim crates | maxim --version";

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    install_log_subscriber();
    // Arguments as the OS gives them: a file name need not be UTF-8.
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let outcome = match args.first().and_then(|a| a.to_str()) {
        Some("demo") => demo_command(&args[1..]),
        Some("inspect") if args.len() > 1 => {
            return if inspect(&args[1..]) { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
        Some("crates") => {
            print_crates();
            Ok(())
        }
        Some("--version" | "-V") => {
            println!("maxim {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("maxim: {err}");
            ExitCode::FAILURE
        }
    }
}

fn print_crates() {
    println!("maxim {}\n", env!("CARGO_PKG_VERSION"));
    for (name, what) in CRATES {
        println!("  {name:<14} {what}");
    }
}

fn demo_command(args: &[OsString]) -> Result {
    match args {
        [] => {
            let dir = std::env::temp_dir().join(format!("maxim-demo-{}", std::process::id()));
            demo(&dir)
        }
        [flag, dir] if flag == "--dir" => demo(Path::new(dir)),
        _ => Err(USAGE.into()),
    }
}

/// One short agent session: episodes in, concepts out, a week of forgetting, save and reload.
fn demo(dir: &Path) -> Result {
    let clock = ManualClock::new(SystemClock.now());
    let mut hippo = Hippocampus::builder().clock(clock.shared()).build()?;
    let mut atl = Atl::builder().clock(clock.shared()).build()?;
    println!("maxim {}: a kitchen robot's first session\n", env!("CARGO_PKG_VERSION"));

    // The agent looks for things, grasps them, and sometimes fails.
    let steps: &[(&[&str], &str, &str, bool)] = &[
        (&["mug", "table"], "find mug", "look_around", true),
        (&["mug"], "grab mug", "grasp", true),
        (&["kettle", "stove"], "make tea", "navigate", false),
        (&["Coffee Mugs", "sink"], "find mug", "look_around", true),
        (&["kettle"], "make tea", "grasp", true),
        (&["coffee_mug", "table"], "grab mug", "grasp", true),
    ];
    let mut ids = Vec::new();
    for round in 0..5 {
        for &(objects, goal, tool, success) in steps {
            let mut ep = NewEpisode::default();
            ep.perception.detected_objects = objects.iter().map(|&o| o.into()).collect();
            ep.perception.salience = if round == 0 && tool == "navigate" { 0.97 } else { 0.5 };
            ep.context.active_goal = Some(goal.into());
            ep.action.tool_name = tool.into();
            ep.outcome.success = Some(success || round > 2);
            let id = hippo.capture(ep)?;
            ids.push(id);
            // What the episode means: its objects become concepts, deduplicated by name.
            for &object in objects {
                let mut spec = atl::spec(object, "object");
                spec.source_episode = Some(id);
                atl.find_or_create(&spec)?;
            }
            clock.advance(Duration::from_secs(90));
        }
    }
    let stats = hippo.stats();
    println!("hippocampus: {} episodes, {} association edges", stats.records, stats.graph_edges);
    let found = hippo.recall(&RecallFilter::new().goal("find mug").success(true), 3);
    println!("  recall goal=\"find mug\" success=true, newest first:");
    for episode in &found {
        println!("    {}", line(episode));
    }
    let last = *ids.last().ok_or("no episode")?;
    println!("  spreading activation from the last episode ({}):", line(hippo.peek(last).ok_or("gone")?));
    for (episode, score) in hippo.recall_associated(&[last], 3) {
        println!("    {score:.3}  {}", line(episode));
    }

    println!("\natl: {} concepts from {} object sightings", atl.len(), ids.len());
    for name in ["mug", "coffee mug", "kettle"] {
        if let Some((id, similarity)) = atl.recall_similar(name, 1).first() {
            let concept = atl.concept(*id).ok_or("concept vanished")?;
            println!(
                "  \"{name}\" -> {} (similarity {similarity:.2}, seen {} times, confidence {:.2})",
                concept.name, concept.reinforcement_count, concept.confidence
            );
        }
    }
    let mug = atl.find_or_create(&atl::spec("coffee mug", "object"))?.id;
    let kitchen = atl.find_or_create(&atl::spec("kitchen", "location"))?.id;
    atl.define_relationship(mug, kitchen, "RELATED_TO", 0.8, 0.6)?;
    atl.set_property(mug, "color", "blue", Source::UserStated, 1.0)?;
    let write = atl.set_property(mug, "color", "red", Source::web("example.com")?, 0.3)?;
    if let Some(contradiction) = write.contradiction {
        println!("  contradiction on {} kept, not overwritten:", contradiction.key);
        for claim in &contradiction.claims {
            println!("    {} from {} (trust {})", claim.value, claim.source, claim.trust.get());
        }
    }

    clock.advance(days(8));
    let slept = hippo.sleep();
    println!(
        "\neight days later, sleep: {} promoted, {} compressed, {} removed, {} kept",
        slept.promoted, slept.compressed, slept.removed, slept.preserved
    );

    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot use {} as the demo directory: {e}", dir.display()))?;
    let (hippo_path, atl_path) = (dir.join("hippocampus.snap"), dir.join("atl.snap"));
    // The demo is a new session by design: it replaces the files of an earlier demo run in
    // DIR, which a store would otherwise refuse (it overwrites only files it created or read).
    hippo.allow_overwrite(true);
    atl.allow_overwrite(true);
    hippo.save(&hippo_path)?;
    atl.save(&atl_path)?;
    let mut hippo_again = Hippocampus::builder().clock(clock.shared()).build()?;
    hippo_again.load(&hippo_path)?;
    let mut atl_again = Atl::builder().clock(clock.shared()).build()?;
    atl_again.load(&atl_path)?;
    println!("\nsaved to {} and loaded back:", dir.display());
    println!("  hippocampus {} records, atl {} concepts", hippo_again.len(), atl_again.len());
    if !inspect_paths(&[hippo_path.clone(), atl_path]) {
        return Err("a file just saved does not verify".into());
    }
    let stranger = Hippocampus::builder().clock(clock.shared()).build()?;
    if let Err(err) = stranger.save(&hippo_path) {
        println!("\nan empty store may not replace that memory: {err}");
    }
    let unknown = RecordId::from_u128(7);
    if let Err(err) = hippo_again.remove(unknown) {
        println!("\nbad input gets a typed error: {err}");
    }
    Ok(())
}

/// One episode on one line: goal, tool, outcome, objects.
fn line(episode: &maxim::hippocampus::Episode) -> String {
    let s = episode.summary();
    let outcome = match s.success {
        Some(true) => "succeeded",
        Some(false) => "failed",
        None => "unknown",
    };
    let goal = s.goal.as_deref().unwrap_or("-");
    format!("{goal}: {} {outcome}, saw [{}]", s.tool, s.detected_objects.join(", "))
}

fn inspect(files: &[OsString]) -> bool {
    inspect_paths(&files.iter().map(PathBuf::from).collect::<Vec<_>>())
}

/// Describes every file (an unreadable or damaged one does not stop the others): intact
/// snapshots on standard output, problems on standard error, each naming its file. True
/// when every file is an intact snapshot.
fn inspect_paths(files: &[PathBuf]) -> bool {
    let mut all_intact = true;
    for path in files {
        match codec::inspect(path) {
            Ok(info) if info.is_intact() => println!("  {info}"),
            Ok(info) => {
                all_intact = false;
                eprintln!("  {info}");
            }
            Err(err) => {
                all_intact = false;
                // The codec's errors name the file already.
                eprintln!("  {err}");
            }
        }
    }
    all_intact
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
