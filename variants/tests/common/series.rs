//! Random series for property tests: noisy stretches, flat runs, repeated tick-grid prices and
//! NaN runs, and random combos over them.

use hullsweep_kernel::Combo;
use proptest::prelude::*;

#[derive(Clone, Debug)]
pub enum Piece {
    /// A random walk, multiplicative steps in [-2%, +2%].
    Noise(Vec<f64>),
    /// The same price repeated.
    Flat(f64, usize),
    /// Missing bars.
    Nan(usize),
}

pub fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => prop::collection::vec(-0.02f64..0.02, 1..40).prop_map(Piece::Noise),
        2 => (prop::sample::select(vec![1.1, 0.3, 1.0, 100.0]), 1usize..30)
            .prop_map(|(p, n)| Piece::Flat(p, n)),
        1 => (1usize..6).prop_map(Piece::Nan),
    ]
}

/// A positive series (or NaN), optionally rounded to a 0.01 tick grid so prices repeat.
pub fn series() -> impl Strategy<Value = Vec<f64>> {
    (prop::collection::vec(piece(), 1..8), any::<bool>()).prop_map(|(pieces, tick)| {
        let mut out = Vec::new();
        let mut price: f64 = 1.0;
        for piece in pieces {
            match piece {
                Piece::Noise(steps) => {
                    for s in steps {
                        price *= 1.0 + s;
                        out.push(price);
                    }
                }
                Piece::Flat(p, n) => {
                    price = p;
                    out.extend(std::iter::repeat_n(p, n));
                }
                Piece::Nan(n) => out.extend(std::iter::repeat_n(f64::NAN, n)),
            }
        }
        if tick {
            for v in &mut out {
                // Keep prices > 0 on the grid: the smallest tick is 0.01.
                *v = ((*v * 100.0).round() / 100.0).max(0.01);
            }
        }
        out
    })
}

pub fn case() -> impl Strategy<Value = (Vec<f64>, Vec<Combo>, f64)> {
    series().prop_flat_map(|close| {
        let max_w = close.len() as i64 + 3;
        let combo = prop::array::uniform6(1..=max_w);
        (
            Just(close),
            prop::collection::vec(combo, 1..5),
            prop::sample::select(vec![0.0, 0.09, -0.01]),
        )
    })
}
