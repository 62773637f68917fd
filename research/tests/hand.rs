//! CSCV on matrices small enough to work out by hand: each expected value is derived in the
//! comments from the definitions of docs/research.md, ties included.

use hullsweep_research::{Metric, ResearchError, pbo};

/// Rows of `bars x combos` values, flattened row-major.
fn matrix(rows: &[&[f64]]) -> (Vec<f64>, usize, usize) {
    let combos = rows[0].len();
    (rows.concat(), rows.len(), combos)
}

/// The definition's logit of a rank among `combos`, as written: ln(omega / (1 - omega)).
fn logit(rank: f64, combos: f64) -> f64 {
    let omega = rank / (combos + 1.0);
    (omega / (1.0 - omega)).ln()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// S = 2, T = 4, N = 2: folds {0, 1} and {2, 3}; split 0 is IS fold 0, split 1 IS fold 1.
#[test]
fn two_folds_by_hand() {
    let (m, bars, combos) = matrix(&[&[1.0, 0.0], &[1.0, 2.0], &[0.0, 1.0], &[0.0, 1.0]]);

    // mean. Fold 0: combo 0 = 1, combo 1 = 1. Fold 1: 0 and 1.
    // Split 0: IS [1, 1] ties, n* = 0; OOS [0, 1], oos* = 0: rank 1 + 0 + 0 = 1,
    //   omega = 1/3, logit ln(1/2).
    // Split 1: IS [0, 1], n* = 1; OOS [1, 1], oos* = 1: nothing below, combo 0 ties before it:
    //   rank 2, omega = 2/3, logit ln 2.
    let r = pbo(&m, bars, combos, 2, Metric::Mean, 1).unwrap();
    let picks: Vec<(usize, usize)> = r.splits.iter().map(|s| (s.selected, s.rank)).collect();
    assert_eq!(picks, [(0, 1), (1, 2)]);
    assert_eq!(r.logits(), [logit(1.0, 2.0), logit(2.0, 2.0)]);
    assert!(close(r.logits()[0], 0.5f64.ln()) && close(r.logits()[1], 2f64.ln()));
    assert_eq!(r.pbo, 0.5);
    assert_eq!(r.prob_oos_loss, 0.0);
    // Points (1, 0) and (1, 1): IS does not vary, so slope 0, intercept mean(OOS) = 0.5, R^2 0.
    let d = r.degradation;
    assert_eq!((d.slope, d.intercept, d.r2), (0.0, 0.5, 0.0));

    // sharpe. Fold 0: combo 0 [1, 1] has std 0, so 0; combo 1 [0, 2] mean 1, std 1, so 1.
    // Fold 1: [0, 0] and [1, 1], both std 0, so 0 and 0.
    // Split 0: IS [0, 1], n* = 1; OOS [0, 0], oos* = 0, combo 0 ties before: rank 2, ln 2.
    // Split 1: IS [0, 0] ties, n* = 0; OOS [0, 1], oos* = 0: rank 1, ln(1/2).
    let r = pbo(&m, bars, combos, 2, Metric::Sharpe, 1).unwrap();
    let picks: Vec<(usize, usize)> = r.splits.iter().map(|s| (s.selected, s.rank)).collect();
    assert_eq!(picks, [(1, 2), (0, 1)]);
    assert_eq!(r.logits(), [logit(2.0, 2.0), logit(1.0, 2.0)]);
    assert_eq!((r.pbo, r.prob_oos_loss), (0.5, 0.0));
    // Points (1, 0) and (0, 0): OOS does not vary: slope 0, intercept 0, R^2 0.
    let d = r.degradation;
    assert_eq!((d.slope, d.intercept, d.r2), (0.0, 0.0, 0.0));
}

/// S = 4, T = 8, N = 3, metric mean: each fold holds 2 bars of one value, so a fold's mean is
/// that value and a split's IS mean is the average of its two folds' values.
#[test]
fn four_folds_by_hand() {
    // Fold means: combo 0 [4, 0, 0, 0], combo 1 [1, 3, 0, 1], combo 2 [0, 2, 2, -1].
    let folds = [
        [4.0, 1.0, 0.0],
        [0.0, 3.0, 2.0],
        [0.0, 0.0, 2.0],
        [0.0, 1.0, -1.0],
    ];
    let rows: Vec<&[f64]> = folds.iter().flat_map(|f| [&f[..], &f[..]]).collect();
    let (m, bars, combos) = matrix(&rows);
    // Means over fold pairs, in split order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3):
    //   combo 0: 2    2    2    0    0    0
    //   combo 1: 2    0.5  1    1.5  2    0.5
    //   combo 2: 1    1   -0.5  2    0.5  0.5
    // A split's OOS is the pair at the mirrored position (split 5 - i).
    // (0,1): IS [2, 2, 1], tie, n* = 0; OOS [0, 0.5, 0.5]: oos* = 0 is the lowest, rank 1.
    // (0,2): IS [2, 0.5, 1], n* = 0; OOS [0, 2, 0.5]: rank 1.
    // (0,3): IS [2, 1, -0.5], n* = 0; OOS [0, 1.5, 2]: rank 1.
    // (1,2): IS [0, 1.5, 2], n* = 2; OOS [2, 1, -0.5]: rank 1.
    // (1,3): IS [0, 2, 0.5], n* = 1; OOS [2, 0.5, 1]: nothing below 0.5, rank 1.
    // (2,3): IS [0, 0.5, 0.5], tie, n* = 1; OOS [2, 2, 1]: combo 2 below, combo 0 ties
    //   before: rank 3, omega 3/4, logit ln 3.
    let r = pbo(&m, bars, combos, 4, Metric::Mean, 2).unwrap();
    let picks: Vec<(usize, usize)> = r.splits.iter().map(|s| (s.selected, s.rank)).collect();
    assert_eq!(picks, [(0, 1), (0, 1), (0, 1), (2, 1), (1, 1), (1, 3)]);
    let third = logit(1.0, 3.0);
    assert_eq!(
        r.logits(),
        [third, third, third, third, third, logit(3.0, 3.0)]
    );
    assert!(close(third, (1.0f64 / 3.0).ln()) && close(logit(3.0, 3.0), 3f64.ln()));
    assert_eq!(r.pbo, 5.0 / 6.0);
    // OOS of n*: 0, 0, 0, -0.5, 0.5, 2: one loss in six splits.
    let oos: Vec<f64> = r.splits.iter().map(|s| s.oos_perf).collect();
    assert_eq!(oos, [0.0, 0.0, 0.0, -0.5, 0.5, 2.0]);
    assert_eq!(r.prob_oos_loss, 1.0 / 6.0);
    // IS of n*: 2, 2, 2, 2, 2, 0.5; mean 1.75, OOS mean 1/3. dx = 0.25 (x5), -1.25;
    // dy = -1/3 (x3), -5/6, 1/6, 5/3. Sxx = 5/16 + 25/16 = 1.875;
    // Sxy = 0.25 * (-1 - 5/6 + 1/6) - 1.25 * 5/3 = -5/12 - 25/12 = -2.5; slope = -4/3;
    // intercept = 1/3 + 4/3 * 1.75 = 8/3; Syy = (12 + 25 + 1 + 100) / 36 = 23/6;
    // R^2 = 6.25 / (1.875 * 23/6) = 20/23.
    let d = r.degradation;
    assert!(close(d.slope, -4.0 / 3.0), "{d:?}");
    assert!(close(d.intercept, 8.0 / 3.0), "{d:?}");
    assert!(close(d.r2, 20.0 / 23.0), "{d:?}");
}

#[test]
fn bad_input_is_refused_by_name() {
    let m = vec![0.0; 20];
    let e = |r: Result<_, ResearchError>| r.unwrap_err().to_string();
    assert!(e(pbo(&m, 10, 2, 3, Metric::Mean, 1)).contains("got 3"));
    assert!(e(pbo(&m, 10, 2, 0, Metric::Mean, 1)).contains("got 0"));
    let msg = e(pbo(&m, 10, 2, 6, Metric::Mean, 1));
    assert!(
        msg.contains("6 folds need at least 2 bars each, so at least 12 bars"),
        "{msg}"
    );
    assert!(msg.contains("use at most 4 folds"), "{msg}");
    assert!(e(pbo(&m, 20, 1, 2, Metric::Mean, 1)).contains("got 1"));
    assert!(e(pbo(&m, 10, 3, 2, Metric::Mean, 1)).contains("20 values are not a 10 x 3 matrix"));
    assert!(e(pbo(&m, 10, 2, 2, Metric::Mean, 0)).contains("threads must be at least 1"));
    let mut bad = m.clone();
    bad[13] = f64::NEG_INFINITY;
    let msg = e(pbo(&bad, 10, 2, 2, Metric::Mean, 1));
    assert_eq!(msg, "row 6, column 1 holds -inf: returns must be finite");
}
