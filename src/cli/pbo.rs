//! `hullsweep pbo`: the probability of backtest overfitting of any bars x combos returns matrix
//! (CSCV, docs/research.md), as JSON or as a verdict a researcher can act on.

use anyhow::Context;
use hullsweep_data::NpyMatrix;
use hullsweep_research::{Cscv, FoldStatsBuilder, Metric, check_shape, cscv};
use serde_json::json;
use std::path::PathBuf;

/// Estimate how likely it is that picking the best of many combos in a backtest is overfitting.
///
/// The probability of backtest overfitting (PBO; Bailey, Borwein, Lopez de Prado and Zhu, "The
/// probability of backtest overfitting", Journal of Computational Finance 20(4), 2017) asks: when
/// you choose the combo that did best in sample, how often is it below the median out of sample?
/// CSCV (combinatorially symmetric cross-validation) cuts the T bars into S folds and, for each of
/// the C(S, S/2) ways to call half of them in-sample, finds the in-sample best combo n* and its
/// rank among the N combos on the other half. logit = ln(w / (1 - w)), w = rank / (N + 1); PBO is
/// the fraction of splits with logit <= 0. Near 0: the winner usually stays above the median out
/// of sample. Near 0.5 or above: choosing the best in-sample is no better than choosing at random.
///
/// Also reported: the degradation line (least squares OOS = slope * IS + intercept over the
/// splits; a negative slope means the better it looked, the worse it did) and P(OOS loss), the
/// fraction of splits in which n* loses out of sample. Every number is defined in the repository's
/// docs/research.md and tested against a numpy reference (reference/pbo_ref.py).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hullsweep pbo --matrix returns.npy                       # 16 folds, Sharpe, a verdict
  hullsweep pbo --matrix returns.npy --folds 10 --metric mean --format json
  python -c \"import numpy as np; np.save('r.npy', np.random.default_rng(1).normal(size=(2000, 50)))\"
  hullsweep pbo --matrix r.npy                             # pure noise: PBO near 0.5")]
pub struct Args {
    /// The returns matrix: a 2-D float64 .npy, one row per bar and one column per combo
    /// (strategy), e.g. percentage-point bar returns. Read in chunks of rows, so its size is
    /// limited by the disk (a Fortran-order file is read whole).
    #[arg(long, value_name = "M.npy")]
    matrix: PathBuf,
    /// Folds S: even, at least 2 bars each (so at most T/2), at most 26. S = 16 gives 12,870
    /// splits.
    #[arg(long, value_name = "S", default_value_t = 16)]
    folds: usize,
    /// What "performance" is: sharpe (mean / std of the bar returns, population std, 0 where
    /// std is 0; per bar, not annualized) or mean (the mean bar return).
    #[arg(long, value_name = "sharpe|mean", default_value = "sharpe")]
    metric: String,
    /// Output: text (a verdict and the numbers behind it) or json (pbo, logits, degradation,
    /// prob_oos_loss, splits, folds, combos, bars, metric, and per split selected, is_perf,
    /// oos_perf).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Worker threads (default: all cores). The result does not depend on them.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Text,
    Json,
}

/// Rows read and folded in at a time: about 64 MiB of returns.
const CHUNK_VALUES: usize = 8 << 20;

pub fn run(args: Args) -> anyhow::Result<()> {
    let metric = Metric::from_name(&args.metric).context("--metric")?;
    let threads = match args.threads {
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(0) => anyhow::bail!("--threads 0: need at least one thread"),
        Some(n) => n,
    };
    let path = args.matrix.display().to_string();
    let mut matrix = NpyMatrix::open(&args.matrix)?;
    let shape: Vec<usize> = matrix.shape().iter().map(|&d| d as usize).collect();
    let (bars, combos) = check_shape(&shape).with_context(|| path.clone())?;
    let mut builder = FoldStatsBuilder::new(bars, combos, args.folds)
        .with_context(|| format!("{path}: --folds {}", args.folds))?;
    let (mut buf, mut row) = (Vec::new(), 0);
    let chunk_rows = (CHUNK_VALUES / combos).max(1);
    loop {
        let rows = matrix.next_rows(&mut buf, chunk_rows)?;
        if rows == 0 {
            break;
        }
        builder.push_rows(row, &buf).with_context(|| path.clone())?;
        row += rows;
    }
    let stats = builder.finish().with_context(|| path.clone())?;
    let result = cscv(&stats, metric, threads)?;
    let text = match args.format {
        Format::Json => format!("{}\n", to_json(&result)),
        Format::Text => verdict(&result),
    };
    super::stdout::print_out(&text)
}

pub(super) fn to_json(r: &Cscv) -> serde_json::Value {
    let d = r.degradation;
    json!({
        "pbo": r.pbo,
        "logits": r.logits(),
        "degradation": { "slope": d.slope, "intercept": d.intercept, "r2": d.r2 },
        "prob_oos_loss": r.prob_oos_loss,
        "splits": r.splits.len(),
        "folds": r.folds,
        "combos": r.combos,
        "bars": r.bars,
        "metric": r.metric.name(),
        "selected": r.splits.iter().map(|s| s.selected).collect::<Vec<_>>(),
        "is_perf": r.splits.iter().map(|s| s.is_perf).collect::<Vec<_>>(),
        "oos_perf": r.splits.iter().map(|s| s.oos_perf).collect::<Vec<_>>(),
    })
}

/// The text form: the verdict first, then the numbers behind it.
pub(super) fn verdict(r: &Cscv) -> String {
    let splits = r.splits.len();
    let below = r.splits.iter().filter(|s| s.logit <= 0.0).count();
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    let meaning = if r.pbo >= 0.5 {
        "choosing the in-sample best is no better than choosing a combo at random: treat the \
         sweep's winner as overfit"
    } else if r.pbo >= 0.3 {
        "close to a coin flip: the in-sample ranking says little about out-of-sample ranking, so \
         do not trust the winner without fewer combos or more data"
    } else if r.pbo >= 0.1 {
        "the in-sample winner often fails out of sample: check it on data it has not seen"
    } else {
        "the in-sample winner usually stays in the better half out of sample"
    };
    let d = r.degradation;
    let slope = if d.r2 < 0.1 {
        "in-sample performance explains little of out-of-sample performance"
    } else if d.slope < 0.0 {
        "the better a combo looked in sample, the worse it did out of sample"
    } else {
        "in-sample performance carries over out of sample"
    };
    let mut distinct: Vec<usize> = r.splits.iter().map(|s| s.selected).collect();
    distinct.sort_unstable();
    distinct.dedup();
    format!(
        "PBO {pbo:.2}: the best in-sample combo is at or below the OOS median in {p} of splits \
         ({below} of {splits}); {meaning}.\n\
         Degradation: OOS = {slope_v:.4} x IS {sign} {icpt:.4} (R^2 {r2:.2}); {slope}.\n\
         P(OOS loss) {loss:.2}: the in-sample best loses out of sample in {lp} of splits.\n\
         {combos} combos, {bars} bars in {folds} folds, metric {metric}; {n} distinct combos were \
         the in-sample best.\n",
        pbo = r.pbo,
        p = pct(r.pbo),
        slope_v = d.slope,
        sign = if d.intercept < 0.0 { '-' } else { '+' },
        icpt = d.intercept.abs(),
        r2 = d.r2,
        loss = r.prob_oos_loss,
        lp = pct(r.prob_oos_loss),
        combos = r.combos,
        bars = r.bars,
        folds = r.folds,
        metric = r.metric,
        n = distinct.len(),
    )
}
