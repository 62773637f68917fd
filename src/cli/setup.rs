//! `hullsweep setup`: create the Python environment the numba reference runs in (and, with
//! `--ray`, what the distributed sweeps of `hullsweep_rs.ray` need).

/// Create .venv with numba from reference/requirements.txt (done on first use anyway).
///
/// Set HULLSWEEP_PYTHON to use another interpreter that already has numba instead.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also install Ray and tqdm (reference/requirements-ray.txt, pinned) for hullsweep_rs.ray
    /// and its tests.
    #[arg(long)]
    ray: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let python = if args.ray {
        hullsweep::numba::ensure_extra("requirements-ray.txt", true)?
    } else {
        hullsweep::numba::ensure_venv(true)?
    };
    let what = if args.ray { "numba and Ray" } else { "numba" };
    eprintln!("Python environment ready ({what}): {}", python.display());
    Ok(())
}
