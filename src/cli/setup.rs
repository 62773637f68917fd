//! `hullsweep setup`: create the Python environment the numba reference runs in (and, with
//! `--ray`, what the distributed sweeps of `hullsweep_rs.ray` need).

/// Create the Python environment the numba reference runs in (done on first use anyway).
///
/// `lab`, `gate` and `setup` keep the reference scripts and a .venv with numba (from
/// reference/requirements.txt) in one folder, chosen in this order: HULLSWEEP_HOME if set; the
/// hullsweep source checkout holding the current directory (its reference/ and .venv); else
/// $XDG_DATA_HOME/hullsweep, or ~/.local/share/hullsweep, which receives the reference scripts
/// built into this binary. So an installed binary works anywhere and never writes into the
/// source tree it was built from. Set HULLSWEEP_PYTHON to use another interpreter that already
/// has numba instead of creating .venv.
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
