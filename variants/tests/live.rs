//! `Live` against the reference, bit for bit: every event (`Event::same`), every trade
//! (`Trade::same`), each open position and the final `(pnl, trades)`, bar by bar and in chunks.

use hullsweep_kernel::{Combo, Event, KernelError, backtest_events, hma, hma3, window};
use hullsweep_variants::{Live, Position, Threads, Variant};

/// The reference's events of every combo, in the order `Live` reports them: bar by bar,
/// combos ascending within a bar, a close before its open; and each combo's open position.
fn reference_events(
    close: &[f64],
    params: &[Combo],
    fee: f64,
) -> (Vec<Event>, Vec<Option<Position>>) {
    let mut all = Vec::new();
    let mut open = Vec::new();
    for (k, c) in params.iter().enumerate() {
        let [n, h, s, m, h3, t] = c.map(window);
        let (a, b) = (hma(close, n, h, s), hma3(close, m, h3, t));
        let mut last = None;
        backtest_events(close, &a, &b, fee, k, |e| {
            if let Event::Open {
                bar, side, price, ..
            } = e
            {
                last = Some(Position {
                    side,
                    entry_bar: bar,
                    entry_price: price,
                });
            }
            all.push(e);
        });
        open.push(last);
    }
    // Stable: each combo's events stay in their order (a close before its open).
    all.sort_by_key(|e| (e.bar(), e.combo()));
    (all, open)
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Pushes `close` in chunks of the given sizes (cycled) and checks everything.
fn check(name: &str, close: &[f64], params: &[Combo], fee: f64, chunks: &[usize]) {
    let (want, open) = reference_events(close, params, fee);
    assert!(
        !want.is_empty(),
        "{name}: the reference trades, so the check can fail"
    );
    let mut live = Live::new(params, fee).unwrap();
    let mut got = Vec::new();
    let mut at = 0;
    let mut sizes = chunks.iter().cycle();
    while at < close.len() {
        let n = (*sizes.next().unwrap()).max(1).min(close.len() - at);
        if n == 1 {
            live.push(close[at], &mut got).unwrap();
        } else {
            live.push_many(&close[at..at + n], &mut got).unwrap();
        }
        at += n;
    }
    assert_eq!(live.bars(), close.len() as u64);
    assert_eq!(got.len(), want.len(), "{name}: event count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g.same(w), "{name}: event {i}: got {g:?}, want {w:?}");
    }
    let batch = Variant::Reference
        .sweep(close, params, fee, Threads::Fixed(1))
        .unwrap();
    let mine = live.result();
    for (k, open) in open.iter().enumerate() {
        assert!(
            same_bits(mine.pnl[k], batch.pnl[k]),
            "{name}: combo {k} pnl"
        );
        assert_eq!(mine.trades[k], batch.trades[k], "{name}: combo {k} trades");
        assert_eq!(live.position(k), *open, "{name}: combo {k} position");
    }
}

#[test]
fn small_series_bar_by_bar_and_in_chunks() {
    let mut close = hullsweep_kernel::gbm(3_000, 5, 0.002).unwrap();
    for i in [100, 101, 500, 1_700] {
        close[i] = f64::NAN;
    }
    close[2_000..2_120].fill(f64::NAN);
    let params: Vec<Combo> = vec![
        [10, 5, 3, 10, 5, 3],
        [1, 1, 1, 1, 1, 1],
        [2, 1, 1, 3, 1, 1],
        [40, 20, 6, 25, 12, 8],
        [6, 3, 2, 60, 30, 20],
        [5000, 2, 2, 2, 2, 2],
    ];
    for chunks in [&[1][..], &[7, 1, 300, 2]] {
        check("small", &close, &params, 0.09, chunks);
    }
}

#[test]
fn a_bad_price_changes_nothing() {
    let params = [[10, 5, 3, 10, 5, 3], [4, 2, 2, 6, 3, 2]];
    let close = hullsweep_kernel::gbm(200, 1, 0.01).unwrap();
    let mut live = Live::new(&params, 0.09).unwrap();
    let mut events = Vec::new();
    live.push_many(&close[..150], &mut events).unwrap();
    let before = format!("{live:?}");
    let n = events.len();
    for bad in [0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
        let err = live.push(bad, &mut events).unwrap_err();
        assert_eq!(
            err,
            KernelError::BadPrice {
                index: 150,
                value: bad
            }
        );
        let err = live
            .push_many(&[101.0, f64::NAN, bad], &mut events)
            .unwrap_err();
        assert_eq!(
            err,
            KernelError::BadPrice {
                index: 152,
                value: bad
            }
        );
        assert_eq!(format!("{live:?}"), before);
        assert_eq!(events.len(), n);
    }
    live.push_many(&close[150..], &mut events).unwrap();
    let (want, _) = reference_events(&close, &params, 0.09);
    assert_eq!(events.len(), want.len());
    assert!(events.iter().zip(&want).all(|(a, b)| a.same(b)));
}

#[test]
fn bad_params_and_fee_are_named() {
    assert!(matches!(
        Live::new(&[[3, 2, 0, 3, 2, 1]], 0.09),
        Err(KernelError::BadWindow {
            combo: 0,
            field: "hma_sqrt",
            value: 0
        })
    ));
    assert!(matches!(
        Live::new(&[], f64::NAN),
        Err(KernelError::BadFee(_))
    ));
    let close = [1.0, 2.0];
    assert_eq!(
        hullsweep_variants::trades(&close, &[[2, 1, 1, 2, 1, 1]], 0.09, &[1]),
        Err(KernelError::BadCombo {
            index: 1,
            n_combos: 1
        })
    );
    assert_eq!(
        hullsweep_variants::trades(&[], &[[2, 1, 1, 2, 1, 1]], 0.09, &[0]),
        Err(KernelError::EmptySeries)
    );
}

#[test]
fn batch_trades_equal_the_kernel() {
    let close = hullsweep_kernel::gbm(5_000, 9, 0.002).unwrap();
    let params = hullsweep_kernel::default_params();
    let combos = [3, 0, 79, 3, 40];
    let want = hullsweep_kernel::trades(
        hullsweep_kernel::ValidClose::new(&close).unwrap(),
        &params,
        0.09,
        &combos,
    )
    .unwrap();
    let got = hullsweep_variants::trades(&close, &params, 0.09, &combos).unwrap();
    assert_eq!(got.len(), want.len());
    assert!(!got.is_empty());
    for (g, w) in got.iter().zip(&want) {
        assert!(g.same(w), "{g:?} vs {w:?}");
    }
}
