//! The client's side of the rendezvous: connect to server NAME's socket, receive the segment,
//! and get a byte stream on its rings that fails, instead of waiting, once the server is gone.

use crate::protocol;
use crate::shm::error::ShmError;
use crate::shm::rendezvous::{Answer, recv_segment, socket_path};
use crate::shm::ring::HeaderRef;
use crate::shm::segment::Segment;
use crate::shm::stream::ShmStream;
use crate::shm::sync::Ordering;
use crate::shm::wait::WaitPolicy;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

/// How long a client waits for the server's segment: a live server answers at once, so a wait
/// this long means a wedged or foreign process on the socket.
pub const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(1);

/// Connects to shared-memory server `name` (`hullsweep serve --shm NAME`) and returns the
/// stream on its segment, waiting by `policy`, and the rendezvous socket (the server's death
/// closes it; the stream already checks it while it waits).
pub fn connect(name: &str, policy: WaitPolicy) -> Result<(ShmStream, Arc<UnixStream>), ShmError> {
    let path = socket_path(name)?;
    let socket = UnixStream::connect(&path).map_err(|e| {
        let why = match e.kind() {
            io::ErrorKind::NotFound => format!(
                "no shared-memory server named {name:?}: {} does not exist (is `hullsweep serve \
                 --shm {name}` running?)",
                path.display()
            ),
            io::ErrorKind::ConnectionRefused => format!(
                "no shared-memory server named {name:?} is running ({} is a stale socket)",
                path.display()
            ),
            _ => format!("connecting to {}: {e}", path.display()),
        };
        ShmError::Rendezvous(why)
    })?;
    socket
        .set_read_timeout(Some(RENDEZVOUS_TIMEOUT))
        .map_err(|e| ShmError::Rendezvous(format!("{}: {e}", path.display())))?;
    let answer = recv_segment(&socket).map_err(|e| match e {
        ShmError::Rendezvous(why) => ShmError::Rendezvous(format!("{}: {why}", path.display())),
        other => other,
    })?;
    let fd = match answer {
        Answer::Segment(fd) => fd,
        Answer::Refused(first) => return Err(refusal(&first, &socket)),
    };
    let segment = Segment::open(fd)?;
    let (replies, requests) = segment.client_ends();
    let rings = [replies.header_ref(), requests.header_ref()];
    let mut stream = ShmStream::new(replies, requests);
    stream.set_policy(policy);
    let socket = Arc::new(socket);
    let watched = Arc::clone(&socket);
    stream.set_liveness(Arc::new(move || {
        !crate::shm::rendezvous::peer_gone(&watched) || closed_cleanly(&rings)
    }));
    Ok((stream, socket))
}

/// True when the server closed both rings, as it does after its last frame (a timeout's error,
/// say) and before its socket closes: then it did not die mid-call, the rings themselves tell
/// the stream the end (after the bytes before it), and the hang-up must not overtake them. A
/// wait that gave up just before those last bytes came would otherwise report the server gone
/// and lose them. Asked only after the hang-up is seen, so a close before it is visible.
fn closed_cleanly(rings: &[HeaderRef; 2]) -> bool {
    rings
        .iter()
        .all(|r| r.header().words.0.closed.load(Ordering::Acquire) != 0)
}

/// The server's message when it refuses the connection (an error frame on the socket).
fn refusal(first: &[u8], socket: &UnixStream) -> ShmError {
    let mut reply = first.chain(socket);
    match protocol::read_reply(&mut reply, 1 << 16) {
        Ok(Err(message)) => ShmError::Rendezvous(format!("server error: {message}")),
        _ => ShmError::Rendezvous(
            "the server sent no segment and no error frame: not a hullsweep shared-memory server"
                .into(),
        ),
    }
}
