//! TLS for the engine's TCP transport (rustls with the ring provider, TLS 1.3 only): the server's
//! certificate and key from PEM files, and clients that verify the server by a CA or a pin.
//!
//! The server side splits one rustls session between its connection's reader and writer (and
//! the accept loop, which writes timeout frames) without holding the lock across a socket read,
//! so the thread-per-connection model, the read timeouts and the limits work as on plain TCP.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// A certificate, key or CA file that cannot be used; the message names the file and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {problem}")]
pub struct TlsFileError {
    what: &'static str,
    path: String,
    problem: String,
}

impl TlsFileError {
    fn new(what: &'static str, path: &Path, problem: impl fmt::Display) -> TlsFileError {
        TlsFileError {
            what,
            path: path.display().to_string(),
            problem: problem.to_string(),
        }
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate in a PEM file, in order; at least one.
fn read_certs(
    what: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsFileError> {
    let problem = |e: pem::Error| match e {
        pem::Error::Io(e) => TlsFileError::new(what, path, format!("cannot read it: {e}")),
        e => TlsFileError::new(what, path, format!("not a PEM certificate file: {e}")),
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(problem)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(problem)?;
    if certs.is_empty() {
        return Err(TlsFileError::new(
            what,
            path,
            "holds no certificate (expected -----BEGIN CERTIFICATE----- blocks)",
        ));
    }
    Ok(certs)
}

/// The SHA-256 of a certificate's DER bytes, as lowercase hex: the fingerprint a pin compares.
pub fn fingerprint(der: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The server's TLS identity: its certificate chain and private key, ready to accept sessions.
#[derive(Clone, Debug)]
pub struct TlsAcceptor(Arc<ServerConfig>);

impl TlsAcceptor {
    /// Loads `cert` (the server's certificate first, then any intermediates, PEM) and `key` (its
    /// private key: PKCS#8, PKCS#1 RSA or SEC1 EC, PEM). Fails naming the file when either cannot
    /// be read or parsed, or when the key is not the certificate's.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsFileError> {
        let chain = read_certs("certificate file", cert)?;
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| match e {
            pem::Error::Io(e) => {
                TlsFileError::new("private key file", key, format!("cannot read it: {e}"))
            }
            pem::Error::NoItemsFound => TlsFileError::new(
                "private key file",
                key,
                "holds no private key (expected a PKCS#8 `PRIVATE KEY`, an `RSA PRIVATE KEY` or \
                 an `EC PRIVATE KEY` PEM block)",
            ),
            e => TlsFileError::new("private key file", key, format!("not a PEM key file: {e}")),
        })?;
        let config = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| TlsFileError::new("certificate file", cert, e))?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| {
                TlsFileError::new(
                    "certificate file",
                    cert,
                    format!("cannot be served with the key in {}: {e}", key.display()),
                )
            })?;
        Ok(TlsAcceptor(Arc::new(config)))
    }

    /// A fresh server session over an accepted TCP stream; the handshake runs on first read.
    pub(crate) fn accept(&self, sock: TcpStream) -> io::Result<Arc<ServerTls>> {
        let conn = rustls::ServerConnection::new(Arc::clone(&self.0)).map_err(io::Error::other)?;
        Ok(Arc::new(ServerTls {
            conn: Mutex::new(conn),
            sock,
        }))
    }
}

/// One server TLS session, shared by its connection's reader and writer and the accept loop.
///
/// The lock is never held across a blocking socket read, so the accept loop can still write an
/// encrypted timeout frame to a connection whose thread waits for bytes.
pub(crate) struct ServerTls {
    conn: Mutex<rustls::ServerConnection>,
    sock: TcpStream,
}

impl ServerTls {
    fn lock(&self) -> MutexGuard<'_, rustls::ServerConnection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The plaintext reader and writer of this session.
    pub(crate) fn split(self: &Arc<Self>) -> (TlsReader, TlsWriter) {
        let reader = TlsReader {
            tls: Arc::clone(self),
            raw: vec![0; 16 * 1024 + 512],
            start: 0,
            end: 0,
        };
        (reader, TlsWriter(Arc::clone(self)))
    }

    /// The TCP socket under the session (to shut it down).
    pub(crate) fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Encrypts `bytes` and sends what the socket takes without waiting; if the session is busy
    /// (its thread mid-write) or not yet established, nothing is sent. For the accept loop.
    pub(crate) fn send_best_effort(&self, bytes: &[u8]) {
        let Ok(mut conn) = self.conn.try_lock() else {
            return;
        };
        if conn.is_handshaking() {
            return;
        }
        let _ = conn.writer().write_all(bytes);
        let mut out = NoWait(&self.sock);
        while conn.wants_write() {
            if conn.write_tls(&mut out).is_err() {
                break;
            }
        }
    }
}

/// A socket writer that never blocks: a full send buffer is an error.
struct NoWait<'a>(&'a TcpStream);

impl Write for NoWait<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use rustix::net::{SendFlags, send};
        Ok(send(
            self.0,
            buf,
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        )?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends every TLS record the session has queued (handshake messages, alerts, data).
fn flush_tls(conn: &mut rustls::ServerConnection, mut sock: &TcpStream) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(&mut sock)?;
    }
    Ok(())
}

/// The plaintext side of a server session for reading: decrypts as bytes arrive, and drives the
/// handshake on first use. A TLS protocol error (a plaintext client, a bad record) is an
/// [`io::ErrorKind::InvalidData`] error, which ends that connection only.
pub(crate) struct TlsReader {
    tls: Arc<ServerTls>,
    /// Bytes read from the socket and not yet given to rustls.
    raw: Vec<u8>,
    start: usize,
    end: usize,
}

impl Read for TlsReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            {
                let mut conn = self.tls.lock();
                loop {
                    match conn.reader().read(buf) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                    if self.start == self.end {
                        break;
                    }
                    let mut pending = &self.raw[self.start..self.end];
                    let taken = conn.read_tls(&mut pending)?;
                    self.start += taken;
                    if let Err(e) = conn.process_new_packets() {
                        // Tell the peer why (an alert), then end the connection.
                        let _ = flush_tls(&mut conn, &self.tls.sock);
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    flush_tls(&mut conn, &self.tls.sock)?;
                    if taken == 0 && self.start < self.end {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "TLS session takes no more bytes",
                        ));
                    }
                }
            }
            // Nothing decrypted is waiting: wait for the socket without holding the session.
            let n = (&self.tls.sock).read(&mut self.raw)?;
            self.start = 0;
            self.end = n;
            if n == 0 {
                // End of stream: rustls then reports a clean close or an unexpected EOF.
                let mut conn = self.tls.lock();
                conn.read_tls(&mut io::empty())?;
                if let Err(e) = conn.process_new_packets() {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
                return match conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                    other => other,
                };
            }
        }
    }
}

/// The plaintext side of a server session for writing: each write is encrypted and sent
/// before it returns (the socket's send timeout bounds a client that does not read).
pub(crate) struct TlsWriter(Arc<ServerTls>);

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut conn = self.0.lock();
        let n = conn.writer().write(buf)?;
        flush_tls(&mut conn, &self.0.sock)?;
        Ok(n)
    }

    /// A reply's head and body go out in the same records, as one send where they fit.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut conn = self.0.lock();
        let n = conn.writer().write_vectored(bufs)?;
        flush_tls(&mut conn, &self.0.sock)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut conn = self.0.lock();
        flush_tls(&mut conn, &self.0.sock)
    }
}

/// How a client checks the server it reaches over TLS.
#[derive(Clone, Debug)]
pub struct TlsConnector {
    config: Arc<ClientConfig>,
    pinned: bool,
}

impl TlsConnector {
    /// Trusts servers whose certificate chains up to a CA in `ca` (PEM, one or more
    /// certificates) and names the host the client connects to.
    pub fn with_ca_file(ca: &Path) -> Result<TlsConnector, TlsFileError> {
        let what = "CA file";
        let mut roots = RootCertStore::empty();
        for cert in read_certs(what, ca)? {
            roots
                .add(cert)
                .map_err(|e| TlsFileError::new(what, ca, format!("not a usable CA: {e}")))?;
        }
        let config = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| TlsFileError::new(what, ca, e))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsConnector {
            config: Arc::new(config),
            pinned: false,
        })
    }

    /// Trusts only the server presenting exactly the certificate in `cert` (PEM: the server's own
    /// `--tls-cert` file; its first certificate is the pin). Neither the name nor the dates are
    /// checked, only that the certificate is the pinned one and that the server holds its key.
    pub fn with_pinned_cert(cert: &Path) -> Result<TlsConnector, TlsFileError> {
        let what = "pinned certificate file";
        let pin = read_certs(what, cert)?.swap_remove(0);
        let provider = provider();
        let verifier = Pinned {
            fingerprint: fingerprint(&pin),
            pin,
            algorithms: provider.signature_verification_algorithms,
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| TlsFileError::new(what, cert, e))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Ok(TlsConnector {
            config: Arc::new(config),
            pinned: true,
        })
    }

    /// Whether this connector checks a pin (and ignores the server name).
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Runs the handshake over `sock` for `host` (a DNS name or an IP address, checked against
    /// the certificate unless pinned). The error says why the server was refused.
    pub(crate) fn connect(
        &self,
        host: &str,
        mut sock: TcpStream,
    ) -> Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>, String> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| format!("{host:?} is not a DNS name or an IP address"))?;
        let mut conn = rustls::ClientConnection::new(Arc::clone(&self.config), name)
            .map_err(|e| e.to_string())?;
        while conn.is_handshaking() {
            conn.complete_io(&mut sock).map_err(|e| match e.get_ref() {
                Some(inner) => inner.to_string(),
                None if e.kind() == io::ErrorKind::UnexpectedEof => {
                    "the server closed the connection during the handshake".into()
                }
                None => e.to_string(),
            })?;
        }
        Ok(rustls::StreamOwned::new(conn, sock))
    }
}

/// Accepts exactly one certificate, the pin, and checks the handshake's signature with its key.
#[derive(Debug)]
struct Pinned {
    pin: CertificateDer<'static>,
    fingerprint: String,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.pin.as_ref() {
            return Ok(ServerCertVerified::assertion());
        }
        Err(rustls::Error::General(format!(
            "the server's certificate (sha256 {}) is not the pinned one (sha256 {})",
            fingerprint(end_entity),
            self.fingerprint
        )))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
