//! A connection's shared memory: one sealed memfd holding a header page and two byte rings
//! (client->server requests, server->client replies), created, or opened and checked, here.
//!
//! Layout (offsets in bytes; integers little-endian):
//!
//! | at | what |
//! |---|---|
//! | 0 | magic `HSWPSHM1` |
//! | 8 | version, u32 |
//! | 16 | ring capacity, u64 (a power of two, 4 KiB ..= 1 GiB) |
//! | 64 | request ring header (192 bytes, `ring.rs`) |
//! | 256 | reply ring header |
//! | 4096 | request ring data (`cap` bytes), then reply ring data |

use crate::shm::error::ShmError;
use crate::shm::ring::{Consumer, MAX_RING_CAPACITY, Producer, RING_HEADER_LEN, RingHeader};
use crate::shm::sync::ByteCell;
use memmap2::{MmapOptions, MmapRaw};
use rustix::fs::{MemfdFlags, SealFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::Arc;

/// The first bytes of every segment.
pub const MAGIC: [u8; 8] = *b"HSWPSHM1";
/// The layout version this build speaks.
pub const VERSION: u32 = 1;
/// Each ring's capacity unless asked otherwise.
pub const DEFAULT_RING_CAPACITY: u64 = 1 << 20;
/// The smallest ring: one page.
pub const MIN_RING_CAPACITY: u64 = 4096;

const HEADER_PAGE: u64 = 4096;
/// `statfs.f_type` of tmpfs, where memfds live.
const TMPFS_MAGIC: rustix::fs::FsWord = 0x0102_1994;
const RING_HEADERS_AT: usize = 64;
const REQUESTS: usize = 0;
const REPLIES: usize = 1;

fn segment_len(cap: u64) -> u64 {
    HEADER_PAGE + 2 * cap
}

fn check_capacity(cap: u64) -> Result<(), ShmError> {
    if cap.is_power_of_two() && (MIN_RING_CAPACITY..=MAX_RING_CAPACITY).contains(&cap) {
        Ok(())
    } else {
        Err(ShmError::Capacity {
            cap,
            min: MIN_RING_CAPACITY,
            max: MAX_RING_CAPACITY,
        })
    }
}

fn io(what: &'static str) -> impl FnOnce(rustix::io::Errno) -> ShmError {
    move |e| ShmError::Io {
        what,
        source: e.into(),
    }
}

/// One mapped segment, before its ends are taken.
pub struct Segment {
    map: Arc<MmapRaw>,
    /// Validated once, held here, never re-read from the mapping.
    cap: u64,
}

impl Segment {
    /// A new segment with two rings of `cap` bytes, and its file to hand to the peer.
    ///
    /// The file is sealed against shrinking, growing and further seals, so a peer that gets it
    /// can neither truncate it under our mapping nor seal it read-only.
    pub fn create(cap: u64) -> Result<(Segment, OwnedFd), ShmError> {
        check_capacity(cap)?;
        let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
        let fd = rustix::fs::memfd_create("hullsweep-shm", flags).map_err(io("memfd_create"))?;
        let len = segment_len(cap);
        rustix::fs::ftruncate(&fd, len).map_err(io("sizing the segment"))?;
        let map = map(&fd, len)?;
        let mut head = [0u8; 24];
        head[..8].copy_from_slice(&MAGIC);
        head[8..12].copy_from_slice(&VERSION.to_le_bytes());
        head[16..24].copy_from_slice(&cap.to_le_bytes());
        // SAFETY: the mapping is `len >= 24` bytes and nobody else has the file yet. The ring
        // headers need no initialising: a new memfd reads as zeros, i.e. atomics holding 0.
        unsafe { std::ptr::copy_nonoverlapping(head.as_ptr(), map.as_mut_ptr(), head.len()) };
        let seals = SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL;
        rustix::fs::fcntl_add_seals(&fd, seals).map_err(io("sealing the segment"))?;
        let segment = Segment {
            map: Arc::new(map),
            cap,
        };
        Ok((segment, fd))
    }

    /// Maps a segment the peer handed over, after checking everything the mapping's use
    /// depends on: the seals (it cannot shrink later), that it is shared memory, the size,
    /// then the header's magic, version and capacity against that size.
    pub fn open(fd: impl AsFd) -> Result<Segment, ShmError> {
        let fd = fd.as_fd();
        let seals = rustix::fs::fcntl_get_seals(fd).map_err(io("reading the segment's seals"))?;
        if !seals.contains(SealFlags::SHRINK | SealFlags::SEAL) {
            return Err(ShmError::Unsealed {
                seals: seals.bits(),
            });
        }
        let fs_type = rustix::fs::fstatfs(fd)
            .map_err(io("reading the segment's file system"))?
            .f_type;
        if fs_type != TMPFS_MAGIC {
            return Err(ShmError::NotShmem {
                magic: fs_type as u64,
            });
        }
        let size = rustix::fs::fstat(fd)
            .map_err(io("reading the segment's size"))?
            .st_size as u64;
        let (min, max) = (
            segment_len(MIN_RING_CAPACITY),
            segment_len(MAX_RING_CAPACITY),
        );
        if !(min..=max).contains(&size) {
            return Err(ShmError::Size { size, min, max });
        }
        let map = map(fd, size)?;
        let mut head = [0u8; 24];
        // SAFETY: the mapping is `size >= min > 24` bytes and sealed against shrinking, so
        // every byte stays backed; the header is copied out once and parsed from the copy.
        unsafe { std::ptr::copy_nonoverlapping(map.as_ptr(), head.as_mut_ptr(), head.len()) };
        let found: [u8; 8] = head[..8].try_into().expect("8 bytes");
        if found != MAGIC {
            return Err(ShmError::Magic {
                found,
                expected: MAGIC,
            });
        }
        let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(ShmError::Version {
                found: version,
                expected: VERSION,
            });
        }
        let cap = u64::from_le_bytes(head[16..24].try_into().expect("8 bytes"));
        check_capacity(cap)?;
        if segment_len(cap) != size {
            return Err(ShmError::SizeMismatch {
                cap,
                want: segment_len(cap),
                size,
            });
        }
        Ok(Segment {
            map: Arc::new(map),
            cap,
        })
    }

    /// Each ring's capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.cap
    }

    /// The server's ends: requests to read, replies to write. Consumes the segment, so each
    /// mapping yields one end of each kind per ring (the rings are single-producer,
    /// single-consumer); the ends keep the mapping alive.
    pub fn server_ends(self) -> (Consumer, Producer) {
        self.ends(REQUESTS, REPLIES)
    }

    /// The client's ends: replies to read, requests to write; as [`Segment::server_ends`].
    pub fn client_ends(self) -> (Consumer, Producer) {
        self.ends(REPLIES, REQUESTS)
    }

    fn ends(self, read: usize, write: usize) -> (Consumer, Producer) {
        let owner: Arc<dyn Send + Sync> = self.map.clone();
        let (rh, rd) = self.ring(read);
        let (wh, wd) = self.ring(write);
        // SAFETY: `ring` gives an aligned header (zeroed or peer-written atomics: any bits
        // are valid) and `cap` data bytes inside the sealed mapping, which `owner` keeps
        // mapped; `self` is consumed, so this mapping makes one end of each kind per ring.
        unsafe {
            (
                Consumer::from_raw(rh, rd, self.cap, owner.clone()),
                Producer::from_raw(wh, wd, self.cap, owner),
            )
        }
    }

    /// Ring `i`'s header and data in the mapping.
    fn ring(&self, i: usize) -> (NonNull<RingHeader>, NonNull<ByteCell>) {
        let base = self.map.as_mut_ptr();
        let header_at = RING_HEADERS_AT + i * RING_HEADER_LEN;
        let data_at = HEADER_PAGE as usize + i * self.cap as usize;
        // SAFETY: both offsets lie inside the mapping of `segment_len(cap)` bytes (checked at
        // open); the mapping is page-aligned and `header_at` a multiple of 64.
        unsafe {
            (
                NonNull::new_unchecked(base.add(header_at).cast()),
                NonNull::new_unchecked(base.add(data_at).cast()),
            )
        }
    }
}

fn map(fd: impl AsFd, len: u64) -> Result<MmapRaw, ShmError> {
    let len = usize::try_from(len).map_err(|_| ShmError::Size {
        size: len,
        min: 0,
        max: usize::MAX as u64,
    })?;
    MmapOptions::new()
        .len(len)
        .map_raw(&fd.as_fd())
        .map_err(|source| ShmError::Io {
            what: "mapping the segment",
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::io::pwrite;

    fn open_err(fd: &OwnedFd) -> String {
        Segment::open(fd).err().expect("refused").to_string()
    }

    #[test]
    fn created_segments_open_and_carry_bytes_both_ways() {
        let (server, fd) = Segment::create(MIN_RING_CAPACITY).unwrap();
        let client = Segment::open(&fd).unwrap();
        assert_eq!(client.capacity(), MIN_RING_CAPACITY);
        drop(fd); // the mappings outlive the file descriptor
        let (mut s_rx, mut s_tx) = server.server_ends();
        let (mut c_rx, mut c_tx) = client.client_ends();
        assert_eq!(c_tx.write(b"request").unwrap(), 7);
        assert_eq!(s_tx.write(b"reply").unwrap(), 5);
        let mut buf = [0u8; 16];
        let n = s_rx.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"request");
        let n = c_rx.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"reply");
    }

    #[test]
    fn bad_capacities_are_refused_by_value() {
        for cap in [0, 1024, 5000, MAX_RING_CAPACITY * 2] {
            let e = Segment::create(cap).err().unwrap().to_string();
            assert!(e.contains(&format!("capacity {cap} ")), "{e}");
        }
    }

    #[test]
    fn a_wrong_magic_version_or_capacity_is_refused_by_name() {
        let (_s, fd) = Segment::create(MIN_RING_CAPACITY).unwrap();
        pwrite(&fd, b"HSWPSHM9", 0).unwrap();
        assert!(open_err(&fd).contains("magic \"HSWPSHM9\""));
        pwrite(&fd, &MAGIC, 0).unwrap();
        pwrite(&fd, &7u32.to_le_bytes(), 8).unwrap();
        assert!(open_err(&fd).contains("version 7 "));
        pwrite(&fd, &VERSION.to_le_bytes(), 8).unwrap();
        pwrite(&fd, &8192u64.to_le_bytes(), 16).unwrap();
        let e = open_err(&fd);
        assert!(
            e.contains("capacity 8192") && e.contains("12288 bytes"),
            "{e}"
        );
        pwrite(&fd, &4097u64.to_le_bytes(), 16).unwrap();
        assert!(open_err(&fd).contains("capacity 4097 "));
    }

    #[test]
    fn unsealed_or_wrongly_sized_files_are_refused() {
        let fd = rustix::fs::memfd_create("t", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, segment_len(MIN_RING_CAPACITY)).unwrap();
        assert!(open_err(&fd).contains("lack F_SEAL_SHRINK"));
        let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
        let fd = rustix::fs::memfd_create("t", flags).unwrap();
        rustix::fs::ftruncate(&fd, 100).unwrap();
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::SEAL).unwrap();
        assert!(open_err(&fd).contains("size 100 "));
        let file = tempfile::tempfile().unwrap();
        assert!(open_err(&file.into()).contains("seals"));
    }
}
