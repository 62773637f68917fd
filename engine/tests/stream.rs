//! Live streams (opcodes 8..=11) through a real server: every event and the final result equal
//! in-process `Live` and the kernel bit for bit, and hostile use (limits, unknown ids, bad
//! prices, truncated frames) is refused by name, leaving the stream and the server as they were.
//!
//! Each test runs over a Unix socket and shared memory in turn, the replay over TCP too.
//! Socket-only: nothing.

mod common;

use common::*;
use hullsweep_engine::protocol::{self, OP_STREAM_PUSH};
use hullsweep_engine::{Client, ClientError, Config};
use hullsweep_kernel::{Combo, DEFAULT_FEE_PCT, Event, ValidClose};
use hullsweep_variants::Live;
use std::io::Write;

fn server_error(r: Result<impl std::fmt::Debug, ClientError>) -> String {
    match r {
        Err(ClientError::Server(msg)) => msg,
        other => panic!("expected an error frame, got {other:?}"),
    }
}

/// A short series with missing bars, single and in runs, for the NaN paths.
fn series_with_gaps(n: usize) -> Vec<f64> {
    let mut close = series(n);
    for (i, c) in close.iter_mut().enumerate() {
        if i % 97 == 5 || (300..340).contains(&i) || (900..903).contains(&i) {
            *c = f64::NAN;
        }
    }
    close
}

/// Pushes `close` through `client` in chunks (sizes cycled), checking every chunk's events and
/// the state against an in-process `Live` fed the same, then the close against the kernel.
fn replay(client: &mut Client, close: &[f64], params: &[Combo], chunks: &[usize]) {
    let id = client.open_stream(params, DEFAULT_FEE_PCT).unwrap();
    let mut live = Live::new(params, DEFAULT_FEE_PCT).unwrap();
    let (mut got, mut want, mut all) = (Vec::new(), Vec::new(), Vec::new());
    let (mut at, mut k) = (0, 0);
    while at < close.len() {
        let end = (at + chunks[k % chunks.len()]).min(close.len());
        k += 1;
        got.clear();
        want.clear();
        let bars = client.push(id, &close[at..end], &mut got).unwrap();
        live.push_many(&close[at..end], &mut want).unwrap();
        assert_eq!(bars, end as u64);
        assert_eq!(got.len(), want.len(), "bars {at}..{end}");
        assert!(
            got.iter().zip(&want).all(|(g, w)| g.same(w)),
            "bars {at}..{end}"
        );
        all.extend_from_slice(&got);
        at = end;
    }
    let state = client.stream_state(id).unwrap();
    assert_eq!(state.bars, close.len() as u64);
    for (c, p) in state.positions.iter().enumerate() {
        assert_eq!(*p, live.position(c), "combo {c}");
    }
    // Every close the stream reported is the kernel's trade, in the kernel's order per combo.
    let combos: Vec<usize> = (0..params.len()).collect();
    let valid = ValidClose::new(close).unwrap();
    let trades = hullsweep_kernel::trades(valid, params, DEFAULT_FEE_PCT, &combos).unwrap();
    let mut closes: Vec<_> = all
        .iter()
        .filter_map(|e| match e {
            Event::Close(t) => Some(*t),
            Event::Open { .. } => None,
        })
        .collect();
    closes.sort_by_key(|t| t.combo);
    assert_eq!(closes.len(), trades.len());
    assert!(closes.iter().zip(&trades).all(|(g, w)| g.same(w)));
    let result = client.close_stream(id).unwrap();
    let batch = hullsweep_kernel::sweep(close, params, DEFAULT_FEE_PCT).unwrap();
    assert_eq!(bits(&result.pnl), bits(&batch.pnl));
    assert_eq!(result.trades, batch.trades);
    assert_eq!(bits(&state.result.pnl), bits(&batch.pnl));
}

#[test]
fn streams_equal_live_and_the_kernel() {
    for t in Transport::ALL {
        let params = combos();
        let server = t.start(small_config());
        let mut c = server.client();
        replay(&mut c, &series(1500), &params, &[1]);
        replay(
            &mut c,
            &series_with_gaps(1500),
            &params,
            &[1, 7, 250, 2, 1000],
        );
        assert_eq!(server.shared.streams(), 0);
        assert_eq!(server.shared.loaded_bytes(), 0);
    }
}

#[test]
fn stream_state_is_charged_and_given_back_when_the_connection_drops() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut c = server.client();
        let a = c.open_stream(&combos(), DEFAULT_FEE_PCT).unwrap();
        c.open_stream(&combos()[..3], DEFAULT_FEE_PCT).unwrap();
        c.push(a, &series(500), &mut Vec::new()).unwrap();
        assert_eq!(server.shared.streams(), 2);
        // At least the state of its combos.
        assert!(server.shared.loaded_bytes() >= (150 * (combos().len() + 3)) as u64);
        drop(c);
        // The receive buffer and the kept events buffer go back with the rest of the connection.
        let s = &server.shared;
        wait_for(|| s.streams() == 0 && s.loaded_bytes() == 0 && s.inflight_bytes() == 0);
    }
}

fn wait_for(mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "not within {TIMEOUT:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn too_many_streams_and_too_many_combos_are_refused_by_name() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_stream_combos: 4,
            max_streams_per_connection: 2,
            max_streams: 3,
            ..small_config()
        });
        let params = combos();
        let mut a = server.client();
        let e = server_error(a.open_stream(&params[..5], DEFAULT_FEE_PCT));
        assert!(e.contains("5 combos") && e.contains("limit of 4"), "{e}");
        let first = a.open_stream(&params[..4], DEFAULT_FEE_PCT).unwrap();
        a.open_stream(&params[..4], DEFAULT_FEE_PCT).unwrap();
        let e = server_error(a.open_stream(&params[..1], DEFAULT_FEE_PCT));
        assert!(e.contains("--max-streams-per-connection"), "{e}");
        let mut b = server.client();
        b.open_stream(&params[..1], DEFAULT_FEE_PCT).unwrap();
        let e = server_error(b.open_stream(&params[..1], DEFAULT_FEE_PCT));
        assert!(e.contains("3 streams open on this server"), "{e}");
        // Closing one frees a slot; the refusals left every connection usable.
        a.close_stream(first).unwrap();
        b.open_stream(&params[..1], DEFAULT_FEE_PCT).unwrap();
        let e = server_error(a.open_stream(&[[0, 1, 1, 1, 1, 1]], DEFAULT_FEE_PCT));
        assert!(e.contains("combo 0"), "{e}");
        let e = server_error(a.open_stream(&params[..1], f64::NAN));
        assert!(e.contains("fee"), "{e}");
        assert_eq!(server.shared.streams(), 3);
    }
}

#[test]
fn unknown_and_closed_stream_ids_are_refused() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut c = server.client();
        let e = server_error(c.push(7, &[100.0], &mut Vec::new()));
        assert!(e.contains("unknown stream id 7"), "{e}");
        let id = c.open_stream(&combos(), DEFAULT_FEE_PCT).unwrap();
        c.close_stream(id).unwrap();
        for e in [
            server_error(c.push(id, &[100.0], &mut Vec::new())),
            server_error(c.close_stream(id)),
            server_error(c.stream_state(id)),
        ] {
            assert!(e.contains(&format!("unknown stream id {id}")), "{e}");
        }
        // Ids are per connection.
        let mine = c.open_stream(&combos(), DEFAULT_FEE_PCT).unwrap();
        let e = server_error(server.client().stream_state(mine));
        assert!(e.contains("unknown stream id"), "{e}");
    }
}

#[test]
fn a_bad_price_names_its_bar_and_changes_nothing() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut c = server.client();
        let params = combos();
        let close = series(1200);
        let id = c.open_stream(&params, DEFAULT_FEE_PCT).unwrap();
        let mut events = Vec::new();
        c.push(id, &close[..1000], &mut events).unwrap();
        let before = c.stream_state(id).unwrap();
        let mut bad = close[1000..].to_vec();
        bad[17] = -1.0;
        let e = server_error(c.push(id, &bad, &mut events));
        assert!(e.contains("index 1017") && e.contains("-1"), "{e}");
        let e = server_error(c.push(id, &[f64::INFINITY], &mut events));
        assert!(e.contains("index 1000"), "{e}");
        assert_eq!(c.stream_state(id).unwrap(), before);
        c.push(id, &close[1000..], &mut events).unwrap();
        let got = c.close_stream(id).unwrap();
        let want = hullsweep_kernel::sweep(&close, &params, DEFAULT_FEE_PCT).unwrap();
        assert_eq!(bits(&got.pnl), bits(&want.pnl));
        assert_eq!(got.trades, want.trades);
    }
}

#[test]
fn a_push_over_the_inflight_budget_is_refused_and_the_stream_goes_on() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_inflight: 2 << 20,
            ..small_config()
        });
        let mut c = server.client();
        let params = combos();
        let close = series(4000);
        let id = c.open_stream(&params, DEFAULT_FEE_PCT).unwrap();
        // 4000 bars x 21 combos could cause ~16 MB of events: refused before anything is pushed.
        let e = server_error(c.push(id, &close, &mut Vec::new()));
        assert!(
            e.contains("in-flight budget") && e.contains("fewer bars"),
            "{e}"
        );
        assert_eq!(c.stream_state(id).unwrap().bars, 0);
        let mut events = Vec::new();
        for chunk in close.chunks(100) {
            c.push(id, chunk, &mut events).unwrap();
        }
        let got = c.close_stream(id).unwrap();
        let want = hullsweep_kernel::sweep(&close, &params, DEFAULT_FEE_PCT).unwrap();
        assert_eq!(bits(&got.pnl), bits(&want.pnl));
        assert_eq!(got.trades, want.trades);
    }
}

#[test]
fn a_stream_over_the_loaded_budget_is_refused() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_loaded_bytes: 8192,
            ..small_config()
        });
        let mut c = server.client();
        let e = server_error(c.open_stream(&hullsweep_kernel::default_params(), DEFAULT_FEE_PCT));
        assert!(
            e.contains("a stream of 80 combos") && e.contains("loaded limit of 8192"),
            "{e}"
        );
        // One long combo fits until its history (up to 1024 bars) outgrows the budget.
        let id = c
            .open_stream(&[[500, 250, 22, 500, 250, 166]], DEFAULT_FEE_PCT)
            .unwrap();
        let e = server_error(c.push(id, &series(1000), &mut Vec::new()));
        assert!(e.contains("history") && e.contains("--max-loaded"), "{e}");
        assert_eq!(c.stream_state(id).unwrap().bars, 0);
        assert!(server.shared.loaded_bytes() <= 8192);
    }
}

#[test]
fn a_truncated_push_frame_ends_only_its_connection() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(small_config());
        let mut other = server.client();
        let kept = other.open_stream(&combos(), DEFAULT_FEE_PCT).unwrap();
        let mut s = server.raw();
        let open = protocol::encode_open(&combos(), DEFAULT_FEE_PCT);
        let id = u64::from_le_bytes(exchange(&mut s, &open).unwrap().try_into().unwrap());
        let mut frame = protocol::push_head(id, 10).to_vec();
        protocol::put_f64s(&mut frame, &series(10));
        s.write_all(&frame[..frame.len() - 3]).unwrap();
        s.half_close();
        let e = protocol::read_reply(&mut s, 1 << 20).unwrap().unwrap_err();
        assert!(e.contains("truncated frame body"), "{e}");
        assert!(closed_by_server(&mut s));
        wait_for(|| server.shared.streams() == 1);
        // A push whose counts disagree with its length is refused whole; the connection goes on.
        let mut s = server.raw();
        let id = u64::from_le_bytes(exchange(&mut s, &open).unwrap().try_into().unwrap());
        let mut bad = protocol::push_head(id, 3).to_vec();
        protocol::put_f64s(&mut bad, &[100.0, 101.0]);
        bad[..4].copy_from_slice(&(17u32 + 16).to_le_bytes());
        let e = exchange(&mut s, &bad).unwrap_err();
        assert!(e.contains(&format!("opcode {OP_STREAM_PUSH}")), "{e}");
        assert_serves(&mut s);
        other.push(kept, &series(50), &mut Vec::new()).unwrap();
    }
}

#[test]
fn a_push_whose_reply_could_pass_the_frame_limit_is_refused() {
    for t in Transport::UNIX_AND_SHM {
        let server = t.start(Config {
            max_frame: 4 << 20,
            ..small_config()
        });
        let mut c = server.client();
        // 65,536 combos (the default limit) x 520 bars could reverse 34 million times: 2.2 GB of
        // records, past the 2^31 - 1 bytes a frame can carry, from a 4 KB request.
        let params: Vec<Combo> = hullsweep_kernel::default_params()
            .into_iter()
            .cycle()
            .take(65_536)
            .collect();
        let id = c.open_stream(&params, DEFAULT_FEE_PCT).unwrap();
        let e = server_error(c.push(id, &series(520), &mut Vec::new()));
        assert!(e.contains("frame limit") && e.contains("fewer bars"), "{e}");
        let mut events = Vec::new();
        assert_eq!(c.push(id, &series(3), &mut events).unwrap(), 3);
        assert_eq!(c.stream_state(id).unwrap().bars, 3);
    }
}
