//! Performance degradation: the least-squares line `oos = slope * is + intercept` through the
//! selected combo's (IS, OOS) performance over the splits, with its R^2.

/// The least-squares line through the splits' `(is, oos)` points, and how much of the OOS
/// variation it explains. A negative slope is the classic sign of overfitting: the better a
/// combo looked in sample, the worse it did out of sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Degradation {
    /// `Sxy / Sxx`; 0 where the IS values do not vary (`Sxx = 0`).
    pub slope: f64,
    /// `mean(oos) - slope * mean(is)`.
    pub intercept: f64,
    /// `Sxy^2 / (Sxx * Syy)`, the share of OOS variance the line explains; 0 where either
    /// value does not vary.
    pub r2: f64,
}

/// Fits `oos = slope * is + intercept` by least squares, with centred sums taken in order:
/// `Sxx = sum((is - mean(is))^2)`, `Sxy = sum((is - mean(is)) * (oos - mean(oos)))`,
/// `Syy = sum((oos - mean(oos))^2)`. Both slices have the same length, at least 1.
pub fn degradation(is: &[f64], oos: &[f64]) -> Degradation {
    debug_assert_eq!(is.len(), oos.len());
    let n = is.len() as f64;
    let mx = is.iter().sum::<f64>() / n;
    let my = oos.iter().sum::<f64>() / n;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (&x, &y) in is.iter().zip(oos) {
        let (dx, dy) = (x - mx, y - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    let slope = if sxx == 0.0 { 0.0 } else { sxy / sxx };
    let r2 = if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy * sxy / (sxx * syy)
    };
    Degradation {
        slope,
        intercept: my - slope * mx,
        r2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_recovered_and_flat_input_gives_zeros() {
        // oos = 3 - 2 is exactly: slope -2, intercept 3, R^2 1.
        let d = degradation(&[0.0, 1.0, 2.0, 3.0], &[3.0, 1.0, -1.0, -3.0]);
        assert_eq!((d.slope, d.intercept, d.r2), (-2.0, 3.0, 1.0));
        // (0,0) (1,1) (2,0) (3,1): mean 1.5 and 0.5, Sxx = 5, Sxy = 1, Syy = 1.
        let d = degradation(&[0.0, 1.0, 2.0, 3.0], &[0.0, 1.0, 0.0, 1.0]);
        assert_eq!((d.slope, d.intercept, d.r2), (0.2, 0.5 - 0.2 * 1.5, 0.2));
        let d = degradation(&[1.0, 1.0], &[2.0, 4.0]);
        assert_eq!((d.slope, d.intercept, d.r2), (0.0, 3.0, 0.0));
    }
}
