//! The `maxim-core` contract suite, run against the episodic layer.

use hippocampus::{Episode, EpisodicMemory, Hippocampus};
use maxim_core::testing::ContractFixture;
use maxim_core::{RecordId, SharedClock, Timestamp};

pub(crate) struct Fixture;

impl ContractFixture for Fixture {
    type Layer = Hippocampus;

    fn new_layer(&self, clock: SharedClock) -> Hippocampus {
        Hippocampus::builder().clock(clock).id_seed(11).build().expect("config")
    }

    fn record(&self, _layer: &mut Hippocampus, n: usize, now: Timestamp) -> Episode {
        let id = RecordId::from_parts(now, 1000 + n as u64);
        let mut m = EpisodicMemory::new(id, now);
        m.context.active_goal = Some(format!("goal {n}").into());
        m.action.tool_name = format!("tool_{n}").into();
        m.outcome.success = Some(n.is_multiple_of(2));
        Episode::from(m)
    }

    fn associate(&self, layer: &mut Hippocampus, a: RecordId, b: RecordId) {
        layer.link(a, b, maxim_core::EdgeKind::Associates, 0.8).expect("both records are held");
    }
}

maxim_core::contract_tests!(Fixture);
