//! A connection's phase (idle, reading, busy, closed) and time of last progress, shared by its
//! thread and the accept loop so that stalled connections are timed out without a timer thread.

use crate::protocol::Watch;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

/// Where a connection stands, for the accept loop's timeouts.
pub(super) const IDLE: u8 = 0;
pub(super) const READING: u8 = 1;
pub(super) const BUSY: u8 = 2;
pub(super) const CLOSED: u8 = 3;

/// A connection's phase and the time of its last progress: written by its thread, read by the
/// accept loop, which closes connections stalled past a timeout (no thread per timer).
///
/// Whoever moves the phase out of `IDLE` or `READING` owns the socket's write side: the thread
/// to reply, or the accept loop to send the timeout's error frame (on shared memory it hands
/// the frame to the thread, which writes it once its session has ended). So they never
/// interleave.
pub(super) struct ConnWatch {
    pub(super) phase: AtomicU8,
    /// [`coarse_nanos`] at the last progress.
    stamp: AtomicU64,
    /// Until its hello, a connection's bytes do not count as progress: a stranger has the read
    /// timeout from connecting, however slowly it sends.
    before_hello: AtomicBool,
}

impl ConnWatch {
    pub(super) fn new(before_hello: bool) -> ConnWatch {
        let w = ConnWatch {
            phase: AtomicU8::new(if before_hello { READING } else { IDLE }),
            stamp: AtomicU64::new(0),
            before_hello: AtomicBool::new(before_hello),
        };
        w.stamp.store(w.now(), Ordering::SeqCst);
        w
    }

    pub(super) fn hello_accepted(&self) {
        self.before_hello.store(false, Ordering::SeqCst);
    }

    fn now(&self) -> u64 {
        coarse_nanos()
    }

    fn stamp(&self) {
        if !self.before_hello.load(Ordering::Relaxed) {
            // A plain store: the accept loop reads it for timeouts of a second and more, and
            // the phase's compare-exchange, not this stamp, decides who owns the connection.
            self.stamp.store(self.now(), Ordering::Release);
        }
    }

    pub(super) fn claim(&self, from: u8, to: u8) -> bool {
        self.stamp();
        self.phase
            .compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// How long since the last progress.
    pub(super) fn quiet(&self) -> Duration {
        Duration::from_nanos(
            self.now()
                .saturating_sub(self.stamp.load(Ordering::Acquire)),
        )
    }
}

/// A monotonic clock in nanoseconds, read several times per request: the kernel's coarse clock
/// (a few nanoseconds to read, a tick of 1-10 ms resolution, which timeouts of a second and more
/// never notice) where there is one.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn coarse_nanos() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn coarse_nanos() -> u64 {
    use std::time::Instant;
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Watch for ConnWatch {
    fn frame_started(&self) -> bool {
        self.stamp();
        match self
            .phase
            .compare_exchange(IDLE, READING, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) | Err(READING) => true,
            Err(_) => false,
        }
    }

    fn progress(&self) {
        self.stamp();
    }
}
