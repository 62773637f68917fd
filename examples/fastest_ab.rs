//! `fastest` against the best single variant on the four sizes of issue 20, side by side
//! (interleaved rounds, medians): the same table `hullsweep lab` appends to its report, on its own.
//!
//! ```sh
//! cargo run --release --example fastest_ab            # 15 rounds, about a minute on 2 cores
//! cargo run --release --example fastest_ab -- 5       # fewer rounds
//! ```

use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT};
use hullsweep_lab::fastest as fastest_lab;
use hullsweep_lab::machine::Machine;

fn main() -> anyhow::Result<()> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(r) => r
            .parse()
            .map_err(|_| anyhow::anyhow!("rounds: expected a number, got {r:?}"))?,
        None => 15,
    };
    let machine = Machine::detect();
    let close = kernel::default_close();
    let workloads = fastest_lab::workloads(&close, &kernel::default_params(), DEFAULT_FEE_PCT);
    let contenders = fastest_lab::contenders(machine.cores);
    let rows = fastest_lab::run(&workloads, &contenders, rounds, |msg| eprintln!("{msg}"))?;
    println!("{}", fastest_lab::to_markdown(&rows, &contenders, rounds));
    println!("Machine: {}.", machine.summary());
    Ok(())
}
