//! Output written all or nothing: a temporary file beside the target, renamed over it once
//! complete, so an error or Ctrl-C never leaves a partial file; and a generated series streamed so.

use crate::parquet::ParquetWriter;
use crate::progress::Progress;
use crate::source::CHUNK_BARS;
use anyhow::{Context, bail};
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

/// Writes `bars` of [`gbm`](hullsweep_kernel::gbm) to `path` (`.npy` or `.parquet`) piece by
/// piece, in bounded memory, reporting to `progress`; all or nothing, as [`write_atomic`].
pub fn write_gbm(
    path: &Path,
    bars: usize,
    seed: u64,
    sigma: f64,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    if bars == 0 {
        bail!("bad generator argument: bars = 0: the series needs at least one bar");
    }
    let mut generator = hullsweep_kernel::GbmStream::new(seed, sigma)?;
    progress.start(Some(bars as u64));
    let mut chunk = vec![0.0; CHUNK_BARS];
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let parquet = ext.eq_ignore_ascii_case("parquet");
    if !parquet && !ext.eq_ignore_ascii_case("npy") {
        bail!("{}: expected a .npy or .parquet file name", path.display());
    }
    let mut pieces = |put: &mut dyn FnMut(&[f64]) -> anyhow::Result<()>| -> anyhow::Result<()> {
        let mut left = bars;
        while left > 0 {
            if progress.cancelled() {
                bail!("interrupted");
            }
            let piece = &mut chunk[..left.min(CHUNK_BARS)];
            generator.fill(piece)?;
            put(piece)?;
            progress.advance(piece.len() as u64);
            left -= piece.len();
        }
        Ok(())
    };
    write_atomic(path, progress, |file| {
        if parquet {
            let mut w = ParquetWriter::new(file)?;
            pieces(&mut |p| Ok(w.put(p)?))?;
            w.finish()?;
        } else {
            let mut w = std::io::BufWriter::new(file);
            let mut npy = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&[bars as u64])
                .writer(&mut w)
                .begin_nd()?;
            pieces(&mut |p| Ok(npy.extend(p.iter().copied())?))?;
            npy.finish()?;
            w.flush()?;
        }
        Ok(())
    })
}
