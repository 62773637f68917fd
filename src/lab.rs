//! The lab: numba (single-thread and prange) and every Rust variant on one sweep, gated against
//! numba and timed side by side in interleaved rounds, so ratios come from one run on one machine.

use crate::gate::{self, GateReport};
use crate::machine::Machine;
use crate::numba::{Mode, Worker};
use crate::{Combo, SweepResult, Threads, Variant};
use std::time::Instant;

/// One implementation the lab measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    Numba(Mode),
    /// A Rust variant run with the lab's thread setting.
    Rust(Variant),
    /// A Rust variant pinned to this many threads (to show how a parallel variant scales).
    RustPinned(Variant, usize),
}

impl Contender {
    pub fn name(&self) -> String {
        match self {
            Contender::Numba(Mode::Single) => "numba (1 thread)".into(),
            Contender::Numba(Mode::Prange) => "numba prange".into(),
            Contender::Rust(v) => v.name().into(),
            Contender::RustPinned(v, 1) => format!("{} (1 thread)", v.name()),
            Contender::RustPinned(v, n) => format!("{} ({n} threads)", v.name()),
        }
    }
}

/// What to run: the sweep, how many timed rounds, and which contenders.
pub struct LabConfig {
    pub close: Vec<f64>,
    pub params: Vec<Combo>,
    pub fee: f64,
    pub threads: Threads,
    pub rounds: usize,
    pub contenders: Vec<Contender>,
}

/// One row of the lab table.
#[derive(Clone, Debug)]
pub struct LabRow {
    pub contender: Contender,
    pub times: Vec<f64>,
    /// Against numba single-thread; `None` for numba single-thread itself.
    pub gate: Option<GateReport>,
}

impl LabRow {
    pub fn median(&self) -> f64 {
        median(&self.times)
    }
}

/// The lab's result: rows in contender order plus what it ran on.
pub struct LabReport {
    pub rows: Vec<LabRow>,
    pub bars: usize,
    pub combos: usize,
    pub rounds: usize,
    pub machine: Machine,
    pub numba_versions: String,
    pub date: String,
}

pub fn median(times: &[f64]) -> f64 {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    }
}

/// Where the lab is, for a progress display: `done` of `total` steps are finished and `now`
/// says what runs next (for example `round 2/5: simd`).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub now: &'a str,
}

/// Runs the lab. `progress` is called before every step (loading, the oracle run, each gate
/// run, each timed run) and once more when all are done (`now` empty).
pub fn run(
    cfg: &LabConfig,
    worker: &mut Worker,
    mut progress: impl FnMut(Progress<'_>),
) -> anyhow::Result<LabReport> {
    // Steps: load, the oracle run, one gate run per other contender, then the timed rounds.
    let gated = cfg
        .contenders
        .iter()
        .filter(|c| **c != Contender::Numba(Mode::Single))
        .count();
    let total = 2 + gated + cfg.rounds * cfg.contenders.len();
    let mut done = 0;
    let mut step = |now: &str| {
        progress(Progress { done, total, now });
        done += 1;
    };

    step("numba: load the data, compile the kernel (cached after the first run)");
    worker.load(&cfg.close, &cfg.params, cfg.fee)?;
    let numba_versions = worker
        .versions()?
        .iter()
        .map(|(k, v)| format!("{k} {}", v.as_str().map_or(v.to_string(), str::to_string)))
        .collect::<Vec<_>>()
        .join(", ");

    // Untimed first pass: warms every contender and gives the results the gate compares.
    step("gate: numba (1 thread), the oracle");
    let (_, oracle) = worker.time(Mode::Single)?;
    let mut rows: Vec<LabRow> = Vec::with_capacity(cfg.contenders.len());
    for &c in &cfg.contenders {
        let gate = match c {
            Contender::Numba(Mode::Single) => None,
            _ => {
                step(&format!("gate: {} against numba", c.name()));
                Some(gate::compare(
                    &c.name(),
                    &run_once(cfg, worker, c)?.1,
                    &oracle,
                ))
            }
        };
        rows.push(LabRow {
            contender: c,
            times: Vec::with_capacity(cfg.rounds),
            gate,
        });
    }

    // Timed rounds, rotating the order each round so no contender always runs first.
    for round in 0..cfg.rounds {
        for j in 0..rows.len() {
            let idx = (j + round) % rows.len();
            step(&format!(
                "round {}/{}: {}",
                round + 1,
                cfg.rounds,
                rows[idx].contender.name()
            ));
            let (secs, _) = run_once(cfg, worker, rows[idx].contender)?;
            rows[idx].times.push(secs);
        }
    }
    progress(Progress {
        done: total,
        total,
        now: "",
    });
    Ok(LabReport {
        rows,
        bars: cfg.close.len(),
        combos: cfg.params.len(),
        rounds: cfg.rounds,
        machine: Machine::detect(),
        numba_versions,
        date: crate::machine::today(),
    })
}

fn run_once(
    cfg: &LabConfig,
    worker: &mut Worker,
    c: Contender,
) -> anyhow::Result<(f64, SweepResult)> {
    match c {
        Contender::Numba(mode) => worker.time(mode),
        Contender::Rust(v) => time_rust(cfg, v, cfg.threads),
        Contender::RustPinned(v, n) => time_rust(cfg, v, Threads::Fixed(n)),
    }
}

fn time_rust(cfg: &LabConfig, v: Variant, threads: Threads) -> anyhow::Result<(f64, SweepResult)> {
    let start = Instant::now();
    let r = v.sweep(&cfg.close, &cfg.params, cfg.fee, threads)?;
    Ok((start.elapsed().as_secs_f64(), r))
}

impl LabReport {
    fn numba_single_median(&self) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.contender == Contender::Numba(Mode::Single))
            .map(LabRow::median)
    }

    /// Every contender passed the gate against numba single-thread.
    pub fn all_pass(&self) -> bool {
        self.rows
            .iter()
            .all(|r| r.gate.as_ref().is_none_or(GateReport::passes))
    }

    /// A Markdown table: median time, speed relative to numba single-thread, gate verdict.
    pub fn to_markdown(&self) -> String {
        let base = self.numba_single_median();
        let mut s = String::new();
        s += &format!(
            "{} bars × {} combos, median of {} interleaved rounds; speed-up = numba 1-thread median / row median.\n\n",
            self.bars, self.combos, self.rounds
        );
        s += "| implementation | median (s) | min–max (s) | speed-up vs numba 1T | gate vs numba | max abs ΔPnL |\n";
        s += "|---|---:|---:|---:|---|---:|\n";
        for r in &self.rows {
            let (lo, hi) = r
                .times
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
                    (lo.min(t), hi.max(t))
                });
            let speed = base.map_or("–".to_string(), |b| format!("{:.2}×", b / r.median()));
            let (verdict, dpnl) = match &r.gate {
                None => ("oracle".to_string(), "–".to_string()),
                Some(g) => (
                    if g.passes() {
                        if g.bit_identical() {
                            "pass (bit-identical)".to_string()
                        } else {
                            "pass".to_string()
                        }
                    } else {
                        format!(
                            "FAIL ({} trade, {} PnL mismatches)",
                            g.trade_mismatches, g.pnl_mismatches
                        )
                    },
                    if g.max_abs_dpnl == 0.0 {
                        "0".to_string()
                    } else {
                        format!("{:.1e}", g.max_abs_dpnl)
                    },
                ),
            };
            s += &format!(
                "| {} | {:.3} | {:.3}–{:.3} | {} | {} | {} |\n",
                r.contender.name(),
                r.median(),
                lo,
                hi,
                speed,
                verdict,
                dpnl
            );
        }
        s += &format!(
            "\nMachine: {}. Python side: {}. Date: {}.\n",
            self.machine.summary(),
            self.numba_versions,
            self.date
        );
        s
    }
}
