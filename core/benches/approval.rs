//! Approval store throughput (being written).
fn main() {}
