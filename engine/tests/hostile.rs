//! Hostile and slow clients: a slow honest sender succeeds, the in-flight budget refuses what
//! would pass it, idle and unread connections give their slots back, and the access token is
//! enforced on a wildcard bind (reached through 127.0.0.1 only).

mod common;

use common::*;
use hullsweep_engine::protocol::{self, OP_ECHO};
use hullsweep_engine::{Client, ClientError, Config, EngineError, Server, Token};
use std::io::Write;
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
    let server = Running::unix(Config {
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

#[test]
fn the_inflight_budget_refuses_frames_past_it_and_the_server_stays_up() {
    const BUDGET: u64 = 8 << 20;
    let server = Running::unix(Config {
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

/// The read timeout is for frames under way; between frames only the idle timeout applies.
#[test]
fn idle_connections_stay_unless_an_idle_timeout_is_set() {
    let quick = Duration::from_millis(500);
    let patient = Running::unix(Config {
        read_timeout: quick,
        ..small_config()
    });
    let mut s = patient.raw();
    assert_serves(&mut s);
    std::thread::sleep(2 * quick);
    assert_serves(&mut s);

    let strict = Running::unix(Config {
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

/// A client that sends a request and never reads the reply gives its slot back too.
#[test]
fn a_client_that_never_reads_its_reply_gives_its_slot_back() {
    let server = Running::unix(Config {
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

#[test]
fn a_wildcard_bind_needs_the_token_and_checks_it() {
    let token = b"a token of more than sixteen bytes".to_vec();
    let wildcard = "0.0.0.0:0".parse().unwrap();
    match Server::bind_tcp(wildcard, small_config()) {
        Err(EngineError::Config(m)) => assert!(m.contains("needs an access token"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a wildcard bind without a token was accepted"),
    }
    assert!(Token::new(b"short".to_vec()).is_err());
    let server = Running::tcp_at(
        wildcard,
        Config {
            token: Some(Token::new(token.clone()).unwrap()),
            read_timeout: Duration::from_secs(1),
            // The hello's checks are the same with TLS (tests/tls.rs); plain bytes here.
            insecure_plaintext: true,
            ..small_config()
        },
    );
    // Test traffic stays on loopback: connect through 127.0.0.1 to the wildcard's port.
    let port = server.tcp_port();
    let connect = || {
        let c = Client::connect_tcp(("127.0.0.1", port)).unwrap();
        c.set_timeout(Some(TIMEOUT)).unwrap();
        c
    };
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
    let mut silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    silent.set_read_timeout(Some(TIMEOUT)).unwrap();
    let msg = protocol::read_reply(&mut silent, 1 << 20)
        .unwrap()
        .unwrap_err();
    assert!(msg.contains("read timeout"), "{msg}");
    wait_until("silent stranger's slot freed", TIMEOUT, || {
        server.shared.connections() == 0
    });
    // So is one that sends its hello a byte every 250 ms, well within the read timeout: the
    // hello must be whole within the read timeout of connecting, so the answer comes while it
    // is still sending (counting each byte as progress would keep it open for the whole 3 s).
    let mut slow = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.set_read_timeout(Some(TIMEOUT)).unwrap();
    let connected = Instant::now();
    let hello = protocol::encode_hello(&token).unwrap();
    let mut answered = false;
    for b in &hello {
        if answered || connected.elapsed() > Duration::from_secs(3) {
            break;
        }
        slow.write_all(std::slice::from_ref(b)).unwrap();
        std::thread::sleep(Duration::from_millis(250));
        slow.set_nonblocking(true).unwrap();
        answered = slow.peek(&mut [0u8]).is_ok();
        slow.set_nonblocking(false).unwrap();
    }
    assert!(
        answered,
        "a trickled hello kept its slot past the read timeout"
    );
    let msg = protocol::read_reply(&mut slow, 1 << 20)
        .unwrap()
        .unwrap_err();
    assert!(msg.contains("read timeout"), "{msg}");
    let mut c = connect();
    c.hello(&token).unwrap();
    assert_eq!(c.sweep(&close, &params).unwrap(), want);
}

/// Loopback and Unix servers need no token, so v1 clients work as they are; a hello is
/// accepted there anyway, so a client may always send one.
#[test]
fn loopback_and_unix_stay_token_free() {
    for server in [Running::unix(small_config()), Running::tcp(small_config())] {
        let mut c = server.client();
        let want = hullsweep_kernel::sweep(&series(100), &combos(), 0.09).unwrap();
        assert_eq!(c.sweep(&series(100), &combos()).unwrap(), want);
        c.hello(b"anything at all, unchecked").unwrap();
        assert_eq!(c.sweep(&series(100), &combos()).unwrap(), want);
    }
}
