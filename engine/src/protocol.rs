//! Protocol v1 and its extension opcodes as pure functions over bytes: request parsing
//! (zero-copy when the arrays are aligned), reply encoding, and frame reading with limits.

use hullsweep_kernel::{Combo, SweepResult};
use std::borrow::Cow;
use std::io::{self, IoSlice, Read, Write};

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
    #[error("empty request body: a request needs at least its 1-byte opcode")]
    EmptyBody,
    #[error(
        "unknown opcode {0} (known: 0 sweep, 1 echo, 2 load, 3 sweep loaded, 4 drop, 5 timed sweep, 6 timed sweep loaded)"
    )]
    UnknownOpcode(u8),
    #[error("body of {len} bytes is shorter than the {need}-byte header of opcode {opcode}")]
    ShortHeader { opcode: u8, len: usize, need: usize },
    #[error(
        "body length {len} disagrees with n_bars = {n_bars}, n_combos = {n_combos}: opcode {opcode} needs {expected} bytes"
    )]
    LengthMismatch {
        opcode: u8,
        len: usize,
        n_bars: u32,
        n_combos: u32,
        expected: u64,
    },
    #[error("opcode {opcode} needs {field} = 0, got {value}")]
    NonZeroField {
        opcode: u8,
        field: &'static str,
        value: u32,
    },
}

/// A parsed request; arrays borrow the body when it is aligned, else they are bulk copies.
#[derive(Debug, PartialEq)]
pub enum Request<'a> {
    Sweep {
        close: Cow<'a, [f64]>,
        params: Cow<'a, [Combo]>,
        timed: bool,
    },
    Echo {
        close: Cow<'a, [f64]>,
    },
    Load {
        close: Cow<'a, [f64]>,
    },
    SweepLoaded {
        id: u64,
        params: Cow<'a, [Combo]>,
        timed: bool,
    },
    Drop {
        id: u64,
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
        OP_SWEEP | OP_ECHO | OP_LOAD | OP_SWEEP_TIMED => HEADER_LEN,
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
    let expected = need as u64 + 8 * u64::from(n_bars) + COMBO_BYTES as u64 * u64::from(n_combos);
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
    let close_end = need + 8 * n_bars as usize;
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

/// A reusable, 8-byte-aligned receive buffer (one per connection).
#[derive(Default)]
pub struct BodyBuf {
    words: Vec<u64>,
}

impl BodyBuf {
    /// Buffers larger than this are released after their request instead of kept for the next.
    const KEEP: usize = 64 << 20;

    /// A writable slice of exactly `len` bytes; grows the buffer only when needed.
    pub fn prepare(&mut self, len: usize) -> &mut [u8] {
        let words = (BODY_OFFSET + len).div_ceil(8);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[BODY_OFFSET..BODY_OFFSET + len]
    }

    /// The `len` bytes last prepared.
    pub fn body(&self, len: usize) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[BODY_OFFSET..BODY_OFFSET + len]
    }

    /// Gives back memory held for one unusually large request.
    pub fn trim(&mut self) {
        if self.words.len() * 8 > Self::KEEP {
            self.words = Vec::new();
        }
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
    #[error("truncated frame header: the stream ended after {got} of 4 length bytes")]
    TruncatedHeader { got: usize },
    #[error(
        "frame of {len} bytes exceeds the limit of {max} bytes (refused unread; closing the connection)"
    )]
    Oversize { len: u64, max: u32 },
    #[error("truncated frame body: the stream ended after {got} of {len} bytes")]
    TruncatedBody { got: usize, len: usize },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads one `[u32 len][body]` frame into `buf`, refusing an oversize length before allocating.
pub fn read_frame<R: Read + ?Sized>(
    r: &mut R,
    max_frame: u32,
    buf: &mut BodyBuf,
) -> Result<Frame, FrameError> {
    let mut head = [0u8; 4];
    match read_full(r, &mut head)? {
        0 => return Ok(Frame::End),
        4 => {}
        got => return Err(FrameError::TruncatedHeader { got }),
    }
    let len = u32::from_le_bytes(head);
    if len > max_frame {
        return Err(FrameError::Oversize {
            len: u64::from(len),
            max: max_frame,
        });
    }
    let len = len as usize;
    let got = read_full(r, buf.prepare(len))?;
    if got < len {
        return Err(FrameError::TruncatedBody { got, len });
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
            let Frame::Body(len) = read_frame(&mut r, 1 << 20, &mut buf).unwrap() else {
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
            read_frame(&mut r, 1024, &mut buf),
            Err(FrameError::Oversize { .. })
        ));
        // Nothing was allocated for the refused frame.
        assert!(buf.words.is_empty());
        let mut r: &[u8] = &[1, 0];
        assert!(matches!(
            read_frame(&mut r, 1024, &mut buf),
            Err(FrameError::TruncatedHeader { got: 2 })
        ));
        let mut r: &[u8] = &[10, 0, 0, 0, 1, 2];
        assert!(matches!(
            read_frame(&mut r, 1024, &mut buf),
            Err(FrameError::TruncatedBody { got: 2, len: 10 })
        ));
        let mut r: &[u8] = &[];
        assert_eq!(read_frame(&mut r, 1024, &mut buf).unwrap(), Frame::End);
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
