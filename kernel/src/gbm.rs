//! The built-in series' generator: geometric Brownian motion from IEEE-exact operations only, so
//! every machine makes the same bytes; whole ([`gbm`]) or in pieces ([`GbmStream`]).

use crate::KernelError;
use crate::detmath::{EXP_BLOCK, exp_block, ln_block};

/// Geometric Brownian motion: `close[0] = 100`, `close[i] = close[i-1] * exp(sigma*z - sigma^2/2)`.
///
/// Deterministic on every IEEE-754 machine: xoshiro256** seeded by SplitMix64, normals by the
/// Marsaglia polar method, and `exp`/`ln` evaluated here by fixed polynomials rather than the
/// platform's libm (whose last-bit rounding differs between systems).
pub fn gbm(bars: usize, seed: u64, sigma: f64) -> Result<Vec<f64>, KernelError> {
    if bars == 0 {
        return Err(KernelError::BadGenerator {
            detail: "bars = 0: the series needs at least one bar".to_string(),
        });
    }
    let mut stream = GbmStream::new(seed, sigma)?;
    let mut close = vec![0.0; bars];
    stream.fill(&mut close)?;
    Ok(close)
}

/// [`gbm`] in pieces, for series too long to hold: [`GbmStream::fill`] writes the next bars,
/// and the concatenation of the pieces is `gbm(total, seed, sigma)` bit for bit.
///
/// Each piece is made in place in three passes: the normals' polar pairs drawn in order (the
/// random stream is serial), every pair's two growth factors `exp(sigma z - drift)` (independent
/// of each other: [`GbmStream::fill_with`] lets the caller share them among threads or compile
/// them for a wider instruction set), then the prices as a running product, in order.
#[derive(Clone, Debug)]
pub struct GbmStream {
    rng: Rng,
    sigma: f64,
    drift: f64,
    price: f64,
    /// Bars written so far.
    bars: u64,
    /// The growth factor of the last pair's second normal, when a piece ended between the two.
    spare: Option<f64>,
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
            rng: Rng::new(seed),
            sigma,
            drift: sigma * sigma / 2.0,
            price: 100.0,
            bars: 0,
            spare: None,
        })
    }

    /// Writes the next `out.len()` bars; refuses a `sigma` whose prices leave the f64 range,
    /// naming the bar.
    pub fn fill(&mut self, out: &mut [f64]) -> Result<(), KernelError> {
        self.fill_with(out, |pairs| pairs.factors())
    }

    /// [`fill`](Self::fill), with the growth factors left to `factors(pairs)`, which must turn
    /// the pairs into what [`Pairs::factors`] makes of them. Calling `Pairs::factors` on the
    /// parts of [`Pairs::split_at`] gives the same bits on any thread, and, since it is
    /// `#[inline(always)]`, inside any `#[target_feature]` function.
    pub fn fill_with(
        &mut self,
        out: &mut [f64],
        factors: impl FnOnce(Pairs<'_>),
    ) -> Result<(), KernelError> {
        let mut rest = out;
        if self.bars == 0 && !rest.is_empty() {
            // The first bar is the starting price, drawn from no normal.
            rest[0] = self.price;
            self.bars = 1;
            rest = &mut rest[1..];
        }
        let mut at = 0;
        if !rest.is_empty()
            && let Some(f) = self.spare.take()
        {
            rest[0] = f;
            at = 1;
        }
        // The pairs whose two factors both land in this piece, drawn where their factors go;
        // a last pair split by the piece's end keeps its second factor for the next piece.
        let whole = (rest.len() - at) / 2;
        let uv = &mut rest[at..at + 2 * whole];
        self.draw(uv);
        factors(self.pairs(uv));
        if at + 2 * whole < rest.len() {
            let mut last = [0.0; 2];
            self.draw(&mut last);
            self.pairs(&mut last).factors();
            rest[at + 2 * whole] = last[0];
            self.spare = Some(last[1]);
        }
        self.prices(rest)
    }

    fn pairs<'a>(&self, uv: &'a mut [f64]) -> Pairs<'a> {
        Pairs {
            uv,
            sigma: self.sigma,
            drift: self.drift,
        }
    }

    /// The next `uv.len() / 2` accepted polar pairs `(u, v)`, in the order the random stream
    /// gives them. Branch-free: about one candidate in five falls outside the unit circle, at
    /// random, so every candidate is written and only an accepted one moves the cursor on.
    fn draw(&mut self, uv: &mut [f64]) {
        debug_assert!(uv.len().is_multiple_of(2));
        let mut next = 0;
        while next < uv.len() {
            let u = 2.0 * self.rng.uniform() - 1.0;
            let v = 2.0 * self.rng.uniform() - 1.0;
            let s = u * u + v * v;
            uv[next] = u;
            uv[next + 1] = v;
            next += 2 * usize::from((s > 0.0) & (s < 1.0));
        }
    }

    /// Growth factors to prices in place: the running product, one bar after another.
    fn prices(&mut self, bars: &mut [f64]) -> Result<(), KernelError> {
        for o in bars {
            self.price *= *o;
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
        Ok(())
    }
}

/// Polar pairs `(u, v)` in bar order, as [`GbmStream::fill_with`] hands them out to be turned
/// into growth factors in place.
#[derive(Debug)]
pub struct Pairs<'a> {
    uv: &'a mut [f64],
    sigma: f64,
    drift: f64,
}

impl<'a> Pairs<'a> {
    /// How many pairs (each gives two bars).
    pub fn len(&self) -> usize {
        self.uv.len() / 2
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.uv.is_empty()
    }

    /// The first `mid` pairs and the rest.
    ///
    /// # Panics
    /// If `mid > self.len()`.
    pub fn split_at(self, mid: usize) -> (Self, Self) {
        let (sigma, drift) = (self.sigma, self.drift);
        let (a, b) = self.uv.split_at_mut(2 * mid);
        let part = |uv| Pairs { uv, sigma, drift };
        (part(a), part(b))
    }

    /// Each pair `(u, v)` becomes its two growth factors `exp(sigma z - drift)`, of the normals
    /// `z = u f`, `v f` with `f = sqrt(-2 ln(s) / s)` and `s = u² + v²`.
    #[inline(always)]
    pub fn factors(self) {
        const HALF: usize = EXP_BLOCK / 2;
        for block in self.uv.chunks_mut(EXP_BLOCK) {
            let (mut s, mut ln) = ([0.0; HALF], [0.0; HALF]);
            let pairs = block.len() / 2;
            for ((uv, s), ln) in block.chunks_exact(2).zip(&mut s).zip(&mut ln) {
                *s = uv[0] * uv[0] + uv[1] * uv[1];
                *ln = *s;
            }
            ln_block(&mut ln[..pairs]);
            for ((uv, s), ln) in block.chunks_exact_mut(2).zip(&s).zip(&ln) {
                let f = (-2.0 * ln / s).sqrt();
                uv[0] *= f;
                uv[1] *= f;
            }
            for x in block.iter_mut() {
                *x = self.sigma * *x - self.drift;
            }
            exp_block(block);
        }
    }
}

/// xoshiro256** seeded by SplitMix64, and the polar method's rejection step.
#[derive(Clone, Debug)]
struct Rng {
    s: [u64; 4],
}

impl Rng {
    fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut splitmix = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng {
            s: [splitmix(), splitmix(), splitmix(), splitmix()],
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

    /// The next pair `(u, v)` inside the unit circle (not at its centre), with `s = u² + v²`:
    /// the definition `GbmStream::draw` keeps to.
    #[cfg(test)]
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
}

#[cfg(test)]
mod tests;
