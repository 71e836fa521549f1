//! The crash test (issue 15): a child process writes through the public API on a directory
//! with `SyncPolicy::Always` and reports each acknowledged write; the parent kills it with
//! SIGKILL at random moments, then opens the directory and checks that every acknowledged
//! write is there, that nothing unacknowledged is half there, and that no temporary is left.
//!
//! The child is this test binary itself, running `crash::child_writer` with
//! `MAXIM_CRASH_DIR` set. `MAXIM_CRASH_KILLS` sets the number of kills (default 50).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hippocampus::{Hippocampus, HippocampusConfig, NewEpisode};
use maxim_core::journal::SyncPolicy;
use maxim_core::{RecordId, SplitMix64};

const DIR_VAR: &str = "MAXIM_CRASH_DIR";

/// Room for every episode the children can capture: an eviction at capacity removes records
/// on purpose (tested with eviction), which this test would count as losses. A child on a
/// fast disk writes a few thousand records a round, so fifty rounds can pass the default of
/// 10,000.
const ROOM: usize = 1_000_000;

fn open(dir: &Path) -> Hippocampus {
    let mut config = HippocampusConfig::default();
    config.max_nodes = ROOM;
    Hippocampus::builder()
        .config(config)
        .sync_policy(SyncPolicy::Always)
        .open(dir)
        .expect("the directory opens")
}

/// The child: writes until it is killed, printing `ack capture <id>`, `ack remove <id>` or
/// `ack checkpoint` after each call returns.
#[test]
fn child_writer() {
    let Some(dir) = std::env::var_os(DIR_VAR) else { return };
    let mut h = open(Path::new(&dir));
    let mut out = std::io::stdout().lock();
    // libtest has printed `test crash::child_writer ... ` without a line end.
    writeln!(out).unwrap();
    let mut held: Vec<RecordId> = h.iter().map(hippocampus::Episode::id).collect();
    let seed = u64::from(std::process::id());
    let mut rng = SplitMix64::new(seed);
    for n in 0u64.. {
        let roll = rng.next_u64() % 100;
        if roll < 8 && !held.is_empty() {
            let id = held.swap_remove((rng.next_u64() % held.len() as u64) as usize);
            // Said before the call: a removal cut short by the kill may or may not land.
            writeln!(out, "try remove {}", id.as_u128()).unwrap();
            out.flush().unwrap();
            h.remove(id).expect("remove");
            writeln!(out, "ack remove {}", id.as_u128()).unwrap();
        } else if roll < 10 {
            h.checkpoint().expect("checkpoint");
            writeln!(out, "ack checkpoint").unwrap();
        } else {
            let mut e = NewEpisode::default();
            e.perception.detected_objects = vec![format!("thing{}", n % 13).into(), "mug".into()];
            e.context.active_goal = Some(format!("goal {}", n % 5).into());
            e.run_id = format!("run {seed} {n}");
            let id = h.capture(e).expect("capture");
            held.push(id);
            writeln!(out, "ack capture {}", id.as_u128()).unwrap();
        }
        out.flush().unwrap();
    }
}

#[test]
fn every_acknowledged_write_survives_sigkill() {
    if std::env::var_os(DIR_VAR).is_some() {
        return; // inside a child
    }
    let kills: usize = std::env::var("MAXIM_CRASH_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let exe = std::env::current_exe().unwrap();
    let mut rng = SplitMix64::new(15);
    let mut present: BTreeSet<u128> = BTreeSet::new();
    let (mut checked, mut acked_total) = (0usize, 0usize);
    for round in 0..kills {
        let mut child = Command::new(&exe)
            .args(["crash::child_writer", "--exact", "--nocapture", "--test-threads=1"])
            .env(DIR_VAR, dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            // Only whole lines are acknowledgements; a line cut by the kill is not.
            while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line.ends_with('\n') {
                    lines.push(line.trim_end().to_owned());
                }
                line.clear();
            }
            lines
        });
        // Let it start (open and replay), then kill it at a random moment.
        let wait = Duration::from_millis(20 + rng.next_u64() % 120);
        let started = Instant::now();
        std::thread::sleep(wait);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: the child ended on its own after {:?}", started.elapsed());
        let lines = reader.join().unwrap();
        for line in &lines {
            let mut parts = line.split(' ');
            match (parts.next(), parts.next(), parts.next().and_then(|v| v.parse::<u128>().ok())) {
                (Some("ack"), Some("capture"), Some(id)) => {
                    present.insert(id);
                    acked_total += 1;
                }
                (Some("ack"), Some("remove"), Some(id)) => {
                    present.remove(&id);
                    acked_total += 1;
                }
                (Some("ack"), Some("checkpoint"), None) => acked_total += 1,
                _ => {}
            }
        }
        // A removal said but not acknowledged was in flight at the kill.
        let pending_remove =
            lines.last().and_then(|l| l.strip_prefix("try remove ")).and_then(|v| v.parse::<u128>().ok());
        let h = open(dir);
        let held: BTreeSet<u128> = h.iter().map(|e| e.id().as_u128()).collect();
        assert!(held.len() < ROOM, "round {round}: the store filled up, so evictions would count as losses");
        if let Some(id) = pending_remove.filter(|id| !held.contains(id)) {
            present.remove(&id);
        }
        for id in &present {
            assert!(held.contains(id), "round {round}: acknowledged capture {id} lost");
            checked += 1;
        }
        // The capture in flight at the kill may have landed, whole; nothing else may appear.
        let extra: Vec<u128> = held.difference(&present).copied().collect();
        assert!(extra.len() <= 1, "round {round}: unacknowledged records present: {extra:?}");
        present.extend(extra);
        assert!(h.check_consistency().is_consistent(), "round {round}: {:?}", h.check_consistency());
        let stray: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-") || n.contains(".corrupt-"))
            .collect();
        assert!(stray.is_empty(), "round {round}: {stray:?}");
        drop(h);
    }
    eprintln!(
        "crash test: {kills} kills, {acked_total} acknowledged writes, {checked} record checks, 0 lost"
    );
    assert!(acked_total > kills, "the children wrote too little to test anything");
}
