//! A structure-aware mutation fuzzer for the frame reader, request parser and dispatcher, run on
//! the stable toolchain as an ordinary test: `HULLSWEEP_FUZZ_SECS` (default 2, per test),
//! `HULLSWEEP_FUZZ_SEED`. Served in-process (`fuzz_frames`), and by a running server over a
//! Unix socket, then shared memory (`fuzz_frames_over_transports`), one connection per case.

// Each case is a byte stream of a few well-formed requests (every opcode, good and bad values),
// mutated (bit flips, truncation, insertion, splices, length words set to edge values) and served
// as one connection. Invariants: no panic; the output is a sequence of whole frames; error
// messages are non-empty UTF-8; unmutated sweeps match the kernel bit for bit. A failure prints
// the seed to replay.
//
// The buffer-growth path: some cases carry a large echo (up to 800 KB, past the first growth
// step and past the in-flight budget), and half the streams arrive in pieces of random size, so
// frames grow across many partial reads. Unmutated echoes must come back byte for byte, and the
// budget must be whole again after every connection. Over a transport the case's bytes are
// written in pieces of random size by a thread of their own, then the writing half is closed
// (the end of the stream), while this thread reads every reply until the server closes.

mod common;

use common::{Running, Transport};
use hullsweep_engine::protocol::{self, ERROR_BIT};
use hullsweep_engine::server::{Shared, serve_connection};
use hullsweep_engine::{Config, protocol::parse_request};
use hullsweep_kernel::Combo;
use hullsweep_variants::{Threads, Variant};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const MAX_FRAME: u32 = 1 << 20;
const MAX_INFLIGHT: u64 = 512 << 10;

fn config() -> Config {
    Config {
        variant: Variant::Reference,
        threads: Threads::Fixed(1),
        max_frame: MAX_FRAME,
        max_loaded_bytes: 2048,
        max_inflight: MAX_INFLIGHT,
        ..Config::default()
    }
}

/// A stream that arrives in pieces of random size, as a socket's reads do.
struct Pieces<'a> {
    data: &'a [u8],
    rng: fastrand::Rng,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let most = match self.rng.u8(..4) {
            0 => 1,
            1 => 64,
            2 => 5000,
            _ => 70_000,
        };
        let n = self.data.len().min(out.len()).min(self.rng.usize(1..=most));
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn price(rng: &mut fastrand::Rng) -> f64 {
    match rng.u8(..40) {
        0 => f64::NAN,
        1 => 0.0,
        2 => -1.0,
        3 => f64::INFINITY,
        4 => f64::from_bits(rng.u64(..)),
        _ => 100.0 + rng.f64() * 5.0,
    }
}

fn window(rng: &mut fastrand::Rng) -> i64 {
    match rng.u8(..30) {
        0 => 0,
        1 => -rng.i64(1..1000),
        2 => i64::MAX,
        3 => i64::MIN,
        _ => rng.i64(1..40),
    }
}

/// What an unmutated request's reply must be.
enum Expect {
    /// A plain v1 sweep: checked against the kernel.
    Sweep(Vec<f64>, Vec<Combo>),
    /// A large echo: its close bytes verbatim, or the in-flight budget's error.
    Echo(Vec<u8>),
    Unchecked,
}

/// One request frame and what its reply must be.
fn request(rng: &mut fastrand::Rng) -> (Vec<u8>, Expect) {
    if rng.u8(..64) == 0 {
        let base = rng.f64();
        let close: Vec<f64> = (0..rng.usize(8_000..100_000))
            .map(|i| base + i as f64)
            .collect();
        let frame = protocol::encode_request(protocol::OP_ECHO, &close, &[], None);
        let bytes = frame[4 + protocol::HEADER_LEN..].to_vec();
        return (frame, Expect::Echo(bytes));
    }
    let close: Vec<f64> = (0..rng.usize(0..48)).map(|_| price(rng)).collect();
    let params: Vec<Combo> = (0..rng.usize(0..4))
        .map(|_| std::array::from_fn(|_| window(rng)))
        .collect();
    let id = rng.u64(0..4);
    let fee = if rng.u8(..8) == 0 {
        f64::from_bits(rng.u64(..))
    } else {
        0.09
    };
    match rng.u8(..11) {
        0 | 1 => (
            protocol::encode_request(protocol::OP_SWEEP, &close, &params, None),
            Expect::Sweep(close, params),
        ),
        2 => (
            protocol::encode_request(protocol::OP_ECHO, &close, &params, None),
            Expect::Unchecked,
        ),
        3 => (
            protocol::encode_request(protocol::OP_LOAD, &close, &[], None),
            Expect::Unchecked,
        ),
        4 => (
            protocol::encode_request(protocol::OP_SWEEP_LOADED, &[], &params, Some(id)),
            Expect::Unchecked,
        ),
        5 => (
            protocol::encode_request(protocol::OP_DROP, &[], &[], Some(id)),
            Expect::Unchecked,
        ),
        // Live streams: opens (mostly over the small loaded budget), pushes, closes, states.
        6 => (protocol::encode_open(&params, fee), Expect::Unchecked),
        7 | 8 => {
            let mut f = protocol::push_head(id, close.len() as u32).to_vec();
            protocol::put_f64s(&mut f, &close);
            (f, Expect::Unchecked)
        }
        9 => {
            let op = [protocol::OP_STREAM_CLOSE, protocol::OP_STREAM_STATE][rng.usize(..2)];
            (
                protocol::encode_request(op, &[], &[], Some(id)),
                Expect::Unchecked,
            )
        }
        _ => (
            protocol::encode_request(rng.u8(..), &close, &params, None),
            Expect::Unchecked,
        ),
    }
}

fn mutate(rng: &mut fastrand::Rng, data: &mut Vec<u8>) {
    for _ in 0..rng.usize(1..5) {
        let n = data.len();
        match rng.u8(..7) {
            0 if n > 0 => {
                let i = rng.usize(..n);
                data[i] ^= 1 << rng.u8(..8);
            }
            1 if n > 0 => {
                let i = rng.usize(..n);
                data[i] = rng.u8(..);
            }
            2 => data.truncate(rng.usize(..=n)),
            3 => {
                let at = rng.usize(..=n);
                let extra: Vec<u8> = (0..rng.usize(1..16)).map(|_| rng.u8(..)).collect();
                data.splice(at..at, extra);
            }
            4 if n >= 4 => {
                // A length or count word set to an edge value.
                let at = rng.usize(..=n - 4);
                let edges = [
                    0,
                    1,
                    8,
                    9,
                    17,
                    MAX_FRAME,
                    MAX_FRAME + 1,
                    u32::MAX,
                    ERROR_BIT,
                ];
                let v = if rng.bool() {
                    edges[rng.usize(..edges.len())]
                } else {
                    rng.u32(..)
                };
                data[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            5 if n > 0 => {
                let a = rng.usize(..n);
                let b = rng.usize(a..=n);
                let chunk = data[a..b].to_vec();
                let at = rng.usize(..=n);
                data.splice(at..at, chunk);
            }
            _ => {}
        }
    }
}

/// Splits the server's output into frames; panics if it is not a whole sequence of them.
fn frames(mut out: &[u8]) -> Vec<Result<&[u8], &str>> {
    let mut v = Vec::new();
    while !out.is_empty() {
        assert!(out.len() >= 4, "partial length word in output");
        let word = u32::from_le_bytes(out[..4].try_into().unwrap());
        let len = (word & !ERROR_BIT) as usize;
        assert!(out.len() >= 4 + len, "partial frame in output");
        let body = &out[4..4 + len];
        if word & ERROR_BIT != 0 {
            let msg = std::str::from_utf8(body).expect("error message is UTF-8");
            assert!(!msg.is_empty(), "empty error message");
            v.push(Err(msg));
        } else {
            v.push(Ok(body));
        }
        out = &out[4 + len..];
    }
    v
}

/// Serves one case's bytes as one connection; returns everything the server wrote.
type Serve<'a> = dyn FnMut(&[u8], &mut fastrand::Rng) -> Vec<u8> + 'a;

fn one_case(rng: &mut fastrand::Rng, shared: &Shared, serve: &mut Serve<'_>) {
    let mut input = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..rng.usize(1..5) {
        let (frame, expect) = request(rng);
        input.extend_from_slice(&frame);
        expected.push(expect);
    }
    let mutated = rng.u8(..10) != 0;
    if mutated {
        mutate(rng, &mut input);
    } else if rng.bool() {
        // Pure garbage now and then.
        input = (0..rng.usize(0..64)).map(|_| rng.u8(..)).collect();
        expected.clear();
    }
    let out = serve(&input, rng);
    assert_eq!(shared.inflight_bytes(), 0, "receive buffers not given back");
    let replies = frames(&out);
    // Every reply answers a request, plus at most one for an unreadable tail.
    assert!(replies.len() <= input.len() / 4 + 1);
    if !mutated && !expected.is_empty() {
        // A frame over the in-flight budget ends the connection with its error frame.
        let cut = replies
            .iter()
            .position(|r| r.is_err_and(|m| m.contains("in-flight budget")));
        assert_eq!(replies.len(), cut.map_or(expected.len(), |i| i + 1));
        for (reply, expect) in replies.iter().zip(&expected) {
            let (close, params) = match (expect, reply) {
                (Expect::Sweep(close, params), _) => (close, params),
                (Expect::Echo(bytes), Ok(body)) => {
                    assert!(*body == &bytes[..], "echo of {} bytes differs", bytes.len());
                    continue;
                }
                (Expect::Echo(bytes), Err(msg)) => {
                    assert!(msg.contains("in-flight budget"), "{msg}");
                    // Alone on the server, only a frame larger than the whole budget is refused.
                    assert!(
                        bytes.len() as u64 + 32 > MAX_INFLIGHT,
                        "refused {}",
                        bytes.len()
                    );
                    continue;
                }
                (Expect::Unchecked, _) => continue,
            };
            match (hullsweep_kernel::sweep(close, params, 0.09), reply) {
                (Ok(want), Ok(body)) => {
                    let (got, _) = protocol::decode_sweep_reply(body, params.len(), false).unwrap();
                    assert_eq!(got.trades, want.trades);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got.pnl), bits(&want.pnl));
                }
                (Err(e), Err(msg)) => assert_eq!(*msg, e.to_string()),
                (want, got) => panic!("kernel {want:?} but server {got:?}"),
            }
        }
    }
    // The parser alone on the raw stream (as if it were one body) must not panic either.
    let _ = parse_request(&input);
}

/// In-process: the session on in-memory streams, read whole or in pieces of random size.
#[test]
fn fuzz_frames() {
    let shared = Shared::new(config()).unwrap();
    fuzz("fuzz_frames", &shared, &mut |input, rng| {
        let mut out = Vec::new();
        if rng.bool() {
            serve_connection(input, &mut out, &shared)
        } else {
            let rng = fastrand::Rng::with_seed(rng.u64(..));
            serve_connection(Pieces { data: input, rng }, &mut out, &shared)
        }
        .expect("in-memory streams cannot fail");
        out
    });
}

/// Through a running server, each case one connection: `HULLSWEEP_FUZZ_SECS` per transport.
#[test]
fn fuzz_frames_over_transports() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(config());
        let name = format!("fuzz_frames over {t:?}");
        fuzz(&name, &server.shared, &mut |input, rng| {
            exchange(&server, input, rng)
        });
    }
}

/// Writes `input` on a connection to `server` in pieces of random size, then closes the writing
/// half, and returns every byte the server sent until it closed the connection.
fn exchange(server: &Running, input: &[u8], rng: &mut fastrand::Rng) -> Vec<u8> {
    let (mut replies, mut requests) = server.raw().split();
    let mut pieces = fastrand::Rng::with_seed(rng.u64(..));
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut rest = input;
            while !rest.is_empty() {
                let most = [1, 64, 5000, 70_000][pieces.usize(..4)];
                let (piece, after) = rest.split_at(rest.len().min(pieces.usize(1..=most)));
                // The server stops reading once a frame cannot be skipped: the rest is unread.
                if requests.write_all(piece).is_err() {
                    return;
                }
                rest = after;
            }
            // Dropping `requests` here closes the writing half: the end of the stream.
        });
        let mut out = Vec::new();
        match replies.read_to_end(&mut out) {
            Ok(_) => {}
            // A Unix socket closed with bytes unread reports a reset after the last byte sent.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("reading the replies: {e}"),
        }
        out
    })
}

fn fuzz(name: &str, shared: &Shared, serve: &mut Serve<'_>) {
    let secs: f64 = std::env::var("HULLSWEEP_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let fixed_seed: Option<u64> = std::env::var("HULLSWEEP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let start = Instant::now();
    let budget = Duration::from_secs_f64(secs);
    let mut base = fixed_seed.unwrap_or_else(|| fastrand::u64(..));
    let mut cases = 0u64;
    loop {
        let seed = base;
        base = base.wrapping_add(1);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut rng = fastrand::Rng::with_seed(seed);
            one_case(&mut rng, shared, serve)
        }));
        if let Err(e) = outcome {
            eprintln!("{name} failure: replay with HULLSWEEP_FUZZ_SEED={seed}");
            std::panic::resume_unwind(e);
        }
        cases += 1;
        if fixed_seed.is_some() || start.elapsed() >= budget {
            break;
        }
    }
    // Every connection above ended, so every loaded series was freed.
    assert_eq!(shared.loaded_bytes(), 0);
    eprintln!(
        "{name}: {cases} cases in {:.1} s, no failures",
        start.elapsed().as_secs_f64()
    );
}
