//! The machine's ceilings for the lab's roofline (the `breakdown` section): the peak f64 flop
//! rate of one core, per instruction set and per kind of arithmetic, measured with independent
//! accumulator chains; the bandwidth of one core's streaming read, from memory (a buffer several
//! times the last-level cache) and from a buffer the size of the series a sweep re-reads; and the
//! cache sizes the OS reports.

use std::hint::black_box;
use std::time::Instant;

/// The arithmetic a peak is measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A multiply then an add, two instructions and two roundings: what every kernel does, since
    /// one rounding (a fused multiply-add) would change its bits.
    MulAdd,
    /// A fused multiply-add: one instruction, two flops, one rounding.
    Fma,
    /// A division: one instruction, one flop, the slowest of them; the bar returns divide a
    /// close by an entry price at every bar of every combo (docs/research.md, "Speed").
    Div,
}

impl Op {
    /// Flops of one step of a chain.
    fn flops(self) -> usize {
        match self {
            Op::MulAdd | Op::Fma => 2,
            Op::Div => 1,
        }
    }
}

/// The instruction set a peak is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// What the portable build gets with no run-time dispatch: SSE2 (2 lanes) on x86-64, NEON
    /// (2 lanes) on aarch64, plain loops auto-vectorised by LLVM.
    Baseline,
    /// x86-64 AVX2 (4 lanes), and FMA for [`Op::Fma`]; chosen at run time.
    Avx2,
    /// x86-64 AVX-512F (8 lanes); chosen at run time.
    Avx512,
}

impl Isa {
    /// Lanes of f64 per vector.
    pub fn lanes(self) -> usize {
        match self {
            Isa::Baseline => 2,
            Isa::Avx2 => 4,
            Isa::Avx512 => 8,
        }
    }

    /// The name reports use.
    pub fn name(self) -> String {
        match self {
            Isa::Baseline if cfg!(target_arch = "x86_64") => "SSE2 (baseline)".into(),
            Isa::Baseline if cfg!(target_arch = "aarch64") => "NEON (baseline)".into(),
            Isa::Baseline => format!("{} baseline", std::env::consts::ARCH),
            Isa::Avx2 => "AVX2".into(),
            Isa::Avx512 => "AVX-512".into(),
        }
    }

    /// The instruction sets this CPU runs, baseline first.
    pub fn available() -> Vec<Isa> {
        let mut out = vec![Isa::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                out.push(Isa::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                out.push(Isa::Avx512);
            }
        }
        out
    }

    /// Whether this CPU has a fused multiply-add in this instruction set (x86-64 baseline has
    /// none: `f64::mul_add` there is a library call; aarch64's baseline has one).
    pub fn has_fma(self) -> bool {
        match self {
            Isa::Baseline => cfg!(target_arch = "aarch64"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 | Isa::Avx512 => std::arch::is_x86_feature_detected!("fma"),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }
}

/// One measured peak.
#[derive(Clone, Copy, Debug)]
pub struct Peak {
    /// The instruction set.
    pub isa: Isa,
    /// The arithmetic.
    pub op: Op,
    /// f64 flops per second on one core: the best of the samples (preemption only lowers a rate).
    pub flops: f64,
}

/// Independent accumulator chains per measurement, in vectors: enough to cover the latency of a
/// multiply and an add (or an FMA) on two ports, few enough to stay in the 16 registers of
/// SSE2 and AVX2 with the two constants.
const CHAINS: usize = 12;

/// `CHAINS` chains, each `x = step(x)` `iters` times, kept in twelve variables (a loop over an
/// array of them is vectorised across the chains, with gathers and scatters, instead of keeping
/// each chain in a register); `sum` reduces each chain to a number, so nothing is optimised away.
macro_rules! twelve {
    ($iters:expr, $init:expr, |$x:ident| $step:expr, |$v:ident| $sum:expr) => {{
        let init = $init;
        let (mut c0, mut c1, mut c2, mut c3) = (init(0), init(1), init(2), init(3));
        let (mut c4, mut c5, mut c6, mut c7) = (init(4), init(5), init(6), init(7));
        let (mut c8, mut c9, mut c10, mut c11) = (init(8), init(9), init(10), init(11));
        for _ in 0..$iters {
            c0 = {
                let $x = c0;
                $step
            };
            c1 = {
                let $x = c1;
                $step
            };
            c2 = {
                let $x = c2;
                $step
            };
            c3 = {
                let $x = c3;
                $step
            };
            c4 = {
                let $x = c4;
                $step
            };
            c5 = {
                let $x = c5;
                $step
            };
            c6 = {
                let $x = c6;
                $step
            };
            c7 = {
                let $x = c7;
                $step
            };
            c8 = {
                let $x = c8;
                $step
            };
            c9 = {
                let $x = c9;
                $step
            };
            c10 = {
                let $x = c10;
                $step
            };
            c11 = {
                let $x = c11;
                $step
            };
        }
        let mut total = 0.0;
        for $v in [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11] {
            total += $sum;
        }
        total
    }};
}

/// The baseline: plain Rust on pairs of lanes, which LLVM turns into 2-lane vector instructions
/// (SSE2 on x86-64, NEON on aarch64) with no run-time dispatch; x86-64 has no fused multiply-add
/// at its baseline ([`Isa::has_fma`]).
fn baseline(iters: u64, m: f64, a: f64, op: Op) -> f64 {
    let step = |x: f64| match op {
        Op::MulAdd => x * m + a,
        Op::Fma => x.mul_add(m, a),
        Op::Div => x / m,
    };
    twelve!(
        iters,
        |c: usize| [1.0 + c as f64 * 1e-3, 1.0 - c as f64 * 1e-3],
        |x| [step(x[0]), step(x[1])],
        |v| v[0] + v[1]
    )
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Op;

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx,avx2,fma")]
    pub(super) unsafe fn avx2(iters: u64, m: f64, a: f64, op: Op) -> f64 {
        let (mv, av) = (_mm256_set1_pd(m), _mm256_set1_pd(a));
        let init = |c: usize| _mm256_set1_pd(1.0 + c as f64 * 1e-3);
        let sum = |v: __m256d| {
            let x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
            _mm_cvtsd_f64(x) + _mm_cvtsd_f64(_mm_unpackhi_pd(x, x))
        };
        match op {
            Op::Fma => twelve!(iters, init, |x| _mm256_fmadd_pd(x, mv, av), |v| sum(v)),
            Op::MulAdd => twelve!(
                iters,
                init,
                |x| _mm256_add_pd(_mm256_mul_pd(x, mv), av),
                |v| sum(v)
            ),
            Op::Div => twelve!(iters, init, |x| _mm256_div_pd(x, mv), |v| sum(v)),
        }
    }

    /// # Safety
    /// The CPU must support AVX-512F and FMA.
    #[target_feature(enable = "avx512f,fma")]
    pub(super) unsafe fn avx512(iters: u64, m: f64, a: f64, op: Op) -> f64 {
        let (mv, av) = (_mm512_set1_pd(m), _mm512_set1_pd(a));
        let init = |c: usize| _mm512_set1_pd(1.0 + c as f64 * 1e-3);
        match op {
            Op::Fma => twelve!(iters, init, |x| _mm512_fmadd_pd(x, mv, av), |v| {
                _mm512_reduce_add_pd(v)
            }),
            Op::MulAdd => twelve!(
                iters,
                init,
                |x| _mm512_add_pd(_mm512_mul_pd(x, mv), av),
                |v| _mm512_reduce_add_pd(v)
            ),
            Op::Div => twelve!(iters, init, |x| _mm512_div_pd(x, mv), |v| {
                _mm512_reduce_add_pd(v)
            }),
        }
    }
}

/// Runs the chains for `isa`; `None` when this CPU lacks it (or its FMA, for [`Op::Fma`]).
fn run(isa: Isa, op: Op, iters: u64) -> Option<f64> {
    if op == Op::Fma && !isa.has_fma() {
        return None;
    }
    // Constants the compiler cannot see: the multiply-add chains converge to a / (1 - m) = 1,
    // the division chains grow by a factor 1 + 1e-9 a step: no subnormals, no overflow.
    let (m, a) = (black_box(1.0 - 1e-9), black_box(1e-9));
    match isa {
        Isa::Baseline => Some(baseline(iters, m, a, op)),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if std::arch::is_x86_feature_detected!("avx2") && isa.has_fma() => {
            // SAFETY: the CPU has AVX2 and FMA, checked on the line above.
            Some(unsafe { x86::avx2(iters, m, a, op) })
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 if std::arch::is_x86_feature_detected!("avx512f") && isa.has_fma() => {
            // SAFETY: the CPU has AVX-512F and FMA, checked on the line above.
            Some(unsafe { x86::avx512(iters, m, a, op) })
        }
        _ => None,
    }
}

/// The peak of `isa` and `op` on this core: `samples` runs of about `secs` each, the best kept.
/// `None` when the CPU lacks the instruction set.
pub fn peak(isa: Isa, op: Op, secs: f64, samples: usize) -> Option<Peak> {
    let flops_per_iter = (op.flops() * CHAINS * isa.lanes()) as f64;
    // Calibrate: double the steps until one run takes a tenth of the target.
    let mut iters = 1_000u64;
    loop {
        let t = Instant::now();
        black_box(run(isa, op, iters)?);
        let dt = t.elapsed().as_secs_f64();
        if dt >= secs / 10.0 || iters >= 1 << 40 {
            iters = ((iters as f64) * secs / dt.max(1e-9)).max(1.0) as u64;
            break;
        }
        iters *= 2;
    }
    let mut best: f64 = 0.0;
    for _ in 0..samples.max(1) {
        let t = Instant::now();
        black_box(run(isa, op, iters)?);
        best = best.max(flops_per_iter * iters as f64 / t.elapsed().as_secs_f64());
    }
    Some(Peak {
        isa,
        op,
        flops: best,
    })
}

/// Every peak this CPU has: each instruction set, multiply-add, (where it exists) FMA, and
/// division.
pub fn peaks(secs: f64, samples: usize) -> Vec<Peak> {
    let mut out = Vec::new();
    for isa in Isa::available() {
        for op in [Op::MulAdd, Op::Fma, Op::Div] {
            out.extend(peak(isa, op, secs, samples));
        }
    }
    out
}

/// One core's streaming read of `bytes` (rounded down to whole 256-byte blocks, at least one):
/// the buffer written once (its pages faulted in), then summed `passes` times with 32
/// independent accumulators, plain loops at the baseline instruction set. Bytes per second,
/// the best pass.
pub fn stream_read(bytes: usize, passes: usize) -> f64 {
    const BLOCK: usize = 32;
    let n = (bytes / 8 / BLOCK).max(1) * BLOCK;
    let buf: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let mut best: f64 = 0.0;
    for _ in 0..passes.max(1) {
        let t = Instant::now();
        let mut acc = [0.0f64; BLOCK];
        for chunk in black_box(&buf).chunks_exact(BLOCK) {
            for (a, &x) in acc.iter_mut().zip(chunk) {
                *a += x;
            }
        }
        black_box(acc);
        best = best.max((n * 8) as f64 / t.elapsed().as_secs_f64());
    }
    best
}

/// A cache the OS reports for CPU 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// 1, 2, 3, ...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Its size in bytes.
    pub bytes: usize,
}

/// The caches of CPU 0 from `/sys/devices/system/cpu/cpu0/cache` (Linux); empty elsewhere.
pub fn caches() -> Vec<Cache> {
    let mut out = Vec::new();
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let size = size.trim();
        let (num, unit) = size.split_at(
            size.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(size.len()),
        );
        let Ok(num) = num.parse::<usize>() else {
            continue;
        };
        let bytes = match unit {
            "K" => num << 10,
            "M" => num << 20,
            "G" => num << 30,
            _ => num,
        };
        if let Ok(level) = level.trim().parse() {
            out.push(Cache {
                level,
                kind: kind.trim().to_string(),
                bytes,
            });
        }
    }
    out
}

/// The largest data or unified cache of `level`, if the OS reports one.
pub fn cache_bytes(caches: &[Cache], level: u32) -> Option<usize> {
    caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .map(|c| c.bytes)
        .max()
}

/// The buffer a memory-bandwidth measurement reads: four times the last-level cache, between
/// 256 MiB and 2 GiB (256 MiB when the OS reports no cache).
pub fn dram_buffer_bytes(caches: &[Cache]) -> usize {
    let last = caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .max_by_key(|c| c.level)
        .map_or(0, |c| c.bytes);
    (4 * last).clamp(256 << 20, 2 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_and_bandwidths_are_measured_and_plausible() {
        let all = peaks(0.002, 1);
        for op in [Op::MulAdd, Op::Div] {
            assert!(all.iter().any(|p| p.isa == Isa::Baseline && p.op == op));
        }
        for p in &all {
            // Between 10 Mflop/s (a debug build on a loaded machine) and 10 Tflop/s per core.
            assert!(p.flops > 1e7 && p.flops < 1e13, "{p:?}");
        }
        let bw = stream_read(1 << 20, 2);
        assert!(bw > 1e7 && bw < 1e13, "{bw}");
        let c = vec![Cache {
            level: 3,
            kind: "Unified".into(),
            bytes: 32 << 20,
        }];
        assert_eq!(dram_buffer_bytes(&c), 256 << 20);
        assert_eq!(dram_buffer_bytes(&[]), 256 << 20);
        assert_eq!(cache_bytes(&c, 3), Some(32 << 20));
        assert_eq!(cache_bytes(&c, 2), None);
    }
}
