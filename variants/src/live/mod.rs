//! `live`: the swept strategy run bar by bar ([`Live`]), every event, trade and result the
//! batch sweep's bit for bit at O(1) per bar per combo; and [`trades`], the batch trade log of
//! chosen combos through it.
//!
//! # Stages
//! One file each: `ring` (what is kept of the past), `graph` (the pipeline shared by every
//! combo, with its rolling WMAs), `scale` (the bound's `M`), `bound` (each combo's threshold,
//! by `rolling`'s `Plan`), `exact` (the reference's `d` at one bar, for the bars the bound
//! leaves uncertified) and `state` (each combo's event loop);
//! this file holds the entry points and the certification test. Why the fast path's bound
//! holds bar by bar: `variants/src/live.md` (below).
#![doc = include_str!("../live.md")]

mod bound;
mod exact;
mod graph;
mod ring;
mod scale;
mod state;
#[cfg(test)]
mod tests;

use crate::lookback::effective_window;
use crate::rolling::certify::{Plan, Route};
use bound::Thresholds;
use exact::Closes;
use graph::{Graph, Want};
use hullsweep_kernel::{
    Combo, Event, KernelError, SweepResult, Trade, check_combos, validate_close,
    validate_params_and_fee, window,
};
use ring::Series;
use scale::Scale;
use state::{Cold, Hot};

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

/// The longest lookback a combo's fast path is planned for (2^32 bars): windows that long
/// are far past the bound's own limit (`rolling.md`, second-order terms) anyway.
const LONGEST: usize = 1 << 32;

/// How one combo runs, what a push reads of it at every bar: where its indicators are, when
/// its `d` is defined, its threshold and its loop's hot state.
#[derive(Clone, Copy, Debug)]
struct Run {
    h: u32,
    h3: u32,
    /// The effective lookback `W`: `d` is NaN while fewer bars than it have passed since the
    /// last NaN (`rolling.md`, "NaN bars").
    weff: usize,
    /// The certification threshold at the current scale (`+inf`: certifies nothing).
    thr: f64,
    lp: Hot,
}

/// Combos run live: [`push`](Live::push) bars as they come, get each bar's events.
///
/// The events, the positions and [`result`](Live::result) are those of the batch sweep of the
/// bars pushed so far, bit for bit (`hullsweep_kernel::backtest_events`, `docs/kernel.md`
/// "Trades and events"), whatever the chunking. A push costs O(1) per combo where the error
/// bound certifies the fast `d` (and O(1) per distinct window for the rolling WMAs); a bar it
/// cannot certify gets the reference's arithmetic for that bar's windows only.
#[derive(Clone, Debug)]
pub struct Live {
    params: Vec<Combo>,
    fee_pct: f64,
    runs: Vec<Run>,
    cold: Vec<Cold>,
    thresholds: Thresholds,
    graph: Graph,
    close: Series<f64>,
    /// The run of bit-identical closes ending at each bar.
    run: Series<u32>,
    scale: Scale,
    /// Bars since the last NaN bar (counting a virtual one before the stream).
    since_nan: usize,
    stats: LiveStats,
}

impl Live {
    /// Combos `params` at `fee_pct`, before the first bar. The windows and the fee are
    /// checked here; errors name the bad value.
    pub fn new(params: &[Combo], fee_pct: f64) -> Result<Live, KernelError> {
        validate_params_and_fee(params, fee_pct)?;
        // The bound of `rolling`, through its own code: route and plan for a series of up to
        // `LONGEST` bars, then the threshold `Plan::threshold` per bar. A combo with a longer
        // lookback (which no stream fills in practice) takes the exact path at every bar.
        let plans: Vec<Option<Plan>> = params
            .iter()
            .map(|c| match Plan::route(c, LONGEST) {
                Route::Fast(p) => Some(p),
                Route::Direct | Route::AllNan => None,
            })
            .collect();
        let wants: Vec<Want> = params
            .iter()
            .zip(&plans)
            .map(|(c, p)| Want {
                w: c.map(window),
                period: p.map(|p| p.period),
            })
            .collect();
        let (graph, ends) = Graph::build(&wants);
        let weff: Vec<usize> = params.iter().map(effective_window).collect();
        let blocks: Vec<usize> = plans
            .iter()
            .map(|p| p.map_or(1, |p| Scale::blocks_for(reach(&p))))
            .collect();
        let runs: Vec<Run> = ends
            .iter()
            .zip(&weff)
            .map(|(e, &weff)| Run {
                h: e.h,
                h3: e.h3,
                weff,
                thr: f64::INFINITY,
                lp: Hot::new(),
            })
            .collect();
        let need = weff.iter().copied().max().unwrap_or(1).saturating_add(1);
        let scale = Scale::new(blocks.iter().copied().max().unwrap_or(1));
        Ok(Live {
            params: params.to_vec(),
            fee_pct,
            runs,
            cold: vec![Cold::new(); params.len()],
            thresholds: Thresholds::new(plans, &blocks),
            graph,
            close: Series::new(need, f64::NAN),
            run: Series::new(need, 0),
            scale,
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

    /// One validated bar: the fast values of every node, then each combo's `d` (NaN, certified
    /// fast, or exact) and its event loop.
    fn step(&mut self, c: f64, events: &mut Vec<Event>) {
        let i = self.stats.bars;
        let run = match i.checked_sub(1) {
            Some(p) if self.close.at(p).to_bits() == c.to_bits() => {
                self.run.at(p).saturating_add(1)
            }
            _ => 1,
        };
        self.close.push(c);
        self.run.push(run);
        self.scale.push(i, c);
        self.since_nan = if c.is_nan() {
            0
        } else {
            self.since_nan.saturating_add(1)
        };
        self.graph.advance(i, &self.close);
        let runs = &mut self.runs;
        self.thresholds
            .update(&self.scale, |k, thr| runs[k].thr = thr);
        let closes = Closes {
            close: &self.close,
            run: &self.run,
        };
        let (mut certified, mut recomputed) = (0, 0);
        for (k, (r, cold)) in self.runs.iter_mut().zip(&mut self.cold).enumerate() {
            let d = if self.since_nan < r.weff {
                f64::NAN
            } else {
                let d = self.graph.h[r.h as usize].value - self.graph.h3[r.h3 as usize].value;
                // The difference of two floats has the sign of the exact difference, so this
                // is the bound's test exactly; NaN (past the overflow guard) fails it.
                if d.abs() - r.thr > 0.0 {
                    certified += 1;
                    d
                } else {
                    recomputed += 1;
                    self.graph.exact_d(r.h, r.h3, i, &closes)
                }
            };
            state::step(&mut r.lp, cold, k, i, c, d, self.fee_pct, events);
        }
        self.stats.certified += certified;
        self.stats.recomputed += recomputed;
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
        let (pos, cold) = (self.runs.get(combo)?.lp.pos, self.cold[combo]);
        (pos != 0).then_some(Position {
            side: pos,
            entry_bar: cold.entry_bar,
            entry_price: cold.entry,
        })
    }

    /// `(pnl, trades)` of every combo so far: the batch sweep of the bars pushed up to now.
    pub fn result(&self) -> SweepResult {
        SweepResult {
            pnl: self.cold.iter().map(|l| l.pnl).collect(),
            trades: self.cold.iter().map(|l| l.trades).collect(),
        }
    }

    /// Bars pushed and how their (combo, bar) pairs were computed.
    pub fn stats(&self) -> LiveStats {
        self.stats
    }

    /// Working memory held, in bytes (the params and per-combo state included).
    pub fn memory_bytes(&self) -> usize {
        self.close.bytes()
            + self.run.bytes()
            + self.graph.bytes()
            + self.params.len()
                * (std::mem::size_of::<Combo>()
                    + std::mem::size_of::<Run>()
                    + std::mem::size_of::<Cold>()
                    + std::mem::size_of::<Option<Plan>>())
    }

    /// How many times the history of any `Live` in this process has grown so far (a ring or an
    /// exact-value cache doubled). Read on the thread that pushed, the same value before and
    /// after a push means the push allocated no history, so [`memory_bytes`](Live::memory_bytes)
    /// is what it was: a caller that accounts for memory rescans only after a push that moved it.
    pub fn growths() -> u64 {
        ring::growths()
    }

    /// Distinct nodes of the shared pipeline: WMAs of close, `2a - b`, `3c - dd - e`, `hma`
    /// and `hma3` (a grid of 10,000 combos has about a hundred of each).
    pub fn nodes(&self) -> [usize; 5] {
        self.graph.sizes()
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
    let (mut events, mut log) = (Vec::new(), Vec::new());
    // In pieces, so the opens (which the log drops) never pile up.
    for piece in close.chunks(1 << 16) {
        live.push_many(piece, &mut events)?;
        log.extend(events.drain(..).filter_map(|e| match e {
            Event::Close(t) => Some((
                t.combo,
                Trade {
                    combo: combos[t.combo],
                    ..t
                },
            )),
            Event::Open { .. } => None,
        }));
    }
    // Events come in bar order; a stable sort by position in `combos` keeps each combo's in it.
    log.sort_by_key(|&(j, _)| j);
    Ok(log.into_iter().map(|(_, t)| t).collect())
}

/// How far back a combo's fast `d` reads close: its second-level window and steps since that
/// roll's restart, then the first level's for the oldest of those (`live.md`).
fn reach(p: &Plan) -> usize {
    p.period
        .saturating_mul(2)
        .saturating_add(p.w1)
        .saturating_add(p.w2)
}
