//! The two-pass statistics of one combo's bar returns (the deflated Sharpe ratio's skewness and
//! kurtosis, the walk-forward summary) fed in pieces over repeated passes, so a series too long
//! to hold gives them bit for bit as its whole slice does.
//!
//! Each accumulator is fed every value, in order, in any pieces, then told [`end_pass`]; after
//! [`PASSES`] passes it gives its result. The slice functions ([`crate::deflated_sharpe`],
//! [`crate::oos_summary`]) are these accumulators fed the whole slice, so the two cannot differ.
//!
//! [`end_pass`]: ShapePasses::end_pass

use crate::error::ResearchError;

/// The out-of-sample record of a walk-forward: the selected combos' test returns, concatenated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OosSummary {
    /// Bars, the returns given.
    pub bars: usize,
    /// Their sum, added in order from 0.0.
    pub pnl: f64,
    /// Their per-bar Sharpe ratio: population mean / std, two-pass; 0 where std is 0.
    pub sharpe: f64,
}

/// Passes over the values that [`ShapePasses`] and [`OosPasses`] need: the largest magnitude,
/// the mean, then the centred powers.
pub const PASSES: usize = 3;

/// T, skewness and raw kurtosis of a combo's bar returns: what the deflated Sharpe ratio needs
/// of them besides the Sharpe ratio.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// T, the returns given.
    pub bars: usize,
    /// Population skewness m3 / m2^1.5 (0 for a flat series).
    pub skew: f64,
    /// Raw kurtosis m4 / m2^2 (0 for a flat series).
    pub kurt: f64,
}

/// Population skewness and raw kurtosis of values fed over [`PASSES`] passes, two-pass in
/// exact arithmetic's sense (the mean, then the means of the centred powers), after scaling by
/// the power of two that brings the largest magnitude into [1, 2): exact, invariant bit for bit,
/// and it keeps m4 from overflowing or underflowing.
#[derive(Clone, Debug)]
pub struct ShapePasses {
    pass: usize,
    /// Values seen in the current pass.
    seen: usize,
    /// Values in the first pass.
    bars: usize,
    largest: f64,
    scale: f64,
    sum: f64,
    mean: f64,
    m: [f64; 3],
    /// The first value that is NaN or infinite, with its index.
    bad: Option<(usize, f64)>,
}

impl Default for ShapePasses {
    fn default() -> Self {
        ShapePasses::new()
    }
}

impl ShapePasses {
    /// Before the first value of the first pass.
    pub fn new() -> ShapePasses {
        ShapePasses {
            pass: 0,
            seen: 0,
            bars: 0,
            largest: 0.0,
            scale: 1.0,
            // `Iterator::sum` of f64 starts from -0.0; so does this.
            sum: -0.0,
            mean: 0.0,
            m: [0.0; 3],
            bad: None,
        }
    }

    /// The next values of the current pass, in order.
    pub fn push(&mut self, xs: &[f64]) {
        match self.pass {
            0 => {
                if self.bad.is_none()
                    && let Some(i) = xs.iter().position(|v| !v.is_finite())
                {
                    self.bad = Some((self.seen + i, xs[i]));
                }
                self.largest = xs.iter().fold(self.largest, |m, v| m.max(v.abs()));
            }
            1 if self.live() => {
                let scale = self.scale;
                self.sum = xs.iter().fold(self.sum, |s, v| s + v * scale);
            }
            2 if self.live() => {
                let (scale, mean) = (self.scale, self.mean);
                let [mut m2, mut m3, mut m4] = self.m;
                for v in xs {
                    let d = v * scale - mean;
                    let d2 = d * d;
                    m2 += d2;
                    m3 += d2 * d;
                    m4 += d2 * d2;
                }
                self.m = [m2, m3, m4];
            }
            _ => {}
        }
        self.seen += xs.len();
    }

    /// Whether the values so far can give moments (all finite, not all zero).
    fn live(&self) -> bool {
        self.bad.is_none() && self.largest != 0.0
    }

    /// The end of a pass: every value has been pushed once more.
    pub fn end_pass(&mut self) {
        debug_assert!(
            self.pass == 0 || self.seen == self.bars,
            "a pass missed values"
        );
        match self.pass {
            0 => {
                self.bars = self.seen;
                if self.live() {
                    // The exponent of the largest magnitude (subnormals count as 2^-1022).
                    let exponent = ((self.largest.to_bits() >> 52) as i32).max(1) - 1023;
                    self.scale = pow2(-exponent);
                }
            }
            1 => self.mean = self.sum / self.bars as f64,
            _ => {}
        }
        self.pass += 1;
        self.seen = 0;
    }

    /// T, skewness and kurtosis, after [`PASSES`] passes. Fewer than 2 values, or one that is
    /// not finite, is refused by its index.
    pub fn finish(self) -> Result<Shape, ResearchError> {
        debug_assert_eq!(self.pass, PASSES, "finish after every pass");
        if self.bars < 2 {
            return Err(ResearchError::TooFewReturns { bars: self.bars });
        }
        if let Some((index, value)) = self.bad {
            return Err(ResearchError::NotFinite {
                what: "bar return",
                index,
                value,
            });
        }
        let n = self.bars as f64;
        let [m2, m3, m4] = self.m.map(|m| m / n);
        let (skew, kurt) = if self.largest == 0.0 || m2 == 0.0 {
            (0.0, 0.0)
        } else {
            (m3 / (m2 * m2.sqrt()), m4 / (m2 * m2))
        };
        Ok(Shape {
            bars: self.bars,
            skew,
            kurt,
        })
    }
}

/// 2^k for k in -1074..=1023, exactly.
pub(crate) fn pow2(k: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&k));
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// The walk-forward's out-of-sample summary ([`OosSummary`]) of values fed over [`PASSES`]
/// passes: their sum in order from 0.0, then the population variance about its mean. The third
/// pass is not needed and ignored, so it can ride along with a [`ShapePasses`].
#[derive(Clone, Debug)]
pub struct OosPasses {
    pass: usize,
    bars: usize,
    pnl: f64,
    mean: f64,
    squares: f64,
}

impl Default for OosPasses {
    fn default() -> Self {
        OosPasses::new()
    }
}

impl OosPasses {
    /// Before the first value of the first pass.
    pub fn new() -> OosPasses {
        OosPasses {
            pass: 0,
            bars: 0,
            pnl: 0.0,
            mean: 0.0,
            squares: -0.0,
        }
    }

    /// The next values of the current pass, in order.
    pub fn push(&mut self, xs: &[f64]) {
        match self.pass {
            0 => {
                self.bars += xs.len();
                self.pnl = xs.iter().fold(self.pnl, |acc, x| acc + x);
            }
            1 => {
                let mean = self.mean;
                self.squares = xs
                    .iter()
                    .fold(self.squares, |s, x| s + (x - mean) * (x - mean));
            }
            _ => {}
        }
    }

    /// The end of a pass.
    pub fn end_pass(&mut self) {
        if self.pass == 0 && self.bars > 0 {
            self.mean = self.pnl / self.bars as f64;
        }
        self.pass += 1;
    }

    /// The summary, after at least two passes. No values give zeros.
    pub fn finish(self) -> OosSummary {
        debug_assert!(self.pass >= 2, "finish after two passes");
        if self.bars == 0 {
            return OosSummary {
                bars: 0,
                pnl: self.pnl,
                sharpe: 0.0,
            };
        }
        let std = (self.squares / self.bars as f64).sqrt();
        OosSummary {
            bars: self.bars,
            pnl: self.pnl,
            sharpe: if std == 0.0 { 0.0 } else { self.mean / std },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_pieces(xs: &[f64], cut: usize) -> (Result<Shape, ResearchError>, OosSummary) {
        let (mut shape, mut oos) = (ShapePasses::new(), OosPasses::new());
        for _ in 0..PASSES {
            for piece in xs.chunks(cut.max(1)) {
                shape.push(piece);
                oos.push(piece);
            }
            shape.end_pass();
            oos.end_pass();
        }
        (shape.finish(), oos.finish())
    }

    #[test]
    fn pieces_change_no_bit() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| {
                ((i * 7919 % 1013) as f64 - 500.0) * 1e-3 + if i % 97 == 0 { 3.0 } else { 0.0 }
            })
            .collect();
        let (whole, oos) = in_pieces(&xs, xs.len());
        let whole = whole.unwrap();
        for cut in [1, 3, 64, 999] {
            let (s, o) = in_pieces(&xs, cut);
            let s = s.unwrap();
            assert_eq!(
                (s.skew.to_bits(), s.kurt.to_bits(), s.bars),
                (whole.skew.to_bits(), whole.kurt.to_bits(), whole.bars),
                "cut {cut}"
            );
            assert_eq!(o.pnl.to_bits(), oos.pnl.to_bits(), "cut {cut}");
            assert_eq!(o.sharpe.to_bits(), oos.sharpe.to_bits(), "cut {cut}");
        }
    }

    #[test]
    fn the_first_bad_value_is_named_across_pieces() {
        let xs = [1.0, 2.0, 3.0, f64::INFINITY, f64::NAN];
        match in_pieces(&xs, 2).0 {
            Err(ResearchError::NotFinite { index, value, .. }) => {
                assert_eq!((index, value), (3, f64::INFINITY));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            in_pieces(&[1.0], 1).0,
            Err(ResearchError::TooFewReturns { bars: 1 })
        ));
    }

    #[test]
    fn flat_and_zero_series_have_no_shape() {
        for xs in [[0.0; 4], [0.25; 4]] {
            let s = in_pieces(&xs, 3).0.unwrap();
            assert_eq!((s.skew, s.kurt), (0.0, 0.0));
        }
        let o = in_pieces(&[], 1).1;
        assert_eq!((o.bars, o.pnl, o.sharpe), (0, 0.0, 0.0));
    }
}
