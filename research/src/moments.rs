//! The first two moments of a set of returns as (count, mean, M2), updated one value at a time
//! (Welford) and merged across chunks or threads with Chan et al.'s parallel formula.

/// Count, mean and M2 (the sum of squared deviations from the mean) of a set of values.
///
/// Merging two sets with [`Moments::merge`] is Chan, Golub and LeVeque's pairwise update:
/// `delta = mean_b - mean_a`, `n = n_a + n_b`, `mean = mean_a + delta * n_b / n`,
/// `M2 = M2_a + M2_b + delta^2 * n_a * n_b / n`. It is exact in real arithmetic for any split of
/// the set, so chunks can be accumulated in any grouping; in floating point the result depends
/// on the grouping by a few ulps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    /// How many values.
    pub n: u64,
    /// Their mean (0 for none).
    pub mean: f64,
    /// The sum of their squared deviations from `mean`.
    pub m2: f64,
}

impl Moments {
    /// No values.
    pub const EMPTY: Moments = Moments {
        n: 0,
        mean: 0.0,
        m2: 0.0,
    };

    /// Adds one value (Welford's update).
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// The moments of the union of two disjoint sets (Chan et al.).
    pub fn merge(&self, other: &Moments) -> Moments {
        if other.n == 0 {
            return *self;
        }
        if self.n == 0 {
            return *other;
        }
        let (na, nb) = (self.n as f64, other.n as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        Moments {
            n: self.n + other.n,
            mean: self.mean + delta * (nb / n),
            m2: self.m2 + other.m2 + delta * delta * (na * nb / n),
        }
    }

    /// The moments of `n` values `x` given as `sum = sum(x - shift)` and
    /// `sumsq = sum((x - shift)^2)` (the form [`crate::FoldStats`] keeps); M2 is clamped at 0.
    pub fn from_shifted(n: u64, shift: f64, sum: f64, sumsq: f64) -> Moments {
        if n == 0 {
            return Moments::EMPTY;
        }
        let nf = n as f64;
        Moments {
            n,
            mean: (nf * shift + sum) / nf,
            m2: (sumsq - sum * sum / nf).max(0.0),
        }
    }

    /// The population variance M2 / n (ddof 0); 0 for no values.
    pub fn variance(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.m2 / self.n as f64
        }
    }

    /// The population standard deviation.
    pub fn std(&self) -> f64 {
        self.variance().sqrt()
    }

    /// mean / std, 0 where std is 0 (per value, not annualized).
    pub fn sharpe(&self) -> f64 {
        let std = self.std();
        if std == 0.0 { 0.0 } else { self.mean / std }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(xs: &[f64]) -> Moments {
        let mut m = Moments::EMPTY;
        xs.iter().for_each(|&x| m.push(x));
        m
    }

    #[test]
    fn welford_and_chan_agree_with_the_two_pass_definition() {
        // 1, 2, 3, 4, 10: mean 4, deviations -3 -2 -1 0 6, M2 = 9 + 4 + 1 + 0 + 36 = 50.
        let xs = [1.0, 2.0, 3.0, 4.0, 10.0];
        let m = of(&xs);
        assert_eq!((m.n, m.mean, m.m2), (5, 4.0, 50.0));
        assert_eq!(m.variance(), 10.0);
        // Every split point, merged, gives the same moments up to rounding (Chan's `n_b / n` is
        // not exact in binary).
        for cut in 0..=xs.len() {
            let merged = of(&xs[..cut]).merge(&of(&xs[cut..]));
            assert_eq!(merged.n, 5);
            assert!((merged.mean - 4.0).abs() < 1e-15, "cut {cut}: {merged:?}");
            assert!((merged.m2 - 50.0).abs() < 1e-13, "cut {cut}: {merged:?}");
        }
        // Shifted sums about 2: sum(x - 2) = 10, sum((x - 2)^2) = 1 + 0 + 1 + 4 + 64 = 70.
        assert_eq!(Moments::from_shifted(5, 2.0, 10.0, 70.0), m);
    }

    #[test]
    fn sharpe_is_zero_where_std_is_zero() {
        assert_eq!(of(&[3.0, 3.0, 3.0]).sharpe(), 0.0);
        assert_eq!(Moments::EMPTY.sharpe(), 0.0);
        // 1 and 3: mean 2, population std 1.
        assert_eq!(of(&[1.0, 3.0]).sharpe(), 2.0);
    }
}
