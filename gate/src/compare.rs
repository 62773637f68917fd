//! The equivalence gate: compare an implementation's per-combo results with the numba reference's
//! (live, or the golden fixtures in `gate/tests/golden/`) on every dataset of the suite, and report.
//!
//! The rule (docs/gate.md): every combo's trade count equal, and `|pnl - pnl_ref| <= 1e-6`.
//! Bit-identity is reported as well, because the reference-arithmetic variants must reach it.

use anyhow::Context;
use hullsweep_data::Dataset;
use hullsweep_kernel::SweepResult;
use std::fmt;

/// The spec's PnL tolerance, in percentage points.
pub const PNL_TOLERANCE: f64 = 1e-6;

/// How one implementation's results compare with the reference's on one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct GateReport {
    /// The suite dataset compared (its `Dataset::name`), or the contender's label in the lab.
    pub dataset: String,
    /// Combos compared (the reference's count; a missing or extra combo counts as a mismatch).
    pub combos: usize,
    /// Combos whose trade count differs.
    pub trade_mismatches: usize,
    /// Combos whose PnL differs by more than [`PNL_TOLERANCE`].
    pub pnl_mismatches: usize,
    /// The largest `|pnl - pnl_ref|` (infinite where a combo is missing or one side is NaN).
    pub max_abs_dpnl: f64,
    /// Combos whose PnL bits or trades differ at all.
    pub bit_mismatches: usize,
    /// The first combo that fails the gate, for a closer look.
    pub first_failure: Option<usize>,
}

impl GateReport {
    /// The spec's verdict: no trade difference and every PnL within tolerance.
    pub fn passes(&self) -> bool {
        self.trade_mismatches == 0 && self.max_abs_dpnl <= PNL_TOLERANCE
    }

    /// Every combo's trades and PnL bits equal.
    pub fn bit_identical(&self) -> bool {
        self.bit_mismatches == 0
    }

    /// The table header matching [`GateReport`]'s `Display` rows.
    pub fn header() -> String {
        format!(
            "{:<16} {:>6} {:>7} {:>7} {:>11} {:>5}  verdict",
            "dataset", "combos", "trades≠", "pnl≠", "max|ΔPnL|", "bits"
        )
    }
}

impl fmt::Display for GateReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passes() {
            "PASS".to_string()
        } else {
            format!("FAIL (first at combo {})", self.first_failure.unwrap_or(0))
        };
        let dpnl = if self.max_abs_dpnl == 0.0 {
            "0".to_string()
        } else {
            format!("{:.3e}", self.max_abs_dpnl)
        };
        write!(
            f,
            "{:<16} {:>6} {:>7} {:>7} {dpnl:>11} {:>5}  {verdict}",
            self.dataset,
            self.combos,
            self.trade_mismatches,
            self.pnl_mismatches,
            if self.bit_identical() { "yes" } else { "no" },
        )
    }
}

/// Compares `got` with the reference's `want`, combo by combo.
pub fn compare(name: &str, got: &SweepResult, want: &SweepResult) -> GateReport {
    let combos = want.pnl.len().max(got.pnl.len());
    let mut report = GateReport {
        dataset: name.to_string(),
        combos,
        trade_mismatches: 0,
        pnl_mismatches: 0,
        max_abs_dpnl: 0.0,
        bit_mismatches: 0,
        first_failure: None,
    };
    for k in 0..combos {
        let pnl = (got.pnl.get(k), want.pnl.get(k));
        let trades = (got.trades.get(k), want.trades.get(k));
        let trades_equal = matches!(trades, (Some(a), Some(b)) if a == b);
        let (dpnl, bits_equal) = match pnl {
            (Some(a), Some(b)) if a.to_bits() == b.to_bits() => (0.0, true),
            // Both NaN: the same result (a NaN's payload is not part of the kernel's output, and
            // hardware differs in the one it makes, e.g. x86 and aarch64 for `inf - inf`).
            (Some(a), Some(b)) if a.is_nan() && b.is_nan() => (0.0, true),
            // NaN on one side is as far off as it gets.
            (Some(a), Some(b)) => ((a - b).abs(), false),
            _ => (f64::INFINITY, false),
        };
        let dpnl = if dpnl.is_nan() { f64::INFINITY } else { dpnl };
        if !trades_equal {
            report.trade_mismatches += 1;
        }
        if dpnl > PNL_TOLERANCE {
            report.pnl_mismatches += 1;
        }
        if !(trades_equal && bits_equal) {
            report.bit_mismatches += 1;
        }
        if (!trades_equal || dpnl > PNL_TOLERANCE) && report.first_failure.is_none() {
            report.first_failure = Some(k);
        }
        report.max_abs_dpnl = report.max_abs_dpnl.max(dpnl);
    }
    report
}

/// Runs `implementation` and `oracle` on every dataset and compares them.
pub fn gate<F, O, E>(
    suite: &[Dataset],
    mut implementation: F,
    mut oracle: O,
) -> anyhow::Result<Vec<GateReport>>
where
    F: FnMut(&Dataset) -> Result<SweepResult, E>,
    E: Into<anyhow::Error>,
    O: FnMut(&Dataset) -> anyhow::Result<SweepResult>,
{
    suite
        .iter()
        .map(|d| {
            let want = oracle(d).with_context(|| format!("reference on dataset {}", d.name))?;
            let got = implementation(d)
                .map_err(Into::into)
                .with_context(|| format!("implementation on dataset {}", d.name))?;
            Ok(compare(&d.name, &got, &want))
        })
        .collect()
}

/// A table of reports under a title line.
pub fn table(title: &str, reports: &[GateReport]) -> String {
    let mut s = format!("{title}\n{}\n", GateReport::header());
    for r in reports {
        s += &format!("{r}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(pnl: &[f64], trades: &[i64]) -> SweepResult {
        SweepResult {
            pnl: pnl.to_vec(),
            trades: trades.to_vec(),
        }
    }

    #[test]
    fn identical_results_pass_bit_identically() {
        let r = result(&[1.5, -0.25, 0.0], &[3, 1, 0]);
        let rep = compare("x", &r, &r);
        assert!(rep.passes() && rep.bit_identical());
        assert_eq!(
            (rep.combos, rep.max_abs_dpnl, rep.first_failure),
            (3, 0.0, None)
        );
    }

    #[test]
    fn one_ulp_passes_but_is_not_bit_identical() {
        let want = result(&[1.5, 2.0], &[3, 1]);
        let got = result(&[1.5, f64::from_bits(2.0f64.to_bits() + 1)], &[3, 1]);
        let rep = compare("x", &got, &want);
        assert!(rep.passes());
        assert!(!rep.bit_identical());
        assert_eq!(rep.bit_mismatches, 1);
    }

    #[test]
    fn trade_or_pnl_differences_fail() {
        let want = result(&[1.5, 2.0, 3.0], &[3, 1, 2]);
        let rep = compare("x", &result(&[1.5, 2.0, 3.0], &[3, 2, 2]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.trade_mismatches, rep.first_failure), (1, Some(1)));
        let rep = compare("x", &result(&[1.5, 2.0, 3.00001], &[3, 1, 2]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.pnl_mismatches, rep.first_failure), (1, Some(2)));
        let rep = compare("x", &result(&[1.5, f64::NAN, 3.0], &[3, 1, 2]), &want);
        assert!(!rep.passes() && rep.max_abs_dpnl.is_infinite());
        let rep = compare("x", &result(&[1.5, 2.0], &[3, 1]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.combos, rep.trade_mismatches), (3, 1));
        assert!(rep.to_string().contains("FAIL (first at combo 2)"));
    }
}
