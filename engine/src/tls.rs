//! TLS identities for the engine's TCP transport (rustls, ring provider, TLS 1.3 only): the
//! server's certificate and key from PEM files, and clients that verify it by a CA or a pin.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use std::fmt;
use std::io;
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

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
pub struct TlsAcceptor {
    config: Arc<ServerConfig>,
    fingerprint: String,
}

// The configuration is immutable once built, and rustls's session cache inside it guards itself
// with a lock, so a panic elsewhere cannot leave it half-changed: sharing it across
// `catch_unwind` (as `Config` is, in servers and tests) is sound.
impl std::panic::RefUnwindSafe for TlsAcceptor {}
impl std::panic::UnwindSafe for TlsAcceptor {}

impl TlsAcceptor {
    /// Loads `cert` (the server's certificate first, then any intermediates, PEM) and `key` (its
    /// private key: PKCS#8, PKCS#1 RSA or SEC1 EC, PEM). Fails naming the file when either cannot
    /// be read or parsed, or when the key is not the certificate's.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsFileError> {
        let chain = read_certs("certificate file", cert)?;
        let leaf = fingerprint(&chain[0]);
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
        Ok(TlsAcceptor {
            config: Arc::new(config),
            fingerprint: leaf,
        })
    }

    /// The rustls configuration every connection's session starts from.
    pub(crate) fn config(&self) -> &Arc<ServerConfig> {
        &self.config
    }

    /// The SHA-256 of the server's certificate (hex), which clients that pin it compare.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
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
            conn.complete_io(&mut sock).map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::BrokenPipe => format!(
                    "the server closed the connection during the handshake ({e}); it may be \
                     at its --max-connections, or not serving TLS on this port"
                ),
                _ => match e.get_ref() {
                    Some(inner)
                        if matches!(
                            inner.downcast_ref::<rustls::Error>(),
                            Some(rustls::Error::InvalidMessage(
                                rustls::InvalidMessage::InvalidContentType
                            ))
                        ) =>
                    {
                        format!("{inner}: the server does not speak TLS on this port")
                    }
                    Some(inner) => inner.to_string(),
                    None => e.to_string(),
                },
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
