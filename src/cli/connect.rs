//! What `--connect ADDR` takes besides the address, shared by `stream` and `sweep`: how to verify
//! a TLS server and the access token, named as `serve` names their server side (`--tls-cert` and
//! `--tls-key` there, `--tls-ca` or `--tls-pin` here; `--token-file` on both).
//!
//! TLS is an option of a `tcp:` address, not a scheme of its own, as on `serve` it is an option of
//! `--tcp`: the client must be told how to verify the server (it trusts no system roots), and
//! that flag alone then says TLS, so `--connect tcp:HOST:PORT --tls-ca ca.pem` is the whole
//! of it, with no `tls:` scheme to keep in step with the flags.

use anyhow::{Context, bail};
use hullsweep_engine::{Address, Client, ClientError, ConnectOptions, TlsConnector, Token};
use std::io::ErrorKind;
use std::path::PathBuf;

/// `--tls-ca`, `--tls-pin` and `--token-file`.
#[derive(clap::Args, Debug)]
pub struct Remote {
    /// With --connect tcp:HOST:PORT: speak TLS 1.3 to a server started with --tls-cert, trusting
    /// it when its certificate chains to this CA file (PEM; `hullsweep tls-cert` writes ca.pem)
    /// and names HOST.
    #[arg(
        long,
        value_name = "FILE",
        requires = "connect",
        conflicts_with = "tls_pin"
    )]
    tls_ca: Option<PathBuf>,
    /// With --connect tcp:HOST:PORT: speak TLS 1.3, trusting only the server that presents
    /// exactly this certificate (its --tls-cert file, e.g. tls/cert.pem) and holds its key; the
    /// names and dates in it are not checked.
    #[arg(long, value_name = "CERT", requires = "connect")]
    tls_pin: Option<PathBuf>,
    /// The access token of a server started with --token-file (always the case beyond
    /// loopback): this file, surrounding whitespace removed, is presented first, in a hello.
    #[arg(long, value_name = "PATH", requires = "connect")]
    token_file: Option<PathBuf>,
}

impl Remote {
    /// Connects to `address` with these options (TLS, then the hello); errors name the flag or
    /// the file at fault.
    pub fn connect(&self, address: &Address) -> anyhow::Result<Client> {
        let tls = match (&self.tls_ca, &self.tls_pin) {
            (None, None) => None,
            (Some(ca), _) => Some(("--tls-ca", ca)),
            (None, Some(pin)) => Some(("--tls-pin", pin)),
        };
        let tls = match tls {
            None => None,
            Some((flag, path)) if address.tcp_host_port().is_none() => bail!(
                "{flag} {}: TLS wraps a tcp:HOST:PORT address; --connect {address} stays on \
                 this machine, open to the server's user alone, and has no TLS",
                path.display()
            ),
            Some(("--tls-ca", ca)) => Some(TlsConnector::with_ca_file(ca).context("--tls-ca")?),
            Some((_, pin)) => Some(TlsConnector::with_pinned_cert(pin).context("--tls-pin")?),
        };
        let token = match &self.token_file {
            Some(path) => Some(
                Token::from_file(path)
                    .context("--token-file")?
                    .as_bytes()
                    .to_vec(),
            ),
            None => None,
        };
        let options = ConnectOptions {
            tls,
            token,
            ..ConnectOptions::default()
        };
        Client::connect_to(address, &options).map_err(|e| self.explain(address, e.into()))
    }

    /// `e` in the context of `--connect ADDR`, with a hint where the error points at one: no
    /// server at the address, a TLS server met in plaintext (its TLS alert reads as a broken
    /// reply), or a server that wants its token.
    pub fn explain(&self, address: &Address, e: anyhow::Error) -> anyhow::Error {
        let plain = self.tls_ca.is_none() && self.tls_pin.is_none();
        let hint = match e.chain().find_map(|c| c.downcast_ref::<ClientError>()) {
            Some(ClientError::Io(io))
                if matches!(
                    io.kind(),
                    ErrorKind::NotFound | ErrorKind::ConnectionRefused
                ) =>
            {
                ": no engine listens there (start `hullsweep serve`)"
            }
            Some(ClientError::Io(_)) if plain && address.tcp_host_port().is_some() => {
                " (plaintext TCP: a server started with --tls-cert needs --tls-ca or --tls-pin)"
            }
            Some(ClientError::Server(m))
                if self.token_file.is_none() && m.contains("access token") =>
            {
                " (give the server's token with --token-file)"
            }
            _ => "",
        };
        e.context(format!("--connect {address}{hint}"))
    }
}
