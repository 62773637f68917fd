//! `hullsweep sweep --connect ADDR` against `hullsweep serve` processes: its stdout, `--out` and
//! `--plot` are byte for byte the local command's over shared memory and a Unix socket, at the
//! server's fee (one batch sweep) and at another (a live stream, in pushes); a stream closed
//! after pushes of any size replies the batch sweep bit for bit; bad input is refused by name.

use hullsweep_engine::Client;
use std::path::Path;
use std::time::{Duration, Instant};

mod common;
use common::{BIN, Server, serve};

fn shm_name(tag: &str) -> String {
    format!("hstest-sweep-{tag}-{}", std::process::id())
}

/// `hullsweep sweep ARGS`: its exit status, stdout bytes and stderr.
fn sweep(args: &[&str]) -> (bool, Vec<u8>, String) {
    let out = assert_cmd::Command::new(BIN)
        .arg("sweep")
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.success(), out.stdout, err)
}

fn data_file(dir: &Path, bars: usize) -> String {
    let path = dir.join("close.npy");
    let close = hullsweep_kernel::gbm(bars, 11, 0.004).unwrap();
    hullsweep_data::write_f64_npy(&path, &close).unwrap();
    path.to_str().unwrap().to_string()
}

/// Runs `sweep ARGS` here and with `--connect` on each server; every output is the local one,
/// and stderr names the route the engine took.
fn same_as_local(args: &[&str], servers: &[&Server], route: &str) {
    let local = sweep(args);
    assert!(local.0 && local.1.len() > 100, "{args:?}: {}", local.2);
    for server in servers {
        let remote = sweep(&[args, &["--connect", &server.address]].concat());
        assert!(remote.0, "{args:?} on {}: {}", server.address, remote.2);
        assert!(
            remote.1 == local.1,
            "{args:?}: output over {} differs",
            server.address
        );
        assert!(remote.2.contains(route), "{args:?}: {}", remote.2);
    }
}

#[test]
fn connect_prints_the_local_bytes_over_shm_and_unix_at_any_fee_in_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_file(dir.path(), 20_000);
    let shm = serve(&["--shm", &shm_name("fees"), "--variant", "rolling"]);
    let sock = dir.path().join("e.sock");
    let unix = serve(&["--unix", sock.to_str().unwrap(), "--variant", "simd"]);
    let both = [&shm, &unix];
    for format in ["csv", "json"] {
        let base = ["--data", &data, "--grid", "6:120:12", "--format", format];
        // The server's fee (its default): one batch sweep.
        same_as_local(&base, &both, "(one batch sweep)");
        // Another fee, and a rebate: a live stream at that fee.
        for fee in ["0.05", "-0.02"] {
            same_as_local(&[&base[..], &["--fee", fee]].concat(), &both, "live stream");
        }
    }
    // A two-axis grid over the built-in series.
    let grid = ["--grid", "6:60:4", "--grid3", "8:90:5", "--fee", "0"];
    same_as_local(&grid, &both, "live stream");
    // A server started at another fee serves that fee in one batch, and the default by stream.
    let other = serve(&["--shm", &shm_name("other"), "--fee", "0.05"]);
    let base = ["--data", &data, "--grid", "6:120:12"];
    same_as_local(
        &[&base[..], &["--fee", "0.05"]].concat(),
        &[&other],
        "batch",
    );
    same_as_local(&base, &[&other], "live stream");
}

#[test]
fn connect_writes_out_and_plot_files_as_the_local_command_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_file(dir.path(), 5_000);
    let sock = dir.path().join("e.sock");
    let unix = serve(&["--unix", sock.to_str().unwrap()]);
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let base = ["--data", &data, "--grid", "6:60:6", "--grid3", "6:60:6"];
    for (extra, fee, ext) in [
        (["--out"], "0.09", "csv"),
        (["--plot"], "0.09", "svg"),
        (["--plot"], "0.3", "svg"),
    ] {
        let (local, remote) = (
            file(&format!("local.{ext}")),
            file(&format!("remote.{ext}")),
        );
        let args = [&base[..], &["--fee", fee, extra[0]]].concat();
        let here = sweep(&[&args[..], &[local.as_str()]].concat());
        let there = sweep(&[&args[..], &[&remote, "--connect", &unix.address]].concat());
        assert!(here.0 && there.0, "{extra:?}: {} / {}", here.2, there.2);
        assert_eq!(there.1, here.1, "{extra:?}: stdout");
        let (a, b) = (
            std::fs::read(&local).unwrap(),
            std::fs::read(&remote).unwrap(),
        );
        assert!(a.len() > 100 && a == b, "{extra:?} {fee}: files differ");
    }
    // --plot --metric trades is served too; a metric column is not.
    let svg = file("t.svg");
    let ok = sweep(&[&base[..], &["--plot", &svg, "--metric", "trades"]].concat());
    let remote = [&base[..], &["--plot", &svg, "--metric", "trades"]].concat();
    let there = sweep(&[&remote[..], &["--connect", &unix.address]].concat());
    assert!(ok.0 && there.0 && ok.1 == there.1, "{}", there.2);
}

/// The claim the stream route rests on: a stream's close (opcode 10) replies the batch sweep of
/// the bars pushed, bit for bit, however they were split. Every gate dataset (NaN runs, flats,
/// both ends of the f64 range, windows longer than the series) at its own fee, in pushes of
/// uneven sizes, against the kernel and the server's own batch sweep.
#[test]
fn a_stream_closed_after_pushes_of_any_size_replies_the_batch_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("e.sock");
    let server = serve(&["--unix", sock.to_str().unwrap()]);
    let mut c = Client::connect_unix(&sock).unwrap();
    c.set_timeout(Some(Duration::from_secs(60))).unwrap();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let sizes = [1, 2, 3, 5, 8, 13, 997, 4096, 65_536];
    for (k, d) in hullsweep_data::datasets::suite().iter().enumerate() {
        let want = hullsweep_kernel::sweep(&d.close, &d.params, d.fee).unwrap();
        // Pushes cycling through the sizes from two offsets, then the whole series at once.
        for split in [Some(k), Some(k + 4), None] {
            let mut next = sizes.iter().cycle().skip(split.unwrap_or(0));
            let id = c.open_stream(&d.params, d.fee).unwrap();
            let (mut at, mut events) = (0, Vec::new());
            while at < d.close.len() {
                let n = match split {
                    Some(_) => *next.next().unwrap(),
                    None => d.close.len(),
                };
                let end = d.close.len().min(at + n);
                c.push(id, &d.close[at..end], &mut events).unwrap();
                at = end;
            }
            let got = c.close_stream(id).unwrap();
            assert_eq!(got.trades, want.trades, "{} split {split:?}", d.name);
            assert_eq!(
                bits(&got.pnl),
                bits(&want.pnl),
                "{} split {split:?}",
                d.name
            );
        }
        if d.fee == hullsweep_kernel::DEFAULT_FEE_PCT {
            let batch = c.sweep(&d.close, &d.params).unwrap();
            assert_eq!(bits(&batch.pnl), bits(&want.pnl), "{}", d.name);
        }
    }
    drop(server);
}

/// A server whose --max-inflight cannot take the first push refuses it (`push fewer bars at
/// once`, nothing applied); the client halves its pushes until they fit, and the output holds.
#[test]
fn pushes_too_large_for_the_servers_budget_are_halved_until_they_fit() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_file(dir.path(), 30_000);
    let server = serve(&["--shm", &shm_name("budget"), "--max-inflight", "2000000"]);
    let args = ["--data", &data, "--fee", "0.02"];
    same_as_local(&args, &[&server], "live stream");
    let (_, _, err) = sweep(&[&args[..], &["--connect", &server.address]].concat());
    // 80 combos at about 300 bytes each per bar: 2 MB takes under 100 bars a push, where the
    // client starts at 2,621 (12 pushes).
    let pushes: usize = err
        .split("a live stream of ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(pushes >= 30_000 / 100, "{pushes} pushes: {err}");
}

#[test]
fn connect_refuses_bad_addresses_missing_servers_and_local_only_flags() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone.sock");
    let gone = format!("unix:{}", gone.display());
    for (address, says) in [
        ("udp:1.2.3.4:5", "unknown scheme \"udp\""),
        ("tls:localhost:7070", "TLS runs over tcp:HOST:PORT"),
        ("shm:a/b", "contains '/'"),
        ("tcp:localhost", "expected tcp:HOST:PORT"),
        ("shm:no-such-engine-here", "no shared-memory server named"),
        (gone.as_str(), "no engine listens there"),
        ("tcp:127.0.0.1:1", "no engine listens there"),
    ] {
        let start = Instant::now();
        let (ok, out, err) = sweep(&["--connect", address]);
        let took = start.elapsed();
        assert!(
            !ok && out.is_empty() && err.contains(says),
            "{address}: {err}"
        );
        assert!(took < Duration::from_secs(1), "{address}: {took:?}");
    }
    let sock = dir.path().join("e.sock");
    let server = serve(&["--unix", sock.to_str().unwrap()]);
    let svg = dir.path().join("p.svg");
    let svg = svg.to_str().unwrap();
    for (flags, says) in [
        (
            vec!["--metrics"],
            "--metrics (the metric columns) cannot be used with --connect",
        ),
        (vec!["--stats"], "--stats cannot be used with --connect"),
        (
            vec!["--variant", "simd"],
            "--variant cannot be used with --connect",
        ),
        (
            vec!["--threads", "2"],
            "--threads cannot be used with --connect",
        ),
        (
            vec!["--plot", svg, "--metric", "wins"],
            "--metric wins cannot",
        ),
        (
            vec!["--tls-ca", "ca.pem"],
            "--tls-ca ca.pem: TLS wraps a tcp:HOST:PORT",
        ),
        (vec!["--fee", "inf"], "fee"),
    ] {
        let (ok, out, err) = sweep(&[&flags[..], &["--connect", &server.address]].concat());
        assert!(
            !ok && out.is_empty() && err.contains(says),
            "{flags:?}: {err}"
        );
    }
    // A TLS flag without --connect is a usage error.
    let (ok, _, err) = sweep(&["--tls-ca", "ca.pem"]);
    assert!(!ok && err.contains("--connect"), "{err}");
}
