//! One connection's session: frames read within the limits, the hello checked first on a
//! server with a token, each request dispatched to its opcode family's handler.

use crate::protocol::{self, BodyBuf, Frame, FrameError, Request};
use crate::server::config::Shared;
use crate::server::loaded::Loaded;
use crate::server::stream::Streams;
use crate::server::sweep::{Series, sweep};
use crate::server::watch::{BUSY, ConnWatch, IDLE, READING};
use std::io::{self, BufReader, Read, Write};

/// One connection's loaded series and live streams: they live as long as its session.
struct Session<'a> {
    shared: &'a Shared,
    loaded: Loaded<'a>,
    streams: Streams<'a>,
}

impl Session<'_> {
    fn handle(&mut self, request: Request<'_>) -> Result<Vec<u8>, String> {
        let config = &self.shared.config;
        match request {
            Request::Sweep {
                close,
                params,
                timed,
            } => sweep(config, Series::Sent(&close), &params, timed),
            Request::Echo { close } => {
                // Not reached from `serve_connection`, which writes echoes without a copy.
                let mut body = Vec::with_capacity(8 * close.len());
                protocol::put_f64s(&mut body, &close);
                Ok(protocol::encode_reply(&body))
            }
            Request::Load { close } => self.loaded.load(&close),
            Request::SweepLoaded { id, params, timed } => {
                let series = self.loaded.get(id)?;
                sweep(config, Series::Loaded(series), &params, timed)
            }
            Request::Drop { id } => self.loaded.drop_series(id),
            // Not reached from `serve_connection`, which checks hellos itself.
            Request::Hello { .. } => Ok(protocol::encode_reply(&[])),
            Request::StreamOpen { fee_pct, params } => self.streams.open(&params, fee_pct),
            Request::StreamPush { id, bars } => self.streams.push(id, &bars),
            Request::StreamClose { id } => self.streams.close(id),
            Request::StreamState { id } => self.streams.state(id),
        }
    }
}

/// Serves one byte stream until it ends, a frame cannot be read whole, or the peer goes away.
///
/// Bad requests get an error frame and the loop goes on; a frame that cannot be skipped whole
/// (truncated, oversize, over the in-flight budget) gets a best-effort error frame and ends this
/// connection only. On a server with a token, the first frame must be a hello carrying it.
pub fn serve_connection<R: Read, W: Write>(
    reader: R,
    writer: W,
    shared: &Shared,
) -> io::Result<()> {
    serve_watched(reader, writer, shared, None)
}

pub(super) fn serve_watched<R: Read, W: Write>(
    reader: R,
    mut writer: W,
    shared: &Shared,
    watch: Option<&ConnWatch>,
) -> io::Result<()> {
    // Buffered so that a small request costs one read syscall; large bodies bypass the buffer.
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut buf = BodyBuf::with_budget(&shared.inflight);
    let mut session = Session {
        shared,
        loaded: Loaded::new(shared),
        streams: Streams::new(shared),
    };
    let config = &shared.config;
    let claim = |from, to| watch.is_none_or(|w| w.claim(from, to));
    let mut authed = config.token.is_none();
    loop {
        // Before the hello, nothing larger than a hello is read: strangers cost next to nothing.
        let max_frame = if authed {
            config.max_frame
        } else {
            config.max_frame.min(protocol::HELLO_MAX_FRAME)
        };
        let read = match watch {
            Some(w) => protocol::read_frame(&mut reader, max_frame, &mut buf, w),
            None => protocol::read_frame(&mut reader, max_frame, &mut buf, &()),
        };
        let len = match read {
            Ok(Frame::End) => return Ok(()),
            Ok(Frame::Body(len)) => len,
            Err(FrameError::Io(e)) => return Err(e),
            Err(e) => {
                // Unless the accept loop timed this connection out and wrote its own frame.
                if claim(READING, BUSY) {
                    let msg = match e {
                        FrameError::Oversize { len, .. } if !authed => hello_first(len),
                        e => e.to_string(),
                    };
                    // The peer may have half-closed; it can still read why. Ignore a failed write.
                    let _ = writer.write_all(&protocol::encode_error(&msg));
                    let _ = writer.flush();
                }
                return Ok(());
            }
        };
        if !claim(READING, BUSY) {
            return Ok(());
        }
        let request = protocol::parse_request(buf.body(len));
        if let Ok(Request::Hello { token }) = request {
            if let Some(want) = &config.token
                && !want.matches(token)
            {
                let msg = "wrong access token; closing the connection";
                let _ = writer.write_all(&protocol::encode_error(msg));
                let _ = writer.flush();
                return Ok(());
            }
            authed = true;
            if let Some(w) = watch {
                w.hello_accepted();
            }
            protocol::write_all_vectored(&mut writer, &[&protocol::encode_reply(&[])])?;
        } else if !authed {
            let got = match &request {
                Ok(_) => format!("opcode {}", buf.body(len)[0]),
                Err(e) => e.to_string(),
            };
            let _ = writer.write_all(&protocol::encode_error(&format!(
                "this server needs its access token first: send a hello (opcode 7) with it, \
                 got {got}; closing the connection"
            )));
            let _ = writer.flush();
            return Ok(());
        } else {
            let written = match request {
                Ok(Request::Echo { close }) => {
                    let head = ((8 * close.len()) as u32).to_le_bytes();
                    let bytes = le_bytes(&close);
                    protocol::write_all_vectored(&mut writer, &[&head, &bytes])
                }
                Ok(request) => {
                    let frame = session
                        .handle(request)
                        .unwrap_or_else(|msg| protocol::encode_error(&msg));
                    let written = protocol::write_all_vectored(&mut writer, &[&frame]);
                    session.streams.written(frame);
                    written
                }
                Err(e) => protocol::write_all_vectored(
                    &mut writer,
                    &[&protocol::encode_error(&e.to_string())],
                ),
            };
            written?;
        }
        buf.trim();
        // Nothing else moves a connection out of BUSY; this restarts the idle clock.
        claim(BUSY, IDLE);
    }
}

fn hello_first(len: u64) -> String {
    format!(
        "this server needs its access token first: send a hello (opcode 7) with it; \
         a frame of {len} bytes cannot be one (at most {}); closing the connection",
        protocol::HELLO_MAX_FRAME
    )
}

/// The wire bytes of `f64`s: the same memory on little-endian machines.
fn le_bytes(values: &[f64]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        let mut out = Vec::with_capacity(8 * values.len());
        protocol::put_f64s(&mut out, values);
        std::borrow::Cow::Owned(out)
    }
}
