//! Core clock and FP-add latency, measured with dependent instruction chains (no perf needed),
//! so WMA timings can be read as cycles per window element and compared with the add latency.

use crate::kernels::WmaInto;
use crate::timing::median;
use std::time::Instant;

const CHAIN: u64 = 2_000_000;

/// Seconds for `CHAIN` iterations of 16 dependent integer adds (1-cycle latency each).
fn int_chain() -> f64 {
    let mut x: u64 = 0;
    let t = Instant::now();
    // SAFETY: pure register arithmetic on two locals; no memory, stack or flags contract beyond
    // what asm! assumes by default (flags are clobbered, which asm! permits without options).
    unsafe {
        std::arch::asm!(
            "2:",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) CHAIN => _,
            options(nostack, nomem),
        );
    }
    std::hint::black_box(x);
    t.elapsed().as_secs_f64()
}

/// Seconds for `CHAIN` iterations of 16 dependent `addsd` (the WMA accumulator's chain).
fn fadd_chain() -> f64 {
    let mut s: f64 = 0.0;
    let one: f64 = 1.0;
    let t = Instant::now();
    // SAFETY: register-only SSE2 arithmetic (baseline x86-64 has SSE2); no memory access.
    unsafe {
        std::arch::asm!(
            "2:",
            "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}",
            "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}",
            "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}",
            "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}", "addsd {s}, {o}",
            "dec {n}",
            "jnz 2b",
            s = inout(xmm_reg) s,
            o = in(xmm_reg) one,
            n = inout(reg) CHAIN => _,
            options(nostack, nomem),
        );
    }
    std::hint::black_box(s);
    t.elapsed().as_secs_f64()
}

/// Clock and latency estimates (medians of interleaved repetitions).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// Effective core clock while running dependent integer adds, in GHz.
    pub ghz: f64,
    /// `addsd` latency in cycles.
    pub fadd_cycles: f64,
}

/// Measures the clock and the FP add latency, interleaved, `reps` times each.
pub fn measure(reps: usize) -> Clock {
    let ops = (CHAIN * 16) as f64;
    let (mut i, mut f) = (Vec::new(), Vec::new());
    int_chain();
    fadd_chain();
    for _ in 0..reps {
        i.push(int_chain());
        f.push(fadd_chain());
    }
    let sec_per_cycle = median(&i) / ops;
    Clock {
        ghz: 1e-9 / sec_per_cycle,
        fadd_cycles: median(&f) / ops / sec_per_cycle,
    }
}

/// Cycles per window element of one WMA pass of `kernel` over `x` with window `w`,
/// each measurement interleaved with a fresh clock reading (the clock drifts under load).
pub fn cycles_per_element(
    kernels: &[(&str, WmaInto)],
    x: &[f64],
    w: usize,
    reps: usize,
) -> Vec<(String, f64)> {
    let elems = ((x.len() - w + 1) * w) as f64;
    let mut out = vec![0.0; x.len()];
    let mut samples = vec![Vec::new(); kernels.len()];
    for _ in 0..reps {
        for (j, (_, k)) in kernels.iter().enumerate() {
            let c = int_chain() / (CHAIN * 16) as f64;
            let t = Instant::now();
            k(x, w, &mut out);
            let dt = t.elapsed().as_secs_f64();
            std::hint::black_box(&out);
            samples[j].push(dt / elems / c);
        }
    }
    kernels
        .iter()
        .zip(samples)
        .map(|((n, _), s)| (n.to_string(), median(&s)))
        .collect()
}
