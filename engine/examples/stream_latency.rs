//! Per-bar latency of a live stream, side by side in one run: `Live::push` in-process, a push
//! through the engine over each transport, and the 1-float echo floor (reports/boundary.md).
//!
//! The transports: Unix socket, TCP, TLS, and shared memory under each wait policy (the server's
//! `Config::shm_wait` and the client's `connect_shm` policy the same): `shm busy`, `shm spin`
//! (`WaitPolicy::default()`), `shm event`. A `shm busy` server end polls without sleeping and
//! keeps a core busy all run, so that policy's push and echo share one connection.
//!
//! ```sh
//! cargo run --release -p hullsweep-engine --example stream_latency -- --combos 80,10000 --bars 2000
//! ```
//!
//! Every bar goes to every path in a rotating order (A B C D E, B C D E A, ...), so the noise of a
//! shared machine falls on all of them alike; each remote push's events are checked against the
//! in-process push's, bit for bit, before its time counts. `--json` prints one object per row
//! for `engine/python/boundary_study.py`.

use clap::Parser;
use hullsweep_engine::shm::WaitPolicy;
use hullsweep_engine::{Client, Config, Endpoint, Server, TlsAcceptor, TlsConnector};
use hullsweep_kernel::{Combo, DEFAULT_FEE_PCT, Event, GridSpec, default_close, grid2};
use hullsweep_variants::{Live, Threads, Variant};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    about = "Per-bar round trip of a live stream: in-process, Unix socket, TCP, TLS, shared \
             memory, echo floor"
)]
struct Args {
    /// Stream sizes, comma-separated: 80 is the default grid, anything else a two-axis grid of
    /// lengths 6..=200 (10000 = 100 x 100).
    #[arg(long, value_delimiter = ',', default_value = "80,10000")]
    combos: Vec<usize>,
    /// Bars timed per stream size, one push each per path.
    #[arg(long, default_value_t = 2000)]
    bars: usize,
    /// Bars pushed before timing (untimed, in chunks), so every ring is full and every path warm.
    #[arg(long, default_value_t = 1000)]
    warmup: usize,
    /// One JSON object per row instead of a table.
    #[arg(long)]
    json: bool,
}

/// Where a push goes. TLS is TLS 1.3 over loopback TCP, the client pinning the server's
/// certificate (made here with rcgen); shared memory waits by the same policy on both ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Unix,
    Tcp,
    Tls,
    Shm(ShmWait),
}

/// A [`WaitPolicy`] by name (`WaitPolicy::default()` is not `const`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShmWait {
    Busy,
    Spin,
    Event,
}

impl ShmWait {
    fn policy(self) -> WaitPolicy {
        match self {
            ShmWait::Busy => WaitPolicy::Busy,
            ShmWait::Spin => WaitPolicy::default(),
            ShmWait::Event => WaitPolicy::Event,
        }
    }
}

impl Transport {
    const ALL: [Transport; 6] = [
        Transport::Unix,
        Transport::Tcp,
        Transport::Tls,
        Transport::Shm(ShmWait::Busy),
        Transport::Shm(ShmWait::Spin),
        Transport::Shm(ShmWait::Event),
    ];

    fn name(self) -> &'static str {
        match self {
            Transport::Unix => "unix",
            Transport::Tcp => "tcp",
            Transport::Tls => "tls",
            Transport::Shm(ShmWait::Busy) => "shm busy",
            Transport::Shm(ShmWait::Spin) => "shm spin",
            Transport::Shm(ShmWait::Event) => "shm event",
        }
    }
}

/// One timed path; its samples in nanoseconds. A remote path names its client by index.
enum Path {
    InProcess(Box<Live>),
    Push(Transport, usize, u64),
    Echo(Transport, usize),
}

impl Path {
    fn name(&self) -> String {
        match self {
            Path::InProcess(_) => "in-process Live::push".into(),
            Path::Push(t, ..) => format!("push, {}", t.name()),
            Path::Echo(t, _) => format!("echo 1 float, {}", t.name()),
        }
    }
}

fn params_for(n: usize) -> Vec<Combo> {
    if n == 80 {
        return hullsweep_kernel::default_params();
    }
    let k = (n as f64).sqrt().round() as usize;
    let spec = GridSpec { lo: 6, hi: 200, k };
    let mut p = grid2(spec, spec).expect("a valid grid");
    p.truncate(n);
    p
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i] as f64 / 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let close = default_close();
    if args.warmup + args.bars > close.len() {
        return Err(format!("--warmup + --bars must be at most {}", close.len()).into());
    }
    let config = Config {
        variant: Variant::Reference,
        threads: Threads::Fixed(1),
        ..Config::default()
    };
    let dir = tempfile::tempdir()?;
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])?;
    std::fs::write(&cert, made.cert.pem())?;
    std::fs::write(&key, made.signing_key.serialize_pem())?;
    let pinned = TlsConnector::with_pinned_cert(&cert)?;
    let tls_config = Config {
        tls: Some(TlsAcceptor::from_pem_files(&cert, &key)?),
        ..config.clone()
    };
    // One server per transport, in `Transport::ALL`'s order; shared memory under a NAME of
    // this run's own (the process id), one server per wait policy.
    let mut servers = Vec::new();
    for t in Transport::ALL {
        servers.push(match t {
            Transport::Unix => Server::bind_unix(&dir.path().join("e.sock"), config.clone())?,
            Transport::Tcp => Server::bind_tcp("127.0.0.1:0".parse()?, config.clone())?,
            Transport::Tls => Server::bind_tcp("127.0.0.1:0".parse()?, tls_config.clone())?,
            Transport::Shm(w) => {
                let name = format!("stream-latency-{}-{w:?}", std::process::id());
                let shm_config = Config {
                    shm_wait: w.policy(),
                    ..config.clone()
                };
                Server::bind_shm(&name, shm_config)?
            }
        });
    }
    let endpoints: Vec<Endpoint> = servers.iter().map(|s| s.endpoint().clone()).collect();
    let shared = servers[0].shared();
    let stops: Vec<_> = servers.iter().map(Server::shutdown_handle).collect();
    let threads: Vec<_> = servers
        .into_iter()
        .map(|s| std::thread::spawn(move || s.run()))
        .collect();
    let connect = |t: Transport| -> Result<Client, hullsweep_engine::ClientError> {
        let at = Transport::ALL.iter().position(|&a| a == t).expect("in ALL");
        let c = match (t, &endpoints[at]) {
            (Transport::Unix, Endpoint::Unix(p)) => Client::connect_unix(p)?,
            (Transport::Tcp, Endpoint::Tcp(a)) => Client::connect_tcp(a)?,
            (Transport::Tls, Endpoint::Tcp(a)) => {
                Client::connect_tls("localhost", a.port(), &pinned)?
            }
            (Transport::Shm(w), Endpoint::Shm(name)) => Client::connect_shm(name, w.policy())?,
            _ => unreachable!("endpoints are bound in Transport::ALL's order"),
        };
        c.set_timeout(Some(Duration::from_secs(60)))?;
        Ok(c)
    };
    if !args.json {
        println!(
            "| combos | path | p50 µs | p99 µs | mean µs | pushes |\n|---:|---|---:|---:|---:|---:|"
        );
    }
    for &n in &args.combos {
        let params = params_for(n);
        let mut paths = vec![Path::InProcess(Box::new(Live::new(
            &params,
            DEFAULT_FEE_PCT,
        )?))];
        let mut clients = Vec::new();
        for t in Transport::ALL {
            let mut c = connect(t)?;
            let id = c.open_stream(&params, DEFAULT_FEE_PCT)?;
            paths.push(Path::Push(t, clients.len(), id));
            clients.push(c);
        }
        for (at, t) in Transport::ALL.into_iter().enumerate() {
            // A busy server end polls without ever sleeping: a connection of its own would keep
            // a second core busy all run, so `shm busy` echoes on its push's connection.
            if t == Transport::Shm(ShmWait::Busy) {
                paths.push(Path::Echo(t, at));
            } else {
                paths.push(Path::Echo(t, clients.len()));
                clients.push(connect(t)?);
            }
        }
        let mut events = Vec::new();
        for chunk in close[..args.warmup].chunks(50) {
            for p in &mut paths {
                match p {
                    Path::InProcess(live) => live.push_many(chunk, &mut events)?,
                    Path::Push(_, c, id) => {
                        clients[*c].push(*id, chunk, &mut events)?;
                    }
                    Path::Echo(_, c) => {
                        clients[*c].echo(&chunk[..1])?;
                    }
                }
            }
        }
        let charged = shared.loaded_bytes();
        let held = match &paths[0] {
            Path::InProcess(live) => live.memory_bytes(),
            _ => 0,
        };
        let mut samples: Vec<Vec<u64>> = vec![Vec::with_capacity(args.bars); paths.len()];
        let (mut want, mut got): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
        let mut pending: Vec<(usize, Vec<Event>)> = Vec::new();
        for (i, &bar) in close[args.warmup..args.warmup + args.bars]
            .iter()
            .enumerate()
        {
            want.clear();
            let k = paths.len();
            for j in 0..k {
                let at = (i + j) % k;
                got.clear();
                let start = Instant::now();
                match &mut paths[at] {
                    Path::InProcess(live) => live.push(bar, &mut want)?,
                    Path::Push(_, c, id) => {
                        clients[*c].push(*id, &[bar], &mut got)?;
                    }
                    Path::Echo(_, c) => {
                        clients[*c].echo(&[bar])?;
                    }
                }
                samples[at].push(start.elapsed().as_nanos() as u64);
                if matches!(paths[at], Path::Push(..)) {
                    // Checked once the in-process push of the same bar is done, whatever the order.
                    pending.push((at, got.clone()));
                }
            }
            for (at, g) in pending.drain(..) {
                let same = g.len() == want.len() && g.iter().zip(&want).all(|(a, b)| a.same(b));
                if !same {
                    return Err(format!("{}: bar {i}: events differ", paths[at].name()).into());
                }
            }
        }
        for p in &paths {
            if let Path::Push(_, c, id) = p {
                clients[*c].close_stream(*id)?;
            }
        }
        for (p, s) in paths.iter().zip(&mut samples) {
            s.sort_unstable();
            let mean = s.iter().sum::<u64>() as f64 / s.len() as f64 / 1e3;
            let (p50, p99) = (quantile(s, 0.5), quantile(s, 0.99));
            if args.json {
                println!(
                    "{{\"combos\": {n}, \"path\": \"{}\", \"p50_us\": {p50:.2}, \"p99_us\": {p99:.2}, \
                     \"mean_us\": {mean:.2}, \"pushes\": {}, \"charged_bytes\": {charged}, \
                     \"held_bytes\": {held}}}",
                    p.name(),
                    s.len()
                );
            } else {
                println!(
                    "| {n} | {} | {p50:.1} | {p99:.1} | {mean:.1} | {} |",
                    p.name(),
                    s.len()
                );
            }
        }
        if !args.json {
            println!(
                "|  | (stream state: {held} B held by Live, {charged} B charged per server) | | | | |"
            );
        }
    }
    for s in stops {
        s.shutdown();
    }
    for t in threads {
        t.join().map_err(|_| "server thread panicked")??;
    }
    Ok(())
}
