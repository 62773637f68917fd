//! The sizes the wire format fixes: request headers, combo records, the error flag and the
//! frame limits every reader and writer checks against.

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
