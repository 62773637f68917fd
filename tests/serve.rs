//! `hullsweep serve` as a process: the listening line, socket mode 0600, clean SIGTERM/SIGINT
//! shutdown that removes the socket, TCP on a free loopback port, and the stdio transport.

use hullsweep_engine::Client;
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
