//! [`ColumnSums`], one combo's returns pushed bar by bar, gives the same bits as the same
//! column of a matrix pushed row by row through [`FoldStatsBuilder`]; bad segments are refused.

use hullsweep_research::{ColumnSums, FoldStats, FoldStatsBuilder, check_segments, fold_bounds};

/// Returns with fractional parts, so that an order of summation other than the builder's
/// would show in the bits.
fn column(bars: usize, k: usize) -> Vec<f64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ (k as u64 + 1);
    (0..bars)
        .map(|t| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            // A flat column (k == 2) makes every sum of squares exactly zero.
            if k == 2 {
                0.25
            } else {
                x * (t % 7 + 1) as f64 + 3.0
            }
        })
        .collect()
}

#[test]
fn columns_give_the_builders_bits() {
    for (bars, combos, folds) in [(37, 5, 4), (1000, 3, 16), (4, 2, 2)] {
        let cols: Vec<Vec<f64>> = (0..combos).map(|k| column(bars, k)).collect();
        let bounds = fold_bounds(bars, folds).unwrap();
        let ends: Vec<usize> = bounds.iter().map(|b| b.end).collect();
        let sums: Vec<ColumnSums> = cols
            .iter()
            .map(|c| {
                let mut s = ColumnSums::new(&ends);
                c.iter().for_each(|&x| s.push(x));
                s
            })
            .collect();
        // Pushed in uneven slices instead, the same bits.
        let sliced: Vec<ColumnSums> = cols
            .iter()
            .map(|c| {
                let mut s = ColumnSums::new(&ends);
                let mut at = 0;
                for (i, len) in [1usize, 0, 5, 2, 64, 3].iter().cycle().enumerate() {
                    if at == c.len() || i > 10 * c.len() {
                        break;
                    }
                    let end = (at + len).min(c.len());
                    s.push_slice(&c[at..end]);
                    at = end;
                }
                assert_eq!(s.bars(), c.len());
                s
            })
            .collect();
        for (a, b) in sums.iter().zip(&sliced) {
            assert_eq!(a.shift().to_bits(), b.shift().to_bits());
            assert_eq!(
                a.sums().0.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                b.sums().0.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(
                a.sums().1.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                b.sums().1.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        let from_columns = FoldStats::from_columns(bars, bounds, &sums).unwrap();
        let mut builder = FoldStatsBuilder::new(bars, combos, folds).unwrap();
        for t in 0..bars {
            let row: Vec<f64> = cols.iter().map(|c| c[t]).collect();
            builder.push_rows(t, &row).unwrap();
        }
        let from_rows = builder.finish().unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(from_columns.shifts()), bits(from_rows.shifts()));
        for f in 0..folds {
            let (a, b) = (from_columns.sums(f), from_rows.sums(f));
            assert_eq!(
                bits(a.0),
                bits(b.0),
                "{bars}x{combos}/{folds} fold {f} sums"
            );
            assert_eq!(
                bits(a.1),
                bits(b.1),
                "{bars}x{combos}/{folds} fold {f} squares"
            );
        }
    }
}

#[test]
fn bad_segments_and_short_columns_are_refused() {
    let e = check_segments(10, &[0..4, 5..10]).unwrap_err().to_string();
    assert!(e.contains("segment 1 is bars 5..10"), "{e}");
    let e = check_segments(10, &[0..4, 4..4, 4..10])
        .unwrap_err()
        .to_string();
    assert!(e.contains("segment 1 is bars 4..4"), "{e}");
    let e = check_segments(10, &[0..4, 4..9]).unwrap_err().to_string();
    assert!(e.contains("end at bar 9, not at the 10 bars"), "{e}");
    check_segments(10, &[0..4, 4..10]).unwrap();

    let mut full = ColumnSums::new(&[4, 10]);
    (0..10).for_each(|t| full.push(t as f64));
    let mut short = ColumnSums::new(&[4, 10]);
    (0..9).for_each(|t| short.push(t as f64));
    let e = FoldStats::from_columns(10, vec![0..4, 4..10], &[full, short])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("combo 1 has 9 bars in 2 segments, expected 10 in 2"),
        "{e}"
    );
}
