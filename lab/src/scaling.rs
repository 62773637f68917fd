//! The lab's 2-core scaling section: `fastest` (`rolling-rayon`) on the lab's sweep at 1 and 2
//! threads, sweep by sweep in one process, beside the machine's own ceiling for work of the same
//! shape. Why the sweep scales as it does is in `docs/scaling.md`.

use hullsweep_kernel::Combo;
use hullsweep_profiling::timing::median;
use hullsweep_variants::{Threads, Variant};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Sweeps per thread count in each round, in pairs ordered 1 2, 2 1, 1 2, ...
pub const PAIRS: usize = 31;

/// The target of issue 17: on the default sweep, 2 threads at least this many times as fast as
/// one (the median of the paired ratios).
pub const TARGET: f64 = 1.85;

/// Units of work in the ceiling workload: as many as the default sweep has combos.
pub const CEILING_UNITS: usize = 80;

/// One workload's times, in seconds, per round.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `this sweep` or `ceiling`.
    pub workload: &'static str,
    /// Per round, the 1-thread times, in the order run.
    pub one: Vec<Vec<f64>>,
    /// Per round, the 2-thread times; `two[r][i]` ran next to `one[r][i]`.
    pub two: Vec<Vec<f64>>,
}

/// What the table shows of a [`Row`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Median 1-thread time over every round, in seconds.
    pub one: f64,
    /// Median 2-thread time over every round, in seconds.
    pub two: f64,
    /// Median over every pair of its 1-thread time / its 2-thread time.
    pub paired: f64,
    /// The least and greatest ratio of one round's medians.
    pub rounds: (f64, f64),
}

impl Row {
    /// Its statistics ([`Stats`]).
    pub fn stats(&self) -> Stats {
        let all = |v: &[Vec<f64>]| median(&v.concat());
        let mut pairs = Vec::new();
        let mut rounds = (f64::INFINITY, 0.0f64);
        for (a, b) in self.one.iter().zip(&self.two) {
            pairs.extend(a.iter().zip(b).map(|(a, b)| a / b));
            let r = median(a) / median(b);
            rounds = (rounds.0.min(r), rounds.1.max(r));
        }
        Stats {
            one: all(&self.one),
            two: all(&self.two),
            paired: median(&pairs),
            rounds,
        }
    }
}

/// Measures `rounds` rounds: in each, [`PAIRS`] paired sweeps of `rolling-rayon` on exactly 1
/// and 2 threads, then as many of the ceiling ([`ceiling`]). `tick` says what runs next.
pub fn run(
    close: &[f64],
    params: &[Combo],
    fee: f64,
    rounds: usize,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<[Row; 2]> {
    let sweep = |threads: usize| -> anyhow::Result<f64> {
        let start = Instant::now();
        Variant::RollingRayon.sweep(close, params, fee, Threads::Fixed(threads))?;
        Ok(start.elapsed().as_secs_f64())
    };
    let mut rows = [
        Row {
            workload: "this sweep",
            one: vec![],
            two: vec![],
        },
        Row {
            workload: "ceiling",
            one: vec![],
            two: vec![],
        },
    ];
    for round in 1..=rounds {
        tick(&format!("scaling: round {round}/{rounds}: this sweep"));
        let (one, two) = paired(sweep)?;
        rows[0].one.push(one);
        rows[0].two.push(two);
        tick(&format!("scaling: round {round}/{rounds}: ceiling"));
        let (one, two) = paired(|t| Ok(ceiling(t, CEILING_UNITS)))?;
        rows[1].one.push(one);
        rows[1].two.push(two);
    }
    Ok(rows)
}

/// [`PAIRS`] times of `time(1)` and of `time(2)`, each pair run in turn 1 2 then 2 1, so a drift
/// in the machine's speed falls on both alike.
fn paired(
    mut time: impl FnMut(usize) -> anyhow::Result<f64>,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for i in 0..PAIRS {
        if i % 2 == 0 {
            one.push(time(1)?);
            two.push(time(2)?);
        } else {
            two.push(time(2)?);
            one.push(time(1)?);
        }
    }
    Ok((one, two))
}

/// Seconds for `units` units of register-only work (about 0.4 ms each on a current x86-64 core)
/// on `threads` workers: the calling thread and a kept pool of `threads - 1`, each taking the
/// next unit until none is left, the caller spinning for the last, as the sweep's workers do
/// (`rayon::team` in `hullsweep-variants`). No memory traffic and no preparation: what the
/// machine allows a sweep of that shape.
pub fn ceiling(threads: usize, units: usize) -> f64 {
    static POOLS: Mutex<Vec<(usize, &'static rayon::ThreadPool)>> = Mutex::new(Vec::new());
    let unit = || {
        let mut a = [1.0f64; 8];
        for i in 0..120_000 {
            for (j, x) in a.iter_mut().enumerate() {
                *x = *x * 1.000_000_1 + i as f64 * 1e-12 + j as f64 * 1e-13;
            }
        }
        std::hint::black_box(a);
    };
    let next = AtomicUsize::new(0);
    let left = AtomicUsize::new(threads.saturating_sub(1));
    let work = || {
        while next.fetch_add(1, Ordering::Relaxed) < units {
            unit();
        }
    };
    let pool = (threads > 1).then(|| {
        let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
        match pools.iter().find(|(n, _)| *n == threads) {
            Some((_, p)) => Some(*p),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads - 1)
                    .build()
                    .ok()?;
                let p: &'static rayon::ThreadPool = Box::leak(Box::new(p));
                pools.push((threads, p));
                Some(p)
            }
        }
    });
    let start = Instant::now();
    match pool.flatten() {
        None => work(),
        Some(pool) => pool.in_place_scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|_| {
                    work();
                    left.fetch_sub(1, Ordering::Release);
                });
            }
            work();
            while left.load(Ordering::Acquire) > 0 {
                std::hint::spin_loop();
            }
        }),
    }
    start.elapsed().as_secs_f64()
}

/// The section: what was run, the table, the target and the load. The lab writes it for the
/// default sweep only, the one the target is set on.
pub fn to_markdown(rows: &[Row], bars: usize, combos: usize, load: (&str, &str)) -> String {
    let rounds = rows.first().map_or(0, |r| r.one.len());
    let mut s = "## 2-core scaling of `fastest`\n\n".to_string();
    s += &format!(
        "`fastest` is `rolling-rayon`; here it runs on exactly 1 and 2 threads on this sweep \
         ({bars} bars × {combos} combos), in one process, sweep by sweep in pairs ordered 1 2, \
         2 1, ... (a drift in the machine's speed falls on both): {rounds} rounds of {PAIRS} \
         sweeps per thread count. `ceiling` is the machine's own limit for work of this shape: \
         {CEILING_UNITS} units of register-only arithmetic (about a combo's time each) taken in \
         turn by the calling thread and one pool thread, with no memory traffic and no \
         preparation, measured after the sweep in each round. Why the sweep scales as it does: \
         [docs/scaling.md](../docs/scaling.md).\n\n"
    );
    s += "| workload | 1 thread (ms) | 2 threads (ms) | ratio of medians | per-pair ratio, median \
          | per-round ratio, range |\n|---|---:|---:|---:|---:|---:|\n";
    let stats: Vec<Stats> = rows.iter().map(Row::stats).collect();
    for (r, st) in rows.iter().zip(&stats) {
        s += &format!(
            "| {} | {:.2} | {:.2} | {:.2}× | {:.2}× | {:.2}–{:.2}× |\n",
            r.workload,
            st.one * 1e3,
            st.two * 1e3,
            st.one / st.two,
            st.paired,
            st.rounds.0,
            st.rounds.1
        );
    }
    if let [sweep, ceiling] = stats.as_slice() {
        s += &format!(
            "\nThe sweep's per-pair ratio is {:.0}% of the ceiling's.",
            100.0 * sweep.paired / ceiling.paired
        );
        s += &format!(
            " Target (issue 17): on the default sweep, 2 threads at least {TARGET:.2}× as fast \
             as 1: {:.2}× by the per-pair median, {}.\n",
            sweep.paired,
            if sweep.paired >= TARGET {
                "met"
            } else {
                "missed"
            }
        );
    }
    s += &format!(
        "\nLoad average (1, 5, 15 min): {} before this section, {} after it. On a machine whose \
         other jobs use a core, neither ratio says what the code allows.\n",
        load.0, load.1
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_pair_the_sweeps_of_each_round() {
        let row = Row {
            workload: "this sweep",
            one: vec![vec![2.0, 2.0, 4.0], vec![3.0, 3.0, 3.0]],
            two: vec![vec![1.0, 1.0, 1.0], vec![2.0, 2.0, 2.0]],
        };
        let st = row.stats();
        assert_eq!(st.rounds, (1.5, 2.0));
        // Pairs: 2, 2, 4, 1.5, 1.5, 1.5.
        assert_eq!(st.paired, median(&[2.0, 2.0, 4.0, 1.5, 1.5, 1.5]));
        let md = to_markdown(&[row.clone(), row], 150_000, 80, ("1 1 1", "2 2 2"));
        assert!(md.contains("| this sweep |"), "{md}");
        assert!(md.contains("Target (issue 17)"), "{md}");
        assert!(md.contains("100% of the ceiling's"), "{md}");
        assert!(
            md.contains("1 1 1 before this section, 2 2 2 after it"),
            "{md}"
        );
    }

    #[test]
    fn the_ceiling_runs_on_one_and_two_threads() {
        assert!(ceiling(1, 2) > 0.0);
        assert!(ceiling(2, 2) > 0.0);
        assert!(ceiling(2, 0) >= 0.0);
    }
}
