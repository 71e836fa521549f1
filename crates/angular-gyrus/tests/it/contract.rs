//! The `maxim-core` MemoryLayer contract suite, run against the mathematical layer.

use angular_gyrus::{AngularGyrus, AngularGyrusConfig, MathCategory, MathEntry, MathRelation};
use maxim_core::testing::ContractFixture;
use maxim_core::{RecordId, SharedClock, Timestamp};

struct Fixture;

impl ContractFixture for Fixture {
    type Layer = AngularGyrus;

    fn new_layer(&self, clock: SharedClock) -> AngularGyrus {
        let mut config = AngularGyrusConfig::default();
        // The suite counts the records it stores; the built-ins would be extra.
        config.seed_built_ins = false;
        AngularGyrus::builder().clock(clock).config(config).id_seed(11).build().expect("valid settings")
    }

    fn record(&self, layer: &mut AngularGyrus, n: usize, now: Timestamp) -> MathEntry {
        let mut r =
            layer.new_record(&format!("fact {n}"), MathCategory::Fact, "contract").expect("valid names");
        assert_eq!(r.meta.created_at, now);
        r.verbal = format!("the fact numbered {n}");
        r.confidence = 0.5;
        r.into()
    }

    fn associate(&self, layer: &mut AngularGyrus, a: RecordId, b: RecordId) {
        layer.link(a, b, MathRelation::Associates, 1.0).expect("both ends are held");
    }
}

maxim_core::contract_tests!(Fixture);
