//! The reply frames every opcode shares: a raw body, an error message flagged in the length
//! word, and reading one back on the client side.

use crate::protocol::layout::ERROR_BIT;
use std::io::{self, Read};

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

/// Reads one reply: `Ok(Ok(body))`, or `Ok(Err(message))` for an error frame.
pub fn read_reply<R: Read + ?Sized>(
    r: &mut R,
    max_reply: u32,
) -> io::Result<Result<Vec<u8>, String>> {
    let mut body = Vec::new();
    Ok(read_reply_into(r, max_reply, &mut body)?.map(|()| body))
}

/// [`read_reply`] into `body` (cleared first; its capacity reused, so a client making call
/// after call allocates nothing): `Ok(Ok(()))` with the reply's body in `body`, `Ok(Err)` with
/// an error frame's message.
pub fn read_reply_into<R: Read + ?Sized>(
    r: &mut R,
    max_reply: u32,
    body: &mut Vec<u8>,
) -> io::Result<Result<(), String>> {
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
    body.clear();
    body.resize(len as usize, 0);
    r.read_exact(body)?;
    if word & ERROR_BIT != 0 {
        Ok(Err(String::from_utf8_lossy(body).into_owned()))
    } else {
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
