//! The sizes and switches of one report run: the quick smoke test's tiny data or the full
//! workload, and which of the slow parts (separate builds, flamegraphs) run at all.

/// Sizes and switches of one report run.
pub(super) struct Plan {
    pub(super) quick: bool,
    pub(super) bars: usize,
    pub(super) grid: &'static str,
    pub(super) hyp_grid: &'static str,
    pub(super) rounds: usize,
    pub(super) cg_bars: usize,
    pub(super) cg_grid: &'static str,
    pub(super) elem_bars: usize,
    pub(super) elem_window: usize,
    pub(super) builds: bool,
}

impl Plan {
    pub(super) fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                bars: 3_000,
                grid: "6:60:3",
                hyp_grid: "6:60:3",
                rounds: 3,
                cg_bars: 1_000,
                cg_grid: "6:40:2",
                elem_bars: 3_000,
                elem_window: 50,
                builds: false,
            }
        } else {
            Plan {
                quick,
                bars: hullsweep_kernel::DEFAULT_BARS,
                grid: "6:200:80",
                hyp_grid: "6:200:16",
                rounds: 10,
                cg_bars: 4_000,
                cg_grid: "6:200:6",
                elem_bars: 20_000,
                elem_window: 100,
                builds: true,
            }
        }
    }
}
