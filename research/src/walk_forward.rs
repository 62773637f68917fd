//! Walk-forward selection: rolling or anchored TRAIN:TEST windows, the best combo of each train
//! window chosen from segment sums as CSCV chooses, and the out-of-sample summary of the picks.

use crate::cscv::{argmax, union_metric};
use crate::error::ResearchError;
use crate::folds::FoldStats;
use crate::metric::Metric;
use crate::passes::OosPasses;
pub use crate::passes::OosSummary;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// A walk-forward: windows of `train` bars followed by `test` bars, stepping by `test`; an
/// anchored one trains from bar 0 every time. Written (and parsed) `TRAIN:TEST` or
/// `TRAIN:TEST:anchored`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WalkSpec {
    /// TRAIN, the bars of the first train window (of every one when rolling); at least 2.
    pub train: usize,
    /// TEST, the bars of each test window and the step between windows; at least 1.
    pub test: usize,
    /// Train windows all start at bar 0 (and grow) rather than roll.
    pub anchored: bool,
}

/// One walk-forward window: the bars trained on and the bars tested on right after them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    /// The train bars.
    pub train: Range<usize>,
    /// The test bars (`test.start == train.end`).
    pub test: Range<usize>,
}

impl WalkSpec {
    /// TRAIN >= 2 (a train Sharpe ratio needs two bars) and TEST >= 1.
    fn check(&self) -> Result<(), ResearchError> {
        let why = if self.train < 2 {
            format!(
                "TRAIN must be a whole number of at least 2 bars, got {}",
                self.train
            )
        } else if self.test < 1 {
            "TEST must be a positive whole number of bars, got 0".to_string()
        } else {
            return Ok(());
        };
        Err(ResearchError::BadWalkSpec {
            text: self.to_string(),
            why,
        })
    }

    /// The windows over `bars` bars: k = 0, 1, ... while `k*TEST + TRAIN + TEST <= bars`, train
    /// `[k*TEST, k*TEST + TRAIN)` (anchored: `[0, k*TEST + TRAIN)`), test
    /// `[k*TEST + TRAIN, k*TEST + TRAIN + TEST)`. An error names TRAIN + TEST and the bars when
    /// not even one fits.
    pub fn windows(&self, bars: usize) -> Result<Vec<Window>, ResearchError> {
        self.check()?;
        let need = self.train.saturating_add(self.test);
        if need > bars {
            return Err(ResearchError::NoWindow {
                spec: self.to_string(),
                need,
                bars,
            });
        }
        // need <= bars, so none of these overflow.
        let count = (bars - need) / self.test + 1;
        Ok((0..count)
            .map(|k| {
                let start = k * self.test;
                let split = start + self.train;
                Window {
                    train: if self.anchored { 0 } else { start }..split,
                    test: split..split + self.test,
                }
            })
            .collect())
    }

    /// The coarsest contiguous cover of `0..bars` in which every window's train and test bars
    /// are unions of whole segments: the boundaries are 0, `bars`, and every window's
    /// `train.start`, `test.start` and `test.end`, sorted and deduplicated. The segments to
    /// build [`FoldStats`] over (with [`FoldStats::from_columns`]) for [`walk_forward_select`].
    pub fn segments(&self, bars: usize) -> Result<Vec<Range<usize>>, ResearchError> {
        let windows = self.windows(bars)?;
        let mut cuts = vec![0, bars];
        for w in &windows {
            cuts.extend([w.train.start, w.test.start, w.test.end]);
        }
        cuts.sort_unstable();
        cuts.dedup();
        Ok(cuts.windows(2).map(|c| c[0]..c[1]).collect())
    }
}

impl fmt::Display for WalkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.train, self.test)?;
        if self.anchored {
            f.write_str(":anchored")?;
        }
        Ok(())
    }
}

impl FromStr for WalkSpec {
    type Err = ResearchError;

    /// `TRAIN:TEST` or `TRAIN:TEST:anchored`, TRAIN >= 2 and TEST >= 1 whole numbers of bars.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |why: String| ResearchError::BadWalkSpec {
            text: text.to_string(),
            why,
        };
        let parts: Vec<&str> = text.split(':').collect();
        let anchored = match parts[..] {
            [_, _] => false,
            [_, _, "anchored"] => true,
            [_, _, other] => {
                return Err(bad(format!(
                    "the third part must be \"anchored\", got {other:?}"
                )));
            }
            _ => {
                return Err(bad(
                    "expected TRAIN:TEST or TRAIN:TEST:anchored (bars, e.g. 500:100)".to_string(),
                ));
            }
        };
        let train = match parts[0].parse::<usize>() {
            Ok(n) if n >= 2 => n,
            _ => {
                return Err(bad(format!(
                    "TRAIN must be a whole number of at least 2 bars, got {:?}",
                    parts[0]
                )));
            }
        };
        let test = match parts[1].parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(bad(format!(
                    "TEST must be a positive whole number of bars, got {:?}",
                    parts[1]
                )));
            }
        };
        Ok(WalkSpec {
            train,
            test,
            anchored,
        })
    }
}

/// One window's pick: the combo with the best train metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The window.
    pub window: Window,
    /// The combo with the best train metric (the first on ties).
    pub selected: usize,
    /// Its train metric.
    pub train_metric: f64,
}

/// Per window of `spec`, the combo with the best `metric` over the train bars (the first index
/// on ties), from `stats`, whose segments must be `spec.segments(stats.bars())`.
///
/// A train window is a run of whole segments; its metric per combo is computed as a CSCV half's
/// (n, n * shift, S and Q added in ascending segment order, then [`Metric::eval`]), so exact ties
/// stay ties and the same folds give CSCV's bits. The work is one add per train segment and combo.
pub fn walk_forward_select(
    stats: &FoldStats,
    spec: &WalkSpec,
    metric: Metric,
) -> Result<Vec<Selection>, ResearchError> {
    let bars = stats.bars();
    let want = spec.segments(bars)?;
    if want != stats.bounds() {
        return Err(ResearchError::Segments {
            spec: spec.to_string(),
            bars,
            want: ranges(&want),
            got: ranges(stats.bounds()),
        });
    }
    let bounds = stats.bounds();
    let mut metrics = vec![0.0; stats.combos()];
    let windows = spec.windows(bars)?;
    Ok(windows
        .into_iter()
        .map(|window| {
            // The train window starts and ends on segment boundaries (see `segments`).
            let first = bounds.partition_point(|b| b.start < window.train.start);
            let end = bounds.partition_point(|b| b.end <= window.train.end);
            let segments: Vec<usize> = (first..end).collect();
            union_metric(stats, metric, &segments, &mut metrics);
            let selected = argmax(&metrics);
            Selection {
                window,
                selected,
                train_metric: metrics[selected],
            }
        })
        .collect())
}

/// Segments written out for a message: all of them up to 8, else the first 8 and the count.
fn ranges(r: &[Range<usize>]) -> String {
    let shown: Vec<String> = r.iter().take(8).map(|r| format!("{r:?}")).collect();
    if r.len() > 8 {
        format!("[{}, ... ({} in all)]", shown.join(", "), r.len())
    } else {
        format!("[{}]", shown.join(", "))
    }
}

/// The summary of the out-of-sample returns `oos_returns` (the selected combo's test returns of
/// each window, in window order). No returns give zeros.
pub fn oos_summary(oos_returns: &[f64]) -> OosSummary {
    let mut passes = OosPasses::new();
    for _ in 0..2 {
        passes.push(oos_returns);
        passes.end_pass();
    }
    passes.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(train: usize, test: usize, anchored: bool) -> WalkSpec {
        WalkSpec {
            train,
            test,
            anchored,
        }
    }

    #[test]
    fn specs_parse_and_print_back() {
        for text in ["10:2", "500:100:anchored", "2:1"] {
            let s: WalkSpec = text.parse().unwrap();
            assert_eq!(s.to_string(), text);
        }
        assert_eq!("4:2:anchored".parse(), Ok(spec(4, 2, true)));
        let err = |t: &str| t.parse::<WalkSpec>().unwrap_err().to_string();
        assert_eq!(
            err("10:x"),
            "walk-forward \"10:x\": TEST must be a positive whole number of bars, got \"x\""
        );
        assert_eq!(
            err("10:0"),
            "walk-forward \"10:0\": TEST must be a positive whole number of bars, got \"0\""
        );
        assert_eq!(
            err("1:5"),
            "walk-forward \"1:5\": TRAIN must be a whole number of at least 2 bars, got \"1\""
        );
        assert!(err("-3:5").contains("got \"-3\""));
        assert!(err("10").contains("expected TRAIN:TEST or TRAIN:TEST:anchored"));
        assert!(err("1:2:3:4").contains("expected TRAIN:TEST"));
        assert_eq!(
            err("10:2:anchor"),
            "walk-forward \"10:2:anchor\": the third part must be \"anchored\", got \"anchor\""
        );
    }

    #[test]
    fn a_spec_built_by_hand_is_checked() {
        let e = spec(1, 2, false).windows(10).unwrap_err().to_string();
        assert_eq!(
            e,
            "walk-forward \"1:2\": TRAIN must be a whole number of at least 2 bars, got 1"
        );
        let e = spec(3, 0, true).segments(10).unwrap_err().to_string();
        assert!(e.contains("\"3:0:anchored\": TEST must be"), "{e}");
    }

    #[test]
    fn windows_step_by_test() {
        // T = 7, 3:2: k = 0 (0..3, 3..5), k = 1 (2..5, 5..7); k = 2 would end at 9.
        let w = spec(3, 2, false).windows(7).unwrap();
        assert_eq!(
            w,
            vec![
                Window {
                    train: 0..3,
                    test: 3..5
                },
                Window {
                    train: 2..5,
                    test: 5..7
                },
            ]
        );
        assert_eq!(spec(3, 2, false).windows(5).unwrap().len(), 1);
        let e = spec(3, 2, false).windows(4).unwrap_err().to_string();
        assert_eq!(
            e,
            "walk-forward 3:2 needs TRAIN + TEST = 5 bars for one window, but there are 4 bars"
        );
        let e = spec(usize::MAX, 2, false)
            .windows(4)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("= {} bars", usize::MAX)), "{e}");
    }

    #[test]
    fn oos_summary_is_the_literal_definition() {
        // 1, -1, 2, 2: pnl 4, mean 1, deviations 0 -2 1 1, var 6/4.
        let s = oos_summary(&[1.0, -1.0, 2.0, 2.0]);
        assert_eq!((s.bars, s.pnl), (4, 4.0));
        assert_eq!(s.sharpe, 1.0 / 1.5f64.sqrt());
        assert_eq!(oos_summary(&[0.5, 0.5]).sharpe, 0.0);
        let empty = oos_summary(&[]);
        assert_eq!((empty.bars, empty.pnl, empty.sharpe), (0, 0.0, 0.0));
        // Summed from +0.0: negative zeros give +0.0.
        assert!(oos_summary(&[-0.0, -0.0]).pnl.is_sign_positive());
    }
}
