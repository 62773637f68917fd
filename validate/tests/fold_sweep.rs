//! The fold sweep against the definitions, for every variant: per-fold PnL and trades equal the
//! kernel's trade log summed per fold in exit order, fold statistics equal the builder's over
//! the kernel's returns matrix (bit for bit), CSCV equals `pbo` on that matrix, the extra
//! metrics follow from the trades; and no look-ahead in any fold that ends before a change.

use hullsweep_kernel::{Combo, Trade, ValidClose, run_combo_returns, trades};
use hullsweep_research::{FoldStats, FoldStatsBuilder, Metric, cscv, pbo};
use hullsweep_validate::{FoldSpec, FoldSweep, Plan, fold_sweep, validate};
use hullsweep_variants::{Threads, Variant};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../../variants/tests/common/series.rs"]
mod series;

fn gbm(bars: usize, seed: u64) -> Vec<f64> {
    hullsweep_kernel::gbm(bars, seed, 0.01).unwrap()
}

fn grid(lo: i64, hi: i64, k: usize) -> Vec<Combo> {
    hullsweep_kernel::grid(hullsweep_kernel::GridSpec { lo, hi, k }).unwrap()
}

fn swept(v: Variant, close: &[f64], params: &[Combo], fee: f64, folds: usize) -> FoldSweep {
    let valid = ValidClose::new(close).unwrap();
    let spec = FoldSpec {
        folds: Some(folds),
        walk: None,
    };
    fold_sweep(v, valid, params, fee, Threads::Fixed(2), spec, None).unwrap()
}

/// The kernel's bar returns of every combo as a row-major bars x combos matrix.
fn matrix(close: &[f64], params: &[Combo], fee: f64) -> Vec<f64> {
    let cols: Vec<Vec<f64>> = params
        .iter()
        .map(|c| run_combo_returns(close, c, fee))
        .collect();
    (0..close.len())
        .flat_map(|t| cols.iter().map(move |c| c[t]))
        .collect()
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

fn assert_same_stats(a: &FoldStats, b: &FoldStats, what: &str) {
    assert_eq!(bits(a.shifts()), bits(b.shifts()), "{what}: shifts");
    for f in 0..a.folds() {
        let (x, y) = (a.sums(f), b.sums(f));
        assert_eq!(bits(x.0), bits(y.0), "{what}: fold {f} sums");
        assert_eq!(bits(x.1), bits(y.1), "{what}: fold {f} squares");
    }
}

/// Every check of the fold sweep against the kernel, for one variant and input.
fn check(v: Variant, close: &[f64], params: &[Combo], fee: f64, folds: usize) {
    let what = format!(
        "{} on {} bars, {} combos",
        v.name(),
        close.len(),
        params.len()
    );
    let s = swept(v, close, params, fee, folds);
    let all: Vec<usize> = (0..params.len()).collect();
    let log: Vec<Trade> = trades(ValidClose::new(close).unwrap(), params, fee, &all).unwrap();
    let metrics = hullsweep_kernel::sweep_metrics(close, params, fee).unwrap();
    for (k, c) in s.combos().iter().enumerate() {
        let mine: Vec<&Trade> = log.iter().filter(|t| t.combo == k).collect();
        assert_eq!(
            c.metrics.pnl.to_bits(),
            metrics[k].pnl.to_bits(),
            "{what}: #{k} pnl"
        );
        for (f, b) in s.bounds().iter().enumerate() {
            let exits = mine.iter().filter(|t| b.contains(&(t.exit_bar as usize)));
            let pnl = exits.clone().fold(0.0, |acc, t| acc + t.pnl);
            assert_eq!(
                c.fold_pnl[f].to_bits(),
                pnl.to_bits(),
                "{what}: #{k} fold {f}"
            );
            assert_eq!(
                c.fold_trades[f],
                exits.count() as u64,
                "{what}: #{k} fold {f}"
            );
        }
        let wins = mine.iter().filter(|t| t.pnl > 0.0).count();
        let profit: f64 = mine.iter().filter(|t| t.pnl > 0.0).map(|t| t.pnl).sum();
        let loss: f64 = mine.iter().filter(|t| t.pnl < 0.0).map(|t| -t.pnl).sum();
        let win_rate = (!mine.is_empty()).then(|| wins as f64 / mine.len() as f64);
        assert_eq!(c.win_rate, win_rate, "{what}: #{k} win rate");
        assert_eq!(
            c.profit_factor,
            (loss > 0.0).then(|| profit / loss),
            "{what}: #{k} profit factor"
        );
    }
    if params.len() >= 2 {
        let m = matrix(close, params, fee);
        let mut b = FoldStatsBuilder::new(close.len(), params.len(), folds).unwrap();
        b.push_rows(0, &m).unwrap();
        let reference = b.finish().unwrap();
        assert_same_stats(&s.fold_stats().unwrap(), &reference, &what);
        let direct = pbo(&m, close.len(), params.len(), folds, Metric::Sharpe, 1).unwrap();
        assert_eq!(
            cscv(&reference, Metric::Sharpe, 2).unwrap(),
            direct,
            "{what}"
        );
    }
}

#[test]
fn every_variant_matches_the_kernel_on_gbm_and_a_gapped_series() {
    let close = gbm(3_000, 7);
    let mut gapped = gbm(2_001, 3);
    gapped[100..140].fill(f64::NAN);
    gapped[1_500] = f64::NAN;
    let params = grid(6, 120, 9);
    for &v in Variant::ALL {
        check(v, &close, &params, 0.09, 16);
        check(v, &gapped, &params, 0.0, 6);
    }
}

#[test]
fn validation_is_cscv_of_the_returns_matrix() {
    let close = gbm(4_000, 11);
    let params = grid(6, 200, 12);
    let valid = ValidClose::new(&close).unwrap();
    let plan = Plan {
        folds: 8,
        metric: Metric::Mean,
        walk: None,
        oos_returns: false,
    };
    let v = validate(
        Variant::fastest(),
        valid,
        &params,
        0.09,
        Threads::Fixed(2),
        plan,
        None,
    )
    .unwrap();
    let m = matrix(&close, &params, 0.09);
    assert_eq!(
        v.cscv,
        pbo(&m, close.len(), params.len(), 8, Metric::Mean, 2).unwrap()
    );
    // The deflated Sharpe ratio is of the combo with the best whole-series Sharpe.
    let sharpes: Vec<f64> = v.sweep.combos().iter().map(|c| c.sharpe).collect();
    let best = sharpes
        .iter()
        .enumerate()
        .fold(0, |b, (k, &s)| if s > sharpes[b] { k } else { b });
    assert_eq!(v.deflated.combo, best);
    assert_eq!(v.deflated.sharpe.to_bits(), sharpes[best].to_bits());
}

#[test]
fn one_combo_gives_the_report_and_refuses_cscv() {
    let close = gbm(500, 1);
    let s = swept(Variant::fastest(), &close, &grid(20, 20, 1), 0.09, 4);
    assert_eq!(s.rows().count(), 4);
    let e = s.fold_stats().unwrap_err().to_string();
    assert!(e.contains("at least 2 columns"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Replacing every bar from `t` on changes no statistic of a fold that ends at or before `t`
    /// (nor its PnL and trades), for every variant.
    #[test]
    fn no_look_ahead_into_earlier_folds(
        (close, params, fee) in series::case(),
        cut in 0.0f64..1.0,
        tail in prop::collection::vec(0.5f64..2.0, 1..200),
    ) {
        prop_assume!(close.len() >= 8 && params.len() >= 2);
        let t = 1 + ((close.len() - 1) as f64 * cut) as usize;
        let mut other = close.clone();
        for (i, x) in other[t..].iter_mut().enumerate() {
            *x = tail[i % tail.len()];
        }
        for &v in Variant::ALL {
            let (a, b) = (swept(v, &close, &params, fee, 4), swept(v, &other, &params, fee, 4));
            let (sa, sb) = (a.fold_stats().unwrap(), b.fold_stats().unwrap());
            prop_assert_eq!(bits(sa.shifts()), bits(sb.shifts()));
            for (f, bound) in a.bounds().iter().enumerate().filter(|(_, b)| b.end <= t) {
                prop_assert_eq!(bits(sa.sums(f).0), bits(sb.sums(f).0), "{} fold {} {:?}", v.name(), f, bound);
                prop_assert_eq!(bits(sa.sums(f).1), bits(sb.sums(f).1));
                for (ca, cb) in a.combos().iter().zip(b.combos()) {
                    prop_assert_eq!(ca.fold_pnl[f].to_bits(), cb.fold_pnl[f].to_bits());
                    prop_assert_eq!(ca.fold_trades[f], cb.fold_trades[f]);
                }
            }
        }
    }
}

/// Returns beyond +-1e100 (absurd prices: a climb from 1e-200 to 1) are refused by the first
/// combo that has one and its first such bar, for every variant and on both of the returns
/// pass's paths (which flag such blocks instead of scanning every block).
#[test]
fn returns_out_of_range_are_refused_by_bar_and_combo() {
    let mut close: Vec<f64> = gbm(400, 3).iter().map(|x| x * 1e-202).collect();
    close.extend(gbm(400, 4));
    let params = grid(6, 40, 6);
    let fee = 0.09;
    let first_bad = params.iter().enumerate().find_map(|(k, c)| {
        let r = run_combo_returns(&close, c, fee);
        r.iter()
            .position(|x| x.is_nan() || x.abs() > 1e100)
            .map(|t| (t, k, r[t]))
    });
    let (row, column, value) = first_bad.expect("the climb gives some combo a return beyond 1e100");
    let want = hullsweep_research::ResearchError::TooLarge {
        row,
        column,
        value,
        limit: 1e100,
    }
    .to_string();
    for &v in Variant::ALL {
        let valid = ValidClose::new(&close).unwrap();
        let spec = FoldSpec {
            folds: Some(4),
            walk: None,
        };
        let got = fold_sweep(v, valid, &params, fee, Threads::Fixed(2), spec, None)
            .map(|_| ())
            .expect_err("refused");
        assert_eq!(got.to_string(), want, "{}", v.name());
    }
}
