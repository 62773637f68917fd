//! Frames on a byte stream: `[u32 len][body]` read into a buffer that grows only as bytes
//! arrive, charged to the server's in-flight budget, and vectored writes of whole frames.

use std::io::{self, IoSlice, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes every slice, as few syscalls as the OS allows (`write_all_vectored` is unstable).
pub fn write_all_vectored<W: Write + ?Sized>(w: &mut W, bufs: &[&[u8]]) -> io::Result<()> {
    // A frame has two or three parts: their slices live on the stack, not in an allocation.
    let mut inline = [IoSlice::new(&[]); 4];
    let mut spilled = Vec::new();
    let slices: &mut [IoSlice<'_>] = if bufs.len() <= inline.len() {
        for (slot, b) in inline.iter_mut().zip(bufs) {
            *slot = IoSlice::new(b);
        }
        &mut inline[..bufs.len()]
    } else {
        spilled.extend(bufs.iter().map(|b| IoSlice::new(b)));
        &mut spilled
    };
    let mut rest = slices;
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

    /// Takes `bytes` from the budget until the returned guard is dropped (for memory a request
    /// will need beyond its receive buffer, charged before it is allocated); `Err(used)` when
    /// they do not fit, with the bytes held at that moment.
    pub fn reserve(&self, bytes: u64) -> Result<Reservation<'_>, u64> {
        self.take(bytes)?;
        Ok(Reservation {
            budget: self,
            bytes,
        })
    }
}

/// Bytes taken from an [`Inflight`] budget, given back on drop.
#[derive(Debug)]
pub struct Reservation<'a> {
    budget: &'a Inflight,
    bytes: u64,
}

impl Reservation<'_> {
    /// Gives back all but `bytes` of the reservation (nothing when it holds no more).
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            self.budget.give(self.bytes - bytes);
            self.bytes = bytes;
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::layout::DEFAULT_MAX_FRAME;

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
}
