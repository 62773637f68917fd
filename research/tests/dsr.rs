//! The deflated Sharpe ratio on examples worked by hand (a 3-combo case with a tie, a flat
//! selected series, a radicand that is zero in exact arithmetic) and its refusals, by message.

use hullsweep_research::{DeflatedSharpe, deflated_sharpe, normal_cdf, select_best};

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1e-300),
        "{what}: {got} vs {want}"
    );
}

/// Three combos with Sharpe ratios 0, s, s (s = 1/sqrt 3; the tie goes to combo 1), combo 1's
/// returns being 0, 0, 0, 4:
///
/// - V: mean 2s/3, deviations -2s/3, s/3, s/3, so V = (4 + 1 + 1)/9 s^2 / 3 = 2/27 and
///   sqrt(V) = 0.27216552697590868.
/// - z(1 - 1/3) = z(2/3) = 0.43072729929545749; 1 - 1/(3e) = 0.87737351960951923 and
///   z(0.87737351960951923) = 1.1619569289127327 (mpmath, 40 digits).
/// - SR0 = sqrt(V) ((1 - g) 0.43072729929545749 + g 1.1619569289127327), g = 0.57721566490153286:
///   0.27216552697590868 * 0.85280449615069462 = 0.23210398510227809.
/// - Returns 0, 0, 0, 4: mean 1, d = -1, -1, -1, 3; m2 = 12/4 = 3, m3 = 24/4 = 6, m4 = 84/4 = 21;
///   skew = 6 / 3^1.5 = 2/sqrt 3, kurt = 21/9 = 7/3.
/// - Denominator: 1 - (2/sqrt 3)(1/sqrt 3) + (7/3 - 1)/4 * 1/3 = 1 - 2/3 + 1/9 = 4/9, root 2/3.
/// - DSR = Phi((1/sqrt 3 - 0.23210398510227809) sqrt(4 - 1) / (2/3))
///   = Phi(0.89697615774546687) = 0.81513418022376377.
#[test]
fn three_combos_by_hand() {
    let s = 1.0 / 3f64.sqrt();
    let d = deflated_sharpe(&[0.0, s, s], &[0.0, 0.0, 0.0, 4.0]).unwrap();
    assert_eq!((d.combo, d.sharpe, d.bars), (1, s, 4));
    close(d.variance, 2.0 / 27.0, 1e-15, "V");
    close(d.sr0, 0.232_103_985_102_278_1, 1e-14, "SR0");
    close(d.skew, 2.0 / 3f64.sqrt(), 1e-15, "skew");
    close(d.kurt, 7.0 / 3.0, 1e-15, "kurt");
    close(d.dsr, 0.815_134_180_223_763_7, 1e-14, "DSR");
    close(d.dsr, normal_cdf(0.896_976_157_745_466_9), 1e-14, "Phi");
}

#[test]
fn the_first_of_tied_best_is_selected() {
    assert_eq!(select_best(&[0.5, 2.0, 2.0, -1.0]), 1);
    let d = deflated_sharpe(&[0.5, 2.0, 2.0, -1.0], &[1.0, 2.0, 0.5]).unwrap();
    assert_eq!(d.combo, 1);
    // Equal Sharpe ratios: V = 0, so SR0 = 0 and no deflation beyond non-normality.
    let d = deflated_sharpe(&[0.25, 0.25], &[1.0, -0.5, 0.5]).unwrap();
    assert_eq!((d.combo, d.variance, d.sr0), (0, 0.0, 0.0));
    assert!(d.dsr > 0.5, "{d:?}");
}

/// Two combos, the best being flat (Sharpe 0 by definition): skew = kurt = 0, the denominator
/// is 1, so DSR = Phi((0 - SR0) sqrt(T - 1)) with SR0 = sqrt(V) g z(1 - 1/(2e)) (z(1/2) = 0).
#[test]
fn a_flat_best_has_denominator_one() {
    let d = deflated_sharpe(&[-0.5, 0.0], &[0.25; 5]).unwrap();
    assert_eq!((d.combo, d.skew, d.kurt, d.variance), (1, 0.0, 0.0, 0.0625));
    // z(1 - 1/(2e)) = 0.90045259663779034 (mpmath); sqrt(V) = 0.25.
    close(
        d.sr0,
        0.25 * 0.577_215_664_901_532_9 * 0.900_452_596_637_790_3,
        1e-14,
        "SR0",
    );
    close(d.dsr, normal_cdf(-d.sr0 * 2.0), 1e-15, "DSR");
}

/// Returns 0, 0, 0, 1 have kurt = skew^2 + 1 (a two-point distribution: skew 2/sqrt 3, kurt
/// 7/3), so the radicand 1 - skew SR + (kurt - 1)/4 SR^2 = (1 - SR/sqrt 3)^2 is 0 at
/// SR = sqrt 3. Whether rounding leaves it a hair above 0 or not, SR > SR0 gives DSR 1.
#[test]
fn a_radicand_at_zero_gives_the_comparison() {
    let d = deflated_sharpe(&[3f64.sqrt(), 0.0], &[0.0, 0.0, 0.0, 1.0]).unwrap();
    close(d.kurt, d.skew * d.skew + 1.0, 1e-15, "kurt");
    assert!(d.sr0 < d.sharpe, "{d:?}");
    assert_eq!(d.dsr, 1.0, "{d:?}");
}

#[test]
fn more_trials_deflate_more() {
    // The same best Sharpe ratio among more trials of the same spread needs more to beat.
    let returns: Vec<f64> = (0..50).map(|t| ((t * 7) % 11) as f64 - 4.0).collect();
    let few = [0.1, -0.1, 0.2];
    let many: Vec<f64> = (0..300).map(|k| few[k % 3]).collect();
    let (a, b): (DeflatedSharpe, DeflatedSharpe) = (
        deflated_sharpe(&few, &returns).unwrap(),
        deflated_sharpe(&many, &returns).unwrap(),
    );
    assert_eq!((a.combo, b.combo), (2, 2));
    assert!(b.sr0 > a.sr0 && b.dsr < a.dsr, "{a:?} {b:?}");
}

#[test]
fn bad_inputs_are_named() {
    let err = |s: &[f64], r: &[f64]| deflated_sharpe(s, r).unwrap_err().to_string();
    assert_eq!(
        err(&[0.5], &[1.0, 2.0]),
        "the deflated Sharpe ratio needs the Sharpe ratios of at least 2 combos (their variance \
         deflates the best), got 1"
    );
    assert_eq!(
        err(&[0.5, 0.1], &[1.0]),
        "the deflated Sharpe ratio needs at least 2 bar returns of the selected combo, got 1"
    );
    assert_eq!(
        err(&[0.5, 0.1, f64::NAN], &[1.0, 2.0]),
        "Sharpe ratio at index 2 is NaN: every Sharpe ratio must be finite"
    );
    assert_eq!(
        err(&[0.5, 0.1], &[1.0, 2.0, f64::NEG_INFINITY]),
        "bar return at index 2 is -inf: every bar return must be finite"
    );
    assert_eq!(
        err(&[0.5, -1e200], &[1.0, 2.0]),
        "Sharpe ratio at index 1 is -1e200: every Sharpe ratio must lie within +-1e100"
    );
    // Huge returns are fine: their moments are taken on a rescaled copy.
    let d = deflated_sharpe(&[0.5, 0.1], &[1e300, -1e300, 0.0, 1e300]).unwrap();
    assert!(
        d.skew.is_finite() && d.kurt.is_finite() && d.dsr.is_finite(),
        "{d:?}"
    );
}
