//! CSCV and the probability of backtest overfitting: per split the IS winner, its OOS rank and
//! logit, from per-fold sums (each half of the folds evaluated once, for the two splits sharing it).

use crate::degradation::{Degradation, degradation};
use crate::error::ResearchError;
use crate::folds::FoldStats;
use crate::metric::Metric;
use crate::splits::{folds_of, splits};
use rayon::prelude::*;

/// One split's outcome: the in-sample winner n* and where it lands out of sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// n*: the combo with the best IS metric (the first on ties).
    pub selected: usize,
    /// Its IS metric.
    pub is_perf: f64,
    /// Its OOS metric.
    pub oos_perf: f64,
    /// Its OOS rank among the N combos, 1 (worst) to N (best):
    /// `1 + #{j: oos_j < oos_n*} + #{j < n*: oos_j == oos_n*}`.
    pub rank: usize,
    /// `ln(omega / (1 - omega))`, `omega = rank / (N + 1)`; <= 0 when n* is at or below the
    /// OOS median.
    pub logit: f64,
}

/// The outcome of CSCV over every split (Bailey, Borwein, Lopez de Prado and Zhu 2017).
#[derive(Clone, Debug, PartialEq)]
pub struct Cscv {
    /// Bars T of the matrix.
    pub bars: usize,
    /// Combos N.
    pub combos: usize,
    /// Folds S.
    pub folds: usize,
    /// The metric combos were ranked by.
    pub metric: Metric,
    /// One entry per split, in `itertools.combinations(range(S), S/2)` order.
    pub splits: Vec<Split>,
    /// The probability of backtest overfitting: the fraction of splits with logit <= 0.
    pub pbo: f64,
    /// The fraction of splits whose n* loses out of sample (OOS metric < 0).
    pub prob_oos_loss: f64,
    /// The least-squares line OOS = slope * IS + intercept through the splits' n*.
    pub degradation: Degradation,
}

impl Cscv {
    /// The logits, in split order.
    pub fn logits(&self) -> Vec<f64> {
        self.splits.iter().map(|s| s.logit).collect()
    }
}

/// CSCV over a row-major `bars x combos` returns matrix: [`FoldStats::from_matrix`] then
/// [`cscv`]. Every input is checked; errors name the value.
pub fn pbo(
    returns: &[f64],
    bars: usize,
    combos: usize,
    folds: usize,
    metric: Metric,
    threads: usize,
) -> Result<Cscv, ResearchError> {
    if threads == 0 {
        return Err(ResearchError::NoThreads);
    }
    let stats = FoldStats::from_matrix(returns, bars, combos, folds)?;
    cscv(&stats, metric, threads)
}

/// CSCV from fold statistics, on `threads` threads (the result does not depend on them).
///
/// Each split's IS is a half of the folds and its OOS the other half, which is the IS of the
/// split at the mirrored position; so each half's metric is computed once per combo, from the
/// sums of its S/2 folds (S/2 - 1 adds for each of two sums, then [`Metric::eval`]), and serves
/// both splits. The work is C(S, S/2) x N metric evaluations, split across threads by pairs.
pub fn cscv(stats: &FoldStats, metric: Metric, threads: usize) -> Result<Cscv, ResearchError> {
    if threads == 0 {
        return Err(ResearchError::NoThreads);
    }
    let masks = splits(stats.folds())?;
    let count = masks.len();
    let pair = |bufs: &mut Buffers, i: usize| {
        let (a, b) = (masks[i], masks[count - 1 - i]);
        half_metric(stats, metric, a, &mut bufs.a);
        half_metric(stats, metric, b, &mut bufs.b);
        (outcome(&bufs.a, &bufs.b), outcome(&bufs.b, &bufs.a))
    };
    let n = stats.combos();
    let pairs: Vec<(Split, Split)> = if threads == 1 {
        let mut bufs = Buffers::new(n);
        (0..count / 2).map(|i| pair(&mut bufs, i)).collect()
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| ResearchError::Threads {
                detail: e.to_string(),
            })?;
        pool.install(|| {
            (0..count / 2)
                .into_par_iter()
                .map_init(|| Buffers::new(n), |bufs, i| pair(bufs, i))
                .collect()
        })
    };
    let mut splits = vec![None; count];
    for (i, (first, mirrored)) in pairs.into_iter().enumerate() {
        splits[i] = Some(first);
        splits[count - 1 - i] = Some(mirrored);
    }
    let splits: Vec<Split> = splits.into_iter().flatten().collect();
    let fraction = |hits: usize| hits as f64 / count as f64;
    let is: Vec<f64> = splits.iter().map(|s| s.is_perf).collect();
    let oos: Vec<f64> = splits.iter().map(|s| s.oos_perf).collect();
    Ok(Cscv {
        bars: stats.bars(),
        combos: n,
        folds: stats.folds(),
        metric,
        pbo: fraction(splits.iter().filter(|s| s.logit <= 0.0).count()),
        prob_oos_loss: fraction(oos.iter().filter(|&&v| v < 0.0).count()),
        degradation: degradation(&is, &oos),
        splits,
    })
}

/// Per-thread scratch: both halves' metrics for every combo.
struct Buffers {
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Buffers {
    fn new(combos: usize) -> Self {
        Buffers {
            a: vec![0.0; combos],
            b: vec![0.0; combos],
        }
    }
}

/// The metric of every combo over the folds in `mask`, into `out`: the folds' sums added in
/// ascending fold order, then [`Metric::eval`]. Dispatches on the half size, so that the adds
/// are unrolled and each combo's two sums stay in registers.
fn half_metric(stats: &FoldStats, metric: Metric, mask: u32, out: &mut [f64]) {
    let folds: Vec<usize> = folds_of(mask).collect();
    macro_rules! by_half {
        ($($h:literal)*) => {
            match folds.len() {
                $($h => half_metric_n::<$h>(stats, metric, &folds, out),)*
                h => unreachable!("a half of {h} folds is past MAX_FOLDS"),
            }
        };
    }
    // One arm per half size up to MAX_FOLDS / 2.
    const _: () = assert!(crate::folds::MAX_FOLDS / 2 == 13);
    by_half!(1 2 3 4 5 6 7 8 9 10 11 12 13);
}

fn half_metric_n<const H: usize>(
    stats: &FoldStats,
    metric: Metric,
    folds: &[usize],
    out: &mut [f64],
) {
    let combos = out.len();
    let n = folds
        .iter()
        .map(|&f| stats.bounds()[f].len())
        .sum::<usize>() as f64;
    let sums: [&[f64]; H] = std::array::from_fn(|h| &stats.sums(folds[h]).0[..combos]);
    let sumsqs: [&[f64]; H] = std::array::from_fn(|h| &stats.sums(folds[h]).1[..combos]);
    let shifts = &stats.shifts()[..combos];
    // One loop per metric, so each vectorises without a branch on the metric.
    match metric {
        Metric::Mean => {
            for k in 0..combos {
                let mut s = sums[0][k];
                for sum in &sums[1..] {
                    s += sum[k];
                }
                out[k] = Metric::Mean.eval(n, n * shifts[k], s, 0.0);
            }
        }
        Metric::Sharpe => {
            for k in 0..combos {
                let (mut s, mut q) = (sums[0][k], sumsqs[0][k]);
                for h in 1..H {
                    s += sums[h][k];
                    q += sumsqs[h][k];
                }
                out[k] = Metric::Sharpe.eval(n, n * shifts[k], s, q);
            }
        }
    }
}

/// The metric of every combo over the union of the segments `segments` (indices into
/// `stats.bounds()`, ascending; at least one), into `out`: the operations of a CSCV half
/// ([`half_metric_n`]) in the same order, for any number of segments (walk-forward windows):
/// n the bars, S and Q added in ascending segment order from the first segment's, then
/// [`Metric::eval`]. So a window and a CSCV half over the same folds give the same bits.
pub(crate) fn union_metric(stats: &FoldStats, metric: Metric, segments: &[usize], out: &mut [f64]) {
    let combos = out.len();
    let n = segments
        .iter()
        .map(|&f| stats.bounds()[f].len())
        .sum::<usize>() as f64;
    let shifts = &stats.shifts()[..combos];
    let (first, rest) = segments.split_first().expect("at least one segment");
    let (s0, q0) = stats.sums(*first);
    out.copy_from_slice(&s0[..combos]);
    let mut q = match metric {
        Metric::Mean => Vec::new(),
        Metric::Sharpe => q0[..combos].to_vec(),
    };
    // Segment by segment over every combo: each combo's sums see the adds in the same order as
    // in `half_metric_n`, and the inner loops vectorise.
    for &f in rest {
        let (s, sq) = stats.sums(f);
        out.iter_mut().zip(&s[..combos]).for_each(|(a, b)| *a += b);
        q.iter_mut().zip(&sq[..combos]).for_each(|(a, b)| *a += b);
    }
    match metric {
        Metric::Mean => {
            for (o, &c) in out.iter_mut().zip(shifts) {
                *o = Metric::Mean.eval(n, n * c, *o, 0.0);
            }
        }
        Metric::Sharpe => {
            for ((o, &c), &q) in out.iter_mut().zip(shifts).zip(&q) {
                *o = Metric::Sharpe.eval(n, n * c, *o, q);
            }
        }
    }
}

/// The first index of the largest value (numpy's `argmax` on values without NaN): the maximum
/// over four lanes (vectorised), then its first position.
pub(crate) fn argmax(v: &[f64]) -> usize {
    let mut lanes = [f64::NEG_INFINITY; 4];
    let chunks = v.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..4 {
            lanes[l] = if c[l] > lanes[l] { c[l] } else { lanes[l] };
        }
    }
    let max = lanes
        .iter()
        .chain(tail)
        .fold(f64::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    // The first block holding it (a branch-free test per block), then its place in the block.
    const BLOCK: usize = 64;
    let block = v
        .chunks(BLOCK)
        .position(|c| c.iter().fold(false, |hit, &x| hit | (x == max)))
        .unwrap_or(0);
    let at = block * BLOCK;
    at + v[at..].iter().position(|&x| x == max).unwrap_or(0)
}

/// The split whose IS metrics are `is` and OOS metrics `oos`: n* = the first argmax of `is`,
/// its OOS rank and logit.
fn outcome(is: &[f64], oos: &[f64]) -> Split {
    let selected = argmax(is);
    let t = oos[selected];
    let below = oos.iter().filter(|&&v| v < t).count();
    let tied_before = oos[..selected].iter().filter(|&&v| v == t).count();
    let rank = 1 + below + tied_before;
    let omega = rank as f64 / (oos.len() + 1) as f64;
    Split {
        selected,
        is_perf: is[selected],
        oos_perf: t,
        rank,
        logit: (omega / (1.0 - omega)).ln(),
    }
}
