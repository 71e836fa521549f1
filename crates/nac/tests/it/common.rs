//! Shared helpers of the integration tests.

use maxim_core::value::{Map, Value};
use maxim_core::{ManualClock, Timestamp};
use nac::{Nac, NacConfig, Observation, Valence};

/// The start of every test's clock.
pub(crate) const T0: i64 = 1_700_000_000;

/// A store on a manual clock at `T0`, with `config`.
pub(crate) fn store(config: NacConfig) -> (Nac, ManualClock) {
    let clock = ManualClock::new(Timestamp::from_secs(T0));
    let mut b = Nac::builder();
    b.clock(clock.shared()).config(config);
    (b.build().expect("valid settings"), clock)
}

/// A store with the default settings.
pub(crate) fn default_store() -> (Nac, ManualClock) {
    store(NacConfig::default())
}

/// A context of text items.
pub(crate) fn ctx(items: &[(&str, &str)]) -> Map {
    items.iter().map(|&(k, v)| (k, Value::from(v))).collect()
}

/// An observation of `tool:grasp` → `outcome` with `valence`.
pub(crate) fn grasp(outcome: &'static str, valence: Valence) -> Observation<'static> {
    Observation::new("tool", "tool:grasp", "tool_result", outcome, valence)
}

/// Observes `tool:grasp` → `success` with `valence`, returning V afterwards.
pub(crate) fn observe_v(nac: &mut Nac, valence: Valence) -> f64 {
    let id = nac.observe(&grasp("success", valence)).expect("a valid observation").link;
    nac.link(id).unwrap().predicted_value()
}

/// The default settings changed by `f`.
pub(crate) fn with(f: impl FnOnce(&mut NacConfig)) -> NacConfig {
    let mut c = NacConfig::default();
    f(&mut c);
    c
}
