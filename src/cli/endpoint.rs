//! `hullsweep serve`'s flags that name places and secrets: a timeout, a TCP address, a Unix
//! socket path checked before the engine touches it, and a warning for a secret others can read.

use anyhow::{Context, bail};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Parses a timeout flag: a finite number of seconds >= 0 that a `Duration` can hold.
pub fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && Duration::try_from_secs_f64(v).is_ok() => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds >= 0")),
    }
}

/// `PORT` alone means loopback; anything else must resolve to an address.
pub fn tcp_addr(s: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    s.to_socket_addrs()
        .with_context(|| format!("--tcp {s}: expected PORT or HOST:PORT"))?
        .next()
        .with_context(|| format!("--tcp {s}: resolves to no address"))
}

/// Refuses a `--unix` path that a live server holds, or whose folder is missing, before the
/// engine would clear a stale socket there or create its private bind folder beside it.
pub fn check_unix_path(path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
        && UnixStream::connect(path).is_ok()
    {
        bail!(
            "--unix {shown}: a live server is listening on this socket (another `hullsweep \
             serve`?); stop it first or choose another path"
        );
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        bail!(
            "--unix {shown}: the folder {} does not exist",
            parent.display()
        );
    }
    Ok(())
}

/// Warns on stderr when a secret file (token, TLS key) can be read by group or others.
pub fn warn_if_readable_by_others(what: &str, path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path)
        && m.permissions().mode() & 0o077 != 0
    {
        eprintln!(
            "hullsweep serve: warning: {what} {} is readable by others; chmod 600 it",
            path.display()
        );
    }
}
