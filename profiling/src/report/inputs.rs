//! Everything one report run measured, handed to every section: the sections render from
//! these values alone and measure nothing themselves.

use super::apple::model::AppleCodegen;
use super::plan::Plan;
use crate::asm::AsmSet;
use crate::callgrind::Counts;
use crate::timing::Outcome;
use std::path::{Path, PathBuf};

/// Everything one report run measured, for the sections to render.
#[derive(Clone, Copy)]
pub(super) struct Inputs<'a> {
    pub(super) plan: &'a Plan,
    pub(super) facts: &'a [(String, String)],
    pub(super) gap: Option<&'a Outcome>,
    pub(super) ladder: &'a Outcome,
    pub(super) results: &'a [(&'a str, &'a str, Outcome)],
    pub(super) per_elem: &'a [(String, f64)],
    pub(super) counts: Option<&'a Counts>,
    pub(super) set: &'a AsmSet,
    pub(super) apple: &'a AppleCodegen,
    pub(super) flames: &'a [(String, PathBuf)],
    pub(super) faults: &'a [(String, u64)],
    pub(super) notes: &'a [String],
    pub(super) out: &'a Path,
}

impl Inputs<'_> {
    /// The ladder's last arm, when it is numba (it is whenever numba ran).
    fn ladder_numba(&self) -> Option<usize> {
        let last = self.ladder.labels.len() - 1;
        (self.ladder.labels[last] == "numba sweep").then_some(last)
    }

    /// The fraction of the reference's time numba saves (wall, CPU): on the reduced sweep when the
    /// ladder has numba (the hypotheses run there), else on the full sweep.
    pub(super) fn gap_fracs(&self) -> (Option<f64>, Option<f64>) {
        let l = self.ladder;
        match (self.ladder_numba(), self.gap) {
            (Some(last), _) => (
                Some(1.0 - l.median(last) / l.median(0)),
                Some(1.0 - l.cpu_median(last) / l.cpu_median(0)),
            ),
            (None, Some(g)) => (
                Some(1.0 - g.median(1) / g.median(0)),
                Some(1.0 - g.cpu_median(1) / g.cpu_median(0)),
            ),
            (None, None) => (None, None),
        }
    }
}
