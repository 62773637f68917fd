//! A validation of a series replayed in pieces (as `hullsweep validate --data` reads a file) is
//! the validation of the series in memory, bit for bit, for every variant; and both are the
//! research crate's definitions applied to the kernel's own bar returns. A replay that gives
//! other bars, or fails, is refused.

use hullsweep_kernel::{Combo, ValidClose, run_combo_returns};
use hullsweep_research::{Metric, WalkSpec, deflated_sharpe, oos_summary};
use hullsweep_validate::{Plan, Replay, ValidateError, Validation, validate, validate_replay};
use hullsweep_variants::{Threads, Variant};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../../variants/tests/common/series.rs"]
mod series;

/// The series handed out in the pieces `cuts` makes, on every replay; `short` drops the last bar
/// from the second replay on.
struct Pieces<'a> {
    close: &'a [f64],
    cuts: Vec<usize>,
    reads: usize,
    short: bool,
}

impl Replay for Pieces<'_> {
    fn bars(&self) -> usize {
        self.close.len()
    }

    fn replay(
        &mut self,
        each: &mut dyn FnMut(&[f64]) -> Result<(), ValidateError>,
    ) -> Result<(), ValidateError> {
        self.reads += 1;
        let end = self.close.len() - usize::from(self.short && self.reads > 1);
        let mut at = 0;
        for &cut in self.cuts.iter().chain([&end]) {
            let cut = cut.clamp(at, end);
            each(&self.close[at..cut])?;
            at = cut;
        }
        Ok(())
    }
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// Everything a validation gives beyond the fold sweep (which tests/pieces.rs holds), as bits.
fn fingerprint(v: &Validation) -> Vec<u64> {
    let c = &v.cscv;
    let mut out = bits(&[c.pbo, c.prob_oos_loss]);
    out.extend(bits(&c.logits()));
    let d = &v.deflated;
    out.extend(bits(&[d.sharpe, d.sr0, d.skew, d.kurt, d.variance, d.dsr]));
    out.extend([d.combo as u64, d.bars as u64]);
    if let Some(w) = &v.walk_forward {
        out.extend(w.selections.iter().map(|s| s.selected as u64));
        out.extend(bits(&w.oos_returns));
        out.extend(w.window_starts.iter().map(|&s| s as u64));
        out.extend(bits(&[w.summary.pnl, w.summary.sharpe]));
        out.push(w.summary.bars as u64);
    }
    out
}

fn plan(walk: &WalkSpec) -> Plan<'_> {
    Plan {
        folds: 4,
        metric: Metric::Sharpe,
        walk: Some(walk),
        oos_returns: true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_replay_in_pieces_is_the_validation_in_memory(
        (close, params, fee) in series::case(),
        cuts in prop::collection::vec(0.0f64..1.0, 0..4),
        anchored in any::<bool>(),
    ) {
        prop_assume!(close.len() >= 8 && params.len() >= 2);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| (c * close.len() as f64) as usize).collect();
        cuts.sort_unstable();
        let walk = WalkSpec { train: 2 + close.len() / 4, test: 1 + close.len() / 8, anchored };
        let t = Threads::Fixed(2);
        for &v in Variant::ALL {
            let whole = validate(v, ValidClose::new(&close).unwrap(), &params, fee, t, plan(&walk), None);
            let mut pieces = Pieces { close: &close, cuts: cuts.clone(), reads: 0, short: false };
            let cut = validate_replay(v, &mut pieces, &params, fee, t, plan(&walk), None);
            // Degenerate data (a flat combo's Sharpe) may be refused: then by both alike.
            let (whole, cut) = match (whole, cut) {
                (Ok(a), Ok(b)) => (a, b),
                (a, b) => {
                    prop_assert_eq!(a.err().map(|e| e.to_string()), b.err().map(|e| e.to_string()));
                    continue;
                }
            };
            prop_assert_eq!(fingerprint(&whole), fingerprint(&cut), "{} cuts {:?}", v.name(), &cuts);
            // The research definitions over the kernel's returns, independently.
            let returns = |k: usize| run_combo_returns(&close, &params[k], fee);
            let sharpes: Vec<f64> = whole.sweep.combos().iter().map(|c| c.sharpe).collect();
            let d = deflated_sharpe(&sharpes, &returns(whole.deflated.combo)).unwrap();
            prop_assert_eq!(d, whole.deflated);
            let w = whole.walk_forward.as_ref().unwrap();
            let oos: Vec<f64> = w
                .selections
                .iter()
                .flat_map(|s| returns(s.selected)[s.window.test.clone()].to_vec())
                .collect();
            prop_assert_eq!(bits(&oos), bits(&w.oos_returns));
            prop_assert_eq!(oos_summary(&oos), w.summary);
        }
    }
}

fn small() -> (Vec<f64>, Vec<Combo>) {
    let close = hullsweep_kernel::gbm(400, 1, 0.01).unwrap();
    (close, hullsweep_kernel::default_params()[..4].to_vec())
}

#[test]
fn without_oos_returns_only_the_summary_is_kept() {
    let (close, params) = small();
    let walk = WalkSpec {
        train: 100,
        test: 50,
        anchored: false,
    };
    let valid = ValidClose::new(&close).unwrap();
    let (v, t) = (Variant::fastest(), Threads::Fixed(1));
    let kept = validate(v, valid, &params, 0.09, t, plan(&walk), None).unwrap();
    let lean = Plan {
        oos_returns: false,
        ..plan(&walk)
    };
    let lean = validate(v, valid, &params, 0.09, t, lean, None).unwrap();
    let (kept, lean) = (kept.walk_forward.unwrap(), lean.walk_forward.unwrap());
    assert!(lean.oos_returns.is_empty());
    assert_eq!(kept.oos_returns.len(), kept.summary.bars);
    assert_eq!(kept.summary, lean.summary);
}

#[test]
fn a_replay_that_loses_a_bar_or_fails_is_refused() {
    let (close, params) = small();
    let walk = WalkSpec {
        train: 100,
        test: 50,
        anchored: false,
    };
    let (v, t) = (Variant::fastest(), Threads::Fixed(1));
    let mut short = Pieces {
        close: &close,
        cuts: vec![150],
        reads: 0,
        short: true,
    };
    let e = validate_replay(v, &mut short, &params, 0.09, t, plan(&walk), None).unwrap_err();
    assert!(e.to_string().contains("row 399 was never pushed"), "{e}");

    struct Failing;
    impl Replay for Failing {
        fn bars(&self) -> usize {
            400
        }
        fn replay(
            &mut self,
            _: &mut dyn FnMut(&[f64]) -> Result<(), ValidateError>,
        ) -> Result<(), ValidateError> {
            Err(ValidateError::Read("prices.csv: disk on fire".into()))
        }
    }
    let e = validate_replay(v, &mut Failing, &params, 0.09, t, plan(&walk), None).unwrap_err();
    assert_eq!(e.to_string(), "prices.csv: disk on fire");
}
