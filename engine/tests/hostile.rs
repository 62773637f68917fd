//! Hostile and slow clients: a slow honest sender succeeds, the in-flight budget refuses what
//! would pass it, stalled, idle and unread connections give their slots back (told why), and
//! the access token is enforced, on a wildcard bind (reached through 127.0.0.1 only) and
//! elsewhere.
//!
//! Each test runs over a Unix socket and shared memory in turn, some over TCP too. Socket-only:
//! `a_wildcard_bind_needs_the_token`, which is about binding TCP beyond loopback.

mod common;

use common::*;
use hullsweep_engine::protocol::{self, OP_ECHO};
use hullsweep_engine::{ClientError, Config, EngineError, Server, Token};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn echo_frame(n: usize) -> (Vec<f64>, Vec<u8>) {
    let close: Vec<f64> = (0..n).map(|i| 100.0 + i as f64 * 1e-3).collect();
    let frame = protocol::encode_request(OP_ECHO, &close, &[], None);
    (close, frame)
}

/// A 2 MiB frame in 64 KiB pieces, 100 ms apart: 1.6 s in all against a 1 s read timeout,
/// which counts the time without progress, not the time per frame.
#[test]
fn a_slow_honest_client_succeeds() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_frame: 4 << 20,
            read_timeout: Duration::from_secs(1),
            ..small_config()
        });
        let (close, frame) = echo_frame(256 << 10);
        let mut s = server.raw();
        let start = Instant::now();
        for piece in frame.chunks(128 << 10) {
            s.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(100));
        }
        let body = protocol::read_reply(&mut s, 8 << 20).unwrap().unwrap();
        assert!(start.elapsed() > Duration::from_secs(1));
        assert_eq!(bits(&protocol::f64s_from_le(&body)), bits(&close));
        assert_serves(&mut s);
    }
}

#[test]
fn the_inflight_budget_refuses_frames_past_it_and_the_server_stays_up() {
    const BUDGET: u64 = 8 << 20;
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_frame: 8 << 20,
            max_inflight: BUDGET,
            ..small_config()
        });
        // A holds half of a 6 MiB frame...
        let (close, frame) = echo_frame(6 << 17);
        let mut a = server.raw();
        a.write_all(&frame[..3 << 20]).unwrap();
        wait_until("A's bytes held", TIMEOUT, || {
            server.shared.inflight_bytes() >= 3 << 20
        });
        // ...so B's 6 MiB frame cannot fit: an error frame naming the budget, and B is closed.
        match server.client().echo(&close) {
            Err(ClientError::Server(m)) => {
                assert!(m.contains("in-flight budget of 8388608 bytes"), "{m}")
            }
            other => panic!("expected the budget error, got {other:?}"),
        }
        // A finishes and gets its exact answer; its buffer goes back (over half the budget).
        a.write_all(&frame[3 << 20..]).unwrap();
        let body = protocol::read_reply(&mut a, 16 << 20).unwrap().unwrap();
        assert_eq!(bits(&protocol::f64s_from_le(&body)), bits(&close));
        wait_until("A's buffer released", TIMEOUT, || {
            server.shared.inflight_bytes() < BUDGET / 2
        });
        assert_eq!(server.client().echo(&close).unwrap(), close);

        // Six clients at once, 3 MiB frames, 18 MiB wanted of 8: each gets its exact echo or
        // the budget error, never anything else, and the server serves on.
        let (small, _) = echo_frame(3 << 17);
        let (served, refused) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        let (mut ok, mut no) = (0, 0);
                        for _ in 0..3 {
                            match server.client().echo(&small) {
                                Ok(got) => {
                                    assert_eq!(bits(&got), bits(&small));
                                    ok += 1;
                                }
                                Err(ClientError::Server(m)) if m.contains("in-flight budget") => {
                                    no += 1
                                }
                                Err(e) => panic!("{e}"),
                            }
                        }
                        (ok, no)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
        });
        eprintln!("budget: {served} concurrent echoes served, {refused} refused");
        assert!(served > 0);
        assert_serves(&mut a);
        drop(a);
        wait_until("every buffer released", TIMEOUT, || {
            server.shared.inflight_bytes() == 0
        });
    }
}

/// The read timeout is for frames under way; between frames only the idle timeout applies.
#[test]
fn idle_connections_stay_unless_an_idle_timeout_is_set() {
    for t in Transport::UNIX_AND_SHM {
        let quick = Duration::from_millis(500);
        let patient = t.start(Config {
            read_timeout: quick,
            ..small_config()
        });
        let mut s = patient.raw();
        assert_serves(&mut s);
        std::thread::sleep(2 * quick);
        assert_serves(&mut s);

        let strict = t.start(Config {
            idle_timeout: Some(quick),
            ..small_config()
        });
        let mut s = strict.raw();
        assert_serves(&mut s);
        std::thread::sleep(2 * quick);
        let msg = protocol::read_reply(&mut s, 1 << 20).unwrap().unwrap_err();
        assert!(msg.contains("idle timeout"), "{msg}");
        assert!(closed_by_server(&mut s));
        wait_until("idle slot freed", TIMEOUT, || {
            strict.shared.connections() == 0
        });
    }
}

/// A client that sends a request and never reads the reply gives its slot back too.
#[test]
fn a_client_that_never_reads_its_reply_gives_its_slot_back() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_frame: 16 << 20,
            read_timeout: Duration::from_millis(500),
            ..small_config()
        });
        let (_, frame) = echo_frame(1 << 20);
        let mut s = server.raw();
        let sent = Instant::now();
        // Returns only once the server has read most of it, so its slot is taken by then.
        s.write_all(&frame).unwrap();
        wait_until("unread reply's slot freed", TIMEOUT, || {
            server.shared.connections() == 0
        });
        assert!(sent.elapsed() >= Duration::from_millis(500));
        assert_serves(&mut server.raw());
    }
}

/// A frame that stops arriving midway is refused once the read timeout passes without a byte:
/// the client reads an error frame naming the timeout, then the end, on every transport, and
/// the slot comes back.
#[test]
fn a_stalled_frame_is_told_the_read_timeout_and_closed() {
    for t in Transport::ALL {
        let server = t.start(Config {
            read_timeout: Duration::from_millis(500),
            ..small_config()
        });
        let mut s = server.raw();
        let good = good_sweep_frame();
        s.write_all(&good[..good.len() / 2]).unwrap();
        let msg = protocol::read_reply(&mut s, 1 << 20).unwrap().unwrap_err();
        assert!(
            msg.contains("read timeout") && msg.contains("0.5 s"),
            "{msg}"
        );
        assert!(closed_by_server(&mut s));
        wait_until("stalled slot freed", TIMEOUT, || {
            server.shared.connections() == 0
        });
        assert_eq!(server.shared.inflight_bytes(), 0);
        assert_serves(&mut server.raw());
    }
}

#[test]
fn a_wildcard_bind_needs_the_token() {
    let wildcard = "0.0.0.0:0".parse().unwrap();
    match Server::bind_tcp(wildcard, small_config()) {
        Err(EngineError::Config(m)) => assert!(m.contains("needs an access token"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a wildcard bind without a token was accepted"),
    }
    assert!(Token::new(b"short".to_vec()).is_err());
}

/// A server with a token serves nothing before a hello carrying it. Over TCP the server is a
/// wildcard bind (the case that needs a token), reached through 127.0.0.1.
#[test]
fn the_access_token_is_required_first_and_checked() {
    for t in Transport::ALL {
        // Long, so that a hello trickled as below takes seconds.
        let token: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        let config = Config {
            token: Some(Token::new(token.clone()).unwrap()),
            read_timeout: Duration::from_secs(1),
            // The hello's checks are the same with TLS (tests/tls.rs); plain bytes here.
            insecure_plaintext: true,
            ..small_config()
        };
        let server = match t {
            Transport::Tcp => Running::tcp_at("0.0.0.0:0".parse().unwrap(), config),
            _ => t.start(config),
        };
        let connect = || server.client();
        let (close, params) = (series(1500), combos());
        let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();

        // Accepted: the hello, then anything.
        let mut c = connect();
        c.hello(&token).unwrap();
        assert_eq!(c.sweep(&close, &params).unwrap(), want);
        c.hello(&token).unwrap();
        assert_eq!(c.sweep(&close, &params).unwrap(), want);
        drop(c);

        // Refused: a wrong token of the same length, one shorter, or empty.
        let mut near = token.clone();
        *near.last_mut().unwrap() ^= 1;
        for wrong in [&near[..], &token[..token.len() - 1], b""] {
            let mut c = connect();
            match c.hello(wrong) {
                Err(ClientError::Server(m)) => assert!(m.contains("wrong access token"), "{m}"),
                other => panic!("wrong token: {other:?}"),
            }
            assert!(
                c.sweep(&close, &params).is_err(),
                "still open after a wrong token"
            );
        }

        // Missing: a v1 request first is refused, as is a frame too large to be a hello.
        let mut c = connect();
        match c.sweep(&close, &params) {
            Err(ClientError::Server(m)) => assert!(m.contains("access token first"), "{m}"),
            other => panic!("missing token: {other:?}"),
        }
        let mut c = connect();
        match c.echo(&vec![1.0; 1 << 16]) {
            Err(ClientError::Server(m)) => assert!(m.contains("cannot be one"), "{m}"),
            other => panic!("large frame before hello: {other:?}"),
        }
        drop(c);
        // A stranger who connects and says nothing is timed out like a stalled frame.
        let mut silent = server.raw();
        let msg = protocol::read_reply(&mut silent, 1 << 20)
            .unwrap()
            .unwrap_err();
        assert!(msg.contains("read timeout"), "{msg}");
        assert!(closed_by_server(&mut silent));
        wait_until("silent stranger's slot freed", TIMEOUT, || {
            server.shared.connections() == 0
        });
        // So is one that sends its hello a byte every 50 ms, well within the read timeout (and
        // within the 100 ms after which a shared-memory session waiting for a byte looks for a
        // timeout): the hello must be whole within the read timeout of connecting, so the answer
        // comes while it is still sending; counting each byte as progress would let it finish
        // (about 11 s) and get the hello's empty reply instead.
        let hello = protocol::encode_hello(&token).unwrap();
        let (mut replies, mut requests) = server.raw().split();
        let answered = AtomicBool::new(false);
        let sent_whole = std::thread::scope(|scope| {
            let trickle = scope.spawn(|| {
                for b in &hello {
                    if answered.load(Ordering::SeqCst) || requests.write_all(&[*b]).is_err() {
                        return false;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                true
            });
            let reply = protocol::read_reply(&mut replies, 1 << 20).unwrap();
            answered.store(true, Ordering::SeqCst);
            let msg = reply.expect_err("a trickled hello was served");
            assert!(msg.contains("read timeout"), "{msg}");
            trickle.join().unwrap()
        });
        assert!(
            !sent_whole,
            "a trickled hello kept its slot until it was whole"
        );
        let mut c = connect();
        c.hello(&token).unwrap();
        assert_eq!(c.sweep(&close, &params).unwrap(), want);
    }
}

/// Servers without a token (loopback TCP, Unix, shared memory) serve v1 clients as they are; a
/// hello is accepted there anyway, so a client may always send one.
#[test]
fn servers_without_a_token_accept_v1_clients_and_any_hello() {
    for t in Transport::ALL {
        let server = t.start(small_config());
        let mut c = server.client();
        let want = hullsweep_kernel::sweep(&series(100), &combos(), 0.09).unwrap();
        assert_eq!(c.sweep(&series(100), &combos()).unwrap(), want);
        c.hello(b"anything at all, unchecked").unwrap();
        assert_eq!(c.sweep(&series(100), &combos()).unwrap(), want);
    }
}
