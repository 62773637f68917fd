//! Every opcode of protocol v1 and its extensions, in one place so that parsing, encoding and
//! the server's dispatch agree on the numbers without importing one another.

/// v1: sweep the combos over the series.
pub const OP_SWEEP: u8 = 0;
/// v1: send the series back verbatim.
pub const OP_ECHO: u8 = 1;
/// Extension: keep the series on this connection, reply its `u64` id.
pub const OP_LOAD: u8 = 2;
/// Extension: sweep a loaded series by id; the reply is opcode 0's.
pub const OP_SWEEP_LOADED: u8 = 3;
/// Extension: forget a loaded series.
pub const OP_DROP: u8 = 4;
/// Extension: opcode 0 plus a trailing `f64`, the seconds the kernel took inside the server.
pub const OP_SWEEP_TIMED: u8 = 5;
/// Extension: opcode 3 plus the trailing kernel seconds, to isolate a params-only call's boundary.
pub const OP_SWEEP_LOADED_TIMED: u8 = 6;
/// Extension: present the server's access token; the first frame on a server that has one.
pub const OP_HELLO: u8 = 7;
/// Extension: open a live stream of combos at a fee; the reply is its `u64` id.
pub const OP_STREAM_OPEN: u8 = 8;
/// Extension: push bars to a stream; the reply is the events they caused.
pub const OP_STREAM_PUSH: u8 = 9;
/// Extension: close a stream; the reply is its final result, as opcode 0's.
pub const OP_STREAM_CLOSE: u8 = 10;
/// Extension: a stream's state (bars, result so far, open positions) without changing it.
pub const OP_STREAM_STATE: u8 = 11;
