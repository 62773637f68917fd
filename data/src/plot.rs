//! A sweep as a picture without Python (`hullsweep sweep --plot`), drawn with plotters as SVG: a
//! heatmap over (HMA length, HMA3 length) for a two-axis grid, a line over the length otherwise.

use anyhow::{anyhow, bail};
use hullsweep_kernel::{Combo, Grid};
use plotters::prelude::*;
use std::path::Path;

/// Lower is better only for the drawdown; every other metric is best at its highest.
fn lower_is_better(metric: &str) -> bool {
    metric == "max_drawdown"
}

/// The index of the best finite value (the first of equals), if any.
fn best(values: &[f64], metric: &str) -> Option<usize> {
    let sign = if lower_is_better(metric) { -1.0 } else { 1.0 };
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .fold(None, |acc: Option<(usize, f64)>, (k, &v)| match acc {
            Some((_, b)) if sign * v <= sign * b => acc,
            _ => Some((k, v)),
        })
        .map(|(k, _)| k)
}

/// Cell edges around each length: halfway to its neighbours (the ends mirror the first and last
/// gap), so a cell covers the lengths closest to its own and the axis reads in lengths.
fn edges(lengths: &[i64]) -> Vec<f64> {
    let l: Vec<f64> = lengths.iter().map(|&v| v as f64).collect();
    let n = l.len();
    let gap = |i: usize| if n > 1 { l[i + 1] - l[i] } else { 1.0 };
    let mut e = Vec::with_capacity(n + 1);
    e.push(l[0] - gap(0) / 2.0);
    for i in 1..n {
        e.push((l[i - 1] + l[i]) / 2.0);
    }
    e.push(l[n - 1] + gap(n.saturating_sub(2)) / 2.0);
    e
}

/// Refuses a `path` that is not named `.svg` (in any case), naming it and the name to use: the
/// plot is drawn as SVG only, and SVG bytes under a `.png` name open as a broken picture. Call it
/// before the work whose result is drawn, to fail at once; [`draw`] checks it again.
pub fn check_svg_path(path: &Path) -> anyhow::Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("svg") {
        bail!(
            "{}: the sweep plot writes SVG only; name the file .svg (such as {})",
            path.display(),
            path.with_extension("svg").display()
        );
    }
    Ok(())
}

/// Draws `values` (one per combo of `grid`, in its order) to an SVG at `path` (which must be
/// named `.svg`, see [`check_svg_path`]); returns a line naming the best combo.
pub fn draw(
    path: &Path,
    grid: &Grid,
    params: &[Combo],
    values: &[f64],
    metric: &str,
) -> anyhow::Result<String> {
    check_svg_path(path)?;
    let (hma, hma3) = grid.axes()?;
    let best = best(values, metric);
    let said = match best {
        Some(k) => format!("combo {k} {:?}, {metric} = {}", params[k], values[k]),
        None => format!("none ({metric} is NaN everywhere: no combo traded)"),
    };
    let result = match hma3 {
        Some(hma3) => heatmap(path, &hma, &hma3, values, metric, best),
        None => line(path, &hma, values, metric, best),
    };
    result.map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))?;
    Ok(said)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

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

/// The range of the finite values (a flat range is widened so the scale has extent).
fn value_range(values: &[f64]) -> (f64, f64) {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    match (lo.is_finite(), lo < hi) {
        (true, true) => (lo, hi),
        (true, false) => (lo - 0.5, hi + 0.5),
        _ => (0.0, 1.0),
    }
}

fn colour(v: f64, lo: f64, hi: f64) -> RGBColor {
    if v.is_finite() {
        ViridisRGB::get_color_normalized(v, lo, hi)
    } else {
        RGBColor(200, 200, 200)
    }
}

fn heatmap(
    path: &Path,
    hma: &[i64],
    hma3: &[i64],
    values: &[f64],
    metric: &str,
    best: Option<usize>,
) -> DrawResult {
    let root = SVGBackend::new(path, (960, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, bar) = root.split_horizontally(800);
    let (xe, ye) = (edges(hma), edges(hma3));
    let (lo, hi) = value_range(values);
    let caption = match best {
        Some(k) => format!(
            "{metric}: best (circled) at L = {}, L3 = {}: {}",
            hma[k / hma3.len()],
            hma3[k % hma3.len()],
            short(values[k])
        ),
        None => format!("{metric}: no combo traded"),
    };
    let mut chart = ChartBuilder::on(&plot)
        .caption(caption, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(64)
        .build_cartesian_2d(xe[0]..xe[hma.len()], ye[0]..ye[hma3.len()])?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("HMA length L (hma_n, hma_half, hma_sqrt; --grid)")
        .y_desc("HMA3 length L3 (hma3_m, hma3_half, hma3_third; --grid3)")
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    chart.draw_series((0..hma.len()).flat_map(|i| {
        let (xe, ye) = (&xe, &ye);
        (0..hma3.len()).map(move |j| {
            let v = values[i * hma3.len() + j];
            Rectangle::new(
                [(xe[i], ye[j]), (xe[i + 1], ye[j + 1])],
                colour(v, lo, hi).filled(),
            )
        })
    }))?;
    if let Some(k) = best {
        let (i, j) = (k / hma3.len(), k % hma3.len());
        let at = (hma[i] as f64, hma3[j] as f64);
        let mark = ShapeStyle::from(&RED).stroke_width(3);
        chart.draw_series(std::iter::once(Cross::new(at, 9, mark)))?;
        chart.draw_series(std::iter::once(Circle::new(at, 11, mark)))?;
    }
    colour_bar(&bar, lo, hi, metric)?;
    root.present()?;
    Ok(())
}

/// The colour scale beside the heatmap: the gradient with its values.
fn colour_bar(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    metric: &str,
) -> DrawResult {
    let mut chart = ChartBuilder::on(area)
        .margin_top(46)
        .margin_bottom(64)
        .margin_right(50)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..1.0, lo..hi)?;
    let steps = 200;
    chart.draw_series((0..steps).map(|s| {
        let (a, b) = (
            lo + (hi - lo) * s as f64 / steps as f64,
            lo + (hi - lo) * (s + 1) as f64 / steps as f64,
        );
        Rectangle::new([(0.0, a), (1.0, b)], colour((a + b) / 2.0, lo, hi).filled())
    }))?;
    // The axis last: real fonts run wider than plotters' estimate, and must not be covered.
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(metric)
        .axis_desc_style(("sans-serif", 14))
        .label_style(("sans-serif", 13))
        .y_label_formatter(&|y| format!("{y:.*}", digits(lo, hi)))
        .draw()?;
    Ok(())
}

fn line(path: &Path, hma: &[i64], values: &[f64], metric: &str, best: Option<usize>) -> DrawResult {
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let xe = edges(hma);
    let (lo, hi) = value_range(values);
    let pad = (hi - lo) * 0.05;
    let caption = match best {
        Some(k) => format!(
            "{metric}: best (circled) at L = {}: {}",
            hma[k],
            short(values[k])
        ),
        None => format!("{metric}: no combo traded"),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(80)
        .build_cartesian_2d(xe[0]..xe[hma.len()], (lo - pad)..(hi + pad))?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .x_desc("length L (one axis: it sets the HMA's and the HMA3's windows; --grid)")
        .y_desc(metric)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.*}", digits(lo, hi)))
        .draw()?;
    // Breaks at NaN (no trades), so a missing value is a gap, not a line through it.
    let points: Vec<(f64, f64)> = hma
        .iter()
        .map(|&l| l as f64)
        .zip(values.iter().copied())
        .collect();
    for run in points.split(|(_, v)| !v.is_finite()) {
        chart.draw_series(LineSeries::new(run.iter().copied(), BLUE.stroke_width(2)))?;
    }
    chart.draw_series(
        points
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|&p| Circle::new(p, 3, BLUE.filled())),
    )?;
    if let Some(k) = best {
        let at = points[k];
        chart.draw_series(std::iter::once(Circle::new(at, 9, RED.stroke_width(3))))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_is_the_first_highest_finite_or_the_lowest_drawdown() {
        assert_eq!(best(&[1.0, f64::NAN, 3.0, 3.0], "pnl"), Some(2));
        assert_eq!(best(&[1.0, 0.5, 3.0], "max_drawdown"), Some(1));
        assert_eq!(best(&[f64::NAN], "pnl"), None);
    }

    #[test]
    fn only_an_svg_name_is_drawn() {
        assert!(check_svg_path(Path::new("out/heat.SVG")).is_ok());
        let e = check_svg_path(Path::new("out/heat.png"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("out/heat.png: "), "{e}");
        assert!(
            e.contains("SVG only; name the file .svg (such as out/heat.svg)"),
            "{e}"
        );
        let e = check_svg_path(Path::new("heat")).unwrap_err().to_string();
        assert!(e.contains("heat.svg"), "{e}");
    }

    #[test]
    fn cells_meet_halfway_between_lengths() {
        assert_eq!(edges(&[6, 8, 11]), [5.0, 7.0, 9.5, 12.5]);
        assert_eq!(edges(&[7]), [6.5, 7.5]);
        let labels = [short(-26.505136), short(0.00123456), short(414.07)];
        assert_eq!(labels, ["-26.51", "0.001235", "414.1"]);
        assert_eq!(
            (digits(-414.0, -26.5), digits(0.0, 1.0), digits(0.1, 0.12)),
            (0, 1, 3)
        );
    }
}
