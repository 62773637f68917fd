//! The candidates: iceoryx2 request-response and publish-subscribe (ping and pong services),
//! each with a `u64` payload and busy-polled non-blocking `receive`.

use std::time::Instant;

use iceoryx2::port::client::Client;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::server::Server;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::{publish_subscribe, request_response};

use crate::poll::{Result, spin};
use crate::shm::nanos;

type Rr = request_response::PortFactory<ipc::Service, u64, (), u64, ()>;
type Ps = publish_subscribe::PortFactory<ipc::Service, u64, ()>;

/// One process's node and its three services (request-response, ping, pong).
pub struct Iox {
    _node: Node<ipc::Service>,
    rr: Rr,
    ping: Ps,
    pong: Ps,
}

/// Service names unique to one run: `hullsweep-shm-floor/<parent pid>/<kind>`.
fn name(prefix: &str, kind: &str) -> Result<ServiceName> {
    Ok(format!("{prefix}/{kind}").as_str().try_into()?)
}

impl Iox {
    /// The parent creates the services (failing if a stale run left them); the child opens them.
    pub fn new(prefix: &str, create: bool) -> Result<Iox> {
        set_log_level_from_env_or(LogLevel::Error);
        let node = NodeBuilder::new()
            // Busy-polling never calls `node.wait`; let SIGINT/SIGTERM behave as usual.
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<ipc::Service>()?;
        let rr = node
            .service_builder(&name(prefix, "rr")?)
            .request_response::<u64, u64>();
        let ping = node
            .service_builder(&name(prefix, "ping")?)
            .publish_subscribe::<u64>();
        let pong = node
            .service_builder(&name(prefix, "pong")?)
            .publish_subscribe::<u64>();
        let (rr, ping, pong) = if create {
            (rr.create()?, ping.create()?, pong.create()?)
        } else {
            (rr.open()?, ping.open()?, pong.open()?)
        };
        Ok(Iox {
            _node: node,
            rr,
            ping,
            pong,
        })
    }

    /// The parent's ports: a client, the ping publisher and the pong subscriber.
    pub fn client_ports(&self) -> Result<ClientPorts> {
        Ok(ClientPorts {
            client: self.rr.client_builder().create()?,
            ping: self.ping.publisher_builder().create()?,
            pong: self.pong.subscriber_builder().create()?,
        })
    }

    /// The child's ports: the server, the ping subscriber and the pong publisher.
    pub fn server_ports(&self) -> Result<ServerPorts> {
        Ok(ServerPorts {
            server: self.rr.server_builder().create()?,
            ping: self.ping.subscriber_builder().create()?,
            pong: self.pong.publisher_builder().create()?,
        })
    }
}

pub struct ClientPorts {
    client: Client<ipc::Service, u64, (), u64, ()>,
    ping: Publisher<ipc::Service, u64, ()>,
    pong: Subscriber<ipc::Service, u64, ()>,
}

pub struct ServerPorts {
    server: Server<ipc::Service, u64, (), u64, ()>,
    ping: Subscriber<ipc::Service, u64, ()>,
    pong: Publisher<ipc::Service, u64, ()>,
}

fn expect(i: usize, got: u64) -> Result<()> {
    if got != i as u64 + 1 {
        return Err(format!("trip {i}: got {got}, expected {}", i + 1).into());
    }
    Ok(())
}

impl ClientPorts {
    /// Request-response: send a request, poll its pending response, drop both (all timed).
    pub fn request_response(&self, warmup: usize, trips: usize, out: &mut Vec<u64>) -> Result<()> {
        for i in 0..warmup + trips {
            let t0 = Instant::now();
            let pending = self.client.send_copy(i as u64)?;
            let got = spin(|| Ok(pending.receive()?.map(|r| *r)))?;
            drop(pending);
            let dt = t0.elapsed();
            expect(i, got)?;
            if i >= warmup {
                out.push(nanos(dt));
            }
        }
        Ok(())
    }

    /// Publish-subscribe: publish on ping, poll pong (the sample is released inside the timing).
    pub fn publish_subscribe(&self, warmup: usize, trips: usize, out: &mut Vec<u64>) -> Result<()> {
        for i in 0..warmup + trips {
            let t0 = Instant::now();
            let sent = self.ping.send_copy(i as u64)?;
            let got = spin(|| Ok(self.pong.receive()?.map(|s| *s)))?;
            let dt = t0.elapsed();
            if sent == 0 {
                return Err("ping reached no subscriber".into());
            }
            expect(i, got)?;
            if i >= warmup {
                out.push(nanos(dt));
            }
        }
        Ok(())
    }
}

impl ServerPorts {
    pub fn request_response(&self, total: usize) -> Result<()> {
        for _ in 0..total {
            let request = spin(|| Ok(self.server.receive()?))?;
            request.send_copy(*request + 1)?;
        }
        Ok(())
    }

    pub fn publish_subscribe(&self, total: usize) -> Result<()> {
        for _ in 0..total {
            let got = spin(|| Ok(self.ping.receive()?.map(|s| *s)))?;
            let sent = self.pong.send_copy(got + 1)?;
            if sent == 0 {
                return Err("pong reached no subscriber".into());
            }
        }
        Ok(())
    }
}
