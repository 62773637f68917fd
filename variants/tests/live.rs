//! `Live` against the reference, bit for bit: every event (`Event::same`), every trade
//! (`Trade::same`), each open position and the final `(pnl, trades)`, bar by bar and in chunks.

use hullsweep_kernel::{Combo, Event, KernelError, backtest_events, hma, hma3, window};
use hullsweep_variants::{Live, Position, Threads, Variant};

// The gate's own suite, so this test and the gate can never disagree on what the suite is.
#[allow(dead_code)]
#[path = "../../data/src/datasets.rs"]
mod datasets;

/// A small seeded generator for chunk sizes (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n.max(1)) as usize
    }
}

/// Seeded chunk sizes: single bars, short chunks, and chunks longer than the longest lookback.
fn random_chunks(seed: u64, longest: usize) -> Vec<usize> {
    let mut rng = Rng(seed | 1);
    (0..64)
        .map(|_| match rng.below(4) {
            0 => 1,
            1 => 2 + rng.below(30),
            2 => 50 + rng.below(500),
            _ => longest + 1 + rng.below(2 * longest as u64 + 1),
        })
        .collect()
}

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

/// What `Live` must reproduce: the reference's events in order, each combo's open position,
/// and the batch sweep's result.
struct Want {
    events: Vec<Event>,
    open: Vec<Option<Position>>,
    batch: hullsweep_kernel::SweepResult,
}

fn want(close: &[f64], params: &[Combo], fee: f64) -> Want {
    let (events, open) = reference_events(close, params, fee);
    let batch = Variant::Reference
        .sweep(close, params, fee, Threads::Fixed(1))
        .unwrap();
    Want {
        events,
        open,
        batch,
    }
}

/// Pushes `close` in chunks of the given sizes (cycled) and checks every event, every open
/// position and the result against `want`; returns the number of events.
fn check_against(
    name: &str,
    close: &[f64],
    params: &[Combo],
    fee: f64,
    chunks: &[usize],
    want: &Want,
) -> usize {
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
    assert_eq!(got.len(), want.events.len(), "{name}: event count");
    for (i, (g, w)) in got.iter().zip(&want.events).enumerate() {
        assert!(g.same(w), "{name}: event {i}: got {g:?}, want {w:?}");
    }
    let mine = live.result();
    for (k, open) in want.open.iter().enumerate() {
        assert!(
            same_bits(mine.pnl[k], want.batch.pnl[k]),
            "{name}: combo {k} pnl"
        );
        assert_eq!(
            mine.trades[k], want.batch.trades[k],
            "{name}: combo {k} trades"
        );
        assert_eq!(live.position(k), *open, "{name}: combo {k} position");
    }
    let stats = live.stats();
    assert_eq!(stats.bars, close.len() as u64);
    got.len()
}

/// [`check_against`] the reference computed here, demanding that it has events to compare.
fn check(name: &str, close: &[f64], params: &[Combo], fee: f64, chunks: &[usize]) {
    let w = want(close, params, fee);
    assert!(
        !w.events.is_empty(),
        "{name}: the reference trades, so the check can fail"
    );
    check_against(name, close, params, fee, chunks, &w);
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

/// The longest effective lookback of the params (capped: windows past any series stay NaN).
fn longest_lookback(params: &[Combo]) -> usize {
    params
        .iter()
        .map(hullsweep_variants::stream::effective_window)
        .max()
        .unwrap_or(1)
        .min(1 << 20)
}

#[test]
fn every_gate_dataset_bar_by_bar_and_in_random_chunks() {
    let suite = datasets::suite();
    assert!(suite.len() >= 16, "the suite lost datasets");
    for name in [
        "subnormal_prices",
        "min_normal_cross",
        "overflow_prices",
        "extreme_spikes",
        "flat_steps",
        "nan_runs",
    ] {
        assert!(
            suite.iter().any(|d| d.name == name),
            "{name} is in the suite"
        );
    }
    let with_events = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (j, d) in suite.iter().enumerate() {
            let with_events = &with_events;
            s.spawn(move || {
                // The default series is the plain case; its first 20,000 bars keep the
                // reference's cost in a test's budget.
                let close = if d.name == "default" {
                    &d.close[..20_000]
                } else {
                    &d.close[..]
                };
                let longest = longest_lookback(&d.params);
                let w = want(close, &d.params, d.fee);
                check_against(&d.name, close, &d.params, d.fee, &[1], &w);
                for seed in 1..=2 {
                    let chunks = random_chunks(seed * 1_000 + j as u64, longest);
                    let name = format!("{} (chunks seed {seed})", d.name);
                    check_against(&name, close, &d.params, d.fee, &chunks, &w);
                }
                if !w.events.is_empty() {
                    with_events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                // The batch trade log of chosen combos (out of order, one twice) is the kernel's.
                let n = d.params.len();
                let combos = [n - 1, 0, n / 2, 0];
                let kernel_log = hullsweep_kernel::trades(
                    hullsweep_kernel::ValidClose::new(close).unwrap(),
                    &d.params,
                    d.fee,
                    &combos,
                )
                .unwrap();
                let log = hullsweep_variants::trades(close, &d.params, d.fee, &combos).unwrap();
                assert_eq!(log.len(), kernel_log.len(), "{}: trades()", d.name);
                for (a, b) in log.iter().zip(&kernel_log) {
                    assert!(a.same(b), "{}: trades(): {a:?} vs {b:?}", d.name);
                }
                eprintln!(
                    "{}: {} bars x {} combos, {} events, every one identical",
                    d.name,
                    close.len(),
                    d.params.len(),
                    w.events.len()
                );
            });
        }
    });
    // Only the datasets too short for any window to fill may have no event at all.
    assert!(
        with_events.into_inner() >= suite.len() - 3,
        "most datasets trade"
    );
}

/// A random series from `seed`: a random walk at a random magnitude (from the smallest
/// subnormals to near the overflow guard), with NaN runs, flat runs and spikes.
fn random_series(seed: u64, n: usize, scale_exp: i32) -> Vec<f64> {
    let mut rng = Rng(seed | 1);
    let unit = |rng: &mut Rng| (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let scale = 2f64.powi(scale_exp);
    let mut p = 1.0f64;
    let mut close: Vec<f64> = (0..n)
        .map(|_| {
            p *= 1.0 + (unit(&mut rng) - 0.5) * 0.02;
            p * scale
        })
        .collect();
    // Subnormal magnitudes: a walk on a grid of few values, so `d` is tiny and often zero.
    if scale_exp < -1022 {
        for v in &mut close {
            *v = f64::from_bits(1 + rng.below(40) as u64);
        }
    }
    for _ in 0..rng.below(4) {
        let (at, len) = (rng.below(n as u64), 1 + rng.below(60));
        let v = close[at];
        close[at..(at + len).min(n)].fill(v);
    }
    for _ in 0..rng.below(4) {
        let (at, len) = (rng.below(n as u64), 1 + rng.below(30));
        close[at..(at + len).min(n)].fill(f64::NAN);
    }
    for _ in 0..rng.below(3) {
        let at = rng.below(n as u64);
        if !close[at].is_nan() {
            close[at] = (close[at] * 1e6).min(f64::MAX);
        }
    }
    close
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// Random windows (long ones included) on random data, bar by bar and in random chunks.
    #[test]
    fn random_windows_and_data_match_the_reference(
        seed in 0u64..u64::MAX,
        n in 1usize..900,
        scale_exp in proptest::sample::select(vec![-1074, -1060, -1022, -500, 0, 1, 500, 990]),
        windows in proptest::collection::vec(proptest::collection::vec(1i64..48, 6), 1..5),
        long in 0i64..300,
    ) {
        let close = random_series(seed, n, scale_exp);
        let mut params: Vec<Combo> = windows.iter().map(|w| [w[0], w[1], w[2], w[3], w[4], w[5]]).collect();
        params.push([long + 1, (long + 1) / 2 + 1, 3, long / 3 + 1, 2, 1]);
        let fee = if seed % 2 == 0 { 0.09 } else { 0.0 };
        let w = want(&close, &params, fee);
        check_against("proptest bar by bar", &close, &params, fee, &[1], &w);
        let chunks = random_chunks(seed ^ 0x5555, longest_lookback(&params));
        check_against("proptest chunks", &close, &params, fee, &chunks, &w);
    }
}

#[test]
fn live_is_send_and_clone_and_its_memory_follows_the_windows_not_the_stream() {
    fn send_clone<T: Send + Clone>() {}
    send_clone::<Live>();
    let close = hullsweep_kernel::gbm(60_000, 3, 0.001).unwrap();
    let params = hullsweep_kernel::default_params();
    let mut live = Live::new(&params, 0.09).unwrap();
    let mut events = Vec::new();
    live.push_many(&close[..20_000], &mut events).unwrap();
    let early = live.memory_bytes();
    live.push_many(&close[20_000..], &mut events).unwrap();
    assert_eq!(live.memory_bytes(), early, "memory grew with the stream");
    assert!(early < 4 << 20, "{early} bytes for 80 combos");
    assert_eq!(live.nodes(), [136, 80, 80, 80, 80]);
}
