//! The latency of the sandbox's network proxy (written in the next commit).

fn main() {}
