//! Shared test helpers: an in-process server on any transport that is always shut down, and
//! raw connections with timeouts so no test can hang.
#![allow(dead_code)]

mod raw;
mod transport;

pub use raw::Raw;
pub use transport::Transport;

use hullsweep_engine::protocol::{self, OP_SWEEP};
use hullsweep_engine::shm::WaitPolicy;
use hullsweep_engine::{Config, Endpoint, Server, ShutdownHandle};
use hullsweep_kernel::Combo;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub const TIMEOUT: Duration = Duration::from_secs(30);

impl Transport {
    /// A server on this transport (TCP on loopback), stopped when dropped.
    pub fn start(self, config: Config) -> Running {
        match self {
            Transport::Unix => Running::unix(config),
            Transport::Tcp => Running::tcp(config),
            Transport::Shm => Running::shm(config),
        }
    }
}

/// A running server; dropping it stops the server, joins its threads, removes its socket.
pub struct Running {
    pub endpoint: Endpoint,
    pub shared: Arc<hullsweep_engine::server::Shared>,
    stop: ShutdownHandle,
    thread: Option<JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl Running {
    pub fn unix(config: Config) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::bind_unix(&dir.path().join("engine.sock"), config).unwrap();
        Running::start(server, Some(dir))
    }

    /// A shared-memory server under a name no other test uses.
    pub fn shm(config: Config) -> Running {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!(
            "hstest-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        Running::start(Server::bind_shm(&name, config).unwrap(), None)
    }

    pub fn tcp(config: Config) -> Running {
        Running::tcp_at("127.0.0.1:0".parse().unwrap(), config)
    }

    pub fn tcp_at(addr: std::net::SocketAddr, config: Config) -> Running {
        Running::start(Server::bind_tcp(addr, config).unwrap(), None)
    }

    pub fn tcp_port(&self) -> u16 {
        match &self.endpoint {
            Endpoint::Tcp(a) => a.port(),
            _ => panic!("not a tcp server"),
        }
    }

    fn start(server: Server, dir: Option<tempfile::TempDir>) -> Running {
        let endpoint = server.endpoint().clone();
        // Captured with the test's output, so a failure says which transport it was on.
        eprintln!("--- server on {endpoint}");
        let stop = server.shutdown_handle();
        let shared = server.shared();
        let thread = std::thread::spawn(move || server.run().unwrap());
        Running {
            endpoint,
            shared,
            stop,
            thread: Some(thread),
            _dir: dir,
        }
    }

    pub fn path(&self) -> PathBuf {
        match &self.endpoint {
            Endpoint::Unix(p) => p.clone(),
            _ => panic!("not a unix server"),
        }
    }

    /// The NAME of a shared-memory server.
    pub fn shm_name(&self) -> &str {
        match &self.endpoint {
            Endpoint::Shm(name) => name,
            _ => panic!("not a shared-memory server"),
        }
    }

    /// The socket file clients connect to: the Unix socket, or shared memory's rendezvous.
    pub fn socket_file(&self) -> PathBuf {
        match &self.endpoint {
            Endpoint::Unix(p) => p.clone(),
            Endpoint::Shm(name) => hullsweep_engine::shm::socket_path(name).unwrap(),
            Endpoint::Tcp(_) => panic!("a tcp server has no socket file"),
        }
    }

    /// The TCP address to connect to: loopback when bound to every address, so test traffic
    /// never leaves the machine.
    pub fn tcp_addr(&self) -> SocketAddr {
        match &self.endpoint {
            Endpoint::Tcp(a) if a.ip().is_unspecified() => {
                SocketAddr::from(([127, 0, 0, 1], a.port()))
            }
            Endpoint::Tcp(a) => *a,
            _ => panic!("not a tcp server"),
        }
    }

    /// A raw connection with read/write timeouts; panics if the server refuses it.
    pub fn raw(&self) -> Raw {
        self.try_raw().unwrap()
    }

    /// A raw connection with read/write timeouts, or why it could not be made (over shared
    /// memory a full server's refusal comes here; over a socket it is the first frame read).
    pub fn try_raw(&self) -> Result<Raw, String> {
        let t = Some(TIMEOUT);
        Ok(match &self.endpoint {
            Endpoint::Unix(p) => {
                let s = UnixStream::connect(p).map_err(|e| e.to_string())?;
                s.set_read_timeout(t).unwrap();
                s.set_write_timeout(t).unwrap();
                Raw::Unix(s)
            }
            Endpoint::Tcp(_) => {
                let s = std::net::TcpStream::connect(self.tcp_addr()).map_err(|e| e.to_string())?;
                s.set_read_timeout(t).unwrap();
                s.set_write_timeout(t).unwrap();
                Raw::Tcp(s)
            }
            Endpoint::Shm(name) => {
                let (mut s, _socket) = hullsweep_engine::shm::connect(name, WaitPolicy::default())
                    .map_err(|e| e.to_string())?;
                s.set_read_timeout(t).unwrap();
                s.set_write_timeout(t).unwrap();
                let (reader, writer) = s.split();
                Raw::Shm {
                    reader,
                    writer: Some(writer),
                }
            }
        })
    }

    /// The message a server at its connection limit answers a new connection with: the first
    /// frame on a socket, the rendezvous's refusal on shared memory.
    pub fn refusal(&self) -> String {
        match self.try_raw() {
            Ok(mut s) => protocol::read_reply(&mut s, 1 << 20)
                .unwrap()
                .expect_err("a connection past the limit was served"),
            Err(why) => why,
        }
    }

    pub fn client(&self) -> hullsweep_engine::Client {
        let c = match &self.endpoint {
            Endpoint::Unix(p) => hullsweep_engine::Client::connect_unix(p).unwrap(),
            Endpoint::Tcp(_) => hullsweep_engine::Client::connect_tcp(self.tcp_addr()).unwrap(),
            Endpoint::Shm(name) => {
                hullsweep_engine::Client::connect_shm(name, Default::default()).unwrap()
            }
        };
        c.set_timeout(Some(TIMEOUT)).unwrap();
        c
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.shutdown();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Sends `bytes`, reads one reply: `Ok(body)` or `Err(message)` for an error frame.
pub fn exchange(s: &mut (impl Read + Write), bytes: &[u8]) -> Result<Vec<u8>, String> {
    s.write_all(bytes).unwrap();
    protocol::read_reply(s, u32::MAX >> 1).unwrap()
}

/// True once the server has closed this stream (reads end).
pub fn closed_by_server(s: &mut impl Read) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

/// A small deterministic series and combos for fast sweeps.
pub fn series(n: usize) -> Vec<f64> {
    hullsweep_kernel::default_close()[..n].to_vec()
}

pub fn combos() -> Vec<Combo> {
    hullsweep_kernel::grid(hullsweep_kernel::GridSpec {
        lo: 6,
        hi: 60,
        k: 6,
    })
    .unwrap()
}

pub fn good_sweep_frame() -> Vec<u8> {
    protocol::encode_request(OP_SWEEP, &series(1500), &combos(), None)
}

/// The follow-up request every malformed-frame test makes: must match the kernel exactly.
pub fn assert_serves(s: &mut (impl Read + Write)) {
    let body = exchange(s, &good_sweep_frame()).expect("good request after a bad one");
    let want = hullsweep_kernel::sweep(&series(1500), &combos(), 0.09).unwrap();
    let (got, _) = protocol::decode_sweep_reply(&body, combos().len(), false).unwrap();
    assert_eq!(bits(&got.pnl), bits(&want.pnl));
    assert_eq!(got.trades, want.trades);
}

pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

pub fn small_config() -> Config {
    Config {
        // Pinned so "bit-identical to the kernel" stays a fair claim when faster defaults land.
        variant: hullsweep_variants::Variant::Reference,
        threads: hullsweep_variants::Threads::Fixed(1),
        max_frame: 1 << 20,
        ..Config::default()
    }
}
