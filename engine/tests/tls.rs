//! TLS over TCP: a sweep through a verified TLS session equals the kernel's in-process result;
//! a wrong CA, a wrong name or a wrong pin is refused; a plaintext client fails cleanly and the
//! server keeps serving; a bind beyond loopback needs TLS or an explicit insecure_plaintext.

mod common;

use common::{Running, TIMEOUT, bits, combos, series, small_config};
use hullsweep_engine::{
    Client, ClientError, Config, EngineError, Server, TlsAcceptor, TlsConnector, Token,
};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A CA and a server certificate it signed, as PEM files in a temporary folder.
struct Pki {
    dir: tempfile::TempDir,
    /// The server certificate's SHA-256 (hex), computed here from rcgen's DER.
    sha256: String,
}

impl Pki {
    /// A fresh CA, and a server certificate for `names` signed by it.
    fn new(names: &[&str]) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign];
        // Each CA its own name, as real ones have (same-named CAs fail as BadSignature instead).
        let name = format!("test CA {}", dir.path().display());
        ca.distinguished_name.push(rcgen::DnType::CommonName, name);
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca_cert.pem()).unwrap();
        std::fs::write(dir.path().join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).unwrap();
        let sha256 = ring::digest::digest(&ring::digest::SHA256, cert.der())
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Pki { dir, sha256 }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from_pem_files(&self.path("cert.pem"), &self.path("key.pem")).unwrap()
    }

    fn by_ca(&self) -> TlsConnector {
        TlsConnector::with_ca_file(&self.path("ca.pem")).unwrap()
    }

    fn pinned(&self) -> TlsConnector {
        TlsConnector::with_pinned_cert(&self.path("cert.pem")).unwrap()
    }
}

fn tls_server(pki: &Pki, config: Config) -> Running {
    Running::tcp(Config {
        tls: Some(pki.acceptor()),
        ..config
    })
}

fn connect(host: &str, port: u16, tls: &TlsConnector) -> Result<Client, ClientError> {
    let c = Client::connect_tls(host, port, tls)?;
    c.set_timeout(Some(TIMEOUT))?;
    Ok(c)
}

/// Every opcode family through TLS gives the kernel's bits, including replies spanning many
/// TLS records (a 100,000-float echo is 800 kB, about fifty records).
fn assert_serves_exactly(c: &mut Client) {
    let (close, params) = (series(3000), combos());
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let got = c.sweep(&close, &params).unwrap();
    assert_eq!(bits(&got.pnl), bits(&want.pnl));
    assert_eq!(got.trades, want.trades);
    let id = c.load(&close).unwrap();
    let loaded = c.sweep_loaded(id, &params).unwrap();
    assert_eq!(bits(&loaded.pnl), bits(&want.pnl));
    c.drop_series(id).unwrap();
    let big: Vec<f64> = (0..100_000).map(|i| 1.0 + i as f64 * 1e-3).collect();
    assert_eq!(bits(&c.echo(&big).unwrap()), bits(&big));
}

fn tls_refusal(r: Result<Client, ClientError>) -> String {
    match r {
        Err(ClientError::Tls(m)) => m,
        Err(e) => panic!("expected a TLS refusal, got {e}"),
        Ok(_) => panic!("the client accepted a server it should have refused"),
    }
}

#[test]
fn a_tls_sweep_equals_the_kernel_in_process_by_ca_and_by_pin() {
    let pki = Pki::new(&["localhost", "127.0.0.1"]);
    let server = tls_server(&pki, small_config());
    let port = server.tcp_port();
    for host in ["127.0.0.1", "localhost"] {
        assert_serves_exactly(&mut connect(host, port, &pki.by_ca()).unwrap());
    }
    assert_serves_exactly(&mut connect("127.0.0.1", port, &pki.pinned()).unwrap());
    // Two sessions at once each keep their own state.
    let (mut a, mut b) = (
        connect("localhost", port, &pki.by_ca()).unwrap(),
        connect("localhost", port, &pki.pinned()).unwrap(),
    );
    let (ia, ib) = (a.load(&series(100)).unwrap(), b.load(&series(200)).unwrap());
    assert_eq!((ia, ib), (1, 1));
    assert!(a.sweep_loaded(ia, &combos()).is_ok() && b.sweep_loaded(ib, &combos()).is_ok());
}

#[test]
fn a_server_signed_by_another_ca_or_for_another_name_is_refused() {
    let pki = Pki::new(&["localhost"]);
    let other = Pki::new(&["localhost"]);
    let server = tls_server(&pki, small_config());
    let port = server.tcp_port();
    let m = tls_refusal(connect("localhost", port, &other.by_ca()));
    assert!(m.contains("UnknownIssuer"), "{m}");
    // The right CA, but the certificate does not name 127.0.0.1.
    let m = tls_refusal(connect("127.0.0.1", port, &pki.by_ca()));
    assert!(m.contains("not valid for name"), "{m}");
    // The server shrugs both off.
    assert_serves_exactly(&mut connect("localhost", port, &pki.by_ca()).unwrap());
}

#[test]
fn a_wrong_pin_is_refused_naming_both_fingerprints() {
    let pki = Pki::new(&["localhost"]);
    let other = Pki::new(&["localhost"]);
    let server = tls_server(&pki, small_config());
    let m = tls_refusal(connect("localhost", server.tcp_port(), &other.pinned()));
    assert!(
        m.contains("not the pinned one") && m.contains(&pki.sha256) && m.contains(&other.sha256),
        "{m}"
    );
    assert_eq!(pki.sha256, pki.acceptor().fingerprint());
}

#[test]
fn a_plaintext_client_fails_cleanly_and_the_server_keeps_serving() {
    let pki = Pki::new(&["localhost"]);
    let server = tls_server(&pki, small_config());
    let port = server.tcp_port();
    let mut plain = Client::connect_tcp(("127.0.0.1", port)).unwrap();
    plain.set_timeout(Some(TIMEOUT)).unwrap();
    assert!(plain.sweep(&series(100), &combos()).is_err());
    drop(plain);
    assert_serves_exactly(&mut connect("localhost", port, &pki.by_ca()).unwrap());
    // Its slot comes back.
    let start = Instant::now();
    while server.shared.connections() != 0 {
        assert!(start.elapsed() < TIMEOUT, "a connection slot leaked");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_stalled_frame_gets_its_read_timeout_frame_through_tls() {
    let pki = Pki::new(&["localhost"]);
    let server = tls_server(
        &pki,
        Config {
            read_timeout: Duration::from_millis(300),
            ..small_config()
        },
    );
    let mut c = connect("localhost", server.tcp_port(), &pki.by_ca()).unwrap();
    c.send_raw(&[200, 0]).unwrap(); // half a length word, then nothing
    match c.read_reply() {
        Err(ClientError::Server(m)) => assert!(m.contains("read timeout"), "{m}"),
        other => panic!("expected the read timeout's error frame, got {other:?}"),
    }
}

#[test]
fn beyond_loopback_needs_tls_or_an_explicit_insecure_plaintext() {
    let wildcard = "0.0.0.0:0".parse().unwrap();
    let token = Token::new(b"a token of more than sixteen bytes".to_vec()).unwrap();
    let with_token = Config {
        token: Some(token.clone()),
        ..small_config()
    };
    match Server::bind_tcp(wildcard, with_token.clone()) {
        Err(EngineError::Config(m)) => {
            assert!(
                m.contains("--insecure-plaintext") && m.contains("--tls-cert"),
                "{m}"
            )
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a wildcard bind without TLS was accepted"),
    }
    let insecure = Config {
        insecure_plaintext: true,
        ..with_token.clone()
    };
    drop(Server::bind_tcp(wildcard, insecure).unwrap());
    // TLS and the token together: the hello crosses encrypted. Reached through 127.0.0.1.
    let pki = Pki::new(&["localhost"]);
    let server = Running::tcp_at(
        wildcard,
        Config {
            tls: Some(pki.acceptor()),
            ..with_token
        },
    );
    let mut c = connect("localhost", server.tcp_port(), &pki.by_ca()).unwrap();
    c.hello(token.as_bytes()).unwrap();
    assert_serves_exactly(&mut c);
    let mut stranger = connect("localhost", server.tcp_port(), &pki.by_ca()).unwrap();
    match stranger.echo(&[1.0]) {
        Err(ClientError::Server(m)) => assert!(m.contains("access token first"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tls_is_refused_where_it_has_no_use() {
    let pki = Pki::new(&["localhost"]);
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        tls: Some(pki.acceptor()),
        ..small_config()
    };
    match Server::bind_unix(&dir.path().join("s"), config) {
        Err(EngineError::Config(m)) => assert!(m.contains("TCP only"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("TLS on a Unix socket was accepted"),
    }
}

#[test]
fn bad_certificate_and_key_files_are_named() {
    let pki = Pki::new(&["localhost"]);
    let other = Pki::new(&["localhost"]);
    let err = |cert: &Path, key: &Path| {
        TlsAcceptor::from_pem_files(cert, key)
            .unwrap_err()
            .to_string()
    };
    let missing = pki.path("nope.pem");
    let m = err(&missing, &pki.path("key.pem"));
    assert!(m.contains("nope.pem") && m.contains("cannot read"), "{m}");
    // A key in the certificate's place, a certificate in the key's.
    let m = err(&pki.path("key.pem"), &pki.path("key.pem"));
    assert!(m.contains("key.pem") && m.contains("no certificate"), "{m}");
    let m = err(&pki.path("cert.pem"), &pki.path("cert.pem"));
    assert!(
        m.contains("private key file") && m.contains("no private key"),
        "{m}"
    );
    // Another certificate's key.
    let m = err(&pki.path("cert.pem"), &other.path("key.pem"));
    assert!(
        m.contains("cert.pem") && m.contains(&*other.path("key.pem").to_string_lossy()),
        "{m}"
    );
    let m = TlsConnector::with_ca_file(&missing)
        .unwrap_err()
        .to_string();
    assert!(m.starts_with("CA file") && m.contains("nope.pem"), "{m}");
    let m = TlsConnector::with_pinned_cert(&pki.path("key.pem"))
        .unwrap_err()
        .to_string();
    assert!(m.starts_with("pinned certificate file"), "{m}");
}

#[test]
fn a_stranger_stalling_its_handshake_gives_its_slot_back_within_the_read_timeout() {
    let pki = Pki::new(&["localhost"]);
    let server = tls_server(
        &pki,
        Config {
            token: Some(Token::new(b"a token of more than sixteen bytes".to_vec()).unwrap()),
            read_timeout: Duration::from_millis(300),
            ..small_config()
        },
    );
    let port = server.tcp_port();
    // One says nothing; one sends the first bytes of a TLS record and stops.
    let silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut partial = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(&mut partial, &[0x16, 0x03, 0x01, 0x02]).unwrap();
    let start = Instant::now();
    while server.shared.connections() < 2 {
        assert!(
            start.elapsed() < TIMEOUT,
            "the server never took both connections"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    while server.shared.connections() != 0 {
        assert!(
            start.elapsed() < Duration::from_millis(300 + 1000),
            "a stalled handshake kept its slot past the read timeout"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop((silent, partial));
    let mut c = connect("localhost", port, &pki.by_ca()).unwrap();
    c.hello(b"a token of more than sixteen bytes").unwrap();
    assert_serves_exactly(&mut c);
}

#[test]
fn a_live_stream_over_tls_gives_every_event_of_in_process_live() {
    use hullsweep_kernel::DEFAULT_FEE_PCT;
    let pki = Pki::new(&["localhost"]);
    let server = tls_server(&pki, small_config());
    let mut c = connect("localhost", server.tcp_port(), &pki.pinned()).unwrap();
    let (close, params) = (series(1500), combos());
    let id = c.open_stream(&params, DEFAULT_FEE_PCT).unwrap();
    let mut live = hullsweep_variants::Live::new(&params, DEFAULT_FEE_PCT).unwrap();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for (i, bar) in close.iter().enumerate() {
        // One call per bar: the live job, and many tiny TLS records each way.
        assert_eq!(c.push(id, &[*bar], &mut got).unwrap(), i as u64 + 1);
        live.push(*bar, &mut want).unwrap();
    }
    assert_eq!(got.len(), want.len());
    assert!(got.iter().zip(&want).all(|(g, w)| g.same(w)));
    let result = c.close_stream(id).unwrap();
    let batch = hullsweep_kernel::sweep(&close, &params, DEFAULT_FEE_PCT).unwrap();
    assert_eq!(bits(&result.pnl), bits(&batch.pnl));
    assert_eq!(result.trades, batch.trades);
}

#[test]
fn a_full_tls_server_closes_new_connections_and_serves_the_held_one() {
    let pki = Pki::new(&["localhost"]);
    let server = tls_server(
        &pki,
        Config {
            max_connections: 1,
            ..small_config()
        },
    );
    let port = server.tcp_port();
    let mut held = connect("localhost", port, &pki.by_ca()).unwrap();
    assert_eq!(held.echo(&[1.0]).unwrap(), [1.0]);
    // No plaintext "server busy" frame inside a TLS port: the handshake just ends.
    let m = tls_refusal(connect("localhost", port, &pki.by_ca()));
    assert!(
        m.contains("closed the connection during the handshake"),
        "{m}"
    );
    assert_serves_exactly(&mut held);
}

#[test]
fn a_tls_client_against_a_plain_server_is_refused_in_the_handshake() {
    let pki = Pki::new(&["localhost"]);
    // The ClientHello reads as a frame header to a plain server, which waits for the rest of
    // that "frame" until its read timeout, then answers with an error frame: not TLS.
    let plain = Running::tcp(Config {
        read_timeout: Duration::from_millis(300),
        ..small_config()
    });
    let m = tls_refusal(connect("localhost", plain.tcp_port(), &pki.by_ca()));
    assert!(m.contains("does not speak TLS"), "{m}");
    let mut c = plain.client();
    assert_eq!(c.echo(&[2.0]).unwrap(), [2.0]);
}
