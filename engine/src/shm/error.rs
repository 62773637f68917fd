//! `ShmError`: why a shared-memory segment could not be made or was refused, each error naming
//! the bad value, so a hostile or stale segment is rejected before any of it is used.

use std::io;

/// Why a segment could not be created or opened.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// A system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// A ring capacity outside what a segment allows.
    #[error("ring capacity {cap} is not a power of two between {min} and {max}")]
    Capacity {
        /// The capacity asked for, or found in the header.
        cap: u64,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
    /// The segment's file lacks the seals that stop the peer shrinking it under our mapping
    /// (an access past a shrunk file's end would kill this process with SIGBUS).
    #[error(
        "segment seals {seals:#x} lack F_SEAL_SHRINK and F_SEAL_SEAL; refusing a file the peer could truncate"
    )]
    Unsealed {
        /// The seals the file has.
        seals: u32,
    },
    /// The file is not plain shared memory (a hugetlbfs file can fail a page fault with
    /// SIGBUS when its pool runs dry; a disk file is not what a peer should hand over).
    #[error("segment file system magic {magic:#x} is not tmpfs/shmem (0x1021994)")]
    NotShmem {
        /// `f_type` of the file's file system.
        magic: u64,
    },
    /// The file's size cannot be a segment's.
    #[error("segment size {size} is not between {min} and {max} bytes")]
    Size {
        /// The file's size.
        size: u64,
        /// The smallest segment.
        min: u64,
        /// The largest segment.
        max: u64,
    },
    /// The header does not start with the magic.
    #[error("segment magic \"{}\" is not \"{}\"", .found.escape_ascii(), .expected.escape_ascii())]
    Magic {
        /// The first eight bytes found.
        found: [u8; 8],
        /// The magic expected.
        expected: [u8; 8],
    },
    /// A layout version this build does not speak.
    #[error("segment version {found} is not the supported version {expected}")]
    Version {
        /// The version found.
        found: u32,
        /// The version this build speaks.
        expected: u32,
    },
    /// The header's capacity does not match the file's size.
    #[error("segment capacity {cap} needs a {want}-byte file, but the file has {size} bytes")]
    SizeMismatch {
        /// The capacity in the header.
        cap: u64,
        /// The size that capacity implies.
        want: u64,
        /// The file's size.
        size: u64,
    },
    /// A server NAME that cannot name a shared-memory server (the message says why).
    #[error("{0}")]
    Name(String),
    /// The rendezvous on the server's socket failed: no segment came, or something that is
    /// not a hullsweep shared-memory server answered.
    #[error("{0}")]
    Rendezvous(String),
}
