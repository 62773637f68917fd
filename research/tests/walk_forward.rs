//! Walk-forward windows, segments and selections worked by hand (ties, refusals included), and
//! `walk_forward_select` against a brute force with `Moments` and against CSCV's bits.

use hullsweep_research::{
    ColumnSums, FoldStats, Metric, Moments, WalkSpec, Window, cscv, walk_forward_select,
};
use std::ops::Range;

fn spec(text: &str) -> WalkSpec {
    text.parse().unwrap()
}

fn windows(pairs: &[(Range<usize>, Range<usize>)]) -> Vec<Window> {
    pairs
        .iter()
        .map(|(train, test)| Window {
            train: train.clone(),
            test: test.clone(),
        })
        .collect()
}

/// Fold statistics of the columns `cols` (one `Vec` per combo) over `bounds`.
fn stats(cols: &[Vec<f64>], bounds: Vec<Range<usize>>) -> FoldStats {
    let bars = cols[0].len();
    let ends: Vec<usize> = bounds.iter().map(|b| b.end).collect();
    let sums: Vec<ColumnSums> = cols
        .iter()
        .map(|c| {
            let mut s = ColumnSums::new(&ends);
            c.iter().for_each(|&x| s.push(x));
            s
        })
        .collect();
    FoldStats::from_columns(bars, bounds, &sums).unwrap()
}

#[test]
fn ten_bars_four_two() {
    // Rolling: k = 0, 1, 2 (k = 3 would need 3*2 + 4 + 2 = 12 bars).
    let rolling = spec("4:2");
    assert_eq!(
        rolling.windows(10).unwrap(),
        windows(&[(0..4, 4..6), (2..6, 6..8), (4..8, 8..10)])
    );
    // Cuts 0, 10; train starts 0, 2, 4; test starts 4, 6, 8; test ends 6, 8, 10.
    assert_eq!(
        rolling.segments(10).unwrap(),
        vec![0..2, 2..4, 4..6, 6..8, 8..10]
    );
    // Anchored: the same tests, every train from bar 0, so no cut at 2.
    let anchored = spec("4:2:anchored");
    assert_eq!(
        anchored.windows(10).unwrap(),
        windows(&[(0..4, 4..6), (0..6, 6..8), (0..8, 8..10)])
    );
    assert_eq!(
        anchored.segments(10).unwrap(),
        vec![0..4, 4..6, 6..8, 8..10]
    );
    // An eleventh bar fits no window but is a segment of its own.
    assert_eq!(rolling.windows(11).unwrap().len(), 3);
    assert_eq!(
        rolling.segments(11).unwrap(),
        vec![0..2, 2..4, 4..6, 6..8, 8..10, 10..11]
    );
}

#[test]
fn ten_bars_three_two() {
    // k = 0: 0..3 | 3..5; k = 1: 2..5 | 5..7; k = 2: 4..7 | 7..9; k = 3 would end at 11.
    let s = spec("3:2");
    assert_eq!(
        s.windows(10).unwrap(),
        windows(&[(0..3, 3..5), (2..5, 5..7), (4..7, 7..9)])
    );
    // Cuts {0, 10} + {0, 2, 4} + {3, 5, 7} + {5, 7, 9}.
    assert_eq!(
        s.segments(10).unwrap(),
        vec![0..2, 2..3, 3..4, 4..5, 5..7, 7..9, 9..10]
    );
    // The only window fills the bars: one train and one test segment.
    assert_eq!(spec("3:2").segments(5).unwrap(), vec![0..3, 3..5]);
}

/// Three combos over 8 bars, 2:2 rolling: windows 0..2 | 2..4, 2..4 | 4..6, 4..6 | 6..8.
/// Means per pair of bars: combo 0 (1, 3, 0), combo 1 (1, 1, 2), combo 2 (0.5, 3, 2).
/// Window 0: 1, 1, 0.5, a tie, so combo 0. Window 1: 3, 1, 3, a tie, so combo 0. Window 2:
/// 0, 2, 2, a tie, so combo 1.
/// Sharpe: combo 0 bars 0, 2 | 3, 3 | 0, 0; combo 1 1, 1 | 1, 1 | 1, 3; combo 2 0, 1 | 2, 4 | 2, 2.
/// Window 0: 1/1 = 1, 0 (flat), 0.5/0.5 = 1: a tie, combo 0. Window 1: 0, 0, 3/1 = 3: combo 2.
/// Window 2: 0, 2/1 = 2, 0: combo 1.
#[test]
fn selection_by_hand_with_ties() {
    let cols = vec![
        vec![0.0, 2.0, 3.0, 3.0, 0.0, 0.0, 9.0, 9.0],
        vec![1.0, 1.0, 1.0, 1.0, 1.0, 3.0, 9.0, 9.0],
        vec![0.0, 1.0, 2.0, 4.0, 2.0, 2.0, 9.0, 9.0],
    ];
    let s = spec("2:2");
    let st = stats(&cols, s.segments(8).unwrap());
    let picks = |metric| -> Vec<(usize, f64)> {
        walk_forward_select(&st, &s, metric)
            .unwrap()
            .iter()
            .map(|p| (p.selected, p.train_metric))
            .collect()
    };
    assert_eq!(picks(Metric::Mean), vec![(0, 1.0), (0, 3.0), (1, 2.0)]);
    assert_eq!(picks(Metric::Sharpe), vec![(0, 1.0), (2, 3.0), (1, 2.0)]);
    let w = walk_forward_select(&st, &s, Metric::Mean).unwrap();
    assert_eq!(
        w.iter().map(|p| p.window.clone()).collect::<Vec<_>>(),
        s.windows(8).unwrap()
    );
}

#[test]
fn statistics_over_other_segments_are_refused() {
    let cols = vec![vec![0.5; 10], vec![0.25; 10]];
    let st = stats(&cols, vec![0..5, 5..10]);
    let e = walk_forward_select(&st, &spec("4:2"), Metric::Sharpe)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "walk-forward 4:2 over 10 bars needs fold statistics over the segments [0..2, 2..4, \
         4..6, 6..8, 8..10], but they are over [0..5, 5..10]"
    );
    let e = walk_forward_select(&st, &spec("8:4"), Metric::Mean)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs TRAIN + TEST = 12 bars"), "{e}");
    // Many segments are abbreviated.
    let cols = vec![vec![0.5; 40], vec![0.25; 40]];
    let st = stats(&cols, std::iter::once(0..40).collect());
    let e = walk_forward_select(&st, &spec("2:1"), Metric::Mean)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("7..8, ... (40 in all)], but they are over [0..40]"),
        "{e}"
    );
}

struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `combos` random columns of `bars` bars, means kept away from 0 (so that relative errors
/// stay relative), with column 1 duplicated onto column 3 (exact ties).
fn random_columns(bars: usize, combos: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    let mut cols: Vec<Vec<f64>> = (0..combos)
        .map(|k| {
            (0..bars)
                .map(|_| rng.uniform() - 0.5 + 0.4 + 0.01 * k as f64)
                .collect()
        })
        .collect();
    cols[3] = cols[1].clone();
    cols
}

/// The brute force: per window, each combo's train returns pushed into `Moments`, the metric
/// taken, the first argmax.
fn brute(cols: &[Vec<f64>], spec: &WalkSpec, metric: Metric) -> Vec<(usize, f64)> {
    let bars = cols[0].len();
    spec.windows(bars)
        .unwrap()
        .iter()
        .map(|w| {
            let values: Vec<f64> = cols
                .iter()
                .map(|c| {
                    let mut m = Moments::EMPTY;
                    c[w.train.clone()].iter().for_each(|&x| m.push(x));
                    match metric {
                        Metric::Sharpe => m.sharpe(),
                        Metric::Mean => m.mean,
                    }
                })
                .collect();
            let best = values
                .iter()
                .enumerate()
                .fold(0, |b, (k, &v)| if v > values[b] { k } else { b });
            (best, values[best])
        })
        .collect()
}

/// Train windows of 3 bars and more: two close returns make a 2-bar Sharpe ratio
/// ill-conditioned (relative error about eps * (1 + mean^2/var), docs/research.md), past 1e-12.
#[test]
fn selection_equals_the_brute_force() {
    let cases = [
        (97, 12, "20:7"),
        (97, 12, "20:7:anchored"),
        (60, 5, "5:1"),
        (45, 4, "3:2:anchored"),
        (300, 30, "50:50"),
    ];
    for (seed, (bars, combos, text)) in cases.into_iter().enumerate() {
        let cols = random_columns(bars, combos, seed as u64 + 11);
        let s = spec(text);
        let st = stats(&cols, s.segments(bars).unwrap());
        for metric in Metric::ALL {
            let got = walk_forward_select(&st, &s, metric).unwrap();
            let want = brute(&cols, &s, metric);
            assert_eq!(got.len(), want.len());
            for (i, (g, (sel, m))) in got.iter().zip(&want).enumerate() {
                let what = format!("{text} {metric} window {i}");
                assert_eq!(g.selected, *sel, "{what}");
                assert_ne!(g.selected, 3, "{what}: a duplicate is never first");
                let err = ((g.train_metric - m) / m).abs();
                assert!(err <= 1e-12, "{what}: {} vs {m}", g.train_metric);
            }
        }
    }
}

/// 16 bars in 4 folds of 4 are exactly the segments of 8:4 (cuts 0, 4, 8, 12, 16); its train
/// windows are folds {0, 1} and {1, 2}, the IS halves of CSCV splits 0 and 3 (itertools order
/// (0,1) (0,2) (0,3) (1,2) ...). Same folds, same operations: the same bits.
#[test]
fn a_train_window_gives_the_cscv_halfs_bits() {
    let cols = random_columns(16, 6, 5);
    let s = spec("8:4");
    let st = stats(&cols, s.segments(16).unwrap());
    assert_eq!(st.bounds(), &[0..4, 4..8, 8..12, 12..16]);
    for metric in Metric::ALL {
        let picks = walk_forward_select(&st, &s, metric).unwrap();
        let c = cscv(&st, metric, 1).unwrap();
        for (pick, split) in picks.iter().zip([&c.splits[0], &c.splits[3]]) {
            assert_eq!(pick.selected, split.selected, "{metric}");
            assert_eq!(
                pick.train_metric.to_bits(),
                split.is_perf.to_bits(),
                "{metric}"
            );
        }
    }
}
