//! Tests of the journal: format, torn tails, damage, compaction, the lock and temporaries.

use serde::Deserialize;

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Op {
    Push(u64),
    Text(String),
}

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct State {
    seq: u64,
    items: Vec<Op>,
}

const KIND: &str = "toy";

/// A toy store on a directory: a list of operations.
struct Toy {
    state: State,
    dir: StoreDir<Op>,
}

impl Toy {
    fn open(dir: &Path, policy: SyncPolicy) -> Result<(Self, OpenReport)> {
        let mut dir = StoreDir::open(dir, KIND, policy)?;
        let snap = dir.snapshot_path();
        let mut state: State = if snap.exists() { codec::load(&snap, KIND)? } else { State::default() };
        let report = dir.replay(state.seq, |op| {
            state.items.push(op);
            Ok::<_, Error>(())
        })?;
        Ok((Self { state, dir }, report))
    }

    fn push(&mut self, op: Op) -> Result<()> {
        self.dir.append(&op)?;
        self.state.items.push(op);
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<()> {
        let state = &mut self.state;
        self.dir.checkpoint(|path, seq| {
            state.seq = seq;
            codec::save(path, KIND, &*state).map(drop)
        })
    }
}

fn pushes(range: std::ops::Range<u64>) -> Vec<Op> {
    range.map(Op::Push).collect()
}

fn journal_file(dir: &Path) -> PathBuf {
    journal_path(dir, KIND)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn entries_survive_a_reopen_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    for policy in [SyncPolicy::Always, SyncPolicy::default(), SyncPolicy::Never] {
        let dir = tmp.path().join(format!("{policy:?}").replace(['(', ')', ' ', '.'], "_"));
        let (mut toy, report) = Toy::open(&dir, policy).unwrap();
        assert_eq!(report, OpenReport::default());
        for op in pushes(0..50) {
            toy.push(op).unwrap();
        }
        toy.push(Op::Text("mug".into())).unwrap();
        assert_eq!(toy.dir.last_seq(), 51);
        drop(toy);
        let (toy, report) = Toy::open(&dir, policy).unwrap();
        assert_eq!(report.replayed, 51);
        let mut expected = pushes(0..50);
        expected.push(Op::Text("mug".into()));
        assert_eq!(toy.state.items, expected);
    }
}

#[test]
fn the_journal_layout_is_frozen() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut toy, _) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
    toy.push(Op::Push(7)).unwrap();
    toy.push(Op::Text("hi".into())).unwrap();
    drop(toy);
    let bytes = fs::read(journal_file(tmp.path())).unwrap();
    let expected: Vec<u8> = [
        &b"MAXIMJNL"[..],
        &[1, 0, 0, 0],
        b"toy\0\0\0\0\0\0\0\0\0\0\0\0\0",
        &[0; 8],
        &crc32fast::hash(&bytes[..36]).to_le_bytes(),
        // Entry 1: length 2, CRC, seq 1, payload Push(7) = variant 0, varint 7.
        &[2, 0, 0, 0],
        &entry_crc(2, 1, &[0, 7]).to_le_bytes(),
        &[1, 0, 0, 0, 0, 0, 0, 0],
        &[0, 7],
        // Entry 2: length 4, CRC, seq 2, payload Text("hi") = variant 1, length 2, "hi".
        &[4, 0, 0, 0],
        &entry_crc(4, 2, &[1, 2, b'h', b'i']).to_le_bytes(),
        &[2, 0, 0, 0, 0, 0, 0, 0],
        &[1, 2, b'h', b'i'],
    ]
    .concat();
    assert_eq!(bytes, expected);
    assert_eq!(crc32fast::hash(&bytes[..36]), 0xc68c_8241, "header CRC of a toy journal with base 0");
}

#[test]
fn the_committed_version_1_journal_still_reads() {
    // tests/data/toy-v1.journal was written by this build's first version: Push(7), Text("hi").
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/toy-v1.journal");
    let tmp = tempfile::tempdir().unwrap();
    fs::copy(&golden, journal_file(tmp.path())).unwrap();
    let (toy, report) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
    assert_eq!(report.replayed, 2);
    assert_eq!(toy.state.items, [Op::Push(7), Op::Text("hi".into())]);
}

#[test]
fn a_torn_tail_is_cut_with_the_entries_before_it_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut toy, _) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
    for op in pushes(0..10) {
        toy.push(op).unwrap();
    }
    drop(toy);
    let whole = fs::read(journal_file(tmp.path())).unwrap();
    let entry = ENTRY_HEADER_LEN + 2;
    let nine = JOURNAL_HEADER_LEN + 9 * entry;
    let mut zeros = whole[..nine].to_vec();
    zeros.extend_from_slice(&[0; 4096]);
    let mut garbled_last = whole.clone();
    *garbled_last.last_mut().unwrap() ^= 0xff;
    let cases: [(&str, Vec<u8>); 4] = [
        ("cut in the payload", whole[..whole.len() - 1].to_vec()),
        ("cut in the entry header", whole[..nine + 5].to_vec()),
        ("zero-filled tail", zeros),
        ("garbled last entry", garbled_last),
    ];
    for (name, bytes) in cases {
        fs::write(journal_file(tmp.path()), &bytes).unwrap();
        let (mut toy, report) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
        assert_eq!(toy.state.items, pushes(0..9), "{name}");
        assert_eq!(report.torn_bytes, (bytes.len() - nine) as u64, "{name}");
        assert_eq!(fs::metadata(journal_file(tmp.path())).unwrap().len(), nine as u64, "{name}");
        // Appends go after the last whole entry and read back.
        toy.push(Op::Push(100)).unwrap();
        drop(toy);
        let (toy, report) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
        assert_eq!(report.torn_bytes, 0);
        assert_eq!(toy.state.items.last(), Some(&Op::Push(100)), "{name}");
        assert_eq!(toy.state.items.len(), 10, "{name}");
    }
}

#[test]
fn damage_before_an_intact_entry_is_an_error_and_the_file_is_kept_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut toy, _) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
    for op in pushes(0..10) {
        toy.push(op).unwrap();
    }
    drop(toy);
    let whole = fs::read(journal_file(tmp.path())).unwrap();
    let entry = ENTRY_HEADER_LEN + 2;
    let third = JOURNAL_HEADER_LEN + 2 * entry;
    for (name, at) in [("payload", third + ENTRY_HEADER_LEN + 1), ("length", third), ("seq", third + 8)] {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x10;
        fs::write(journal_file(tmp.path()), &bytes).unwrap();
        let err = Toy::open(tmp.path(), SyncPolicy::Always).err().unwrap();
        let Error::Corrupt { path, kept_aside: Some(aside), .. } = &err else { panic!("{name}: {err:?}") };
        assert_eq!(path, &journal_file(tmp.path()), "{name}");
        assert_eq!(fs::read(aside).unwrap(), bytes, "{name}: the damaged file is kept as it was");
        assert!(!journal_file(tmp.path()).exists(), "{name}");
        assert!(err.to_string().contains("journal"), "{name}: {err}");
        fs::remove_file(aside).unwrap();
    }
}

#[test]
fn a_damaged_header_is_rejected_and_kept_aside() {
    let tmp = tempfile::tempdir().unwrap();
    drop(Toy::open(tmp.path(), SyncPolicy::Always).unwrap());
    let good = fs::read(journal_file(tmp.path())).unwrap();
    let mut other_kind = good.clone();
    other_kind[12] = b'x';
    let crc = crc32fast::hash(&other_kind[..36]);
    other_kind[36..40].copy_from_slice(&crc.to_le_bytes());
    let mut version = good.clone();
    version[8] = 9;
    let mut flipped = good.clone();
    flipped[30] ^= 1;
    for (name, bytes) in [
        ("kind", other_kind),
        ("version", version),
        ("bit", flipped),
        ("short", good[..20].to_vec()),
        ("magic", b"not a journal".to_vec()),
    ] {
        fs::write(journal_file(tmp.path()), &bytes).unwrap();
        let err = Toy::open(tmp.path(), SyncPolicy::Always).err().unwrap();
        assert!(codec::is_rejection(&err), "{name}: {err:?}");
        assert!(!journal_file(tmp.path()).exists(), "{name}: moved aside");
    }
    let corrupt = names(tmp.path()).iter().filter(|n| n.contains(".corrupt-")).count();
    assert_eq!(corrupt, 5);
}

#[test]
fn a_crash_at_any_point_of_a_checkpoint_opens_to_exactly_the_acknowledged_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (mut toy, _) = Toy::open(dir, SyncPolicy::Always).unwrap();
    for op in pushes(0..5) {
        toy.push(op).unwrap();
    }
    toy.checkpoint().unwrap();
    for op in pushes(5..8) {
        toy.push(op).unwrap();
    }
    let journal_before = fs::read(journal_file(dir)).unwrap();
    // The snapshot is saved, the journal restart is lost: the old journal is still there.
    let state = &mut toy.state;
    state.seq = 8;
    codec::save(snapshot_path(dir, KIND), KIND, &*state).unwrap();
    drop(toy);
    assert_eq!(fs::read(journal_file(dir)).unwrap(), journal_before);
    let (mut toy, report) = Toy::open(dir, SyncPolicy::Always).unwrap();
    assert_eq!((report.snapshot_seq, report.replayed), (8, 0));
    assert_eq!(toy.state.items, pushes(0..8));
    // The stale journal was restarted after 8: new entries follow without a gap.
    toy.push(Op::Push(8)).unwrap();
    drop(toy);
    let (toy, report) = Toy::open(dir, SyncPolicy::Always).unwrap();
    assert_eq!((report.snapshot_seq, report.replayed), (8, 1));
    assert_eq!(toy.state.items, pushes(0..9));
    // A complete checkpoint, then reopen: nothing to replay.
    let mut toy = toy;
    toy.checkpoint().unwrap();
    drop(toy);
    let (toy, report) = Toy::open(dir, SyncPolicy::Always).unwrap();
    assert_eq!((report.snapshot_seq, report.replayed), (9, 0));
    assert_eq!(toy.state.items, pushes(0..9));
    assert_eq!(fs::metadata(journal_file(dir)).unwrap().len(), JOURNAL_HEADER_LEN as u64);
}

#[test]
fn a_snapshot_older_than_the_journal_is_a_gap_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (mut toy, _) = Toy::open(dir, SyncPolicy::Always).unwrap();
    toy.push(Op::Push(1)).unwrap();
    toy.checkpoint().unwrap();
    toy.push(Op::Push(2)).unwrap();
    drop(toy);
    fs::remove_file(snapshot_path(dir, KIND)).unwrap();
    let err = Toy::open(dir, SyncPolicy::Always).err().unwrap();
    assert!(
        matches!(&err, Error::JournalGap { snapshot_seq: 0, journal_base: 1, path } if *path == journal_file(dir)),
        "{err:?}"
    );
    assert!(err.to_string().contains("operations 1 to 1 are missing"), "{err}");
    assert!(journal_file(dir).exists(), "nothing is moved");
}

#[test]
fn a_second_open_of_one_directory_is_refused_until_the_first_closes() {
    let tmp = tempfile::tempdir().unwrap();
    let (toy, _) = Toy::open(tmp.path(), SyncPolicy::Always).unwrap();
    let err = Toy::open(tmp.path(), SyncPolicy::Always).err().unwrap();
    assert!(matches!(&err, Error::Locked { path } if path.ends_with("toy.lock")), "{err:?}");
    assert!(err.to_string().contains("toy.lock"));
    // Another kind in the same directory has its own lock.
    let other = DirLock::acquire(tmp.path(), "other").unwrap();
    assert!(other.path().ends_with("other.lock"));
    drop(toy);
    assert!(Toy::open(tmp.path(), SyncPolicy::Always).is_ok());
}

#[test]
fn stale_temporaries_of_this_kind_are_removed_at_open_and_others_are_left() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::create_dir_all(dir).unwrap();
    let stale = [".toy.snap.tmp-99-0", ".toy.snap.backup.tmp-99-1", ".toy.journal.tmp-7-3"];
    let kept = [".other.snap.tmp-99-0", "toy.snap.corrupt-20260101T000000Z", "notes.txt"];
    for name in stale.iter().chain(&kept) {
        fs::write(dir.join(name), b"x").unwrap();
    }
    let (_toy, report) = Toy::open(dir, SyncPolicy::Always).unwrap();
    assert_eq!(report.stale_removed, 3);
    let left = names(dir);
    for name in kept {
        assert!(left.contains(&name.to_owned()), "{name} kept");
    }
    for name in stale {
        assert!(!left.contains(&name.to_owned()), "{name} removed");
    }
}

#[test]
fn interval_policy_syncs_in_the_background_and_refuses_a_zero_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let err = FileSink::open(tmp.path().join("j"), KIND, SyncPolicy::Interval(Duration::ZERO)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }));
    let mut sink =
        FileSink::open(tmp.path().join("j"), KIND, SyncPolicy::Interval(Duration::from_millis(5))).unwrap();
    sink.read_from(0, &mut |_, _| Ok(())).unwrap();
    sink.append(1, b"a").unwrap();
    // Gathered in memory, then written by the background thread within the interval.
    let path = tmp.path().join("j");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fs::metadata(&path).unwrap().len() < (JOURNAL_HEADER_LEN + ENTRY_HEADER_LEN + 1) as u64 {
        assert!(std::time::Instant::now() < deadline, "the background write never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!sink.shared.failed.load(Ordering::Acquire));
    sink.restart(5).unwrap();
    sink.append(6, b"b").unwrap();
    drop(sink); // writes what is gathered
    let mut sink = FileSink::open(tmp.path().join("j"), KIND, SyncPolicy::Never).unwrap();
    let mut seen = Vec::new();
    let report = sink.read_from(0, &mut |seq, p| {
        seen.push((seq, p.to_vec()));
        Ok(())
    });
    assert_eq!(report.unwrap().last_seq, 6);
    assert_eq!(seen, [(6, b"b".to_vec())]);
}

#[test]
fn an_entry_that_does_not_decode_or_apply_fails_the_open() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sink = FileSink::open(journal_file(tmp.path()), KIND, SyncPolicy::Always).unwrap();
    sink.append(1, &[9, 9]).unwrap(); // no such variant
    drop(sink);
    let err = Toy::open(tmp.path(), SyncPolicy::Always).err().unwrap();
    assert!(matches!(&err, Error::Corrupt { .. }), "{err:?}");
    // A layer's own refusal is its error, returned as it is.
    fs::remove_file(journal_file(tmp.path())).unwrap();
    drop(Toy::open(tmp.path(), SyncPolicy::Always).unwrap().0.push(Op::Push(1)));
    let sink = FileSink::open(journal_file(tmp.path()), KIND, SyncPolicy::Always).unwrap();
    let err =
        Journal::<Op>::open(Box::new(sink), 0, |_, _| Err(Error::invalid("op", "refused"))).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { field: "op", .. }), "{err:?}");
}

#[test]
fn appending_before_reading_checks_the_file_first() {
    let tmp = tempfile::tempdir().unwrap();
    let path = journal_file(tmp.path());
    let mut sink = FileSink::open(&path, KIND, SyncPolicy::Always).unwrap();
    sink.append(1, b"one").unwrap();
    drop(sink);
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(&[1, 2, 3]); // a torn append
    fs::write(&path, &bytes).unwrap();
    let mut sink = FileSink::open(&path, KIND, SyncPolicy::Always).unwrap();
    sink.append(2, b"two").unwrap();
    let mut seen = Vec::new();
    sink.read_from(0, &mut |seq, _| {
        seen.push(seq);
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, [1, 2]);
}

#[test]
fn oversized_entries_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sink = FileSink::open(journal_file(tmp.path()), KIND, SyncPolicy::Never).unwrap();
    sink.read_from(0, &mut |_, _| Ok(())).unwrap();
    let big = vec![0u8; MAX_ENTRY_LEN as usize + 1];
    assert!(matches!(sink.append(1, &big), Err(Error::InvalidArgument { .. })));
    assert_eq!(sink.intact_len(), Some(JOURNAL_HEADER_LEN as u64));
}

#[test]
fn gathered_entries_are_read_back_and_a_sync_writes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let path = journal_file(tmp.path());
    let mut sink = FileSink::open(&path, KIND, SyncPolicy::Interval(Duration::from_secs(3600))).unwrap();
    for seq in 1..=3 {
        sink.append(seq, &[seq as u8]).unwrap();
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), JOURNAL_HEADER_LEN as u64, "gathered, not written yet");
    let mut seen = Vec::new();
    sink.read_from(1, &mut |seq, _| {
        seen.push(seq);
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, [2, 3], "a read writes what is gathered first");
    sink.append(4, b"x").unwrap();
    sink.sync().unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        (JOURNAL_HEADER_LEN + 3 * (ENTRY_HEADER_LEN + 1) + ENTRY_HEADER_LEN + 1) as u64
    );
}

#[test]
fn flushes_keep_the_gathering_buffers_grown_and_every_entry_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let path = journal_file(tmp.path());
    let mut sink = FileSink::open(&path, KIND, SyncPolicy::Interval(Duration::from_secs(3600))).unwrap();
    sink.read_from(0, &mut |_, _| Ok(())).unwrap();
    // About five megabytes: the appends themselves write each full megabyte.
    let payload = |seq: u64| -> Vec<u8> { (0..1000).map(|i| (seq as usize * 7 + i) as u8).collect() };
    let n = 5 * GATHER_MAX as u64 / 1000;
    for seq in 1..=n {
        sink.append(seq, &payload(seq)).unwrap();
    }
    {
        let io = sink.shared.io();
        assert!(io.spare.is_empty() && io.spare.capacity() >= GATHER_MAX, "the written buffer is kept");
        assert!(sink.shared.gathered().capacity() >= GATHER_MAX, "appends gather into a grown buffer");
    }
    // An outsized entry's buffer is cut back, not kept whole nor dropped.
    sink.append(n + 1, &vec![1u8; 3 * GATHER_MAX]).unwrap();
    sink.sync().unwrap();
    let kept = sink.shared.io().spare.capacity();
    assert!((GATHER_MAX..=SPARE_MAX).contains(&kept), "spare capacity {kept}");
    let mut seen = 0;
    sink.read_from(0, &mut |seq, bytes| {
        seen += 1;
        assert_eq!(seq, seen);
        if seq <= n {
            assert_eq!(bytes, payload(seq));
        } else {
            assert_eq!(bytes.len(), 3 * GATHER_MAX);
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, n + 1);
}

#[test]
fn a_gathered_megabyte_wakes_the_background_thread_to_write_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = journal_file(tmp.path());
    let mut sink = FileSink::open(&path, KIND, SyncPolicy::Interval(Duration::from_secs(3600))).unwrap();
    sink.read_from(0, &mut |_, _| Ok(())).unwrap();
    let payload = vec![7u8; 1000];
    let n = GATHER_MAX as u64 / 1000 + 1;
    let shared = Arc::clone(&sink.shared);
    {
        // While the file is held, the appends only gather (and wake the background thread).
        let _held = shared.io();
        for seq in 1..=n {
            sink.append(seq, &payload).unwrap();
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), JOURNAL_HEADER_LEN as u64);
        assert!(shared.gathered().len() >= GATHER_MAX);
    }
    // Long before the interval ends, the background thread writes them.
    let expected = JOURNAL_HEADER_LEN as u64 + n * (ENTRY_HEADER_LEN as u64 + 1000);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fs::metadata(&path).unwrap().len() < expected {
        assert!(std::time::Instant::now() < deadline, "the background thread never wrote the megabyte");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!shared.failed.load(Ordering::Acquire));
    let mut seen = 0;
    sink.read_from(0, &mut |seq, bytes| {
        seen += 1;
        assert_eq!((seq, bytes), (seen, &payload[..]));
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, n);
}

/// A lock released by a store that is dropped must be free to the next open even while
/// another thread spawns processes (each fork holds a copy of the lock's descriptor until
/// its exec). Without the lock's patience this failed within a second of reopening.
#[cfg(unix)]
#[test]
fn a_dropped_lock_is_free_while_another_thread_spawns_processes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let refused = std::thread::scope(|s| {
        let spawner = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(mut child) = std::process::Command::new("true").spawn() {
                    let _ = child.wait();
                }
            }
        });
        let mut refused = 0;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(1500) {
            match DirLock::acquire(dir.path(), "toy") {
                Ok(lock) => drop(lock),
                Err(_) => refused += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        spawner.join().unwrap();
        refused
    });
    assert_eq!(refused, 0, "{refused} reopens found their own released lock held");
}
