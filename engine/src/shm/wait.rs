//! Blocking on a ring without a socket: busy-poll, spin then sleep, or sleep at once on a
//! shared futex, with the eventcount protocol that makes a lost wakeup impossible.
//!
//! A waiter sets its `*_waiting` word, fences, re-checks the ring and only then sleeps while the
//! word is still 1; the other side publishes its index, fences, and wakes when the word is 1.
//! The argument is in `ring.rs`. Every sleep is capped at [`SLEEP_SLICE`], so a wake the peer
//! withholds or forges costs at most that long before the waiter re-checks the ring, `closed`
//! and its deadline: a hostile or dead peer can stall its own connection, never hang it forever.

use crate::shm::ring::{Consumer, HeaderRef, Producer, RingError};
use crate::shm::sync::{
    AtomicU32, Ordering, Park, fence, futex_wait, futex_wake, spin_hint, yield_now,
};
use std::time::{Duration, Instant};

/// The longest single futex sleep before the waiter re-checks everything itself.
pub const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// How an end waits for its peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Poll without ever sleeping: lowest latency, one core per waiting end.
    Busy,
    /// Poll for this long, then sleep on the futex: a reply that comes quickly costs no syscall.
    Spin(Duration),
    /// Sleep on the futex at once: no CPU while idle, a wake syscall's latency per message.
    Event,
}

impl Default for WaitPolicy {
    /// A short spin: requests answered within ~50 µs never sleep, idle connections cost nothing.
    fn default() -> WaitPolicy {
        WaitPolicy::Spin(Duration::from_micros(50))
    }
}

/// Waits until `consumer` has bytes to read or its ring is closed. `Ok(true)` when so,
/// `Ok(false)` once `deadline` has passed; a corrupt index from the peer is an error.
pub fn wait_readable(
    consumer: &Consumer,
    policy: WaitPolicy,
    deadline: Option<Instant>,
) -> Result<bool, RingError> {
    let h = consumer.header();
    wait(
        policy,
        deadline,
        &h.words.0.consumer_waiting,
        &h.park,
        || {
            // While polling, the lines the next bytes will land in are requested too, so that
            // when the tail moves they are already on their way: the read after it no longer
            // waits for a second crossing (echo p50 0.79 -> 0.70 us on a 2-vCPU Xeon VM). A
            // hint only: the bytes are read after the tail is acquired, as before.
            consumer.prefetch_next();
            Ok(consumer.available()? > 0 || consumer.is_closed())
        },
    )
}

/// Waits until `producer` has space to write or its ring is closed; as [`wait_readable`].
pub fn wait_writable(
    producer: &Producer,
    policy: WaitPolicy,
    deadline: Option<Instant>,
) -> Result<bool, RingError> {
    let h = producer.header();
    wait(
        policy,
        deadline,
        &h.words.0.producer_waiting,
        &h.park,
        || Ok(producer.free()? > 0 || producer.is_closed()),
    )
}

/// Wakes the consumer if it sleeps; call after every publishing [`Producer::write`].
pub fn notify_readable(producer: &Producer) {
    let h = producer.header();
    wake(&h.words.0.consumer_waiting, &h.park);
}

/// Wakes the producer if it sleeps; call after every [`Consumer::read`] that freed space.
pub fn notify_writable(consumer: &Consumer) {
    let h = consumer.header();
    wake(&h.words.0.producer_waiting, &h.park);
}

/// Closes the producer's ring and wakes a consumer sleeping on it (it then sees the end).
pub fn close_producer(producer: &Producer) {
    producer.close();
    notify_readable(producer);
}

/// Closes the consumer's ring and wakes a producer sleeping on it (its writes then fail).
pub fn close_consumer(consumer: &Consumer) {
    consumer.close();
    notify_writable(consumer);
}

/// Closes both rings of a connection from outside the threads that own its ends, and wakes
/// whoever sleeps on them: the reader then sees the end, the writer a broken pipe. For a server
/// shutting down, or dropping a connection whose peer died without closing.
#[derive(Clone)]
pub struct Closer {
    rings: [HeaderRef; 2],
}

impl Closer {
    pub(crate) fn new(consumer: &Consumer, producer: &Producer) -> Closer {
        Closer {
            rings: [consumer.header_ref(), producer.header_ref()],
        }
    }

    /// Marks both rings closed and wakes every waiter on them.
    pub fn close(&self) {
        for ring in &self.rings {
            let h = ring.header();
            h.words.0.closed.store(1, Ordering::SeqCst);
            wake(&h.words.0.consumer_waiting, &h.park);
            wake(&h.words.0.producer_waiting, &h.park);
        }
    }
}

/// Polls of the ring between two clock reads: a clock read costs about as much as a cache line
/// crossing, so reading it on every poll would delay seeing the peer's bytes; 64 polls take
/// about a microsecond, far below any deadline or spin budget.
const POLLS_PER_CLOCK: u32 = 64;

/// How long a wait polls without giving its core away. A peer on another core answers a
/// request within this (a round trip is well under a microsecond); one that shares this core
/// cannot answer until this thread yields, which without a yield would take the whole spin or
/// a scheduler tick.
const YIELD_AFTER: Duration = Duration::from_micros(5);

/// Up to [`POLLS_PER_CLOCK`] polls of `ready`; true as soon as one says so.
fn spin(ready: &mut impl FnMut() -> Result<bool, RingError>) -> Result<bool, RingError> {
    for _ in 0..POLLS_PER_CLOCK {
        spin_hint();
        if ready()? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn wait(
    policy: WaitPolicy,
    deadline: Option<Instant>,
    word: &AtomicU32,
    park: &Park,
    mut ready: impl FnMut() -> Result<bool, RingError>,
) -> Result<bool, RingError> {
    if ready()? {
        return Ok(true);
    }
    let start = Instant::now();
    // Past this much polling the peer is not answering at once: it may be waiting for this
    // very core (two ends on one CPU), so each round of polls then gives the core away.
    let polite = start + YIELD_AFTER;
    let until = match policy {
        WaitPolicy::Busy => None,
        WaitPolicy::Spin(spin_for) => Some(start + spin_for),
        WaitPolicy::Event => Some(start),
    };
    if policy != WaitPolicy::Event {
        loop {
            if spin(&mut ready)? {
                return Ok(true);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(false);
            }
            if until.is_some_and(|u| now >= u) {
                break;
            }
            if now >= polite {
                yield_now();
            }
        }
    }
    loop {
        // Announce the sleep, then re-check: the fence orders the announcement before the
        // re-check's loads, pairing with the fence in `wake` (see ring.rs).
        word.store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if ready()? {
            word.store(0, Ordering::Relaxed);
            return Ok(true);
        }
        let slice = match deadline {
            None => SLEEP_SLICE,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left.min(SLEEP_SLICE),
                _ => {
                    word.store(0, Ordering::Relaxed);
                    return Ok(false);
                }
            },
        };
        futex_wait(park, word, 1, slice);
    }
}

fn wake(word: &AtomicU32, park: &Park) {
    // Orders the index (or `closed`) just stored before the load of the word; see ring.rs.
    fence(Ordering::SeqCst);
    if word.load(Ordering::Relaxed) == 1 {
        word.store(0, Ordering::Relaxed);
        futex_wake(park, word);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::shm::ring::ring_pair;
    use std::thread;

    const POLICIES: [WaitPolicy; 3] = [
        WaitPolicy::Busy,
        WaitPolicy::Spin(Duration::from_micros(20)),
        WaitPolicy::Event,
    ];

    #[test]
    fn a_sleeping_consumer_is_woken_by_a_write() {
        for policy in POLICIES {
            let (mut p, c) = ring_pair(64).unwrap();
            let t = thread::spawn(move || {
                let start = Instant::now();
                assert!(wait_readable(&c, policy, None).unwrap());
                (c, start.elapsed())
            });
            thread::sleep(Duration::from_millis(20));
            assert_eq!(p.write(b"x").unwrap(), 1);
            notify_readable(&p);
            let (c, _) = t.join().unwrap();
            assert_eq!(c.available().unwrap(), 1, "{policy:?}");
        }
    }

    #[test]
    fn a_full_producer_is_woken_by_a_read() {
        for policy in POLICIES {
            let (mut p, mut c) = ring_pair(16).unwrap();
            assert_eq!(p.write(&[7; 16]).unwrap(), 16);
            let t = thread::spawn(move || {
                assert!(wait_writable(&p, policy, None).unwrap());
                p
            });
            thread::sleep(Duration::from_millis(20));
            assert_eq!(c.read(&mut [0; 5]).unwrap(), 5);
            notify_writable(&c);
            assert_eq!(t.join().unwrap().free().unwrap(), 5, "{policy:?}");
        }
    }

    #[test]
    fn deadlines_and_close_end_a_wait() {
        for policy in POLICIES {
            let (p, c) = ring_pair(16).unwrap();
            let deadline = Instant::now() + Duration::from_millis(30);
            assert!(!wait_readable(&c, policy, Some(deadline)).unwrap());
            assert!(Instant::now() >= deadline);
            let t = thread::spawn(move || wait_readable(&c, policy, None).unwrap());
            thread::sleep(Duration::from_millis(10));
            close_producer(&p);
            assert!(t.join().unwrap(), "{policy:?}");
        }
    }

    #[test]
    fn a_forged_waiting_word_never_hangs_a_waiter() {
        // The peer clears our waiting word so its writer would skip the wake: the bounded sleep
        // still finds the bytes.
        let (mut p, c) = ring_pair(16).unwrap();
        let t = thread::spawn(move || wait_readable(&c, WaitPolicy::Event, None).unwrap());
        thread::sleep(Duration::from_millis(10));
        p.header()
            .words
            .0
            .consumer_waiting
            .store(0, Ordering::SeqCst);
        p.write(b"y").unwrap();
        assert!(t.join().unwrap());
    }
}
