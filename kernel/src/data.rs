//! The built-in data: window derivation, parameter grids, the default series and the checksum
//! that pins generated data (the generator itself is `gbm.rs`).

use crate::gbm::gbm;
use crate::{Combo, KernelError};
use std::fmt;
use std::str::FromStr;

/// Bars of the built-in series ([`default_close`]).
pub const DEFAULT_BARS: usize = 150_000;
/// Seed of the built-in series.
pub const DEFAULT_SEED: u64 = 42;
/// Per-bar volatility of the built-in series (the GBM's sigma).
pub const DEFAULT_SIGMA: f64 = 0.001;
/// The default grid: 80 lengths from 6 to 200.
pub const DEFAULT_GRID: GridSpec = GridSpec {
    lo: 6,
    hi: 200,
    k: 80,
};

/// The six windows the spec derives from one grid length `L` (both indicators from `L`).
pub fn derive_windows(l: i64) -> Combo {
    derive_windows2(l, l)
}

/// The six windows of a two-axis grid point: windows 0-2 (the HMA) from `l`, windows 3-5 (the
/// HMA3) from `l3`, each by the spec's derivation; `derive_windows2(l, l) == derive_windows(l)`.
pub fn derive_windows2(l: i64, l3: i64) -> Combo {
    let sqrt = if l > 0 { l.isqrt().max(1) } else { 1 };
    [
        l,
        (l / 2).max(1),
        sqrt,
        l3,
        (l3 / 2).max(1),
        (l3 / 3).max(1),
    ]
}

/// `k` lengths spread evenly over `[lo, hi]` (rounded half up), written `LO:HI:K`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSpec {
    /// The shortest HMA length (`LO`).
    pub lo: i64,
    /// The longest HMA length (`HI`).
    pub hi: i64,
    /// How many lengths (`K`).
    pub k: usize,
}

impl GridSpec {
    /// The grid lengths `L_j = lo + round((hi - lo) * j / (k - 1))`, `j = 0..k`.
    ///
    /// Refuses what [`GridSpec::problems`] finds, so a grid built as a struct literal is held to
    /// the same rules as one parsed from `LO:HI:K`.
    pub fn lengths(&self) -> Result<Vec<i64>, KernelError> {
        let problems = grid_problems(Some(self.lo), Some(self.hi), i128::try_from(self.k).ok());
        if !problems.is_empty() {
            return Err(KernelError::BadGrid {
                detail: problems.join("; "),
            });
        }
        if self.k == 1 {
            return Ok(vec![self.lo]);
        }
        // Integer arithmetic: round-half-up of span*j/(k-1) without float rounding questions.
        let span = i128::from(self.hi - self.lo);
        let den = self.k as i128 - 1;
        Ok((0..self.k as i128)
            .map(|j| self.lo + ((2 * span * j + den) / (2 * den)) as i64)
            .collect())
    }

    /// Every problem of this spec, in the words every front end shows (empty when it is valid).
    pub fn problems(&self) -> Vec<String> {
        grid_problems(Some(self.lo), Some(self.hi), i128::try_from(self.k).ok())
    }
}

/// The grid rules, checked all at once so an error lists every problem: `LO >= 1`, `HI >= LO`,
/// `K >= 1`, and `K` no larger than the integers in `[LO, HI]` (more would repeat lengths, and
/// with them whole combos). `None` is a part that did not parse (already reported).
fn grid_problems(lo: Option<i64>, hi: Option<i64>, k: Option<i128>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(lo) = lo.filter(|&lo| lo < 1) {
        problems.push(format!("LO = {lo} must be >= 1"));
    }
    if let (Some(lo), Some(hi)) = (lo, hi)
        && hi < lo
    {
        problems.push(format!("HI = {hi} must be >= LO = {lo}"));
    }
    match k {
        Some(k) if k < 1 => problems.push(format!("K = {k} must be >= 1")),
        Some(k) => {
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let room = i128::from(hi) - i128::from(lo) + 1;
                if room >= 1 && k > room {
                    problems.push(format!(
                        "K = {k} lengths do not fit in [{lo}, {hi}], which holds {room} \
                         integer(s), so lengths and combos would repeat; use K <= {room}"
                    ));
                }
            }
        }
        None => {}
    }
    problems
}

impl fmt::Display for GridSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.lo, self.hi, self.k)
    }
}

impl FromStr for GridSpec {
    type Err = KernelError;

    /// Parses `LO:HI:K`, reporting every problem at once (the CLI, Python and the Ray CLI all
    /// show these words).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |detail: String| KernelError::BadGrid { detail };
        let parts: Vec<&str> = s.split(':').collect();
        let [lo, hi, k] = parts[..] else {
            return Err(bad(format!(
                "expected three parts LO:HI:K (for example 6:200:80), got {} in {s:?}",
                parts.len()
            )));
        };
        let mut problems = Vec::new();
        let mut int = |name: &str, text: &str| match text.trim().parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                problems.push(format!("{name} = {text:?} is not an integer"));
                None
            }
        };
        let (lo, hi, k) = (int("LO", lo), int("HI", hi), int("K", k));
        problems.extend(grid_problems(lo, hi, k.map(i128::from)));
        match (lo, hi, k) {
            (Some(lo), Some(hi), Some(k)) if problems.is_empty() => {
                let k = usize::try_from(k).map_err(|_| bad(format!("K = {k} is too large")))?;
                let spec = GridSpec { lo, hi, k };
                spec.lengths()?;
                Ok(spec)
            }
            _ => Err(bad(problems.join("; "))),
        }
    }
}

/// Expands a grid spec into combos with [`derive_windows`].
pub fn grid(spec: GridSpec) -> Result<Vec<Combo>, KernelError> {
    Ok(spec.lengths()?.into_iter().map(derive_windows).collect())
}

/// Every pair of an HMA length from `hma` and an HMA3 length from `hma3`, HMA length outer:
/// combo `i * hma3.k + j` is `derive_windows2(L_i, L3_j)`.
pub fn grid2(hma: GridSpec, hma3: GridSpec) -> Result<Vec<Combo>, KernelError> {
    let (ls, l3s) = (hma.lengths()?, hma3.lengths()?);
    Ok(ls
        .iter()
        .flat_map(|&l| l3s.iter().map(move |&l3| derive_windows2(l, l3)))
        .collect())
}

/// A sweep's grid as a researcher gives it: the HMA lengths, and optionally the HMA3 lengths
/// swept independently (two axes); without them one length sets both indicators (one axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// `--grid`: the HMA lengths (windows 0-2), and the HMA3's too on a one-axis grid.
    pub hma: GridSpec,
    /// `--grid3`: the HMA3 lengths (windows 3-5) of a two-axis grid.
    pub hma3: Option<GridSpec>,
}

impl Grid {
    /// The combos, in the order [`grid`] or [`grid2`] gives them.
    pub fn combos(&self) -> Result<Vec<Combo>, KernelError> {
        match self.hma3 {
            None => grid(self.hma),
            Some(hma3) => grid2(self.hma, hma3),
        }
    }

    /// The lengths along each axis: `(HMA lengths, Some(HMA3 lengths))` on a two-axis grid.
    pub fn axes(&self) -> Result<(Vec<i64>, Option<Vec<i64>>), KernelError> {
        Ok((
            self.hma.lengths()?,
            self.hma3.map(|g| g.lengths()).transpose()?,
        ))
    }
}

/// The default 80-combo grid.
pub fn default_params() -> Vec<Combo> {
    grid(DEFAULT_GRID).expect("the default grid is valid")
}

/// The default 150,000-bar series (seed 42, sigma 0.001).
pub fn default_close() -> Vec<f64> {
    gbm(DEFAULT_BARS, DEFAULT_SEED, DEFAULT_SIGMA).expect("the default series is valid")
}

/// FNV-1a over the little-endian bytes of a series: the golden checksum of generated data.
pub fn fnv1a64(values: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grid_matches_spec() {
        let lengths = DEFAULT_GRID.lengths().unwrap();
        assert_eq!(lengths.len(), 80);
        assert_eq!(&lengths[..3], &[6, 8, 11]);
        assert_eq!(*lengths.last().unwrap(), 200);
        for (k, l) in lengths.iter().enumerate() {
            let want = (6.0 + 194.0 * k as f64 / 79.0).round() as i64;
            assert_eq!(*l, want, "k = {k}");
        }
        assert_eq!(derive_windows(200), [200, 100, 14, 200, 100, 66]);
        assert_eq!(derive_windows(1), [1, 1, 1, 1, 1, 1]);
        assert_eq!(derive_windows(16), [16, 8, 4, 16, 8, 5]);
    }

    #[test]
    fn grid_parse_errors_name_the_input() {
        assert_eq!("6:200:80".parse::<GridSpec>().unwrap(), DEFAULT_GRID);
        for bad in [
            "6:200",
            "a:200:80",
            "6:2:80",
            "0:10:3",
            "6:200:0",
            "6:200:80:1",
        ] {
            let e = bad.parse::<GridSpec>().unwrap_err().to_string();
            assert!(e.starts_with("bad grid"), "{bad}: {e}");
        }
        let e = "6:200:x".parse::<GridSpec>().unwrap_err().to_string();
        assert!(e.contains("K = \"x\" is not an integer"), "{e}");
        // Every problem at once.
        let e = "0:x:0".parse::<GridSpec>().unwrap_err().to_string();
        for want in ["LO = 0 must be >= 1", "HI = \"x\"", "K = 0 must be >= 1"] {
            assert!(e.contains(want), "{e}");
        }
    }

    /// More lengths than integers in `[LO, HI]` would repeat combos: refused when parsed and
    /// when built as a literal, with the same words.
    #[test]
    fn grids_refuse_repeated_lengths() {
        let e = "6:10:20".parse::<GridSpec>().unwrap_err().to_string();
        assert!(e.contains("K = 20") && e.contains("use K <= 5"), "{e}");
        let literal = GridSpec {
            lo: 6,
            hi: 10,
            k: 20,
        };
        assert_eq!(literal.lengths().unwrap_err().to_string(), e);
        assert!(grid(literal).is_err());
        assert_eq!(
            "6:10:5".parse::<GridSpec>().unwrap().lengths().unwrap(),
            [6, 7, 8, 9, 10]
        );
        assert_eq!("7:7:1".parse::<GridSpec>().unwrap().lengths().unwrap(), [7]);
    }

    #[test]
    fn two_axis_grids_pair_every_length() {
        let hma: GridSpec = "10:30:3".parse().unwrap();
        let hma3: GridSpec = "4:8:2".parse().unwrap();
        let combos = grid2(hma, hma3).unwrap();
        assert_eq!(combos.len(), 6);
        assert_eq!(combos[0], [10, 5, 3, 4, 2, 1]);
        assert_eq!(combos[1], [10, 5, 3, 8, 4, 2]);
        assert_eq!(combos[5], [30, 15, 5, 8, 4, 2]);
        for l in 1..300 {
            assert_eq!(derive_windows2(l, l), derive_windows(l));
        }
        let one = Grid { hma, hma3: None };
        assert_eq!(one.combos().unwrap(), grid(hma).unwrap());
        let two = Grid {
            hma,
            hma3: Some(hma3),
        };
        assert_eq!(two.combos().unwrap(), combos);
        assert_eq!(two.axes().unwrap(), (vec![10, 20, 30], Some(vec![4, 8])));
        let bad = GridSpec { lo: 3, hi: 4, k: 3 };
        assert!(grid2(hma, bad).is_err() && grid2(bad, hma3).is_err());
    }
}
