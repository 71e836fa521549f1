//! The `maxim` program, run as a user runs it.

use std::process::Command;

fn maxim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_maxim")).args(args).output().expect("the maxim binary runs")
}

#[test]
fn demo_runs_saves_and_the_files_inspect_as_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = maxim(&["demo", "--dir", dir.path().to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("hippocampus: 30 episodes"), "{stdout}");
    assert!(stdout.contains("contradiction on color kept"), "{stdout}");
    for file in ["hippocampus.snap", "atl.snap"] {
        let path = dir.path().join(file);
        let out = maxim(&["inspect", path.to_str().unwrap()]);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("intact"));
    }
    assert!(stdout.contains("refusing to overwrite"), "the guard is shown: {stdout}");
    // A second demo in the same directory replaces the first one's files.
    let again = maxim(&["demo", "--dir", dir.path().to_str().unwrap()]);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
}

#[test]
fn bad_usage_and_missing_files_fail_with_a_message() {
    let out = maxim(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
    let out = maxim(&["inspect", "/definitely/not/here.snap"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/definitely/not/here.snap"));
}
