//! `hullsweep validate`: one sweep, then whether its winner is real: CSCV/PBO, the deflated
//! Sharpe ratio and walk-forward (docs/research.md), as a verdict, JSON and SVG plots.

use super::args::{Inputs, parse_variant, threads, variant_help};
use super::replay::FileSeries;
use anyhow::Context;
use hullsweep_data::{ReturnsWriter, research_plot};
use hullsweep_kernel::ValidClose;
use hullsweep_research::{DeflatedSharpe, Metric, WalkSpec};
use hullsweep_validate::{InMemory, Plan, Replay, Validation, WalkForward, validate_replay};
use hullsweep_variants::Variant;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Sweep, then judge the winner: is the best of many combos real or the luck of many tries?
///
/// One pass of the sweep over the series folds every combo's bar returns (its marked-to-market
/// PnL change per bar, docs/kernel.md) into S folds. Then:
///
/// - CSCV/PBO: for each of the C(S, S/2) ways to call half of the folds in-sample, the in-sample
///   best combo's rank out of sample; PBO is the fraction of splits where it lands at or below
///   the median (as `hullsweep pbo` on the same returns);
/// - the deflated Sharpe ratio of the combo with the best per-bar Sharpe: the probability that
///   its Sharpe beats the best that N tries of pure noise would show, given the Sharpes'
///   spread, the series length and the returns' skew and kurtosis;
/// - with --walk-forward TRAIN:TEST, rolling windows: pick the best combo on TRAIN bars, trade
///   it on the next TEST bars, move on by TEST; the out-of-sample PnL and Sharpe of those picks.
///
/// A --data file is read in chunks: once for the sweep, three more times for the few combos it
/// selects, so memory does not grow with the series (--plot with --walk-forward keeps the
/// out-of-sample returns for the equity curve: 8 bytes per test bar).
///
/// Every number is defined in the repository's docs/research.md and tested against numpy.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hullsweep validate                                   # built-in series, default grid, verdict
  hullsweep validate --data prices.csv --grid 6:400:100 --grid3 6:400:100 --walk-forward 20000:5000
  hullsweep validate --folds 10 --metric mean --format json --plot validation/")]
pub struct Args {
    #[command(flatten)]
    input: Inputs,
    #[arg(long, value_name = "NAME", help = format!("{} [default: fastest]", variant_help("Implementation to run")), value_parser = parse_variant)]
    variant: Option<Variant>,
    /// Worker threads (default: all cores). The results do not depend on them.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Folds S for CSCV: even, at least 2 bars each, at most 26. S = 16 gives 12,870 splits.
    #[arg(long, value_name = "S", default_value_t = 16)]
    folds: usize,
    /// What CSCV and walk-forward rank combos by: sharpe (per-bar mean / std of the bar
    /// returns) or mean (the mean bar return).
    #[arg(long, value_name = "sharpe|mean", default_value = "sharpe")]
    metric: String,
    /// Walk-forward TRAIN:TEST in bars (rolling), or TRAIN:TEST:anchored (train from bar 0).
    #[arg(long, value_name = "TRAIN:TEST[:anchored]")]
    walk_forward: Option<String>,
    /// Draw SVGs into this directory (created if missing): logits.svg (the CSCV logit
    /// histogram), is_oos.svg (in- against out-of-sample performance of each split's winner,
    /// with the degradation line) and, with --walk-forward, walk_forward.svg (OOS equity).
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Also write every combo's bar returns as a bars x combos float64 .npy (C order).
    #[arg(long, value_name = "FILE.npy")]
    returns: Option<PathBuf>,
    /// Output: text (a verdict per test) or json (the `hullsweep pbo` keys, deflated_sharpe,
    /// walk_forward).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let metric = Metric::from_name(&args.metric).context("--metric")?;
    let walk: Option<WalkSpec> = args
        .walk_forward
        .as_deref()
        .map(str::parse)
        .transpose()
        .context("--walk-forward")?;
    let variant = args.variant.unwrap_or_else(Variant::fastest);
    let threads = threads(args.threads)?;
    let params = args.input.combos()?;
    // A --data file is read in chunks, as often as the validation needs; the built-in series
    // is in memory anyway.
    let (builtin, mut file);
    let mut memory;
    let series: &mut dyn Replay = match args.input.data.as_deref() {
        Some(path) => {
            file = FileSeries::new(path, args.input.column.as_deref())?;
            &mut file
        }
        None => {
            builtin = args.input.close(threads)?;
            memory = InMemory(ValidClose::new(&builtin)?);
            &mut memory
        }
    };
    let bars = series.bars();
    super::preflight::announce(&params, Some(bars as u64));
    let writer = args
        .returns
        .as_deref()
        .map(|p| ReturnsWriter::create(p, bars, params.len()))
        .transpose()?;
    let sink = writer
        .as_ref()
        .map(|w| move |k: usize, at: usize, r: &[f64]| w.write_column(k, at, r));
    let plan = Plan {
        folds: args.folds,
        metric,
        walk: walk.as_ref(),
        // Only the equity plot needs them (8 bytes per out-of-sample bar).
        oos_returns: args.plot.is_some(),
    };
    let start = Instant::now();
    let fee = args.input.fee;
    let v = validate_replay(
        variant,
        series,
        &params,
        fee,
        threads,
        plan,
        sink.as_ref().map(|f| f as _),
    )
    .with_context(|| format!("--folds {}", args.folds))?;
    eprintln!(
        "validated {} combos over {} bars with {} in {:.3} s",
        params.len(),
        bars,
        variant.name(),
        start.elapsed().as_secs_f64()
    );
    if let (Some(w), Some(path)) = (writer, args.returns.as_deref()) {
        w.finish()?;
        eprintln!("wrote the bar returns to {}", path.display());
    }
    if let Some(dir) = &args.plot {
        plot(dir, &v)?;
    }
    let windows = |k: usize| params[k].map(|w| w.to_string()).join(",");
    let text = match args.format {
        Format::Json => format!("{}\n", to_json(&v, &windows)),
        Format::Text => verdict(&v, &windows),
    };
    super::stdout::print_out(&text)
}

fn to_json(v: &Validation, windows: &dyn Fn(usize) -> String) -> serde_json::Value {
    let mut out = super::pbo::to_json(&v.cscv);
    let d = &v.deflated;
    out["deflated_sharpe"] = json!({
        "combo": d.combo, "windows": windows(d.combo), "sharpe": d.sharpe, "dsr": d.dsr,
        "sr0": d.sr0, "variance": d.variance, "skew": d.skew, "kurt": d.kurt, "bars": d.bars,
        "trials": v.cscv.combos,
    });
    if let Some(w) = &v.walk_forward {
        out["walk_forward"] = json!({
            "spec": w.spec.to_string(),
            "selected": w.selections.iter().map(|s| s.selected).collect::<Vec<_>>(),
            "train_metric": w.selections.iter().map(|s| s.train_metric).collect::<Vec<_>>(),
            "test_start": w.selections.iter().map(|s| s.window.test.start).collect::<Vec<_>>(),
            "oos_pnl": w.summary.pnl,
            "oos_sharpe": w.summary.sharpe,
            "oos_bars": w.summary.bars,
        });
    }
    out
}

fn verdict(v: &Validation, windows: &dyn Fn(usize) -> String) -> String {
    let mut s = super::pbo::verdict(&v.cscv);
    s += &dsr_verdict(&v.deflated, v.cscv.combos, windows);
    if let Some(w) = &v.walk_forward {
        s += &walk_verdict(w, windows);
    }
    s
}

fn dsr_verdict(d: &DeflatedSharpe, trials: usize, windows: &dyn Fn(usize) -> String) -> String {
    let meaning = if d.dsr >= 0.95 {
        "its Sharpe is very unlikely to be the luck of that many tries"
    } else if d.dsr >= 0.5 {
        "more likely real than luck, but not by a margin to trade on alone"
    } else {
        "no better than the best of that many tries on noise would show: do not trade it on \
         this evidence"
    };
    format!(
        "Deflated Sharpe {dsr:.2}: the best combo, #{k} ({w}), has a per-bar Sharpe of {sr:.4} \
         against {sr0:.4} expected of the best of {trials} tries on noise; {meaning}.\n",
        dsr = d.dsr,
        k = d.combo,
        w = windows(d.combo),
        sr = d.sharpe,
        sr0 = d.sr0,
    )
}

fn walk_verdict(w: &WalkForward, windows: &dyn Fn(usize) -> String) -> String {
    let mut distinct: Vec<usize> = w.selections.iter().map(|s| s.selected).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let last = w.selections.last().map(|s| s.selected);
    format!(
        "Walk-forward {spec}: {n} windows, out-of-sample PnL {pnl:.4} points over {bars} bars \
         (per-bar Sharpe {sr:.4}); {d} distinct combos chosen{last}.\n",
        spec = w.spec,
        n = w.selections.len(),
        pnl = w.summary.pnl,
        bars = w.summary.bars,
        sr = w.summary.sharpe,
        d = distinct.len(),
        last = last.map_or(String::new(), |k| format!(
            ", the last window's #{k} ({})",
            windows(k)
        )),
    )
}

fn plot(dir: &Path, v: &Validation) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("--plot {}", dir.display()))?;
    let c = &v.cscv;
    let logits = dir.join("logits.svg");
    research_plot::logit_histogram(&logits, &c.logits(), c.pbo)?;
    let is: Vec<f64> = c.splits.iter().map(|s| s.is_perf).collect();
    let oos: Vec<f64> = c.splits.iter().map(|s| s.oos_perf).collect();
    let d = c.degradation;
    let scatter = dir.join("is_oos.svg");
    research_plot::is_oos_scatter(
        &scatter,
        &is,
        &oos,
        d.slope,
        d.intercept,
        d.r2,
        c.metric.name(),
    )?;
    let mut drawn = vec![logits, scatter];
    if let Some(w) = &v.walk_forward {
        let equity = dir.join("walk_forward.svg");
        let selected: Vec<usize> = w.selections.iter().map(|s| s.selected).collect();
        research_plot::walk_forward_equity(&equity, &w.oos_returns, &w.window_starts, &selected)?;
        drawn.push(equity);
    }
    let names: Vec<String> = drawn.iter().map(|p| p.display().to_string()).collect();
    eprintln!("drew {}", names.join(", "));
    Ok(())
}
