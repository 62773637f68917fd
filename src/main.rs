//! The `hullsweep` command line: generate data, sweep parameters, run the lab.

use clap::Parser;
use std::process::ExitCode;

mod big_pages;
mod cli;

/// Big buffers on huge pages (`big_pages.rs` says why).
#[global_allocator]
static ALLOCATOR: big_pages::BigPages = big_pages::BigPages;

fn main() -> ExitCode {
    big_pages::keep_small_blocks();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hullsweep: error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// The whole cause chain on one line, no backtrace. A cause whose text its parent's message
/// already ends with is left out (errors that print their source, such as an OS error after a
/// file name, would otherwise say it twice).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line += ": ";
        }
        line += &text;
    }
    line
}
