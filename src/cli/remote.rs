//! `--connect ADDR`: a command's work done by an engine (`hullsweep serve`) instead of in this
//! process, with the same output: a live stream the filter pushes each bar to (`stream`), and a
//! whole sweep (`sweep`).

use anyhow::{Context, bail};
use hullsweep_data::Progress;
use hullsweep_data::live::{Feed, FeedError};
use hullsweep_engine::protocol::DEFAULT_MAX_FRAME;
use hullsweep_engine::{Client, ClientError};
use hullsweep_kernel::{Combo, Event, KernelError, SweepResult};
use std::fmt;

/// A live stream on an engine, fed one bar per push: the server's events are the in-process
/// `Live`'s, bit for bit, so the filter's output is the same either way.
pub struct RemoteFeed {
    client: Client,
    stream: u64,
}

impl RemoteFeed {
    /// Opens a stream of `params` at `fee_pct` on `client`'s engine.
    pub fn open(mut client: Client, params: &[Combo], fee_pct: f64) -> anyhow::Result<RemoteFeed> {
        let stream = client.open_stream(params, fee_pct)?;
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

/// How the engine computed a [`sweep`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// One batch sweep (opcode 0) at the server's own fee, which is the one asked for.
    Batch,
    /// A live stream at the fee asked for (opcodes 8, 9, 10), fed in this many pushes.
    Stream(usize),
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Batch => write!(f, "one batch sweep"),
            Route::Stream(n) => write!(f, "a live stream of {n} pushes"),
        }
    }
}

/// The fee probe: one combo over five bars that closes exactly one trade, at its entry price, so
/// its pnl is `0.0 + (±0.0 - fee)`: exactly `-fee` (`0.0` for a zero fee of either sign, and those
/// two give the same bits in every sweep, since a pnl starts at `+0.0` and a sum is `-0.0` only
/// when both terms are). A server whose batch sweep of it gives the bits this process's kernel
/// gives at `fee_pct` sweeps at `fee_pct`.
const PROBE_CLOSE: [f64; 5] = [1.0, 1.0, 2.0, 1.0, 1.0];
const PROBE_COMBO: Combo = [1, 1, 1, 2, 1, 1];

/// Bytes of `--max-inflight` a push may be charged: the server reserves a push's worst case
/// (a reversal of every combo at every bar, about 320 bytes per combo and bar) before serving it.
const PUSH_BUDGET: usize = 64 << 20;
const WORST_BYTES_PER_COMBO_BAR: usize = 320;
/// The most bars in one push (2 MiB of request), the local streamed sweep's chunk.
const MAX_PUSH_BARS: usize = 1 << 18;

/// Sweeps `params` over `close` at `fee_pct` on `client`'s engine, bit for bit as
/// `Variant::sweep` here (every variant gives the same bits, so the server's does not matter).
///
/// Protocol v1's batch sweep (opcode 0) has no fee field: it sweeps at the server's `--fee`,
/// which a client cannot ask for. The live-stream opcodes carry a fee, and a stream's close
/// (opcode 10) replies the batch sweep of the bars pushed, bit for bit, however they were split.
/// So: a probe sweep (above) tells whether the server's fee is `fee_pct`; if it is, and the
/// request fits the default `--max-frame` (256 MiB: about 33 million bars), one batch sweep does
/// the work, on all the server's threads. Otherwise a stream at `fee_pct` takes the series in
/// pushes sized to stay far under the frame limit and the server's `--max-inflight` reservation;
/// a push the server still finds too large (`push fewer bars at once`, nothing applied) is
/// retried in halves. A stream runs the O(1)-per-bar live state on one thread, so it is the
/// slower route, and it is bound by the server's `--max-stream-combos`.
///
/// `progress` follows the pushes of a stream and cancels between them.
pub fn sweep(
    client: &mut Client,
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    progress: &dyn Progress,
) -> anyhow::Result<(SweepResult, Route)> {
    let probe = client
        .sweep(&PROBE_CLOSE, &[PROBE_COMBO])
        .context("the fee probe (a 5-bar batch sweep)")?;
    let want = hullsweep_kernel::sweep(&PROBE_CLOSE, &[PROBE_COMBO], fee_pct)?;
    let same_fee = probe.pnl[0].to_bits() == want.pnl[0].to_bits();
    let bytes = 9 + 8 * close.len() as u64 + 48 * params.len() as u64;
    if same_fee && bytes <= u64::from(DEFAULT_MAX_FRAME) {
        return Ok((client.sweep(close, params)?, Route::Batch));
    }
    let stream = client.open_stream(params, fee_pct)?;
    let per_push = PUSH_BUDGET / (WORST_BYTES_PER_COMBO_BAR * params.len().max(1));
    let mut chunk = per_push.clamp(1, MAX_PUSH_BARS);
    let (mut at, mut pushes, mut events) = (0, 0, Vec::new());
    progress.start(Some(close.len() as u64));
    while at < close.len() {
        if progress.cancelled() {
            bail!(
                "interrupted after {at} bars of {}; nothing was written",
                close.len()
            );
        }
        let end = close.len().min(at + chunk);
        match client.push(stream, &close[at..end], &mut events) {
            Ok(_) => {
                events.clear();
                progress.advance((end - at) as u64);
                (at, pushes) = (end, pushes + 1);
            }
            Err(ClientError::Server(m)) if chunk > 1 && m.contains("push fewer bars") => {
                chunk /= 2;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok((client.close_stream(stream)?, Route::Stream(pushes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe's pnl is exactly `-fee` (a zero fee: `+0.0`), so equal bits mean equal fees.
    #[test]
    fn the_probe_closes_one_trade_worth_exactly_minus_the_fee() {
        let mut rng = fastrand_like(7);
        let mut fees = vec![0.09, 0.05, -0.7, 1e-300, 5e-324, 123.456, 1e300];
        // Any bits: every sign and magnitude, subnormals included.
        fees.extend((0..500).map(|_| f64::from_bits(rng())));
        for fee in fees.into_iter().filter(|f| f.is_finite() && *f != 0.0) {
            let r = hullsweep_kernel::sweep(&PROBE_CLOSE, &[PROBE_COMBO], fee).unwrap();
            assert_eq!(r.trades, [1], "fee {fee}");
            assert_eq!(r.pnl[0].to_bits(), (-fee).to_bits(), "fee {fee}");
        }
        for zero in [0.0, -0.0] {
            let r = hullsweep_kernel::sweep(&PROBE_CLOSE, &[PROBE_COMBO], zero).unwrap();
            assert_eq!((r.trades[0], r.pnl[0].to_bits()), (1, 0.0f64.to_bits()));
        }
    }

    /// A small xorshift, so the test needs no dependency.
    fn fastrand_like(mut s: u64) -> impl FnMut() -> u64 {
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }
}
