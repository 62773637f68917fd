//! `hullsweep sweep --data` reads in chunks: results equal the in-memory sweep bit for bit
//! across chunk boundaries, bad input is named by file, column and row, and no output file is
//! left behind by a failed run.

use assert_cmd::Command;
use hullsweep_data as io;
use hullsweep_data::CHUNK_BARS;
use std::path::Path;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs a sweep that must fail; returns stderr, checked to be a clean error.
fn fails(args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{args:?} should fail: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn a_series_of_several_chunks_gives_the_in_memory_bits() {
    let dir = tempfile::tempdir().unwrap();
    let n = 2 * CHUNK_BARS + 12_345;
    let mut close = hullsweep_kernel::gbm(n, 3, 0.002).unwrap();
    // A NaN run across the first chunk boundary.
    for v in &mut close[CHUNK_BARS - 50..CHUNK_BARS + 70] {
        *v = f64::NAN;
    }
    let npy = dir.path().join("c.npy");
    io::write_f64_npy(&npy, &close).unwrap();
    let out = dir.path().join("r.csv");
    for variant in ["fastest", "simd"] {
        hullsweep()
            .args([
                "sweep",
                "--data",
                s(&npy),
                "--grid",
                "6:120:5",
                "--variant",
                variant,
            ])
            .args(["--out", s(&out)])
            .assert()
            .success();
        let streamed = std::fs::read_to_string(&out).unwrap();
        // --stats keeps the whole series in memory and sweeps it in one batch.
        let batch = hullsweep()
            .args([
                "sweep",
                "--data",
                s(&npy),
                "--grid",
                "6:120:5",
                "--variant",
                variant,
            ])
            .arg("--stats")
            .output()
            .unwrap();
        assert!(batch.status.success());
        assert_eq!(
            streamed,
            String::from_utf8(batch.stdout).unwrap(),
            "{variant}"
        );
    }
}

#[test]
fn bad_input_is_named_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    std::fs::write(&out, "previous results\n").unwrap();

    // A negative price in the second chunk of a semicolon CSV, column asked in lower case.
    let csv = dir.path().join("prices.csv");
    let mut text = String::from("Date;Close\n");
    let bad_row = CHUNK_BARS + 777;
    for i in 0..CHUNK_BARS + 2000 {
        let v = if i == bad_row {
            -4.25
        } else {
            100.0 + (i % 7) as f64
        };
        text += &format!("{i};{v}\n");
    }
    std::fs::write(&csv, text).unwrap();
    let e = fails(&[
        "sweep",
        "--data",
        s(&csv),
        "--column",
        "close",
        "--out",
        s(&out),
    ]);
    assert!(
        e.contains(&format!(
            "bad price -4.25 at index {bad_row} (line {}) in column \"Close\"",
            bad_row + 2
        )) && e.contains("prices.csv"),
        "{e}"
    );

    // A truncated .npy: the header promises more bars than the file holds.
    let npy = dir.path().join("t.npy");
    io::write_f64_npy(&npy, &vec![100.0; 1000]).unwrap();
    let bytes = std::fs::read(&npy).unwrap();
    std::fs::write(&npy, &bytes[..bytes.len() - 100]).unwrap();
    let e = fails(&["sweep", "--data", s(&npy), "--out", s(&out)]);
    assert!(
        e.contains("t.npy") && e.contains("the header says 1000 bars, the file ends after 987"),
        "{e}"
    );

    // A bad price deep in a .npy is named by its index.
    let mut close = vec![100.0; CHUNK_BARS + 10];
    close[CHUNK_BARS + 3] = 0.0;
    io::write_f64_npy(&npy, &close).unwrap();
    let e = fails(&["sweep", "--data", s(&npy), "--out", s(&out)]);
    assert!(
        e.contains(&format!("bad price 0 at index {}", CHUNK_BARS + 3)),
        "{e}"
    );

    // None of the failures touched the output or left a temporary file.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous results\n");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".part"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn parquet_in_and_out() {
    let dir = tempfile::tempdir().unwrap();
    let (npy, pq) = (dir.path().join("c.npy"), dir.path().join("c.parquet"));
    for out in [&npy, &pq] {
        hullsweep()
            .args(["data", "--bars", "300000", "--out", s(out)])
            .assert()
            .success();
    }
    let sweep = |data: &Path| {
        let out = hullsweep()
            .args(["sweep", "--data", s(data), "--grid", "6:80:4"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(sweep(&pq), sweep(&npy));

    // A bad price in the second row group is named by file, column and row.
    let mut close = hullsweep_kernel::gbm(5000, 1, 0.01).unwrap();
    close[3210] = -1.5;
    let bad = dir.path().join("bad.parquet");
    let mut f = std::fs::File::create(&bad).unwrap();
    let mut w = hullsweep_data::parquet::ParquetWriter::new(&mut f).unwrap();
    w.put(&close[..3000]).unwrap();
    w.put(&close[3000..]).unwrap();
    w.finish().unwrap();
    let e = fails(&["sweep", "--data", s(&bad), "--column", "Close"]);
    assert!(
        e.contains("bad.parquet: bad price -1.5 at index 3210 in column \"close\""),
        "{e}"
    );
    let e = fails(&["sweep", "--data", s(&bad), "--column", "open"]);
    assert!(
        e.contains("no column named \"open\"") && e.contains("[\"close\"]"),
        "{e}"
    );
}

/// `--out` to a path that is not a regular file (a FIFO here; `/dev/null` in use) is written in
/// place: the atomic rename used for ordinary files would replace the special file itself (as
/// root, `--out /dev/null` once turned /dev/null into a regular file).
#[test]
fn out_to_a_special_file_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("c.npy");
    io::write_f64_npy(&npy, &hullsweep_kernel::gbm(500, 3, 0.002).unwrap()).unwrap();
    let fifo = dir.path().join("out.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    hullsweep()
        .args([
            "sweep",
            "--data",
            s(&npy),
            "--grid",
            "6:40:3",
            "--out",
            s(&fifo),
        ])
        .assert()
        .success();
    // Checked before joining: a replaced FIFO would leave the reader waiting forever.
    let kind = std::fs::metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
    let text = reader.join().unwrap();
    assert!(
        text.starts_with("combo,") && text.lines().count() == 4,
        "{text}"
    );
}

/// A child process killed when the test ends, whatever happened to the test.
#[cfg(target_os = "linux")]
struct Running(std::process::Child);

#[cfg(target_os = "linux")]
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(target_os = "linux")]
impl Running {
    /// Starts `hullsweep args` with stderr captured.
    fn start(args: &[&str]) -> Running {
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hullsweep"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Running(child)
    }

    /// Waits until the process catches SIGINT (its handler is installed: `SigCgt` in
    /// /proc/PID/status), so the signal the test sends is the CLI's to handle, not the default
    /// action's. False if it exited first.
    fn catches_sigint(&mut self, within: std::time::Duration) -> bool {
        let status = format!("/proc/{}/status", self.0.id());
        let start = std::time::Instant::now();
        while start.elapsed() < within {
            if self.0.try_wait().unwrap().is_some() {
                return false;
            }
            let text = std::fs::read_to_string(&status).unwrap_or_default();
            let caught = text
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
                .unwrap_or(0);
            // Signal n is bit n - 1; SIGINT is 2.
            if caught & 1 << 1 != 0 {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        false
    }

    /// Sends SIGINT (what Ctrl-C sends) and waits for the exit: its status, stderr and the
    /// seconds it took after the signal.
    fn interrupt(mut self) -> (std::process::ExitStatus, String, f64) {
        use std::io::Read;
        assert!(
            self.0.try_wait().unwrap().is_none(),
            "the run ended before it was interrupted: make it longer"
        );
        let pid = rustix::process::Pid::from_child(&self.0);
        let sent = std::time::Instant::now();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        // Bounded: a run that ignored the signal would be killed by `Drop` when this fails.
        let deadline = std::time::Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.0.try_wait().unwrap() {
                break s;
            }
            assert!(
                sent.elapsed() < deadline,
                "no exit {deadline:?} after SIGINT"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let secs = sent.elapsed().as_secs_f64();
        let mut stderr = String::new();
        self.0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status, stderr, secs)
    }
}

/// The files in `dir` (names), to show that an interrupted run left nothing behind.
#[cfg(target_os = "linux")]
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Ctrl-C during a long streamed sweep: the run stops at the next chunk (seconds, where the
/// whole run takes minutes here), exits 1 with one line saying how far it got and that
/// nothing was written, and leaves neither `--out` nor a temporary file beside it.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_a_sweep_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // 40 chunks of bars against 300 combos on one thread: many seconds of work on any core.
    let n = 40 * CHUNK_BARS;
    let npy = dir.path().join("big.npy");
    io::write_f64_npy(&npy, &hullsweep_kernel::gbm(n, 5, 0.001).unwrap()).unwrap();
    let out = dir.path().join("r.csv");
    let mut run = Running::start(&[
        "sweep",
        "--data",
        s(&npy),
        "--grid",
        "6:400:300",
        "--threads",
        "1",
        "--out",
        s(&out),
    ]);
    assert!(run.catches_sigint(std::time::Duration::from_secs(60)));
    // Into the sweep loop: past opening the file and the first chunk.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (status, stderr, secs) = run.interrupt();
    assert_eq!(status.code(), Some(1), "{status:?}: {stderr}");
    let line = stderr.trim();
    assert!(
        line.starts_with("hullsweep: error: interrupted after ")
            && line.ends_with(&format!("bars of {}; nothing was written", npy.display())),
        "{stderr}"
    );
    let done: u64 = line["hullsweep: error: interrupted after ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(done < n as u64, "stopped after {done} of {n} bars");
    // One chunk's work (256 Ki bars x 300 combos) is well under a second on a free core;
    // the bound leaves room for a loaded machine.
    assert!(secs < 30.0, "took {secs:.1} s to stop");
    assert!(!out.exists());
    assert_eq!(names(dir.path()), ["big.npy"], "left behind");
}

/// Ctrl-C while `hullsweep data` writes a large series piece by piece: it stops at the next
/// piece, exits 1 saying the file was not written, and removes its temporary file.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_data_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.npy");
    // 1.6 GB if it ran to the end; it is stopped within a few pieces of 2 MB.
    let mut run = Running::start(&["data", "--bars", "200000000", "--out", s(&out)]);
    assert!(run.catches_sigint(std::time::Duration::from_secs(60)));
    // Wait until it is writing: its temporary file exists beside the output.
    let start = std::time::Instant::now();
    while !names(dir.path()).iter().any(|n| n.ends_with(".part")) {
        assert!(start.elapsed().as_secs() < 60, "no temporary file appeared");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let (status, stderr, secs) = run.interrupt();
    assert_eq!(status.code(), Some(1), "{status:?}: {stderr}");
    assert!(
        stderr.trim()
            == format!(
                "hullsweep: error: interrupted; {} was not written",
                out.display()
            )
            || stderr.trim()
                == format!(
                    "hullsweep: error: cannot write {}: interrupted",
                    out.display()
                ),
        "{stderr}"
    );
    assert!(secs < 30.0, "took {secs:.1} s to stop");
    assert!(!out.exists());
    assert!(
        names(dir.path()).is_empty(),
        "left behind: {:?}",
        names(dir.path())
    );
}
