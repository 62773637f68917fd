//! The shared-memory transport's foundation: a connection is a sealed memfd holding two
//! single-producer/single-consumer byte rings, read and written as an ordinary byte stream.
//!
//! `sync` picks std or loom atomics and the futex, `bytes` copies ring data in and out,
//! `ring` holds the ring header and its two ends (and the memory-ordering argument), `wait`
//! blocks on a ring by a [`WaitPolicy`], `segment` creates and checks the memfd, `rendezvous` finds a server by NAME and passes it, `stream`
//! makes a pair of ends an `io::Read + io::Write`, and `error` is [`ShmError`]. This file only
//! declares them and re-exports the public items.
// The crate denies `unsafe`; these modules need it to share memory with the peer, and each
// use carries a `// SAFETY:` argument.
#![allow(unsafe_code)]

mod bytes;
#[cfg(not(loom))]
mod connect;
mod error;
#[cfg(not(loom))]
mod rendezvous;
mod ring;
#[cfg(not(loom))]
mod segment;
mod stream;
mod sync;
mod wait;

#[cfg(not(loom))]
pub use connect::{RENDEZVOUS_TIMEOUT, connect};
pub use error::ShmError;
#[cfg(not(loom))]
pub use rendezvous::{
    Answer, DIR_ENV, HELLO, MAX_NAME, check_name, peer_gone, recv_segment, send_segment,
    socket_path,
};
pub use ring::{Consumer, MAX_RING_CAPACITY, Producer, RingError, ring_pair};
#[cfg(not(loom))]
pub use segment::{DEFAULT_RING_CAPACITY, MAGIC, MIN_RING_CAPACITY, Segment, VERSION};
pub use stream::{LIVENESS_EVERY, Liveness, ShmReader, ShmStream, ShmWriter};
pub use wait::{
    Closer, SLEEP_SLICE, WaitPolicy, close_consumer, close_producer, notify_readable,
    notify_writable, wait_readable, wait_writable,
};
