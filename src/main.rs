//! The `hullsweep` command line: generate data, sweep parameters, run the lab.

use clap::Parser;
use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line naming the problem: the whole cause chain, no backtrace.
            eprintln!("hullsweep: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
