//! Protocol v1 and its extension opcodes as pure functions over bytes: request parsing
//! (zero-copy when the arrays are aligned), reply encoding, and frame reading with limits.
//!
//! [`frame`] reads and writes length-prefixed frames within the memory budget, [`request`]
//! parses and encodes request bodies, [`reply`] the generic reply and error frames, [`sweep`]
//! the sweep family's reply, [`stream`] the stream family's (opcodes 8..=11), and [`wire`] the
//! little-endian array codecs they share. The opcodes and the sizes the wire fixes have files
//! of their own (`opcode`, `layout`), re-exported here, so that this file defines nothing its parts import.

pub mod frame;
mod layout;
mod opcode;
pub mod reply;
pub mod request;
pub mod stream;
pub mod sweep;
pub mod wire;

pub use frame::{
    BodyBuf, Frame, FrameError, Inflight, Reservation, Watch, read_frame, read_full,
    write_all_vectored,
};
pub use layout::{
    COMBO_BYTES, DEFAULT_MAX_FRAME, ERROR_BIT, HEADER_LEN, HELLO_MAX_FRAME, ID_HEADER_LEN,
    MAX_FRAME_LIMIT, MAX_TOKEN,
};
pub use opcode::{
    OP_DROP, OP_ECHO, OP_HELLO, OP_LOAD, OP_STREAM_CLOSE, OP_STREAM_OPEN, OP_STREAM_PUSH,
    OP_STREAM_STATE, OP_SWEEP, OP_SWEEP_LOADED, OP_SWEEP_LOADED_TIMED, OP_SWEEP_TIMED,
};
pub use reply::{encode_error, encode_reply, read_reply, read_reply_into};
pub use request::{
    ProtocolError, Request, encode_hello, encode_request, parse_request, request_head,
};
pub use stream::{
    StreamState, decode_events, decode_events_into, decode_state, encode_events, encode_open,
    encode_state, push_head,
};
pub use sweep::{decode_sweep_reply, encode_sweep_reply};
pub use wire::{combos_from_le, f64s_from_le, put_f64s, put_i64s};
