//! The eight-bar path's division-free quotient against the division, bit for bit: typical
//! prices, quotients at the edges of their binades, extreme and invalid values, any `y`.

#![cfg(target_arch = "x86_64")]

use super::x86::{proofs_avx512, quotients_avx512};

/// xorshift64*: a fixed stream, so a failure names its case on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform over [lo, hi).
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }

    /// Any bit pattern at all.
    fn any(&mut self) -> f64 {
        f64::from_bits(self.next())
    }
}

/// Checks every lane against `c / e`; returns the share of lanes the proof settled.
fn check(c: &[f64], e: &[f64], y: &[f64]) -> f64 {
    let mut out = vec![0.0; c.len()];
    // SAFETY: the callers run this only where the CPU has AVX-512F.
    let proved = unsafe { quotients_avx512(c, e, y, &mut out) };
    for i in 0..c.len() {
        let want = c[i] / e[i];
        assert!(
            out[i].to_bits() == want.to_bits() || (out[i].is_nan() && want.is_nan()),
            "lane {i}: {:e} / {:e} with y = {:e} gave {:e} ({:#x}), the division {:e} ({:#x})",
            c[i],
            e[i],
            y[i],
            out[i],
            out[i].to_bits(),
            want,
            want.to_bits()
        );
    }
    proved as f64 / c.len() as f64
}

fn avx512() -> bool {
    let has = std::is_x86_feature_detected!("avx512f");
    if !has {
        eprintln!("skipped: this CPU has no AVX-512F, the only tier the quotient runs on");
    }
    has
}

const N: usize = 1 << 16;

#[test]
fn prices_with_their_reciprocals_give_the_division_and_rarely_need_it() {
    if !avx512() {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let c: Vec<f64> = (0..N).map(|_| rng.log_uniform(1e-3, 1e6)).collect();
    let e: Vec<f64> = (0..N).map(|_| rng.log_uniform(1e-3, 1e6)).collect();
    let y: Vec<f64> = e.iter().map(|e| 1.0 / e).collect();
    let proved = check(&c, &e, &y);
    // The point of the path: with `y = RN(1 / e)` the Newton step lands on the quotient and
    // the proof holds in practically every lane, so the division is the exception.
    assert!(proved > 0.999, "only {proved} of the lanes proved");
}

#[test]
fn quotients_near_one_and_at_binade_edges_give_the_division() {
    if !avx512() {
        return;
    }
    let mut rng = Rng(7);
    let (mut c, mut e) = (Vec::with_capacity(N), Vec::with_capacity(N));
    for i in 0..N {
        let base = rng.log_uniform(1.0, 1e4);
        // A close a few units in the last place from the entry or from a power of two
        // times it: quotients at 1 and just either side of 2^k, where the gaps halve.
        let k = [1.0, 2.0, 0.5, 1024.0, 1.0 / 64.0][i % 5];
        let steps = (rng.next() % 9) as i64 - 4;
        let near = f64::from_bits((base * k).to_bits().wrapping_add_signed(steps));
        c.push(near);
        e.push(base);
    }
    let y: Vec<f64> = e.iter().map(|e| 1.0 / e).collect();
    check(&c, &e, &y);
}

#[test]
fn extreme_and_invalid_values_give_the_division() {
    if !avx512() {
        return;
    }
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 8.0,
        5e-324,
        f64::MAX,
        f64::MAX / 3.0,
        1e-300,
        1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        3.0,
        1e-10,
    ];
    let (mut c, mut e, mut y) = (vec![], vec![], vec![]);
    for &a in &specials {
        for &b in &specials {
            c.push(a);
            e.push(b);
            y.push(1.0 / b);
        }
    }
    check(&c, &e, &y);
    // Every bit pattern as close, entry and reciprocal: the proof must refuse what it
    // cannot vouch for, whatever `y` says.
    let mut rng = Rng(42);
    let c: Vec<f64> = (0..N).map(|_| rng.any()).collect();
    let e: Vec<f64> = (0..N).map(|_| rng.any()).collect();
    let y: Vec<f64> = (0..N).map(|_| rng.any()).collect();
    check(&c, &e, &y);
}

#[test]
fn a_poor_reciprocal_still_gives_the_division() {
    if !avx512() {
        return;
    }
    let mut rng = Rng(99);
    let c: Vec<f64> = (0..N).map(|_| rng.log_uniform(1e-2, 1e5)).collect();
    let e: Vec<f64> = (0..N).map(|_| rng.log_uniform(1e-2, 1e5)).collect();
    // Off by up to a part in a thousand, or the reciprocal of a neighbour: a wrong `y` costs
    // the division, never the bits.
    let y: Vec<f64> = e
        .iter()
        .enumerate()
        .map(|(i, e)| match i % 3 {
            0 => (1.0 + (rng.unit() - 0.5) * 2e-3) / e,
            1 => f64::from_bits((1.0 / e).to_bits() + 3),
            _ => 1.0 / (e * 1.5),
        })
        .collect();
    check(&c, &e, &y);
}

#[test]
fn the_proof_vouches_for_the_quotient_only() {
    if !avx512() {
        return;
    }
    // Candidates a few units in the last place either side of the true quotient, at random
    // and at the edges of binades: the proof may refuse the right one (the division then
    // settles it) but must never vouch for a wrong one.
    let mut rng = Rng(2024);
    let (mut c, mut e, mut q) = (vec![], vec![], vec![]);
    for i in 0..N {
        let entry = rng.log_uniform(1e-3, 1e6);
        let close = if i % 2 == 0 {
            rng.log_uniform(1e-3, 1e6)
        } else {
            let k = [1.0, 2.0, 0.25][i % 3];
            let steps = (rng.next() % 5) as i64 - 2;
            f64::from_bits((entry * k).to_bits().wrapping_add_signed(steps))
        };
        let offset = (i % 5) as i64 - 2;
        c.push(close);
        e.push(entry);
        q.push(f64::from_bits(
            (close / entry).to_bits().wrapping_add_signed(offset),
        ));
    }
    // SAFETY: only where the CPU has AVX-512F (checked above).
    let vouched = unsafe { proofs_avx512(&c, &e, &q) };
    let mut right = 0;
    for i in 0..N {
        let truth = c[i] / e[i];
        if vouched[i] {
            assert_eq!(
                q[i].to_bits(),
                truth.to_bits(),
                "vouched for {:e} as {:e} / {:e}, which is {:e}",
                q[i],
                c[i],
                e[i],
                truth
            );
        }
        right += usize::from(q[i] == truth && vouched[i]);
    }
    // A fifth of the candidates are the quotient; the proof accepts nearly all of them.
    assert!(
        right > N / 5 * 99 / 100,
        "vouched for {right} of {} true quotients",
        N / 5
    );
}
