//! The `maxim` program, run as a user runs it: through the built binary, on temporary
//! directories, asserting what it prints and its exit codes (0 ok, 1 data, 2 usage).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

fn maxim<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_maxim"))
        .args(args)
        .env_remove("MAXIM_LOG")
        .output()
        .expect("the maxim binary runs")
}

/// `maxim --data DIR args...`.
fn on(dir: &Path, args: &[&str]) -> Output {
    let mut all: Vec<&OsStr> = vec![OsStr::new("--data"), dir.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    maxim(all)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
    stdout(out)
}

#[track_caller]
fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).expect("the output is JSON")
}

/// The number after `label` on the line holding it.
fn number_after(text: &str, label: &str) -> f64 {
    let at = text.find(label).unwrap_or_else(|| panic!("{label:?} not in:\n{text}")) + label.len();
    let rest = text[at..].trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_digit() || "+-.".contains(c))).unwrap_or(rest.len());
    rest[..end].parse().unwrap_or_else(|e| panic!("{label:?} then {:?}: {e}", &rest[..end]))
}

#[test]
fn help_is_everywhere_and_usage_errors_exit_2() {
    let out = maxim(["--help"]);
    let text = ok(&out);
    assert!(text.contains("Exit codes") && text.contains("demo") && text.contains("forget"), "{text}");
    for command in [
        "demo",
        "stats",
        "recall",
        "concepts",
        "show",
        "context",
        "consolidate",
        "export",
        "forget",
        "inspect",
        "lab",
    ] {
        let out = maxim([command, "--help"]);
        assert!(ok(&out).contains("--data"), "{command} --help:\n{}", stdout(&out));
    }
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["frobnicate"][..],
        &["demo", "--days", "0"],
        &["demo", "--days", "many"],
        &["inspect"],
        &["forget"],
        &["forget", "0190c5c5-0000-7000-8000-000000000001", "--source", "web:x"],
        &["recall"],
    ] {
        let out = on(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
    // A malformed id is a usage error too, and is named.
    std::fs::create_dir_all(dir.path().join("robot")).unwrap();
    let out = on(dir.path(), &["show", "not-an-id"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not-an-id"));
}

#[test]
fn a_memory_that_is_not_there_is_exit_1_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    for args in [&["stats"][..], &["export"], &["recall", "mug"], &["concepts"], &["context", "mug"]] {
        let out = on(&missing, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("nowhere"), "{args:?}: {}", stderr(&out));
    }
    assert!(!missing.exists(), "reading commands never create a memory");
}

/// Issue 15, defect 10: `inspect` reports every file, exits 1 when any is damaged or
/// unreadable, and takes names that are not UTF-8.
#[test]
fn inspect_checks_every_file_and_says_by_its_exit_code_whether_all_are_intact() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.snap");
    maxim::maxim_core::codec::save(&good, "test", &vec![1u32, 2, 3]).unwrap();
    let damaged = dir.path().join("damaged.snap");
    let mut bytes = std::fs::read(&good).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let missing = dir.path().join("missing.snap");
    let inspect =
        |files: &[&OsStr]| maxim(std::iter::once(OsStr::new("inspect")).chain(files.iter().copied()));
    ok(&inspect(&[good.as_os_str()]));
    let out = inspect(&[damaged.as_os_str(), missing.as_os_str(), good.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "a damaged file fails the run");
    let (out_text, err_text) = (stdout(&out), stderr(&out));
    assert!(err_text.contains("damaged.snap") && err_text.contains("checksum mismatch"), "{err_text}");
    assert!(err_text.contains("missing.snap"), "{err_text}");
    assert!(
        out_text.contains("good.snap") && out_text.contains("intact"),
        "every file is reported: {out_text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = dir.path().join(OsStr::from_bytes(b"odd-\xff.snap"));
        std::fs::copy(&good, &odd).unwrap();
        ok(&inspect(&[odd.as_os_str()]));
    }
}

#[test]
fn the_skill_lab_runs_and_writes_its_chart() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("charts").join("lab.svg");
    let text = ok(&maxim([
        OsStr::new("lab"),
        OsStr::new("--runs"),
        OsStr::new("4"),
        OsStr::new("--out"),
        chart.as_os_str(),
    ]));
    assert!(text.contains("poisoned skill executed: 0 time(s) with the gate on"), "{text}");
    assert!(std::fs::read_to_string(&chart).unwrap().starts_with("<svg"));
    let out = maxim(["lab", "--runs", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The line of `text` that holds `needle`.
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// The lines of `text` after the line starting with `heading`, up to the next blank line.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// Issue 14's "Done when": the demo's output, its picture, a second run continuing the
/// memory, forgetting without residue, inspecting every file, a damaged file giving exit 1.
#[test]
fn the_demo_shows_what_it_learned_continues_and_its_memory_can_be_managed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("memory");
    let svg = dir.path().join("pictures").join("navigate.svg");
    let out = maxim([
        OsStr::new("--data"),
        data.as_os_str(),
        OsStr::new("demo"),
        OsStr::new("--days"),
        OsStr::new("10"),
        OsStr::new("--svg"),
        svg.as_os_str(),
    ]);
    let text = ok(&out);
    assert!(text.contains("a new memory in"), "{text}");

    // The layers hold something, and concepts were promoted with provenance and confidence.
    let episodes = number_after(&text, "hippocampus");
    assert!(episodes > 100.0, "{text}");
    let promoted = section(&text, "promoted concepts");
    assert!(!promoted.is_empty() && !promoted[0].contains("none"), "{text}");
    assert!(promoted[0].contains("confidence") && promoted[0].contains("from"), "{}", promoted[0]);

    // The planted trend (-0.02 a day) and the evening trough are recovered, and stored as
    // PATTERN records of the angular gyrus.
    let trend = line_with(&text, "navigate trend:");
    let slope = number_after(trend, "navigate trend:");
    assert!((-0.04..=-0.01).contains(&slope), "{trend}");
    assert!(number_after(trend, "(R²") > 0.3, "{trend}");
    let rhythm = line_with(&text, "navigate rhythm:");
    let trough = number_after(rhythm, "(phase");
    assert!((0.7..=0.95).contains(&trough) && rhythm.contains("evening"), "{rhythm}");
    let patterns = section(&text, "patterns (angular gyrus)");
    assert!(patterns.iter().any(|l| l.contains("trend:tool:navigate:success")), "{patterns:?}");
    assert!(patterns.iter().any(|l| l.contains("circadian:tool:navigate:success")), "{patterns:?}");

    // The contradiction with both sources.
    let contradictions = section(&text, "contradictions").join("\n");
    assert!(contradictions.contains("mug.dishwasher_safe"), "{contradictions}");
    assert!(
        contradictions.contains("from user_stated")
            && contradictions.contains("from web:kitchenware.example")
    );

    // The traversal from a failed navigate episode reaches the navigate trend pattern.
    let traversal = section(&text, "cross-layer traversal").join("\n");
    assert!(traversal.contains("start: navigate failed"), "{traversal}");
    assert!(traversal.contains("INSTANCE_OF]-> atl navigate"), "{traversal}");
    assert!(traversal.contains("angular_gyrus trend:tool:navigate:success"), "{traversal}");

    // The fenced context holds at least one concept and one pattern.
    let open = text.find("<retrieved_memory>").expect("the context is fenced");
    let close = text.find("</retrieved_memory>").expect("the fence is closed");
    let context = &text[open..close];
    assert!(context.contains("concept \"") && context.contains("pattern \""), "{context}");
    assert!(!section(&text, "recall(").is_empty(), "{text}");

    // The picture.
    assert!(text.contains(&format!("picture written to {}", svg.display())), "{text}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.contains("success per day"));

    // A second run continues the same memory with the following days.
    let again = ok(&on(&data, &["demo", "--days", "2"]));
    assert!(again.contains("continuing the memory") && again.contains("days 10..11"), "{again}");
    assert!(again.contains("day  11:") && !again.contains("day   0:"), "{again}");
    assert!(line_with(&again, "navigate trend:").contains("over 12 days"), "{again}");
    assert!(data.join("navigate.svg").is_file(), "the default picture is in the memory directory");

    // The reading commands, with --json where a script wants it.
    let stats = json(&on(&data, &["stats", "--json"]));
    assert_eq!(stats[0]["partition"], "robot");
    let people = json(&on(&data, &["concepts", "--category", "person", "--json"]));
    let names: Vec<&str> = people.as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(names.contains(&"alice") && names.contains(&"bob"), "{names:?}");
    let alice = people.as_array().unwrap().iter().find(|c| c["name"] == "alice").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = json(&on(&data, &["show", &alice, "--json"]));
    assert_eq!(shown["layer"], "atl");
    assert!(ok(&on(&data, &["context", "mug", "--limit", "3"])).contains("<retrieved_memory>"));

    // Forget a source: nothing of it is left for export or recall to find.
    let before = ok(&on(&data, &["export"]));
    assert!(before.contains("kitchenware.example"));
    let forgot = ok(&on(&data, &["forget", "--source", "web:kitchenware.example", "--yes"]));
    assert!(forgot.contains("removed") && forgot.contains("claim(s) retracted"), "{forgot}");
    let after = ok(&on(&data, &["export", "--partition", "robot"]));
    assert!(!after.contains("kitchenware"), "the export still holds the web page's traces");
    assert!(!ok(&on(&data, &["recall", "dishwasher safe web page", "--json"])).contains("kitchenware"));
    assert!(!ok(&on(&data, &["context", "is the mug dishwasher safe?"])).contains("kitchenware"));

    // Forget one episode by id: gone from export, recall and show.
    let export: serde_json::Value = serde_json::from_str(&after).unwrap();
    let episode = export["episodes"][0]["Full"]["meta"]["id"].as_str().expect("an episode id").to_owned();
    let forgot = ok(&on(&data, &["forget", &episode, "--yes"]));
    assert!(forgot.contains("hippocampus"), "{forgot}");
    assert!(!ok(&on(&data, &["export"])).contains(&episode));
    assert!(!ok(&on(&data, &["recall", "navigate", "--limit", "1000", "--json"])).contains(&episode));
    let out = on(&data, &["show", &episode]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&episode), "{}", stderr(&out));

    // Every snapshot file inspects as intact, each reported.
    let mut files: Vec<_> =
        walk(&data).into_iter().filter(|p| p.extension().is_some_and(|e| e == "snap")).collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let out = maxim(std::iter::once(OsStr::new("inspect")).chain(files.iter().map(|p| p.as_os_str())));
    let listed = ok(&out);
    for f in &files {
        assert!(listed.contains(&*f.to_string_lossy()), "{} missing from:\n{listed}", f.display());
    }

    // A damaged journal: exit 1, naming the file.
    let journal = data.join("robot").join("hippocampus").join("hippocampus.journal");
    let mut bytes = std::fs::read(&journal).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&journal, &bytes).unwrap();
    let out = on(&data, &["stats"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("hippocampus.journal"), "{}", stderr(&out));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A memory directory whose name is not UTF-8 works like any other.
#[cfg(unix)]
#[test]
fn a_memory_directory_whose_name_is_not_utf8_works() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join(OsStr::from_bytes(b"memory-\xff"));
    let text = ok(&on(&data, &["demo", "--days", "1", "--seed", "3"]));
    assert!(text.contains("picture written to"), "{text}");
    assert!(data.join("navigate.svg").is_file());
    let stats = json(&on(&data, &["stats", "--json"]));
    assert!(stats[0]["episodes"].as_u64().unwrap() > 50, "{stats}");
    assert!(stats[0]["dir"].as_str().unwrap().contains("memory-"), "{stats}");
    assert_eq!(json(&on(&data, &["export"]))["partitions"][0]["partition"], "robot");
    assert_eq!(json(&on(&data, &["consolidate", "--json"]))[0]["partition"], "robot");
}
