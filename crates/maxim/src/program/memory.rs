//! The commands that open a memory directory through the [`MemoryHub`]: `demo`, `stats`,
//! `recall`, `concepts`, `show`, `context`, `consolidate`, `export` and `forget`.
//!
//! A memory directory holds one subdirectory per partition (an agent or a user); a command
//! works on the partition `--partition` names, or on every partition found when it names
//! none (the demo's agent is `robot`). Commands that only read refuse a directory that does
//! not exist (exit 1) rather than create an empty memory.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use maxim::angular_gyrus::fit::{CosinorFit, TrendFit};
use maxim::demo::{self, Scenario, SuccessSeries};
use maxim::hub::{Forget, KnowledgeQuery, MemoryHub, partition_dir};
use maxim::maxim_core::{
    ConceptProvenance, LayerKind, ManualClock, MemoryRecord, Partition, RecordId, SharedClock, Source,
    SystemClock, Timestamp,
};
use serde_json::{Value as Json, json};

use super::plot;
use super::{Failure, Outcome};

/// The partition the demo's robot remembers in.
pub(crate) const DEMO_PARTITION: &str = "robot";
/// The metric the demo's picture and patterns are about.
const NAVIGATE_METRIC: &str = "tool:navigate:success";
/// How many promoted concepts the demo lists.
const PROMOTED_SHOWN: usize = 8;
/// How many concepts of a traversal the demo lists (every pattern and skill is listed).
const CONCEPTS_SHOWN: usize = 8;
/// The question the demo asks its memory.
const WHY: &str = "why does navigation fail?";

/// What `forget` deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ForgetTarget {
    /// One record, by its printed id.
    Id(String),
    /// Everything from a source (`user_stated`, `web:DOMAIN`, ...).
    Source(String),
    /// A whole partition.
    Partition,
}

fn partition(name: &str) -> Result<Partition, Failure> {
    Partition::new(name).map_err(|e| Failure::Usage(format!("partition {name:?}: {e}")))
}

fn open_with(data: &Path, partition: &Partition, clock: SharedClock) -> Result<MemoryHub, Failure> {
    MemoryHub::builder().data_dir(data).partition(partition.clone()).clock(clock).open().map_err(|e| {
        Failure::Data(format!("cannot open the memory of {partition} in {}: {e}", data.display()))
    })
}

/// The partitions of the memory in `data`: the one named, or every one found. Exit 1 when
/// `data` (or the named partition) does not exist.
fn partitions(data: &Path, named: Option<&str>) -> Result<Vec<Partition>, Failure> {
    if !data.is_dir() {
        return Err(Failure::Data(format!("no memory at {}: not a directory", data.display())));
    }
    if let Some(name) = named {
        let p = partition(name)?;
        let dir = partition_dir(data, &p);
        if !dir.is_dir() {
            return Err(Failure::Data(format!(
                "no partition {name:?} in {} ({} not found)",
                data.display(),
                dir.display()
            )));
        }
        return Ok(vec![p]);
    }
    let entries =
        std::fs::read_dir(data).map_err(|e| Failure::Data(format!("cannot read {}: {e}", data.display())))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Failure::Data(format!("cannot read {}: {e}", data.display())))?;
        if !entry.path().is_dir() {
            continue;
        }
        let Some(name) = entry.file_name().to_str().and_then(partition_name) else { continue };
        if let Ok(p) = Partition::new(&name)
            && partition_dir(data, &p) == entry.path()
        {
            found.push(p);
        }
    }
    found.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    Ok(found)
}

/// The partition name a directory name stands for (`x-` and hex for names that are not plain).
fn partition_name(dir: &str) -> Option<String> {
    let Some(hex) = dir.strip_prefix("x-") else { return Some(dir.to_owned()) };
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

/// Prints `value` as pretty JSON; a reader that stops early (`| head`) is not an error.
fn print_json(value: &Json) -> Outcome {
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out));
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Failure::Data(format!("cannot write to standard output: {e}"))),
    }
}

fn parse_id(text: &str) -> Result<RecordId, Failure> {
    text.trim().parse().map_err(|e| Failure::Usage(format!("{text:?} is not a record id: {e}")))
}

// ---------------------------------------------------------------------------------------
// demo

/// `maxim demo`: runs `days` simulated days after whatever the memory already holds.
pub(crate) fn demo(data: &Path, days: u32, seed: u64, named: Option<&str>, svg: Option<&Path>) -> Outcome {
    let p = partition(named.unwrap_or(DEMO_PARTITION))?;
    let clock = ManualClock::new(demo::START);
    let mut hub = open_with(data, &p, clock.shared())?;
    // Continue after the last day the memory holds.
    let last = hub.hippocampus().iter().map(|e| e.meta().timestamp).max();
    let first = last.map_or(0, |t| u32::try_from(demo::day_of(t) + 1).unwrap_or(0));
    let held = hub.hippocampus().len();
    println!("maxim {}: a house robot, {days} simulated day(s), seed {seed}", env!("CARGO_PKG_VERSION"));
    match last {
        Some(_) => println!(
            "continuing the memory in {}: {held} episodes held, days {first}..{} now\n",
            data.display(),
            first + days - 1
        ),
        None => println!("a new memory in {}: days 0..{}\n", data.display(), days - 1),
    }
    let scenario = Scenario { seed, days };
    let progress = Progress::new(u64::from(days));
    let mut captured = 0usize;
    for day in scenario.days_from(first) {
        clock.set(day.start);
        hub.on_session_start();
        for event in &day.events {
            clock.set(event.at);
            let id = hub.capture(event.episode.clone()).map_err(Failure::data)?;
            captured += 1;
            if let Some(claim) = &event.claim {
                clock.set(event.at);
                let mut subject = maxim::atl::spec(claim.subject, "object");
                subject.source_episode = Some(id);
                hub.state_property(&subject, claim.key, claim.value, claim.source.clone(), claim.trust)
                    .map_err(Failure::data)?;
            }
        }
        if let Some(run) = &day.skill_run {
            clock.set(run.at);
            hub.skills_mut().distil(&run.trace, &run.outcome).map_err(Failure::data)?;
        }
        clock.set(day.start + std::time::Duration::from_secs(23 * 3600 + 59 * 60));
        let report = hub.on_session_end();
        for failure in &report.failures {
            progress.note(&format!(
                "day {}: session end step {} failed: {}",
                day.index, failure.step, failure.error
            ));
        }
        progress.day(&format!(
            "day {:>3}: {} episodes, {} pattern(s) confirmed, {} concept(s) promoted",
            day.index,
            day.events.len(),
            report.patterns.len(),
            report.concepts_promoted
        ));
    }
    progress.finish();
    println!("captured {captured} episodes\n");
    report_demo(&hub, data, svg)
}

/// Progress over the days: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(days: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(days);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} day {pos}/{len} {msg}") {
                bar.set_style(style);
            }
            bar
        });
        Self { bar }
    }

    fn day(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.inc(1),
            None => println!("{line}"),
        }
    }

    fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// What the demo prints once the days are done.
fn report_demo(hub: &MemoryHub, data: &Path, svg: Option<&Path>) -> Outcome {
    print_stats_text(hub);

    println!("\npromoted concepts (provenance, confidence, source):");
    let promoted = promoted_concepts(hub);
    if promoted.is_empty() {
        println!("  none yet");
    }
    for c in promoted.iter().take(PROMOTED_SHOWN) {
        println!(
            "  {} [{}] {:?}, confidence {:.2}, from {} (trust {:.2}): {}",
            c.name,
            c.category,
            c.provenance,
            c.confidence,
            c.meta.source,
            c.meta.trust.get(),
            c.definition
        );
    }

    if promoted.len() > PROMOTED_SHOWN {
        println!(
            "  ... and {} more (maxim concepts --category causal_pattern)",
            promoted.len() - PROMOTED_SHOWN
        );
    }

    println!("\npatterns (angular gyrus):");
    let patterns = hub.angular_gyrus().patterns();
    if patterns.is_empty() {
        println!("  none confirmed yet");
    }
    for r in &patterns {
        println!("  {} (confidence {:.2}): {}", r.name, r.confidence, r.verbal);
    }
    let (series, trend, rhythm) = navigate_fits(hub);
    match &trend {
        Some(t) => println!(
            "  navigate trend: {:+.4} per day (R² {:.2}, p {:.1e}) over {} days",
            t.slope_per_day,
            t.r_squared,
            t.p_value,
            series.by_day.len()
        ),
        None => println!("  navigate trend: not enough days to fit"),
    }
    match &rhythm {
        Some(c) => {
            let trough = (c.acrophase_hours() + c.period_hours / 2.0).rem_euclid(c.period_hours);
            println!(
                "  navigate rhythm: best at {} UTC, worst at {} UTC (phase {:.2}, {}), amplitude {:.2}, R² {:.2}",
                plot::clock_time(c.acrophase_hours()),
                plot::clock_time(trough),
                trough / c.period_hours,
                part_of_day(trough),
                c.amplitude,
                c.r_squared
            );
        }
        None => println!("  navigate rhythm: not enough hours to fit"),
    }

    println!("\ncontradictions (kept, not overwritten):");
    let contradictions = hub.atl().contradictions();
    if contradictions.is_empty() {
        println!("  none");
    }
    for c in &contradictions {
        let name = hub.atl().record(c.concept).map_or_else(|| c.concept.to_string(), |r| r.name().to_owned());
        println!("  {name}.{}:", c.key);
        for claim in &c.claims {
            println!("    {} from {} (trust {:.2})", claim.value, claim.source, claim.trust.get());
        }
    }

    println!("\ncross-layer traversal from a failed navigate episode:");
    match last_failed_navigation(hub) {
        Some(id) => {
            let traversal = hub.traversal(id, 4).map_err(Failure::data)?;
            println!("  start: {}", hub.record_name(traversal.start));
            let mut concepts = 0;
            for step in traversal.steps.iter().filter(|s| s.record.layer != LayerKind::Hippocampus) {
                if step.record.layer == LayerKind::Atl {
                    concepts += 1;
                    if concepts > CONCEPTS_SHOWN {
                        continue;
                    }
                }
                println!(
                    "  {}{} -[{}]-> {} {} ({:.3})",
                    "  ".repeat(step.depth as usize - 1),
                    step.depth,
                    step.via,
                    step.record.layer.as_str(),
                    step.name,
                    step.activation
                );
            }
            let episodes = traversal.in_layer(LayerKind::Hippocampus).count();
            let more = concepts.saturating_sub(CONCEPTS_SHOWN);
            println!("  (and {more} more concept(s), {episodes} associated episode(s))");
        }
        None => println!("  no failed navigate episode held"),
    }

    println!("\nrecall(\"{WHY}\"):");
    print_recall(hub, WHY, 5);

    println!("\nthe knowledge context an LLM would receive for \"{WHY}\":");
    let context = hub.knowledge_context(&KnowledgeQuery::Text(WHY.to_owned()), 8).map_err(Failure::data)?;
    println!("{}", context.render());

    let path: PathBuf = svg.map_or_else(|| data.join("navigate.svg"), Path::to_path_buf);
    plot::write_svg(
        &path,
        "maxim demo: the navigate tool's success",
        &series,
        trend.as_ref(),
        rhythm.as_ref(),
    )
    .map_err(Failure::Data)?;
    println!("\npicture written to {}", path.display());
    Ok(())
}

fn part_of_day(hour: f64) -> &'static str {
    match hour {
        h if h < 5.0 => "night",
        h if h < 12.0 => "morning",
        h if h < 17.0 => "afternoon",
        h if h < 22.0 => "evening",
        _ => "night",
    }
}

/// The navigate tool's success per day and per hour (from the hub's metric series), and
/// their fits by angular-gyrus.
fn navigate_fits(hub: &MemoryHub) -> (SuccessSeries, Option<TrendFit>, Option<CosinorFit>) {
    let Some(metric) = hub.metric(NAVIGATE_METRIC) else { return (SuccessSeries::default(), None, None) };
    let outcomes = metric
        .times
        .iter()
        .zip(&metric.values)
        .filter_map(|(&t, &v)| Some((Timestamp::from_secs_f64(t)?, v > 0.5)));
    let series = SuccessSeries::from_outcomes(outcomes);
    let trend = maxim::angular_gyrus::fit::fit_trend(&series.day_times(), &series.day_rates()).ok();
    let rhythm = maxim::angular_gyrus::fit::fit_cosinor(
        &series.hour_times(),
        &series.hour_rates(),
        maxim::angular_gyrus::fit::Period::DAILY,
    )
    .ok();
    (series, trend, rhythm)
}

fn promoted_concepts(hub: &MemoryHub) -> Vec<&maxim::atl::Concept> {
    let mut out: Vec<&maxim::atl::Concept> = hub
        .atl()
        .recall_concepts(&maxim::atl::ConceptFilter::new(), usize::MAX)
        .into_iter()
        .filter_map(|r| r.as_concept())
        .filter(|c| {
            c.provenance != ConceptProvenance::EpisodicConsolidation || c.category.ends_with("_pattern")
        })
        .collect();
    out.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.name.cmp(&b.name)));
    out
}

fn last_failed_navigation(hub: &MemoryHub) -> Option<RecordId> {
    hub.hippocampus()
        .iter()
        .filter(|e| e.tool_name() == demo::NAVIGATE && e.success() == Some(false))
        .max_by_key(|e| e.meta().timestamp)
        .map(MemoryRecord::id)
}

/// One thing a text recall found.
#[derive(Debug, serde::Serialize)]
struct Hit {
    layer: &'static str,
    id: RecordId,
    name: String,
    /// The fused score.
    score: Option<f64>,
    why: String,
}

/// What `MemoryHub::recall(query)` finds, every layer, with why each hit was found.
fn recall_hits(hub: &MemoryHub, query: &str, limit: usize) -> Vec<Hit> {
    let options = maxim::hub::RecallOptions::default().limit(limit);
    let hits = match hub.recall(query, &options) {
        Ok(hits) => hits,
        Err(e) => {
            eprintln!("maxim: recall: {e}");
            return Vec::new();
        }
    };
    hits.into_iter()
        .map(|h| Hit {
            layer: h.record.layer.as_str(),
            id: h.record.id,
            name: h.name,
            score: Some(h.score),
            why: h.why.iter().map(why_text).collect::<Vec<_>>().join(", "),
        })
        .collect()
}

/// One piece of a hit's evidence in words.
fn why_text(why: &maxim::hub::Why) -> String {
    use maxim::hub::Why;
    match why {
        Why::Lexical { rank, terms, .. } => format!("words: {terms} (rank {rank})"),
        Why::Semantic { similarity, .. } => format!("similar: {similarity:.2}"),
        Why::Entity { concept } => format!("about {concept}"),
        Why::Neighbour { .. } => "next to a hit".to_owned(),
        Why::Expansion { terms } => format!("expanded: {}", terms.join(" ")),
        _ => "other evidence".to_owned(),
    }
}

fn print_recall(hub: &MemoryHub, query: &str, limit: usize) {
    let hits = recall_hits(hub, query, limit);
    if hits.is_empty() {
        println!("  nothing found");
    }
    for hit in &hits {
        let score = hit.score.map_or_else(String::new, |s| format!(" {s:.2}"));
        println!("  [{}] {} ({}{score}; id {})", hit.layer, hit.name, hit.why, hit.id);
    }
}

// ---------------------------------------------------------------------------------------
// reading commands

fn print_stats_text(hub: &MemoryHub) {
    let s = hub.stats();
    println!(
        "memory of {} ({}):",
        s.partition,
        s.dir.as_deref().map_or_else(String::new, |d| d.display().to_string())
    );
    println!("  hippocampus    {} episodes", s.episodes);
    println!("  atl            {} concepts", s.concepts);
    println!("  angular gyrus  {} records, {} patterns", s.math_records, s.patterns);
    println!("  cerebellum     {} skills", s.skills);
    println!("  crossgraph     {} cross-layer edges", s.cross_edges);
    println!("  nac            {} causal links", s.causal_links);
    println!("  metrics        {} series", s.metrics);
}

/// The counts as JSON; the directory as text even when its name is not UTF-8 (serde
/// refuses such a path).
fn stats_json(s: &maxim::HubStats) -> Json {
    json!({
        "partition": s.partition,
        "dir": s.dir.as_deref().map(|d| d.to_string_lossy()),
        "episodes": s.episodes,
        "concepts": s.concepts,
        "math_records": s.math_records,
        "patterns": s.patterns,
        "skills": s.skills,
        "cross_edges": s.cross_edges,
        "causal_links": s.causal_links,
        "metrics": s.metrics,
        "session_active": s.session_active,
    })
}

/// `maxim stats`.
pub(crate) fn stats(data: &Path, named: Option<&str>, json: bool) -> Outcome {
    let mut all = Vec::new();
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        if json {
            all.push(stats_json(&hub.stats()));
        } else {
            print_stats_text(&hub);
        }
    }
    if json {
        print_json(&Json::Array(all))?;
    } else if all.is_empty() && partitions(data, named)?.is_empty() {
        println!("no partition in {}", data.display());
    }
    Ok(())
}

/// `maxim recall <query>`.
pub(crate) fn recall(data: &Path, named: Option<&str>, query: &str, limit: usize, json: bool) -> Outcome {
    let mut all = Vec::new();
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        if json {
            for hit in recall_hits(&hub, query, limit) {
                let mut value = serde_json::to_value(&hit).map_err(Failure::data)?;
                value["partition"] = json!(p.as_str());
                all.push(value);
            }
        } else {
            println!("{p}:");
            print_recall(&hub, query, limit);
        }
    }
    if json { print_json(&Json::Array(all)) } else { Ok(()) }
}

/// `maxim concepts [--category C]`.
pub(crate) fn concepts(data: &Path, named: Option<&str>, category: Option<&str>, json: bool) -> Outcome {
    let mut all = Vec::new();
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        let mut filter = maxim::atl::ConceptFilter::new().include_compressed(true);
        if let Some(c) = category {
            filter = filter.category(c);
        }
        let mut records = hub.atl().recall_concepts(&filter, usize::MAX);
        records.sort_by(|a, b| b.confidence().total_cmp(&a.confidence()).then(a.name().cmp(b.name())));
        if !json {
            println!("{p}: {} concept(s)", records.len());
        }
        for r in records {
            let (provenance, source, trust) = match r.as_concept() {
                Some(c) => (format!("{:?}", c.provenance), c.meta.source.to_string(), c.meta.trust.get()),
                None => ("compressed".to_owned(), r.meta().source.to_string(), r.meta().trust.get()),
            };
            if json {
                all.push(json!({ "partition": p.as_str(), "id": r.id(), "name": r.name(), "category": r.category(),
                    "confidence": r.confidence(), "provenance": provenance, "source": source, "trust": trust }));
            } else {
                println!(
                    "  {} {:<28} {:<18} confidence {:.2}  {provenance}, from {source} (trust {trust:.2})",
                    r.id(),
                    r.name(),
                    r.category(),
                    r.confidence()
                );
            }
        }
    }
    if json { print_json(&Json::Array(all)) } else { Ok(()) }
}

/// The record `id` as JSON, from whichever layer holds it.
fn record_json(hub: &MemoryHub, id: RecordId) -> Result<Option<(LayerKind, Json)>, Failure> {
    let Some(layer) = hub.layer_of(id) else { return Ok(None) };
    let value = match layer {
        LayerKind::Hippocampus => serde_json::to_value(hub.hippocampus().peek(id)),
        LayerKind::Atl => serde_json::to_value(hub.atl().record(id)),
        LayerKind::AngularGyrus => serde_json::to_value(hub.angular_gyrus().record(id)),
        LayerKind::Cerebellum => serde_json::to_value(hub.skills().skill(id)),
    }
    .map_err(Failure::data)?;
    Ok(Some((layer, value)))
}

/// `maxim show <id>`.
pub(crate) fn show(data: &Path, named: Option<&str>, id: &str, json: bool) -> Outcome {
    let id = parse_id(id)?;
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        let Some((layer, record)) = record_json(&hub, id)? else { continue };
        let links = hub.traversal(id, 1).map_err(Failure::data)?;
        if json {
            return print_json(&json!({ "partition": p.as_str(), "layer": layer.as_str(), "record": record,
                "links": links.steps }));
        }
        let name = hub.layer_record(id).map(|r| hub.record_name(r)).unwrap_or_default();
        println!("{} record {id} in partition {p}: {name}", layer.as_str());
        print_json(&record)?;
        println!("links:");
        for step in &links.steps {
            println!("  -[{}]-> {} {} {}", step.via, step.record.layer.as_str(), step.record.id, step.name);
        }
        return Ok(());
    }
    Err(Failure::Data(format!("no record {id} in the memory at {}", data.display())))
}

/// `maxim context <query>`.
pub(crate) fn context(data: &Path, named: Option<&str>, query: &str, limit: usize, json: bool) -> Outcome {
    let mut all = Vec::new();
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        let context =
            hub.knowledge_context(&KnowledgeQuery::Text(query.to_owned()), limit).map_err(Failure::data)?;
        if json {
            all.push(json!({ "partition": p.as_str(), "rendered": context.render(),
                "entries": context.entries.iter().map(entry_json).collect::<Vec<_>>() }));
        } else {
            println!("{p}:\n{}", context.render());
        }
    }
    if json { print_json(&Json::Array(all)) } else { Ok(()) }
}

fn entry_json(e: &maxim::KnowledgeEntry) -> Json {
    json!({ "id": e.id, "layer": e.layer.as_str(), "name": e.name, "category": e.category,
        "definition": e.definition, "confidence": e.confidence, "trust": e.trust.get(),
        "provenance": e.provenance, "activation": e.activation, "relevance": e.relevance })
}

/// `maxim consolidate`: ends a session now on every partition named.
pub(crate) fn consolidate(data: &Path, named: Option<&str>, json: bool) -> Outcome {
    let mut all = Vec::new();
    let mut failed = Vec::new();
    for p in partitions(data, named)? {
        let mut hub = open_with(data, &p, SystemClock::shared())?;
        let report = hub.consolidate();
        failed.extend(report.failures.iter().map(|f| format!("{p}: {}: {}", f.step, f.error)));
        if json {
            all.push(json!({ "partition": p.as_str(), "report": serde_json::to_value(&report).map_err(Failure::data)? }));
        } else {
            println!(
                "{p}: {} episode(s) compressed, {} removed; {} concept(s) promoted, {} compressed, {} removed; {} pattern(s); persisted: {}",
                report.episodes_compressed,
                report.episodes_removed,
                report.concepts_promoted,
                report.concepts_compressed,
                report.concepts_removed,
                report.patterns.len(),
                report.persisted
            );
        }
    }
    if json {
        print_json(&Json::Array(all))?;
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::Data(format!("consolidation steps failed: {}", failed.join("; "))))
    }
}

/// `maxim export [--partition P]`: one partition's export, or every partition's.
pub(crate) fn export(data: &Path, named: Option<&str>) -> Outcome {
    let mut all = Vec::new();
    for p in partitions(data, named)? {
        let hub = open_with(data, &p, SystemClock::shared())?;
        all.push(hub.export());
    }
    match (named, all.len()) {
        (Some(_), 1) => print_json(&all[0]),
        _ => print_json(&json!({ "format": "maxim-export-set/1", "partitions": all })),
    }
}

/// Asks on a terminal whether to go on; true without asking when `yes` or when standard
/// input is not a terminal.
fn confirm(question: &str, yes: bool) -> Result<bool, Failure> {
    if yes || !std::io::stdin().is_terminal() {
        return Ok(true);
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush().map_err(Failure::data)?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).map_err(Failure::data)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// `maxim forget <id> | --source S | --partition P`.
pub(crate) fn forget(
    data: &Path,
    named: Option<&str>,
    target: &ForgetTarget,
    yes: bool,
    json: bool,
) -> Outcome {
    let what = match target {
        ForgetTarget::Id(text) => Forget::Id(parse_id(text)?),
        ForgetTarget::Source(text) => Forget::Source(
            text.parse::<Source>().map_err(|e| Failure::Usage(format!("source {text:?}: {e}")))?,
        ),
        ForgetTarget::Partition => {
            let name = named
                .ok_or_else(|| Failure::Usage("forget needs <ID>, --source S or --partition P".into()))?;
            let p = partitions(data, Some(name))?.remove(0);
            if !confirm(&format!("forget everything held about partition {p} in {}?", data.display()), yes)? {
                return Err(Failure::Usage("not confirmed; nothing was forgotten".into()));
            }
            let hub = open_with(data, &p, SystemClock::shared())?;
            let report = hub.forget_partition().map_err(Failure::data)?;
            return print_forget(&p, &report, json);
        }
    };
    let question = match &what {
        Forget::Id(id) => format!("forget record {id} and what depends on it?"),
        Forget::Source(s) => format!("forget everything that came from {s}?"),
        _ => "forget?".to_owned(),
    };
    if !confirm(&question, yes)? {
        return Err(Failure::Usage("not confirmed; nothing was forgotten".into()));
    }
    let mut any = false;
    let mut reports = Vec::new();
    for p in partitions(data, named)? {
        let mut hub = open_with(data, &p, SystemClock::shared())?;
        if let Forget::Id(id) = &what
            && hub.layer_of(*id).is_none()
        {
            continue;
        }
        let report = hub.forget(&what).map_err(Failure::data)?;
        any = true;
        if json {
            reports.push(json!({ "partition": p.as_str(), "report": serde_json::to_value(&report).map_err(Failure::data)? }));
        } else {
            print_forget(&p, &report, false)?;
        }
    }
    if let (Forget::Id(id), false) = (&what, any) {
        return Err(Failure::Data(format!("no record {id} in the memory at {}", data.display())));
    }
    if json { print_json(&Json::Array(reports)) } else { Ok(()) }
}

fn print_forget(p: &Partition, report: &maxim::hub::ForgetReport, json: bool) -> Outcome {
    if json {
        return print_json(
            &json!({ "partition": p.as_str(), "report": serde_json::to_value(report).map_err(Failure::data)? }),
        );
    }
    println!("{p}: removed {} record(s):", report.removed.len());
    for layer in [LayerKind::Hippocampus, LayerKind::Atl, LayerKind::AngularGyrus, LayerKind::Cerebellum] {
        let n = report.removed_from(layer);
        if n > 0 {
            println!("  {:<14} {n}", layer.as_str());
        }
    }
    println!(
        "  {} cross-layer edge(s), {} causal link(s) changed, {} claim(s) retracted, {} concept(s) weakened",
        report.edges_removed,
        report.causal_links_changed,
        report.claims_retracted,
        report.concepts_weakened.len()
    );
    for failure in &report.failures {
        eprintln!("  failed: {failure}");
    }
    Ok(())
}
