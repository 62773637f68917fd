//! Chunks read behind kept values: every source appends the same bars `next_chunk` gives,
//! after the values kept, and a file swept in place behind the carried bars gives the plain
//! sweep's bits, its missing bars counted, whatever the format.

use hullsweep_data::{NpySource, ParquetWriter, Progress, Source, open, sweep_file, write_f64_npy};
use hullsweep_variants::{Threads, Variant};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

struct Quiet;
impl Progress for Quiet {}

/// `close` written as `.npy`, a one-column `.csv` (NaN as an empty line) and a `.parquet` in
/// row groups of 70,000.
fn files(dir: &Path, close: &[f64]) -> Vec<PathBuf> {
    let npy = dir.join("c.npy");
    write_f64_npy(&npy, close).unwrap();
    let csv = dir.join("c.csv");
    let mut f = std::io::BufWriter::new(File::create(&csv).unwrap());
    writeln!(f, "close").unwrap();
    for x in close {
        if x.is_nan() {
            writeln!(f).unwrap();
        } else {
            writeln!(f, "{x}").unwrap();
        }
    }
    drop(f);
    let parquet = dir.join("c.parquet");
    let mut file = File::create(&parquet).unwrap();
    let mut w = ParquetWriter::new(&mut file).unwrap();
    for piece in close.chunks(70_000) {
        w.put(piece).unwrap();
    }
    w.finish().unwrap();
    vec![npy, csv, parquet]
}

fn series() -> Vec<f64> {
    let bars = 2 * hullsweep_data::CHUNK_BARS + 1_234;
    let mut close = hullsweep_kernel::gbm(bars, 3, 0.001).unwrap();
    // Missing bars across the first cut, so the carried bars hold some.
    let cut = hullsweep_data::CHUNK_BARS;
    for v in &mut close[cut - 30..cut + 20] {
        *v = f64::NAN;
    }
    close
}

#[test]
fn every_source_appends_after_what_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let close = series();
    for path in files(dir.path(), &close) {
        let (mut plain, mut kept) = (open(&path, None).unwrap(), open(&path, None).unwrap());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut n = 0;
        loop {
            let more = plain.next_chunk(&mut a, 100_000).unwrap();
            b.clear();
            b.extend_from_slice(&[7.0, 8.0, 9.0]);
            assert_eq!(kept.next_chunk_after(&mut b, 2, 100_000).unwrap(), more);
            assert_eq!(b[..2], [7.0, 8.0], "{}", path.display());
            let same = a
                .iter()
                .map(|x| x.to_bits())
                .eq(b[2..].iter().map(|x| x.to_bits()));
            assert!(same, "{} chunk {n}", path.display());
            if !more {
                break;
            }
            n += 1;
        }
        assert!(n >= 3, "{}: {n} chunks", path.display());
    }
    // The .npy reader on its own: a chunk after values kept is the same bytes.
    let mut src = NpySource::open(&dir.path().join("c.npy")).unwrap();
    let mut b = vec![1.0];
    assert!(src.next_chunk_after(&mut b, 1, 5).unwrap());
    assert_eq!(b.len(), 6);
    assert_eq!(b[1].to_bits(), close[0].to_bits());
}

#[test]
fn a_file_swept_in_place_gives_the_plain_sweeps_bits() {
    let dir = tempfile::tempdir().unwrap();
    let close = series();
    let params = hullsweep_kernel::default_params();
    let missing = close.iter().filter(|x| x.is_nan()).count() as u64;
    for variant in [Variant::Rolling, Variant::fastest()] {
        let want = variant
            .sweep(&close, &params, 0.09, Threads::Fixed(2))
            .unwrap();
        for path in files(dir.path(), &close) {
            let (got, bars, nans) = sweep_file(
                &path,
                None,
                &params,
                0.09,
                variant,
                Threads::Fixed(2),
                &Quiet,
            )
            .unwrap();
            assert_eq!(got, want, "{variant:?} {}", path.display());
            assert_eq!((bars, nans), (close.len() as u64, missing));
        }
    }
}
