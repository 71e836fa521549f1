//! Integration tests of the procedural layer: one binary, one module per concern.
