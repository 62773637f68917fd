//! The lab's "fastest" table: `fastest` (with `Threads::Auto`, so its cost model picks the
//! threads) against every variant that could be the best one, on sweeps large and small.

use hullsweep_kernel::{self as kernel, Combo, SweepResult};
use hullsweep_profiling::timing::median;
use hullsweep_variants::rolling;
use hullsweep_variants::{Threads, Variant};
use std::time::{Duration, Instant};

/// A sweep the table times.
pub struct Workload {
    /// The table label, `<bars> × <combos>`.
    pub name: String,
    /// The close series swept (a prefix of the lab's series for the short workloads).
    pub close: Vec<f64>,
    /// The combos swept (every k-th of the lab's combos for the small workloads).
    pub params: Vec<Combo>,
    /// Round-trip fee per closed trade, in percentage points, as in the lab's sweep.
    pub fee: f64,
}

/// The four sizes `fastest` must hold on (issue 20): the lab's sweep (150,000 bars × 80 combos by
/// default), 10,000 × 8 (its first 10,000 bars, every tenth combo), 1,000 × 80 and 150,000 × 2
/// (every fortieth combo).
pub fn workloads(close: &[f64], params: &[Combo], fee: f64) -> Vec<Workload> {
    let every = |k: usize| params.iter().copied().step_by(k).collect::<Vec<_>>();
    let head = |n: usize| close[..n.min(close.len())].to_vec();
    let w = |close: Vec<f64>, params: Vec<Combo>| Workload {
        name: format!("{} × {}", close.len(), params.len()),
        close,
        params,
        fee,
    };
    vec![
        w(close.to_vec(), params.to_vec()),
        w(head(10_000), every(10)),
        w(head(1_000), params.to_vec()),
        w(close.to_vec(), every(40)),
    ]
}

/// A variant on a thread setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contender {
    /// The variant run.
    pub variant: Variant,
    /// Its thread setting: `Auto` for `fastest` (its cost model decides), `Fixed(n)`
    /// for the single variants.
    pub threads: Threads,
}

impl Contender {
    /// The table label: the variant name and `(auto)` or `(<n>T)`, e.g. `simd (1T)`.
    pub fn name(&self) -> String {
        match self.threads {
            Threads::Auto => format!("{} (auto)", self.variant.name()),
            Threads::Fixed(n) => format!("{} ({n}T)", self.variant.name()),
        }
    }
}

/// `fastest` first, then the single variants that can be the best one: `rolling` and `simd` on
/// one thread, `rolling-rayon` and `rayon` on every core. (`reference`, `checked`, `unchecked`
/// and `prealloc` do the work `simd` does without its SIMD WMA: the main table shows each
/// several times slower, so they are left out to keep the run short.)
pub fn contenders(cores: usize) -> Vec<Contender> {
    let c = |variant, threads| Contender { variant, threads };
    vec![
        c(Variant::fastest(), Threads::Auto),
        c(Variant::Rolling, Threads::Fixed(1)),
        c(Variant::RollingRayon, Threads::Fixed(cores)),
        c(Variant::Simd, Threads::Fixed(1)),
        c(Variant::Rayon, Threads::Fixed(cores)),
    ]
}

/// One workload's samples: per contender, seconds per sweep in each round.
pub struct Row {
    /// The workload's label, `<bars> × <combos>`.
    pub name: String,
    /// Length of the workload's close series, in bars.
    pub bars: usize,
    /// Number of combos in the workload.
    pub combos: usize,
    /// Threads `fastest` ran on (its cost model's choice).
    pub fastest_threads: usize,
    /// `times[k][r]`: seconds per sweep of contender `k` (in `contenders` order, `fastest`
    /// at 0) in round `r`.
    pub times: Vec<Vec<f64>>,
}

impl Row {
    /// Median seconds per sweep of each contender.
    pub fn medians(&self) -> Vec<f64> {
        self.times.iter().map(|t| median(t)).collect()
    }

    /// `fastest` over contender `k`, the median of the per-round ratios: the two ran within the
    /// same round, so a load that comes and goes between rounds cancels out.
    pub fn paired_ratio(&self, k: usize) -> f64 {
        let r: Vec<f64> = self.times[0]
            .iter()
            .zip(&self.times[k])
            .map(|(a, b)| a / b)
            .collect();
        median(&r)
    }

    /// The index of the best contender other than `fastest` (index 0), by median.
    pub fn best_single(&self) -> usize {
        let m = self.medians();
        (1..m.len())
            .min_by(|&a, &b| m[a].total_cmp(&m[b]))
            .expect("contenders beyond fastest")
    }
}

/// Each sample repeats a sweep until it has run this long, so a 0.2 ms sweep is timed over many
/// calls rather than at the clock's resolution, and a round of small sweeps sees the same load.
const SAMPLE: Duration = Duration::from_millis(50);

fn time(c: Contender, w: &Workload, reps: usize) -> anyhow::Result<f64> {
    let start = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(c.variant.sweep(&w.close, &w.params, w.fee, c.threads)?);
    }
    Ok(start.elapsed().as_secs_f64() / reps as f64)
}

/// Checks every contender against `fastest` bit for bit (all are gated against numba elsewhere;
/// here a wrong fast answer must not post a time), then times them in interleaved rounds: each
/// round runs every contender once, the order rotating by one each round (A B C, B C A, ...).
pub fn run(
    workloads: &[Workload],
    contenders: &[Contender],
    rounds: usize,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for w in workloads {
        tick(&format!("fastest: checking and sizing {}", w.name));
        let want: SweepResult = kernel::sweep(&w.close, &w.params, w.fee)?;
        let mut reps = Vec::new();
        for &c in contenders {
            let got = c.variant.sweep(&w.close, &w.params, w.fee, c.threads)?;
            let same = got.trades == want.trades
                && got
                    .pnl
                    .iter()
                    .zip(&want.pnl)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            anyhow::ensure!(
                same,
                "{} differs from the reference on {}",
                c.name(),
                w.name
            );
            let once = time(c, w, 1)?.max(1e-7);
            reps.push(((SAMPLE.as_secs_f64() / once).ceil() as usize).clamp(1, 10_000));
        }
        rows.push((
            Row {
                name: w.name.clone(),
                bars: w.close.len(),
                combos: w.params.len(),
                fastest_threads: rolling::planned_workers(w.close.len(), &w.params, Threads::Auto),
                times: vec![Vec::new(); contenders.len()],
            },
            reps,
        ));
    }
    for round in 0..rounds {
        for (w, (row, reps)) in workloads.iter().zip(&mut rows) {
            tick(&format!(
                "fastest, round {}/{rounds}: {}",
                round + 1,
                w.name
            ));
            for j in 0..contenders.len() {
                let k = (j + round) % contenders.len();
                row.times[k].push(time(contenders[k], w, reps[k])?);
            }
        }
    }
    Ok(rows.into_iter().map(|(r, _)| r).collect())
}

/// The table as Markdown: every contender's median, the best single variant, and `fastest`'s
/// time over it with the noise to read it against.
pub fn to_markdown(rows: &[Row], contenders: &[Contender], rounds: usize) -> String {
    let mut s = String::new();
    s += "## `fastest` against the best single variant\n\n";
    s += &format!(
        "`fastest` is `{}` with `Threads::Auto`: its cost model (`rolling::MIN_POSITIONS_PER_WORKER`) \
         picks how many threads the sweep pays for. Median ms per sweep over {rounds} interleaved \
         rounds (each sample repeats the sweep for at least {} ms). fastest / best: the median of \
         the per-round ratios (both ran in the same round). Noise: the best single variant's own \
         spread across rounds, ±(max - min) / 2 / median.\n\n",
        Variant::fastest().name(),
        SAMPLE.as_millis()
    );
    s += "| workload | fastest's threads |";
    for c in contenders {
        s += &format!(" {} (ms) |", c.name());
    }
    s += " best single variant | fastest / best | noise |\n|---|---:|";
    for _ in contenders {
        s += "---:|";
    }
    s += "---|---:|---:|\n";
    for r in rows {
        let m = r.medians();
        let best = r.best_single();
        let t = &r.times[best];
        let (lo, hi) = t.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        s += &format!("| {} | {} |", r.name, r.fastest_threads);
        for v in &m {
            s += &format!(" {:.3} |", v * 1e3);
        }
        s += &format!(
            " {} | {:.2}× | ±{:.0}% |\n",
            contenders[best].name(),
            r.paired_ratio(best),
            100.0 * (hi - lo) / m[best] / 2.0
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is built from real runs: every contender checked, timed each round, and the
    /// verdict taken against the best of the others.
    #[test]
    fn a_small_run_gives_one_row_per_workload_with_every_contender_timed() {
        let close = kernel::default_close()[..1_000].to_vec();
        let params = kernel::default_params()[..16].to_vec();
        let mut workloads = workloads(&close, &params, 0.09);
        workloads.truncate(2);
        let contenders = contenders(2);
        let rows = run(&workloads, &contenders, 3, |_| {}).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].bars, rows[0].combos), (1_000, 16));
        assert_eq!((rows[1].bars, rows[1].combos), (1_000, 2));
        for r in &rows {
            assert_eq!(r.fastest_threads, 1, "a small sweep runs on one thread");
            assert!(
                r.times
                    .iter()
                    .all(|t| t.len() == 3 && t.iter().all(|&s| s > 0.0))
            );
            assert_ne!(r.best_single(), 0);
        }
        let table = to_markdown(&rows, &contenders, 3);
        assert!(table.contains("| 1000 × 16 | 1 |"), "{table}");
        assert!(table.contains("rolling-rayon (auto) (ms)"), "{table}");
    }
}
