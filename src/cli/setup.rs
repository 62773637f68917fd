//! `hullsweep setup`: create the Python environment the numba reference runs in.

/// Create .venv with numba from reference/requirements.txt (done on first use anyway).
///
/// Set HULLSWEEP_PYTHON to use another interpreter that already has numba instead.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_: Args) -> anyhow::Result<()> {
    let python = hullsweep::numba::ensure_venv(true)?;
    eprintln!("numba reference environment ready: {}", python.display());
    Ok(())
}
