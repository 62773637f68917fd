//! The roofline of the lab's `breakdown` section: each variant's bar·combos per second on one
//! thread, its flops per bar·combo as its code performs them ([`flops_per_bar_combo`]), and the
//! machine's ceilings ([`crate::ceilings`]) as a table and a log-log SVG.
//!
//! # The flop count
//! Multiplies, adds, subtracts and divides on data, as each variant's code performs them per bar
//! and combo; comparisons, `abs`, selects and index or weight bookkeeping are not counted.
//!
//! - A WMA of window `w` computed directly (the reference's order: a multiply and an add per
//!   element, then a division): `2w + 1` per bar. `reference`, `checked` and `unchecked` run seven
//!   passes (`hma_half`, `hma_n`, `hma_sqrt`, `hma3_third`, `hma3_half`, `hma3_m` twice);
//!   `prealloc`, `simd` and `rayon` skip a first-level pass whose window repeats one already
//!   computed (`hma3_half == hma_half`, `hma3_m == hma_n`, as on the default grid: five passes).
//!   Then `2a - b` (2), `3c - dd - e` (3) and `d = hma - hma3` (1).
//! - `rolling` and `rolling-rayon` (`variants/src/rolling/lanes.rs`): a rolling WMA step is
//!   `q = w·x_new - S; T += q; S += x_new - x_old` (5) and its value `T · (1/D)` (1): 6 per window
//!   per position. The first level has three windows on the default grid (five otherwise), then
//!   `2a - b` and `3c - dd - e` (5); the second level two windows (12): **35** on the default
//!   grid, the O(1) kernel's indicator arithmetic. Then `d = hma - hma3` (1) and the
//!   certification margin `|d| - threshold` (1). Every window restarts from a direct sum (`S +=
//!   x; T += x·k`: 3 per element) once per restart period (`max(4 w1, 64)` positions), and each
//!   of the 8 lanes computes its first level over the second level's lookback too; both are
//!   counted, per combo, from its windows.

use crate::ceilings::{Isa, Op, Peak};
use hullsweep_kernel::{Combo, window};
use hullsweep_variants::simd::Tier;
use hullsweep_variants::{Threads, Variant};
use plotters::prelude::*;
use std::path::Path;
use std::time::Instant;

/// Bytes of the series each combo reads: one f64 per bar.
pub const SERIES_BYTES_PER_BAR: f64 = 8.0;

/// Flops of one WMA output of window `w`, computed directly.
fn direct(w: usize) -> f64 {
    (2 * w + 1) as f64
}

/// Flops per bar of `variant` on `combo` over a series of `n_bars` bars (see the module's
/// documentation for what is counted). A combo whose windows are longer than the series costs
/// nothing (every bar is NaN); `rolling`'s rare combos with windows of about a million bars,
/// which it runs on the SIMD pipeline, are counted as if on its fast path.
pub fn flops_per_bar_combo(variant: Variant, combo: &Combo, n_bars: usize) -> f64 {
    let [n, h, s, m, h3, t] = combo.map(window);
    let weff = (n.max(h) + s - 1).max(t.max(h3).max(m) + m - 1);
    if weff > n_bars || n_bars == 0 {
        return 0.0;
    }
    let shared = |first: &[usize]| first.iter().map(|&w| direct(w)).sum::<f64>() + 6.0;
    match variant {
        Variant::Reference | Variant::Checked | Variant::Unchecked => {
            shared(&[h, n, s, t, h3, m, m])
        }
        Variant::Prealloc | Variant::Simd | Variant::Rayon => {
            let mut passes = vec![h, n, t, s, m];
            if h3 != h {
                passes.push(h3);
            }
            if m != n {
                passes.push(m);
            }
            shared(&passes)
        }
        Variant::Rolling | Variant::RollingRayon => {
            let w1 = n.max(h).max(t).max(h3).max(m);
            let w2 = s.max(m);
            let period = (4 * w1).max(64) as f64;
            let first: Vec<usize> = if h3 == h && m == n {
                vec![h, n, t]
            } else {
                vec![h, n, t, h3, m]
            };
            let restart1: f64 = first.iter().map(|&w| 3.0 * w as f64).sum::<f64>() / period;
            let level1 = 6.0 * first.len() as f64 + 5.0 + restart1;
            // Two rolling WMAs and `d = hma - hma3`; the certification keeps each lane's least
            // `|d|` (no arithmetic) and compares it with the threshold once a period.
            let level2 = 12.0 + 1.0 + 3.0 * (s + m) as f64 / period;
            let lanes = hullsweep_variants::rolling::LANES;
            let q = n_bars.div_ceil(lanes);
            ((q + w2) as f64 * level1 + q as f64 * level2) * lanes as f64 / n_bars as f64
        }
    }
}

/// The mean of [`flops_per_bar_combo`] over `params`.
pub fn mean_flops(variant: Variant, params: &[Combo], n_bars: usize) -> f64 {
    let total: f64 = params
        .iter()
        .map(|c| flops_per_bar_combo(variant, c, n_bars))
        .sum();
    total / params.len().max(1) as f64
}

/// One variant's measured rate.
#[derive(Clone, Debug)]
pub struct Rate {
    /// The variant, run on one thread.
    pub variant: Variant,
    /// Seconds per sweep, one per round.
    pub secs: Vec<f64>,
    /// Its mean flops per bar·combo on the sweep ([`mean_flops`]).
    pub flops: f64,
}

/// The median of `xs` (0 for none).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl Rate {
    /// Bar·combos per second, from the median sweep.
    pub fn bar_combos(&self, bars: usize, combos: usize) -> f64 {
        (bars * combos) as f64 / median(&self.secs)
    }
}

/// Every variant of [`Variant::ALL`] on one thread over `close` and `params`, one sweep each per
/// round, `rounds` interleaved rounds (the order rotates each round); `tick` says what runs.
pub fn rates(
    close: &[f64],
    params: &[Combo],
    fee: f64,
    rounds: usize,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Vec<Rate>> {
    let mut out: Vec<Rate> = Variant::ALL
        .iter()
        .map(|&variant| Rate {
            variant,
            secs: Vec::new(),
            flops: mean_flops(variant, params, close.len()),
        })
        .collect();
    let k = out.len();
    for round in 0..rounds {
        for j in 0..k {
            let r = &mut out[(j + round) % k];
            tick(&format!(
                "roofline round {}/{rounds}: {}",
                round + 1,
                r.variant.name()
            ));
            let t = Instant::now();
            let res = r.variant.sweep(close, params, fee, Threads::Fixed(1))?;
            r.secs.push(t.elapsed().as_secs_f64());
            std::hint::black_box(res);
        }
    }
    Ok(out)
}

/// The machine's ceilings for one core.
#[derive(Clone, Debug)]
pub struct Ceilings {
    /// Every measured peak ([`crate::ceilings::peaks`]).
    pub peaks: Vec<Peak>,
    /// Streaming read from memory, bytes per second, and the buffer's size in bytes.
    pub dram: (f64, usize),
    /// Streaming read of a buffer the size of the series (what each combo re-reads), bytes per
    /// second, and that size in bytes.
    pub series: (f64, usize),
    /// The OS's L2 and last-level cache sizes, in bytes, where it reports them.
    pub l2: Option<usize>,
    /// The last-level cache, in bytes.
    pub llc: Option<usize>,
}

impl Ceilings {
    /// The peak of `isa` and `op`, if measured.
    pub fn peak(&self, isa: Isa, op: Op) -> Option<f64> {
        self.peaks
            .iter()
            .find(|p| p.isa == isa && p.op == op)
            .map(|p| p.flops)
    }

    /// The instruction set the rolling kernel runs at on this CPU (`Tier::best`).
    pub fn kernel_isa() -> Isa {
        match Tier::best() {
            Tier::Avx512 => Isa::Avx512,
            Tier::Avx2 => Isa::Avx2,
            _ => Isa::Baseline,
        }
    }

    /// The flop ceiling the kernels are measured against: multiply + add at the kernel's
    /// instruction set (the direct variants' bits forbid a fused one; `rolling` fuses a fifth of
    /// its operations where the CPU has FMA), or the best measured peak if that one is missing.
    pub fn ceiling(&self) -> f64 {
        self.peak(Self::kernel_isa(), Op::MulAdd)
            .unwrap_or_else(|| self.peaks.iter().map(|p| p.flops).fold(0.0, f64::max))
    }

    /// The highest measured peak (an FMA at the widest instruction set, where there is one).
    pub fn top(&self) -> f64 {
        self.peaks.iter().map(|p| p.flops).fold(0.0, f64::max)
    }
}

/// One table row's numbers for a variant (`bars × combos` sweep, kernel flops per bar·combo
/// `kernel_flops`).
pub struct RowNumbers {
    /// Bar·combos per second.
    pub rate: f64,
    /// Flops per second the variant's own code performs.
    pub flops: f64,
    /// That as a share of the kernel's ceiling.
    pub of_ceiling: f64,
    /// Bar·combos per second as a share of the O(1) ceiling (ceiling / kernel flops).
    pub of_o1: f64,
    /// Flops per byte of the series read once per combo.
    pub ai_combo: f64,
    /// Flops per byte of the series read once per sweep.
    pub ai_sweep: f64,
}

/// The numbers of `r`'s row.
pub fn row(r: &Rate, c: &Ceilings, bars: usize, combos: usize, kernel_flops: f64) -> RowNumbers {
    let rate = r.bar_combos(bars, combos);
    RowNumbers {
        rate,
        flops: rate * r.flops,
        of_ceiling: rate * r.flops / c.ceiling(),
        of_o1: rate * kernel_flops / c.ceiling(),
        ai_combo: r.flops / SERIES_BYTES_PER_BAR,
        ai_sweep: r.flops * combos as f64 / SERIES_BYTES_PER_BAR,
    }
}

/// The roofline chart: log-log, flops per byte of the series read once per combo against flops
/// per second; the memory roofs (memory and a series-sized buffer) as diagonals, the peaks as
/// horizontal lines, each variant a point at its intensity and its own code's flop rate.
pub fn svg(
    rates: &[Rate],
    c: &Ceilings,
    bars: usize,
    combos: usize,
    path: &Path,
) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let points: Vec<(String, f64, f64)> = rates
        .iter()
        .map(|r| {
            let rate = r.bar_combos(bars, combos);
            (
                r.variant.name().to_string(),
                r.flops / SERIES_BYTES_PER_BAR,
                rate * r.flops,
            )
        })
        .filter(|p| p.1 > 0.0 && p.2 > 0.0)
        .collect();
    let xs = points.iter().map(|p| p.1);
    let x0 = xs.clone().fold(f64::INFINITY, f64::min).min(0.5) / 2.0;
    let x1 = xs.fold(0.0, f64::max).max(4.0) * 4.0;
    // Room above the highest ceiling for the legend, which would hide points anywhere else.
    let y1 = c.top().max(points.iter().map(|p| p.2).fold(0.0, f64::max)) * 40.0;
    let y0 = points
        .iter()
        .map(|p| p.2)
        .fold(c.dram.0 * x0, f64::min)
        .max(1.0)
        / 3.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Roofline, one core: {bars} bars × {combos} combos"),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("flops per byte of the series (read once per combo)")
        .y_desc("flops / s")
        .x_label_formatter(&|v| format!("{v:.2}"))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()?;
    let grid: Vec<f64> = (0..=64)
        .map(|i| x0 * (x1 / x0).powf(i as f64 / 64.0))
        .collect();
    let roofs = [
        (c.dram.0, BLUE, "memory stream".to_string()),
        (c.series.0, CYAN, "series-sized buffer stream".to_string()),
    ];
    for (bw, color, name) in roofs {
        let line: Vec<(f64, f64)> = grid
            .iter()
            .map(|&x| (x, (bw * x).min(c.top())))
            .filter(|p| p.1 >= y0)
            .collect();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))?
            .label(format!("{name}: {:.1} GB/s", bw / 1e9))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    let palette = [
        RED,
        MAGENTA,
        GREEN,
        BLACK,
        RGBColor(255, 140, 0),
        RGBColor(128, 0, 128),
    ];
    for (i, p) in c.peaks.iter().enumerate() {
        let color = palette[i % palette.len()];
        let op = match p.op {
            Op::MulAdd => "mul+add",
            Op::Fma => "FMA",
            Op::Div => "divide",
        };
        chart
            .draw_series(LineSeries::new(
                [(x0, p.flops), (x1, p.flops)],
                color.stroke_width(1),
            ))?
            .label(format!(
                "{} {op}: {:.1} GFlop/s",
                p.isa.name(),
                p.flops / 1e9
            ))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    for (i, (name, x, y)) in points.iter().enumerate() {
        chart.draw_series([Circle::new((*x, *y), 4, BLACK.filled())])?;
        // Neighbours (rolling and rolling-rayon, simd and rayon) alternate above and below.
        let at = if i % 2 == 0 { *y * 1.3 } else { *y };
        chart.draw_series([Text::new(
            name.clone(),
            (*x * 1.08, at),
            ("sans-serif", 13).into_font(),
        )])?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hullsweep_kernel::{default_params, derive_windows, derive_windows2};

    #[test]
    fn the_o1_kernel_is_35_flops_of_indicators_plus_its_certificate_and_restarts() {
        // A three-window combo, as the whole default grid: 35 + 1 per position, plus restarts
        // and lookback, a few flops more; the long series makes the lookback negligible.
        let f = flops_per_bar_combo(Variant::Rolling, &derive_windows(100), 8_000_000);
        let restarts = 3.0 * (50 + 100 + 33) as f64 / 400.0 + 3.0 * (10 + 100) as f64 / 400.0;
        assert!((f - (36.0 + restarts)).abs() < 0.01, "{f}");
        // Five windows at the first level: 12 more.
        let five = flops_per_bar_combo(Variant::Rolling, &derive_windows2(100, 60), 8_000_000);
        assert!(five > f + 11.0, "{five}");
        // The default grid averages between 36 and 40.
        let mean = mean_flops(Variant::RollingRayon, &default_params(), 150_000);
        assert!(mean > 36.0 && mean < 40.0, "{mean}");
        // The direct pipelines grow with the windows: 7 passes against 5 on the default grid.
        let c = derive_windows(20);
        let full = flops_per_bar_combo(Variant::Reference, &c, 1000);
        let shared = flops_per_bar_combo(Variant::Simd, &c, 1000);
        assert_eq!(full, (41 + 21 + 9 + 13 + 21 + 41 + 41) as f64 + 6.0);
        assert_eq!(shared, (21 + 41 + 13 + 9 + 41) as f64 + 6.0);
        // Windows longer than the series: no work.
        assert_eq!(flops_per_bar_combo(Variant::Rolling, &c, 10), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
