//! The whole engine over shared memory: a `hullsweep serve --shm` server (in the child process)
//! and the Rust client's one-float echo (opcode 1), protocol and session included.

use std::hint::black_box;
use std::thread::JoinHandle;
use std::time::Instant;

use hullsweep_engine::shm::WaitPolicy;
use hullsweep_engine::{Client, Config, Server, ShutdownHandle};

use crate::poll::{Result, STALL};
use crate::shm::nanos;

/// The engine the child serves for the run, under a name of the parent's process.
pub fn name(parent_pid: u32) -> String {
    format!("shm-floor-{parent_pid}")
}

/// The child's engine: serving on its own thread until dropped.
pub struct EngineServer {
    stop: ShutdownHandle,
    thread: Option<JoinHandle<()>>,
}

impl EngineServer {
    /// Starts `hullsweep serve --shm NAME` in this process. Its connection waits by the default
    /// policy (spin, then sleep), so it holds no core while the other methods run; requests
    /// that come back to back, as the echo's do, never find it asleep.
    pub fn start(name: &str) -> Result<EngineServer> {
        let server = Server::bind_shm(name, Config::default())?;
        let stop = server.shutdown_handle();
        let thread = std::thread::spawn(move || {
            let _ = server.run();
        });
        Ok(EngineServer {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EngineServer {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The parent's client: connects once, busy-polling for its replies.
pub struct EngineClient {
    client: Client,
}

impl EngineClient {
    pub fn connect(name: &str) -> Result<EngineClient> {
        let client = Client::connect_shm(name, WaitPolicy::Busy)?;
        client.set_timeout(Some(STALL))?;
        Ok(EngineClient { client })
    }

    /// `warmup + trips` echoes of one float; the timed ones pushed to `out`, each reply
    /// checked against its request outside the timing.
    pub fn client(&mut self, warmup: usize, trips: usize, out: &mut Vec<u64>) -> Result<()> {
        for i in 0..warmup + trips {
            let x = [i as f64];
            let t0 = Instant::now();
            let got = self.client.echo(&x)?;
            let dt = t0.elapsed();
            if black_box(got) != x {
                return Err(format!("trip {i}: the echo is not the request").into());
            }
            if i >= warmup {
                out.push(nanos(dt));
            }
        }
        Ok(())
    }
}
