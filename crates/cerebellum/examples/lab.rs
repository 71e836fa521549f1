//! The skill lab.
fn main() {}
