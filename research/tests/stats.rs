//! Fold statistics and the exactness CSCV relies on: fold bounds as `numpy.array_split`, rows
//! pushed in any chunking and order (or by merged builders) giving the same statistics, exact
//! ties for integer returns whatever the bar counts, exact zeros, and thread-count independence.

use hullsweep_research::{
    FoldStats, FoldStatsBuilder, Metric, ResearchError, cscv, fold_bounds, folds_of, pbo, splits,
};
use std::cmp::Ordering;
use std::ops::Range;

/// xorshift64: deterministic test data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
    /// An integer in -k..=k.
    fn int(&mut self, k: u64) -> f64 {
        (self.next() % (2 * k + 1)) as f64 - k as f64
    }
}

#[test]
fn fold_bounds_are_numpy_array_split() {
    // np.array_split(range(10), 4): [0 1 2] [3 4 5] [6 7] [8 9].
    assert_eq!(fold_bounds(10, 4).unwrap(), [0..3, 3..6, 6..8, 8..10]);
    assert_eq!(fold_bounds(8, 4).unwrap(), [0..2, 2..4, 4..6, 6..8]);
    // 2 folds of 2 is the least: 3 bars refuse 2 folds, naming the bars.
    let e = fold_bounds(3, 2).unwrap_err().to_string();
    assert!(e.contains("at least 4 bars, but the matrix has 3"), "{e}");
    for (bars, folds) in [(1001, 16), (33, 16), (100, 6)] {
        let b = fold_bounds(bars, folds).unwrap();
        let (base, extra) = (bars / folds, bars % folds);
        assert_eq!(b.len(), folds);
        assert_eq!((b[0].start, b[folds - 1].end), (0, bars));
        for (f, r) in b.iter().enumerate() {
            assert_eq!(
                r.len(),
                base + usize::from(f < extra),
                "{bars}/{folds} fold {f}"
            );
            if f > 0 {
                assert_eq!(r.start, b[f - 1].end);
            }
        }
    }
}

#[test]
fn chunked_unordered_and_merged_pushes_give_the_same_statistics() {
    let (bars, combos, folds) = (37, 5, 4);
    let mut rng = Rng(7);
    // Integer returns: every order of summation is exact, so equality is bit for bit.
    let m: Vec<f64> = (0..bars * combos).map(|_| rng.int(9)).collect();
    let whole = FoldStats::from_matrix(&m, bars, combos, folds).unwrap();
    let row = |r: std::ops::Range<usize>| &m[r.start * combos..r.end * combos];

    let mut b = FoldStatsBuilder::new(bars, combos, folds).unwrap();
    b.push_rows(0, row(0..1)).unwrap();
    for r in [20..37, 5..20, 1..5] {
        b.push_rows(r.start, row(r)).unwrap();
    }
    assert_eq!(b.finish().unwrap(), whole);

    // Two builders sharing the first one's shifts, merged.
    let mut first = FoldStatsBuilder::new(bars, combos, folds).unwrap();
    first.push_rows(0, row(0..11)).unwrap();
    let shifts = first.shifts().unwrap().to_vec();
    let mut second = FoldStatsBuilder::with_shifts(bars, combos, folds, &shifts).unwrap();
    second.push_rows(11, row(11..37)).unwrap();
    first.merge(&second).unwrap();
    assert_eq!(first.finish().unwrap(), whole);

    // The moments of fold 1 (bars 10..19), combo 2, against the two-pass definition.
    let xs: Vec<f64> = (10..19).map(|t| m[t * combos + 2]).collect();
    let mean = xs.iter().sum::<f64>() / 9.0;
    let m2: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    let got = whole.moments(1, 2);
    assert_eq!(got.n, 9);
    assert!(
        (got.mean - mean).abs() < 1e-14 && (got.m2 - m2).abs() < 1e-12,
        "{got:?}"
    );
}

#[test]
fn bad_pushes_are_refused_and_change_nothing() {
    let (bars, combos) = (8, 2);
    let mut b = FoldStatsBuilder::new(bars, combos, 2).unwrap();
    b.push_rows(2, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let e = |r: Result<(), ResearchError>| r.unwrap_err().to_string();
    assert_eq!(
        e(b.push_rows(3, &[0.0; 4])),
        "rows 3..5: some of them were already pushed"
    );
    assert_eq!(
        e(b.push_rows(7, &[0.0; 4])),
        "rows 7..9: past the matrix's 8 bars"
    );
    assert_eq!(
        e(b.push_rows(0, &[0.0; 3])),
        "3 values are not whole rows of 2 combos"
    );
    let nan = e(b.push_rows(4, &[0.0, 1.0, f64::NAN, 0.0]));
    assert_eq!(nan, "row 5, column 0 holds NaN: returns must be finite");
    assert_eq!(b.rows_pushed(), 2);
    let other = FoldStatsBuilder::with_shifts(bars, combos, 2, &[0.0, 0.0]).unwrap();
    let mut other = other;
    other.push_rows(0, &[9.0; 4]).unwrap();
    let e2 = b.merge(&other).unwrap_err().to_string();
    assert!(
        e2.contains("combo 0 is shifted by 1 here and by 0 there"),
        "{e2}"
    );
    let missing = b.clone().finish().unwrap_err().to_string();
    assert_eq!(missing, "row 0 was never pushed (8 bars expected)");
    b.push_rows(0, &[0.0; 4]).unwrap();
    let missing = b.finish().unwrap_err().to_string();
    assert_eq!(missing, "row 4 was never pushed (8 bars expected)");
}

/// A metric in exact arithmetic from integer sums over `n` bars: `(sum, n * sumsq - sum^2)`.
/// The mean orders by `sum` (every combo has the same `n`); the Sharpe ratio is
/// `sum / sqrt(num)`, 0 where `num` is 0, compared without rounding.
fn exact_cmp(metric: Metric, a: (i128, i128), b: (i128, i128)) -> Ordering {
    if metric == Metric::Mean {
        return a.0.cmp(&b.0);
    }
    let sign = |(s, num): (i128, i128)| if num == 0 { 0 } else { s.signum() };
    match sign(a).cmp(&sign(b)) {
        Ordering::Equal if sign(a) == 0 => Ordering::Equal,
        // Same sign: |s1| / sqrt(num1) against |s2| / sqrt(num2), squared and cross-multiplied.
        Ordering::Equal => {
            let mag = (a.0 * a.0 * b.1).cmp(&(b.0 * b.0 * a.1));
            if sign(a) > 0 { mag } else { mag.reverse() }
        }
        other => other,
    }
}

/// Per combo, the exact `(sum, num)` of the rows in `folds` (a mask).
fn exact_sums(m: &[f64], combos: usize, bounds: &[Range<usize>], mask: u32) -> Vec<(i128, i128)> {
    let rows: Vec<usize> = folds_of(mask).flat_map(|f| bounds[f].clone()).collect();
    let n = rows.len() as i128;
    (0..combos)
        .map(|k| {
            let xs = rows.iter().map(|&t| m[t * combos + k] as i128);
            let (s, q) = xs.fold((0, 0), |(s, q), x| (s + x, q + x * x));
            (s, n * q - s * s)
        })
        .collect()
}

/// Integer returns and bar counts that are not powers of two, where numpy's own std rounds:
/// every n* and rank is the exact-arithmetic one. And a column whose values are permuted within
/// each fold has the same sums, so its copy ties exactly: appending such a copy of every column
/// leaves each n* in place and turns each rank `1 + below + tied_before` into
/// `1 + 2 * below + tied_before`.
#[test]
fn ranks_are_exact_and_ties_stay_ties_for_integer_returns() {
    let (bars, combos, folds) = (21, 40, 6);
    let mut rng = Rng(11);
    let m: Vec<f64> = (0..bars * combos).map(|_| rng.int(1)).collect();
    let bounds = fold_bounds(bars, folds).unwrap();
    let mut doubled = Vec::with_capacity(2 * m.len());
    for t in 0..bars {
        let fold = bounds.iter().find(|b| b.contains(&t)).unwrap();
        // The copies take the fold's rows in reverse.
        let mirror = fold.end - 1 - (t - fold.start);
        doubled.extend_from_slice(&m[t * combos..(t + 1) * combos]);
        doubled.extend_from_slice(&m[mirror * combos..(mirror + 1) * combos]);
    }
    let masks = splits(folds).unwrap();
    let mut ties = 0;
    for metric in Metric::ALL {
        let one = pbo(&m, bars, combos, folds, metric, 1).unwrap();
        let two = pbo(&doubled, bars, 2 * combos, folds, metric, 2).unwrap();
        for (i, &mask) in masks.iter().enumerate() {
            let is = exact_sums(&m, combos, &bounds, mask);
            let oos = exact_sums(&m, combos, &bounds, !mask & ((1 << folds) - 1));
            let best = (1..combos).fold(0, |b, j| {
                if exact_cmp(metric, is[j], is[b]) == Ordering::Greater {
                    j
                } else {
                    b
                }
            });
            let below = (0..combos)
                .filter(|&j| exact_cmp(metric, oos[j], oos[best]) == Ordering::Less)
                .count();
            let tied = (0..best)
                .filter(|&j| exact_cmp(metric, oos[j], oos[best]) == Ordering::Equal)
                .count();
            ties += tied
                + (0..combos)
                    .filter(|&j| j != best && is[j] == is[best])
                    .count();
            let (a, b) = (&one.splits[i], &two.splits[i]);
            assert_eq!(
                (a.selected, a.rank),
                (best, 1 + below + tied),
                "{metric} split {i}"
            );
            assert_eq!(
                (b.selected, b.rank),
                (best, 1 + 2 * below + tied),
                "{metric} split {i}"
            );
            assert_eq!(a.is_perf.to_bits(), b.is_perf.to_bits());
            assert_eq!(a.oos_perf.to_bits(), b.oos_perf.to_bits());
        }
    }
    // The data are small integers so that exact ties do occur: the test exercises them.
    assert!(ties > 40, "only {ties} ties");
}

/// A run of zeros sums exactly to zero about any shift: a combo that is flat in the IS folds has
/// metric exactly 0 there, so it ties with an all-zero combo and the first of them is n*.
#[test]
fn flat_runs_are_exactly_zero_whatever_the_shift() {
    let (bars, folds) = (40, 4);
    // Combo 0: 0.3 (a long mantissa, so the shift is inexact) at bar 0, then zeros; combo 1
    // zeros; combo 2 a loser: -1 everywhere but bar 1.
    let mut m = vec![0.0; bars * 3];
    m[0] = 0.3;
    for t in 0..bars {
        m[t * 3 + 2] = if t == 1 { 0.5 } else { -1.0 };
    }
    let stats = FoldStats::from_matrix(&m, bars, 3, folds).unwrap();
    for f in 1..folds {
        let z = stats.moments(f, 0);
        assert_eq!((z.mean, z.m2), (0.0, 0.0), "fold {f}");
    }
    for metric in Metric::ALL {
        let r = cscv(&stats, metric, 1).unwrap();
        for (i, s) in r.splits.iter().enumerate() {
            // Splits 3, 4, 5 leave fold 0 out of sample: IS is all zeros for combos 0 and 1.
            if i >= 3 {
                assert_eq!((s.selected, s.is_perf), (0, 0.0), "{metric} split {i}");
            }
        }
    }
}

#[test]
fn the_result_does_not_depend_on_the_thread_count() {
    let (bars, combos, folds) = (300, 57, 10);
    let mut rng = Rng(3);
    let m: Vec<f64> = (0..bars * combos).map(|_| rng.uniform()).collect();
    let stats = FoldStats::from_matrix(&m, bars, combos, folds).unwrap();
    for metric in Metric::ALL {
        let one = cscv(&stats, metric, 1).unwrap();
        assert_eq!(one.splits.len(), 252);
        for threads in [2, 3, 8] {
            assert_eq!(
                cscv(&stats, metric, threads).unwrap(),
                one,
                "{metric} {threads}"
            );
        }
    }
}
