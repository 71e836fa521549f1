//! The `maxim-core` MemoryLayer contract suite, run against the semantic layer.

use atl::{Atl, SemanticRecord};
use maxim_core::testing::ContractFixture;
use maxim_core::{RecordId, SharedClock, Timestamp};

struct Fixture;

impl ContractFixture for Fixture {
    type Layer = Atl;

    fn new_layer(&self, clock: SharedClock) -> Atl {
        Atl::builder().clock(clock).id_seed(11).build().expect("valid settings")
    }

    fn record(&self, layer: &mut Atl, n: usize, now: Timestamp) -> SemanticRecord {
        let concept = layer.new_concept(&format!("concept {n}"), "object").expect("a valid name");
        assert_eq!(concept.meta.created_at, now);
        concept.with_definition(format!("the concept numbered {n}")).into()
    }

    fn associate(&self, layer: &mut Atl, a: RecordId, b: RecordId) {
        layer.define_relationship(a, b, "IS_A", 1.0, 0.5).expect("both ends are held");
    }
}

maxim_core::contract_tests!(Fixture);
