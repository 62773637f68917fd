//! The deflated Sharpe ratio (Bailey and Lopez de Prado): the probability that the best of N
//! combos' Sharpe ratios beats what the best of N trials of no skill would show (docs/research.md).

use crate::cscv::argmax;
use crate::error::ResearchError;
use crate::input::MAX_ABS;
use crate::normal::{normal_cdf, normal_quantile};
#[cfg(test)]
use crate::passes::pow2;
use crate::passes::{PASSES, Shape, ShapePasses};

/// The Euler-Mascheroni constant gamma.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// The first index of the largest value (numpy's `argmax`): the combo a sweep selects. A NaN is
/// never the largest; 0 when every value is NaN or there is none.
pub fn select_best(values: &[f64]) -> usize {
    argmax(values)
}

/// The deflated Sharpe ratio of the best of N combos, and what it is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeflatedSharpe {
    /// The selected combo: the first argmax of the Sharpe ratios.
    pub combo: usize,
    /// Its Sharpe ratio SR (per bar).
    pub sharpe: f64,
    /// SR0, the expected maximum Sharpe ratio of N unskilled trials with the trials' variance.
    pub sr0: f64,
    /// T, the selected combo's bar returns.
    pub bars: usize,
    /// The skewness of its returns (m3 / m2^1.5; 0 for a flat series).
    pub skew: f64,
    /// Their kurtosis, raw (3 for a normal; m4 / m2^2; 0 for a flat series).
    pub kurt: f64,
    /// V, the population variance (ddof 0) of the N Sharpe ratios.
    pub variance: f64,
    /// The deflated Sharpe ratio, a probability in [0, 1].
    pub dsr: f64,
}

/// The deflated Sharpe ratio (Bailey and Lopez de Prado, "The deflated Sharpe ratio:
/// correcting for selection bias, backtest overfitting and non-normality", Journal of Portfolio
/// Management 40(5), 2014) of the best of `sharpes` (the N >= 2 combos' full-series per-bar
/// Sharpe ratios), given the bar returns of that combo (T >= 2):
///
/// - SR = `sharpes[n]`, n = [`select_best`]`(sharpes)`;
/// - SR0 = sqrt(V) ((1 - g) z(1 - 1/N) + g z(1 - 1/(N e))), V the population variance of the
///   Sharpe ratios, g the Euler-Mascheroni constant, z the normal quantile;
/// - DSR = Phi((SR - SR0) sqrt(T - 1) / sqrt(1 - skew SR + (kurt - 1)/4 SR^2)), skew and kurt
///   the population moments of the returns, taken two-pass (mean, then the means of the
///   centred powers; [`ShapePasses`]). A flat series (m2 = 0) has skew = kurt = 0 and the
///   denominator 1.
///
/// The radicand is >= 0 in exact arithmetic (kurt >= skew^2 + 1); if rounding makes it <= 0,
/// DSR is 1, 0 or 1/2 as SR is above, below or equal to SR0. Every value must be finite, and
/// the Sharpe ratios within +-[`MAX_ABS`] (so V and SR^2 cannot overflow); errors name the
/// index and the value.
pub fn deflated_sharpe(
    sharpes: &[f64],
    selected_returns: &[f64],
) -> Result<DeflatedSharpe, ResearchError> {
    check_sharpes(sharpes)?;
    deflated_sharpe_of_shape(sharpes, shape(selected_returns)?)
}

/// [`deflated_sharpe`] given the selected combo's [`Shape`] rather than its returns: the same
/// bits, for returns read in pieces by [`ShapePasses`] (a series too long to hold).
pub fn deflated_sharpe_of_shape(
    sharpes: &[f64],
    shape: Shape,
) -> Result<DeflatedSharpe, ResearchError> {
    check_sharpes(sharpes)?;
    if shape.bars < 2 {
        return Err(ResearchError::TooFewReturns { bars: shape.bars });
    }
    let combo = select_best(sharpes);
    let sharpe = sharpes[combo];
    let n = sharpes.len() as f64;
    let mean = sharpes.iter().sum::<f64>() / n;
    let variance = sharpes.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
    let e = std::f64::consts::E;
    let sr0 = variance.sqrt()
        * ((1.0 - EULER_GAMMA) * normal_quantile(1.0 - 1.0 / n)
            + EULER_GAMMA * normal_quantile(1.0 - 1.0 / (n * e)));
    let Shape { bars, skew, kurt } = shape;
    Ok(DeflatedSharpe {
        combo,
        sharpe,
        sr0,
        bars,
        skew,
        kurt,
        variance,
        dsr: probability(sharpe, sr0, bars, skew, kurt),
    })
}

/// At least two Sharpe ratios, each finite and within +-[`MAX_ABS`].
fn check_sharpes(sharpes: &[f64]) -> Result<(), ResearchError> {
    if sharpes.len() < 2 {
        return Err(ResearchError::TooFewSharpes {
            count: sharpes.len(),
        });
    }
    if let Some(index) = sharpes.iter().position(|v| !v.is_finite()) {
        return Err(ResearchError::NotFinite {
            what: "Sharpe ratio",
            index,
            value: sharpes[index],
        });
    }
    if let Some(index) = sharpes.iter().position(|s| s.abs() > MAX_ABS) {
        return Err(ResearchError::OutOfRange {
            what: "Sharpe ratio",
            index,
            value: sharpes[index],
            limit: MAX_ABS,
        });
    }
    Ok(())
}

/// The [`Shape`] of `x`: [`ShapePasses`] fed the whole slice.
fn shape(x: &[f64]) -> Result<Shape, ResearchError> {
    let mut passes = ShapePasses::new();
    for _ in 0..PASSES {
        passes.push(x);
        passes.end_pass();
    }
    passes.finish()
}

/// Phi((SR - SR0) sqrt(T - 1) / sqrt(1 - skew SR + (kurt - 1)/4 SR^2)), the denominator 1 for a
/// flat series (kurt = 0 = skew); by the sign of SR - SR0 where rounding leaves no positive
/// radicand.
fn probability(sr: f64, sr0: f64, bars: usize, skew: f64, kurt: f64) -> f64 {
    let radicand = if kurt == 0.0 && skew == 0.0 {
        1.0
    } else {
        1.0 - skew * sr + (kurt - 1.0) / 4.0 * sr * sr
    };
    if radicand <= 0.0 {
        return if sr > sr0 {
            1.0
        } else if sr < sr0 {
            0.0
        } else {
            0.5
        };
    }
    normal_cdf((sr - sr0) * ((bars - 1) as f64).sqrt() / radicand.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(x: &[f64]) -> (f64, f64) {
        let s = super::shape(x).unwrap();
        (s.skew, s.kurt)
    }

    #[test]
    fn select_best_takes_the_first_of_ties() {
        assert_eq!(select_best(&[1.0, 3.0, 2.0, 3.0]), 1);
        assert_eq!(select_best(&[-1.0, -1.0]), 0);
        assert_eq!(select_best(&[0.0, f64::NAN, 0.5]), 2);
    }

    #[test]
    fn shape_is_the_population_moments() {
        // 0, 0, 0, 4: mean 1, d = -1 -1 -1 3; m2 = 12/4 = 3, m3 = 24/4 = 6, m4 = 84/4 = 21.
        let (skew, kurt) = shape(&[0.0, 0.0, 0.0, 4.0]);
        assert!((skew - 6.0 / 27f64.sqrt()).abs() < 1e-15, "{skew}");
        assert_eq!(kurt, 21.0 / 9.0);
        // Scaling by any power of two leaves both bit for bit, even where d^4 would overflow.
        for k in [-1000, -3, 1, 300, 1000] {
            let x: Vec<f64> = [0.0, 0.0, 0.0, 4.0].iter().map(|v| v * pow2(k)).collect();
            assert_eq!(shape(&x), (skew, kurt), "2^{k}");
        }
        assert_eq!(shape(&[0.25, 0.25, 0.25]), (0.0, 0.0));
        assert_eq!(shape(&[0.0, 0.0]), (0.0, 0.0));
    }

    #[test]
    fn pow2_is_exact() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(-1), 0.5);
        assert_eq!(pow2(1023), 2f64.powi(1023));
        assert_eq!(pow2(-1074), f64::from_bits(1));
        assert_eq!(pow2(-1023) * 2.0, pow2(-1022));
    }

    #[test]
    fn a_radicand_without_room_compares_the_ratios() {
        // skew 2, kurt 2 is impossible (kurt >= skew^2 + 1), so 1 - 2 SR + SR^2 / 4 < 0 at SR 1.
        assert_eq!(probability(1.0, 0.5, 10, 2.0, 2.0), 1.0);
        assert_eq!(probability(1.0, 1.5, 10, 2.0, 2.0), 0.0);
        assert_eq!(probability(1.0, 1.0, 10, 2.0, 2.0), 0.5);
        // A flat series: denominator 1, so Phi((0 - 0.5) * 3).
        assert_eq!(probability(0.0, 0.5, 10, 0.0, 0.0), normal_cdf(-1.5));
    }
}
