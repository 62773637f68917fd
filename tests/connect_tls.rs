//! `--connect tcp:HOST:PORT` with `--tls-ca` or `--tls-pin` (and `--token-file`): `stream` and
//! `sweep` reach a `hullsweep serve --tls-cert/--tls-key` server, verified by the CA that
//! `hullsweep tls-cert` wrote or by pinning its certificate, and print byte for byte what they
//! print locally; a wrong CA, a wrong pin, a missing token or a plaintext client fail by name.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{BIN, Server};

const TOKEN: &str = "a token of more than sixteen bytes";

/// `hullsweep tls-cert --out DIR` (names localhost, 127.0.0.1 and ::1).
fn tls_cert(dir: &Path) -> PathBuf {
    let status = Command::new(BIN)
        .args(["tls-cert", "--out"])
        .arg(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    dir.to_path_buf()
}

/// `hullsweep serve --tcp 127.0.0.1:0` over TLS with `tls`'s certificate and a token.
fn serve(tls: &Path, token: &Path) -> Server {
    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    common::serve(&[
        "--tcp",
        "127.0.0.1:0",
        "--variant",
        "rolling",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--token-file",
        token.to_str().unwrap(),
    ])
}

/// `hullsweep COMMAND ARGS` on `input`: exit status, stdout bytes, stderr.
fn run(command: &str, args: &[&str], input: &str) -> (bool, Vec<u8>, String) {
    let out = assert_cmd::Command::new(BIN)
        .arg(command)
        .args(args)
        .write_stdin(input)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.success(), out.stdout, err)
}

struct Setup {
    dir: tempfile::TempDir,
    server: Server,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let tls = tls_cert(&dir.path().join("tls"));
        let token = dir.path().join("token");
        std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
        let server = serve(&tls, &token);
        Setup { dir, server }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// `--connect tcp:HOST:PORT` with the token and one way of verifying the server.
    fn connect(&self, host: &str, verify: &[&str]) -> Vec<String> {
        let mut args = vec![
            "--connect".to_string(),
            format!("tcp:{host}:{}", self.server.port()),
            "--token-file".to_string(),
            self.path("token"),
        ];
        args.extend(verify.iter().map(|s| s.to_string()));
        args
    }

    /// The two ways: by the CA and the name localhost, by the pin and an IP address.
    fn verified(&self) -> [Vec<String>; 2] {
        let (ca, pin) = (self.path("tls/ca.pem"), self.path("tls/cert.pem"));
        [
            self.connect("localhost", &["--tls-ca", &ca]),
            self.connect("127.0.0.1", &["--tls-pin", &pin]),
        ]
    }
}

fn with<'a>(args: &[&'a str], more: &'a [String]) -> Vec<&'a str> {
    args.iter()
        .copied()
        .chain(more.iter().map(String::as_str))
        .collect()
}

#[test]
fn stream_and_sweep_over_tls_print_the_local_bytes() {
    let s = Setup::new();
    let close = hullsweep_kernel::gbm(2_000, 5, 0.003).unwrap();
    let input: String = close.iter().map(|v| format!("{v}\n")).collect();
    let stream_args = ["--grid", "10:60:6", "--fee", "0.05"];
    let local = run("stream", &stream_args, &input);
    assert!(local.0 && local.1.len() > 1000, "{}", local.2);
    for remote in s.verified() {
        let got = run("stream", &with(&stream_args, &remote), &input);
        assert!(got.0, "{remote:?}: {}", got.2);
        assert!(got.1 == local.1, "stream over TLS {remote:?} differs");
    }
    for (args, route) in [
        (&["--grid", "6:120:10"][..], "one batch sweep"),
        (
            &["--grid", "6:120:10", "--fee", "0.2", "--format", "json"],
            "live stream",
        ),
    ] {
        let local = run("sweep", args, "");
        assert!(local.0, "{}", local.2);
        for remote in s.verified() {
            let got = run("sweep", &with(args, &remote), "");
            assert!(got.0 && got.2.contains(route), "{remote:?}: {}", got.2);
            assert!(
                got.1 == local.1,
                "sweep over TLS {remote:?} {args:?} differs"
            );
        }
    }
}

#[test]
fn a_wrong_ca_pin_token_or_plaintext_client_is_refused_by_name() {
    let s = Setup::new();
    let other = tls_cert(&s.dir.path().join("other"));
    let other_ca = other.join("ca.pem").to_str().unwrap().to_string();
    let other_pin = other.join("cert.pem").to_str().unwrap().to_string();
    let missing = s.path("missing.pem");
    let port = s.server.port().to_string();
    let plain = format!("tcp:127.0.0.1:{port}");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            s.connect("localhost", &["--tls-ca", &other_ca]),
            "TLS: localhost:",
        ),
        (
            s.connect("127.0.0.1", &["--tls-pin", &other_pin]),
            "not the pinned one",
        ),
        (
            s.connect("localhost", &["--tls-ca", &missing]),
            "--tls-ca: CA file",
        ),
        (
            s.connect("localhost", &["--tls-pin", &missing]),
            "missing.pem",
        ),
        // TLS verified, but no token: the server wants its hello first.
        (
            vec![
                "--connect".into(),
                format!("tcp:localhost:{port}"),
                "--tls-ca".into(),
                s.path("tls/ca.pem"),
            ],
            "give the server's token with --token-file",
        ),
        // A plaintext client meets a TLS alert; the error says what to add.
        (
            vec!["--connect".into(), plain],
            "needs --tls-ca or --tls-pin",
        ),
    ];
    for (args, says) in &cases {
        for command in ["sweep", "stream"] {
            let start = Instant::now();
            let (ok, out, err) = run(command, &with(&[], args), "100\n");
            assert!(
                !ok && out.is_empty() && err.contains(says),
                "{command} {args:?}: {err}"
            );
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{command} {args:?}"
            );
        }
    }
    let both = s.connect(
        "localhost",
        &["--tls-ca", &other_ca, "--tls-pin", &other_pin],
    );
    let (ok, _, err) = run("sweep", &with(&[], &both), "");
    assert!(!ok && err.contains("cannot be used with"), "{err}");
}
