//! The CSCV splits: every choice of S/2 of the S folds as in-sample, in the order of Python's
//! `itertools.combinations(range(S), S/2)`, each as a bit mask of its folds (bit f = fold f).

use crate::error::ResearchError;
use crate::folds::check_fold_count;

/// The in-sample folds of every split, as bit masks, in `itertools.combinations` order
/// (lexicographic: `{0..S/2-1}` first, `{S/2..S-1}` last). Checked as
/// [`crate::check_fold_count`].
///
/// In this order split `C - 1 - i` is the complement of split `i` (its OOS is split `i`'s IS), a
/// property of lexicographic order on the half-size subsets that CSCV uses to evaluate each half
/// once for the two splits that share it (tested for every S up to 20).
pub fn splits(folds: usize) -> Result<Vec<u32>, ResearchError> {
    check_fold_count(folds)?;
    let k = folds / 2;
    let mut idx: Vec<usize> = (0..k).collect();
    let mut out = Vec::new();
    loop {
        out.push(idx.iter().fold(0u32, |m, &f| m | 1 << f));
        // The rightmost index that can still move right, as itertools does.
        let Some(i) = (0..k).rev().find(|&i| idx[i] != i + folds - k) else {
            return Ok(out);
        };
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// The folds of a mask, ascending.
pub fn folds_of(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |f| mask >> f & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_folds_give_itertools_order() {
        // combinations(range(4), 2): (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
        let want = [0b0011, 0b0101, 0b1001, 0b0110, 0b1010, 0b1100];
        assert_eq!(splits(4).unwrap(), want);
        assert_eq!(splits(2).unwrap(), [0b01, 0b10]);
        assert_eq!(folds_of(0b1010).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn split_c_minus_1_minus_i_is_the_complement_of_split_i() {
        for folds in (2..=20).step_by(2) {
            let s = splits(folds).unwrap();
            let c = s.len();
            assert_eq!(Some(c as u128), crate::folds::binomial(folds, folds / 2));
            let full = (1u32 << folds) - 1;
            for i in 0..c {
                assert_eq!(s[c - 1 - i], !s[i] & full, "S = {folds}, split {i}");
                assert_eq!(s[i].count_ones() as usize, folds / 2);
            }
            // Strictly increasing as sorted tuples: no split twice.
            let tuples: Vec<Vec<usize>> = s.iter().map(|&m| folds_of(m).collect()).collect();
            assert!(tuples.windows(2).all(|w| w[0] < w[1]), "S = {folds}");
        }
    }

    #[test]
    fn bad_fold_counts_are_named() {
        assert!(splits(0).unwrap_err().to_string().contains("got 0"));
        assert!(splits(5).unwrap_err().to_string().contains("got 5"));
        let e = splits(28).unwrap_err().to_string();
        assert!(e.contains("28 folds give 40116600 splits"), "{e}");
        let e = splits(2000).unwrap_err().to_string();
        assert!(e.contains("2000 folds give more than 10^38 splits"), "{e}");
    }
}
