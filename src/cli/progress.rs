//! What long commands show and obey: a progress bar on stderr when it is a terminal, Ctrl-C that
//! stops the work at the next chunk and writes nothing, and the peak memory a run took.

use hullsweep_data::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Set by Ctrl-C (SIGINT) once [`catch_interrupt`] has run; long loops poll it between chunks.
fn interrupted() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// From now on the first Ctrl-C only sets [`interrupted`] (the work stops at the next chunk and
/// writes nothing); a second one exits at once, as the default would.
pub fn catch_interrupt() {
    #[cfg(unix)]
    {
        use signal_hook::consts::SIGINT;
        let flag = interrupted();
        // Registration fails only when the OS refuses a handler; Ctrl-C then keeps its default.
        let _ = signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(flag));
        let _ = signal_hook::flag::register(SIGINT, Arc::clone(flag));
    }
}

/// The CLI's [`Progress`]: a bar labelled `what` (units done, rate, ETA) once the work starts,
/// on stderr when it is a terminal and hidden otherwise; cancelled by Ctrl-C.
pub struct Bar {
    what: &'static str,
    unit: &'static str,
    bar: OnceLock<ProgressBar>,
}

impl Bar {
    /// A bar counting bars (a file read or written), shown when the work starts.
    pub fn new(what: &'static str) -> Bar {
        Bar {
            what,
            unit: "bars",
            bar: OnceLock::new(),
        }
    }

    /// A bar counting a sweep's work in bar·combos, so a big grid moves as a long series does.
    pub fn sweep() -> Bar {
        Bar {
            unit: "bar·combos",
            ..Bar::new("sweeping")
        }
    }

    /// Clears the bar from the terminal (done or failed).
    pub fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn start(&self, total: Option<u64>) {
        let _ = self.bar.set(progress(total, self.what, self.unit));
    }

    fn advance(&self, bars: u64) {
        if let Some(bar) = self.bar.get() {
            bar.inc(bars);
        }
    }

    fn cancelled(&self) -> bool {
        interrupted().load(Ordering::Relaxed)
    }
}

/// A progress bar on stderr when it is a terminal (units done, rate, ETA), hidden otherwise.
fn progress(total: Option<u64>, what: &str, unit: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let template = match total {
        Some(_) => format!(
            "{what} {{wide_bar}} {{human_pos}}/{{human_len}} {unit}, {{per_sec}}, ETA {{eta}}"
        ),
        None => format!("{what} {{spinner}} {{human_pos}} {unit}, {{per_sec}}, {{elapsed}}"),
    };
    let bar = match total {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    bar.set_style(ProgressStyle::with_template(&template).expect("a valid template"));
    bar
}

/// `", peak RSS N MiB"` where the OS says (Linux: `VmHWM` of /proc/self/status), else nothing.
pub fn peak_rss_note() -> String {
    hullsweep_lab::scale::peak_rss_mib()
        .map(|m| format!(", peak RSS {m:.1} MiB"))
        .unwrap_or_default()
}
