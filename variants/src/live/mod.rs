//! `live`: the swept strategy run bar by bar ([`Live`]), every event, trade and result the
//! batch sweep's bit for bit; and [`trades`], the batch trade log of chosen combos through it.
//!
//! # Stages
//! One file each: `history` (the ring of the last bars), `exact` (the reference's `d` at one
//! bar) and `state` (each combo's event loop); this file holds the entry points.

mod exact;
mod history;
mod state;

use crate::stream::effective_window;
use history::History;
use hullsweep_kernel::{
    Combo, Event, KernelError, SweepResult, Trade, check_combos, validate_close,
    validate_params_and_fee, window,
};
use state::Loop;

/// A combo's open position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// `1` long, `-1` short.
    pub side: i64,
    /// The bar (from 0, over the whole stream) at which it opened.
    pub entry_bar: u64,
    /// `close[entry_bar]`.
    pub entry_price: f64,
}

/// How the bars pushed so far were computed, in (combo, bar) pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Bars pushed so far.
    pub bars: u64,
    /// (combo, bar) pairs whose `d` the error bound certified (O(1) each).
    pub certified: u64,
    /// (combo, bar) pairs the bound could not certify: their `d` was computed with the
    /// reference's arithmetic over that bar's windows.
    pub recomputed: u64,
}

/// Combos run live: [`push`](Live::push) bars as they come, get each bar's events.
///
/// The events, the positions and [`result`](Live::result) are those of the batch sweep of the
/// bars pushed so far, bit for bit (`hullsweep_kernel::backtest_events`, `docs/kernel.md`
/// "Trades and events"), whatever the chunking.
#[derive(Clone, Debug)]
pub struct Live {
    params: Vec<Combo>,
    /// The windows of each combo as `usize`, in the params' order.
    windows: Vec<[usize; 6]>,
    /// Each combo's effective lookback `W`: `d` is NaN while fewer bars than it have passed
    /// since the last NaN (`rolling.md`, "NaN bars").
    weff: Vec<usize>,
    fee_pct: f64,
    loops: Vec<Loop>,
    history: History,
    /// Bars since the last NaN bar (counting a virtual one before the stream).
    since_nan: usize,
    stats: LiveStats,
}

impl Live {
    /// Combos `params` at `fee_pct`, before the first bar. The windows and the fee are
    /// checked here; errors name the bad value.
    pub fn new(params: &[Combo], fee_pct: f64) -> Result<Live, KernelError> {
        validate_params_and_fee(params, fee_pct)?;
        let weff: Vec<usize> = params.iter().map(effective_window).collect();
        let need = weff.iter().copied().max().unwrap_or(1);
        Ok(Live {
            params: params.to_vec(),
            windows: params.iter().map(|c| c.map(window)).collect(),
            weff,
            fee_pct,
            loops: vec![Loop::new(); params.len()],
            history: History::new(need),
            since_nan: 0,
            stats: LiveStats::default(),
        })
    }

    /// One bar (NaN = missing bar). Appends this bar's events to `events`: combos in ascending
    /// order, for each a Close before its Open. A bad price is refused with its bar index in
    /// the whole stream ([`KernelError::BadPrice`]) and changes nothing.
    pub fn push(&mut self, close: f64, events: &mut Vec<Event>) -> Result<(), KernelError> {
        self.push_many(std::slice::from_ref(&close), events)
    }

    /// Many bars in order, events in bar order; the whole chunk is validated first and on
    /// error nothing is pushed.
    pub fn push_many(&mut self, bars: &[f64], events: &mut Vec<Event>) -> Result<(), KernelError> {
        if bars.is_empty() {
            return Ok(());
        }
        validate_close(bars).map_err(|e| match e {
            KernelError::BadPrice { index, value } => KernelError::BadPrice {
                index: index.saturating_add(self.stats.bars as usize),
                value,
            },
            e => e,
        })?;
        for &c in bars {
            self.step(c, events);
        }
        Ok(())
    }

    /// One validated bar.
    fn step(&mut self, c: f64, events: &mut Vec<Event>) {
        let bar = self.stats.bars;
        self.history.push(c);
        self.since_nan = if c.is_nan() {
            0
        } else {
            self.since_nan.saturating_add(1)
        };
        for k in 0..self.loops.len() {
            let d = if self.since_nan < self.weff[k] {
                f64::NAN
            } else {
                self.stats.recomputed += 1;
                exact::reference_d(&self.history, &self.windows[k], bar)
            };
            self.loops[k].step(k, bar, c, d, self.fee_pct, events);
        }
        self.stats.bars += 1;
    }

    /// Bars pushed so far.
    pub fn bars(&self) -> u64 {
        self.stats.bars
    }

    /// The combos, in the order of the results.
    pub fn params(&self) -> &[Combo] {
        &self.params
    }

    /// The round-trip fee per closed trade, in percentage points.
    pub fn fee_pct(&self) -> f64 {
        self.fee_pct
    }

    /// Combo `combo`'s open position, `None` while it is flat (before its first entry) or
    /// when there is no such combo.
    pub fn position(&self, combo: usize) -> Option<Position> {
        let l = self.loops.get(combo)?;
        (l.pos != 0).then_some(Position {
            side: l.pos,
            entry_bar: l.entry_bar,
            entry_price: l.entry,
        })
    }

    /// `(pnl, trades)` of every combo so far: the batch sweep of the bars pushed up to now.
    pub fn result(&self) -> SweepResult {
        SweepResult {
            pnl: self.loops.iter().map(|l| l.pnl).collect(),
            trades: self.loops.iter().map(|l| l.trades).collect(),
        }
    }

    /// Bars pushed and how their (combo, bar) pairs were computed.
    pub fn stats(&self) -> LiveStats {
        self.stats
    }

    /// Working memory held, in bytes (the params and per-combo state included).
    pub fn memory_bytes(&self) -> usize {
        self.history.bytes()
            + self.params.len()
                * (std::mem::size_of::<Combo>()
                    + std::mem::size_of::<[usize; 6]>()
                    + std::mem::size_of::<usize>()
                    + std::mem::size_of::<Loop>())
    }
}

/// Batch trade log of chosen combos, the same bits as `hullsweep_kernel::trades`: the combos
/// `combos` (indices into `params`) in the order given, each combo's trades in bar order, at
/// O(1) per bar per combo. Every input is validated; an index past the params is refused by name.
pub fn trades(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    combos: &[usize],
) -> Result<Vec<Trade>, KernelError> {
    validate_close(close)?;
    validate_params_and_fee(params, fee_pct)?;
    check_combos(combos, params.len())?;
    let chosen: Vec<Combo> = combos.iter().map(|&k| params[k]).collect();
    let mut live = Live::new(&chosen, fee_pct)?;
    let mut events = Vec::new();
    live.push_many(close, &mut events)?;
    // Events come in bar order; a stable sort by position in `combos` keeps each combo's in it.
    let mut log: Vec<(usize, Trade)> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::Close(t) => Some((
                t.combo,
                Trade {
                    combo: combos[t.combo],
                    ..t
                },
            )),
            Event::Open { .. } => None,
        })
        .collect();
    log.sort_by_key(|&(j, _)| j);
    Ok(log.into_iter().map(|(_, t)| t).collect())
}
