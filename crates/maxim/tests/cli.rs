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
    for command in
        ["demo", "stats", "recall", "concepts", "show", "context", "consolidate", "export", "forget", "inspect", "lab"]
    {
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
    let inspect = |files: &[&OsStr]| maxim(std::iter::once(OsStr::new("inspect")).chain(files.iter().copied()));
    ok(&inspect(&[good.as_os_str()]));
    let out = inspect(&[damaged.as_os_str(), missing.as_os_str(), good.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "a damaged file fails the run");
    let (out_text, err_text) = (stdout(&out), stderr(&out));
    assert!(err_text.contains("damaged.snap") && err_text.contains("checksum mismatch"), "{err_text}");
    assert!(err_text.contains("missing.snap"), "{err_text}");
    assert!(out_text.contains("good.snap") && out_text.contains("intact"), "every file is reported: {out_text}");
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
    let text = ok(&maxim([OsStr::new("lab"), OsStr::new("--runs"), OsStr::new("4"), OsStr::new("--out"), chart.as_os_str()]));
    assert!(text.contains("poisoned skill executed: 0 time(s) with the gate on"), "{text}");
    assert!(std::fs::read_to_string(&chart).unwrap().starts_with("<svg"));
    let out = maxim(["lab", "--runs", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
