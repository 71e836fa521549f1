//! The integration tests of `ips-gate`, one binary.

mod assess;
mod gate;
mod sense;
mod workload;
