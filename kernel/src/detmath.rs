//! `exp` and `ln` from IEEE-exact operations only, so generated series have the same bits on
//! every machine: the scalar forms and [`exp_block`], the same arithmetic many values at a time.

const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// `2^k` for `k` in the normal exponent range, built from its bits (exact).
fn pow2(k: i64) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// `exp(x)` from IEEE-exact operations: Cody-Waite reduction by ln 2, then a degree-13 Taylor
/// polynomial on `|r| <= ln2/2` (truncation error below 1e-17 relative).
#[cfg(test)]
pub(crate) fn det_exp(x: f64) -> f64 {
    if x < -700.0 {
        return 0.0;
    }
    if x > 700.0 {
        return f64::INFINITY;
    }
    let k = (x / (LN2_HI + LN2_LO) + if x < 0.0 { -0.5 } else { 0.5 }) as i64;
    let kf = k as f64;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut p = 1.0;
    for n in (1..=13).rev() {
        p = 1.0 + p * r / n as f64;
    }
    p * pow2(k)
}

/// `ln(x)` for finite `x > 0` from IEEE-exact operations: split off the binary exponent, then
/// `ln(m) = 2 atanh((m-1)/(m+1))` by its series, with `m` in `[sqrt(2)/2, sqrt(2))`.
#[cfg(test)]
pub(crate) fn det_ln(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    let mut x = x;
    let mut e: i64 = 0;
    if x < f64::MIN_POSITIVE {
        x *= pow2(54);
        e -= 54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    for j in (0..14).rev() {
        series = 1.0 / (2 * j + 1) as f64 + s2 * series;
    }
    let ef = e as f64;
    ef * LN2_HI + (2.0 * s * series + ef * LN2_LO)
}

/// Values [`exp_block`] works on side by side: enough independent division chains to keep the
/// divider busy, few enough to stay in registers and L1.
pub(crate) const EXP_BLOCK: usize = 64;

/// [`det_exp`] of every value in place, bit for bit, a block at a time. The scalar form is one
/// chain of 13 dependent divisions per value, bound by their latency; here step `n` of the
/// polynomial runs for the whole block before step `n - 1`, so the divisions of different values
/// are independent (and the compiler may pack them into SIMD lanes). Every value goes through
/// the same operations in the same order as in [`det_exp`]: `k` and `r` by the same reduction,
/// `p = 1 + p r / n` for n = 13 down to 1, then `p 2^k`; a value out of `[-700, 700]` runs the
/// polynomial on `r = 0` (giving exactly 1) and is scaled by 0 or infinity, as `det_exp` returns.
// `inline(always)`: inlined into a `#[target_feature]` caller it is compiled, and vectorised, at
// that caller's instruction set (`Pairs::factors`, which `hullsweep-variants` runs at its tiers).
#[inline(always)]
pub(crate) fn exp_block(xs: &mut [f64]) {
    for block in xs.chunks_mut(EXP_BLOCK) {
        let len = block.len();
        let (mut r, mut scale, mut p) = ([0.0; EXP_BLOCK], [1.0; EXP_BLOCK], [1.0; EXP_BLOCK]);
        for ((x, r), scale) in block.iter().zip(&mut r).zip(&mut scale) {
            let x = *x;
            if x < -700.0 {
                *scale = 0.0;
            } else if x > 700.0 {
                *scale = f64::INFINITY;
            } else {
                let k = (x / (LN2_HI + LN2_LO) + if x < 0.0 { -0.5 } else { 0.5 }) as i64;
                let kf = k as f64;
                *r = (x - kf * LN2_HI) - kf * LN2_LO;
                *scale = pow2(k);
            }
        }
        for n in (1..=13).rev() {
            let n = n as f64;
            for (p, r) in p[..len].iter_mut().zip(&r[..len]) {
                *p = 1.0 + *p * *r / n;
            }
        }
        for ((x, p), scale) in block.iter_mut().zip(&p).zip(&scale) {
            *x = p * scale;
        }
    }
}

/// [`det_ln`] of every value (finite, > 0) in place, bit for bit: the same reduction per value,
/// then each term of the series for the whole block, so the values' chains run side by side.
#[inline(always)] // as `exp_block`
pub(crate) fn ln_block(xs: &mut [f64]) {
    for block in xs.chunks_mut(EXP_BLOCK) {
        let len = block.len();
        let (mut s, mut e) = ([0.0; EXP_BLOCK], [0.0; EXP_BLOCK]);
        for ((x, s), ef) in block.iter().zip(&mut s).zip(&mut e) {
            debug_assert!(*x > 0.0 && x.is_finite());
            let mut x = *x;
            let mut exp: i64 = 0;
            if x < f64::MIN_POSITIVE {
                x *= pow2(54);
                exp -= 54;
            }
            let bits = x.to_bits();
            exp += ((bits >> 52) & 0x7ff) as i64 - 1023;
            let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | (1023u64 << 52));
            if m > std::f64::consts::SQRT_2 {
                m /= 2.0;
                exp += 1;
            }
            *s = (m - 1.0) / (m + 1.0);
            *ef = exp as f64;
        }
        let s2 = s.map(|s| s * s);
        let mut series = [0.0; EXP_BLOCK];
        for j in (0..14).rev() {
            let c = 1.0 / (2 * j + 1) as f64;
            for (t, s2) in series[..len].iter_mut().zip(&s2[..len]) {
                *t = c + s2 * *t;
            }
        }
        for (((x, s), t), ef) in block.iter_mut().zip(&s).zip(&series).zip(&e) {
            *x = ef * LN2_HI + (2.0 * s * t + ef * LN2_LO);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_the_scalar_form_bit_for_bit() {
        // Across the range, its ends and beyond, NaN, and a length that is not a whole block.
        let mut xs: Vec<f64> = (-3000..3000).map(|i| i as f64 * 0.2337).collect();
        xs.extend([-700.0, 700.0, -700.1, 700.1, 0.0, -0.0, 1e-300, f64::NAN]);
        xs.extend([f64::INFINITY, f64::NEG_INFINITY, 1e-3, -1e-3, 709.0, -745.0]);
        let want: Vec<u64> = xs.iter().map(|&x| det_exp(x).to_bits()).collect();
        exp_block(&mut xs);
        let got: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_ln_block_is_the_scalar_form_bit_for_bit() {
        let mut xs: Vec<f64> = (1..5000).map(|i| i as f64 / 4999.0).collect();
        xs.extend([
            1e-310,
            f64::MIN_POSITIVE,
            5e-324,
            1.0,
            std::f64::consts::SQRT_2,
            1e300,
        ]);
        let want: Vec<u64> = xs.iter().map(|&x| det_ln(x).to_bits()).collect();
        ln_block(&mut xs);
        let got: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn det_exp_and_ln_agree_with_libm_to_a_few_ulps() {
        for i in -2000..2000 {
            let x = i as f64 * 0.0137;
            let (a, b) = (det_exp(x), x.exp());
            assert!(((a - b) / b).abs() < 4e-16, "exp({x}): {a} vs {b}");
        }
        for i in 1..4000 {
            let x = i as f64 / 3999.0;
            let (a, b) = (det_ln(x), x.ln());
            assert!(
                (a - b).abs() < 4e-16 * b.abs().max(1.0),
                "ln({x}): {a} vs {b}"
            );
        }
        assert!((det_ln(1e-310) - 1e-310f64.ln()).abs() < 1e-12);
    }
}
