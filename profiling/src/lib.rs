//! The profiling lab: tools that attribute the Rust-vs-numba gap with evidence.
//! (Flamegraphs, assembly dumps, instruction counts and A/B experiments arrive with the profiling issue.)
