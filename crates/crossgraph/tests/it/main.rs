//! Integration tests of `crossgraph`.
