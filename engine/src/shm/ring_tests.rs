//! Unit tests of `ring.rs`: wrap-around, full and empty, capacities, and a peer that forges
//! indices (refused as `Corrupt`, never a panic) or our own (ignored: never read back).

use super::*;

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

#[test]
fn bytes_wrap_around_in_order() {
    let (mut p, mut c) = ring_pair(16).unwrap();
    let data = pattern(1000, 1);
    let (mut sent, mut got) = (0, Vec::new());
    let mut k = 0;
    while got.len() < data.len() {
        let w = (k * 7 + 3) % 13;
        sent += p.write(&data[sent..(sent + w).min(data.len())]).unwrap();
        let mut buf = [0u8; 11];
        let r = (k * 5 + 1) % 12;
        let n = c.read(&mut buf[..r]).unwrap();
        got.extend_from_slice(&buf[..n]);
        k += 1;
    }
    assert_eq!(got, data);
}

#[test]
fn gathered_parts_arrive_in_order_from_any_skip() {
    // Parts of odd sizes (one empty), resumed at every byte offset, through a small ring that
    // wraps: what arrives is the concatenation from the offset on, whatever the ring's room.
    let parts: [Vec<u8>; 4] = [pattern(5, 2), Vec::new(), pattern(9, 3), pattern(14, 4)];
    let whole: Vec<u8> = parts.concat();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let (mut p, mut c) = ring_pair(16).unwrap();
    for skip in 0..=whole.len() {
        let (mut done, mut got) = (skip, Vec::new());
        while done < whole.len() {
            let n = p.write_parts(&refs, done).unwrap();
            assert!(
                n > 0 || c.available().unwrap() == 16,
                "writes while there is room"
            );
            done += n;
            let mut buf = [0u8; 7];
            let r = c.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..r]);
        }
        let mut rest = vec![0u8; 16];
        let r = c.read(&mut rest).unwrap();
        got.extend_from_slice(&rest[..r]);
        assert_eq!(got, whole[skip..], "skip {skip}");
    }
    assert_eq!(
        p.write_parts(&refs, whole.len()).unwrap(),
        0,
        "nothing left to write"
    );
}

#[test]
fn full_and_empty() {
    let (mut p, mut c) = ring_pair(16).unwrap();
    assert_eq!(c.read(&mut [0; 8]).unwrap(), 0, "empty");
    assert_eq!(p.write(&[1; 20]).unwrap(), 16, "fills up to the capacity");
    assert_eq!(p.write(&[2; 4]).unwrap(), 0, "full");
    assert_eq!((p.free().unwrap(), c.available().unwrap()), (0, 16));
    let mut buf = [0; 32];
    assert_eq!(c.read(&mut buf).unwrap(), 16);
    assert_eq!(&buf[..16], &[1; 16]);
    assert_eq!(c.read(&mut buf).unwrap(), 0, "empty again");
    assert_eq!(p.write(&[]).unwrap(), 0);
    assert_eq!(p.free().unwrap(), 16);
}

#[test]
fn capacities_must_be_powers_of_two() {
    for cap in [0, 3, 24, MAX_RING_CAPACITY * 2] {
        assert_eq!(ring_pair(cap).err(), Some(RingError::Capacity(cap)));
    }
    assert_eq!(ring_pair(1).unwrap().0.capacity(), 1);
}

#[test]
fn a_forged_peer_index_is_corrupt_not_a_panic() {
    let (mut p, mut c) = ring_pair(16).unwrap();
    p.write(&[9; 10]).unwrap();
    // The consumer claims to have read past what was written. The producer reads the head only
    // when the one it saw last leaves too little room (6 bytes here), and then checks it.
    c.header().head.0.store(12, Ordering::SeqCst);
    assert_eq!(
        p.write(b"a").unwrap(),
        1,
        "room the last head left: not re-read"
    );
    let err = p.write(&[7; 6]).unwrap_err();
    assert_eq!(
        err,
        RingError::Corrupt {
            peer_index: "head",
            peer: 12,
            local_index: "tail",
            local: 11,
            cap: 16
        }
    );
    assert!(err.to_string().contains("head 12"), "{err}");
    assert!(p.free().is_err());
    // The producer claims more bytes than the ring holds, or a tail behind our head.
    for tail in [17, u64::MAX, u64::MAX - 5] {
        p.header().tail.0.store(tail, Ordering::SeqCst);
        let err = c.read(&mut [0; 4]).unwrap_err();
        assert!(
            matches!(err, RingError::Corrupt { peer_index: "tail", peer, .. } if peer == tail),
            "{err}"
        );
        assert!(c.available().is_err());
    }
    // Any in-range tail, however wrong, only yields bytes from inside the ring.
    p.header().tail.0.store(16, Ordering::SeqCst);
    assert_eq!(c.read(&mut [0; 64]).unwrap(), 16);
}

#[test]
fn our_own_index_is_never_read_back() {
    let (mut p, mut c) = ring_pair(16).unwrap();
    p.write(b"abcd").unwrap();
    // The peer scribbles over the producer's tail and then the consumer's head in the header.
    p.header().tail.0.store(1000, Ordering::SeqCst);
    p.header().tail.0.store(2, Ordering::SeqCst);
    p.write(b"ef").unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(c.read(&mut buf).unwrap(), 6);
    assert_eq!(&buf[..6], b"abcdef");
    c.header().head.0.store(0, Ordering::SeqCst);
    p.write(b"gh").unwrap();
    c.header().head.0.store(77, Ordering::SeqCst);
    assert_eq!(
        c.read(&mut buf).unwrap(),
        2,
        "the consumer used its own head"
    );
    assert_eq!(&buf[..2], b"gh");
}

#[test]
fn indices_wrap_past_u64_max() {
    let (mut p, mut c) = ring_pair(16).unwrap();
    // Start both ends just below the wrap of the 64-bit counters.
    let start = u64::MAX - 20;
    p.tail = start;
    p.head_seen = start;
    c.head = start;
    p.header().tail.0.store(start, Ordering::SeqCst);
    c.header().head.0.store(start, Ordering::SeqCst);
    let data = pattern(200, 2);
    let mut got = Vec::new();
    for chunk in data.chunks(9) {
        assert_eq!(p.write(chunk).unwrap(), chunk.len());
        let mut buf = [0u8; 9];
        let n = c.read(&mut buf).unwrap();
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, data);
}

#[test]
fn close_is_seen_by_both_ends() {
    let (p, c) = ring_pair(16).unwrap();
    assert!(!p.is_closed() && !c.is_closed());
    c.close();
    assert!(p.is_closed() && c.is_closed());
}
