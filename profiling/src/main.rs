//! `profiling`: the lab's command line (serve, ab, asm, count, flamegraph, report).
//! Arguments are parsed by hand so the separate flag builds stay small and quick to compile.

use hullsweep_profiling::hypotheses::{self, HYPOTHESES, Lab};
use std::collections::HashMap;
use std::process::ExitCode;

const USAGE: &str = "usage: profiling <command> [options]
  ab KEY|all [--bars N] [--grid LO:HI:K] [--rounds R]   interleaved A/B for one hypothesis
  serve [--bars N] [--grid LO:HI:K]                     worker for other processes' A/B runs
  elements [--bars N] [--window W]                      ns per multiply-add of one WMA pass, per kernel
  asm [--out DIR]                                       objdump + numba asm/IR, hot loops trimmed
  count [--bars N] [--grid LO:HI:K] [--out DIR]         callgrind instruction counts
  flamegraph --variant V [--kernel K] [--bars N] [--grid G] --out FILE.svg   (feature flamegraph)
  report [--quick] [--out DIR] [--bars N] [--rounds R]  everything, into DIR/gap.md (default reports)
  report --only apple [--out DIR]                       only section 5b (static, times nothing), into DIR/gap.md";

struct Args {
    pos: Vec<String>,
    opts: HashMap<String, String>,
    flags: Vec<String>,
}

fn parse(raw: &[String]) -> Result<Args, String> {
    let mut a = Args {
        pos: vec![],
        opts: HashMap::new(),
        flags: vec![],
    };
    let mut it = raw.iter();
    while let Some(s) = it.next() {
        if let Some(name) = s.strip_prefix("--") {
            if name == "quick" || name == "help" {
                a.flags.push(name.to_string());
            } else {
                let v = it.next().ok_or(format!("--{name} needs a value"))?;
                a.opts.insert(name.to_string(), v.clone());
            }
        } else {
            a.pos.push(s.clone());
        }
    }
    Ok(a)
}

impl Args {
    fn get(&self, k: &str, default: &str) -> String {
        self.opts
            .get(k)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    }
    fn num(&self, k: &str, default: usize) -> Result<usize, String> {
        match self.opts.get(k) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{k} {v:?} is not a count")),
        }
    }
}

fn real_main(raw: Vec<String>) -> Result<(), String> {
    let a = parse(&raw)?;
    let cmd = a.pos.first().map(String::as_str).unwrap_or("");
    if a.flags.iter().any(|f| f == "help") || cmd.is_empty() {
        println!("{USAGE}");
        return Ok(());
    }
    let bars = a.num("bars", 20_000)?;
    let grid = a.get("grid", "6:200:8");
    match cmd {
        "serve" => hypotheses::serve(bars, &grid),
        "ab" => {
            let key = a.pos.get(1).ok_or("ab needs a hypothesis key")?;
            let rounds = a.num("rounds", 10)?;
            let scratch = std::env::temp_dir().join(format!("hullsweep-ab-{}", std::process::id()));
            let mut lab = Lab::new(bars, &grid, rounds, &scratch)?;
            let keys: Vec<&str> = if key == "all" {
                HYPOTHESES.iter().map(|(k, _)| *k).collect()
            } else {
                vec![key.as_str()]
            };
            println!("# {bars} bars, grid {grid}, {rounds} interleaved rounds, medians");
            for k in keys {
                let q = HYPOTHESES
                    .iter()
                    .find(|(kk, _)| *kk == k)
                    .map(|(_, q)| *q)
                    .unwrap_or("");
                println!("\n## {k}: {q}");
                let o = lab.run(k)?;
                for i in 0..o.labels.len() {
                    let (lo, hi) = o.range(i);
                    println!(
                        "  {:<40} wall {:>8.4} s [{:.4}..{:.4}] ratio {:.4} | cpu {:>8.4} s ratio {:.4}",
                        o.labels[i],
                        o.median(i),
                        lo,
                        hi,
                        o.ratio(i, 0),
                        o.cpu_median(i),
                        o.cpu_median(i) / o.cpu_median(0)
                    );
                }
            }
            let _ = std::fs::remove_dir_all(&scratch);
            Ok(())
        }
        "once" => once(&a, bars, &grid),
        "elements" => {
            let x = hullsweep_kernel::gbm(bars, 42, 0.001).map_err(|e| e.to_string())?;
            let w = a.num("window", 100)?;
            let ks = hullsweep_profiling::kernels::KERNELS;
            for (k, ns) in hullsweep_profiling::clock::ns_per_element(ks, &x, w, 15) {
                println!("  {k:<16} {ns:.3} ns/element");
            }
            Ok(())
        }
        "asm" => hullsweep_profiling::asm::command(&a.get("out", "reports/asm")),
        "count" => {
            hullsweep_profiling::callgrind::command(bars, &grid, &a.get("out", "reports/callgrind"))
        }
        "flamegraph" => flamegraph(&a, bars, &grid),
        "report" => hullsweep_profiling::report::command(
            a.flags.iter().any(|f| f == "quick"),
            &a.get("out", "reports"),
            a.opts.get("bars").map(|_| bars),
            a.opts
                .get("rounds")
                .map(|r| r.parse())
                .transpose()
                .map_err(|_| "--rounds is not a count")?,
            a.opts.get("only").map(String::as_str),
        ),
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

/// One sweep and exit, for callgrind: `--variant V`, `--kernel K [--pass P]`, or `--none x`.
fn once(a: &Args, bars: usize, grid: &str) -> Result<(), String> {
    use hullsweep_profiling::kernels::{self, Pass};
    let close = hullsweep_kernel::gbm(
        bars,
        hullsweep_kernel::DEFAULT_SEED,
        hullsweep_kernel::DEFAULT_SIGMA,
    )
    .map_err(|e| e.to_string())?;
    let spec: hullsweep_kernel::GridSpec = grid.parse().map_err(|e| format!("{e}"))?;
    let params = hullsweep_kernel::grid(spec).map_err(|e| e.to_string())?;
    let fee = hullsweep_kernel::DEFAULT_FEE_PCT;
    let trades: i64 = if let Some(v) = a.opts.get("variant") {
        let v = hullsweep_variants::Variant::from_name(v).ok_or(format!("unknown variant {v}"))?;
        v.sweep(&close, &params, fee, hullsweep_variants::Threads::Fixed(1))
            .map_err(|e| e.to_string())?
            .trades
            .iter()
            .sum()
    } else if let Some(k) = a.opts.get("kernel") {
        let f = kernels::kernel(k).ok_or(format!("unknown kernel {k}"))?;
        let pass = match a.get("pass", "fresh").as_str() {
            "fresh" => Pass::FreshNanFill,
            "reuse" => Pass::ReuseNanFill,
            "head" => Pass::ReuseNanHead,
            p => return Err(format!("unknown pass {p}")),
        };
        kernels::sweep_with(f, pass, &close, &params, fee)
            .trades
            .iter()
            .sum()
    } else {
        0
    };
    println!("{trades}");
    Ok(())
}

#[cfg(feature = "flamegraph")]
fn flamegraph(a: &Args, bars: usize, grid: &str) -> Result<(), String> {
    let out = a.opts.get("out").ok_or("flamegraph needs --out FILE.svg")?;
    hullsweep_profiling::flame::command(
        &a.get("variant", "reference"),
        a.opts.get("kernel").map(String::as_str),
        bars,
        grid,
        out,
    )
}

#[cfg(not(feature = "flamegraph"))]
fn flamegraph(_: &Args, _: usize, _: &str) -> Result<(), String> {
    Err(
        "this build has no flamegraph support: build with `--features flamegraph` \
         and RUSTFLAGS='-C force-frame-pointers=yes' (scripts/flamegraph does both)"
            .into(),
    )
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match real_main(raw) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("profiling: error: {e}");
            ExitCode::FAILURE
        }
    }
}
