//! The accept loop: takes connections while under `max_connections`, gives each a thread, and
//! between accepts times out the connections stalled past the read or idle timeout.

use crate::protocol;
use crate::server::config::{Config, Shared};
use crate::server::error::{EngineError, io_err};
use crate::server::session::serve_watched;
use crate::server::shutdown::ShutdownHandle;
use crate::server::transport::{Listener, Stream};
use crate::server::watch::{CLOSED, ConnWatch, IDLE, READING};
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long the accept loop waits before looking at the stop flag again. Signals interrupt
/// the wait at once; an in-process [`ShutdownHandle`] is seen within this delay.
const STOP_POLL: Duration = Duration::from_millis(50);

/// How often the accept loop looks for stalled connections: the timeouts' resolution.
const REAP_EVERY: Duration = Duration::from_millis(25);

/// Accepts connections until `stop`, then closes every connection and waits for their threads.
pub(super) fn accept_loop(
    listener: &Listener,
    shared: &Arc<Shared>,
    stop: &ShutdownHandle,
) -> Result<(), EngineError> {
    let fd = listener.nonblocking_fd()?;
    let live: Arc<Mutex<HashMap<u64, Conn>>> = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next = 0u64;
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: STOP_POLL.as_nanos() as _,
    };
    let mut reaped = Instant::now();
    while !stop.is_shutdown() {
        // Timeouts are checked here, between accepts, at least every REAP_EVERY.
        if reaped.elapsed() >= REAP_EVERY {
            reap(&live, &shared.config);
            reaped = Instant::now();
        }
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {
                threads.retain(|t| !t.is_finished());
                continue;
            }
            Ok(_) => {}
            Err(e) => return Err(io_err("waiting for connections")(e.into())),
        }
        let stream = match listener.accept() {
            Ok(s) => s,
            Err(e) if is_transient(&e) => continue,
            Err(e) => {
                // Out of descriptors or memory: back off and keep the server up.
                eprintln!("hullsweep engine: accept failed: {e}");
                thread::sleep(STOP_POLL);
                continue;
            }
        };
        next += 1;
        match spawn_connection(stream, next, shared, &live) {
            Ok(Some(t)) => threads.push(t),
            Ok(None) => {}
            Err(e) => eprintln!("hullsweep engine: connection {next}: {e}"),
        }
    }
    for l in live.lock().unwrap_or_else(|p| p.into_inner()).values() {
        l.stream.shutdown();
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

/// A served connection as the accept loop sees it.
struct Conn {
    stream: Stream,
    watch: Arc<ConnWatch>,
}

/// Closes every connection stalled mid-frame past the read timeout, or idle past the idle
/// timeout, with a best-effort error frame saying which (on shared memory the connection's own
/// thread writes it, see `Stream::time_out`). Its thread then sees the stream end and gives its
/// slot and buffers back.
fn reap(live: &Mutex<HashMap<u64, Conn>>, config: &Config) {
    let secs = |d: Duration| d.as_secs_f64();
    for l in live.lock().unwrap_or_else(|p| p.into_inner()).values() {
        // A shared-memory client that died leaves its rings open: its socket says it is gone,
        // and closing the rings ends its thread, which gives the slot and memory back.
        if l.stream.peer_gone() {
            l.stream.shutdown();
            continue;
        }
        // The phase first: a connection stamps before it moves the phase, so the stamp read
        // after a phase is at least as new as that phase (the phase's store releases it).
        let phase = l.watch.phase.load(Ordering::SeqCst);
        let quiet = l.watch.quiet();
        let (phase, msg) = match phase {
            READING if quiet > config.read_timeout => (
                READING,
                format!(
                    "read timeout: no byte of this frame arrived for {} s (--read-timeout); \
                     closing the connection",
                    secs(config.read_timeout)
                ),
            ),
            IDLE if config.idle_timeout.is_some_and(|t| quiet > t) => (
                IDLE,
                format!(
                    "idle timeout: no request for {} s (--idle-timeout); closing the connection",
                    secs(config.idle_timeout.unwrap_or_default())
                ),
            ),
            _ => continue,
        };
        if l.watch.claim(phase, CLOSED) {
            l.stream.time_out(&protocol::encode_error(&msg));
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
    )
}

/// Starts the thread for one accepted stream, or refuses it when the server is full.
fn spawn_connection(
    stream: Stream,
    id: u64,
    shared: &Arc<Shared>,
    live: &Arc<Mutex<HashMap<u64, Conn>>>,
) -> io::Result<Option<JoinHandle<()>>> {
    let max = shared.config.max_connections;
    let active = &shared.connections;
    if active.fetch_add(1, Ordering::SeqCst) >= max {
        active.fetch_sub(1, Ordering::SeqCst);
        let msg = protocol::encode_error(&format!(
            "server busy: {max} connections open, the limit; retry later"
        ));
        stream.refuse(&msg, shared.config.tls.is_some());
        return Ok(None);
    }
    // A reply the client does not read fails after the read timeout without progress (the
    // kernel's send timeout), so a client that stops reading gives its slot back too.
    let send_timeout = Some(shared.config.read_timeout);
    let (reader, mut writer, keep) = stream.into_halves(send_timeout, &shared.config)?;
    let farewell = keep.farewell();
    // Until its hello, a connection on a server with a token is mid-frame: the read timeout,
    // counted from the connect, bounds how long a stranger may hold the slot.
    let watch = Arc::new(ConnWatch::new(shared.config.token.is_some()));
    live.lock().unwrap_or_else(|p| p.into_inner()).insert(
        id,
        Conn {
            stream: keep,
            watch: Arc::clone(&watch),
        },
    );
    let (conn_shared, conn_live) = (Arc::clone(shared), Arc::clone(live));
    let spawned = thread::Builder::new()
        .name(format!("hullsweep-conn-{id}"))
        .spawn(move || {
            // A client that vanished mid-reply is that client's problem, not the server's.
            let _ = serve_watched(reader, &mut writer, &conn_shared, Some(&watch));
            // Timed out by the accept loop, which could not write the frame itself: the last
            // bytes, before the writer's drop closes the stream.
            if let Some(frame) = farewell.as_ref().and_then(|f| f.get()) {
                let _ = writer.write_all(frame);
            }
            drop(writer);
            conn_live
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            conn_shared.connections.fetch_sub(1, Ordering::SeqCst);
        });
    spawned.map(Some).inspect_err(|_| {
        live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        active.fetch_sub(1, Ordering::SeqCst);
    })
}
