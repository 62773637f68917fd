//! The stalled-client attack: 200 clients each declare a 256 MiB frame, send 4 KiB and stall.
//! Memory follows the bytes received, an honest client is served during the attack, and every
//! stalled slot is free again once the read timeout has passed. Alone in its binary, so the
//! process's peak RSS is this server's and this test's only.
//!
//! Over a Unix socket, then shared memory, one after the other (never at once: the peak RSS
//! it checks is the whole process's).

mod common;

use common::*;
use hullsweep_engine::Config;
use hullsweep_engine::protocol::{self, DEFAULT_MAX_FRAME, OP_ECHO};
use std::io::Write;
use std::time::{Duration, Instant};

const STALLED: usize = 200;
const SENT: usize = 4096;
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// `VmHWM` (peak resident set) or `VmRSS` from /proc/self/status, in MiB.
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kib: f64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib / 1024.0
}

/// Four descriptors per connection on the server side and one here: lift a 1024 soft limit.
fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    let want = lim.maximum.map_or(4096, |m| m.min(4096));
    if lim.current.is_some_and(|c| c < want) {
        lim.current = Some(want);
        setrlimit(Resource::Nofile, lim).unwrap();
    }
}

#[test]
fn stalled_clients_cost_little_and_give_their_slots_back() {
    raise_fd_limit();
    for t in Transport::UNIX_AND_SHM {
        attack(t);
    }
}

fn attack(t: Transport) {
    let server = t.start(Config {
        max_frame: DEFAULT_MAX_FRAME,
        read_timeout: READ_TIMEOUT,
        ..small_config()
    });
    // A frame just under 256 MiB: the header of an echo, then the first 4 KiB of its body.
    let len = DEFAULT_MAX_FRAME - 1;
    let mut attack = len.to_le_bytes().to_vec();
    attack.push(OP_ECHO);
    attack.extend_from_slice(&((len - 9) / 8).to_le_bytes());
    attack.extend_from_slice(&0u32.to_le_bytes());
    attack.resize(4 + SENT, 0);
    let mut stalled: Vec<_> = (0..STALLED)
        .map(|_| {
            let mut s = server.raw();
            s.write_all(&attack).unwrap();
            s
        })
        .collect();
    let attacked = Instant::now();
    // Every stalled frame is under way once the server holds a buffer for each.
    let deadline = attacked + TIMEOUT;
    while server.shared.connections() < STALLED
        || server.shared.inflight_bytes() < (STALLED * SENT) as u64
    {
        assert!(Instant::now() < deadline, "the attack never landed");
        std::thread::sleep(Duration::from_millis(5));
    }
    let held = server.shared.inflight_bytes();
    assert!(attacked.elapsed() < READ_TIMEOUT, "setup too slow to test");

    // An honest client, connecting during the attack, gets the exact answer within 1 s.
    let start = Instant::now();
    let mut honest = server.client();
    let got = honest.sweep(&series(1500), &combos()).unwrap();
    let answered = start.elapsed();
    let want = hullsweep_kernel::sweep(&series(1500), &combos(), 0.09).unwrap();
    assert_eq!(bits(&got.pnl), bits(&want.pnl));
    assert_eq!(got.trades, want.trades);
    assert!(
        answered < Duration::from_secs(1),
        "answered in {answered:?}"
    );
    drop(honest);

    let rss = status_mib("VmRSS:");
    let peak = status_mib("VmHWM:");
    assert!(peak < 300.0, "peak RSS {peak:.1} MiB under attack");

    // After the read timeout every stalled slot comes back, each told why.
    let deadline = attacked + READ_TIMEOUT + Duration::from_secs(1);
    while server.shared.connections() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} slots still held {:?} after the attack",
            server.shared.connections(),
            attacked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let recovered = attacked.elapsed();
    assert!(
        recovered >= READ_TIMEOUT,
        "freed before the timeout: {recovered:?}"
    );
    assert_eq!(server.shared.inflight_bytes(), 0);
    for s in &mut stalled {
        let msg = protocol::read_reply(s, 1 << 20).unwrap().unwrap_err();
        assert!(msg.contains("read timeout"), "{msg}");
        assert!(closed_by_server(s));
    }
    assert_serves(&mut server.raw());
    eprintln!(
        "stalled over {t:?}: {STALLED} clients x {SENT} B of a {len} B frame: server buffers \
         {:.1} MiB, process RSS {rss:.1} MiB (peak {peak:.1} MiB); honest sweep answered in \
         {:.1} ms; all slots free {:.2} s after the attack (read timeout {} s)",
        held as f64 / (1 << 20) as f64,
        answered.as_secs_f64() * 1e3,
        recovered.as_secs_f64(),
        READ_TIMEOUT.as_secs_f64()
    );
}
