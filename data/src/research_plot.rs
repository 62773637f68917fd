//! The research statistics (docs/research.md) as SVG pictures without Python, drawn with plotters:
//! the CSCV logits behind the PBO, in-sample against out-of-sample performance, walk-forward equity.

use crate::write::write_atomic;
use anyhow::{anyhow, bail};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io::Write;
use std::path::Path;

/// The most points [`is_oos_scatter`] draws; above it, an evenly strided subsample of this many.
pub const MAX_SCATTER_POINTS: usize = 20_000;

/// The fewest and the most bars of [`logit_histogram`] (Freedman-Diaconis, clamped).
const BINS: (f64, f64) = (10.0, 60.0);
/// [`walk_forward_equity`] names each window's combo up to this many windows.
const MAX_LABELLED_WINDOWS: usize = 12;
/// Above this many points the equity curve is drawn as its per-bucket low and high.
const MAX_CURVE_POINTS: usize = 4_000;

const WIDTH: u32 = 960;
const PLOT_HEIGHT: u32 = 600;
const MARGIN: i32 = 16;
const Y_LABELS: i32 = 84;
/// The height of one line of the key under the plot.
const KEY_ROW: i32 = 22;

/// Logits at or below 0 (the in-sample best at or below the OOS median), and a loss.
const BELOW: RGBColor = RGBColor(214, 39, 40);
/// Logits above 0, the scatter's points and the equity curve.
const ABOVE: RGBColor = RGBColor(31, 119, 180);
const FAINT: RGBColor = RGBColor(150, 150, 150);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// One line of the key drawn under a plot: a marker and what it stands for.
enum Mark {
    Bar(RGBColor),
    Line(ShapeStyle),
    Dot(RGBAColor),
}

/// Draws a histogram of the CSCV `logits` (one per split: ln(w / (1 - w)) of the in-sample
/// best's OOS relative rank w), bars at or below 0 (the splits the `pbo` counts) in red, those
/// above in blue, with a line at 0, to an SVG at `path`, all or nothing.
pub fn logit_histogram(path: &Path, logits: &[f64], pbo: f64) -> anyhow::Result<()> {
    check_svg(path)?;
    check_values(path, "logits", logits, "splits")?;
    if !(0.0..=1.0).contains(&pbo) {
        bail!(
            "{}: pbo = {pbo}: a probability is in [0, 1]",
            path.display()
        );
    }
    let bins = Bins::new(path, logits)?;
    let counts = bins.counts(logits);
    let n = logits.len();
    let below = logits.iter().filter(|&&l| l <= 0.0).count();
    let title = format!(
        "PBO {pbo:.2}: logits of the in-sample best's OOS rank ({})",
        count(n, "split")
    );
    let of = |k: usize| format!("{} of {}", thousands(k), count(n, "split"));
    let key = [
        (
            Mark::Bar(BELOW),
            format!(
                "logit <= 0: the in-sample best at or below the OOS median ({})",
                of(below)
            ),
        ),
        (
            Mark::Bar(ABOVE),
            format!("logit > 0: above the OOS median ({})", of(n - below)),
        ),
    ];
    // A bin's width of room on either side, so no bar or the line at 0 sits on the frame.
    let (lo, hi) = (
        bins.edge(0) - bins.width,
        bins.edge(bins.count) + bins.width,
    );
    let most = counts.iter().copied().max().unwrap_or(0) as u64;
    let top = most + most / 12 + 1;
    render(path, key.len(), |plot, below_plot| {
        let mut chart = builder(plot, title, 22).build_cartesian_2d(lo..hi, 0u64..top)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_desc("logit = ln(w / (1 - w)), w = the in-sample best's OOS rank / (combos + 1)")
            .y_desc("splits")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.*}", digits(lo, hi)))
            .draw()?;
        let bars = counts.iter().enumerate().filter(|(_, c)| **c > 0);
        chart.draw_series(bars.flat_map(|(b, &c)| {
            let corners = [(bins.edge(b), 0), (bins.edge(b + 1), c as u64)];
            let colour = if bins.at_or_below_zero(b) {
                BELOW
            } else {
                ABOVE
            };
            // A thin white edge parts neighbouring bars.
            [colour.filled(), WHITE.stroke_width(1)].map(|style| Rectangle::new(corners, style))
        }))?;
        chart.draw_series(LineSeries::new(
            [(0.0, 0), (0.0, top)],
            BLACK.stroke_width(2),
        ))?;
        draw_key(below_plot, &key)
    })
}

/// Draws, per split, the in-sample (`is`) against the out-of-sample (`oos`) `metric` of the
/// in-sample best as points, the least-squares degradation line OOS = `slope` x IS + `intercept`
/// over the IS range (its equation and `r2` in the key) and the line OOS = 0, to an SVG at
/// `path`, all or nothing. Above [`MAX_SCATTER_POINTS`] splits an evenly strided subsample of
/// that many is drawn, and the title says so; the ranges and the line cover every split.
pub fn is_oos_scatter(
    path: &Path,
    is: &[f64],
    oos: &[f64],
    slope: f64,
    intercept: f64,
    r2: f64,
    metric: &str,
) -> anyhow::Result<()> {
    check_svg(path)?;
    let p = path.display();
    if is.len() != oos.len() {
        let (a, b) = (is.len(), oos.len());
        bail!("{p}: is has {a} values and oos has {b}: one pair per split");
    }
    check_values(path, "is", is, "splits")?;
    check_values(path, "oos", oos, "splits")?;
    for (name, v) in [("slope", slope), ("intercept", intercept), ("r2", r2)] {
        if !v.is_finite() {
            bail!("{p}: {name} = {v}: must be finite");
        }
    }
    let n = is.len();
    let (x_lo, x_hi) = extent(is.iter().copied());
    let fit = [
        (x_lo, slope * x_lo + intercept),
        (x_hi, slope * x_hi + intercept),
    ];
    let (y_lo, y_hi) = extent(oos.iter().copied().chain(fit.map(|p| p.1)).chain([0.0]));
    if !(y_hi - y_lo).is_finite() || !(x_hi - x_lo).is_finite() {
        bail!("{p}: the values span more than a float can draw");
    }
    let (x_lo, x_hi) = padded(x_lo, x_hi, 0.04);
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.05);
    let shown = n.min(MAX_SCATTER_POINTS);
    let title = if shown < n {
        format!(
            "IS vs OOS {metric} of the in-sample best: {} splits, an evenly strided {} drawn",
            thousands(n),
            thousands(shown)
        )
    } else {
        format!(
            "In-sample vs out-of-sample {metric} of the in-sample best ({})",
            count(n, "split")
        )
    };
    let key = [
        (
            Mark::Dot(ABOVE.mix(0.6)),
            format!("one split: its in-sample best's {metric} in and out of sample"),
        ),
        (
            Mark::Line(BELOW.stroke_width(2)),
            format!(
                "degradation (least squares): OOS = {} \u{d7} IS {} (R\u{b2} {r2:.2})",
                short(slope),
                signed(intercept)
            ),
        ),
        (
            Mark::Line(BLACK.stroke_width(1)),
            "OOS = 0: below it the in-sample best loses out of sample".to_string(),
        ),
    ];
    let dot = ABOVE.mix(if shown > 2_000 { 0.25 } else { 0.55 }).filled();
    render(path, key.len(), |plot, below_plot| {
        let mut chart = builder(plot, title, 20).build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_desc(format!("in-sample {metric}"))
            .y_desc(format!("out-of-sample {metric}"))
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.*}", digits(x_lo, x_hi)))
            .y_label_formatter(&|y| format!("{y:.*}", digits(y_lo, y_hi)))
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(x_lo, 0.0), (x_hi, 0.0)],
            BLACK.stroke_width(1),
        ))?;
        chart.draw_series(strided(n, shown).map(|i| Circle::new((is[i], oos[i]), 2, dot)))?;
        chart.draw_series(LineSeries::new(fit, BELOW.stroke_width(2)))?;
        draw_key(below_plot, &key)
    })
}

/// Draws the walk-forward out-of-sample equity curve (the running sum of `oos_returns`, the test
/// windows' bar returns concatenated, in percentage points) over the OOS bar index, a faint line
/// at each window's start (`window_starts`, indices into `oos_returns`, the first 0) and, up to
/// 12 windows, the combo each selected in sample (`selected`, one per window, as "#17"), to an
/// SVG at `path`, all or nothing.
pub fn walk_forward_equity(
    path: &Path,
    oos_returns: &[f64],
    window_starts: &[usize],
    selected: &[usize],
) -> anyhow::Result<()> {
    check_svg(path)?;
    check_values(path, "oos_returns", oos_returns, "OOS bars")?;
    check_windows(path, oos_returns.len(), window_starts, selected)?;
    let n = oos_returns.len();
    let equity: Vec<f64> = std::iter::once(0.0)
        .chain(oos_returns.iter().scan(0.0, |sum, r| {
            *sum += r;
            Some(*sum)
        }))
        .collect();
    let (lo, hi) = extent(equity.iter().copied());
    if !(hi - lo).is_finite() {
        bail!("{}: the running OOS PnL overflows", path.display());
    }
    let last = equity[n];
    let windows = window_starts.len();
    let labelled = windows <= MAX_LABELLED_WINDOWS;
    let (y_lo, y_hi) = padded(lo, hi, 0.05);
    // Room above the curve for the window labels.
    let y_hi = y_hi + if labelled { (y_hi - y_lo) * 0.08 } else { 0.0 };
    let title = format!(
        "Walk-forward out-of-sample equity: {}, final OOS PnL {last:+.2} pp",
        count(windows, "test window")
    );
    let starts = if labelled {
        "the start of a test window; #k: the combo selected in sample for it".to_string()
    } else {
        format!(
            "the start of a test window ({} windows: too many to name each one's combo)",
            thousands(windows)
        )
    };
    let key = [
        (
            Mark::Line(ABOVE.stroke_width(2)),
            format!(
                "cumulative OOS PnL (percentage points) over {} OOS bars, the test windows concatenated",
                thousands(n)
            ),
        ),
        (Mark::Line(FAINT.stroke_width(1)), starts),
    ];
    let x_hi = n as f64;
    render(path, key.len(), |plot, below_plot| {
        let mut chart = builder(plot, title, 22).build_cartesian_2d(0.0..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_desc("out-of-sample bar (the test windows concatenated)")
            .y_desc("cumulative OOS PnL (pp)")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.*}", digits(y_lo, y_hi)))
            .draw()?;
        let faint = FAINT.mix(if windows > 200 { 0.25 } else { 0.6 });
        chart.draw_series(window_starts.iter().map(|&s| {
            PathElement::new([(s as f64, y_lo), (s as f64, y_hi)], faint.stroke_width(1))
        }))?;
        chart.draw_series(LineSeries::new(
            [(0.0, 0.0), (x_hi, 0.0)],
            BLACK.stroke_width(1),
        ))?;
        chart.draw_series(LineSeries::new(curve(&equity), ABOVE.stroke_width(2)))?;
        if labelled {
            let font = TextStyle::from(("sans-serif", 14).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Top));
            chart.draw_series(window_starts.iter().zip(selected).map(|(&s, &k)| {
                EmptyElement::at((s as f64, y_hi))
                    + Text::new(format!("#{k}"), (4, 4), font.clone())
            }))?;
        }
        draw_key(below_plot, &key)
    })
}

fn check_svg(path: &Path) -> anyhow::Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("svg") {
        let p = path.display();
        bail!("{p}: not an .svg file name: research plots are drawn as SVG only");
    }
    Ok(())
}

/// Refuses an empty `values` and names the first value that is not finite, by index.
fn check_values(path: &Path, name: &str, values: &[f64], what: &str) -> anyhow::Result<()> {
    let p = path.display();
    if values.is_empty() {
        bail!("{p}: {name} is empty: there are no {what} to draw");
    }
    if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        bail!("{p}: {name}[{i}] = {v}: every value must be finite");
    }
    Ok(())
}

/// One window per selected combo, the first at 0, each after the last, all inside the series.
fn check_windows(
    path: &Path,
    bars: usize,
    starts: &[usize],
    selected: &[usize],
) -> anyhow::Result<()> {
    let p = path.display();
    if starts.is_empty() {
        bail!("{p}: window_starts is empty: there are no test windows to draw");
    }
    let (a, b) = (starts.len(), selected.len());
    if a != b {
        bail!("{p}: window_starts has {a} values and selected has {b}: one of each per window");
    }
    if starts[0] != 0 {
        let s = starts[0];
        bail!("{p}: window_starts[0] = {s}: the first test window starts the OOS series, at 0");
    }
    for (i, pair) in starts.windows(2).enumerate() {
        if let [a, b] = *pair
            && b <= a
        {
            let j = i + 1;
            bail!("{p}: window_starts[{j}] = {b} is not after window_starts[{i}] = {a}");
        }
    }
    let (i, &s) = starts.iter().enumerate().next_back().expect("not empty");
    if s >= bars {
        bail!("{p}: window_starts[{i}] = {s} is past the last of the {bars} OOS bars");
    }
    Ok(())
}

/// A chart on `plot` with its title, margins and label areas, the same for every plot.
fn builder<'a, 'b>(
    plot: &'a Area<'b>,
    title: String,
    size: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(plot);
    builder
        .caption(title, ("sans-serif", size))
        .margin(MARGIN)
        .margin_right(MARGIN + 24)
        .x_label_area_size(52)
        .y_label_area_size(Y_LABELS);
    builder
}

/// Draws into a string (the plot, then a key of `rows` lines under it) and writes it to `path`
/// all or nothing, so a failed drawing leaves no file.
fn render(
    path: &Path,
    rows: usize,
    draw: impl FnOnce(&Area<'_>, &Area<'_>) -> DrawResult,
) -> anyhow::Result<()> {
    let key_height = 12 + KEY_ROW as u32 * rows as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, PLOT_HEIGHT + key_height))
            .into_drawing_area();
        let drawn = (|| -> DrawResult {
            root.fill(&WHITE)?;
            let (plot, key) = root.split_vertically(PLOT_HEIGHT);
            draw(&plot, &key)?;
            root.present()?;
            Ok(())
        })();
        drawn.map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))?;
    }
    write_atomic(path, &(), |file| Ok(file.write_all(svg.as_bytes())?))
}

/// The key under a plot, one marker and text a line, left-aligned with the plot area.
fn draw_key(area: &Area<'_>, rows: &[(Mark, String)]) -> DrawResult {
    let font = TextStyle::from(("sans-serif", 15).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (x0, x1) = (MARGIN + Y_LABELS - 20, MARGIN + Y_LABELS + 8);
    for (r, (mark, text)) in rows.iter().enumerate() {
        let y = 4 + KEY_ROW * r as i32 + KEY_ROW / 2;
        match mark {
            Mark::Bar(c) => area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], c.filled()))?,
            Mark::Line(s) => area.draw(&PathElement::new([(x0, y), (x1, y)], *s))?,
            Mark::Dot(c) => area.draw(&Circle::new(((x0 + x1) / 2, y), 4, c.filled()))?,
        }
        area.draw(&Text::new(text.as_str(), (x1 + 10, y), font.clone()))?;
    }
    Ok(())
}

/// Histogram bins of width `width` aligned on 0: bin `b` is (`(first + b) width`,
/// `(first + b + 1) width`], so a logit of exactly 0 falls in the last bin at or below 0, as the
/// PBO counts it.
struct Bins {
    first: i64,
    width: f64,
    count: usize,
}

impl Bins {
    /// Freedman-Diaconis over the values' range widened to include 0, clamped to [`BINS`].
    fn new(path: &Path, values: &[f64]) -> anyhow::Result<Self> {
        let (lo, hi) = extent(values.iter().copied().chain([0.0]));
        let (lo, hi) = if hi > lo { (lo, hi) } else { (-0.5, 0.5) };
        let span = hi - lo;
        if !span.is_finite() {
            bail!(
                "{}: the logits span more than a float can draw",
                path.display()
            );
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        let iqr = quantile(&sorted, 0.75) - quantile(&sorted, 0.25);
        let fd_width = 2.0 * iqr / (sorted.len() as f64).cbrt();
        // Most logits equal (no spread between the quartiles): a fixed count.
        let bins = if fd_width > 0.0 {
            (span / fd_width).ceil().clamp(BINS.0, BINS.1)
        } else {
            40.0
        };
        let width = span / bins;
        let first = Self::index(lo, width);
        let count = (Self::index(hi, width) - first + 1) as usize;
        Ok(Self {
            first,
            width,
            count,
        })
    }

    /// The (unshifted) bin holding `x`: ceil(x / width) - 1, kept on the side of 0 that `x` is.
    fn index(x: f64, width: f64) -> i64 {
        let k = (x / width).ceil() as i64 - 1;
        if x > 0.0 { k.max(0) } else { k.min(-1) }
    }

    fn edge(&self, b: usize) -> f64 {
        (self.first + b as i64) as f64 * self.width
    }

    fn at_or_below_zero(&self, b: usize) -> bool {
        self.first + (b as i64) < 0
    }

    fn counts(&self, values: &[f64]) -> Vec<usize> {
        let mut counts = vec![0; self.count];
        for &v in values {
            let b = (Self::index(v, self.width) - self.first).clamp(0, self.count as i64 - 1);
            counts[b as usize] += 1;
        }
        counts
    }
}

/// The `q` quantile of sorted values, interpolated linearly (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (i, frac) = (at.floor() as usize, at.fract());
    match sorted.get(i + 1) {
        Some(&next) => sorted[i] + (next - sorted[i]) * frac,
        None => sorted[i],
    }
}

/// `shown` indices evenly strided over `0..n` (all of them when `shown == n`), always from 0.
fn strided(n: usize, shown: usize) -> impl Iterator<Item = usize> {
    (0..shown).map(move |i| (i as u128 * n as u128 / shown as u128) as usize)
}

/// The curve through `(i, equity[i])`; past [`MAX_CURVE_POINTS`], each bucket's low and high in
/// bar order (and the first and last points), so every excursion still shows.
fn curve(equity: &[f64]) -> Vec<(f64, f64)> {
    let at = |i: usize| (i as f64, equity[i]);
    if equity.len() <= MAX_CURVE_POINTS {
        return (0..equity.len()).map(at).collect();
    }
    let bucket = equity.len().div_ceil(MAX_CURVE_POINTS / 2);
    let mut points = vec![at(0)];
    for start in (0..equity.len()).step_by(bucket) {
        let end = (start + bucket).min(equity.len());
        let by = |a: &usize, b: &usize| equity[*a].total_cmp(&equity[*b]);
        let low = (start..end).min_by(by).expect("a bucket is not empty");
        let high = (start..end).max_by(by).expect("a bucket is not empty");
        points.extend([at(low.min(high)), at(low.max(high))]);
    }
    points.push(at(equity.len() - 1));
    points
}

/// The smallest and largest of finite values.
fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let none = (f64::INFINITY, f64::NEG_INFINITY);
    values.fold(none, |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// `[lo, hi]` widened by `share` of its span on each side; a flat range gets an extent.
fn padded(lo: f64, hi: f64, share: f64) -> (f64, f64) {
    let flat = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
    let pad = if hi > lo { (hi - lo) * share } else { flat };
    (lo - pad, hi + pad)
}

/// Decimals for axis labels over `[lo, hi]`: enough to tell ticks about a tenth of it apart.
fn digits(lo: f64, hi: f64) -> usize {
    (1 - (hi - lo).abs().max(1e-9).log10().floor() as i32).clamp(0, 6) as usize
}

/// A value for a caption: four significant digits, without an exponent in the usual range.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
}

/// `+ 0.0113` or `- 0.0113`: a term added in an equation.
fn signed(v: f64) -> String {
    let sign = if v < 0.0 { '-' } else { '+' };
    format!("{sign} {}", short(v.abs()))
}

/// `12,870 splits`, `1 split`.
fn count(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n))
}

/// `12870` as `12,870`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_align_on_zero_and_count_zero_at_or_below() {
        let values = [-1.0, -0.5, 0.0, 0.0, 0.25, 1.0];
        let bins = Bins::new(Path::new("x.svg"), &values).unwrap();
        assert!((BINS.0 as usize..=BINS.1 as usize + 1).contains(&bins.count));
        let counts = bins.counts(&values);
        assert_eq!(counts.iter().sum::<usize>(), values.len());
        let below = (0..bins.count).filter(|&b| bins.at_or_below_zero(b));
        assert_eq!(below.map(|b| counts[b]).sum::<usize>(), 4);
        assert!((0..=bins.count).any(|b| bins.edge(b) == 0.0));
    }

    #[test]
    fn helpers_format_and_stride() {
        let big = [0, 999, 12_870, 10_400_600].map(thousands);
        assert_eq!(big, ["0", "999", "12,870", "10,400,600"]);
        assert_eq!([signed(-0.0113), signed(0.5)], ["- 0.01130", "+ 0.5000"]);
        assert_eq!(strided(5, 5).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(strided(10, 4).collect::<Vec<_>>(), [0, 2, 5, 7]);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.75);
        let equity: Vec<f64> = (0..10_001).map(|i| (i as f64 * 0.01).sin()).collect();
        let points = curve(&equity);
        assert!(points.len() <= MAX_CURVE_POINTS + 2);
        assert_eq!(points.last(), Some(&(10_000.0, equity[10_000])));
    }
}
