//! pprof (SIGPROF sampling) flamegraphs of any variant or lab kernel on any sweep size.
//! Build with `-C force-frame-pointers=yes` (the `fp` flavour) so the frame-pointer unwinder sees every frame.

use crate::kernels::{self, Pass};
use hullsweep_kernel::{DEFAULT_FEE_PCT, DEFAULT_SEED, DEFAULT_SIGMA, GridSpec, gbm, grid};
use hullsweep_variants::{Threads, Variant};
use std::path::Path;

use crate::FLAME_HZ as FREQUENCY;

/// The least sampled time for a variant's flamegraph (fast variants sweep repeatedly).
const MIN_PROFILE: std::time::Duration = std::time::Duration::from_secs(2);

/// Profiles one sweep (a variant, or a lab kernel when `kernel` is given) into an SVG.
pub fn command(
    variant: &str,
    kernel: Option<&str>,
    bars: usize,
    grid_spec: &str,
    out: &str,
) -> Result<(), String> {
    let close = gbm(bars, DEFAULT_SEED, DEFAULT_SIGMA).map_err(|e| e.to_string())?;
    let spec: GridSpec = grid_spec.parse().map_err(|e| format!("{e}"))?;
    let params = grid(spec).map_err(|e| e.to_string())?;
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(FREQUENCY)
        .blocklist(&["libc", "libgcc", "pthread", "vdso"])
        .build()
        .map_err(|e| format!("pprof: {e}"))?;
    let mut sweeps = 0usize;
    let trades: i64 = match kernel {
        Some(k) => {
            let f = kernels::kernel(k).ok_or(format!("unknown kernel {k}"))?;
            kernels::sweep_with(f, Pass::FreshNanFill, &close, &params, DEFAULT_FEE_PCT)
                .trades
                .iter()
                .sum()
        }
        None => {
            let v = Variant::from_name(variant).ok_or(format!("unknown variant {variant}"))?;
            // A fast variant sweeps in tens of milliseconds: repeat it until the profile has
            // seconds of samples, so its flamegraph is not a handful of stacks.
            let start = std::time::Instant::now();
            let mut trades = 0;
            while sweeps == 0 || start.elapsed() < MIN_PROFILE {
                trades += v
                    .sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Fixed(1))
                    .map_err(|e| e.to_string())?
                    .trades
                    .iter()
                    .sum::<i64>();
                sweeps += 1;
            }
            trades
        }
    };
    std::hint::black_box(trades);
    let report = guard
        .report()
        .build()
        .map_err(|e| format!("pprof report: {e}"))?;
    if let Some(dir) = Path::new(out).parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let file = std::fs::File::create(out).map_err(|e| format!("{out}: {e}"))?;
    let mut opts = pprof::flamegraph::Options::default();
    opts.title = format!(
        "{} — {bars} bars, grid {grid_spec}",
        kernel
            .map(|k| format!("kernel {k}"))
            .unwrap_or_else(|| format!("variant {variant}"))
    );
    if sweeps > 1 {
        opts.title += &format!(" ({sweeps} sweeps)");
    }
    report
        .flamegraph_with_options(file, &mut opts)
        .map_err(|e| format!("flamegraph: {e}"))?;
    println!("wrote {out}");
    Ok(())
}
