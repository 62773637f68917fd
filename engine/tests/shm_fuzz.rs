//! The segment parser against hostile bytes: a client (or a server posing as one) can hand over a
//! memfd whose header says anything. Thousands of random and near-valid headers must each be
//! refused by name or opened into ends that then survive a random session: never a panic, never
//! an access outside the mapping.

use hullsweep_engine::shm::{MAGIC, MIN_RING_CAPACITY, Segment, ShmStream, VERSION};
use rustix::io::pwrite;
use std::io::{Read, Write};
use std::time::Duration;

/// A header that is valid except for what `rng` scribbles over it.
fn scribbled(rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut head = vec![0u8; 64];
    head[..8].copy_from_slice(&MAGIC);
    head[8..12].copy_from_slice(&VERSION.to_le_bytes());
    let cap = if rng.bool() {
        MIN_RING_CAPACITY
    } else {
        rng.u64(..)
    };
    head[16..24].copy_from_slice(&cap.to_le_bytes());
    for _ in 0..rng.usize(0..6) {
        let at = rng.usize(..head.len());
        head[at] = rng.u8(..);
    }
    head
}

#[test]
fn any_header_is_refused_by_name_or_opens_safely() {
    let mut rng = fastrand::Rng::with_seed(28);
    let (mut opened, mut refused) = (0, 0);
    for round in 0..2000 {
        let (segment, fd) = Segment::create(MIN_RING_CAPACITY).unwrap();
        drop(segment);
        let head = if round % 4 == 0 {
            (0..64).map(|_| rng.u8(..)).collect()
        } else {
            scribbled(&mut rng)
        };
        pwrite(&fd, &head, 0).unwrap();
        // Scribble over the ring headers too: the indices a peer controls.
        for _ in 0..rng.usize(0..4) {
            let at = 64 + rng.u64(..384);
            pwrite(&fd, &rng.u64(..).to_le_bytes(), at).unwrap();
        }
        match Segment::open(&fd) {
            Err(e) => {
                assert!(!e.to_string().is_empty());
                refused += 1;
            }
            Ok(segment) => {
                opened += 1;
                let (requests, replies) = segment.client_ends();
                let mut s = ShmStream::new(requests, replies);
                s.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
                s.set_write_timeout(Some(Duration::from_millis(1))).unwrap();
                // Whatever the scribbled indices say, a write and a read end in an answer.
                let _ = s.write(&[7u8; 100]);
                let mut buf = [0u8; 64];
                let _ = s.read(&mut buf);
            }
        }
    }
    assert!(
        opened > 100 && refused > 100,
        "opened {opened}, refused {refused}"
    );
}
