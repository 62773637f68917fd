//! Fuzzes opening a shared-memory segment whose header page and ring data a hostile peer wrote,
//! then reading and writing through it as the server would: errors are fine, panics are not.

#![no_main]

use hullsweep_engine::shm::{MIN_RING_CAPACITY, Segment, ShmStream};
use libfuzzer_sys::fuzz_target;
use std::io::{Read, Write};
use std::time::Duration;

/// Where each run of input bytes lands in the header page, densely packed so short inputs
/// reach every field the code reads (the padding between them is never read): magic, version
/// and capacity, then for the request ring (at 64) and the reply ring (at 256) its tail, head
/// and words (consumer waiting, producer waiting, closed).
const FIELDS: [(u64, usize); 7] = [
    (0, 24),
    (64, 8),
    (128, 8),
    (192, 12),
    (256, 8),
    (320, 8),
    (384, 12),
];
/// Where the ring data starts (the request ring, then the reply ring).
const DATA_AT: u64 = 4096;

fuzz_target!(|data: &[u8]| {
    // A valid sealed memfd, as a well-behaved peer would make; the input then overwrites it.
    let Ok((_creator, fd)) = Segment::create(MIN_RING_CAPACITY) else {
        return;
    };
    // The first byte picks whether the input also rewrites magic, version and capacity (even)
    // or leaves them valid (odd), so the fuzzer reaches the rings without guessing them first.
    let Some((&mode, mut rest)) = data.split_first() else {
        return;
    };
    let fields = if mode & 1 == 0 {
        &FIELDS[..]
    } else {
        &FIELDS[1..]
    };
    for &(at, len) in fields {
        let (field, tail) = rest.split_at(rest.len().min(len));
        if rustix::io::pwrite(&fd, field, at).is_err() {
            return;
        }
        rest = tail;
    }
    let rest = &rest[..rest.len().min(2 * MIN_RING_CAPACITY as usize)];
    if rustix::io::pwrite(&fd, rest, DATA_AT).is_err() {
        return;
    }
    let Ok(segment) = Segment::open(&fd) else {
        return;
    };
    let (rx, tx) = segment.server_ends();
    let mut stream = ShmStream::new(rx, tx);
    let timeout = Some(Duration::from_millis(1));
    stream.set_read_timeout(timeout).expect("a nonzero timeout");
    stream
        .set_write_timeout(timeout)
        .expect("a nonzero timeout");
    let mut buf = [0u8; 512];
    let _ = stream.read(&mut buf);
    let _ = stream.write(b"a reply from the server");
});
