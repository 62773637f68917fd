//! A sweep's progress counts bar·combos to the whole work, and a stop asked for mid-sweep stops
//! it with nothing returned; the results are the plain sweep's, bit for bit.

use hullsweep_data::{Progress, sweep_file, sweep_series, write_f64_npy};
use hullsweep_variants::{Threads, Variant};
use std::cell::Cell;

/// Records the total and the advances; asks to stop once `stop_after` units are done.
struct Record {
    total: Cell<Option<u64>>,
    done: Cell<u64>,
    advances: Cell<u64>,
    stop_after: u64,
}

impl Record {
    fn new(stop_after: u64) -> Record {
        Record {
            total: Cell::new(None),
            done: Cell::new(0),
            advances: Cell::new(0),
            stop_after,
        }
    }
}

impl Progress for Record {
    fn start(&self, total: Option<u64>) {
        self.total.set(total);
    }
    fn advance(&self, units: u64) {
        self.done.set(self.done.get() + units);
        self.advances.set(self.advances.get() + 1);
    }
    fn cancelled(&self) -> bool {
        self.done.get() >= self.stop_after
    }
}

#[test]
fn an_in_memory_sweep_counts_bar_combos_and_equals_the_plain_sweep() {
    let close = hullsweep_kernel::default_close();
    let params = hullsweep_kernel::default_params();
    let work = (close.len() * params.len()) as u64;
    for variant in [Variant::Simd, Variant::Rolling] {
        let record = Record::new(u64::MAX);
        let got = sweep_series(&close, &params, 0.09, variant, Threads::Fixed(1), &record).unwrap();
        let want = variant
            .sweep(&close, &params, 0.09, Threads::Fixed(1))
            .unwrap();
        assert_eq!(got, want, "{variant:?}");
        assert_eq!(record.total.get(), Some(work));
        assert_eq!(record.done.get(), work);
    }
}

#[test]
fn a_big_grid_over_one_chunk_advances_in_many_steps_and_stops_when_asked() {
    // 10,000 combos over 20,000 bars: one chunk of the file, 200 million bar·combos.
    let close = hullsweep_kernel::gbm(20_000, 7, 0.001).unwrap();
    let spec = hullsweep_kernel::GridSpec {
        lo: 6,
        hi: 205,
        k: 100,
    };
    let params = hullsweep_kernel::grid2(spec, spec).unwrap();
    assert_eq!(params.len(), 10_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("close.npy");
    write_f64_npy(&path, &close).unwrap();
    let work = (close.len() * params.len()) as u64;

    // Stop once anything is done: after the first block of combos, inside the only chunk.
    let record = Record::new(1);
    let err = sweep_file(
        &path,
        None,
        &params,
        0.09,
        Variant::Rolling,
        Threads::Fixed(1),
        &record,
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("interrupted"), "{err:#}");
    assert_eq!(record.total.get(), Some(work));
    assert_eq!(record.advances.get(), 1, "a stop within the chunk");
    assert!(record.done.get() < work, "stopped before the end");

    let record = Record::new(u64::MAX);
    let (got, bars, missing) = sweep_file(
        &path,
        None,
        &params,
        0.09,
        Variant::Rolling,
        Threads::Fixed(1),
        &record,
    )
    .unwrap();
    assert_eq!((bars, missing), (close.len() as u64, 0));
    assert_eq!(record.done.get(), work);
    assert!(
        record.advances.get() > 1,
        "{} advances",
        record.advances.get()
    );
    let want = Variant::Rolling
        .sweep(&close, &params, 0.09, Threads::Fixed(1))
        .unwrap();
    assert_eq!(got, want);
}

#[test]
fn a_series_longer_than_a_chunk_is_swept_in_pieces_to_the_same_bits() {
    let bars = 2 * hullsweep_data::CHUNK_BARS + 1_234;
    let close = hullsweep_kernel::gbm(bars, 11, 0.001).unwrap();
    let params = hullsweep_kernel::default_params();
    for variant in [Variant::Simd, Variant::Rolling] {
        let record = Record::new(u64::MAX);
        let got = sweep_series(&close, &params, 0.09, variant, Threads::Fixed(1), &record).unwrap();
        let want = variant
            .sweep(&close, &params, 0.09, Threads::Fixed(1))
            .unwrap();
        assert_eq!(got, want, "{variant:?}");
        assert_eq!(record.done.get(), (bars * params.len()) as u64);
        assert_eq!(record.advances.get(), 3, "one block per piece");
    }
}
