//! Shared-memory wait policies bar after bar: push and echo latency back to back, the push's
//! ratio to in-process `Live::push`, and an idle connection's server CPU, per `WaitPolicy`.

// cargo run --release -p hullsweep-engine --example shm_wait -- [--bars N] [--combos 80]
//
// Each policy gets its own server (on a thread, `Config::shm_wait`) and client (`connect_shm`),
// one after the other, so a busy server never runs beside another policy's. The burst pushes
// one bar per call with nothing in between, alternating shared-memory blocks and in-process
// blocks (A B A B, 20 rounds) over the same bars; every pushed bar's events are checked against
// the in-process push's, bit for bit. Idle CPU: the client stays connected and the main thread
// sleeps 2 s; the process's utime + stime over that interval (`/proc/self/stat`) is the
// server's waiting, as a % of one core.

use clap::Parser;
use hullsweep_engine::shm::WaitPolicy;
use hullsweep_engine::{Client, Config, Server};
use hullsweep_kernel::{Combo, DEFAULT_FEE_PCT, Event, GridSpec, default_close, grid2};
use hullsweep_variants::{Live, Threads, Variant};
use rustix::process::Pid;
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Shared-memory wait policies: bar-after-bar push, echo, idle server CPU")]
struct Args {
    /// Single-bar pushes timed per policy (and as many in-process), and echoes.
    #[arg(long, default_value_t = 5000)]
    bars: usize,
    /// Stream size: 80 is the default grid, anything else a two-axis grid of lengths 6..=200.
    #[arg(long, default_value_t = 80)]
    combos: usize,
    /// Bars pushed before timing, in chunks of 50, on both sides.
    #[arg(long, default_value_t = 2000)]
    warmup: usize,
    /// Seconds the connected client stays silent while the server's CPU is measured.
    #[arg(long, default_value_t = 2.0)]
    idle_s: f64,
    /// Pin the client to CPU C and the server to CPU S, as `C,S`; for the in-process blocks the
    /// two threads swap CPUs, so both kinds of push are timed on S. Unpinned, the scheduler
    /// moves the threads, and two vCPUs of a shared host can differ in speed for seconds at a
    /// time: the ratio would then measure the placement as much as the transport.
    #[arg(long, value_parser = parse_pin)]
    pin: Option<(usize, usize)>,
    /// Measure only the policies named (busy, spin, event; repeatable), e.g. to profile one.
    #[arg(long, value_parser = ["busy", "spin", "event"])]
    policy: Vec<String>,
}

fn parse_pin(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--pin {s:?}: expected two CPU numbers as CLIENT,SERVER, e.g. 0,1");
    let (c, sv) = s.split_once(',').ok_or_else(bad)?;
    let cpu = |x: &str| x.trim().parse::<usize>().map_err(|_| bad());
    Ok((cpu(c)?, cpu(sv)?))
}

/// Pins thread `tid` (None: the calling thread, and the threads it spawns from now on) to
/// `cpu`.
fn pin_to(tid: Option<Pid>, cpu: usize) -> Result<(), String> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(tid, &set).map_err(|e| format!("--pin: CPU {cpu}: {e}"))
}

/// The newest of this process's server connection threads (`hullsweep-conn-*`): the one
/// serving the client just connected.
fn connection_thread() -> Result<Pid, String> {
    let tasks =
        std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    tasks
        .filter_map(|t| {
            let t = t.ok()?;
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let tid: i32 = t.file_name().to_str()?.parse().ok()?;
            comm.starts_with("hullsweep-conn").then_some(tid)
        })
        .max()
        .and_then(Pid::from_raw)
        .ok_or_else(|| "--pin: no server connection thread found".to_string())
}

const ROUNDS: usize = 20;

const POLICIES: [(&str, WaitPolicy); 3] = [
    ("busy", WaitPolicy::Busy),
    (
        "spin 50 µs (default)",
        WaitPolicy::Spin(Duration::from_micros(50)),
    ),
    ("event", WaitPolicy::Event),
];

struct Row {
    name: &'static str,
    push: Stats,
    inproc: Stats,
    echo: Stats,
    idle_cpu_pct: f64,
}

struct Stats {
    p50: f64,
    p99: f64,
    mean: f64,
}

impl Stats {
    /// From nanosecond samples; in microseconds.
    fn of(mut s: Vec<u64>) -> Stats {
        s.sort_unstable();
        let q = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
        Stats {
            p50: q(0.5),
            p99: q(0.99),
            mean: s.iter().sum::<u64>() as f64 / s.len() as f64 / 1e3,
        }
    }
}

fn params_for(n: usize) -> Vec<Combo> {
    if n == 80 {
        return hullsweep_kernel::default_params();
    }
    let k = (n as f64).sqrt().ceil() as usize;
    let spec = GridSpec { lo: 6, hi: 200, k };
    let mut p = grid2(spec, spec).expect("a valid grid");
    p.truncate(n);
    p
}

/// This process's user + system CPU time, in seconds (`/proc/self/stat`, USER_HZ = 100).
fn cpu_seconds() -> Result<f64, Box<dyn std::error::Error>> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').ok_or("odd /proc/self/stat")? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: u64 = f[11].parse::<u64>()? + f[12].parse::<u64>()?;
    Ok(ticks as f64 / 100.0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, nproc {cores}")
}

fn rustc_version() -> String {
    Command::new("rustc")
        .arg("-vV")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| {
            let line = |k: &str| {
                s.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .unwrap_or("?")
                    .trim()
                    .to_string()
            };
            format!("{} ({})", line("release:"), line("host:"))
        })
        .unwrap_or_else(|| "? (rustc not on PATH)".into())
}

fn same(a: &[Event], b: &[Event]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
}

fn measure(
    args: &Args,
    name: &'static str,
    policy: WaitPolicy,
    params: &[Combo],
    close: &[f64],
) -> Result<Row, Box<dyn std::error::Error>> {
    let config = Config {
        variant: Variant::Reference,
        threads: Threads::Fixed(1),
        shm_wait: policy,
        ..Config::default()
    };
    let tag: String = name.chars().take_while(char::is_ascii_alphabetic).collect();
    let shm_name = format!("shm-wait-{}-{tag}", std::process::id());
    let server = Server::bind_shm(&shm_name, config)?;
    let stop = server.shutdown_handle();
    // A thread inherits its creator's CPU set: the server's threads get the server's CPU.
    if let Some((_, server_cpu)) = args.pin {
        pin_to(None, server_cpu)?;
    }
    let thread = std::thread::spawn(move || server.run());
    if let Some((client_cpu, _)) = args.pin {
        pin_to(None, client_cpu)?;
    }

    let mut client = Client::connect_shm(&shm_name, policy)?;
    client.set_timeout(Some(Duration::from_secs(60)))?;
    let stream = client.open_stream(params, DEFAULT_FEE_PCT)?;
    // Where the client and the server connection's thread run for a block of shm pushes
    // (`true`) or of in-process ones, which then take the server's CPU.
    let pins = match args.pin {
        Some(cpus) => Some((connection_thread()?, cpus)),
        None => None,
    };
    let place = |shm: bool| -> Result<(), String> {
        if let Some((server, (c, s))) = pins {
            let (client_cpu, server_cpu) = if shm { (c, s) } else { (s, c) };
            pin_to(Some(server), server_cpu)?;
            pin_to(None, client_cpu)?;
        }
        Ok(())
    };
    let mut live = Live::new(params, DEFAULT_FEE_PCT)?;
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for chunk in close[..args.warmup].chunks(50) {
        client.push(stream, chunk, &mut got)?;
        live.push_many(chunk, &mut want)?;
    }
    if !same(&got, &want) {
        return Err(format!("{name}: warm-up events differ").into());
    }

    // (1) Burst: blocks of single-bar pushes back to back, shm then in-process, per round.
    let bars = &close[args.warmup..args.warmup + args.bars];
    let block = args.bars.div_ceil(ROUNDS);
    let (mut shm_ns, mut in_ns) = (Vec::with_capacity(args.bars), Vec::with_capacity(args.bars));
    let mut per_bar: Vec<Vec<Event>> = vec![Vec::new(); block];
    for (round, chunk) in bars.chunks(block).enumerate() {
        place(true)?;
        for (i, &bar) in chunk.iter().enumerate() {
            let events = &mut per_bar[i];
            events.clear();
            let start = Instant::now();
            client.push(stream, &[bar], events)?;
            shm_ns.push(start.elapsed().as_nanos() as u64);
        }
        place(false)?;
        for (i, &bar) in chunk.iter().enumerate() {
            want.clear();
            let start = Instant::now();
            live.push(bar, &mut want)?;
            in_ns.push(start.elapsed().as_nanos() as u64);
            if !same(&per_bar[i], &want) {
                let at = args.warmup + round * block + i;
                return Err(format!("{name}: bar {at}: events differ from in-process").into());
            }
        }
    }
    place(true)?;
    client.close_stream(stream)?;

    // (2) Echo of one float, back to back.
    let mut echo_ns = Vec::with_capacity(args.bars);
    for _ in 0..args.bars {
        let start = Instant::now();
        let back = client.echo(&[1.0])?;
        echo_ns.push(start.elapsed().as_nanos() as u64);
        if back != [1.0] {
            return Err(format!("{name}: echo came back changed").into());
        }
    }

    // (3) Idle: connected, silent; this thread sleeps, so only the server's waiting costs CPU.
    client.echo(&[1.0])?;
    let (c0, t0) = (cpu_seconds()?, Instant::now());
    std::thread::sleep(Duration::from_secs_f64(args.idle_s));
    let (c1, wall) = (cpu_seconds()?, t0.elapsed().as_secs_f64());
    client.echo(&[1.0])?;

    drop(client);
    stop.shutdown();
    thread.join().map_err(|_| "server thread panicked")??;
    Ok(Row {
        name,
        push: Stats::of(shm_ns),
        inproc: Stats::of(in_ns),
        echo: Stats::of(echo_ns),
        idle_cpu_pct: (c1 - c0) / wall * 100.0,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.bars < ROUNDS {
        return Err(format!("--bars must be at least {ROUNDS}").into());
    }
    let close = default_close();
    if args.warmup + args.bars > close.len() {
        return Err(format!("--warmup + --bars must be at most {}", close.len()).into());
    }
    let params = params_for(args.combos);
    let load_before = loadavg();
    let mut rows = Vec::new();
    for (name, policy) in POLICIES {
        let tag: String = name.chars().take_while(char::is_ascii_alphabetic).collect();
        if !args.policy.is_empty() && !args.policy.contains(&tag) {
            continue;
        }
        rows.push(measure(&args, name, policy, &params, &close)?);
    }
    let load_after = loadavg();

    println!(
        "{} combos, {} single-bar pushes per policy after {} warm-up bars, {ROUNDS} rounds of \
         shm / in-process blocks; {} echoes; idle {:.1} s\n",
        params.len(),
        args.bars,
        args.warmup,
        args.bars,
        args.idle_s
    );
    println!(
        "| policy | push p50 µs | push p99 µs | push p50 ÷ in-process | echo p50 µs | echo p99 µs \
         | idle CPU % |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for r in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {:.1}× | {:.2} | {:.2} | {:.1} |",
            r.name,
            r.push.p50,
            r.push.p99,
            r.push.p50 / r.inproc.p50,
            r.echo.p50,
            r.echo.p99,
            r.idle_cpu_pct
        );
    }
    println!();
    for r in &rows {
        println!(
            "- {}: push mean {:.2} µs; in-process p50 {:.3} / p99 {:.3} / mean {:.3} µs; \
             echo mean {:.2} µs",
            r.name, r.push.mean, r.inproc.p50, r.inproc.p99, r.inproc.mean, r.echo.mean
        );
    }
    println!("- events: every pushed bar bit-identical to in-process `Live::push`");
    println!("- machine: {}", machine());
    println!("- rustc: {}", rustc_version());
    println!("- load average (1, 5, 15 min): before {load_before}, after {load_after}");
    Ok(())
}
