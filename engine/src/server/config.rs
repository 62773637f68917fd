//! What a server is told (Config, its defaults and validation) and what its connections share
//! (Shared: the loaded-series, in-flight and connection counts).

use crate::protocol::{self, Inflight};
use crate::server::error::EngineError;
use crate::server::token::Token;
use crate::shm::{DEFAULT_RING_CAPACITY, WaitPolicy};
use crate::tls::TlsAcceptor;
use hullsweep_kernel::DEFAULT_FEE_PCT;
use hullsweep_variants::{Threads, Variant};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// The variant the server runs unless told otherwise: the fastest one available.
///
/// `fastest` is the variants crate's own choice for this machine once it has landed; until then
/// the names are tried fastest first. Names that do not exist are skipped; `reference` always does.
pub fn default_variant() -> Variant {
    const FASTEST_FIRST: &[&str] = &[
        "fastest",
        "rayon",
        "simd",
        "prealloc",
        "unchecked",
        "checked",
        "reference",
    ];
    FASTEST_FIRST
        .iter()
        .find_map(|n| Variant::from_name(n))
        .unwrap_or(Variant::Reference)
}

/// The default bound on receive buffers over all connections: 4 GiB, so that with the default
/// 1 GiB of loaded series and replies (at most a third of their requests) a 24 GB machine keeps
/// well over half its memory.
pub const DEFAULT_MAX_INFLIGHT: u64 = 4 << 30;

/// The default time a frame may go without a byte arriving: long enough for TCP to retransmit
/// a few times, short enough that stalled clients give their slots back within seconds.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The default bound on combos per live stream: a 10,000-combo grid with room to spare; each
/// combo costs about 150 bytes of state, charged to `max_loaded_bytes`.
pub const DEFAULT_MAX_STREAM_COMBOS: usize = 65_536;

/// The default bound on live streams per connection.
pub const DEFAULT_MAX_STREAMS_PER_CONNECTION: usize = 64;

/// The default bound on live streams over all connections.
pub const DEFAULT_MAX_STREAMS: usize = 1024;

/// Everything a server needs to know; shared read-only by all its connections.
#[derive(Clone, Debug)]
pub struct Config {
    /// The implementation every sweep runs; all give bit-identical results, so only speed differs.
    pub variant: Variant,
    /// Worker threads for the parallel variants (ignored by the serial ones).
    pub threads: Threads,
    /// Protocol v1 carries no fee, so every sweep uses this one.
    pub fee_pct: f64,
    /// Requests longer than this are refused before anything is allocated for them.
    pub max_frame: u32,
    /// Total bytes of series loaded by opcode 2, over all connections.
    pub max_loaded_bytes: u64,
    /// Connections served at once; more are answered with an error frame and closed.
    pub max_connections: usize,
    /// Bytes of receive buffers over all connections; a frame that would pass it is refused.
    pub max_inflight: u64,
    /// A frame that goes this long without a byte arriving is refused and its connection closed.
    pub read_timeout: Duration,
    /// A connection with no frame under way for this long is closed; `None` keeps it open.
    pub idle_timeout: Option<Duration>,
    /// Combos one live stream (opcode 8) may run.
    pub max_stream_combos: usize,
    /// Live streams one connection may hold open at once.
    pub max_streams_per_connection: usize,
    /// Live streams open at once over all connections.
    pub max_streams: usize,
    /// When set, every connection must present it in a hello (opcode 7) before anything else.
    /// Required to bind TCP beyond loopback.
    pub token: Option<Token>,
    /// When set, TCP connections are TLS sessions with this certificate and key (TCP only).
    pub tls: Option<TlsAcceptor>,
    /// Allows a TCP bind beyond loopback without `tls`, the token then crossing in clear.
    pub insecure_plaintext: bool,
    /// How a shared-memory connection waits for its client (`--wait`): busy-poll, spin then
    /// sleep on a futex, or sleep at once.
    pub shm_wait: WaitPolicy,
    /// Bytes of each of a shared-memory connection's two rings (a power of two); any request or
    /// reply streams through, this only sets how much is in flight at once.
    pub shm_ring_capacity: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            variant: default_variant(),
            threads: Threads::Auto,
            fee_pct: DEFAULT_FEE_PCT,
            max_frame: protocol::DEFAULT_MAX_FRAME,
            max_loaded_bytes: 1 << 30,
            max_connections: 256,
            max_inflight: DEFAULT_MAX_INFLIGHT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            idle_timeout: None,
            max_stream_combos: DEFAULT_MAX_STREAM_COMBOS,
            max_streams_per_connection: DEFAULT_MAX_STREAMS_PER_CONNECTION,
            max_streams: DEFAULT_MAX_STREAMS,
            token: None,
            tls: None,
            insecure_plaintext: false,
            shm_wait: WaitPolicy::default(),
            shm_ring_capacity: DEFAULT_RING_CAPACITY,
        }
    }
}

impl Config {
    /// Refuses settings the protocol cannot honour.
    pub fn validate(&self) -> Result<(), EngineError> {
        if !self.fee_pct.is_finite() {
            return Err(EngineError::Config(format!(
                "fee {} must be a finite number",
                self.fee_pct
            )));
        }
        if self.max_frame > protocol::MAX_FRAME_LIMIT || self.max_frame < 1 {
            return Err(EngineError::Config(format!(
                "max frame {} must be in 1..={} (the length's top bit flags errors)",
                self.max_frame,
                protocol::MAX_FRAME_LIMIT
            )));
        }
        if self.max_connections == 0 {
            return Err(EngineError::Config("max connections must be >= 1".into()));
        }
        if self.max_inflight == 0 {
            return Err(EngineError::Config(
                "max in-flight bytes must be >= 1".into(),
            ));
        }
        if self.read_timeout.is_zero() {
            return Err(EngineError::Config(
                "read timeout must be > 0: without it stalled clients keep their slots".into(),
            ));
        }
        for (value, name) in [
            (self.max_stream_combos, "max stream combos"),
            (
                self.max_streams_per_connection,
                "max streams per connection",
            ),
            (self.max_streams, "max streams"),
        ] {
            if value == 0 {
                return Err(EngineError::Config(format!("{name} must be >= 1, got 0")));
            }
        }
        // A state reply (opcode 11) carries 40 bytes per combo and must fit one frame.
        let most = (protocol::MAX_FRAME_LIMIT as usize - 8) / 40;
        if self.max_stream_combos > most {
            return Err(EngineError::Config(format!(
                "max stream combos {} must be <= {most} (a stream's state reply, 40 bytes per \
                 combo, must fit one frame)",
                self.max_stream_combos
            )));
        }
        if self.idle_timeout.is_some_and(|t| t.is_zero()) {
            return Err(EngineError::Config(
                "idle timeout must be > 0 (None keeps idle connections open)".into(),
            ));
        }
        Ok(())
    }

    /// Refuses TLS settings for a transport that has no use for them (`what`: Unix, stdio).
    pub(super) fn refuse_tls(&self, what: &str) -> Result<(), EngineError> {
        if self.tls.is_some() {
            return Err(EngineError::Config(format!(
                "TLS (--tls-cert, --tls-key) is for TCP only; {what} never leaves this machine"
            )));
        }
        Ok(())
    }
}

/// State shared by every connection of one server.
pub struct Shared {
    pub(super) config: Config,
    pub(super) loaded_bytes: AtomicU64,
    pub(super) inflight: Inflight,
    pub(super) connections: AtomicUsize,
    pub(super) streams: AtomicUsize,
}

impl Shared {
    /// Fresh state for a server running `config`: nothing loaded, no connections. Fails with
    /// [`EngineError::Config`] when [`Config::validate`] refuses the settings.
    pub fn new(config: Config) -> Result<Arc<Shared>, EngineError> {
        config.validate()?;
        Ok(Arc::new(Shared {
            inflight: Inflight::new(config.max_inflight),
            config,
            loaded_bytes: AtomicU64::new(0),
            connections: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
        }))
    }

    /// Bytes of loaded series currently held, over all connections.
    pub fn loaded_bytes(&self) -> u64 {
        self.loaded_bytes.load(Ordering::SeqCst)
    }

    /// Bytes of receive buffers currently held, over all connections (`max_inflight` bounds it).
    pub fn inflight_bytes(&self) -> u64 {
        self.inflight.used()
    }

    /// Live streams open now, over all connections (`max_streams` bounds it).
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::SeqCst)
    }

    /// Connections holding a slot now (`max_connections` bounds it).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}
