//! Which transport a test runs over. A test whose behaviour does not depend on the transport
//! loops over a list of them, starting a server on each (`Transport::start`); the server says
//! which on stderr, so a failure's output names the transport it failed on.

/// A transport a `Running` server can listen on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Unix,
    Tcp,
    Shm,
}

impl Transport {
    /// A socket and shared memory: what every transport-independent test runs over.
    pub const UNIX_AND_SHM: [Transport; 2] = [Transport::Unix, Transport::Shm];

    /// Every transport, for tests cheap enough to run over TCP as well.
    pub const ALL: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Shm];
}
