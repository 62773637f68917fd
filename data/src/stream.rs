//! A sweep fed from a file chunk by chunk in bounded memory: the file is read, parsed and checked
//! on a second thread, one chunk ahead, while the sweep runs on the caller's.

use crate::error::DataError;
use crate::progress::Progress;
use crate::read::open;
use crate::source::{CHUNK_BARS, validate_chunk};
use anyhow::{Context, bail};
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_variants::{Sweeper, Threads, Variant};
use std::path::Path;
use std::sync::mpsc;

/// Sweeps the close series in `path` (`.npy`, `.csv`, `.parquet`; `column` picks a CSV or
/// Parquet column) over `params`, holding about two chunks of [`CHUNK_BARS`] at a time, and
/// returns the result (bit-identical to the in-memory sweep), the number of bars and how many
/// of them were missing (NaN, or an empty CSV cell). `progress` counts bar·combos, advanced as
/// each block of combos finishes a chunk ([`Sweeper::push_observed`]).
///
/// # Errors
///
/// The file cannot be read or holds a bad price (named by file, column, index and line), the
/// params or fee are invalid, the series is empty, or `progress` asked to stop.
pub fn sweep_file(
    path: &Path,
    column: Option<&str>,
    params: &[Combo],
    fee_pct: f64,
    variant: Variant,
    threads: Threads,
    progress: &dyn Progress,
) -> anyhow::Result<(SweepResult, u64, u64)> {
    let mut sweeper = Sweeper::new(params, fee_pct, variant, threads)?;
    let mut missing = 0u64;
    let work = PerCombo {
        inner: progress,
        combos: params.len() as u64,
    };
    // Each chunk is read behind room for the bars the sweeper carries over, and swept there.
    let room = sweeper.lookback();
    read_chunks(path, column, room, &work, |buf, nans| {
        missing += nans;
        let bars = (buf.len() - room) as u64;
        let swept = sweeper.push_observed_in_place(buf, room, &mut |combos| {
            progress.advance(bars * combos as u64);
            !progress.cancelled()
        })?;
        if !swept {
            bail!("interrupted; nothing was written");
        }
        Ok(())
    })?;
    let bars = sweeper.bars();
    let result = sweeper
        .finish()
        .map_err(|e| DataError::Invalid {
            path: path.to_path_buf(),
            error: e,
        })
        .context("no bars to sweep")?;
    Ok((result, bars, missing))
}

/// Sweeps a series in memory over `params` as [`Variant::sweep`] does, bit for bit, telling
/// `progress` the bar·combos done as blocks of combos finish and stopping when it asks. The
/// series is pushed in pieces of [`CHUNK_BARS`], as a file is, so the working memory beside
/// the series is the streamed sweep's, whatever its length, and so is the speed.
///
/// # Errors
///
/// A bad price, invalid params or fee, an empty series, or `progress` asked to stop.
pub fn sweep_series(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    variant: Variant,
    threads: Threads,
    progress: &dyn Progress,
) -> anyhow::Result<SweepResult> {
    let mut sweeper = Sweeper::new(params, fee_pct, variant, threads)?;
    progress.start(Some(close.len() as u64 * params.len() as u64));
    for chunk in close.chunks(CHUNK_BARS) {
        if !push_observed(&mut sweeper, chunk, progress)? {
            bail!("interrupted; nothing was written");
        }
    }
    Ok(sweeper.finish()?)
}

/// One push, each finished block of combos reported to `progress` in bar·combos; `false` when
/// `progress` asked to stop.
fn push_observed(
    sweeper: &mut Sweeper,
    chunk: &[f64],
    progress: &dyn Progress,
) -> anyhow::Result<bool> {
    let bars = chunk.len() as u64;
    Ok(sweeper.push_observed(chunk, &mut |combos| {
        progress.advance(bars * combos as u64);
        !progress.cancelled()
    })?)
}

/// A sweep's progress seen by [`for_each_chunk`], which counts bars: the total becomes
/// bar·combos, and the advances are made per block of combos by [`push_observed`] instead.
struct PerCombo<'a> {
    inner: &'a dyn Progress,
    combos: u64,
}

impl Progress for PerCombo<'_> {
    fn start(&self, total: Option<u64>) {
        self.inner.start(total.map(|bars| bars * self.combos));
    }

    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

/// Reads the series in `path` chunk by chunk ([`CHUNK_BARS`] bars, read and checked on a second
/// thread one chunk ahead) and hands each chunk, in order, to `work`; returns the bar count.
/// Every price is checked first (a bad one is named by file, column, index and line); an error
/// from `work` is returned with the file named, and `progress` can stop it between chunks.
pub fn for_each_chunk(
    path: &Path,
    column: Option<&str>,
    progress: &dyn Progress,
    mut work: impl FnMut(&[f64]) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    read_chunks(path, column, 0, progress, |chunk, _| work(chunk))
}

/// [`for_each_chunk`], each chunk read behind `room` free slots (`work` gets them and the chunk
/// as one slice) and handed over with its count of missing bars (NaN), counted on the reading
/// thread: the caller's thread, between two parallel sweeps, neither copies the chunk nor makes
/// a pass of its own over it.
fn read_chunks(
    path: &Path,
    column: Option<&str>,
    room: usize,
    progress: &dyn Progress,
    mut work: impl FnMut(&mut [f64], u64) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let mut src = open(path, column)?;
    progress.start(src.len_hint());
    let (tx, rx) = mpsc::sync_channel::<Result<(Vec<f64>, u64), DataError>>(1);
    let (back_tx, back_rx) = mpsc::channel::<Vec<f64>>();
    let reader = std::thread::spawn(move || {
        let mut read = 0u64;
        loop {
            let mut buf = back_rx.try_recv().unwrap_or_default();
            buf.clear();
            buf.resize(room, 0.0);
            let next =
                src.next_chunk_after(&mut buf, room, CHUNK_BARS)
                    .and_then(|more| match more {
                        true => validate_chunk(src.as_ref(), &buf[room..], read).map(|()| true),
                        false => Ok(false),
                    });
            match next {
                Ok(false) => return,
                Ok(true) => {
                    let chunk = &buf[room..];
                    read += chunk.len() as u64;
                    let nans = chunk.iter().filter(|x| x.is_nan()).count() as u64;
                    if tx.send(Ok((buf, nans))).is_err() {
                        return; // the work stopped
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    });
    let (mut outcome, mut bars) = (Ok(()), 0u64);
    let interrupted = |bars: u64| {
        anyhow::anyhow!(
            "interrupted after {bars} bars of {}; nothing was written",
            path.display()
        )
    };
    for chunk in rx.iter() {
        if progress.cancelled() {
            outcome = Err(interrupted(bars));
            break;
        }
        let (mut chunk, nans) = match chunk {
            Ok(c) => c,
            Err(e) => {
                outcome = Err(e.into());
                break;
            }
        };
        if let Err(e) = work(&mut chunk, nans) {
            // A stop asked for inside the chunk (a long sweep checks between blocks of
            // combos) is said as one between chunks: how many bars were done.
            outcome = Err(if progress.cancelled() {
                interrupted(bars)
            } else {
                e.context(path.display().to_string())
            });
            break;
        }
        let read = (chunk.len() - room) as u64;
        bars += read;
        progress.advance(read);
        let _ = back_tx.send(chunk);
    }
    drop(rx);
    // The reader ends on its own once the channel is closed; it never panics on bad input.
    let _ = reader.join();
    outcome?;
    if progress.cancelled() {
        bail!("interrupted; nothing was written");
    }
    Ok(bars)
}
