//! The built-in data: window derivation, parameter grids and the deterministic GBM generator.
//! The generator uses only IEEE-exact operations (+, -, *, /, sqrt) so every machine makes the same bytes.

use crate::detmath::{EXP_BLOCK, exp_block, ln_block};
#[cfg(test)]
use crate::detmath::{det_exp, det_ln};
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

/// Geometric Brownian motion: `close[0] = 100`, `close[i] = close[i-1] * exp(sigma*z - sigma^2/2)`.
///
/// Deterministic on every IEEE-754 machine: xoshiro256** seeded by SplitMix64, normals by the
/// Marsaglia polar method, and `exp`/`ln` evaluated here by fixed polynomials rather than the
/// platform's libm (whose last-bit rounding differs between systems).
pub fn gbm(bars: usize, seed: u64, sigma: f64) -> Result<Vec<f64>, KernelError> {
    let bad = |detail: String| Err(KernelError::BadGenerator { detail });
    if bars == 0 {
        return bad("bars = 0: the series needs at least one bar".to_string());
    }
    if !(sigma.is_finite() && (0.0..=1.0).contains(&sigma)) {
        return bad(format!("sigma = {sigma} must be in [0, 1]"));
    }
    let mut rng = Normal::new(seed);
    let drift = sigma * sigma / 2.0;
    let mut close = Vec::with_capacity(bars);
    let mut price = 100.0;
    close.push(price);
    let mut factors = [0.0; EXP_BLOCK];
    while close.len() < bars {
        let factors = &mut factors[..(bars - close.len()).min(EXP_BLOCK)];
        growth_factors(&mut rng, sigma, drift, factors);
        for &g in factors.iter() {
            price *= g;
            if !(price.is_finite() && price > 0.0) {
                let i = close.len();
                return bad(format!(
                    "sigma = {sigma} is too large for {bars} bars: the price left the f64 range at bar {i}"
                ));
            }
            close.push(price);
        }
    }
    Ok(close)
}

/// [`gbm`] in pieces, for series too long to hold: [`GbmStream::fill`] writes the next bars,
/// and the concatenation of the pieces is `gbm(total, seed, sigma)` bit for bit.
#[derive(Clone, Debug)]
pub struct GbmStream {
    rng: Normal,
    sigma: f64,
    drift: f64,
    price: f64,
    /// Bars written so far.
    bars: u64,
}

impl GbmStream {
    /// The generator of [`gbm`] before its first bar; `sigma` as [`gbm`] checks it.
    pub fn new(seed: u64, sigma: f64) -> Result<Self, KernelError> {
        if !(sigma.is_finite() && (0.0..=1.0).contains(&sigma)) {
            return Err(KernelError::BadGenerator {
                detail: format!("sigma = {sigma} must be in [0, 1]"),
            });
        }
        Ok(GbmStream {
            rng: Normal::new(seed),
            sigma,
            drift: sigma * sigma / 2.0,
            price: 100.0,
            bars: 0,
        })
    }

    /// Writes the next `out.len()` bars; the same check and error as [`gbm`] on a price that
    /// leaves the f64 range.
    pub fn fill(&mut self, out: &mut [f64]) -> Result<(), KernelError> {
        let mut factors = [0.0; EXP_BLOCK];
        // The first bar is the starting price, drawn from no normal.
        let first = usize::from(self.bars == 0).min(out.len());
        if first == 1 {
            out[0] = self.price;
            self.bars = 1;
        }
        for block in out[first..].chunks_mut(EXP_BLOCK) {
            let factors = &mut factors[..block.len()];
            growth_factors(&mut self.rng, self.sigma, self.drift, factors);
            for (o, &g) in block.iter_mut().zip(factors.iter()) {
                self.price *= g;
                if !(self.price.is_finite() && self.price > 0.0) {
                    return Err(KernelError::BadGenerator {
                        detail: format!(
                            "sigma = {} is too large: the price left the f64 range at bar {}",
                            self.sigma, self.bars
                        ),
                    });
                }
                *o = self.price;
                self.bars += 1;
            }
        }
        Ok(())
    }
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

/// The next `out.len()` bars' growth factors `exp(sigma z - drift)`, `z` the next normals: the
/// normals drawn in order, then their exponentials a block at a time ([`exp_block`]: the bits
/// of [`det_exp`] one by one, but independent divisions side by side rather than a chain).
fn growth_factors(rng: &mut Normal, sigma: f64, drift: f64, out: &mut [f64]) {
    rng.fill(out);
    for x in out.iter_mut() {
        *x = sigma * *x - drift;
    }
    exp_block(out);
}

/// Standard normals from xoshiro256** by the polar method (pairs, the second one cached).
#[derive(Clone, Debug)]
struct Normal {
    s: [u64; 4],
    spare: Option<f64>,
}

impl Normal {
    fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut splitmix = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Normal {
            s: [splitmix(), splitmix(), splitmix(), splitmix()],
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The next `out.len()` (at most [`EXP_BLOCK`]) normals, the bits of as many [`Self::next`]:
    /// the accepted pairs drawn in order, then their logarithms side by side ([`ln_block`]).
    fn fill(&mut self, out: &mut [f64]) {
        debug_assert!(out.len() <= EXP_BLOCK);
        let first = match (out.is_empty(), self.spare.take()) {
            (false, Some(z)) => {
                out[0] = z;
                1
            }
            (_, spare) => {
                self.spare = spare;
                0
            }
        };
        let out = &mut out[first..];
        let pairs = out.len().div_ceil(2);
        let (mut u, mut v, mut s) = ([0.0; EXP_BLOCK], [0.0; EXP_BLOCK], [0.0; EXP_BLOCK]);
        for i in 0..pairs {
            (u[i], v[i], s[i]) = self.accepted();
        }
        let mut ln = s;
        ln_block(&mut ln[..pairs]);
        for i in 0..pairs {
            let f = (-2.0 * ln[i] / s[i]).sqrt();
            out[2 * i] = u[i] * f;
            match out.get_mut(2 * i + 1) {
                Some(o) => *o = v[i] * f,
                None => self.spare = Some(v[i] * f),
            }
        }
    }

    /// The next pair `(u, v)` inside the unit circle (not at its centre), with `s = u² + v²`.
    fn accepted(&mut self) -> (f64, f64, f64) {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return (u, v, s);
            }
        }
    }

    #[cfg(test)]
    fn next(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * det_ln(s) / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }
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

    #[test]
    fn normals_look_normal() {
        let mut rng = Normal::new(7);
        let n = 200_000;
        let z: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.01, "var {var}");
    }

    /// The golden checksum: if this moves, every fixture and report built on the default data is stale.
    #[test]
    fn default_series_is_pinned() {
        let close = default_close();
        assert_eq!(close.len(), DEFAULT_BARS);
        assert_eq!(close[0], 100.0);
        assert_eq!(
            fnv1a64(&close),
            GOLDEN_DEFAULT_FNV,
            "default series drifted"
        );
        assert_eq!(close[1].to_bits(), GOLDEN_BAR1_BITS);
        assert_eq!(close[DEFAULT_BARS - 1].to_bits(), GOLDEN_LAST_BITS);
    }

    #[test]
    fn generator_refuses_bad_arguments() {
        assert!(gbm(0, 1, 0.001).is_err());
        assert!(gbm(10, 1, -0.1).is_err());
        assert!(gbm(10, 1, f64::NAN).is_err());
        let e = gbm(150_000, 1, 1.0).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        assert_eq!(gbm(5, 9, 0.0).unwrap(), vec![100.0; 5]);
    }

    const GOLDEN_DEFAULT_FNV: u64 = 0x23d1_1bfd_93b8_b606;
    const GOLDEN_BAR1_BITS: u64 = 0x4058_fb59_c6a1_1810;
    const GOLDEN_LAST_BITS: u64 = 0x4052_b7b9_c80c_c955;

    #[test]
    fn gbm_in_pieces_is_gbm() {
        let whole = gbm(5000, 42, 0.01).unwrap();
        let mut g = GbmStream::new(42, 0.01).unwrap();
        let mut pieces = Vec::new();
        for len in [1, 2, 997, 0, 3000, 1000] {
            let mut buf = vec![0.0; len];
            g.fill(&mut buf).unwrap();
            pieces.extend(buf);
        }
        assert_eq!(fnv1a64(&pieces), fnv1a64(&whole));
        assert!(GbmStream::new(1, 2.0).is_err());
    }
}
