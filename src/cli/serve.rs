//! `hullsweep serve`: the engine service (protocol v1 and extensions) on a Unix socket, TCP (plain
//! or TLS) or stdio.
//! Startup prints one `listening unix PATH` or `listening tcp ADDR` line so scripts can connect.

use super::endpoint::{check_unix_path, seconds, tcp_addr, warn_if_readable_by_others};
use anyhow::bail;
use hullsweep_engine::protocol::DEFAULT_MAX_FRAME;
use hullsweep_engine::server::{
    DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_STREAM_COMBOS, DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_CONNECTION, DEFAULT_READ_TIMEOUT,
};
use hullsweep_engine::shm::{DEFAULT_RING_CAPACITY, WaitPolicy};
use hullsweep_engine::{Config, Server, TlsAcceptor, Token};
use hullsweep_kernel::DEFAULT_FEE_PCT;
use hullsweep_variants::Variant;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Serve the kernel to any language: wire protocol v1 (docs/protocol.md in the repository) plus
/// the stateful extensions (engine/PROTOCOL-EXT.md).
///
/// Exactly one transport: --shm NAME (shared memory, this machine only: the fastest), --unix
/// PATH (socket mode 0600, removed at shutdown), --tcp ADDR (loopback unless an explicit wider
/// address is given; port 0 picks a free port), or --stdio (one session on stdin/stdout, exits
/// when stdin ends). SIGINT/SIGTERM stop it cleanly. docs/transports.md compares them.
///
/// Beyond loopback: `hullsweep tls-cert --out tls --host HOST` once, then
/// `hullsweep serve --tcp 0.0.0.0:7070 --token-file token --tls-cert tls/cert.pem --tls-key
/// tls/key.pem`; clients verify the server by tls/ca.pem or pin tls/cert.pem, then say hello.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["unix", "tcp", "stdio", "shm"])))]
pub struct Args {
    /// Listen on a Unix domain socket at PATH.
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// Listen on TCP: PORT (loopback), or HOST:PORT; 0.0.0.0:PORT must be spelled out to go wider,
    /// and a bind beyond loopback also needs --token-file (clients send it in a hello frame) and
    /// TLS (--tls-cert, --tls-key), or an explicit --insecure-plaintext.
    #[arg(long, value_name = "ADDR")]
    tcp: Option<String>,
    /// Serve one session on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// Serve over shared memory under NAME (clients connect to `shm:NAME`): each client gets a
    /// memory segment of its own, handed over on the rendezvous socket
    /// /dev/shm/hullsweep-NAME.sock (mode 0600; $HULLSWEEP_SHM_DIR moves it). Same machine only.
    #[arg(long, value_name = "NAME")]
    shm: Option<String>,
    /// How a shared-memory connection waits for its client's next request: busy (poll: lowest
    /// latency, a core per connection), spin (the default: poll --spin-us, then sleep on a
    /// futex: near 0% CPU idle, still at the floor for a client pushing bar after bar), event
    /// (sleep at once).
    #[arg(long, value_enum, value_name = "MODE", conflicts_with_all = ["unix", "tcp", "stdio"])]
    wait: Option<Wait>,
    /// Microseconds `--wait spin` polls before it sleeps [default: 50].
    #[arg(long, value_name = "US", conflicts_with_all = ["unix", "tcp", "stdio"])]
    spin_us: Option<u64>,
    /// Bytes of each of a shared-memory connection's two rings (a power of two, at least 4096):
    /// requests and replies of any size stream through; this sets how much is in flight at once
    /// [default: 1048576].
    #[arg(long, value_name = "BYTES", conflicts_with_all = ["unix", "tcp", "stdio"])]
    shm_ring: Option<u64>,
    /// Largest request frame accepted, in bytes; longer ones are refused unread.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME)]
    max_frame: u32,
    #[arg(
        long,
        value_name = "NAME",
        help = super::args::variant_help("Kernel implementation"),
        default_value = "fastest",
        value_parser = super::args::parse_variant
    )]
    variant: Variant,
    /// Worker threads for parallel variants (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    #[arg(
        long,
        value_name = "PCT",
        help = format!("{} (protocol v1 has no fee field, so every sweep uses this one)", super::args::FEE_HELP),
        default_value_t = DEFAULT_FEE_PCT,
        allow_negative_numbers = true
    )]
    fee: f64,
    /// Total bytes of series that clients may keep loaded (opcode 2) and of live streams' state
    /// (opcode 8), over all connections.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    max_loaded: u64,
    /// Connections served at once; more are refused with an error frame.
    #[arg(long, value_name = "N", default_value_t = 256)]
    max_connections: usize,
    /// Bytes of request buffers over all connections (received so far or being served); a frame
    /// that would pass it gets an error frame naming this budget. Buffers grow as bytes arrive.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_INFLIGHT)]
    max_inflight: u64,
    /// Seconds a frame may go without a byte arriving (also a reply the client does not read);
    /// then it gets an error frame and its connection closes, freeing the slot.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_READ_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    read_timeout: f64,
    /// Seconds a connection may sit between frames; 0 (default) keeps it open, as clients that
    /// hold a connection through long pauses (notebooks, pools) expect.
    #[arg(long, value_name = "SECS", default_value_t = 0.0, value_parser = seconds)]
    idle_timeout: f64,
    /// Combos one live stream (opcode 8) may run; a larger open is refused by name. Each combo's
    /// state (about 150 bytes) and each stream's last bars count against --max-loaded.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STREAM_COMBOS)]
    max_stream_combos: usize,
    /// Live streams one connection may hold open at once (they close with it).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STREAMS_PER_CONNECTION)]
    max_streams_per_connection: usize,
    /// Live streams open at once over all connections.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STREAMS)]
    max_streams: usize,
    /// File holding the access token (16..=1024 bytes, surrounding whitespace removed); every
    /// connection must present it in a hello (opcode 7) first. Required to bind TCP beyond loopback.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Serve TCP over TLS 1.3 with this certificate chain (PEM, the server's certificate first),
    /// so the token and the data are encrypted and clients can verify the server: by the CA
    /// that signed it, or by pinning this file. `hullsweep tls-cert --out DIR` makes one.
    #[arg(long, value_name = "PATH", requires = "tls_key", conflicts_with_all = ["unix", "stdio", "shm"])]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, RSA or SEC1 EC); keep it mode 0600.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Allow a TCP bind beyond loopback without TLS: the access token and every series then
    /// cross the network in clear, readable by anyone on the path. For trusted networks only.
    #[arg(long, conflicts_with = "tls_cert")]
    insecure_plaintext: bool,
}

/// `--wait`: how a shared-memory connection waits.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Wait {
    Busy,
    Spin,
    Event,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let config = Config {
        variant: args.variant,
        threads: super::args::threads(args.threads)?,
        fee_pct: args.fee,
        max_frame: args.max_frame,
        max_loaded_bytes: args.max_loaded,
        max_connections: args.max_connections,
        max_inflight: args.max_inflight,
        read_timeout: Duration::from_secs_f64(args.read_timeout),
        idle_timeout: (args.idle_timeout > 0.0).then(|| Duration::from_secs_f64(args.idle_timeout)),
        max_stream_combos: args.max_stream_combos,
        max_streams_per_connection: args.max_streams_per_connection,
        max_streams: args.max_streams,
        token: match &args.token_file {
            Some(path) => {
                warn_if_readable_by_others("token file", path);
                Some(Token::from_file(path)?)
            }
            None => None,
        },
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                warn_if_readable_by_others("TLS key file", key);
                Some(TlsAcceptor::from_pem_files(cert, key)?)
            }
            _ => None,
        },
        insecure_plaintext: args.insecure_plaintext,
        shm_wait: match args.wait.unwrap_or(Wait::Spin) {
            Wait::Busy => WaitPolicy::Busy,
            Wait::Spin => WaitPolicy::Spin(Duration::from_micros(args.spin_us.unwrap_or(50))),
            Wait::Event => WaitPolicy::Event,
        },
        shm_ring_capacity: args.shm_ring.unwrap_or(DEFAULT_RING_CAPACITY),
    };
    if args.stdio {
        return Ok(hullsweep_engine::serve_stdio(config)?);
    }
    let variant = config.variant.name();
    let tls = config.tls.as_ref().map(|t| t.fingerprint().to_owned());
    let server = match (&args.unix, &args.tcp) {
        _ if args.shm.is_some() => {
            Server::bind_shm(args.shm.as_deref().unwrap_or_default(), config)?
        }
        (Some(path), None) => {
            check_unix_path(path)?;
            Server::bind_unix(path, config)?
        }
        (None, Some(addr)) => {
            let addr = tcp_addr(addr)?;
            let server = Server::bind_tcp(addr, config)?;
            match &tls {
                Some(sha256) => eprintln!(
                    "hullsweep serve: TLS 1.3, certificate sha256 {sha256} (clients pin this or \
                     verify it by its CA)"
                ),
                None if !addr.ip().is_loopback() => eprintln!(
                    "hullsweep serve: warning: --insecure-plaintext: listening on {addr} beyond \
                     loopback without TLS; the access token and every series cross the network \
                     in clear"
                ),
                None => {}
            }
            server
        }
        _ => bail!("give exactly one of --unix, --tcp, --stdio, --shm"),
    };
    server.register_signals()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening {}", server.endpoint())?;
    out.flush()?;
    drop(out);
    eprintln!("hullsweep serve: variant {variant}; SIGINT or SIGTERM to stop");
    server.run()?;
    Ok(())
}
