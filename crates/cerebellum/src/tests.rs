//! Unit tests of the store's rules.
