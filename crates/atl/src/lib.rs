//! `atl`: The semantic layer of maxim: concepts, typed relationships and contradictions.
//!
//! This crate is a leaf of the maxim workspace: it depends on [`maxim_core`] and on no
//! other maxim crate. Its behaviour is specified in `shared/spec/maxim-reference.md`; the
//! issue that builds it fills this crate in.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maxim_core;
