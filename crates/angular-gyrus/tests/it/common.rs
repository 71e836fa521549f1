//! Helpers shared by the test modules: layers on a manual clock and seeded noise.

use angular_gyrus::{AngularGyrus, AngularGyrusConfig};
use maxim_core::{ManualClock, SplitMix64, Timestamp};

/// The start of every test clock (a UTC midnight).
pub(crate) const T0: Timestamp = Timestamp::from_secs(1_699_920_000);

/// A seeded layer on a manual clock, built-ins included.
pub(crate) fn layer() -> (ManualClock, AngularGyrus) {
    layer_with(AngularGyrusConfig::default())
}

/// [`layer`] with `config`.
pub(crate) fn layer_with(config: AngularGyrusConfig) -> (ManualClock, AngularGyrus) {
    let clock = ManualClock::new(T0);
    let ag = AngularGyrus::builder()
        .clock(clock.shared())
        .config(config)
        .id_seed(17)
        .build()
        .expect("valid settings");
    (clock, ag)
}

/// Seeded standard normal deviates (Box–Muller on SplitMix64).
pub(crate) struct Noise(SplitMix64);

impl Noise {
    pub(crate) fn new(seed: u64) -> Self {
        Self(SplitMix64::new(seed))
    }

    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = self.0.uniform().max(1e-300);
        let u2 = self.0.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// `n` sample times `step_secs` apart from [`T0`], in seconds.
pub(crate) fn times(n: usize, step_secs: f64) -> Vec<f64> {
    (0..n).map(|i| T0.as_secs_f64() + i as f64 * step_secs).collect()
}
