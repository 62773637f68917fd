//! The performance metric CSCV ranks combos by (`sharpe` or `mean` of a set of bar returns), and
//! its evaluation from shifted sums, written so that exact ties stay exact (see [`Metric::eval`]).

use crate::error::ResearchError;
use std::fmt;
use std::str::FromStr;

/// What "performance" means in CSCV: the per-bar Sharpe ratio or the mean of a set of returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// mean / std (population, ddof 0), 0 where std is 0; per bar, not annualized.
    Sharpe,
    /// The mean bar return.
    Mean,
}

impl Metric {
    /// Every metric, in the order the CLI lists them.
    pub const ALL: [Metric; 2] = [Metric::Sharpe, Metric::Mean];

    /// Its name, as `--metric` and Python take it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Sharpe => "sharpe",
            Metric::Mean => "mean",
        }
    }

    /// The metric called `name`.
    pub fn from_name(name: &str) -> Result<Metric, ResearchError> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| ResearchError::UnknownMetric {
                name: name.to_string(),
            })
    }

    /// The metric of `n` bars whose returns `x` have `s = sum(x - c)` and `q = sum((x - c)^2)`,
    /// given `nc = n * c`:
    ///
    /// - `mean = (nc + s) / n`;
    /// - `sharpe = (nc + s) / sqrt(n * q - s * s)`, 0 where `n * q - s * s <= 0`. This is
    ///   mean / std, since `n * q - s^2 = n^2 * var`.
    ///
    /// Every operation is one correctly rounded IEEE step on `(n, c, s, q)`, so two combos whose
    /// sums are equal get equal metrics (exact ties stay ties). When the sums are exact
    /// (integer-valued returns) and `n` is a power of two, both values are bit for bit numpy's
    /// `x.mean()` and `x.mean() / x.std()` (dividing by `n` and by `n^2` is then exact). In
    /// general the relative error is a few ulps times `1 + mean^2 / var` of the shifted values
    /// (the cancellation in `n * q - s^2`), below 1e-14 for returns within a few hundred
    /// standard deviations of their shift.
    #[inline]
    pub fn eval(self, n: f64, nc: f64, s: f64, q: f64) -> f64 {
        let total = nc + s;
        match self {
            Metric::Mean => total / n,
            Metric::Sharpe => {
                let num = n * q - s * s;
                // Both sides computed, then selected: the loop stays branch-free (vectorised).
                let sharpe = total / num.sqrt();
                if num > 0.0 { sharpe } else { 0.0 }
            }
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = ResearchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Metric::from_name(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_is_named() {
        for m in Metric::ALL {
            assert_eq!(m.name().parse::<Metric>(), Ok(m));
        }
        let e = Metric::from_name("sortino").unwrap_err().to_string();
        assert_eq!(e, "unknown metric \"sortino\"; known: sharpe, mean");
    }

    #[test]
    fn eval_matches_the_definitions() {
        // x = 1, 2, 3, 6 about c = 2: s = -1 + 0 + 1 + 4 = 4, q = 1 + 0 + 1 + 16 = 18.
        // mean = 3; deviations -2 -1 0 3, so var = (4 + 1 + 0 + 9) / 4 = 3.5.
        let (n, c, s, q) = (4.0, 2.0, 4.0, 18.0);
        assert_eq!(Metric::Mean.eval(n, n * c, s, q), 3.0);
        let sharpe = 3.0 / 3.5f64.sqrt();
        // n q - s^2 = 72 - 16 = 56 = n^2 var = 16 * 3.5.
        assert!((Metric::Sharpe.eval(n, n * c, s, q) - sharpe).abs() < 1e-15);
        // A constant set has std 0, so Sharpe 0.
        assert_eq!(Metric::Sharpe.eval(3.0, 3.0 * 5.0, 0.0, 0.0), 0.0);
    }
}
