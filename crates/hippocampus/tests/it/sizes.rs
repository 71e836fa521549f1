//! Encoded sizes of a typical episode, full and compressed (the crate docs quote them).

use hippocampus::{Episode, EpisodicMemory};
use maxim_core::codec::{self, HEADER_LEN};
use maxim_core::value::{Map, Value};
use maxim_core::{RecordId, Timestamp};

/// The sample episode of the original's hub tests (`spec/maxim-reference.md` §14).
pub(crate) fn typical() -> EpisodicMemory {
    let now = Timestamp::from_secs(1_700_000_000);
    let mut m = EpisodicMemory::new(RecordId::from_u128(0x0183_f3a1_0c8e_4000_9b1d_4c2e_77aa_1234), now);
    m.perception.detected_objects = vec!["mug".into(), "table".into()];
    m.perception.salience = 0.7;
    m.perception.novelty = 0.6;
    m.perception.cli_input = Some("find the mug".into());
    m.context.active_goal = Some("find mug".into());
    m.context.active_mode = "exploration".into();
    m.decision.intent =
        [("goal", Value::from("find mug")), ("action", Value::from("look_around"))].into_iter().collect();
    m.decision.confidence = 0.8;
    m.action.tool_name = "look_around".into();
    m.action.tool_params = [("direction", Value::from("left"))].into_iter().collect::<Map>();
    m.outcome.success = Some(true);
    m.outcome.result =
        Value::Map([("found", Value::from(true)), ("object", Value::from("mug"))].into_iter().collect());
    m
}

#[test]
fn a_typical_compressed_episode_encodes_in_at_most_200_bytes() {
    let full = Episode::from(typical());
    let compressed = Episode::from(typical().compress(4));
    let full_bytes = codec::encode("hippocampus", &full).unwrap().len();
    let compressed_bytes = codec::encode("hippocampus", &compressed).unwrap().len();
    // The bound of the issue and of the crate docs counts the whole encoding, header included.
    assert!(compressed_bytes <= 200, "compressed {compressed_bytes} bytes with the header");
    // The crate docs quote these payload sizes: change them there when this fails.
    assert_eq!((full_bytes - HEADER_LEN, compressed_bytes - HEADER_LEN), (288, 149));
    assert_eq!(HEADER_LEN, 40);
}
