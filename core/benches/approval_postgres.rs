//! PostgreSQL approval store benchmark (written below).
fn main() {}
