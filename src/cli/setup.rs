//! `hullsweep setup`: create the Python environment the numba reference runs in (and, with
//! `--ray`, what the distributed sweeps of `hullsweep_rs.ray` need).

/// Create .venv with numba from reference/requirements.txt (done on first use anyway).
///
/// Set HULLSWEEP_PYTHON to use another interpreter that already has numba instead.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also install what the Python tests need beyond numba: Ray and tqdm
    /// (reference/requirements-ray.txt, pinned) for hullsweep_rs.ray, and matplotlib
    /// (reference/requirements-lab.txt) for the guide's heatmap snippet (docs/guide.md), which they run.
    #[arg(long)]
    ray: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let python = if args.ray {
        hullsweep_gate::numba::ensure_extra("requirements-lab.txt", true)?;
        hullsweep_gate::numba::ensure_extra("requirements-ray.txt", true)?
    } else {
        hullsweep_gate::numba::ensure_venv(true)?
    };
    let what = if args.ray {
        "numba, Ray and matplotlib"
    } else {
        "numba"
    };
    eprintln!("Python environment ready ({what}): {}", python.display());
    Ok(())
}
