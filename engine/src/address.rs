//! One address syntax for every client: `shm:NAME`, `unix:PATH`, `tcp:HOST:PORT`, parsed with
//! errors that name the bad value and the schemes there are.
//!
//! TLS is not a scheme of its own: as `hullsweep serve --tcp ADDR --tls-cert C --tls-key K`
//! wraps its TCP listener, a client wraps a `tcp:` address, given how to verify the server (a CA
//! file or a pinned certificate: [`ConnectOptions::tls`](crate::ConnectOptions::tls), the CLI's
//! `--tls-ca`/`--tls-pin`). TLS cannot be used without one of those anyway, so the option alone
//! says it; a `tls:` address is refused with that hint.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where an engine listens, as a client names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// `shm:NAME`: a server started with `hullsweep serve --shm NAME`.
    Shm(String),
    /// `unix:PATH`: a server started with `hullsweep serve --unix PATH`.
    Unix(PathBuf),
    /// `tcp:HOST:PORT`: a server started with `hullsweep serve --tcp ...`, plaintext, or TLS
    /// when the client is given a CA or a pin ([`ConnectOptions`](crate::ConnectOptions)).
    Tcp(String),
}

impl Address {
    /// The host and port of a `tcp:` address, the host as TLS names it (an IPv6 address without
    /// its brackets); `None` for the other schemes.
    pub fn tcp_host_port(&self) -> Option<(&str, u16)> {
        let Address::Tcp(addr) = self else {
            return None;
        };
        let (host, port) = addr.rsplit_once(':')?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Some((host, port.parse().ok()?))
    }
}

impl FromStr for Address {
    type Err = String;

    fn from_str(s: &str) -> Result<Address, String> {
        let known = "shm:NAME, unix:PATH or tcp:HOST:PORT";
        let Some((scheme, rest)) = s.split_once(':') else {
            return Err(format!("address {s:?} has no scheme; expected {known}"));
        };
        if rest.is_empty() {
            return Err(format!(
                "address {s:?} names nothing after {scheme:?}; expected {known}"
            ));
        }
        match scheme {
            "shm" => {
                crate::shm::check_name(rest).map_err(|e| format!("address {s:?}: {e}"))?;
                Ok(Address::Shm(rest.to_string()))
            }
            "unix" => Ok(Address::Unix(PathBuf::from(rest))),
            "tcp" => match rest.rsplit_once(':') {
                Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
                    Ok(Address::Tcp(rest.to_string()))
                }
                _ => Err(format!(
                    "address {s:?}: expected tcp:HOST:PORT, a port of 0..=65535"
                )),
            },
            "tls" | "tcps" | "ssl" => Err(format!(
                "address {s:?}: TLS runs over tcp:HOST:PORT, with the server verified by a CA \
                 file or a pinned certificate (the CLI's --tls-ca FILE or --tls-pin CERT)"
            )),
            other => Err(format!(
                "address {s:?}: unknown scheme {other:?}; expected {known}"
            )),
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Shm(name) => write!(f, "shm:{name}"),
            Address::Unix(path) => write!(f, "unix:{}", path.display()),
            Address::Tcp(addr) => write!(f, "tcp:{addr}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scheme_parses_and_bad_ones_are_named() {
        assert_eq!("shm:live".parse(), Ok(Address::Shm("live".into())));
        assert_eq!(
            "unix:/tmp/e.sock".parse(),
            Ok(Address::Unix("/tmp/e.sock".into()))
        );
        assert_eq!(
            "tcp:127.0.0.1:7070".parse(),
            Ok(Address::Tcp("127.0.0.1:7070".into()))
        );
        assert_eq!(
            "tcp:[::1]:7070".parse(),
            Ok(Address::Tcp("[::1]:7070".into()))
        );
        for (bad, why) in [
            ("live", "no scheme"),
            ("udp:1.2.3.4:5", "unknown scheme \"udp\""),
            ("shm:a/b", "contains '/'"),
            ("shm:", "names nothing"),
            ("tcp:host", "expected tcp:HOST:PORT"),
            ("tcp:host:99999", "expected tcp:HOST:PORT"),
            ("tls:host:7070", "TLS runs over tcp:HOST:PORT"),
            ("tcps:host:7070", "--tls-ca FILE or --tls-pin CERT"),
        ] {
            let e = bad.parse::<Address>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn display_gives_back_what_was_parsed_and_tcp_splits_into_host_and_port() {
        for text in [
            "shm:live",
            "unix:/tmp/e.sock",
            "tcp:localhost:7070",
            "tcp:[::1]:70",
        ] {
            assert_eq!(text.parse::<Address>().unwrap().to_string(), text);
        }
        let host_port = |s: &str| {
            let a: Address = s.parse().unwrap();
            a.tcp_host_port().map(|(h, p)| (h.to_string(), p))
        };
        assert_eq!(
            host_port("tcp:localhost:7070"),
            Some(("localhost".into(), 7070))
        );
        assert_eq!(host_port("tcp:10.0.0.1:0"), Some(("10.0.0.1".into(), 0)));
        assert_eq!(host_port("tcp:[::1]:7070"), Some(("::1".into(), 7070)));
        assert_eq!(host_port("unix:/tmp/e.sock"), None);
        assert_eq!(host_port("shm:live"), None);
    }
}
