//! Shared workload generators for the maxim benchmarks.
