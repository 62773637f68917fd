//! Request bodies: parsing with every count checked against the body before slicing, and
//! encoding for clients and tests. A parse error leaves the connection usable.

use crate::protocol::layout::{COMBO_BYTES, HEADER_LEN, ID_HEADER_LEN, MAX_TOKEN};
use crate::protocol::opcode::*;
use crate::protocol::wire::{combos_from_le, f64s_from_le, put_f64s, put_i64s, u32_at, u64_at};
use hullsweep_kernel::Combo;
use std::borrow::Cow;

/// Why a request body was refused. The body was read whole, so the connection stays usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The body has no bytes at all, so not even an opcode.
    #[error("empty request body: a request needs at least its 1-byte opcode")]
    EmptyBody,
    /// The first byte is none of the opcodes `OP_SWEEP`..=`OP_STREAM_STATE` (0..=11); it is carried.
    #[error(
        "unknown opcode {0} (known: 0 sweep, 1 echo, 2 load, 3 sweep loaded, 4 drop, 5 timed sweep, 6 timed sweep loaded, 7 hello, 8 open stream, 9 push, 10 close stream, 11 stream state)"
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
    /// Opcode 8: open a live stream of `params` at `fee_pct` on this connection.
    StreamOpen {
        /// The fee per closed trade in percentage points, carried where other opcodes carry an id.
        fee_pct: f64,
        /// The window combos to run, not yet validated.
        params: Cow<'a, [Combo]>,
    },
    /// Opcode 9: push `bars` to stream `id`, in order.
    StreamPush {
        /// The id an open on this connection replied.
        id: u64,
        /// The close prices, one per bar (NaN = missing bar), not yet validated.
        bars: Cow<'a, [f64]>,
    },
    /// Opcode 10: close stream `id` and reply its final result.
    StreamClose {
        /// The id of the stream to close.
        id: u64,
    },
    /// Opcode 11: reply stream `id`'s state without changing it.
    StreamState {
        /// The id of the stream to report.
        id: u64,
    },
}

/// Parses one request body. Counts are never trusted beyond the body: its exact length is
/// checked in `u64` (which `9 + 8 * u32 + 48 * u32` cannot overflow) before any slicing.
pub fn parse_request(body: &[u8]) -> Result<Request<'_>, ProtocolError> {
    let (&opcode, _) = body.split_first().ok_or(ProtocolError::EmptyBody)?;
    let need = match opcode {
        OP_SWEEP | OP_ECHO | OP_LOAD | OP_SWEEP_TIMED | OP_HELLO => HEADER_LEN,
        OP_SWEEP_LOADED | OP_SWEEP_LOADED_TIMED | OP_DROP => ID_HEADER_LEN,
        // An open carries its fee in the id's place, so its params are aligned as opcode 3's.
        OP_STREAM_OPEN | OP_STREAM_PUSH | OP_STREAM_CLOSE | OP_STREAM_STATE => ID_HEADER_LEN,
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
        OP_DROP => {
            must_be_zero("n_bars", n_bars)?;
            must_be_zero("n_combos", n_combos)?;
            Request::Drop {
                id: u64_at(body, HEADER_LEN),
            }
        }
        OP_STREAM_OPEN => {
            must_be_zero("n_bars", n_bars)?;
            Request::StreamOpen {
                fee_pct: f64::from_bits(u64_at(body, HEADER_LEN)),
                params: params(),
            }
        }
        OP_STREAM_PUSH => {
            must_be_zero("n_combos", n_combos)?;
            Request::StreamPush {
                id: u64_at(body, HEADER_LEN),
                bars: close(),
            }
        }
        _ => {
            must_be_zero("n_bars", n_bars)?;
            must_be_zero("n_combos", n_combos)?;
            let id = u64_at(body, HEADER_LEN);
            if opcode == OP_STREAM_CLOSE {
                Request::StreamClose { id }
            } else {
                Request::StreamState { id }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frame::{BodyBuf, Frame, Inflight, read_frame};
    use crate::protocol::layout::DEFAULT_MAX_FRAME;
    use std::io::{self, Read};

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
    fn misaligned_bodies_parse_from_copies() {
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
        // 12 is the first opcode past the stream family (8..=11).
        assert_eq!(parse_request(&[12]), Err(ProtocolError::UnknownOpcode(12)));
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
}
