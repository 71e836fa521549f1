//! The crash test (issue 15): a child process writes concepts, relationships, properties,
//! removals and episodes (`record_episode`: three new concepts and their relationships in one
//! record) through the public API on a directory with `SyncPolicy::Always` and reports each
//! acknowledged write; the parent kills it with SIGKILL at random moments, then opens the
//! directory and checks that every acknowledged write is there, that nothing unacknowledged is
//! half there, and that no temporary is left.
//!
//! The child is this test binary itself, running `crash::child_writer` with `MAXIM_CRASH_DIR`
//! set. `MAXIM_CRASH_KILLS` sets the number of kills (default 50).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use atl::{Atl, AtlConfig, Direction, EpisodeConcept, EpisodeRelationship, EpisodeWrite, spec};
use maxim_core::journal::SyncPolicy;
use maxim_core::{LayerKind, MemoryLayer, MemoryRecord, RecordId, Source, SplitMix64};

const DIR_VAR: &str = "MAXIM_CRASH_DIR";

/// Room for every concept the children can write: an eviction at capacity removes a
/// concept on purpose (tested in `consolidate`), which this test would count as a loss. A
/// child on a fast disk writes a few thousand records a round, so fifty rounds pass the
/// default of 10,000.
const ROOM: usize = 1_000_000;

fn open(dir: &Path) -> Atl {
    let mut config = AtlConfig::default();
    config.max_concepts = ROOM;
    Atl::builder().config(config).sync_policy(SyncPolicy::Always).open(dir).expect("the directory opens")
}

/// The child: writes until it is killed, printing `ack create <id>`, `ack relate <a> <b>`,
/// `ack property <id> <n>`, `ack remove <id>`, `ack episode <a> <b> <c>` or `ack checkpoint`
/// after each call returns.
#[test]
fn child_writer() {
    let Some(dir) = std::env::var_os(DIR_VAR) else { return };
    let mut atl = open(Path::new(&dir));
    let mut out = std::io::stdout().lock();
    // libtest has printed `test crash::child_writer ... ` without a line end.
    writeln!(out).unwrap();
    let mut held: Vec<RecordId> = atl.iter().map(MemoryRecord::id).collect();
    let seed = u64::from(std::process::id());
    let mut rng = SplitMix64::new(seed);
    let pick = |rng: &mut SplitMix64, held: &[RecordId]| held[(rng.next_u64() % held.len() as u64) as usize];
    for n in 0u64.. {
        let roll = rng.next_u64() % 100;
        if roll < 8 && held.len() > 2 {
            let i = (rng.next_u64() % held.len() as u64) as usize;
            let id = held.swap_remove(i);
            // Said before the call: a removal cut short by the kill may or may not land.
            writeln!(out, "try remove {}", id.as_u128()).unwrap();
            out.flush().unwrap();
            atl.remove_concept(id).expect("remove");
            writeln!(out, "ack remove {}", id.as_u128()).unwrap();
        } else if roll < 10 {
            atl.checkpoint().expect("checkpoint");
            writeln!(out, "ack checkpoint").unwrap();
        } else if roll < 30 && held.len() > 1 {
            let (a, b) = (pick(&mut rng, &held), pick(&mut rng, &held));
            if a != b {
                atl.define_relationship(a, b, "HAS_PART", 0.5, 0.5).expect("relate");
                writeln!(out, "ack relate {} {}", a.as_u128(), b.as_u128()).unwrap();
            }
        } else if roll < 45 && !held.is_empty() {
            let a = pick(&mut rng, &held);
            let value = format!("{seed}-{n}");
            // Said before the call: the value in flight at the kill may or may not land.
            writeln!(out, "try property {} {value}", a.as_u128()).unwrap();
            out.flush().unwrap();
            atl.set_property(a, "n", value.as_str(), Source::UserStated, 1.0).expect("property");
            writeln!(out, "ack property {} {value}", a.as_u128()).unwrap();
        } else if roll < 60 {
            // Three new concepts in three categories, related: one journal record.
            let names: Vec<String> = (0..3).map(|k| format!("episode {seed} {n} {k}")).collect();
            let concepts: Vec<EpisodeConcept<'_>> = names
                .iter()
                .zip(["object", "person", "location"])
                .map(|(name, category)| EpisodeConcept::new(name, category, "seen"))
                .collect();
            let relationships = [
                EpisodeRelationship::new(0, 1, "HAS_PART", 0.5, 0.5),
                EpisodeRelationship::new(1, 2, "HAS_PART", 0.5, 0.5),
            ];
            let source = Source::Episodic;
            let write = EpisodeWrite::new(
                RecordId::from_u128(u128::from(n) + 1),
                LayerKind::Hippocampus,
                &source,
                0.6,
            )
            .concepts(&concepts)
            .relationships(&relationships);
            writeln!(out, "try episode").unwrap();
            out.flush().unwrap();
            let recorded = atl.record_episode(&write).expect("episode");
            assert_eq!(recorded.records, 1);
            let ids: Vec<RecordId> = recorded.concepts.iter().map(|c| c.id).collect();
            held.extend(&ids);
            let [a, b, c] = [ids[0], ids[1], ids[2]].map(RecordId::as_u128);
            writeln!(out, "ack episode {a} {b} {c}").unwrap();
        } else {
            let made = atl.find_or_create(&spec(&format!("thing {seed} {n}"), "object")).expect("create");
            assert!(made.created);
            held.push(made.id);
            writeln!(out, "ack create {}", made.id.as_u128()).unwrap();
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
    let mut relations: BTreeSet<(u128, u128)> = BTreeSet::new();
    let mut properties: BTreeMap<u128, String> = BTreeMap::new();
    let (mut checked, mut acked_total) = (0usize, 0usize);
    // Kills in the middle of an episode's write, and how many of those episodes landed whole.
    let (mut episodes_cut, mut episodes_landed) = (0usize, 0usize);
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
        let lines = reader.join().unwrap();
        assert!(!status.success(), "round {round}: the child ended on its own after {:?}", started.elapsed());
        for line in &lines {
            let parts: Vec<&str> = line.split(' ').collect();
            let num = |i: usize| parts.get(i).and_then(|v| v.parse::<u128>().ok());
            match (parts.first().copied(), parts.get(1).copied()) {
                (Some("ack"), Some("create")) => {
                    present.insert(num(2).unwrap());
                }
                (Some("ack"), Some("remove")) => {
                    let id = num(2).unwrap();
                    present.remove(&id);
                    relations.retain(|&(a, b)| a != id && b != id);
                    properties.remove(&id);
                }
                (Some("ack"), Some("relate")) => {
                    relations.insert((num(2).unwrap(), num(3).unwrap()));
                }
                (Some("ack"), Some("episode")) => {
                    let [a, b, c] = [2, 3, 4].map(|i| num(i).unwrap());
                    present.extend([a, b, c]);
                    relations.extend([(a, b), (b, c)]);
                }
                (Some("ack"), Some("property")) => {
                    properties.insert(num(2).unwrap(), parts[3].to_owned());
                }
                _ => {}
            }
            if parts.first() == Some(&"ack") {
                acked_total += 1;
            }
        }
        // A removal said but not acknowledged was in flight at the kill.
        let pending_remove =
            lines.last().and_then(|l| l.strip_prefix("try remove ")).and_then(|v| v.parse::<u128>().ok());
        let atl = open(dir);
        let held: BTreeSet<u128> = atl.iter().map(|r| r.id().as_u128()).collect();
        assert!(held.len() < ROOM, "round {round}: the store filled up, so evictions would count as losses");
        if let Some(id) = pending_remove.filter(|id| !held.contains(id)) {
            present.remove(&id);
            relations.retain(|&(a, b)| a != id && b != id);
            properties.remove(&id);
        }
        for id in &present {
            assert!(held.contains(id), "round {round}: acknowledged concept {id} lost");
            checked += 1;
        }
        for &(a, b) in &relations {
            let found = atl
                .find_relationships(RecordId::from_u128(a), Some("HAS_PART"), Direction::Outgoing, usize::MAX)
                .unwrap();
            assert!(
                found.iter().any(|r| r.target.as_u128() == b),
                "round {round}: relationship {a} -> {b} lost"
            );
            checked += 1;
        }
        // A property write said but not acknowledged was in flight at the kill.
        let pending_property = lines.last().and_then(|l| l.strip_prefix("try property ")).and_then(|rest| {
            let (id, value) = rest.split_once(' ')?;
            Some((id.parse::<u128>().ok()?, value.to_owned()))
        });
        if let Some((id, value)) = pending_property
            && present.contains(&id)
            && atl.property(RecordId::from_u128(id), "n").and_then(maxim_core::value::Value::as_str)
                == Some(&value)
        {
            properties.insert(id, value);
        }
        for (&id, value) in &properties {
            let v = atl.property(RecordId::from_u128(id), "n").and_then(maxim_core::value::Value::as_str);
            assert_eq!(v, Some(value.as_str()), "round {round}: property of {id}");
            checked += 1;
        }
        // The creation or the episode in flight at the kill may have landed, whole; nothing
        // else may appear.
        let extra: Vec<u128> = held.difference(&present).copied().collect();
        let episode_in_flight = lines.last().is_some_and(|l| l == "try episode");
        if episode_in_flight {
            episodes_cut += 1;
            episodes_landed += usize::from(extra.len() == 3);
            assert!(
                extra.is_empty() || extra.len() == 3,
                "round {round}: part of an episode landed: {extra:?}"
            );
            if extra.len() == 3 {
                let degree = |id: u128| {
                    let found =
                        atl.find_relationships(RecordId::from_u128(id), Some("HAS_PART"), Direction::Both, 8);
                    found.unwrap().len()
                };
                let linked: usize = extra.iter().map(|&id| degree(id)).sum();
                assert_eq!(linked, 4, "round {round}: an episode landed without its relationships");
            }
        } else {
            assert!(extra.len() <= 1, "round {round}: unacknowledged concepts present: {extra:?}");
        }
        present.extend(extra);
        let stray: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-") || n.contains(".corrupt-"))
            .collect();
        assert!(stray.is_empty(), "round {round}: {stray:?}");
        drop(atl);
    }
    eprintln!(
        "crash test: {kills} kills, {acked_total} acknowledged writes, {checked} checks, 0 lost; \
         {episodes_cut} kills during an episode's write, {episodes_landed} of those episodes landed whole"
    );
    assert!(acked_total > kills, "the children wrote too little to test anything");
}
