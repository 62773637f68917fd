//! The stream family (opcodes 8..=11): a live stream's requests and replies, its events packed
//! as little-endian records, closes then opens, each in the order the stream produced them.

use crate::protocol::layout::ID_HEADER_LEN;
use crate::protocol::request::request_head;
use crate::protocol::wire::{f64s_from_le, put_f64s, put_i64s};
use hullsweep_kernel::{Combo, Event, SweepResult, Trade};
use hullsweep_variants::Position;

// Defined with the other opcodes, so that request parsing needs nothing from this file.
pub use crate::protocol::opcode::{
    OP_STREAM_CLOSE, OP_STREAM_OPEN, OP_STREAM_PUSH, OP_STREAM_STATE,
};

/// A push reply's head: `[u64 bars][u32 n_closes][u32 n_opens]`.
pub const EVENTS_HEAD: usize = 16;
/// A close record: `[u32 combo][i8 side][u64 entry_bar][u64 exit_bar][f64 entry_price]
/// [f64 exit_price][f64 pnl]`.
pub const CLOSE_RECORD: usize = 45;
/// An open record: `[u32 combo][i8 side][u64 bar][f64 price]`.
pub const OPEN_RECORD: usize = 21;
/// The most reply bytes one (combo, bar) can cause: a reversal, a close and an open.
pub const WORST_EVENT_BYTES: u64 = (CLOSE_RECORD + OPEN_RECORD) as u64;

/// An open request frame: `[8][0][n_combos][f64 fee_pct][n_combos x 6 x i64 params]`.
pub fn encode_open(params: &[Combo], fee_pct: f64) -> Vec<u8> {
    let mut out = request_head(OP_STREAM_OPEN, 0, params.len() as u32, Some(0));
    out[4 + 9..4 + ID_HEADER_LEN].copy_from_slice(&fee_pct.to_le_bytes());
    put_i64s(&mut out, bytemuck::cast_slice(params));
    out
}

/// The head of a push frame, `[len][9][n_bars][0][u64 id]`, to precede the bars in one
/// vectored write. On the stack: a client pushing bar after bar allocates nothing for it.
pub fn push_head(id: u64, n_bars: u32) -> [u8; 4 + ID_HEADER_LEN] {
    let body_len = ID_HEADER_LEN as u64 + 8 * u64::from(n_bars);
    let mut out = [0; 4 + ID_HEADER_LEN];
    // As `request_head`: a body over u32 is refused by every server, which names the problem.
    out[..4].copy_from_slice(&u32::try_from(body_len).unwrap_or(u32::MAX).to_le_bytes());
    out[4] = OP_STREAM_PUSH;
    out[5..9].copy_from_slice(&n_bars.to_le_bytes());
    out[13..].copy_from_slice(&id.to_le_bytes());
    out
}

/// A push reply frame for `events` (in the order a stream produced them), after which the
/// stream has `bars` bars; `out` is cleared first and keeps its capacity.
pub fn encode_events(bars: u64, events: &[Event], out: &mut Vec<u8>) {
    let closes = events
        .iter()
        .filter(|e| matches!(e, Event::Close(_)))
        .count();
    let opens = events.len() - closes;
    let body = EVENTS_HEAD + CLOSE_RECORD * closes + OPEN_RECORD * opens;
    out.clear();
    // Exact, so the memory held is what the push was charged for.
    out.reserve_exact(4 + body);
    out.extend_from_slice(&(body as u32).to_le_bytes());
    out.extend_from_slice(&bars.to_le_bytes());
    out.extend_from_slice(&(closes as u32).to_le_bytes());
    out.extend_from_slice(&(opens as u32).to_le_bytes());
    for e in events {
        if let Event::Close(t) = e {
            put_combo_side(out, t.combo, t.side);
            out.extend_from_slice(&t.entry_bar.to_le_bytes());
            out.extend_from_slice(&t.exit_bar.to_le_bytes());
            put_f64s(out, &[t.entry_price, t.exit_price, t.pnl]);
        }
    }
    for e in events {
        if let &Event::Open {
            combo,
            bar,
            side,
            price,
        } = e
        {
            put_combo_side(out, combo, side);
            out.extend_from_slice(&bar.to_le_bytes());
            out.extend_from_slice(&price.to_le_bytes());
        }
    }
    debug_assert_eq!(out.len(), 4 + body);
}

fn put_combo_side(out: &mut Vec<u8>, combo: usize, side: i64) {
    debug_assert!(combo <= u32::MAX as usize && (side == 1 || side == -1));
    out.extend_from_slice(&(combo as u32).to_le_bytes());
    out.push(side as i8 as u8);
}

/// Little-endian reads from a body whose length was checked first.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().unwrap_or([0; N])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
    fn side(&mut self) -> i64 {
        i64::from(self.take::<1>()[0] as i8)
    }
}

/// Decodes a push reply body: the stream's bar count after the push and its events, in the
/// order the stream produced them (by bar, then combo, a close before its combo's open).
pub fn decode_events(body: &[u8], n_combos: usize) -> Result<(u64, Vec<Event>), String> {
    let mut events = Vec::new();
    let bars = decode_events_into(body, n_combos, &mut events)?;
    Ok((bars, events))
}

/// [`decode_events`] appending to `out`: nothing is appended when the body is refused. The
/// close and open records are merged straight off the wire, so a client pushing bar after bar
/// allocates nothing here once `out` has grown.
pub fn decode_events_into(
    body: &[u8],
    n_combos: usize,
    out: &mut Vec<Event>,
) -> Result<u64, String> {
    if body.len() < EVENTS_HEAD {
        return Err(format!(
            "push reply of {} bytes is shorter than its {EVENTS_HEAD}-byte head",
            body.len()
        ));
    }
    let mut c = Cursor(body);
    let bars = c.u64();
    let (closes, opens) = (c.u32() as usize, c.u32() as usize);
    let want = EVENTS_HEAD as u64 + (CLOSE_RECORD * closes + OPEN_RECORD * opens) as u64;
    if body.len() as u64 != want {
        return Err(format!(
            "push reply of {} bytes, expected {want} for {closes} closes and {opens} opens",
            body.len()
        ));
    }
    let (close_bytes, open_bytes) = c.0.split_at(CLOSE_RECORD * closes);
    let mut close_records = close_bytes.chunks_exact(CLOSE_RECORD).map(|r| {
        let mut c = Cursor(r);
        Event::Close(Trade {
            combo: c.u32() as usize,
            side: c.side(),
            entry_bar: c.u64(),
            exit_bar: c.u64(),
            entry_price: c.f64(),
            exit_price: c.f64(),
            pnl: c.f64(),
        })
    });
    let mut open_records = open_bytes.chunks_exact(OPEN_RECORD).map(|r| {
        let mut c = Cursor(r);
        Event::Open {
            combo: c.u32() as usize,
            side: c.side(),
            bar: c.u64(),
            price: c.f64(),
        }
    });
    // Both lists are in stream order; merging by (bar, combo, close first) restores it.
    let key = |e: &Event| (e.bar(), e.combo(), matches!(e, Event::Open { .. }));
    let start = out.len();
    out.reserve(closes + opens);
    let (mut a, mut b) = (close_records.next(), open_records.next());
    loop {
        let take_close = match (&a, &b) {
            (Some(x), Some(y)) => key(x) <= key(y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let e = if take_close {
            std::mem::replace(&mut a, close_records.next())
        } else {
            std::mem::replace(&mut b, open_records.next())
        };
        out.extend(e);
    }
    if let Some(e) = out[start..].iter().find(|e| e.combo() >= n_combos) {
        let k = e.combo();
        out.truncate(start);
        return Err(format!(
            "event of combo {k} in a stream of {n_combos} combos"
        ));
    }
    Ok(bars)
}

/// A stream's state as opcode 11 reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamState {
    /// Bars pushed so far.
    pub bars: u64,
    /// `(pnl, trades)` of every combo so far: the batch sweep of those bars.
    pub result: SweepResult,
    /// Each combo's open position, `None` while flat.
    pub positions: Vec<Option<Position>>,
}

/// A state reply frame: `[u64 bars][n x f64 pnl][n x i64 trades][n x i64 side]
/// [n x u64 entry_bar][n x f64 entry_price]`, side 0 (and entry 0, 0.0) while flat.
pub fn encode_state(state: &StreamState) -> Vec<u8> {
    let n = state.result.len();
    let body = 8 + 40 * n;
    let mut out = Vec::with_capacity(4 + body);
    out.extend_from_slice(&(body as u32).to_le_bytes());
    out.extend_from_slice(&state.bars.to_le_bytes());
    put_f64s(&mut out, &state.result.pnl);
    put_i64s(&mut out, &state.result.trades);
    let flat = Position {
        side: 0,
        entry_bar: 0,
        entry_price: 0.0,
    };
    let pos = |p: &Option<Position>| p.unwrap_or(flat);
    let sides: Vec<i64> = state.positions.iter().map(|p| pos(p).side).collect();
    put_i64s(&mut out, &sides);
    for p in &state.positions {
        out.extend_from_slice(&pos(p).entry_bar.to_le_bytes());
    }
    let prices: Vec<f64> = state.positions.iter().map(|p| pos(p).entry_price).collect();
    put_f64s(&mut out, &prices);
    out
}

/// Decodes a state reply body of a stream of `n_combos` combos.
pub fn decode_state(body: &[u8], n_combos: usize) -> Result<StreamState, String> {
    let want = 8 + 40 * n_combos;
    if body.len() != want {
        return Err(format!(
            "state reply of {} bytes, expected {want} for {n_combos} combos",
            body.len()
        ));
    }
    let mut c = Cursor(body);
    let bars = c.u64();
    let col = |k: usize| &body[8 + 8 * n_combos * k..8 + 8 * n_combos * (k + 1)];
    let ints = |k: usize| -> Vec<i64> {
        col(k)
            .chunks_exact(8)
            .map(|w| i64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
            .collect()
    };
    let (sides, entry_bars, prices) = (ints(2), ints(3), f64s_from_le(col(4)));
    let positions = (0..n_combos)
        .map(|k| {
            (sides[k] != 0).then_some(Position {
                side: sides[k],
                entry_bar: entry_bars[k] as u64,
                entry_price: prices[k],
            })
        })
        .collect();
    Ok(StreamState {
        bars,
        result: SweepResult {
            pnl: f64s_from_le(col(0)).into_owned(),
            trades: ints(1),
        },
        positions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_head_is_the_request_head_of_a_push() {
        for (id, n) in [(0, 0), (1, 1), (u64::MAX, 7), (42, u32::MAX)] {
            assert_eq!(
                push_head(id, n)[..],
                request_head(OP_STREAM_PUSH, n, 0, Some(id))[..]
            );
        }
    }

    fn trade(combo: usize, side: i64, entry_bar: u64, exit_bar: u64) -> Trade {
        Trade {
            combo,
            side,
            entry_bar,
            exit_bar,
            entry_price: 100.0 + entry_bar as f64,
            exit_price: 100.0 + exit_bar as f64,
            pnl: f64::from_bits(0x7ff8_0000_0000_0001),
        }
    }

    #[test]
    fn events_round_trip_in_stream_order() {
        let open = |combo, bar, side| Event::Open {
            combo,
            bar,
            side,
            price: -0.0,
        };
        let events = vec![
            open(0, 3, 1),
            open(2, 3, -1),
            Event::Close(trade(0, 1, 3, 7)),
            open(0, 7, -1),
            open(1, 7, 1),
            Event::Close(trade(2, -1, 3, 7)),
            open(2, 7, 1),
            Event::Close(trade(1, 1, 7, 9)),
            open(1, 9, -1),
        ];
        let mut frame = Vec::new();
        encode_events(10, &events, &mut frame);
        assert_eq!(
            frame.len(),
            4 + EVENTS_HEAD + 3 * CLOSE_RECORD + 6 * OPEN_RECORD
        );
        let (bars, got) = decode_events(&frame[4..], 3).unwrap();
        assert_eq!(bars, 10);
        assert_eq!(got.len(), events.len());
        assert!(got.iter().zip(&events).all(|(g, w)| g.same(w)), "{got:?}");
        assert!(
            decode_events(&frame[4..], 2)
                .unwrap_err()
                .contains("combo 2")
        );
        assert!(decode_events(&frame[4..frame.len() - 1], 3).is_err());
        // Into a list that already holds events: appended after them, or nothing on refusal.
        let mut out = vec![open(5, 1, 1)];
        assert_eq!(decode_events_into(&frame[4..], 3, &mut out), Ok(10));
        assert!(out[0].same(&open(5, 1, 1)) && out.len() == 1 + events.len());
        assert!(
            out[1..].iter().zip(&events).all(|(g, w)| g.same(w)),
            "{out:?}"
        );
        let mut refused = vec![open(5, 1, 1)];
        assert!(decode_events_into(&frame[4..], 2, &mut refused).is_err());
        assert_eq!(refused.len(), 1);
    }

    #[test]
    fn state_round_trips_with_flat_combos() {
        let state = StreamState {
            bars: 42,
            result: SweepResult {
                pnl: vec![1.5, -0.0],
                trades: vec![3, 0],
            },
            positions: vec![
                Some(Position {
                    side: -1,
                    entry_bar: 40,
                    entry_price: 99.5,
                }),
                None,
            ],
        };
        let f = encode_state(&state);
        assert_eq!(decode_state(&f[4..], 2).unwrap(), state);
        assert!(decode_state(&f[4..], 3).is_err());
    }
}
