//! The lab's section on the `rolling` variant: how much of each sweep its bound certifies, what
//! the fallback costs, and its time against `simd`'s on long windows and adversarial data.

use hullsweep_data::datasets::{self, Dataset};
use hullsweep_kernel::{self as kernel, Combo, GridSpec, ValidClose};
use hullsweep_variants::rolling::{self, Stats};
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

/// One workload timed side by side: `rolling` and `simd`, both on one thread.
pub struct Workload {
    /// The table label, naming the data (e.g. `this sweep`, `gate dataset flat_steps`).
    pub name: String,
    /// The close series both variants sweep.
    pub close: Vec<f64>,
    /// The combos swept.
    pub params: Vec<Combo>,
    /// Round-trip fee per closed trade, in percentage points.
    pub fee: f64,
}

/// One row: the workload's certification counts and both medians.
pub struct Row {
    /// The workload's label.
    pub name: String,
    /// Length of the workload's close series, in bars.
    pub bars: usize,
    /// Number of combos in the workload.
    pub combos: usize,
    /// What `rolling`'s bound certified on this workload and what fell back to the reference's
    /// arithmetic (from an untimed run, after the bit-identity check).
    pub stats: Stats,
    /// Seconds per sweep of `rolling` (one thread), one per round.
    pub rolling: Vec<f64>,
    /// Seconds per sweep of `simd` (one thread), one per round, timed alongside `rolling`.
    pub simd: Vec<f64>,
}

/// The workloads the targets name: the lab's own sweep, its grid stretched to windows of 2,000,
/// the gate's flat and tick-grid datasets, its datasets at both ends of the f64 range, and
/// 150,000 bars of a flat price with sparse single ticks.
pub fn workloads(close: &[f64], params: &[Combo], fee: f64) -> Vec<Workload> {
    let long = kernel::grid(GridSpec {
        lo: 6,
        hi: 2000,
        k: 80,
    })
    .expect("fixed grid");
    let mut out = vec![
        Workload {
            name: "this sweep".into(),
            close: close.to_vec(),
            params: params.to_vec(),
            fee,
        },
        Workload {
            name: "same series, grid 6:2000:80".into(),
            close: close.to_vec(),
            params: long,
            fee,
        },
    ];
    let suite = datasets::suite();
    // The flat and tick datasets are where the bound certifies least; the extreme ones are where
    // its range ends (subnormal prices certify through the underflow term, and bars past the
    // overflow guard take the exact path).
    for name in [
        "flat_steps",
        "flat_in_noise",
        "tick_grid",
        "subnormal_prices",
        "min_normal_cross",
        "overflow_prices",
        "extreme_spikes",
    ] {
        let d: &Dataset = suite.iter().find(|d| d.name == name).expect("gate dataset");
        out.push(Workload {
            name: format!("gate dataset {name}"),
            close: d.close.clone(),
            params: d.params.clone(),
            fee: d.fee,
        });
    }
    out.push(Workload {
        name: "150k flat price, a tick every 500 bars".into(),
        close: datasets::sparse_ticks(150_000, 100.0, 0.01, 500),
        params: kernel::default_params(),
        fee,
    });
    out
}

fn time_rolling(w: &Workload) -> anyhow::Result<(f64, Stats)> {
    let close = ValidClose::new(&w.close)?;
    let start = Instant::now();
    let (_, stats) = rolling::sweep_with_stats(
        close,
        &w.params,
        w.fee,
        Threads::Fixed(1),
        Tier::best(),
        WmaKernel::best(),
    )?;
    Ok((start.elapsed().as_secs_f64(), stats))
}

fn time_simd(w: &Workload) -> anyhow::Result<f64> {
    let start = Instant::now();
    Variant::Simd.sweep(&w.close, &w.params, w.fee, Threads::Fixed(1))?;
    Ok(start.elapsed().as_secs_f64())
}

/// Times every workload in interleaved rounds (rolling and simd alternate which goes first),
/// after checking that rolling's results equal the reference's bit for bit on each.
pub fn run(
    workloads: &[Workload],
    rounds: usize,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for w in workloads {
        tick(&format!("rolling: checking {}", w.name));
        let want = kernel::sweep(&w.close, &w.params, w.fee)?;
        let got = Variant::Rolling.sweep(&w.close, &w.params, w.fee, Threads::Fixed(1))?;
        let gate = hullsweep_gate::compare("rolling", &got, &want);
        anyhow::ensure!(
            gate.passes() && gate.bit_identical(),
            "rolling differs from the reference on {}",
            w.name
        );
        let (_, stats) = time_rolling(w)?;
        rows.push(Row {
            name: w.name.clone(),
            bars: w.close.len(),
            combos: w.params.len(),
            stats,
            rolling: Vec::new(),
            simd: Vec::new(),
        });
    }
    for round in 0..rounds {
        for (w, row) in workloads.iter().zip(&mut rows) {
            tick(&format!("rolling vs simd, round {}: {}", round + 1, w.name));
            if round % 2 == 0 {
                row.rolling.push(time_rolling(w)?.0);
                row.simd.push(time_simd(w)?);
            } else {
                row.simd.push(time_simd(w)?);
                row.rolling.push(time_rolling(w)?.0);
            }
        }
    }
    Ok(rows)
}

/// The flamegraph of `rolling` that `scripts/gap-report` writes beside the reports.
pub const FLAMEGRAPH: &str = "flame-variant-rolling.svg";

/// The section as Markdown. `flamegraph_written`: [`FLAMEGRAPH`] exists beside the file this
/// goes to, so it may be linked; otherwise (the terminal, a report folder without it) the text
/// says how to draw it instead of linking a file that is not there.
pub fn to_markdown(rows: &[Row], rounds: usize, flamegraph_written: bool) -> String {
    let median = hullsweep_profiling::timing::median;
    let mut s = String::new();
    s += "## The rolling variant: what it certifies and what it costs\n\n";
    s += &format!(
        "`rolling` and `simd` on one thread each, median of {rounds} interleaved rounds. A bar is \
         certified when the fast `d` clears the error bound (`variants/src/rolling.md`); the \
         fallback recomputes uncertified bars with the reference's arithmetic (recomputed bars \
         include the stretches' gaps).\n\n"
    );
    s += "| workload | bars × combos | certified | fallback bars | recomputed bars | rolling (s) | simd (s) | simd / rolling |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let (rm, sm) = (median(&r.rolling), median(&r.simd));
        s += &format!(
            "| {} | {} × {} | {:.4}% | {} | {} | {:.4} | {:.4} | {:.2}× |\n",
            r.name,
            r.bars,
            r.combos,
            100.0 * r.stats.certified_fraction(),
            r.stats.fallback_bars,
            r.stats.recomputed_bars,
            rm,
            sm,
            sm / rm
        );
    }
    if let (Some(short), Some(long)) = (rows.first(), rows.get(1)) {
        s += &format!(
            "\nWindow length: the grid 6:2000:80 takes {:.2}× the time of the lab's grid for \
             `rolling` (target ≤ 1.5×) and {:.2}× for `simd`.\n",
            median(&long.rolling) / median(&short.rolling),
            median(&long.simd) / median(&short.simd)
        );
        s += &format!(
            "Memory: `rolling` held {:.1} MiB of working memory at its peak on this sweep (one \
             worker; each further worker adds its own scratch, O(bars) up to a block of `rolling::BLOCK_BARS` and flat beyond, whatever the windows).\n",
            short.stats.memory_bytes as f64 / (1 << 20) as f64
        );
        s += &if flamegraph_written {
            format!(
                "Where its time goes on the default sweep: [`{FLAMEGRAPH}`]({FLAMEGRAPH}) \
                 (written beside this report by `scripts/gap-report`): the first-level \
                 recurrences, the second level with the certification test, and the event loop \
                 at class changes.\n"
            )
        } else {
            "Where its time goes on the default sweep: `scripts/gap-report --out DIR` draws it \
             as a flamegraph (DIR/flame-variant-rolling.svg).\n"
                .to_string()
        };
    }
    s
}
