//! Percentiles over all timed trips and the Markdown report: one row per method, ratios to the
//! floor's p50, and the machine, toolchain and run settings the numbers belong to.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

use crate::poll::STALL;
use crate::shm::nanos;

/// The timed trips of one method over all rounds, and each round's p50.
pub struct Series {
    pub method: String,
    pub payload: String,
    pub trips: Vec<u64>,
    pub round_p50: Vec<u64>,
}

pub struct Stats {
    pub p50: u64,
    pub p99: u64,
    pub mean: f64,
}

/// Nearest-rank percentile of sorted data.
fn pct(sorted: &[u64], p: usize) -> u64 {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank - 1]
}

pub fn p50_of(trips: &[u64]) -> u64 {
    let mut v = trips.to_vec();
    v.sort_unstable();
    pct(&v, 50)
}

pub fn stats(trips: &[u64]) -> Stats {
    let mut v = trips.to_vec();
    v.sort_unstable();
    let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
    Stats {
        p50: pct(&v, 50),
        p99: pct(&v, 99),
        mean: sum as f64 / v.len() as f64,
    }
}

/// What `Instant::now()` twice in a row costs (its p50), which every timed trip includes.
pub fn timer_overhead() -> u64 {
    let mut v: Vec<u64> = (0..100_000)
        .map(|_| {
            let t = Instant::now();
            nanos(t.elapsed())
        })
        .collect();
    v.sort_unstable();
    pct(&v, 50)
}

pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, m)| m.trim())
        })
        .unwrap_or("unknown CPU");
    let logical = info.lines().filter(|l| l.starts_with("processor")).count();
    let avail = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {logical} logical CPUs in /proc/cpuinfo ({avail} available to this process)")
}

/// `rustc -vV` at run time (`$RUSTC` if set): its first line, host and LLVM version.
pub fn rustc_version() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(&rustc).arg("-vV").output() else {
        return format!("`{rustc} -vV` failed to run");
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(str::trim)
            .unwrap_or("?")
    };
    let first = text.lines().next().unwrap_or("?");
    format!(
        "{first}, host {}, LLVM {}",
        field("host:"),
        field("LLVM version:")
    )
}

/// The iceoryx2 version this binary was built against, read from this workspace's Cargo.lock.
pub fn iceoryx2_version() -> &'static str {
    let lock = include_str!("../Cargo.lock");
    lock.split("[[package]]")
        .find(|p| p.contains("name = \"iceoryx2\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or("?")
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

pub struct Run {
    pub rounds: usize,
    pub trips: usize,
    pub warmup: usize,
    pub load_before: String,
    pub load_after: String,
    pub seconds: f64,
}

pub fn markdown(series: &[Series], run: &Run) -> String {
    let floor = stats(&series[0].trips).p50.max(1) as f64;
    let mut s = String::new();
    let _ = writeln!(s, "## Shared-memory round-trip floor\n");
    let _ = writeln!(
        s,
        "| method | payload | p50 ns | p99 ns | mean ns | p50 ÷ floor | p99 ÷ floor | mean ÷ floor | p50 ns per round |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---|");
    let mut rr_ratio = None;
    for m in series {
        let st = stats(&m.trips);
        let per_round: Vec<String> = m.round_p50.iter().map(u64::to_string).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.0} | {:.2}× | {:.2}× | {:.2}× | {} |",
            m.method,
            m.payload,
            st.p50,
            st.p99,
            st.mean,
            st.p50 as f64 / floor,
            st.p99 as f64 / floor,
            st.mean / floor,
            per_round.join(" / ")
        );
        if m.method.contains("request-response") {
            rr_ratio = Some(st.p50 as f64 / floor);
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "- floor: the first row, a bare atomic ping-pong on one shared 64-byte cache line"
    );
    if let Some(r) = rr_ratio {
        let verdict = if r > 3.0 {
            "over 3×: build the SPSC ring pair"
        } else {
            "within 3×: use iceoryx2"
        };
        let _ = writeln!(
            s,
            "- issue's threshold: iceoryx2 request-response p50 is {r:.2}× the floor p50, {verdict}"
        );
    }
    let _ = writeln!(s, "- machine: {}", cpu_model());
    let _ = writeln!(s, "- rustc: {}", rustc_version());
    let _ = writeln!(
        s,
        "- iceoryx2 {} (`ipc::Service`, default config); floor on a memfd mapped `MAP_SHARED` (memmap2)",
        iceoryx2_version()
    );
    let _ = writeln!(
        s,
        "- hullsweep ring pair: `hullsweep_engine::shm` (`Segment`, a sealed memfd with two SPSC byte rings, each one page or the largest payload rounded up to a power of two) read and written as an `ShmStream` by both sides, `WaitPolicy::Busy`, {STALL:?} read and write timeouts; the server `read_exact`s each message and `write_all`s it back; no session or protocol framing"
    );
    let _ = writeln!(
        s,
        "- run: {} rounds × {} timed trips per method, {} warm-up trips before each, methods interleaved and their order rotated every round; {:.1} s in all",
        run.rounds, run.trips, run.warmup, run.seconds
    );
    let _ = writeln!(
        s,
        "- scheduling: not pinned, left to the OS; both processes busy-poll (`spin_loop`); load average {} before, {} after",
        run.load_before, run.load_after
    );
    let _ = writeln!(
        s,
        "- timing: `Instant` around each trip, percentiles nearest-rank over all trips of all rounds; two back-to-back `Instant::now()` cost {} ns (p50), included in every row",
        timer_overhead()
    );
    if cfg!(debug_assertions) {
        let _ = writeln!(
            s,
            "- **debug build**: run with `--release` for meaningful numbers"
        );
    }
    s
}
