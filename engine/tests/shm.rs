//! The engine over shared memory: every opcode's reply bit-identical to the Unix socket's, many
//! clients at once, a killed client's slot back within a second, and bad names and missing
//! servers named at once.

mod common;

use common::{Running, TIMEOUT, bits, combos, series, small_config};
use hullsweep_engine::Client;
use hullsweep_engine::shm::WaitPolicy;
use std::process::Command;
use std::time::{Duration, Instant};

/// Every call a client makes, over `c`: what it returns, as bits, for comparing transports.
fn session(c: &mut Client) -> Vec<String> {
    let (close, params) = (series(3000), combos());
    let mut out = Vec::new();
    let r = c.sweep(&close, &params).unwrap();
    out.push(format!("sweep {:?} {:?}", bits(&r.pnl), r.trades));
    out.push(format!("echo {:?}", bits(&c.echo(&close).unwrap())));
    let id = c.load(&close).unwrap();
    let r = c.sweep_loaded(id, &params).unwrap();
    out.push(format!("loaded {:?} {:?}", bits(&r.pnl), r.trades));
    c.drop_series(id).unwrap();
    out.push(format!(
        "dropped {:?}",
        c.sweep_loaded(id, &params).err().map(|e| e.to_string())
    ));
    let stream = c.open_stream(&params, 0.09).unwrap();
    let mut events = Vec::new();
    for chunk in close.chunks(700) {
        c.push(stream, chunk, &mut events).unwrap();
    }
    out.push(format!("events {events:?}"));
    out.push(format!("state {:?}", c.stream_state(stream).unwrap()));
    let r = c.close_stream(stream).unwrap();
    out.push(format!("closed {:?} {:?}", bits(&r.pnl), r.trades));
    out.push(format!(
        "bad {:?}",
        c.sweep(&[], &params).err().map(|e| e.to_string())
    ));
    out
}

#[test]
fn every_opcode_answers_as_over_a_unix_socket() {
    let unix = Running::unix(small_config());
    let want = session(&mut unix.client());
    for policy in [WaitPolicy::Busy, WaitPolicy::default(), WaitPolicy::Event] {
        let shm = Running::shm(hullsweep_engine::Config {
            shm_wait: policy,
            ..small_config()
        });
        let hullsweep_engine::Endpoint::Shm(name) = &shm.endpoint else {
            unreachable!()
        };
        let mut c = Client::connect_shm(name, policy).unwrap();
        c.set_timeout(Some(TIMEOUT)).unwrap();
        assert_eq!(session(&mut c), want, "{policy:?}");
    }
}

#[test]
fn a_series_far_larger_than_the_rings_streams_through() {
    let shm = Running::shm(hullsweep_engine::Config {
        shm_ring_capacity: 4096,
        max_frame: 64 << 20,
        ..small_config()
    });
    let mut c = shm.client();
    let close = hullsweep_kernel::gbm(1_000_000, 3, 0.001).unwrap();
    assert_eq!(bits(&c.echo(&close).unwrap()), bits(&close));
}

#[test]
fn thirty_two_clients_at_once() {
    let shm = Running::shm(small_config());
    let want = hullsweep_kernel::sweep(&series(1500), &combos(), 0.09).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..32)
            .map(|_| {
                let mut c = shm.client();
                s.spawn(move || c.sweep(&series(1500), &combos()).unwrap())
            })
            .collect();
        for h in handles {
            let got = h.join().unwrap();
            assert_eq!(bits(&got.pnl), bits(&want.pnl));
        }
    });
}

const CHILD_NAME: &str = "HULLSWEEP_TEST_SHM_CHILD";

/// The other process of `a_killed_client_frees_its_slot_within_a_second`: connects, sends half
/// a frame and waits to be killed. Does nothing in a normal run.
#[test]
fn child_client_that_hangs_mid_request() {
    let Ok(name) = std::env::var(CHILD_NAME) else {
        return;
    };
    let mut c = Client::connect_shm(&name, WaitPolicy::Event).unwrap();
    let frame = hullsweep_engine::protocol::encode_request(
        hullsweep_engine::protocol::OP_SWEEP,
        &series(1500),
        &combos(),
        None,
    );
    c.send_raw(&frame[..frame.len() / 2]).unwrap();
    println!("sent");
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_killed_client_frees_its_slot_within_a_second() {
    let shm = Running::shm(small_config());
    let hullsweep_engine::Endpoint::Shm(name) = shm.endpoint.clone() else {
        unreachable!()
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_client_that_hangs_mid_request",
            "--nocapture",
        ])
        .env(CHILD_NAME, &name)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + TIMEOUT;
    while shm.shared.connections() == 0 {
        assert!(Instant::now() < deadline, "the child never connected");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Let it get its half frame in, then kill it without a chance to close anything.
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    let killed = Instant::now();
    let _ = child.wait();
    while shm.shared.connections() != 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "the dead client's slot was not freed within a second"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Everyone else is still served.
    let mut c = shm.client();
    assert!(c.sweep(&series(1500), &combos()).is_ok());
}

#[test]
fn bad_names_and_missing_servers_are_named_at_once() {
    let start = Instant::now();
    let e = Client::connect_shm("no-such-server-xyz", WaitPolicy::Event)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("no shared-memory server named \"no-such-server-xyz\""),
        "{e}"
    );
    let e = Client::connect_shm("a/b", WaitPolicy::Event)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("contains '/'"), "{e}");
    let e = Client::connect_shm(&"n".repeat(65), WaitPolicy::Event)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("65 bytes long"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(1));
    // A server name already served is refused, not taken over.
    let shm = Running::shm(small_config());
    let hullsweep_engine::Endpoint::Shm(name) = &shm.endpoint else {
        unreachable!()
    };
    let e = hullsweep_engine::Server::bind_shm(name, small_config())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("refusing to replace it"), "{e}");
}

#[test]
fn a_full_server_refuses_with_its_message() {
    let shm = Running::shm(hullsweep_engine::Config {
        max_connections: 1,
        ..small_config()
    });
    let _first = shm.client();
    let hullsweep_engine::Endpoint::Shm(name) = &shm.endpoint else {
        unreachable!()
    };
    let e = Client::connect_shm(name, WaitPolicy::Event)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("server busy"), "{e}");
}
