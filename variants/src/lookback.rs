//! How far back a combo reads: the one number the streaming `Sweeper`, the live state and
//! `rolling`'s blocks all carry between pieces of a series.

use hullsweep_kernel::{Combo, window};

/// The effective lookback of a combo: `d` at bar `i` reads bars `i + 1 - W ..= i` (the batch's
/// `Plan::route` calls it `weff`; a series shorter than it gives an all-NaN `d`).
pub fn effective_window(combo: &Combo) -> usize {
    let [n, h, s, m, h3, t] = combo.map(window);
    let hma = n.max(h).saturating_add(s) - 1;
    let hma3 = t.max(h3).max(m).saturating_add(m) - 1;
    hma.max(hma3)
}
