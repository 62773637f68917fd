//! The standard normal distribution function Phi and its quantile z, in double precision, for
//! the deflated Sharpe ratio: Cody's ANORM for Phi and Wichura's AS241 (PPND16) for z.

// Hand-written rather than taken from a crate (statrs would do): the research crate keeps its
// two dependencies, and AS241 is what Python's `statistics.NormalDist.inv_cdf` (the reference's
// quantile) runs, coefficient for coefficient and in the same evaluation order.

/// 1 / sqrt(2 pi).
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_677_939_946_059_934;
/// sqrt(32), where Cody's middle interval ends.
#[allow(clippy::excessive_precision)] // the digits as R's nmath gives them
const SQRT_32: f64 = 5.656_854_249_492_380_195_206_754_896_838;

/// The standard normal distribution function Phi(x) = P(Z <= x): W. J. Cody's ANORM (Cody,
/// "Rational Chebyshev approximations for the error function", Math. Comp. 23 (1969) 631-637;
/// the code of ACM TOMS Algorithm 715, 1993, as R's `pnorm_both` in nmath/pnorm.c runs it).
///
/// Three rational approximations: in x^2 for |x| <= 0.66291 (Phi = 1/2 + x R(x^2)), in |x| up
/// to sqrt(32), and in 1/x^2 beyond (both times exp(-x^2/2)). Unlike `0.5 * erfc(-x / sqrt 2)`
/// it never rounds x / sqrt(2), whose error the tail would multiply by x^2; and exp(-x^2/2) is
/// taken as exp(-xsq^2/2) exp(-del/2) with xsq = x truncated to 1/16 (so xsq^2 is exact), which
/// keeps the relative error of the lower tail near the rounding of one exp. Against mpmath, a
/// scan of x from -37.4 to 8.2 (steps of 0.0137) found at most 5.6e-16 relative; the tests hold
/// spot values to 1e-14.
/// 0 below -37.5193 and 1 above 8.2924 (where Phi rounds to them); NaN for NaN.
#[allow(clippy::excessive_precision)] // Cody's coefficients as published
pub fn normal_cdf(x: f64) -> f64 {
    const A: [f64; 5] = [
        2.2352520354606839287,
        161.02823106855587881,
        1067.6894854603709582,
        18154.981253343561249,
        0.065682337918207449113,
    ];
    const B: [f64; 4] = [
        47.20258190468824187,
        976.09855173777669322,
        10260.932208618978205,
        45507.789335026729956,
    ];
    const C: [f64; 9] = [
        0.39894151208813466764,
        8.8831497943883759412,
        93.506656132177855979,
        597.27027639480026226,
        2494.5375852903726711,
        6848.1904505362823326,
        11602.651437647350124,
        9842.7148383839780218,
        1.0765576773720192317e-8,
    ];
    const D: [f64; 8] = [
        22.266688044328115691,
        235.38790178262499861,
        1519.377599407554805,
        6485.558298266760755,
        18615.571640885098091,
        34900.952721145977266,
        38912.003286093271411,
        19685.429676859990727,
    ];
    const P: [f64; 6] = [
        0.21589853405795699,
        0.1274011611602473639,
        0.022235277870649807,
        0.001421619193227893466,
        2.9112874951168792e-5,
        0.02307344176494017303,
    ];
    const Q: [f64; 5] = [
        1.28426009614491121,
        0.468238212480865118,
        0.0659881378689285515,
        0.00378239633202758244,
        7.29751555083966205e-5,
    ];
    if x.is_nan() {
        return x;
    }
    let y = x.abs();
    if y <= 0.66291 {
        // Below half an ulp of 1 the polynomial in x^2 is its constant term.
        let xsq = if y > f64::EPSILON * 0.5 { x * x } else { 0.0 };
        let (mut num, mut den) = (A[4] * xsq, xsq);
        for i in 0..3 {
            num = (num + A[i]) * xsq;
            den = (den + B[i]) * xsq;
        }
        return 0.5 + x * (num + A[3]) / (den + B[3]);
    }
    // The upper tail of |x|, Q(|x|) = 1 - Phi(|x|) = Phi(-|x|); Phi(x) follows by symmetry.
    let upper = if y <= SQRT_32 {
        let (mut num, mut den) = (C[8] * y, y);
        for i in 0..7 {
            num = (num + C[i]) * y;
            den = (den + D[i]) * y;
        }
        gauss_tail(y, (num + C[7]) / (den + D[7]))
    } else if y < 37.5193 {
        let xsq = 1.0 / (x * x);
        let (mut num, mut den) = (P[5] * xsq, xsq);
        for i in 0..4 {
            num = (num + P[i]) * xsq;
            den = (den + Q[i]) * xsq;
        }
        let r = xsq * (num + P[4]) / (den + Q[4]);
        gauss_tail(y, (FRAC_1_SQRT_2PI - r) / y)
    } else {
        0.0
    };
    if x > 0.0 { 1.0 - upper } else { upper }
}

/// `exp(-y^2 / 2) * r` for y > 0, with y^2 split as xsq^2 + del (xsq = y truncated to a
/// multiple of 1/16, so xsq^2 is exact and del small): exp of a rounded y^2 would lose
/// y^2 ulps in the far tail.
fn gauss_tail(y: f64, r: f64) -> f64 {
    let xsq = (y * 16.0).trunc() / 16.0;
    let del = (y - xsq) * (y + xsq);
    (-xsq * xsq * 0.5).exp() * (-del * 0.5).exp() * r
}

/// The standard normal quantile z(p), Phi(z(p)) = p: M. J. Wichura, "Algorithm AS 241: The
/// percentage points of the normal distribution", Applied Statistics 37(3) (1988) 477-484,
/// PPND16 (against mpmath at most 7.3e-16 relative over p = i/2000, 10^-k and 1 - 10^-k, k up
/// to 299 and 15), written as Python's `statistics.NormalDist.inv_cdf`
/// writes it (CPython's Lib/statistics.py and Modules/_statisticsmodule.c).
///
/// A rational function of (p - 1/2)^2 for |p - 1/2| <= 0.425, else of r = sqrt(-ln(min(p,
/// 1 - p))) on r <= 5 and r > 5. -inf at 0, +inf at 1, NaN outside [0, 1] and for NaN.
#[allow(clippy::excessive_precision)] // Wichura's coefficients as published
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        let num = (((((((2.50908_09287_30122_6727e+3 * r + 3.34305_75583_58812_8105e+4) * r
            + 6.72657_70927_00870_0853e+4)
            * r
            + 4.59219_53931_54987_1457e+4)
            * r
            + 1.37316_93765_50946_1125e+4)
            * r
            + 1.97159_09503_06551_4427e+3)
            * r
            + 1.33141_66789_17843_7745e+2)
            * r
            + 3.38713_28727_96366_6080e+0)
            * q;
        let den = ((((((5.22649_52788_52854_5610e+3 * r + 2.87290_85735_72194_2674e+4) * r
            + 3.93078_95800_09271_0610e+4)
            * r
            + 2.12137_94301_58659_5867e+4)
            * r
            + 5.39419_60214_24751_1077e+3)
            * r
            + 6.87187_00749_20579_0830e+2)
            * r
            + 4.23133_30701_60091_1252e+1)
            * r
            + 1.0;
        return num / den;
    }
    let r = if q <= 0.0 { p } else { 1.0 - p };
    let r = (-r.ln()).sqrt();
    let (num, den) = if r <= 5.0 {
        let r = r - 1.6;
        let num = ((((((7.74545_01427_83414_07640e-4 * r + 2.27238_44989_26918_45833e-2) * r
            + 2.41780_72517_74506_11770e-1)
            * r
            + 1.27045_82524_52368_38258e+0)
            * r
            + 3.64784_83247_63204_60504e+0)
            * r
            + 5.76949_72214_60691_40550e+0)
            * r
            + 4.63033_78461_56545_29590e+0)
            * r
            + 1.42343_71107_49683_57734e+0;
        let den = ((((((1.05075_00716_44416_84324e-9 * r + 5.47593_80849_95344_94600e-4) * r
            + 1.51986_66563_61645_71966e-2)
            * r
            + 1.48103_97642_74800_74590e-1)
            * r
            + 6.89767_33498_51000_04550e-1)
            * r
            + 1.67638_48301_83803_84940e+0)
            * r
            + 2.05319_16266_37758_82187e+0)
            * r
            + 1.0;
        (num, den)
    } else {
        let r = r - 5.0;
        let num = ((((((2.01033_43992_92288_13265e-7 * r + 2.71155_55687_43487_57815e-5) * r
            + 1.24266_09473_88078_43860e-3)
            * r
            + 2.65321_89526_57612_30930e-2)
            * r
            + 2.96560_57182_85048_91230e-1)
            * r
            + 1.78482_65399_17291_33580e+0)
            * r
            + 5.46378_49111_64114_36990e+0)
            * r
            + 6.65790_46435_01103_77720e+0;
        let den = ((((((2.04426_31033_89939_78564e-15 * r + 1.42151_17583_16445_88870e-7) * r
            + 1.84631_83175_10054_68180e-5)
            * r
            + 7.86869_13114_56132_59100e-4)
            * r
            + 1.48753_61290_85061_48525e-2)
            * r
            + 1.36929_88092_27358_05310e-1)
            * r
            + 5.99832_20655_58879_37690e-1)
            * r
            + 1.0;
        (num, den)
    };
    let x = num / den;
    if q < 0.0 { -x } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `got` within `tol` relative of `want`.
    fn close(got: f64, want: f64, tol: f64, what: &str) {
        let err = ((got - want) / want).abs();
        assert!(err <= tol, "{what}: {got:e} vs {want:e} (relative {err:e})");
    }

    // Reference values from mpmath at 50 digits (`ncdf` for Phi; `sqrt(2) * erfinv(2p - 1)`
    // for z, at the double p exactly, e.g. mpf(1 - 1e-4)), as the nearest double.
    const CDF: [(f64, f64); 12] = [
        (-37.5, 4.605353009581955e-308),
        (-20.0, 2.7536241186062337e-89),
        (-8.0, 6.220960574271784e-16),
        (-5.0, 2.866515718791939e-7),
        (-3.0, 1.3498980316300946e-3),
        (-1.0, 0.15865525393145705),
        (-0.5, 0.3085375387259869),
        (-1e-20, 0.5),
        (0.25, 0.5987063256829237),
        (0.7, 0.758036347776927),
        (2.0, 0.9772498680518208),
        (6.0, 0.9999999990134123),
    ];

    const QUANTILE: [(f64, f64); 9] = [
        (0.975, 1.9599639845400538),
        (1.0 - 1e-4, 3.7190164854557084),
        (1e-10, -6.361340902404057),
        (1e-300, -37.0470962993612),
        (0.3, -0.5244005127080408),
        (2.0 / 3.0, 0.4307272992954574),
        (0.9, 1.2815515655446006),
        (0.5 + 1e-9, 2.5066282037387115e-9),
        (0.01, -2.326347874040841),
    ];

    #[test]
    fn cdf_matches_mpmath() {
        for (x, want) in CDF {
            close(normal_cdf(x), want, 1e-14, &format!("Phi({x})"));
        }
        assert_eq!(normal_cdf(0.0), 0.5);
        assert_eq!(normal_cdf(-40.0), 0.0);
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
        assert_eq!(normal_cdf(9.0), 1.0);
        assert_eq!(normal_cdf(f64::INFINITY), 1.0);
        assert!(normal_cdf(f64::NAN).is_nan());
    }

    #[test]
    fn quantile_matches_mpmath() {
        for (p, want) in QUANTILE {
            close(normal_quantile(p), want, 1e-14, &format!("z({p})"));
        }
        assert_eq!(normal_quantile(0.5), 0.0);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        for bad in [-0.1, 1.5, f64::NAN] {
            assert!(normal_quantile(bad).is_nan(), "z({bad})");
        }
    }

    #[test]
    fn quantile_inverts_cdf() {
        for i in 1..200 {
            let p = i as f64 / 200.0;
            close(normal_cdf(normal_quantile(p)), p, 1e-14, &format!("p {p}"));
        }
    }
}
