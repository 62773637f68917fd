//! Protocol v1 and its extension opcodes as pure functions over bytes: request parsing
//! (zero-copy when the arrays are aligned), reply encoding, and frame reading with limits.

use hullsweep_kernel::{Combo, SweepResult};
use std::borrow::Cow;
use std::io::{self, IoSlice, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Why a request body was refused. The body was read whole, so the connection stays usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The body has no bytes at all, so not even an opcode.
    #[error("empty request body: a request needs at least its 1-byte opcode")]
    EmptyBody,
    /// The first byte is none of the opcodes `OP_SWEEP`..=`OP_HELLO` (0..=7); it is carried.
    #[error(
        "unknown opcode {0} (known: 0 sweep, 1 echo, 2 load, 3 sweep loaded, 4 drop, 5 timed sweep, 6 timed sweep loaded, 7 hello)"
    )]
    UnknownOpcode(u8),
    /// The body is shorter than its opcode's fixed header ([`HEADER_LEN`] or [`ID_HEADER_LEN`]).
    #[error("body of {len} bytes is shorter than the {need}-byte header of opcode {opcode}")]
    ShortHeader {
        /// The request's opcode.
        opcode: u8,
        /// The body's length in bytes.
        len: usize,
        /// The header length this opcode needs, in bytes.
        need: usize,
    },
    #[error(
        "body length {len} disagrees with n_bars = {n_bars}, n_combos = {n_combos}: opcode {opcode} needs {expected} bytes"
    )]
    /// The body's length is not exactly header + `8 * n_bars` (bytes of token for a hello) +
    /// `48 * n_combos`: the counts and the payload disagree.
    LengthMismatch {
        /// The request's opcode.
        opcode: u8,
        /// The body's actual length in bytes.
        len: usize,
        /// The header's bar count (the token length for a hello).
        n_bars: u32,
        /// The header's combo count.
        n_combos: u32,
        /// The length in bytes the header's counts call for, computed in `u64` so it cannot wrap.
        expected: u64,
    },
    /// A count this opcode does not use was not zero (e.g. `n_combos` of a load), so the
    /// request is refused rather than silently ignoring part of it.
    #[error("opcode {opcode} needs {field} = 0, got {value}")]
    NonZeroField {
        /// The request's opcode.
        opcode: u8,
        /// The header field that must be zero: `"n_bars"` or `"n_combos"`.
        field: &'static str,
        /// The value the header carried instead.
        value: u32,
    },
}

/// A parsed request; arrays borrow the body when it is aligned, else they are bulk copies.
#[derive(Debug, PartialEq)]
pub enum Request<'a> {
    /// Opcodes 0 and 5: sweep `params` over `close` sent in the same frame.
    Sweep {
        /// The close prices, one per bar, not yet validated (the server checks them).
        close: Cow<'a, [f64]>,
        /// The window combos to sweep, six `i64` each on the wire, not yet validated.
        params: Cow<'a, [Combo]>,
        /// Opcode 5: the reply carries the kernel's seconds inside the server as a trailing `f64`.
        timed: bool,
    },
    /// Opcode 1: reply with `close` unchanged, to test the transport without the kernel.
    Echo {
        /// The series to send back, bit for bit.
        close: Cow<'a, [f64]>,
    },
    /// Opcode 2: keep `close` on this connection (charged to `max_loaded_bytes`) and reply its id.
    Load {
        /// The close prices to keep, one per bar.
        close: Cow<'a, [f64]>,
    },
    /// Opcodes 3 and 6: sweep `params` over a series loaded earlier on the same connection.
    SweepLoaded {
        /// The id a load on this connection replied; ids of other connections are unknown.
        id: u64,
        /// The window combos to sweep, not yet validated.
        params: Cow<'a, [Combo]>,
        /// Opcode 6: the reply carries the kernel's seconds as a trailing `f64`.
        timed: bool,
    },
    /// Opcode 4: forget a loaded series and give its bytes back to the server's budget.
    Drop {
        /// The id of the series to forget.
        id: u64,
    },
    /// Opcode 7: present the access token; the header's first count is its length in bytes.
    Hello {
        /// The token's raw bytes, borrowed from the body (compared in constant time by the server).
        token: &'a [u8],
    },
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Little-endian `f64`s: a view of the bytes when aligned, else one bulk copy.
pub fn f64s_from_le(bytes: &[u8]) -> Cow<'_, [f64]> {
    if cfg!(target_endian = "little")
        && let Ok(view) = bytemuck::try_cast_slice::<u8, f64>(bytes)
    {
        return Cow::Borrowed(view);
    }
    Cow::Owned(
        bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    )
}

/// Little-endian rows of six `i64`: a view when aligned, else one bulk copy.
pub fn combos_from_le(bytes: &[u8]) -> Cow<'_, [Combo]> {
    if cfg!(target_endian = "little")
        && let Ok(view) = bytemuck::try_cast_slice::<u8, Combo>(bytes)
    {
        return Cow::Borrowed(view);
    }
    Cow::Owned(
        bytes
            .chunks_exact(COMBO_BYTES)
            .map(|row| {
                let mut c = [0i64; 6];
                for (v, b) in c.iter_mut().zip(row.chunks_exact(8)) {
                    *v = i64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                }
                c
            })
            .collect(),
    )
}

/// Appends `f64`s as little-endian bytes (a plain byte copy on little-endian machines).
pub fn put_f64s(out: &mut Vec<u8>, values: &[f64]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    }
}

/// Appends `i64`s as little-endian bytes.
pub fn put_i64s(out: &mut Vec<u8>, values: &[i64]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    }
}

/// Parses one request body. Counts are never trusted beyond the body: its exact length is
/// checked in `u64` (which `9 + 8 * u32 + 48 * u32` cannot overflow) before any slicing.
pub fn parse_request(body: &[u8]) -> Result<Request<'_>, ProtocolError> {
    let (&opcode, _) = body.split_first().ok_or(ProtocolError::EmptyBody)?;
    let need = match opcode {
        OP_SWEEP | OP_ECHO | OP_LOAD | OP_SWEEP_TIMED | OP_HELLO => HEADER_LEN,
        OP_SWEEP_LOADED | OP_SWEEP_LOADED_TIMED | OP_DROP => ID_HEADER_LEN,
        _ => return Err(ProtocolError::UnknownOpcode(opcode)),
    };
    if body.len() < need {
        return Err(ProtocolError::ShortHeader {
            opcode,
            len: body.len(),
            need,
        });
    }
    let n_bars = u32_at(body, 1);
    let n_combos = u32_at(body, 5);
    // A hello's first count is its token's length in bytes, not a count of bars.
    let bar_bytes = if opcode == OP_HELLO { 1 } else { 8 };
    let expected =
        need as u64 + bar_bytes * u64::from(n_bars) + COMBO_BYTES as u64 * u64::from(n_combos);
    if body.len() as u64 != expected {
        return Err(ProtocolError::LengthMismatch {
            opcode,
            len: body.len(),
            n_bars,
            n_combos,
            expected,
        });
    }
    let must_be_zero = |field: &'static str, value: u32| {
        if value == 0 {
            Ok(())
        } else {
            Err(ProtocolError::NonZeroField {
                opcode,
                field,
                value,
            })
        }
    };
    // In range: the total length was checked above.
    let close_end = need + bar_bytes as usize * n_bars as usize;
    let close = || f64s_from_le(&body[need..close_end]);
    let params = || combos_from_le(&body[close_end..]);
    Ok(match opcode {
        OP_SWEEP | OP_SWEEP_TIMED => Request::Sweep {
            close: close(),
            params: params(),
            timed: opcode == OP_SWEEP_TIMED,
        },
        OP_ECHO => Request::Echo { close: close() },
        OP_LOAD => {
            must_be_zero("n_combos", n_combos)?;
            Request::Load { close: close() }
        }
        OP_SWEEP_LOADED | OP_SWEEP_LOADED_TIMED => {
            must_be_zero("n_bars", n_bars)?;
            Request::SweepLoaded {
                id: u64_at(body, HEADER_LEN),
                params: params(),
                timed: opcode == OP_SWEEP_LOADED_TIMED,
            }
        }
        OP_HELLO => {
            must_be_zero("n_combos", n_combos)?;
            Request::Hello {
                token: &body[need..close_end],
            }
        }
        _ => {
            must_be_zero("n_bars", n_bars)?;
            must_be_zero("n_combos", n_combos)?;
            Request::Drop {
                id: u64_at(body, HEADER_LEN),
            }
        }
    })
}

/// The length word plus the request header, ready to precede the arrays in one vectored write.
pub fn request_head(opcode: u8, n_bars: u32, n_combos: u32, id: Option<u64>) -> Vec<u8> {
    let head_len = if id.is_some() {
        ID_HEADER_LEN
    } else {
        HEADER_LEN
    };
    let body_len =
        head_len as u64 + 8 * u64::from(n_bars) + COMBO_BYTES as u64 * u64::from(n_combos);
    let mut out = Vec::with_capacity(4 + head_len);
    // A body over u32 is refused by every server; saturate so the server names the problem.
    out.extend_from_slice(&u32::try_from(body_len).unwrap_or(u32::MAX).to_le_bytes());
    out.push(opcode);
    out.extend_from_slice(&n_bars.to_le_bytes());
    out.extend_from_slice(&n_combos.to_le_bytes());
    if let Some(id) = id {
        out.extend_from_slice(&id.to_le_bytes());
    }
    out
}

/// A complete request frame in one buffer (for tests and tools; clients use vectored writes).
pub fn encode_request(opcode: u8, close: &[f64], params: &[Combo], id: Option<u64>) -> Vec<u8> {
    let mut out = request_head(opcode, close.len() as u32, params.len() as u32, id);
    put_f64s(&mut out, close);
    put_i64s(&mut out, bytemuck::cast_slice(params));
    out
}

/// A hello frame: `[7][u32 token_len][u32 0][token]`. Tokens are at most [`MAX_TOKEN`] bytes.
pub fn encode_hello(token: &[u8]) -> Result<Vec<u8>, String> {
    if token.len() > MAX_TOKEN {
        return Err(format!(
            "access token of {} bytes is longer than the protocol's {MAX_TOKEN}",
            token.len()
        ));
    }
    let mut out = request_head(OP_HELLO, 0, 0, None);
    let len = (HEADER_LEN + token.len()) as u32;
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[5..9].copy_from_slice(&(token.len() as u32).to_le_bytes());
    out.extend_from_slice(token);
    Ok(out)
}

/// A sweep reply frame: `[pnl...][trades...]`, then the kernel seconds for a timed sweep.
pub fn encode_sweep_reply(result: &SweepResult, seconds: Option<f64>) -> Vec<u8> {
    let body = 16 * result.len() + if seconds.is_some() { 8 } else { 0 };
    let mut out = Vec::with_capacity(4 + body);
    out.extend_from_slice(&(body as u32).to_le_bytes());
    put_f64s(&mut out, &result.pnl);
    put_i64s(&mut out, &result.trades);
    if let Some(s) = seconds {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// A reply frame of raw body bytes.
pub fn encode_reply(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// An error frame: the top bit set on the length, a UTF-8 message as the body.
pub fn encode_error(message: &str) -> Vec<u8> {
    // Messages are short; the cap only guards the length word against a pathological one.
    let mut end = message.len().min(64 * 1024);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let msg = &message.as_bytes()[..end];
    let mut out = Vec::with_capacity(4 + msg.len());
    out.extend_from_slice(&(msg.len() as u32 | ERROR_BIT).to_le_bytes());
    out.extend_from_slice(msg);
    out
}

/// Decodes a sweep reply body of `n_combos` results (plus the kernel seconds when `timed`).
pub fn decode_sweep_reply(
    body: &[u8],
    n_combos: usize,
    timed: bool,
) -> Result<(SweepResult, Option<f64>), String> {
    let want = 16 * n_combos + if timed { 8 } else { 0 };
    if body.len() != want {
        return Err(format!(
            "sweep reply of {} bytes, expected {want} for {n_combos} combos",
            body.len()
        ));
    }
    let pnl = f64s_from_le(&body[..8 * n_combos]).into_owned();
    let trades = body[8 * n_combos..16 * n_combos]
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let seconds =
        timed.then(|| f64::from_le_bytes(body[16 * n_combos..].try_into().unwrap_or([0; 8])));
    Ok((SweepResult { pnl, trades }, seconds))
}

/// Writes every slice, as few syscalls as the OS allows (`write_all_vectored` is unstable).
pub fn write_all_vectored<W: Write + ?Sized>(w: &mut W, bufs: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = bufs.iter().map(|b| IoSlice::new(b)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    w.flush()
}

/// Reads until `buf` is full or the stream ends; returns how many bytes arrived.
pub fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Where a body lands in [`BodyBuf`]: 7 bytes in, so offsets 9 and 17 of the body (where the
/// arrays start) fall on 8-byte boundaries and parse as views instead of copies.
const BODY_OFFSET: usize = 7;

/// The bytes held by the receive buffers of all connections, and their bound (`--max-inflight`).
#[derive(Debug)]
pub struct Inflight {
    used: AtomicU64,
    max: u64,
}

impl Inflight {
    /// An empty budget that admits at most `max` bytes of receive buffers at once.
    pub fn new(max: u64) -> Inflight {
        Inflight {
            used: AtomicU64::new(0),
            max,
        }
    }

    /// Bytes held now, over all connections.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    /// The bound on [`used`](Inflight::used), in bytes, as given to [`new`](Inflight::new).
    pub fn max(&self) -> u64 {
        self.max
    }

    fn take(&self, bytes: u64) -> Result<(), u64> {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|&t| t <= self.max)
            })
            .map(|_| ())
    }

    fn give(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// A reusable, 8-byte-aligned receive buffer (one per connection) that grows as bytes arrive.
///
/// Declaring a large frame costs nothing until its bytes come: the buffer grows in bounded
/// steps, each taken from the [`Inflight`] budget when there is one, and given back when the
/// buffer is released (after an unusually large request, under budget pressure, or on drop).
#[derive(Default)]
pub struct BodyBuf<'a> {
    words: Vec<u64>,
    budget: Option<&'a Inflight>,
}

impl<'a> BodyBuf<'a> {
    /// The first allocation for a frame; later steps double what is held, up to `MAX_STEP`.
    pub const FIRST_STEP: usize = 64 << 10;
    /// The largest single growth, so memory held stays within this of the bytes received.
    pub const MAX_STEP: usize = 16 << 20;
    /// Buffers larger than this are released after their request instead of kept for the next.
    const KEEP: usize = 64 << 20;

    /// A buffer whose growth is charged to `budget`.
    pub fn with_budget(budget: &'a Inflight) -> BodyBuf<'a> {
        BodyBuf {
            words: Vec::new(),
            budget: Some(budget),
        }
    }

    /// Bytes this buffer holds (what it charges the budget).
    pub fn held(&self) -> usize {
        8 * self.words.len()
    }

    /// Bytes of body the buffer can take without growing.
    fn room(&self) -> usize {
        self.held().saturating_sub(BODY_OFFSET)
    }

    /// Refuses, before any body byte is read, a frame the budget cannot hold as things stand.
    fn admit(&self, len: usize) -> Result<(), FrameError> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let need = (8 * (BODY_OFFSET + len).div_ceil(8)).saturating_sub(self.held()) as u64;
        let used = budget.used();
        if used.saturating_add(need) > budget.max {
            return Err(FrameError::Budget {
                len,
                max: budget.max,
                used,
            });
        }
        Ok(())
    }

    /// Makes room past `got` for a body of `len` bytes, growing by one bounded step when full;
    /// returns the end of the writable part.
    fn grow(&mut self, len: usize, got: usize) -> Result<usize, FrameError> {
        let room = self.room();
        if got < room.min(len) {
            return Ok(room.min(len));
        }
        let target = len.min(room + room.clamp(Self::FIRST_STEP, Self::MAX_STEP));
        let words = (BODY_OFFSET + target).div_ceil(8);
        let extra = words - self.words.len();
        if let Some(budget) = self.budget {
            budget
                .take(8 * extra as u64)
                .map_err(|used| FrameError::Budget {
                    len,
                    max: budget.max,
                    used,
                })?;
        }
        // Exact, so the memory held is what the budget was charged, not a doubled capacity.
        self.words.reserve_exact(extra);
        self.words.resize(words, 0);
        Ok(target)
    }

    /// The writable bytes `from..to` of the body.
    fn body_mut(&mut self, from: usize, to: usize) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)
            [BODY_OFFSET + from..BODY_OFFSET + to]
    }

    /// The first `len` bytes of the body last read.
    pub fn body(&self, len: usize) -> &[u8] {
        if len == 0 {
            return &[];
        }
        &bytemuck::cast_slice::<u64, u8>(&self.words)[BODY_OFFSET..BODY_OFFSET + len]
    }

    /// Gives back memory held for one unusually large request, or any large buffer while the
    /// budget is more than half used, so idle connections do not sit on what others need.
    pub fn trim(&mut self) {
        let pressed = self
            .budget
            .is_some_and(|b| b.used() > b.max / 2 && self.held() > Self::FIRST_STEP);
        if self.held() > Self::KEEP || pressed {
            self.release();
        }
    }

    fn release(&mut self) {
        if let Some(budget) = self.budget {
            budget.give(self.held() as u64);
        }
        self.words = Vec::new();
    }
}

impl Drop for BodyBuf<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// The outcome of reading one frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// The stream ended cleanly between frames.
    End,
    /// A body of this many bytes is in the buffer.
    Body(usize),
}

/// A frame that could not be read whole; the stream cannot be resynchronised after any of them.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended inside the 4-byte length word.
    #[error("truncated frame header: the stream ended after {got} of 4 length bytes")]
    TruncatedHeader {
        /// Length bytes received before the end, 1..=3.
        got: usize,
    },
    /// The length word is over the configured frame limit; nothing was allocated or read for it.
    #[error(
        "frame of {len} bytes exceeds the limit of {max} bytes (refused unread; closing the connection)"
    )]
    Oversize {
        /// The body length the frame announced, in bytes.
        len: u64,
        /// The limit it broke (`max_frame`), in bytes.
        max: u32,
    },
    #[error(
        "frame of {len} bytes would exceed the server's in-flight budget of {max} bytes \
         ({used} held by requests being received or served; --max-inflight); \
         retry later or send smaller frames (closing the connection)"
    )]
    /// Receiving the body would take the receive buffers of all connections past the shared
    /// [`Inflight`] bound; refused before the bytes that would pass it are read.
    Budget {
        /// The body length the frame announced, in bytes.
        len: usize,
        /// The in-flight bound, in bytes.
        max: u64,
        /// Bytes held by all connections' receive buffers when the frame was refused.
        used: u64,
    },
    /// The stream ended inside the body.
    #[error("truncated frame body: the stream ended after {got} of {len} bytes")]
    TruncatedBody {
        /// Body bytes received before the end.
        got: usize,
        /// The body length the frame announced, in bytes.
        len: usize,
    },
    /// The [`Watch`] called the frame off (the server timed the connection out).
    #[error("the server stopped reading this connection")]
    Stopped,
    /// Reading the stream failed (a read timeout on a socket shows up here too).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Told as a frame's bytes arrive, so a server can time out frames that stall.
pub trait Watch {
    /// The first byte of a frame arrived. `false` calls the frame off ([`FrameError::Stopped`]).
    fn frame_started(&self) -> bool {
        true
    }
    /// More bytes of the current frame arrived.
    fn progress(&self) {}
}

/// No watching: stdio sessions, tests and tools.
impl Watch for () {}

/// Reads one `[u32 len][body]` frame into `buf`. An oversize length is refused before anything
/// is allocated, and the buffer grows only as body bytes arrive.
pub fn read_frame<R: Read + ?Sized, W: Watch + ?Sized>(
    r: &mut R,
    max_frame: u32,
    buf: &mut BodyBuf<'_>,
    watch: &W,
) -> Result<Frame, FrameError> {
    let mut head = [0u8; 4];
    // One byte first: until it comes the connection is idle, after it a frame is under way.
    if read_full(r, &mut head[..1])? == 0 {
        return Ok(Frame::End);
    }
    if !watch.frame_started() {
        return Err(FrameError::Stopped);
    }
    let got = read_full(r, &mut head[1..])?;
    if got < 3 {
        return Err(FrameError::TruncatedHeader { got: 1 + got });
    }
    watch.progress();
    let len = u32::from_le_bytes(head);
    if len > max_frame {
        return Err(FrameError::Oversize {
            len: u64::from(len),
            max: max_frame,
        });
    }
    let len = len as usize;
    buf.admit(len)?;
    let mut got = 0;
    while got < len {
        let end = buf.grow(len, got)?;
        match r.read(buf.body_mut(got, end)) {
            Ok(0) => return Err(FrameError::TruncatedBody { got, len }),
            Ok(n) => {
                got += n;
                watch.progress();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Frame::Body(len))
}

/// Reads one reply: `Ok(Ok(body))`, or `Ok(Err(message))` for an error frame.
pub fn read_reply<R: Read + ?Sized>(
    r: &mut R,
    max_reply: u32,
) -> io::Result<Result<Vec<u8>, String>> {
    let mut head = [0u8; 4];
    r.read_exact(&mut head)?;
    let word = u32::from_le_bytes(head);
    let len = word & !ERROR_BIT;
    if len > max_reply {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("reply of {len} bytes exceeds the client limit of {max_reply}"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    if word & ERROR_BIT != 0 {
        Ok(Err(String::from_utf8_lossy(&body).into_owned()))
    } else {
        Ok(Ok(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(frame: &[u8]) -> &[u8] {
        &frame[4..]
    }

    #[test]
    fn round_trips_every_request() {
        let close = [1.0, 2.5, f64::NAN];
        let params = [[5, 2, 2, 5, 2, 1], [9, 4, 3, 9, 4, 3]];
        let f = encode_request(OP_SWEEP, &close, &params, None);
        match parse_request(body(&f)).unwrap() {
            Request::Sweep {
                close: c,
                params: p,
                timed: false,
            } => {
                assert_eq!(c[..2], close[..2]);
                assert!(c[2].is_nan());
                assert_eq!(&*p, &params);
            }
            other => panic!("{other:?}"),
        }
        let f = encode_request(OP_SWEEP_LOADED, &[], &params, Some(7));
        assert_eq!(
            parse_request(body(&f)).unwrap(),
            Request::SweepLoaded {
                id: 7,
                params: Cow::Borrowed(&params[..]),
                timed: false,
            }
        );
        let f = encode_request(OP_DROP, &[], &[], Some(u64::MAX));
        assert_eq!(
            parse_request(body(&f)).unwrap(),
            Request::Drop { id: u64::MAX }
        );
    }

    #[test]
    fn aligned_bodies_parse_without_copies() {
        let close = [1.0; 16];
        let params = [[3i64; 6]; 2];
        let mut buf = BodyBuf::default();
        for (op, id) in [(OP_SWEEP, None), (OP_SWEEP_LOADED, Some(1))] {
            let c: &[f64] = if id.is_some() { &[] } else { &close };
            let f = encode_request(op, c, &params, id);
            let mut r = &f[..];
            let Frame::Body(len) = read_frame(&mut r, 1 << 20, &mut buf, &()).unwrap() else {
                panic!()
            };
            match parse_request(buf.body(len)).unwrap() {
                Request::Sweep { close, params, .. } => {
                    assert!(matches!(close, Cow::Borrowed(_)));
                    assert!(matches!(params, Cow::Borrowed(_)));
                }
                Request::SweepLoaded { params, .. } => {
                    assert!(matches!(params, Cow::Borrowed(_)))
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn misaligned_bytes_fall_back_to_a_copy() {
        let words = [0u64; 5];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        // Offset 0 is aligned (a view), offset 3 is not (a copy); both read the same values.
        assert!(matches!(f64s_from_le(&bytes[..32]), Cow::Borrowed(_)));
        let copied = f64s_from_le(&bytes[3..35]);
        assert!(matches!(copied, Cow::Owned(_)));
        assert_eq!(&*copied, &[0.0; 4]);
        let mut odd = vec![0u8];
        odd.extend_from_slice(&encode_request(OP_SWEEP, &[1.5], &[[2, 1, 1, 2, 1, 1]], None)[4..]);
        let Request::Sweep { close, params, .. } = parse_request(&odd[1..]).unwrap() else {
            panic!()
        };
        assert_eq!((&*close, &*params), (&[1.5][..], &[[2, 1, 1, 2, 1, 1]][..]));
    }

    #[test]
    fn lengths_are_checked_without_overflow() {
        let mut b = vec![OP_SWEEP];
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = parse_request(&b).unwrap_err();
        assert!(matches!(e, ProtocolError::LengthMismatch { .. }), "{e}");
        assert!(e.to_string().contains("4294967295"));
        assert_eq!(parse_request(&[]), Err(ProtocolError::EmptyBody));
        assert_eq!(parse_request(&[9]), Err(ProtocolError::UnknownOpcode(9)));
        assert!(matches!(
            parse_request(&[0, 1, 0]),
            Err(ProtocolError::ShortHeader { .. })
        ));
        let f = encode_request(OP_LOAD, &[1.0], &[[1; 6]], None);
        assert!(matches!(
            parse_request(body(&f)),
            Err(ProtocolError::NonZeroField { .. })
        ));
    }

    #[test]
    fn frames_refuse_oversize_and_report_truncation() {
        let mut buf = BodyBuf::default();
        let mut r: &[u8] = &[0xff, 0xff, 0xff, 0x7f];
        assert!(matches!(
            read_frame(&mut r, 1024, &mut buf, &()),
            Err(FrameError::Oversize { .. })
        ));
        // Nothing was allocated for the refused frame.
        assert!(buf.words.is_empty());
        let mut r: &[u8] = &[1, 0];
        assert!(matches!(
            read_frame(&mut r, 1024, &mut buf, &()),
            Err(FrameError::TruncatedHeader { got: 2 })
        ));
        let mut r: &[u8] = &[10, 0, 0, 0, 1, 2];
        assert!(matches!(
            read_frame(&mut r, 1024, &mut buf, &()),
            Err(FrameError::TruncatedBody { got: 2, len: 10 })
        ));
        let mut r: &[u8] = &[];
        assert_eq!(read_frame(&mut r, 1024, &mut buf, &()).unwrap(), Frame::End);
    }

    /// A reader that hands out its bytes a few at a time, then ends.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(self.1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn memory_follows_the_bytes_received_not_the_length_declared() {
        let budget = Inflight::new(1 << 30);
        let mut buf = BodyBuf::with_budget(&budget);
        // 256 MiB declared, 4 KiB sent, then the stream ends.
        let mut frame = (256u32 << 20).to_le_bytes().to_vec();
        frame.extend_from_slice(&[0; 4096]);
        let mut r = Trickle(&frame, 1000);
        assert!(matches!(
            read_frame(&mut r, DEFAULT_MAX_FRAME, &mut buf, &()),
            Err(FrameError::TruncatedBody {
                got: 4096,
                len: 0x1000_0000
            })
        ));
        assert!(buf.held() <= BodyBuf::FIRST_STEP + 8, "{}", buf.held());
        assert_eq!(budget.used(), buf.held() as u64);
        drop(buf);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn growth_in_small_pieces_keeps_every_byte_and_the_zero_copy_parse() {
        let budget = Inflight::new(1 << 30);
        let mut buf = BodyBuf::with_budget(&budget);
        let close: Vec<f64> = (0..100_000).map(|i| 100.0 + i as f64).collect();
        let f = encode_request(OP_ECHO, &close, &[], None);
        let mut r = Trickle(&f, 777);
        let Frame::Body(len) = read_frame(&mut r, DEFAULT_MAX_FRAME, &mut buf, &()).unwrap() else {
            panic!()
        };
        // Grown in steps, never more than the body (rounded to words) plus its 7-byte offset.
        assert!(buf.held() <= len + 16 && buf.held() >= len);
        match parse_request(buf.body(len)).unwrap() {
            Request::Echo { close: c } => {
                assert!(matches!(c, Cow::Borrowed(_)));
                assert_eq!(&*c, &close[..]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_budget_refuses_a_frame_before_and_while_it_arrives() {
        let budget = Inflight::new(200_000);
        let mut a = BodyBuf::with_budget(&budget);
        let mut big = (300_000u32).to_le_bytes().to_vec();
        big.resize(4 + 300_000, 0);
        let e = read_frame(&mut &big[..], u32::MAX >> 1, &mut a, &()).unwrap_err();
        assert!(matches!(e, FrameError::Budget { max: 200_000, .. }), "{e}");
        assert!(
            e.to_string().contains("in-flight budget of 200000 bytes"),
            "{e}"
        );
        assert_eq!(budget.used(), 0);
        // Two frames that fit alone but not together: the second is refused as it grows.
        let mut half = (150_000u32).to_le_bytes().to_vec();
        half.resize(4 + 150_000, 1);
        assert!(read_frame(&mut &half[..], u32::MAX >> 1, &mut a, &()).is_ok());
        let mut b = BodyBuf::with_budget(&budget);
        let e = read_frame(&mut &half[..], u32::MAX >> 1, &mut b, &()).unwrap_err();
        assert!(matches!(e, FrameError::Budget { .. }), "{e}");
        // Released under pressure once its request is done, so the other fits.
        a.trim();
        assert_eq!(budget.used() as usize, b.held());
        assert!(read_frame(&mut &half[..], u32::MAX >> 1, &mut b, &()).is_ok());
    }

    #[test]
    fn hello_carries_its_token_and_refuses_a_long_one() {
        let f = encode_hello(b"sixteen byte tok").unwrap();
        assert_eq!(
            parse_request(body(&f)).unwrap(),
            Request::Hello {
                token: b"sixteen byte tok"
            }
        );
        assert!(encode_hello(&[0; MAX_TOKEN + 1]).is_err());
        let mut bad = f.clone();
        bad[4 + 5] = 1; // n_combos must be 0, even when the body holds one combo's bytes
        bad.extend_from_slice(&[0; COMBO_BYTES]);
        assert!(matches!(
            parse_request(body(&bad)),
            Err(ProtocolError::NonZeroField { .. })
        ));
        bad = f.clone();
        bad[4 + 1] += 1; // token length one more than sent
        assert!(matches!(
            parse_request(body(&bad)),
            Err(ProtocolError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn error_frames_carry_the_flag() {
        let f = encode_error("bad window");
        let mut r = &f[..];
        assert_eq!(read_reply(&mut r, 1024).unwrap(), Err("bad window".into()));
        let f = encode_reply(b"ok");
        let mut r = &f[..];
        assert_eq!(read_reply(&mut r, 1024).unwrap(), Ok(b"ok".to_vec()));
    }
}
