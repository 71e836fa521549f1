//! The `maxim` program.

fn main() {
    println!("maxim {}", env!("CARGO_PKG_VERSION"));
}
