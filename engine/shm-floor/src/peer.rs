//! The second process: this binary re-executed in the server role, the line-based control
//! channel over its stdin and stdout, and the guards that keep it from outliving the parent.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::poll::Result;
use crate::ring::Rings;
use crate::shm::Shm;

pub const CHILD_ROLE: &str = "__shm-floor-server";
/// How long the parent waits for the child's `ready` / `done` lines.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);

/// The server process; killed by the parent on exit, and by the kernel if the parent dies first.
pub struct ChildGuard {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl ChildGuard {
    /// Re-executes this binary in the server role; it inherits the floor's memfd `fd` and the
    /// ring pair's segment `ring_fd` (both without `FD_CLOEXEC`).
    pub fn spawn(
        fd: &OwnedFd,
        ring_fd: &OwnedFd,
        max_payload: usize,
        prefix: &str,
    ) -> Result<ChildGuard> {
        let fd_arg = fd.as_raw_fd().to_string();
        let ring_arg = ring_fd.as_raw_fd().to_string();
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                CHILD_ROLE,
                &std::process::id().to_string(),
                &fd_arg,
                &ring_arg,
                &max_payload.to_string(),
                prefix,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no child stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout)
                .lines()
                .map_while(std::result::Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(ChildGuard {
            child,
            stdin,
            lines,
        })
    }

    pub fn send(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().ok_or("child stdin closed")?;
        writeln!(stdin, "{line}")?;
        Ok(stdin.flush()?)
    }

    pub fn expect(&self, want: &str) -> Result<()> {
        match self.lines.recv_timeout(CONTROL_TIMEOUT) {
            Ok(l) if l == want => Ok(()),
            Ok(l) => Err(format!("child said {l:?}, expected {want:?}").into()),
            Err(e) => Err(format!("no {want:?} from the child ({e})").into()),
        }
    }

    /// Closes the child's stdin (its signal to exit) and gives it 5 s before `drop` kills it.
    pub fn finish(mut self) {
        self.stdin = None;
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
/// The server role: `<parent pid> <memfd> <ring segment fd> <max payload> <service prefix>`;
/// serves one command line from stdin at a time and exits at end of input.
pub fn serve(args: &[String]) -> Result<()> {
    let [ppid, fd, ring_fd, max_payload, prefix] = args else {
        return Err("child role needs 5 arguments".into());
    };
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
    let ppid: i32 = ppid.parse()?;
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(ppid) {
        return Err("parent already gone".into());
    }
    let shm = Shm::open_inherited(fd.parse()?, max_payload.parse()?)?;
    let mut rings = Rings::open_inherited(ring_fd.parse()?)?;
    let iox = crate::iox::Iox::new(prefix, false)?;
    let ports = iox.server_ports()?;
    let _engine = crate::engine::EngineServer::start(&crate::engine::name(ppid as u32))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut f = line.split_whitespace();
        let (kind, payload, total) = (f.next(), f.next(), f.next());
        let (Some(kind), Some(payload), Some(total)) = (kind, payload, total) else {
            return Err(format!("bad command {line:?}").into());
        };
        let total: usize = total.parse()?;
        match kind {
            "pp" => shm.server(payload.parse()?, total)?,
            "ring" => rings.server(payload.parse()?, total)?,
            // The engine serves on its own thread.
            "engine" => {}
            "rr" => ports.request_response(total)?,
            "ps" => ports.publish_subscribe(total)?,
            _ => return Err(format!("bad command {line:?}").into()),
        }
        writeln!(out, "done")?;
        out.flush()?;
    }
    Ok(())
}
