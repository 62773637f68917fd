//! Reliability: every kind of malformed frame gets an error frame and the server goes on;
//! dropped clients, 32 concurrent clients, the loaded-series limit and the connection limit.
//!
//! Each test runs over a Unix socket and shared memory in turn, some over TCP too; shared
//! memory's rendezvous socket is held to the Unix socket's rules. Socket-only: nothing.

mod common;

use common::*;
use hullsweep_engine::protocol::{self, OP_DROP, OP_ECHO, OP_LOAD, OP_SWEEP, OP_SWEEP_LOADED};
use hullsweep_engine::{ClientError, Config};
use std::io::Write;

fn frame(body: &[u8]) -> Vec<u8> {
    protocol::encode_reply(body)
}

/// Requests read whole but refused: an error frame naming the problem, same connection goes on.
#[test]
fn skippable_bad_requests_get_an_error_and_the_connection_goes_on() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut s = server.raw();
        let close = series(100);
        let mut mismatched = protocol::encode_request(OP_SWEEP, &close, &combos(), None);
        mismatched[4 + 5] += 1; // n_combos one higher than the body holds
        let mut bad_price = close.clone();
        bad_price[7] = -3.0;
        let mut zero_price = close.clone();
        zero_price[8] = 0.0;
        let mut inf_price = close.clone();
        inf_price[9] = f64::INFINITY;
        let mut huge_counts = vec![OP_SWEEP];
        huge_counts.extend_from_slice(&u32::MAX.to_le_bytes());
        huge_counts.extend_from_slice(&u32::MAX.to_le_bytes());
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (frame(&[]), "empty request body"),
            (frame(&[12, 1, 2]), "unknown opcode 12"),
            (frame(&[OP_SWEEP, 1, 0]), "shorter than the 9-byte header"),
            (mismatched, "disagrees with n_bars = 100, n_combos = 7"),
            (frame(&huge_counts), "n_bars = 4294967295"),
            (
                protocol::encode_request(OP_SWEEP, &close, &[[5, 2, 0, 5, 2, 1]], None),
                "hma_sqrt = 0",
            ),
            (
                protocol::encode_request(OP_SWEEP, &close, &[[5, 2, 2, 5, -4, 1]], None),
                "hma3_half = -4",
            ),
            (
                protocol::encode_request(OP_SWEEP, &bad_price, &combos(), None),
                "bad price -3 at index 7",
            ),
            (
                protocol::encode_request(OP_SWEEP, &zero_price, &combos(), None),
                "bad price 0 at index 8",
            ),
            (
                protocol::encode_request(OP_SWEEP, &inf_price, &combos(), None),
                "bad price inf at index 9",
            ),
            (
                protocol::encode_request(OP_SWEEP, &[], &combos(), None),
                "series is empty",
            ),
            (
                protocol::encode_request(OP_LOAD, &close, &combos(), None),
                "n_combos = 0",
            ),
            (
                protocol::encode_request(OP_SWEEP_LOADED, &[], &combos(), Some(42)),
                "unknown series id 42",
            ),
            (
                protocol::encode_request(OP_DROP, &[], &[], Some(1)),
                "unknown series id 1",
            ),
        ];
        for (bytes, want) in cases {
            let msg = exchange(&mut s, &bytes).expect_err(want);
            assert!(msg.contains(want), "{msg:?} should contain {want:?}");
            assert_serves(&mut s);
        }
        // NaN is a missing bar, not an error; echo is verbatim, NaN payload bits included.
        let odd = [f64::NAN, f64::from_bits(0x7ff8_dead_beef_0001), -0.0, 1e300];
        let body = exchange(&mut s, &protocol::encode_request(OP_ECHO, &odd, &[], None)).unwrap();
        assert_eq!(bits(&protocol::f64s_from_le(&body)), bits(&odd));
    }
}

/// Frames that cannot be skipped whole: error frame (best effort), that connection closes,
/// and the server keeps serving everyone else.
#[test]
fn unskippable_frames_close_only_their_connection() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut other = server.raw();
        assert_serves(&mut other);

        // Oversize: refused from the length word alone, before any body arrives.
        let mut s = server.raw();
        let over = ((1u32 << 20) + 1).to_le_bytes();
        let msg = exchange(&mut s, &over).unwrap_err();
        assert!(msg.contains("exceeds the limit of 1048576"), "{msg}");
        assert!(closed_by_server(&mut s));

        // A length with the top bit set is just a huge length.
        let mut s = server.raw();
        let msg = exchange(&mut s, &u32::MAX.to_le_bytes()).unwrap_err();
        assert!(msg.contains("4294967295"), "{msg}");

        // Truncated header: the client half-closes after 2 of 4 length bytes.
        let mut s = server.raw();
        s.write_all(&[9, 0]).unwrap();
        s.half_close();
        let msg = protocol::read_reply(&mut s, 1 << 20).unwrap().unwrap_err();
        assert!(msg.contains("truncated frame header"), "{msg}");

        // Truncated body: half-close 10 bytes into a 100-byte body.
        let mut s = server.raw();
        s.write_all(&100u32.to_le_bytes()).unwrap();
        s.write_all(&[0; 10]).unwrap();
        s.half_close();
        let msg = protocol::read_reply(&mut s, 1 << 20).unwrap().unwrap_err();
        assert!(msg.contains("after 10 of 100 bytes"), "{msg}");

        assert_serves(&mut other);
        assert_serves(&mut server.raw());
    }
}

/// Clients that vanish at every point of a request never disturb the server or anyone else.
#[test]
fn dropped_clients_mid_frame_leave_the_server_serving() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut bystander = server.raw();
        let good = good_sweep_frame();
        for cut in [1, 3, 4, 5, 13, good.len() / 2, good.len() - 1] {
            let mut s = server.raw();
            s.write_all(&good[..cut]).unwrap();
            drop(s);
        }
        // Whole requests whose replies nobody reads: the server's write fails, only for them.
        for _ in 0..4 {
            let mut s = server.raw();
            s.write_all(&good).unwrap();
            drop(s);
        }
        // And a client that sends half a frame and waits while others are served.
        let mut stalled = server.raw();
        stalled.write_all(&good[..20]).unwrap();
        assert_serves(&mut bystander);
        assert_serves(&mut server.raw());
        drop(stalled);
        assert_serves(&mut bystander);
    }
}

/// 32 clients at once, over every transport, each with its own slice of the grid: every
/// result is bit-identical to the in-process kernel.
#[test]
fn concurrent_clients_get_bit_identical_results() {
    let servers = Transport::ALL.map(|t| t.start(small_config()));
    let close = series(3000);
    let all = hullsweep_kernel::grid(hullsweep_kernel::GridSpec {
        lo: 6,
        hi: 120,
        k: 32,
    })
    .unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|i| {
                let server = &servers[i % servers.len()];
                let (close, all) = (&close, &all);
                scope.spawn(move || {
                    let mut c = server.client();
                    let params: Vec<_> = all.iter().copied().skip(i).step_by(5).collect();
                    let want = hullsweep_kernel::sweep(close, &params, 0.09).unwrap();
                    for _ in 0..2 {
                        let got = c.sweep(close, &params).unwrap();
                        assert_eq!(bits(&got.pnl), bits(&want.pnl), "client {i}");
                        assert_eq!(got.trades, want.trades, "client {i}");
                    }
                    assert_eq!(c.echo(close).unwrap(), *close);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn loaded_series_are_bounded_per_server_and_freed_with_their_connection() {
    for t in Transport::UNIX_AND_SHM {
        let config = Config {
            max_loaded_bytes: 8 * 2500,
            ..small_config()
        };
        let server = t.start(config);
        let close = series(1500);
        let params = combos();
        let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();

        let mut a = server.client();
        let id = a.load(&close).unwrap();
        let got = a.sweep_loaded(id, &params).unwrap();
        assert_eq!(bits(&got.pnl), bits(&want.pnl));
        assert_eq!(got.trades, want.trades);
        assert_eq!(server.shared.loaded_bytes(), 8 * 1500);

        // A second connection hits the shared limit, with a message naming the sizes.
        let mut b = server.client();
        match b.load(&close) {
            Err(ClientError::Server(m)) => assert!(m.contains("limit of 20000 bytes"), "{m}"),
            other => panic!("expected a limit error, got {other:?}"),
        }
        // Ids are per connection.
        assert!(matches!(
            b.sweep_loaded(id, &params),
            Err(ClientError::Server(_))
        ));
        // Bad series are refused at load, naming the index.
        let mut bad = close.clone();
        bad[3] = f64::NEG_INFINITY;
        match b.load(&bad) {
            Err(ClientError::Server(m)) => assert!(m.contains("index 3"), "{m}"),
            other => panic!("{other:?}"),
        }
        a.drop_series(id).unwrap();
        assert_eq!(server.shared.loaded_bytes(), 0);
        let id_b = b.load(&close).unwrap();
        assert_eq!(b.sweep_loaded(id_b, &params).unwrap().trades, want.trades);
        // Disconnecting without dropping frees the bytes too.
        drop(b);
        let deadline = std::time::Instant::now() + TIMEOUT;
        while server.shared.loaded_bytes() != 0 {
            assert!(std::time::Instant::now() < deadline, "series not freed");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// A connection past `--max-connections` is refused with the same message on every transport
/// (over shared memory on the rendezvous socket, in place of a segment).
#[test]
fn connections_over_the_limit_are_refused_with_a_message() {
    for t in Transport::UNIX_AND_SHM {
        let config = Config {
            max_connections: 2,
            ..small_config()
        };
        let server = t.start(config);
        let mut a = server.raw();
        let mut b = server.raw();
        assert_serves(&mut a);
        assert_serves(&mut b);
        let msg = server.refusal();
        assert!(
            msg.contains("server busy: 2 connections open, the limit; retry later"),
            "{msg}"
        );
        // A typed client reports the same.
        let e = match &server.endpoint {
            hullsweep_engine::Endpoint::Shm(name) => {
                hullsweep_engine::Client::connect_shm(name, Default::default())
                    .err()
                    .expect("a connection past the limit was served")
                    .to_string()
            }
            _ => server
                .client()
                .sweep(&series(100), &combos())
                .unwrap_err()
                .to_string(),
        };
        assert!(e.contains("server busy: 2 connections open"), "{e}");
        drop(a);
        // The freed slot is reusable once the server notices the close.
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            // A refused connection may be closed before the write lands (or, over shared memory,
            // refused at the rendezvous); that is a retry too.
            if let Ok(mut d) = server.try_raw()
                && d.write_all(&good_sweep_frame()).is_ok()
                && matches!(protocol::read_reply(&mut d, 1 << 20), Ok(Ok(_)))
            {
                break;
            }
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_serves(&mut b);
    }
}

/// A request over the limit, sent whole by a client: the client reports the server's reason,
/// not just the reset it got while still sending.
#[test]
fn clients_report_the_servers_reason_for_an_oversize_request() {
    for t in Transport::ALL {
        let server = t.start(small_config());
        let mut c = server.client();
        match c.echo(&vec![1.0; 1 << 20]) {
            Err(ClientError::Server(m)) => assert!(m.contains("exceeds the limit"), "{m}"),
            other => panic!("expected the server's message, got {other:?}"),
        }
        let want = hullsweep_kernel::sweep(&series(100), &combos(), 0.09).unwrap();
        assert_eq!(
            server.client().sweep(&series(100), &combos()).unwrap(),
            want
        );
    }
}

#[test]
fn timed_sweep_reports_kernel_time_and_the_same_results() {
    for t in Transport::ALL {
        let server = t.start(small_config());
        let mut c = server.client();
        let (close, params) = (series(1500), combos());
        let (r, t) = c.sweep_timed(&close, &params).unwrap();
        assert_eq!(r, c.sweep(&close, &params).unwrap());
        assert!(t.as_nanos() > 0 && t.as_secs() < 30);
        let id = c.load(&close).unwrap();
        let (r2, t2) = c.sweep_loaded_timed(id, &params).unwrap();
        assert_eq!(r2, r);
        assert!(t2.as_nanos() > 0 && t2.as_secs() < 30);
    }
}

/// The socket clients connect to (the Unix socket, or shared memory's rendezvous) is mode
/// 0600 and gone once the server stops.
#[test]
fn the_socket_is_private_and_removed_at_shutdown() {
    for t in Transport::UNIX_AND_SHM {
        use std::os::unix::fs::PermissionsExt;
        let server = t.start(small_config());
        let path = server.socket_file();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        server.stop();
        assert!(!path.exists());
    }
}

/// A bind never replaces a file that is not a socket, nor a live socket, and replaces a stale
/// one (nobody accepting) left by a killed run; shared memory's rendezvous socket is no
/// different.
#[test]
fn bind_refuses_to_replace_a_regular_file_but_replaces_a_stale_socket() {
    for t in Transport::UNIX_AND_SHM {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("hstest-bind-{}-{}", std::process::id(), fastrand::u64(..));
        // Where a server named `name` binds, and the bind.
        let (path, bind) = match t {
            Transport::Unix => (dir.path().join(&name), Transport::Unix),
            _ => (hullsweep_engine::shm::socket_path(&name).unwrap(), t),
        };
        let bind = || match bind {
            Transport::Unix => hullsweep_engine::Server::bind_unix(&path, small_config()),
            _ => hullsweep_engine::Server::bind_shm(&name, small_config()),
        };
        // Removes what this test left in the shm directory, however it ends.
        struct Remove<'a>(&'a std::path::Path);
        impl Drop for Remove<'_> {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(self.0);
            }
        }
        let _cleanup = Remove(&path);

        std::fs::write(&path, "keep me").unwrap();
        let e = bind()
            .err()
            .expect("a regular file was replaced")
            .to_string();
        assert!(e.contains("refusing to replace it"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
        std::fs::remove_file(&path).unwrap();

        let live = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let e = bind()
            .err()
            .expect("a live socket was replaced")
            .to_string();
        assert!(e.contains("refusing to replace it"), "{e}");
        drop(live);
        assert!(
            path.exists(),
            "the stale socket is left for the bind to find"
        );
        let server = bind().unwrap();
        drop(server);
        assert!(!path.exists());
    }
}

/// Prices at both ends of the f64 range are valid input (docs/kernel.md, "Extreme prices"): the
/// server's default variant, `fastest`, sends back the kernel's bits, infinite PnLs included.
#[test]
fn extreme_prices_get_the_kernels_bits_from_the_default_variant() {
    for t in Transport::UNIX_AND_SHM {
        let config = Config {
            variant: Config::default().variant,
            threads: hullsweep_variants::Threads::Auto,
            ..small_config()
        };
        let server = t.start(config);
        let mut c = server.client();
        let params = combos();
        let mut spiked = series(3000);
        for (i, v) in [(300, f64::MAX), (700, f64::from_bits(1)), (1100, 1e307)] {
            spiked[i] = v;
        }
        let scaled = |k: f64| -> Vec<f64> { series(3000).iter().map(|p| p * k).collect() };
        for (name, close) in [
            ("subnormal", scaled(1e-322)),
            ("overflowing", scaled(1e304)),
            ("spiked", spiked),
        ] {
            let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
            let got = c.sweep(&close, &params).unwrap();
            assert_eq!(bits(&got.pnl), bits(&want.pnl), "{name}");
            assert_eq!(got.trades, want.trades, "{name}");
        }
    }
}
