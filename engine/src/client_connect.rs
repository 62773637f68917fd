//! [`Client::connect_to`]: an [`Address`] and its [`ConnectOptions`] (how a shared-memory
//! connection waits, how a TLS server is verified, the access token) to a connection ready for
//! requests, as the CLI's `--connect ADDR` needs it.

use crate::address::Address;
use crate::client::{Client, ClientError};
use crate::shm::WaitPolicy;
use crate::tls::TlsConnector;

/// How [`Client::connect_to`] reaches an address. The default: plaintext, the default
/// shared-memory wait, no hello.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// How a shared-memory (`shm:`) connection waits for its replies.
    pub wait: WaitPolicy,
    /// Wrap a `tcp:` connection in TLS and verify the server with this: by its CA
    /// ([`TlsConnector::with_ca_file`], the certificate must name the address's host) or by a
    /// pin ([`TlsConnector::with_pinned_cert`]). Refused for `shm:` and `unix:`, which never
    /// leave the machine and are reachable by the server's user only.
    pub tls: Option<TlsConnector>,
    /// The server's access token (its `--token-file`), presented in a hello (opcode 7) before
    /// anything else. A server without a token accepts any hello.
    pub token: Option<Vec<u8>>,
}

impl Client {
    /// Connects to `address` as `options` say, then says hello when they hold a token.
    ///
    /// Fails with [`ClientError::Tls`] when TLS is asked of a `shm:` or `unix:` address or the
    /// server is refused (saying why), with [`ClientError::Io`] when nothing accepts the
    /// connection, and with [`ClientError::Server`] when the server refuses the token.
    pub fn connect_to(address: &Address, options: &ConnectOptions) -> Result<Client, ClientError> {
        let mut client = match (&options.tls, address.tcp_host_port()) {
            (Some(tls), Some((host, port))) => Client::connect_tls(host, port, tls)?,
            (Some(_), None) => {
                return Err(ClientError::Tls(format!(
                    "{address}: TLS wraps tcp: addresses only; shm: and unix: stay on this \
                     machine and are open to the server's user alone"
                )));
            }
            (None, _) => Client::connect(address, options.wait)?,
        };
        if let Some(token) = &options.token {
            client.hello(token)?;
        }
        Ok(client)
    }
}
