//! `live`, the certification threshold of every combo, by `rolling`'s own `Plan::threshold`,
//! recomputed only when the scale `M` of a combo's reach moves past a coarse step.
//!
//! `M` may be any bound on |close| over the reach: a larger one only certifies less. So each
//! combo's threshold is taken at `M` rounded up to three significant bits, and changes only when
//! that rounded value does (on a trending series, a few times per doubling of the price), which
//! keeps the per-bar work per combo to one compare.

use super::scale::Scale;
use crate::rolling::certify::Plan;

/// Combos whose reach spans the same number of blocks share one `M`.
#[derive(Clone, Debug)]
struct Class {
    blocks: usize,
    /// The rounded `M` the thresholds of its combos were last taken at (NaN: never).
    m: f64,
    combos: Vec<u32>,
}

/// Every fast combo's plan and the classes that share an `M`.
#[derive(Clone, Debug)]
pub(super) struct Thresholds {
    plans: Vec<Option<Plan>>,
    classes: Vec<Class>,
    /// The negative control: every threshold 0 (the tests show that events then differ).
    #[cfg(test)]
    pub(super) zero: bool,
}

/// `m >= 0` rounded up to four significant bits (never below it; `+inf` past the largest finite
/// value, which then certifies nothing). Subnormals keep four bits of their own, so the bound
/// at the bottom of the range stays as tight as there.
pub(super) fn coarse(m: f64) -> f64 {
    let bits = m.to_bits();
    // Normal: the implicit bit and three of the 52 stored; subnormal: the top four set bits.
    let shift = if bits >> 52 != 0 {
        49
    } else {
        (64 - bits.leading_zeros()).saturating_sub(4)
    };
    let low = (1u64 << shift) - 1;
    f64::from_bits((bits + low) & !low)
}

impl Thresholds {
    /// `plans[k]` is combo `k`'s plan (`None`: never certified), `blocks[k]` its reach in blocks.
    pub(super) fn new(plans: Vec<Option<Plan>>, blocks: &[usize]) -> Self {
        let mut classes: Vec<Class> = Vec::new();
        for (k, p) in plans.iter().enumerate() {
            if p.is_none() {
                continue;
            }
            match classes.iter_mut().find(|c| c.blocks == blocks[k]) {
                Some(c) => c.combos.push(k as u32),
                None => classes.push(Class {
                    blocks: blocks[k],
                    m: f64::NAN,
                    combos: vec![k as u32],
                }),
            }
        }
        Thresholds {
            plans,
            classes,
            #[cfg(test)]
            zero: false,
        }
    }

    /// After a bar: for each class whose rounded `M` moved, `set(k, threshold)` for its combos.
    #[inline]
    pub(super) fn update(&mut self, scale: &Scale, mut set: impl FnMut(usize, f64)) {
        for class in &mut self.classes {
            let m = coarse(scale.max(class.blocks));
            if m.to_bits() == class.m.to_bits() {
                continue;
            }
            class.m = m;
            for &k in &class.combos {
                let plan = self.plans[k as usize]
                    .as_ref()
                    .expect("a class holds fast combos");
                let thr = plan.threshold(m);
                #[cfg(test)]
                let thr = if self.zero { 0.0 } else { thr };
                set(k as usize, thr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::coarse;

    #[test]
    fn coarse_is_an_upper_bound_within_an_eighth() {
        let mut x = f64::from_bits(1);
        while x < 1e300 {
            for v in [x, x * 1.0001, x * 1.3, x * 1.9999] {
                let c = coarse(v);
                assert!(c >= v, "{v:e} -> {c:e}");
                // 4 significant bits: at most 1/8 above (and exact for the smallest subnormals).
                assert!(c <= v * 1.125 || v < 1e-320, "{v:e} -> {c:e}");
            }
            x *= 3.7;
        }
        assert_eq!(coarse(0.0), 0.0);
        assert_eq!(coarse(f64::MAX), f64::INFINITY);
        assert_eq!(coarse(1.0), 1.0);
    }
}
