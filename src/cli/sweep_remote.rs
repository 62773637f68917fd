//! `hullsweep sweep --connect ADDR`: the sweep computed by an engine (`hullsweep serve`) and
//! written exactly as the local command writes it, byte for byte (how: `remote::sweep`).

use super::sweep::{Args, table};
use super::sweep_out::write_results;
use anyhow::bail;
use hullsweep_data::Progress;
use hullsweep_engine::Address;
use std::time::Instant;

/// Runs `sweep` with `--connect address`: the same inputs and output, the work on the server.
pub fn run(args: &Args, address: &Address) -> anyhow::Result<()> {
    refuse_local_only(args)?;
    let params = args.input.combos()?;
    hullsweep_kernel::check_combos(&args.combo, params.len())
        .map_err(|e| anyhow::anyhow!("--combo: {e}"))?;
    hullsweep_kernel::validate_params_and_fee(&params, args.input.fee)?;
    // The request carries the whole series, so a --data file is read whole.
    let close = args.input.close(hullsweep_variants::Threads::Auto)?;
    super::progress::catch_interrupt();
    let mut client = args.remote.connect(address)?;
    let start = Instant::now();
    let bar = super::progress::Bar::new("sweeping");
    let swept = super::remote::sweep(&mut client, &close, &params, args.input.fee, &bar);
    bar.finish();
    let (result, route) = swept.map_err(|e| args.remote.explain(address, e))?;
    if bar.cancelled() {
        // Ctrl-C during the one batch request: the reply came, but nothing is written.
        bail!("interrupted; nothing was written");
    }
    let secs = start.elapsed().as_secs_f64();
    let table = table(args);
    if args.plot.is_some() {
        // As the local command does for --plot: the pnl and trades columns, then the picture.
        let rows = super::columns::plain_rows(&result);
        super::columns::write_table(&params, &rows, &[], &table)?;
        super::columns::draw(&params, &args.input.grid(), &rows, &table)?;
    } else {
        write_results(
            args.format,
            args.out.as_deref(),
            &params,
            &result,
            &args.combo,
        )?;
    }
    eprintln!(
        "swept {} combos over {} bars on {address} ({route}) in {secs:.3} s",
        params.len(),
        close.len(),
    );
    Ok(())
}

/// The flags a server cannot honour for this client, refused by name with the reason.
fn refuse_local_only(args: &Args) -> anyhow::Result<()> {
    let server = |flag: &str| {
        format!(
            "{flag} cannot be used with --connect: the engine runs its own `hullsweep serve \
             {flag}` (every variant gives the same bits, so the output does not depend on it)"
        )
    };
    if args.variant.is_some() {
        bail!(server("--variant"));
    }
    if args.threads.is_some() {
        bail!(server("--threads"));
    }
    let no_column = |what: &str| {
        format!(
            "{what} cannot be used with --connect: the engine's protocol returns only pnl and \
             trades per combo; run without --connect for it"
        )
    };
    if args.metrics {
        bail!(no_column("--metrics (the metric columns)"));
    }
    if args.folds.is_some() {
        bail!(no_column("--folds (the per-fold table)"));
    }
    if args.returns.is_some() {
        bail!(no_column("--returns (the bar returns)"));
    }
    if args.plot.is_some() && table(args).needs_metrics() {
        bail!(no_column(&format!("--metric {}", args.metric)));
    }
    if args.stats {
        bail!(
            "--stats cannot be used with --connect: its counts come from the rolling variant's \
             pass in this process, and the engine reports none"
        );
    }
    Ok(())
}
