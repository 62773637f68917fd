//! The fold sweep fed in pieces is the fold sweep of the whole series, bit for bit, for every
//! variant: fold statistics, walk-forward segment sums, per-fold PnL and trades, metrics and the
//! extra ratios, and the returns handed to the sink; bad lengths are refused by bar.

use hullsweep_kernel::{Combo, ValidClose};
use hullsweep_research::WalkSpec;
use hullsweep_validate::{FoldSpec, FoldSweep, FoldSweeper, PIECE_BARS, fold_sweep};
use hullsweep_variants::{Threads, Variant};
use proptest::prelude::*;
use std::sync::Mutex;

#[allow(dead_code)]
#[path = "../../variants/tests/common/series.rs"]
mod series;

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// Everything a fold sweep gives, as bits, to compare two of them.
fn fingerprint(s: &FoldSweep) -> Vec<u64> {
    let mut out = Vec::new();
    for r in s.rows() {
        out.extend([r.pnl, r.mean, r.std, r.sharpe].map(f64::to_bits));
        out.push(r.trades);
    }
    for c in s.combos() {
        out.extend(bits(&[c.sharpe, c.metrics.pnl, c.metrics.max_drawdown]));
        out.extend(bits(&[c.metrics.best_trade, c.metrics.worst_trade]));
        out.push(c.metrics.bars_in_market as u64);
        out.push(c.metrics.wins as u64);
        out.extend(c.win_rate.map(f64::to_bits));
        out.extend(c.profit_factor.map(f64::to_bits));
    }
    if let Ok(stats) = s.fold_stats() {
        out.extend(bits(stats.shifts()));
        for f in 0..stats.folds() {
            out.extend(bits(stats.sums(f).0));
            out.extend(bits(stats.sums(f).1));
        }
    }
    if let Some(Ok(w)) = s.walk_stats() {
        for f in 0..w.folds() {
            out.extend(bits(w.sums(f).0));
            out.extend(bits(w.sums(f).1));
        }
    }
    out
}

type Seen = Mutex<Vec<(usize, usize, Vec<f64>)>>;

fn pieces(
    v: Variant,
    close: &[f64],
    params: &[Combo],
    fee: f64,
    spec: FoldSpec<'_>,
    cuts: &[usize],
    seen: &Seen,
) -> FoldSweep {
    let sink = |k: usize, bar: usize, r: &[f64]| seen.lock().unwrap().push((k, bar, r.to_vec()));
    let mut s = FoldSweeper::new(v, params, fee, Threads::Fixed(2), close.len(), spec).unwrap();
    let mut at = 0;
    for &end in cuts.iter().chain([&close.len()]) {
        s.push(&close[at..end.max(at)], Some(&sink)).unwrap();
        at = end.max(at);
    }
    s.finish().unwrap()
}

/// Each combo's returns from the sink, in bar order.
fn columns(seen: Seen, combos: usize, bars: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![f64::NAN; bars]; combos];
    for (k, bar, r) in seen.into_inner().unwrap() {
        out[k][bar..bar + r.len()].copy_from_slice(&r);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn pieces_are_the_whole(
        (close, params, fee) in series::case(),
        cuts in prop::collection::vec(0.0f64..1.0, 0..4),
        anchored in any::<bool>(),
    ) {
        prop_assume!(close.len() >= 8 && params.len() >= 2);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| (c * close.len() as f64) as usize).collect();
        cuts.sort_unstable();
        let walk = WalkSpec { train: 2 + close.len() / 4, test: 1 + close.len() / 8, anchored };
        let spec = FoldSpec { folds: Some(4), walk: Some(&walk) };
        for &v in Variant::ALL {
            let whole_seen = Mutex::new(Vec::new());
            let whole = pieces(v, &close, &params, fee, spec, &[], &whole_seen);
            let cut_seen = Mutex::new(Vec::new());
            let cut = pieces(v, &close, &params, fee, spec, &cuts, &cut_seen);
            prop_assert_eq!(fingerprint(&whole), fingerprint(&cut), "{} cuts {:?}", v.name(), &cuts);
            let (a, b) = (columns(whole_seen, params.len(), close.len()), columns(cut_seen, params.len(), close.len()));
            for (k, (a, b)) in a.iter().zip(&b).enumerate() {
                let want = hullsweep_kernel::run_combo_returns(&close, &params[k], fee);
                prop_assert_eq!(bits(a), bits(&want), "{} combo {} whole", v.name(), k);
                prop_assert_eq!(bits(b), bits(&want), "{} combo {} pieces", v.name(), k);
            }
            // And the metrics are the metrics sweep's.
            let m = v.sweep_metrics(&close, &params, fee, Threads::Fixed(1)).unwrap();
            for (c, m) in cut.combos().iter().zip(&m) {
                prop_assert!(c.metrics.same_bits(m), "{} metrics", v.name());
            }
        }
    }
}

#[test]
fn lengths_other_than_declared_are_refused_by_bar() {
    let close = hullsweep_kernel::gbm(100, 1, 0.01).unwrap();
    let params = hullsweep_kernel::default_params()[..3].to_vec();
    let spec = FoldSpec {
        folds: Some(4),
        walk: None,
    };
    let new = || {
        FoldSweeper::new(
            Variant::fastest(),
            &params,
            0.09,
            Threads::Fixed(1),
            100,
            spec,
        )
        .unwrap()
    };
    let mut s = new();
    s.push(&close[..60], None).unwrap();
    let e = s.push(&close, None).unwrap_err().to_string();
    assert!(
        e.contains("rows 60..160") && e.contains("declared 100 bars"),
        "{e}"
    );
    assert_eq!(s.bars_pushed(), 60, "a refused push changes nothing");
    let e = s.finish().unwrap_err().to_string();
    assert!(
        e.contains("row 60 was never pushed (100 bars expected)"),
        "{e}"
    );
    let mut s = new();
    let mut bad = close.clone();
    bad[70] = -1.0;
    s.push(&bad[..50], None).unwrap();
    let e = s.push(&bad[50..], None).unwrap_err().to_string();
    assert!(e.contains("70"), "{e}");
    // The whole series at once is fold_sweep.
    let whole = fold_sweep(
        Variant::fastest(),
        ValidClose::new(&close).unwrap(),
        &params,
        0.09,
        Threads::Fixed(1),
        spec,
        None,
    )
    .unwrap();
    let mut s = new();
    s.push(&close, None).unwrap();
    assert_eq!(fingerprint(&s.finish().unwrap()), fingerprint(&whole));
}

/// A series in memory longer than a piece is swept a piece at a time, each in place after its
/// lookback: the same bits, returns included, as one push of it all, whether the sweeper starts
/// fresh or after a push (the lookback then partly in its tail), and with a window longer than
/// the first piece's lookback.
#[test]
fn a_long_series_in_memory_in_pieces_is_one_push_of_it() {
    let bars = PIECE_BARS * 2 + 1_000;
    let close = hullsweep_kernel::gbm(bars, 7, 0.002).unwrap();
    let mut params = hullsweep_kernel::default_params()[..4].to_vec();
    // Windows 3,000 bars long: the lookback reaches past the first push below.
    params.push(hullsweep_kernel::derive_windows(3_000));
    let walk = WalkSpec {
        train: bars / 3,
        test: bars / 5,
        anchored: false,
    };
    let spec = FoldSpec {
        folds: Some(6),
        walk: Some(&walk),
    };
    let v = Variant::fastest();
    let run = |head: usize, in_pieces: bool| {
        let seen = Mutex::new(Vec::new());
        let sink =
            |k: usize, bar: usize, r: &[f64]| seen.lock().unwrap().push((k, bar, r.to_vec()));
        let mut s = FoldSweeper::new(v, &params, 0.09, Threads::Fixed(2), bars, spec).unwrap();
        s.push(&close[..head], Some(&sink)).unwrap();
        if in_pieces {
            s.push_in_pieces(&close[head..], Some(&sink)).unwrap();
        } else {
            s.push(&close[head..], Some(&sink)).unwrap();
        }
        let swept = s.finish().unwrap();
        (fingerprint(&swept), columns(seen, params.len(), bars))
    };
    let whole = run(0, false);
    for head in [0, 1_000] {
        let got = run(head, true);
        assert_eq!(got.0, whole.0, "head {head}");
        for (k, (a, b)) in got.1.iter().zip(&whole.1).enumerate() {
            assert_eq!(bits(a), bits(b), "head {head} combo {k}");
        }
    }
    let via = fold_sweep(
        v,
        ValidClose::new(&close).unwrap(),
        &params,
        0.09,
        Threads::Fixed(2),
        spec,
        None,
    )
    .unwrap();
    assert_eq!(fingerprint(&via), whole.0, "fold_sweep pieces its series");
}
