//! `hullsweep lab --scale`: runs the scale study and writes its section of the lab report
//! (`hullsweep_lab::scale`), the SVG beside it.

use anyhow::Context;
use hullsweep_lab::machine::Provenance;
use hullsweep_lab::scale::{self as scale_lab, Point};
use std::path::Path;

pub fn run(sizes: &[u64], dir: &Path, out: Option<&Path>) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let provenance = Provenance::start();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let combos = hullsweep_kernel::default_params().len();
    let mut points: Vec<Point> = Vec::new();
    let mut skipped = Vec::new();
    for &bars in sizes {
        // The data file must fit on the disk with room to spare.
        let need = bars * 8 + (1 << 30);
        if let Some(free) = free_bytes(dir)
            && free < need
            && !dir.join(format!("gbm-{bars}.npy")).exists()
        {
            skipped.push(format!(
                "{bars} bars skipped: the disk holds {:.1} GB free, the file needs {:.1} GB",
                free as f64 / 1e9,
                bars as f64 * 8.0 / 1e9
            ));
            continue;
        }
        eprintln!("scale: {bars} bars");
        let p = scale_lab::measure(&exe, dir, bars)?;
        eprintln!("scale:   {:.2} s, peak RSS {:.1} MiB", p.secs, p.rss_mib);
        points.push(p);
        // Written after every point, so a study cut short still reports what it measured.
        let pending: Vec<String> = sizes
            .iter()
            .filter(|&&b| b > bars)
            .map(|b| b.to_string())
            .collect();
        write(&provenance, &points, combos, &skipped, &pending, out)?;
    }
    write(&provenance, &points, combos, &skipped, &[], out)?;
    Ok(())
}

/// Writes the section (and the SVG beside `out`) for the points so far.
fn write(
    provenance: &Provenance,
    points: &[Point],
    combos: usize,
    skipped: &[String],
    pending: &[String],
    out: Option<&Path>,
) -> anyhow::Result<()> {
    let mut notes = format!(
        "Written by `hullsweep lab --scale --out FILE`. {} The machine is shared: other jobs \
         may have run during these runs, so times are an upper bound; peak RSS is not affected.",
        provenance.line()
    );
    for s in skipped {
        notes += &format!("\n\n{s}.");
    }
    if !pending.is_empty() {
        notes += &format!(
            "\n\nNot measured (the study was stopped first): {} bars.",
            pending.join(", ")
        );
    }
    let svg_name = "scale.svg";
    let section = scale_lab::to_markdown(points, combos, svg_name, &notes);
    match out {
        Some(out) => {
            let svg = out.with_file_name(svg_name);
            scale_lab::svg(points, &svg)?;
            let old = std::fs::read_to_string(out).unwrap_or_default();
            std::fs::write(out, scale_lab::splice(&old, &section))
                .with_context(|| format!("cannot write {}", out.display()))?;
        }
        None if pending.is_empty() => println!("{section}"),
        None => {}
    }
    Ok(())
}

/// Free bytes on the file system holding `dir` (`df`), when it can tell.
fn free_bytes(dir: &Path) -> Option<u64> {
    let out = std::process::Command::new("df")
        .args(["-Pk"])
        .arg(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let kb: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}
