//! Protocol v1 and its extension opcodes as pure functions over bytes: request parsing
//! (zero-copy when the arrays are aligned), reply encoding, and frame reading with limits.
//!
//! [`frame`] reads and writes length-prefixed frames within the memory budget, [`request`]
//! parses and encodes request bodies, [`reply`] the generic reply and error frames, [`sweep`]
//! the sweep family's reply, [`stream`] the stream family's (opcodes 8..=11), and [`wire`] the little-endian array codecs they share.

pub mod frame;
pub mod reply;
pub mod request;
pub mod stream;
pub mod sweep;
pub mod wire;

pub use frame::{
    BodyBuf, Frame, FrameError, Inflight, Reservation, Watch, read_frame, read_full,
    write_all_vectored,
};
pub use reply::{encode_error, encode_reply, read_reply};
pub use request::{
    ProtocolError, Request, encode_hello, encode_request, parse_request, request_head,
};
pub use stream::{
    OP_STREAM_CLOSE, OP_STREAM_OPEN, OP_STREAM_PUSH, OP_STREAM_STATE, StreamState, decode_events,
    decode_state, encode_events, encode_open, encode_state, push_head,
};
pub use sweep::{decode_sweep_reply, encode_sweep_reply};
pub use wire::{combos_from_le, f64s_from_le, put_f64s, put_i64s};

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
/// The longest access token a hello may carry, in bytes.
pub const MAX_TOKEN: usize = 1024;
/// The largest frame a connection may send before its hello is accepted.
pub const HELLO_MAX_FRAME: u32 = (HEADER_LEN + MAX_TOKEN) as u32;

/// Set in a reply's length word when the body is an error message.
pub const ERROR_BIT: u32 = 0x8000_0000;
/// The largest frame any configuration may accept: the top bit of the length is the error flag.
pub const MAX_FRAME_LIMIT: u32 = 0x7FFF_FFFF;
/// The default request size limit, 256 MiB.
pub const DEFAULT_MAX_FRAME: u32 = 256 << 20;
/// `[u8 opcode][u32 n_bars][u32 n_combos]`, the header of every request.
pub const HEADER_LEN: usize = 9;
/// The header plus a `u64` series id (opcodes 3 and 4).
pub const ID_HEADER_LEN: usize = 17;
/// Bytes per combo on the wire: six `i64`.
pub const COMBO_BYTES: usize = 48;
