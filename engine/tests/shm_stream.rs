//! The shared-memory stream over real memfd segments: 10 MB echoed bit-exact under every wait
//! policy (threads, and two processes), the engine's session served unchanged, and a hostile
//! scribbler on the shared header that yields `InvalidData`, never a panic or a hang.

mod common;

use common::{bits, combos, series, small_config};
use hullsweep_engine::protocol::{self, OP_ECHO, OP_SWEEP};
use hullsweep_engine::server::{Shared, serve_connection};
use hullsweep_engine::shm::{MIN_RING_CAPACITY, Segment, ShmStream, WaitPolicy};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Long enough for a slow shared CI box; a stall fails a test with `WouldBlock` instead of
/// hanging it.
const TIMEOUT: Duration = Duration::from_secs(30);
const POLICIES: [WaitPolicy; 3] = [
    WaitPolicy::Busy,
    WaitPolicy::Spin(Duration::from_micros(50)),
    WaitPolicy::Event,
];
const CHILD_FD: &str = "HULLSWEEP_SHM_TEST_FD";

fn stream(
    ends: (
        hullsweep_engine::shm::Consumer,
        hullsweep_engine::shm::Producer,
    ),
) -> ShmStream {
    let mut s = ShmStream::new(ends.0, ends.1);
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut v = vec![0u8; n];
    rng.fill(&mut v);
    v
}

/// Writes back everything it reads until EOF; returns the byte count.
fn echo(s: ShmStream) -> io::Result<usize> {
    let (mut r, mut w) = s.split();
    let mut buf = vec![0u8; 8192];
    let mut total = 0;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        w.write_all(&buf[..n])?;
        total += n;
    }
}

/// Sends `data` in random-sized writes from one thread while reading the echo on this one.
/// Returns what came back, the writer's result and the reader's.
fn round_trip(
    client: ShmStream,
    data: Arc<Vec<u8>>,
    seed: u64,
) -> (Vec<u8>, io::Result<()>, io::Result<()>) {
    let (mut r, mut w) = client.split();
    let sent = data.clone();
    let writer = thread::spawn(move || {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut at = 0;
        while at < sent.len() {
            let n = rng.usize(1..=70_000).min(sent.len() - at);
            w.write_all(&sent[at..at + n])?;
            at += n;
        }
        Ok(()) // dropping `w` closes the request ring: the echo ends
    });
    let mut rng = fastrand::Rng::with_seed(!seed);
    let mut got = Vec::with_capacity(data.len());
    let mut buf = vec![0u8; 65_536];
    let read = loop {
        match r.read(&mut buf[..rng.usize(1..=65_536)]) {
            Ok(0) => break Ok(()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => break Err(e),
        }
    };
    drop(r); // a writer still blocked on a full ring now fails instead of waiting
    (got, writer.join().expect("writer thread"), read)
}

#[test]
fn ten_megabytes_echo_bit_exact_under_every_policy() {
    let data = Arc::new(random_bytes(10 << 20, 1));
    for (k, policy) in POLICIES.into_iter().enumerate() {
        for cap in [64 << 10, 1 << 20] {
            let start = Instant::now();
            let (server, fd) = Segment::create(cap).unwrap();
            let client = Segment::open(&fd).unwrap();
            let mut s = stream(server.server_ends());
            s.set_policy(policy);
            let echoing = thread::spawn(move || echo(s));
            let mut c = stream(client.client_ends());
            c.set_policy(policy);
            let (got, w, r) = round_trip(c, data.clone(), k as u64);
            w.unwrap();
            r.unwrap();
            assert_eq!(echoing.join().unwrap().unwrap(), data.len());
            assert!(got == *data, "{policy:?} cap {cap}: the echo differs");
            eprintln!(
                "{policy:?} cap {cap}: 10 MB echoed in {:?}",
                start.elapsed()
            );
        }
    }
}

/// The other process's side of `echoes_across_two_processes`; does nothing in a normal run.
#[test]
fn child_echo_server() {
    let Ok(fd) = std::env::var(CHILD_FD) else {
        return;
    };
    // The inherited descriptor, reopened by path: no `unsafe` needed to adopt it.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/self/fd/{fd}"))
        .unwrap();
    let segment = Segment::open(&file).unwrap();
    let mut s = stream(segment.server_ends());
    s.set_policy(WaitPolicy::Event);
    echo(s).unwrap();
}

#[test]
fn echoes_across_two_processes() {
    let (client, fd) = Segment::create(64 << 10).unwrap();
    // `dup` clears close-on-exec, so the child inherits this copy only.
    let inherit: OwnedFd = rustix::io::dup(&fd).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_echo_server",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_FD, inherit.as_raw_fd().to_string())
        .spawn()
        .unwrap();
    drop(inherit);
    let data = Arc::new(random_bytes(10 << 20, 2));
    let mut c = stream(client.client_ends());
    c.set_policy(WaitPolicy::Event);
    let (got, w, r) = round_trip(c, data.clone(), 3);
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the child echo server did not exit");
        }
        thread::sleep(Duration::from_millis(10));
    };
    w.unwrap();
    r.unwrap();
    assert!(status.success(), "child: {status}");
    assert!(got == *data, "the echo across processes differs");
}

#[test]
fn the_engine_session_serves_over_shared_memory_unchanged() {
    // 4 KiB rings: the requests and replies below are many times larger, so they stream.
    let (server, fd) = Segment::create(MIN_RING_CAPACITY).unwrap();
    let client = Segment::open(&fd).unwrap();
    let shared = Shared::new(small_config()).unwrap();
    let (r, w) = stream(server.server_ends()).split();
    let serving = thread::spawn(move || serve_connection(r, w, &shared));
    let mut c = stream(client.client_ends());

    let (close, params) = (series(1500), combos());
    c.write_all(&protocol::encode_request(OP_SWEEP, &close, &params, None))
        .unwrap();
    let body = protocol::read_reply(&mut c, u32::MAX >> 1)
        .unwrap()
        .unwrap();
    let (got, _) = protocol::decode_sweep_reply(&body, params.len(), false).unwrap();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    assert_eq!(bits(&got.pnl), bits(&want.pnl));
    assert_eq!(got.trades, want.trades);

    let long = series(100_000);
    c.write_all(&protocol::encode_request(OP_ECHO, &long, &[], None))
        .unwrap();
    let body = protocol::read_reply(&mut c, u32::MAX >> 1)
        .unwrap()
        .unwrap();
    assert_eq!(bits(&protocol::f64s_from_le(&body)), bits(&long));

    drop(c); // EOF ends the session cleanly
    serving.join().unwrap().unwrap();
}

/// Offsets of the shared fields a hostile peer would forge (segment.rs's layout): for each
/// ring header (requests at 64, replies at 256) the tail, the head and the two futex words.
const INDICES: [u64; 4] = [64, 64 + 64, 256, 256 + 64];
const WORDS: [u64; 4] = [64 + 128, 64 + 132, 256 + 128, 256 + 132];

/// Writes random values over the shared header (and some data bytes) until `stop`.
fn scribble(fd: &OwnedFd, cap: u64, seed: u64, stop: &AtomicBool) -> usize {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let (at, bytes) = match rng.u8(..4) {
            0 => (INDICES[rng.usize(..4)], rng.u64(..).to_le_bytes().to_vec()),
            1 => (WORDS[rng.usize(..4)], rng.u32(..).to_le_bytes().to_vec()),
            // The segment header: read once at open, so forging it later changes nothing.
            2 => (rng.u64(..24), vec![rng.u8(..)]),
            _ => (
                4096 + rng.u64(..2 * cap - 8),
                rng.u64(..).to_le_bytes().to_vec(),
            ),
        };
        rustix::io::pwrite(fd, &bytes, at).unwrap();
        n += 1;
        thread::sleep(Duration::from_micros(rng.u64(..300)));
    }
    n
}

#[test]
fn a_scribbling_peer_gets_invalid_data_never_a_panic_or_a_hang() {
    let data = Arc::new(random_bytes(2 << 20, 4));
    let mut invalid = 0;
    let start = Instant::now();
    for round in 0..6u64 {
        let policy = POLICIES[round as usize % 3];
        let cap = MIN_RING_CAPACITY;
        let (server, fd) = Segment::create(cap).unwrap();
        let client = Segment::open(&fd).unwrap();
        let mut s = stream(server.server_ends());
        s.set_policy(policy);
        let echoing = thread::spawn(move || echo(s));
        let stop = Arc::new(AtomicBool::new(false));
        let scribbler = {
            let stop = stop.clone();
            thread::spawn(move || scribble(&fd, cap, round, &stop))
        };
        let mut c = stream(client.client_ends());
        c.set_policy(policy);
        let (_garbled, w, r) = round_trip(c, data.clone(), round);
        let served = echoing.join().expect("no panic in the server");
        stop.store(true, Ordering::Relaxed);
        let forged = scribbler.join().unwrap();
        // The side that read a forged index fails with InvalidData; its peer then sees the
        // close as a broken pipe. A timeout (a hang) or anything else fails the test.
        for e in [w.err(), r.err(), served.err()].into_iter().flatten() {
            match e.kind() {
                io::ErrorKind::InvalidData => invalid += 1,
                io::ErrorKind::BrokenPipe => {}
                _ => panic!("round {round} ({policy:?}): unexpected error {e}"),
            }
        }
        eprintln!("round {round} ({policy:?}): {forged} forged writes");
    }
    assert!(invalid > 0, "the scribbler never produced a corrupt index");
    assert!(start.elapsed() < 4 * TIMEOUT, "took {:?}", start.elapsed());
}
