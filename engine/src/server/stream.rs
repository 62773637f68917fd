//! The stream family's handlers (opcodes 8..=11): live streams (`hullsweep_variants::Live`) per
//! connection, their state charged to `max_loaded_bytes` and their replies to `max_inflight`.

use crate::protocol::stream::{EVENTS_HEAD, WORST_EVENT_BYTES};
use crate::protocol::{self, Reservation, StreamState};
use crate::server::config::Shared;
use hullsweep_kernel::{Combo, Event, KernelError, validate_close, validate_params_and_fee};
use hullsweep_variants::Live;
use hullsweep_variants::stream::effective_window;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

/// Bytes charged per combo when a stream opens, before `Live` is allocated: it holds about
/// 225 to 360 (the combo, its plan, loop state and its share of the shared indicator graph).
const OPEN_PER_COMBO: u64 = 512;

/// Bytes charged per stream besides its combos (`Live` holds about 260: its rings' first slots).
const OPEN_BASE: u64 = 1024;

/// Bytes charged per slot of history per graph node, and twice for the close and run rings
/// (12 bytes a slot together): the nodes' rings and exact-value caches hold under a byte per
/// node and slot on the default grid and about 2 on a single long combo (measured).
const SLOT_PER_NODE: u64 = 8;

/// Events kept between pushes (64 KiB, charged to the in-flight budget while kept); a larger
/// buffer is freed after its push.
const KEEP_EVENTS: usize = 1 << 10;

/// The largest reply buffer kept between pushes: a bar-by-bar push's reply is a few records,
/// and a larger one is freed once written.
const KEEP_FRAME: usize = 4 << 10;

/// The worst-case working memory of a push, per (combo, bar): its events (two, in a buffer
/// that may have doubled) and their records in the reply.
const WORST_PER_CELL: u64 = 4 * std::mem::size_of::<Event>() as u64 + WORST_EVENT_BYTES;

/// One open stream and the bytes charged for it.
struct OpenStream {
    live: Live,
    /// Bytes `live` held when opened, before any bar.
    base: u64,
    /// Bytes charged per slot of history: [`SLOT_PER_NODE`] for each node and ring.
    slot: u64,
    /// The longest lookback of its combos, plus one: the most bars its rings keep.
    need: u64,
    /// Bytes charged to the loaded budget.
    charged: u64,
    /// `Live::growths()` when `charged` was last trued up: a push that leaves it unchanged
    /// allocated no history, so the true-up (a scan of every node) is skipped.
    growths: u64,
}

impl OpenStream {
    /// An upper bound on the memory the stream holds once it has seen `bars` bars: what it
    /// held when opened plus its history, a power of two long per node, growing with the bars
    /// up to the longest lookback. The charge follows it before each push; the true-up after
    /// every call that grew `Live`'s history covers `Live` ever holding more.
    fn bound(&self, bars: u64) -> u64 {
        let slots = bars
            .saturating_add(1)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
            .min(self.need.checked_next_power_of_two().unwrap_or(u64::MAX));
        self.base.saturating_add(slots.saturating_mul(self.slot))
    }
}

/// A connection's live streams. They die with the connection; their charges and slots are
/// given back then, whatever the client did.
pub(super) struct Streams<'a> {
    shared: &'a Shared,
    /// By id: a B-tree, found without hashing on every push; a connection holds at most
    /// `--max-streams-per-connection` of them.
    open: BTreeMap<u64, OpenStream>,
    next_id: u64,
    events: Vec<Event>,
    /// The last push's reply buffer, given back once written, for the next push's reply.
    frame: Vec<u8>,
    /// True from a push's successful return until its reply is written: the frame written
    /// then is the push's, charged with it, and may be kept.
    frame_out: bool,
    /// In-flight bytes charged for the events buffer, the kept reply buffer and, until it is
    /// written, the last push's reply frame.
    charge: Option<Reservation<'a>>,
}

impl Drop for Streams<'_> {
    fn drop(&mut self) {
        let held: u64 = self.open.values().map(|s| s.charged).sum();
        self.shared.loaded_bytes.fetch_sub(held, Ordering::SeqCst);
        self.shared
            .streams
            .fetch_sub(self.open.len(), Ordering::SeqCst);
    }
}

fn unknown(id: u64) -> String {
    format!(
        "unknown stream id {id} (ids are per connection and die with it or its close; \
         open one with opcode 8)"
    )
}

impl<'a> Streams<'a> {
    pub(super) fn new(shared: &'a Shared) -> Streams<'a> {
        Streams {
            shared,
            open: BTreeMap::new(),
            next_id: 1,
            events: Vec::new(),
            frame: Vec::new(),
            frame_out: false,
            charge: None,
        }
    }

    /// The last reply, `frame`, was written: a push's is kept for the next push's reply when
    /// small, and only it and the events buffer stay charged.
    pub(super) fn written(&mut self, mut frame: Vec<u8>) {
        // Only a push's own reply, which its charge covers; any other frame is freed.
        let pushed = std::mem::take(&mut self.frame_out);
        let Some(charge) = &mut self.charge else {
            return;
        };
        if pushed && frame.capacity() <= KEEP_FRAME {
            frame.clear();
            self.frame = frame;
        }
        let kept = self.events.capacity() * std::mem::size_of::<Event>() + self.frame.capacity();
        charge.shrink_to(kept as u64);
    }

    /// Charges `bytes` more to the loaded budget, or says why not.
    fn charge(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), String> {
        charge(self.shared, bytes, what)
    }

    /// Charges whatever stream `id` holds beyond what was charged (see [`true_up`]).
    fn true_up(&mut self, id: u64) {
        if let Some(s) = self.open.get_mut(&id) {
            true_up(self.shared, s);
        }
    }

    /// Forgets stream `id`, giving back its charge and its slot.
    fn remove(&mut self, id: u64) -> Option<Live> {
        let s = self.open.remove(&id)?;
        self.shared
            .loaded_bytes
            .fetch_sub(s.charged, Ordering::SeqCst);
        self.shared.streams.fetch_sub(1, Ordering::SeqCst);
        Some(s.live)
    }

    /// Opcode 8: checks the limits and the combos, charges the state, then allocates it.
    pub(super) fn open(&mut self, params: &[Combo], fee_pct: f64) -> Result<Vec<u8>, String> {
        let c = &self.shared.config;
        let n = params.len();
        if n > c.max_stream_combos {
            return Err(format!(
                "stream of {n} combos exceeds the limit of {} combos per stream \
                 (--max-stream-combos); split the combos over several streams",
                c.max_stream_combos
            ));
        }
        if self.open.len() >= c.max_streams_per_connection {
            return Err(format!(
                "{} streams open on this connection, the limit (--max-streams-per-connection); \
                 close one with opcode 10",
                self.open.len()
            ));
        }
        validate_params_and_fee(params, fee_pct).map_err(|e| e.to_string())?;
        let max = c.max_streams;
        self.shared
            .streams
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                (open < max).then_some(open + 1)
            })
            .map_err(|_| {
                format!("{max} streams open on this server, the limit (--max-streams); retry later")
            })?;
        let need = params.iter().map(effective_window).max().unwrap_or(1) as u64 + 1;
        let charged = (n as u64).saturating_mul(OPEN_PER_COMBO) + OPEN_BASE;
        let opened = self
            .charge(charged, || format!("a stream of {n} combos"))
            .and_then(|()| {
                catch_unwind(|| Live::new(params, fee_pct))
                    .map_err(|_| "internal error: opening a stream panicked".to_string())?
                    .map_err(|e| e.to_string())
                    .inspect_err(|_| {
                        self.shared
                            .loaded_bytes
                            .fetch_sub(charged, Ordering::SeqCst);
                    })
            });
        let live = opened.inspect_err(|_| {
            self.shared.streams.fetch_sub(1, Ordering::SeqCst);
        })?;
        let id = self.next_id;
        self.next_id += 1;
        let base = live.memory_bytes() as u64;
        let slot = SLOT_PER_NODE * (live.nodes().iter().sum::<usize>() as u64 + 2);
        self.open.insert(
            id,
            OpenStream {
                live,
                base,
                slot,
                need,
                charged,
                growths: Live::growths(),
            },
        );
        self.true_up(id);
        Ok(protocol::encode_reply(&id.to_le_bytes()))
    }

    /// Opcode 9: the bars are validated whole first, so a bad one (named by its bar in the
    /// whole stream) changes nothing; memory is charged before the push allocates it.
    pub(super) fn push(&mut self, id: u64, bars: &[f64]) -> Result<Vec<u8>, String> {
        let shared = self.shared;
        let Some(s) = self.open.get_mut(&id) else {
            return Err(unknown(id));
        };
        let start = s.live.bars();
        let n = s.live.params().len();
        if !bars.is_empty() {
            validate_close(bars).map_err(|e| match e {
                KernelError::BadPrice { index, value } => format!(
                    "stream {id}: {}; nothing of this push was applied",
                    KernelError::BadPrice {
                        index: index.saturating_add(start as usize),
                        value,
                    }
                ),
                e => format!("stream {id}: {e}"),
            })?;
        }
        let cells = (n as u64).saturating_mul(bars.len() as u64);
        let reply_bytes = WORST_EVENT_BYTES
            .saturating_mul(cells)
            .saturating_add(EVENTS_HEAD as u64);
        if reply_bytes > u64::from(protocol::MAX_FRAME_LIMIT) {
            return Err(format!(
                "a push of {} bars to a stream of {n} combos may cause a reply of {reply_bytes} \
                 bytes, over the protocol's frame limit of {} bytes; push fewer bars at once",
                bars.len(),
                protocol::MAX_FRAME_LIMIT
            ));
        }
        let worst = WORST_PER_CELL
            .saturating_mul(cells)
            .saturating_add(4 + EVENTS_HEAD as u64);
        let mut reply = shared.inflight.reserve(worst).map_err(|used| {
            format!(
                "a push of {} bars to a stream of {n} combos may need {worst} bytes for its \
                 events, over the in-flight budget of {} bytes ({used} in use; --max-inflight); \
                 push fewer bars at once",
                bars.len(),
                shared.inflight.max()
            )
        })?;
        let end = start.saturating_add(bars.len() as u64);
        let grown = s.bound(end).saturating_sub(s.charged);
        if grown > 0 {
            charge(shared, grown, || {
                format!("stream {id}'s history after {end} bars")
            })?;
            s.charged += grown;
        }
        let events = &mut self.events;
        events.clear();
        let pushed = catch_unwind(AssertUnwindSafe(|| s.live.push_many(bars, events)));
        let Ok(pushed) = pushed else {
            // Its state may be half-updated: the stream cannot go on.
            self.remove(id);
            self.events = Vec::new();
            return Err(format!(
                "internal error: stream {id} panicked on a push and was closed"
            ));
        };
        // Validated above, so this fails only if `Live` disagrees; then nothing was pushed.
        pushed.map_err(|e| format!("stream {id}: {e}"))?;
        let mut frame = std::mem::take(&mut self.frame);
        protocol::encode_events(s.live.bars(), &self.events, &mut frame);
        self.frame_out = true;
        if self.events.capacity() > KEEP_EVENTS {
            self.events = Vec::new();
        }
        let held = self.events.capacity() * std::mem::size_of::<Event>() + frame.capacity();
        reply.shrink_to(held as u64);
        self.charge = Some(reply);
        let growths = Live::growths();
        if growths != s.growths {
            s.growths = growths;
            true_up(shared, s);
        }
        Ok(frame)
    }

    /// Opcode 10: the final `(pnl, trades)` of every combo, as opcode 0's reply.
    pub(super) fn close(&mut self, id: u64) -> Result<Vec<u8>, String> {
        let live = self.remove(id).ok_or_else(|| unknown(id))?;
        Ok(protocol::encode_sweep_reply(&live.result(), None))
    }

    /// Opcode 11: bars, result so far and open positions, without changing the stream.
    pub(super) fn state(&self, id: u64) -> Result<Vec<u8>, String> {
        let live = &self.open.get(&id).ok_or_else(|| unknown(id))?.live;
        Ok(protocol::encode_state(&StreamState {
            bars: live.bars(),
            result: live.result(),
            positions: (0..live.params().len()).map(|k| live.position(k)).collect(),
        }))
    }
}

/// Charges `bytes` more to the loaded budget, or says why not.
fn charge(shared: &Shared, bytes: u64, what: impl FnOnce() -> String) -> Result<(), String> {
    let max = shared.config.max_loaded_bytes;
    shared
        .loaded_bytes
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
            used.checked_add(bytes).filter(|&t| t <= max)
        })
        .map(|_| ())
        .map_err(|used| {
            format!(
                "{} needs {bytes} more bytes, over the loaded limit of {max} bytes ({used} in \
                 use by loaded series and streams; --max-loaded); close streams with opcode \
                 10 or drop series with opcode 4",
                what()
            )
        })
}

/// Charges whatever `s.live` holds beyond what was charged: a guard, so the accounting stays
/// an upper bound even if its layout grows past [`OpenStream::bound`].
fn true_up(shared: &Shared, s: &mut OpenStream) {
    let real = s.live.memory_bytes() as u64;
    if real > s.charged {
        let extra = real - s.charged;
        shared.loaded_bytes.fetch_add(extra, Ordering::SeqCst);
        s.charged = real;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Config;
    use hullsweep_kernel::{DEFAULT_FEE_PCT, default_close, default_params};

    /// The reply buffer kept between pushes is charged to the in-flight budget with the
    /// events buffer, reused by the next push, and everything is given back with the streams.
    #[test]
    fn the_kept_reply_buffer_is_charged_and_reused() {
        let shared = Shared::new(Config::default()).unwrap();
        let close = default_close();
        {
            let mut streams = Streams::new(&shared);
            let id = u64::from_le_bytes(
                streams.open(&default_params(), DEFAULT_FEE_PCT).unwrap()[4..]
                    .try_into()
                    .unwrap(),
            );
            let mut last = None;
            for bars in close[..400].chunks(2) {
                let (kept_at, kept_cap) = (streams.frame.as_ptr(), streams.frame.capacity());
                let frame = streams.push(id, bars).unwrap();
                let at = frame.as_ptr();
                if frame.len() <= kept_cap {
                    assert_eq!(at, kept_at, "the kept buffer is the next reply's");
                }
                let cap = frame.capacity();
                streams.written(frame);
                let kept = if cap <= KEEP_FRAME { cap } else { 0 };
                let held = streams.events.capacity() * std::mem::size_of::<Event>() + kept;
                assert_eq!(shared.inflight_bytes(), held as u64);
                if kept > 0 {
                    assert_eq!(streams.frame.as_ptr(), at);
                }
                last = Some(cap);
            }
            assert!(last.is_some_and(|c| c > 0));
            // Another request's reply is not kept in place of the push's, nor charged.
            let kept = streams.frame.as_ptr();
            let before = shared.inflight_bytes();
            let state = streams.state(id).unwrap();
            streams.written(state);
            assert_eq!(streams.frame.as_ptr(), kept);
            assert_eq!(shared.inflight_bytes(), before);
        }
        assert_eq!(shared.inflight_bytes(), 0);
        assert_eq!(shared.loaded_bytes(), 0);
    }
}
