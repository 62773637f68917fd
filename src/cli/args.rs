//! The arguments several commands share (`--data`, `--grid`, `--variant`, `--fee`, ...): their
//! help, their parsers and what they load, so every command says and checks them the same way.

use anyhow::{Context, bail};
use hullsweep_kernel::{self as kernel, Combo, DEFAULT_FEE_PCT, GridSpec, METRIC_NAMES};
use hullsweep_variants::{Threads, Variant};
use std::path::{Path, PathBuf};

/// The series, the combos and the fee: the inputs `sweep` and `trades` share, with one help.
#[derive(clap::Args, Debug)]
pub struct Inputs {
    /// Close series: a .npy (1-D float64), .csv or .parquet (a float64 column) file. Default:
    /// the built-in 150,000-bar series.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// CSV or Parquet column holding the close (default: the only column, or the one named "close"); a
    /// name matches in any case when only one column does. Comma, semicolon or tab separated.
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
    /// Grid of HMA lengths LO:HI:K: K distinct lengths spread evenly from LO to HI (so K is at
    /// most HI-LO+1), each expanded to six windows.
    #[arg(
        long,
        value_name = "LO:HI:K",
        default_value = "6:200:80",
        value_parser = parse_grid,
        allow_hyphen_values = true,
        conflicts_with = "params"
    )]
    pub grid: GridSpec,
    /// Sweep the HMA3 lengths independently (a two-axis grid): every pair of a --grid length
    /// (the HMA: windows hma_n, hma_half, hma_sqrt) and a --grid3 length (the HMA3: hma3_m,
    /// hma3_half, hma3_third), HMA length outer. Without it one length sets both indicators.
    #[arg(
        long,
        value_name = "LO:HI:K",
        value_parser = parse_grid,
        allow_hyphen_values = true,
        conflicts_with = "params"
    )]
    pub grid3: Option<GridSpec>,
    /// Explicit combos: an n x 6 int64 .npy, columns hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third.
    #[arg(long, value_name = "FILE.npy")]
    pub params: Option<PathBuf>,
    #[arg(long, value_name = "PCT", help = FEE_HELP, default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    pub fee: f64,
}

impl Inputs {
    /// The grid the combos come from (meaningful without --params).
    pub fn grid(&self) -> kernel::Grid {
        kernel::Grid {
            hma: self.grid,
            hma3: self.grid3,
        }
    }

    /// The combos: --params, or the grid (two-axis with --grid3).
    pub fn combos(&self) -> anyhow::Result<Vec<Combo>> {
        match (&self.params, self.grid3) {
            (None, Some(_)) => Ok(self.grid().combos()?),
            _ => load_params(self.params.as_deref(), self.grid),
        }
    }

    /// The whole series in memory (--data, or the built-in one, generated on `threads`).
    pub fn close(&self, threads: Threads) -> anyhow::Result<Vec<f64>> {
        load_close(self.data.as_deref(), self.column.as_deref(), threads)
    }
}

/// Every name `--variant` accepts, `fastest` first, from [`Variant::ALL`] (so a new variant is
/// listed without touching the CLI), with what `fastest` is on this machine.
pub fn variant_names() -> String {
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    format!(
        "fastest (= {} on this machine), {}",
        Variant::fastest().name(),
        names.join(", ")
    )
}

/// The `--variant` help every subcommand shows.
pub fn variant_help(what: &str) -> String {
    format!(
        "{what}: {}. All pass the equivalence gate against numba (`hullsweep gate`); `hullsweep lab` times them",
        variant_names()
    )
}

/// Parses `--variant` (clap reports the error, with the same prefix and exit code everywhere).
pub fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name)
        .ok_or_else(|| format!("unknown variant {name:?}; known: {}", variant_names()))
}

/// The `--fee` help: what the number means and what a negative one does.
pub const FEE_HELP: &str = "Round-trip fee per closed trade, in percentage points (0.09 = 0.09%, subtracted from each trade's PnL in %); a negative fee is a rebate";

/// Parses `--grid`/`--grid3 LO:HI:K` with the kernel's parser (the one Python and the Ray CLI
/// use), which reports every problem at once and refuses `K` larger than the integers in
/// `[LO, HI]`: more would repeat lengths, and with them whole combos. The flags take values that
/// start with `-` (so `-5:20:3` gets this message, not clap's "unexpected argument"); a value
/// that is another flag (`--grid --data x`) is named as one.
pub fn parse_grid(s: &str) -> Result<GridSpec, String> {
    if s.starts_with("--") {
        return Err(format!(
            "expected LO:HI:K (for example 6:200:80), got the flag {s}; give the grid first"
        ));
    }
    s.parse::<GridSpec>().map_err(|e| match e {
        kernel::KernelError::BadGrid { detail } => detail,
        other => other.to_string(),
    })
}

/// Parses `--bars N`: a whole number of bars, at least 1. Negative numbers reach it (the flag
/// allows them), so `--bars -5` is refused in these words rather than clap's.
pub fn parse_bars(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 => usize::try_from(n).map_err(|_| format!("bars = {n} is too many")),
        Ok(n) => Err(format!("bars = {n}: the series needs at least one bar")),
        Err(_) => Err(format!("bars = {s:?} is not a whole number")),
    }
}

/// Parses `--seed N`: a whole number from 0 to 2^64-1 (`--seed -1` is refused in these words).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let range = format!("a seed is a whole number from 0 to {}", u64::MAX);
    match s.trim().parse::<i128>() {
        Ok(n) => u64::try_from(n).map_err(|_| format!("seed = {n}: {range}")),
        Err(_) => Err(format!("seed = {s:?}: {range}")),
    }
}

/// `--threads N`: all cores without it; 0 is refused.
pub fn threads(n: Option<usize>) -> anyhow::Result<Threads> {
    match n {
        None => Ok(Threads::Auto),
        Some(0) => bail!("--threads 0: need at least one thread"),
        Some(n) => Ok(Threads::Fixed(n)),
    }
}

/// Loads the series from `--data` (with `--column`), or generates the built-in default on
/// `threads` (`kernel::default_close`'s bits).
pub fn load_close(
    data: Option<&Path>,
    column: Option<&str>,
    threads: Threads,
) -> anyhow::Result<Vec<f64>> {
    use kernel::{DEFAULT_BARS, DEFAULT_SEED, DEFAULT_SIGMA};
    match data {
        None => Ok(hullsweep_variants::gbm::gbm(
            DEFAULT_BARS,
            DEFAULT_SEED,
            DEFAULT_SIGMA,
            threads,
        )?),
        Some(path) => Ok(hullsweep_data::read_valid_close(path, column)?),
    }
}

/// Loads combos from `--params`, or expands the grid.
pub fn load_params(params: Option<&Path>, grid: GridSpec) -> anyhow::Result<Vec<Combo>> {
    let combos = match params {
        Some(path) => {
            let combos = hullsweep_data::read_params_npy(path)?;
            kernel::validate_params(&combos).with_context(|| path.display().to_string())?;
            combos
        }
        None => kernel::grid(grid)?,
    };
    Ok(combos)
}

/// Parses `--metric`: one of the metric names of docs/kernel.md.
pub fn parse_metric(name: &str) -> Result<&'static str, String> {
    METRIC_NAMES
        .iter()
        .copied()
        .find(|&n| n == name)
        .ok_or_else(|| {
            format!(
                "unknown metric {name:?}; known: {}",
                METRIC_NAMES.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_seeds_name_the_bad_value() {
        assert_eq!(parse_bars("3000"), Ok(3000));
        assert!(parse_bars("-5").unwrap_err().starts_with("bars = -5: "));
        assert!(parse_bars("0").unwrap_err().starts_with("bars = 0: "));
        assert!(parse_bars("x").unwrap_err().contains("\"x\""));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_seed("-1").unwrap_err().starts_with("seed = -1: "));
        assert!(
            parse_grid("--data")
                .unwrap_err()
                .contains("the flag --data")
        );
        assert!(
            parse_grid("-5:20:3")
                .unwrap_err()
                .contains("LO = -5 must be >= 1")
        );
    }

    #[test]
    fn a_metric_is_known_or_named_with_every_known_one() {
        assert!(parse_metric("max_drawdown").is_ok());
        assert!(
            parse_metric("sharpe")
                .unwrap_err()
                .contains("bars_in_market")
        );
    }
}
