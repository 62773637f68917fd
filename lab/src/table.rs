//! The lab: numba (single-thread and prange) and every Rust variant on one sweep, gated against
//! numba and timed side by side in interleaved rounds, so ratios come from one run on one machine.

use crate::machine::Provenance;
use hullsweep_gate::numba::{Mode, Worker};
use hullsweep_gate::{self as gate, GateReport};
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_profiling::timing::median;
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

/// One implementation the lab measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    /// The numba reference in the given mode, run in the Python worker; single-thread is
    /// the oracle every other contender is gated against.
    Numba(Mode),
    /// A Rust variant run with the lab's thread setting.
    Rust(Variant),
    /// A Rust variant pinned to this many threads (to show how a parallel variant scales).
    RustPinned(Variant, usize),
}

impl Contender {
    /// The label used in the lab table, progress lines and gate reports, e.g. `numba prange` or
    /// `simd (4 threads)`.
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

/// The lab's contenders for `variants`: numba single-thread and prange, then each variant, a
/// parallel one (rayon, rolling-rayon) also pinned to one thread when it runs on more, so the
/// table shows how it scales.
pub fn contenders(variants: &[Variant], threads: Threads) -> Vec<Contender> {
    let mut contenders = vec![
        Contender::Numba(Mode::Single),
        Contender::Numba(Mode::Prange),
    ];
    for &v in variants {
        contenders.push(Contender::Rust(v));
        if matches!(v, Variant::Rayon | Variant::RollingRayon)
            && hullsweep_variants::rayon::thread_count(threads) > 1
        {
            contenders.push(Contender::RustPinned(v, 1));
        }
    }
    contenders
}

/// What to run: the sweep, how many timed rounds, and which contenders.
pub struct LabConfig {
    /// The close series every contender sweeps (finite prices `> 0`, NaN for a missing bar).
    pub close: Vec<f64>,
    /// The window combos to sweep, one result row per combo.
    pub params: Vec<Combo>,
    /// Round-trip fee per closed trade, in percentage points (see `docs/kernel.md`).
    pub fee: f64,
    /// Thread setting for `Contender::Rust`; pinned contenders and numba ignore it.
    pub threads: Threads,
    /// Timed rounds; each contender runs once per round, in rotated order, after an untimed
    /// gate pass.
    pub rounds: usize,
    /// What to run, in table order; numba single-thread is always run as the oracle even if
    /// absent here.
    pub contenders: Vec<Contender>,
}

/// One row of the lab table.
#[derive(Clone, Debug)]
pub struct LabRow {
    /// The implementation this row measures.
    pub contender: Contender,
    /// Wall-clock seconds of each timed round, in round order (one per round).
    pub times: Vec<f64>,
    /// Against numba single-thread; `None` for numba single-thread itself.
    pub gate: Option<GateReport>,
}

impl LabRow {
    /// The median of this row's round times, in seconds (NaN if no round ran).
    pub fn median(&self) -> f64 {
        median(&self.times)
    }
}

/// The lab's result: rows in contender order plus what it ran on.
pub struct LabReport {
    /// One row per contender, in `LabConfig::contenders` order.
    pub rows: Vec<LabRow>,
    /// Length of the close series swept, in bars.
    pub bars: usize,
    /// Number of combos swept.
    pub combos: usize,
    /// Timed rounds each contender ran.
    pub rounds: usize,
    /// When, at which commit, on what machine and under what load the lab started.
    pub provenance: Provenance,
    /// The Python-side versions the worker reported (numba, numpy, Python, ...), as
    /// `name version` pairs joined by commas.
    pub numba_versions: String,
}

/// Where the lab is, for a progress display: `done` of `total` steps are finished and `now`
/// says what runs next (for example `round 2/5: simd`).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Steps finished so far.
    pub done: usize,
    /// Total steps of the run; `done == total` on the final call.
    pub total: usize,
    /// The step about to run, in words; empty on the final call.
    pub now: &'a str,
}

/// Runs the lab. `progress` is called before every step (loading, the oracle run, each gate
/// run, each timed run) and once more when all are done (`now` empty).
pub fn run(
    cfg: &LabConfig,
    worker: &mut Worker,
    mut progress: impl FnMut(Progress<'_>),
) -> anyhow::Result<LabReport> {
    let provenance = Provenance::start();
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
        provenance,
        numba_versions,
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
    /// numba single-thread's median seconds in this run (the speed-ups' base).
    pub fn numba_1t_median(&self) -> Option<f64> {
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
        let base = self.numba_1t_median();
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
        s
    }
}
