//! Driving the numba reference (`reference/hullsweep_ref.py`) from Rust: the project's own Python
//! environment in `.venv`, one-shot runs through `.npy` files, and a long-lived timing worker.

use anyhow::{Context, anyhow, bail};
use hullsweep_data as io;
use hullsweep_kernel::{Combo, SweepResult};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use tempfile::TempDir;

/// Which of the reference's two sweeps to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `sweep`: one thread, combos in order (the study's reference).
    Single,
    /// `sweep_prange`: `@njit(parallel=True)` with `prange` over combos.
    Prange,
}

impl Mode {
    /// Both modes, single-thread (the oracle) first: for running or listing every numba sweep.
    pub const ALL: [Mode; 2] = [Mode::Single, Mode::Prange];

    /// The name the worker protocol and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Prange => "prange",
        }
    }
}

/// The source tree this crate was built from (its golden fixtures live there). The numba side
/// runs from [`home`](crate::home::home) instead, which is chosen at run time.
pub fn root() -> &'static Path {
    let gate = Path::new(env!("CARGO_MANIFEST_DIR"));
    gate.parent().unwrap_or(gate)
}

/// The numba reference script, in the [`home`](crate::home::home).
pub fn script() -> anyhow::Result<PathBuf> {
    Ok(crate::home::home()?.reference().join("hullsweep_ref.py"))
}

/// Overrides the interpreter (and skips creating `.venv`): a Python that already has numba.
pub const PYTHON_ENV: &str = "HULLSWEEP_PYTHON";

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Returns the Python that runs the reference, creating `.venv` in the
/// [`home`](crate::home::home) on first use (the checkout's own, else a per-user folder).
///
/// The venv is built with `python3 -m venv` and `pip install -r reference/requirements.txt`; a
/// stamp file holding the requirements it was built from makes a changed requirements file
/// re-install. An exclusive lock on a file inside `.venv` serialises creation, because test
/// binaries run in parallel and would otherwise race two pips into one directory.
pub fn ensure_venv(progress: bool) -> anyhow::Result<PathBuf> {
    if let Some(python) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(python));
    }
    let home = crate::home::home()?;
    let venv = home.venv();
    let python = venv_python(&venv);
    let requirements_path = home.reference().join("requirements.txt");
    let requirements = fs::read_to_string(&requirements_path)
        .with_context(|| format!("cannot read {}", requirements_path.display()))?;
    let stamp = venv.join(".hullsweep-requirements");
    let fresh =
        || python.exists() && fs::read_to_string(&stamp).ok().as_ref() == Some(&requirements);
    if fresh() {
        return Ok(python);
    }
    fs::create_dir_all(&venv).with_context(|| format!("cannot create {}", venv.display()))?;
    let lock_path = venv.join(".hullsweep-lock");
    let lock = File::create(&lock_path)
        .with_context(|| format!("cannot create {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("cannot lock {}", lock_path.display()))?;
    // Another process may have finished the job while we waited for the lock.
    if fresh() {
        return Ok(python);
    }
    let retry = format!(
        "fix the cause and run again (delete {} to start from scratch), set {PYTHON_ENV} to a \
         Python that has numba, or {} to another folder",
        venv.display(),
        crate::home::HOME_ENV
    );
    if progress {
        eprintln!(
            "creating the Python environment in {} (numba from reference/requirements.txt)...",
            venv.display()
        );
    }
    if !python.exists() {
        let mut venv_cmd = Command::new("python3");
        venv_cmd.arg("-m").arg("venv").arg(&venv);
        run_setup(venv_cmd, progress, "python3 -m venv").map_err(|e| anyhow!("{e:#}; {retry}"))?;
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(&requirements_path);
    run_setup(pip, progress, "pip install -r reference/requirements.txt")
        .map_err(|e| anyhow!("{e:#}; {retry}"))?;
    fs::write(&stamp, &requirements)
        .with_context(|| format!("cannot write {}", stamp.display()))?;
    if progress {
        eprintln!("the Python environment is ready: {}", python.display());
    }
    Ok(python)
}

/// Installs `reference/<file>` (pinned extras such as `requirements-ray.txt`) into the Python
/// that [`ensure_venv`] returns. In `.venv` a stamp holding the file's text skips pip next time.
pub fn ensure_extra(file: &str, progress: bool) -> anyhow::Result<PathBuf> {
    let python = ensure_venv(progress)?;
    let home = crate::home::home()?;
    let path = home.reference().join(file);
    let wanted =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let in_venv = std::env::var_os(PYTHON_ENV).is_none_or(|p| p.is_empty());
    let stamp = home.venv().join(format!(".hullsweep-{file}"));
    if in_venv && fs::read_to_string(&stamp).ok().as_ref() == Some(&wanted) {
        return Ok(python);
    }
    if progress {
        eprintln!("installing reference/{file} into {}...", python.display());
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(&path);
    run_setup(pip, progress, &format!("pip install -r reference/{file}"))?;
    if in_venv {
        fs::write(&stamp, &wanted).with_context(|| format!("cannot write {}", stamp.display()))?;
    }
    Ok(python)
}

/// Runs one setup step, its output on our stderr when `progress`, else kept for the error.
fn run_setup(mut cmd: Command, progress: bool, what: &str) -> anyhow::Result<()> {
    let program = cmd.get_program().to_os_string();
    let not_found = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!(
                "{what} failed: {} not found; install Python 3.11 with venv and pip",
                program.to_string_lossy()
            )
        } else {
            anyhow!("{what} failed to start: {e}")
        }
    };
    if progress {
        // pip writes progress to stdout; ours may be carrying results, so send it to stderr.
        let status = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::io::stderr()))
            .status()
            .map_err(not_found)?;
        if !status.success() {
            bail!("{what} failed ({status}); its output is above");
        }
    } else {
        let out = cmd.stdin(Stdio::null()).output().map_err(not_found)?;
        if !out.status.success() {
            bail!(
                "{what} failed ({}): {}",
                out.status,
                tail(&out.stderr, &out.stdout)
            );
        }
    }
    Ok(())
}

/// The last few lines a failed child printed, on one line.
fn tail(stderr: &[u8], stdout: &[u8]) -> String {
    let text = if stderr.iter().any(|b| !b.is_ascii_whitespace()) {
        String::from_utf8_lossy(stderr)
    } else {
        String::from_utf8_lossy(stdout)
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

/// Writes the inputs where the reference can read them.
fn write_inputs(dir: &Path, close: &[f64], params: &[Combo]) -> anyhow::Result<(PathBuf, PathBuf)> {
    let close_path = dir.join("close.npy");
    let params_path = dir.join("params.npy");
    io::write_f64_npy(&close_path, close)?;
    io::write_params_npy(&params_path, params)?;
    Ok((close_path, params_path))
}

fn read_outputs(pnl: &Path, trades: &Path) -> anyhow::Result<SweepResult> {
    let pnl = io::read_close_npy(pnl).context("reading the reference's pnl")?;
    let trades = read_i64_npy(trades).context("reading the reference's trades")?;
    if pnl.len() != trades.len() {
        bail!(
            "the reference wrote {} pnl values but {} trade counts",
            pnl.len(),
            trades.len()
        );
    }
    Ok(SweepResult { pnl, trades })
}

fn read_i64_npy(path: &Path) -> anyhow::Result<Vec<i64>> {
    let file = File::open(path).with_context(|| path.display().to_string())?;
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .with_context(|| format!("{}: not a valid .npy", path.display()))?;
    npy.into_vec::<i64>()
        .with_context(|| format!("{}: not an int64 array", path.display()))
}

/// Rows of a 2-D `.npy` of `cols` columns.
fn read_2d<T: npyz::Deserialize>(path: &Path, cols: usize) -> anyhow::Result<Vec<Vec<T>>> {
    let file = File::open(path).with_context(|| path.display().to_string())?;
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .with_context(|| format!("{}: not a valid .npy", path.display()))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || shape[1] != cols as u64 {
        bail!("{}: shape {shape:?}, expected n x {cols}", path.display());
    }
    let flat = npy
        .into_vec::<T>()
        .with_context(|| format!("{}: wrong dtype", path.display()))?;
    let mut rows = Vec::with_capacity(flat.len() / cols.max(1));
    let mut it = flat.into_iter();
    while it.len() > 0 {
        rows.push(it.by_ref().take(cols).collect());
    }
    Ok(rows)
}

/// Sweeps once with the numba reference in a fresh process (pays numba's import and cache load).
pub fn run(close: &[f64], params: &[Combo], fee: f64, mode: Mode) -> anyhow::Result<SweepResult> {
    let python = ensure_venv(true)?;
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let (close_path, params_path) = write_inputs(dir.path(), close, params)?;
    let (pnl_path, trades_path) = (dir.path().join("pnl.npy"), dir.path().join("trades.npy"));
    let mut cmd = Command::new(&python);
    cmd.arg(script()?)
        .arg("run")
        .arg("--close")
        .arg(&close_path)
        .arg("--params")
        .arg(&params_path)
        // `=` keeps a negative fee from looking like an option to argparse.
        .arg(format!("--fee={fee:?}"))
        .arg("--out-pnl")
        .arg(&pnl_path)
        .arg("--out-trades")
        .arg(&trades_path);
    if mode == Mode::Prange {
        cmd.arg("--prange");
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "the numba reference failed ({}): {}",
            out.status,
            tail(&out.stderr, &out.stdout)
        );
    }
    read_outputs(&pnl_path, &trades_path)
}

/// The reference's `worker`: one Python process that keeps its JIT-compiled sweeps, so runs can
/// be interleaved with Rust runs without paying compilation each time. Dropping it kills it.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    dir: TempDir,
}

impl Worker {
    /// Starts the worker with the project's Python (see [`ensure_venv`]).
    pub fn start() -> anyhow::Result<Worker> {
        let python = ensure_venv(true)?;
        Worker::start_with(&python)
    }

    /// Starts the worker with a given interpreter.
    pub fn start_with(python: &Path) -> anyhow::Result<Worker> {
        let mut child = Command::new(python)
            .arg(script()?)
            .arg("worker")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start the numba worker with {}", python.display()))?;
        let stdin = child.stdin.take().expect("stdin was piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout was piped"));
        let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
        Ok(Worker {
            child,
            stdin,
            stdout,
            dir,
        })
    }

    /// Sends one request, returns the reply's fields (an `"ok": false` reply is an error).
    fn request(&mut self, req: Value) -> anyhow::Result<Value> {
        let op = req["op"].as_str().unwrap_or("?").to_string();
        writeln!(self.stdin, "{req}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| self.exited(&op, e.to_string()))?;
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| self.exited(&op, e.to_string()))?;
        if n == 0 {
            return Err(self.exited(&op, "no reply".into()));
        }
        let reply: Value = serde_json::from_str(&line)
            .with_context(|| format!("numba worker: unreadable reply to {op:?}: {line:?}"))?;
        if reply["ok"] == json!(true) {
            Ok(reply)
        } else {
            bail!(
                "numba worker: {op} failed: {}",
                reply["error"].as_str().unwrap_or("no error message")
            )
        }
    }

    fn exited(&mut self, op: &str, why: String) -> anyhow::Error {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => "still running".into(),
        };
        anyhow!("numba worker: {op}: {why} (worker {status}; its stderr is above)")
    }

    /// Loads a dataset and warms both sweeps up (compiles, or loads numba's cache).
    pub fn load(&mut self, close: &[f64], params: &[Combo], fee: f64) -> anyhow::Result<()> {
        let (close_path, params_path) = write_inputs(self.dir.path(), close, params)?;
        self.request(json!({
            "op": "load",
            "close": path_str(&close_path)?,
            "params": path_str(&params_path)?,
            "fee": fee,
        }))?;
        Ok(())
    }

    /// Runs the loaded sweep once: seconds measured inside Python around the jitted call only.
    pub fn time(&mut self, mode: Mode) -> anyhow::Result<(f64, SweepResult)> {
        let pnl = self.dir.path().join("pnl.npy");
        let trades = self.dir.path().join("trades.npy");
        let reply = self.request(json!({
            "op": "time",
            "impl": mode.name(),
            "out_pnl": path_str(&pnl)?,
            "out_trades": path_str(&trades)?,
        }))?;
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or_else(|| anyhow!("numba worker: time reply without seconds: {reply}"))?;
        Ok((seconds, read_outputs(&pnl, &trades)?))
    }

    /// Loads and runs once: the reference's result for these inputs.
    pub fn sweep(
        &mut self,
        close: &[f64],
        params: &[Combo],
        fee: f64,
        mode: Mode,
    ) -> anyhow::Result<SweepResult> {
        self.load(close, params, fee)?;
        Ok(self.time(mode)?.1)
    }

    /// The loaded sweep's metrics (docs/kernel.md, "Metrics") from the reference's
    /// `sweep_metrics`, single thread.
    pub fn metrics(&mut self) -> anyhow::Result<Vec<hullsweep_kernel::Metrics>> {
        let floats = self.dir.path().join("metric_floats.npy");
        let ints = self.dir.path().join("metric_ints.npy");
        self.request(json!({
            "op": "metrics",
            "out_floats": path_str(&floats)?,
            "out_ints": path_str(&ints)?,
        }))?;
        let f = read_2d::<f64>(&floats, 6).context("reading the reference's metric floats")?;
        let i = read_2d::<i64>(&ints, 5).context("reading the reference's metric counts")?;
        if f.len() != i.len() {
            bail!(
                "the reference wrote metrics for {} and {} combos",
                f.len(),
                i.len()
            );
        }
        // Column orders: METRIC_FLOATS and METRIC_INTS in reference/hullsweep_ref.py.
        Ok(f.iter()
            .zip(&i)
            .map(|(f, i)| hullsweep_kernel::Metrics {
                pnl: f[0],
                long_pnl: f[1],
                short_pnl: f[2],
                best_trade: f[3],
                worst_trade: f[4],
                max_drawdown: f[5],
                trades: i[0],
                wins: i[1],
                long_trades: i[2],
                short_trades: i[3],
                bars_in_market: i[4],
            })
            .collect())
    }

    /// The loaded series' trade log (docs/kernel.md, "Trades and events") from the reference's
    /// `sweep_trades`: the closed trades of `combos` (all of them when `None`), combo by combo
    /// in the order given, each combo's in bar order. A combo past the params is refused by the
    /// worker, by name.
    pub fn trades(
        &mut self,
        combos: Option<&[usize]>,
    ) -> anyhow::Result<Vec<hullsweep_kernel::Trade>> {
        let ints = self.dir.path().join("trade_ints.npy");
        let floats = self.dir.path().join("trade_floats.npy");
        self.request(json!({
            "op": "trades",
            "combos": combos,
            "out_ints": path_str(&ints)?,
            "out_floats": path_str(&floats)?,
        }))?;
        let i = read_2d::<i64>(&ints, 4).context("reading the reference's trade columns")?;
        let f = read_2d::<f64>(&floats, 3).context("reading the reference's trade prices")?;
        if f.len() != i.len() {
            bail!(
                "the reference wrote {} trades' indices but {} trades' prices",
                i.len(),
                f.len()
            );
        }
        // Column orders: TRADE_COLUMNS in reference/hullsweep_ref.py.
        i.iter()
            .zip(&f)
            .map(|(i, f)| {
                let index = |v: i64, what: &str| {
                    u64::try_from(v).map_err(|_| anyhow!("the reference wrote a {what} of {v}"))
                };
                Ok(hullsweep_kernel::Trade {
                    combo: index(i[0], "combo")? as usize,
                    side: i[1],
                    entry_bar: index(i[2], "entry bar")?,
                    exit_bar: index(i[3], "exit bar")?,
                    entry_price: f[0],
                    exit_price: f[1],
                    pnl: f[2],
                })
            })
            .collect()
    }

    /// Sets numba's thread count for `prange`; returns what numba reports back.
    pub fn set_threads(&mut self, n: usize) -> anyhow::Result<usize> {
        let reply = self.request(json!({"op": "threads", "n": n}))?;
        reply["threads"]
            .as_u64()
            .map(|t| t as usize)
            .ok_or_else(|| anyhow!("numba worker: threads reply without a count: {reply}"))
    }

    /// numba, llvmlite, numpy and Python versions, as the worker reports them.
    pub fn versions(&mut self) -> anyhow::Result<serde_json::Map<String, Value>> {
        let mut reply = self.request(json!({"op": "versions"}))?;
        let map = reply
            .as_object_mut()
            .ok_or_else(|| anyhow!("numba worker: versions reply is not an object"))?;
        map.remove("ok");
        Ok(map.clone())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // The worker would exit on EOF too, but a sweep in progress could take seconds.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn path_str(path: &Path) -> anyhow::Result<String> {
    let os: OsString = path.as_os_str().to_owned();
    os.into_string()
        .map_err(|p| anyhow!("temporary path {p:?} is not UTF-8"))
}
