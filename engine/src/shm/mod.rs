//! The shared-memory transport's foundation: a connection is a sealed memfd holding two
//! single-producer/single-consumer byte rings, read and written as an ordinary byte stream.
//!
//! `sync` picks std or loom atomics and the futex, `bytes` copies ring data in and out,
//! `ring` holds the ring header and its two ends (and the memory-ordering argument), `wait`
//! blocks on a ring by a [`WaitPolicy`], `segment` creates and checks the memfd, `stream`
//! makes a pair of ends an `io::Read + io::Write`, and `error` is [`ShmError`]. This file only
//! declares them and re-exports the public items.
// The crate denies `unsafe`; these modules need it to share memory with the peer, and each
// use carries a `// SAFETY:` argument.
#![allow(unsafe_code)]

mod bytes;
mod error;
mod ring;
#[cfg(not(loom))]
mod segment;
mod stream;
mod sync;
mod wait;

pub use error::ShmError;
pub use ring::{Consumer, MAX_RING_CAPACITY, Producer, RingError, ring_pair};
#[cfg(not(loom))]
pub use segment::{DEFAULT_RING_CAPACITY, MAGIC, MIN_RING_CAPACITY, Segment, VERSION};
pub use stream::{ShmReader, ShmStream, ShmWriter};
pub use wait::{
    SLEEP_SLICE, WaitPolicy, close_consumer, close_producer, notify_readable, notify_writable,
    wait_readable, wait_writable,
};
