//! Output written all or nothing: a temporary file beside the target, renamed over it once
//! complete, so an error or Ctrl-C never leaves a partial file; and a generated series streamed so.

use crate::parquet::ParquetWriter;
use crate::progress::Progress;
use crate::source::CHUNK_BARS;
use anyhow::{Context, bail};
use hullsweep_variants::Threads;
use npyz::WriterBuilder;
use std::io::Write;
use std::path::Path;

/// Writes `path` all or nothing: `write` fills a temporary file beside it, which is renamed
/// over `path` once complete, so an error or a cancellation never leaves a partial file. A path
/// that is not a regular file (`/dev/null`, a FIFO, a terminal) is written in place: renaming
/// over it would replace the device itself (as root, `--out /dev/null` once made /dev/null a
/// file).
pub fn write_atomic(
    path: &Path,
    progress: &dyn Progress,
    write: impl FnOnce(&mut std::fs::File) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        write(&mut file).with_context(|| format!("cannot write {}", path.display()))?;
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".hullsweep-")
        .suffix(".part")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    write(tmp.as_file_mut()).with_context(|| format!("cannot write {}", path.display()))?;
    if progress.cancelled() {
        bail!("interrupted; {} was not written", path.display());
    }
    // A temporary file is private (0600); the result is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The formats [`write_gbm`] writes, chosen by the file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GbmFormat {
    /// A 1-D float64 `.npy`.
    Npy,
    /// A `.parquet` with one float64 column `close`.
    Parquet,
    /// A `.csv` with the header `close`, one bar per line (see [`write_gbm_csv`]).
    Csv,
}

impl GbmFormat {
    /// The format `path`'s extension names, or an error naming the extension (or its absence).
    pub fn of(path: &Path) -> anyhow::Result<Self> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let known = [
            ("npy", Self::Npy),
            ("parquet", Self::Parquet),
            ("csv", Self::Csv),
        ];
        if let Some(&(_, f)) = known.iter().find(|(e, _)| ext.eq_ignore_ascii_case(e)) {
            return Ok(f);
        }
        let what = match path.extension() {
            Some(e) => format!(
                "the extension .{} is not a format hullsweep writes",
                e.display()
            ),
            None => "a file name without an extension".to_string(),
        };
        bail!(
            "{}: {what}; name the file .npy, .csv or .parquet",
            path.display()
        )
    }
}

/// The generator's bars, `CHUNK_BARS` at a time, made on `threads` (the same bits on any number)
/// and handed to `put`; stops when `progress` is cancelled.
fn gbm_pieces(
    bars: usize,
    seed: u64,
    sigma: f64,
    threads: Threads,
    progress: &dyn Progress,
    put: &mut dyn FnMut(&[f64]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if bars == 0 {
        bail!("bad generator argument: bars = 0: the series needs at least one bar");
    }
    let mut generator = hullsweep_kernel::GbmStream::new(seed, sigma)?;
    progress.start(Some(bars as u64));
    let mut chunk = vec![0.0; CHUNK_BARS.min(bars)];
    let mut left = bars;
    while left > 0 {
        if progress.cancelled() {
            bail!("interrupted");
        }
        let piece = &mut chunk[..left.min(CHUNK_BARS)];
        hullsweep_variants::gbm::fill(&mut generator, piece, threads)?;
        put(piece)?;
        progress.advance(piece.len() as u64);
        left -= piece.len();
    }
    Ok(())
}

/// One CSV cell of a close: Rust's shortest form that reads back to the same bits, and an empty
/// cell for NaN (a missing bar, as the CSV reader takes it).
fn csv_cell(v: f64, line: &mut String) {
    use std::fmt::Write as _;
    if !v.is_nan() {
        let _ = write!(line, "{v}");
    }
    line.push('\n');
}

/// Writes `bars` of [`gbm`](hullsweep_kernel::gbm) as CSV to `out` (a file, standard output):
/// the header `close`, then one bar per line in Rust's shortest round-trip form (a missing bar
/// would be an empty cell), so `--data` reads back the same bits; generated on `threads`. Not
/// atomic by itself: a file is written through [`write_gbm`].
pub fn write_gbm_csv(
    out: &mut dyn Write,
    bars: usize,
    seed: u64,
    sigma: f64,
    threads: Threads,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    w.write_all(b"close\n")?;
    let mut text = String::new();
    gbm_pieces(bars, seed, sigma, threads, progress, &mut |piece| {
        text.clear();
        piece.iter().for_each(|&v| csv_cell(v, &mut text));
        Ok(w.write_all(text.as_bytes())?)
    })?;
    w.flush()?;
    Ok(())
}

/// Writes `bars` of [`gbm`](hullsweep_kernel::gbm) to `path` (`.npy`, `.parquet` or `.csv`, see
/// [`GbmFormat`]) piece by piece, in bounded memory, generated on `threads` (the same bytes on
/// any number), reporting to `progress`; all or nothing, as [`write_atomic`]. Any other
/// extension is refused before anything is written.
pub fn write_gbm(
    path: &Path,
    bars: usize,
    seed: u64,
    sigma: f64,
    threads: Threads,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let format = GbmFormat::of(path)?;
    if bars == 0 {
        bail!("bad generator argument: bars = 0: the series needs at least one bar");
    }
    hullsweep_kernel::GbmStream::new(seed, sigma)?;
    write_atomic(path, progress, |file| {
        match format {
            GbmFormat::Csv => write_gbm_csv(file, bars, seed, sigma, threads, progress)?,
            GbmFormat::Parquet => {
                let mut w = ParquetWriter::new(file)?;
                gbm_pieces(bars, seed, sigma, threads, progress, &mut |p| Ok(w.put(p)?))?;
                w.finish()?;
            }
            GbmFormat::Npy => {
                let mut w = std::io::BufWriter::new(file);
                let mut npy = npyz::WriteOptions::new()
                    .default_dtype()
                    .shape(&[bars as u64])
                    .writer(&mut w)
                    .begin_nd()?;
                gbm_pieces(bars, seed, sigma, threads, progress, &mut |p| {
                    Ok(npy.extend(p.iter().copied())?)
                })?;
                npy.finish()?;
                w.flush()?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_cell_is_the_shortest_round_trip_or_empty_for_nan() {
        let mut line = String::new();
        for v in [100.0, 0.1 + 0.2, 1e-300, f64::NAN, 1.5e300] {
            csv_cell(v, &mut line);
        }
        let cells: Vec<&str> = line.lines().collect();
        assert_eq!(cells[..2], ["100", "0.30000000000000004"]);
        assert_eq!(cells[3], "");
        assert_eq!(
            cells[2].parse::<f64>().unwrap().to_bits(),
            1e-300f64.to_bits()
        );
        assert_eq!(cells[4].parse::<f64>().unwrap(), 1.5e300);
    }

    #[test]
    fn an_unknown_extension_is_named() {
        let e = GbmFormat::of(Path::new("x.txt")).unwrap_err().to_string();
        assert!(e.contains("x.txt: the extension .txt is not"), "{e}");
        let e = GbmFormat::of(Path::new("x")).unwrap_err().to_string();
        assert!(
            e.contains("x: a file name without an extension; name"),
            "{e}"
        );
        assert_eq!(GbmFormat::of(Path::new("a.CSV")).unwrap(), GbmFormat::Csv);
    }
}
