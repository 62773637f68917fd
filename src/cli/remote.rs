//! `--connect ADDR`: a command's work done by an engine (`hullsweep serve`) instead of in this
//! process, with the same output: here, a live stream the filter pushes each bar to.

use anyhow::Context;
use hullsweep_data::live::{Feed, FeedError};
use hullsweep_engine::shm::WaitPolicy;
use hullsweep_engine::{Address, Client};
use hullsweep_kernel::{Combo, Event, KernelError};

/// A live stream on an engine, fed one bar per push: the server's events are the in-process
/// `Live`'s, bit for bit, so the filter's output is the same either way.
pub struct RemoteFeed {
    client: Client,
    stream: u64,
}

impl RemoteFeed {
    /// Connects to `address` and opens a stream of `params` at `fee_pct`.
    pub fn open(address: &Address, params: &[Combo], fee_pct: f64) -> anyhow::Result<RemoteFeed> {
        let connect = || format!("--connect {address}");
        let mut client = Client::connect(address, WaitPolicy::default()).with_context(connect)?;
        let stream = client.open_stream(params, fee_pct).with_context(connect)?;
        Ok(RemoteFeed { client, stream })
    }

    /// Closes the stream, freeing its state on the server.
    pub fn close(mut self) -> anyhow::Result<()> {
        self.client.close_stream(self.stream)?;
        Ok(())
    }
}

impl Feed for RemoteFeed {
    fn push_bar(&mut self, close: f64, events: &mut Vec<Event>) -> Result<(), FeedError> {
        // The kernel's own check, here, so a bad price reads as it does in-process and the
        // stream on the server is left as it was.
        if let Err(KernelError::BadPrice { value, .. }) = hullsweep_kernel::validate_close(&[close])
        {
            return Err(FeedError::BadPrice(value));
        }
        self.client
            .push(self.stream, &[close], events)
            .map(|_| ())
            .map_err(|e| FeedError::Other(e.into()))
    }
}
