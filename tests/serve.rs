//! `hullsweep serve` as a process: the listening line, socket mode 0600, clean SIGTERM/SIGINT
//! shutdown that removes the socket, TCP on a free loopback port, the stdio transport, and live
//! streams replaying gate datasets bar by bar, every event the kernel's.

use hullsweep_engine::Client;
use hullsweep_kernel::{Event, Trade};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hullsweep");

/// A spawned server, killed if a test fails before it exits on its own.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl Proc {
    fn spawn(args: &[&str]) -> (Proc, String) {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let proc = Proc(child);
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        assert!(line.starts_with("listening "), "{line:?}");
        (proc, line.trim_end().to_string())
    }

    fn signal(&self, sig: rustix::process::Signal) {
        rustix::process::kill_process(rustix::process::Pid::from_child(&self.0), sig).unwrap();
    }

    /// Waits (bounded) for the exit status.
    fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn check_sweep(c: &mut Client) {
    let close = hullsweep_kernel::default_close()[..2000].to_vec();
    let params = [[20, 10, 4, 20, 10, 6], [9, 4, 3, 9, 4, 3]];
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let got = c.sweep(&close, &params).unwrap();
    assert_eq!(got.trades, want.trades);
    assert!(
        got.pnl
            .iter()
            .zip(&want.pnl)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

#[test]
fn unix_socket_is_0600_and_removed_on_sigterm_and_sigint() {
    for sig in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.sock");
        let (mut proc, line) =
            Proc::spawn(&["--unix", path.to_str().unwrap(), "--variant", "reference"]);
        assert_eq!(line, format!("listening unix {}", path.display()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");
        let mut c = Client::connect_unix(&path).unwrap();
        c.set_timeout(Some(Duration::from_secs(30))).unwrap();
        check_sweep(&mut c);
        // An open, idle connection must not hold shutdown up.
        proc.signal(sig);
        assert!(proc.wait().success());
        assert!(!path.exists(), "socket left behind after {sig:?}");
    }
}

#[test]
fn tcp_port_zero_prints_the_port_and_binds_loopback() {
    let (mut proc, line) = Proc::spawn(&["--tcp", "0", "--variant", "reference"]);
    let addr: std::net::SocketAddr = line
        .strip_prefix("listening tcp ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    let mut c = Client::connect_tcp(addr).unwrap();
    c.set_timeout(Some(Duration::from_secs(30))).unwrap();
    check_sweep(&mut c);
    proc.signal(rustix::process::Signal::TERM);
    assert!(proc.wait().success());
}

/// Beyond loopback only with a token: refused without one, and with one every connection must
/// say hello first. The wildcard is reached through 127.0.0.1 only.
#[test]
fn a_wildcard_bind_needs_a_token_file() {
    let out = Command::new(BIN)
        .args(["serve", "--tcp", "0.0.0.0:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--token-file"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "a token of more than sixteen bytes\n").unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, "too short\n").unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--stdio", "--token-file"])
        .arg(&short)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("16..=1024 bytes"),
        "{err}"
    );

    let path = token.to_str().unwrap();
    let (mut proc, line) = Proc::spawn(&[
        "--tcp",
        "0.0.0.0:0",
        "--token-file",
        path,
        "--insecure-plaintext",
    ]);
    let port: u16 = line.rsplit(':').next().unwrap().parse().unwrap();
    let mut c = Client::connect_tcp(("127.0.0.1", port)).unwrap();
    c.set_timeout(Some(Duration::from_secs(30))).unwrap();
    // The file's trailing newline is not part of the token.
    c.hello(b"a token of more than sixteen bytes").unwrap();
    check_sweep(&mut c);
    let mut stranger = Client::connect_tcp(("127.0.0.1", port)).unwrap();
    stranger.set_timeout(Some(Duration::from_secs(30))).unwrap();
    assert!(stranger.echo(&[1.0]).is_err());
    proc.signal(rustix::process::Signal::TERM);
    assert!(proc.wait().success());
}

#[test]
fn stdio_serves_one_session_and_exits_at_end_of_input() {
    let mut c = Client::spawn_stdio(BIN, ["serve", "--stdio", "--variant", "reference"]).unwrap();
    check_sweep(&mut c);
    assert_eq!(c.echo(&[1.0, 2.0]).unwrap(), [1.0, 2.0]);
    let id = c.load(&[1.0, 2.0, 3.0]).unwrap();
    assert!(c.sweep_loaded(id, &[[1, 1, 1, 1, 1, 1]]).is_ok());
    match c.sweep(&[1.0, 0.0], &[]) {
        Err(hullsweep_engine::ClientError::Server(m)) => assert!(m.contains("bad price 0")),
        other => panic!("{other:?}"),
    }
    drop(c); // closes stdin and waits for the child
}

#[test]
fn bad_options_are_refused_with_a_message() {
    for args in [
        vec!["serve"],
        vec!["serve", "--stdio", "--max-frame", "4294967295"],
        vec!["serve", "--stdio", "--fee", "nan"],
        vec!["serve", "--tcp", "not-an-address"],
        vec!["serve", "--stdio", "--variant", "nope"],
        vec!["serve", "--tcp", "0.0.0.0:0"],
        vec!["serve", "--stdio", "--read-timeout", "0"],
        vec!["serve", "--stdio", "--idle-timeout", "-1"],
        vec!["serve", "--stdio", "--token-file", "/nonexistent/token"],
        vec!["serve", "--stdio", "--max-streams", "0"],
        vec!["serve", "--stdio", "--max-stream-combos", "0"],
        vec!["serve", "--stdio", "--max-stream-combos", "100000000"],
        vec!["serve", "--stdio", "--max-streams-per-connection", "-1"],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(!out.stderr.is_empty(), "{args:?} gave no message");
    }
}

#[test]
fn a_second_server_on_a_live_socket_says_a_server_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.sock");
    let p = path.to_str().unwrap();
    let (mut first, _) = Proc::spawn(&["--unix", p, "--variant", "reference"]);
    let out = Command::new(BIN)
        .args(["serve", "--unix", p])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("a live server is listening"), "{stderr}");
    // The first server was left alone: its socket is still there and answers.
    let mut c = Client::connect_unix(&path).unwrap();
    check_sweep(&mut c);
    drop(c);
    first.signal(rustix::process::Signal::TERM);
    assert!(first.wait().success());
    // Once it is gone, a new server may take the path.
    let (mut second, _) = Proc::spawn(&["--unix", p, "--variant", "reference"]);
    second.signal(rustix::process::Signal::TERM);
    assert!(second.wait().success());
}

/// The kernel's events of every combo in a stream's order: by bar, combos ascending, a close
/// before its open (`backtest_events`, sorted stably).
fn kernel_events(close: &[f64], params: &[hullsweep_kernel::Combo], fee: f64) -> Vec<Event> {
    use hullsweep_kernel::{backtest_events, hma, hma3, window};
    let mut all = Vec::new();
    for (k, c) in params.iter().enumerate() {
        let [n, h, s, m, h3, t] = c.map(window);
        let (a, b) = (hma(close, n, h, s), hma3(close, m, h3, t));
        backtest_events(close, &a, &b, fee, k, |e| all.push(e));
    }
    all.sort_by_key(|e| (e.bar(), e.combo()));
    all
}

/// Every event and the final result of a gate dataset replayed one bar per push, as the kernel's.
fn replay_bar_by_bar(c: &mut Client, name: &str, close: &[f64], params: &[[i64; 6]], fee: f64) {
    let want = kernel_events(close, params, fee);
    let id = c.open_stream(params, fee).unwrap();
    let mut got = Vec::with_capacity(want.len());
    for (i, &bar) in close.iter().enumerate() {
        let before = got.len();
        assert_eq!(c.push(id, &[bar], &mut got).unwrap(), i as u64 + 1);
        assert!(
            got[before..].iter().all(|e| e.bar() == i as u64),
            "{name} bar {i}"
        );
    }
    assert_eq!(got.len(), want.len(), "{name}: events");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same(&want[i])) {
        panic!("{name}: event {i} differs: {:?} != {:?}", got[i], want[i]);
    }
    let combos: Vec<usize> = (0..params.len()).collect();
    let valid = hullsweep_kernel::ValidClose::new(close).unwrap();
    let trades = hullsweep_kernel::trades(valid, params, fee, &combos).unwrap();
    let mut closed: Vec<Trade> = got
        .iter()
        .filter_map(|e| match e {
            Event::Close(t) => Some(*t),
            Event::Open { .. } => None,
        })
        .collect();
    closed.sort_by_key(|t| t.combo);
    assert_eq!(closed.len(), trades.len(), "{name}: trades");
    assert!(closed.iter().zip(&trades).all(|(a, b)| a.same(b)), "{name}");
    let result = c.close_stream(id).unwrap();
    let batch = hullsweep_kernel::sweep(close, params, fee).unwrap();
    assert_eq!(result.trades, batch.trades, "{name}");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&result.pnl), bits(&batch.pnl), "{name}");
}

/// The default series' first 20,000 bars with its 80 combos, and the dataset of NaN runs, pushed
/// one bar at a time to `hullsweep serve` over its Unix socket and over TCP.
#[test]
fn live_streams_replay_gate_datasets_bar_by_bar_over_unix_and_tcp() {
    let suite = hullsweep_data::datasets::suite();
    let by = |n: &str| suite.iter().find(|d| d.name == n).unwrap();
    let (default, nan_runs) = (by("default"), by("nan_runs"));
    assert!(nan_runs.close.iter().any(|c| c.is_nan()));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.sock");
    let limits = ["--max-stream-combos", "80", "--max-streams", "4"];
    let (mut unix, _) = Proc::spawn(&[&["--unix", path.to_str().unwrap()][..], &limits].concat());
    let (mut tcp, line) = Proc::spawn(&[&["--tcp", "0"][..], &limits].concat());
    let addr = line.strip_prefix("listening tcp ").unwrap().to_string();
    for mut c in [
        Client::connect_unix(&path).unwrap(),
        Client::connect_tcp(addr.as_str()).unwrap(),
    ] {
        c.set_timeout(Some(Duration::from_secs(30))).unwrap();
        let d = &default.close[..20_000];
        replay_bar_by_bar(&mut c, "default[..20000]", d, &default.params, default.fee);
        let n = &nan_runs;
        replay_bar_by_bar(&mut c, "nan_runs", &n.close, &n.params, n.fee);
        // The server's limit, set by flag, is enforced.
        let more = [default.params.clone(), default.params.clone()].concat();
        let e = c.open_stream(&more, 0.09).unwrap_err().to_string();
        assert!(e.contains("limit of 80 combos"), "{e}");
    }
    for p in [&mut unix, &mut tcp] {
        p.signal(rustix::process::Signal::TERM);
        assert!(p.wait().success());
    }
}

/// `hullsweep stream ARGS` on `input`: its exit status, stdout and stderr.
fn stream(args: &[&str], input: &str) -> (bool, String, String) {
    let out = assert_cmd::Command::new(BIN)
        .arg("stream")
        .args(args)
        .write_stdin(input)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn stream_connect_prints_what_the_local_stream_prints_over_shm_and_unix() {
    let name = format!("hstest-cli-{}", std::process::id());
    let (_shm, line) = Proc::spawn(&["--shm", &name, "--variant", "reference"]);
    assert_eq!(line, format!("listening shm {name}"));
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("e.sock");
    let (_unix, _) = Proc::spawn(&["--unix", sock.to_str().unwrap()]);
    let close = hullsweep_kernel::gbm(3000, 7, 0.002).unwrap();
    let mut input: String = close.iter().map(|v| format!("{v}\n")).collect();
    input.insert_str(input.len() / 2, "\nabc\n-1\n");
    let args = ["--grid", "10:60:6", "--skip-bad", "--fee", "0.05"];
    let local = stream(&args, &input);
    assert!(local.0 && local.1.lines().count() > 20, "{local:?}");
    for address in [format!("shm:{name}"), format!("unix:{}", sock.display())] {
        let remote = stream(&[&args[..], &["--connect", &address]].concat(), &input);
        assert_eq!(remote, local, "over {address}");
    }
    // Without --skip-bad both stop at the same line with the same message.
    let strict = ["--grid", "10:60:6"];
    let local = stream(&strict, &input);
    let remote = stream(
        &[&strict[..], &["--connect", &format!("shm:{name}")]].concat(),
        &input,
    );
    assert!(!local.0 && local.2.contains("is not a price"), "{local:?}");
    assert_eq!(remote, local);
}

#[test]
fn stream_connect_names_a_bad_address_or_a_missing_server() {
    for (address, why) in [
        ("udp:1:2", "unknown scheme \"udp\""),
        ("shm:a/b", "contains '/'"),
        ("shm:no-such-engine-here", "no shared-memory server named"),
    ] {
        let (ok, _, err) = stream(&["--connect", address], "100\n");
        assert!(!ok && err.contains(why), "{address}: {err}");
    }
}
