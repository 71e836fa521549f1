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

/// Issue 15, defect 10: `inspect` reports every file, exits 1 when any is damaged or
/// unreadable, takes names that are not UTF-8, and `demo --dir` names a path it cannot use.
#[test]
fn inspect_checks_every_file_and_says_by_its_exit_code_whether_all_are_intact() {
    use std::ffi::OsStr;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.snap");
    maxim::maxim_core::codec::save(&good, "test", &vec![1u32, 2, 3]).unwrap();
    let damaged = dir.path().join("damaged.snap");
    let mut bytes = std::fs::read(&good).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let missing = dir.path().join("missing.snap");
    let run = |files: &[&OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_maxim")).arg("inspect").args(files).output().expect("runs")
    };
    let out = run(&[good.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&[damaged.as_os_str(), missing.as_os_str(), good.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "a damaged file fails the run");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stderr.contains("damaged.snap") && stderr.contains("checksum mismatch"), "{stderr}");
    assert!(stderr.contains("missing.snap"), "{stderr}");
    assert!(stdout.contains("good.snap") && stdout.contains("intact"), "every file is reported: {stdout}");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = dir.path().join(OsStr::from_bytes(b"odd-\xff.snap"));
        std::fs::copy(&good, &odd).unwrap();
        let out = run(&[odd.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let out = maxim(&["demo", "--dir", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a-file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
