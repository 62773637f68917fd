//! The streaming side of the CLI: a sweep fed chunk by chunk from a file (read on its own
//! thread), with a progress bar, Ctrl-C that stops cleanly, and output written atomically.

use anyhow::{Context, bail};
use hullsweep_data::DataError;
use hullsweep_data::{self as source, CHUNK_BARS, Source};
use hullsweep_kernel::{Combo, KernelError, SweepResult};
use hullsweep_variants::Sweeper;
use hullsweep_variants::{Threads, Variant};
use indicatif::{ProgressBar, ProgressStyle};
use npyz::WriterBuilder;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Set by Ctrl-C (SIGINT) once [`catch_interrupt`] has run; long loops poll it between chunks.
pub fn interrupted() -> &'static Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// From now on the first Ctrl-C only sets [`interrupted`] (the work stops at the next chunk and
/// writes nothing); a second one exits at once, as the default would.
pub fn catch_interrupt() {
    #[cfg(unix)]
    {
        use signal_hook::consts::SIGINT;
        let flag = interrupted();
        // Registration fails only when the OS refuses a handler; Ctrl-C then keeps its default.
        let _ = signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(flag));
        let _ = signal_hook::flag::register(SIGINT, Arc::clone(flag));
    }
}

/// A progress bar on stderr when it is a terminal (bars done, rate, ETA), hidden otherwise.
pub fn progress(total: Option<u64>, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(n) => {
            let bar = ProgressBar::new(n);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{what} {{wide_bar}} {{human_pos}}/{{human_len}} bars, {{per_sec}}, ETA {{eta}}"
                ))
                .expect("a valid template"),
            );
            bar
        }
        None => {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{what} {{spinner}} {{human_pos}} bars, {{per_sec}}, {{elapsed}}"
                ))
                .expect("a valid template"),
            );
            bar
        }
    }
}

/// Checks one chunk as the kernel will, naming a bad price by file, column, index and line.
fn check_chunk(src: &dyn Source, chunk: &[f64], first: u64) -> Result<(), DataError> {
    match hullsweep_kernel::validate_close(chunk) {
        Ok(()) => Ok(()),
        Err(KernelError::BadPrice { index, value }) => {
            let index = first + index as u64;
            Err(DataError::BadPrice {
                path: src.path().to_path_buf(),
                index: index as usize,
                line: src.line_of(index),
                column: src.column().map(str::to_string),
                value,
            })
        }
        Err(error) => Err(DataError::Invalid {
            path: src.path().to_path_buf(),
            error,
        }),
    }
}

/// Sweeps `path` chunk by chunk: the file is read, parsed and checked on a second thread, one
/// chunk ahead, while the sweep runs on this one. Returns the result and the number of bars.
pub fn sweep_file(
    path: &Path,
    column: Option<&str>,
    params: &[Combo],
    fee_pct: f64,
    variant: Variant,
    threads: Threads,
) -> anyhow::Result<(SweepResult, u64)> {
    let mut sweeper = Sweeper::new(params, fee_pct, variant, threads)?;
    let mut src = source::open(path, column)?;
    let bar = progress(src.len_hint(), "sweeping");
    let (tx, rx) = mpsc::sync_channel::<Result<Vec<f64>, DataError>>(1);
    let (back_tx, back_rx) = mpsc::channel::<Vec<f64>>();
    let reader = std::thread::spawn(move || {
        let mut read = 0u64;
        loop {
            let mut buf = back_rx.try_recv().unwrap_or_default();
            let next = src
                .next_chunk(&mut buf, CHUNK_BARS)
                .and_then(|more| match more {
                    true => check_chunk(src.as_ref(), &buf, read).map(|()| true),
                    false => Ok(false),
                });
            match next {
                Ok(false) => return,
                Ok(true) => {
                    read += buf.len() as u64;
                    if tx.send(Ok(buf)).is_err() {
                        return; // the sweep stopped
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    });
    let mut outcome = Ok(());
    for chunk in rx.iter() {
        if interrupted().load(Ordering::Relaxed) {
            outcome = Err(anyhow::anyhow!(
                "interrupted after {} bars of {}; nothing was written",
                sweeper.bars(),
                path.display()
            ));
            break;
        }
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                outcome = Err(e.into());
                break;
            }
        };
        if let Err(e) = sweeper.push(&chunk) {
            outcome = Err(anyhow::Error::from(e).context(path.display().to_string()));
            break;
        }
        bar.inc(chunk.len() as u64);
        let _ = back_tx.send(chunk);
    }
    drop(rx);
    bar.finish_and_clear();
    // The reader ends on its own once the channel is closed; it never panics on bad input.
    let _ = reader.join();
    outcome?;
    if interrupted().load(Ordering::Relaxed) {
        bail!("interrupted; nothing was written");
    }
    let bars = sweeper.bars();
    let result = sweeper
        .finish()
        .map_err(|e| DataError::Invalid {
            path: path.to_path_buf(),
            error: e,
        })
        .context("no bars to sweep")?;
    Ok((result, bars))
}

/// Writes `path` all or nothing: `write` fills a temporary file beside it, which is renamed
/// over `path` once complete, so an error or Ctrl-C never leaves a partial file. A path that is
/// not a regular file (`/dev/null`, a FIFO, a terminal) is written in place: renaming over it
/// would replace the device itself (as root, `--out /dev/null` once made /dev/null a file).
pub fn write_atomic(
    path: &Path,
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
    if interrupted().load(Ordering::Relaxed) {
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

/// Writes `bars` of [`gbm`](hullsweep_kernel::gbm) to `path` (`.npy`) piece by piece, with a
/// progress bar; all or nothing, as [`write_atomic`].
pub fn write_gbm(path: &Path, bars: usize, seed: u64, sigma: f64) -> anyhow::Result<()> {
    if bars == 0 {
        bail!("bad generator argument: bars = 0: the series needs at least one bar");
    }
    let mut generator = hullsweep_kernel::GbmStream::new(seed, sigma)?;
    let progress = progress(Some(bars as u64), "writing");
    let mut chunk = vec![0.0; CHUNK_BARS];
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let parquet = ext.eq_ignore_ascii_case("parquet");
    if !parquet && !ext.eq_ignore_ascii_case("npy") {
        bail!("{}: expected a .npy or .parquet file name", path.display());
    }
    let mut pieces = |put: &mut dyn FnMut(&[f64]) -> anyhow::Result<()>| -> anyhow::Result<()> {
        let mut left = bars;
        while left > 0 {
            if interrupted().load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            let piece = &mut chunk[..left.min(CHUNK_BARS)];
            generator.fill(piece)?;
            put(piece)?;
            progress.inc(piece.len() as u64);
            left -= piece.len();
        }
        Ok(())
    };
    write_atomic(path, |file| {
        if parquet {
            let mut w = hullsweep_data::parquet::ParquetWriter::new(file)?;
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
    })?;
    progress.finish_and_clear();
    Ok(())
}

/// `", peak RSS N MiB"` where the OS says (Linux: `VmHWM` of /proc/self/status), else nothing.
pub fn peak_rss_note() -> String {
    hullsweep_lab::scale::peak_rss_mib()
        .map(|m| format!(", peak RSS {m:.1} MiB"))
        .unwrap_or_default()
}
