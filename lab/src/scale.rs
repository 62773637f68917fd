//! The "scale" section of the lab: `hullsweep sweep` on series from 1e5 bars up, read in chunks
//! as any `--data` file is, wall time and peak RSS per length, as a table and a log-log SVG.

use anyhow::{Context, bail};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Marks the section in `reports/lab.md`, so the lab can keep it when it rewrites the file.
pub const BEGIN: &str = "<!-- scale: written by `hullsweep lab --scale` -->";
/// Closes the section [`BEGIN`] opens; a rewrite replaces everything between the two.
pub const END: &str = "<!-- /scale -->";

/// Peak resident memory of this process in MiB (`VmHWM`), where the OS reports it (Linux).
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// One measured run.
#[derive(Clone, Debug)]
pub struct Point {
    /// Length of the GBM series swept, in bars.
    pub bars: u64,
    /// Wall time of the whole `hullsweep sweep` process, reading the file included, in seconds:
    /// the median of [`Point::runs`] runs.
    pub secs: f64,
    /// Peak resident memory the sweep process reported (`VmHWM`), in MiB: the largest of the
    /// runs.
    pub rss_mib: f64,
    /// How many runs the point is the median of ([`runs_for`]).
    pub runs: usize,
}

/// Runs per point: three up to 1e8 bars (at most half a minute each on 2 cores), so one slow
/// run on a shared machine does not decide a ratio; one above (a 1e9-bar run takes minutes).
pub fn runs_for(bars: u64) -> usize {
    if bars <= 100_000_000 { 3 } else { 1 }
}

/// `dir/gbm-{bars}.npy`, the default GBM series of `bars` bars, written by `exe data` unless it
/// is already there (the scale study's files are kept between runs; the scaling section's
/// whole-process row sweeps one too).
pub fn gbm_file(exe: &Path, dir: &Path, bars: u64) -> anyhow::Result<PathBuf> {
    let data = dir.join(format!("gbm-{bars}.npy"));
    if !data.exists() {
        // Its "wrote N bars" line would land in the lab's report on stdout.
        let status = Command::new(exe)
            .args(["data", "--bars", &bars.to_string(), "--out"])
            .arg(&data)
            .stdout(Stdio::null())
            .status()
            .context("cannot run hullsweep data")?;
        if !status.success() {
            bail!("hullsweep data --bars {bars} failed");
        }
    }
    Ok(data)
}

/// [`runs_for`]`(bars)` runs of [`measure_once`]: the median wall time, the largest peak RSS.
pub fn measure(exe: &Path, dir: &Path, bars: u64) -> anyhow::Result<Point> {
    let runs = runs_for(bars);
    let mut points = (0..runs)
        .map(|_| measure_once(exe, dir, bars))
        .collect::<anyhow::Result<Vec<Point>>>()?;
    points.sort_by(|a, b| a.secs.total_cmp(&b.secs));
    let rss_mib = points.iter().map(|p| p.rss_mib).fold(0.0, f64::max);
    Ok(Point {
        rss_mib,
        runs,
        ..points[runs / 2]
    })
}

/// Runs `exe sweep` on the GBM series of `bars` (written once into `dir`, [`gbm_file`]) on the
/// default grid with `fastest`, once; wall time of the whole process (reading the file
/// included) and the peak RSS it reports.
pub fn measure_once(exe: &Path, dir: &Path, bars: u64) -> anyhow::Result<Point> {
    let data = gbm_file(exe, dir, bars)?;
    let mut cmd = Command::new(exe);
    // The results go to stdout, captured and dropped (80 short lines).
    cmd.args(["sweep", "--data"]).arg(&data);
    let start = Instant::now();
    let out = cmd.output().context("cannot run hullsweep sweep")?;
    let secs = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("hullsweep sweep on {bars} bars failed: {stderr}");
    }
    let rss_mib = stderr
        .split("peak RSS ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .context("the sweep reported no peak RSS (Linux only)")?;
    Ok(Point {
        bars,
        secs,
        rss_mib,
        runs: 1,
    })
}

/// Bar-combos per second.
fn rate(p: &Point, combos: usize) -> f64 {
    p.bars as f64 * combos as f64 / p.secs
}

/// The section: what was run, the table, the targets and the chart (`svg_name`, beside it).
pub fn to_markdown(points: &[Point], combos: usize, svg_name: &str, notes: &str) -> String {
    let mut s = format!("{BEGIN}\n## Scale: any length in bounded memory\n\n");
    s += "`hullsweep sweep --data gbm-N.npy` (default grid, `fastest`) as a whole process, \
          reading the file included, as every `--data` file is read: in chunks of 256 Ki bars, \
          on a thread of its own one chunk ahead, through the resumable `Sweeper`. Wall time is \
          the median of the point's runs, back to back (three up to 1e8 bars, one above); peak \
          RSS is the largest `VmHWM` they reported.\n\n";
    s += "| bars | runs | wall (s) | bar·combos / s | peak RSS (MiB) |\n|---:|---:|---:|---:|---:|\n";
    for p in points {
        s += &format!(
            "| {:.0e} | {} | {:.2} | {:.3e} | {:.1} |\n",
            p.bars as f64,
            p.runs,
            p.secs,
            rate(p, combos),
            p.rss_mib
        );
    }
    if let Some(t) = points.iter().max_by_key(|p| p.bars) {
        s += &format!(
            "\nTarget: at {:.0e} bars, peak RSS {:.1} MiB (target <= 256 MB = 244 MiB: {}).\n",
            t.bars as f64,
            t.rss_mib,
            if t.rss_mib <= 256e6 / 1048576.0 {
                "met"
            } else {
                "missed"
            },
        );
    }
    s += &flatness(points, combos);
    s += &format!(
        "\n![wall time and peak RSS against series length]({svg_name})\n\n{notes}\n{END}\n"
    );
    s
}

/// Issue 30's targets, where the points are there: a streamed sweep's cost per bar·combo at 1e8
/// bars at most 1.1 times its cost at 1e7, and at 1e9 at most 1.15 times.
fn flatness(points: &[Point], combos: usize) -> String {
    let streamed = |bars: u64| points.iter().find(|p| p.bars == bars);
    let Some(base) = streamed(10_000_000) else {
        return String::new();
    };
    let parts: Vec<String> = [(100_000_000u64, 1.1), (1_000_000_000, 1.15)]
        .into_iter()
        .filter_map(|(bars, limit)| {
            let p = streamed(bars)?;
            // Cost per bar·combo is the inverse of the rate.
            let ratio = rate(base, combos) / rate(p, combos);
            let verdict = if ratio <= limit { "met" } else { "missed" };
            Some(format!(
                "at {:.0e} bars {ratio:.3}x its cost at 1e7 (target <= {limit}: {verdict})",
                bars as f64
            ))
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "\nTargets (issue 30): a streamed sweep's cost per bar·combo {}.\n",
        parts.join(", and ")
    )
}

/// Replaces the section in `report` (or appends it).
pub fn splice(report: &str, section: &str) -> String {
    crate::marked::splice(report, BEGIN, END, section)
}

/// The section of `report`, if it has one (the lab keeps it when it rewrites the file).
pub fn section(report: &str) -> Option<&str> {
    crate::marked::section(report, BEGIN, END)
}

/// The log-log chart: wall time and peak RSS against bars.
pub fn svg(points: &[Point], path: &Path) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (900, 380)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(450);
    let xs = points.iter().map(|p| p.bars as f64);
    let (x0, x1) = (
        xs.clone().fold(f64::INFINITY, f64::min) / 1.5,
        xs.fold(0.0, f64::max) * 1.5,
    );
    type Panel<'a, 'b> = (
        &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
        &'a str,
        fn(&Point) -> f64,
    );
    let panels: [Panel<'_, '_>; 2] = [
        (&left, "wall time (s)", |p| p.secs),
        (&right, "peak RSS (MiB)", |p| p.rss_mib),
    ];
    for (area, label, y) in panels {
        let ys = points.iter().map(y);
        let (y0, y1) = (
            ys.clone().fold(f64::INFINITY, f64::min) / 1.5,
            ys.fold(0.0, f64::max) * 1.5,
        );
        let mut chart = ChartBuilder::on(area)
            .caption(label, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("bars")
            .x_label_formatter(&|v| format!("{v:.0e}"))
            .y_label_formatter(&|v| format!("{v:.3}"))
            .draw()?;
        let series: Vec<(f64, f64)> = points.iter().map(|p| (p.bars as f64, y(p))).collect();
        chart
            .draw_series(LineSeries::new(series.clone(), BLUE.stroke_width(2)))?
            .label("hullsweep sweep --data")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE));
        chart.draw_series(series.iter().map(|&xy| Circle::new(xy, 3, BLUE.filled())))?;
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatness_is_cost_per_bar_combo_against_1e7_bars() {
        let p = |bars, secs| Point {
            bars,
            secs,
            rss_mib: 40.0,
            runs: 1,
        };
        // 1e8 bars in 10.5 times the time of 1e7: 1.05 times the cost; 1e9 in 120 times: 1.2.
        let pts = [
            p(10_000_000, 1.0),
            p(100_000_000, 10.5),
            p(1_000_000_000, 120.0),
        ];
        let s = flatness(&pts, 80);
        assert!(
            s.contains("at 1e8 bars 1.050x its cost at 1e7 (target <= 1.1: met)"),
            "{s}"
        );
        assert!(
            s.contains("at 1e9 bars 1.200x its cost at 1e7 (target <= 1.15: missed)"),
            "{s}"
        );
        assert_eq!(flatness(&pts[1..], 80), "", "no 1e7 point, no verdict");
    }

    #[test]
    fn the_section_is_replaced_in_place_and_kept() {
        let p = |bars, rss_mib| Point {
            bars,
            secs: 1.0,
            rss_mib,
            runs: runs_for(bars),
        };
        let pts = [p(1_000_000, 30.0), p(10_000_000, 50.0)];
        // Notes that no text of the section contains.
        let one = to_markdown(&pts, 80, "scale.svg", "note-one");
        let report = splice("# lab\n\ntable\n", &one);
        assert!(report.starts_with("# lab\n\ntable\n\n<!-- scale"));
        assert!(
            report.contains("| 1e7 | 3 | 1.00 | 8.000e8 | 50.0 |"),
            "{report}"
        );
        assert!(
            report.contains("at 1e7 bars, peak RSS 50.0 MiB (target <= 256 MB = 244 MiB: met)"),
            "{report}"
        );
        let over = to_markdown(&[p(1_000_000, 300.0)], 80, "scale.svg", "");
        assert!(over.contains("244 MiB: missed"), "{over}");
        let two = to_markdown(&pts, 80, "scale.svg", "note-two");
        let again = splice(&(report.clone() + "\n## after\n"), &two);
        assert!(
            again.contains("note-two") && !again.contains("note-one"),
            "{again}"
        );
        assert!(again.ends_with("## after\n"), "{again}");
        assert_eq!(section(&again), Some(two.trim_end()));
        let dir = tempfile::tempdir().unwrap();
        svg(&pts, &dir.path().join("s.svg")).unwrap();
        let text = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
        assert!(text.contains("<svg") && text.contains("hullsweep sweep --data"));
    }
}
