//! One address syntax for every client: `shm:NAME`, `unix:PATH`, `tcp:HOST:PORT`, parsed with
//! errors that name the bad value and the schemes there are.

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
    /// `tcp:HOST:PORT`: a server started with `hullsweep serve --tcp ...` (plaintext).
    Tcp(String),
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
        ] {
            let e = bad.parse::<Address>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
