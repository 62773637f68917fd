//! The floor: a bare two-process atomic ping-pong on one cache line of a memfd mapped
//! `MAP_SHARED`, optionally with a payload copied each way on cache lines of its own.

use std::fs::File;
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::MmapMut;
use rustix::fs::{MemfdFlags, memfd_create};

use crate::poll::{Result, spin};

const LINE: usize = 64;

/// Largest payload `--payload` accepts.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// The shared region: line 0 holds the sequence word, then the request payload, then the
/// response payload, each starting on a cache line of its own.
pub struct Shm {
    _map: MmapMut,
    base: *mut u8,
    len: usize,
    resp_off: usize,
}

fn layout(max_payload: usize) -> (usize, usize) {
    let area = max_payload.max(1).next_multiple_of(LINE);
    (LINE + area, LINE + 2 * area)
}

impl Shm {
    /// Creates the memfd (without `MFD_CLOEXEC`, so the child inherits it) and maps it.
    /// Returns the mapping and the fd, which must stay open until the child is spawned.
    pub fn create(max_payload: usize) -> Result<(Shm, OwnedFd)> {
        let (resp_off, len) = layout(max_payload);
        let fd = memfd_create("hullsweep-shm-floor", MemfdFlags::empty())?;
        let file = File::from(fd.try_clone()?);
        file.set_len(len as u64)?;
        Ok((Self::map(&file, len, resp_off)?, fd))
    }

    /// Maps the memfd the child inherited as `fd`, through a fresh open of `/proc/self/fd/<fd>`.
    pub fn open_inherited(fd: i32, max_payload: usize) -> Result<Shm> {
        let (resp_off, len) = layout(max_payload);
        let path = format!("/proc/self/fd/{fd}");
        let file = File::options().read(true).write(true).open(&path)?;
        if file.metadata()?.len() != len as u64 {
            return Err(format!("{path}: not the {len}-byte region the parent made").into());
        }
        Self::map(&file, len, resp_off)
    }

    fn map(file: &File, len: usize, resp_off: usize) -> Result<Shm> {
        // SAFETY: the memfd is private to the two processes of this benchmark; neither truncates
        // it while mapped, and every access goes through `seq` (atomic) or through payload
        // copies that the sequence protocol orders (a side writes a payload area only while it
        // owns it: the client before publishing an odd value, the server before the even one).
        let mut map = unsafe { MmapMut::map_mut(file)? };
        if map.len() != len {
            return Err(format!(
                "mapped {} bytes of fd {}, expected {len}",
                map.len(),
                file.as_raw_fd()
            )
            .into());
        }
        let base = map.as_mut_ptr();
        Ok(Shm {
            _map: map,
            base,
            len,
            resp_off,
        })
    }

    fn seq(&self) -> &AtomicU64 {
        // SAFETY: `base` is page-aligned (so 8-byte aligned), the first 8 bytes are in bounds,
        // the mapping lives as long as `self`, and both processes only touch this word atomically.
        unsafe { &*self.base.cast::<AtomicU64>() }
    }

    fn req(&self) -> *mut u8 {
        // SAFETY: offset LINE is inside the mapping (`len` >= LINE + one line of payload).
        unsafe { self.base.add(LINE) }
    }

    fn resp(&self) -> *mut u8 {
        debug_assert!(self.resp_off < self.len);
        // SAFETY: `resp_off` < `len`, from `layout`.
        unsafe { self.base.add(self.resp_off) }
    }

    fn check(&self, payload: usize) -> Result<()> {
        if payload > self.resp_off - LINE {
            return Err(format!("payload {payload} B exceeds the mapped area").into());
        }
        Ok(())
    }

    /// Client side: `warmup + out.capacity()` round trips; the timed ones are pushed to `out`.
    pub fn client(
        &self,
        payload: usize,
        warmup: usize,
        trips: usize,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        self.check(payload)?;
        let seq = self.seq();
        let mut src = vec![0xA5u8; payload];
        let mut dst = vec![0u8; payload];
        let mut s = seq.load(Ordering::Acquire);
        if !s.is_multiple_of(2) {
            return Err(format!("sequence word is odd ({s}) before a round").into());
        }
        for i in 0..warmup + trips {
            if payload > 0 {
                src[0] = i as u8;
            }
            let t0 = Instant::now();
            if payload > 0 {
                // SAFETY: the request area holds at least `payload` bytes (`check`), the server
                // reads it only after seeing s + 1, and `src` does not overlap the mapping.
                unsafe { ptr::copy_nonoverlapping(src.as_ptr(), self.req(), payload) };
            }
            seq.store(s + 1, Ordering::Release);
            spin(|| Ok((seq.load(Ordering::Acquire) == s + 2).then_some(())))?;
            if payload > 0 {
                // SAFETY: the server wrote the response area before releasing s + 2, and writes it
                // again only after the next odd value; `dst` does not overlap the mapping.
                unsafe { ptr::copy_nonoverlapping(self.resp(), dst.as_mut_ptr(), payload) };
            }
            let dt = t0.elapsed();
            black_box(&dst);
            if payload > 0 && dst[0] != src[0] {
                return Err(format!("trip {i}: response payload is not the request's").into());
            }
            if i >= warmup {
                out.push(nanos(dt));
            }
            s += 2;
        }
        Ok(())
    }

    /// Server side: answers `total` round trips, echoing the payload through a local buffer.
    pub fn server(&self, payload: usize, total: usize) -> Result<()> {
        self.check(payload)?;
        let seq = self.seq();
        let mut buf = vec![0u8; payload];
        // The client may already have published s + 1 by the time this command is read.
        let mut s = seq.load(Ordering::Acquire) & !1;
        for _ in 0..total {
            spin(|| Ok((seq.load(Ordering::Acquire) == s + 1).then_some(())))?;
            if payload > 0 {
                // SAFETY: the client wrote the request area before releasing s + 1 and waits for
                // s + 2 before touching either area again; `buf` does not overlap the mapping.
                unsafe {
                    ptr::copy_nonoverlapping(self.req(), buf.as_mut_ptr(), payload);
                    ptr::copy_nonoverlapping(buf.as_ptr(), self.resp(), payload);
                }
            }
            seq.store(s + 2, Ordering::Release);
            s += 2;
        }
        Ok(())
    }
}

pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
