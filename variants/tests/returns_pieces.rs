//! A run in pieces is the run whole: every variant's `sweep_runs_from`, fed a series in pieces
//! with the lookback carried as a `Sweeper` carries it and each combo resumed from the state
//! `for_each_block` returned, gives the whole run's bar returns, trades and metrics bit for bit.

mod common;

use common::series::case;
use hullsweep_kernel::{Combo, Metrics, ValidClose};
use hullsweep_variants::{ReturnScratch, RunState, Threads, Variant, effective_window};
use proptest::prelude::*;

/// One combo's returns, `(exit_bar, pnl)` trades (bars of the whole series) and metrics.
type Run = (Vec<f64>, Vec<(usize, f64)>, Metrics);

/// Per combo its [`Run`], from one run over the series cut at `cuts`.
fn in_pieces(
    v: Variant,
    close: &[f64],
    params: &[Combo],
    fee: f64,
    cuts: &[usize],
    block: usize,
) -> Vec<Run> {
    let lookback = params.iter().map(effective_window).max().unwrap() - 1;
    let mut states = vec![RunState::new(); params.len()];
    let mut out = vec![(Vec::new(), Vec::new(), None::<usize>); params.len()];
    let mut at = 0;
    for &end in cuts.iter().chain([&close.len()]) {
        if end <= at {
            continue;
        }
        let keep = lookback.min(at);
        let buf = &close[at - keep..end];
        let runs = v
            .sweep_runs_from(
                ValidClose::new(buf).unwrap(),
                params,
                fee,
                Threads::Fixed(2),
                keep,
                &states,
                |run| {
                    let mut scratch = ReturnScratch::new(block);
                    let mut returns = Vec::new();
                    let next =
                        run.for_each_block(&mut scratch, |_, r| returns.extend_from_slice(r));
                    let base = at - keep;
                    let trades: Vec<(usize, f64)> =
                        run.trades().map(|(b, p)| (base + b, p)).collect();
                    let first = run.changes().first().map(|c| base + c.bar);
                    (next, returns, trades, first)
                },
            )
            .unwrap();
        for (k, (next, returns, trades, first)) in runs.into_iter().enumerate() {
            states[k] = next;
            out[k].0.extend(returns);
            out[k].1.extend(trades);
            out[k].2 = out[k].2.or(first);
        }
        at = end;
    }
    out.into_iter()
        .zip(&states)
        .map(|((r, t, first), s)| (r, t, s.metrics(close.len(), first)))
        .collect()
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(80))]

    #[test]
    fn pieces_give_the_whole_runs_bits(
        (close, params, fee) in case(),
        cuts in prop::collection::vec(0.0f64..1.0, 0..4),
        block in prop::sample::select(vec![1usize, 7, 4096]),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| (c * close.len() as f64) as usize).collect();
        cuts.sort_unstable();
        for &v in Variant::ALL {
            let whole = in_pieces(v, &close, &params, fee, &[], 4096);
            let pieces = in_pieces(v, &close, &params, fee, &cuts, block);
            for (k, (a, b)) in whole.iter().zip(&pieces).enumerate() {
                prop_assert_eq!(bits(&a.0), bits(&b.0), "{} combo {} returns, cuts {:?}", v.name(), k, &cuts);
                prop_assert_eq!(a.0.len(), close.len());
                prop_assert_eq!(&a.1, &b.1, "{} combo {} trades", v.name(), k);
                prop_assert!(a.2.same_bits(&b.2), "{} combo {} metrics", v.name(), k);
                // And the whole run's metrics are the metrics sweep's.
                let m = v.sweep_metrics(&close, &params, fee, Threads::Fixed(1)).unwrap();
                prop_assert!(a.2.same_bits(&m[k]), "{} combo {} metrics vs sweep_metrics", v.name(), k);
            }
        }
    }
}
