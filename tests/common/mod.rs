//! A `hullsweep serve` process for the CLI's tests: spawned, its `listening KIND WHERE` line
//! read, and stopped (SIGTERM, so it removes its socket) when the test ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hullsweep");

/// A spawned server and the address a client's `--connect` takes to reach it.
pub struct Server {
    child: Child,
    /// `shm:NAME`, `unix:PATH` or `tcp:HOST:PORT`.
    pub address: String,
}

impl Server {
    /// The port of a `tcp:` server.
    #[allow(dead_code)] // not every test file serves over TCP
    pub fn port(&self) -> u16 {
        let port = self.address.rsplit(':').next();
        port.and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{} has no port", self.address))
    }
}

impl Drop for Server {
    /// SIGTERM, so the server removes its socket; SIGKILL if it has not exited within 5 s.
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `hullsweep serve ARGS` and reads its `listening KIND WHERE` line.
pub fn serve(args: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (kind, at) = line
        .trim_end()
        .strip_prefix("listening ")
        .and_then(|rest| rest.split_once(' '))
        .unwrap_or_else(|| panic!("{line:?}"));
    let address = format!("{kind}:{at}");
    Server { child, address }
}
