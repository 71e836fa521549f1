//! Tests of the snapshot codec: layout, every rejection, the commit protocol under injected
//! failures, recovery, and property tests over arbitrary payloads and damage.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use super::*;
use crate::id::RecordId;
use crate::record::{RecordMeta, Source};
use crate::trace::TraceKind;

/// 2023-11-14T22:13:20Z.
const NOW: Timestamp = Timestamp::from_secs(1_700_000_000);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Point,
    Circle { radius: f64 },
    Poly(Vec<(i32, i32)>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Nested {
    name: String,
    ids: Vec<RecordId>,
    weights: BTreeMap<String, f64>,
    shape: Option<Shape>,
    children: Vec<Leaf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Leaf {
    at: Timestamp,
    flag: bool,
    score: i64,
}

/// A sequence of unknown length, which postcard cannot write.
struct UnknownLen;

impl Serialize for UnknownLen {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq((0..3u8).filter(|_| true))
    }
}

/// A value whose serialisation always fails.
struct Unencodable;

impl Serialize for Unencodable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> std::result::Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("refused"))
    }
}

fn nested() -> Nested {
    Nested {
        name: "kitchen".into(),
        ids: vec![RecordId::from_u128(7), RecordId::from_u128(u128::MAX)],
        weights: [("mug".to_string(), 0.5), ("cup".to_string(), -1.25)].into_iter().collect(),
        shape: Some(Shape::Poly(vec![(0, 0), (3, -4)])),
        children: vec![Leaf { at: NOW, flag: true, score: -9 }],
    }
}

/// A bitwise CRC-32 (IEEE 802.3, reflected, init and final xor 0xFFFFFFFF): the model the
/// format document names, independent of crc32fast.
fn reference_crc(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A file with the given header fields and payload and a correct checksum.
fn craft(version: u16, flags: u16, kind: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&flags.to_le_bytes());
    let mut field = [0u8; MAX_KIND_LEN];
    field[..kind.len()].copy_from_slice(kind);
    bytes.extend_from_slice(&field);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let crc = reference_crc(&[&bytes[..], payload].concat());
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// Recomputes the checksum of an edited file, so that only the edit is wrong.
fn reseal(bytes: &mut [u8]) {
    let crc = reference_crc(&[&bytes[..CRC_AT], &bytes[HEADER_LEN..]].concat());
    bytes[CRC_AT..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
}

fn corrupt_reason(err: &Error) -> &CorruptReason {
    match err {
        Error::Corrupt { reason, .. } => reason,
        other => panic!("expected Error::Corrupt, got {other:?}"),
    }
}

fn kept_aside(err: &Error) -> Option<&PathBuf> {
    match err {
        Error::Corrupt { kept_aside, .. }
        | Error::WrongKind { kept_aside, .. }
        | Error::UnsupportedVersion { kept_aside, .. } => kept_aside.as_ref(),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn error_path(err: &Error) -> &Path {
    match err {
        Error::Corrupt { path, .. }
        | Error::WrongKind { path, .. }
        | Error::UnsupportedVersion { path, .. }
        | Error::Io { path, .. } => path,
        other => panic!("expected an error with a path, got {other:?}"),
    }
}

/// Sorted names of the entries of `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn no_temporaries(dir: &Path) -> bool {
    listing(dir).iter().all(|n| !n.contains(".tmp-"))
}

/// Loads `bytes` written at `dir/x.snap` as a `Nested` of kind "test" and checks that the
/// error names the file and that the file was moved aside intact.
fn load_rejected(bytes: &[u8]) -> Error {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    fs::write(&path, bytes).unwrap();
    let err = load_hooked::<Nested>(&path, "test", NOW, &mut no_faults).unwrap_err();
    assert_eq!(error_path(&err), path);
    let aside = kept_aside(&err).expect("the rejected file is moved aside");
    assert_eq!(aside, &dir.path().join("x.snap.corrupt-20231114T221320Z"));
    assert_eq!(fs::read(aside).unwrap(), bytes, "the kept-aside file holds the original bytes");
    assert!(!path.exists());
    assert!(err.to_string().contains("x.snap.corrupt-20231114T221320Z"), "{err}");
    err
}

// ---------------------------------------------------------------------------------------
// Layout.

#[test]
fn crc32fast_computes_the_ieee_crc32() {
    assert_eq!(reference_crc(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
    let data: Vec<u8> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    assert_eq!(checksum(&data[..100], &data[100..]), reference_crc(&data));
}

#[test]
fn version_1_layout_is_frozen() {
    let bytes = encode("test", &(1u8, "hi")).unwrap();
    #[rustfmt::skip]
    let golden: [u8; 44] = [
        b'M', b'A', b'X', b'I', b'M', b'S', b'N', b'P', // magic
        1, 0,                                           // version 1
        0, 0,                                           // flags
        b't', b'e', b's', b't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // kind, NUL-padded
        4, 0, 0, 0, 0, 0, 0, 0,                         // payload length
        0x05, 0x22, 0x8d, 0xf7,                         // CRC-32 of bytes 0..36 and the payload
        1, 2, b'h', b'i',                               // postcard: u8 1, then "hi"
    ];
    assert_eq!(bytes, golden);
    assert_eq!(reference_crc(&[&golden[..36], &golden[40..]].concat()), 0xf78d_2205);
    assert_eq!(decode::<(u8, String)>("g.snap", "test", &golden).unwrap(), (1, "hi".to_string()));
}

#[test]
fn kinds_are_validated() {
    for good in ["a", "hippocampus", "angular-gyrus", "x_9", "abcdefghijklmnop"] {
        assert!(check_kind(good).is_ok(), "{good}");
        assert!(encode(good, &0u8).is_ok());
    }
    for bad in ["", "Hippocampus", "a b", "é", "abcdefghijklmnopq", "atl\0", "a.b"] {
        assert!(matches!(check_kind(bad), Err(Error::InvalidArgument { field: "kind", .. })), "{bad:?}");
        assert!(matches!(encode(bad, &0u8), Err(Error::InvalidArgument { .. })));
        assert!(matches!(
            decode::<u8>("x", bad, &encode("ok", &0u8).unwrap()),
            Err(Error::InvalidArgument { .. })
        ));
    }
}

#[test]
fn several_payload_types_round_trip() {
    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + fmt::Debug>(value: &T) {
        let bytes = encode("test", value).unwrap();
        assert_eq!(&decode::<T>("x.snap", "test", &bytes).unwrap(), value);
    }
    round_trip(&0u8);
    round_trip(&String::new());
    round_trip(&"caf\u{e9} \u{1f375}".to_string());
    round_trip(&vec![(1u64, "a".to_string(), 0.5f64), (u64::MAX, String::new(), -0.0)]);
    round_trip(&nested());
    round_trip(&Option::<Nested>::None);
    round_trip(&Shape::Circle { radius: 2.5 });
    let meta =
        RecordMeta::new(RecordId::from_u128(42), NOW, Source::ToolResult, 0.8, TraceKind::Episodic).unwrap();
    round_trip(&meta);
    round_trip(&vec![meta.clone(), meta]);
}

#[test]
fn slices_decode_as_vectors() {
    let bytes = encode("test", &[3u32, 4, 5][..]).unwrap();
    assert_eq!(decode::<Vec<u32>>("x", "test", &bytes).unwrap(), vec![3, 4, 5]);
}

// ---------------------------------------------------------------------------------------
// Rejections, in the documented order.

#[test]
fn short_files_are_truncated_or_bad_magic() {
    let err = decode::<u8>("x", "test", b"").unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::Truncated { expected: 40, found: 0 });
    let err = decode::<u8>("x", "test", b"MAXIM").unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::Truncated { expected: 40, found: 5 });
    let full = encode("test", &0u8).unwrap();
    let err = decode::<u8>("x", "test", &full[..39]).unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::Truncated { expected: 40, found: 39 });
    let err = decode::<u8>("x", "test", b"hello").unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::BadMagic);
    let err = decode::<u8>("x", "test", &[b'{'; 100]).unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::BadMagic);
}

#[test]
fn every_rejection_names_the_file_and_moves_it_aside() {
    let good = encode("test", &nested()).unwrap();
    let n = good.len() as u64;

    let err = load_rejected(&good[..good.len() - 3]);
    assert_eq!(corrupt_reason(&err), &CorruptReason::Truncated { expected: n, found: n - 3 });

    let err = load_rejected(&[&good[..], b"xx"].concat());
    assert_eq!(corrupt_reason(&err), &CorruptReason::TrailingBytes { expected: n, found: n + 2 });

    let mut bad_magic = good.clone();
    bad_magic[0] = b'm';
    assert_eq!(corrupt_reason(&load_rejected(&bad_magic)), &CorruptReason::BadMagic);

    let mut flipped = good.clone();
    flipped[50] ^= 0x20;
    let stored = u32::from_le_bytes(good[CRC_AT..HEADER_LEN].try_into().unwrap());
    match corrupt_reason(&load_rejected(&flipped)) {
        CorruptReason::ChecksumMismatch { stored: s, computed } => {
            assert_eq!(*s, stored);
            assert_eq!(*computed, reference_crc(&[&flipped[..CRC_AT], &flipped[HEADER_LEN..]].concat()));
        }
        other => panic!("{other:?}"),
    }

    let other_kind = encode("atl", &nested()).unwrap();
    match load_rejected(&other_kind) {
        Error::WrongKind { expected, found, .. } => {
            assert_eq!((expected.as_str(), found.as_str()), ("test", "atl"));
        }
        other => panic!("{other:?}"),
    }

    let future = craft(2, 0, b"test", &good[HEADER_LEN..]);
    match load_rejected(&future) {
        Error::UnsupportedVersion { found, supported, .. } => assert_eq!((found, supported), (2, 1)),
        other => panic!("{other:?}"),
    }

    let zero = craft(0, 0, b"test", &good[HEADER_LEN..]);
    assert!(matches!(load_rejected(&zero), Error::UnsupportedVersion { found: 0, .. }));

    let flagged = craft(1, 0x0100, b"test", &good[HEADER_LEN..]);
    assert_eq!(corrupt_reason(&load_rejected(&flagged)), &CorruptReason::UnknownFlags { flags: 0x0100 });

    let undecodable = craft(1, 0, b"test", &[0xFF; 3]);
    assert!(matches!(corrupt_reason(&load_rejected(&undecodable)), CorruptReason::Payload(_)));

    let leftover = craft(1, 0, b"test", &[&good[HEADER_LEN..], &[0u8][..]].concat());
    match corrupt_reason(&load_rejected(&leftover)) {
        CorruptReason::Payload(msg) => assert!(msg.contains("1 bytes left over"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_kind_fields_are_wrong_kinds_shown_escaped() {
    let payload = postcard::to_stdvec(&0u8).unwrap();
    let upper = craft(1, 0, b"ATL", &payload);
    match decode::<u8>("x", "atl", &upper) {
        Err(Error::WrongKind { found, .. }) => assert_eq!(found, "ATL"),
        other => panic!("{other:?}"),
    }
    let after_nul = craft(1, 0, b"atl\0x", &payload);
    match decode::<u8>("x", "atl", &after_nul) {
        Err(Error::WrongKind { found, .. }) => assert!(found.starts_with("atl\\x00x"), "{found}"),
        other => panic!("{other:?}"),
    }
    let binary = craft(1, 0, &[0xC3, 0xA9], &payload);
    assert!(
        matches!(decode::<u8>("x", "atl", &binary), Err(Error::WrongKind { found, .. }) if found == "\\xc3\\xa9")
    );
    let empty = craft(1, 0, b"", &payload);
    assert!(
        matches!(decode::<u8>("x", "atl", &empty), Err(Error::WrongKind { found, .. }) if found.is_empty())
    );
}

#[test]
fn invalid_field_values_are_payload_errors() {
    let meta =
        RecordMeta::new(RecordId::from_u128(1), NOW, Source::ToolResult, 0.5, TraceKind::Episodic).unwrap();
    let mut bytes = encode("test", &meta).unwrap();
    // Trust is stored as the f64 0.5; make it 2.0, which `Trust` refuses, and reseal.
    let at = bytes.windows(8).position(|w| w == 0.5f64.to_le_bytes()).expect("trust bytes");
    bytes[at..at + 8].copy_from_slice(&2.0f64.to_le_bytes());
    reseal(&mut bytes);
    let err = decode::<RecordMeta>("m.snap", "test", &bytes).unwrap_err();
    assert!(matches!(corrupt_reason(&err), CorruptReason::Payload(_)));
}

#[test]
fn kept_aside_names_get_a_counter_when_taken() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    for expected in [
        "x.snap.corrupt-20231114T221320Z",
        "x.snap.corrupt-20231114T221320Z-1",
        "x.snap.corrupt-20231114T221320Z-2",
    ] {
        fs::write(&path, b"junk").unwrap();
        let err = load_hooked::<u8>(&path, "test", NOW, &mut no_faults).unwrap_err();
        assert_eq!(kept_aside(&err), Some(&dir.path().join(expected)));
    }
    assert_eq!(listing(dir.path()).len(), 3);
}

#[test]
fn a_file_that_cannot_be_moved_aside_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    fs::write(&path, b"junk").unwrap();
    let mut hook = |step| if step == Step::KeepAside { Err(io::Error::other("injected")) } else { Ok(()) };
    let err = load_hooked::<u8>(&path, "test", NOW, &mut hook).unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::BadMagic);
    assert_eq!(kept_aside(&err), None);
    assert_eq!(fs::read(&path).unwrap(), b"junk");
    assert!(!err.to_string().contains("moved"), "{err}");
}

#[test]
fn missing_files_are_not_found_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.snap");
    let err = load::<u8>(&path, "test").unwrap_err();
    assert!(is_missing(&err) && !is_rejection(&err));
    assert_eq!(error_path(&err), path);
    assert!(listing(dir.path()).is_empty());
    assert!(is_missing(&inspect(&path).unwrap_err()));
}

#[test]
fn an_invalid_kind_argument_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    fs::write(&path, b"junk").unwrap();
    assert!(matches!(load::<u8>(&path, "Bad Kind"), Err(Error::InvalidArgument { .. })));
    assert!(matches!(load_with_recovery::<u8>(&path, ""), Err(Error::InvalidArgument { .. })));
    assert!(matches!(save(&path, "Bad", &1u8), Err(Error::InvalidArgument { .. })));
    assert_eq!(listing(dir.path()), ["x.snap"]);
    assert_eq!(fs::read(&path).unwrap(), b"junk");
}

#[test]
fn reading_a_directory_is_an_io_error_and_moves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub.snap");
    fs::create_dir(&sub).unwrap();
    assert!(matches!(load::<u8>(&sub, "test"), Err(Error::Io { .. })));
    assert!(sub.is_dir());
}

// ---------------------------------------------------------------------------------------
// Saving.

#[test]
fn the_second_save_keeps_the_first_as_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    let first = save(&path, "test", &"one").unwrap();
    assert_eq!(first.backup, None);
    assert_eq!(first.bytes, fs::metadata(&path).unwrap().len());
    assert_eq!(first.path, path);
    assert_eq!(listing(dir.path()), ["x.snap"]);

    let second = save(&path, "test", &"two").unwrap();
    let backup = backup_path(&path).unwrap();
    assert_eq!(second.backup.as_ref(), Some(&backup));
    assert_eq!(load::<String>(&backup, "test").unwrap(), "one");
    assert_eq!(load::<String>(&path, "test").unwrap(), "two");

    save(&path, "test", &"three").unwrap();
    assert_eq!(load::<String>(&backup, "test").unwrap(), "two");
    assert_eq!(load::<String>(&path, "test").unwrap(), "three");
    assert_eq!(listing(dir.path()), ["x.snap", "x.snap.backup"]);
    let info = inspect(&path).unwrap();
    assert_eq!(info.stored_checksum, save(&path, "test", &"three").unwrap().checksum);
}

#[test]
fn a_failure_before_the_rename_leaves_the_old_file_intact() {
    for failing in [Step::CreateTemp, Step::Write, Step::SyncFile, Step::Rename] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.snap");
        save(&path, "test", &nested()).unwrap();
        let before = fs::read(&path).unwrap();
        let mut hook = |step| if step == failing { Err(io::Error::other("injected")) } else { Ok(()) };
        let err = save_hooked(&path, "test", &"replacement", &mut hook).unwrap_err();
        assert!(
            matches!(&err, Error::Io { source, .. } if source.to_string() == "injected"),
            "{failing:?}: {err:?}"
        );
        assert_eq!(fs::read(&path).unwrap(), before, "{failing:?}");
        assert!(no_temporaries(dir.path()), "{failing:?}: {:?}", listing(dir.path()));
        assert_eq!(load::<Nested>(&path, "test").unwrap(), nested());
    }
}

#[test]
fn a_failed_directory_sync_reports_an_error_after_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &1u8).unwrap();
    let mut hook = |step| if step == Step::SyncDir { Err(io::Error::other("injected")) } else { Ok(()) };
    let err = save_hooked(&path, "test", &2u8, &mut hook).unwrap_err();
    assert_eq!(error_path(&err), dir.path());
    assert_eq!(load::<u8>(&path, "test").unwrap(), 2);
    assert_eq!(load::<u8>(backup_path(&path).unwrap(), "test").unwrap(), 1);
}

#[test]
fn an_unencodable_payload_leaves_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &5u8).unwrap();
    let err = save(&path, "test", &Unencodable).unwrap_err();
    assert!(matches!(&err, Error::Encode { kind, .. } if kind == "test"), "{err:?}");
    assert_eq!(listing(dir.path()), ["x.snap"]);
    assert_eq!(load::<u8>(&path, "test").unwrap(), 5);
    // Sequences of unknown length cannot be written by postcard either.
    assert!(matches!(encode("test", &UnknownLen), Err(Error::Encode { .. })));
}

#[test]
fn a_failed_hard_link_falls_back_to_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &"one").unwrap();
    let mut hook =
        |step| if step == Step::LinkBackup { Err(io::Error::other("no links here")) } else { Ok(()) };
    let report = save_hooked(&path, "test", &"two", &mut hook).unwrap();
    assert_eq!(report.backup, Some(backup_path(&path).unwrap()));
    assert_eq!(load::<String>(backup_path(&path).unwrap(), "test").unwrap(), "one");
    assert_eq!(load::<String>(&path, "test").unwrap(), "two");
}

#[test]
fn a_backup_that_cannot_be_made_does_not_fail_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &"one").unwrap();
    let mut hook = |step| {
        if matches!(step, Step::LinkBackup | Step::CopyBackup) { Err(io::Error::other("no")) } else { Ok(()) }
    };
    let report = save_hooked(&path, "test", &"two", &mut hook).unwrap();
    assert_eq!(report.backup, None);
    assert_eq!(listing(dir.path()), ["x.snap"]);
    assert_eq!(load::<String>(&path, "test").unwrap(), "two");
}

#[test]
fn a_failed_backup_refresh_keeps_the_old_backup() {
    for failing in [&[Step::LinkBackup, Step::CopyBackup][..], &[Step::RenameBackup]] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.snap");
        save(&path, "test", &"one").unwrap();
        save(&path, "test", &"two").unwrap();
        let mut hook = |step| if failing.contains(&step) { Err(io::Error::other("no")) } else { Ok(()) };
        let report = save_hooked(&path, "test", &"three", &mut hook).unwrap();
        assert_eq!(report.backup, None, "{failing:?}");
        assert_eq!(load::<String>(backup_path(&path).unwrap(), "test").unwrap(), "one", "{failing:?}");
        assert_eq!(load::<String>(&path, "test").unwrap(), "three");
        assert_eq!(listing(dir.path()), ["x.snap", "x.snap.backup"], "{failing:?}");
    }
}

#[test]
fn a_file_that_does_not_verify_never_becomes_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &"one").unwrap();
    save(&path, "test", &"two").unwrap();
    let mut bytes = fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    fs::write(&path, &bytes).unwrap();
    let report = save(&path, "test", &"three").unwrap();
    assert_eq!(report.backup, None);
    assert_eq!(load::<String>(backup_path(&path).unwrap(), "test").unwrap(), "one");
    assert_eq!(load::<String>(&path, "test").unwrap(), "three");
}

#[test]
fn saving_creates_missing_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("x.snap");
    save(&path, "test", &7u8).unwrap();
    assert_eq!(load::<u8>(&path, "test").unwrap(), 7);
}

#[test]
fn a_parent_that_is_a_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plain"), b"x").unwrap();
    let err = save(dir.path().join("plain").join("x.snap"), "test", &1u8).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert_eq!(fs::read(dir.path().join("plain")).unwrap(), b"x");
}

#[test]
fn targets_that_are_not_regular_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub.snap");
    fs::create_dir(&sub).unwrap();
    fs::write(sub.join("inside"), b"keep").unwrap();
    let err = save(&sub, "test", &1u8).unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == io::ErrorKind::InvalidInput),
        "{err:?}"
    );
    assert_eq!(listing(dir.path()), ["sub.snap"]);
    #[cfg(unix)]
    {
        let real = dir.path().join("real.snap");
        save(&real, "test", &1u8).unwrap();
        let link = dir.path().join("link.snap");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(save(&link, "test", &2u8), Err(Error::Io { .. })));
        assert_eq!(load::<u8>(&real, "test").unwrap(), 1);
    }
}

#[test]
fn paths_without_a_file_name_are_invalid() {
    assert!(matches!(save("/", "test", &1u8), Err(Error::InvalidArgument { field: "path", .. })));
    assert!(matches!(save("..", "test", &1u8), Err(Error::InvalidArgument { field: "path", .. })));
    assert!(matches!(backup_path("/"), Err(Error::InvalidArgument { .. })));
}

#[cfg(unix)]
#[test]
fn new_files_are_private_and_replaced_files_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &1u8).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    save(&path, "test", &2u8).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn concurrent_saves_leave_one_whole_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let path = &path;
            s.spawn(move || {
                for i in 0..20u64 {
                    save(path, "test", &vec![t * 1000 + i; 50]).unwrap();
                }
            });
        }
    });
    let value = load::<Vec<u64>>(&path, "test").unwrap();
    assert_eq!(value.len(), 50);
    assert!(value.iter().all(|&v| v == value[0]) && value[0] % 1000 == 19);
    assert!(no_temporaries(dir.path()), "{:?}", listing(dir.path()));
}

// ---------------------------------------------------------------------------------------
// Recovery.

#[test]
fn recovery_prefers_an_intact_main_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &1u8).unwrap();
    save(&path, "test", &2u8).unwrap();
    let (value, recovery) = load_with_recovery::<u8>(&path, "test").unwrap();
    assert_eq!(value, 2);
    assert!(matches!(recovery, Recovery::Primary));
}

#[test]
fn recovery_falls_back_to_the_backup_after_a_torn_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &nested()).unwrap();
    save(&path, "test", &Nested { name: "second".into(), ..nested() }).unwrap();
    let full = fs::read(&path).unwrap();
    fs::write(&path, &full[..full.len() / 2]).unwrap();
    let (value, recovery) = load_with_recovery_hooked::<Nested>(&path, "test", NOW, &mut no_faults).unwrap();
    assert_eq!(value, nested());
    match recovery {
        Recovery::Backup { path: used, primary_error } => {
            assert_eq!(used, backup_path(&path).unwrap());
            assert!(matches!(corrupt_reason(&primary_error), CorruptReason::Truncated { .. }));
            assert_eq!(kept_aside(&primary_error), Some(&dir.path().join("x.snap.corrupt-20231114T221320Z")));
        }
        Recovery::Primary => panic!("the torn main file was used"),
    }
    assert!(!path.exists());
    // The next run, with the main file gone, finds the backup again; a save then restores it.
    let (again, recovery) = load_with_recovery::<Nested>(&path, "test").unwrap();
    assert_eq!(again, nested());
    assert!(matches!(&recovery, Recovery::Backup { primary_error, .. } if is_missing(primary_error)));
    save(&path, "test", &again).unwrap();
    assert!(matches!(load_with_recovery::<Nested>(&path, "test").unwrap().1, Recovery::Primary));
}

#[test]
fn recovery_returns_the_main_error_when_the_backup_is_bad_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    fs::write(&path, b"junk").unwrap();
    fs::write(backup_path(&path).unwrap(), b"also junk").unwrap();
    let err = load_with_recovery_hooked::<u8>(&path, "test", NOW, &mut no_faults).unwrap_err();
    assert_eq!(error_path(&err), path);
    assert_eq!(corrupt_reason(&err), &CorruptReason::BadMagic);
    assert_eq!(
        listing(dir.path()),
        ["x.snap.backup.corrupt-20231114T221320Z", "x.snap.corrupt-20231114T221320Z"]
    );
}

#[test]
fn recovery_with_nothing_on_disk_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    let err = load_with_recovery::<u8>(&path, "test").unwrap_err();
    assert!(is_missing(&err));
    assert_eq!(error_path(&err), path);
}

#[test]
fn recovery_without_a_backup_returns_the_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    fs::write(&path, encode("atl", &1u8).unwrap()).unwrap();
    let err = load_with_recovery::<u8>(&path, "test").unwrap_err();
    assert!(matches!(&err, Error::WrongKind { kept_aside: Some(_), .. }), "{err:?}");
}

// ---------------------------------------------------------------------------------------
// Inspection.

#[test]
fn inspect_describes_without_moving() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    let report = save(&path, "hippocampus", &nested()).unwrap();
    let info = inspect(&path).unwrap();
    assert_eq!(info.kind, "hippocampus");
    assert_eq!((info.version, info.flags), (1, 0));
    assert_eq!(info.payload_len + HEADER_LEN as u64, report.bytes);
    assert_eq!(info.file_len, report.bytes);
    assert_eq!(info.stored_checksum, report.checksum);
    assert!(info.is_intact() && info.checksum_ok() && info.length_ok() && info.version_supported());
    assert!(info.kind_valid());
    assert!(info.to_string().ends_with(", intact"), "{info}");

    let mut bytes = fs::read(&path).unwrap();
    bytes[HEADER_LEN + 2] ^= 0x80;
    fs::write(&path, &bytes).unwrap();
    let info = inspect(&path).unwrap();
    assert!(info.length_ok() && !info.checksum_ok() && !info.is_intact());
    assert!(info.to_string().contains("checksum mismatch"), "{info}");
    assert!(path.exists());

    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let info = inspect(&path).unwrap();
    assert!(!info.length_ok() && !info.checksum_ok());

    let future = craft(9, 1, b"scn", b"?");
    let info = inspect_bytes("f.snap", &future).unwrap();
    assert!(!info.version_supported() && info.checksum_ok() && !info.is_intact());
    assert!(info.to_string().contains("version unsupported"), "{info}");

    let shouting = inspect_bytes("k.snap", &craft(1, 0, b"ATL", b"")).unwrap();
    assert!(shouting.checksum_ok() && !shouting.kind_valid() && !shouting.is_intact());
    assert!(shouting.to_string().contains("invalid kind"), "{shouting}");

    fs::write(&path, b"not a snapshot").unwrap();
    let err = inspect(&path).unwrap_err();
    assert_eq!(corrupt_reason(&err), &CorruptReason::BadMagic);
    assert_eq!(kept_aside(&err), None);
    assert!(path.exists());
}

// ---------------------------------------------------------------------------------------
// Properties.

fn arb_leaf() -> impl Strategy<Value = Leaf> {
    (any::<i64>(), any::<bool>(), any::<i64>()).prop_map(|(t, flag, score)| Leaf {
        at: Timestamp::from_micros(t),
        flag,
        score,
    })
}

fn arb_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Point),
        (-1e9f64..1e9).prop_map(|radius| Shape::Circle { radius }),
        prop::collection::vec(any::<(i32, i32)>(), 0..6).prop_map(Shape::Poly),
    ]
}

fn arb_nested() -> impl Strategy<Value = Nested> {
    (
        ".{0,12}",
        prop::collection::vec(any::<u128>().prop_map(RecordId::from_u128), 0..5),
        prop::collection::btree_map("[a-z]{0,6}", -1e6f64..1e6, 0..5),
        prop::option::of(arb_shape()),
        prop::collection::vec(arb_leaf(), 0..4),
    )
        .prop_map(|(name, ids, weights, shape, children)| Nested { name, ids, weights, shape, children })
}

/// The rejection a single flipped bit at byte `at` must produce.
fn expected_for_flip(at: usize, err: &Error) -> bool {
    match at {
        0..8 => matches!(err, Error::Corrupt { reason: CorruptReason::BadMagic, .. }),
        8..10 => matches!(err, Error::UnsupportedVersion { .. }),
        28..36 => matches!(
            err,
            Error::Corrupt {
                reason: CorruptReason::Truncated { .. } | CorruptReason::TrailingBytes { .. },
                ..
            }
        ),
        _ => matches!(err, Error::Corrupt { reason: CorruptReason::ChecksumMismatch { .. }, .. }),
    }
}

proptest! {
    #[test]
    fn tuples_round_trip(value in prop::collection::vec((any::<u64>(), ".{0,8}", any::<f64>()), 0..20)) {
        let bytes = encode("test", &value).unwrap();
        let back = decode::<Vec<(u64, String, f64)>>("x", "test", &bytes).unwrap();
        let bits = |v: &[(u64, String, f64)]| v.iter().map(|(a, b, c)| (*a, b.clone(), c.to_bits())).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&value));
    }

    #[test]
    fn nested_structs_round_trip(value in prop::collection::vec(arb_nested(), 0..4)) {
        let bytes = encode("nested", &value).unwrap();
        prop_assert_eq!(decode::<Vec<Nested>>("x", "nested", &bytes).unwrap(), value);
    }

    #[test]
    fn any_single_bit_flip_is_rejected(value in arb_nested(), bit in any::<prop::sample::Index>()) {
        let mut bytes = encode("test", &value).unwrap();
        let bit = bit.index(bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        let err = decode::<Nested>("x", "test", &bytes).unwrap_err();
        prop_assert!(expected_for_flip(bit / 8, &err), "bit {} gave {:?}", bit, err);
    }

    #[test]
    fn any_truncation_is_rejected(value in arb_nested(), cut in any::<prop::sample::Index>()) {
        let bytes = encode("test", &value).unwrap();
        let keep = cut.index(bytes.len());
        let err = decode::<Nested>("x", "test", &bytes[..keep]).unwrap_err();
        let is_truncated = matches!(err, Error::Corrupt { reason: CorruptReason::Truncated { .. }, .. });
        prop_assert!(is_truncated, "{:?}", err);
    }

    #[test]
    fn appended_bytes_are_rejected(value in arb_nested(), extra in prop::collection::vec(any::<u8>(), 1..16)) {
        let bytes = [encode("test", &value).unwrap(), extra].concat();
        let err = decode::<Nested>("x", "test", &bytes).unwrap_err();
        let is_trailing = matches!(err, Error::Corrupt { reason: CorruptReason::TrailingBytes { .. }, .. });
        prop_assert!(is_trailing, "{:?}", err);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode::<Nested>("x", "test", &bytes);
        let _ = decode::<Vec<(u64, String, f64)>>("x", "test", &bytes);
        let _ = inspect_bytes("x", &bytes);
        let with_magic = [&MAGIC[..], &bytes[..]].concat();
        let _ = decode::<Nested>("x", "test", &with_magic);
        let _ = inspect_bytes("x", &with_magic);
    }

    #[test]
    fn arbitrary_payloads_under_a_valid_header_decode_or_fail_typed(
        payload in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let bytes = craft(1, 0, b"test", &payload);
        let errors = [decode::<Nested>("x", "test", &bytes).err(), decode::<Vec<Leaf>>("x", "test", &bytes).err()];
        for err in errors.into_iter().flatten() {
            prop_assert!(matches!(err, Error::Corrupt { reason: CorruptReason::Payload(_), .. }), "{:?}", err);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regression tests of the defects found by the fault probe (issue 15).

/// Defect 1 and the concurrency test: threads saving one path while another reads it. Every
/// read must see a whole snapshot, the backup must stay whole, and no temporary may remain.
#[test]
fn saves_racing_with_reads_never_expose_a_partial_or_empty_file() {
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &vec![0u64; 64]).unwrap();
    let done = AtomicBool::new(false);
    let (reads, bad) = std::thread::scope(|s| {
        let savers: Vec<_> = (1..=3u64)
            .map(|t| {
                let path = &path;
                s.spawn(move || {
                    for i in 0..150u64 {
                        save(path, "test", &vec![t * 1000 + i; 64]).unwrap();
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let (mut reads, mut bad) = (0u64, Vec::new());
            while !done.load(Ordering::Relaxed) {
                match fs::read(&path) {
                    Ok(bytes) => {
                        reads += 1;
                        match decode::<Vec<u64>>(&path, "test", &bytes) {
                            Ok(v) if v.len() == 64 && v.iter().all(|&x| x == v[0]) => {}
                            other => bad.push(format!("{} bytes: {other:?}", bytes.len())),
                        }
                    }
                    Err(e) => bad.push(format!("read error {e}")),
                }
            }
            (reads, bad)
        });
        // Stop the reader however the savers end, then report a saver's failure.
        let saved: Vec<_> = savers.into_iter().map(std::thread::ScopedJoinHandle::join).collect();
        done.store(true, Ordering::Relaxed);
        let read = reader.join().unwrap();
        for result in saved {
            result.unwrap();
        }
        read
    });
    assert!(
        bad.is_empty(),
        "{} of {reads} reads were not whole snapshots: {:?}",
        bad.len(),
        &bad[..bad.len().min(3)]
    );
    assert!(reads > 0);
    assert_eq!(load::<Vec<u64>>(&path, "test").unwrap().len(), 64);
    assert_eq!(load::<Vec<u64>>(backup_path(&path).unwrap(), "test").unwrap().len(), 64);
    assert!(no_temporaries(dir.path()), "{:?}", listing(dir.path()));
}

/// Defect 2: a backup refresh whose rename finds both names already linked to one file
/// (POSIX rename then does nothing) must not leave its temporary behind.
#[test]
fn a_backup_refresh_that_renames_onto_the_same_file_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    save(&path, "test", &1u8).unwrap();
    save(&path, "test", &2u8).unwrap();
    // The backup already is the current file: the next refresh links it again and renames
    // a name of the same inode over it.
    fs::remove_file(backup_path(&path).unwrap()).unwrap();
    fs::hard_link(&path, backup_path(&path).unwrap()).unwrap();
    assert!(keep_backup(&path, &mut no_faults).is_some());
    assert!(no_temporaries(dir.path()), "{:?}", listing(dir.path()));
    assert_eq!(load::<u8>(&path, "test").unwrap(), 2);
}

/// Defect 7: a FIFO at the path must be refused, not read (which would block for ever).
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this system
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        let _ = tx.send((load::<u8>(&p, "test").map(drop), inspect(&p).map(drop)));
    });
    let Ok((loaded, inspected)) = rx.recv_timeout(std::time::Duration::from_secs(10)) else {
        // Unblock the reader so the test process can end, then fail.
        let _ = fs::write(&path, b"x");
        panic!("loading a FIFO blocked");
    };
    for err in [loaded.unwrap_err(), inspected.unwrap_err()] {
        assert!(
            matches!(&err, Error::Io { source, path: p } if source.kind() == io::ErrorKind::InvalidInput && *p == path),
            "{err:?}"
        );
    }
    assert!(path.exists(), "a FIFO is not a rejected snapshot and stays");
}

/// Defect 7: a device is refused as not a regular file (reading `/dev/zero` never ends).
#[cfg(unix)]
#[test]
fn a_device_is_refused_without_reading_it() {
    let err = load::<u8>("/dev/zero", "test").unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == io::ErrorKind::InvalidInput),
        "{err:?}"
    );
    assert!(inspect("/dev/zero").is_err());
}

/// Defect 7: a large junk file is refused after its header, without reading the rest.
#[cfg(target_os = "linux")]
#[test]
fn a_large_junk_file_is_refused_after_reading_its_header_only() {
    fn bytes_read() -> u64 {
        let io = fs::read_to_string("/proc/self/io").unwrap_or_default();
        io.lines().find_map(|l| l.strip_prefix("rchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
    }
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.snap");
    let sparse = File::create(&junk).unwrap();
    sparse.set_len(1 << 30).unwrap(); // 1 GiB of zeros, sparse on disk
    drop(sparse);
    // A header that claims 1 GiB but whose file is a byte short.
    let claims = dir.path().join("claims.snap");
    let mut header = encode("test", &0u8).unwrap()[..HEADER_LEN].to_vec();
    header[LEN_AT..CRC_AT].copy_from_slice(&(1u64 << 30).to_le_bytes());
    let f = File::create(&claims).unwrap();
    (&f).write_all(&header).unwrap();
    f.set_len(HEADER_LEN as u64 + (1 << 30) - 1).unwrap();
    drop(f);
    let before = bytes_read();
    let err = load::<u8>(&junk, "test").unwrap_err();
    assert!(matches!(corrupt_reason(&err), CorruptReason::BadMagic), "{err:?}");
    let err = load::<u8>(&claims, "test").unwrap_err();
    assert!(matches!(corrupt_reason(&err), CorruptReason::Truncated { .. }), "{err:?}");
    let info = inspect(dir.path().join(kept_aside(&err).unwrap()));
    assert!(info.is_ok_and(|i| !i.length_ok()));
    let read = bytes_read() - before;
    // inspect reads what is there to compute the checksum; the loads read headers only.
    assert!(read < (1 << 30) + (64 << 20), "{read} bytes read");
    let before = bytes_read();
    let _ = load::<u8>(dir.path().join("missing"), "test");
    fs::write(&junk, b"").unwrap();
    assert!(bytes_read() - before < 1 << 20);
}
