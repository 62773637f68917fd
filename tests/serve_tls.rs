//! `hullsweep tls-cert` and `hullsweep serve --tls-cert/--tls-key` as processes: a certificate
//! made by the CLI serves a verified, bit-identical sweep beyond loopback (by CA and by pin), and
//! a bind beyond loopback without TLS needs --insecure-plaintext and warns when given it.

use hullsweep_engine::{Client, TlsConnector};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_hullsweep");
const TOKEN: &str = "a token of more than sixteen bytes";

/// A spawned server, killed when the test ends. Its stderr stays open (the server's later
/// lines would otherwise hit a closed pipe).
struct Proc {
    child: Child,
    _stderr: BufReader<ChildStderr>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `hullsweep serve ARGS`; returns it, its port and its first stderr line.
fn serve(args: &[&str]) -> (Proc, u16, String) {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        .args(["--variant", "reference"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let port = line.trim_end().rsplit(':').next().unwrap().parse().unwrap();
    let mut stderr = BufReader::new(stderr);
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let proc = Proc {
        child,
        _stderr: stderr,
    };
    (proc, port, first)
}

fn token_file(dir: &Path) -> String {
    let path = dir.join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_str().unwrap().to_string()
}

fn check_sweep(c: &mut Client) {
    c.set_timeout(Some(Duration::from_secs(30))).unwrap();
    c.hello(TOKEN.as_bytes()).unwrap();
    let close = hullsweep_kernel::default_close()[..2000].to_vec();
    let params = [[20, 10, 4, 20, 10, 6], [9, 4, 3, 9, 4, 3]];
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let got = c.sweep(&close, &params).unwrap();
    assert_eq!(got.trades, want.trades);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got.pnl), bits(&want.pnl));
}

#[test]
fn a_cli_made_certificate_serves_tls_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let tls = dir.path().join("tls");
    let out = Command::new(BIN)
        .args(["tls-cert", "--out"])
        .arg(&tls)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let key_mode = std::fs::metadata(tls.join("key.pem"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(key_mode & 0o777, 0o600, "key.pem mode {key_mode:o}");
    // Never replaces what is there.
    let again = Command::new(BIN)
        .args(["tls-cert", "--out"])
        .arg(&tls)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        !again.status.success() && err.contains("already exists"),
        "{err}"
    );

    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    let token = token_file(dir.path());
    let (_server, port, line) = serve(&[
        "--tcp",
        "0.0.0.0:0",
        "--token-file",
        &token,
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    // The fingerprint the server announces is the one tls-cert printed: what clients pin.
    let sha = line
        .split("sha256 ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert!(
        line.contains("TLS 1.3") && said.contains(sha),
        "{line} / {said}"
    );
    let by_ca = TlsConnector::with_ca_file(&tls.join("ca.pem")).unwrap();
    for host in ["localhost", "127.0.0.1"] {
        check_sweep(&mut Client::connect_tls(host, port, &by_ca).unwrap());
    }
    let pinned = TlsConnector::with_pinned_cert(&cert).unwrap();
    check_sweep(&mut Client::connect_tls("127.0.0.1", port, &pinned).unwrap());
}

#[test]
fn beyond_loopback_without_tls_needs_insecure_plaintext_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    let out = Command::new(BIN)
        .args(["serve", "--tcp", "0.0.0.0:0", "--token-file", &token])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--insecure-plaintext"),
        "{err}"
    );

    let (_server, port, line) = serve(&[
        "--tcp",
        "0.0.0.0:0",
        "--token-file",
        &token,
        "--insecure-plaintext",
    ]);
    assert!(
        line.contains("warning: --insecure-plaintext") && line.contains("in clear"),
        "{line}"
    );
    check_sweep(&mut Client::connect_tcp(("127.0.0.1", port)).unwrap());
}

#[test]
fn tls_options_are_checked_before_anything_is_bound() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s").to_str().unwrap().to_string();
    let missing = dir.path().join("missing.pem").to_str().unwrap().to_string();
    for (args, says) in [
        (vec!["--tcp", "0", "--tls-cert", &missing], "--tls-key"),
        (
            vec![
                "--unix",
                &sock,
                "--tls-cert",
                &missing,
                "--tls-key",
                &missing,
            ],
            "--unix",
        ),
        (
            vec![
                "--tcp",
                "0",
                "--tls-cert",
                &missing,
                "--tls-key",
                &missing,
                "--insecure-plaintext",
            ],
            "--insecure-plaintext",
        ),
        (
            vec!["--tcp", "0", "--tls-cert", &missing, "--tls-key", &missing],
            "missing.pem",
        ),
    ] {
        let out = Command::new(BIN).arg("serve").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
}
