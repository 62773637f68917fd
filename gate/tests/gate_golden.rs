//! The gate against the checked-in numba outputs (no Python needed): every variant must reproduce
//! them bit for bit, and a deliberately reassociated WMA must be caught by the suite.

use hullsweep_data::{Dataset, suite};
use hullsweep_gate::{self as gate, GateReport, golden};
use hullsweep_kernel::{self as kernel, Combo, SweepResult, window};
use hullsweep_variants::{Threads, Variant};

/// (a) Every variant does the reference's arithmetic, so on every dataset its trades are equal
/// and its PnL bits identical to numba's: stricter than the spec's 1e-6, on purpose.
#[test]
fn every_variant_reproduces_the_golden_bits_on_every_dataset() {
    let suite = suite();
    for &v in Variant::ALL {
        for threads in [Threads::Fixed(1), Threads::Auto] {
            let reports = gate::gate(
                &suite,
                |d| v.sweep(&d.close, &d.params, d.fee, threads),
                golden::oracle,
            )
            .unwrap();
            let table = gate::table(&format!("{} ({threads:?}) vs golden", v.name()), &reports);
            assert!(
                reports.iter().all(|r| r.passes() && r.bit_identical()),
                "{table}"
            );
            assert_eq!(reports.len(), suite.len());
        }
    }
}

/// Every variant's metrics (docs/kernel.md, "Metrics") equal numba's bit for bit on every
/// dataset, and their `pnl` and `trades` are the batch sweep's.
#[test]
fn every_variant_reproduces_the_golden_metrics_on_every_dataset() {
    let suite = suite();
    for &v in Variant::ALL {
        for threads in [Threads::Fixed(1), Threads::Auto] {
            let mut bad = Vec::new();
            for d in &suite {
                let got = v
                    .sweep_metrics(&d.close, &d.params, d.fee, threads)
                    .unwrap();
                let report =
                    gate::metrics::compare(&d.name, &got, &gate::metrics::oracle(d).unwrap());
                if !report.bit_identical() {
                    bad.push(report.to_string());
                }
                let plain = SweepResult {
                    pnl: got.iter().map(|m| m.pnl).collect(),
                    trades: got.iter().map(|m| m.trades).collect(),
                };
                let want = golden::oracle(d).unwrap();
                assert!(
                    gate::compare(&d.name, &plain, &want).bit_identical(),
                    "{}",
                    d.name
                );
            }
            assert!(
                bad.is_empty(),
                "{} ({threads:?}) metrics vs golden:\n{}",
                v.name(),
                bad.join("\n")
            );
        }
    }
}

/// The metric gate has teeth: one ulp in one metric of one combo, or a drawdown measured from
/// the first trade instead of from 0.0, is caught and named.
#[test]
fn the_metric_gate_catches_one_ulp_and_a_wrong_definition() {
    let d = suite().into_iter().find(|d| d.name == "nan_runs").unwrap();
    let want = gate::metrics::oracle(&d).unwrap();
    let mut got = want.clone();
    let k = got.iter().position(|m| m.trades > 2).unwrap();
    got[k].long_pnl = f64::from_bits(got[k].long_pnl.to_bits() + 1);
    let report = gate::metrics::compare(&d.name, &got, &want);
    assert_eq!(report.mismatches, 1);
    assert!(
        report.to_string().contains(&format!("combo {k} long_pnl")),
        "{report}"
    );
    // The peak starting at the first trade's PnL instead of 0.0 changes the drawdown wherever
    // the running PnL is below 0.0 at first: the suite has such combos.
    let wrong: Vec<_> = d
        .params
        .iter()
        .map(|c| {
            let m = kernel::run_combo_metrics(&d.close, c, d.fee);
            let [n, half, sqrt, m3, half3, third] = c.map(window);
            let h = kernel::hma(&d.close, n, half, sqrt);
            let h3 = kernel::hma3(&d.close, m3, half3, third);
            let mut out = m;
            out.max_drawdown = drawdown_from_first_trade(&d.close, &h, &h3, d.fee);
            out
        })
        .collect();
    assert!(!gate::metrics::compare(&d.name, &wrong, &want).bit_identical());
}

/// The max drawdown with the peak starting at the first trade's running PnL (the wrong rule).
fn drawdown_from_first_trade(close: &[f64], h: &[f64], h3: &[f64], fee: f64) -> f64 {
    let (mut pos, mut entry, mut pnl, mut prev) = (0i64, 0.0, 0.0, f64::NAN);
    let (mut peak, mut dd) = (f64::NAN, 0.0_f64);
    for i in 0..close.len() {
        let d = h[i] - h3[i];
        if d.is_nan() {
            prev = f64::NAN;
            continue;
        }
        if !prev.is_nan() {
            let sig = if prev <= 0.0 && d > 0.0 {
                1
            } else if prev >= 0.0 && d < 0.0 {
                -1
            } else {
                0
            };
            if sig != 0 && sig != pos {
                if pos != 0 {
                    pnl += pos as f64 * (close[i] / entry - 1.0) * 100.0 - fee;
                    peak = if peak.is_nan() { pnl } else { peak.max(pnl) };
                    dd = dd.max(peak - pnl);
                }
                pos = sig;
                entry = close[i];
            }
        }
        prev = d;
    }
    dd
}

/// A WMA that sums the same products in another order: four interleaved partial sums, combined
/// pairwise. This is what a vectorising compiler does under fast-math reassociation.
fn wma_four_lanes(x: &[f64], w: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if w > x.len() {
        return out;
    }
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..x.len() {
        let mut lanes = [0.0; 4];
        for (k, v) in x[i + 1 - w..=i].iter().enumerate() {
            lanes[k % 4] += v * (k + 1) as f64;
        }
        out[i] = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) / denom;
    }
    out
}

/// The O(n) running-sum WMA (update the plain and the weighted sum per bar instead of summing the
/// window): the classic speed-up, which rounds differently. NaN restarts the sums.
fn wma_running(x: &[f64], w: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    let denom = (w as f64) * (w as f64 + 1.0) / 2.0;
    let (mut plain, mut weighted, mut valid) = (0.0, 0.0, 0usize);
    for i in 0..x.len() {
        if x[i].is_nan() {
            (plain, weighted, valid) = (0.0, 0.0, 0);
            continue;
        }
        if valid < w {
            valid += 1;
            weighted += x[i] * valid as f64;
            plain += x[i];
        } else {
            weighted += w as f64 * x[i] - plain;
            plain += x[i] - x[i - w];
        }
        if valid == w {
            out[i] = weighted / denom;
        }
    }
    out
}

fn sweep_with(wma: fn(&[f64], usize) -> Vec<f64>, d: &Dataset) -> SweepResult {
    let run = |c: &Combo| {
        let [n, half, sqrt, m, half3, third] = c.map(window);
        let (a, b) = (wma(&d.close, half), wma(&d.close, n));
        let diff: Vec<f64> = a.iter().zip(&b).map(|(a, b)| 2.0 * a - b).collect();
        let h = wma(&diff, sqrt);
        let (c3, d3, e3) = (wma(&d.close, third), wma(&d.close, half3), wma(&d.close, m));
        let diff3: Vec<f64> = (0..d.close.len())
            .map(|i| 3.0 * c3[i] - d3[i] - e3[i])
            .collect();
        let h3 = wma(&diff3, m);
        kernel::backtest(&d.close, &h, &h3, d.fee)
    };
    let (pnl, trades) = d.params.iter().map(run).unzip();
    SweepResult { pnl, trades }
}

fn negative_control(wma: fn(&[f64], usize) -> Vec<f64>, label: &str) -> Vec<GateReport> {
    // The default dataset is the expensive one and is looked at separately below.
    let suite: Vec<Dataset> = suite()
        .into_iter()
        .filter(|d| d.name != "default")
        .collect();
    let reports = gate::gate(
        &suite,
        |d| Ok::<_, anyhow::Error>(sweep_with(wma, d)),
        golden::oracle,
    )
    .unwrap();
    eprintln!("{}", gate::table(label, &reports));
    reports
}

fn failed(reports: &[GateReport]) -> Vec<&str> {
    reports
        .iter()
        .filter(|r| !r.passes())
        .map(|r| r.dataset.as_str())
        .collect()
}

/// (d) The suite has teeth: reordering the WMA sum moves crosses on the flat-run datasets, where
/// `d` sits a few ulps from zero, and the gate fails there, while the default data alone would
/// have let it through.
#[test]
fn a_reassociated_wma_fails_the_gate_on_the_flat_runs() {
    let reports = negative_control(wma_four_lanes, "four-lane WMA vs golden");
    let failed = failed(&reports);
    assert!(
        failed.contains(&"flat_steps") || failed.contains(&"flat_in_noise"),
        "a reassociated WMA passed every flat-run dataset: the suite does not bite ({failed:?})"
    );
    // And the reason the gate never runs on the default data alone: there, on noisy GBM, the
    // same reordering changes no cross at all, so the default dataset by itself passes it.
    let default = suite().into_iter().find(|d| d.name == "default").unwrap();
    let report = gate::compare(
        "default",
        &sweep_with(wma_four_lanes, &default),
        &golden::oracle(&default).unwrap(),
    );
    assert!(report.passes(), "{report}");
}

#[test]
fn a_running_sum_wma_fails_the_gate() {
    let reports = negative_control(wma_running, "running-sum WMA vs golden");
    let failed = failed(&reports);
    assert!(
        failed.contains(&"flat_steps") || failed.contains(&"flat_in_noise"),
        "a running-sum WMA passed every flat-run dataset: the suite does not bite ({failed:?})"
    );
}

/// The control itself is sound: written in the reference's order, the same harness passes
/// bit-identically, so the failures above come from the summation order alone.
#[test]
fn the_negative_control_harness_passes_with_the_reference_wma() {
    let reports = negative_control(kernel::wma, "reference WMA through the control harness");
    assert!(reports.iter().all(|r| r.bit_identical()), "{reports:?}");
}

/// The gate through the resumable sweep: every dataset of the suite pushed in random chunks
/// (single bars, short ones, long ones; cut points differ per dataset and variant) must give
/// the golden bits, as the batch sweep does.
#[test]
fn the_suite_through_the_sweeper_in_random_chunks_is_golden() {
    use hullsweep_variants::Sweeper;
    let suite = suite();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for v in [Variant::Simd, Variant::Rolling, Variant::fastest()] {
        let reports = gate::gate(
            &suite,
            |d| {
                let mut s = Sweeper::new(&d.params, d.fee, v, Threads::Auto)?;
                let mut at = 0;
                while at < d.close.len() {
                    let size = match next() % 4 {
                        0 => 1,
                        1 => 1 + (next() % 500) as usize,
                        _ => 1 + (next() % 40_000) as usize,
                    };
                    let end = (at + size).min(d.close.len());
                    s.push(&d.close[at..end])?;
                    at = end;
                }
                s.finish()
            },
            golden::oracle,
        )
        .unwrap();
        let table = gate::table(&format!("{} through the Sweeper", v.name()), &reports);
        assert!(
            reports.iter().all(|r| r.passes() && r.bit_identical()),
            "{table}"
        );
        assert_eq!(reports.len(), suite.len());
    }
}

/// Every implementation of the trade log reproduces the trade fixtures on every dataset: every
/// combo's trade count and the digest of every bit of every trade, and each combo's trades sum
/// in order to the golden PnL bits.
#[test]
fn every_trade_log_reproduces_the_golden_trades_on_every_dataset() {
    for &(name, log_of) in gate::trades::IMPLEMENTATIONS {
        let mut bad = Vec::new();
        for d in &suite() {
            let fixture = gate::trades::oracle(d).unwrap();
            let log = log_of(&d.close, &d.params, d.fee, &gate::trades::all(&d.params)).unwrap();
            let report = fixture.compare(&d.name, &log);
            if !report.bit_identical() {
                bad.push(report.to_string());
            }
            let per = gate::trades::by_combo(&log, d.params.len()).unwrap();
            // The rows people read are the log's first trades, bit for bit.
            for sample in &fixture.samples {
                let rows = sample.parse().unwrap();
                let mine = &per[sample.combo][..rows.len()];
                assert!(
                    rows.iter().zip(mine).all(|(a, b)| a.same(b)),
                    "{name}: the sample of combo {} of {}",
                    sample.combo,
                    d.name
                );
            }
            let summed = SweepResult {
                pnl: per
                    .iter()
                    .map(|t| t.iter().fold(0.0, |s, t| s + t.pnl))
                    .collect(),
                trades: per.iter().map(|t| t.len() as i64).collect(),
            };
            let want = golden::oracle(d).unwrap();
            assert!(
                gate::compare(&d.name, &summed, &want).bit_identical(),
                "{name}: the trades of {} do not sum to the golden pnl",
                d.name
            );
        }
        assert!(
            bad.is_empty(),
            "trade log ({name}) vs golden:\n{}",
            bad.join("\n")
        );
    }
}

/// The trade gate has teeth: one bit of one trade's PnL, an exit one bar late, two trades
/// swapped or one trade dropped, and the fixture names the combo.
#[test]
fn the_trade_gate_catches_one_flipped_bit() {
    let d = suite().into_iter().find(|d| d.name == "nan_runs").unwrap();
    let fixture = gate::trades::oracle(&d).unwrap();
    let log =
        gate::trades::reference(&d.close, &d.params, d.fee, &gate::trades::all(&d.params)).unwrap();
    assert!(fixture.compare(&d.name, &log).bit_identical());
    let i = log.len() / 2;
    let k = log[i].combo;
    let mut flipped = log.clone();
    flipped[i].pnl = f64::from_bits(flipped[i].pnl.to_bits() ^ 1);
    let mut late = log.clone();
    late[i].exit_bar += 1;
    let mut swapped = log.clone();
    assert_eq!(swapped[i + 1].combo, k, "the middle trade has a neighbour");
    swapped.swap(i, i + 1);
    let mut dropped = log.clone();
    dropped.remove(i);
    for (what, bad) in [
        ("flipped pnl bit", flipped),
        ("late exit", late),
        ("swapped", swapped),
        ("dropped", dropped),
    ] {
        let report = fixture.compare(&d.name, &bad);
        assert_eq!(report.mismatches, 1, "{what}: {report}");
        assert_eq!(report.first.as_ref().unwrap().0, k, "{what}: {report}");
        assert!(report.to_string().contains("FAIL"), "{report}");
    }
}
