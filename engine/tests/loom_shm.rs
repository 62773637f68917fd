//! Loom models of the shared-memory ring (`--cfg loom`): bytes pass in order through a small
//! wrapping ring, and the sleep/wake protocol never loses a wakeup (loom reports a deadlock).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test --release -p hullsweep-engine --test loom_shm
//! --target-dir target/loom` (its own target directory, so the main build stays valid).
#![cfg(loom)]

use hullsweep_engine::shm::{
    WaitPolicy, close_producer, notify_readable, notify_writable, ring_pair, wait_readable,
    wait_writable,
};
use loom::thread;

/// Exhaustive within a preemption bound: enough to interleave every index load and store.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn bytes_pass_in_order_through_a_wrapping_ring() {
    const N: u8 = 24; // more than the 16-byte ring holds: the copies wrap around
    model(|| {
        let (mut p, mut c) = ring_pair(16).unwrap();
        let producer = thread::spawn(move || {
            let data: Vec<u8> = (0..N).collect();
            let mut at = 0;
            while at < data.len() {
                let n = p.write(&data[at..(at + 10).min(data.len())]).unwrap();
                if n == 0 {
                    thread::yield_now();
                }
                at += n;
            }
        });
        let mut got = Vec::new();
        while got.len() < N as usize {
            let mut buf = [0u8; 7];
            let n = c.read(&mut buf).unwrap();
            if n == 0 {
                thread::yield_now();
            }
            got.extend_from_slice(&buf[..n]);
        }
        producer.join().unwrap();
        assert_eq!(got, (0..N).collect::<Vec<u8>>());
    });
}

#[test]
fn a_sleeping_consumer_is_always_woken() {
    model(|| {
        let (mut p, mut c) = ring_pair(16).unwrap();
        let producer = thread::spawn(move || {
            assert_eq!(p.write(b"x").unwrap(), 1);
            notify_readable(&p);
        });
        assert!(wait_readable(&c, WaitPolicy::Event, None).unwrap());
        let mut buf = [0u8; 1];
        assert_eq!(c.read(&mut buf).unwrap(), 1);
        assert_eq!(&buf, b"x");
        producer.join().unwrap();
    });
}

#[test]
fn a_sleeping_producer_is_always_woken() {
    model(|| {
        let (mut p, mut c) = ring_pair(4).unwrap();
        assert_eq!(p.write(b"full").unwrap(), 4);
        let consumer = thread::spawn(move || {
            assert_eq!(c.read(&mut [0u8; 1]).unwrap(), 1);
            notify_writable(&c);
        });
        assert!(wait_writable(&p, WaitPolicy::Event, None).unwrap());
        assert_eq!(p.write(b"y").unwrap(), 1);
        consumer.join().unwrap();
    });
}

#[test]
fn a_close_always_wakes_the_consumer() {
    model(|| {
        let (p, c) = ring_pair(16).unwrap();
        let producer = thread::spawn(move || close_producer(&p));
        assert!(wait_readable(&c, WaitPolicy::Event, None).unwrap());
        assert!(c.is_closed());
        producer.join().unwrap();
    });
}
