//! Subcommand definitions and dispatch; each subcommand lives in its own module.

use clap::{Parser, Subcommand};

mod args;
mod columns;
mod connect;
mod data;
mod endpoint;
mod folds;
mod gate;
mod lab;
mod live;
mod manual;
mod pbo;
mod preflight;
mod progress;
mod remote;
mod replay;
mod scale;
mod serve;
mod setup;
mod stdout;
mod sweep;
mod sweep_out;
mod sweep_remote;
mod tls_cert;
mod trades;
mod validate;

/// Sweep an HMA/HMA3 stop-and-reverse strategy over many window combos, exactly and fast.
///
/// Start with `hullsweep lab` (the main job, on built-in data), or generate a series with
/// `hullsweep data` and sweep it with `hullsweep sweep`. The repository's docs/ defines the
/// kernel (kernel.md), the engine's wire protocol (protocol.md) and the equivalence gate (gate.md).
#[derive(Parser, Debug)]
#[command(name = "hullsweep", version, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Lab(lab::Args),
    Data(data::Args),
    Sweep(sweep::Args),
    Trades(trades::Args),
    Stream(live::Args),
    Gate(gate::Args),
    Pbo(pbo::Args),
    Validate(validate::Args),
    Serve(serve::Args),
    Setup(setup::Args),
    TlsCert(tls_cert::Args),
    ManualCli(manual::Args),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Lab(args) => lab::run(args),
        Command::Data(args) => data::run(args),
        Command::Setup(args) => setup::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Pbo(args) => pbo::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Sweep(args) => match args.connect.clone() {
            Some(address) => sweep_remote::run(&args, &address),
            None => sweep::run(args),
        },
        Command::Trades(args) => trades::run(args),
        Command::Stream(args) => live::run(args),
        Command::Serve(args) => serve::run(args),
        Command::TlsCert(args) => tls_cert::run(args),
        Command::ManualCli(args) => manual::run(args, <Cli as clap::CommandFactory>::command()),
    }
}
