//! The atomics, fences, futex and byte cells the shared-memory rings use: std and the kernel's
//! futex normally, loom's models under `--cfg loom` so the loom tests check the real ring code.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// One byte of ring data. Under loom each byte is a tracked cell, so loom reports a read of a
/// byte that is not ordered after its write (a too-weak ordering on the indices) as a race.
#[cfg(loom)]
pub(crate) type ByteCell = loom::cell::UnsafeCell<u8>;
/// One byte of ring data; `UnsafeCell<u8>` has the layout of `u8`, so a mapping is a slice of it.
#[cfg(not(loom))]
pub(crate) type ByteCell = std::cell::UnsafeCell<u8>;

/// What a futex sleep needs besides its word. With the kernel's futex: nothing (the word's
/// address is the key, across processes). Under loom: a mutex and condvar standing in for the
/// kernel's hash bucket, kept in the ring header (loom headers are heap objects, never mapped).
#[cfg(not(loom))]
pub(crate) struct Park;

#[cfg(not(loom))]
impl Park {
    pub(crate) fn new() -> Park {
        Park
    }
}

/// What a futex sleep needs besides its word; see the std variant.
#[cfg(loom)]
pub(crate) struct Park {
    lock: loom::sync::Mutex<()>,
    cv: loom::sync::Condvar,
}

#[cfg(loom)]
impl Park {
    pub(crate) fn new() -> Park {
        Park {
            lock: loom::sync::Mutex::new(()),
            cv: loom::sync::Condvar::new(),
        }
    }
}

/// Sleeps while `word == expected`, at most `timeout` (a shared, not private, futex: the word
/// lives in a mapping two processes share). Returns early on a wake, a signal, or when the
/// word already differs; callers always re-check their condition, so every outcome is fine.
#[cfg(not(loom))]
pub(crate) fn futex_wait(
    _park: &Park,
    word: &AtomicU32,
    expected: u32,
    timeout: std::time::Duration,
) {
    use rustix::thread::futex;
    let ts = futex::Timespec {
        tv_sec: timeout.as_secs().try_into().unwrap_or(i64::MAX),
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // EAGAIN (word changed), EINTR and ETIMEDOUT all mean "re-check"; nothing else can occur
    // for a valid, aligned word.
    let _ = futex::wait(word, futex::Flags::empty(), expected, Some(&ts));
}

/// Wakes every sleeper on `word`, in this process or the peer's.
#[cfg(not(loom))]
pub(crate) fn futex_wake(_park: &Park, word: &AtomicU32) {
    use rustix::thread::futex;
    let _ = futex::wake(word, futex::Flags::empty(), i32::MAX as u32);
}

/// Loom's futex: compare and sleep under the lock, as the kernel does under its bucket lock.
/// The timeout is ignored on purpose: a lost wakeup then leaves the waiter asleep forever,
/// which loom reports as a deadlock instead of the 50 ms re-check hiding it.
#[cfg(loom)]
pub(crate) fn futex_wait(
    park: &Park,
    word: &AtomicU32,
    expected: u32,
    _timeout: std::time::Duration,
) {
    let guard = park.lock.lock().unwrap();
    if word.load(Ordering::SeqCst) == expected {
        drop(park.cv.wait(guard).unwrap());
    }
}

/// Loom's futex wake: take the lock, so a waiter is either not yet comparing or already asleep.
#[cfg(loom)]
pub(crate) fn futex_wake(park: &Park, _word: &AtomicU32) {
    let _guard = park.lock.lock().unwrap();
    park.cv.notify_all();
}

/// One iteration of a busy or spin wait. Under loom a yield, so loom schedules the other side.
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the core to another runnable thread, if there is one. Under loom a loom yield.
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
