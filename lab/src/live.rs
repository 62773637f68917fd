//! The lab's live section: per-bar latency of `Live::push` after 150,000 default bars, for 80 and
//! 10,000 combos, beside what a user does without it (re-run the batch; numba on the last window).

use crate::machine::Provenance;
use hullsweep_data::datasets;
use hullsweep_gate::numba::{Mode, Worker};
use hullsweep_kernel::{self as kernel, Combo, DEFAULT_FEE_PCT, DEFAULT_SEED, DEFAULT_SIGMA};
use hullsweep_variants::stream::effective_window;
use hullsweep_variants::{Live, Threads, Variant};
use std::time::Instant;

/// Opens the section in `reports/lab.md` (`hullsweep lab --live` replaces what is between).
pub const BEGIN: &str = "<!-- live: written by `hullsweep lab` and `hullsweep lab --live` -->";
/// Closes it.
pub const END: &str = "<!-- /live -->";

/// Bars of default history pushed before any push is timed.
pub const WARM: usize = 150_000;

/// The adversarial gate datasets pushed after the history, beside the default series' next bars:
/// flat runs (where the bound certifies least), NaN runs (restarts), extreme spikes.
pub const ADVERSARIAL: [&str; 3] = ["flat_steps", "nan_runs", "extreme_spikes"];

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// Default-series bars timed after the history, per grid (80 combos, 10,000 combos).
    pub bars: [usize; 2],
    /// At most this many bars of each adversarial dataset are timed, per grid.
    pub adversarial_bars: [usize; 2],
    /// Rounds: each is one batch re-run, one numba window run and a block of timed pushes, in
    /// turn (A B A B ...), so their ratio comes from the same minutes of a shared machine.
    pub rounds: usize,
    /// Each timed bar is also pushed into this many copies of the state before it, and the
    /// least time is kept beside the as-run one (what the bar costs without preemption).
    pub replays: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bars: [20_000, 3_000],
            adversarial_bars: [5_000, 1_500],
            rounds: 3,
            replays: 2,
        }
    }
}

/// Per-push latencies of one series and grid, in nanoseconds.
#[derive(Clone, Debug)]
pub struct Row {
    /// The series pushed (after the history).
    pub series: String,
    /// Combos run.
    pub combos: usize,
    /// Bars timed.
    pub bars: usize,
    /// p50, p99 and max as run.
    pub wall: [f64; 3],
    /// p50, p99 and max of each bar's least time over its replays and the run.
    pub best: [f64; 3],
    /// Fraction of the defined (combo, bar) pairs of the timed bars the bound certified.
    pub certified: f64,
    /// `result()` after the timed bars equals the batch sweep of the same bars, bit for bit.
    pub exact: bool,
}

/// What a user does without it, per new bar, for one grid (medians, seconds).
#[derive(Clone, Debug)]
pub struct Baseline {
    /// Combos run.
    pub combos: usize,
    /// `Variant::fastest()`, one thread, over the 150,000 bars of history.
    pub batch: f64,
    /// The numba reference (one thread) over the last `window` bars.
    pub numba: f64,
    /// The longest combo's lookback plus one (the cross needs the bar before).
    pub window: usize,
    /// The default series' as-run p50 and p99 of `Live::push`, nanoseconds.
    pub push: [f64; 2],
}

/// The section's measurements.
pub struct Report {
    /// Default series first, then the adversarial datasets, per grid.
    pub rows: Vec<Row>,
    /// One per grid.
    pub baselines: Vec<Baseline>,
    /// The config measured with.
    pub config: Config,
    /// When, at which commit, on what machine and under what load it started.
    pub provenance: Provenance,
    /// numba's side, as the worker reports it.
    pub numba_versions: String,
}

/// The two grids: the default 80 and `--grid 6:200:100 --grid3 6:200:100`.
pub fn grids() -> anyhow::Result<[(String, Vec<Combo>); 2]> {
    Ok([
        ("80 (default grid)".to_string(), kernel::default_params()),
        (
            "10,000 (6:200:100 × 6:200:100)".to_string(),
            kernel::grid2("6:200:100".parse()?, "6:200:100".parse()?)?,
        ),
    ])
}

fn quantiles(mut v: Vec<f64>) -> [f64; 3] {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    [q(0.5), q(0.99), v[v.len() - 1]]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Pushes `bars` one at a time into `live`, timing each (as run, and the least over `replays`
/// pushes of the same bar into copies of the state before it).
fn time_pushes(
    live: &mut Live,
    bars: &[f64],
    replays: usize,
    wall: &mut Vec<f64>,
    best: &mut Vec<f64>,
) {
    let mut events = Vec::new();
    for &c in bars {
        let mut least = f64::INFINITY;
        for _ in 0..replays {
            let mut copy = live.clone();
            events.clear();
            let t = Instant::now();
            copy.push(c, &mut events).expect("validated bars");
            least = least.min(t.elapsed().as_nanos() as f64);
        }
        events.clear();
        let t = Instant::now();
        live.push(c, &mut events).expect("validated bars");
        let ns = t.elapsed().as_nanos() as f64;
        std::hint::black_box(&events);
        wall.push(ns);
        best.push(least.min(ns));
    }
}

/// `live`'s result against the batch sweep of every bar it was pushed.
fn exact(live: &Live, pushed: &[f64], params: &[Combo]) -> anyhow::Result<bool> {
    let batch = Variant::fastest().sweep(pushed, params, DEFAULT_FEE_PCT, Threads::Auto)?;
    let live = live.result();
    Ok(live.trades == batch.trades
        && live
            .pnl
            .iter()
            .zip(&batch.pnl)
            .all(|(a, b)| a.to_bits() == b.to_bits()))
}

fn certified_since(live: &Live, before: hullsweep_variants::LiveStats) -> f64 {
    let s = live.stats();
    let (c, r) = (
        s.certified - before.certified,
        s.recomputed - before.recomputed,
    );
    c as f64 / (c + r).max(1) as f64
}

/// Runs the section's measurements. `tick` says what runs next.
pub fn run(
    cfg: &Config,
    worker: &mut Worker,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Report> {
    anyhow::ensure!(cfg.rounds >= 1, "live lab: need at least one round");
    let provenance = Provenance::start();
    let longest = cfg.bars.iter().max().copied().unwrap_or(0);
    let series = kernel::gbm(WARM + longest, DEFAULT_SEED, DEFAULT_SIGMA)?;
    let (history, next) = series.split_at(WARM);
    let suite = datasets::suite();
    let mut rows = Vec::new();
    let mut baselines = Vec::new();
    for (g, (label, params)) in grids()?.into_iter().enumerate() {
        tick(&format!(
            "live: {label}: pushing the {WARM} bars of history"
        ));
        let mut live = Live::new(&params, DEFAULT_FEE_PCT)?;
        live.push_many(history, &mut Vec::new())?;
        let warmed = live.clone();

        let window = params.iter().map(effective_window).max().unwrap_or(1) + 1;
        worker.load(&history[WARM - window..], &params, DEFAULT_FEE_PCT)?;

        // A B A B: one batch re-run, one numba window run, a block of pushes, per round.
        let n = cfg.bars[g];
        let before = live.stats();
        let (mut batch, mut numba, mut wall, mut best) = (vec![], vec![], vec![], vec![]);
        for r in 0..cfg.rounds {
            tick(&format!("live: {label}: round {}/{}", r + 1, cfg.rounds));
            let t = Instant::now();
            let res =
                Variant::fastest().sweep(history, &params, DEFAULT_FEE_PCT, Threads::Fixed(1))?;
            batch.push(t.elapsed().as_secs_f64());
            std::hint::black_box(res);
            numba.push(worker.time(Mode::Single)?.0);
            let block = &next[r * n / cfg.rounds..(r + 1) * n / cfg.rounds];
            time_pushes(&mut live, block, cfg.replays, &mut wall, &mut best);
        }
        tick(&format!(
            "live: {label}: checking the result against the batch sweep"
        ));
        let certified = certified_since(&live, before);
        let exact_default = exact(&live, &series[..WARM + n], &params)?;
        let wall = quantiles(wall);
        baselines.push(Baseline {
            combos: params.len(),
            batch: median(batch),
            numba: median(numba),
            window,
            push: [wall[0], wall[1]],
        });
        rows.push(Row {
            series: format!("default, bars {}..", thousands(WARM)),
            combos: params.len(),
            bars: n,
            wall,
            best: quantiles(best),
            certified,
            exact: exact_default,
        });

        for name in ADVERSARIAL {
            let d = suite
                .iter()
                .find(|d| d.name == name)
                .ok_or_else(|| anyhow::anyhow!("no gate dataset {name}"))?;
            let bars = &d.close[..d.close.len().min(cfg.adversarial_bars[g])];
            tick(&format!("live: {label}: {name}"));
            let mut live = warmed.clone();
            let before = live.stats();
            let (mut wall, mut best) = (vec![], vec![]);
            time_pushes(&mut live, bars, cfg.replays, &mut wall, &mut best);
            let pushed: Vec<f64> = history.iter().chain(bars).copied().collect();
            rows.push(Row {
                series: format!("{name} (gate), after the history"),
                combos: params.len(),
                bars: bars.len(),
                wall: quantiles(wall),
                best: quantiles(best),
                certified: certified_since(&live, before),
                exact: exact(&live, &pushed, &params)?,
            });
        }
    }
    let numba_versions = worker
        .versions()?
        .iter()
        .map(|(k, v)| format!("{k} {}", v.as_str().map_or(v.to_string(), str::to_string)))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Report {
        rows,
        baselines,
        config: cfg.clone(),
        provenance,
        numba_versions,
    })
}

/// `150000` as `150,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn us(ns: f64) -> String {
    let us = ns / 1e3;
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1000.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

impl Report {
    /// Every row's result was the batch sweep's, bit for bit.
    pub fn all_exact(&self) -> bool {
        self.rows.iter().all(|r| r.exact)
    }

    /// The section, between [`BEGIN`] and [`END`].
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut s = format!("{BEGIN}\n## Live: cost per bar\n\n");
        s += &format!(
            "`Live::push` of one bar (all its combos' events), one thread, after the {} bars \
             of the default series were pushed; then the next bars of the same GBM, and beside \
             them the adversarial gate datasets (`docs/gate.md`) pushed after the same history. \
             Latency in µs per bar: as run, and \"best\": each bar's least time over the run and \
             {} pushes of the same bar into copies of the state before it (what the bar costs \
             without the shared machine's preemption). certified: the defined (combo, bar) pairs \
             of the timed bars that the error bound certified at O(1); the rest were computed with \
             the reference's arithmetic over that bar's windows. exact: `result()` after the timed \
             bars equals the batch sweep of every bar pushed, bit for bit.\n\n",
            thousands(WARM),
            c.replays
        );
        s += "| series | combos | bars timed | p50 | p99 | max | best p50 | best p99 | certified | exact |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {:.4} | {} |\n",
                r.series,
                thousands(r.combos),
                thousands(r.bars),
                us(r.wall[0]),
                us(r.wall[1]),
                us(r.wall[2]),
                us(r.best[0]),
                us(r.best[1]),
                r.certified,
                if r.exact { "yes" } else { "**NO**" }
            );
        }
        s += &format!(
            "\nWithout it, per new bar (medians of {} rounds, interleaved with the pushes above: \
             batch, numba, a block of pushes, ...): (a) re-run the batch sweep (`fastest` = {}, \
             one thread) over the {} bars of history; (b) run the numba reference (one \
             thread) over the last bars the longest combo reads, plus one for the cross (its \
             kernel time, measured inside Python: the call's own overhead comes on top).\n\n",
            c.rounds,
            Variant::fastest().name(),
            thousands(WARM)
        );
        s += "| combos | push p50 (µs) | (a) batch over 150,000 bars (ms) | (a) / push p50 | (b) numba over the last W+1 bars (ms) | W+1 | (b) / push p50 |\n";
        s += "|---:|---:|---:|---:|---:|---:|---:|\n";
        for b in &self.baselines {
            s += &format!(
                "| {} | {} | {:.1} | {:.0}× | {:.3} | {} | {:.0}× |\n",
                thousands(b.combos),
                us(b.push[0]),
                b.batch * 1e3,
                b.batch * 1e9 / b.push[0],
                b.numba * 1e3,
                b.window,
                b.numba * 1e9 / b.push[0],
            );
        }
        s += "\nTargets (issue 18), on the default series:\n\n";
        for b in &self.baselines {
            let ratio = b.batch * 1e9 / b.push[0];
            s += &format!(
                "- {}: ≥ 1,000× faster than re-running the batch at 150,000 bars, {} combos: \
                 {}× (batch median / push p50 as run)\n",
                if ratio >= 1000.0 { "PASS" } else { "FAIL" },
                thousands(b.combos),
                thousands(ratio as usize)
            );
        }
        // Both tails: as run (what this shared machine gave, preemption included) and the best
        // of the replays (what the pushes cost on a core of their own); each verdict is labelled.
        if let Some(r) = self
            .rows
            .iter()
            .find(|r| r.combos == 10_000 && r.series.starts_with("default"))
        {
            for (p99, how) in [
                (r.wall[1], "as run".to_string()),
                (
                    r.best[1],
                    format!("best of {} pushes per bar", self.config.replays + 1),
                ),
            ] {
                s += &format!(
                    "- {}: p99 < 1 ms for 10,000 combos on one core: {} µs, {how}\n",
                    if p99 < 1e6 { "PASS" } else { "FAIL" },
                    us(p99)
                );
            }
        }
        s += &format!(
            "\n{} Python side: {}. The machine is shared: as-run tails include other jobs' \
             preemption, the best columns do not.\n{END}\n",
            self.provenance.line(),
            self.numba_versions,
        );
        s
    }
}

/// Replaces the section in `report` (or appends it).
pub fn splice(report: &str, section: &str) -> String {
    crate::marked::splice(report, BEGIN, END, section)
}

/// The section of `report`, if it has one.
pub fn section(report: &str) -> Option<&str> {
    crate::marked::section(report, BEGIN, END)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_the_section_and_keeps_the_rest() {
        let one = format!("{BEGIN}\n## Live\nold\n{END}\n");
        let two = format!("{BEGIN}\n## Live\nnew\n{END}\n");
        let report = format!("# Lab\n\ntable\n\n{one}\n## Scale\n");
        let out = splice(&report, &two);
        assert_eq!(out, format!("# Lab\n\ntable\n\n{two}## Scale\n"));
        assert_eq!(section(&out), Some(two.trim_end()));
        assert_eq!(splice("# Lab\n", &two), format!("# Lab\n\n{two}"));
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(150_000), "150,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
