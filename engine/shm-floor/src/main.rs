//! hullsweep-shm-floor: the round trip of iceoryx2 request-response and publish-subscribe, and
//! of the engine's own ring pair (`hullsweep_engine::shm`), beside a bare two-process atomic
//! ping-pong on one shared cache line, measured in the same run.

mod engine;
mod iox;
mod peer;
mod poll;
mod report;
mod ring;
mod shm;

use std::process::ExitCode;
use std::time::Instant;

use poll::Result;
use report::{Run, Series};
use ring::Rings;
use shm::{MAX_PAYLOAD, Shm};

const USAGE: &str = "usage: hullsweep-shm-floor [--rounds R] [--trips N] [--payload BYTES,...]
  --rounds R         rounds, each running every method once in rotated order (default 5)
  --trips N          timed round trips per method per round (default 100000)
  --payload B,...    payload sizes for the floor ping-pong besides the bare one, and for the
                     hullsweep ring pair besides its 8-byte one (default 64,1024)";

/// The ring pair's smallest message: one `u64`, as the bare ping-pong's sequence word.
const RING_BARE: usize = 8;

#[derive(Clone, Copy)]
enum Method {
    PingPong(usize),
    /// The engine's ring pair, echoing this many bytes.
    Ring(usize),
    /// The whole engine: `serve --shm` and the Rust client's one-float echo.
    Engine,
    RequestResponse,
    PublishSubscribe,
}

impl Method {
    fn command(self, total: usize) -> String {
        match self {
            Method::PingPong(p) => format!("pp {p} {total}"),
            Method::Ring(p) => format!("ring {p} {total}"),
            Method::Engine => format!("engine 0 {total}"),
            Method::RequestResponse => format!("rr 0 {total}"),
            Method::PublishSubscribe => format!("ps 0 {total}"),
        }
    }

    fn labels(self) -> (String, String) {
        match self {
            Method::PingPong(0) => (
                "ping-pong, one cache line".into(),
                "8 B (the sequence word)".into(),
            ),
            Method::PingPong(p) => (
                "ping-pong + payload copied each way".into(),
                format!("{p} B"),
            ),
            Method::Ring(p) => (
                "hullsweep ring pair (`ShmStream`, Busy)".into(),
                format!("{p} B"),
            ),
            Method::Engine => (
                "hullsweep engine echo (opcode 1, Rust client)".into(),
                "1 float (8 B + frame)".into(),
            ),
            Method::RequestResponse => ("iceoryx2 request-response".into(), "8 B (`u64`)".into()),
            Method::PublishSubscribe => (
                "iceoryx2 publish-subscribe (ping + pong)".into(),
                "8 B (`u64`)".into(),
            ),
        }
    }
}

struct Args {
    rounds: usize,
    trips: usize,
    payloads: Vec<usize>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args> {
    let mut a = Args {
        rounds: 5,
        trips: 100_000,
        payloads: vec![64, 1024],
    };
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--rounds" => a.rounds = value()?.parse()?,
            "--trips" => a.trips = value()?.parse()?,
            "--payload" => {
                a.payloads = value()?
                    .split(',')
                    .map(|p| p.trim().parse())
                    .collect::<std::result::Result<_, _>>()?
            }
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
        }
    }
    a.payloads.retain(|&p| p != 0); // the bare ping-pong always runs, as the floor
    a.payloads.sort_unstable();
    a.payloads.dedup();
    if a.rounds == 0 || a.trips == 0 {
        return Err("--rounds and --trips must be at least 1".into());
    }
    if a.payloads.last().is_some_and(|&p| p > MAX_PAYLOAD) {
        return Err(format!("--payload sizes must be at most {MAX_PAYLOAD}").into());
    }
    Ok(a)
}

fn parent(args: Args) -> Result<String> {
    let max_payload = args.payloads.last().copied().unwrap_or(0);
    let prefix = format!("hullsweep-shm-floor/{}", std::process::id());
    let (shm, fd) = Shm::create(max_payload)?;
    let (mut rings, ring_fd) = Rings::create(max_payload.max(RING_BARE))?;
    let iox = iox::Iox::new(&prefix, true)?;
    let mut child = peer::ChildGuard::spawn(&fd, &ring_fd, max_payload, &prefix)?;
    drop((fd, ring_fd));
    child.expect("ready")?;
    let ports = iox.client_ports()?;
    let mut engine = engine::EngineClient::connect(&engine::name(std::process::id()))?;

    let mut methods = vec![Method::PingPong(0)];
    methods.extend(args.payloads.iter().map(|&p| Method::PingPong(p)));
    methods.push(Method::Ring(RING_BARE));
    methods.extend(
        args.payloads
            .iter()
            .filter(|&&p| p != RING_BARE)
            .map(|&p| Method::Ring(p)),
    );
    methods.extend([
        Method::Engine,
        Method::RequestResponse,
        Method::PublishSubscribe,
    ]);
    let mut series: Vec<Series> = methods
        .iter()
        .map(|m| {
            let (method, payload) = m.labels();
            Series {
                method,
                payload,
                trips: Vec::with_capacity(args.rounds * args.trips),
                round_p50: vec![],
            }
        })
        .collect();
    let warmup = (args.trips / 10).clamp(1_000, 10_000);
    let load_before = report::loadavg();
    let t0 = Instant::now();
    for round in 0..args.rounds {
        for k in 0..methods.len() {
            let i = (k + round) % methods.len();
            let s = &mut series[i];
            let start = s.trips.len();
            child.send(&methods[i].command(warmup + args.trips))?;
            match methods[i] {
                Method::PingPong(p) => shm.client(p, warmup, args.trips, &mut s.trips)?,
                Method::Ring(p) => rings.client(p, warmup, args.trips, &mut s.trips)?,
                Method::Engine => engine.client(warmup, args.trips, &mut s.trips)?,
                Method::RequestResponse => {
                    ports.request_response(warmup, args.trips, &mut s.trips)?
                }
                Method::PublishSubscribe => {
                    ports.publish_subscribe(warmup, args.trips, &mut s.trips)?
                }
            }
            child.expect("done")?;
            s.round_p50.push(report::p50_of(&s.trips[start..]));
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    let load_after = report::loadavg();
    child.finish();
    let run = Run {
        rounds: args.rounds,
        trips: args.trips,
        warmup,
        load_before,
        load_after,
        seconds,
    };
    Ok(report::markdown(&series, &run))
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = if argv.first().map(String::as_str) == Some(peer::CHILD_ROLE) {
        peer::serve(&argv[1..]).map(|()| None)
    } else {
        parse_args(argv.into_iter()).and_then(parent).map(Some)
    };
    match result {
        Ok(table) => {
            if let Some(t) = table {
                print!("{t}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hullsweep-shm-floor: {e}");
            ExitCode::FAILURE
        }
    }
}
