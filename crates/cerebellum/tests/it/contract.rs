//! The `maxim-core` MemoryLayer contract suite, run against the procedural layer.

use cerebellum::{Cerebellum, Skill, Step};
use maxim_core::testing::ContractFixture;
use maxim_core::{RecordId, SharedClock, Timestamp};

struct Fixture;

impl ContractFixture for Fixture {
    type Layer = Cerebellum;

    fn new_layer(&self, clock: SharedClock) -> Cerebellum {
        Cerebellum::builder().clock(clock).id_seed(11).build().expect("valid settings")
    }

    fn record(&self, layer: &mut Cerebellum, n: usize, now: Timestamp) -> Skill {
        // Distinct tools per record, so no association forms unless the test asks for one.
        let steps = vec![Step::read(format!("probe{n}"), "target"), Step::write(format!("fix{n}"), "target")];
        let skill =
            layer.new_skill(&format!("task number {n}"), steps, &["verified"]).expect("a valid skill");
        assert_eq!(skill.meta.created_at, now);
        skill
    }

    fn associate(&self, layer: &mut Cerebellum, a: RecordId, b: RecordId) {
        layer.link_sequence(a, b).expect("both skills are held");
    }
}

maxim_core::contract_tests!(Fixture);
