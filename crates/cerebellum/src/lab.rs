//! The skill lab.
