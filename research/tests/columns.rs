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

/// The documented order (docs/research.md, "How it is computed"): the bar at position `p` of
/// its segment goes to lane `p % LANES`, each lane summed from 0.0 in bar order, the lanes then
/// added `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`. Written out here from the
/// definition, against `ColumnSums` pushed in uneven slices and the builder pushed in uneven
/// chunks of rows in order: all three the same bits.
#[test]
fn sums_follow_the_documented_lane_order() {
    use hullsweep_research::LANES;
    assert_eq!(LANES, 8, "the tree below is written for eight lanes");
    let tree = |l: [f64; 8]| ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for (bars, combos, folds) in [(37, 3, 4), (1001, 4, 16), (300, 2, 2)] {
        let cols: Vec<Vec<f64>> = (0..combos).map(|k| column(bars, k)).collect();
        let bounds = fold_bounds(bars, folds).unwrap();
        let ends: Vec<usize> = bounds.iter().map(|b| b.end).collect();
        let mut builder = FoldStatsBuilder::new(bars, combos, folds).unwrap();
        let mut at = 0;
        for len in [1usize, 2, 9, 17, 3, 64].iter().cycle() {
            let end = (at + len).min(bars);
            let rows: Vec<f64> = (at..end)
                .flat_map(|t| cols.iter().map(move |c| c[t]))
                .collect();
            builder.push_rows(at, &rows).unwrap();
            at = end;
            if at == bars {
                break;
            }
        }
        let stats = builder.finish().unwrap();
        for (k, c) in cols.iter().enumerate() {
            let mut sums = ColumnSums::new(&ends);
            for piece in c.chunks(5) {
                sums.push_slice(piece);
            }
            let shift = sums.shift();
            assert_eq!(shift.to_bits(), stats.shifts()[k].to_bits());
            for (f, b) in bounds.iter().enumerate() {
                let (mut s, mut q) = ([0.0; 8], [0.0; 8]);
                for (p, &x) in c[b.clone()].iter().enumerate() {
                    let y = x - shift;
                    s[p % 8] += y;
                    q[p % 8] += y * y;
                }
                let want = (tree(s).to_bits(), tree(q).to_bits());
                let column = (sums.sums().0[f].to_bits(), sums.sums().1[f].to_bits());
                let (fs, fq) = stats.sums(f);
                let rows = (fs[k].to_bits(), fq[k].to_bits());
                assert_eq!(column, want, "{bars}x{combos}/{folds}: combo {k} fold {f}");
                assert_eq!(rows, want, "{bars}x{combos}/{folds}: combo {k} fold {f}");
            }
        }
    }
}
