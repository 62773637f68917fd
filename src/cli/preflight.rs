//! What a user should hear before a sweep starts: its size, with a rough time, when it is large,
//! and which combos cannot trade because their windows are longer than the series.

use hullsweep_kernel::Combo;
use hullsweep_variants::effective_window;

/// Bar-combos from which a sweep's size is announced before it starts.
const LARGE: f64 = 1e10;

/// `fastest`'s rough pace per core on the lab's 2-vCPU machine (docs: reports/lab.md): the
/// default sweep's 12 million bar-combos in about 18 ms on one core, and a streamed 1e9-bar
/// sweep at 1.2e9 bar-combos a second on two.
const BAR_COMBOS_PER_CORE_SECOND: f64 = 6e8;

/// Says on stderr what is worth knowing before sweeping `params` over `bars` bars (None when
/// the length is not known without reading the file).
pub fn announce(params: &[Combo], bars: Option<u64>) {
    let Some(bars) = bars else { return };
    let work = bars as f64 * params.len() as f64;
    if work >= LARGE {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let secs = work / (BAR_COMBOS_PER_CORE_SECOND * cores);
        eprintln!(
            "sweeping {} combos over {bars} bars: {work:.2e} bar-combos, roughly {} on {cores} \
             cores at fastest's pace on the lab's machine",
            params.len(),
            duration(secs)
        );
    }
    let too_long = params
        .iter()
        .filter(|c| effective_window(c) as u64 > bars)
        .count();
    if too_long > 0 {
        eprintln!(
            "warning: {too_long} of {} combos need more than the series' {bars} bars before their \
             first signal (their windows are too long): they never trade",
            params.len()
        );
    }
}

fn duration(secs: f64) -> String {
    match secs {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}
