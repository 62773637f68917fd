//! A request of any size crosses the shared-memory transport: one batch sweep (opcode 0) of
//! 1e8 bars, an 800 MB frame through rings of 1 MiB, gives the local streamed sweep's bits.
//!
//! Slow and large (about 2.5 GB at once: the series here, the server's copy and the `rolling`
//! variant's prepared series), so `#[ignore]`d; `scripts/test` runs it in release mode:
//! `cargo test --release -p hullsweep --test shm_large -- --ignored --nocapture`.

use hullsweep_engine::Client;
use hullsweep_engine::shm::WaitPolicy;
use hullsweep_kernel::{DEFAULT_FEE_PCT, DEFAULT_SEED};
use hullsweep_variants::{Sweeper, Threads, Variant};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hullsweep");
const BARS: usize = 100_000_000;
const SIGMA: f64 = 3e-4;
const NEEDED_GIB: u64 = 4;

/// A field of /proc/meminfo or /proc/PID/status, in KiB.
fn kib(file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn gib(kib: u64) -> f64 {
    kib as f64 / (1u64 << 20) as f64
}

#[test]
#[ignore = "1e8 bars, about 2.5 GB: run by scripts/test in release mode"]
fn a_batch_sweep_of_1e8_bars_crosses_the_shm_rings_bit_for_bit() {
    let available = kib("/proc/meminfo", "MemAvailable:").unwrap_or(0);
    if available < NEEDED_GIB << 20 {
        eprintln!(
            "skipped: MemAvailable is {:.1} GiB, under the {NEEDED_GIB} GiB this test needs",
            gib(available)
        );
        return;
    }
    let t0 = Instant::now();
    // A sigma whose 1e8 bars stay within a factor of 40 of the start: `rolling` certifies every
    // bar of it. (At the default 0.001 the price falls to 1e-17 and one bar falls back to the
    // reference's arithmetic, which `rolling` then computes over whole-series arrays: 5.7 GB
    // more and ten times the time, in any process, so not the transport's cost.)
    let close = hullsweep_kernel::gbm(BARS, DEFAULT_SEED, SIGMA).unwrap();
    let params = [[200, 100, 14, 200, 100, 67]];
    let generated = t0.elapsed();

    // The local sweep as `hullsweep sweep --data` runs it: streamed in 256 Ki-bar chunks, so it
    // holds no second copy of the series.
    let t1 = Instant::now();
    let mut local = Sweeper::new(
        &params,
        DEFAULT_FEE_PCT,
        Variant::Rolling,
        Threads::Fixed(1),
    )
    .unwrap();
    for chunk in close.chunks(1 << 18) {
        local.push(chunk).unwrap();
    }
    let want = local.finish().unwrap();
    let swept_here = t1.elapsed();

    let name = format!("hstest-large-{}", std::process::id());
    let mut server = Command::new(BIN)
        .args([
            "serve",
            "--shm",
            &name,
            "--variant",
            "rolling",
            "--threads",
            "1",
        ])
        .args(["--max-frame", "1000000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim_end(), format!("listening shm {name}"));
    let mut c = Client::connect_shm(&name, WaitPolicy::default()).unwrap();
    c.set_timeout(Some(Duration::from_secs(300))).unwrap();
    let t2 = Instant::now();
    let got = c.sweep(&close, &params);
    let remote = t2.elapsed();
    let status = format!("/proc/{}/status", server.id());
    let server_peak = kib(&status, "VmHWM:").unwrap_or(0);
    // SIGTERM, so the server removes its rendezvous socket.
    let pid = rustix::process::Pid::from_child(&server);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert!(server.wait().unwrap().success());
    let got = got.unwrap();

    assert_eq!(got.trades, want.trades);
    assert_eq!(got.pnl[0].to_bits(), want.pnl[0].to_bits());
    assert!(want.trades[0] > 1000, "{want:?}");
    eprintln!(
        "1e8 bars ({} MB) over shm: {} trades, pnl {}; generated in {:.1} s, swept here (rolling, \
         streamed) in {:.1} s, over shm (send, validate, sweep, reply) in {:.1} s; peak RSS: \
         this test {:.2} GiB, the server {:.2} GiB",
        BARS * 8 / 1_000_000,
        got.trades[0],
        got.pnl[0],
        generated.as_secs_f64(),
        swept_here.as_secs_f64(),
        remote.as_secs_f64(),
        gib(kib("/proc/self/status", "VmHWM:").unwrap_or(0)),
        gib(server_peak),
    );
}
